//===- TensorParallelInferenceTest.cpp - Inference split over tp ranks ----===//
#include "TestTrace.h"
#include "ZooModels.h"

#include "costmodels/Collectives.h"
#include "hwdb/Loader.h"
#include "ir/Graph.h"
#include "passes/Blocks.h"
#include "passes/Predict.h"
#include "passes/WorkPass.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace perfc;
using namespace perfc::test;

namespace {

frontend::ImportedModel zoo(modelgen::Family F, int64_t Layers, int64_t Past,
                            int64_t Seq) {
  modelgen::TransformerSpec S = transformerSpec(F, Layers, 256, 8, Seq, 1000);
  S.Past = Past;
  return importZoo(zooBytes(S));
}

hw::Cluster dgx() {
  auto C = hw::loadHardware("dgx-a100");
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return std::move(*C);
}

Report predictOn(const frontend::ImportedModel &M, const hw::Cluster &C,
                 unsigned Tp) {
  PredictOptions O;
  O.Device = &C.primaryDevice();
  if (Tp > 1) {
    REQUIRE_FALSE(bool(checkTensorParallel(M.Graph, Tp)));
    auto G = cost::groupOf(C, Tp, 1);
    REQUIRE_MESSAGE(bool(G), llvm::toString(G.takeError()));
    O.TensorParallel = *G;
  }
  return predict(M.Graph, O);
}

} // namespace

TEST_SUITE("tensor-parallel inference") {

  TEST_CASE("the split's check is reused: the same report, work and blocks "
            "counted once") {
    const frontend::ImportedModel M = zoo(modelgen::Family::Llama, 2, 15, 1);
    const hw::Cluster C = dgx();
    const Report Fresh = predictOn(M, C, 4);
    auto Split = analyzeTensorParallel(M.Graph, 4);
    REQUIRE_MESSAGE(bool(Split), llvm::toString(Split.takeError()));
    PredictOptions O;
    O.Device = &C.primaryDevice();
    auto G = cost::groupOf(C, 4, 1);
    REQUIRE(bool(G));
    O.TensorParallel = *G;
    O.Split = &*Split;
    const Report Reused = predict(M.Graph, O);
    REQUIRE(Fresh.TensorParallel);
    REQUIRE(Reused.TensorParallel);
    REQUIRE(Fresh.LatencySeconds);
    CHECK(*Reused.LatencySeconds == *Fresh.LatencySeconds);
    CHECK(Reused.TensorParallel->CommSeconds ==
          Fresh.TensorParallel->CommSeconds);
    CHECK(Reused.Total.Flops == Fresh.Total.Flops);
    // A split that fails says so as checkTensorParallel does.
    auto Bad = analyzeTensorParallel(M.Graph, 3);
    REQUIRE_FALSE(bool(Bad));
    CHECK(llvm::toString(Bad.takeError()) ==
          llvm::toString(checkTensorParallel(M.Graph, 3)));
  }

  TEST_CASE("a decoding step's cache append and attention are sharded "
            "between the column and the row GEMM") {
    // The past key/value caches are graph inputs: a node that joins one
    // with the new rows still belongs to the split heads.
    const frontend::ImportedModel M = zoo(modelgen::Family::Llama, 2, 15, 1);
    const BlockInfo B = analyzeBlocks(M.Graph, computeWork(M.Graph));
    REQUIRE(B.NumBlocks == 2);
    CHECK(B.HasTensorParallelPattern);
    for (unsigned U = 1; U <= 2; ++U)
      CHECK(B.ForwardReduced[U].size() == 2); // attention out, MLP down
    unsigned Appends = 0;
    for (const auto &N : M.Graph.nodes())
      if (N->opType() == "Concat" && N->input(0) &&
          N->input(0)->name().startswith("past.")) {
        ++Appends;
        CHECK(B.Tp[N->index()] == TpRole::Sharded);
      }
    CHECK(Appends == 4);
  }

  TEST_CASE("a transformer whose node names number nothing splits as its "
            "named twin: blocks and the vocabulary from structure") {
    modelgen::TransformerSpec S =
        transformerSpec(modelgen::Family::Gpt, 3, 256, 8, 64, 1000);
    const std::string Named = zooBytes(S);
    const frontend::ImportedModel A = importZoo(Named);
    const frontend::ImportedModel B = importZoo(withAnonymousNodes(Named));
    CHECK(analyzeBlocks(A.Graph, computeWork(A.Graph)).NumBlocks == 3);
    // Structure cuts each layer in two (attention, MLP) and the head off;
    // the embeddings, with no product, lead the first block.
    CHECK(analyzeBlocks(B.Graph, computeWork(B.Graph)).NumBlocks == 7);
    const hw::Cluster C = dgx();
    const Report RA = predictOn(A, C, 4), RB = predictOn(B, C, 4);
    REQUIRE(RA.TensorParallel);
    REQUIRE(RB.TensorParallel);
    CHECK(RB.TensorParallel->AllReduces == RA.TensorParallel->AllReduces);
    CHECK(RB.TensorParallel->AllGathers == 1); // the tied head's logits
    CHECK(RB.TensorParallel->CommSeconds ==
          doctest::Approx(RA.TensorParallel->CommSeconds));
    REQUIRE(RA.LatencySeconds);
    REQUIRE(RB.LatencySeconds);
    CHECK(*RB.LatencySeconds == doctest::Approx(*RA.LatencySeconds));
  }

  TEST_CASE("torchvision's ViT numbers its layers with an underscore, "
            "Inception's numbered branch convolutions are not layers") {
    const std::string Zoo = std::string(PERFC_SOURCE_DIR) + "/tests/data/zoo/";
    auto Vit = frontend::importOnnxFile(Zoo + "vit_b_16.onnx", {});
    REQUIRE_MESSAGE(bool(Vit), llvm::toString(Vit.takeError()));
    const BlockInfo V = analyzeBlocks(Vit->Graph, computeWork(Vit->Graph));
    REQUIRE(V.NumBlocks == 12);
    CHECK(V.BlockNames[0] == "/encoder/layers/encoder_layer_0");
    CHECK(V.BlockNames[11] == "/encoder/layers/encoder_layer_11");
    for (unsigned U = 1; U <= 12; ++U)
      CHECK(V.ForwardReduced[U].size() == 2); // attention out, MLP out
    auto Inception = frontend::importOnnxFile(Zoo + "inception_v3.onnx", {});
    REQUIRE_MESSAGE(bool(Inception), llvm::toString(Inception.takeError()));
    // Its blocks are the cuts between modules (TrainingBlocksTest), not the
    // numbered branches.
    const BlockInfo I =
        analyzeBlocks(Inception->Graph, computeWork(Inception->Graph));
    CHECK(I.NumBlocks == 17);
    CHECK(std::count(I.BlockNames.begin(), I.BlockNames.end(),
                     "/Mixed_5b/branch3x3dbl_1") == 0);
    CHECK(std::count(I.BlockNames.begin(), I.BlockNames.end(),
                     "/Mixed_5b/branch1x1/conv/Conv") == 1);
  }

  TEST_CASE("each rank runs its share, and the exchanges are the collective "
            "model's all-reduces and all-gather after their kernels") {
    const frontend::ImportedModel M = zoo(modelgen::Family::Gpt, 2, 0, 64);
    const hw::Cluster C = dgx();
    const Report One = predictOn(M, C, 1);
    const Report Two = predictOn(M, C, 2);
    CHECK_FALSE(One.TensorParallel);
    REQUIRE(Two.TensorParallel);
    const TensorParallelReport &TP = *Two.TensorParallel;
    CHECK(TP.Degree == 2);
    CHECK(TP.Link == "nvswitch-gen2");
    // Two row GEMMs per layer and the token embedding's lookup are summed
    // over the ranks, the tied head's logits gathered.
    CHECK(TP.AllReduces == 2 * 2 + 1);
    CHECK(TP.AllGathers == 1);
    auto G = cost::groupOf(C, 2, 1);
    REQUIRE(bool(G));
    const double Launch = C.primaryDevice().LaunchOverheadSeconds;
    const double Hidden = 64.0 * 256 * 4, Logits = 64.0 * 1000 * 4;
    CHECK(TP.AllReduceBytes == doctest::Approx(5 * Hidden));
    CHECK(TP.AllGatherBytes == doctest::Approx(Logits));
    const double Expected =
        5 * (cost::collectiveSeconds(cost::Collective::AllReduce, Hidden, *G) +
             Launch) +
        cost::collectiveSeconds(cost::Collective::AllGather, Logits, *G) +
        Launch;
    CHECK(TP.CommSeconds == doctest::Approx(Expected));
    // The latency is the rank's kernels and the exchanges, which the
    // kernels that write the exchanged tensors carry.
    double Kernels = 0, Comm = 0;
    for (const NodeReport &N : Two.Nodes)
      if (N.Time) {
        Kernels += N.Time->Seconds;
        Comm += N.Time->TpCommSeconds;
      }
    CHECK(Comm == doctest::Approx(TP.CommSeconds));
    CHECK(TP.KernelSeconds == doctest::Approx(Kernels));
    CHECK(*Two.LatencySeconds == doctest::Approx(Kernels + Comm));
    // The trace draws each exchange on the communication track, after its
    // kernel; the last one ends the run.
    unsigned Drawn = 0;
    double End = 0;
    for (const llvm::json::Value &E : traceEvents(Two)) {
      const llvm::json::Object &O = *E.getAsObject();
      if (O.getString("cat") != llvm::StringRef("tensor-parallel"))
        continue;
      ++Drawn;
      CHECK(*O.getInteger("tid") == 1);
      End = std::max(End, *O.getNumber("ts") + *O.getNumber("dur"));
    }
    CHECK(Drawn == 6);
    CHECK(End * 1e-6 <= *Two.LatencySeconds * (1 + 1e-9));
    // The weights split but for the replicated ones (position table, norms,
    // biases), a small part of this model's.
    REQUIRE(One.Memory);
    REQUIRE(Two.Memory);
    const double W1 = One.Memory->Usage.WeightsBytes;
    const double W2 = Two.Memory->Usage.WeightsBytes;
    CHECK(2 * W2 > W1);
    CHECK(2 * W2 - W1 < 0.1 * W1);
    // Every GEMM of the rank does at most its unsplit work's time.
    for (size_t I = 0; I < One.Nodes.size(); ++I)
      if (One.Nodes[I].Time && One.Nodes[I].Work.Macs > 0 &&
          One.Nodes[I].Time->Exec == "kernel")
        CHECK(Two.Nodes[I].Time->ComputeSeconds <=
              One.Nodes[I].Time->ComputeSeconds * (1 + 1e-9));
  }

  TEST_CASE("a rank holds its heads' share of the key/value cache") {
    const frontend::ImportedModel M = zoo(modelgen::Family::Llama, 2, 255, 1);
    const hw::Cluster C = dgx();
    const Report One = predictOn(M, C, 1);
    const Report Four = predictOn(M, C, 4);
    REQUIRE(One.Memory);
    REQUIRE(Four.Memory);
    // 2 layers x (key, value) x 8 heads x 255 x 32 fp32.
    const double Cache = 2 * 2 * 8 * 255 * 32 * 4.0;
    CHECK(One.Memory->Usage.InputsBytes >= Cache);
    CHECK(Four.Memory->Usage.InputsBytes ==
          doctest::Approx(One.Memory->Usage.InputsBytes - Cache * 3 / 4));
  }

  TEST_CASE("a rank holds the activations its kernels write at their split, "
            "whatever reads them") {
    // A prefill of 256 tokens over a small vocabulary: the MLP's inner
    // activations (4h wide, written 1/4 on each rank by the column GEMM and
    // the GELU, read by the row GEMM) dominate the peak, not the logits.
    const frontend::ImportedModel M = importZoo(
        zooBytes(transformerSpec(modelgen::Family::Gpt, 2, 256, 8, 256, 64)));
    const hw::Cluster C = dgx();
    const Report One = predictOn(M, C, 1);
    const Report Four = predictOn(M, C, 4);
    REQUIRE(One.Memory);
    REQUIRE(Four.Memory);
    const double A1 = One.Memory->Usage.ActivationsBytes;
    const double A4 = Four.Memory->Usage.ActivationsBytes;
    // Split but for the replicated residual stream and norms.
    CHECK(A4 < 0.75 * A1);
    CHECK(A4 > A1 / 4);
  }

  TEST_CASE("a model without column/row pairs, or heads the degree does not "
            "divide, is refused") {
    const frontend::ImportedModel M = zoo(modelgen::Family::Llama, 1, 0, 8);
    llvm::Error Heads = checkTensorParallel(M.Graph, 16);
    REQUIRE(bool(Heads));
    const std::string Message = llvm::toString(std::move(Heads));
    CHECK(Message.find("--tp 16 does not divide the 8 heads") !=
          std::string::npos);
    CHECK_FALSE(bool(checkTensorParallel(M.Graph, 1)));
    // One MatMul on weights: nothing feeds a second.
    modelgen::TransformerSpec S =
        transformerSpec(modelgen::Family::Gpt, 1, 64, 4, 8, 100);
    const frontend::ImportedModel Gpt = importZoo(zooBytes(S));
    ir::Graph Empty;
    llvm::Error None = checkTensorParallel(Empty, 2);
    REQUIRE(bool(None));
    CHECK(llvm::toString(std::move(None))
              .find("no Megatron tensor-parallel "
                    "pattern") != std::string::npos);
    CHECK_FALSE(bool(checkTensorParallel(Gpt.Graph, 2)));
  }
}
