#!/usr/bin/python3
"""Megatron-LM training step time and memory: perfc against measurements.

Korthikanti et al. 2022 (arXiv 2205.05198) measured GPT models of 22B to 1T
parameters on Selene (A100 80 GB, 8 per node, NVSwitch, 8 x HDR InfiniBand
per node) with full recomputation and with sequence parallelism + selective
recomputation (../shared/reference/megatron_korthikanti*.csv). For each run
this script generates the model with `perfc zoo gpt` (graph only), predicts
the step with one cluster description for every row (no per-row tuning):

    perfc MODEL --hw selene-a100-80gb --train --tp T --pp P --vp V
          --micro-batch B --global-batch G --recompute full|selective [--sp]
          --dtype bf16 --optimizer adam --partition even --format json

and prints predicted vs measured iteration time and per-GPU memory.
Targets (issue "training"): time within 3% on average and 6% at most;
memory within 10%. Calculon: 3.65% average, 8.87% max on the same runs.

    /usr/bin/python3 tools/bench/megatron.py [--perfc build/tools/perfc]
        [--reference ../shared/reference] [--hw selene-a100-80gb]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GIB = 1 << 30


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfc", default=os.path.join(ROOT, "build", "tools", "perfc"))
    ap.add_argument("--reference", default=os.path.join(ROOT, "..", "shared", "reference"))
    ap.add_argument("--hw", default="selene-a100-80gb")
    ap.add_argument("--work", default=None)
    ap.add_argument("--json", help="also write the table as JSON here")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="perfc-megatron-")
    os.makedirs(work, exist_ok=True)
    runs = rows(os.path.join(args.reference, "megatron_korthikanti.csv"))
    memory = {r["model"]: r for r in rows(os.path.join(args.reference,
                                                       "megatron_korthikanti_memory.csv"))}
    table = []
    for r in runs:
        model = os.path.join(work, f"gpt_{r['model']}.onnx")
        if not os.path.exists(model):
            subprocess.run([args.perfc, "zoo", "gpt", "--layers", r["layers"],
                            "--hidden", r["hidden"], "--heads", r["heads"],
                            "--seq", r["seq"], "--vocab", r["vocab"], "--dropout", "0.1",
                            "-o", model], check=True, stdout=subprocess.DEVNULL)
        selective = r["recompute"] == "seq_sel"
        cmd = [args.perfc, model, "--hw", args.hw, "--train",
               "--tp", r["tp"], "--pp", r["pp"], "--vp", r["interleave"],
               "--micro-batch", r["micro_batch"], "--global-batch", r["global_batch"],
               "--recompute", "selective" if selective else "full",
               "--dtype", "bf16", "--fp32-grads", "--optimizer", "adam",
               "--partition", "even",
               "--format", "json"]
        if selective:
            cmd.append("--sp")
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        rep = json.loads(out)
        step, mem = rep["step"], rep["memory"]
        measured = float(r["iter_time_s"])
        m = memory.get(r["model"])
        # The paper's weights+optimizer figure is that of a stage of
        # transformer layers (12 h^2 parameters per layer, 18 bytes each):
        # compare a middle stage, without the embedding or the output layer.
        mid = rep["stages"][len(rep["stages"]) // 2]
        wo = (mid["weights_bytes"] + mid["gradients_bytes"] + mid["optimizer_bytes"]) / GIB
        # Activations: the stage with the most (the first, under 1F1B).
        act = mem["activations_bytes"] / GIB
        act_none = None
        if not selective:
            # The same run without recomputation or sequence parallelism:
            # the paper's "activations_none".
            none = [c if c != "full" else "none" for c in cmd]
            rep_none = json.loads(subprocess.run(none, check=True, capture_output=True,
                                                 text=True).stdout)
            act_none = rep_none["memory"]["activations_bytes"] / GIB
        table.append({
            "model": r["model"], "recompute": r["recompute"],
            "tp": int(r["tp"]), "pp": int(r["pp"]), "vp": int(r["interleave"]),
            "gpus": int(r["gpus"]), "global_batch": int(r["global_batch"]),
            "measured_s": measured, "predicted_s": step["time_s"],
            "error": step["time_s"] / measured - 1,
            "compute_s": step["compute_s"], "exposed_comm_s": step["exposed_comm_s"],
            "bubble_s": step["bubble_s"], "tflops_per_device": step["tflops_per_device"],
            "weights_optimizer_gib": wo,
            "measured_weights_optimizer_gib": float(m["weights_optimizer_gib"]) if m else None,
            "activations_gib": act,
            "measured_activations_gib": (float(m["activations_seq_sel_gib"]) if selective
                                         else float(m["activations_none_gib"])) if m else None,
            "activations_none_gib": act_none,
        })
    print(f"{'model':<6} {'recompute':<9} {'tp':>3} {'pp':>3} {'vp':>3} {'measured':>9} "
          f"{'perfc':>8} {'error':>7} {'TFLOPS':>7} {'W+G+O GiB':>15} {'activations GiB':>18}")
    for t in table:
        wo = f"{t['weights_optimizer_gib']:.2f}/{t['measured_weights_optimizer_gib']:.2f}"
        if t["activations_none_gib"] is not None:
            act = f"{t['activations_none_gib']:.2f}/{t['measured_activations_gib']:.2f} (none)"
        else:
            act = f"{t['activations_gib']:.2f}/{t['measured_activations_gib']:.2f} (sel)"
        print(f"{t['model']:<6} {t['recompute']:<9} {t['tp']:>3} {t['pp']:>3} {t['vp']:>3} "
              f"{t['measured_s']:>8.2f}s {t['predicted_s']:>7.2f}s {100 * t['error']:>+6.1f}% "
              f"{t['tflops_per_device']:>7.1f} {wo:>15} {act:>15}")
    errors = [abs(t["error"]) for t in table]
    mean, worst = sum(errors) / len(errors), max(errors)
    print(f"time: mean |error| {100 * mean:.2f}%, max {100 * worst:.2f}% "
          f"(targets 3% / 6%; Calculon 3.65% / 8.87%)")
    mem_err = [abs(t["weights_optimizer_gib"] / t["measured_weights_optimizer_gib"] - 1)
               for t in table if t["measured_weights_optimizer_gib"]]
    act_err = [abs((t["activations_none_gib"] if t["activations_none_gib"] is not None
                    else t["activations_gib"]) / t["measured_activations_gib"] - 1)
               for t in table if t["measured_activations_gib"]]
    print(f"memory: weights+gradients+optimizer max |error| {100 * max(mem_err):.1f}%, "
          f"activations (none and seq_sel) max |error| {100 * max(act_err):.1f}% (target 10%)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)
    return 0 if mean <= 0.03 and worst <= 0.06 else 1


if __name__ == "__main__":
    sys.exit(main())
