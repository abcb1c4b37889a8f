//===- Predict.h - From a graph to a Report ---------------------*- C++ -*-===//
//
// The inference pipeline: work pass, then, with a device, kernel planning
// (constant folding, views, fusion; passes/Fusion.h) and the roofline of
// each kernel (costmodels/Roofline.h). Latency is the sum of the kernel
// times: one stream runs the kernels in order, as ONNX Runtime's sequential
// executor and a single CUDA stream do.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_PREDICT_H
#define PERFC_PASSES_PREDICT_H

#include "costmodels/Collectives.h"
#include "costmodels/Roofline.h"
#include "passes/Fusion.h"
#include "passes/Report.h"

namespace perfc {
namespace ir {
class Graph;
}
namespace hw {
struct Cluster;
struct Device;
struct Link;
} // namespace hw

/// What a split inference (--tp, --ep) checks the split on
/// (analyzeTensorParallel, analyzeExpertParallel) and predict then reuses
/// (PredictOptions::Split) rather than counting it again: the graph's work
/// and its blocks.
struct InferenceSplit {
  GraphWork Work;
  BlockInfo Blocks;
};

/// The stages of pipeline-parallel inference (PredictOptions::
/// PipelineParallel): how many, and the link each one sends the next
/// stage's devices its activations over.
struct InferencePipeline {
  unsigned Stages = 1;
  /// Stages - 1 of them, stage S to S + 1; the cluster's, which must
  /// outlive the prediction.
  std::vector<const hw::Link *> Links;
};

struct PredictOptions {
  /// The device to time the model on; work only when null.
  const hw::Device *Device = nullptr;
  cost::TimeOptions Time;
  /// Store floating-point tensors in this type (fp16, bf16, fp8, int8), as
  /// TensorRT engines, QNN and XLA deployments do: their bytes scale by the
  /// element sizes. None: the model's types.
  llvm::Optional<ir::DType> StorageType;
  FusionOptions Fusion;
  /// Fill NodeTime::Explain (the formulas of the JSON and --explain). Off,
  /// the report is the same but for those strings, and much faster to make
  /// (the library API makes them only when JSON is asked for).
  bool Explain = true;
  /// Fill NodeReport::Name, Op and OutputShape. Off (the library's fast
  /// path: a NAS loop asks for the latency, not for the rows), they stay
  /// empty until describeNodes fills them from the graph.
  bool NodeNames = true;
  /// With a device: the peak memory of one run (Report::Memory), and a
  /// warning where it exceeds the device's. Off for a training step's
  /// forward pass, whose memory is the step's (TrainReport).
  bool Memory = true;
  /// Price one micro-batch's forward pass as a training step does, so that
  /// the per-node rows add up to the step's forward time: the training work
  /// and kernels (passes/TrainingForward.h; Fusion's Fuse and FlashAttention
  /// are kept, the rest is training's), each kernel from its own traffic
  /// (the per-op memory rule of costmodels/Roofline.h, not the cache reuse
  /// over the schedule of passes/CacheReuse.h: a step's saved activations
  /// and gradients dwarf the caches) and without ONNX Runtime's NCHWc
  /// reorders.
  bool Training = false;
  /// With Training: the FP8 recipe of passes/Fp8Recipe.h. Linear layers'
  /// GEMMs compute in FP8 on FP8 operands and pay the cast of their
  /// activation operand; everything else computes in Time.ComputeType and
  /// stores in StorageType (BF16, as trainingStorageType gives).
  bool Fp8Recipe = false;
  /// Tensor parallelism (--tp): the ranks of one tensor-parallel group
  /// (Size of them, the links of a hw::Cluster that must outlive the
  /// prediction). Each kernel runs its share on one rank (passes/TpShard.h)
  /// and the row-parallel outputs are all-reduced, the
  /// vocabulary-parallel logits all-gathered, after the kernels that write
  /// them. None, or Size 1: one device. checkTensorParallel first.
  llvm::Optional<cost::CommGroup> TensorParallel;
  /// Expert parallelism for inference (--ep; ExpertParallelReport): the
  /// group of ranks (Size of them; the cluster must outlive the call) over
  /// which attention and the dense layers split the batch and the mixtures
  /// their experts; Tp must be 1. None, or Size 1: one device.
  /// checkExpertParallel first.
  llvm::Optional<cost::CommGroup> ExpertParallel;
  /// Pipeline parallelism for inference (--pp; passes/PipelineInference.h):
  /// the blocks split into stages, each on its own devices (a
  /// TensorParallel group of them with --tp). None: one stage.
  /// pipelineStages and checkPipelineParallel first.
  llvm::Optional<InferencePipeline> PipelineParallel;
  /// analyzeTensorParallel's or analyzeExpertParallel's result for the
  /// graph predicted (inference only; it must outlive the call): its work
  /// and blocks are reused.
  const InferenceSplit *Split = nullptr;
};

/// Whether G has attention for --flash-attention to act on (a kernel that
/// runs softmax(Q.K^T).V); the error says to drop the flag.
llvm::Error checkFlashAttention(const ir::Graph &G);
/// The same after predicting G with --flash-attention: from R's kernel plan
/// where it has one (with a device: the library's fast path plans once),
/// else from a plan of its own.
llvm::Error checkFlashAttention(const ir::Graph &G, const Report &R);

/// The group of Tp devices of C that tensor-parallel inference splits a
/// model over: C's first Tp devices, which must exist, be of one kind (a
/// SoC's CPU, GPU and NPU are not ranks of one split) and be joined by a
/// link. Errors name What (the option that asked: "--tp") and what to give.
llvm::Expected<cost::CommGroup>
tensorParallelGroup(const hw::Cluster &C, unsigned Tp, llvm::StringRef What);

/// Whether G can be split over Tp ranks: it has Megatron's column/row GEMM
/// pairs (passes/Blocks.h) and Tp divides every size they split
/// (passes/TpSizes.h). The error says which and what to give instead.
llvm::Error checkTensorParallel(const ir::Graph &G, unsigned Tp);
/// Whether G can be served over Ep ranks with expert parallelism
/// (PredictOptions::ExpertParallel): it has mixtures of experts, Ep divides
/// each one's experts and the batch (the first input's leading
/// dimension), which the ranks split. The error says which and what to
/// give instead.
llvm::Error checkExpertParallel(const ir::Graph &G, unsigned Ep);
/// checkTensorParallel's analysis, kept for predict (PredictOptions::Split).
llvm::Expected<InferenceSplit> analyzeTensorParallel(const ir::Graph &G,
                                                     unsigned Tp);
/// checkExpertParallel's analysis, kept for predict (PredictOptions::Split).
llvm::Expected<InferenceSplit> analyzeExpertParallel(const ir::Graph &G,
                                                     unsigned Ep);
/// The work and blocks a split's checks read; they do not depend on the
/// degree, so one analysis serves every degree (passes/ServingPlan.h).
InferenceSplit analyzeInferenceSplit(const ir::Graph &G);
/// checkTensorParallel and checkExpertParallel on an analysis of G made
/// once (analyzeInferenceSplit).
llvm::Error checkTensorParallel(const ir::Graph &G, const InferenceSplit &S,
                                unsigned Tp);
llvm::Error checkExpertParallel(const ir::Graph &G, const InferenceSplit &S,
                                unsigned Ep);

/// The stages of --pp Pp over C, each a group of Tp devices (stage S on
/// ranks S x Tp to (S + 1) x Tp - 1, node-major), and the link between
/// neighbours: inside a node where they share one, else between nodes.
/// Errors: too few devices, devices of several kinds, no link.
llvm::Expected<InferencePipeline> pipelineStages(const hw::Cluster &C,
                                                 unsigned Pp, unsigned Tp);
/// Whether G's blocks split into Pp stages of at least one block each.
llvm::Error checkPipelineParallel(const ir::Graph &G, const InferenceSplit &S,
                                  unsigned Pp);

/// The samples one inference step serves: the first input's leading
/// dimension (the batch; a decoding step's sequences), 1 where it has none.
double samplesPerStep(const ir::Graph &G);

/// The first input's leading dimension where it has one (the batch).
llvm::Optional<int64_t> batchOf(const ir::Graph &G);

/// Usage (of a run of Plan over G) against D's main memory: whether it
/// fits, the node heading the kernel at the peak, and the largest batch
/// that would fit (a multiple of BatchMultiple: the expert-parallel degree,
/// which must divide it); no explanation.
InferenceMemoryReport memoryReport(const ir::Graph &G, const KernelPlan &Plan,
                                   const hw::Device &D, InferenceMemory Usage,
                                   unsigned BatchMultiple = 1);

/// Fills each NodeReport's Name, Op and OutputShape from G, whose nodes
/// R.Nodes follows in order (what predict leaves out without NodeNames).
void describeNodes(const ir::Graph &G, Report &R);

/// The arithmetic types --compute-type (and --storage-type, the API's
/// computeType) accept: fp32, tf32, fp16, bf16, fp8 (E4M3, the inference
/// format) and int8; None for any other name. One list for the CLI and the
/// API, so that both accept the same spellings.
llvm::Optional<ir::DType> computeTypeNamed(llvm::StringRef S);
inline constexpr const char ComputeTypeChoices[] =
    "fp32, tf32, fp16, bf16, fp8 or int8";

/// A kernel's time as its head node reports it; Where, if given, names the
/// processor it was placed on (in the explanation).
NodeTime kernelTime(const cost::OpTime &T, const Kernel &K, bool Explain,
                    llvm::StringRef Where = "");

/// Adds a kernel's time to the summary's share of its bound.
void addBoundTime(KernelSummary &S, const cost::OpTime &T);

/// Work only (no device).
Report predictWork(const ir::Graph &G);

/// Work and, with a device, time.
Report predict(const ir::Graph &G, const PredictOptions &Options);

/// O without the strings only a report shows (NodeTime::Explain, node
/// names): for predictions that decide something (a serving layout, a
/// batch tried) rather than being printed. The figures are the same.
PredictOptions figuresOnly(PredictOptions O);

} // namespace perfc

#endif // PERFC_PASSES_PREDICT_H
