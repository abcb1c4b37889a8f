//===- LatentAttentionTest.cpp - DeepSeek's multi-head latent attention ---===//
//
// perfc zoo --kv-lora-rank writes MLA (tools/modelgen/TransformerGen.h):
// without a cache each head's keys and values come from a shared latent; with
// one, the cache holds the latent and the rotary key, and attention runs on
// it with k_b and v_b absorbed. Checked against DeepSeek-V3's published size,
// the cache's closed form, hand-counted MACs and Megatron-Core's
// tensor-parallel layout.
//
//===----------------------------------------------------------------------===//
#include "TrainingHelpers.h"

#include "costmodels/Collectives.h"
#include "hwdb/Loader.h"
#include "passes/Blocks.h"
#include "passes/Predict.h"
#include "passes/TpShard.h"
#include "passes/TrainStep.h"
#include "passes/WorkPass.h"
#include "tools/modelgen/TransformerGen.h"

#include <doctest/doctest.h>

using namespace perfc;
using namespace perfc::test;
using modelgen::Family;

namespace {

/// A small MLA model: 4 heads of 16 + 8 rotary channels, values of 12, a
/// latent of 32 and a query latent of 24.
modelgen::TransformerSpec mlaSpec(int64_t Past, int64_t Seq = 1,
                                  int64_t Batch = 2) {
  modelgen::TransformerSpec S =
      transformerSpec(Family::Llama, 2, 64, 4, Seq, 128);
  S.KvLoraRank = 32;
  S.QLoraRank = 24;
  S.QkNopeHeadDim = 16;
  S.QkRopeHeadDim = 8;
  S.VHeadDim = 12;
  S.Past = Past;
  S.Batch = Batch;
  return S;
}

/// A DeepSeek model's shape, in its config.json's terms.
struct DeepSeekShape {
  int64_t Layers, Hidden, Heads, KvLoraRank, QLoraRank, Ffn, Experts, TopK,
      MoeFfn, SharedFfn, DenseLayers, Vocab;
};

modelgen::TransformerSpec deepSeek(const DeepSeekShape &D) {
  modelgen::TransformerSpec S = transformerSpec(
      Family::Llama, D.Layers, D.Hidden, D.Heads, 4096, D.Vocab);
  S.KvLoraRank = D.KvLoraRank;
  S.QLoraRank = D.QLoraRank;
  S.Ffn = D.Ffn;
  S.Experts = D.Experts;
  S.TopK = D.TopK;
  S.MoeFfn = D.MoeFfn;
  S.SharedFfn = D.SharedFfn;
  S.DenseLayers = D.DenseLayers;
  return S;
}

const ir::Node *nodeNamed(const ir::Graph &G, llvm::StringRef Name) {
  for (const auto &N : G.nodes())
    if (N->name() == Name)
      return N;
  return nullptr;
}

std::string specError(const modelgen::TransformerSpec &S) {
  auto R = modelgen::resolve(S);
  if (R)
    return "";
  return llvm::toString(R.takeError());
}

hw::Cluster cluster(llvm::StringRef Name) {
  auto C = hw::loadHardware(Name);
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return std::move(*C);
}

Report predictOn(const ir::Graph &G, const hw::Cluster &C, unsigned Tp) {
  PredictOptions O;
  O.Device = &C.primaryDevice();
  if (Tp > 1) {
    llvm::Error E = checkTensorParallel(G, Tp);
    REQUIRE_MESSAGE(!E, llvm::toString(std::move(E)));
    auto Group = cost::groupOf(C, Tp, 1);
    REQUIRE_MESSAGE(bool(Group), llvm::toString(Group.takeError()));
    O.TensorParallel = *Group;
  }
  return predict(G, O);
}

} // namespace

TEST_SUITE("latent attention") {

  TEST_CASE("DeepSeek-V3's, V2's and V2-Lite's shapes have their published "
            "671B, 236B and 15.7B parameters, and the graph counts what the "
            "formula does") {
    // config.json of deepseek-ai/DeepSeek-V3: 61 layers of 7168, 128 heads,
    // kv_lora_rank 512, q_lora_rank 1536, 256 routed experts of 2048 (top
    // 8) + 1 shared, the first 3 layers dense (18432), vocabulary 129280.
    // The paper: 671B total parameters (its 14B multi-token-prediction
    // module apart); here without the router's 256 bias terms a layer.
    const auto Resolved = [](modelgen::TransformerSpec S) {
      auto R = modelgen::resolve(S);
      REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
      return std::move(*R);
    };
    const modelgen::TransformerSpec V3 = Resolved(deepSeek(
        {61, 7168, 128, 512, 1536, 18432, 256, 8, 2048, 2048, 3, 129280}));
    CHECK(V3.QkNopeHeadDim == 128);
    CHECK(V3.QkRopeHeadDim == 64);
    CHECK(V3.VHeadDim == 128);
    CHECK(modelgen::parameterCount(V3) == 671026404352ull);
    // One layer's attention by hand: q_a, q_norm, q_b, kv_a, kv_norm, k_b,
    // v_b, out.
    const uint64_t Attention = 7168ull * 1536 + 1536 + 1536ull * 128 * 192 +
                               7168ull * 576 + 512 + 512ull * 128 * 128 * 2 +
                               128ull * 128 * 7168;
    CHECK(Attention == 187107328ull);
    // DeepSeek-V2 (236B; 160 experts need a batch for their layout) and
    // V2-Lite (15.7B, no query latent), from their config.json files; two
    // shared experts are one of twice the width.
    modelgen::TransformerSpec V2 = deepSeek(
        {60, 5120, 128, 512, 1536, 12288, 160, 6, 1536, 3072, 1, 102400});
    V2.Batch = 1;
    CHECK(modelgen::parameterCount(Resolved(V2)) == 235741434880ull);
    CHECK(modelgen::parameterCount(Resolved(deepSeek(
              {27, 2048, 16, 512, 0, 10944, 64, 6, 1408, 2816, 1, 102400}))) ==
          15706484224ull);

    for (int64_t Past : {0, 15}) {
      const modelgen::TransformerSpec S = mlaSpec(Past);
      const frontend::ImportedModel M = importZoo(zooBytes(S));
      const GraphWork W = computeWork(M.Graph);
      double Params = 0;
      for (const OpWork &N : W.Nodes)
        Params += N.Params;
      auto Resolved = modelgen::resolve(S);
      REQUIRE(bool(Resolved));
      CHECK(Params ==
            doctest::Approx(double(modelgen::parameterCount(*Resolved))));
    }
  }

  TEST_CASE("decoding caches the latent and the rotary key, c + r per token "
            "and layer, for all heads") {
    const frontend::ImportedModel M = importZoo(zooBytes(mlaSpec(15)));
    unsigned Caches = 0;
    for (const ir::Value *In : M.Graph.inputs()) {
      if (!In->name().startswith("past."))
        continue;
      ++Caches;
      CHECK(In->name().endswith(".latent"));
      CHECK(In->shape().sizes() ==
            llvm::SmallVector<int64_t, 4>{2, 1, 15, 32 + 8});
    }
    CHECK(Caches == 2);
    // DeepSeek-V3 in bf16: 61 layers x 576 x 2 bytes = 70,272 bytes a
    // token, where multi-head attention's keys and values would take 61 x
    // 2 x 128 heads x 128 x 2 = 3,997,696: 57x more.
    const hw::Cluster H100 = cluster("h100-sxm5-80gb");
    const Report R = predictOn(M.Graph, H100, 1);
    REQUIRE(R.Memory);
    // 2 layers x batch 2 x 15 cached x 40, fp32 (the inputs also hold
    // input_ids).
    const double Cache = 2 * 2 * 15 * 40 * 4.0;
    CHECK(R.Memory->Usage.InputsBytes >= Cache);
    CHECK(R.Memory->Usage.InputsBytes < Cache + 1024);
  }

  TEST_CASE("decoding attends on the latent: the MACs of the absorbed form "
            "and the heads of a sequence as the rows of one product") {
    // Batch 2, 1 new token after 15: 16 keys; 4 heads.
    const frontend::ImportedModel M = importZoo(zooBytes(mlaSpec(15)));
    const GraphWork W = computeWork(M.Graph);
    const auto Work = [&](llvm::StringRef Name) -> const OpWork & {
      const ir::Node *N = nodeNamed(M.Graph, Name);
      REQUIRE_MESSAGE(N, Name.str());
      return W.Nodes[N->index()];
    };
    // q_nope [2, 4, 1, 16] by k_b as 4 matrices [16, 32].
    const OpWork &Uk = Work("/layers.0/attn/uk/MatMul");
    CHECK(Uk.Macs == 2 * 4 * 1 * 16 * 32);
    CHECK(Uk.Gemm.Batch == 4); // a head's matrix serves the 2 sequences
    CHECK(Uk.Gemm.M == 2);
    // Scores over the latent and the rotary key: 32 + 8 channels.
    const OpWork &Qk = Work("/layers.0/attn/qk/MatMul");
    CHECK(Qk.Macs == 2 * 4 * 1 * 40 * 16);
    CHECK(Qk.Gemm.Batch == 2);
    CHECK(Qk.Gemm.M == 4); // the 4 heads read one latent
    CHECK(Qk.Gemm.N == 16);
    CHECK(Qk.Gemm.K == 40);
    CHECK(Qk.Gemm.FoldedHeads == 4);
    // Values: the latent's first 32 channels.
    const OpWork &Pv = Work("/layers.0/attn/pv/MatMul");
    CHECK(Pv.Macs == 2 * 4 * 1 * 16 * 32);
    const OpWork &Uv = Work("/layers.0/attn/uv/MatMul");
    CHECK(Uv.Macs == 2 * 4 * 1 * 32 * 12);
    const OpWork &Out = Work("/layers.0/attn/out/MatMul");
    CHECK(Out.Macs == 2 * 1 * 48 * 64);

    // Without a cache: keys and values of every head from the latent.
    const frontend::ImportedModel Naive =
        importZoo(zooBytes(mlaSpec(0, /*Seq=*/16)));
    const GraphWork NW = computeWork(Naive.Graph);
    const ir::Node *NQk = nodeNamed(Naive.Graph, "/layers.0/attn/qk/MatMul");
    const ir::Node *Kb = nodeNamed(Naive.Graph, "/layers.0/attn/k_b/MatMul");
    REQUIRE(NQk);
    REQUIRE(Kb);
    CHECK(NW.Nodes[NQk->index()].Macs == 2 * 4 * 16 * 24 * 16);
    CHECK(NW.Nodes[Kb->index()].Macs == 2 * 16 * 32 * 64);
  }

  TEST_CASE("tensor parallelism: the down projections run whole, q_b, k_b "
            "and v_b are columns, out the row, as Megatron-Core splits MLA") {
    for (int64_t Past : {0, 15}) {
      CAPTURE(Past);
      const frontend::ImportedModel M =
          importZoo(zooBytes(mlaSpec(Past, Past ? 1 : 16)));
      const BlockInfo B = analyzeBlocks(M.Graph, computeWork(M.Graph));
      REQUIRE(B.NumBlocks == 2);
      const auto Role = [&](llvm::StringRef Name) {
        const ir::Node *N = nodeNamed(M.Graph, Name);
        REQUIRE_MESSAGE(N, Name.str());
        return B.Tp[N->index()];
      };
      CHECK(Role("/layers.1/attn/q_a/MatMul") == TpRole::Replicated);
      CHECK(Role("/layers.1/attn/q_norm/Mul_1") == TpRole::Replicated);
      CHECK(Role("/layers.1/attn/kv_a/MatMul") == TpRole::Replicated);
      CHECK(Role("/layers.1/attn/kv_norm/Mul_1") == TpRole::Replicated);
      CHECK(Role("/layers.1/attn/rope_k/Add") == TpRole::Replicated);
      CHECK(Role("/layers.1/attn/q_b/MatMul") == TpRole::Column);
      CHECK(Role("/layers.1/attn/rope_q/Add") == TpRole::Sharded);
      CHECK(Role("/layers.1/attn/Softmax") == TpRole::Sharded);
      CHECK(Role("/layers.1/attn/out/MatMul") == TpRole::Row);
      CHECK(Role("/layers.1/mlp/gate/MatMul") == TpRole::Column);
      CHECK(Role("/layers.1/mlp/down/MatMul") == TpRole::Row);
      if (Past == 0) {
        CHECK(Role("/layers.1/attn/k_b/MatMul") == TpRole::Column);
        CHECK(Role("/layers.1/attn/v_b/MatMul") == TpRole::Column);
        CHECK(Role("/layers.1/attn/k_cat/Concat") == TpRole::Sharded);
        // Attention's input gradient is all-reduced where the column GEMMs
        // read it: after q_norm and after kv_norm; the MLP's after ln2.
        CHECK(B.BackwardReduced[2].size() == 3);
      } else {
        // The cache is the latent every head reads: appended whole.
        CHECK(Role("/layers.1/attn/latent_cache/Concat") == TpRole::Replicated);
        CHECK(Role("/layers.1/attn/uk/MatMul") == TpRole::Sharded);
        CHECK(Role("/layers.1/attn/uv/MatMul") == TpRole::Sharded);
        CHECK(B.BackwardReduced[2].size() == 2);
      }
      CHECK(B.ForwardReduced[2].size() == 2); // out, down
    }
    // Without a query latent (DeepSeek-V2-Lite) q is the column GEMM; kv_a,
    // which reads the same input, still runs whole.
    for (int64_t Past : {0, 15}) {
      CAPTURE(Past);
      modelgen::TransformerSpec S = mlaSpec(Past, Past ? 1 : 16);
      S.QLoraRank = 0;
      const frontend::ImportedModel M = importZoo(zooBytes(S));
      const BlockInfo B = analyzeBlocks(M.Graph, computeWork(M.Graph));
      const auto Role = [&](llvm::StringRef Name) {
        const ir::Node *N = nodeNamed(M.Graph, Name);
        REQUIRE_MESSAGE(N, Name.str());
        return B.Tp[N->index()];
      };
      CHECK(Role("/layers.0/attn/q/MatMul") == TpRole::Column);
      CHECK(Role("/layers.0/attn/kv_a/MatMul") == TpRole::Replicated);
      CHECK(Role("/layers.0/attn/out/MatMul") == TpRole::Row);
      CHECK(B.BackwardReduced[1].size() == (Past ? 2u : 3u));
    }
  }

  TEST_CASE("a tensor-parallel rank computes its heads and holds the whole "
            "latent cache") {
    const frontend::ImportedModel M = importZoo(zooBytes(mlaSpec(255)));
    const hw::Cluster C = cluster("dgx-a100");
    const Report One = predictOn(M.Graph, C, 1);
    const Report Two = predictOn(M.Graph, C, 2);
    REQUIRE(One.Memory);
    REQUIRE(Two.Memory);
    // Every rank holds the whole latent (multi-head attention's cache
    // splits with the heads).
    CHECK(Two.Memory->Usage.InputsBytes ==
          doctest::Approx(One.Memory->Usage.InputsBytes));
    // A rank's share of the scores: half the heads, as rows of the product.
    const ir::Node *Qk = nodeNamed(M.Graph, "/layers.0/attn/qk/MatMul");
    REQUIRE(Qk);
    const BlockInfo B = analyzeBlocks(M.Graph, computeWork(M.Graph));
    const OpWork W = computeWork(M.Graph).Nodes[Qk->index()];
    const OpWork Half = shardWork(W, B.Tp[Qk->index()], 2,
                                  tpShare(B, Qk->index(), 2, false), 1.0);
    CHECK(Half.Gemm.M == 2);
    CHECK(Half.Gemm.Batch == 2);
    CHECK(Half.Macs == doctest::Approx(W.Macs / 2));
    // Split by batch instead (--ep's data-parallel attention): half the
    // sequences, each with all its heads as rows.
    const OpWork ByBatch = shardWork(W, TpRole::Replicated, 2, 0.5, 1.0);
    CHECK(ByBatch.Gemm.Batch == 1);
    CHECK(ByBatch.Gemm.M == 4);
    // ... and reads the whole cache: the attention kernel's memory time
    // (the cache is nearly all it reads) barely shrinks, where a
    // multi-head cache's halves.
    const auto Memory = [&](const Report &R) {
      REQUIRE(R.Nodes[Qk->index()].Time);
      return R.Nodes[Qk->index()].Time->MemorySeconds;
    };
    CHECK(Memory(Two) > 0.9 * Memory(One));
    CHECK(Memory(Two) < Memory(One));
  }

  TEST_CASE("MLA trains with tensor parallelism") {
    const frontend::ImportedModel M =
        importZoo(zooBytes(mlaSpec(0, /*Seq=*/16, /*Batch=*/4)));
    const hw::Cluster C = cluster("dgx-a100");
    TrainOptions O;
    O.Tp = 2;
    O.GlobalBatch = 4;
    O.MicroBatch = 4;
    auto R = predictTraining(M.Graph, C, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    CHECK(R->StepSeconds > 0);
    TrainOptions One = O;
    One.Tp = 1;
    auto R1 = predictTraining(M.Graph, C, One);
    REQUIRE_MESSAGE(bool(R1), llvm::toString(R1.takeError()));
    // Two ranks hold less than one: the column and row weights split.
    REQUIRE(!R->Stages.empty());
    REQUIRE(!R1->Stages.empty());
    CHECK(R->Stages[0].WeightsBytes < R1->Stages[0].WeightsBytes);
    CHECK(R->TpCommSeconds > 0);
  }

  TEST_CASE("bad latent-attention options are one-line errors naming the "
            "flag") {
    modelgen::TransformerSpec Gpt = mlaSpec(0, 16);
    Gpt.Fam = Family::Gpt;
    CHECK(specError(Gpt).find("--kv-lora-rank is for llama") !=
          std::string::npos);
    modelgen::TransformerSpec NoLatent = mlaSpec(0, 16);
    NoLatent.KvLoraRank = 0;
    CHECK(specError(NoLatent).find("--q-lora-rank 24 shapes multi-head "
                                   "latent attention: add --kv-lora-rank") !=
          std::string::npos);
    modelgen::TransformerSpec Kv = mlaSpec(0, 16);
    Kv.KvHeads = 2;
    CHECK(specError(Kv).find("--kv-heads 2 does not apply to "
                             "--kv-lora-rank") != std::string::npos);
    modelgen::TransformerSpec Odd = mlaSpec(0, 16);
    Odd.QkRopeHeadDim = 7;
    CHECK(specError(Odd).find("--qk-rope-head-dim 7: rotary embeddings need "
                              "an even dimension") != std::string::npos);
    modelgen::TransformerSpec Negative = mlaSpec(0, 16);
    Negative.VHeadDim = -1;
    CHECK(specError(Negative).find("--v-head-dim -1: must be positive") !=
          std::string::npos);
    // The decoding queries on a huge latent: refused before any tensor
    // passes 2^62 bytes.
    modelgen::TransformerSpec Huge = mlaSpec(1);
    Huge.Hidden = Huge.Heads = 16384;
    Huge.QLoraRank = 0;
    Huge.KvLoraRank = int64_t(1) << 24;
    Huge.QkNopeHeadDim = Huge.QkRopeHeadDim = Huge.VHeadDim = 2;
    Huge.Batch = int64_t(1) << 24;
    CHECK(specError(Huge).find("the queries on the latent [batch, heads, seq, "
                               "kv-lora-rank]: lower --kv-lora-rank or --seq "
                               "(over 2^62 bytes)") != std::string::npos);
  }
}
