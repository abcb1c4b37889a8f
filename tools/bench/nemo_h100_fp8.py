#!/usr/bin/env python3
"""FP8 training on H100 clusters: perfc --train --dtype fp8 against the
pre-training throughputs NVIDIA publishes for NeMo (24.09 performance
summary, DGX H100, FP8 with Transformer Engine).

Usage: /usr/bin/python3 tools/bench/nemo_h100_fp8.py [--perfc build/tools/perfc]
Writes tools/bench/results/nemo_h100_fp8.md (and .json).

Published: https://docs.nvidia.com/nemo-framework/user-guide/24.09/performance/performance_summary.html
("Pretraining", FP8): GPUs, global and micro-batch, sequence, TP, PP, CP, VP
and tokens/s per GPU. The rows of GPT-3, Llama 2 and Llama 3 (whose shapes
are public; the Nemotron rows' are not given there) are compared; Llama 3's
two run with context parallelism 2 (--cp).

perfc: `perfc zoo gpt|llama` at the models' published shapes, on the bundled
dgx-h100-superpod (32 DGX H100 nodes; tools/bench/data/dgx-h100-64-nodes.yaml
for 512 GPUs), with `--dtype fp8` (passes/Fp8Recipe.h), --flash-attention,
--zero 1 (Megatron's distributed optimizer), --sp and --tp-comm-overlap
where TP > 1 (NeMo's recipes overlap the tensor-parallel exchanges with
Transformer Engine's userbuffers), no recomputation; data parallelism is
GPUs / (TP x PP). Nothing is fitted.
"""
import argparse, json, os, subprocess, sys, tempfile

from recorded_command import recompute_label, stable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RES = os.path.join(ROOT, "tools", "bench", "results")
SOURCE = "https://docs.nvidia.com/nemo-framework/user-guide/24.09/performance/performance_summary.html"

# family, layers, hidden, heads, kv heads, ffn, vocab, dropout
SHAPES = {
    # NeMo's GPT-3 configs: learned positions, GELU, GPT-2's tokenizer
    # (50257 padded to a multiple of 128: 50304).
    "GPT3-5B": ("gpt", 24, 4096, 32, 32, 16384, 50304, 0.1),
    "GPT3-20B": ("gpt", 44, 6144, 48, 48, 24576, 50304, 0.1),
    "GPT3-175B": ("gpt", 96, 12288, 96, 96, 49152, 50304, 0.1),
    # Llama 2 (Touvron et al. 2023): RMSNorm, SwiGLU, rotary, vocab 32000;
    # 70B with 8 key/value heads.
    "LLAMA2-7B": ("llama", 32, 4096, 32, 32, 11008, 32000, 0.0),
    "LLAMA2-13B": ("llama", 40, 5120, 40, 40, 13824, 32000, 0.0),
    "LLAMA2-70B": ("llama", 80, 8192, 64, 8, 28672, 32000, 0.0),
    # Llama 3 (Meta, 2024): 8 key/value heads, vocab 128256.
    "LLAMA3-8B": ("llama", 32, 4096, 32, 8, 14336, 128256, 0.0),
    "LLAMA3-70B": ("llama", 80, 8192, 64, 8, 28672, 128256, 0.0),
}

# model, GPUs, global batch, micro-batch, sequence, TP, PP, CP, VP, tokens/s/GPU
ROWS = [
    ("GPT3-5B", 64, 2048, 4, 2048, 1, 1, 1, 1, 23406),
    ("GPT3-20B", 64, 256, 2, 2048, 2, 1, 1, 1, 5851),
    ("GPT3-175B", 128, 256, 1, 2048, 4, 8, 1, 6, 716),
    ("GPT3-175B", 512, 2048, 2, 2048, 4, 8, 1, 6, 825),
    ("LLAMA2-7B", 8, 128, 1, 4096, 1, 1, 1, 1, 16934),
    ("LLAMA2-13B", 16, 128, 1, 4096, 1, 4, 1, 10, 8715),
    ("LLAMA2-70B", 64, 128, 1, 4096, 4, 4, 1, 20, 1728),
    ("LLAMA3-8B", 8, 128, 1, 8192, 1, 1, 2, 1, 12273),
    ("LLAMA3-70B", 64, 128, 1, 8192, 4, 4, 2, 5, 1524),
]


def zoo(perfc, tmp, name, seq):
    fam, layers, hidden, heads, kv, ffn, vocab, dropout = SHAPES[name]
    path = os.path.join(tmp, "%s_%d.onnx" % (name, seq))
    if not os.path.exists(path):
        cmd = [perfc, "zoo", fam, "--layers", str(layers), "--hidden", str(hidden),
               "--heads", str(heads), "--ffn", str(ffn), "--seq", str(seq),
               "--vocab", str(vocab), "-o", path]
        if fam == "llama" and kv != heads:
            cmd += ["--kv-heads", str(kv)]
        if dropout:
            cmd += ["--dropout", str(dropout)]
        subprocess.run(cmd, check=True, capture_output=True)
    return path


def predict(perfc, model, gpus, gbs, mbs, tp, pp, cp, vp):
    hw = "dgx-h100-superpod" if gpus <= 256 else os.path.join(
        ROOT, "tools", "bench", "data", "dgx-h100-64-nodes.yaml")
    cmd = [perfc, model, "--hw", hw, "--train", "--dp", str(gpus // (tp * pp * cp)),
           "--tp", str(tp), "--pp", str(pp), "--vp", str(vp),
           "--micro-batch", str(mbs), "--global-batch", str(gbs),
           "--dtype", "fp8", "--flash-attention", "--zero", "1",
           "--ops", "0", "--format", "json"]
    if tp > 1:
        cmd += ["--sp", "--tp-comm-overlap"]
    if cp > 1:
        cmd += ["--cp", str(cp)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("perfc failed: %s\n%s" % (" ".join(cmd), r.stderr))
    return json.loads(r.stdout), cmd


def plan_rank(perfc, model, reserve):
    """Where `--plan --framework megatron` (one DGX H100, global batch 128)
    puts NeMo's Llama 3 8B configuration (dp 4, cp 2, micro-batch 1) with
    `--memory-reserve reserve`: its rank among the 20 best plans (None
    beyond), its step time, and the best plan's."""
    cmd = [perfc, model, "--hw", "dgx-h100", "--train", "--plan", "--framework",
           "megatron", "--flash-attention", "--dtype", "fp8", "--global-batch",
           "128", "--top", "20", "--ops", "0", "--format", "json",
           "--memory-reserve", reserve]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("perfc failed: %s\n%s" % (" ".join(cmd), r.stderr))
    plans = json.loads(r.stdout)["plans"]
    best = plans[0]
    for i, q in enumerate(plans):
        if (q["dp"], q["tp"], q["cp"], q["pp"], q["vp"], q["micro_batch"]) == (4, 1, 2, 1, 1, 1):
            return dict(reserve=reserve, rank=i + 1, step_s=q["step_time_s"],
                        best=best, cmd=cmd)
    return dict(reserve=reserve, rank=None, step_s=None, best=best, cmd=cmd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfc", default=os.path.join(ROOT, "build", "tools", "perfc"))
    args = ap.parse_args()
    rows, out = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, gpus, gbs, mbs, seq, tp, pp, cp, vp, pub in ROWS:
            model = zoo(args.perfc, tmp, name, seq)
            d, cmd = predict(args.perfc, model, gpus, gbs, mbs, tp, pp, cp, vp)
            s = d["step"]
            tok = s["samples_per_s"] * seq / gpus
            err = tok / pub - 1
            exposed_tp = s.get("tp_comm_s", 0)
            rows.append(dict(model=name, gpus=gpus, global_batch=gbs, micro_batch=mbs,
                             seq=seq, tp=tp, pp=pp, cp=cp, vp=vp,
                             published_tokens_per_s_per_gpu=pub,
                             predicted_tokens_per_s_per_gpu=tok, error=err,
                             step_s=s["time_s"], tflops_per_device=s["tflops_per_device"],
                             tp_comm_s=exposed_tp, cp_comm_s=s.get("cp_comm_s", 0),
                             cp_overlapped_s=s.get("cp_overlapped_s", 0),
                             bubble_s=s.get("bubble_s", 0),
                             peak_gib=d["memory"]["peak_bytes"] / 2**30,
                             command=" ".join(stable(c, tmp) for c in cmd)))
        llama3 = zoo(args.perfc, tmp, "LLAMA3-8B", 8192)
        ranks = [plan_rank(args.perfc, llama3, reserve) for reserve in ("0", "4 GiB")]
    mean = sum(abs(r["error"]) for r in rows) / len(rows)
    tp1 = [r for r in rows if r["tp"] == 1]
    tpn = [r for r in rows if r["tp"] > 1]
    cpn = [r for r in rows if r["cp"] > 1]
    out.append("# FP8 training on H100: perfc against NeMo's published throughput\n")
    out.append("Generated by `tools/bench/nemo_h100_fp8.py`. Published: NeMo 24.09 performance summary, "
               "pre-training in FP8 on DGX H100 (%s); the rows of the models "
               "whose shapes are public. Predicted: `perfc --train --dtype fp8 --flash-attention --zero 1` "
               "(`--sp --tp-comm-overlap` where TP > 1) on the bundled `dgx-h100-superpod` (a 64-node copy for 512 GPUs); "
               "tokens/s per GPU = `step.samples_per_s` x sequence / GPUs. Error = predicted / published - 1. "
               "An uncounted check of issue 4 on H100 (FP8 recipe, NVLS, NDR).\n" % SOURCE)
    out.append("| model | GPUs | GBS | MBS | seq | TP | PP | CP | VP | published tok/s/GPU | predicted | error | perfc TFLOPS/GPU | step s | exposed TP comm s | CP ring s (exposed / hidden) | bubble s | peak GiB |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        out.append("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.0f | %+.1f%% | %.0f | %.2f | %.2f | %s | %.2f | %.1f |" % (
            r["model"], r["gpus"], r["global_batch"], r["micro_batch"], r["seq"], r["tp"], r["pp"],
            r["cp"], r["vp"], r["published_tokens_per_s_per_gpu"], r["predicted_tokens_per_s_per_gpu"],
            100 * r["error"], r["tflops_per_device"], r["step_s"], r["tp_comm_s"],
            "%.3f / %.3f" % (r["cp_comm_s"], r["cp_overlapped_s"]) if r["cp"] > 1 else "-",
            r["bubble_s"], r["peak_gib"]))
    out.append("")
    out.append("- all %d rows: mean |error| %.1f%%, from %+.1f%% to %+.1f%%" % (
        len(rows), 100 * mean, 100 * min(r["error"] for r in rows), 100 * max(r["error"] for r in rows)))
    if tp1:
        out.append("- TP 1 (%d rows): %+.1f%% to %+.1f%%" % (
            len(tp1), 100 * min(r["error"] for r in tp1), 100 * max(r["error"] for r in tp1)))
    if tpn:
        out.append("- TP > 1 (%d rows): %+.1f%% to %+.1f%%" % (
            len(tpn), 100 * min(r["error"] for r in tpn), 100 * max(r["error"] for r in tpn)))
    if cpn:
        out.append("- CP 2 (%d rows): %s" % (
            len(cpn), ", ".join("%s %+.1f%%" % (r["model"], 100 * r["error"]) for r in cpn)))
    out.append("")
    out.append("Planner check (Llama 3 8B, 8192 tokens, one DGX H100, global batch 128, `--plan "
               "--framework megatron --flash-attention --dtype fp8`): where NeMo's configuration "
               "(dp 4, cp 2, micro-batch 1) ranks, without and with a runtime reserve "
               "(`--memory-reserve`: the CUDA context, NCCL's buffers and the allocator's "
               "fragmentation, which perfc's memory leaves out by default).\n")
    out.append("| --memory-reserve | NeMo's configuration: rank | its step s | best plan | best step s |")
    out.append("|---|---:|---:|---|---:|")
    for k in ranks:
        b = k["best"]
        out.append("| %s | %s | %s | dp %d tp %d cp %d pp %d vp %d mb %d, recompute %s, ZeRO %d | %.3f |" % (
            k["reserve"], k["rank"] if k["rank"] else "beyond 20",
            "%.3f" % k["step_s"] if k["step_s"] else "-", b["dp"], b["tp"], b["cp"], b["pp"],
            b["vp"], b["micro_batch"], recompute_label(b), b["zero"], b["step_time_s"]))
    out.append("")
    out.append(NOTES)
    text = "\n".join(out) + "\n"
    with open(os.path.join(RES, "nemo_h100_fp8.md"), "w") as f:
        f.write(text)
    with open(os.path.join(RES, "nemo_h100_fp8.json"), "w") as f:
        json.dump(rows, f, indent=1, sort_keys=True)
        f.write("\n")
    print(text)


NOTES = """What the comparison says:

- **Every row is predicted fast**, by 4-34% (mean 17.5%): perfc prices
  these steps at 810-980 model TFLOPS per GPU where NeMo reaches 710-890.
  The rows without tensor parallelism most (+22% to +34%), those with TP 4
  and a 12288-wide GPT-3 least.
- **Context parallelism (Llama 3, CP 2, 8192 tokens)**: Llama 3 70B
  (+13.7%) falls among the other TP 4 rows; Llama 3 8B (+34.0%) is the
  row furthest off. perfc hides the whole ring behind the attention on
  NVSwitch (16.8 MB of keys and values per step, 49 us forward against
  230 us of attention), so CP costs it only its smaller GEMMs: the same
  8B step without CP (dp 8) is 4.7% faster but needs 80.2 GiB per GPU,
  over the H100's 80, which is why NeMo's recipe takes CP 2. `--plan
  --framework megatron --flash-attention --dtype fp8` (global batch 128,
  one DGX H100) ranks NeMo's configuration (dp 4, cp 2, micro-batch 1,
  ZeRO 1; 7.97 s) eighth, 3.0% behind dp 8 with the norms recomputed
  beside the attention core (`--recompute-modules core_attn,layernorm`,
  7.74 s), which brings the step without CP from 80.2 to 76.2 GiB; before
  the planner chose modules (2026-12-07) it ranked fifth, 1.0% behind dp 4
  with pp 2 vp 2 (7.89 s, 77.0 GiB on its first stage). Both margins are
  within what perfc can tell apart. With 4 GiB kept for the runtime
  (`--memory-reserve`, the table above) NeMo's configuration ranks
  second, 0.2% behind dp 8 with full recomputation of 5 of its 32 blocks
  (`--recompute-method block --recompute-num-layers 5`, 7.96 s); it was
  the plan until the planner searched the block method (2026-12-07,
  later). NeMo's own long-sequence
  table (24.12, Llama 2 7B FP8) measures CP 2 at 32K tokens 3% faster
  than the best configuration without it, so CP itself is cheap there
  too. What grows from Llama 2 7B (+23%) to Llama 3 8B is
  attention (8192 tokens, about twice its share of the step) and the 128K
  vocabulary's output layer: perfc runs the BF16 attention kernels at
  0.62-0.64 of the peak forward and backward (the GEMM curve), where
  published H100 figures span 0.35 (FlashAttention-2) to 0.75
  (FlashAttention-3's forward; Shah et al. 2024, abstract). What
  Transformer Engine's cuDNN kernels reached in NeMo 24.09 is not
  published, so nothing is fitted. Long-sequence table:
  https://docs.nvidia.com/nemo-framework/user-guide/24.12/nemotoolkit/performance/performance_long_sequence.html
- In perfc's Llama 2 7B micro-batch 77% of the time is the blocks' FP8
  GEMMs (at 0.61-0.65 of the FP8 peak: the bundled H100's GEMM curve,
  cuBLASLt FP8 measurements of square GEMMs), 13% BF16 FlashAttention, 7%
  the FP8 casts, 3% RMSNorm. The gap is the FP8 GEMMs' sustained rate in
  training (clocks under a 700 W cap over a whole step against a GEMM
  benchmark's, Transformer Engine's scaling and amax work per GEMM), or
  attention below the GEMM curve; no source here separates them, so
  nothing is fitted.
- NeMo overlaps the tensor-parallel exchanges with the GEMMs (Transformer
  Engine's userbuffers); `--tp-comm-overlap` prices that (of each
  direction's exchanges in a block, the first of tp chunks and what
  outlasts the block's tensor-parallel GEMMs stay exposed). Without it the
  TP rows came out -10% to +7%, agreeing only because the exposed
  exchanges (17-20% of the GPT-3 175B and Llama 2 70B steps) made up for
  the fast GEMMs.
- Before the FP8 recipe (passes/Fp8Recipe.h: every tensor stored in FP8,
  attention and the output layer in FP8 too) the Llama 2 7B row was +52%;
  before the backward of horizontally fused projections was priced on the
  tensor cores, the Llama rows were 2.6x slow.
"""

if __name__ == "__main__":
    main()
