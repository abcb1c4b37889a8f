//===- WeightStripper.h - ONNX wire bytes without the weights --*- C++ -*-===//
//
// perfc never needs the values of weights, only their shapes. Parsing a
// ModelProto with protobuf copies every byte of every initializer, so a
// 500 MB model would cost 500 MB of memory and the time to copy it. Instead
// this filter walks the protobuf wire format of the (memory-mapped) file and
// writes a copy of the model in which every large tensor keeps its name,
// type and dims but loses its data: it is marked as stored externally, so
// ONNX shape inference treats it like any external-data tensor. Files are
// read with pread through a small window and skipped bytes are never read,
// so memory stays at the size of the graph, not of the weights.
//
// Small integer tensors (shape constants, axes, pads: up to
// KeptIntElements elements) and tiny tensors of any type (up to
// KeptAnyElements) keep their data: shape inference and the op formulas
// read them.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_FRONTEND_WEIGHTSTRIPPER_H
#define PERFC_FRONTEND_WEIGHTSTRIPPER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace perfc::frontend {

struct StripLimits {
  uint64_t KeptIntElements = 4096;
  uint64_t KeptAnyElements = 16;
  /// Nodes over all graphs, nested ones included; more is a resource error.
  uint64_t MaxNodes = 2'000'000;
  /// Nesting of subgraphs (If/Loop/Scan bodies).
  unsigned MaxDepth = 32;
};

struct StrippedModel {
  std::string Bytes;         ///< A serialized ModelProto without weights.
  uint64_t DroppedBytes = 0; ///< Tensor data left out.
  uint64_t Nodes = 0;        ///< Nodes seen, nested graphs included.
};

/// Filters a serialized ModelProto. Errors (truncated or malformed wire
/// data, too many nodes) are one line naming the byte offset; the caller
/// adds the file name.
llvm::Expected<StrippedModel> stripWeights(llvm::StringRef Wire,
                                           const StripLimits &Limits = {});

/// The same, reading an open file of Size bytes.
llvm::Expected<StrippedModel>
stripWeightsFromFile(int FD, uint64_t Size, const StripLimits &Limits = {});

} // namespace perfc::frontend

#endif // PERFC_FRONTEND_WEIGHTSTRIPPER_H
