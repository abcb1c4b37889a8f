#!/usr/bin/python3
"""Writes the bad-input corpus under tests/data/bad/: small files that perfc
must reject with one clear line each. tests/cli/CliTests.cmake lists the error
every file must give. Needs Debian's python3-onnx; the files are committed, so
the tests do not.

    /usr/bin/python3 tools/make_bad_corpus.py [OUT_DIR]
"""
import os
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
print("wrote", len(os.listdir(out)), "files to", out)
