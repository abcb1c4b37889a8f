#!/usr/bin/python3
"""GPU and edge plausibility: perfc's latency against published inference
measurements (MLPerf Inference, NVIDIA TensorRT demoBERT and quantization
toolkit tables, Qualcomm AI Hub, Arm's ExecuTorch model card).

The figures, their sources, runtimes and precisions are in
tools/bench/data/gpu_edge_published.csv; this script runs perfc for each with
the matching description, batch, sequence length and --compute-type, and
prints a Markdown table of published vs predicted with the error.

Three predictions per figure:
  asis     the zoo model as exported (fp32 tensors) with --compute-type: only
           the arithmetic runs in the figure's precision; every byte is fp32.
  storage  the same graph with its float tensors stored as fp16 (a copy made
           here with python3-onnx; BERT-Large comes from `perfc zoo bert
           --dtype fp16`), so that activations and weights move 2 bytes, as
           the deployed FP16/INT8 engines do (INT8 engines move 1 byte for
           most tensors; ONNX cannot express INT8 Conv/MatMul storage without
           rewriting the ops, so INT8 rows are priced with fp16 storage and
           overestimate the bytes).
  async    storage, and the description's launch_overhead replaced by the
           per-kernel cost of an asynchronously enqueued stream, for runtimes
           that enqueue a whole engine without host work between kernels
           (TensorRT): 1 us. Source: NVIDIA, "Getting Started with CUDA
           Graphs" (https://developer.nvidia.com/blog/cuda-graphs/): a 2.9 us
           kernel takes 3.8 us per kernel in a stream without synchronisation
           (0.9 us between kernels) against 9.6 us with host synchronisation
           after each. Not fitted to any figure here. Other runtimes keep the
           description's value. A sensitivity check, not a proposal: it fixes
           BERT at batch 1 and breaks every batch-1 CNN (see ANALYSIS).

Figures whose `counted` column is "no" are shown but not counted (e.g.
MLPerf BERT runs variable-length sequences, so its effective length is
unknown). Throughput figures (metric per_sample) compare the time per
sample at the given batch.

Usage: /usr/bin/python3 tools/bench/gpu_edge_plausibility.py [--perfc build/tools/perfc]
           [--out tools/bench/results/gpu_edge_plausibility.md]
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tools", "bench", "data", "gpu_edge_published.csv")
ZOO = os.path.join(ROOT, "tests", "data", "zoo")
TOLERANCE = 0.20
ASYNC_LAUNCH_US = 1.0  # see the docstring


def to_fp16_storage(src, dst):
    """Copy an ONNX graph with every float32 tensor type changed to float16
    (inputs, outputs, value_info, initializers, Cast targets, constants)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, numpy_helper

    F, H = TensorProto.FLOAT, TensorProto.FLOAT16
    m = onnx.load(src, load_external_data=False)

    def fix(values):
        for v in values:
            if v.type.tensor_type.elem_type == F:
                v.type.tensor_type.elem_type = H

    def walk(g):
        fix(g.input)
        fix(g.output)
        fix(g.value_info)
        for t in g.initializer:
            if t.data_type != F:
                continue
            if t.data_location == TensorProto.EXTERNAL or not (t.raw_data or t.float_data):
                t.data_type = H  # weight-stripped: only the type matters
            else:
                t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
        for n in g.node:
            for a in n.attribute:
                if a.name == "to" and a.type == onnx.AttributeProto.INT and a.i == F:
                    a.i = H
                elif a.type == onnx.AttributeProto.TENSOR and a.t.data_type == F:
                    a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
                elif a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)

    walk(m.graph)
    onnx.save(m, dst)


class Models:
    def __init__(self, perfc, tmp):
        self.perfc, self.tmp, self.cache = perfc, tmp, {}

    def path(self, model, seq, fp16):
        key = (model, seq, fp16)
        if key in self.cache:
            return self.cache[key]
        if model == "bert_large":  # not in the zoo: BERT-Large from perfc zoo
            p = os.path.join(self.tmp, "bert_large_%s_%s.onnx" % (seq, "fp16" if fp16 else "fp32"))
            cmd = [self.perfc, "zoo", "bert", "--layers", "24", "--hidden", "1024", "--heads", "16",
                   "--seq", str(seq), "--vocab", "30522", "-o", p]
            if fp16:
                cmd += ["--dtype", "fp16"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        else:
            p = os.path.join(ZOO, model + ".onnx")
            if fp16:
                q = os.path.join(self.tmp, model + "_fp16.onnx")
                to_fp16_storage(p, q)
                p = q
        self.cache[key] = p
        return p


def async_device(perfc, hw, tmp):
    """A copy of the bundled description with launch_overhead set to the
    asynchronous per-kernel cost."""
    p = os.path.join(tmp, hw + "-async.yaml")
    if not os.path.exists(p):
        src = os.path.join(ROOT, "hwdb", "devices", hw + ".yaml")
        with open(src) as f:
            y = f.read()
        y = re.sub(r"(?m)^(\s*launch_overhead:)\s*[^#\n]*", r"\1 %g us " % ASYNC_LAUNCH_US, y, count=1)
        y = re.sub(r"(?m)^(\s*name:)\s*%s\b" % re.escape(hw), r"\1 %s-async" % hw, y, count=1)
        with open(p, "w") as f:
            f.write(y)
    return p


def predict(perfc, model_path, hw, batch, seq, precision):
    cmd = [perfc, model_path, "--hw", hw, "--batch", str(batch), "--compute-type", precision, "--format", "json"]
    if seq:
        cmd += ["--dim", "seq=%s" % seq]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    d = json.loads(r.stdout)
    t = d["totals"]
    return t["latency_s"] * 1e3, t["kernels"], t["time_by_bound_s"]


def fmt_ms(x):
    return "%.4g" % x


ANALYSIS = """
## Analysis (at the time of writing; rerun the script for the current numbers)

**What is wrong, in order of size.**

1. **Tensor storage stays fp32 under `--compute-type`.** `TimeOptions::ComputeType`
   changes only the arithmetic; the bytes are the fp32 ones of the exported
   graph, while TensorRT, QNN and XNNPACK engines store activations and weights in
   FP16/INT8. Memory-bound rows (every offline/large-batch CNN figure, L4, Orin,
   Snapdragon) are 2-4x too slow in `asis`; with fp16 storage the A100 and H100
   offline errors fall from +198%/+282% to +76%/+112%, and they would roughly
   halve again with INT8 storage (69-82% of their time is in memory-bound
   kernels). Change: a `--storage-type` (or let `--compute-type fp16|int8`
   narrow the stored tensors, as a deployed engine does) in passes/Predict and
   tools/PredictCommand.cpp, so INT8 rows move 1 byte per element.
2. **No caches in the memory term.** The roofline prices every byte at DRAM
   bandwidth (Roofline.h lists caches as an unimplemented extension). At
   batch 1 a ResNet-50 layer's activations (at most 1.6 MB in fp16) stay in
   L2 (L4: 48 MB, A100: 40 MB, Orin: 4 MB): L4 and Orin ResNet-50 SingleStream
   are 100% and 98% memory-bound in the prediction, and +45%/+28% too slow
   even with fp16 storage and 1 us launches. Change: choose the memory level
   whose capacity holds a kernel's working set; hwdb needs L2 bandwidths
   (none are listed) for that.
3. **Attention is not fused.** perfc plans BERT-Base as 184 kernels (the
   QK^T MatMul, the Softmax chain and the AV MatMul are separate kernels, and
   the [batch, heads, seq, seq] scores go through DRAM); TensorRT's demoBERT
   runs fused QKV, fused multi-head attention and skip-LayerNorm plugins,
   about 5 kernels per layer (~62 in all). At batch 1 the 184 x 5 us of
   launch overhead alone (0.92 ms) exceeds the measured 0.67 ms; at batch 128
   the score tensors make 36-57% of the time memory-bound (+21..+75%). Change:
   a fusion rule for MatMul -> (Scale/Mask/Add) -> Softmax -> MatMul as one
   attention kernel whose bytes are Q, K, V and the output (FlashAttention /
   fused MHA), in passes/Fusion.cpp.
4. **Launch overhead is a per-kernel floor, not only a launch cost.** The
   1 us asynchronous value (`async` column) fixes BERT-Base at batch 1
   (-6%, BERT-Large +3%) but drops batch-1 ResNet-50/MobileNetV2/EfficientNet
   on A100 to -72..-76%: measured batch-1 CNN kernels last ~8 us each (53
   convolutions in 0.46 ms), because a small conv cannot fill 108 SMs and
   its ramp-up and tail do not shrink with the work. The 5 us in the
   descriptions reproduces those (-1% to -25%), so it is kept; the BERT
   excess is the kernel count of item 3. Change: model a minimum kernel
   duration separately from the host launch cost, once fusion matches.
5. **Snapdragon 8 Gen 2 NPU peaks are placeholders** (no vendor figure): the
   prediction is memory-bound at 0.5 x 67.2 GB/s with fp16 tensors; the INT8
   figure (0.813 ms) is barely above the time to read ResNet-50's FP16 weights
   once from DRAM (51 MB / 67.2 GB/s = 0.76 ms; INT8 weights take 0.38 ms),
   so storage (item 1) dominates before any peak can be fitted. Three
   figures are too few to calibrate on one and validate on the rest.
6. **Per-device details.** T4 at batch 128 is within 2-22% with fp16 storage
   (its 0.55 GEMM efficiency for a 70 W part holds). A100 BERT-Large at
   batch 128 (+40%) is half memory-bound on the unfused attention scores.
   MLPerf latency figures include the LoadGen query path and input copy
   (tens of us), perfc does not; MLPerf BERT rows use variable-length
   sequences and are not counted.

**hwdb changes: none.** The errors come from the model structure (storage
type, caches, attention fusion), not from a device figure the evidence
contradicts: lowering efficiencies or launch overheads to absorb them would
fit these validation figures and break the cases the structure already gets
right (batch-1 CNNs on A100 within 25%, T4 BERT at batch 128 within 22%).
No figure here was used to calibrate anything; all are validation.
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perfc", default=os.path.join(ROOT, "build", "tools", "perfc"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tools", "bench", "results", "gpu_edge_plausibility.md"))
    a = ap.parse_args()

    with open(DATA) as f:
        rows = list(csv.DictReader(f))

    out = []
    variants = ("asis", "storage", "async")
    within = {v: 0 for v in variants}
    counted = 0
    with tempfile.TemporaryDirectory() as tmp:
        models = Models(a.perfc, tmp)
        table = []
        for r in rows:
            batch, seq, prec = int(r["batch"]), r["seq"], r["precision"]
            per = batch if r["metric"] == "per_sample" else 1
            pub = float(r["published_ms"])
            pred, detail = {}, {}
            trt = "TensorRT" in r["runtime"]
            for v in variants:
                m = models.path(r["model"], seq, v != "asis")
                hw = async_device(a.perfc, r["hw"], tmp) if (v == "async" and trt) else r["hw"]
                dimseq = seq if r["model"] != "bert_large" else ""  # perfc zoo fixes seq
                ms, kernels, bounds = predict(a.perfc, m, hw, batch, dimseq, prec)
                pred[v] = ms / per
                detail[v] = (kernels, bounds)
            err = {v: pred[v] / pub - 1 for v in variants}
            is_counted = r["counted"] == "yes"
            if is_counted:
                counted += 1
                for v in variants:
                    within[v] += abs(err[v]) <= TOLERANCE
            k, b = detail["async"]
            tot = sum(b.values()) or 1
            mix = "/".join("%d" % round(100 * b[x] / tot) for x in ("compute", "memory", "overhead"))
            table.append((r, pub, pred, err, is_counted, k, mix))

    out.append("# GPU and edge plausibility: perfc against published inference measurements\n")
    out.append("Generated by `tools/bench/gpu_edge_plausibility.py` from "
               "`tools/bench/data/gpu_edge_published.csv` (sources, exact figures and what each runtime "
               "adds are in the CSV and below). Times in ms: per batch for latency figures, per sample "
               "for offline throughput figures (`/s` after the batch). Error = predicted / published - 1.\n")
    out.append("Predictions: **asis** = zoo model (fp32 tensors) with `--compute-type`; **storage** = "
               "the same graph with fp16 tensors (INT8 rows too: ONNX cannot hold INT8 conv/matmul storage); "
               "**async** = storage with `launch_overhead` 1 us for TensorRT rows (asynchronous enqueue, "
               "CUDA Graphs blog), the description's value otherwise. "
               "Bound mix = share of async-predicted time in compute/memory/overhead-bound kernels.\n")
    out.append("| id | device (hw) | model | seq | batch | prec | runtime | published | asis | err | storage | err | async | err | kernels | bound mix c/m/o | counted |")
    out.append("|---|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for r, pub, pred, err, is_counted, k, mix in table:
        b = r["batch"] + ("/s" if r["metric"] == "per_sample" else "")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %+.0f%% | %s | %+.0f%% | %s | %+.0f%% | %d | %s | %s |" % (
            r["id"], r["hw"], r["model"], r["seq"] or "-", b, r["precision"], r["runtime"], fmt_ms(pub),
            fmt_ms(pred["asis"]), 100 * err["asis"], fmt_ms(pred["storage"]), 100 * err["storage"],
            fmt_ms(pred["async"]), 100 * err["async"], k, mix, "yes" if is_counted else "no"))
    out.append("")
    out.append("Within %d%% (of %d counted figures): asis %d, storage %d, async %d.\n" % (
        100 * TOLERANCE, counted, within["asis"], within["storage"], within["async"]))
    out.append("## Figures and what the runtime adds\n")
    out.append("| id | exact figure | source | what the runtime adds or omits |")
    out.append("|---|---|---|---|")
    for r, *_ in table:
        out.append("| %s | %s | %s | %s |" % (r["id"], r["figure"], r["source"], r["runtime_adds"]))
    out.append(ANALYSIS)
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if a.out:
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
