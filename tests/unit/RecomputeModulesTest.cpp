//===- RecomputeModulesTest.cpp - --recompute-modules ---------------------===//
//
// Megatron-Core's selective recomputation by module: which nodes each
// module holds (findBlockModules), what recomputing it drops from the
// activations kept for backward, and what it runs again.
//
//===----------------------------------------------------------------------===//
#include "TrainingHelpers.h"

#include "hwdb/Loader.h"
#include "passes/Blocks.h"
#include "passes/TrainOptionNames.h"
#include "passes/TrainStep.h"
#include "passes/WorkPass.h"

#include <doctest/doctest.h>

using namespace perfc;
using namespace perfc::test;

namespace {

/// DeepSeek-V3's layer in small: latent attention (q and kv ranks), a dense
/// first layer, then a mixture of 8 experts (top 2) with a shared expert,
/// fp32, one sequence of 64 tokens.
modelgen::TransformerSpec latentMixtureSpec() {
  modelgen::TransformerSpec S =
      transformerSpec(modelgen::Family::Llama, 2, 256, 4, 64, 1000);
  S.KvLoraRank = 64;
  S.QLoraRank = 96;
  S.QkNopeHeadDim = 32;
  S.QkRopeHeadDim = 16;
  S.VHeadDim = 32;
  S.Experts = 8;
  S.TopK = 2;
  S.MoeFfn = 128;
  S.SharedFfn = 128;
  S.DenseLayers = 1;
  S.Batch = 1;
  return S;
}

/// The module names of the node named Name.
std::string modulesOf(const ir::Graph &G, const BlockInfo &B,
                      llvm::StringRef Name) {
  for (const auto &N : G.nodes())
    if (N->name() == Name) {
      const std::vector<std::string> Names =
          recomputeModuleNames(B.Modules[N->index()]);
      return llvm::join(Names, " ");
    }
  FAIL_CHECK("no node named " << Name.str());
  return "";
}

TrainReport train(const ir::Graph &G, const hw::Cluster &C,
                  const TrainOptions &O) {
  auto R = predictTraining(G, C, O);
  REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
  return std::move(*R);
}

/// O recomputing Names selectively.
TrainOptions recomputing(TrainOptions O,
                         std::initializer_list<BlockModule> Names) {
  O.Recomp = Recompute::Selective;
  O.RecomputeModules = 0;
  for (BlockModule M : Names)
    O.RecomputeModules |= bit(M);
  return O;
}

} // namespace

TEST_SUITE("recompute modules") {
  TEST_CASE("each module holds its block's part, found by structure") {
    const frontend::ImportedModel M =
        importZoo(zooBytes(latentMixtureSpec()), {}, "mla_moe.onnx");
    const ir::Graph &G = M.Graph;
    const GraphWork W = computeWork(G);
    BlockInfo B = analyzeBlocks(G, W);
    findBlockModules(G, W, B);
    const auto Is = [&](llvm::StringRef Name) { return modulesOf(G, B, Name); };
    // The norms before the attention and the MLP, every step of the
    // RMSNorm; not the residual add it reads.
    CHECK(Is("/layers.1/ln1/Pow") == "layernorm");
    CHECK(Is("/layers.1/ln1/Mul_1") == "layernorm");
    CHECK(Is("/layers.1/ln2/ReduceMean") == "layernorm");
    CHECK(Is("/layers.1/attn/residual/Add") == "");
    // Latent attention: the down projections stay; the latent norms, the
    // up projections and the heads' RoPE (the shared rotary key's too)
    // up to the core are mla_up_proj.
    CHECK(Is("/layers.1/attn/q_a/MatMul") == "");
    CHECK(Is("/layers.1/attn/kv_a/MatMul") == "");
    CHECK(Is("/layers.1/attn/q_norm/Mul_1") == "mla_up_proj");
    CHECK(Is("/layers.1/attn/q_b/MatMul") == "mla_up_proj");
    CHECK(Is("/layers.1/attn/rope_q/Add") == "mla_up_proj");
    CHECK(Is("/layers.1/attn/rope_k/Add") == "mla_up_proj");
    CHECK(Is("/layers.1/attn/v_b/MatMul") == "mla_up_proj");
    CHECK(Is("/layers.1/attn/q_cat/Concat") == "mla_up_proj");
    // The core, Q.K^T to P.V; the output projection is in none.
    CHECK(Is("/layers.1/attn/qk/MatMul") == "core_attn");
    CHECK(Is("/layers.1/attn/Softmax") == "core_attn");
    CHECK(Is("/layers.1/attn/pv/MatMul") == "core_attn");
    CHECK(Is("/layers.1/attn/out/MatMul") == "");
    // The dense first layer's MLP.
    CHECK(Is("/layers.0/mlp/gate/MatMul") == "mlp");
    CHECK(Is("/layers.0/mlp/silu/Sigmoid") == "mlp");
    CHECK(Is("/layers.0/mlp/down/MatMul") == "mlp");
    CHECK(Is("/layers.0/mlp/residual/Add") == "");
    // The mixture: router to combine; the experts' activation; the shared
    // expert.
    CHECK(Is("/layers.1/moe/router/MatMul") == "moe");
    CHECK(Is("/layers.1/moe/dispatch/Expand") == "moe");
    CHECK(Is("/layers.1/moe/experts/gate/MatMul") == "moe");
    CHECK(Is("/layers.1/moe/experts/silu/Sigmoid") == "moe_act moe");
    CHECK(Is("/layers.1/moe/experts/Mul") == "moe_act moe");
    CHECK(Is("/layers.1/moe/combine/ReduceSum") == "moe");
    CHECK(Is("/layers.1/moe/shared/up/MatMul") == "moe shared_experts");
    CHECK(Is("/layers.1/moe/shared/Add") == "moe");
    CHECK(Is("/layers.1/mlp/residual/Add") == "");
    // Outside the blocks, nothing.
    CHECK(Is("/final_norm/Mul_1") == "");
    CHECK(Is("/lm_head/MatMul") == "");
    CHECK(B.ModulesFound == 0x7f);
  }

  TEST_CASE("post-LN: the norm, not the residual add before it") {
    // BERT's LayerNormalization after each residual add: the one before
    // the MLP is layernorm; the add feeding it stays, as its input (the
    // norm's backward reads it).
    const frontend::ImportedModel M = importZoo(
        zooBytes(transformerSpec(modelgen::Family::Bert, 2, 64, 4, 16, 128)),
        {}, "bert.onnx");
    const ir::Graph &G = M.Graph;
    const GraphWork W = computeWork(G);
    BlockInfo B = analyzeBlocks(G, W);
    findBlockModules(G, W, B);
    unsigned Norms = 0;
    for (const auto &N : G.nodes()) {
      const bool Norm = (B.Modules[N->index()] & bit(BlockModule::Norm)) != 0;
      if (N->opType() == "LayerNormalization" && Norm)
        ++Norms;
      if (N->opType() == "Add" && Norm)
        FAIL_CHECK(N->name().str() << " is not a norm");
    }
    CHECK(Norms == 2); // One per layer: the last feeds the next block.
    CHECK((B.ModulesFound & bit(BlockModule::Mlp)) != 0);
    CHECK((B.ModulesFound & bit(BlockModule::Mixture)) == 0);
  }

  TEST_CASE("recomputing a module drops what it makes, keeps its inputs") {
    const frontend::ImportedModel M =
        importZoo(zooBytes(latentMixtureSpec()), {}, "mla_moe.onnx");
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE(bool(C));
    TrainOptions O; // fp32: 4 bytes an element; one micro-batch in flight.
    const TrainReport None = train(M.Graph, *C, O);
    const auto Dropped = [&](std::initializer_list<BlockModule> Names) {
      const TrainReport R = train(M.Graph, *C, recomputing(O, Names));
      CHECK(R.Stages[0].RecomputeSeconds > 0);
      return None.Stages[0].ActivationsBytes - R.Stages[0].ActivationsBytes;
    };
    const double Tokens = 64, Hidden = 256, Elem = 4;
    // Each layer's two norm outputs, [64, 256].
    CHECK(Dropped({BlockModule::Norm}) == 2 * 2 * Tokens * Hidden * Elem);
    // The experts' activation output, the down projections' input: top 2
    // of 64 tokens at width 128.
    CHECK(Dropped({BlockModule::ExpertActivation}) == 2 * Tokens * 128 * Elem);
    // The dense MLP's gate and up outputs and their product (width 768).
    CHECK(Dropped({BlockModule::Mlp}) == 3 * Tokens * 768 * Elem);
    // The shared expert's likewise, at width 128.
    CHECK(Dropped({BlockModule::SharedExperts}) == 3 * Tokens * 128 * Elem);
    // Per layer the latent norms' outputs (96 + 64 wide), the compressed
    // kv split from kv_a (64), Q and K^T (4 heads x (32 + 16)) and V (4 x
    // 32), less kv_a's output (64 + 16), which becomes the kept input.
    CHECK(Dropped({BlockModule::LatentUp}) ==
          2 * Tokens * Elem * (96 + 64 + 64 + 2 * 4 * 48 + 4 * 32 - 80));
    // Modules together drop what each drops.
    CHECK(Dropped({BlockModule::Norm, BlockModule::ExpertActivation}) ==
          Dropped({BlockModule::Norm}) +
              Dropped({BlockModule::ExpertActivation}));
    // The whole mixture drops more than its parts.
    CHECK(Dropped({BlockModule::Mixture}) >
          Dropped({BlockModule::ExpertActivation}) +
              Dropped({BlockModule::SharedExperts}));
  }

  TEST_CASE("each kernel's recomputation, explained, adds up to the "
            "stage's") {
    const frontend::ImportedModel M =
        importZoo(zooBytes(latentMixtureSpec()), {}, "mla_moe.onnx");
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE(bool(C));
    TrainOptions O;
    O.Explain = true;
    for (const TrainOptions &With :
         {recomputing(O, {BlockModule::Norm, BlockModule::ExpertActivation,
                          BlockModule::LatentUp}),
          recomputing(O, {BlockModule::Mixture})}) {
      const TrainReport R = train(M.Graph, *C, With);
      REQUIRE(R.NodeBackwards.size() == M.Graph.numNodes());
      double Sum = 0;
      unsigned Fused = 0;
      for (const TrainReport::NodeBackward &B : R.NodeBackwards) {
        Sum += B.RecomputeSeconds;
        if (B.RecomputeSeconds > 0)
          CHECK(B.RecomputeExplain.find("(selective recomputation of ") !=
                std::string::npos);
        Fused += B.RecomputeExplain.find("fused members") != std::string::npos;
      }
      CHECK(Sum == doctest::Approx(R.Stages[0].RecomputeSeconds));
      // The experts' activation rides in its GEMMs' epilogues: recomputed
      // alone there.
      if (With.RecomputeModules & bit(BlockModule::ExpertActivation))
        CHECK(Fused > 0);
    }
    TrainOptions Full = O;
    Full.Recomp = Recompute::Full;
    const TrainReport R = train(M.Graph, *C, Full);
    double Sum = 0;
    for (const TrainReport::NodeBackward &B : R.NodeBackwards)
      Sum += B.RecomputeSeconds;
    CHECK(Sum == doctest::Approx(R.Stages[0].RecomputeSeconds));
  }

  TEST_CASE("what runs again: kernels, a row's exchange, the all-to-alls") {
    const frontend::ImportedModel M =
        importZoo(zooBytes(latentMixtureSpec()), {}, "mla_moe.onnx");
    auto C = hw::loadHardware("dgx-h100");
    REQUIRE(bool(C));
    TrainOptions O;
    O.Dp = 4;
    O.Tp = 2;
    O.Ep = 4;
    O.SequenceParallel = true;
    O.DType = ir::DType::BF16;
    const TrainReport None = train(M.Graph, *C, O);
    const TrainReport Core =
        train(M.Graph, *C, recomputing(O, {BlockModule::CoreAttention}));
    const TrainReport Norm =
        train(M.Graph, *C, recomputing(O, {BlockModule::Norm}));
    const TrainReport Act =
        train(M.Graph, *C, recomputing(O, {BlockModule::ExpertActivation}));
    const TrainReport Mlp =
        train(M.Graph, *C, recomputing(O, {BlockModule::Mlp}));
    const TrainReport Moe =
        train(M.Graph, *C, recomputing(O, {BlockModule::Mixture}));
    // A norm or an activation fused into the GEMM before it reruns its
    // elementwise work alone: far less than the attention core.
    CHECK(Norm.Stages[0].RecomputeSeconds > 0);
    CHECK(Act.Stages[0].RecomputeSeconds > 0);
    CHECK(Act.Stages[0].RecomputeSeconds < Core.Stages[0].RecomputeSeconds);
    // The core and the norms have no row GEMM: the exchanges are as
    // without recomputation. The MLP's row reruns its exchange.
    CHECK(Core.TpCommSeconds == None.TpCommSeconds);
    CHECK(Norm.TpCommSeconds == None.TpCommSeconds);
    CHECK(Mlp.TpCommSeconds > None.TpCommSeconds);
    // The mixture reruns its forward all-to-alls: 3 where 2 ran.
    CHECK(Act.EpCommSeconds == None.EpCommSeconds);
    CHECK(Moe.EpCommSeconds == doctest::Approx(1.5 * None.EpCommSeconds));
    // The attention core as the default module is selective recomputation
    // as it was: the same report.
    TrainOptions Default = O;
    Default.Recomp = Recompute::Selective;
    const TrainReport D = train(M.Graph, *C, Default);
    CHECK(D.StepSeconds == Core.StepSeconds);
    CHECK(D.peak().ActivationsBytes == Core.peak().ActivationsBytes);
  }

  TEST_CASE("names, labels and errors") {
    TrainOptions O;
    CHECK(recomputeLabel(O) == "none");
    REQUIRE_FALSE(bool(parseRecomputeModules({"moe_act", "layernorm"},
                                             "--recompute-modules",
                                             "--recompute", false, O)));
    CHECK(O.Recomp == Recompute::Selective);
    CHECK(recomputeLabel(O) == "selective (layernorm, moe_act)");
    O.RecomputeModules = bit(BlockModule::CoreAttention);
    CHECK(recomputeLabel(O) == "selective");
    TrainOptions Bad;
    CHECK(llvm::toString(parseRecomputeModules({"moe_act", "attn"},
                                               "--recompute-modules",
                                               "--recompute", false, Bad)) ==
          "unknown --recompute-modules 'attn': use core_attn, layernorm, "
          "mla_up_proj, mlp, moe_act, moe or shared_experts");
    Bad.Recomp = Recompute::Full;
    CHECK(llvm::toString(parseRecomputeModules({"moe"}, "--recompute-modules",
                                               "--recompute", false, Bad)) ==
          "recompute modules are what selective recomputation recomputes: "
          "drop --recompute full (the modules imply selective)");
    Bad.Recomp = Recompute::None;
    CHECK(llvm::toString(parseRecomputeModules({"moe"}, "recompute module",
                                               "recompute", true, Bad)) ==
          "recompute modules are what selective recomputation recomputes: "
          "drop recompute none (the modules imply selective)");
    // A module the model lacks is an error naming what is missing.
    const frontend::ImportedModel Gpt = generatedGpt(2, 64, 4, 16, 1);
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE(bool(C));
    for (auto [M, Missing] :
         {std::make_pair(BlockModule::ExpertActivation,
                         "no mixture of experts"),
          std::make_pair(BlockModule::LatentUp, "no latent attention"),
          std::make_pair(BlockModule::SharedExperts, "no shared experts")}) {
      auto R = predictTraining(Gpt.Graph, *C, recomputing(TrainOptions(), {M}));
      REQUIRE_FALSE(bool(R));
      const std::string E = llvm::toString(R.takeError());
      CHECK(E.find(std::string("--recompute-modules ") + name(M) +
                   ": the model has " + Missing) == 0);
    }
    auto R = predictTraining(
        Gpt.Graph, *C,
        recomputing(TrainOptions(), {BlockModule::Norm, BlockModule::Mlp}));
    CHECK(bool(R));
    if (!R)
      llvm::consumeError(R.takeError());
  }
}
