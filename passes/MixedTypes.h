//===- MixedTypes.h - Training on clusters of several GPU types -*- C++ -*-===//
//
// What the planner (passes/Planner.h) needs to predict a training step on
// a cluster whose node groups hold different GPU types, one type per group:
//  * pipeline stages on types (predictMixed): each type's stages predicted
//    on that type, the step the 1F1B schedule of the stages' times, layers
//    split so that faster GPUs take more and every stage fits its memory
//    (splitStages), as AMP and Metis do;
//  * an uneven data split (predictDataSplit, balanceDataSplit): whole
//    replicas on every type taking unequal numbers of micro-batches
//    (splitData), one gradient exchange over all of them.
// splitStages also serves homogeneous clusters whose balanced split
// overflows a stage's memory.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_MIXEDTYPES_H
#define PERFC_PASSES_MIXEDTYPES_H

#include "passes/TrainStep.h"

#include "llvm/ADT/Optional.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace perfc {

/// One GPU type of a mixed cluster.
struct GpuType {
  std::shared_ptr<const hw::Device> Dev;
  unsigned Devices = 0;
  unsigned PerNode = 0;           ///< The fewest per node among its groups.
  const hw::NodeGroup *Group = 0; ///< Its first node group: links.
};

/// The cluster's GPU types in the order their node groups first name them;
/// an error when a node group holds several device kinds.
llvm::Expected<std::vector<GpuType>> gpuTypes(const hw::Cluster &C);

/// One pipeline stage as the stage-split search sees it.
struct StageSpec {
  /// Unit costs on the stage's device (prologue, blocks, epilogue).
  const std::vector<UnitCost> *Units = nullptr;
  double CapacityBytes = 0;
  unsigned InFlight = 1; ///< Micro-batches whose activations it keeps.
};

/// Memory of a stage as predictTraining counts it (vp 1): model states
/// BytesPerParam x parameters, activations saved per micro-batch in flight
/// (only block inputs and one block's under full recomputation), and the
/// largest activation as workspace.
struct StageMemory {
  double BytesPerParam = 0;
  Recompute Recomp = Recompute::None;
};

/// Blocks per stage (Stages.size() contiguous ranges; the prologue joins
/// the first, the epilogue the last) minimising the slowest stage's time
/// per micro-batch with every stage within its capacity; None when no split
/// fits. A binary search on the time bound over a greedy fill that gives
/// each stage as many blocks as fit (optimal: both bounds only grow with a
/// range).
llvm::Optional<std::vector<unsigned>>
splitStages(const std::vector<StageSpec> &Stages, unsigned NumBlocks,
            const StageMemory &Mem);

/// Predicts a step whose stage s runs on the cluster's device named
/// StageDevices[s] (O.Pp entries, vp 1, 1F1B): each type's stages are
/// predicted on that type (its node group, links and capacity), the step
/// is the 1F1B schedule of their times with the transfers between
/// neighbours (across types over the slower inter-node link), plus the
/// largest exposed data-parallel exchange and optimizer step among the
/// types. Without O.ChunkBlocks the layers are split by splitStages (by
/// time alone when no split fits). Report: Stages[s].Device, Fits when
/// every stage fits its own device, CapacityBytes of the peak stage's.
llvm::Expected<TrainReport>
predictMixed(const TrainingAnalysis &A, const hw::Cluster &C,
             const TrainOptions &O,
             const std::vector<std::string> &StageDevices);

/// Uneven data split (data parallelism across GPU types, as AMP and
/// Metis): each of Replicas[g] replicas of type g takes Micro[g] whole
/// micro-batches (so one micro-batch size for all, and each type its own
/// accumulation count), every type at least one, sum_g Replicas[g] x
/// Micro[g] == MicroBatches, minimising max_g TimeOf(g, Micro[g]).
/// TimeOf must not decrease with the count. Exact: a binary search on the
/// time bound over a reachable-sum table (an exact total is a bounded
/// subset sum, which a greedy fill can miss). None when no split exists.
llvm::Optional<std::vector<unsigned>>
splitData(const std::vector<unsigned> &Replicas, unsigned MicroBatches,
          const std::function<double(unsigned Type, unsigned Micro)> &TimeOf);

/// Predicts a step under O.DataSplit (pp 1, vp 1): the replicas of each
/// type run their own micro-batches, then all O.Dp replicas exchange
/// gradients in one data-parallel group. Each type is predicted by
/// predictTraining on its own node group with dp = O.Dp (its tensor-
/// parallel links, the exchange's ring over as many nodes, ZeRO sharding
/// over every replica), the inter-node link replaced by the slowest among
/// the types (the ring crosses between them), and its micro-batch count;
/// the step is the slowest type's (everyone waits for the exchange).
/// Report: the step and its parts are the slowest type's; Stages,
/// MicroBatches and CapacityBytes the type with the least free memory
/// (Fits: every type fits its own device); DataSplit each type's.
llvm::Expected<TrainReport> predictDataSplit(const TrainingAnalysis &A,
                                             const hw::Cluster &C,
                                             const TrainOptions &O);

/// Chooses O.DataSplit's micro-batch counts (the types' replicas given):
/// splitData over each type's step time, which at pp 1 is affine in its
/// micro-batch count (micro-batches x their time, plus the exchange's
/// exposed tail and the optimizer), measured from two predictions.
/// O.GlobalBatch / O.MicroBatch micro-batches in all; an error when they
/// cannot give every replica at least one.
llvm::Error balanceDataSplit(const TrainingAnalysis &A, const hw::Cluster &C,
                             TrainOptions &O);

/// Whether the cluster's node groups hold more than one device type.
bool isMixedCluster(const hw::Cluster &C);

/// Success unless a node of C holds several kinds of processor (a SoC:
/// CPU, GPU and NPU in one node), where training has no meaning as one
/// strategy; the error names them and the one to train on alone.
llvm::Error checkTrainable(const hw::Cluster &C);

} // namespace perfc

#endif // PERFC_PASSES_MIXEDTYPES_H
