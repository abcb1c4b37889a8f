#!/usr/bin/env bash
# perfc set-up: installs what is missing (Debian 12, as root), configures and
# builds, then either runs perfc on a bundled model ("demo") or runs the whole
# test suite ("test"). Idempotent, and quiet when everything is present.
#
#   bash tools/setup.sh demo     # build, then predict resnet50 on an A100
#   bash tools/setup.sh test     # build, then run every test under CTest,
#                                # then again in an ASan+UBSan build
#
# Environment: BUILD_DIR (default: build), PERFC_SANITIZE=1 for an
# ASan+UBSan build (default build dir then: build-asan).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode="${1:-demo}"

packages=(
  cmake ninja-build g++ pkg-config
  llvm-14-dev zlib1g-dev libtinfo-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libz3-dev libfmt-dev doctest-dev
  libonnx-testdata libopenblas-dev
  pybind11-dev python3-dev python3-pytest
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: error: packages are missing and this is not root; run as root or install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# build DIR CMAKE_ARGS...: configures DIR once, then builds it.
build() {
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  fi
  if ! ninja -C "$dir" >"$dir/build.log" 2>&1; then
    tail -n 60 "$dir/build.log" >&2
    echo "setup: error: the build failed (full log: $dir/build.log)" >&2
    exit 1
  fi
}

asan_args=(-DPERFC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Sanitize)
if [ "${PERFC_SANITIZE:-0}" = 1 ]; then
  build_dir="${BUILD_DIR:-build-asan}"
  cmake_args=("${asan_args[@]}")
else
  build_dir="${BUILD_DIR:-build}"
  cmake_args=(-DCMAKE_BUILD_TYPE=Release)
fi
build "$build_dir" "${cmake_args[@]}"

case "$mode" in
demo)
  "$build_dir/tools/perfc" tests/data/zoo/resnet50.onnx --hw a100-sxm4-80gb
  ;;
test)
  ctest --test-dir "$build_dir" --output-on-failure -j2
  # Then the whole suite again under ASan + UBSan, in build-asan (unless
  # that is the suite just run).
  if [ "${PERFC_SANITIZE:-0}" != 1 ]; then
    echo "setup: the tests again under AddressSanitizer + UBSan (build-asan)" >&2
    build build-asan "${asan_args[@]}"
    ctest --test-dir build-asan --output-on-failure -j2
  fi
  ;;
*)
  echo "setup: unknown mode '$mode': use 'demo' or 'test'" >&2
  exit 2
  ;;
esac
