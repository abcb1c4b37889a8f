#!/usr/bin/env bash
# batch_test.sh PERFC ZOO WORKDIR
# perfc batch over a mixed JSON-lines file: results in input order, each
# prediction byte-equal to `perfc MODEL ... --format json` compacted, each
# bad line an {"line":N,"error":...} object, exit status 1 (a line failed);
# then the same file with one and with three threads gives the same bytes.
set -eu
perfc="$1"
zoo="$2"
work="$3"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$work"
# A mixture of experts (perfc zoo --experts) for the --ep line.
"$perfc" zoo llama --layers 2 --hidden 256 --heads 4 --ffn 512 --experts 8 \
  --top-k 2 --seq 64 --vocab 1000 -o "$work/moe.onnx" >/dev/null
cat >"$work/jobs.jsonl" <<JOBS
{"model": "$zoo/resnet50.onnx", "hw": "a100-sxm4-80gb", "batch": 8}
# a comment: no output
not json

{"model": "$zoo/mobilenet_v2.onnx", "hw": "jetson-agx-orin-gpu", "compute_type": "fp16"}
{"model": "$zoo/gpt2_small.onnx", "hw": "a100-sxm4-80gb", "dims": {"seq": 128}, "train": {"recompute": "full", "micro_batch": 2}}
{"model": "$zoo/resnet18.onnx"}
{"model": "$zoo/resnet18.onnx", "hw": "no-such-device"}
{"model": "$zoo/resnet18.onnx", "colour": "blue"}
{"model": "$zoo/resnet18.onnx", "hw": "t4", "launch_overhead_s": 1e-6, "train": {"input_rate": 10, "optimizer": "momentum"}}
{"model": "$zoo/gpt2_small.onnx", "hw": "a100-sxm4-80gb", "dims": {"seq": 128}, "train": {"flash_attention": true, "dtype": "bf16"}}
{"model": "$zoo/gpt2_small.onnx", "hw": "a100-sxm4-80gb", "dims": {"seq": 128}, "train": {"flash_attention": "yes"}}
{"model": "$zoo/resnet50.onnx", "hw": "t4", "compute_type": "int8", "storage_type": "int8", "conv_layout": "nhwc"}
{"model": "$zoo/gpt2_small.onnx", "hw": "dgx-a100", "dims": {"seq": 128}, "tp": 4}
{"model": "$zoo/gpt2_small.onnx", "hw": "dgx-a100", "dims": {"seq": 128}, "tp": 0}
{"model": "$zoo/gpt2_small.onnx", "hw": "a100-sxm4-80gb", "dims": {"seq": 512}, "flash_attention": true}
{"model": "$zoo/gpt2_small.onnx", "hw": "dgx-a100", "dims": {"seq": 128}, "train": {"cp": 2, "dp": 4, "flash_attention": true, "global_batch": 8}}
{"model": "$zoo/gpt2_small.onnx", "hw": "dgx-a100", "dims": {"seq": 128}, "train": {"cp": 4294967296}}
{"model": "$zoo/gpt2_small.onnx", "hw": "dgx-a100", "dims": {"seq": 128}, "train": {"cp": 2, "cp_comm": "a2a", "dp": 4, "global_batch": 8}}
{"model": "$zoo/resnet18.onnx", "hw": "t4", "memory_reserve_bytes": 4294967296, "train": {"dtype": "fp16"}}
{"model": "$zoo/gpt2_small.onnx", "hw": "dgx-a100", "dims": {"seq": 128}, "train": {"dp": 8, "zero": 1, "overlap_param_gather": true, "global_batch": 8}}
{"model": "$work/moe.onnx", "hw": "dgx-h100", "train": {"dp": 8, "ep": 4, "zero": 1, "global_batch": 8}}
{"model": "$work/moe.onnx", "hw": "dgx-h100", "batch": 8, "ep": 4}
{"model": "$work/moe.onnx", "hw": "dgx-h100", "train": {"dp": 8, "ep": 4, "dtype": "bf16", "overlap_moe_expert_parallel_comm": true, "global_batch": 16}}
{"model": "$work/moe.onnx", "hw": "dgx-h100", "batch": 8, "serve_plan": true, "serve_plan_devices": 4}
{"model": "$work/moe.onnx", "hw": "dgx-h100", "train": {"dp": 8, "ep": 4, "dtype": "bf16", "recompute_modules": ["moe_act", "layernorm"], "global_batch": 16}}
{"model": "$work/moe.onnx", "hw": "dgx-h100", "train": {"recompute_modules": "moe_act,mla_up_proj"}}
{"model": "$work/moe.onnx", "hw": "dgx-h100", "batch": 8, "serve_plan": true, "serve_plan_objective": "throughput", "serve_plan_max_latency_s": 0.01}
{"model": "$zoo/gpt2_small.onnx", "hw": "dgx-a100", "dims": {"seq": 128}, "train": {"pp": 2, "dp": 4, "dtype": "bf16", "global_batch": 32, "recompute_method": "block", "recompute_num_layers": 2}}
{"model": "$zoo/gpt2_small.onnx", "hw": "dgx-a100", "dims": {"seq": 128}, "train": {"recompute_num_layers": 0}}
{"model": "$zoo/gpt2_small.onnx", "hw": "dgx-a100", "dims": {"seq": 128}, "tp": 2, "pp": 2}
{"model": "$zoo/gpt2_small.onnx", "hw": "dgx-a100", "dims": {"seq": 128}, "pp": 0}
{"model": "$zoo/resnet18.onnx", "hw": "t4", "max_batch": true, "max_latency_s": 0.05}
{"model": "$zoo/resnet18.onnx", "hw": "t4", "max_batch": 1}
JOBS
fail() { echo "FAIL: $*"; exit 1; }
rc=0
"$perfc" batch "$work/jobs.jsonl" --jobs 3 >"$work/out3.jsonl" || rc=$?
[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1 (some lines fail)"
"$perfc" batch "$work/jobs.jsonl" --jobs 1 >"$work/out1.jsonl" || true
cmp "$work/out1.jsonl" "$work/out3.jsonl" || fail "--jobs 1 and 3 differ"
[ "$(wc -l <"$work/out3.jsonl")" -eq 32 ] || fail "expected 32 result lines"
expect() { # LINE_OF_OUTPUT CLI_ARGS...
  n="$1"; shift
  "$perfc" "$@" --format json | "$here/compact_json.sh" >"$work/cli.json"
  sed -n "${n}p" "$work/out3.jsonl" | cmp - "$work/cli.json" ||
    fail "result $n differs from: perfc $*"
}
expect 1 "$zoo/resnet50.onnx" --hw a100-sxm4-80gb --batch 8
expect 3 "$zoo/mobilenet_v2.onnx" --hw jetson-agx-orin-gpu --compute-type fp16
expect 4 "$zoo/gpt2_small.onnx" --hw a100-sxm4-80gb --dim seq=128 --train \
  --recompute full --micro-batch 2
expect 5 "$zoo/resnet18.onnx"
expect 8 "$zoo/resnet18.onnx" --hw t4 --launch-overhead "1 us" --train \
  --input-rate 10 --optimizer momentum
expect 9 "$zoo/gpt2_small.onnx" --hw a100-sxm4-80gb --dim seq=128 --train \
  --flash-attention --dtype bf16
expect 11 "$zoo/resnet50.onnx" --hw t4 --compute-type int8 --storage-type int8 \
  --conv-layout nhwc
expect 12 "$zoo/gpt2_small.onnx" --hw dgx-a100 --dim seq=128 --tp 4
expect 14 "$zoo/gpt2_small.onnx" --hw a100-sxm4-80gb --dim seq=512 \
  --flash-attention
expect 15 "$zoo/gpt2_small.onnx" --hw dgx-a100 --dim seq=128 --train --cp 2 \
  --dp 4 --flash-attention --global-batch 8
expect 17 "$zoo/gpt2_small.onnx" --hw dgx-a100 --dim seq=128 --train --cp 2 \
  --cp-comm a2a --dp 4 --global-batch 8
expect 18 "$zoo/resnet18.onnx" --hw t4 --memory-reserve "4 GiB" --train \
  --dtype fp16
expect 19 "$zoo/gpt2_small.onnx" --hw dgx-a100 --dim seq=128 --train --dp 8 \
  --zero 1 --overlap-param-gather --global-batch 8
expect 20 "$work/moe.onnx" --hw dgx-h100 --train --dp 8 --ep 4 --zero 1 \
  --global-batch 8
expect 21 "$work/moe.onnx" --hw dgx-h100 --batch 8 --ep 4
expect 22 "$work/moe.onnx" --hw dgx-h100 --train --dp 8 --ep 4 --dtype bf16 \
  --overlap-moe-expert-parallel-comm --global-batch 16
expect 23 "$work/moe.onnx" --hw dgx-h100 --batch 8 --plan --devices 4
expect 24 "$work/moe.onnx" --hw dgx-h100 --train --dp 8 --ep 4 --dtype bf16 \
  --recompute-modules moe_act,layernorm --global-batch 16
expect 26 "$work/moe.onnx" --hw dgx-h100 --batch 8 --plan --objective throughput \
  --max-latency "10 ms"
expect 27 "$zoo/gpt2_small.onnx" --dim seq=128 --hw dgx-a100 --train --pp 2 \
  --dp 4 --dtype bf16 --global-batch 32 --recompute-method block \
  --recompute-num-layers 2
expect 29 "$zoo/gpt2_small.onnx" --dim seq=128 --hw dgx-a100 --tp 2 --pp 2
expect 31 "$zoo/resnet18.onnx" --hw t4 --max-batch --max-latency "50 ms"
sed -n 32p "$work/out3.jsonl" |
  grep -q "^{\"line\":34,\"error\":\"'max_batch' must be true or false" ||
  fail "line 34 should say max_batch takes true or false"
sed -n 30p "$work/out3.jsonl" |
  grep -q "^{\"line\":32,\"error\":\"'pp' must be an integer >= 1 (the pipeline stages" ||
  fail "line 32 should say pp takes an integer >= 1"
sed -n 28p "$work/out3.jsonl" |
  grep -q "^{\"line\":30,\"error\":\"'train.recompute_num_layers' must be a positive integer" ||
  fail "line 30 should say recompute_num_layers takes a positive integer"
sed -n 25p "$work/out3.jsonl" |
  grep -q "^{\"line\":27,\"error\":\".*--recompute-modules mla_up_proj: the model has no latent attention" ||
  fail "line 27 should say the model has no latent attention"
sed -n 16p "$work/out3.jsonl" |
  grep -q "^{\"line\":18,\"error\":\"'train.cp' must be an integer from 1 to 4294967295" ||
  fail "line 18 should say cp takes an integer from 1 to 2^32 - 1"
sed -n 13p "$work/out3.jsonl" | grep -q "^{\"line\":15,\"error\":\"'tp' must be an integer >= 1" ||
  fail "line 15 should say tp takes an integer >= 1"
sed -n 10p "$work/out3.jsonl" |
  grep -q "^{\"line\":12,\"error\":\"'train.flash_attention' must be true or false" ||
  fail "line 12 should say flash_attention takes true or false"
sed -n 2p "$work/out3.jsonl" | grep -q '^{"line":3,"error":"not JSON' ||
  fail "line 3 should be a JSON error"
sed -n 6p "$work/out3.jsonl" | grep -q '^{"line":8,"error":".*no-such-device' ||
  fail "line 8 should name the unknown device"
sed -n 7p "$work/out3.jsonl" | grep -q "^{\"line\":9,\"error\":\"unknown key 'colour'" ||
  fail "line 9 should name the unknown key"
echo "ok"
