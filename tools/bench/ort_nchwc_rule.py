#!/usr/bin/python3
"""Which convolutions ONNX Runtime's CPU provider runs with its blocked
(NCHWc) kernels, and which with the generic im2col + SGEMM path.

    /usr/bin/python3 tools/bench/ort_nchwc_rule.py [--work DIR] [--ort-dir DIR]

perfc prices the two paths apart on CPU descriptions that give
`conv_channel_block` and `conv_channel_align` (hwdb/README.md); this script
is the evidence for the rule it uses (cost::runsBlocked). For each case it
writes a one- or two-convolution model (the convolution under test either
straight on the NCHW graph input or behind a 1x1 convolution, as inside a
network), lets ONNX Runtime optimise it at level "all" and save the result
(optimizedModelFilePath), and reads which domain the convolution ended in:
com.microsoft.nchwc (blocked, channels padded to whole blocks) or a plain
Conv/FusedConv (generic). It prints one row per case with perfc's rule
beside it, and exits non-zero where they disagree.

The block is MLAS's NCHWc block for this CPU (16 with AVX-512F, 8 with
AVX2: MlasNchwcGetBlockSize); the alignment the one the transformer pads
input channels from. ORT 1.30 on AVX-512 (2026-12-05): block 16,
alignment 4: dense and depthwise convolutions take any channel count that
is a multiple of 4 (padded to 16), grouped ones need whole blocks per group.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_common  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def write_case(path, cin, cout, group, behind_conv):
    """Conv(cin -> cout, 3x3, group) + Relu, on the input or behind a 1x1."""
    rng = np.random.default_rng(0)
    inits, nodes, src = [], [], "x"
    c0 = 32 if behind_conv else cin
    if behind_conv:
        inits += [numpy_helper.from_array(rng.random((cin, c0, 1, 1), np.float32), "w1"),
                  numpy_helper.from_array(np.zeros(cin, np.float32), "b1")]
        nodes += [helper.make_node("Conv", ["x", "w1", "b1"], ["h"], name="feed"),
                  helper.make_node("Relu", ["h"], ["hr"])]
        src = "hr"
    inits += [numpy_helper.from_array(
        rng.random((cout, cin // group, 3, 3), np.float32), "w2"),
        numpy_helper.from_array(np.zeros(cout, np.float32), "b2")]
    nodes += [helper.make_node("Conv", [src, "w2", "b2"], ["y"], name="test",
                               group=group, pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["y"], ["z"])]
    graph = helper.make_graph(
        nodes, "case", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c0, 28, 28])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, cout, 28, 28])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


def perfc_rule(cin, cout, group, block, align):
    """cost::runsBlocked (costmodels/Roofline.cpp), restated."""
    in_per_group, out_per_group = cin // group, cout // group
    if group > 1:
        if in_per_group == 1 and out_per_group == 1:
            return cout % align == 0
        return in_per_group % block == 0 and out_per_group % block == 0
    return in_per_group < block or in_per_group % align == 0


CASES = (
    # (what, cin, cout, group, behind a 1x1 conv)
    [("dense", c, 32, 1, True) for c in (20, 22, 24, 26, 28, 30, 36, 44, 58, 64)]
    + [("dense on the input", c, 32, 1, False) for c in (3, 12, 22, 24, 36)]
    + [("dense, odd outputs", 32, c, 1, True) for c in (20, 22)]
    + [("depthwise", c, c, c, True) for c in (12, 20, 22, 24, 36, 58, 72)]
    + [("grouped", c, c, g, True) for c, g in ((48, 6), (64, 8), (48, 3), (64, 4), (96, 6), (80, 5))]
)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/tmp/perfc-ort-bench")
    ap.add_argument("--ort-dir", help="where node_modules/onnxruntime-node is (default WORK/ort)")
    ap.add_argument("--block", type=int, default=16)
    ap.add_argument("--align", type=int, default=4)
    args = ap.parse_args()
    ort_dir = os.path.abspath(args.ort_dir or os.path.join(args.work, "ort"))
    work = os.path.join(os.path.abspath(args.work), "nchwc_rule")
    os.makedirs(work, exist_ok=True)

    def probe(path):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
        g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "p", [x], [y])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save(m, path)

    version = ort_common.ensure_ort(ort_dir, work, probe, "ort_nchwc_rule")
    paths = []
    for i, (_, cin, cout, group, behind) in enumerate(CASES):
        p = os.path.join(work, f"case{i}.onnx")
        write_case(p, cin, cout, group, behind)
        paths.append(p)
    script = os.path.join(work, "optimize.mjs")
    index = os.path.join(ort_dir, "node_modules", "onnxruntime-node", "dist", "index.js")
    with open(script, "w") as f:
        f.write(f"import * as ort from {json.dumps(index)};\n"
                f"for (const p of {json.dumps(paths)}) {{\n"
                "  await ort.InferenceSession.create(p, {intraOpNumThreads: 1,\n"
                "    graphOptimizationLevel: 'all', logSeverityLevel: 3,\n"
                "    optimizedModelFilePath: p.replace('.onnx', '.opt.onnx')});\n"
                "}\n")
    subprocess.run(["node", script], check=True)

    print(f"# ONNX Runtime {version}: which convolutions run NCHWc (block {args.block}, "
          f"alignment {args.align} in perfc's rule)\n")
    print("| case | Cin | Cout | group | ORT runs | perfc's rule | agree |")
    print("|---|---:|---:|---:|---|---|---|")
    disagree = 0
    for (what, cin, cout, group, _), p in zip(CASES, paths):
        m = onnx.load(p.replace(".onnx", ".opt.onnx"))
        # The convolution under test: the last one (the feeding 1x1 comes first).
        conv = [n for n in m.graph.node if n.op_type in ("Conv", "FusedConv")][-1]
        blocked = conv.domain == "com.microsoft.nchwc"
        rule = perfc_rule(cin, cout, group, args.block, args.align)
        disagree += blocked != rule
        print(f"| {what} | {cin} | {cout} | {group} | {'NCHWc' if blocked else 'generic'} | "
              f"{'NCHWc' if rule else 'generic'} | {'yes' if blocked == rule else 'NO'} |")
    print(f"\n{len(CASES) - disagree} of {len(CASES)} cases agree.")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
