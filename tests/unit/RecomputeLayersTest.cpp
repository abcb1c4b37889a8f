//===- RecomputeLayersTest.cpp - --recompute-method, --recompute-num-layers
//===//
//
// Which blocks full recomputation reruns, as Megatron chooses them: every
// block, keeping the input of each group of N (uniform), or only the first
// N blocks of each pipeline chunk (block), the others keeping their
// activations.
//
//===----------------------------------------------------------------------===//
#include "TrainingHelpers.h"

#include "hwdb/Loader.h"
#include "passes/TrainOptionNames.h"
#include "passes/TrainStep.h"

#include <doctest/doctest.h>

using namespace perfc;
using namespace perfc::test;

namespace {

TrainReport train(const ir::Graph &G, const hw::Cluster &C,
                  const TrainOptions &O) {
  auto R = predictTraining(G, C, O);
  REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
  return std::move(*R);
}

/// O under full recomputation by Method with N blocks.
TrainOptions fullBy(TrainOptions O, RecomputeMethod Method, unsigned N) {
  O.Recomp = Recompute::Full;
  O.Method = Method;
  O.RecomputeNumLayers = N;
  return O;
}

hw::Cluster cluster(llvm::StringRef Name) {
  auto C = hw::loadHardware(Name);
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return std::move(*C);
}

/// 8 identical blocks (generatedGpt(8, ...)) on pp 2, 4 a stage, 4
/// micro-batches of 2.
TrainOptions fourPerStage() {
  TrainOptions O;
  O.Pp = 2;
  O.MicroBatch = 2;
  O.GlobalBatch = 8;
  O.Split = Partition::Even;
  return O;
}

} // namespace

TEST_SUITE("recompute layers") {
  TEST_CASE("the block method: each block rerun trades its activations for "
            "its input and its forward") {
    // 8 identical blocks on pp 2, 4 a stage (even), 4 micro-batches.
    const frontend::ImportedModel M = generatedGpt(8, 64, 4, 32, 2);
    const hw::Cluster C = cluster("dgx-a100");
    TrainOptions O = fourPerStage();
    const TrainReport None = train(M.Graph, C, O);
    const TrainReport Full =
        train(M.Graph, C, fullBy(O, RecomputeMethod::Uniform, 1));
    std::vector<TrainReport> Block;
    for (unsigned N = 1; N <= 4; ++N)
      Block.push_back(train(M.Graph, C, fullBy(O, RecomputeMethod::Block, N)));
    // Every block of a chunk: full recomputation itself.
    CHECK(Block[3].StepSeconds == Full.StepSeconds);
    for (unsigned S = 0; S < 2; ++S) {
      CHECK(Block[3].Stages[S].ActivationsBytes ==
            Full.Stages[S].ActivationsBytes);
      CHECK(Full.Stages[S].RecomputedBlocks == 4);
      CHECK(None.Stages[S].RecomputedBlocks == 0);
    }
    for (unsigned N = 1; N <= 4; ++N) {
      const StageReport &S0 = Block[N - 1].Stages[0];
      CHECK(S0.RecomputedBlocks == N);
      // Identical blocks: N of 4 blocks' forwards again.
      CHECK(S0.RecomputeSeconds ==
            doctest::Approx(Full.Stages[0].RecomputeSeconds * N / 4));
    }
    // Time rises and memory falls with every block rerun.
    CHECK(None.StepSeconds < Block[0].StepSeconds);
    for (unsigned N = 1; N < 4; ++N) {
      CHECK(Block[N - 1].StepSeconds < Block[N].StepSeconds);
      CHECK(Block[N - 1].Stages[0].ActivationsBytes >
            Block[N].Stages[0].ActivationsBytes);
    }
    CHECK(None.Stages[0].ActivationsBytes >
          Block[0].Stages[0].ActivationsBytes);
    // Each block rerun keeps, per micro-batch in flight (2 on stage 0), its
    // input instead of its activations: the same step each time.
    const double Step = Block[0].Stages[0].ActivationsBytes -
                        Block[1].Stages[0].ActivationsBytes;
    CHECK(Step > 0);
    CHECK(Block[1].Stages[0].ActivationsBytes -
              Block[2].Stages[0].ActivationsBytes ==
          doctest::Approx(Step));
  }

  TEST_CASE("the uniform method: groups of N blocks share one input and "
            "live again together") {
    const frontend::ImportedModel M = generatedGpt(8, 64, 4, 32, 2);
    const hw::Cluster C = cluster("dgx-a100");
    TrainOptions O = fourPerStage();
    const TrainReport One =
        train(M.Graph, C, fullBy(O, RecomputeMethod::Uniform, 1));
    const TrainReport Two =
        train(M.Graph, C, fullBy(O, RecomputeMethod::Uniform, 2));
    const TrainReport Four =
        train(M.Graph, C, fullBy(O, RecomputeMethod::Uniform, 4));
    const TrainReport Block =
        train(M.Graph, C, fullBy(O, RecomputeMethod::Block, 1));
    // Every block reruns: the same time.
    CHECK(Two.StepSeconds == One.StepSeconds);
    CHECK(Four.StepSeconds == One.StepSeconds);
    CHECK(Two.Stages[0].RecomputedBlocks == 4);
    // Stage 0 keeps 2 micro-batches (F); a block keeps its input I, or all
    // of its activations S. Against groups of one: groups of 2 keep 2 I
    // fewer per micro-batch and rerun 2 S at once where one ran S; groups
    // of 4, 3 I fewer and 4 S at once:
    //   Two - One = S - 2 F I,  Four - One = 3 S - 3 F I,
    // and the block method's first block, S - I more per micro-batch:
    //   Block1 - One = 3 F (S - I).
    const double F = One.Stages[0].InFlight;
    REQUIRE(F == 2);
    const double D2 =
        Two.Stages[0].ActivationsBytes - One.Stages[0].ActivationsBytes;
    const double D4 =
        Four.Stages[0].ActivationsBytes - One.Stages[0].ActivationsBytes;
    const double I = (D4 - 3 * D2) / (3 * F);
    const double S = D2 + 2 * F * I;
    CHECK(I > 0);
    CHECK(S > I);
    CHECK(Block.Stages[0].ActivationsBytes - One.Stages[0].ActivationsBytes ==
          doctest::Approx(3 * F * (S - I)));
  }

  TEST_CASE("the block method reruns its blocks' exchanges alone, on the "
            "split balanced without recomputation") {
    const frontend::ImportedModel M = generatedGpt(8, 64, 4, 32, 2);
    const hw::Cluster C = cluster("dgx-a100");
    TrainOptions O = fourPerStage();
    O.Split = Partition::Balanced;
    O.Tp = 2;
    const TrainReport None = train(M.Graph, C, O);
    const TrainReport Full =
        train(M.Graph, C, fullBy(O, RecomputeMethod::Uniform, 1));
    const TrainReport Two =
        train(M.Graph, C, fullBy(O, RecomputeMethod::Block, 2));
    // The split without recomputation.
    REQUIRE(Two.Stages.size() == 2);
    for (unsigned S = 0; S < 2; ++S) {
      CHECK(Two.Stages[S].Chunks == None.Stages[S].Chunks);
      CHECK(Two.Stages[S].RecomputedBlocks == 2);
      const double PerBlock =
          (Full.Stages[S].TpCommSeconds - None.Stages[S].TpCommSeconds) /
          Full.Stages[S].RecomputedBlocks;
      CHECK(PerBlock > 0);
      CHECK(Two.Stages[S].TpCommSeconds ==
            doctest::Approx(None.Stages[S].TpCommSeconds + 2 * PerBlock));
    }
    // More blocks than a chunk holds: all of them.
    const TrainReport All =
        train(M.Graph, C, fullBy(O, RecomputeMethod::Block, 100));
    CHECK(All.Stages[0].RecomputedBlocks + All.Stages[1].RecomputedBlocks == 8);
  }

  TEST_CASE("each kernel's rerun adds up to its stage's, under the block "
            "method") {
    const frontend::ImportedModel M = generatedGpt(4, 64, 4, 32, 2);
    const hw::Cluster C = cluster("a100-sxm4-80gb");
    TrainOptions O = fullBy(TrainOptions(), RecomputeMethod::Block, 1);
    O.Explain = true;
    const TrainReport R = train(M.Graph, C, O);
    REQUIRE(R.NodeBackwards.size() == M.Graph.numNodes());
    double Sum = 0;
    for (const TrainReport::NodeBackward &B : R.NodeBackwards)
      Sum += B.RecomputeSeconds;
    CHECK(Sum > 0);
    CHECK(Sum == doctest::Approx(R.Stages[0].RecomputeSeconds));
    CHECK(R.Stages[0].RecomputedBlocks == 1);
    CHECK(R.MemoryExplain.find("block method: the inputs of each chunk's "
                               "first block, 1 of the stage's 4") !=
          std::string::npos);
  }

  TEST_CASE("names, labels and errors") {
    const RecomputeLayerNames Flags{"--recompute-method",
                                    "--recompute-num-layers", "--recompute"};
    TrainOptions O;
    REQUIRE_FALSE(bool(parseRecomputeLayers("", llvm::None, false, Flags, O)));
    CHECK(O.Recomp == Recompute::None);
    REQUIRE_FALSE(bool(parseRecomputeLayers("block", 3u, false, Flags, O)));
    CHECK(O.Recomp == Recompute::Full);
    CHECK(O.Method == RecomputeMethod::Block);
    CHECK(O.RecomputeNumLayers == 3);
    CHECK(recomputeLabel(O) == "full (block method, 3 blocks)");
    O.Method = RecomputeMethod::Uniform;
    O.RecomputeNumLayers = 2;
    CHECK(recomputeLabel(O) == "full (uniform method, groups of 2 blocks)");
    O.RecomputeNumLayers = 1;
    CHECK(recomputeLabel(O) == "full");
    TrainOptions U;
    REQUIRE_FALSE(bool(parseRecomputeLayers("", 2u, false, Flags, U)));
    CHECK(U.Method == RecomputeMethod::Uniform);
    CHECK(U.RecomputeNumLayers == 2);
    auto Error = [&](llvm::StringRef Method, llvm::Optional<unsigned> N,
                     bool Given, Recompute Before) {
      TrainOptions B;
      B.Recomp = Before;
      return llvm::toString(parseRecomputeLayers(Method, N, Given, Flags, B));
    };
    CHECK(Error("blocks", 2u, false, Recompute::None) ==
          "unknown --recompute-method 'blocks': use uniform or block");
    CHECK(Error("", 0u, false, Recompute::None) ==
          "--recompute-num-layers must be at least 1 (the blocks full "
          "recomputation reruns together, or of each pipeline chunk)");
    CHECK(Error("block", llvm::None, false, Recompute::None) ==
          "--recompute-method block reruns the first N blocks of each "
          "pipeline chunk: give --recompute-num-layers N");
    CHECK(Error("", 2u, true, Recompute::None) ==
          "--recompute-num-layers chooses the blocks full recomputation "
          "reruns, and recomputation here is none: drop "
          "--recompute-num-layers, or use --recompute full");
    // Selective from recompute modules counts as given.
    CHECK(Error("uniform", llvm::None, false, Recompute::Selective) ==
          "--recompute-method chooses the blocks full recomputation reruns, "
          "and recomputation here is selective: drop --recompute-method, or "
          "use --recompute full");
    // The library refuses no blocks at all.
    const frontend::ImportedModel M = generatedGpt(2, 64, 4, 16, 1);
    TrainOptions Zero = fullBy(TrainOptions(), RecomputeMethod::Block, 0);
    auto R = predictTraining(M.Graph, cluster("a100-sxm4-80gb"), Zero);
    REQUIRE_FALSE(bool(R));
    CHECK(llvm::toString(R.takeError())
              .find("--recompute-num-layers must be at least 1") == 0);
  }
}
