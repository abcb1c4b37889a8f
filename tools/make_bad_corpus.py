#!/usr/bin/python3
"""Writes the bad-input corpus under tests/data/bad/: small files that perfc
must reject with one clear line each. tests/cli/CliTests.cmake lists the error
every file must give. Needs Debian's python3-onnx; the files are committed, so
the tests do not.

    /usr/bin/python3 tools/make_bad_corpus.py [OUT_DIR]
"""
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

# A weight whose rank differs from the input's: ONNX 1.12's Conv and
# ConvTranspose inference index one by the other's rank (SEGV; found by
# tools/fuzz/fuzz_onnx).
save(model([helper.make_node("ConvTranspose", ["x", "w"], ["y"],
                             name="rank_mismatch")],
           [vi("x", [1, 2, 3, 3]), vi("w", [2, 2])], [vi("y", None)]),
     "conv_rank_mismatch.onnx")

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
print("wrote", len(os.listdir(out)), "files to", out)
