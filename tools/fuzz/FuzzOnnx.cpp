//===- FuzzOnnx.cpp - Fuzz the ONNX frontend and the work pass ------------===//
//
// Bytes are a serialized model: they go through the whole import (weight
// stripper, structure checks, binding, shape inference with folding,
// conversion to IR) and, when that succeeds, through the work pass and the
// latency passes (kernel planning, cache reuse over the schedule, roofline)
// on a small GPU with an L2 that has a bandwidth (for some inputs with
// FlashAttention, or priced as a training step's forward), and the
// prediction through the JSON and trace writers (names as the model has
// them). Then the
// training step (backward expansion, block and tensor-parallel analysis,
// memory, pipeline and collectives, with explanations) on two nodes of four
// GPUs, under a strategy picked from the input's size, and for a seventh
// of the inputs the planner over every strategy the graph allows. Errors
// are expected, but each must be one line naming the buffer (FuzzCheck.h);
// crashes, leaks, hangs and sanitizer reports are bugs.
//
//===----------------------------------------------------------------------===//
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "passes/Planner.h"
#include "passes/Predict.h"
#include "passes/ServingPlan.h"
#include "passes/TrainStep.h"
#include "tools/ReportWriters.h"
#include "tools/fuzz/FuzzCheck.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

/// A GPU whose 1 MB L2 has a bandwidth, so that small fuzzed tensors move
/// between the levels. Loaded once; never changed.
const perfc::hw::Device &fuzzDevice() {
  static const perfc::hw::Cluster C = [] {
    auto Loaded = perfc::hw::loadHardwareFromString(R"(device:
  name: fuzz-gpu
  kind: gpu
  cores: 8
  gemm_tile: [64, 64]
  compute:
    tensor: {fp16: 100 TFLOPS, int8: 200 TOPS}
    vector: {fp32: 10 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
    - {name: L2, capacity: 1 MB, bandwidth: 4000 GB/s}
  launch_overhead: 1 us
  efficiency:
    default: {compute: 0.5, memory: 0.8}
)",
                                                    "fuzz-gpu.yaml");
    if (!Loaded)
      std::abort(); // the harness's own description: a bug here
    return std::move(*Loaded);
  }();
  return C.primaryDevice();
}

/// Two nodes of four T4s, NVLink inside and InfiniBand between: every
/// parallel group of up to 8 ranks has its links. Loaded once.
const perfc::hw::Cluster &fuzzCluster() {
  static const perfc::hw::Cluster C = [] {
    auto Loaded = perfc::hw::loadHardwareFromString(R"(cluster:
  name: fuzz-cluster
  nodes:
    - count: 2
      device: t4
      devices_per_node: 4
      intra_node_link: {name: nv, kind: nvlink, bandwidth: 100 GB/s, latency: 1 us, efficiency: 0.8}
      inter_node_link: {name: ib, kind: infiniband, bandwidth: 25 GB/s, latency: 5 us, efficiency: 0.9}
      nics_per_node: 1
)",
                                                    "fuzz-cluster.yaml");
    if (!Loaded)
      std::abort(); // the harness's own description: a bug here
    return std::move(*Loaded);
  }();
  return C;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Bytes(reinterpret_cast<const char *>(Data), Size);
  perfc::frontend::ImportOptions Options;
  // Both shape policies, picked by a property of the input that mutations
  // change often but that leaves seed files valid models.
  Options.AllowUnknownShapes = Size % 2 == 1;
  auto Model = perfc::frontend::importOnnxBytes(Bytes, "fuzz.onnx", Options);
  if (!Model) {
    perfc::fuzz::checkError(Model.takeError(), "fuzz.onnx", "importOnnxBytes");
    return 0;
  }
  perfc::Report R = perfc::predictWork(Model->Graph);
  (void)R;
  perfc::PredictOptions Timed;
  Timed.Device = &fuzzDevice();
  Timed.Explain = Size % 3 == 0;
  Timed.Fusion.Fuse = Size % 5 != 0;
  // FlashAttention's causal skipping, and the per-node forward of a
  // training step (its work and kernels, no cache reuse).
  Timed.Fusion.FlashAttention = Size % 7 == 1;
  Timed.Training = Size % 4 == 3;
  // FP8 training's per-node forward (Transformer Engine's recipe).
  if (Timed.Training && Size % 9 == 4) {
    Timed.Fp8Recipe = true;
    Timed.StorageType = perfc::ir::DType::BF16;
    Timed.Time.ComputeType = perfc::ir::DType::BF16;
  }
  perfc::Report T = perfc::predict(Model->Graph, Timed);
  // The largest batch agrees with the fit at the model's own batch (away
  // from the boundary, where rounding may land either side).
  if (T.Memory && T.Memory->MaxBatch) {
    const perfc::InferenceMemoryReport &M = *T.Memory;
    const double Batch = double(perfc::batchOf(Model->Graph).getValueOr(0));
    const double Margin = 1e-9 * M.CapacityBytes;
    if (Batch <= 0 || !(M.BytesPerSample > 0) ||
        (M.Usage.PeakBytes < M.CapacityBytes - Margin &&
         double(*M.MaxBatch) < Batch && Batch < 0x1p50) ||
        (M.Usage.PeakBytes > M.CapacityBytes + Margin &&
         double(*M.MaxBatch) >= Batch))
      std::abort();
  }
  // The writers take names as the model has them: arbitrary bytes.
  perfc::writeReportJson(T, llvm::nulls());
  perfc::writeChromeTrace(T, llvm::nulls());

  // A training step under a strategy that the input's size picks: most
  // are refused for some graphs (tp must divide heads, pp needs blocks),
  // and each refusal must be one line.
  const perfc::TrainingAnalysis A(Model->Graph, /*Unfused=*/Size % 11 == 0,
                                  /*FlashAttention=*/Size % 17 == 2);
  perfc::TrainOptions O;
  O.Tp = 1u << (Size % 2);
  O.Pp = 1u << ((Size / 2) % 2);
  O.Vp = O.Pp > 1 && Size % 19 == 3 ? 2 : 1; // interleaved 1F1B
  O.Dp = 1u << ((Size / 4) % 2);
  O.Zero = (Size / 8) % 4;
  // Megatron-Core's overlapped parameter gather, where ZeRO 1 or 2 has one.
  O.OverlapParamGather = (O.Zero == 1 || O.Zero == 2) && Size % 7 == 3;
  O.Recomp = static_cast<perfc::Recompute>((Size / 32) % 3);
  // Selective recomputation of some of Megatron-Core's modules (a module
  // the graph lacks is a one-line refusal).
  if (O.Recomp == perfc::Recompute::Selective && Size % 3 != 0)
    O.RecomputeModules =
        perfc::BlockModuleSet((Size / 7) % (1u << perfc::NumBlockModules));
  if (!O.RecomputeModules)
    O.RecomputeModules = perfc::bit(perfc::BlockModule::CoreAttention);
  // Full recomputation of some blocks per chunk (the block method), or of
  // every block in groups (uniform), Megatron's --recompute-method.
  if (O.Recomp == perfc::Recompute::Full && Size % 5 != 0) {
    O.Method = Size % 2 ? perfc::RecomputeMethod::Block
                        : perfc::RecomputeMethod::Uniform;
    O.RecomputeNumLayers = 1 + (Size / 5) % 4;
  }
  O.SequenceParallel = O.Tp > 1 && (Size / 96) % 2;
  O.TpCommOverlap = O.SequenceParallel && (Size / 192) % 2;
  // Context parallelism: the ring where the analysis has FlashAttention,
  // the all-to-all of heads with or without it.
  O.Cp = (A.FlashAttention && Size % 5 == 1) || Size % 23 == 4 ? 2 : 1;
  if (Size % 23 == 4)
    O.CpComm = perfc::ContextExchange::AllToAll;
  // Expert parallelism over the data-parallel pair, where the graph has
  // weight stacks it takes for experts (else its one-line refusal).
  O.Ep = O.Dp > 1 && Size % 29 == 5 ? 2 : 1;
  O.SequenceParallel = O.SequenceParallel || (O.Ep > 1 && O.Tp > 1);
  // Megatron-Core's combined 1F1B, which refuses some of these strategies
  // (full recomputation, fp32, pp without vp) in one line each.
  O.OverlapMoeExpertParallelComm = O.Ep > 1 && Size % 3 != 0;
  // fp32, bf16 mixed precision, or FP8 (Transformer Engine's recipe).
  const perfc::ir::DType Types[] = {
      perfc::ir::DType::F32, perfc::ir::DType::BF16, perfc::ir::DType::F8E4M3};
  O.DType = Types[(Size / 384) % 3];
  O.GlobalBatch = 2 * O.Dp * (O.Pp > 1 ? 2 : 1);
  O.Explain = true;
  O.Timeline = Size % 13 == 0;
  auto Step = perfc::predictTraining(A, fuzzCluster(), O);
  if (!Step)
    perfc::fuzz::checkError(Step.takeError(), "", "predictTraining");

  // The planner over the same analysis, at the graph's own batch (the
  // exhaustive loop: Z3 is the unit tests' subject), for a seventh of the
  // inputs: every degree, chunk split and ZeRO stage the graph allows.
  if (Size % 7 == 0) {
    perfc::PlanRequest R;
    R.Analysis =
        [&A](int64_t) -> llvm::Expected<const perfc::TrainingAnalysis *> {
      return &A;
    };
    R.Cluster = &fuzzCluster();
    R.GlobalBatch = 8;
    R.Fixed.MicroBatch = 1;
    R.Planner = perfc::PlannerKind::Exhaustive;
    R.TimeLimitSeconds = 2;
    auto Plan = perfc::planTraining(R);
    if (!Plan)
      perfc::fuzz::checkError(Plan.takeError(), "", "planTraining");
  }

  // The serving plan over the first node (whole, tp and ep of 2 and 4,
  // as the graph allows), for a fifth of the inputs.
  if (Size % 5 == 2) {
    perfc::ServingRequest R;
    R.Cluster = &fuzzCluster();
    R.Base = Timed;
    R.Base.Device = &fuzzCluster().primaryDevice();
    // Half of them for the most samples per device, some within a bound
    // no layout may meet.
    if (Size % 10 == 7)
      R.Objective = perfc::ServingObjective::Throughput;
    if (Size % 20 == 12)
      R.MaxLatencySeconds = 1e-4;
    // Its errors here: no layout fits the T4s' memory, none meets the
    // bound.
    auto Served = perfc::planServing(Model->Graph, R);
    if (!Served)
      perfc::fuzz::checkError(Served.takeError(), "", "planServing");
  }

  // Inference over 2 or 3 pipeline stages of one T4 each (the third
  // across nodes), where the graph has that many blocks: the latency is
  // the stages' kernels and sends, and every kernel is in one stage.
  {
    const unsigned Pp = 2 + Size % 2;
    const perfc::InferenceSplit A = perfc::analyzeInferenceSplit(Model->Graph);
    if (llvm::Error E = perfc::checkPipelineParallel(Model->Graph, A, Pp)) {
      perfc::fuzz::checkError(std::move(E), "", "checkPipelineParallel");
    } else {
      auto Pipe = perfc::pipelineStages(fuzzCluster(), Pp, 1);
      if (!Pipe)
        std::abort(); // the harness's cluster has 8 devices of one kind
      perfc::PredictOptions Staged = Timed;
      Staged.Device = &fuzzCluster().primaryDevice();
      Staged.Split = &A;
      Staged.PipelineParallel = *Pipe;
      perfc::Report S = perfc::predict(Model->Graph, Staged);
      if (!S.PipelineParallel || !S.LatencySeconds || !S.Kernels)
        std::abort();
      double Sum = 0;
      unsigned Kernels = 0;
      for (const perfc::PipelineStageReport &St : S.PipelineParallel->Stages) {
        Sum += St.seconds();
        Kernels += St.Kernels;
      }
      if (Kernels != S.Kernels->Kernels ||
          !(std::abs(Sum - *S.LatencySeconds) <=
            1e-9 * std::max(1.0, *S.LatencySeconds)))
        std::abort();
      perfc::writeReportJson(S, llvm::nulls());
      perfc::writeChromeTrace(S, llvm::nulls());
    }
  }

  // A mixture served over 2 ranks (data-parallel attention, experts
  // split), where the graph has experts and a batch that 2 divide.
  if (llvm::Error E = perfc::checkExpertParallel(Model->Graph, 2)) {
    perfc::fuzz::checkError(std::move(E), "", "checkExpertParallel");
  } else {
    auto EpGroup = perfc::tensorParallelGroup(fuzzCluster(), 2, "--ep");
    if (!EpGroup)
      std::abort(); // the harness's cluster has 8 devices of one kind
    perfc::PredictOptions Served = Timed;
    Served.Device = &fuzzCluster().primaryDevice();
    Served.ExpertParallel = *EpGroup;
    perfc::Report S = perfc::predict(Model->Graph, Served);
    perfc::writeReportJson(S, llvm::nulls());
  }

  // Inference split over 2 or 4 ranks, where the graph has Megatron's
  // pairs and the degree divides what they split.
  const unsigned Tp = 2u << (Size % 2);
  if (llvm::Error E = perfc::checkTensorParallel(Model->Graph, Tp)) {
    perfc::fuzz::checkError(std::move(E), "", "checkTensorParallel");
    return 0;
  }
  auto Group = perfc::tensorParallelGroup(fuzzCluster(), Tp, "--tp");
  if (!Group)
    std::abort(); // the harness's cluster has 8 devices of one kind
  perfc::PredictOptions Split = Timed;
  Split.Device = &fuzzCluster().primaryDevice();
  Split.TensorParallel = *Group;
  perfc::Report S = perfc::predict(Model->Graph, Split);
  perfc::writeReportJson(S, llvm::nulls());
  perfc::writeChromeTrace(S, llvm::nulls());
  return 0;
}
