#!/usr/bin/python3
"""Writes the bad-input corpus under tests/data/bad/: small files that perfc
must reject with one clear line each. tests/cli/CliTests.cmake lists the error
every file must give. Needs Debian's python3-onnx; the files are committed, so
the tests do not.

    /usr/bin/python3 tools/make_bad_corpus.py [OUT_DIR]
"""
import json
import os
import random
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "tests", "data", "bad")
os.makedirs(out, exist_ok=True)


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def model(nodes, inputs, outputs, inits=(), opset=13, name="bad"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="perfc-bad-corpus")
    m.ir_version = 8
    return m


def save(m, name):
    with open(os.path.join(out, name), "wb") as f:
        f.write(m.SerializeToString())


relu = model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
             [vi("x", [1, 16])], [vi("y", None)])
good = relu.SerializeToString()

with open(os.path.join(out, "truncated.onnx"), "wb") as f:
    f.write(good[: len(good) // 2])
with open(os.path.join(out, "empty.onnx"), "wb") as f:
    pass
with open(os.path.join(out, "not_onnx.onnx"), "w") as f:
    f.write("this is a text file, not a model\n")

save(model([helper.make_node("Add", ["x", "b"], ["a"], name="add_on_cycle"),
            helper.make_node("Relu", ["a"], ["b"], name="relu_on_cycle")],
           [vi("x", [4])], [vi("b", None)]), "cycle.onnx")
save(model([helper.make_node("Add", ["x", "ghost"], ["y"], name="reads_ghost")],
           [vi("x", [4])], [vi("y", None)]), "missing_edge.onnx")
save(model([helper.make_node("Relu", ["x"], ["y"], name="huge")],
           [vi("x", [2 ** 62, 4])], [vi("y", None)]), "dim_2e62.onnx")
save(model([helper.make_node("Relu", ["x"], ["y"], name="neg")],
           [vi("x", [2, -3])], [vi("y", None)]), "negative_dim.onnx")
save(model([helper.make_node("Relu", ["x"], ["y"])],
           [vi("x", [4])], [vi("y", None)], opset=99), "future_opset.onnx")
save(model([helper.make_node("Relu", ["x"], ["y"], name="first"),
            helper.make_node("Neg", ["x"], ["y"], name="second")],
           [vi("x", [4])], [vi("y", None)]), "duplicate_names.onnx")
save(model([helper.make_node("Frobnicate", ["x"], ["y"], name="frob")],
           [vi("x", [4])], [vi("y", None)]), "unknown_op.onnx")
save(model([helper.make_node("Relu", ["x"], ["y"])],
           [vi("x", ["batch", "seq"])], [vi("y", None)]), "unbound_dim.onnx")
save(model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="runtime_reshape")],
           [vi("x", [2, 6]), vi("shape", [2], TensorProto.INT64)],
           [vi("y", None)]), "uninferable_reshape.onnx")
save(model([helper.make_node("Conv", ["x", "w"], ["y"], name="bad_conv")],
           [vi("x", [1, 3, 8, 8]), vi("w", [4, 5, 3, 3])],
           [vi("y", None)]), "shape_mismatch.onnx")

# Models that crashed ONNX 1.12's data propagation for Shape (found by
# tools/fuzz): Shape of a tensor that has no type at all.
untyped = onnx.ValueInfoProto(name="x")
save(model([helper.make_node("Shape", ["x"], ["y"], name="shape_of_untyped")],
           [untyped], [vi("y", None, TensorProto.INT64)]), "untyped_input.onnx")
m = model([helper.make_node("Frob", ["x"], ["t"], name="custom", domain="com.example"),
           helper.make_node("Shape", ["t"], ["y"], name="shape_of_custom")],
          [vi("x", [2, 3])], [vi("y", None, TensorProto.INT64)])
m.opset_import.append(helper.make_opsetid("com.example", 1))
save(m, "shape_of_custom_op.onnx")

# A zero stride: ONNX 1.12's Conv and pooling inference divide by it
# (SIGFPE; found by the bit-flip test).
save(model([helper.make_node("Conv", ["x", "w"], ["y"], name="zero_stride",
                             strides=[0, 1])],
           [vi("x", [1, 3, 8, 8]), vi("w", [4, 3, 3, 3])], [vi("y", None)]),
     "zero_stride.onnx")

# A scalar initializer without its value: ONNX 1.12's Range inference reads
# the first value of its limit (SEGV; found by tools/fuzz/fuzz_onnx).
limit = TensorProto()
limit.name = "limit"
limit.data_type = TensorProto.INT64
save(model([helper.make_node("Range", ["start", "limit", "delta"], ["y"],
                             name="range")],
           [], [vi("y", None, TensorProto.INT64)],
           inits=[helper.make_tensor("start", TensorProto.INT64, [], [0]),
                  limit,
                  helper.make_tensor("delta", TensorProto.INT64, [], [1])]),
     "initializer_no_data.onnx")

# A weight whose rank differs from the input's: ONNX 1.12's Conv and
# ConvTranspose inference index one by the other's rank (SEGV; found by
# tools/fuzz/fuzz_onnx).
save(model([helper.make_node("ConvTranspose", ["x", "w"], ["y"],
                             name="rank_mismatch")],
           [vi("x", [1, 2, 3, 3]), vi("w", [2, 2])], [vi("y", None)]),
     "conv_rank_mismatch.onnx")

# Weights whose total passes 2^62 bytes: each of the three float
# initializers (2^61 bytes, stored in a file that does not exist, as perfc's
# stripped models are) fits, their sum does not; parameter counts summed
# over the graph must not wrap.
huge = []
for i in range(3):
    t = onnx.TensorProto(name="w%d" % i, data_type=TensorProto.FLOAT,
                         dims=[2 ** 59])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "huge.weights"
    huge.append(t)
save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
           [vi("x", [4])], [vi("y", None)], huge), "initializers_2e62.onnx")
# An initializer defined twice.
w = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
           [vi("x", [4])], [vi("y", None)], [w, w]),
     "duplicate_initializer.onnx")

# A Conv over a dimension of 2^63 - 1 with padding: perfc's own shape
# formulas (frontend/CommonShapes.cpp) added the pads to it, a signed
# overflow (found while checking size arithmetic for issue 7).
save(model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv_huge",
                             pads=[1, 1, 1, 1], kernel_shape=[3, 3])],
           [vi("x", [1, 3, 2 ** 63 - 1, 8])], [vi("y", None)],
           [helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3],
                               [0.5] * 108)]), "conv_huge_dim.onnx")

# A name with a newline in it: the error must still be one line (found by
# tools/fuzz/fuzz_onnx's error-contract check).
save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
           [vi("x", [4])], [vi("y\nz", None)]), "newline_name.onnx")

# Bit flips of a real model: deterministic, 1 to 8 flipped bits each. Each
# must give one error line or a result, never a crash.
zoo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                   "data", "zoo", "resnet18.onnx")
with open(zoo, "rb") as f:
    resnet18 = f.read()
for i, flips in enumerate([1, 2, 4, 8], start=1):
    rng = random.Random(1000 + i)
    data = bytearray(resnet18)
    for _ in range(flips):
        bit = rng.randrange(len(data) * 8)
        data[bit // 8] ^= 1 << (bit % 8)
    with open(os.path.join(out, "bitflip_%d.onnx" % i), "wb") as f:
        f.write(bytes(data))

# Hardware descriptions, one mistake each (tests/cli/CliTests.cmake lists
# the error every one must give, with its line and column).
hw = os.path.join(out, "hw")
os.makedirs(hw, exist_ok=True)
DEVICE = """device:
  name: bad-gpu
  kind: gpu
  compute:
    tensor: {fp16: 100 TFLOPS}
    vector: {fp32: 10 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
  launch_overhead: 5 us
  efficiency:
    default: {compute: 0.5, memory: 0.8}
"""


def save_hw(name, text, old=None, new=None):
    if old is not None:
        assert old in text, old
        text = text.replace(old, new)
    with open(os.path.join(hw, name), "w") as f:
        f.write(text)


save_hw("wrong_type.yaml", DEVICE, "launch_overhead: 5 us",
        "launch_overhead: {value: 5 us}")
save_hw("wrong_type_scalar.yaml", DEVICE, "  compute:\n    tensor: {fp16: 100 TFLOPS}\n"
        "    vector: {fp32: 10 TFLOPS}\n", "  compute: 100 TFLOPS\n")
save_hw("unknown_key.yaml", DEVICE, "  kind: gpu\n", "  kind: gpu\n  frobnicate: 1\n")
save_hw("missing_unit.yaml", DEVICE, "bandwidth: 1000 GB/s", "bandwidth: 1000")
save_hw("negative_bandwidth.yaml", DEVICE, "bandwidth: 1000 GB/s",
        "bandwidth: -1000 GB/s")
save_hw("zero_devices.yaml", """cluster:
  name: empty-cluster
  nodes: []
""")
save_hw("zero_devices_per_node.yaml", """cluster:
  name: empty-nodes
  nodes:
    - device: t4
      devices_per_node: 0
""")
save_hw("zero_count.yaml", """cluster:
  name: no-nodes
  nodes:
    - device: t4
      count: 0
      devices_per_node: 8
""")
save_hw("duplicate_key.yaml", DEVICE, "  kind: gpu\n", "  kind: gpu\n  kind: cpu\n")
save_hw("unknown_unit.yaml", DEVICE, "bandwidth: 1000 GB/s",
        "bandwidth: 1000 furlongs/s")

# Plans for --strategy (tests/cli/CliTests.cmake runs them on
# tests/data/zoo/gpt2_small.onnx --dim seq=1024 --hw dgx-a100 --train).
plans = os.path.join(out, "plan")
os.makedirs(plans, exist_ok=True)
PLAN = {"dp": 2, "tp": 1, "pp": 4, "vp": 1, "sp": False, "micro_batch": 1,
        "recompute": "none", "zero": 0, "dtype": "bf16", "optimizer": "adam",
        "partition": "balanced", "global_batch": 64,
        "model": {"name": "torch_jit", "nodes": 1377, "params": 124439808}}


def save_plan(name, text):
    with open(os.path.join(plans, name), "w") as f:
        f.write(text)


def plan_with(**changes):
    p = dict(PLAN)
    p.update(changes)
    return json.dumps({"plan": p}, indent=2) + "\n"


# A degree beyond any cluster (2^40 + 8: as a 32-bit count it would be 8).
save_plan("degree_overflow.json", plan_with(dp=2 ** 40 + 8))
# Degrees that fit the 8 GPUs but not the model: 4 x 4 chunks, 12 blocks.
save_plan("too_many_chunks.json", plan_with(vp=4))
# pp x vp wraps to 0 in 32 bits (2 x 2^31): refused, never a division by 0.
save_plan("chunks_wrap.json", plan_with(vp=2 ** 31))
# Made for resnet18 (its fingerprint), given to gpt2_small.
save_plan("other_model.json", plan_with(
    dp=8, pp=1, micro_batch=8,
    model={"name": "torch_jit", "nodes": 69, "params": 11689512}))
# Not JSON: a list cut off on line 3.
save_plan("not_json.json", '{"plan": {\n  "dp": 2,\n  "tp": [1,\n}}\n')
print("wrote", len(os.listdir(out)), "files to", out)
