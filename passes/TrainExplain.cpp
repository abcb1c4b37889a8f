//===- TrainExplain.cpp - How a training step's figures add up ------------===//

#include "passes/TrainExplain.h"

#include "passes/Fp8Recipe.h"
#include "passes/TrainOptionNames.h"

#include "hwdb/Units.h"
#include "ir/Graph.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace perfc;

std::vector<std::string>
perfc::explainTensorParallel(const StageReport &St, const BlockInfo &Blocks,
                             const llvm::BitVector &FullyRecomputed,
                             const TrainOptions &O, const cost::CommGroup &Tp) {
  struct Exchange {
    cost::Collective Kind;
    double Bytes;
    unsigned Count;
  };
  std::vector<Exchange> Seen;
  auto Add = [&](cost::Collective K, double Bytes, unsigned Times) {
    for (Exchange &E : Seen)
      if (E.Kind == K && E.Bytes == Bytes) {
        E.Count += Times;
        return;
      }
    Seen.push_back({K, Bytes, Times});
  };
  const double Elem = double(ir::byteSize(trainingStorageType(O.DType)));
  auto AddExchange = [&](const ir::Value *V, unsigned Times) {
    const double Bytes = V->numElements() * Elem;
    if (!O.SequenceParallel) {
      Add(cost::Collective::AllReduce, Bytes, Times);
      return;
    }
    Add(cost::Collective::ReduceScatter, Bytes, Times);
    Add(cost::Collective::AllGather, Bytes, Times);
  };
  for (const auto &Chunk : St.Chunks)
    for (unsigned U = Chunk.first; U <= Chunk.second; ++U) {
      // Full recomputation runs a rerun block's forward exchanges again,
      // selective recomputation those of the row GEMMs it reruns.
      for (const ir::Value *V : Blocks.ForwardReduced[U]) {
        const bool Again =
            FullyRecomputed[U] ||
            (V->producer() &&
             selectivelyRecomputed(O, Blocks, V->producer()->index()));
        AddExchange(V, Again ? 2 : 1);
      }
      for (const ir::Value *V : Blocks.BackwardReduced[U]) {
        AddExchange(V, 1);
        if (O.SequenceParallel)
          Add(cost::Collective::AllGather, V->numElements() * Elem, 1);
      }
    }
  std::vector<std::string> Lines;
  for (const Exchange &E : Seen)
    Lines.push_back(
        llvm::formatv(
            "tp {0}, stage {1}, per micro-batch: {2} x {3} of {4} ({5} in "
            "all), each {6}",
            O.Tp, St.Stage, E.Count, cost::name(E.Kind),
            hw::formatDataBytes(E.Bytes),
            hw::formatQuantity(E.Count *
                                   cost::collectiveSeconds(E.Kind, E.Bytes, Tp),
                               hw::Quantity::Time),
            cost::collectiveTime(E.Kind, E.Bytes, Tp).Explain)
            .str());
  if (O.TpCommOverlap)
    Lines.push_back(
        llvm::formatv(
            "tp {0}, stage {1}, per micro-batch: overlapped with "
            "the column- and row-parallel GEMMs (--tp-comm-overlap: "
            "each exchange in {0} chunks against its GEMM; the "
            "first chunk and what outlasts a block's GEMMs in each "
            "direction stay exposed): {2} hidden, {3} exposed",
            O.Tp, St.Stage,
            hw::formatQuantity(St.TpOverlappedSeconds, hw::Quantity::Time),
            hw::formatQuantity(St.TpCommSeconds, hw::Quantity::Time))
            .str());
  return Lines;
}

std::string perfc::explainPipelineMessages(int64_t MicroBatches,
                                           const TrainOptions &O,
                                           double Message,
                                           const hw::Link &Link) {
  return llvm::formatv("p2p: 2 x {0} micro-batch{1} x vp {2} = {3} messages "
                       "of {4} (the largest tensor crossing a stage boundary "
                       "/ tp {5}), each {6}",
                       MicroBatches, MicroBatches == 1 ? "" : "es", O.Vp,
                       2 * MicroBatches * O.Vp, hw::formatDataBytes(Message),
                       O.Tp, cost::p2pTime(Message, Link).Explain)
      .str();
}

std::string perfc::explainContextRing(const StageReport &St,
                                      const TrainOptions &O,
                                      const ContextRingTerms &T) {
  auto Time = [](double S) {
    return hw::formatQuantity(S, hw::Quantity::Time);
  };
  return llvm::formatv(
             "cp {0}, stage {1}, per micro-batch and attention: {2} ring "
             "step{11} sending {3} of keys and values over {4} (forward {5} "
             "each against {6} of attention; backward, with their "
             "gradients, {7} against {8}); the stage's {9} hidden, {10} "
             "exposed; each step after the first merges its partial output "
             "(forward) or query gradient (backward) into the running one, "
             "{12} each, in the attention's time",
             O.Cp, St.Stage, O.Cp - 1, hw::formatDataBytes(T.Bytes),
             T.Link ? T.Link->Name : std::string("no link"),
             Time(T.ForwardStep), Time(T.ForwardAttention),
             Time(T.BackwardStep), Time(T.BackwardAttention),
             Time(St.CpOverlappedSeconds), Time(St.CpCommSeconds),
             O.Cp == 2 ? "" : "s", Time(T.MergeSeconds))
      .str();
}

std::string perfc::explainContextAllToAll(const StageReport &St,
                                          const TrainOptions &O,
                                          const ContextAllToAllTerms &T,
                                          const std::string &One) {
  auto Time = [](double S) {
    return hw::formatQuantity(S, hw::Quantity::Time);
  };
  const double N = std::max(1u, T.Attentions);
  return llvm::formatv(
             "cp {0} (all-to-all), stage {1}, per micro-batch and attention: "
             "Q {2}, K and V {3}, the output {4} on each rank, each "
             "exchanged all-to-all (tokens for heads) before or after the "
             "attention core, forward {5}, backward (their gradients) {6}, "
             "on the critical path: the stage's {7} exposed; one query's: "
             "{8}",
             O.Cp, St.Stage, hw::formatDataBytes(T.QueryBytes / N),
             hw::formatDataBytes(T.KeyValueBytes / N),
             hw::formatDataBytes(T.OutputBytes / N), Time(T.ForwardSeconds / N),
             Time(T.BackwardSeconds / N), Time(St.CpCommSeconds), One)
      .str();
}

std::string perfc::explainExpertExchange(const StageReport &St,
                                         const TrainOptions &O, unsigned Calls,
                                         const std::string &One) {
  return llvm::formatv(
             "ep {0}, stage {1}, per micro-batch: {2} all-to-alls (each "
             "mixture's tokens to their experts and the results back, "
             "forward and, with their gradients, backward{3}), {4}; one: "
             "{5}",
             O.Ep, St.Stage, Calls,
             St.RecomputedBlocks > 0 ||
                     recomputesModule(O, BlockModule::Mixture)
                 ? "; the forward's again, recomputed"
                 : "",
             O.OverlapMoeExpertParallelComm
                 ? llvm::formatv(
                       "beside the kernels of the micro-batch co-scheduled "
                       "with it (--overlap-moe-expert-parallel-comm: "
                       "min(all-to-alls, forward + backward + recompute) "
                       "hidden): {0} hidden, {1} exposed; once a step the "
                       "first forward's and the last backward's, unpaired, "
                       "wait",
                       hw::formatQuantity(St.EpOverlappedSeconds,
                                          hw::Quantity::Time),
                       hw::formatQuantity(St.EpCommSeconds, hw::Quantity::Time))
                       .str()
                 : "on the critical path: " +
                       hw::formatQuantity(St.EpCommSeconds, hw::Quantity::Time),
             One)
      .str();
}

std::vector<std::string>
perfc::explainExpertGradients(const cost::OverlapTime &Exchange,
                              const TrainOptions &O, double ParamBytes,
                              const cost::CommGroup &Replicas) {
  double Largest = 0;
  for (const cost::BucketTime &Bucket : Exchange.Buckets)
    Largest = std::max(Largest, Bucket.WireBytes);
  const cost::Collective Kind = O.Zero == 0 ? cost::Collective::AllReduce
                                            : cost::Collective::ReduceScatter;
  const std::string Group =
      llvm::formatv("experts' gradients over the {0} / ep {1} = {2} ranks "
                    "holding the same experts",
                    dataParallelGroupName(O), O.Ep, Replicas.Size)
          .str();
  std::vector<std::string> Lines;
  Lines.push_back(
      llvm::formatv("{0}: {1} bucket{2}, on the dense buckets' "
                    "stream; the largest: {3}",
                    Group, Exchange.Buckets.size(),
                    Exchange.Buckets.size() == 1 ? "" : "s",
                    cost::collectiveTime(Kind, Largest, Replicas).Explain)
          .str());
  if (O.Zero > 0)
    Lines.push_back(
        Group + ": parameters: " +
        cost::collectiveTime(cost::Collective::AllGather, ParamBytes, Replicas)
            .Explain);
  return Lines;
}

const char *perfc::cpCommSuffix(const TrainOptions &O) {
  return O.CpComm == ContextExchange::AllToAll ? " (a2a)" : "";
}

std::string perfc::dataParallelGroupName(const TrainOptions &O) {
  return O.Cp > 1 ? llvm::formatv("dp {0} x cp {1}", O.Dp, O.Cp).str()
                  : "dp " + std::to_string(O.Dp);
}

std::vector<std::string> perfc::explainDataParallelCollectives(
    const cost::OverlapTime &Exchange, const TrainOptions &O, double ParamBytes,
    const cost::CommGroup &Dp, const cost::OverlapTime *Gather) {
  double Largest = 0;
  for (const cost::BucketTime &Bucket : Exchange.Buckets)
    Largest = std::max(Largest, Bucket.WireBytes);
  const cost::Collective Kind = O.Zero == 0 ? cost::Collective::AllReduce
                                            : cost::Collective::ReduceScatter;
  std::vector<std::string> Lines;
  Lines.push_back(
      llvm::formatv("{0}: {1} bucket{2} (up to {3} each); the largest: {4}",
                    dataParallelGroupName(O), Exchange.Buckets.size(),
                    Exchange.Buckets.size() == 1 ? "" : "s",
                    hw::formatQuantity(O.BucketBytes, hw::Quantity::Capacity),
                    cost::collectiveTime(Kind, Largest, Dp).Explain)
          .str());
  if (O.Zero > 0 && Gather && !Gather->Buckets.empty()) {
    double LargestGather = 0;
    for (const cost::BucketTime &Bucket : Gather->Buckets)
      LargestGather = std::max(LargestGather, Bucket.Bytes);
    Lines.push_back(
        llvm::formatv(
            "{0}: parameters: {1} bucket{2} during the "
            "next forward; the largest: {3}",
            dataParallelGroupName(O), Gather->Buckets.size(),
            Gather->Buckets.size() == 1 ? "" : "s",
            cost::collectiveTime(cost::Collective::AllGather, LargestGather, Dp)
                .Explain)
            .str());
  } else if (O.Zero > 0) {
    Lines.push_back(
        dataParallelGroupName(O) + ": parameters: " +
        cost::collectiveTime(cost::Collective::AllGather, ParamBytes, Dp)
            .Explain);
  }
  return Lines;
}

std::string perfc::explainMemory(const StageReport &St, const TrainOptions &O,
                                 const MemoryTerms &T) {
  auto B = [](double Bytes) { return hw::formatDataBytes(Bytes); };
  auto Shard = [&](unsigned FromStage) {
    if (!(O.Zero >= FromStage && uint64_t(O.Dp) * O.Cp > 1))
      return std::string();
    std::string Text =
        llvm::formatv(" / {0} (ZeRO {1}", dataParallelGroupName(O), O.Zero)
            .str();
    // Expert parallelism: the experts' states shard over the ranks
    // holding the same experts.
    if (O.Ep > 1 && St.ExpertParams > 0)
      Text += llvm::formatv("; the experts' {0} over {1} / ep {2}",
                            int64_t(St.ExpertParams), dataParallelGroupName(O),
                            O.Ep)
                  .str();
    return Text + ")";
  };
  const std::string Params =
      llvm::formatv("{0} parameters", int64_t(St.Params)).str();
  const std::string Moments =
      std::to_string(int64_t(T.States.Optimizer - (T.States.Mixed ? 4 : 0)));
  std::string States =
      O.Optimizer == OptimizerKind::Adam       ? "Adam moments " + Moments
      : O.Optimizer == OptimizerKind::Momentum ? "momentum " + Moments
                                               : "SGD none";
  if (T.States.Mixed)
    States += " + fp32 master weights 4";
  const char *Schedule =
      O.Schedule == PipelineSchedule::GPipe ? "GPipe: every micro-batch"
      : O.Vp > 1 ? "interleaved 1F1B: (vp - 1) pp + 2 (pp - stage - 1) + 1"
                 : "1F1B: pp - stage";
  // Under full recomputation: what each chunk keeps by method.
  const std::string Rerun =
      O.Recomp != Recompute::Full ? std::string()
      : O.Method == RecomputeMethod::Block
          ? llvm::formatv(
                "{0} in flight ({1}) x {2} kept (full recomputation, block "
                "method: the inputs of each chunk's first {3}, {4} of the "
                "stage's {5}, and the other blocks' activations) + the "
                "largest block's {6} recomputed = {7}",
                St.InFlight, Schedule, B(T.InputsPerMicroBatch),
                O.RecomputeNumLayers == 1
                    ? std::string("block")
                    : std::to_string(O.RecomputeNumLayers) + " blocks",
                St.RecomputedBlocks, St.Blocks, B(T.LargestBlockSaved),
                B(St.ActivationsBytes))
                .str()
      : O.RecomputeNumLayers > 1
          ? llvm::formatv("{0} in flight ({1}) x {2} of the inputs of each "
                          "chunk's groups of {3} blocks (full recomputation, "
                          "uniform method) + the largest group's {4} "
                          "recomputed = {5}",
                          St.InFlight, Schedule, B(T.InputsPerMicroBatch),
                          O.RecomputeNumLayers, B(T.LargestBlockSaved),
                          B(St.ActivationsBytes))
                .str()
          : llvm::formatv("{0} in flight ({1}) x {2} of chunk inputs (full "
                          "recomputation) + the largest block's {3} "
                          "recomputed = {4}",
                          St.InFlight, Schedule, B(T.InputsPerMicroBatch),
                          B(T.LargestBlockSaved), B(St.ActivationsBytes))
                .str();
  const std::string Activations =
      O.Recomp == Recompute::Full
          ? Rerun
          : llvm::formatv(
                "{0} in flight ({1}) x {2} kept for backward{3} "
                "= {4}",
                St.InFlight, Schedule, B(T.KeptPerMicroBatch),
                O.Recomp == Recompute::Selective
                    ? " (selective recomputation of " +
                          llvm::join(recomputeModuleNames(O.RecomputeModules),
                                     ", ") +
                          ": their results dropped, their inputs "
                          "kept)"
                    : std::string(),
                B(St.ActivationsBytes))
                .str();
  std::string Workspace =
      "the largest tensor " + B(St.WorkspaceBytes - T.GatheredParamBytes);
  if (T.GatheredParamBytes > 0)
    Workspace += " + 2 units' gathered parameters " + B(T.GatheredParamBytes);
  return llvm::formatv(
             "memory (stage {0}): weights {1} x {2} B{3} = {4}; gradients "
             "{1} x {5} B{6} = {7}; optimizer {1} x {8} B ({15}){9} = {10}; "
             "activations {11}; workspace {12} = {13}; total {14}",
             St.Stage, Params, int64_t(T.States.Weights), Shard(3),
             B(St.WeightsBytes), int64_t(T.States.Gradients), Shard(2),
             B(St.GradientsBytes), int64_t(T.States.Optimizer), Shard(1),
             B(St.OptimizerBytes), Activations, Workspace, B(St.WorkspaceBytes),
             B(St.peakBytes()), States)
      .str();
}
