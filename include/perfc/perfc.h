//===- perfc/perfc.h - The perfc library API ---------------------*- C++
//-*-===//
//
// perfc as a library: load hardware once, make models (ONNX file, ONNX bytes
// or a small graph builder), predict their cost many times, from many
// threads.
//
//   #include <perfc/perfc.h>
//   perfc::api::Hardware Hw = perfc::api::Hardware::load("a100-sxm4-80gb");
//   perfc::api::ModelBuilder B("tiny");
//   auto X = B.input("x", {1, 3, 224, 224});
//   X = B.relu(B.batchNorm(B.conv(X, 32, 3, 2)));
//   B.output(B.gemm(B.flatten(B.globalAvgPool(X)), 10));
//   perfc::api::Prediction P = perfc::api::predict(B.build(), Hw);
//   double Seconds = *P.latencySeconds();
//   std::string Json = perfc::api::toJson(P); // exactly `perfc --format json`
//
// Stability promise (from version 0.1): within a major version, this
// header only grows. Existing functions keep their signatures and meaning,
// structs only gain members at their end (with defaults that keep today's
// behaviour), and nothing here exposes perfc's internals: the classes are
// handles to private implementations (pimpl), so the library's ABI does not
// change when the IR, passes or cost models do. The JSON from toJson()
// follows the CLI's schema (README "JSON output", `schema_version`).
// Predicted figures may change between releases as cost models improve.
//
// Errors: every function that can fail throws perfc::api::Error (a
// std::runtime_error) whose what() is the CLI's one-line message without
// the "perfc: error: " prefix. Nothing else is thrown, except std::bad_alloc.
//
// Threads: Hardware, Model and Prediction are immutable, cheap to copy
// (shared handles) and safe to use from any number of threads at once.
// predict() does not modify its Model or Hardware and keeps all of its
// working state (training analyses included) per call, so concurrent
// predictions may share both. A ModelBuilder belongs to one thread.
//
// The header includes only the C++ standard library.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PERFC_H
#define PERFC_PERFC_H

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(_WIN32)
#define PERFC_API
#else
#define PERFC_API __attribute__((visibility("default")))
#endif

namespace perfc::api {

/// The version of the library ("0.1.0").
PERFC_API const char *version();

/// What every failing call throws; what() is a one-line message.
class PERFC_API Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A device or cluster description (hwdb schema). Immutable.
class PERFC_API Hardware {
public:
  /// A bundled name ("a100-sxm4-80gb", see `perfc hw list`) or a YAML file
  /// path (anything with a '/' or a .yaml/.yml suffix).
  static Hardware load(const std::string &NameOrPath);
  /// A description held in memory; DisplayName stands for the file in
  /// messages, and references to other files resolve from the current
  /// directory.
  static Hardware fromYaml(const std::string &Text,
                           const std::string &DisplayName = "<yaml>");
  /// Names of every bundled description (devices, links, clusters).
  static std::vector<std::string> bundled();

  const std::string &name() const; ///< As given to load().
  std::string device() const;      ///< The device a model runs on.
  unsigned devices() const;        ///< Devices in the cluster.

  struct Impl;
  const Impl &impl() const { return *P; }

  explicit Hardware(std::shared_ptr<const Impl> P) : P(std::move(P)) {}

private:
  std::shared_ptr<const Impl> P;
};

/// How an ONNX model's symbolic dimensions are bound (as --batch, --dim).
struct ImportOptions {
  /// Sets the first dimension of every input; unset keeps the model's (a
  /// symbolic first dimension becomes 1).
  std::optional<int64_t> batch;
  /// Named symbolic dimensions, e.g. {{"seq", 128}}.
  std::vector<std::pair<std::string, int64_t>> dims;
  /// Cost value-dependent shapes as 0 with a warning instead of failing.
  bool allowUnknownShapes = false;
};

/// A model with static shapes, ready to predict. Immutable.
class PERFC_API Model {
public:
  /// Reads an ONNX file (weights are skipped, not loaded).
  static Model fromOnnxFile(const std::string &Path,
                            const ImportOptions &Options = {});
  /// A serialized ONNX model held in memory; Name stands for the path in
  /// messages and reports. Imports of the same bytes with the same options
  /// are cached (a few dozen most recent), so re-importing is cheap.
  static Model fromOnnxBytes(std::string_view Bytes,
                             const ImportOptions &Options = {},
                             const std::string &Name = "model.onnx");

  const std::string &name() const;
  unsigned numNodes() const;
  /// The batch the model was imported or built at: the first dimension of
  /// its first input (1 without inputs). A training prediction uses it as
  /// the micro-batch.
  int64_t batch() const;

  struct Impl;
  const Impl &impl() const { return *P; }

  explicit Model(std::shared_ptr<const Impl> P) : P(std::move(P)) {}

private:
  std::shared_ptr<const Impl> P;
};

/// Builds a model without ONNX, op by op, in NCHW layout with ONNX's op
/// semantics; the builder infers every shape. Weights are implied (a conv
/// owns its filter and bias). Invalid arguments throw Error.
class PERFC_API ModelBuilder {
public:
  /// A tensor of the model under construction.
  struct Tensor {
    uint32_t Id = ~0u;
  };

  explicit ModelBuilder(std::string Name = "model", std::string DType = "fp32");
  ~ModelBuilder();
  ModelBuilder(ModelBuilder &&) noexcept;
  ModelBuilder &operator=(ModelBuilder &&) noexcept;

  /// A graph input; the first dimension is the batch.
  Tensor input(const std::string &Name, const std::vector<int64_t> &Shape);

  /// 2-D convolution with a square kernel; Pad < 0 means "same" padding
  /// ((Kernel - 1) / 2 * Dilation on each side).
  Tensor conv(Tensor X, int64_t OutChannels, int64_t Kernel, int64_t Stride = 1,
              int64_t Pad = -1, int64_t Groups = 1, bool Bias = true,
              int64_t Dilation = 1);
  /// Depthwise convolution (Groups = channels).
  Tensor depthwiseConv(Tensor X, int64_t Kernel, int64_t Stride = 1,
                       int64_t Pad = -1);
  /// Fully connected: [N, K] x [K, OutFeatures] (+ bias), ONNX Gemm.
  Tensor gemm(Tensor X, int64_t OutFeatures, bool Bias = true);
  /// X times a weight [K, OutFeatures] over the last axis (ONNX MatMul).
  Tensor matmul(Tensor X, int64_t OutFeatures);
  /// Two activations multiplied (batched, broadcasting, ONNX MatMul).
  Tensor matmul(Tensor A, Tensor B);
  Tensor batchNorm(Tensor X);
  Tensor layerNorm(Tensor X);
  Tensor add(Tensor A, Tensor B); ///< Broadcasting.
  Tensor mul(Tensor A, Tensor B); ///< Broadcasting.
  Tensor relu(Tensor X);
  Tensor relu6(Tensor X); ///< Clip(0, 6).
  Tensor sigmoid(Tensor X);
  Tensor tanh(Tensor X);
  Tensor hardSwish(Tensor X);
  Tensor maxPool(Tensor X, int64_t Kernel, int64_t Stride = 0,
                 int64_t Pad = 0); ///< Stride 0: Kernel.
  Tensor avgPool(Tensor X, int64_t Kernel, int64_t Stride = 0, int64_t Pad = 0);
  Tensor globalAvgPool(Tensor X);
  Tensor flatten(Tensor X); ///< [N, ...] -> [N, rest].
  Tensor softmax(Tensor X, int64_t Axis = -1);
  Tensor concat(const std::vector<Tensor> &Xs, int64_t Axis = 1);
  /// Marks a graph output (the last tensor made, when none is marked).
  void output(Tensor X);

  std::vector<int64_t> shape(Tensor X) const;
  /// The model; the builder is empty afterwards.
  Model build();

  struct Impl;

private:
  std::unique_ptr<Impl> P;
};

/// Training-step options (as `perfc --train`): the strategy of one step.
/// The micro-batch is the model's batch().
struct TrainOptions {
  unsigned dp = 1, tp = 1, pp = 1, vp = 1;
  /// As --cp: each sequence split over cp GPUs; devices are dp x tp x cp
  /// x pp.
  unsigned cp = 1;
  /// As --cp-comm: p2p (ring attention; needs flashAttention) or a2a
  /// (DeepSpeed-Ulysses' all-to-all of heads).
  std::string cpComm = "p2p";
  /// As --ep: each mixture of experts split over ep of the dp x cp ranks
  /// (Megatron-Core's expert-model-parallel size).
  unsigned ep = 1;
  /// As --moe-capacity: the tokens each expert processes over its
  /// balanced share (1: balanced).
  double moeCapacity = 1;
  bool sp = false;
  /// As --tp-comm-overlap (needs sp): the tensor-parallel exchanges
  /// overlapped with their GEMMs, as Megatron-Core with userbuffers.
  bool tpCommOverlap = false;
  /// As --overlap-param-gather (needs zero 1 or 2): the parameters'
  /// all-gather during the next forward, as Megatron-Core's distributed
  /// optimizer.
  bool overlapParamGather = false;
  /// As --overlap-moe-expert-parallel-comm (needs ep > 1): each
  /// micro-batch's all-to-alls beside another micro-batch's kernels, as
  /// Megatron-Core's combined 1F1B.
  bool overlapMoeExpertParallelComm = false;
  int64_t globalBatch = 0;        ///< 0: micro-batch x dp.
  std::string recompute = "none"; ///< none, selective, full
  /// As --recompute-modules: what selective recomputation recomputes
  /// (core_attn, layernorm, mla_up_proj, mlp, moe_act, moe,
  /// shared_experts; Megatron-Core's names). Non-empty implies recompute
  /// "selective" (an error beside "full"); empty: the attention core.
  std::vector<std::string> recomputeModules;
  /// As --recompute-method: which blocks full recomputation reruns,
  /// "uniform" (every block, the input of each group of recomputeNumLayers
  /// kept) or "block" (the first recomputeNumLayers of each pipeline
  /// chunk); Megatron's names. Empty: uniform. Either field implies
  /// recompute "full" (an error beside "selective" or recomputeModules).
  std::string recomputeMethod;
  /// As --recompute-num-layers: blocks per group (uniform) or per chunk
  /// (block); 0: not given (1; the block method needs one).
  unsigned recomputeNumLayers = 0;
  std::string dtype = "fp32";           ///< fp32, tf32, fp16, bf16, fp8
  std::string optimizer = "adam";       ///< sgd, momentum, adam
  std::string partition = "balanced";   ///< balanced, even
  std::string gradCompression = "none"; ///< none, fp16, topk:R
  /// As --comm-protocol: auto, LL, LL128, Simple or alpha-beta.
  std::string commProtocol = "auto";
  unsigned zero = 0; ///< ZeRO stage 0..3
  /// Samples per second one node's host input pipeline delivers (as
  /// --input-rate); 0: not modelled.
  double inputRate = 0;
  /// Attention as FlashAttention trains it (as --flash-attention).
  bool flashAttention = false;
};

struct PredictOptions {
  /// --compute-type: fp32, tf32, fp16, bf16, fp8, int8; "" keeps the
  /// model's own types (with train: the training dtype's, as the CLI).
  std::string computeType;
  /// --storage-type: fp16, bf16, fp8, int8: floating-point tensors stored
  /// in that type, as deployed engines do (bytes moved shrink, arithmetic
  /// stays computeType's); "" keeps the model's types (with train: the
  /// training dtype's under mixed precision, as the CLI).
  std::string storageType;
  /// --conv-layout: native (default), nchw or nhwc: the layout the framework
  /// keeps 2-D convolution activations in (transposes where the device's
  /// matrix units want the other).
  std::string convLayout = "native";
  bool fusion = true; ///< false: --no-fusion (training too: eager kernels).
  /// --launch-overhead: seconds per kernel launch replacing every device's
  /// (CUDA graphs, TensorRT); unset keeps the descriptions'.
  std::optional<double> launchOverheadSeconds;
  /// As --memory-reserve: bytes each device keeps for the runtime, taken
  /// from its memory before anything is fitted; unset: none.
  std::optional<double> memoryReserveBytes;
  /// Set: predict a training step (needs hardware).
  std::optional<TrainOptions> train;
  /// As --place: each inference kernel on the processor of the hardware's
  /// SoC or mixed node (CPU, GPU, NPU) that minimizes the latency,
  /// transfers counted; latencySeconds() is then the placed latency and
  /// placement() says where things went. Not with train.
  bool place = false;
  /// As --time-limit with --place: seconds the solver may take (then the
  /// best placement found, not proven); 0: 10 s.
  double placeTimeLimitSeconds = 0;
  /// As --timings: toJson() also gives the placement solver's run time
  /// (placement.solve_s), which differs from run to run.
  bool timings = false;
  /// As --tp without --train: inference split over this many devices of
  /// the hardware's cluster by tensor parallelism (Megatron's column/row
  /// GEMM pairs); latencySeconds() is one rank's kernels plus its
  /// exchanges, memory() one rank's, tensorParallel() the split. 1: one
  /// device. Not with train (its tp is TrainOptions::tp) or place.
  unsigned tensorParallel = 1;
  /// As --ep without --train: a mixture of experts served over this many
  /// devices of the hardware's cluster, attention data-parallel (1/N of the
  /// batch each) and experts split N ways, tokens exchanged all-to-all;
  /// latencySeconds() and memory() are one rank's, expertParallel() the
  /// split. 1: one device. Not with tensorParallel, train (its ep is
  /// TrainOptions::ep) or place.
  unsigned expertParallel = 1;
  /// As --plan without --train: predict the step whole, split over tp
  /// devices and (a mixture of experts) served over ep devices, every power
  /// of two up to servePlanDevices, and return the fastest layout that
  /// fits as tensorParallel or expertParallel would; servingPlan() lists
  /// every layout. Not with train, place, tensorParallel or
  /// expertParallel; needs hardware (a cluster).
  bool servePlan = false;
  /// As --devices with servePlan: the largest layout; 0: the first node's
  /// devices.
  unsigned servePlanDevices = 0;
  /// As --allow-cross-node-tp with servePlan.
  bool servePlanCrossNodeTp = false;
  /// As --objective with servePlan: "latency" (the fastest layout) or
  /// "throughput" (the most samples per second per device).
  std::string servePlanObjective = "latency";
  /// As --max-latency with servePlan: no layout slower than this (seconds).
  std::optional<double> servePlanMaxLatencySeconds;
  /// As --comm-protocol for tensorParallel's and expertParallel's
  /// exchanges: auto, LL, LL128, Simple or alpha-beta.
  std::string commProtocol = "auto";
  /// As --flash-attention without --train: attention kernels run as
  /// FlashAttention does, skipping the blocks above a causal mask's
  /// diagonal (hardware.flash_attention in the JSON). Not with train (its
  /// TrainOptions::flashAttention says it); a model without attention is
  /// an error.
  bool flashAttention = false;
  /// As --pp without --train: inference over this many pipeline stages of
  /// the hardware's cluster, each a tensorParallel group (stages across
  /// nodes); latencySeconds() is one batch's pass through them, memory()
  /// the fullest stage's rank's, pipelineParallel() the stages. 1: one
  /// stage. Not with train (its pp is TrainOptions::pp), place,
  /// expertParallel or servePlan (which tries stages itself).
  unsigned pipelineParallel = 1;
  /// As --max-batch: the prediction made at the largest batch (the inputs'
  /// first dimension) whose run fits the devices' memory, the model
  /// imported again at each batch tried, from the estimate at its own
  /// batch (MemorySummary::maxBatch) and around it; batchSearch() lists
  /// them, and every figure, memory() and ops() are the found batch's.
  /// Split as tensorParallel, expertParallel and pipelineParallel say; with
  /// servePlan, each layout at its own largest batch and the one serving
  /// the most samples per second per device chosen (servePlanObjective
  /// must stay "latency", the default, or be "throughput": both mean that
  /// ranking here). Needs hardware and a model read from ONNX (a built
  /// model has one batch); not with train or place.
  bool maxBatch = false;
  /// As --max-latency with maxBatch: only batches whose step takes at most
  /// this many seconds. With servePlan, servePlanMaxLatencySeconds may give
  /// it instead (both given must agree).
  std::optional<double> maxBatchLatencySeconds;
};

/// One row per node, as the CLI's table and JSON "ops".
struct OpRow {
  std::string name, op, outputShape;
  double params = 0, flops = 0, macs = 0, bytesRead = 0, bytesWritten = 0;
  /// With hardware: seconds, bound (compute, memory, overhead, none) and
  /// exec (kernel, fused, view, folded).
  std::optional<double> seconds;
  std::string bound, exec;
};

struct TrainSummary {
  double stepSeconds = 0, computeSeconds = 0, commSeconds = 0,
         exposedCommSeconds = 0, bubbleSeconds = 0, optimizerSeconds = 0,
         samplesPerSecond = 0, modelFlops = 0, tflopsPerDevice = 0;
  /// Eager gradient accumulation (fusion off, several
  /// micro-batches): the passes adding each micro-batch's gradients to the
  /// kept ones, per step; part of computeSeconds.
  double gradAccumSeconds = 0;
  /// With TrainOptions::inputRate: the busiest node's input pipeline per
  /// step, whether the step waits for it, and for how long.
  double inputSeconds = 0;
  bool inputBound = false;
  double inputWaitSeconds = 0;
  double peakBytes = 0, capacityBytes = 0; ///< Of the fullest device.
  unsigned devices = 0;
  int64_t globalBatch = 0, microBatches = 0;
  bool fits = true;
  /// The model's blocks, what pipeline stages and full recomputation cut
  /// at, and whether structure found them (no node name numbers a layer):
  /// the JSON's strategy.blocks and strategy.blocks_from.
  unsigned blocks = 0;
  bool blocksFromStructure = false;
};

/// Where PredictOptions::place put the kernels (the JSON's "placement").
struct PlacementSummary {
  double latencySeconds = 0; ///< Kernels plus transfers.
  double transferSeconds = 0, transferBytes = 0;
  unsigned transfers = 0; ///< (tensor, processor) hand-offs.
  bool optimal = false;   ///< Proven optimal (else the best found in time).
  std::string method;     ///< "z3", "chain-dp", "heuristic", ...
  struct Processor {
    std::string name;
    unsigned kernels = 0;
    double seconds = 0; ///< Its kernels' time in the placement.
    /// The whole model on it alone; unset where some kernel cannot run.
    std::optional<double> aloneSeconds;
  };
  std::vector<Processor> processors;
};

/// Inference with hardware: what one run holds at its peak (the JSON's
/// "memory"; passes/InferenceMemory.h says what is counted).
struct MemorySummary {
  double peakBytes = 0; ///< weightsBytes + activationsBytes.
  double weightsBytes = 0;
  /// Alive at the peak, graph inputs still read included (inputsBytes).
  double activationsBytes = 0, inputsBytes = 0;
  double capacityBytes = 0; ///< The device's main memory.
  bool fits = true;
  bool complete = true; ///< False: some shapes unknown, a lower bound.
  std::string peakAt;   ///< The node heading the kernel at the peak.
  /// The largest batch (the first input's leading dimension) that fits,
  /// all but the weights taken to grow with it ("max_batch"); none where
  /// the graph has no batch or the peak is incomplete.
  std::optional<uint64_t> maxBatch;
  double bytesPerSample = 0; ///< (peak - weights) / batch.
};

/// Inference with PredictOptions::tensorParallel > 1: the split and its
/// exchanges (the JSON's "tensor_parallel").
struct TensorParallelSummary {
  unsigned degree = 1;
  std::string link; ///< The link the ranks exchange over.
  unsigned allReduces = 0, allGathers = 0;
  double kernelSeconds = 0; ///< One rank's kernels.
  double commSeconds = 0;   ///< The exchanges (latency = the two summed).
};

/// Inference with PredictOptions::expertParallel > 1: the split and its
/// all-to-alls (the JSON's "expert_parallel").
struct ExpertParallelSummary {
  unsigned degree = 1;
  std::string link;         ///< The link the ranks exchange over.
  unsigned allToAlls = 0;   ///< Two per mixture: dispatch and combine.
  double allToAllBytes = 0; ///< One rank's buffers, summed.
  double kernelSeconds = 0; ///< One rank's kernels.
  double commSeconds = 0;   ///< The all-to-alls (latency = the two summed).
};

/// Inference with PredictOptions::pipelineParallel > 1: the stages (the
/// JSON's "pipeline_parallel").
struct PipelineParallelSummary {
  struct Stage {
    unsigned firstBlock = 0, lastBlock = 0; ///< 1-based, inclusive.
    unsigned kernels = 0;
    double kernelSeconds = 0; ///< Its kernels and tensor-parallel exchanges.
    double sendBytes = 0;     ///< Per rank, to the next stage.
    double sendSeconds = 0;
    double peakBytes = 0; ///< Per device, every batch in flight's inputs.
    bool fits = true;
  };
  unsigned degree = 1;
  unsigned inFlightBatches = 1;
  double latencySeconds = 0;  ///< One batch through every stage.
  double intervalSeconds = 0; ///< The slowest stage: a step completes.
  double samplesPerSecond = 0;
  std::vector<Stage> stages;
};

/// With PredictOptions::servePlan: every layout predicted (the JSON's
/// "serving_plan").
struct ServingPlanSummary {
  struct Layout {
    std::string split; ///< "whole", "tp" or "ep"
    unsigned devices = 1;
    double latencySeconds = 0;
    double peakBytes = 0, capacityBytes = 0; ///< Per device.
    bool fits = false;
    /// Pipeline stages, each on devices / stages of them ("pp" in JSON).
    unsigned stages = 1;
    /// How often a step completes: latencySeconds, or with stages the
    /// slowest stage's time (as many batches in flight as stages).
    double intervalSeconds = 0;
    /// The largest batch that fits (MemorySummary::maxBatch).
    std::optional<uint64_t> maxBatch;
    /// The batch its figures are at: the plan's samples, or with maxBatch
    /// its own largest (atMaxBatch; false: it serves none, no figures).
    double samples = 1;
    bool atMaxBatch = false;
  };
  std::vector<Layout> layouts; ///< Devices ascending.
  /// The best that fits under the objective: predicted above.
  size_t chosen = 0;
  double samples = 1;                ///< The first input's leading dimension.
  std::string objective = "latency"; ///< Or "throughput".
  std::optional<double> maxLatencySeconds; ///< As servePlanMaxLatencySeconds.
  /// Why a degree (and its multiples) was not tried.
  std::vector<std::string> skipped;
  /// With PredictOptions::maxBatch: each layout at its own largest batch
  /// (Layout::samples); notServed says which serve none and why.
  bool atMaxBatch = false;
  std::vector<std::string> notServed;
};

/// With PredictOptions::maxBatch: how the batch was found (the JSON's
/// "batch_search").
struct BatchSearchSummary {
  int64_t batch = 0;     ///< The largest admitted: the prediction's.
  int64_t fromBatch = 0; ///< The model's own, the estimate's basis.
  uint64_t estimate = 0; ///< MemorySummary::maxBatch at fromBatch.
  int64_t limit = 0;     ///< The largest batch the search would try.
  std::optional<double> maxLatencySeconds; ///< The bound, where given.
  struct Probe {
    int64_t batch = 0;
    bool fits = false;
    double latencySeconds = 0;
    /// With a bound: whether latencySeconds is within it.
    std::optional<bool> meetsLatency;
  };
  std::vector<Probe> tried; ///< In the order predicted.
};

/// What predict() found: the CLI's report. Immutable.
class PERFC_API Prediction {
public:
  double params() const;
  double flops() const;
  double macs() const;
  double bytes() const; ///< Read plus written.
  /// With hardware: the inference latency (sum of kernel times); with
  /// train, one micro-batch's forward pass in the training precision, as
  /// the step prices it (its kernels, no cache reuse over the schedule).
  std::optional<double> latencySeconds() const;
  std::optional<TrainSummary> train() const;
  /// With PredictOptions::place.
  std::optional<PlacementSummary> placement() const;
  /// With hardware, inference only (a step's memory is in train()); with
  /// tensorParallel or expertParallel, one rank's.
  std::optional<MemorySummary> memory() const;
  /// With PredictOptions::tensorParallel > 1.
  std::optional<TensorParallelSummary> tensorParallel() const;
  /// With PredictOptions::expertParallel > 1 (or a serving plan that chose
  /// ep).
  std::optional<ExpertParallelSummary> expertParallel() const;
  /// With PredictOptions::servePlan.
  std::optional<ServingPlanSummary> servingPlan() const;
  /// With PredictOptions::pipelineParallel > 1 (or a serving plan that
  /// chose stages).
  std::optional<PipelineParallelSummary> pipelineParallel() const;
  /// With PredictOptions::maxBatch.
  std::optional<BatchSearchSummary> batchSearch() const;
  std::vector<OpRow> ops() const;
  std::vector<std::string> warnings() const;

  struct Impl;
  const Impl &impl() const { return *P; }

private:
  std::shared_ptr<const Impl> P;

public:
  explicit Prediction(std::shared_ptr<const Impl> P) : P(std::move(P)) {}
};

/// Work and latency (or a training step) of Model on the primary device of
/// Hardware; Hw null: work only.
PERFC_API Prediction predict(const Model &M, const Hardware *Hw,
                             const PredictOptions &Options = {});
inline Prediction predict(const Model &M, const Hardware &Hw,
                          const PredictOptions &Options = {}) {
  return predict(M, &Hw, Options);
}

/// The CLI's JSON (`perfc MODEL --format json`), byte for byte; Compact:
/// on one line, without spaces (as `perfc batch` writes it).
PERFC_API std::string toJson(const Prediction &P, bool Compact = false);

/// What the training planner may choose and what it keeps (`perfc --train
/// --plan`, passes/Planner.h). The choices left unset are searched.
struct PlanOptions {
  int64_t globalBatch = 0;    ///< Samples per step; required.
  unsigned devices = 0;       ///< Devices used; 0: every device of the cluster.
  std::string planner = "z3"; ///< z3 or exhaustive
  double timeLimitSeconds = 0; ///< 0: none; else the best plan found so far.
  unsigned top = 1;            ///< Plans listed (JSON "plans"), best first.
  bool pareto = false;         ///< Also the time/memory front ("pareto").
  bool crossNodeTp = false;    ///< Tensor parallelism may span nodes.
  /// Only strategies this framework runs: any, megatron, deepspeed or fsdp
  /// (as --framework).
  std::string framework = "any";
  /// Pinned choices. A model made with ModelBuilder has one batch, so its
  /// micro-batch is its batch(); an ONNX model is imported again at each
  /// micro-batch size the planner considers (1, 2, 4, 8).
  std::optional<unsigned> dp, tp, pp, vp, zero;
  /// Context parallelism, as --cp with --plan: searched (powers of two up
  /// to 32) where flashAttention is on or cpComm is a2a, unless pinned
  /// here.
  std::optional<unsigned> cp;
  /// Expert parallelism, as --ep with --plan: searched (powers of two
  /// dividing dp x cp and every mixture's experts) for models with
  /// mixtures of experts, unless pinned here.
  std::optional<unsigned> ep;
  /// As --cp-comm with --plan: p2p or a2a, pinned; unset: searched (both
  /// with flashAttention; without it the all-to-all under deepspeed).
  std::optional<std::string> cpComm;
  std::optional<bool> sp;
  std::optional<int64_t> microBatch;
  std::optional<std::string> recompute; ///< none, selective, full
  /// As TrainOptions::recomputeModules: pins recompute to selective with
  /// these modules (an error beside recompute "none" or "full").
  std::vector<std::string> recomputeModules;
  /// As TrainOptions::recomputeMethod and recomputeNumLayers: pin
  /// recompute to full with that choice of blocks (an error beside
  /// recompute "none" or "selective").
  std::string recomputeMethod;
  unsigned recomputeNumLayers = 0;
  /// Kept as given (as TrainOptions).
  std::string dtype = "fp32";
  std::string optimizer = "adam";
  std::string partition = "balanced";
  std::string gradCompression = "none";
  std::string commProtocol = "auto"; ///< as TrainOptions
  /// As TrainOptions, for the strategies with sp.
  bool tpCommOverlap = false;
  /// As TrainOptions, for the strategies with ZeRO 1 or 2.
  bool overlapParamGather = false;
  /// As TrainOptions, for the strategies with ep > 1 that Megatron-Core's
  /// combined 1F1B runs (no full recomputation; interleaved when pp > 1).
  bool overlapMoeExpertParallelComm = false;
  /// As --memory-reserve: bytes each device keeps for the runtime; plans
  /// fit what is left. Unset: none.
  std::optional<double> memoryReserveBytes;
  /// As --flash-attention with --plan: the attention core as FlashAttention
  /// trains it, in every candidate (and context parallelism searched).
  bool flashAttention = false;
  /// The inference part of the report (as PredictOptions).
  std::string computeType;
  bool fusion = true;
  /// As --timings: toJson() also gives the search's run times (evaluate_s,
  /// solve_s, candidates_per_s), which differ from run to run.
  bool timings = false;
};

/// One GPU type's share of an uneven data split across GPU types (a plan
/// on a mixed cluster, pp 1): its replicas and the micro-batches each runs.
struct DataShare {
  std::string device;
  unsigned replicas = 0;
  unsigned microBatches = 0;
  int64_t batchPerReplica = 0; ///< microBatches x the plan's micro-batch.
};

/// What plan() found: the CLI's report with its "plan" section. Immutable.
class PERFC_API Plan {
public:
  /// The chosen strategy; its micro-batch is microBatch().
  TrainOptions strategy() const;
  int64_t microBatch() const;
  /// The predicted training step of the plan.
  TrainSummary train() const;
  /// Proven best over the searched space (false after a time limit).
  bool optimal() const;
  /// Mixed clusters: the GPU type of each pipeline stage; else empty.
  std::vector<std::string> stageDevices() const;
  /// Mixed clusters planned as an uneven data split: each type's share, in
  /// plan.data_split's order; else empty.
  std::vector<DataShare> dataSplit() const;
  std::vector<std::string> warnings() const;

  struct Impl;
  const Impl &impl() const { return *P; }
  explicit Plan(std::shared_ptr<const Impl> P) : P(std::move(P)) {}

private:
  std::shared_ptr<const Impl> P;
};

/// The parallel strategy with the lowest predicted step time that fits
/// Hardware's memory, as `perfc MODEL --train --plan --hw HW`.
PERFC_API Plan plan(const Model &M, const Hardware &Hw,
                    const PlanOptions &Options);

/// The CLI's JSON (`perfc MODEL --train --plan --format json`): the
/// report with "plan" (and "plans", "pareto" when asked for).
PERFC_API std::string toJson(const Plan &P, bool Compact = false);

} // namespace perfc::api

#endif // PERFC_PERFC_H
