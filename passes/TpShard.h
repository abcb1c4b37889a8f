//===- TpShard.h - One tensor-parallel rank's share of an op ----*- C++ -*-===//
//
// Megatron-style tensor parallelism (Shoeybi et al. 2019) gives each of tp
// ranks a column-parallel GEMM's output columns, a row-parallel GEMM's input
// rows, the heads between them and the vocabulary of the embedding and the
// output head (passes/Blocks.h finds the roles); norms and residual adds run
// whole on every rank, or split by sequence under sequence parallelism.
// Training steps (passes/TrainStep.h) and tensor-parallel inference
// (passes/Predict.h) price the same share.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_TPSHARD_H
#define PERFC_PASSES_TPSHARD_H

#include "costmodels/OpWork.h"
#include "passes/Blocks.h"
#include "passes/Fusion.h"

namespace perfc {

/// The share of node Node's work one of Tp ranks does: 1 / Tp but for
/// replicated nodes, which run whole (split too, inside the blocks, under
/// sequence parallelism).
double tpShare(const BlockInfo &Blocks, unsigned Node, unsigned Tp,
               bool SequenceParallel);

/// W on one rank: arithmetic scaled by Share (tpShare), bytes by
/// BytesScale x Share (BytesScale: a change of element size, 1 for none),
/// and the GEMM's shape split along the dimension Role splits (output
/// columns, input rows, the batch of heads, or, for a replicated op split
/// by sequence, its rows), so that tiling sees the rank's GEMM.
OpWork shardWork(const OpWork &W, TpRole Role, unsigned Tp, double Share,
                 double BytesScale);

/// Of what kernel K reads, the bytes every rank reads whole although K is
/// split by heads: the operands its products share across heads
/// (sharedOperand: latent attention's cache). shardWork splits all of a
/// kernel's bytes; a sharded kernel adds these back.
double wholeReadBytes(const ir::Graph &G, const KernelPlan &Plan,
                      const Kernel &K);

} // namespace perfc

#endif // PERFC_PASSES_TPSHARD_H
