//===- PipelineInferenceTest.cpp - Inference over pipeline stages ---------===//
#include "ZooModels.h"

#include "costmodels/Collectives.h"
#include "hwdb/Cluster.h"
#include "hwdb/Device.h"
#include "hwdb/Loader.h"
#include "ir/Graph.h"
#include "passes/PipelineInference.h"
#include "passes/ServingPlan.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace perfc;
using namespace perfc::test;

namespace {

/// A decoding step of 2 sequences after 15 tokens, 4 layers of width 256:
/// fp32, so a stage sends 2 x 256 x 4 bytes.
frontend::ImportedModel decoder(int64_t Layers = 4) {
  modelgen::TransformerSpec S =
      transformerSpec(modelgen::Family::Llama, Layers, 256, 8, 1, 1000);
  S.Past = 15;
  S.Batch = 2;
  return importZoo(zooBytes(S));
}

hw::Cluster cluster(const char *Name) {
  auto C = hw::loadHardware(Name);
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return std::move(*C);
}

Report predictOn(const ir::Graph &G, const hw::Cluster &C, unsigned Pp,
                 unsigned Tp = 1) {
  PredictOptions O;
  O.Device = &C.primaryDevice();
  if (Tp > 1) {
    auto Group = tensorParallelGroup(C, Tp, "--tp");
    REQUIRE_MESSAGE(bool(Group), llvm::toString(Group.takeError()));
    O.TensorParallel = *Group;
  }
  if (Pp > 1) {
    auto Pipe = pipelineStages(C, Pp, Tp);
    REQUIRE_MESSAGE(bool(Pipe), llvm::toString(Pipe.takeError()));
    REQUIRE_FALSE(bool(checkPipelineParallel(G, analyzeInferenceSplit(G), Pp)));
    O.PipelineParallel = *Pipe;
  }
  return predict(G, O);
}

std::string errorOf(llvm::Error E) {
  REQUIRE(bool(E));
  return llvm::toString(std::move(E));
}

} // namespace

TEST_SUITE("pipeline inference") {

  TEST_CASE("the split minimises the slowest stage, sends included") {
    const std::vector<std::vector<double>> NoSend(8,
                                                  std::vector<double>(9, 0.0));
    // Eight equal blocks, no prologue or epilogue: an even split.
    const std::vector<double> Even = {0, 1, 1, 1, 1, 1, 1, 1, 1, 0};
    CHECK(balancedStages(Even, 2, NoSend) ==
          std::vector<std::pair<unsigned, unsigned>>{{1, 4}, {5, 8}});
    CHECK(balancedStages(Even, 4, NoSend) ==
          std::vector<std::pair<unsigned, unsigned>>{
              {1, 2}, {3, 4}, {5, 6}, {7, 8}});
    // An output head worth two blocks: the last stage holds two fewer.
    const std::vector<double> Head = {0, 1, 1, 1, 1, 1, 1, 1, 1, 2};
    CHECK(balancedStages(Head, 2, NoSend) ==
          std::vector<std::pair<unsigned, unsigned>>{{1, 5}, {6, 8}});
    // A send after block 4 as dear as a block moves the cut.
    std::vector<std::vector<double>> Send = NoSend;
    for (unsigned J = 1; J < 8; ++J)
      Send[0][J] = J == 4 ? 5.0 : 0.5;
    const auto Split = balancedStages(Even, 2, Send);
    CHECK(Split.front().second != 4);
    CHECK(Split.back().second == 8);
    // As many stages as blocks: one each.
    const auto One = balancedStages(Even, 8, NoSend);
    for (unsigned S = 0; S < 8; ++S)
      CHECK(One[S] == std::pair<unsigned, unsigned>{S + 1, S + 1});
  }

  TEST_CASE("one batch passes every stage: the kernels of the whole model "
            "and the sends") {
    const frontend::ImportedModel M = decoder();
    const hw::Cluster C = cluster("dgx-a100");
    const Report Whole = predictOn(M.Graph, C, 1);
    const Report Two = predictOn(M.Graph, C, 2);
    REQUIRE(Two.PipelineParallel);
    const PipelineParallelReport &PP = *Two.PipelineParallel;
    REQUIRE(PP.Stages.size() == 2);
    CHECK(PP.Degree == 2);
    CHECK(PP.inFlight() == 2);
    CHECK(PP.Stages[0].FirstBlock == 1);
    CHECK(PP.Stages[0].LastBlock == 2);
    CHECK(PP.Stages[1].FirstBlock == 3);
    CHECK(PP.Stages[1].LastBlock == 4);
    CHECK(PP.Stages[0].Kernels + PP.Stages[1].Kernels ==
          Whole.Kernels->Kernels);
    CHECK(PP.Stages[0].KernelSeconds + PP.Stages[1].KernelSeconds ==
          doctest::Approx(*Whole.LatencySeconds).epsilon(1e-12));
    // The residual stream of 2 sequences, fp32, over NVSwitch (one node),
    // launched as a kernel.
    const double Bytes = 2 * 256 * 4.0;
    CHECK(PP.Stages[0].SendBytes == Bytes);
    CHECK(PP.Stages[0].SendLink == C.Groups.front().IntraNode->Name);
    CHECK(PP.Stages[0].SendSeconds ==
          doctest::Approx(cost::p2pSeconds(Bytes, *C.Groups.front().IntraNode) +
                          C.primaryDevice().LaunchOverheadSeconds));
    CHECK(PP.Stages[1].SendBytes == 0);
    CHECK(*Two.LatencySeconds ==
          doctest::Approx(*Whole.LatencySeconds + PP.Stages[0].SendSeconds));
    CHECK(PP.LatencySeconds == *Two.LatencySeconds);
    CHECK(PP.IntervalSeconds ==
          std::max(PP.Stages[0].seconds(), PP.Stages[1].seconds()));
    CHECK(PP.samplesPerSecond() == doctest::Approx(2 / PP.IntervalSeconds));
    // Every node is in the stage of its block.
    for (size_t I = 0; I < M.Graph.numNodes(); ++I) {
      const std::string Name = M.Graph.nodes()[I]->name().str();
      if (Name.find("/layers.0/") == 0 || Name.find("/layers.1/") == 0)
        CHECK(PP.NodeStage[I] == 0);
      if (Name.find("/layers.3/") == 0 || Name.find("lm_head") != Name.npos)
        CHECK(PP.NodeStage[I] == 1);
    }
  }

  TEST_CASE("each stage holds its blocks' weights and the caches of every "
            "batch in flight") {
    const frontend::ImportedModel M = decoder();
    const hw::Cluster C = cluster("dgx-a100");
    const Report Whole = predictOn(M.Graph, C, 1);
    const Report Two = predictOn(M.Graph, C, 2);
    REQUIRE(Whole.Memory);
    REQUIRE(Two.Memory);
    const PipelineParallelReport &PP = *Two.PipelineParallel;
    const double W = Whole.Memory->Usage.WeightsBytes;
    const double W0 = PP.Stages[0].Memory.Usage.WeightsBytes,
                 W1 = PP.Stages[1].Memory.Usage.WeightsBytes;
    // Split but for what both stages read (none here beyond a few bytes).
    CHECK(W0 + W1 >= W);
    CHECK(W0 + W1 < W * 1.001);
    // 2 layers x (key, value) x 2 sequences x 8 heads x 15 x 32 fp32 per
    // stage and batch; the other batch in flight holds as much again (and
    // its token ids, on the first stage).
    const double Cache = 2 * 2 * 2 * 8 * 15 * 32 * 4.0;
    CHECK(PP.Stages[1].InFlightInputsBytes == Cache);
    CHECK(PP.Stages[0].InFlightInputsBytes == Cache + 2 * 8);
    CHECK(PP.Stages[1].ReceivedBytes == PP.Stages[0].SendBytes);
    CHECK(PP.Stages[0].ReceivedBytes == 0);
    // The report's memory is the fullest stage's.
    const PipelineStageReport &Full = PP.Stages[PP.FullestStage];
    CHECK(Two.Memory->Usage.PeakBytes == Full.Memory.Usage.PeakBytes);
    for (const PipelineStageReport &St : PP.Stages)
      CHECK(St.Memory.Usage.PeakBytes <= Full.Memory.Usage.PeakBytes);
    const InferenceMemory &U = Full.Memory.Usage;
    CHECK(U.PeakBytes == doctest::Approx(U.WeightsBytes + U.ActivationsBytes));
    CHECK(Two.Memory->Fits);
    // The largest batch is the one every stage fits, in-flight caches
    // included: the least of the stages'.
    REQUIRE(Two.Memory->MaxBatch);
    REQUIRE(PP.Stages[0].Memory.MaxBatch);
    REQUIRE(PP.Stages[1].Memory.MaxBatch);
    CHECK(*Two.Memory->MaxBatch == std::min(*PP.Stages[0].Memory.MaxBatch,
                                            *PP.Stages[1].Memory.MaxBatch));
    for (const PipelineStageReport &St : PP.Stages) {
      const InferenceMemory &S = St.Memory.Usage;
      CHECK(St.Memory.BytesPerSample ==
            doctest::Approx((S.PeakBytes - S.WeightsBytes) / 2));
    }
  }

  TEST_CASE("stages of tensor-parallel groups: across nodes over InfiniBand, "
            "each rank sending its share") {
    const frontend::ImportedModel M = decoder();
    const hw::Cluster C = cluster("dgx-h100-superpod");
    const Report R = predictOn(M.Graph, C, 2, 8);
    REQUIRE(R.PipelineParallel);
    REQUIRE(R.TensorParallel);
    const PipelineStageReport &St = R.PipelineParallel->Stages[0];
    CHECK(St.SendLink == C.Groups.front().InterNode->Name);
    CHECK(St.SendBytes == 2 * 256 * 4.0 / 8);
    // Two stages of 4 in one node: the send stays on NVLink.
    auto Inside = pipelineStages(C, 2, 4);
    REQUIRE(bool(Inside));
    CHECK(Inside->Links.front() == &*C.Groups.front().IntraNode);
    auto Across = pipelineStages(C, 4, 4);
    REQUIRE(bool(Across));
    CHECK(Across->Links[0] == &*C.Groups.front().IntraNode);
    CHECK(Across->Links[1] == &*C.Groups.front().InterNode);
    CHECK(Across->Links[2] == &*C.Groups.front().IntraNode);
  }

  TEST_CASE("errors: more stages than blocks or devices, no blocks") {
    const frontend::ImportedModel M = decoder(2);
    const InferenceSplit S = analyzeInferenceSplit(M.Graph);
    CHECK(errorOf(checkPipelineParallel(M.Graph, S, 3)) ==
          "--pp 3: the model has 2 blocks (layers), and each stage holds at "
          "least one; give --pp at most 2");
    CHECK_FALSE(bool(checkPipelineParallel(M.Graph, S, 2)));
    const hw::Cluster A = cluster("dgx-a100");
    auto Many = pipelineStages(A, 4, 4);
    REQUIRE_FALSE(bool(Many));
    CHECK(llvm::toString(Many.takeError()) ==
          "--pp 4 with --tp 4 runs 4 stages of 4 devices (16 in all), but "
          "'dgx-a100' has 8: give a cluster with more (e.g. "
          "dgx-h100-superpod) or fewer stages");
    const hw::Cluster One = cluster("a100-sxm4-80gb");
    auto Single = pipelineStages(One, 2, 1);
    REQUIRE_FALSE(bool(Single));
    CHECK(llvm::toString(Single.takeError()).find("--pp 2 runs 2 stages") == 0);
  }

  TEST_CASE("a serving plan stages a model larger than a node") {
    const frontend::ImportedModel M = decoder();
    hw::Cluster C = cluster("dgx-a100");
    const Report Whole = predictOn(M.Graph, C, 1);
    const double Peak = Whole.Memory->Usage.PeakBytes;
    // Room for 60% of one run (the device shrunk by a reserve): whole
    // does not fit, so stages are tried.
    REQUIRE_FALSE(bool(hw::reserveMemory(
        C, C.primaryDevice().Memory[0].CapacityBytes - 0.6 * Peak, "test")));
    ServingRequest R;
    R.Cluster = &C;
    R.Base.Device = &C.primaryDevice();
    auto P = planServing(M.Graph, R);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    const ServingCandidate *Chosen = P->chosen();
    REQUIRE(Chosen);
    CHECK(Chosen->Fits);
    bool Staged = false;
    for (const ServingCandidate &Cand : P->Candidates)
      if (Cand.Stages > 1) {
        Staged = true;
        CHECK(Cand.IntervalSeconds < Cand.LatencySeconds);
        CHECK(Cand.Devices % Cand.Stages == 0);
      }
    CHECK(Staged);
    CHECK(P->MaxPipelineDevices == 8);
    ServingCandidate Named;
    Named.Split = ServingSplit::Tensor;
    Named.Devices = 16;
    Named.Stages = 2;
    CHECK(name(Named) == "tp 8 pp 2");
    Named.Split = ServingSplit::Whole;
    Named.Devices = 4;
    Named.Stages = 4;
    CHECK(name(Named) == "pp 4");
  }
}
