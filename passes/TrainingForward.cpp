//===- TrainingForward.cpp - A training step's forward pass ---------------===//
#include "passes/TrainingForward.h"

#include "ir/Graph.h"

namespace perfc {

double droppedMaskBytes(const ir::Node &Dropout) {
  const ir::Value *X = Dropout.input(0);
  return X ? static_cast<double>(X->numElements()) : 0;
}

FusionOptions trainingFusion(bool Unfused, bool FlashAttention) {
  FusionOptions O;
  O.FuseAttention = false;
  O.FlashAttention = FlashAttention;
  O.FoldBatchNorm = false;
  O.Fuse = !Unfused;
  return O;
}

KernelPlan trainingKernels(const ir::Graph &G, const GraphWork &Work,
                           const BackwardInfo &Back, bool Unfused,
                           bool FlashAttention) {
  llvm::DenseSet<const ir::Value *> Kept;
  for (const SavedTensor &S : Back.Saved)
    if (!S.Mask) // a dropout's mask is its own bytes (droppedMaskBytes)
      Kept.insert(S.Value);
  FusionOptions F = trainingFusion(Unfused, FlashAttention);
  F.Kept = &Kept;
  return planKernels(G, Work, F);
}

GraphWork trainingWork(const ir::Graph &G) {
  GraphWork W = computeWork(G);
  for (const auto &N : G.nodes()) {
    OpWork &NW = W.Nodes[N->index()];
    if (N->opType() == "Dropout" && !NW.IsView && N->input(0) &&
        !N->output(1)) {
      const double Mask = droppedMaskBytes(*N);
      NW.BytesWritten += Mask;
      NW.SideBytesWritten += Mask;
      W.Total.BytesWritten += Mask;
      NW.Formula += " + its 1-byte mask, which backward reads";
    }
    if (N->opType() == "BatchNormalization" && N->input(0)) {
      const double X = static_cast<double>(N->input(0)->bytes());
      const double Stats = 3.0 * N->input(0)->numElements(); // x, x^2 sums
      NW.BytesRead += X;
      NW.Flops += Stats;
      W.Total.BytesRead += X;
      W.Total.Flops += Stats;
      NW.Formula += " + batch statistics (input read twice)";
    }
  }
  return W;
}

} // namespace perfc
