//===- Report.h - What perfc predicts for one model ------------*- C++ -*-===//
//
// The result of running the passes over a model: per-node and total work,
// and, when a device is given, time. Printers (tools/) and the library API
// turn it into a table, JSON or Python data; nothing here formats text.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_REPORT_H
#define PERFC_PASSES_REPORT_H

#include "costmodels/OpWork.h"
#include "ir/Warning.h"
#include "passes/InferenceMemory.h"
#include "passes/Planner.h"
#include "passes/TrainStep.h"

#include "llvm/ADT/Optional.h"

#include <string>
#include <vector>

namespace perfc {

/// Time of one node on the chosen device, with where it came from.
struct NodeTime {
  double Seconds = 0;
  double ComputeSeconds = 0;
  double MemorySeconds = 0;
  double OverheadSeconds = 0;
  /// Transposes to the tensor-core layout and back (cost::OpTime::
  /// LayoutSeconds); Seconds = max(compute, memory) + overhead + this.
  double LayoutSeconds = 0;
  /// CPU convolutions off the runtime's channel blocks: the im2col copy
  /// (cost::OpTime::Im2colSeconds), also added to Seconds.
  double Im2colSeconds = 0;
  /// CPU (ONNX Runtime's NCHWc layout, passes/CpuLayout.h): reorders of
  /// this kernel's inputs between the blocked and the plain layout (and of
  /// a graph output it writes), kernels of their own; in Seconds.
  double ReorderSeconds = 0;
  unsigned Reorders = 0;
  /// Training under the FP8 recipe (passes/Fp8Recipe.h): the cast of this
  /// FP8 GEMM's activation operand, a kernel of its own before it; in
  /// Seconds.
  double Fp8CastSeconds = 0;
  /// Tensor-parallel inference (--tp): the all-reduce (row-parallel GEMM,
  /// vocabulary-parallel embedding) or all-gather (vocabulary-parallel
  /// logits) of this kernel's output over the ranks, which follows it on
  /// the same stream. Not in Seconds; in the report's latency.
  double TpCommSeconds = 0;
  /// Winograd's divisor of the products' FLOPs (cost::OpTime); 1: none.
  double WinogradReduction = 1;
  /// "compute", "memory" or "overhead" for a kernel; "none" for nodes that
  /// take no time of their own (views, folded and fused nodes).
  std::string Bound;
  std::string Explain; ///< The roofline formula with its numbers.
  /// How the node runs: "kernel" (heads a kernel), "fused" (inside the
  /// kernel of FusedInto, whose time includes it), "view" or "folded"
  /// (computed at load time from constants).
  std::string Exec = "kernel";
  std::string FusedInto; ///< Head node of the kernel, for "fused".
  double PeakFlops = 0;  ///< Peak of the unit used (FLOP/s or op/s).
  double ComputeEfficiency = 0;
  /// Bandwidth of the memory level the kernel ran from (bytes/s).
  double Bandwidth = 0;
  /// That level where it is a cache ("L2"), empty for main memory.
  std::string MemoryLevel;
  double MemoryEfficiency = 0;
  std::string Unit;        ///< Compute unit ("tensor", "simd", ...).
  std::string ComputeType; ///< Type the arithmetic ran in.
  bool Unsupported = false;
};

struct NodeReport {
  std::string Name;
  std::string Op;
  std::string OutputShape; ///< Of the first output, e.g. "[1, 64, 112, 112]".
  OpWork Work;
  llvm::Optional<NodeTime> Time;
  /// With --place: the processor its kernel runs on ("" for views and
  /// folded nodes, and without --place).
  std::string Device;
};

struct TensorInfo {
  std::string Name;
  std::string DType;
  std::string Shape;
};

struct ModelInfo {
  std::string Name;
  std::string Path;
  std::string GraphName;
  std::string Producer;
  int64_t IrVersion = 0;
  int64_t Opset = 0;
  uint64_t FileBytes = 0;
  uint64_t WeightBytesSkipped = 0;
  std::vector<TensorInfo> Inputs;
  std::vector<TensorInfo> Outputs;
  std::vector<std::pair<std::string, int64_t>> Bindings;
};

struct HardwareInfo {
  std::string Name;        ///< As given to --hw.
  std::string Device;      ///< The device the model runs on.
  std::string Source;      ///< Bundled name or file path.
  std::string ComputeType; ///< --compute-type, or "" for the model's own.
  /// --launch-overhead: the per-kernel cost that replaced the description's.
  llvm::Optional<double> LaunchOverheadSeconds;
  /// --memory-reserve: bytes taken from each device's memory for the
  /// runtime (the capacities reported are what is left).
  llvm::Optional<double> MemoryReserveBytes;
  /// The type tensors were stored in (--storage-type, or mixed-precision
  /// training's), "" for the model's own.
  std::string StorageType;
  /// --conv-layout where not native ("nchw", "nhwc"); "" for native.
  std::string ConvLayout;
  /// --flash-attention in inference: causal attention kernels skip the
  /// blocks above the diagonal (a training step reports it in its
  /// strategy).
  bool FlashAttention = false;
};

/// How the nodes ran, with a device.
struct KernelSummary {
  unsigned Kernels = 0; ///< Launches.
  /// Kernels running an attention core (softmax(Q.K^T).V) as one.
  unsigned AttentionKernels = 0;
  unsigned Fused = 0; ///< Nodes fused into another node's kernel.
  unsigned Views = 0;
  unsigned Folded = 0;
  /// Bytes the kernels read from memory and write to it: each kernel's
  /// inputs from outside it and its outputs, at the stored types; what the
  /// roofline priced. Less than the nodes' summed bytes wherever fusion
  /// keeps an intermediate on chip (layout transposes and NCHWc reorders,
  /// priced as time of their own, are not in it).
  double KernelBytes = 0;
  /// Seconds per bound (compute, memory, overhead) over the kernels.
  double ComputeBoundSeconds = 0, MemoryBoundSeconds = 0,
         OverheadBoundSeconds = 0;
};

/// With --place: the kernels on the processors of a SoC
/// (passes/Placement.h).
struct PlacementReport {
  std::vector<std::string> Devices;
  /// Head node of each kernel and its processor, in run order.
  std::vector<std::pair<std::string, std::string>> Assignment;
  double LatencySeconds = 0; ///< Kernels plus transfers.
  double TransferSeconds = 0;
  double TransferBytes = 0;
  unsigned Transfers = 0;
  /// Per device (as Devices): kernels, their seconds, and the whole model
  /// on that device alone (+infinity where some kernel cannot run there).
  std::vector<unsigned> KernelsPerDevice;
  std::vector<double> SecondsPerDevice;
  std::vector<double> SingleDeviceSeconds;
  bool Optimal = false;
  double SolveSeconds = 0;
  std::string Method; ///< "z3", "chain-dp", "heuristic", ...
};

/// With a device, for inference: what one run holds at its peak
/// (passes/InferenceMemory.h) against the device's main memory.
struct InferenceMemoryReport {
  InferenceMemory Usage;
  std::string PeakAt; ///< Head node of the kernel at the peak.
  std::string Device;
  double CapacityBytes = 0; ///< The device's main memory.
  bool Fits = true;
  /// The largest batch (the first input's leading dimension) whose run
  /// fits CapacityBytes, everything but the weights growing in proportion
  /// to it (maxBatch in Predict.h); none where the graph has no batch, the
  /// device no capacity or the peak is a lower bound.
  llvm::Optional<uint64_t> MaxBatch;
  /// Bytes one sample adds: (peak - weights) / batch.
  double BytesPerSample = 0;
  std::string Explain; ///< How the peak adds up (with Explain).
};

/// One batch perfc --max-batch predicted at, and whether its run fit.
struct BatchProbe {
  int64_t Batch = 0;
  bool Fits = false; ///< Its run fits in memory.
  /// Its step's latency (with stages, one batch's pass through them).
  double LatencySeconds = 0;
  /// With --max-latency: whether LatencySeconds is within it.
  llvm::Optional<bool> MeetsLatency;
  /// Whether the search counts the batch as served: it fits, and meets the
  /// latency bound where there is one.
  bool admitted() const { return Fits && MeetsLatency.getValueOr(true); }
};

/// perfc --max-batch: the report is predicted at the largest batch whose
/// run fits, found by predicting at the estimate from the model's own
/// batch (InferenceMemoryReport::MaxBatch) and around it
/// (passes/MaxBatch.h).
struct BatchSearchReport {
  int64_t Batch = 0;     ///< The largest that fits: the report's.
  int64_t FromBatch = 0; ///< The model's own, the estimate's basis.
  uint64_t Estimate = 0; ///< The estimate at FromBatch.
  int64_t Limit = 0;     ///< The largest batch the search would try.
  /// With --max-latency: the bound each batch's step must meet too.
  llvm::Optional<double> MaxLatencySeconds;
  std::vector<BatchProbe> Tried; ///< In order.
};

/// With --tp N for inference: the model split over N devices as Megatron-LM,
/// TensorRT-LLM and vLLM split it (passes/TpShard.h). The nodes' times and
/// the memory are one rank's; the latency adds the exchanges, which run on
/// the kernels' stream (none overlaps a kernel).
struct TensorParallelReport {
  unsigned Degree = 1;
  std::string Link;        ///< The link the ranks exchange over.
  unsigned AllReduces = 0; ///< Row-parallel outputs, embedding lookups.
  unsigned AllGathers = 0; ///< Vocabulary-parallel logits.
  double AllReduceBytes = 0, AllGatherBytes = 0; ///< Summed, per rank.
  double KernelSeconds = 0;                      ///< One rank's kernels.
  double CommSeconds = 0;                        ///< The exchanges.
  std::string Explain; ///< The rule and the largest exchange's formula.
};

/// With --ep N for inference: a mixture-of-experts model served over N
/// devices as SGLang (--enable-dp-attention with --ep-size) and vLLM
/// (data parallelism with --enable-expert-parallel) serve DeepSeek and
/// Mixtral: each rank runs attention and the dense layers on 1/N of the
/// batch with all their weights, and holds 1/N of each mixture's experts,
/// to which every rank's tokens go and from which they come back in an
/// all-to-all each way. The nodes' times and the memory are one rank's.
struct ExpertParallelReport {
  unsigned Degree = 1;
  std::string Link;         ///< The link the ranks exchange over.
  unsigned AllToAlls = 0;   ///< Two per mixture: dispatch and combine.
  double AllToAllBytes = 0; ///< Summed, one rank's buffers.
  double KernelSeconds = 0; ///< One rank's kernels.
  double CommSeconds = 0;   ///< The all-to-alls.
  std::string Explain;      ///< The rule and the largest exchange's formula.
};

/// One stage of pipeline-parallel inference (PipelineParallelReport).
struct PipelineStageReport {
  /// The blocks it holds, 1-based and inclusive (the prologue goes with the
  /// first stage, the epilogue with the last), and their names.
  unsigned FirstBlock = 0, LastBlock = 0;
  std::string FirstBlockName, LastBlockName;
  unsigned Kernels = 0;
  /// Its kernels and their tensor-parallel exchanges, one rank's.
  double KernelSeconds = 0;
  /// What each of its ranks sends the next stage (none for the last), and
  /// the send's time, on the stage's stream after its kernels.
  double SendBytes = 0;
  double SendSeconds = 0;
  std::string SendLink;
  /// One rank's memory with every in-flight batch's inputs
  /// (Memory.Usage.PeakBytes includes them and the activations received
  /// from the stage before); no explanation.
  InferenceMemoryReport Memory;
  double InFlightInputsBytes = 0; ///< The other batches' inputs held.
  double ReceivedBytes = 0;       ///< What the stage before sends it.

  double seconds() const { return KernelSeconds + SendSeconds; }
};

/// With --pp N for inference (passes/PipelineInference.h): the blocks split
/// into N stages, each on its own devices (a tensor-parallel group with
/// --tp), as vLLM, TensorRT-LLM and SGLang serve a model larger than a node.
/// The report's latency is one batch's pass through every stage; the
/// nodes' times are their stage's rank's; the memory is the fullest stage's.
struct PipelineParallelReport {
  unsigned Degree = 1;
  std::vector<PipelineStageReport> Stages;
  /// One batch through every stage: the stages' kernels and sends.
  double LatencySeconds = 0;
  /// The slowest stage's time: a batch completes a step this often.
  double IntervalSeconds = 0;
  double Samples = 1; ///< Per batch: samplesPerStep.
  /// The stage whose memory is the report's (the largest peak), 0-based.
  unsigned FullestStage = 0;
  /// Per node of the graph, its stage.
  std::vector<unsigned> NodeStage;
  std::string Explain; ///< The rule and the split.

  /// Batches in the pipeline at once: one per stage.
  unsigned inFlight() const { return Degree; }
  double samplesPerSecond() const {
    return IntervalSeconds > 0 ? Samples / IntervalSeconds : 0;
  }
};

/// perfc --plan without --train (passes/ServingPlan.h): the layouts one
/// inference step was predicted in, and the one chosen.
enum class ServingSplit : uint8_t { Whole, Tensor, Expert };
/// "whole", "tp", "ep": the CLI's flags for them.
const char *name(ServingSplit S);

/// One layout, predicted.
struct ServingCandidate {
  ServingSplit Split = ServingSplit::Whole;
  /// All of them: Split's degree (1 when whole) times Stages.
  unsigned Devices = 1;
  /// Pipeline stages (--pp), each on Devices / Stages of them.
  unsigned Stages = 1;
  double LatencySeconds = 0;
  /// How often a step completes: the latency, or with stages the slowest
  /// stage's time (Stages batches in flight).
  double IntervalSeconds = 0;
  double PeakBytes = 0;     ///< Per device.
  double CapacityBytes = 0; ///< One device's (after any reserve).
  bool Fits = false;
  /// The largest batch that fits (InferenceMemoryReport::MaxBatch).
  llvm::Optional<uint64_t> MaxBatch;
  /// Samples one step serves: the batch the figures above are for.
  double Samples = 1;
  /// With --max-batch: the figures are the run's at the largest batch that
  /// fits and meets --max-latency (Samples), found by predicting; false
  /// where not one sample is (the figures stay the model's batch's).
  bool AtMaxBatch = false;
  /// Samples a step serves per interval (0 without an interval).
  double samplesPerSecond() const {
    return IntervalSeconds > 0 ? Samples / IntervalSeconds : 0;
  }
};
/// "whole", or the split's flag and degree ("tp 4"), with stages "pp 2" or
/// "tp 8 pp 2", as tables and errors name a layout.
std::string name(const ServingCandidate &C);

/// What a serving plan chooses for (--objective): the lowest latency (one
/// request's wait), or the most samples per second per device (the
/// fewest device-seconds a sample: a deployment's cost), among the layouts
/// that fit and meet --max-latency.
enum class ServingObjective : uint8_t { Latency, Throughput };
/// "latency", "throughput".
const char *name(ServingObjective O);

struct ServingPlan {
  /// Devices ascending; at each count whole (1 only), tp, ep.
  std::vector<ServingCandidate> Candidates;
  /// Index in Candidates of the chosen layout; none when nothing fits.
  llvm::Optional<size_t> Chosen;
  /// Why the smallest refused degree of each split (and so its
  /// multiples) was not tried.
  std::vector<std::string> Skipped;
  /// Samples one step serves: the first input's leading dimension (the
  /// batch; a decoding step's sequences), 1 where it has none.
  double Samples = 1;
  unsigned MaxDevices = 1; ///< The largest layout tried without stages.
  /// The most devices a layout with pipeline stages may use (0: none
  /// tried, a mixture of experts).
  unsigned MaxPipelineDevices = 0;
  ServingObjective Objective = ServingObjective::Latency;
  /// The latency a chosen layout must not exceed (--max-latency).
  llvm::Optional<double> MaxLatencySeconds;
  /// With --max-batch: each layout searched at its own largest batch
  /// (ServingCandidate::AtMaxBatch), only those chosen among.
  bool AtMaxBatch = false;
  /// With --max-batch: why each layout that serves no batch does not
  /// ("pp 2: 1 takes 53.4 ms"), in the order of Candidates.
  std::vector<std::string> NotServed;

  const ServingCandidate *chosen() const {
    return Chosen ? &Candidates[*Chosen] : nullptr;
  }
};

struct Report {
  ModelInfo Model;
  llvm::Optional<HardwareInfo> Hardware;
  OpWork Total;
  llvm::Optional<double> LatencySeconds;
  llvm::Optional<KernelSummary> Kernels;
  /// Inference with a device: peak memory of one run (never with Train:
  /// a step's memory is TrainReport's; PredictOptions::Memory is off).
  llvm::Optional<InferenceMemoryReport> Memory;
  /// Inference with --tp: the split and its exchanges (LatencySeconds
  /// includes them).
  llvm::Optional<TensorParallelReport> TensorParallel;
  /// Inference with --ep: the split and its all-to-alls (LatencySeconds
  /// includes them).
  llvm::Optional<ExpertParallelReport> ExpertParallel;
  /// Inference with --pp: the stages (LatencySeconds is one batch's pass
  /// through them; Memory the fullest stage's).
  llvm::Optional<PipelineParallelReport> PipelineParallel;
  /// With --train: the strategy and what one step costs.
  llvm::Optional<TrainOptions> Strategy;
  llvm::Optional<TrainReport> Train;
  /// With --plan: the search and the model it was made for (a plan file
  /// fed back with --strategy must match the fingerprint).
  struct PlanInfo {
    PlanResult Result;
    std::string ModelName;     ///< The graph's name.
    std::string ModelFileStem; ///< The model file's stem (messages only).
    uint64_t ModelNodes = 0;
    double ModelParams = 0;
    unsigned DevicesPerNode = 1;
    double TimeLimitSeconds = 0;
  };
  llvm::Optional<PlanInfo> Plan;
  llvm::Optional<PlacementReport> Placement;
  /// With --plan without --train: the layouts tried and the one chosen,
  /// which the rest of the report predicts.
  llvm::Optional<ServingPlan> Serving;
  /// With --max-batch: the batches predicted at to find the report's.
  llvm::Optional<BatchSearchReport> BatchSearch;
  std::vector<NodeReport> Nodes;
  std::vector<Warning> Warnings;
  /// With a training step that gives them (TrainReport::NodeBackwards,
  /// for this report's nodes): node I's backward, else null.
  const TrainReport::NodeBackward *nodeBackward(size_t I) const {
    return Train && Train->NodeBackwards.size() == Nodes.size() &&
                   I < Nodes.size()
               ? &Train->NodeBackwards[I]
               : nullptr;
  }
  /// Write how long the planner and the placement solver took (--timings).
  /// Off by default: those times measure perfc's own run, and the output
  /// is otherwise the same bytes for the same inputs.
  bool Timings = false;
};

} // namespace perfc

#endif // PERFC_PASSES_REPORT_H
