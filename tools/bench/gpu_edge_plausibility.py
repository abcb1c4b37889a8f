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
  storage  the same graph with `--storage-type` set to the published
           precision (fp16 or int8), so that activations and weights move the
           bytes the deployed FP16/INT8 engines move. This is the prediction
           the figures are counted against.
  async    storage, and the description's launch_overhead replaced by the
           per-kernel cost of an asynchronously enqueued stream, for runtimes
           that enqueue a whole engine without host work between kernels
           (TensorRT): 1 us. Source: NVIDIA, "Getting Started with CUDA
           Graphs" (https://developer.nvidia.com/blog/cuda-graphs/): a 2.9 us
           kernel takes 3.8 us per kernel in a stream without synchronisation
           (0.9 us between kernels) against 9.6 us with host synchronisation
           after each. Not fitted to any figure here. Other runtimes keep the
           description's value. A sensitivity check, not a proposal: it fixes
           nothing once attention is fused and breaks every batch-1 CNN (see ANALYSIS).

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


class Models:
    def __init__(self, perfc, tmp):
        self.perfc, self.tmp, self.cache = perfc, tmp, {}

    def path(self, model, seq):
        key = (model, seq)
        if key in self.cache:
            return self.cache[key]
        if model == "bert_large":  # not in the zoo: BERT-Large from perfc zoo
            p = os.path.join(self.tmp, "bert_large_%s.onnx" % seq)
            cmd = [self.perfc, "zoo", "bert", "--layers", "24", "--hidden", "1024", "--heads", "16",
                   "--seq", str(seq), "--vocab", "30522", "-o", p]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        else:
            p = os.path.join(ZOO, model + ".onnx")
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


def predict(perfc, model_path, hw, batch, seq, precision, storage=None):
    cmd = [perfc, model_path, "--hw", hw, "--batch", str(batch), "--compute-type", precision, "--format", "json"]
    if storage:
        cmd += ["--storage-type", storage]
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

Counted against **storage** (`--storage-type` = the published precision):
12 of 24 within 20%, up from 5 before `--storage-type`, attention fusion
and the T4's power-capped efficiency.

**What changed in perfc, and what it moved.**

1. **`--storage-type`** (INT8 engines move 1 byte per element, FP16 ones 2):
   the memory-bound offline CNN rows fell from +198%/+282% (A100/H100 as
   exported) to +24%/+35%, L4 from +524% to +84%, Orin batch 1 to +7%.
2. **Attention as TensorRT and ONNX Runtime run it** (passes/Fusion.cpp):
   the scores never reach memory (FlashAttention-style kernel), the head
   split/merge Transposes (and a packed QKV's Split) run inside the
   attention kernel, and the Q, K, V projections of one input run as one
   GEMM (N summed), as TensorRT's fused QKV and ORT's packed-QKV Attention
   do. BERT-Base is 88 kernels (7 per layer: QKV, attention, output, LN, FC1
   + GELU, FC2, LN; demoBERT's plugins launch ~6 per layer). All six A100
   demoBERT rows are now within 12% (batch 1 from +66..+84% to -1..+10%;
   batch 128 from +10..+16% to -12..-5%).

**What is still off, and why (no description was tuned to these figures).**

3. **T4 power cap** (hwdb/devices/t4.yaml): the 70 W T4 sustains ~24 of
   its 65 FP16 TFLOPS in cuBLAS GEMMs (NVIDIA developer forum, cited in the
   description), so its GEMM efficiency is 0.37 (was an assumed 0.55) and
   conv 0.30. T4 BERT batch 128 moved from -38% to -11/-12%, FP16 batch 1 is
   -2%. T4 INT8 batch 1 stays -37%: demoBERT's INT8 engine keeps LayerNorm,
   softmax and the residual path in FP16 and adds (de)quantisation work, so
   it is barely faster than FP16 (1.69 vs 1.95 ms), while `--storage-type
   int8` stores every tensor in 1 byte.
4. **Batch-1 CNNs on A100 are 18-29% too fast** in INT8: a small conv cannot
   fill 108 SMs, and its ramp-up and tail take ~8 us per kernel measured
   (0.46 ms over 56 kernels) against perfc's 5 us launch plus a roofline
   that assumes full occupancy; MLPerf SingleStream also includes the
   LoadGen query path and the image copy (tens of us). The `async` column
   (1 us per kernel) makes them -76%: the per-kernel floor is real.
5. **L4 ResNet-50 is +50% (batch 1) and +84% (offline)**, 74-79%
   memory-bound in the prediction: the L4's 48 MB L2 holds the whole INT8
   ResNet-50 (25 MB of weights) and a layer's activations at batch 1, and
   perfc prices every byte at the 300 GB/s of GDDR6 (the roofline has no
   cache level; the descriptions list L2 capacities but no L2 bandwidth).
   H100/A100 offline (+35%/+24%) are 60%/36% memory-bound in the
   prediction; on-chip reuse between layers is the plausible cause there
   too, not verified. Xavier (-39%, 61% compute-bound in the prediction): the figure
   implies 4.5 TOPS (8.2 GOP in 1.83 ms), 0.20 of the datasheet's 22 INT8
   TOPS, against the description's 0.5 conv efficiency; no source for a
   sustained Xavier INT8 rate was found, so the description is unchanged
   and the cause is not identified.
6. **Snapdragon 8 Gen 2 NPU peaks are placeholders** (no vendor figure):
   the INT8 figure (0.813 ms) is close to the time to read ResNet-50's INT8
   weights once from DRAM (25 MB / 67.2 GB/s = 0.38 ms) plus compute; three
   figures are too few to calibrate on one and validate on the rest.
7. MLPerf BERT rows run variable-length sequences and are not counted
   (their effective length is below the 384 priced here).
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
                m = models.path(r["model"], seq)
                hw = async_device(a.perfc, r["hw"], tmp) if (v == "async" and trt) else r["hw"]
                dimseq = seq if r["model"] != "bert_large" else ""  # perfc zoo fixes seq
                # The engines store tensors in the published precision
                # (INT8 engines: INT8 activations and weights).
                ms, kernels, bounds = predict(a.perfc, m, hw, batch, dimseq, prec,
                                              None if v == "asis" else prec)
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
               "the same graph with `--storage-type` = the published precision (counted); "
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
