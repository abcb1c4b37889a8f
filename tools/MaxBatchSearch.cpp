//===- MaxBatchSearch.cpp - perfc --max-batch -----------------------------===//
#include "tools/MaxBatchSearch.h"

#include "hwdb/Units.h"
#include "ir/Graph.h"
#include "passes/MaxBatch.h"
#include "passes/ServingPlan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace perfc {
namespace {

llvm::Error failure(const std::string &ModelPath, const llvm::Twine &Why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 ModelPath + ": --max-batch: " + Why);
}

/// The model imported at Batch, analysed for the split, predicted without
/// the strings only a report shows.
llvm::Expected<MaxBatchRun> runAt(const BatchSearchRequest &Req,
                                  int64_t Batch) {
  auto Model = Req.ImportAt(Batch);
  if (!Model)
    return Model.takeError();
  MaxBatchRun Run;
  Run.Model = std::make_unique<frontend::ImportedModel>(std::move(*Model));
  auto Analysis = analyzeSplit(Run.Model->Graph, Req.Degrees);
  if (!Analysis)
    return Analysis.takeError();
  PredictOptions Options = figuresOnly(Req.Options);
  Options.Split = nullptr;
  if (*Analysis) {
    Run.Split = std::make_unique<InferenceSplit>(std::move(**Analysis));
    Options.Split = Run.Split.get();
  }
  Run.R = predict(Run.Model->Graph, Options);
  return std::move(Run);
}

/// The run found, predicted again with the request's explanations and
/// names where it asks for them (the figures are the same; the search's
/// record stays).
void explainRun(const PredictOptions &Asked, MaxBatchRun &Run) {
  if (!Asked.Explain && !Asked.NodeNames)
    return;
  PredictOptions Options = Asked;
  Options.Split = Run.Split.get();
  llvm::Optional<BatchSearchReport> Search = std::move(Run.R.BatchSearch);
  Run.R = predict(Run.Model->Graph, Options);
  Run.R.BatchSearch = std::move(Search);
}

/// From Estimate: the run at the largest batch admitted, None where not
/// even the first multiple of ep is; Search says what was tried.
llvm::Expected<llvm::Optional<MaxBatchRun>>
searchFrom(const BatchSearchRequest &Req, uint64_t Estimate, int64_t FromBatch,
           BatchSearchReport &Search) {
  Search = BatchSearchReport();
  Search.FromBatch = FromBatch;
  Search.Estimate = Estimate;
  Search.MaxLatencySeconds = Req.MaxLatencySeconds;
  // The estimate is exact where the bytes are linear in the batch and a
  // lower bound above the model's batch where some do not grow; four times
  // it bounds the search (the report says when it stopped there).
  Search.Limit = int64_t(std::min<uint64_t>(std::max<uint64_t>(Estimate, 1),
                                            uint64_t(1) << 40)) *
                 4;
  // The last run admitted is the result (largestFittingBatch).
  llvm::Optional<MaxBatchRun> Best;
  auto Probe = [&](int64_t Batch) -> llvm::Expected<BatchProbe> {
    auto Run = runAt(Req, Batch);
    if (!Run) {
      // The import's and the split's errors name the file: failure names
      // it once.
      std::string Why = llvm::toString(Run.takeError());
      llvm::StringRef Rest = Why;
      Rest.consume_front(Req.ModelPath + ": ");
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("at batch {0}: {1}", Batch, Rest).str());
    }
    BatchProbe P;
    P.Fits = Run->R.Memory && Run->R.Memory->Fits;
    P.LatencySeconds = Run->R.LatencySeconds.getValueOr(0);
    if (Req.MaxLatencySeconds)
      P.MeetsLatency = P.LatencySeconds <= *Req.MaxLatencySeconds;
    if (P.admitted())
      Best = std::move(*Run);
    return P;
  };
  auto Found =
      largestFittingBatch(int64_t(Estimate), Req.Degrees.Ep, Search.Limit,
                          Req.MaxLatencySeconds, Probe, Search.Tried);
  if (!Found)
    return Found.takeError();
  if (!*Found)
    return llvm::None;
  Search.Batch = **Found;
  return std::move(Best);
}

} // namespace

llvm::Expected<MaxBatchRun> predictAtMaxBatch(const BatchSearchRequest &Req,
                                              const Report &Given,
                                              int64_t FromBatch) {
  const std::string &ModelPath = Req.ModelPath;
  if (!Given.Memory)
    return failure(ModelPath, "it needs an inference run's memory");
  const InferenceMemoryReport &M = *Given.Memory;
  if (!M.MaxBatch)
    return failure(
        ModelPath,
        !M.Usage.Complete
            ? "some shapes are unknown, so the peak is only a lower bound; "
              "bind them (--dim)"
        : M.CapacityBytes <= 0
            ? "device '" + M.Device + "' gives no memory capacity"
            : "the first input has no leading (batch) dimension to grow");
  if (*M.MaxBatch == 0)
    return failure(ModelPath,
                   llvm::formatv("not one sample fits: {0} a sample beside "
                                 "{1} of weights in {2}; use a narrower "
                                 "--storage-type, more devices (--tp, --pp) "
                                 "or a larger device",
                                 hw::formatDataBytes(M.BytesPerSample),
                                 hw::formatDataBytes(M.Usage.WeightsBytes),
                                 hw::formatDataBytes(M.CapacityBytes)));
  BatchSearchReport Search;
  auto Best = searchFrom(Req, *M.MaxBatch, FromBatch, Search);
  if (!Best)
    return failure(ModelPath, llvm::toString(Best.takeError()));
  if (!*Best) {
    const BatchProbe &Least = Search.Tried.back();
    return failure(
        ModelPath,
        Least.Fits
            ? llvm::formatv(
                  "not even a batch of {0} meets --max-latency {1}: "
                  "it takes {2}; give a longer bound, more devices "
                  "(--tp) or faster ones",
                  Least.Batch,
                  hw::formatQuantity(*Req.MaxLatencySeconds,
                                     hw::Quantity::Time),
                  hw::formatQuantity(Least.LatencySeconds, hw::Quantity::Time))
                  .str()
            : llvm::formatv("not even a batch of {0} fits", Least.Batch).str());
  }
  explainRun(Req.Options, **Best);
  (*Best)->R.BatchSearch = std::move(Search);
  return std::move(**Best);
}

llvm::Expected<MaxBatchRun> servePlanAtMaxBatch(const BatchSearchRequest &Base,
                                                const hw::Cluster &C,
                                                cost::CommProtocol Protocol,
                                                ServingPlan &Plan,
                                                int64_t FromBatch) {
  if (FromBatch <= 0)
    return failure(Base.ModelPath,
                   "the first input has no leading (batch) dimension to grow");
  Plan.AtMaxBatch = true;
  // One run a layout, kept until the plan has chosen.
  std::vector<llvm::Optional<MaxBatchRun>> Runs(Plan.Candidates.size());
  std::vector<PredictOptions> Options(Plan.Candidates.size());
  for (size_t I = 0; I < Plan.Candidates.size(); ++I) {
    ServingCandidate &Cand = Plan.Candidates[I];
    BatchSearchRequest Req = Base;
    Req.Degrees = degreesOf(Cand);
    const std::string Layout = name(Cand);
    // The plan placed the layout already: its cluster admits it.
    if (llvm::Error E = placeSplit(Req.Options, C, Req.Degrees, Protocol))
      return failure(Base.ModelPath,
                     Layout + ": " + llvm::toString(std::move(E)));
    if (!Cand.MaxBatch)
      return failure(Base.ModelPath,
                     Layout + ": no estimate to start from (some shapes are "
                              "unknown, or the device gives no memory "
                              "capacity)");
    if (*Cand.MaxBatch == 0) {
      Plan.NotServed.push_back(Layout + ": not one sample fits");
      continue;
    }
    BatchSearchReport Search;
    auto Best = searchFrom(Req, *Cand.MaxBatch, FromBatch, Search);
    if (!Best)
      return failure(Base.ModelPath,
                     Layout + ": " + llvm::toString(Best.takeError()));
    if (!*Best) {
      Plan.NotServed.push_back(Layout + ": " +
                               describeProbe(Search.Tried.back()));
      continue;
    }
    // The estimate (Cand.MaxBatch) stays the one at the model's batch.
    Cand.AtMaxBatch = true;
    Cand.Samples = double(Search.Batch);
    Options[I] = Req.Options;
    setServingFigures(Cand, (*Best)->R);
    (*Best)->R.BatchSearch = std::move(Search);
    Runs[I] = std::move(*Best);
  }
  if (llvm::none_of(Plan.Candidates,
                    [](const ServingCandidate &C) { return C.AtMaxBatch; }))
    return failure(
        Base.ModelPath,
        llvm::formatv("no layout serves one sample{0} ({1}); use devices with "
                      "more memory, more of them (--devices, "
                      "--allow-cross-node-tp){2}",
                      Base.MaxLatencySeconds
                          ? " within --max-latency " +
                                hw::formatQuantity(*Base.MaxLatencySeconds,
                                                   hw::Quantity::Time)
                          : std::string(),
                      llvm::join(Plan.NotServed, "; "),
                      Base.MaxLatencySeconds ? " or a longer bound" : "")
            .str());
  if (llvm::Error E = chooseServingLayout(Plan))
    return failure(Base.ModelPath, llvm::toString(std::move(E)));
  MaxBatchRun &Chosen = *Runs[*Plan.Chosen];
  explainRun(Options[*Plan.Chosen], Chosen);
  return std::move(Chosen);
}

} // namespace perfc
