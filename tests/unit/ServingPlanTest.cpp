//===- ServingPlanTest.cpp - perfc --plan without --train -----------------===//
#include "ZooModels.h"

#include "hwdb/Loader.h"
#include "ir/Graph.h"
#include "passes/ServingPlan.h"

#include <doctest/doctest.h>

#include <string>

using namespace perfc;
using namespace perfc::test;

namespace {

/// A decoding step of 16 sequences after 255 tokens: 4 heads (2 key/value
/// heads), so tp 2 splits it and tp 4 and 8 do not divide the key/value
/// heads.
frontend::ImportedModel decoder(int64_t Experts) {
  modelgen::TransformerSpec S =
      transformerSpec(modelgen::Family::Llama, 2, 256, 4, 1, 1000);
  S.KvHeads = 2;
  S.Past = 255;
  S.Batch = 16;
  if (Experts) {
    S.Experts = Experts;
    S.TopK = 2;
  }
  return importZoo(zooBytes(S));
}

hw::Cluster cluster(const char *Name) {
  auto C = hw::loadHardware(Name);
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return std::move(*C);
}

ServingPlan plan(const ir::Graph &G, const hw::Cluster &C,
                 unsigned Devices = 0) {
  ServingRequest R;
  R.Cluster = &C;
  R.Base.Device = &C.primaryDevice();
  R.Devices = Devices;
  auto P = planServing(G, R);
  REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
  return std::move(*P);
}

/// The latency of one layout predicted on its own, as --tp or --ep does.
double latencyOf(const ir::Graph &G, const hw::Cluster &C, ServingSplit S,
                 unsigned N) {
  PredictOptions O;
  O.Device = &C.primaryDevice();
  auto Group = tensorParallelGroup(C, N, "--tp");
  REQUIRE(bool(Group));
  auto Split = S == ServingSplit::Tensor ? analyzeTensorParallel(G, N)
                                         : analyzeExpertParallel(G, N);
  REQUIRE_MESSAGE(bool(Split), llvm::toString(Split.takeError()));
  O.Split = &*Split;
  if (S == ServingSplit::Tensor)
    O.TensorParallel = *Group;
  else
    O.ExpertParallel = *Group;
  return *predict(G, O).LatencySeconds;
}

} // namespace

TEST_SUITE("serving plan") {

  TEST_CASE("every layout up to a node is predicted as --tp would, the "
            "fastest that fits chosen, splits the model refuses are "
            "listed with their reason") {
    const frontend::ImportedModel M = decoder(0);
    const hw::Cluster C = cluster("dgx-h100");
    const ServingPlan P = plan(M.Graph, C);
    CHECK(P.Samples == 16);
    CHECK(P.MaxDevices == 8);
    REQUIRE(P.Candidates.size() == 2); // whole, tp 2
    CHECK(P.Candidates[0].Split == ServingSplit::Whole);
    CHECK(P.Candidates[1].Split == ServingSplit::Tensor);
    CHECK(P.Candidates[1].Devices == 2);
    CHECK(P.Candidates[1].LatencySeconds ==
          doctest::Approx(latencyOf(M.Graph, C, ServingSplit::Tensor, 2)));
    // tp 4 does not divide the 2 key/value heads, nor does tp 8: one
    // reason, neither priced.
    REQUIRE(P.Skipped.size() == 1);
    CHECK(P.Skipped[0].find("--tp 4") != std::string::npos);
    // A dense model has no expert-parallel layouts.
    for (const ServingCandidate &Cand : P.Candidates) {
      CHECK(Cand.Split != ServingSplit::Expert);
      CHECK(Cand.Fits);
      CHECK(Cand.CapacityBytes > 0);
    }
    // The fastest of those that fit, whichever it is.
    REQUIRE(P.chosen());
    for (const ServingCandidate &Cand : P.Candidates)
      CHECK(P.chosen()->LatencySeconds <= Cand.LatencySeconds);
    // --devices caps the layouts: one device, the model whole.
    const ServingPlan One = plan(M.Graph, C, 1);
    REQUIRE(One.Candidates.size() == 1);
    CHECK(One.chosen() == &One.Candidates[0]);
  }

  TEST_CASE("at each layout's largest batch, pipeline stages are tried "
            "though fewer fit") {
    // The 2-layer decoder fits whole on one H100: a plan at its batch tries
    // no stages (more would serve no faster); one for --max-batch tries 2
    // stages of the whole model and of tp 2 (4 devices; 2 blocks allow no
    // more), each predicted as --pp would.
    const frontend::ImportedModel M = decoder(0);
    const hw::Cluster C = cluster("dgx-h100");
    ServingRequest R;
    R.Cluster = &C;
    R.Base.Device = &C.primaryDevice();
    auto AtBatch = serveLayouts(M.Graph, R);
    REQUIRE_MESSAGE(bool(AtBatch), llvm::toString(AtBatch.takeError()));
    for (const ServingCandidate &Cand : AtBatch->Candidates)
      CHECK(Cand.Stages == 1);
    R.EveryPipelineDegree = true;
    auto Every = serveLayouts(M.Graph, R);
    REQUIRE_MESSAGE(bool(Every), llvm::toString(Every.takeError()));
    std::vector<std::string> Names;
    for (const ServingCandidate &Cand : Every->Candidates)
      Names.push_back(name(Cand));
    CHECK(Names ==
          std::vector<std::string>{"whole", "tp 2", "pp 2", "tp 2 pp 2"});
    const ServingCandidate &Pp2 = Every->Candidates[2];
    CHECK(Pp2.Devices == 2);
    CHECK(Pp2.Fits);
    // Two batches in flight: a step completes every slowest stage, about
    // half the pass.
    CHECK(Pp2.IntervalSeconds < Pp2.LatencySeconds);
    CHECK(Every->Candidates[3].Devices == 4);
    // The stages beyond the model's 2 blocks are refused once, by reason.
    bool BlocksNamed = false;
    for (const std::string &Why : Every->Skipped)
      BlocksNamed |= Why.find("--pp 4") != std::string::npos;
    CHECK(BlocksNamed);
  }

  TEST_CASE("a mixture is also served expert-parallel, what does not fit "
            "is never chosen, and nothing fitting is an error") {
    const frontend::ImportedModel M = decoder(8);
    hw::Cluster C = cluster("dgx-h100");
    const ServingPlan P = plan(M.Graph, C, 4);
    // whole; tp 2, ep 2; ep 4 (tp 4 does not divide the key/value heads).
    REQUIRE(P.Candidates.size() == 4);
    CHECK(P.Candidates[2].Split == ServingSplit::Expert);
    CHECK(P.Candidates[2].Devices == 2);
    CHECK(P.Candidates[3].Split == ServingSplit::Expert);
    CHECK(P.Candidates[3].Devices == 4);
    CHECK(P.Candidates[3].LatencySeconds ==
          doctest::Approx(latencyOf(M.Graph, C, ServingSplit::Expert, 4)));
    // Each rank holds a quarter of the experts: less memory than whole.
    CHECK(P.Candidates[3].PeakBytes < P.Candidates[0].PeakBytes);

    // Leave each device less than one rank of ep 4 needs, more than the
    // least of them: only layouts under it fit, and the choice is one.
    const double Least = P.Candidates[3].PeakBytes;
    const double Capacity = C.primaryDevice().mainMemory().CapacityBytes;
    REQUIRE_FALSE(bool(hw::reserveMemory(C, Capacity - 1.01 * Least, "test")));
    const ServingPlan Tight = plan(M.Graph, C, 4);
    REQUIRE(Tight.chosen());
    for (const ServingCandidate &Cand : Tight.Candidates)
      CHECK(Cand.Fits == (Cand.PeakBytes <= 1.01 * Least));
    CHECK(Tight.chosen()->Fits);
    // None fits: one error naming the layout that came closest.
    hw::Cluster Small = cluster("dgx-h100");
    REQUIRE_FALSE(
        bool(hw::reserveMemory(Small, Capacity - 0.5 * Least, "test")));
    ServingRequest R;
    R.Cluster = &Small;
    R.Base.Device = &Small.primaryDevice();
    R.Devices = 4;
    auto None = planServing(M.Graph, R);
    REQUIRE_FALSE(bool(None));
    CHECK(llvm::toString(None.takeError())
              .find("no layout of up to 4 devices fits in memory: the least "
                    "per device is ") != std::string::npos);
  }

  TEST_CASE("objectives: the most samples per device, within a latency "
            "bound") {
    // A mixture of 8 experts decoding 64 sequences after 1023 tokens, 16
    // heads (8 key/value): every layout up to 8 devices fits; ep 8 is the
    // fastest, one device serves the most samples per device.
    modelgen::TransformerSpec S =
        transformerSpec(modelgen::Family::Llama, 2, 2048, 16, 1, 1000);
    S.KvHeads = 8;
    S.Ffn = 4096;
    S.Experts = 8;
    S.TopK = 2;
    S.Past = 1023;
    S.Batch = 64;
    const frontend::ImportedModel M = importZoo(zooBytes(S));
    const hw::Cluster C = cluster("dgx-h100");
    ServingRequest R;
    R.Cluster = &C;
    R.Base.Device = &C.primaryDevice();
    auto Fast = planServing(M.Graph, R);
    R.Objective = ServingObjective::Throughput;
    auto Cheap = planServing(M.Graph, R);
    REQUIRE(bool(Fast));
    REQUIRE(bool(Cheap));
    CHECK(Cheap->Objective == ServingObjective::Throughput);
    // The fewest device-seconds a step, of those that fit; the fastest
    // stays the fastest.
    const auto Cost = [](const ServingCandidate &Cand) {
      return Cand.LatencySeconds * Cand.Devices;
    };
    for (const ServingCandidate &Cand : Cheap->Candidates) {
      CHECK(Cand.Fits);
      CHECK(Cost(*Cheap->chosen()) <= Cost(Cand));
      CHECK(Fast->chosen()->LatencySeconds <= Cand.LatencySeconds);
    }
    CHECK(Cheap->Candidates.size() == 7);
    CHECK(name(*Fast->chosen()) == "ep 8");
    CHECK(name(*Cheap->chosen()) == "whole");
    // A bound between the two: the cheapest layout that meets it.
    const double Bound =
        (Fast->chosen()->LatencySeconds + Cheap->chosen()->LatencySeconds) / 2;
    R.MaxLatencySeconds = Bound;
    auto Within = planServing(M.Graph, R);
    REQUIRE(bool(Within));
    CHECK(Within->chosen()->LatencySeconds <= Bound);
    for (const ServingCandidate &Cand : Within->Candidates)
      if (Cand.LatencySeconds <= Bound)
        CHECK(Cost(*Within->chosen()) <= Cost(Cand));
    // A bound no layout meets names the fastest.
    R.MaxLatencySeconds = Fast->chosen()->LatencySeconds / 2;
    auto None = planServing(M.Graph, R);
    REQUIRE_FALSE(bool(None));
    CHECK(llvm::toString(None.takeError())
              .find("no layout that fits meets --max-latency ") == 0);
    R.MaxLatencySeconds = -1;
    auto Negative = planServing(M.Graph, R);
    REQUIRE_FALSE(bool(Negative));
    CHECK(llvm::toString(Negative.takeError()) ==
          "--max-latency must be a positive time (e.g. '50 ms')");
  }

  TEST_CASE("errors: no cluster, more devices than the cluster has") {
    const frontend::ImportedModel M = decoder(0);
    const hw::Cluster C = cluster("dgx-h100");
    ServingRequest R;
    auto NoHw = planServing(M.Graph, R);
    REQUIRE_FALSE(bool(NoHw));
    CHECK(
        llvm::toString(NoHw.takeError()).find("needs --hw naming a cluster") !=
        std::string::npos);
    R.Cluster = &C;
    R.Base.Device = &C.primaryDevice();
    R.Devices = 9;
    auto TooMany = planServing(M.Graph, R);
    REQUIRE_FALSE(bool(TooMany));
    CHECK(llvm::toString(TooMany.takeError()) ==
          "--devices 9: cluster 'dgx-h100' has 8");
  }

  TEST_CASE("--max-batch: each layout at its own batch, compared by "
            "device-seconds a sample, only layouts searched chosen") {
    const auto Layout = [](ServingSplit Split, unsigned Devices, double Samples,
                           double Seconds, bool Searched) {
      ServingCandidate C;
      C.Split = Split;
      C.Devices = Devices;
      C.Samples = Samples;
      C.LatencySeconds = C.IntervalSeconds = Seconds;
      C.Fits = true;
      C.AtMaxBatch = Searched;
      return C;
    };
    ServingPlan P;
    P.Objective = ServingObjective::Throughput;
    P.AtMaxBatch = true;
    // Device-seconds a sample: 1 ms, 0.8 ms, 0.5 ms (never searched: its
    // figures are the model's batch's), 0.9 ms.
    P.Candidates = {Layout(ServingSplit::Whole, 1, 10, 10e-3, true),
                    Layout(ServingSplit::Tensor, 2, 50, 20e-3, true),
                    Layout(ServingSplit::Tensor, 4, 80, 10e-3, false),
                    Layout(ServingSplit::Tensor, 8, 160, 18e-3, true)};
    REQUIRE_FALSE(bool(chooseServingLayout(P)));
    CHECK(*P.Chosen == 1);
    // A bound the chosen layout's step misses moves the choice to the
    // next best that meets it.
    P.MaxLatencySeconds = 19e-3;
    REQUIRE_FALSE(bool(chooseServingLayout(P)));
    CHECK(*P.Chosen == 3); // tp 8: 0.9 ms a sample, 18 ms
    P.MaxLatencySeconds = llvm::None;
    // Without --max-batch the unsearched layout competes.
    P.AtMaxBatch = false;
    REQUIRE_FALSE(bool(chooseServingLayout(P)));
    CHECK(*P.Chosen == 2);
  }
}
