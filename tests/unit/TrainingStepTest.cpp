//===- TrainingStepTest.cpp - States, optimizers, strategies, exchanges ---===//
#include "TrainingHelpers.h"

#include "costmodels/Collectives.h"
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "hwdb/Units.h"
#include "passes/Backward.h"
#include "passes/LoadTimeConstants.h"
#include "passes/Schedule.h"
#include "passes/TrainStep.h"
#include "passes/WorkPass.h"
#include "tools/modelgen/TransformerGen.h"

#include "llvm/Support/FormatVariadic.h"

#include <doctest/doctest.h>

#include <cmath>

#include <algorithm>

using namespace perfc;
using namespace perfc::test;

TEST_SUITE("training") {

  TEST_CASE("model state bytes per parameter by optimizer and type") {
    const ModelStateBytes MixedAdam =
        modelStateBytes(OptimizerKind::Adam, ir::DType::BF16, false);
    CHECK(MixedAdam.Mixed);
    CHECK(MixedAdam.total() == 16); // 2 + 2 + 8 moments + 4 master weights
    CHECK(modelStateBytes(OptimizerKind::Adam, ir::DType::F16, true).total() ==
          18); // Megatron-LM's fp32 main_grad
    const ModelStateBytes Fp32Adam =
        modelStateBytes(OptimizerKind::Adam, ir::DType::F32, true);
    CHECK_FALSE(Fp32Adam.Mixed);
    CHECK(Fp32Adam.total() == 16); // 4 + 4 + 8, no master copy
    CHECK(modelStateBytes(OptimizerKind::Momentum, ir::DType::TF32, false)
              .total() == 12);
    CHECK(modelStateBytes(OptimizerKind::Sgd, ir::DType::F32, false).total() ==
          8);
    CHECK(
        modelStateBytes(OptimizerKind::Sgd, ir::DType::F8E4M3, false).total() ==
        1 + 1 + 4);
  }

  TEST_CASE("model states: 16 bytes per parameter under mixed-precision "
            "Adam, 18 with fp32 gradients, sharded by ZeRO") {
    TwoBlocks T(64, 32);
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    TrainOptions O;
    O.DType = ir::DType::BF16;
    auto R = predictTraining(T.B.G, *C, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    const double Params = 2 * (32 * 128 * 2);
    const StageReport &S = R->peak();
    CHECK(S.Params == doctest::Approx(Params));
    // 2 bf16 weights + 2 bf16 gradients + 12 fp32 master, momentum, variance.
    CHECK(S.WeightsBytes + S.GradientsBytes + S.OptimizerBytes ==
          doctest::Approx(16 * Params));
    CHECK(R->Fits);
    CHECK(R->StepSeconds > 0);
    O.Fp32Gradients = true;
    auto R18 = predictTraining(T.B.G, *C, O);
    REQUIRE(bool(R18));
    const StageReport &S18 = R18->peak();
    CHECK(S18.WeightsBytes + S18.GradientsBytes + S18.OptimizerBytes ==
          doctest::Approx(18 * Params));
    // ZeRO 1 on 8 ranks: the 12 optimizer bytes over 8 (the distributed
    // optimizer's 6 + 12/dp with fp32 gradients... here 4 + 12/8).
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    O.Fp32Gradients = false;
    O.Dp = 8;
    O.Zero = 1;
    auto Z = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_MESSAGE(bool(Z), llvm::toString(Z.takeError()));
    const StageReport &SZ = Z->peak();
    CHECK(SZ.WeightsBytes + SZ.GradientsBytes + SZ.OptimizerBytes ==
          doctest::Approx((4 + 12.0 / 8) * Params));
  }

  TEST_CASE("a per-tensor optimizer: each kernel over every tensor, a "
            "launch per tensor") {
    // BertAdam's loop (optimization.py): 12 kernels, 17 tensor reads and 12
    // writes per parameter tensor, counted by hand from its step().
    unsigned Kernels = 0, Reads = 0, Writes = 0;
    for (const OptimizerKernel &K :
         perTensorOptimizerKernels(OptimizerKind::Adam)) {
      ++Kernels;
      Reads += K.Reads;
      Writes += K.Writes;
    }
    CHECK(Kernels == 12);
    CHECK(Reads == 17);
    CHECK(Writes == 12);
    CHECK(perTensorOptimizerKernels(OptimizerKind::Momentum).size() == 4);
    CHECK(perTensorOptimizerKernels(OptimizerKind::Sgd).size() == 2);
    auto C = hw::loadHardwareFromString(MemoryBoundGpu, "pass-test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    TwoBlocks T(64, 32);
    TrainOptions O;
    O.PerTensorOptimizer = true;
    auto R = predictTraining(T.B.G, *C, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    const double Params = 2 * (32 * 128 * 2); // 4 tensors
    CHECK(R->peak().ParamTensors == 4);
    // 29 fp32 passes / (1000 GB/s x 0.8) + 12 kernels x 4 tensors x 5 us.
    CHECK(R->OptimizerSeconds ==
          doctest::Approx(Params * 4 * 29 / 0.8e12 + 12 * 4 * 5e-6));
  }

  TEST_CASE("eager gradient accumulation: a pass per micro-batch after the "
            "first") {
    auto C = hw::loadHardwareFromString(MemoryBoundGpu, "pass-test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    TwoBlocks T(64, 32);
    const double Params = 2 * (32 * 128 * 2); // 4 tensors
    TrainOptions O;
    O.Unfused = true;
    O.MicroBatch = 1;
    O.GlobalBatch = 4;
    auto R = predictTraining(T.B.G, *C, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    REQUIRE(R->MicroBatches == 4);
    // FP32, PyTorch's AccumulateGrad: 3 passes of 12 bytes a parameter,
    // one kernel per tensor.
    const double Fp32Pass = Params * 12 / 0.8e12 + 4 * 5e-6;
    CHECK(R->GradAccumSeconds == doctest::Approx(3 * Fp32Pass));
    const StageReport &S = R->peak();
    CHECK(R->StepSeconds ==
          doctest::Approx(4 * S.microBatchSeconds() + R->GradAccumSeconds +
                          R->OptimizerSeconds));
    CHECK(R->ComputeSeconds ==
          doctest::Approx(4 * (S.ForwardSeconds + S.BackwardSeconds) +
                          R->GradAccumSeconds));
    // Mixed precision, apex O2: fp16 in, fp32 master gradients, one
    // multi-tensor kernel: 10 bytes a parameter.
    O.DType = ir::DType::F16;
    auto H = predictTraining(T.B.G, *C, O);
    REQUIRE_MESSAGE(bool(H), llvm::toString(H.takeError()));
    CHECK(H->GradAccumSeconds ==
          doctest::Approx(3 * (Params * 10 / 0.8e12 + 5e-6)));
    // One micro-batch, or fused training code: no pass.
    O.GlobalBatch = 1;
    auto One = predictTraining(T.B.G, *C, O);
    REQUIRE(bool(One));
    CHECK(One->GradAccumSeconds == 0);
    O.GlobalBatch = 4;
    O.Unfused = false;
    auto Fused = predictTraining(T.B.G, *C, O);
    REQUIRE(bool(Fused));
    CHECK(Fused->GradAccumSeconds == 0);
  }

  TEST_CASE("strategy errors name the constraint") {
    TwoBlocks T;
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE(bool(C));
    TrainOptions O;
    O.Dp = 2;
    auto R = predictTraining(T.B.G, *C, O);
    REQUIRE_FALSE(bool(R));
    CHECK(llvm::toString(R.takeError()) ==
          "dp 2 x tp 1 x pp 1 = 2 devices, but cluster 'a100-sxm4-80gb' has "
          "1");
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    O.Dp = 2;
    O.MicroBatch = 3;
    O.GlobalBatch = 8;
    auto R2 = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_FALSE(bool(R2));
    CHECK(llvm::toString(R2.takeError()) ==
          "--global-batch 8 is not a multiple of --micro-batch 3 x dp 2");
    // A negative global batch made every time of the step negative.
    O.GlobalBatch = -6;
    auto R3 = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_FALSE(bool(R3));
    CHECK(llvm::toString(R3.takeError()) ==
          "--global-batch -6: give a positive number of samples per step");
  }

  TEST_CASE("options that change nothing for the model are refused") {
    // TwoBlocks has no attention core (its products each read a weight),
    // so FlashAttention and selective recomputation would leave the step
    // as it is while the report said they were on; --sp without --tp too.
    TwoBlocks T;
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions Flash;
    Flash.FlashAttention = true;
    auto F = predictTraining(T.B.G, *Dgx, Flash);
    REQUIRE_FALSE(bool(F));
    CHECK(llvm::StringRef(llvm::toString(F.takeError()))
              .startswith("--flash-attention: the model has no attention "
                          "core"));
    TrainOptions Sel;
    Sel.Recomp = Recompute::Selective;
    auto S = predictTraining(T.B.G, *Dgx, Sel);
    REQUIRE_FALSE(bool(S));
    CHECK(llvm::StringRef(llvm::toString(S.takeError()))
              .endswith("use --recompute none or full"));
    TrainOptions Sp;
    Sp.SequenceParallel = true;
    auto P = predictTraining(T.B.G, *Dgx, Sp);
    REQUIRE_FALSE(bool(P));
    CHECK(llvm::toString(P.takeError()) ==
          "--sp (sequence parallelism) needs --tp of at least 2");
    // A GPT has one: both run.
    const frontend::ImportedModel Gpt = generatedGpt(2, 64, 4, 16, 1);
    CHECK(bool(predictTraining(Gpt.Graph, *Dgx, Flash)));
    CHECK(bool(predictTraining(Gpt.Graph, *Dgx, Sel)));
  }

  TEST_CASE("ZeRO 2 and 3 exchange every micro-batch's gradients, ZeRO 1 "
            "once a step") {
    // ZeRO 1 keeps whole gradients: one reduce-scatter (RS) and one
    // all-gather (AG) a step. ZeRO 2 keeps a shard: M x RS + AG. ZeRO 3
    // also gathers parameters for every forward and backward: M x (RS + 2
    // AG). Stage 2 once cost what stage 1 did at any M.
    const frontend::ImportedModel Gpt = generatedGpt(2, 64, 4, 16, 1);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainingAnalysis A(Gpt.Graph);
    auto comm = [&](unsigned Zero, int64_t M) {
      TrainOptions O;
      O.Dp = 8;
      O.Zero = Zero;
      O.GlobalBatch = 8 * M;
      auto R = predictTraining(A, *Dgx, O);
      REQUIRE(bool(R));
      REQUIRE(R->MicroBatches == M);
      return R->DpCommSeconds;
    };
    CHECK(comm(2, 1) == doctest::Approx(comm(1, 1)));
    const double Rs = comm(2, 2) - comm(1, 2);
    CHECK(Rs > 0);
    CHECK(comm(2, 4) - comm(1, 4) == doctest::Approx(3 * Rs));
    CHECK(comm(1, 4) == doctest::Approx(comm(1, 1)));
    CHECK(comm(3, 4) == doctest::Approx(4 * comm(3, 1)));
    // ZeRO 3's working set: the largest unit's parameters gathered, and the
    // next unit's prefetched (2 units whole, less the shard held).
    TrainOptions Z2, Z3;
    Z2.Dp = Z3.Dp = 8;
    Z2.Zero = 2;
    Z3.Zero = 3;
    auto R2 = predictTraining(A, *Dgx, Z2), R3 = predictTraining(A, *Dgx, Z3);
    REQUIRE(bool(R2));
    REQUIRE(bool(R3));
    const std::vector<UnitCost> *Units = A.cachedUnits(*Dgx, Z3);
    REQUIRE(Units);
    double Largest = 0;
    for (const UnitCost &U : *Units)
      Largest = std::max(Largest, U.Params);
    CHECK(R3->Stages[0].WorkspaceBytes - R2->Stages[0].WorkspaceBytes ==
          doctest::Approx(2 * Largest * 4 * (1 - 1.0 / 8)));
  }

  TEST_CASE("--overlap-param-gather hides the parameters' all-gather behind "
            "the next forward, bucket by bucket") {
    const frontend::ImportedModel Gpt = generatedGpt(4, 256, 4, 64, 8);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainingAnalysis A(Gpt.Graph);
    for (unsigned Zero : {1u, 2u}) {
      CAPTURE(Zero);
      TrainOptions O;
      O.Dp = 8;
      O.Zero = Zero;
      O.GlobalBatch = 16;
      O.BucketBytes = 64 * 1024; // several buckets at this size
      auto Plain = predictTraining(A, *Dgx, O);
      REQUIRE_MESSAGE(bool(Plain), llvm::toString(Plain.takeError()));
      O.OverlapParamGather = true;
      auto Over = predictTraining(A, *Dgx, O);
      REQUIRE_MESSAGE(bool(Over), llvm::toString(Over.takeError()));
      // After the optimizer: all of it waited for, one gather.
      CHECK(Plain->DpGatherExposedSeconds == Plain->DpGatherSeconds);
      CHECK(Plain->DpGatherBuckets == 0);
      // Overlapped: in buckets (each paying its latency), less waited for.
      CHECK(Over->DpGatherBuckets > 1);
      CHECK(Over->DpGatherSeconds > Plain->DpGatherSeconds);
      CHECK(Over->DpGatherExposedSeconds < Plain->DpGatherExposedSeconds);
      CHECK(Over->DpGatherExposedSeconds > 0); // the first bucket's
      CHECK(Over->DpExposedSeconds - Plain->DpExposedSeconds ==
            doctest::Approx(Over->DpGatherExposedSeconds -
                            Plain->DpGatherExposedSeconds));
      CHECK(Over->StepSeconds - Plain->StepSeconds ==
            doctest::Approx(Over->DpExposedSeconds - Plain->DpExposedSeconds));
      // The reduce-scatters are as before.
      CHECK(Over->DpScatterSeconds == Plain->DpScatterSeconds);
      // The trace: the gather from the step's start, the first forward
      // after what it waits, the step's end where its time says.
      O.Timeline = true;
      auto Traced = predictTraining(A, *Dgx, O);
      REQUIRE(bool(Traced));
      const auto &Events = Traced->Trace.Events;
      const auto Gather = llvm::find_if(Events, [](const TimelineEvent &E) {
        return llvm::StringRef(E.Name).startswith("parameter all-gather");
      });
      REQUIRE(Gather != Events.end());
      CHECK(Gather->Start == 0);
      CHECK(Gather->Stream == 1);
      CHECK(Gather->Duration == doctest::Approx(Over->DpGatherSeconds));
      double FirstForward = 1e9;
      for (const TimelineEvent &E : Events)
        if (E.Category == "forward")
          FirstForward = std::min(FirstForward, E.Start);
      CHECK(FirstForward == doctest::Approx(Over->DpGatherExposedSeconds));
      CHECK(Traced->Trace.End == doctest::Approx(Over->StepSeconds));
    }
    // Without a sharded optimizer, or with ZeRO 3's per-micro-batch
    // gathers, there is nothing to overlap so: an error.
    for (unsigned Zero : {0u, 3u}) {
      TrainOptions O;
      O.Dp = 8;
      O.Zero = Zero;
      O.OverlapParamGather = true;
      auto R = predictTraining(A, *Dgx, O);
      REQUIRE_FALSE(bool(R));
      CHECK(llvm::StringRef(llvm::toString(R.takeError()))
                .startswith("--overlap-param-gather overlaps the sharded "
                            "optimizer's all-gather"));
    }
  }

  TEST_CASE("--explain gives each exchange with its count and formula") {
    // 2 layers, tp 2: the last stage's block exchanges 2 activations
    // forward and 2 backward, the vocabulary-parallel head 1, each
    // [1, 16, 64] fp32 = 4,096 bytes; the lines add up to the stage's tp time.
    const frontend::ImportedModel Gpt = generatedGpt(2, 64, 4, 16, 1);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainingAnalysis A(Gpt.Graph);
    TrainOptions O;
    O.Tp = O.Pp = O.Dp = 2;
    O.GlobalBatch = 4;
    auto Plain = predictTraining(A, *Dgx, O);
    REQUIRE(bool(Plain));
    CHECK(Plain->CommExplain.empty());
    O.Explain = true;
    auto R = predictTraining(A, *Dgx, O);
    REQUIRE(bool(R));
    CHECK(R->StepSeconds == Plain->StepSeconds);
    REQUIRE(R->CommExplain.size() == 3);
    CHECK(llvm::StringRef(R->CommExplain[0])
              .startswith("tp 2, stage 1, per micro-batch: 5 x all-reduce of "
                          "4.096 KB"));
    CHECK(R->CommExplain[0].find("ring all-reduce, 2 ranks on 1 node") !=
          std::string::npos);
    auto Tp = cost::groupOf(*Dgx, 2, 1);
    REQUIRE(bool(Tp));
    CHECK(5 * cost::collectiveSeconds(cost::Collective::AllReduce, 4096, *Tp) ==
          doctest::Approx(R->Stages[1].TpCommSeconds));
    CHECK(llvm::StringRef(R->CommExplain[1])
              .startswith("p2p: 2 x 2 micro-batches x vp 1 = 4 messages of "
                          "2.048 KB"));
    CHECK(llvm::StringRef(R->CommExplain[2])
              .startswith("dp 2: 1 bucket (up to 25 MiB each); the largest: "
                          "ring all-reduce"));
    // Memory: the peak stage's parts with their factors, adding up.
    CHECK(Plain->MemoryExplain.empty());
    const StageReport &P = R->peak();
    const std::string &Mem = R->MemoryExplain;
    CHECK(llvm::StringRef(Mem).startswith(
        llvm::formatv("memory (stage {0}): weights {1} parameters x 4 B = ",
                      P.Stage, int64_t(P.Params))
            .str()));
    CHECK(Mem.find("optimizer " + std::to_string(int64_t(P.Params)) +
                   " parameters x 8 B (Adam moments 8) = ") !=
          std::string::npos);
    CHECK(Mem.find(llvm::formatv("activations {0} in flight (1F1B: pp - "
                                 "stage) x ",
                                 P.InFlight)
                       .str()) != std::string::npos);
    CHECK(llvm::StringRef(Mem).endswith("total " +
                                        hw::formatDataBytes(P.peakBytes())));
  }

  TEST_CASE("the collectives' protocol: NCCL's choice, pinned or textbook") {
    // tp 2 and dp 2 on a DGX A100: each exchange priced under the protocol
    // the options give; the unit costs are cached per protocol.
    const frontend::ImportedModel Gpt = generatedGpt(2, 64, 4, 16, 1);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainingAnalysis A(Gpt.Graph);
    TrainOptions O;
    O.Tp = O.Dp = 2;
    O.GlobalBatch = 2;
    auto Tp = cost::groupOf(*Dgx, 2, 1);
    REQUIRE(bool(Tp));
    const auto stageTp = [&](cost::CommProtocol P) {
      O.Protocol = P;
      auto R = predictTraining(A, *Dgx, O);
      REQUIRE(bool(R));
      return R->Stages[0].TpCommSeconds;
    };
    const double Auto = stageTp(cost::CommProtocol::Auto);
    const double Textbook = stageTp(cost::CommProtocol::AlphaBeta);
    const double Simple = stageTp(cost::CommProtocol::Simple);
    // 4 KB messages: NCCL's base latency makes them dearer than the
    // link's latency alone, and Simple dearer than NCCL's pick (LL).
    CHECK(Textbook > 0);
    CHECK(Auto > Textbook);
    CHECK(Simple > Auto);
    // The textbook time is the sum of its all-reduces' alpha-beta times:
    // a whole number of them.
    const double One = cost::collectiveSeconds(
        cost::Collective::AllReduce, 4096, *Tp, cost::CommAlgorithm::Auto,
        cost::CommProtocol::AlphaBeta);
    CHECK(std::fmod(Textbook / One + 0.5, 1.0) == doctest::Approx(0.5));
    O.Protocol = cost::CommProtocol::Auto;
    O.Explain = true;
    auto R = predictTraining(A, *Dgx, O);
    REQUIRE(bool(R));
    CHECK(R->Stages[0].TpCommSeconds == Auto);
    CHECK(R->CommExplain[0].find("NCCL LL") != std::string::npos);
  }

  TEST_CASE("overlapped tensor-parallel exchanges hide behind their GEMMs "
            "but for the first chunk") {
    const frontend::ImportedModel Gpt = generatedGpt(2, 1024, 16, 512, 4);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Tp = 4;
    O.SequenceParallel = true;
    O.MicroBatch = 4;
    O.GlobalBatch = 8;
    O.DType = ir::DType::BF16;
    auto Plain = predictTraining(Gpt.Graph, *Dgx, O);
    REQUIRE_MESSAGE(bool(Plain), llvm::toString(Plain.takeError()));
    CHECK(Plain->TpOverlappedSeconds == 0);
    REQUIRE(Plain->TpCommSeconds > 0);
    O.TpCommOverlap = true;
    auto Over = predictTraining(Gpt.Graph, *Dgx, O);
    REQUIRE_MESSAGE(bool(Over), llvm::toString(Over.takeError()));
    // The same exchanges, part of them hidden: at most (tp - 1) / tp.
    CHECK(Over->TpOverlappedSeconds > 0);
    CHECK(Over->TpCommSeconds + Over->TpOverlappedSeconds ==
          doctest::Approx(Plain->TpCommSeconds).epsilon(1e-9));
    CHECK(Over->TpCommSeconds >= Plain->TpCommSeconds / 4 * (1 - 1e-9));
    CHECK(Over->CommSeconds == doctest::Approx(Plain->CommSeconds));
    // One stage: the step is shorter by exactly what is hidden.
    CHECK(Plain->StepSeconds - Over->StepSeconds ==
          doctest::Approx(Over->TpOverlappedSeconds).epsilon(1e-9));
    CHECK(Over->ExposedCommSeconds < Plain->ExposedCommSeconds);
    // Only sequence parallelism's exchanges are overlapped.
    O.SequenceParallel = false;
    auto NoSp = predictTraining(Gpt.Graph, *Dgx, O);
    REQUIRE_FALSE(bool(NoSp));
    CHECK(llvm::toString(NoSp.takeError()) ==
          "--tp-comm-overlap overlaps the all-gathers and reduce-scatters of "
          "sequence parallelism: add --sp (and --tp of at least 2)");
  }

  TEST_CASE("a 16-bit graph trains with the bytes of its fp32 twin") {
    // Storage moves to the training type from the graph's own: an fp16
    // export trained in fp16 is not halved again.
    auto Predict = [](modelgen::FloatType T) {
      const frontend::ImportedModel M =
          generatedGpt(2, 64, 4, 64, 4, 0, 128, T);
      auto C = hw::loadHardwareFromString(MemoryBoundGpu, "pass-test.yaml");
      REQUIRE(bool(C));
      TrainOptions O;
      O.MicroBatch = 4;
      O.DType = ir::DType::F16;
      auto R = predictTraining(M.Graph, *C, O);
      REQUIRE(bool(R));
      return std::make_pair(R->peak().ActivationsBytes, R->StepSeconds);
    };
    const auto F32 = Predict(modelgen::FloatType::F32);
    const auto F16 = Predict(modelgen::FloatType::F16);
    CHECK(F16.first == doctest::Approx(F32.first));
    CHECK(F16.second == doctest::Approx(F32.second).epsilon(1e-3));
  }

  TEST_CASE("GPT training FLOPs: 72 B s l h^2 (1 + s/6h + V/12lh)") {
    // Narayanan et al. 2021 count the products only: a layer's forward is
    // 24 B s h^2 + 4 B s^2 h, backward twice that, the LM head 6 B s h V.
    const frontend::ImportedModel M = generatedGpt(3, 64, 4, 32, 2, 0, 256);
    GraphWork W = computeWork(M.Graph);
    BackwardInfo Back = computeBackward(M.Graph, W);
    double Products = 0;
    for (const auto &N : M.Graph.nodes())
      if (W.Nodes[N->index()].Class == OpClass::Gemm)
        Products += 2 * W.Nodes[N->index()].Macs + Back.Work[N->index()].Flops;
    const double B = 2, S = 32, L = 3, H = 64, V = 256;
    CHECK(Products == doctest::Approx(72 * B * S * L * H * H *
                                      (1 + S / (6 * H) + V / (12 * L * H))));
  }

  TEST_CASE("the input pipeline bounds a step only when it is the slower") {
    auto Report = [](unsigned Devices, double Step) {
      TrainReport R;
      R.Devices = Devices;
      R.GlobalBatch = 2048;
      R.StepSeconds = Step;
      R.SamplesPerSecond = 2048 / Step;
      R.ModelFlops = 1e15;
      return R;
    };
    TrainOptions O;
    O.Dp = 8;
    // No rate: untouched.
    TrainReport R = Report(8, 0.1);
    applyInputRate(R, O, 8);
    CHECK(R.StepSeconds == 0.1);
    CHECK(R.InputSeconds == 0);
    CHECK_FALSE(R.InputBound);
    // One node loads all 2048 samples: 2048 / 16000 = 0.128 s > 0.1 s.
    O.InputSamplesPerSecond = 16000;
    applyInputRate(R, O, 8);
    CHECK(R.InputBound);
    CHECK(R.InputSeconds == doctest::Approx(0.128));
    CHECK(R.StepSeconds == doctest::Approx(0.128));
    CHECK(R.SamplesPerSecond == doctest::Approx(16000));
    CHECK(R.TflopsPerDevice == doctest::Approx(1e15 / 0.128 / 8 / 1e12));
    // Two nodes of 8 share the batch: 0.064 s, hidden under a 0.1 s step.
    O.Dp = 16;
    R = Report(16, 0.1);
    applyInputRate(R, O, 8);
    CHECK_FALSE(R.InputBound);
    CHECK(R.InputSeconds == doctest::Approx(0.064));
    CHECK(R.StepSeconds == 0.1);
    // Tensor parallelism over both nodes, one replica: its first stage's
    // node loads everything.
    O.Dp = 1;
    R = Report(16, 0.1);
    applyInputRate(R, O, 8);
    CHECK(R.InputSeconds == doctest::Approx(0.128));
    CHECK(R.InputBound);
  }
}
