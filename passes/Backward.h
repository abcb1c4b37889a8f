//===- Backward.h - Backward work and the tensors saved for it --*- C++ -*-===//
//
// Training expansion of a forward graph, without building the backward
// graph: for each node, the work of its backward pass and which tensors
// the forward pass must keep for it.
//
// Backward work (per node whose inputs need gradients):
//  * GEMM-like ops (MatMul, Gemm, Conv, RNNs): one product of the forward's
//    size per input that needs a gradient (data gradient for activations,
//    weight gradient for parameters): 2x the forward for a layer on an
//    activation, 1x for the first layer of a network, 2x for Q.K^T;
//  * elementwise ops: the forward's arithmetic, 1.5x its bytes (read the
//    output gradient and the saved input, write the input gradient);
//  * normalizations and reductions: 2x the arithmetic, 1.5x the bytes;
//  * data movement: the same bytes, no arithmetic (an embedding's backward
//    scatter-adds the rows it gathered); views: nothing.
//
// Saved tensors (the activation memory of training; Korthikanti et al.
// 2022 count the same for a GPT layer: 34*s*b*h + 5*a*s^2*b bytes in 16-bit
// types with dropout):
//  * GEMM-like ops keep their activation inputs;
//  * Softmax keeps its output; Dropout keeps a one-byte mask per element;
//  * a chain of pointwise ops and reductions (a decomposed LayerNorm or
//    GELU, bias + residual adds) keeps the tensors its nonlinear ops are
//    computed from: climbing from each nonlinear op's inputs through linear
//    ops of one activation input (scales, bias adds), the first tensor that
//    is not computed from another kept tensor of the chain. A chain of
//    linear ops only (residual adds, scaling, masking) keeps nothing.
// A tensor kept by several ops counts once, through views.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_BACKWARD_H
#define PERFC_PASSES_BACKWARD_H

#include "passes/WorkPass.h"

#include <vector>

namespace perfc {
namespace ir {
class Graph;
class Value;
} // namespace ir

struct SavedTensor {
  const ir::Value *Value = nullptr; ///< The tensor (its data root).
  unsigned Node = 0;                ///< The op whose backward needs it.
  bool Mask = false; ///< A dropout mask: one byte per element of Value.
  double bytes() const;
};

struct BackwardInfo {
  std::vector<OpWork> Work;    ///< Per node; zero where no gradient flows.
  std::vector<bool> NeedsGrad; ///< Per node.
  std::vector<SavedTensor> Saved;
};

BackwardInfo computeBackward(const ir::Graph &G, const GraphWork &Work);

} // namespace perfc

#endif // PERFC_PASSES_BACKWARD_H
