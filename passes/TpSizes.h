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

/// Success if \p Tp divides every size that tensor parallelism splits in
/// \p G; otherwise an error naming the first node whose size it does not
/// divide and the degrees that would (the divisors of the sizes' gcd).
llvm::Error checkTpSizes(const ir::Graph &G, const GraphWork &Work,
                         const BlockInfo &Blocks, unsigned Tp,
                         bool SequenceParallel);

} // namespace perfc

#endif // PERFC_PASSES_TPSIZES_H
