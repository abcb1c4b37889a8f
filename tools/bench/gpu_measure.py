#!/usr/bin/env python3
"""Measure a GPU for perfc's GPU comparison (issue 3): one prepared run.

The device machine of a session that is lent one (see the device tool) runs
this once; everything it measures lands in one JSON file, written again
after every item so that a run cut short keeps what it measured.  perfc is
not needed there: tools/bench/gpu_compare.py predicts the same runs here
and writes the comparison.

    # on the device machine (PyTorch and torchvision installed there):
    PYTHONUNBUFFERED=1 python3 tools/bench/gpu_measure.py \
        --out $OUT/gpu_measure.json --budget-s 420
    # here, with the file it wrote:
    /usr/bin/python3 tools/bench/gpu_compare.py FILE.json --perfc build/tools/perfc

What it measures, in this order (each section stops when the budget is
spent, and later sections are skipped):
  1. the device: name, SMs, L2, memory, clocks (nvidia-smi), versions;
  2. micro-benchmarks for the description: GEMM throughput by dtype and
     size (cuBLAS through torch.matmul), device-to-device copy bandwidth by
     size (L2-resident to HBM-sized), and the cost of one small kernel:
     eager back-to-back launches, a synchronised round trip, and inside a
     CUDA graph; eager memory-bound kernels of BERT-large training (add,
     GELU, dropout, softmax, LayerNorm; forward and backward) in fp32 and
     fp16, to see whether fp16 kernels reach the bandwidth fp32 ones do;
  3. the zoo (tools/zoo/export_zoo.py's models, random weights) for
     inference at batch 1 and 64, in fp32 (TF32 off), tf32 and fp16, each
     eager (one launch per op, as PyTorch runs) and as a CUDA graph
     (launches replayed by the GPU), median of timed iterations after
     warm-up, timed with CUDA events;
  4. ONNX Runtime on the GPU when its CUDA provider is present (recorded as
     absent otherwise);
  5. training steps for issue 4: ResNet-50 (SGD momentum; AMP in
     channels_last, TF32 in NCHW) and BERT-base (AdamW fused; AMP, TF32);
  6. fused causal attention (scaled_dot_product_attention in BF16), forward
     and forward plus backward, for the efficiency FlashAttention kernels
     reach (last: it runs only on what budget is left).

With --device cpu it runs the same code paths on the CPU with tiny
settings (the check that the script works before a device is spent on it).
"""

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "zoo"))

sys.path.insert(0, HERE)
from gpu_runs import (ATTENTION_SHAPES, BATCHES, COPY_MB, GEMM_SHAPES, GEMM_SIZES,  # noqa: E402
                      MEMBOUND_DTYPES, MEMBOUND_OPS, MEMBOUND_SHAPES, PRECISIONS, TRAIN_RUNS, ZOO_ORDER,
                      attention_key, membound_key, train_key, zoo_key)


class Budget:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()

    def spent(self, reserve=0.0):
        return self.left() <= reserve


class Result:
    """The JSON document, rewritten after every item."""

    def __init__(self, path):
        self.path, self.doc = path, {"schema": "perfc-gpu-measure-1", "sections": {}}

    def put(self, section, key, value):
        self.doc["sections"].setdefault(section, {})[key] = value
        self.flush()

    def flush(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)


def log(msg):
    print("[gpu_measure %7.1fs] %s" % (time.monotonic() - T0, msg), flush=True)


T0 = time.monotonic()


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------
class Timer:
    """Per-iteration times in seconds: CUDA events on a GPU (the GPU's own
    clock, launch gaps included), perf_counter after a sync on the CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def run(self, fn, warmup, target_s, min_reps, max_reps):
        for _ in range(warmup):
            fn()
        self.sync()
        t = time.perf_counter()
        fn()
        self.sync()
        one = max(time.perf_counter() - t, 1e-6)
        reps = int(min(max(min_reps, math.ceil(target_s / one)), max_reps))
        times = []
        if self.cuda:
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(reps)]
            wall = time.perf_counter()
            for s, e in ev:
                s.record()
                fn()
                e.record()
            self.sync()
            wall = time.perf_counter() - wall
            times = [s.elapsed_time(e) * 1e-3 for s, e in ev]
        else:
            wall = time.perf_counter()
            for _ in range(reps):
                t = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t)
            wall = time.perf_counter() - wall
        return {"median_s": statistics.median(times), "min_s": min(times), "reps": reps,
                "wall_mean_s": wall / reps}


# --------------------------------------------------------------------------
# 1. The device
# --------------------------------------------------------------------------
def device_info(device):
    info = {"python": platform.python_version(), "torch": torch.__version__,
            "cuda": getattr(torch.version, "cuda", None), "host": platform.node(),
            "cpu_count": os.cpu_count()}
    try:
        import torchvision
        info["torchvision"] = torchvision.__version__
    except Exception as e:  # noqa: BLE001
        info["torchvision"] = "absent: %s" % e
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        info.update(name=p.name, sms=p.multi_processor_count, memory_bytes=p.total_memory,
                    capability="%d.%d" % (p.major, p.minor),
                    l2_bytes=getattr(p, "L2_cache_size", None),
                    cudnn=torch.backends.cudnn.version())
        try:
            q = ("name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,"
                 "temperature.gpu")
            out = subprocess.run(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=20).stdout.strip()
            info["nvidia_smi"] = dict(zip(q.split(","), [s.strip() for s in out.split(",")]))
        except Exception as e:  # noqa: BLE001
            info["nvidia_smi"] = "failed: %s" % e
    else:
        info["name"] = platform.processor() or "cpu"
    return info


def smi_clocks():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20).stdout.strip()
        return out
    except Exception:  # noqa: BLE001
        return None


# --------------------------------------------------------------------------
# 2. Micro-benchmarks
# --------------------------------------------------------------------------
DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def gemm(device, timer, res, budget, quick):
    sizes = GEMM_SIZES[:2] if quick else GEMM_SIZES
    shapes = [(m, k, n) for m, k, n in GEMM_SHAPES[:1]] if quick else GEMM_SHAPES
    for name in (["fp32"] if quick else ["bf16", "fp16", "tf32", "fp32"]):
        set_tf32(name == "tf32")
        dt = DTYPES[name] if device.type == "cuda" else torch.float32
        for mkn in [(s, s, s) for s in sizes] + shapes:
            if budget.spent(reserve=60):
                return
            m, k, n = mkn
            if name in ("fp32", "tf32") and m * k * n > 8192 ** 3:
                continue  # minutes at fp32; the curve is flat long before
            key = "%s_%dx%dx%d" % (name, m, k, n)
            try:
                a = torch.randn(m, k, device=device, dtype=dt)
                b = torch.randn(k, n, device=device, dtype=dt)
                c = torch.empty(m, n, device=device, dtype=dt)
                t = timer.run(lambda: torch.matmul(a, b, out=c), 3, 0.2, 5, 200)
                flops = 2.0 * m * k * n
                t.update(dtype=name, m=m, k=k, n=n, flops=flops, tflops=flops / t["median_s"] / 1e12)
                res.put("gemm", key, t)
                del a, b, c
            except Exception as e:  # noqa: BLE001
                res.put("gemm", key, {"error": repr(e)})
    set_tf32(False)
    log("gemm done")


def copy_bandwidth(device, timer, res, budget, quick):
    for mb in (COPY_MB[:2] if quick else COPY_MB):
        if budget.spent(reserve=60):
            return
        n = int(mb * 2 ** 20) // 4
        try:
            x = torch.empty(n, device=device, dtype=torch.float32).fill_(1.0)
            y = torch.empty_like(x)
            t = timer.run(lambda: y.copy_(x), 3, 0.1, 10, 2000)
            moved = 2.0 * n * 4  # read and written
            t.update(bytes_each_way=n * 4, bytes_moved=moved, gbps=moved / t["median_s"] / 1e9)
            res.put("copy", "%gMB" % mb, t)
            del x, y
        except Exception as e:  # noqa: BLE001
            res.put("copy", "%gMB" % mb, {"error": repr(e)})
    log("copy done")


def membound(device, timer, res, budget, quick):
    """Eager PyTorch memory-bound ops, forward and backward, by storage type.
    bytes = the tensors each kernel must read and write once (forward: input
    and output, plus the mask for dropout and the other operand for add;
    backward: the incoming gradient, the saved tensors, the outgoing
    gradient), so gbps is the share of bandwidth the kernel reaches."""
    types = {"fp32": torch.float32, "fp16": torch.float16}
    for shape, (rows, cols) in MEMBOUND_SHAPES.items():
        if quick:
            rows = min(rows, 256)
        for op in MEMBOUND_OPS:
            if op in ("softmax",) and shape != "scores":
                continue
            if op in ("layer_norm",) and shape != "hidden":
                continue
            if op == "gelu" and shape != "ffn":
                continue
            for dt in MEMBOUND_DTYPES:
                if budget.spent(reserve=60):
                    return
                key_f = membound_key(op, shape, dt, "fwd")
                key_b = membound_key(op, shape, dt, "bwd")
                try:
                    t = types[dt]
                    n, e = rows * cols, torch.tensor([], dtype=t).element_size()
                    x = torch.randn(rows, cols, device=device, dtype=t, requires_grad=True)
                    y = torch.randn(rows, cols, device=device, dtype=t)
                    ln = torch.nn.LayerNorm(cols).to(device=device, dtype=t)
                    fwd = {"add": lambda: x + y,
                           "gelu": lambda: torch.nn.functional.gelu(x),
                           "dropout": lambda: torch.nn.functional.dropout(x, 0.1, True),
                           "softmax": lambda: torch.softmax(x, -1),
                           "layer_norm": lambda: ln(x)}[op]
                    # bytes per element forward / backward (mask: 1 byte).
                    fb, bb = {"add": (3 * e, 3 * e), "gelu": (2 * e, 3 * e),
                              "dropout": (2 * e + 1, 2 * e + 1), "softmax": (2 * e, 3 * e),
                              "layer_norm": (2 * e, 3 * e)}[op]
                    with torch.no_grad():
                        tf = timer.run(fwd, 3, 0.1, 10, 500)
                    tf.update(bytes=n * fb, gbps=n * fb / tf["median_s"] / 1e9, elements=n)
                    res.put("membound", key_f, tf)
                    if op == "add":  # its gradient is the incoming one: no kernel
                        continue
                    out = fwd()
                    g = torch.randn_like(out)
                    tb = timer.run(lambda: torch.autograd.grad(out, x, g, retain_graph=True), 3, 0.1, 10, 500)
                    tb.update(bytes=n * bb, gbps=n * bb / tb["median_s"] / 1e9, elements=n)
                    res.put("membound", key_b, tb)
                    del x, y, out, g, ln
                except Exception as ex:  # noqa: BLE001
                    res.put("membound", key_f, {"error": repr(ex)})
    log("membound done")


def launch_cost(device, timer, res, budget):
    x = torch.zeros(1, device=device)
    n = 200

    def eager():  # n back-to-back tiny kernels, no sync between
        for _ in range(n):
            x.add_(1.0)

    t = timer.run(eager, 3, 0.3, 5, 100)
    res.put("launch", "eager_per_kernel", dict(t, kernels=n, per_kernel_s=t["median_s"] / n))

    def roundtrip():
        x.add_(1.0)
        timer.sync()

    t = timer.run(roundtrip, 10, 0.2, 50, 5000)
    res.put("launch", "sync_roundtrip", t)
    if device.type == "cuda" and not budget.spent(reserve=60):
        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                eager()
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                eager()
            t = timer.run(g.replay, 3, 0.3, 5, 1000)
            res.put("launch", "graph_per_kernel", dict(t, kernels=n, per_kernel_s=t["median_s"] / n))
        except Exception as e:  # noqa: BLE001
            res.put("launch", "graph_per_kernel", {"error": repr(e)})
    log("launch done")


# --------------------------------------------------------------------------
# 3. The zoo
# --------------------------------------------------------------------------
def zoo_input(spec, batch, device):
    if spec["kind"] == "vision":
        return torch.randn(batch, 3, spec["hw"], spec["hw"], device=device)
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, spec["vocab"], (batch, spec["seq"]), generator=g).to(device)


def build(name, device):
    from export_zoo import MODELS  # tools/zoo: the zoo's own definitions
    spec = MODELS[name]
    torch.manual_seed(0)
    return spec, spec["build"]().eval().to(device)


def count_kernels(fn, device):
    """GPU kernels one call of fn launches (torch.profiler), or None."""
    if device.type != "cuda":
        return None
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        n = 0
        for e in prof.events():
            dt = getattr(e, "device_type", None)
            if dt is not None and "CUDA" in str(dt) and "Memcpy" not in e.name and "Memset" not in e.name:
                n += 1
        return n
    except Exception:  # noqa: BLE001
        return None


def as_graph(fn, device):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def zoo(device, timer, res, budget, models, batches, precisions, quick):
    for name in models:
        if budget.spent(reserve=90):
            log("budget spent: zoo stops before %s" % name)
            return
        try:
            spec, model = build(name, device)
        except Exception as e:  # noqa: BLE001
            res.put("zoo", name, {"error": repr(e)})
            continue
        for prec in precisions:
            set_tf32(prec == "tf32")
            m = model.half() if prec == "fp16" else model.float()
            for batch in batches:
                for mode in (["eager"] if device.type != "cuda" else ["eager", "graph"]):
                    if budget.spent(reserve=90):
                        break
                    key = zoo_key(name, batch, prec, mode)
                    try:
                        x = zoo_input(spec, batch, device)
                        if prec == "fp16" and spec["kind"] == "vision":
                            x = x.half()
                        with torch.no_grad():
                            fn = (lambda: m(x))
                            if mode == "graph":
                                fn = as_graph(fn, device)
                            t = timer.run(fn, 2 if quick else 5, 0.05 if quick else 0.5,
                                          3 if quick else 10, 1000)
                        t.update(model=name, batch=batch, precision=prec, mode=mode,
                                 seq=spec.get("seq"), hw=spec.get("hw"))
                        if mode == "eager" and batch == batches[0]:
                            with torch.no_grad():
                                t["kernels"] = count_kernels(lambda: m(x), device)
                        res.put("zoo", key, t)
                        log("%s %.3f ms" % (key, t["median_s"] * 1e3))
                    except Exception as e:  # noqa: BLE001
                        res.put("zoo", key, {"error": repr(e)})
                        log("%s failed: %r" % (key, e))
                    if device.type == "cuda":
                        torch.cuda.empty_cache()
        del model
        set_tf32(False)


# --------------------------------------------------------------------------
# 4. ONNX Runtime
# --------------------------------------------------------------------------
def ort(res):
    try:
        import onnxruntime
        res.put("ort", "providers", {"version": onnxruntime.__version__,
                                     "available": onnxruntime.get_available_providers()})
    except Exception as e:  # noqa: BLE001
        res.put("ort", "providers", {"error": "absent: %r" % e})
        return
    if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        log("onnxruntime has no CUDA provider: ORT on the GPU not measured")
        return
    log("onnxruntime CUDA provider present (measuring it is left to a later version of this script)")


# --------------------------------------------------------------------------
# 5. Training steps
# --------------------------------------------------------------------------
def train(device, timer, res, budget, quick):
    cuda = device.type == "cuda"
    runs = [(m, min(b, 8 if m == "resnet50" else 2) if quick else b, p) for m, b, p in TRAIN_RUNS]
    for name, batch, prec in runs:
        if budget.spent(reserve=30):
            return
        key = train_key(name, batch, prec)
        try:
            spec, model = build(name, device)
            model.train()
            set_tf32(prec == "tf32")
            channels_last = spec["kind"] == "vision" and prec == "amp"
            if channels_last:
                model = model.to(memory_format=torch.channels_last)
            if name == "resnet50":
                opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.875)
            else:
                kw = {"fused": True} if cuda else {}
                opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **kw)
            x = zoo_input(spec, batch, device)
            if channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            labels = torch.randint(0, 1000, (batch,), device=device)
            # torch.amp.GradScaler from torch 2.3 on; torch.cuda.amp's before.
            Scaler = getattr(getattr(torch, "amp", None), "GradScaler", None)
            scaler = (Scaler("cuda", enabled=cuda and prec == "amp") if Scaler else
                      torch.cuda.amp.GradScaler(enabled=cuda and prec == "amp"))

            def step():
                opt.zero_grad(set_to_none=True)
                with torch.autocast(device_type=device.type, dtype=torch.float16 if cuda else torch.bfloat16,
                                    enabled=prec == "amp"):
                    out = model(x)
                    if spec["kind"] == "vision":
                        loss = torch.nn.functional.cross_entropy(out, labels)
                    else:
                        loss = out[0].float().pow(2).mean() + out[1].float().mean()
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()

            t = timer.run(step, 2 if quick else 5, 0.05 if quick else 2.0, 3 if quick else 10, 200)
            t.update(model=name, batch=batch, precision=prec, channels_last=channels_last,
                     optimizer="sgd-momentum" if name == "resnet50" else
                     ("adamw-fused" if cuda else "adamw"),
                     samples_per_s=batch / t["median_s"])
            res.put("train", key, t)
            log("train %s %.1f ms" % (key, t["median_s"] * 1e3))
            del model, opt
        except Exception as e:  # noqa: BLE001
            res.put("train", key, {"error": repr(e), "trace": traceback.format_exc()[-800:]})
            log("train %s failed: %r" % (key, e))
        if cuda:
            torch.cuda.empty_cache()
        set_tf32(False)


def attention(device, timer, res, budget, quick):
    """Fused causal attention, forward and forward plus backward. FLOPs
    as FlashAttention's benchmarks count them: 4 b h s^2 d forward, halved
    for the causal mask, and 2.5 times that backward."""
    import torch.nn.functional as F
    shapes = [(1, 2, 128, 32)] if quick else ATTENTION_SHAPES
    dt = torch.bfloat16 if device.type == "cuda" else torch.float32
    for b, h, s, d in shapes:
        if budget.spent(reserve=15):
            log("budget spent: attention stops before s=%d" % s)
            return
        key = attention_key(b, h, s, d)
        try:
            q, k, v = (torch.randn(b, h, s, d, device=device, dtype=dt, requires_grad=True)
                       for _ in range(3))
            g = torch.randn(b, h, s, d, device=device, dtype=dt)

            def forward():
                with torch.no_grad():
                    F.scaled_dot_product_attention(q, k, v, is_causal=True)

            def both():
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                torch.autograd.grad(out, (q, k, v), g)

            fwd = timer.run(forward, 3, 0.2, 5, 200)
            fb = timer.run(both, 3, 0.2, 5, 200)
            flops = 4.0 * b * h * s * s * d / 2
            bwd_s = max(fb["median_s"] - fwd["median_s"], 1e-9)
            res.put("attention", key, {
                "batch": b, "heads": h, "seq": s, "head_dim": d, "dtype": str(dt), "causal": True,
                "forward": fwd, "forward_backward": fb, "forward_flops": flops,
                "forward_tflops": flops / fwd["median_s"] / 1e12,
                "backward_tflops": 2.5 * flops / bwd_s / 1e12})
            del q, k, v, g
        except Exception as e:  # noqa: BLE001
            res.put("attention", key, {"error": repr(e)})
    log("attention done")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--budget-s", type=float, default=420, help="stop starting new items after this")
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu (a check of the script)")
    ap.add_argument("--models", default=",".join(ZOO_ORDER))
    ap.add_argument("--batches", default=",".join(map(str, BATCHES)))
    ap.add_argument("--precisions", default=",".join(PRECISIONS))
    ap.add_argument("--skip", default="",
                    help="sections to skip: launch,copy,membound,gemm,zoo,ort,train,attention")
    args = ap.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("gpu_measure: no CUDA device (use --device cpu to check the script)")
    quick = device.type != "cuda"
    skip = set(filter(None, args.skip.split(",")))
    budget = Budget(args.budget_s)
    res = Result(args.out)
    timer = Timer(device)
    torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest algorithm, as deployments do
    res.put("info", "device", device_info(device))
    res.put("info", "argv", sys.argv)
    res.put("info", "clocks_before", smi_clocks() if device.type == "cuda" else None)
    sections = [("launch", lambda: launch_cost(device, timer, res, budget)),
                ("copy", lambda: copy_bandwidth(device, timer, res, budget, quick)),
                ("membound", lambda: membound(device, timer, res, budget, quick)),
                ("gemm", lambda: gemm(device, timer, res, budget, quick)),
                ("zoo", lambda: zoo(device, timer, res, budget, args.models.split(","),
                                    [int(b) for b in args.batches.split(",")],
                                    args.precisions.split(","), quick)),
                ("ort", lambda: ort(res)),
                ("train", lambda: train(device, timer, res, budget, quick)),
                ("attention", lambda: attention(device, timer, res, budget, quick))]
    for name, fn in sections:
        if name in skip:
            continue
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            res.put("errors", name, traceback.format_exc()[-2000:])
            log("section %s failed: %r" % (name, e))
    res.put("info", "clocks_after", smi_clocks() if device.type == "cuda" else None)
    res.put("info", "seconds", time.monotonic() - T0)
    log("done: %s" % args.out)


if __name__ == "__main__":
    main()
