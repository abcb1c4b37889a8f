"""Writes small ONNX models made of ONNX Runtime's com.microsoft ops that
perfc infers and costs (frontend/ContribSchemas.h), as fuzz_onnx seeds:
tools/fuzz/run.sh copies them with the zoo. Run with /usr/bin/python3 from
this folder; the models are committed, this says how they were made."""
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

B, S, H, HEADS, F = 1, 4, 8, 2, 16
MS = "com.microsoft"


def w(name, *dims):
    return nh.from_array(np.full(dims, 0.5, np.float32), name)


def save(name, nodes, inputs, inits, outputs):
    g = h.make_graph(nodes, name, inputs, [h.make_tensor_value_info(o, T.FLOAT, None) for o in outputs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(MS, 1)])
    onnx.save(m, name + ".onnx")


ids = h.make_tensor_value_info("ids", T.INT32, [B, S])
mask = h.make_tensor_value_info("mask", T.INT32, [B, S])
save("contrib_bert", [
    h.make_node("EmbedLayerNormalization", ["ids", "", "word", "pos", "", "eg", "eb", "mask"], ["x", "mi"], "emb", domain=MS),
    h.make_node("Attention", ["x", "qkv_w", "qkv_b", "mi"], ["a"], "attn", domain=MS, num_heads=HEADS),
    h.make_node("FusedMatMul", ["a", "o_w"], ["o"], "o_mm", domain=MS, transB=1, alpha=1.0),
    h.make_node("SkipLayerNormalization", ["o", "x", "g1", "b1", "o_b"], ["h1"], "ln1", domain=MS),
    h.make_node("MatMul", ["h1", "f1_w"], ["f1"], "f1"),
    h.make_node("BiasGelu", ["f1", "f1_b"], ["g"], "gelu", domain=MS),
    h.make_node("MatMul", ["g", "f2_w"], ["f2"], "f2"),
    h.make_node("SkipSimplifiedLayerNormalization", ["f2", "h1", "g2"], ["y"], "ln2", domain=MS),
], [ids, mask], [w("word", 10, H), w("pos", S, H), w("eg", H), w("eb", H), w("qkv_w", H, 3 * H), w("qkv_b", 3 * H),
                 w("o_w", H, H), w("o_b", H), w("g1", H), w("b1", H), w("f1_w", H, F), w("f1_b", F), w("f2_w", F, H),
                 w("g2", H)], ["y"])

x = h.make_tensor_value_info("x", T.FLOAT, [B, S, H])
kv = h.make_tensor_value_info("kv", T.FLOAT, [B, S + 1, H])
save("contrib_misc", [
    h.make_node("MultiHeadAttention", ["x", "kv", "kv"], ["m"], "mha", domain=MS, num_heads=HEADS),
    h.make_node("FastGelu", ["m", "bias"], ["fg"], "fg", domain=MS),
    h.make_node("Gelu", ["fg"], ["ge"], "ge", domain=MS),
    h.make_node("QuickGelu", ["ge"], ["qg"], "qg", domain=MS, alpha=1.702),
    h.make_node("BiasAdd", ["qg", "bias", "x"], ["y"], "ba", domain=MS),
], [x, kv], [w("bias", H)], ["y"])
