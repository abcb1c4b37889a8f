//===- TrainExplain.h - How a training step's figures add up ----*- C++ -*-===//
//
// The text behind TrainReport::CommExplain and MemoryExplain (--explain,
// the JSON's step.comm_explain and memory.explain): each collective with
// its count, size, algorithm, formula and links (cost::collectiveTime's
// explanation), and each part of a stage's memory with its factors. Built
// only for a report (TrainOptions::Explain): the planner's inner loop
// prices thousands of strategies and reads none of it.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_TRAINEXPLAIN_H
#define PERFC_PASSES_TRAINEXPLAIN_H

#include "costmodels/Collectives.h"
#include "costmodels/Overlap.h"
#include "passes/Blocks.h"
#include "passes/TrainStep.h"

#include "llvm/ADT/BitVector.h"

#include <string>
#include <vector>

namespace perfc {

/// The tensor-parallel exchanges of one micro-batch of stage St, one line
/// per kind and size, with its count (the same sums the step makes: each
/// reduced value of the stage's units, forward ones twice in the blocks
/// full recomputation reruns (FullyRecomputed, per unit), sequence
/// parallelism's extra all-gather).
std::vector<std::string>
explainTensorParallel(const StageReport &St, const BlockInfo &Blocks,
                      const llvm::BitVector &FullyRecomputed,
                      const TrainOptions &O, const cost::CommGroup &Tp);

/// The pipeline's messages of a step: 2 x micro-batches x vp of Message
/// bytes over Link.
std::string explainPipelineMessages(int64_t MicroBatches, const TrainOptions &O,
                                    double Message, const hw::Link &Link);

/// The data-parallel exchange: the largest bucket of Exchange and, under
/// ZeRO, the all-gather of ParamBytes of parameters, or where Gather gives
/// its buckets (--overlap-param-gather) the largest of those.
std::vector<std::string> explainDataParallelCollectives(
    const cost::OverlapTime &Exchange, const TrainOptions &O, double ParamBytes,
    const cost::CommGroup &Dp, const cost::OverlapTime *Gather = nullptr);

/// Context parallelism's ring for one attention of stage St, per
/// micro-batch: Bytes of keys and values a rank sends at each of the cp - 1
/// steps over Link, each step's transfer (forward; backward with the
/// gradients, twice the bytes) against one step's attention, and the
/// stage's exposed and hidden totals.
struct ContextRingTerms {
  double Bytes = 0;
  const hw::Link *Link = nullptr;
  double ForwardStep = 0, BackwardStep = 0;
  double ForwardAttention = 0, BackwardAttention = 0;
  /// One merge of a step's partial output (or query gradient) into the
  /// running one; cp - 1 each way, in the attention's time.
  double MergeSeconds = 0;
};
std::string explainContextRing(const StageReport &St, const TrainOptions &O,
                               const ContextRingTerms &T);

/// Expert parallelism's all-to-alls of stage St per micro-batch: Calls of
/// them (each mixture's dispatch and combine, forward and backward, the
/// forward's again under full recomputation), the stage's exposed total,
/// and One, the explanation of one of them.
std::string explainExpertExchange(const StageReport &St, const TrainOptions &O,
                                  unsigned Calls, const std::string &One);

/// The experts' gradient exchange over the ranks holding the same experts
/// (dp x cp / ep of them): the largest bucket of Exchange and, under ZeRO,
/// the all-gather of ParamBytes of the experts' parameters.
std::vector<std::string>
explainExpertGradients(const cost::OverlapTime &Exchange, const TrainOptions &O,
                       double ParamBytes, const cost::CommGroup &Replicas);

/// Context parallelism's all-to-alls for one unit, per micro-batch: the
/// bytes of the attention cores' Q, K and V (K and V as sent, before a
/// grouped-query expansion) and outputs on one rank, each exchanged in a
/// call of its own, and the calls' seconds each way (backward exchanges
/// the gradients of the same tensors).
struct ContextAllToAllTerms {
  double QueryBytes = 0, KeyValueBytes = 0, OutputBytes = 0;
  double ForwardSeconds = 0, BackwardSeconds = 0;
  unsigned Attentions = 0;
};
/// T's line for stage St: One explains one all-to-all (of a query).
std::string explainContextAllToAll(const StageReport &St, const TrainOptions &O,
                                   const ContextAllToAllTerms &T,
                                   const std::string &One);

/// " (a2a)" where context ranks exchange heads all-to-all, "" for the
/// ring (the default, unnamed).
const char *cpCommSuffix(const TrainOptions &O);

/// The ranks the gradients are exchanged over: "dp N", or "dp N x cp M"
/// where the context ranks join the data-parallel ones.
std::string dataParallelGroupName(const TrainOptions &O);

/// What a stage's memory is made of besides its report's totals.
struct MemoryTerms {
  /// Bytes per parameter: weights, gradients, optimizer states (with fp32
  /// master weights under mixed precision).
  ModelStateBytes States;
  /// One micro-batch's (chunk's) activations kept for backward; under full
  /// recomputation its inputs and the largest block's recomputed tensors.
  double KeptPerMicroBatch = 0, InputsPerMicroBatch = 0, LargestBlockSaved = 0;
  /// ZeRO 3's two units of parameters gathered whole, less the shard held:
  /// the part of the workspace that is not the largest tensor.
  double GatheredParamBytes = 0;
};

/// How St's memory adds up, one line.
std::string explainMemory(const StageReport &St, const TrainOptions &O,
                          const MemoryTerms &T);

} // namespace perfc

#endif // PERFC_PASSES_TRAINEXPLAIN_H
