//===- OnnxImport.h - ONNX models into the perfc IR ------------*- C++ -*-===//
//
// The only part of perfc that knows ONNX. It reads a model without its
// weights (WeightStripper.h), checks its structure, binds the dimensions the
// user names, runs ONNX shape inference and builds an ir::Graph in which
// every tensor has a static shape.
//
// Dimension binding: `Batch` rewrites the first dimension of every graph
// input of rank >= 1 (symbolic or not) and binds the symbol it had; `Dims`
// binds named symbols. A symbolic first dimension left unbound is bound to
// 1 (the batch); any other unbound symbol is an error naming it.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_FRONTEND_ONNXIMPORT_H
#define PERFC_FRONTEND_ONNXIMPORT_H

#include "ir/Graph.h"
#include "ir/Warning.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace perfc::frontend {

struct ImportOptions {
  llvm::Optional<int64_t> Batch;
  std::vector<std::pair<std::string, int64_t>> Dims;
  uint64_t MaxNodes = 2'000'000;
  /// Shapes that depend on the values of inputs (a Reshape whose target
  /// shape is fed at run time) are an error by default; with this set they
  /// are a warning and their unknown dimensions count as 0.
  bool AllowUnknownShapes = false;
  /// Infer the shapes of common ops with perfc's own formulas and run ONNX's
  /// inference only for models they do not cover (CommonShapes.h). Off
  /// only to check the formulas against ONNX.
  bool CommonShapes = true;
};

struct ImportedModel {
  ir::Graph Graph;
  std::string Name;      ///< File stem, or the name given for bytes.
  std::string GraphName; ///< The graph's own name in the file.
  std::string Producer;  ///< producer_name and version.
  int64_t IrVersion = 0;
  int64_t Opset = 0; ///< Of the default domain.
  uint64_t FileBytes = 0;
  uint64_t WeightBytesSkipped = 0;
  /// Symbol bindings that took effect, in the order applied.
  std::vector<std::pair<std::string, int64_t>> Bindings;
  std::vector<Warning> Warnings;
};

/// Imports a model file. Errors are one line, "PATH: what; what to do",
/// naming the node where there is one.
llvm::Expected<ImportedModel> importOnnxFile(llvm::StringRef Path,
                                             const ImportOptions &Options);

/// Imports a serialized model held in memory; DisplayName stands in for the
/// path in messages.
llvm::Expected<ImportedModel> importOnnxBytes(llvm::StringRef Bytes,
                                              llvm::StringRef DisplayName,
                                              const ImportOptions &Options);

/// The newest opset of the default domain this build's ONNX knows.
int64_t maxSupportedOpset();
constexpr int64_t MinSupportedOpset = 1;

} // namespace perfc::frontend

#endif // PERFC_FRONTEND_ONNXIMPORT_H
