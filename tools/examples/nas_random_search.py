#!/usr/bin/python3
"""Random neural-architecture search ranked by predicted latency.

A MobileNetV2-like search space (stage depths, widths, kernel sizes,
expansion ratios) sampled at random; every candidate is built with perfc's
graph builder (no ONNX, no torch) and predicted on an edge SoC description
and on a CPU description, in-process. Prints the fastest candidates, the
rank correlation between the two devices and the predictions per second.

    PYTHONPATH=build/python /usr/bin/python3 tools/examples/nas_random_search.py \
        [--samples 1000] [--edge snapdragon-8-gen-2-cpu-performance] \
        [--cpu zen5-2vcpu | --cpu my-cpu.yaml] [--seed 0] [--top 10]

`perfc calibrate --out my-cpu.yaml` describes the CPU at hand. The search
space is tools/examples/nas_space.py; tools/bench/nas_ranking.py exports
candidates of it to ONNX, measures them with ONNX Runtime on this CPU and
reports how well perfc's predicted latency ranks them (Kendall's tau).
"""
import argparse
import os
import random
import sys
import time

import perfc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from nas_space import build as build_into, sample  # noqa: E402 (the search space)


def build(arch, resolution=224):
    """The candidate as perfc IR, through perfc's graph builder."""
    return build_into(arch, perfc.ModelBuilder("nas"), resolution)


def kendall_tau(a, b):
    """Kendall's tau-a: (concordant - discordant) pairs over all pairs."""
    def sign(x):
        return (x > 0) - (x < 0)
    n, s = len(a), 0
    for i in range(n):
        for j in range(i + 1, n):
            s += sign(a[i] - a[j]) * sign(b[i] - b[j])
    return s / (n * (n - 1) / 2) if n > 1 else 1.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--edge", default="snapdragon-8-gen-2-cpu-performance")
    ap.add_argument("--cpu", default="zen5-2vcpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    edge, cpu = perfc.load_hw(args.edge), perfc.load_hw(args.cpu)
    rows = []
    start = time.perf_counter()
    for _ in range(args.samples):
        arch = sample(rng)
        model = build(arch)
        e = perfc.predict(model, edge, ops=False)
        c = perfc.predict(model, cpu, ops=False)
        rows.append((e["latency_s"], c["latency_s"], e["macs"], e["params"], arch))
    elapsed = time.perf_counter() - start
    rows.sort(key=lambda r: r[0])
    print(f"{args.samples} candidates, {2 * args.samples / elapsed:.0f} predictions/s "
          f"(build + 2 predictions each: {args.samples / elapsed:.0f} candidates/s)")
    print(f"{'rank':>4} {args.edge + ' ms':>30} {'cpu ms':>9} {'MMACs':>8} {'Mparams':>8}  stages (depth, width, kernel, expansion)")
    for i, (e, c, macs, params, arch) in enumerate(rows[:args.top]):
        print(f"{i + 1:>4} {e * 1e3:>30.3f} {c * 1e3:>9.3f} {macs / 1e6:>8.1f} "
              f"{params / 1e6:>8.2f}  {arch}")
    tau_devices = kendall_tau([r[0] for r in rows], [r[1] for r in rows])
    tau_macs = kendall_tau([r[0] for r in rows], [r[2] for r in rows])
    print(f"Kendall tau, {args.edge} vs {args.cpu} latency: {tau_devices:.3f}; "
          f"{args.edge} latency vs MACs: {tau_macs:.3f}")


if __name__ == "__main__":
    main()
