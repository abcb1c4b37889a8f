#!/usr/bin/python3
"""Heterogeneous inference placement (issue 5, "Edge").

For resnet50, mobilenet_v2 and bert_base (--dim seq=128) of tests/data/zoo
on the phone SoC (snapdragon-8-gen-2: three CPU clusters, Adreno GPU,
Hexagon NPU) and Jetson AGX Orin (CPU, GPU, DLA), and Jetson AGX Xavier for
comparison, with --compute-type int8 and fp16: `perfc --place` gives the
placed latency (kernels plus transfers over the SoC's shared memory, one
kernel at a time), each processor alone (inf where it cannot run some op),
the kernels per processor, the solver's time and whether the placement is
proven optimal. Target: placed <= best single processor in every case.

A second table runs the same models unfused (--no-fusion: about three
times the kernels) to show the solver at a larger size.

    /usr/bin/python3 tools/bench/placement.py [--perfc build/tools/perfc]
        [--out tools/bench/results/placement.txt]
"""
import argparse
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = [("resnet50", []), ("mobilenet_v2", []), ("bert_base", ["--dim", "seq=128"])]
CLUSTERS = ["snapdragon-8-gen-2", "jetson-agx-orin", "jetson-agx-xavier"]
TYPES = ["int8", "fp16"]

SHORT = {
    "snapdragon-8-gen-2-cpu-prime": "cpu-prime",
    "snapdragon-8-gen-2-cpu-performance": "cpu-perf",
    "snapdragon-8-gen-2-cpu-efficiency": "cpu-eff",
    "snapdragon-8-gen-2-gpu": "gpu",
    "snapdragon-8-gen-2-npu": "npu",
}


def short(name):
    if name in SHORT:
        return SHORT[name]
    for prefix in ("jetson-agx-orin-", "jetson-agx-xavier-"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def ms(v):
    return "inf" if v is None or (isinstance(v, float) and math.isinf(v)) else f"{v * 1e3:.3f}"


def run(perfc, model, extra, hw, ctype, flags):
    cmd = [perfc, os.path.join(ROOT, "tests", "data", "zoo", model + ".onnx"), *extra,
           "--hw", hw, "--place", "--timings", "--compute-type", ctype, "--format", "json",
           "--ops", "0",
           *flags]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def table(perfc, flags, title, lines):
    lines.append(title)
    lines.append(f"{'model':<13} {'cluster':<19} {'type':<5} {'kernels':>7} {'placed ms':>10} "
                 f"{'best single':>18} {'xfers':>5} {'xfer ms':>8} {'solve s':>8} {'proven':<6} "
                 f"per device (kernels) | each alone (ms)")
    ok = True
    for model, extra in MODELS:
        for hw in CLUSTERS:
            for ctype in TYPES:
                d = run(perfc, model, extra, hw, ctype, flags)
                p = d["placement"]
                singles = [(s["latency_s"] if s["latency_s"] is not None else math.inf, s["device"])
                           for s in p["single_device"]]
                best, best_dev = min(singles)
                placed = p["latency_s"]
                if placed > best * (1 + 1e-9):
                    ok = False
                per = " ".join(f"{short(x['name'])}={x['kernels']}" for x in p["devices"]
                               if x["kernels"])
                alone = " ".join(f"{short(dev)}={ms(v)}" for v, dev in singles)
                lines.append(
                    f"{model:<13} {hw:<19} {ctype:<5} {d['totals']['kernels']:>7} {ms(placed):>10} "
                    f"{short(best_dev) + ' ' + ms(best):>18} {p['transfers']:>5} "
                    f"{ms(p['transfers_s']):>8} {p['solve_s']:>8.3f} "
                    f"{'yes' if p['optimal'] else 'NO':<6} {per} | {alone}")
    lines.append("")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perfc", default=os.path.join(ROOT, "build", "tools", "perfc"))
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    lines = [
        "perfc --place: placed latency against each processor alone (ms); transfers over",
        "the SoC's shared memory (p2pTime: bytes / (bw x eff) + 10 us); one kernel at a time.",
        "Compute type per processor: the requested one if its `supports` allows it, else its",
        "fastest allowed floating type, else unsupported (README 'Placement').",
        "",
    ]
    ok = table(a.perfc, [], "fused kernels (as the runtimes run them)", lines)
    ok &= table(a.perfc, ["--no-fusion"], "unfused (--no-fusion): a larger problem for the solver",
                lines)
    lines.append("placed <= best single processor in every case: " + ("yes" if ok else "NO"))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
