//===- InferenceRun.cpp - A prediction in its layout, at its batch --------===//
#include "tools/InferenceRun.h"

#include "ir/Graph.h"

namespace perfc {

llvm::Expected<InferenceRun> predictInference(InferenceRequest Req) {
  const ir::Graph &G = *Req.Graph;
  // The plan's and the split's errors are about the model: name it.
  const auto AboutModel = [&Req](llvm::Error E) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   Req.ModelPath + ": " +
                                       llvm::toString(std::move(E)));
  };
  // With MaxBatch: every batch tried, as the model was read otherwise, with
  // Options (a plan's layouts each place their own split on them). Built
  // only then: the library's fast path predicts without it.
  const auto Search = [&Req](const PredictOptions &Options,
                             SplitDegrees Degrees) {
    return BatchSearchRequest{Req.ModelPath.str(), Req.ImportAt, Options,
                              Degrees, Req.MaxLatencySeconds};
  };
  const int64_t FromBatch = batchOf(G).getValueOr(0);
  InferenceRun Run;
  Run.Degrees = Req.Degrees;
  llvm::Optional<ServingPlan> Serving;
  // With MaxBatch: the run at the batch found, which the report becomes.
  llvm::Optional<MaxBatchRun> Found;
  if (Req.Serve) {
    ServingRequest Plan = *Req.Serve;
    Plan.Cluster = Req.Cluster;
    Plan.Base = Req.Options;
    Plan.Protocol = Req.Protocol;
    if (Req.MaxBatch) {
      // Each layout serves as many samples as it holds: the plan compares
      // their rates, under the search's bound.
      Plan.Objective = ServingObjective::Throughput;
      Plan.MaxLatencySeconds = Req.MaxLatencySeconds;
      Plan.EveryPipelineDegree = true;
    }
    auto Planned = Req.MaxBatch ? serveLayouts(G, Plan) : planServing(G, Plan);
    if (!Planned)
      return AboutModel(Planned.takeError());
    if (Req.MaxBatch) {
      auto Chosen = servePlanAtMaxBatch(Search(Req.Options, {}), *Req.Cluster,
                                        Req.Protocol, *Planned, FromBatch);
      if (!Chosen)
        return Chosen.takeError();
      Found = std::move(*Chosen);
    }
    Run.Degrees = degreesOf(*Planned->chosen());
    Serving = std::move(*Planned);
  }
  if (!Run.Degrees.whole())
    if (llvm::Error E = placeSplit(Req.Options, *Req.Cluster, Run.Degrees,
                                   Req.Protocol, Req.Names))
      return std::move(E);
  if (!Found) {
    if (!Run.Degrees.whole()) {
      auto Analysis = analyzeSplit(G, Run.Degrees);
      if (!Analysis)
        return AboutModel(Analysis.takeError());
      if (*Analysis) {
        Run.Split = std::make_unique<InferenceSplit>(std::move(**Analysis));
        Req.Options.Split = Run.Split.get();
      }
    }
    // Under MaxBatch this run gives the search its estimate only.
    Run.R = predict(G, Req.MaxBatch ? figuresOnly(Req.Options) : Req.Options);
    if (Req.MaxBatch) {
      auto Largest =
          predictAtMaxBatch(Search(Req.Options, Run.Degrees), Run.R, FromBatch);
      if (!Largest)
        return Largest.takeError();
      Found = std::move(*Largest);
    }
  }
  if (Found) {
    Run.Model = std::move(Found->Model);
    Run.Split = std::move(Found->Split);
    Run.R = std::move(Found->R);
  }
  Run.R.Serving = std::move(Serving);
  return std::move(Run);
}

} // namespace perfc
