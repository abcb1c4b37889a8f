//===- ServingPlan.h - The fastest layout that serves a model ---*- C++ -*-===//
//
// perfc --plan without --train: one inference step (a prefill or a decoding
// step, whatever the graph is) predicted whole on one device, split
// Megatron-style over tp devices (PredictOptions::TensorParallel) and, for a
// mixture of experts, served expert-parallel over ep devices
// (PredictOptions::ExpertParallel), for every power of two up to the devices
// allowed; where the whole model or a tp degree does not fit, 2, 4, ...
// pipeline stages of it (PredictOptions::PipelineParallel, across nodes)
// until one fits (every count, where layouts are compared at their own
// largest batches). Of the layouts whose per-device memory fits (and, given a
// latency bound, that meet it), the fastest is chosen, or under the
// throughput objective the one serving the most samples per second per
// device (the fewest device-seconds per step; with stages, per slowest
// stage), the faster on a tie; on a
// tie still, the one with fewer devices. A handful of layouts, each
// predicted in full: there is nothing for a solver to prune.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_SERVINGPLAN_H
#define PERFC_PASSES_SERVINGPLAN_H

#include "passes/InferenceLayout.h"
#include "passes/Predict.h"

#include "llvm/Support/Error.h"

namespace perfc {
namespace hw {
struct Cluster;
}

struct ServingRequest {
  const hw::Cluster *Cluster = nullptr;
  /// The options every layout is predicted with (Device set; no split).
  PredictOptions Base;
  /// Devices a layout may use: 0 for the first node's (all of the cluster's
  /// with AllowCrossNodeTp, and for layouts with pipeline stages), else at
  /// most that many.
  unsigned Devices = 0;
  /// Tensor parallelism across nodes (over InfiniBand, as no serving
  /// system runs it by default); expert parallelism may always span them.
  bool AllowCrossNodeTp = false;
  cost::CommProtocol Protocol = cost::CommProtocol::Auto;
  ServingObjective Objective = ServingObjective::Latency;
  /// A layout slower than this is not chosen (--max-latency); positive.
  llvm::Optional<double> MaxLatencySeconds;
  /// Pipeline stages of every tensor-parallel degree of one node, 2, 4, ...
  /// up to the devices, whether or not fewer stages fit (--max-batch): at
  /// each layout's own largest batch, more stages hold more samples per
  /// device (each holds its share of the weights), which at one batch
  /// they cannot serve faster.
  bool EveryPipelineDegree = false;
};

/// The split layout C makes: tp Devices / Stages or ep Devices, and Stages
/// pipeline stages.
SplitDegrees degreesOf(const ServingCandidate &C);

/// C's latency, interval (the slowest stage's time with stages), per-device
/// memory and fit from R, a prediction of its layout.
void setServingFigures(ServingCandidate &C, const Report &R);

/// The objective named S ("latency", "throughput"); None for another name.
llvm::Optional<ServingObjective> servingObjectiveNamed(llvm::StringRef S);

/// Predicts every layout and chooses (serveLayouts, then
/// chooseServingLayout), with the errors of both.
llvm::Expected<ServingPlan> planServing(const ir::Graph &G,
                                        const ServingRequest &R);

/// Predicts every layout, choosing none yet. Errors: no cluster, Devices
/// above the cluster's, a latency bound that is not a positive time.
llvm::Expected<ServingPlan> serveLayouts(const ir::Graph &G,
                                         const ServingRequest &R);

/// Sets P.Chosen by P.Objective among the layouts that fit and meet
/// P.MaxLatencySeconds (with P.AtMaxBatch, only those searched: each at
/// its own batch, compared by device-seconds a sample). Errors: no layout
/// fitting (naming the one that came closest), none of those that fit
/// meeting the bound (naming the fastest).
llvm::Error chooseServingLayout(ServingPlan &P);

} // namespace perfc

#endif // PERFC_PASSES_SERVINGPLAN_H
