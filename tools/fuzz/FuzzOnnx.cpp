//===- FuzzOnnx.cpp - Fuzz the ONNX frontend and the work pass ------------===//
//
// Bytes are a serialized model: they go through the whole import (weight
// stripper, structure checks, binding, shape inference with folding,
// conversion to IR) and, when that succeeds, through the work pass and the
// latency passes (kernel planning, cache reuse over the schedule, roofline)
// on a small GPU with an L2 that has a bandwidth, and the prediction through
// the JSON and trace writers (names as the model has them). Errors
// are expected, but each must be one line naming the buffer (FuzzCheck.h);
// crashes, leaks, hangs and sanitizer reports are bugs.
//
//===----------------------------------------------------------------------===//
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "passes/Predict.h"
#include "tools/ReportWriters.h"
#include "tools/fuzz/FuzzCheck.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

/// A GPU whose 1 MB L2 has a bandwidth, so that small fuzzed tensors move
/// between the levels. Loaded once; never changed.
const perfc::hw::Device &fuzzDevice() {
  static const perfc::hw::Cluster C = [] {
    auto Loaded = perfc::hw::loadHardwareFromString(R"(device:
  name: fuzz-gpu
  kind: gpu
  cores: 8
  gemm_tile: [64, 64]
  compute:
    tensor: {fp16: 100 TFLOPS, int8: 200 TOPS}
    vector: {fp32: 10 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
    - {name: L2, capacity: 1 MB, bandwidth: 4000 GB/s}
  launch_overhead: 1 us
  efficiency:
    default: {compute: 0.5, memory: 0.8}
)",
                                                    "fuzz-gpu.yaml");
    if (!Loaded)
      std::abort(); // the harness's own description: a bug here
    return std::move(*Loaded);
  }();
  return C.primaryDevice();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Bytes(reinterpret_cast<const char *>(Data), Size);
  perfc::frontend::ImportOptions Options;
  // Both shape policies, picked by a property of the input that mutations
  // change often but that leaves seed files valid models.
  Options.AllowUnknownShapes = Size % 2 == 1;
  auto Model = perfc::frontend::importOnnxBytes(Bytes, "fuzz.onnx", Options);
  if (!Model) {
    perfc::fuzz::checkError(Model.takeError(), "fuzz.onnx", "importOnnxBytes");
    return 0;
  }
  perfc::Report R = perfc::predictWork(Model->Graph);
  (void)R;
  perfc::PredictOptions Timed;
  Timed.Device = &fuzzDevice();
  Timed.Explain = Size % 3 == 0;
  Timed.Fusion.Fuse = Size % 5 != 0;
  perfc::Report T = perfc::predict(Model->Graph, Timed);
  // The writers take names as the model has them: arbitrary bytes.
  perfc::writeReportJson(T, llvm::nulls());
  perfc::writeChromeTrace(T, llvm::nulls());
  return 0;
}
