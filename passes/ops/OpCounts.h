//===- OpCounts.h - Sizes and counts shared by the op families --*- C++ -*-===//
//
// The op families (passes/ops/*.cpp) read sizes the same way and share a
// few per-element counts: a fused op (ContribOps.cpp) must count what the
// ops it replaces count, so those figures live here once.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_OPS_OPCOUNTS_H
#define PERFC_PASSES_OPS_OPCOUNTS_H

#include "ir/Graph.h"

namespace perfc {

/// Elements of V; 0 when V is absent or its size unknown.
inline double elems(const ir::Value *V) {
  return V ? static_cast<double>(V->numElements()) : 0;
}

/// Bytes of V at its stored type; 0 when absent or unknown.
inline double bytesOf(const ir::Value *V) {
  return V ? static_cast<double>(V->bytes()) : 0;
}

/// Softmax per element: max, sub, exp, add, div.
constexpr unsigned SoftmaxFlops = 8;
/// LayerNormalization's statistics and normalisation per element, before
/// its scale (1) and bias (1).
constexpr unsigned LayerNormFlops = 6;
/// Requantising one output element of a quantised op: a multiply by the
/// combined scale, an add of the zero point and a saturating convert.
constexpr unsigned RequantizeFlops = 3;

} // namespace perfc

#endif // PERFC_PASSES_OPS_OPCOUNTS_H
