//===- PipelineTest.cpp - Pipeline schedules, bubbles and transfers -------===//
#include "TrainingHelpers.h"

#include "costmodels/Collectives.h"
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "hwdb/Units.h"
#include "passes/Backward.h"
#include "passes/LoadTimeConstants.h"
#include "passes/Schedule.h"
#include "passes/TrainStep.h"
#include "tools/modelgen/TransformerGen.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace perfc;
using namespace perfc::test;

TEST_SUITE("training") {

  TEST_CASE("interleaved 1F1B runs micro-batches in groups of pp") {
    // Megatron-LM refuses a micro-batch count that pp does not divide
    // under the interleaved schedule (pipeline_parallel/schedules.py).
    const frontend::ImportedModel Gpt = generatedGpt(4, 64, 4, 16, 1);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Pp = 2;
    O.Vp = 2;
    O.GlobalBatch = 6;
    CHECK(bool(predictTraining(Gpt.Graph, *Dgx, O)));
    O.GlobalBatch = 5;
    auto R = predictTraining(Gpt.Graph, *Dgx, O);
    REQUIRE_FALSE(bool(R));
    CHECK(llvm::toString(R.takeError()) ==
          "--vp 2: the interleaved schedule runs micro-batches in groups of "
          "pp 2, but a step has 5 per data-parallel rank (global batch 5 / "
          "(micro-batch 1 x dp 1)); give a global batch that makes it a "
          "multiple of 2");
    O.Vp = 1; // plain 1F1B takes any count
    CHECK(bool(predictTraining(Gpt.Graph, *Dgx, O)));
  }

  TEST_CASE("pipeline: the 1F1B bubble is (pp - 1) / vp micro-batch times") {
    TwoBlocks T;
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Pp = 2;
    O.GlobalBatch = 8;
    O.Split = Partition::Even;
    auto R = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    CHECK(R->MicroBatches == 8);
    double Slowest = 0;
    for (const StageReport &S : R->Stages)
      Slowest = std::max(Slowest, S.microBatchSeconds());
    CHECK(R->BubbleSeconds == doctest::Approx(Slowest));
    // Stage 0 keeps pp = 2 micro-batches in flight, stage 1 one.
    CHECK(R->Stages[0].InFlight == 2);
    CHECK(R->Stages[1].InFlight == 1);
  }

  TEST_CASE("1F1B simulation: equal stages take (m + p - 1)(f + b)") {
    std::vector<StageTimes> Four(4, StageTimes{1.0, 2.0});
    Timeline T = simulateOneFOneB(Four, 8, 0.0);
    CHECK(T.End == doctest::Approx((8 + 4 - 1) * 3.0));
    CHECK(T.Events.size() == 4 * 8 * 2);
    // One stage: no bubble.
    Timeline One = simulateOneFOneB({StageTimes{1.0, 2.0}}, 5, 0.0);
    CHECK(One.End == doctest::Approx(15.0));
    // Transfers add to the fill and drain: 2 (p - 1) of them on the
    // critical path with a single micro-batch.
    Timeline Xfer = simulateOneFOneB(Four, 1, 0.5);
    CHECK(Xfer.End == doctest::Approx(4 * 3.0 + 2 * 3 * 0.5));
    // GPipe: the same bubble on equal stages.
    CHECK(simulateGPipe(Four, 8, 0.0).End == doctest::Approx(11 * 3.0));
  }

  TEST_CASE("interleaved 1F1B simulation: the bubble shrinks by the "
            "chunks per stage") {
    // 4 stages of 3 equal chunks (a stage's micro-batch: forward 1,
    // backward 2): Megatron-LM's (m + (p - 1) / v)(f + b), every chunk
    // pass run once, whatever the micro-batch count (m = p runs all
    // forwards first).
    const ChunkTimes Chunks(4, std::vector<StageTimes>(3, {1.0 / 3, 2.0 / 3}));
    for (unsigned M : {4u, 8u, 12u}) {
      const Timeline T =
          simulateOneFOneB(Chunks, M, std::vector<double>(3, 0.0));
      CHECK(T.End == doctest::Approx((M + 3.0 / 3) * 3.0));
      CHECK(T.Events.size() == 4 * 3 * M * 2);
    }
    // One chunk per stage is plain 1F1B.
    const ChunkTimes One(4, std::vector<StageTimes>(1, {1.0, 2.0}));
    CHECK(simulateOneFOneB(One, 8, std::vector<double>(3, 0.0)).End ==
          doctest::Approx((8 + 3) * 3.0));
    // A transfer per hop, the wrap from the last stage to the first
    // included: one micro-batch crosses 4 x 3 - 1 hops forward and back.
    const Timeline X = simulateOneFOneB(Chunks, 4, std::vector<double>(3, 0.1));
    CHECK(X.End > (4 + 1) * 3.0);
    const Timeline Single =
        simulateOneFOneB(ChunkTimes(2, std::vector<StageTimes>(2, {1.0, 2.0})),
                         2, std::vector<double>(1, 0.5));
    CHECK(Single.Events.size() == 2 * 2 * 2 * 2);
  }

  TEST_CASE("the trace of an interleaved step runs every chunk pass and "
            "ends with the step") {
    const frontend::ImportedModel Gpt = generatedGpt(4, 256, 4, 128, 2);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Pp = 2;
    O.Vp = 2;
    O.MicroBatch = 2;
    O.GlobalBatch = 2 * 4;
    O.Timeline = true;
    auto R = predictTraining(Gpt.Graph, *Dgx, O);
    REQUIRE(bool(R));
    size_t Passes = 0, Chunk1 = 0;
    for (const TimelineEvent &E : R->Trace.Events)
      if (E.Category == "forward" || E.Category == "backward") {
        ++Passes;
        Chunk1 += E.Name.find("(chunk 1)") != std::string::npos;
      }
    CHECK(Passes == 2 * 2 * 4 * 2);
    CHECK(Chunk1 == Passes / 2);
    // The closed form (Megatron-LM's (m + (p - 1) / v) stage times, every
    // transfer in full) and the simulated schedule of the chunks' own times
    // agree closely (drawn without the interleaving, the trace's bubble was
    // p - 1 stage times, not (p - 1) / v).
    CHECK(R->Trace.End == doctest::Approx(R->StepSeconds).epsilon(0.02));
  }

  TEST_CASE("GPipe keeps every micro-batch in flight, 1F1B pp - s") {
    TwoBlocks T;
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Pp = 2;
    O.GlobalBatch = 8;
    O.Split = Partition::Even;
    O.Schedule = PipelineSchedule::GPipe;
    auto G = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_MESSAGE(bool(G), llvm::toString(G.takeError()));
    CHECK(G->Stages[0].InFlight == 8);
    CHECK(G->Stages[1].InFlight == 8);
    O.Schedule = PipelineSchedule::OneFOneB;
    auto F = predictTraining(T.B.G, *Dgx, O);
    REQUIRE(bool(F));
    CHECK(F->Stages[0].ActivationsBytes * 4 ==
          doctest::Approx(G->Stages[0].ActivationsBytes));
    CHECK(F->StepSeconds == doctest::Approx(G->StepSeconds));
  }

  TEST_CASE("the 1F1B bubble: (p - 1) / (m + p - 1) of the pipeline on "
            "equal stages, the faster stages' fill and drain otherwise") {
    // Equal stages: the schedule's bubble fraction, which the step's
    // closed form m T + (p - 1) T / vp reproduces.
    for (unsigned M : {1u, 6u, 16u}) {
      const Timeline Equal =
          simulateOneFOneB(std::vector<StageTimes>(4, {1.0, 2.0}), M, 0.0);
      CHECK((Equal.End - M * 3.0) / Equal.End ==
            doctest::Approx(3.0 / (M + 4 - 1)));
    }
    // The step: the first block computes no gradient for the graph's
    // input, so stage 0 is the faster; it fills and drains while the
    // slower stage sets the pace (Alpa's sum of the stages plus (m - 1)
    // times the slowest), as the simulated schedule has it when the slower
    // stage is the last.
    TwoBlocks T;
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Pp = 2;
    O.GlobalBatch = 6;
    O.Split = Partition::Even;
    O.Optimizer = OptimizerKind::Sgd;
    auto R = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    REQUIRE(R->Stages.size() == 2);
    const double T0 = R->Stages[0].microBatchSeconds(),
                 T1 = R->Stages[1].microBatchSeconds();
    REQUIRE(T0 < T1);
    CHECK(R->BubbleSeconds == doctest::Approx(T0));
    const double Pipeline = R->StepSeconds - R->P2pSeconds -
                            R->OptimizerSeconds - R->DpExposedSeconds;
    CHECK(Pipeline == doctest::Approx(6 * T1 + T0));
    const Timeline Sim = simulateOneFOneB(
        {StageTimes{R->Stages[0].ForwardSeconds, R->Stages[0].BackwardSeconds},
         StageTimes{R->Stages[1].ForwardSeconds, R->Stages[1].BackwardSeconds}},
        6, 0.0);
    CHECK(Sim.End == doctest::Approx(Pipeline));
  }

  TEST_CASE("a pipeline sends what crosses its own cuts, not the largest "
            "tensor between any two blocks") {
    // Three blocks narrowing from 256 to 16 columns, as a CNN's late cuts
    // carry less than its early ones.
    GraphBuilder B;
    ir::Value *X = B.input("x", {4, 64});
    const int64_t Widths[] = {256, 16, 16};
    int64_t In = 64;
    for (int L = 0; L < 3; ++L) {
      const std::string P = "/layers." + std::to_string(L) + "/";
      ir::Value *Y = B.tensor(P + "y", {4, Widths[L]});
      expectOk(B.G.addNode(P + "fc/MatMul", "MatMul", "",
                           {X, B.weight(P + "w", {In, Widths[L]})}, {Y}));
      X = Y;
      In = Widths[L];
    }
    B.G.markOutput(X);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    const hw::Link &NvSwitch = *Dgx->Groups.front().IntraNode;
    auto p2pWith = [&](std::vector<unsigned> Split) {
      TrainOptions O;
      O.Pp = 2;
      O.ChunkBlocks = std::move(Split);
      O.Optimizer = OptimizerKind::Sgd;
      auto R = predictTraining(B.G, *Dgx, O);
      REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
      return R->P2pSeconds;
    };
    // One micro-batch: its activation forward and its gradient backward.
    CHECK(p2pWith({1, 2}) ==
          doctest::Approx(2 * cost::p2pSeconds(4 * 256 * 4, NvSwitch)));
    CHECK(p2pWith({2, 1}) ==
          doctest::Approx(2 * cost::p2pSeconds(4 * 16 * 4, NvSwitch)));
  }
}
