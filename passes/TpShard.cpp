//===- TpShard.cpp - One tensor-parallel rank's share of an op ------------===//
#include "passes/TpShard.h"

#include "ir/Graph.h"
#include "passes/Views.h"

#include "llvm/ADT/STLExtras.h"

namespace perfc {

double tpShare(const BlockInfo &Blocks, unsigned Node, unsigned Tp,
               bool SequenceParallel) {
  if (Tp == 1)
    return 1;
  if (Blocks.Tp[Node] != TpRole::Replicated)
    return 1.0 / Tp;
  if (SequenceParallel && Blocks.inBlock(Node))
    return 1.0 / Tp;
  return 1;
}

OpWork shardWork(const OpWork &W, TpRole Role, unsigned Tp, double Share,
                 double BytesScale) {
  OpWork S = W;
  S.Macs *= Share;
  S.Flops *= Share;
  const double Bytes = BytesScale * Share;
  // Bytes that are no tensor (a dropout mask) follow the share, not the
  // training type.
  S.SideBytesRead *= Share;
  S.SideBytesWritten *= Share;
  S.BytesRead = (W.BytesRead - W.SideBytesRead) * Bytes + S.SideBytesRead;
  S.BytesWritten =
      (W.BytesWritten - W.SideBytesWritten) * Bytes + S.SideBytesWritten;
  S.LayoutBytes *= Bytes;
  if (Tp > 1 && S.Gemm.valid()) {
    switch (Role) {
    case TpRole::Column:
    case TpRole::Vocab:
      S.Gemm.N /= Tp;
      break;
    case TpRole::Row:
      S.Gemm.K /= Tp;
      break;
    case TpRole::Sharded:
      // The heads: the batch of products, or rows sharing one key.
      if (S.Gemm.FoldedHeads > 1) {
        S.Gemm.M /= Tp;
        S.Gemm.FoldedHeads /= Tp;
      } else {
        S.Gemm.Batch /= Tp;
      }
      break;
    case TpRole::Replicated:
      // Split by sequence (--sp) or by batch (--ep's data-parallel
      // attention): the rows, or the batch where the rows are heads.
      if (Share < 1) {
        if (S.Gemm.FoldedHeads > 1)
          S.Gemm.Batch /= Tp;
        else
          S.Gemm.M /= Tp;
      }
      break;
    }
  }
  return S;
}

double wholeReadBytes(const ir::Graph &G, const KernelPlan &Plan,
                      const Kernel &K) {
  static constexpr llvm::StringLiteral LayoutOps[] = {
      "Transpose", "Slice", "Reshape", "Squeeze", "Unsqueeze", "Identity"};
  double Bytes = 0;
  llvm::SmallVector<const ir::Value *, 2> Counted;
  for (unsigned M : K.Members) {
    const ir::Value *Shared = sharedOperand(*G.nodes()[M]);
    if (!Shared)
      continue;
    // Back through the kernel's own layout ops (a Transpose, a Slice it
    // applies as it loads) to the tensor it reads.
    const ir::Value *Root = Plan.dataRoot(throughViews(
        Shared,
        [&](const ir::Node &P) {
          return llvm::is_contained(K.Members, P.index()) &&
                 llvm::is_contained(LayoutOps, P.opType());
        },
        /*MaxHops=*/8));
    if (llvm::is_contained(Counted, Root))
      continue;
    Counted.push_back(Root);
    for (const TensorUse &U : K.Reads)
      if (U.V == Root)
        Bytes += U.Bytes;
  }
  return Bytes;
}

} // namespace perfc
