//===- InferenceRun.h - A prediction in its layout, at its batch -*- C++
//-*-===//
//
// The steps the perfc tool and the library API (makePrediction) both take
// from an imported model to its report: the layout a serving plan chooses
// (--plan without --train; the API's servePlan) or the split given (--tp,
// --ep, --pp), its devices placed (placeSplit) and its graph analysed
// (analyzeSplit), the prediction, and with --max-batch (maxBatch) the
// search for the largest batch, whose run becomes the report. A training
// step's forward and a whole model take the prediction alone. One
// function, so that the two front ends cannot drift apart; each keeps its
// own option checks and their wording.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_INFERENCERUN_H
#define PERFC_TOOLS_INFERENCERUN_H

#include "passes/ServingPlan.h"
#include "tools/MaxBatchSearch.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace perfc {

struct InferenceRequest {
  /// Names the model in messages; the caller's string outlives the call.
  llvm::StringRef ModelPath;
  const ir::Graph *Graph = nullptr; ///< As imported.
  /// The device set, no split (placed here); Split is set here too.
  PredictOptions Options;
  /// Null without hardware: then a whole model, no plan, no search.
  const hw::Cluster *Cluster = nullptr;
  cost::CommProtocol Protocol = cost::CommProtocol::Auto;
  /// The split given; a serving plan's choice replaces it.
  SplitDegrees Degrees;
  SplitOptionNames Names;
  /// A serving plan: its Devices, AllowCrossNodeTp, Objective and
  /// MaxLatencySeconds (Cluster, Base and Protocol are the request's).
  /// With MaxBatch every layout is searched at its own largest batch, the
  /// plan choosing by throughput under MaxLatencySeconds.
  llvm::Optional<ServingRequest> Serve;
  /// --max-batch (the model imported again through ImportAt at each batch
  /// tried), under --max-latency where MaxLatencySeconds is set.
  bool MaxBatch = false;
  llvm::Optional<double> MaxLatencySeconds;
  ImportAtBatch ImportAt;
};

/// The report (R.Serving the plan's, R.BatchSearch the search's) and what
/// it was predicted from where that is not the model given.
struct InferenceRun {
  Report R;
  /// The layout predicted: the one given or the plan's choice.
  SplitDegrees Degrees;
  /// With MaxBatch: the model imported at the batch found, which the rest
  /// of the report describes; null otherwise.
  std::unique_ptr<frontend::ImportedModel> Model;
  /// The split's analysis of the graph predicted (null for a whole model).
  std::unique_ptr<InferenceSplit> Split;
};

/// Errors, one line each: the plan's and the split's (prefixed with the
/// model's path), placeSplit's, and the search's (which name the model).
llvm::Expected<InferenceRun> predictInference(InferenceRequest Req);

} // namespace perfc

#endif // PERFC_TOOLS_INFERENCERUN_H
