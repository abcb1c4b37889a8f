#!/usr/bin/env python3
"""Data-parallel training throughput (issue 4): perfc --train against
published NVIDIA DeepLearningExamples figures for ResNet-50 v1.5 and
BERT-large on one GPU and one 8-GPU node.

Usage: /usr/bin/python3 tools/bench/dp_training.py [--perfc build/tools/perfc]
Writes tools/bench/results/dp_training.md (and .json).

Every figure is per the named README table; per-GPU batch is the micro-batch
the benchmark ran; BERT pretraining accumulates gradients, so the global batch
is micro x accumulation steps x GPUs as the README's table gives it.
"""
import argparse, json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tools", "bench", "data")
RES = os.path.join(ROOT, "tools", "bench", "results")

RN50_URL = ("https://github.com/NVIDIA/DeepLearningExamples/blob/master/PyTorch/"
            "Classification/ConvNets/resnet50v1.5/README.md")
RN50_CFG = ("https://github.com/NVIDIA/DeepLearningExamples/blob/master/PyTorch/"
            "Classification/ConvNets/configs.yml")
BERT_URL = ("https://github.com/NVIDIA/DeepLearningExamples/blob/master/PyTorch/"
            "LanguageModeling/BERT/README.md")

A100_80 = ("a100-sxm4-80gb", "dgx-a100")
A100_40 = ("a100-sxm4-40gb", os.path.join(DATA, "dgx-a100-40gb.yaml"))
V100_32 = ("v100-sxm2-32gb", os.path.join(DATA, "dgx1-v100-32gb.yaml"))

# (name, model, seq, hw pair, table, gpus, precision, dtype, micro, global, optimizer, published, source, note)
RN = "ResNet-50 v1.5 (PyTorch 21.03, img/s = train.total_ips, incl. data loading)"
BP = "BERT-large pretraining phase 1 (PyTorch 20.06, LAMB, grad accumulation)"
BS = "BERT-large SQuAD v1.1 fine-tuning (PyTorch 20.06, BertAdam)"
FIGURES = []
for hw, table, rows in [
    (A100_80, "DGX A100 (8x A100 80GB)", [("AMP", "fp16", 256, 2470, 16621), ("TF32", "tf32", 256, 938, 7248)]),
    (V100_32, "DGX-1 32GB (8x V100 32GB)", [("AMP", "fp16", 256, 1156, 8056), ("FP32", "fp32", 112, 356, 2766)]),
]:
    for prec, dtype, mb, p1, p8 in rows:
        for gpus, pub in [(1, p1), (8, p8)]:
            FIGURES.append(dict(group=RN, model="resnet50", seq=None, hw=hw, table=table, gpus=gpus,
                                precision=prec, dtype=dtype, micro=mb, global_=mb * gpus,
                                optimizer="momentum", published=pub, source=RN50_URL + " (batch: " + RN50_CFG + ")"))
# BERT pretraining, seq 128: "Batch size / GPU" column is micro x accumulation.
for hw, table, rows in [
    (A100_40, "DGX A100 (8x A100 40GB)", [("AMP", "fp16", 64, 415, 3231), ("TF32", "tf32", 54, 234, 1777)]),
    (V100_32, "DGX-1 32G (8x V100 32G)", [("AMP", "fp16", 16, 158, 1203), ("FP32", "fp32", 8, 40, 317)]),
]:
    for prec, dtype, mb, p1, p8 in rows:
        for gpus, pub in [(1, p1), (8, p8)]:
            FIGURES.append(dict(group=BP, model="bert_large_128", seq=128, hw=hw, table=table, gpus=gpus,
                                precision=prec, dtype=dtype, micro=mb, global_=65536 if dtype == "fp16" else
                                (65232 if dtype == "tf32" else 65536),
                                optimizer="adam", published=pub, source=BERT_URL))
for hw, table, rows in [
    (A100_40, "DGX A100 (8x A100 40GB)", [("AMP", "fp16", 32, 116, 861), ("TF32", "tf32", 16, 44, 324)]),
    (V100_32, "DGX-1 32G (8x V100 32G)", [("AMP", "fp16", 10, 49, 351), ("FP32", "fp32", 8, 12, 67)]),
]:
    for prec, dtype, mb, p1, p8 in rows:
        for gpus, pub in [(1, p1), (8, p8)]:
            FIGURES.append(dict(group=BS, model="bert_large_384", seq=384, hw=hw, table=table, gpus=gpus,
                                precision=prec, dtype=dtype, micro=mb, global_=mb * gpus,
                                optimizer="adam", published=pub, source=BERT_URL))


def model_path(perfc, name, tmp):
    if name == "resnet50":
        return os.path.join(ROOT, "tests", "data", "zoo", "resnet50.onnx")
    seq = int(name.rsplit("_", 1)[1])
    out = os.path.join(tmp, name + ".onnx")
    if not os.path.exists(out):
        subprocess.run([perfc, "zoo", "bert", "--layers", "24", "--hidden", "1024", "--heads", "16",
                        "--seq", str(seq), "--vocab", "30522", "--dropout", "0.1", "-o", out],
                       check=True, capture_output=True)
    return out


def predict(perfc, f, path):
    hw = f["hw"][0] if f["gpus"] == 1 else f["hw"][1]
    cmd = [perfc, path, "--hw", hw, "--train", "--dp", str(f["gpus"]), "--micro-batch", str(f["micro"]),
           "--global-batch", str(f["global_"]), "--dtype", f["dtype"], "--optimizer", f["optimizer"],
           "--format", "json"]
    # PyTorch 21.03 runs ResNet-50 eagerly: cuDNN conv, cuDNN batch norm,
    # in-place ReLU and the residual add are separate kernels (DLE's
    # image_classification/resnet.py; no torch.jit or fused BN-ReLU as
    # MXNet's NHWC kernels have). BERT's hot paths are hand-fused (apex
    # FusedLayerNorm, jit bias-GELU), so it keeps perfc's fusion.
    if f["model"] == "resnet50":
        cmd.append("--no-fusion")
    # the zoo BERT is generated at its sequence length (no seq symbol to bind)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, cmd, r.stderr.strip()
    return json.loads(r.stdout), cmd, ""


DIAGNOSIS = """
## Diagnosis (perfc at commit of this run; numbers from `--format json` and an
## inference `--compute-type fp16 --storage-type fp16` run at the same batch)

Compute-bound FP32 on V100 is right (ResNet -6%/-3%, BERT pretraining +3%/+4%,
SQuAD 1 GPU +7%); everything memory- or overhead-sensitive is too fast:

1. **ResNet-50 AMP/TF32: training BatchNorm is folded into the conv.**
   `passes/Fusion.cpp` `canJoin` lets BatchNormalization join a Conv kernel,
   and training fuses as inference does, so the 53 BN (and 49 ReLU, 16 Add)
   nodes cost 0 in the A100 inference run at batch 256 (all 15.3 ms are
   Conv/MaxPool) and the same 15.3 ms is the training forward. Training BN
   computes batch statistics: forward reads the conv output for the
   statistics and again to normalise (+ write), backward reads x and dy for
   the two reductions and again to write dx: about 8 passes over the BN
   outputs, which are 5.7 GB (fp16, batch 256) -> ~46 GB -> ~27 ms at
   1.69 TB/s (0.83 x 2.039), about half of the 54 ms gap between the
   predicted 50 ms step and the published 104 ms (256 / 2470 img/s). On V100
   AMP the same 46 GB at ~0.75 TB/s is ~60 ms of a 96 ms gap. Proposed: under
   `--train`, keep BatchNormalization (training_mode semantics) out of
   conv fusion: a normalization kernel of 3 passes forward and 5 backward
   (ReLU/Add may fuse into it), instead of a free epilogue.
2. **Conv efficiency 0.6 of tensor peak** (`a100-sxm4-80gb.yaml`
   `efficiency.conv.compute`) gives 169 TFLOPS on the compute-bound convs
   at batch 256; the remaining ~27 ms of the A100 AMP gap means the convs
   (fprop + dgrad + wgrad) run nearer 0.35-0.4 in PyTorch 21.03/cuDNN NHWC.
   TF32 is worse (+176%): 0.6 of 156 TFLOPS is not reached by TF32 convs,
   and BN traffic doubles in fp32. The Backward ratio (2x forward products)
   is right in FLOPs; wgrad/dgrad kernels are less efficient than fprop.
   Proposed: a conv efficiency curve by size as for GEMM, measured with
   cuDNN (fprop, dgrad, wgrad) rather than the flat 0.6, or a backward
   efficiency factor for Conv.
3. **No input pipeline.** Published 8-GPU scaling is 6.72x (A100 AMP),
   6.96x (V100 AMP) against 7.7x for TF32/FP32: the AMP runs are limited by
   the host (img/s are `train.total_ips`, which include waiting for data;
   DALI-CPU/PyTorch loader, 16 workers on DGX A100). perfc predicts 7.98x
   (exposed all-reduce 0.14 ms). Proposed: an optional host input rate per
   node (samples/s) in the cluster YAML or a `--input-rate` cap.
4. **BERT-large AMP +22% to +57%.** GEMMs take 66% of the forward at 208
   TFLOPS (0.67 of 312) from the square cuBLASLt table; PyTorch 20.06 runs
   BERT with unfused softmax/dropout/GELU/bias kernels and AMP casts that
   the zoo graph does not have, and FP32 (compute-bound, no casts) is within
   7%. The zoo model also lacks the MLM/NSP heads of pretraining (about +10%
   FLOPs at seq 128 with a 30522-word decoder over all positions) and the QA
   head of SQuAD (negligible). LAMB/Adam step cost is amortised over the
   1024 accumulated micro-batches, so optimizer cost is not the cause.
   Proposed: an MLM head option in `perfc zoo bert`; GEMM efficiency for
   training shapes (m = tokens, n,k = 1024/4096) measured rather than taken
   from square sizes.
5. **8-GPU V100 figures** use a DGX-1 approximated by one nvlink2 fabric (no
   DGX-1/DGX-2 cluster is bundled); the published SQuAD FP32 8-GPU figure
   (67 seq/s, 5.58x weak scaling against 7.16x for AMP) looks like an
   outlier in the source.
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfc", default=os.path.join(ROOT, "build", "tools", "perfc"))
    ap.add_argument("--tol", type=float, default=15.0)
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in FIGURES:
            path = model_path(a.perfc, f["model"], tmp)
            d, cmd, err = predict(a.perfc, f, path)
            row = {k: v for k, v in f.items() if k != "hw"}
            row["hw"] = os.path.relpath(f["hw"][1], ROOT) if f["gpus"] > 1 and os.sep in f["hw"][1] else \
                (f["hw"][0] if f["gpus"] == 1 else f["hw"][1])
            row["command"] = " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else
                                      ("MODEL.onnx" if c.startswith(tmp) else c) for c in cmd)
            if d is None:
                row["error"] = err
            else:
                st = d["step"]
                s0 = d["stages"][0]
                row.update(predicted=st["samples_per_s"], step_s=st["time_s"], forward_s=s0["forward_s"],
                           backward_s=s0["backward_s"], optimizer_s=st["optimizer_s"],
                           dp_comm_s=st["dp_comm_s"], dp_exposed_s=st["dp_exposed_s"],
                           micro_batches=round(f["global_"] / (f["micro"] * f["gpus"])),
                           fits=d["memory"].get("fits"),
                           err_pct=100.0 * (st["samples_per_s"] - f["published"]) / f["published"])
            rows.append(row)
    ok = [r for r in rows if "err_pct" in r]
    within = [r for r in ok if abs(r["err_pct"]) <= a.tol]
    lines = ["# Data-parallel training throughput against published figures (issue 4)", "",
             "Generated by `tools/bench/dp_training.py` with `build/tools/perfc`. Published: NVIDIA",
             "DeepLearningExamples READMEs (PyTorch). Predicted: `step.samples_per_s`. Error = predicted/published - 1.",
             "One GPU uses the device; eight GPUs the bundled `dgx-a100` (A100 80GB) or the cluster YAMLs in",
             "`tools/bench/data/` (DGX A100 40GB; DGX-1 V100 32GB, whose NVLink cube-mesh is approximated by",
             "one nvlink2 fabric: no DGX-1/DGX-2 cluster is bundled). BERT-large is `perfc zoo bert` (24 x 1024,",
             "16 heads, vocab 30522, dropout 0.1; pooler, no MLM/NSP or QA head). ResNet uses `--optimizer momentum`, BERT",
             "`--optimizer adam` (LAMB / BertAdam cost like Adam).", "",
             "**%d of %d within %.0f%%.**" % (len(within), len(ok), a.tol), "",
             "| workload | system | GPUs | precision | batch/GPU (micro x accum) | published | predicted | error | fwd ms | bwd ms | opt ms | exposed DP ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        wl = r["group"].split(" (")[0]
        acc = r["global_"] // (r["micro"] * r["gpus"])
        bs = "%d" % r["micro"] + (" x %d" % acc if acc > 1 else "")
        if "err_pct" not in r:
            lines.append("| %s | %s | %d | %s | %s | %g | error | %s | | | | |" % (wl, r["table"], r["gpus"], r["precision"], bs, r["published"], r["error"][:80]))
            continue
        lines.append("| %s | %s | %d | %s | %s | %g | %.0f | %+.1f%% | %.1f | %.1f | %.2f | %.2f |" % (
            wl, r["table"], r["gpus"], r["precision"], bs, r["published"], r["predicted"], r["err_pct"],
            1e3 * r["forward_s"], 1e3 * r["backward_s"], 1e3 * r["optimizer_s"], 1e3 * r["dp_exposed_s"]))
    lines += ["", "Sources:", ""]
    for g in [RN, BP, BS]:
        src = next(r["source"] for r in rows if r["group"] == g)
        lines.append("- %s: %s" % (g, src))
    lines.append(DIAGNOSIS)
    os.makedirs(RES, exist_ok=True)
    with open(os.path.join(RES, "dp_training.md"), "w") as fh:
        fh.write("\n".join(lines))
    with open(os.path.join(RES, "dp_training.json"), "w") as fh:
        json.dump(rows, fh, indent=1)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
