//===- MaxBatchSearch.cpp - perfc --max-batch -----------------------------===//
#include "tools/MaxBatchSearch.h"

#include "hwdb/Units.h"
#include "ir/Graph.h"
#include "passes/MaxBatch.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace perfc {
namespace {

llvm::Error failure(const std::string &ModelPath, const llvm::Twine &Why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 ModelPath + ": --max-batch: " + Why);
}

/// The model imported at Batch, analysed for the split, predicted.
llvm::Expected<MaxBatchRun> runAt(const std::string &ModelPath,
                                  frontend::ImportOptions Import,
                                  PredictOptions Options, SplitDegrees D,
                                  int64_t Batch) {
  Import.Batch = Batch;
  auto Model = frontend::importOnnxFile(ModelPath, Import);
  if (!Model)
    return Model.takeError();
  MaxBatchRun Run;
  Run.Model = std::make_unique<frontend::ImportedModel>(std::move(*Model));
  const ir::Graph &G = Run.Model->Graph;
  Options.Split = nullptr;
  if (D.Tp > 1 || D.Ep > 1) {
    auto S = D.Tp > 1 ? analyzeTensorParallel(G, D.Tp)
                      : analyzeExpertParallel(G, D.Ep);
    if (!S)
      return S.takeError();
    Run.Split = std::make_unique<InferenceSplit>(std::move(*S));
  } else if (D.Pp > 1) {
    Run.Split = std::make_unique<InferenceSplit>(analyzeInferenceSplit(G));
  }
  if (D.Pp > 1)
    if (llvm::Error E = checkPipelineParallel(G, *Run.Split, D.Pp))
      return std::move(E);
  Options.Split = Run.Split.get();
  Run.R = predict(G, Options);
  return std::move(Run);
}

} // namespace

llvm::Expected<MaxBatchRun>
predictAtMaxBatch(const std::string &ModelPath,
                  const frontend::ImportOptions &Import,
                  const PredictOptions &Options, SplitDegrees Degrees,
                  const Report &Given, int64_t FromBatch) {
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
  const unsigned Multiple = Degrees.Ep;
  BatchSearchReport Search;
  Search.FromBatch = FromBatch;
  Search.Estimate = *M.MaxBatch;
  // The estimate is exact where the bytes are linear in the batch and a
  // lower bound above the model's batch where some do not grow; four times
  // it bounds the search (the report says when it stopped there).
  Search.Limit =
      int64_t(std::min<uint64_t>(*M.MaxBatch, uint64_t(1) << 40)) * 4;
  // The last run that fits is the result (largestFittingBatch).
  llvm::Optional<MaxBatchRun> Best;
  auto Fits = [&](int64_t Batch) -> llvm::Expected<bool> {
    auto Run = runAt(ModelPath, Import, Options, Degrees, Batch);
    if (!Run) {
      // The import's and the split's errors name the file: failure below
      // names it once.
      std::string Why = llvm::toString(Run.takeError());
      llvm::StringRef Rest = Why;
      Rest.consume_front(ModelPath + ": ");
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("at batch {0}: {1}", Batch, Rest).str());
    }
    const bool Fit = Run->R.Memory && Run->R.Memory->Fits;
    if (Fit)
      Best = std::move(*Run);
    return Fit;
  };
  auto Found = largestFittingBatch(int64_t(*M.MaxBatch), Multiple, Search.Limit,
                                   Fits, Search.Tried);
  if (!Found)
    return failure(ModelPath, llvm::toString(Found.takeError()));
  Search.Batch = *Found;
  Best->R.BatchSearch = std::move(Search);
  return std::move(*Best);
}

} // namespace perfc
