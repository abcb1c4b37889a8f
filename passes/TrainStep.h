//===- TrainStep.h - Training step time and memory for a strategy -*- C++ -*-//
//
// One training step (forward, backward, optimizer) of a model on a cluster
// under a given parallel strategy, as Megatron-LM runs it:
//  * the graph is costed per micro-batch (import it at the micro-batch
//    size); backward work and saved tensors come from passes/Backward.h,
//    kernels from passes/Fusion.h (BatchNormalization is not folded into
//    its convolution: it normalises with the batch's statistics, two passes
//    over its input forward and two over input and gradient backward;
//    TrainOptions::Unfused runs every op as its own kernel), blocks and
//    tensor-parallel roles from passes/Blocks.h;
//  * tensor parallelism divides the sharded work by tp and adds, per block
//    and micro-batch, an all-reduce of each row-parallel output (forward)
//    and of each column-parallel group's input gradient (backward); with
//    sequence parallelism each becomes a reduce-scatter plus an all-gather
//    and the replicated ops of the blocks are divided by tp too. Tensor-
//    parallel communication is exposed (Megatron does not overlap it);
//  * context parallelism divides every op's tokens by cp and passes the
//    attention's keys and values round a ring of cp ranks, each step
//    hidden behind one step's attention as far as it lasts;
//  * recomputation: selective reruns the attention cores' forward, full
//    reruns every block's forward (with its communication) in backward;
//  * pipeline parallelism splits the blocks into pp x vp contiguous chunks
//    (chunk c on stage c mod pp; the prologue joins the first chunk, the
//    epilogue the last), even by block count or balanced by predicted time;
//    the 1F1B schedule takes m x T for m micro-batches of the slowest
//    stage's time T, plus the other stages' times / vp to fill and drain
//    ((pp - 1) / vp x T on equal stages), plus two activation transfers per
//    micro-batch and chunk;
//  * data parallelism all-reduces the gradients (reduce-scatter and
//    all-gather of parameters under ZeRO >= 1), overlapped with the last
//    micro-batch's backward in buckets (costmodels/Overlap.h);
//  * the optimizer step is an elementwise pass over the device's shard;
//  * eager gradient accumulation (Unfused, several micro-batches): every
//    micro-batch after the first adds its gradients to the kept ones in a
//    pass of its own (both passes: passes/ModelStates.h).
// Memory per device: weights, gradients, optimizer states (fp32 master
// weights under mixed precision, Adam's two moments), divided by dp where
// ZeRO shards them; activations saved for backward times the micro-batches
// in flight on the stage under 1F1B (pp - s on stage s; interleaved:
// (vp - 1) pp + 2 (pp - s - 1) + 1 chunks).
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_TRAINSTEP_H
#define PERFC_PASSES_TRAINSTEP_H

#include "costmodels/Overlap.h"
#include "hwdb/Cluster.h"
#include "ir/DType.h"
#include "passes/Backward.h"
#include "passes/Blocks.h"
#include "passes/Fusion.h"
#include "passes/ModelStates.h"
#include "passes/Schedule.h"
#include "passes/TpSizes.h"
#include "passes/WorkPass.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace perfc {
namespace ir {
class Graph;
}

enum class Recompute : uint8_t { None, Selective, Full };
/// Which blocks full recomputation reruns (Megatron's --recompute-method
/// with --recompute-num-layers N): Uniform reruns every block, keeping the
/// input of each group of N consecutive blocks of a pipeline chunk (the
/// group's activations all live again while it is recomputed); Block
/// reruns only the first N blocks of each chunk, keeping each one's input,
/// and keeps the other blocks' activations as without recomputation.
enum class RecomputeMethod : uint8_t { Uniform, Block };
enum class Partition : uint8_t { Balanced, Even };
/// GPipe (Huang et al. 2019) runs all forwards, then all backwards: the
/// same bubble as 1F1B, every micro-batch's activations in flight.
enum class PipelineSchedule : uint8_t { OneFOneB, GPipe };
/// How context-parallel ranks exchange a sequence's attention inputs
/// (Megatron-Core's --cp-comm-type): Ring passes keys and values round the
/// ranks ("p2p", Transformer Engine's ring attention); AllToAll trades
/// tokens for heads before the attention core and back after it ("a2a",
/// DeepSpeed-Ulysses).
enum class ContextExchange : uint8_t { Ring, AllToAll };
const char *name(Recompute R);
const char *name(RecomputeMethod M);

/// One GPU type's share of an uneven data split (data parallelism across
/// GPU types, as AMP and Metis plan it): its replicas (tp devices each) and
/// the whole micro-batches each runs per step.
struct DataShare {
  std::string Device; ///< The GPU type (hwdb device name).
  unsigned Replicas = 0;
  unsigned MicroBatches = 0;
};

struct TrainOptions {
  unsigned Dp = 1, Tp = 1, Pp = 1, Vp = 1;
  /// Context parallelism (--cp): each sequence split over Cp ranks, as
  /// Megatron-Core runs it with Transformer Engine's ring attention (the
  /// "p2p" exchange, Liu et al. 2023): every op but the attention core works
  /// on S / Cp tokens; the attention core takes its queries' share against
  /// all S keys and values, which pass round the ring in Cp - 1 steps
  /// (their gradients too, in backward), each overlapped with one step's
  /// attention. The sequence is cut into 2 Cp chunks, rank r holding
  /// chunks r and 2 Cp - 1 - r, so causal work is even. Ranks are numbered
  /// tensor, context, data, pipeline (Megatron-Core's order); the gradients
  /// are reduced, and ZeRO shards, over the Dp x Cp ranks of a
  /// data-parallel group with its context ranks. Needs FlashAttention.
  /// Under ContextExchange::AllToAll (DeepSpeed-Ulysses, Jacobs et al.
  /// 2023) the attention core instead takes all S tokens of 1 / Cp of the
  /// heads: Q, K and V are exchanged all-to-all before it and its output
  /// after it (their gradients the other way in backward), on the
  /// critical path; it needs the heads (query and key/value), not 2 Cp
  /// chunks, to divide, and no FlashAttention.
  unsigned Cp = 1;
  ContextExchange CpComm = ContextExchange::Ring;
  /// Expert parallelism (--ep), Megatron-Core's expert-model-parallel
  /// size: each mixture of experts (BlockInfo::Expert) splits its E experts
  /// over Ep ranks of a data-parallel group with its context ranks (ranks
  /// numbered tensor, context, expert, data), which hold E / Ep experts
  /// each and run them on the tokens of all Ep ranks: the same work per
  /// rank under balanced routing, in products Ep times as tall. The tokens
  /// go to their experts and the results come back in an all-to-all each
  /// way (their gradients too, in backward), on the critical path, as
  /// Megatron-Core's all-to-all token dispatcher runs them. The experts'
  /// gradients are reduced, and ZeRO shards their states, over the Dp x Cp
  /// / Ep ranks that hold the same experts. Ep must divide Dp x Cp and
  /// every mixture's experts.
  unsigned Ep = 1;
  /// The tokens each expert processes over its balanced share T*k/E
  /// (--moe-capacity): Megatron-Core's --moe-expert-capacity-factor with
  /// --moe-pad-expert-input-to-capacity (every expert padded, or cut, to
  /// that capacity), or under dropless routing the busiest expert's load
  /// over the mean, which the step waits for. It scales the experts'
  /// products, the activations they keep and the all-to-alls' bytes; model
  /// FLOPs stay the routed tokens' (as Megatron counts them). 1: balanced.
  double ExpertCapacity = 1;
  bool SequenceParallel = false;
  int64_t MicroBatch = 1;  ///< Samples per micro-batch (the graph's batch).
  int64_t GlobalBatch = 0; ///< 0: MicroBatch x Dp (no accumulation).
  Recompute Recomp = Recompute::None;
  /// What selective recomputation recomputes (--recompute-modules;
  /// Megatron-Core's recompute_modules, BlockModule): the attention core
  /// by default. Each module's results are dropped after the forward and
  /// recomputed before its backward from the module's inputs, which are
  /// kept: its forward kernels run again (a fused kernel's members of
  /// another module excepted, their elementwise work alone), as do a row
  /// GEMM's tensor-parallel exchange and, for moe, the expert all-to-alls.
  /// Read only under Recompute::Selective.
  BlockModuleSet RecomputeModules = bit(BlockModule::CoreAttention);
  /// Which blocks full recomputation reruns, and N (--recompute-method,
  /// --recompute-num-layers; RecomputeMethod). Uniform with 1 is every
  /// block on its own, as Korthikanti et al. ran full recomputation. Read
  /// only under Recompute::Full; N is at least 1.
  RecomputeMethod Method = RecomputeMethod::Uniform;
  unsigned RecomputeNumLayers = 1;
  unsigned Zero = 0; ///< ZeRO stage 0..3.
  /// Arithmetic and activation storage type; 16-bit types mean mixed
  /// precision (fp32 master weights and gradients).
  ir::DType DType = ir::DType::F32;
  OptimizerKind Optimizer = OptimizerKind::Adam;
  Partition Split = Partition::Balanced;
  PipelineSchedule Schedule = PipelineSchedule::OneFOneB;
  /// PyTorch DDP's default gradient bucket.
  double BucketBytes = 25.0 * 1024 * 1024;
  /// The optimizer is a loop over parameter tensors, one kernel per
  /// elementwise op (BertAdam in NVIDIA's BERT run_squad.py for FP32/TF32,
  /// torch.optim's for-loop implementations), not one fused multi-tensor
  /// pass (apex FusedAdam, FusedLAMB): see perTensorOptimizerKernels.
  bool PerTensorOptimizer = false;
  /// Keep gradients in fp32 under mixed precision (Megatron-LM's main_grad
  /// buffers): 18 bytes of model states per parameter with Adam, not 16.
  bool Fp32Gradients = false;
  /// Gradient compression on the data-parallel exchange.
  cost::Compression GradCompression;
  /// The protocol of the tensor- and data-parallel collectives: Auto prices
  /// each as NCCL's own model picks it (costmodels/NcclTuning.h); LL, LL128
  /// or Simple pin one, as NCCL_PROTO does; AlphaBeta keeps the textbook
  /// forms (the link's latency per step, no library overhead).
  cost::CommProtocol Protocol = cost::CommProtocol::Auto;
  /// Overlap the tensor-parallel exchanges with the GEMMs they feed or
  /// follow, as Megatron-Core does with Transformer Engine's userbuffers
  /// (--tp-comm-overlap; needs SequenceParallel): each all-gather and
  /// reduce-scatter is split into Tp chunks pipelined against the
  /// column- or row-parallel GEMM, so of a block's exchanges in each
  /// direction only the first chunk (1/Tp) and what outlasts the block's
  /// tensor-parallel GEMMs stay exposed.
  bool TpCommOverlap = false;
  /// Under ZeRO 1 or 2, the updated parameters' all-gather overlapped with
  /// the next step's first forward, bucket by bucket, as Megatron-Core's
  /// distributed optimizer runs it with --overlap-param-gather
  /// (cost::overlapParameterGather); otherwise it follows the optimizer
  /// step, exposed.
  bool OverlapParamGather = false;
  /// Expert parallelism's all-to-alls run beside the compute of another
  /// micro-batch, as Megatron-Core's combined 1F1B schedule runs them
  /// (--overlap-moe-expert-parallel-comm; DeepSeek-V3's DualPipe likewise):
  /// the forward of one micro-batch is co-scheduled with the backward of
  /// another, each one's dispatch and combine hidden by the other's
  /// kernels. Per micro-batch only what outlasts its compute stays exposed,
  /// plus, once a step, the all-to-alls of the first forward and the last
  /// backward, which have no partner; one more micro-batch's activations
  /// are held. Needs Ep > 1, no full recomputation, mixed precision, and
  /// the interleaved schedule when Pp > 1 (Megatron-Core's checks).
  bool OverlapMoeExpertParallelComm = false;
  /// Run every op as its own kernel, as an eager framework does (PyTorch
  /// without torch.compile or hand-fused kernels: a convolution, its
  /// BatchNormalization, ReLU and residual Add are four kernels, each
  /// reading and writing its tensors). Off: elementwise chains fuse into
  /// their producer, as compiled or hand-fused training code (Megatron-LM's
  /// fused kernels, XLA) runs them. Used where predictTraining builds the
  /// analysis; an analysis passed in keeps the choice it was made with.
  bool Unfused = false;
  /// Attention as FlashAttention trains it (Dao et al. 2022, FlashAttention-2
  /// 2023): the core (Q.K^T, scale, mask, softmax, dropout, P.V) is one
  /// kernel forward and one backward; the scores never reach memory, so
  /// nothing of size s^2 is kept for backward (the output and the softmax's
  /// log-sum-exp are), and backward recomputes them: 2.5x the forward's
  /// FLOPs (five products of the forward's size against two). Selective
  /// recomputation then has nothing left to recompute. Used where
  /// predictTraining builds the analysis, like Unfused.
  bool FlashAttention = false;
  /// Layout the framework stores convolution activations in (see
  /// cost::TimeOptions::Layout): PyTorch's NCHW on a device whose
  /// tensor-core kernels want NHWC pays transposes around each convolution.
  hw::ConvLayout Layout = hw::ConvLayout::Native;
  /// Build TrainReport::Trace (the 1F1B timeline; --trace).
  bool Timeline = false;
  /// Fill TrainReport::CommExplain (--explain, the JSON's
  /// step.comm_explain). Off in the planner's inner loop: the explanations
  /// are formatted text.
  bool Explain = false;
  /// Blocks per pipeline chunk (pp x vp entries, each at least 1, summing
  /// to the model's blocks), as a planner chose them (for memory, or for
  /// stages on different GPU types); empty: Split decides.
  std::vector<unsigned> ChunkBlocks;
  /// Uneven data parallelism across GPU types (passes/MixedTypes'
  /// predictDataSplit; pp 1): Dp is the replicas' sum, GlobalBatch the sum
  /// of replicas x micro-batches x MicroBatch. Empty: every replica takes
  /// GlobalBatch / Dp.
  std::vector<DataShare> DataSplit;
  /// Samples per second one node's host input pipeline delivers (reading,
  /// decoding and augmenting on its CPUs, for all its ranks together); the
  /// loaders run ahead of the GPUs, so a step waits only when the node's
  /// share of the global batch takes longer to load than the step to train
  /// (see applyInputRate). 0: not modelled, the data is always ready.
  double InputSamplesPerSecond = 0;
};

/// Whether selective recomputation under O runs node Node again (its
/// module is among O.RecomputeModules).
inline bool selectivelyRecomputed(const TrainOptions &O, const BlockInfo &B,
                                  unsigned Node) {
  return O.Recomp == Recompute::Selective && Node < B.Modules.size() &&
         (B.Modules[Node] & O.RecomputeModules) != 0;
}

/// Whether full recomputation under O keeps other than every block's input
/// alone (the block method, or uniform groups of several blocks): what the
/// stage-split search (passes/MixedTypes.h) does not model.
inline bool groupedFullRecompute(const TrainOptions &O) {
  return O.Recomp == Recompute::Full &&
         (O.Method == RecomputeMethod::Block || O.RecomputeNumLayers > 1);
}

/// Whether O recomputes module M (selectively).
inline bool recomputesModule(const TrainOptions &O, BlockModule M) {
  return O.Recomp == Recompute::Selective && (O.RecomputeModules & bit(M)) != 0;
}

struct StageReport {
  unsigned Stage = 0;
  std::string Device; ///< The device it runs on (planners may mix types).
  std::vector<std::pair<unsigned, unsigned>> Chunks; ///< Blocks [first, last].
  unsigned Blocks = 0;
  /// Blocks whose forward full recomputation reruns (all of them but
  /// under RecomputeMethod::Block); 0 without full recomputation.
  unsigned RecomputedBlocks = 0;
  /// Per micro-batch on this device.
  double ForwardSeconds = 0, BackwardSeconds = 0, RecomputeSeconds = 0,
         TpCommSeconds = 0;
  double TpForwardSeconds = 0; ///< The forward's share of TpCommSeconds.
  /// Under TpCommOverlap: the exchanges' time hidden behind GEMMs (not in
  /// TpCommSeconds, which is what stays exposed).
  double TpOverlappedSeconds = 0;
  /// Context parallelism's key/value exchanges per micro-batch: what
  /// stays exposed (in microBatchSeconds), its forward share, and what the
  /// attention hides.
  double CpCommSeconds = 0, CpForwardSeconds = 0, CpOverlappedSeconds = 0;
  /// Expert parallelism's all-to-alls per micro-batch (exposed), and the
  /// forward's share; under OverlapMoeExpertParallelComm, what another
  /// micro-batch's compute hides (not in EpCommSeconds).
  double EpCommSeconds = 0, EpForwardSeconds = 0, EpOverlappedSeconds = 0;
  double Params = 0;       ///< Parameters held by one device of the stage.
  double ExpertParams = 0; ///< Of Params, the experts' (their E / Ep).
  double ParamTensors = 0; ///< The tensors they are in.
  double WeightsBytes = 0, GradientsBytes = 0, OptimizerBytes = 0,
         ActivationsBytes = 0, WorkspaceBytes = 0;
  unsigned InFlight = 0; ///< Chunk forwards whose activations are kept.
  double peakBytes() const {
    return WeightsBytes + GradientsBytes + OptimizerBytes + ActivationsBytes +
           WorkspaceBytes;
  }
  double microBatchSeconds() const {
    return ForwardSeconds + BackwardSeconds + RecomputeSeconds + TpCommSeconds +
           CpCommSeconds + EpCommSeconds;
  }
};

/// One GPU type's part of a step under an uneven data split.
struct DataShareReport {
  DataShare Share;
  /// Its replicas' step as if alone: micro-batches, the exposed gradient
  /// exchange over all replicas, the optimizer (the step waits for the
  /// slowest type).
  double StepSeconds = 0;
  double ComputeSeconds = 0; ///< Its kernels in a step.
  double PeakBytes = 0, CapacityBytes = 0;
};

struct TrainReport {
  unsigned Devices = 0;
  /// The model's blocks (passes/Blocks.h), what pipeline stages and full
  /// recomputation cut at, and whether structure found them (no node name
  /// numbers a layer).
  unsigned ModelBlocks = 0;
  bool BlocksFromStructure = false;
  int64_t MicroBatches = 0; ///< Per data-parallel rank and step.
  int64_t GlobalBatch = 0;
  double StepSeconds = 0;
  double ComputeSeconds = 0;     ///< Kernels of the slowest stage.
  double CommSeconds = 0;        ///< All communication of that stage.
  double ExposedCommSeconds = 0; ///< Communication not hidden by compute.
  double BubbleSeconds = 0;      ///< Pipeline fill and drain.
  double OptimizerSeconds = 0;
  /// Gradient accumulation as an eager framework runs it (a
  /// TrainingAnalysis made Unfused, more than one micro-batch): each
  /// micro-batch after the first adds its gradients to the kept ones in a
  /// pass of its own; per step, on the slowest stage. Part of
  /// ComputeSeconds.
  double GradAccumSeconds = 0;
  double SamplesPerSecond = 0;
  /// Model FLOPs per step (forward and backward, without recomputation,
  /// as Megatron-LM counts them) and per device and second.
  double ModelFlops = 0;
  double TflopsPerDevice = 0;
  double TpCommSeconds = 0, P2pSeconds = 0, DpCommSeconds = 0,
         DpExposedSeconds = 0;
  /// Under TpCommOverlap, the tensor-parallel exchanges' time hidden behind
  /// GEMMs (in CommSeconds, not in TpCommSeconds or the step's time).
  double TpOverlappedSeconds = 0;
  /// Under context parallelism, per step on the slowest stage: the ring
  /// exchanges of keys and values that the attention does not hide (in the
  /// step's time and ExposedCommSeconds), and those it hides (in
  /// CommSeconds only).
  double CpCommSeconds = 0, CpOverlappedSeconds = 0;
  /// Under expert parallelism, per step on the slowest stage: the
  /// all-to-alls that dispatch tokens to their experts and combine the
  /// results, and their gradients' (exposed: in the step's time).
  double EpCommSeconds = 0;
  /// Under OverlapMoeExpertParallelComm, the all-to-alls hidden behind
  /// another micro-batch's compute (in CommSeconds only).
  double EpOverlappedSeconds = 0;
  /// The experts' share of the data-parallel exchange (over the ranks
  /// holding the same experts; in DpCommSeconds and DpExposedSeconds).
  double DpExpertCommSeconds = 0;
  /// The data-parallel exchange's parts, for its explanation: the gradient
  /// bytes sent (after compression) and, under ZeRO, one reduce-scatter of
  /// them and one all-gather of the parameters (DpParamBytes).
  double DpWireBytes = 0, DpParamBytes = 0, DpScatterSeconds = 0,
         DpGatherSeconds = 0;
  /// Of one bucketed reduce-scatter, what outlasts the backward.
  double DpScatterExposedSeconds = 0;
  /// Of the parameters' all-gather (ZeRO 1, 2), what the step waits for:
  /// all of it, or under OverlapParamGather what the first forward waits
  /// for its DpGatherBuckets buckets.
  double DpGatherExposedSeconds = 0;
  unsigned DpGatherBuckets = 0;
  /// With TrainOptions::InputSamplesPerSecond: the busiest node's input
  /// pipeline per step, and whether it, not the GPUs, sets StepSeconds.
  double InputSeconds = 0;
  bool InputBound = false;
  /// How long the devices wait for it per step (InputSeconds minus the
  /// step they would take; 0 unless InputBound).
  double InputWaitSeconds = 0;
  std::vector<StageReport> Stages;
  unsigned PeakStage = 0;   ///< The stage with the most memory.
  double CapacityBytes = 0; ///< Of one device.
  bool Fits = true;
  std::string Device;
  /// Under TrainOptions::DataSplit: each type's part, in the split's order.
  std::vector<DataShareReport> DataSplit;
  /// With TrainOptions::Explain: each kind of exchange behind
  /// TpCommSeconds (per micro-batch of the slowest stage, with its count),
  /// P2pSeconds and DpCommSeconds (one bucket; the parameter all-gather
  /// under ZeRO), with the formula, sizes and link figures that price it
  /// (cost::collectiveTime's explanation). Homogeneous pipelines only.
  std::vector<std::string> CommExplain;
  /// With TrainOptions::Explain: how the peak stage's memory adds up (the
  /// bytes per parameter of each model state and the ZeRO divisor, the
  /// micro-batches in flight and the activations each keeps, the
  /// workspace), for --explain and the JSON's memory.explain.
  std::string MemoryExplain;
  /// With TrainOptions::Timeline: the step as scheduled (1F1B, interleaved
  /// with vp > 1).
  Timeline Trace;
  /// One micro-batch's backward through the kernel a node heads (its
  /// products' data and weight gradients, the fused members' gradients, or
  /// FlashAttention's backward kernel; recomputation not included), and
  /// the products and kernels behind it with their roofline formulas. 0
  /// and "" for nodes that head no kernel or need no gradient.
  struct NodeBackward {
    double Seconds = 0;
    std::string Explain;
    /// What recomputation runs again of the kernel before its backward
    /// (its forward, or its members' elementwise work), and why.
    double RecomputeSeconds = 0;
    std::string RecomputeExplain;
  };
  /// With TrainOptions::Explain, tp 1 and cp 1: by node index of the graph;
  /// their Seconds sum to the stages' BackwardSeconds, their
  /// RecomputeSeconds to the stages' RecomputeSeconds. Empty otherwise.
  std::vector<NodeBackward> NodeBackwards;

  const StageReport &peak() const { return Stages[PeakStage]; }
  /// Model-state bytes per parameter (weights, gradients, optimizer states
  /// after ZeRO's sharding): the same on every stage.
  double modelStateBytesPerParam() const {
    for (const StageReport &S : Stages)
      if (S.Params > 0)
        return (S.WeightsBytes + S.GradientsBytes + S.OptimizerBytes) /
               S.Params;
    return 0;
  }
};

/// Costs of one unit (prologue, block, epilogue) for one micro-batch on one
/// device.
struct UnitCost {
  double Forward = 0, Backward = 0, Recompute = 0, TpComm = 0, TpForward = 0;
  /// The forward and backward time of the unit's tensor-parallel GEMMs
  /// (column and row), what TpCommOverlap hides exchanges behind.
  double TpGemmForward = 0, TpGemmBackward = 0;
  /// Under TpCommOverlap: exchange time hidden behind those GEMMs; TpComm
  /// and TpForward keep what stays exposed.
  double TpOverlapped = 0;
  /// Context parallelism's exchanges (the ring's keys and values, or the
  /// all-to-alls around the attention core, and their gradients): exposed
  /// in all (recomputation's included), exposed in the forward, and hidden
  /// behind the attention (the ring only).
  double CpComm = 0, CpForward = 0, CpOverlapped = 0;
  /// Expert parallelism's all-to-alls (recomputation's included), and the
  /// forward's share.
  double EpComm = 0, EpForward = 0;
  double Params = 0;       ///< On one device (after tensor parallelism).
  double ExpertParams = 0; ///< Of Params, the experts' (after Ep).
  double ParamTensors = 0; ///< The tensors those parameters are in.
  double Saved = 0;        ///< Activation bytes kept for backward.
  double InputBytes = 0;   ///< Bytes entering the unit (full recompute).
  double Largest = 0;      ///< Largest activation (workspace).
  double total() const {
    return Forward + Backward + Recompute + TpComm + CpComm + EpComm;
  }
};

/// What training needs from a graph, independent of the strategy: work,
/// kernels, backward work and saved tensors, blocks and tensor-parallel
/// roles. A planner analyses each micro-batch size once and predicts many
/// strategies from it; the unit costs of each (cluster, tp, sp, recompute,
/// dtype, conv layout) are cached in it, so one analysis serves one thread at a
/// time.
class TrainingAnalysis {
public:
  /// Unfused: every op its own kernel (TrainOptions::Unfused);
  /// FlashAttention: the attention core as one kernel
  /// (TrainOptions::FlashAttention).
  explicit TrainingAnalysis(const ir::Graph &G, bool Unfused = false,
                            bool FlashAttention = false);
  const ir::Graph &graph() const { return *G; }

private:
  const ir::Graph *G;

public:
  bool Unfused = false;
  bool FlashAttention = false;
  GraphWork Work;
  BackwardInfo Back;
  KernelPlan Plan;
  BlockInfo Blocks;
  /// What a tensor-parallel degree must divide (TpSizes.h), and whether
  /// the graph has an attention core (selective recomputation and
  /// FlashAttention act on it alone): checked for every strategy.
  TpSplitSizes TpSizes;
  bool HasAttentionCore = false;
  /// Strategy-independent sums over the graph, computed once here rather
  /// than in every prediction (a planner predicts thousands of strategies
  /// per analysis): the largest floating-point tensor crossing each cut
  /// between units (CutBytes[u]: from units <= u to units > u), at 4 bytes
  /// an element (the training type scales it), and forward plus backward
  /// FLOPs of one micro-batch.
  std::vector<double> CutBytes;
  double FlopsPerMicroBatch = 0;

  /// What a pipeline sends between the stage ending at unit U and the
  /// next: CutBytes[U], 0 after the last unit (nothing follows it).
  double cutBytesAfter(unsigned U) const {
    return U + 1 < CutBytes.size() ? CutBytes[U] : 0;
  }

  using UnitKey = std::tuple<std::string, unsigned, bool, uint8_t, uint8_t,
                             uint8_t, uint8_t, bool, unsigned, uint8_t,
                             unsigned, double, BlockModuleSet>;
  mutable std::map<UnitKey, std::vector<UnitCost>> UnitCache;
  /// Unit costs depend on the strategy only through these. Costed: the
  /// recomputation they were costed with (full recomputation's block
  /// method merges the costs of Full, every block rerun, and None's).
  static UnitKey unitKey(const hw::Cluster &C, const TrainOptions &O,
                         Recompute Costed);
  static UnitKey unitKey(const hw::Cluster &C, const TrainOptions &O) {
    return unitKey(C, O, O.Recomp);
  }
  /// The unit costs a prediction on C under O cached; null before one ran.
  const std::vector<UnitCost> *cachedUnits(const hw::Cluster &C,
                                           const TrainOptions &O) const;
};

/// The host input pipeline's bound on a predicted step: each data-parallel
/// replica loads its samples on the node of its first stage, the replicas
/// spread evenly over the nodes the job spans (DevicesPerNode each), so the
/// busiest node loads GlobalBatch / min(dp, nodes) samples per step. When
/// that takes longer than the step, the step takes that long (the loaders
/// prefetch, so the two overlap otherwise). No-op without an input rate.
void applyInputRate(TrainReport &R, const TrainOptions &O,
                    unsigned DevicesPerNode);

/// The error for selective recomputation of a module (O.RecomputeModules)
/// that no node of the model is in (Found: BlockInfo::ModulesFound);
/// success otherwise.
llvm::Error recomputeModulesMissing(const TrainOptions &O,
                                    BlockModuleSet Found);
/// The error for context parallelism without FlashAttention (the step and
/// the planner refuse it alike).
llvm::Error contextParallelNeedsFlashAttention(unsigned Cp);
/// The error of --cp with --cp-comm a2a on a model without an attention
/// core.
llvm::Error headExchangeNeedsAttention(unsigned Cp);
/// The error of an expert-parallel degree Ep that does not divide a
/// mixture's Experts (the step and the planner refuse it alike).
llvm::Error expertsDoNotSplit(unsigned Ep, int64_t Experts);
/// Why Megatron-Core refuses TrainOptions::OverlapMoeExpertParallelComm
/// with O's recomputation, precision or pipeline schedule (the step's
/// error; the planner leaves the overlap off there); success where it
/// allows it.
llvm::Error expertOverlapRefusal(const TrainOptions &O);

/// Predicts one step from an analysis (the graph it was made from must
/// still exist).
llvm::Expected<TrainReport> predictTraining(const TrainingAnalysis &A,
                                            const hw::Cluster &C,
                                            const TrainOptions &O);

/// Predicts one step. Errors name the constraint that fails: more devices
/// than the cluster has, a global batch not divisible by dp x micro-batch,
/// blocks not divisible among pp x vp chunks for an even split, tensor
/// parallelism in a model without a column/row GEMM pattern.
llvm::Expected<TrainReport> predictTraining(const ir::Graph &G,
                                            const hw::Cluster &C,
                                            const TrainOptions &O);

} // namespace perfc

#endif // PERFC_PASSES_TRAINSTEP_H
