//===- TpSizes.cpp - Whether a tp degree shards whole units ----------===//
#include "passes/TpSizes.h"

#include "ir/Graph.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <numeric>

namespace perfc {
namespace {

struct SplitSize {
  const ir::Node *Node;
  int64_t Size;
  const char *What;
  bool Sequence = false; ///< Split only under sequence parallelism.
};

/// Heads in a Reshape that splits the last axis of its input into
/// (..., heads, head size), as [B, S, H*D] -> [B, S, H, D] or the packed
/// [B, S, 3*H*D] -> [B, S, 3, H, D]: the axis before the last. 0 if the
/// Reshape does not split the last axis or a size is not known.
int64_t headsOf(const ir::Node &N) {
  if (N.opType() != "Reshape" || N.numInputs() < 1 || N.numOutputs() < 1 ||
      !N.input(0) || !N.output(0))
    return 0;
  const ir::Shape &In = N.input(0)->shape();
  const ir::Shape &Out = N.output(0)->shape();
  if (!In.isRanked() || !Out.isRanked() || In.rank() < 1 ||
      Out.rank() < In.rank() + 1 || !In.isStatic() || !Out.isStatic())
    return 0;
  const unsigned Kept = In.rank() - 1;
  for (unsigned I = 0; I < Kept; ++I)
    if (In[I].Value != Out[I].Value)
      return 0;
  int64_t Product = 1;
  for (unsigned I = Kept; I < Out.rank(); ++I)
    if (__builtin_mul_overflow(Product, Out[I].Value, &Product))
      return 0;
  if (Product != In[Kept].Value)
    return 0;
  return Out[Out.rank() - 2].Value;
}

/// The sequence length of a row-parallel GEMM's output: the longest of its
/// leading axes, which is S both in [B, S, H] (PyTorch's batch-first
/// exports) and in Megatron-LM's own [S, B, H] (NeMo's exports), where a
/// micro-batch is shorter than a sequence. 0 if a leading size is unknown.
int64_t sequenceOf(const ir::Node &N) {
  const ir::Value *Out = N.numOutputs() ? N.output(0) : nullptr;
  if (!Out || !Out->shape().isRanked() || Out->shape().rank() < 3)
    return 0;
  const ir::Shape &Shape = Out->shape();
  int64_t Longest = 0;
  for (unsigned I = 0; I + 1 < Shape.rank(); ++I) {
    if (!Shape[I].isKnown())
      return 0;
    Longest = std::max(Longest, Shape[I].Value);
  }
  return Longest;
}

/// Every size tensor parallelism splits in G, in node order.
std::vector<SplitSize> splitSizes(const ir::Graph &G, const GraphWork &Work,
                                  const BlockInfo &Blocks,
                                  bool SequenceParallel) {
  std::vector<SplitSize> Sizes;
  for (const auto &N : G.nodes()) {
    const unsigned I = N->index();
    const GemmDims &D = Work.Nodes[I].Gemm;
    switch (Blocks.Tp[I]) {
    case TpRole::Column:
      if (D.valid())
        Sizes.push_back({N, int64_t(D.N), "output columns"});
      break;
    case TpRole::Row:
      if (D.valid())
        Sizes.push_back({N, int64_t(D.K), "input rows"});
      if (SequenceParallel)
        if (int64_t S = sequenceOf(*N))
          Sizes.push_back({N, S, "sequence positions (--sp)", true});
      break;
    case TpRole::Sharded:
      if (int64_t H = headsOf(*N))
        Sizes.push_back({N, H, "heads"});
      break;
    case TpRole::Replicated:
    case TpRole::Vocab: // Megatron pads the vocabulary to a multiple of tp
      break;
    }
  }
  return Sizes;
}

} // namespace

TpSplitSizes tpSplitSizes(const ir::Graph &G, const GraphWork &Work,
                          const BlockInfo &Blocks) {
  TpSplitSizes T;
  for (const SplitSize &S : splitSizes(G, Work, Blocks, true))
    if (S.Sequence)
      T.SequenceGcd = std::gcd(T.SequenceGcd, S.Size);
    else
      T.Gcd = std::gcd(T.Gcd, S.Size);
  return T;
}

llvm::Error checkTpSizes(const ir::Graph &G, const GraphWork &Work,
                         const BlockInfo &Blocks, const TpSplitSizes &Sizes,
                         unsigned Tp, bool SequenceParallel) {
  if (Tp <= 1 || (Sizes.Gcd % Tp == 0 &&
                  (!SequenceParallel || Sizes.SequenceGcd % Tp == 0)))
    return llvm::Error::success();
  int64_t Gcd = 0;
  const SplitSize *First = nullptr;
  const std::vector<SplitSize> All =
      splitSizes(G, Work, Blocks, SequenceParallel);
  for (const SplitSize &S : All) {
    Gcd = std::gcd(Gcd, S.Size);
    if (!First && S.Size % Tp != 0)
      First = &S;
  }
  if (!First) // unreachable: some size does not divide
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("--tp {0} does not divide the {1} {2} of node '{3}' "
                    "(each tensor-parallel rank holds whole heads, columns "
                    "and rows, as in Megatron-LM); use a --tp that divides {4}",
                    Tp, First->Size, First->What, First->Node->name(), Gcd));
}

} // namespace perfc
