//===- TrainDataParallel.cpp - Exchanges between data replicas ------------===//
#include "passes/Trainer.h"

#include "costmodels/Overlap.h"

#include <algorithm>

namespace perfc {
namespace trainstep {

double Trainer::shardedParams(const StageReport &St, bool Sharded) const {
  if (!Sharded)
    return St.Params;
  const double Dp = double(O.Dp) * O.Cp;
  return (St.Params - St.ExpertParams) / Dp + St.ExpertParams * O.Ep / Dp;
}

void Trainer::addDataParallelExchange(TrainReport &R, const StageReport &SS,
                                      double Wbytes, double Gbytes) const {
  const double M = MicroBatches;
  const double GradBytes = SS.Params * Gbytes;
  std::vector<cost::LayerBackward> Layers, ExpertLayers;
  for (auto C = SS.Chunks.rbegin(); C != SS.Chunks.rend(); ++C)
    for (unsigned U = C->second + 1; U-- > C->first;) {
      const UnitCost &UC = (*Units)[U];
      Layers.push_back({UC.Backward + UC.Recompute + UC.TpComm - UC.TpForward +
                            UC.CpComm - UC.CpForward + UC.EpComm - UC.EpForward,
                        (UC.Params - UC.ExpertParams) * Gbytes});
      ExpertLayers.push_back({Layers.back().Seconds, UC.ExpertParams * Gbytes});
    }
  const cost::Collective Kind = O.Zero == 0 ? cost::Collective::AllReduce
                                            : cost::Collective::ReduceScatter;
  cost::OverlapTime T = cost::overlapGradientExchange(
      Layers, O.BucketBytes, DpGroup, O.GradCompression,
      cost::CommAlgorithm::Auto, Kind);
  // The experts' gradients: over the ranks holding the same experts, in
  // buckets of their own on the same stream (Megatron-Core keeps an
  // expert buffer beside the dense one).
  const bool ExpertReplicas = O.Ep > 1 && ExpertDpGroup.Size > 1;
  cost::OverlapTime TE;
  double ExpertGather = 0;
  if (ExpertReplicas) {
    TE = cost::overlapGradientExchange(ExpertLayers, O.BucketBytes,
                                       ExpertDpGroup, O.GradCompression,
                                       cost::CommAlgorithm::Auto, Kind);
    R.DpExpertCommSeconds = TE.CommSeconds;
    if (O.Zero > 0)
      ExpertGather = cost::collectiveSeconds(
          cost::Collective::AllGather, SS.ExpertParams * Wbytes, ExpertDpGroup);
    R.DpExpertCommSeconds += ExpertGather;
    T.ExposedSeconds =
        cost::sharedStreamExposed(T.Buckets, TE.Buckets, T.ComputeSeconds);
    T.CommSeconds += TE.CommSeconds;
  }
  R.DpWireBytes = cost::compressedBytes(GradBytes, O.GradCompression);
  llvm::Optional<cost::OverlapTime> Buckets; // --overlap-param-gather's
  double Comm = T.CommSeconds, Exposed = T.ExposedSeconds;
  if (O.Zero > 0) {
    R.DpParamBytes = SS.Params * Wbytes;
    double Gather = cost::collectiveSeconds(
                        cost::Collective::AllGather,
                        (SS.Params - SS.ExpertParams) * Wbytes, DpGroup) +
                    ExpertGather;
    double GatherExposed = Gather;
    if (O.OverlapParamGather && (O.Zero == 1 || O.Zero == 2)) {
      // The next step's first forward through the stage, unit by unit,
      // each waiting for its parameters' bucket.
      std::vector<cost::LayerBackward> Forward, ExpertForward;
      for (const auto &C : SS.Chunks)
        for (unsigned U = C.first; U <= C.second; ++U) {
          const UnitCost &UC = (*Units)[U];
          const double Seconds =
              UC.Forward + UC.TpForward + UC.CpForward + UC.EpForward;
          Forward.push_back({Seconds, (UC.Params - UC.ExpertParams) * Wbytes});
          ExpertForward.push_back({Seconds, UC.ExpertParams * Wbytes});
        }
      Buckets = cost::overlapParameterGather(Forward, O.BucketBytes, DpGroup);
      Gather = Buckets->CommSeconds;
      GatherExposed = Buckets->ExposedSeconds;
      R.DpGatherBuckets = Buckets->Buckets.size();
      // The experts' buckets gather over their own ranks, beside the
      // dense ones (Megatron-Core's expert buffer has its own bucket
      // group): the forward waits for the later of the two.
      if (ExpertReplicas) {
        const cost::OverlapTime E = cost::overlapParameterGather(
            ExpertForward, O.BucketBytes, ExpertDpGroup);
        R.DpExpertCommSeconds += E.CommSeconds - ExpertGather;
        Gather += E.CommSeconds;
        GatherExposed = std::max(GatherExposed, E.ExposedSeconds);
      }
    }
    R.DpScatterSeconds = T.CommSeconds;
    R.DpScatterExposedSeconds = T.ExposedSeconds;
    R.DpGatherSeconds = Gather;
    R.DpGatherExposedSeconds = GatherExposed;
    const double F = SS.ForwardSeconds, B = SS.BackwardSeconds;
    const auto Over = [](double C, double Hidden) {
      return std::max(0.0, C - Hidden);
    };
    if (O.Zero == 1) {
      Comm = T.CommSeconds + Gather;
      Exposed = T.ExposedSeconds + GatherExposed;
    } else if (O.Zero == 2) {
      Comm = M * T.CommSeconds + Gather;
      Exposed = M * T.ExposedSeconds + GatherExposed;
    } else {
      Comm = M * (T.CommSeconds + 2 * Gather);
      Exposed =
          M * (Over(Gather, F) +
               std::max(T.ExposedSeconds, Over(Gather + T.CommSeconds, B)));
    }
  }
  R.DpCommSeconds = Comm;
  R.DpExposedSeconds = Exposed;
  if (O.Explain) {
    // T's buckets are the dense ones still (the experts' are TE's).
    for (std::string &Line : explainDataParallelCollectives(
             T, O, (SS.Params - SS.ExpertParams) * Wbytes, DpGroup,
             Buckets ? &*Buckets : nullptr))
      R.CommExplain.push_back(std::move(Line));
    if (ExpertReplicas)
      for (std::string &Line : explainExpertGradients(
               TE, O, SS.ExpertParams * Wbytes, ExpertDpGroup))
        R.CommExplain.push_back(std::move(Line));
  }
}

} // namespace trainstep
} // namespace perfc
