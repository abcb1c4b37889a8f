//===- Planner.h - The training planner (Z3 or exhaustive) ------*- C++ -*-===//
//
// Finds the parallel strategy with the lowest predicted step time that fits
// in every device's memory (ties: lower peak memory), for one model on one
// cluster and a global batch (issue 5).
//
// The search space is discrete and small enough to cost every point with
// the cost model (predictTraining): data, tensor and pipeline degrees whose
// product is the devices used, interleaving, micro-batch size, sequence
// parallelism, recomputation and ZeRO stage. Every candidate is evaluated
// first; Z3 then chooses among them under linear constraints only (one
// Boolean per candidate, exactly one true, the chosen memory at most the
// capacity, lexicographic minimum of integer nanoseconds then bytes), so
// that its answer is proven optimal over the enumerated space without any
// non-linear reasoning. `Exhaustive` picks the same minimum with a loop:
// the reference the Z3 planner is tested against.
//
// Pipeline stage boundaries: each (pp, vp) is split by predictTraining's
// balanced partition (contiguous block ranges, unequal where that balances
// time), or evenly with Partition::Even. Where the balanced split overflows
// a stage's memory (the first stage holds the prologue and the most
// micro-batches in flight under 1F1B), splitStages moves blocks so that
// every stage fits, at the least cost in time (vp 1).
//
// Mixed clusters (node groups of different GPU types, one type per group):
// each pipeline stage runs on one type, the types' stages contiguous in an
// order the search chooses, with unequal layer ranges (splitStages with
// each type's unit times and capacity) so that the faster GPUs take more
// layers and every stage fits its own memory, as AMP and Metis do. Every
// data-parallel group is one stage's replicas, so it is homogeneous and the
// replicas take equal batch shares: each replica is the same typed
// pipeline, balanced by layers rather than by batch (uneven batch shares
// would need pipelines of different shapes per replica, which the step's
// gradient all-reduce then waits for). A plan uses every device of each
// type it uses, or none (a homogeneous subset is a candidate too). The step
// is the 1F1B schedule simulated with per-stage times and per-boundary
// transfers (passes/Schedule).
//
// Mixed clusters, uneven data split (a second candidate family, pp 1):
// every device of two or more types runs a whole replica (tp devices each)
// and the types take unequal numbers of whole micro-batches
// (balanceDataSplit), so that the faster finish their share when the
// slower do; one gradient exchange over all replicas (predictDataSplit).
// It wins where the model fits one replica and a pipeline would add
// bubbles and activation transfers across types.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_PLANNER_H
#define PERFC_PASSES_PLANNER_H

#include "passes/Frameworks.h"
#include "passes/MixedTypes.h"
#include "passes/TrainStep.h"

#include "llvm/ADT/Optional.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace perfc {

/// Choices the user pinned; None: the planner chooses.
struct PlanFixed {
  llvm::Optional<unsigned> Dp, Tp, Pp, Vp, Zero;
  /// Context parallelism (searched where the analyses have FlashAttention;
  /// 1 otherwise).
  llvm::Optional<unsigned> Cp;
  /// How context ranks exchange (--cp-comm). Unpinned, the planner tries
  /// the ring and the all-to-all where FlashAttention runs, and without it
  /// the all-to-all where the base strategy's exchange is that (DeepSpeed's
  /// default; Transformer Engine's context parallelism needs fused
  /// attention).
  llvm::Optional<ContextExchange> CpComm;
  /// Expert parallelism (searched for models with mixtures of experts:
  /// powers of two dividing dp x cp and every mixture's experts; 1
  /// otherwise).
  llvm::Optional<unsigned> Ep;
  llvm::Optional<bool> Sp;
  llvm::Optional<int64_t> MicroBatch;
  llvm::Optional<Recompute> Recomp;
};

enum class PlannerKind : uint8_t { Z3, Exhaustive };
const char *name(PlannerKind K);

struct PlanRequest {
  /// The analysis of the model imported at a micro-batch size (the graph
  /// must stay alive while the planner runs; the planner asks for each size
  /// it considers, possibly more than once: cache them).
  std::function<llvm::Expected<const TrainingAnalysis *>(int64_t MicroBatch)>
      Analysis;
  const hw::Cluster *Cluster = nullptr;
  int64_t GlobalBatch = 0;
  /// Devices used (dp x tp x cp x pp); 0: every device of the cluster.
  unsigned Devices = 0;
  PlanFixed Fixed;
  /// What the search does not choose: dtype, optimizer, partition, bucket.
  TrainOptions Base;
  /// Tensor parallelism across nodes (by default a power of two dividing
  /// the devices of a node).
  bool AllowCrossNodeTp = false;
  /// What the cluster's capacities already lack for the runtime
  /// (--memory-reserve, hw::reserveMemory): named where no strategy fits.
  double MemoryReserveBytes = 0;
  /// Only strategies this framework runs (passes/Frameworks.h).
  Framework TargetFramework = Framework::Any;
  /// Micro-batch sizes searched first; then the largest is doubled while it
  /// beats every smaller size (up to GlobalBatch), unless Fixed pins one.
  std::vector<int64_t> MicroBatchSizes = {1, 2, 4, 8};
  PlannerKind Planner = PlannerKind::Z3;
  /// Bounds evaluation and solving; 0: none. When it runs out, the best
  /// plan found is returned, not proven optimal.
  double TimeLimitSeconds = 0;
  unsigned TopK = 1;
  bool Pareto = false;
  /// Progress on stderr when the search takes over a second (the CLI sets
  /// this when stderr is a terminal).
  bool Progress = false;
};

struct PlanCandidate {
  TrainOptions Options;
  /// Mixed clusters: the device of each stage; empty: the cluster's one.
  std::vector<std::string> StageDevices;
  double StepSeconds = 0;
  double PeakBytes = 0;
  int64_t TimeNs = 0; ///< What the planners compare: rounded nanoseconds,
  int64_t Bytes = 0;  ///< then rounded bytes.
  /// The least free memory over the stages (their devices may differ).
  int64_t HeadroomBytes = 0;
};

struct PlanResult {
  TrainOptions Options; ///< The plan.
  TrainReport Report;   ///< Its prediction (stages, memory).
  /// Mixed clusters: the device of each stage (predictMixed); empty: the
  /// cluster's one device type (predictTraining).
  std::vector<std::string> StageDevices;
  /// Proven optimal over the enumerated space: Z3 finished (or the
  /// exhaustive loop saw every candidate) within the time limit.
  bool Optimal = false;
  bool TimedOut = false;
  PlannerKind Planner = PlannerKind::Z3;
  Framework TargetFramework = Framework::Any; ///< As requested.
  uint64_t Space = 0;                         ///< Candidates enumerated.
  uint64_t Candidates = 0; ///< Evaluated with the cost model.
  uint64_t Feasible = 0;   ///< Evaluated and fitting in memory.
  /// Candidates given to Z3: the feasible ones no other beats in both time
  /// and memory.
  uint64_t SolverInput = 0;
  double EvaluateSeconds = 0, SolveSeconds = 0;
  std::vector<PlanCandidate> Top;    ///< The TopK best, best first.
  std::vector<PlanCandidate> Pareto; ///< Time/memory front, fastest first.
};

/// Plans a training step. Errors are one line naming the constraint that
/// fails: more devices than the cluster has, an impossible pinned degree, a
/// model that fits nowhere (with what the smallest candidate needs).
llvm::Expected<PlanResult> planTraining(const PlanRequest &R);

} // namespace perfc

#endif // PERFC_PASSES_PLANNER_H
