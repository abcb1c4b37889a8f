#!/usr/bin/python3
"""Compare perfc with what tools/bench/gpu_measure.py measured on a GPU.

    /usr/bin/python3 tools/bench/gpu_compare.py MEASURED.json --perfc build/tools/perfc \
        [--hw NAME] [--out tools/bench/results/gpu_NAME.md]
    /usr/bin/python3 tools/bench/gpu_compare.py --predict-only --hw NAME

--predict-only writes perfc's predictions (bundled description) for every
run gpu_measure.py makes (tools/bench/gpu_runs.py), before any measurement:
tools/bench/results/gpu_NAME_predicted.json, committed so that a later
measurement is compared with what perfc said beforehand.

Two predictions per measured run:
  bundled     the bundled description of that GPU, as it is;
  calibrated  the same description with what the micro-benchmarks of the
              same run measured put in: the GEMM efficiency curve of the
              run's precision, the copy bandwidth's share of the HBM peak,
              and the cost of one kernel (eager launches for eager runs, the
              per-kernel cost inside a CUDA graph for graph runs).
Every run is predicted with --no-fusion (PyTorch launches one kernel per
op, and a CUDA graph replays those same kernels); fp16 runs store fp16
(`--storage-type fp16`, the model was .half()'d).
Error = predicted / measured - 1.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZOO = os.path.join(ROOT, "tests", "data", "zoo")
DEVICES = os.path.join(ROOT, "hwdb", "devices")
# Device names as CUDA reports them -> bundled descriptions.
NAMES = [("H200", "h200-sxm-141gb"), ("H100", "h100-sxm5-80gb"), ("A100-SXM4-40GB", "a100-sxm4-40gb"),
         ("A100", "a100-sxm4-80gb"), ("L4", "l4"), ("T4", "t4"), ("V100", "v100-sxm2-32gb")]
TRAIN_MODELS = {"resnet50": "momentum", "bert_base": "adam"}
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_runs  # noqa: E402


def hw_for(name):
    for key, hw in NAMES:
        if key in name:
            return hw
    sys.exit("gpu_compare: no bundled description for %r (pass --hw)" % name)


def gemm_curve(gemm, precision):
    """[[FLOPs, efficiency]] of the square GEMMs measured in `precision`,
    as a share of the description's peak (filled in by the caller)."""
    pts = sorted((v["flops"], v["tflops"]) for v in gemm.values()
                 if v.get("dtype") == precision and v.get("m") == v.get("k") == v.get("n"))
    return pts


def peak_tflops(yaml_text, precision):
    unit = {"fp32": "vector", "tf32": "tensor", "fp16": "tensor", "bf16": "tensor"}[precision]
    block = re.search(r"(?ms)^\s*%s:\s*#?[^\n]*\n(.*?)(?=^\s*(tensor|vector|memory):|\Z)" % unit, yaml_text)
    m = re.search(r"(?m)^\s*%s:\s*([0-9.]+)\s*TFLOPS" % precision, block.group(1) if block else "")
    return float(m.group(1)) if m else None


def calibrated(hw, measured, precision, mode, tmp):
    """The bundled description with the run's own micro-benchmarks in it."""
    with open(os.path.join(DEVICES, hw + ".yaml")) as f:
        y = f.read()
    s = measured["sections"]
    notes = []
    launch = s.get("launch", {})
    per_kernel = launch.get("graph_per_kernel" if mode == "graph" else "eager_per_kernel", {})
    if "per_kernel_s" in per_kernel:
        us = per_kernel["per_kernel_s"] * 1e6
        y = re.sub(r"(?m)^(\s*launch_overhead:)\s*[^#\n]*", r"\g<1> %.3f us " % us, y, count=1)
        notes.append("launch %.2f us" % us)
    peak = peak_tflops(y, precision)
    pts = gemm_curve(s.get("gemm", {}), precision)
    if peak and pts:
        curve = ", ".join("[%.4g GFLOP, %.3f]" % (fl / 1e9, min(tf / peak, 1.0)) for fl, tf in pts)
        y = re.sub(r"(?ms)(^\s*gemm:\s*\n\s*compute:)\s*\[\[.*?\]\]", r"\1 [%s]" % curve, y, count=1)
        notes.append("gemm %s %.2f..%.2f" % (precision, pts[0][1] / peak, max(t for _, t in pts) / peak))
    # Fused attention (measured in BF16, the 16-bit tensor peak's share):
    # one efficiency for its forward and backward kernels together, 3.5
    # forward FLOPs over their time, at the longest sequence measured.
    att = [v for v in s.get("attention", {}).values() if "forward_flops" in v]
    fp16_peak = peak_tflops(y, "bf16")
    if att and precision in ("fp16", "bf16") and fp16_peak:
        big = max(att, key=lambda v: v["seq"])
        eff = min(3.5 * big["forward_flops"] / big["forward_backward"]["median_s"] / 1e12 / fp16_peak, 1.0)
        y = re.sub(r"(?m)^(\s*)efficiency:\s*\n", r"\g<0>\g<1>  fused_attention: {compute: %.3f}\n" % eff, y,
                   count=1)
        notes.append("attention %.2f" % eff)
    copies = [v for v in s.get("copy", {}).values() if "gbps" in v]
    hbm = re.search(r"(?m)^\s*- \{name: \w+, capacity: [^,]+, bandwidth: ([0-9.]+) GB/s\}", y)
    if copies and hbm:
        big = max(copies, key=lambda v: v["bytes_each_way"])
        eff = min(big["gbps"] / float(hbm.group(1)), 1.0)
        y = re.sub(r"(?m)^(\s*elementwise: \{compute: [0-9.]+, memory:) [0-9.]+", r"\1 %.3f" % eff, y, count=1)
        notes.append("copy %.0f GB/s" % big["gbps"])
    y = re.sub(r"(?m)^(\s*name:)\s*%s\b" % re.escape(hw), r"\1 %s-measured" % hw, y, count=1)
    p = os.path.join(tmp, "%s-%s-%s.yaml" % (hw, precision, mode))
    with open(p, "w") as f:
        f.write(y)
    return p, "; ".join(notes)


def perfc_json(cmd, field):
    """cmd's JSON output at the path `field` (a list of keys), or None with
    perfc's message printed (one failed prediction does not stop the table)."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("gpu_compare: %s: %s" % (" ".join(cmd), r.stderr.strip()), file=sys.stderr)
        return None
    d = json.loads(r.stdout)
    for k in field:
        d = d[k]
    return d


def infer_cmd(perfc, run, hw):
    cmd = [perfc, os.path.join(ZOO, run["model"] + ".onnx"), "--hw", hw, "--batch", str(run["batch"]),
           "--compute-type", run["precision"], "--format", "json"]
    if run["precision"] == "fp16":
        cmd += ["--storage-type", "fp16"]
    # PyTorch launches one kernel per op; a CUDA graph replays the same
    # kernels (it removes the host's launch cost, it fuses nothing).
    cmd += ["--no-fusion"]
    if run.get("seq"):
        cmd += ["--dim", "seq=%d" % run["seq"]]
    return cmd


def train_cmd(perfc, run, hw):
    amp = run["precision"] == "amp"
    cmd = [perfc, os.path.join(ZOO, run["model"] + ".onnx"), "--hw", hw, "--train",
           "--micro-batch", str(run["batch"]), "--dtype", "fp16" if amp else "tf32",
           "--optimizer", TRAIN_MODELS[run["model"]], "--no-fusion", "--format", "json"]
    if run["model"] == "resnet50":
        cmd += ["--conv-layout", "nhwc" if run.get("channels_last") else "nchw"]
    else:
        cmd += ["--dim", "seq=128"]
    return cmd


def ms(p, m):
    """A prediction in ms with its error against the measured m (seconds)."""
    if not p:
        return "failed"
    return "%.3f (%+.0f%%)" % (p * 1e3, (p / m - 1) * 100)


def predict_only(perfc, hw):
    """perfc's predictions for every planned run, keyed as gpu_measure keys
    its measurements."""
    out = {"hw": hw, "zoo": {}, "train": {}}
    for model in gpu_runs.ZOO_ORDER:
        for prec in gpu_runs.PRECISIONS:
            for batch in gpu_runs.BATCHES:
                for mode in gpu_runs.MODES:
                    run = dict(model=model, batch=batch, precision=prec, mode=mode, seq=gpu_runs.SEQ.get(model))
                    t = perfc_json(infer_cmd(perfc, run, hw), ["totals"])
                    out["zoo"][gpu_runs.zoo_key(model, batch, prec, mode)] = (
                        {"latency_s": t["latency_s"], "kernels": t["kernels"]} if t else None)
    for model, batch, prec in gpu_runs.TRAIN_RUNS:
        run = dict(model=model, batch=batch, precision=prec, channels_last=prec == "amp")
        out["train"][gpu_runs.train_key(model, batch, prec)] = perfc_json(train_cmd(perfc, run, hw),
                                                                           ["step", "time_s"])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("measured", nargs="?")
    ap.add_argument("--predict-only", action="store_true", help="predict the planned runs; no measurement")
    ap.add_argument("--perfc", default=os.path.join(ROOT, "build", "tools", "perfc"))
    ap.add_argument("--hw", help="bundled description (default: from the measured device's name)")
    ap.add_argument("--out", help="markdown file (default: tools/bench/results/gpu_HW.md)")
    args = ap.parse_args(argv)
    if args.predict_only:
        if not args.hw:
            sys.exit("gpu_compare: --predict-only needs --hw")
        out = args.out or os.path.join(ROOT, "tools", "bench", "results", "gpu_%s_predicted.json" % args.hw)
        with open(out, "w") as f:
            json.dump(predict_only(args.perfc, args.hw), f, indent=1, sort_keys=True)
            f.write("\n")
        print("gpu_compare: wrote %s" % out)
        return
    if not args.measured:
        sys.exit("gpu_compare: give the JSON gpu_measure.py wrote (or --predict-only)")
    with open(args.measured) as f:
        measured = json.load(f)
    s = measured["sections"]
    info = s["info"]["device"]
    hw = args.hw or hw_for(info.get("name", ""))
    out = args.out or os.path.join(ROOT, "tools", "bench", "results", "gpu_%s.md" % hw)
    rows, summary = [], {"bundled": [], "calibrated": []}
    with tempfile.TemporaryDirectory() as tmp:
        for key in sorted(s.get("zoo", {})):
            run = s["zoo"][key]
            if "median_s" not in run:
                rows.append("| %s | failed: %s | | | | | | |" % (key, run.get("error", "?")[:80]))
                continue
            cal, notes = calibrated(hw, measured, run["precision"], run["mode"], tmp)
            bt = perfc_json(infer_cmd(args.perfc, run, hw), ["totals"])
            b = bt["latency_s"] if bt else None
            c = perfc_json(infer_cmd(args.perfc, run, cal), ["totals", "latency_s"])
            kernels = "%s / %s" % (run.get("kernels") or "-", bt["kernels"] if bt else "-")
            m = run["median_s"]
            for k, p in (("bundled", b), ("calibrated", c)):
                if p:
                    summary[k].append(abs(p / m - 1))
            rows.append("| %s | %d | %s | %s | %.3f | %s | %s | %s | %s |" % (
                run["model"], run["batch"], run["precision"], run["mode"], m * 1e3, ms(b, m), ms(c, m),
                kernels, notes))
        train_rows = []
        for key in sorted(s.get("train", {})):
            run = s["train"][key]
            if "median_s" not in run:
                train_rows.append("| %s | failed: %s | | | |" % (key, run.get("error", "?")[:80]))
                continue
            prec = "fp16" if run["precision"] == "amp" else "tf32"
            cal, notes = calibrated(hw, measured, prec, "eager", tmp)
            b = perfc_json(train_cmd(args.perfc, run, hw), ["step", "time_s"])
            c = perfc_json(train_cmd(args.perfc, run, cal), ["step", "time_s"])
            m = run["median_s"]
            train_rows.append("| %s | %d | %s | %.1f | %s | %s |" % (
                run["model"], run["batch"], run["precision"], m * 1e3, ms(b, m), ms(c, m)))
    lines = ["# perfc against PyTorch on %s (`%s`)" % (info.get("name"), hw), "",
             "Generated by `tools/bench/gpu_compare.py %s` from a run of `tools/bench/gpu_measure.py` "
             "(torch %s, CUDA %s). Times in ms, median of timed iterations (CUDA events). "
             "Error = predicted / measured - 1." % (os.path.relpath(args.measured, ROOT), info.get("torch"),
                                                   info.get("cuda")), ""]
    for k, v in summary.items():
        if v:
            within = sum(1 for e in v if e <= 0.2)
            lines.append("- **%s**: MAPE %.1f%%, %d of %d within 20%%" % (k, 100 * sum(v) / len(v), within, len(v)))
    lines += ["", "## Inference", "",
              "| model | batch | precision | mode | measured | bundled | calibrated | kernels (torch / perfc) | calibration |",
              "|---|---:|---|---|---:|---:|---:|---|---|"] + rows
    if train_rows:
        lines += ["", "## Training step (one GPU)", "",
                  "| model | batch | precision | measured | bundled | calibrated |",
                  "|---|---:|---|---:|---:|---:|"] + train_rows
    micro = ["", "## Micro-benchmarks", "", "| item | measured |", "|---|---|"]
    for key, v in sorted(s.get("gemm", {}).items()):
        if "tflops" in v:
            # Skinny products (decoding) are judged by how fast they stream
            # their operands: GB/s of A, B and C at the type's size.
            stream = ""
            if v.get("m", 0) <= 64 and v.get("median_s"):
                size = 2 if v.get("dtype") in ("bf16", "fp16") else 4
                moved = size * (v["m"] * v["k"] + v["k"] * v["n"] + v["m"] * v["n"])
                stream = ", %.0f GB/s of operands" % (moved / v["median_s"] / 1e9)
            micro.append("| GEMM %s | %.1f TFLOPS%s |" % (key, v["tflops"], stream))
    for key, v in sorted(s.get("copy", {}).items(), key=lambda kv: kv[1].get("bytes_each_way", 0)):
        if "gbps" in v:
            micro.append("| copy %s | %.0f GB/s (read + written) |" % (key, v["gbps"]))
    for key, v in sorted(s.get("launch", {}).items()):
        if "median_s" in v:
            micro.append("| %s | %.2f us |" % (key, 1e6 * v.get("per_kernel_s", v["median_s"])))
    lines += micro
    # fp16 against fp32 for the same eager memory-bound kernel: perfc takes
    # both at one bandwidth share, so it predicts their times' ratio as the
    # bytes' (about 2); a lower measured ratio means fp16 kernels reach a
    # smaller share (issue 4's AMP-vs-TF32 question).
    # Fused attention against the BF16 tensor peak: the share FlashAttention
    # kernels reach, where perfc prices them at the GEMM curve.
    att = {k: v for k, v in s.get("attention", {}).items() if "forward_tflops" in v}
    if att:
        with open(os.path.join(DEVICES, hw + ".yaml")) as f:
            peak = peak_tflops(f.read(), "bf16")
        lines += ["", "## Fused causal attention (scaled_dot_product_attention, BF16)", "",
                  "| batch x heads x seq x head dim | forward TFLOPS | backward TFLOPS | "
                  "forward / backward share of the BF16 peak |", "|---|---:|---:|---|"]
        for key, v in sorted(att.items(), key=lambda kv: kv[1]["seq"]):
            share = ("%.2f / %.2f" % (v["forward_tflops"] / peak, v["backward_tflops"] / peak)
                     if peak else "-")
            lines.append("| %d x %d x %d x %d | %.0f | %.0f | %s |" % (
                v["batch"], v["heads"], v["seq"], v["head_dim"], v["forward_tflops"],
                v["backward_tflops"], share))
    mb = s.get("membound", {})
    pairs = sorted({k.replace("_fp32_", "_%s_") for k in mb if "_fp32_" in k})
    if pairs:
        lines += ["", "## Memory-bound kernels, fp32 against fp16 (eager)", "",
                  "| kernel | fp32 GB/s | fp16 GB/s | time fp32 / fp16 |", "|---|---:|---:|---:|"]
        for pat in pairs:
            a, b = mb.get(pat % "fp32", {}), mb.get(pat % "fp16", {})
            if "gbps" in a and "gbps" in b:
                lines.append("| %s | %.0f | %.0f | %.2f |" % (pat.replace("_%s", ""), a["gbps"], b["gbps"],
                                                             a["median_s"] / b["median_s"]))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
