//===- ServingPlan.h - The fastest layout that serves a model ---*- C++ -*-===//
//
// perfc --plan without --train: one inference step (a prefill or a decoding
// step, whatever the graph is) predicted whole on one device, split
// Megatron-style over tp devices (PredictOptions::TensorParallel) and, for a
// mixture of experts, served expert-parallel over ep devices
// (PredictOptions::ExpertParallel), for every power of two up to the devices
// allowed. The fastest layout whose per-device memory fits is chosen, the
// one with fewer devices on a tie. A handful of layouts, each predicted in
// full: there is nothing for a solver to prune.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_SERVINGPLAN_H
#define PERFC_PASSES_SERVINGPLAN_H

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
  /// with AllowCrossNodeTp), else at most that many.
  unsigned Devices = 0;
  /// Tensor parallelism across nodes (over InfiniBand, as no serving
  /// system runs it by default); expert parallelism may always span them.
  bool AllowCrossNodeTp = false;
  cost::CommProtocol Protocol = cost::CommProtocol::Auto;
};

/// Predicts every layout and chooses. Errors: no cluster, Devices above the
/// cluster's, and no layout fitting (naming the one that came closest).
llvm::Expected<ServingPlan> planServing(const ir::Graph &G,
                                        const ServingRequest &R);

} // namespace perfc

#endif // PERFC_PASSES_SERVINGPLAN_H
