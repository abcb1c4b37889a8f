//===- ContextParallelTest.cpp - Sequences split over a ring of ranks -----===//
#include "TestDevices.h"
#include "TrainingHelpers.h"

#include "costmodels/Collectives.h"
#include "passes/TrainStep.h"

#include <doctest/doctest.h>

using namespace perfc;
using namespace perfc::test;

namespace {

/// 2 nodes x 4 H100s: 100 GB/s and 1 us inside a node, one 1 GB/s port per
/// device across (slow enough that a ring crossing nodes outlasts the
/// attention); efficiencies 1.
const char *const TwoNodes = R"(cluster:
  name: cp-test
  nodes:
    - count: 2
      device: h100-sxm5-80gb
      devices_per_node: 4
      intra_node_link: {name: switch, kind: nvswitch, bandwidth: 100 GB/s, latency: 1 us, efficiency: 1}
      inter_node_link: {name: slow, kind: ethernet, bandwidth: 1 GB/s, latency: 5 us, efficiency: 1}
      nics_per_node: 4
)";

/// A Llama of 2 blocks, hidden 256 in 8 heads of 32, 2 key/value heads
/// (grouped-query attention), 512 tokens.
constexpr int64_t Layers = 2, Seq = 512, KvHeads = 2, HeadDim = 32;

TrainOptions bf16(unsigned Dp, unsigned Cp) {
  TrainOptions O;
  O.Dp = Dp;
  O.Cp = Cp;
  O.MicroBatch = 1;
  O.GlobalBatch = 2 * Dp;
  O.DType = ir::DType::BF16;
  O.FlashAttention = true;
  return O;
}

TrainReport predictOk(const TrainingAnalysis &A, const hw::Cluster &C,
                      const TrainOptions &O) {
  auto R = predictTraining(A, C, O);
  REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
  return std::move(*R);
}

/// Keys and values of one attention, whole: 2 tensors of seq x kv heads x
/// head dim in BF16 (before the grouped-query expansion to 8 heads).
constexpr double KeyValueBytes = 2.0 * Seq * KvHeads * HeadDim * 2;

/// The ring's transfers per step by hand: per micro-batch and attention,
/// cp - 1 steps sending a rank's keys and values forward, and those with
/// their gradients (twice the bytes) backward.
double ringSeconds(const TrainReport &R, unsigned Cp, const hw::Link &L) {
  const double Chunk = KeyValueBytes / Cp;
  return double(R.MicroBatches) * Layers * (Cp - 1) *
         (cost::p2pSeconds(Chunk, L) + cost::p2pSeconds(2 * Chunk, L));
}

} // namespace

TEST_SUITE("training.context_parallel") {

  TEST_CASE("the ring sends each rank's keys and values cp - 1 times, their "
            "gradients too in backward") {
    const frontend::ImportedModel Llama =
        generatedLlama(Layers, 256, 8, KvHeads, Seq, 128);
    const TrainingAnalysis A(Llama.Graph, false, /*FlashAttention=*/true);
    const hw::Cluster C = clusterFromYaml(TwoNodes, "cp-test.yaml");
    const hw::Link &Switch = *C.Groups.front().IntraNode;
    for (unsigned Cp : {2u, 4u}) {
      CAPTURE(Cp);
      const TrainReport R = predictOk(A, C, bf16(1, Cp));
      CHECK(R.Devices == Cp);
      CHECK(R.CpCommSeconds + R.CpOverlappedSeconds ==
            doctest::Approx(ringSeconds(R, Cp, Switch)).epsilon(1e-9));
      // In all the step's communication; what is exposed is in its time.
      CHECK(R.ExposedCommSeconds ==
            doctest::Approx(R.TpCommSeconds + R.CpCommSeconds + R.P2pSeconds +
                            R.DpExposedSeconds)
                .epsilon(1e-12));
      CHECK(R.CommSeconds >= R.CpCommSeconds + R.CpOverlappedSeconds);
    }
    // Across nodes the slow hop sets the ring's pace and outlasts the
    // attention: part exposed, part still hidden.
    const TrainReport Wide = predictOk(A, C, bf16(1, 8));
    const hw::Link &Slow = *C.Groups.front().InterNode;
    CHECK(Wide.CpCommSeconds + Wide.CpOverlappedSeconds ==
          doctest::Approx(ringSeconds(Wide, 8, Slow)).epsilon(1e-9));
    CHECK(Wide.CpCommSeconds > 0);
    CHECK(Wide.CpOverlappedSeconds > 0);
    // Inside a node at this size the attention hides it all.
    TrainOptions Explained = bf16(1, 2);
    Explained.Explain = true;
    const TrainReport Near = predictOk(A, C, Explained);
    CHECK(Near.CpCommSeconds == 0);
    // --explain: the ring's bytes (a rank's half of the keys and values),
    // link and merges.
    const auto Ring =
        llvm::find_if(Near.CommExplain, [](const std::string &Line) {
          return Line.rfind("cp 2, stage 0, ", 0) == 0;
        });
    REQUIRE(Ring != Near.CommExplain.end());
    CHECK(Ring->find("1 ring step sending 65.54 KB of keys and values over "
                     "switch") != std::string::npos);
    CHECK(Ring->find("merges its partial output") != std::string::npos);
  }

  TEST_CASE("a rank keeps 1/cp of the activations, the gradients are "
            "reduced and the optimizer sharded over dp x cp") {
    const frontend::ImportedModel Llama =
        generatedLlama(Layers, 256, 8, KvHeads, Seq, 128);
    const TrainingAnalysis A(Llama.Graph, false, true);
    const hw::Cluster C = clusterFromYaml(TwoNodes, "cp-test.yaml");
    TrainOptions One = bf16(1, 1), Split = bf16(1, 2), Data = bf16(2, 1);
    for (TrainOptions *O : {&One, &Split, &Data})
      O->Zero = 1;
    const TrainReport R1 = predictOk(A, C, One), Rc = predictOk(A, C, Split),
                      Rd = predictOk(A, C, Data);
    CHECK(Rc.peak().ActivationsBytes ==
          doctest::Approx(R1.peak().ActivationsBytes / 2).epsilon(1e-12));
    CHECK(Rc.peak().WorkspaceBytes ==
          doctest::Approx(R1.peak().WorkspaceBytes / 2).epsilon(1e-12));
    CHECK(Rc.peak().WeightsBytes == R1.peak().WeightsBytes);
    CHECK(Rc.peak().OptimizerBytes == Rd.peak().OptimizerBytes);
    CHECK(Rc.peak().OptimizerBytes ==
          doctest::Approx(R1.peak().OptimizerBytes / 2).epsilon(1e-12));
    // The same exchange as two data-parallel ranks: one group of two.
    REQUIRE(Rc.DpCommSeconds > 0);
    CHECK(Rc.DpCommSeconds == doctest::Approx(Rd.DpCommSeconds).epsilon(1e-12));
    CHECK(R1.DpCommSeconds == 0);
    // The same samples and model FLOPs per step; each rank half the
    // tokens, at no better efficiency than the whole, plus the ring's
    // merges (at this size, launch-bound kernels: CP gains nothing).
    CHECK(Rc.ModelFlops == R1.ModelFlops);
    CHECK(Rc.peak().ForwardSeconds >= R1.peak().ForwardSeconds / 2 * 0.999);
  }

  TEST_CASE("the all-to-all exchanges each attention's Q, K, V and output, "
            "their gradients in backward, on the critical path") {
    const frontend::ImportedModel Llama =
        generatedLlama(Layers, 256, 8, KvHeads, Seq, 128);
    // Its 8 key/value heads split 4 and 8 ways too.
    const frontend::ImportedModel Full =
        generatedLlama(Layers, 256, 8, 8, Seq, 128);
    const hw::Cluster C = clusterFromYaml(TwoNodes, "cp-test.yaml");
    constexpr double Bf16 = 2, Heads = 8;
    // Without FlashAttention too: Ulysses runs any attention.
    for (const bool Flash : {true, false})
      for (unsigned Cp : {2u, 4u, 8u}) {
        CAPTURE(Flash);
        CAPTURE(Cp);
        const double Kv = Cp == 2 ? KvHeads : 8;
        const TrainingAnalysis A((Cp == 2 ? Llama : Full).Graph, false, Flash);
        TrainOptions O = bf16(1, Cp);
        O.FlashAttention = Flash;
        O.CpComm = ContextExchange::AllToAll;
        const TrainReport R = predictOk(A, C, O);
        // By hand: a rank's S / cp tokens of Q and the output (8 heads),
        // of K and V (Kv key/value heads, as sent: before the expansion),
        // each in an all-to-all of its own over the context ranks.
        auto G = cost::groupOf(C, Cp, 1);
        REQUIRE(bool(G));
        const double Tokens = double(Seq) / Cp;
        const auto A2a = [&](double Bytes) {
          return cost::collectiveSeconds(cost::Collective::AllToAll, Bytes, *G);
        };
        const double Forward = 2 * A2a(Tokens * Heads * HeadDim * Bf16) +
                               2 * A2a(Tokens * Kv * HeadDim * Bf16);
        CHECK(R.CpCommSeconds ==
              doctest::Approx(double(R.MicroBatches) * Layers * 2 * Forward)
                  .epsilon(1e-9));
        CHECK(R.CpOverlappedSeconds == 0);
        CHECK(R.ExposedCommSeconds ==
              doctest::Approx(R.TpCommSeconds + R.CpCommSeconds + R.P2pSeconds +
                              R.DpExposedSeconds)
                  .epsilon(1e-12));
        // Full recomputation exchanges the forward's again.
        O.Recomp = Recompute::Full;
        const TrainReport Again = predictOk(A, C, O);
        CHECK(Again.CpCommSeconds ==
              doctest::Approx(double(R.MicroBatches) * Layers * 3 * Forward)
                  .epsilon(1e-9));
      }
    // The same memory as the ring: a rank holds S / cp tokens everywhere
    // but in the attention core, where it holds 1 / cp of the heads.
    const TrainingAnalysis A(Llama.Graph, false, true);
    TrainOptions Ring = bf16(1, 2), Heads2 = bf16(1, 2);
    Heads2.CpComm = ContextExchange::AllToAll;
    Heads2.Explain = true;
    const TrainReport Rr = predictOk(A, C, Ring), Rh = predictOk(A, C, Heads2);
    CHECK(Rh.peak().ActivationsBytes ==
          doctest::Approx(Rr.peak().ActivationsBytes).epsilon(1e-12));
    CHECK(Rh.ModelFlops == Rr.ModelFlops);
    const auto Line = llvm::find_if(Rh.CommExplain, [](const std::string &L) {
      return L.rfind("cp 2 (all-to-all), stage 0, ", 0) == 0;
    });
    REQUIRE(Line != Rh.CommExplain.end());
    // 256 tokens x 8 heads x 32 x 2 B; K and V 2 x 256 x 2 x 32 x 2 B.
    CHECK(Line->find("Q 131.1 KB, K and V 65.54 KB, the output 131.1 KB") !=
          std::string::npos);
    CHECK(Line->find("direct all-to-all, 2 ranks on 1 node") !=
          std::string::npos);
  }

  TEST_CASE("the all-to-all needs tokens and heads that split") {
    const frontend::ImportedModel Llama =
        generatedLlama(Layers, 256, 8, KvHeads, Seq, 128);
    const hw::Cluster C = clusterFromYaml(TwoNodes, "cp-test.yaml");
    const TrainingAnalysis A(Llama.Graph, false, false);
    // 6 heads (of 32) and 2 key/value heads.
    const frontend::ImportedModel Six =
        generatedLlama(Layers, 192, 6, KvHeads, Seq, 128);
    const TrainingAnalysis A6(Six.Graph, false, false);
    auto ErrorOf = [&](unsigned Tp, unsigned Cp) {
      TrainOptions O = bf16(1, Cp);
      O.Tp = Tp;
      O.FlashAttention = false;
      O.CpComm = ContextExchange::AllToAll;
      auto R = predictTraining(A6, C, O);
      REQUIRE_FALSE(bool(R));
      return llvm::toString(R.takeError());
    };
    // 6 heads over tp 2: 3 a rank, which 2 context ranks cannot share.
    const std::string Heads = ErrorOf(2, 2);
    CHECK(Heads.find("--cp 2 --cp-comm a2a: attention '") == 0);
    CHECK(Heads.find("has 3 heads per tensor-parallel rank, which do not "
                     "split over 2 ranks (the all-to-all trades tokens for "
                     "heads); use a cp that divides 3, or --cp-comm p2p") !=
          std::string::npos);
    // 512 tokens over 3 ranks.
    CHECK(ErrorOf(1, 3).find("has 512 tokens, which do not split over 3 "
                             "ranks; use a cp that divides 512") !=
          std::string::npos);
    // 8 heads but 2 key/value heads, cp 4: the heads split, K and V not
    // (grouped-query attention; Transformer Engine views each as [..., cp,
    // heads / cp, dim]).
    TrainOptions Gqa = bf16(1, 4);
    Gqa.FlashAttention = false;
    Gqa.CpComm = ContextExchange::AllToAll;
    auto Kv = predictTraining(A, C, Gqa);
    REQUIRE_FALSE(bool(Kv));
    CHECK(llvm::toString(Kv.takeError())
              .find("has 2 key/value heads per tensor-parallel rank, which do "
                    "not split over 4 ranks") != std::string::npos);
    // 8 heads and 8 key/value heads, tp 2 x cp 4: 4 a rank, 1 each.
    const frontend::ImportedModel Mha =
        generatedLlama(Layers, 256, 8, 8, Seq, 128);
    const TrainingAnalysis Am(Mha.Graph, false, false);
    TrainOptions Fits = Gqa;
    Fits.Tp = 2;
    CHECK(bool(predictTraining(Am, C, Fits)));
    // A model without attention has nothing to exchange heads around.
    TwoBlocks Mlp;
    TrainOptions O = bf16(1, 2);
    O.FlashAttention = false;
    O.CpComm = ContextExchange::AllToAll;
    auto R = predictTraining(Mlp.B.G, C, O);
    REQUIRE_FALSE(bool(R));
    CHECK(llvm::toString(R.takeError()) ==
          "--cp 2 --cp-comm a2a: the model has no attention core (a softmax "
          "between two products of activations) to exchange heads around; "
          "use --cp 1");
  }

  TEST_CASE("context parallelism's errors say what to give") {
    const frontend::ImportedModel Llama =
        generatedLlama(Layers, 256, 8, KvHeads, Seq, 128);
    const hw::Cluster C = clusterFromYaml(TwoNodes, "cp-test.yaml");
    const TrainingAnalysis Flash(Llama.Graph, false, true);
    const TrainingAnalysis Plain(Llama.Graph, false, false);
    auto ErrorOf = [&](const TrainingAnalysis &A, const TrainOptions &O) {
      auto R = predictTraining(A, C, O);
      REQUIRE_FALSE(bool(R));
      return llvm::toString(R.takeError());
    };
    CHECK(ErrorOf(Plain, bf16(1, 2)) ==
          "--cp 2: context parallelism runs ring attention in "
          "FlashAttention-style kernels (Transformer Engine's); add "
          "--flash-attention, or exchange heads instead with --cp-comm a2a");
    const std::string Chunks = ErrorOf(Flash, bf16(1, 3));
    CHECK(Chunks.find("--cp 3: the sequence (512 keys in attention '") == 0);
    CHECK(Chunks.find("must cut into 2 x cp = 6 equal chunks "
                      "(Megatron-Core's load-balanced split); use a cp that "
                      "divides 256") != std::string::npos);
    CHECK(ErrorOf(Flash, bf16(2, 8)) ==
          "dp 2 x cp 8 = 16 devices, but cluster 'cp-test' has 8");
    TrainOptions Zero = bf16(1, 0);
    CHECK(ErrorOf(Flash, Zero) == "parallel degrees must be positive");
  }
}
