//===- MaxBatchSearch.h - perfc --max-batch ---------------------*- C++ -*-===//
//
// Predicts an inference at the largest batch whose run fits (and, with
// --max-latency, whose step meets the bound): the model imported again at
// each batch tried (--batch's rebinding), split as the command line or a
// serving plan's layout says, and predicted whole (passes/MaxBatch.h
// searches). With --plan, every layout of the serving plan at its own
// largest batch, the plan choosing among them. The perfc tool and the
// library API (PredictOptions::maxBatch) share it; each says how the model
// is imported again.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_MAXBATCHSEARCH_H
#define PERFC_TOOLS_MAXBATCHSEARCH_H

#include "frontend/OnnxImport.h"
#include "passes/InferenceLayout.h"
#include "passes/Predict.h"
#include "passes/Report.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>

namespace perfc {

/// The report at the batch found, with the model and split analysis it was
/// predicted from (the options' Split pointed at the latter).
struct MaxBatchRun {
  std::unique_ptr<frontend::ImportedModel> Model;
  std::unique_ptr<InferenceSplit> Split;
  Report R;
};

/// The model imported again with its first dimension Batch, as it was
/// read otherwise (--batch's rebinding).
using ImportAtBatch =
    std::function<llvm::Expected<frontend::ImportedModel>(int64_t Batch)>;

/// What every batch of a search is predicted with.
struct BatchSearchRequest {
  std::string ModelPath; ///< For messages.
  ImportAtBatch ImportAt;
  /// With the split's devices placed (placeSplit); Split is set per batch.
  /// The batches tried are predicted without explanations or node names
  /// (they decide the search, not the report); the one found is predicted
  /// again with these options' own.
  PredictOptions Options;
  SplitDegrees Degrees;
  /// --max-latency: a batch is admitted only if its step meets it too.
  llvm::Optional<double> MaxLatencySeconds;
};

/// One layout: Given is the report at the model's own batch FromBatch (its
/// memory's MaxBatch the estimate), predicted with Req's options. The
/// result's R.BatchSearch lists the batches tried. Errors, one line naming
/// the model: no estimate (no batch dimension, unknown capacity, an
/// incomplete peak), not one sample fits or meets the bound, a batch the
/// model cannot be imported or split at.
llvm::Expected<MaxBatchRun> predictAtMaxBatch(const BatchSearchRequest &Req,
                                              const Report &Given,
                                              int64_t FromBatch);

/// --plan --max-batch: each layout of Plan (serveLayouts: not yet chosen)
/// searched from its estimate, its figures replaced by those at its batch
/// (ServingCandidate::AtMaxBatch), then the plan chooses
/// (chooseServingLayout). Base has no split; each layout's is placed on C
/// with Protocol. The chosen layout's run, with R.BatchSearch. Errors:
/// predictAtMaxBatch's, and no layout admitting one sample (each one's
/// smallest batch tried named).
llvm::Expected<MaxBatchRun> servePlanAtMaxBatch(const BatchSearchRequest &Base,
                                                const hw::Cluster &C,
                                                cost::CommProtocol Protocol,
                                                ServingPlan &Plan,
                                                int64_t FromBatch);

} // namespace perfc

#endif // PERFC_TOOLS_MAXBATCHSEARCH_H
