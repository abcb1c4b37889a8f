#!/usr/bin/env python3
"""Predictions per second through `import perfc`, beside the C++ loops.

    PYTHONPATH=build/python python3 tools/bench/api_speed/api_speed.py \
        [--cpp build/tools/bench/api_speed/perfc_api_speed] [--seconds 2]

The same loops as api_speed.cpp, on one thread: a 50-op CNN made with the
builder, resnet50 from ONNX bytes: new bytes every time (a different
ModelProto.doc_string appended, so the import cache cannot hit and the whole
import runs) and the same bytes every time (the cache hits). Python calls
predict(..., ops=False) (the totals and latency, as a dict) and, for
comparison, with the per-op rows. Rates by the wall clock and by the
process's CPU time (one core's work when the machine is shared; targets are
checked on it). With --cpp, runs the C++ benchmark first and prints the
Python/C++ ratios of the CPU rates (target: at least 0.5).
"""
import argparse
import os
import re
import subprocess
import time

import perfc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def cnn50():
    b = perfc.ModelBuilder("cnn50")
    x = b.input("image", [1, 3, 224, 224])
    x = b.relu(b.batch_norm(b.conv(x, 32, 3, stride=2)))
    x = b.max_pool(x, 3, stride=2, pad=1)
    for stage in range(4):
        c = 32 << stage
        s = 2 if stage else 1
        y = b.relu(b.batch_norm(b.conv(x, c, 3, stride=s)))
        y = b.batch_norm(b.conv(y, c, 3))
        sc = b.batch_norm(b.conv(x, c, 1, stride=s, pad=0))
        x = b.relu(b.add(y, sc))
        if stage == 0:
            y = b.relu(b.batch_norm(b.conv(x, c, 3)))
            x = b.relu(b.add(b.batch_norm(b.conv(y, c, 3)), x))
    b.output(b.gemm(b.flatten(b.global_avg_pool(x)), 1000))
    return b.build()


def rate(seconds, f):
    """Calls per second of wall clock and of CPU time."""
    f()
    n, start, cpu = 0, time.perf_counter(), time.process_time()
    while True:
        for _ in range(16):
            f()
        n += 16
        el = time.perf_counter() - start
        if el >= seconds:
            return n / el, n / (time.process_time() - cpu)


def fresh(data):
    """Bytes of the same model, new each call (see api_speed.cpp)."""
    serial = [0]

    def make():
        doc = b"candidate %d" % serial[0]
        serial[0] += 1
        return data + b"\x32" + bytes([len(doc)]) + doc
    return make


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpp", help="the C++ benchmark binary")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--zoo", default=os.path.join(ROOT, "tests/data/zoo"))
    a = ap.parse_args()
    cpp = {}
    if a.cpp:
        out = subprocess.run([a.cpp, a.zoo, str(a.seconds)], check=True,
                             capture_output=True, text=True).stdout
        print("C++ (tools/bench/api_speed/api_speed.cpp):")
        print(out.rstrip())
        for line in out.splitlines():
            m = re.match(r"(.+?)\s+(\d+) /s\s+cpu\s+(\d+) /s", line)
            if m:
                cpp[m.group(1).strip()] = float(m.group(3))
    hw = perfc.load_hw("a100-sxm4-80gb")
    m = cnn50()
    data = open(os.path.join(a.zoo, "resnet50.onnx"), "rb").read()
    new_bytes = fresh(data)
    rows = [
        ("cnn50 predict", lambda: perfc.predict(m, hw, ops=False),
         "cnn50 predict", 10000),
        ("cnn50 predict, with ops", lambda: perfc.predict(m, hw),
         "cnn50 predict", 0),
        ("cnn50 build + predict",
         lambda: perfc.predict(cnn50(), hw, ops=False),
         "cnn50 build + predict", 10000),
        ("resnet50 fresh bytes -> predict",
         lambda: perfc.predict(perfc.Model.from_onnx(new_bytes(),
                                                     name="resnet50"),
                               hw, ops=False),
         "resnet50 fresh bytes -> predict", 1000),
        ("resnet50 same bytes -> predict",
         lambda: perfc.predict(perfc.Model.from_onnx(data, name="resnet50"),
                               hw, ops=False),
         "resnet50 same bytes -> predict", 0),
    ]
    print(f"\nPython {perfc.__version__} (import perfc), one thread:")
    for name, f, ref, target in rows:
        wall, cpu = rate(a.seconds, f)
        line = f"{name:36s} {wall:8.0f} /s  cpu {cpu:8.0f} /s"
        if ref in cpp:
            line += f"  (x{cpu / cpp[ref]:.2f} of C++)"
        if target:
            line += (f"  target {target} /s: "
                     f"{'met' if cpu >= target else 'MISSED'}")
        print(line)


if __name__ == "__main__":
    main()
