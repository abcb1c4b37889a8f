//===- TrainingBlocksTest.cpp - Blocks and tensor-parallel splits ---------===//
#include "TrainingHelpers.h"

#include "costmodels/Collectives.h"
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "hwdb/Units.h"
#include "passes/Backward.h"
#include "passes/Blocks.h"
#include "passes/LoadTimeConstants.h"
#include "passes/Schedule.h"
#include "passes/TrainStep.h"
#include "passes/WorkPass.h"
#include "tools/modelgen/TransformerGen.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace perfc;
using namespace perfc::test;

TEST_SUITE("training") {

  TEST_CASE("blocks from names, column/row pairs, a row output is reduced") {
    TwoBlocks T(16, 8);
    BlockInfo Info = analyzeBlocks(T.B.G, computeWork(T.B.G));
    REQUIRE(Info.NumBlocks == 2);
    CHECK(Info.BlockNames[1] == "/layers.1");
    CHECK(Info.UnitOf[T.Fc1[1]->index()] == 2);
    CHECK(Info.HasTensorParallelPattern);
    CHECK(Info.Tp[T.Fc1[0]->index()] == TpRole::Column);
    CHECK(Info.Tp[T.Relu[0]->index()] == TpRole::Sharded);
    CHECK(Info.Tp[T.Fc2[0]->index()] == TpRole::Row);
    CHECK(Info.Tp[T.Res[0]->index()] == TpRole::Replicated);
    REQUIRE(Info.ForwardReduced[1].size() == 1);
    CHECK(Info.ForwardReduced[1][0] == T.B.out(T.Fc2[0]));
    REQUIRE(Info.BackwardReduced[1].size() == 1);
    CHECK(Info.BackwardReduced[1][0] == T.B.G.inputs()[0]);
  }

  TEST_CASE("without block names, blocks are cut where one activation "
            "crosses, a stretch without weights joining the block before") {
    // An input projection, two residual MLP layers with names that number
    // nothing, reading a mask computed from the inputs alone (every stage
    // gets it from the data loader), and a trailing Relu.
    GraphBuilder B;
    ir::Value *Mask = B.input("mask", {8, 16});
    ir::Node *Scaled = B.node("Mul", {Mask, Mask}, {8, 16});
    ir::Node *In = B.node(
        "MatMul", {B.input("x", {8, 4}), B.weight("w", {4, 16})}, {8, 16});
    ir::Value *X = B.out(In);
    std::vector<ir::Node *> Adds, Fc1s;
    for (int L = 0; L < 2; ++L) {
      ir::Node *Fc1 =
          B.node("MatMul", {X, B.weight("w1_" + std::to_string(L), {16, 64})},
                 {8, 64});
      ir::Node *Fc2 = B.node("MatMul",
                             {B.out(B.node("Relu", {B.out(Fc1)}, {8, 64})),
                              B.weight("w2_" + std::to_string(L), {64, 16})},
                             {8, 16});
      ir::Node *Masked = B.node("Mul", {B.out(Fc2), B.out(Scaled)}, {8, 16});
      ir::Node *Add = B.node("Add", {B.out(Masked), X}, {8, 16});
      Fc1s.push_back(Fc1);
      Adds.push_back(Add);
      X = B.out(Add);
    }
    ir::Node *Tail = B.node("Relu", {X}, {8, 16});
    B.G.markOutput(B.out(Tail));
    const BlockInfo Info = analyzeBlocks(B.G, computeWork(B.G));
    REQUIRE(Info.NumBlocks == 3);
    CHECK(Info.UnitOf[Scaled->index()] == 1); // no weights: joins the next
    CHECK(Info.UnitOf[In->index()] == 1);
    CHECK(Info.BlockNames[0] == Scaled->name().str());
    CHECK(Info.UnitOf[Fc1s[0]->index()] == 2);
    CHECK(Info.UnitOf[Adds[0]->index()] == 2);
    CHECK(Info.UnitOf[Fc1s[1]->index()] == 3);
    CHECK(Info.UnitOf[Adds[1]->index()] == 3);
    CHECK(Info.UnitOf[Tail->index()] == 3); // no weights: joins layer 2
    CHECK(Info.BlockNames[2] == Fc1s[1]->name().str());
    CHECK(Info.HasTensorParallelPattern); // the pairs are found per block

    // One layer, one block: no structure to cut.
    GraphBuilder One;
    ir::Node *Mm = One.node(
        "MatMul", {One.input("x", {4, 4}), One.weight("w", {4, 4})}, {4, 4});
    ir::Node *Act = One.node("Relu", {One.out(Mm)}, {4, 4});
    One.G.markOutput(One.out(Act));
    CHECK(analyzeBlocks(One.G, computeWork(One.G)).NumBlocks == 0);
  }

  TEST_CASE("a transformer whose node names number nothing trains as its "
            "named twin") {
    const std::string Named =
        zooBytes(transformerSpec(modelgen::Family::Gpt, 4, 256, 8, 64, 1000));
    const frontend::ImportedModel A = importZoo(Named);
    const frontend::ImportedModel B = importZoo(withAnonymousNodes(Named));
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainingAnalysis TA(A.Graph), TB(B.Graph);
    TrainOptions O;
    O.Tp = 4;
    O.Dp = 2;
    O.SequenceParallel = true;
    O.Recomp = Recompute::Selective;
    O.DType = ir::DType::BF16;
    auto RA = predictTraining(TA, *Dgx, O);
    auto RB = predictTraining(TB, *Dgx, O);
    REQUIRE_MESSAGE(bool(RA), llvm::toString(RA.takeError()));
    REQUIRE_MESSAGE(bool(RB), llvm::toString(RB.takeError()));
    // The same shards, exchanges and weights; the embedding's all-reduce
    // and the attention cores are found without names.
    CHECK(RB->StepSeconds == doctest::Approx(RA->StepSeconds));
    CHECK(RB->TpCommSeconds == doctest::Approx(RA->TpCommSeconds));
    CHECK(RB->DpCommSeconds == doctest::Approx(RA->DpCommSeconds));
    CHECK(RB->Stages[0].WeightsBytes ==
          doctest::Approx(RA->Stages[0].WeightsBytes));
    // Within a few percent: sequence parallelism splits what blocks keep,
    // and the embeddings and head are in blocks here, not the prologue and
    // epilogue.
    CHECK(RB->Stages[0].ActivationsBytes ==
          doctest::Approx(RA->Stages[0].ActivationsBytes).epsilon(0.05));
    // Two stages: the tied head's transposed embedding is not an
    // activation crossing between them.
    O.Pp = 2;
    O.Dp = 1;
    O.MicroBatch = 1;
    O.GlobalBatch = 8;
    auto PA = predictTraining(TA, *Dgx, O);
    auto PB = predictTraining(TB, *Dgx, O);
    REQUIRE_MESSAGE(bool(PA), llvm::toString(PA.takeError()));
    REQUIRE_MESSAGE(bool(PB), llvm::toString(PB.takeError()));
    CHECK(PB->P2pSeconds == doctest::Approx(PA->P2pSeconds));
    CHECK(PB->StepSeconds == doctest::Approx(PA->StepSeconds).epsilon(0.05));
  }

  TEST_CASE("DenseNet and Inception, whose names number no layers, split "
            "between their dense blocks and modules") {
    const std::string Zoo = std::string(PERFC_SOURCE_DIR) + "/tests/data/zoo/";
    for (const char *Name : {"densenet121", "inception_v3"}) {
      CAPTURE(Name);
      auto M = frontend::importOnnxFile(Zoo + Name + ".onnx", {});
      REQUIRE_MESSAGE(bool(M), llvm::toString(M.takeError()));
      const BlockInfo Info = analyzeBlocks(M->Graph, computeWork(M->Graph));
      // DenseNet: the stem, 4 dense blocks, 3 transitions, the classifier;
      // Inception: 5 stem convolutions, 11 modules, the classifier.
      CHECK(Info.NumBlocks == (Name[0] == 'd' ? 9u : 17u));
      // A module (dense block, Inception module) is never cut.
      llvm::StringMap<unsigned> UnitOfModule;
      for (const auto &N : M->Graph.nodes()) {
        llvm::StringRef Module = N->name().ltrim('/').split('/').first;
        if (Module == "features") // DenseNet: /features/denseblock1/...
          Module = N->name().ltrim('/').split('/').second.split('/').first;
        if (!Module.startswith("denseblock") && !Module.startswith("Mixed_"))
          continue;
        auto [It, New] =
            UnitOfModule.try_emplace(Module, Info.UnitOf[N->index()]);
        CHECK_MESSAGE(It->second == Info.UnitOf[N->index()], N->name().str());
      }
      CHECK(UnitOfModule.size() >= 4);
    }
  }

  TEST_CASE("tensor parallelism keeps whole heads, columns and rows") {
    // Megatron-LM refuses a degree that splits a head, a key/value group, a
    // column or a row block (or, with --sp, a sequence position); perfc
    // once priced 4 heads on 3 ranks as 4/3 heads each.
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    auto errorOfGraph = [&](const ir::Graph &G, unsigned Tp, bool Sp) {
      TrainingAnalysis A(G);
      TrainOptions O;
      O.Tp = Tp;
      O.SequenceParallel = Sp;
      auto R = predictTraining(A, *Dgx, O);
      return R ? std::string() : llvm::toString(R.takeError());
    };
    auto errorOf = [&](const frontend::ImportedModel &M, unsigned Tp, bool Sp) {
      return errorOfGraph(M.Graph, Tp, Sp);
    };
    // 4 heads: the packed QKV GEMM's 192 columns divide by 3, the heads not.
    const frontend::ImportedModel Gpt = generatedGpt(2, 64, 4, 16, 1);
    CHECK(errorOf(Gpt, 3, false) ==
          "--tp 3 does not divide the 4 heads of node "
          "'/layers.0/attn/q_heads/Reshape' (each tensor-parallel rank holds "
          "whole heads, columns and rows, as in Megatron-LM); use a --tp that "
          "divides 4");
    CHECK(llvm::StringRef(errorOf(Gpt, 8, false))
              .startswith("--tp 8 does not divide the 4 heads"));
    CHECK(errorOf(Gpt, 4, false).empty());
    CHECK(errorOf(Gpt, 2, true).empty());
    // Sequence parallelism splits the 6 positions too.
    const frontend::ImportedModel Short = generatedGpt(2, 64, 4, 6, 1);
    CHECK(errorOf(Short, 4, false).empty());
    CHECK(errorOf(Short, 4, true) ==
          "--tp 4 does not divide the 6 sequence positions (--sp) of node "
          "'/layers.0/attn/out/MatMul' (each tensor-parallel rank holds "
          "whole heads, columns and rows, as in Megatron-LM); use a --tp "
          "that divides 2");
    // Megatron-LM's own layout, [s, b, h], as NeMo exports it: the
    // sequence is the first axis; a micro-batch of 1 is not the sequence.
    for (const auto &[SeqFirst, S] :
         {std::pair(true, 8), std::pair(false, 8), std::pair(true, 6),
          std::pair(false, 6)}) {
      CAPTURE(SeqFirst);
      CAPTURE(S);
      GraphBuilder B;
      auto act = [&](const std::string &Name, int64_t H) {
        return SeqFirst ? B.tensor(Name, {S, 1, H}) : B.tensor(Name, {1, S, H});
      };
      ir::Value *X =
          SeqFirst ? B.input("x", {S, 1, 16}) : B.input("x", {1, S, 16});
      for (int L = 0; L < 2; ++L) {
        const std::string P = "/layers." + std::to_string(L) + "/";
        ir::Value *H1 = act(P + "h1", 64);
        expectOk(B.G.addNode(P + "fc1/MatMul", "MatMul", "",
                             {X, B.weight(P + "w1", {16, 64})}, {H1}));
        ir::Value *A = act(P + "a", 64);
        expectOk(B.G.addNode(P + "act/Relu", "Relu", "", {H1}, {A}));
        ir::Value *H2 = act(P + "h2", 16);
        expectOk(B.G.addNode(P + "fc2/MatMul", "MatMul", "",
                             {A, B.weight(P + "w2", {64, 16})}, {H2}));
        ir::Value *Y = act(P + "y", 16);
        expectOk(B.G.addNode(P + "Add", "Add", "", {H2, X}, {Y}));
        X = Y;
      }
      B.G.markOutput(X);
      CHECK(errorOfGraph(B.G, 4, false).empty());
      if (S == 8) {
        CHECK(errorOfGraph(B.G, 4, true).empty());
        CHECK(errorOfGraph(B.G, 8, true).empty());
      } else {
        CHECK(llvm::StringRef(errorOfGraph(B.G, 4, true))
                  .startswith("--tp 4 does not divide the 6 sequence "
                              "positions (--sp) of node "
                              "'/layers.0/fc2/MatMul'"));
      }
    }
    // Grouped-query attention: 8 query heads in 2 key/value groups.
    const frontend::ImportedModel Llama = generatedLlama(2, 64, 8, 2, 16, 128);
    CHECK(errorOf(Llama, 2, false).empty());
    CHECK(llvm::StringRef(errorOf(Llama, 4, false))
              .startswith("--tp 4 does not divide the 2 heads of node "
                          "'/layers.0/attn/k_heads/Reshape'"));
  }
}
