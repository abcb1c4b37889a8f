#!/usr/bin/python3
"""Load speed and memory: perfc against `import onnx; onnx.load(PATH)`.

For each model the weight-stripped zoo file gets its weights back
(tools/zoo/fill_weights.py, deterministic), so the files have their real
sizes. Then, in one run on this machine:
  * perfc --format json PATH          (full pipeline: load, shape inference,
                                       work pass, JSON)
  * python3 -c 'import onnx; onnx.load(PATH)'
each run REPEATS times; the median wall time and the peak resident memory
(ru_maxrss of the child) are printed with their ratios.

Targets (issue "foundation"): perfc >= 10x faster on each file, perfc's peak
memory below half the file size.

    /usr/bin/python3 tools/bench/bench_load.py [--perfc build/tools/perfc]
        [--models resnet50,vit_b_16,gpt2_small] [--repeats 7] [--work DIR]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd):
    """Wall time (s) and peak RSS (bytes) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed ({code}): {err}")
    return wall, usage.ru_maxrss * 1024


def measure(cmd, repeats):
    run(cmd)  # Warm the page cache and the dynamic loader.
    samples = [run(cmd) for _ in range(repeats)]
    return (statistics.median(s[0] for s in samples),
            max(s[1] for s in samples))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfc", default=os.path.join(ROOT, "build", "tools", "perfc"))
    ap.add_argument("--models", default="resnet50,vit_b_16,gpt2_small")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    rows = []
    for name in args.models.split(","):
        stripped = os.path.join(ROOT, "tests", "data", "zoo", name + ".onnx")
        full = os.path.join(args.work, name + ".full.onnx")
        if not os.path.exists(full):
            subprocess.run([sys.executable, os.path.join(ROOT, "tools", "zoo", "fill_weights.py"),
                            stripped, full], check=True, stdout=subprocess.DEVNULL)
        size = os.path.getsize(full)
        # The transformers have a symbolic sequence length: bind it to the
        # traced one (tests/data/zoo/README.md).
        extra = {"gpt2_small": ["--dim", "seq=1024"],
                 "bert_base": ["--dim", "seq=128"]}.get(name, [])
        p_time, p_rss = measure([args.perfc, full, "--format", "json"] + extra,
                                args.repeats)
        o_time, o_rss = measure([sys.executable, "-c", f"import onnx; onnx.load({full!r})"],
                                args.repeats)
        rows.append((name, size, p_time, p_rss, o_time, o_rss))

    print(f"{'model':<12} {'file':>9} {'perfc':>9} {'onnx.load':>10} {'speed-up':>9} "
          f"{'perfc RSS':>10} {'RSS/file':>9} {'onnx RSS':>9}")
    ok = True
    for name, size, p_time, p_rss, o_time, o_rss in rows:
        speedup = o_time / p_time
        mem = p_rss / size
        ok &= speedup >= 10 and mem < 0.5
        print(f"{name:<12} {size/1e6:>7.1f}MB {p_time*1e3:>7.1f}ms {o_time*1e3:>8.1f}ms "
              f"{speedup:>8.1f}x {p_rss/1e6:>8.1f}MB {mem:>9.3f} {o_rss/1e6:>7.1f}MB")
    print("targets (>= 10x faster, RSS < 0.5 x file):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
