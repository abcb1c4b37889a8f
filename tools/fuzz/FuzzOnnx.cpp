//===- FuzzOnnx.cpp - Fuzz the ONNX frontend and the work pass ------------===//
//
// Bytes are a serialized model: they go through the whole import (weight
// stripper, structure checks, binding, shape inference with folding,
// conversion to IR) and, when that succeeds, through the work pass. Errors
// are expected, but each must be one line naming the buffer (FuzzCheck.h);
// crashes, leaks, hangs and sanitizer reports are bugs.
//
//===----------------------------------------------------------------------===//
#include "frontend/OnnxImport.h"
#include "passes/Predict.h"
#include "tools/fuzz/FuzzCheck.h"

#include <cstddef>
#include <cstdint>

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
  return 0;
}
