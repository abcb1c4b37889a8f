#!/usr/bin/env bash
# Builds (if needed) and runs one libFuzzer target.
#
#   bash tools/fuzz/run.sh TARGET SECONDS [LIBFUZZER_ARGS...]
#
# TARGET is fuzz_onnx, fuzz_hw_yaml, fuzz_cli or fuzz_plan_json. The build
# goes to build-fuzz/ (clang-14, PERFC_FUZZ=ON: ASan + UBSan + coverage,
# with assertions).
# Seeds are made afresh in build-fuzz/seeds/TARGET from the repository's
# models, hardware files and plans; what the fuzzer learns accumulates in
# build-fuzz/corpus/TARGET across runs, and crashes are written to
# build-fuzz/artifacts/TARGET/. Prints the number of executions at the end;
# exits non-zero when the fuzzer found a problem.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
if [ $# -lt 2 ]; then
  echo "usage: $0 fuzz_onnx|fuzz_hw_yaml|fuzz_cli|fuzz_plan_json SECONDS [LIBFUZZER_ARGS...]" >&2
  exit 2
fi
target=$1
seconds=$2
shift 2
case "$target" in
fuzz_onnx | fuzz_hw_yaml | fuzz_cli | fuzz_plan_json) ;;
*)
  echo "run.sh: unknown target '$target'" >&2
  exit 2
  ;;
esac

build=$root/build-fuzz
# Build type Sanitize (-O1 -g1, assertions on: see the root CMakeLists.txt);
# a build-fuzz/ configured otherwise (RelWithDebInfo before 2026-12-05) is
# reconfigured.
if [ ! -f "$build/build.ninja" ] ||
  ! grep -q '^CMAKE_BUILD_TYPE:STRING=Sanitize$' "$build/CMakeCache.txt"; then
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    "${launcher[@]}" -DPERFC_FUZZ=ON -DPERFC_BUILD_TESTS=OFF >/dev/null
fi
ninja -C "$build" -j2 "$target" >"$build/build-$target.log" 2>&1 || {
  tail -n 40 "$build/build-$target.log" >&2
  echo "run.sh: the build failed (log: $build/build-$target.log)" >&2
  exit 1
}

seeds=$build/seeds/$target
corpus=$build/corpus/$target
artifacts=$build/artifacts/$target
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$artifacts" "$build/work"

case "$target" in
fuzz_onnx)
  cp tests/data/zoo/*.onnx "$seeds/"
  # ONNX Runtime's com.microsoft ops (made by the script next to them).
  cp tools/fuzz/seeds/onnx_contrib/*.onnx "$seeds/"
  # Mixtures of experts (perfc zoo --experts), for expert parallelism.
  cp tools/fuzz/seeds/onnx_moe/*.onnx "$seeds/"
  # Multi-head latent attention (perfc zoo --kv-lora-rank).
  cp tools/fuzz/seeds/onnx_mla/*.onnx "$seeds/"
  for f in tests/data/bad/*; do
    [ -f "$f" ] && cp "$f" "$seeds/bad_$(basename "$f")"
  done
  # Every 8th ONNX node test (about 120 single-op models).
  nodes=/usr/share/libonnx-testdata/data/node
  if [ -d "$nodes" ]; then
    i=0
    for d in "$nodes"/*/; do
      if [ $((i % 8)) -eq 0 ] && [ -f "$d/model.onnx" ]; then
        cp "$d/model.onnx" "$seeds/node_$(basename "$d").onnx"
      fi
      i=$((i + 1))
    done
  fi
  ;;
fuzz_hw_yaml)
  for f in hwdb/*/*.yaml tests/data/hwdb/*.yaml tests/data/bad/hw/*.yaml; do
    [ -f "$f" ] && cp "$f" "$seeds/$(echo "$f" | tr / _)"
  done
  ;;
fuzz_cli)
  printf -- '--dim\nseq=128\n--batch\n4' >"$seeds/dim_batch"
  printf -- '--dim=seq=1024\0--dim=batch=2' >"$seeds/dim_inline"
  printf -- '-batch=0x10\n-dim\nseq=4611686018427387904' >"$seeds/huge"
  printf -- '--dim\nseq\n--dim\n=3\n--batch\n-1' >"$seeds/bad"
  printf -- '--dim\nheads=8' >"$seeds/unknown_name"
  ;;
fuzz_plan_json)
  # Plans perfc wrote (`--train --plan --format json`) for zoo and generated
  # models: the "plan" object, the bare plan, a whole output without its
  # node list. tools/fuzz/seeds/plan_json/README says how they were made.
  cp tools/fuzz/seeds/plan_json/*.json "$seeds/"
  ;;
esac

log=$build/$target-$(date +%Y%m%d-%H%M%S).log
echo "run.sh: $target for ${seconds}s; seeds $(ls "$seeds" | wc -l), corpus $(ls "$corpus" | wc -l); log $log" >&2
# From an empty directory: hardware files may name other files by relative
# path, and those must not come from the source tree.
rc=0
(cd "$build/work" &&
  "$build/tools/fuzz/$target" "$corpus" "$seeds" \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 "$@") \
  >"$log" 2>&1 || rc=$?
runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -n 1 |
  grep -o '[0-9]*$' || true)
echo "run.sh: $target: ${runs:-?} executions in ${seconds}s (exit $rc)"
if [ "$rc" -ne 0 ]; then
  grep -E 'ERROR|SUMMARY|Test unit written|runtime error' "$log" | head -n 20 >&2
fi
exit "$rc"
