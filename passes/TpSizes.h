//===- TpSizes.h - Whether a tp degree shards whole units -*- C++ -*-===//
//
// Megatron-LM gives each tensor-parallel rank whole attention heads (and
// whole key/value groups), whole columns of a column-parallel GEMM and whole
// rows of a row-parallel one; under sequence parallelism, whole sequence
// positions. A degree that divides none of them is a configuration Megatron
// refuses at start-up (`divide()` asserts), so perfc refuses it too instead
// of pricing fractional heads.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_TPSIZES_H
#define PERFC_PASSES_TPSIZES_H

#include "passes/Blocks.h"

#include "llvm/Support/Error.h"

namespace perfc {

/// The sizes tensor parallelism splits, reduced to what a degree must
/// divide: computed once per graph, checked per strategy in O(1).
struct TpSplitSizes {
  int64_t Gcd = 0;         ///< Of heads, columns and rows; 0: none found.
  int64_t SequenceGcd = 0; ///< Of row-parallel outputs' sequence lengths.
};

TpSplitSizes tpSplitSizes(const ir::Graph &G, const GraphWork &Work,
                          const BlockInfo &Blocks);

/// Success if \p Tp divides every size that tensor parallelism splits in
/// \p G (and, with \p SequenceParallel, every sequence length); otherwise
/// an error naming the first node whose size it does not divide and the
/// degrees that would (the divisors of the sizes' gcd). \p Sizes is
/// tpSplitSizes(G, Work, Blocks): the graph is walked only for the message.
llvm::Error checkTpSizes(const ir::Graph &G, const GraphWork &Work,
                         const BlockInfo &Blocks, const TpSplitSizes &Sizes,
                         unsigned Tp, bool SequenceParallel);

} // namespace perfc

#endif // PERFC_PASSES_TPSIZES_H
