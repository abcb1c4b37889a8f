//===- OpClass.h - What kind of work dominates an op ------------*- C++ -*-===//
//
// A coarse classification of ops by the work that dominates them. Cost
// models pick an efficiency by it, and hardware descriptions key their
// efficiencies and `supports` lists by it, so it lives below both.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_IR_OPCLASS_H
#define PERFC_IR_OPCLASS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace perfc {

/// What kind of work dominates an op. Cost models use it to pick an
/// efficiency (a GEMM reaches a larger share of peak than a softmax).
enum class OpClass : uint8_t {
  Gemm,          ///< MatMul, Gemm, Einsum, attention products.
  Conv,          ///< Conv, ConvTranspose.
  Elementwise,   ///< Unary/binary maps, activations, casts.
  Reduction,     ///< Reduce*, pooling, softmax, arg-max.
  Normalization, ///< BatchNorm, LayerNorm, InstanceNorm, ...
  DataMovement,  ///< Reshape, Transpose, Concat, Gather, Pad, ...
  Recurrent,     ///< RNN, LSTM, GRU.
  Control,       ///< If, Loop, Scan (cost of their bodies).
  Other,
};

llvm::StringRef name(OpClass C);

} // namespace perfc

#endif // PERFC_IR_OPCLASS_H
