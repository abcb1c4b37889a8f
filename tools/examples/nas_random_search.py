#!/usr/bin/python3
"""Random neural-architecture search ranked by predicted latency.

A MobileNetV2-like search space (stage depths, widths, kernel sizes,
expansion ratios) sampled at random; every candidate is built with perfc's
graph builder (no ONNX, no torch) and predicted on an edge SoC description
and on a CPU description, in-process. Prints the fastest candidates, the
rank correlation between the two devices and the predictions per second.

    PYTHONPATH=build/python /usr/bin/python3 tools/examples/nas_random_search.py \
        [--samples 1000] [--edge snapdragon-8-gen-2-cpu-performance] \
        [--cpu zen5-2vcpu | --cpu my-cpu.yaml] [--seed 0] [--onnx-dir DIR]

`perfc calibrate --out my-cpu.yaml` describes the CPU at hand. With
--onnx-dir, the top candidates are not exported (the builder makes IR, not
ONNX); use tools/bench/ort_accuracy.py on exported models to measure them.
"""
import argparse
import random
import time

import perfc

STAGES = 5  # stages after the stem, each halving resolution except the 2nd


def sample(rng):
    """One architecture: per stage (depth, width, kernel, expansion)."""
    arch = []
    for stage in range(STAGES):
        arch.append((rng.choice([1, 2, 3, 4]),
                     rng.choice([16, 24, 32, 48, 64, 96, 128, 160])
                     * (1 + stage // 2),
                     rng.choice([3, 5, 7]),
                     rng.choice([1, 3, 4, 6])))
    return arch


def build(arch, resolution=224):
    b = perfc.ModelBuilder("nas")
    x = b.input("image", [1, 3, resolution, resolution])
    x = b.relu6(b.batch_norm(b.conv(x, 32, 3, stride=2)))
    channels = 32
    for stage, (depth, width, kernel, expand) in enumerate(arch):
        for i in range(depth):
            stride = 2 if i == 0 and stage != 1 else 1
            y = x
            if expand > 1:
                y = b.relu6(b.batch_norm(b.conv(y, channels * expand, 1, pad=0)))
            y = b.relu6(b.batch_norm(b.depthwise_conv(y, kernel, stride=stride)))
            y = b.batch_norm(b.conv(y, width, 1, pad=0))
            x = b.add(x, y) if stride == 1 and width == channels else y
            channels = width
    x = b.relu6(b.batch_norm(b.conv(x, 1280, 1, pad=0)))
    b.output(b.gemm(b.flatten(b.global_avg_pool(x)), 1000))
    return b.build()


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
