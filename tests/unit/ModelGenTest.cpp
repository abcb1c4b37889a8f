//===- ModelGenTest.cpp - perfc zoo: generated transformers ---------------===//
//
// The generator (tools/modelgen) must write models that perfc imports with
// every shape known, with the parameter and MAC counts of the real
// architectures: the exported gpt2_small and bert_base of tests/data/zoo,
// Megatron's closed form for GPT-3 175B, and Llama-2's published sizes;
// with --past, one decoding step with a KV cache as Hugging Face exports it.
//
//===----------------------------------------------------------------------===//
#include "ZooModels.h"

#include "frontend/OnnxImport.h"
#include "passes/Predict.h"
#include "tools/modelgen/TransformerGen.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

using namespace perfc;
using modelgen::Family;
using modelgen::TransformerSpec;

namespace {

const std::string ZooDir = std::string(PERFC_SOURCE_DIR) + "/tests/data/zoo/";

TransformerSpec spec(Family F, int64_t L, int64_t H, int64_t A, int64_t S,
                     int64_t V) {
  return test::transformerSpec(F, L, H, A, S, V);
}

std::string generate(const TransformerSpec &S) { return test::zooBytes(S); }

frontend::ImportedModel import(llvm::StringRef Bytes,
                               frontend::ImportOptions O = {}) {
  return test::importZoo(Bytes, O);
}

struct Costed {
  frontend::ImportedModel Model;
  Report R;
  double Seconds = 0; ///< Import and work pass.
};

Costed costOf(const TransformerSpec &S, frontend::ImportOptions O = {}) {
  std::string Bytes = generate(S);
  auto Start = std::chrono::steady_clock::now();
  Costed C{import(Bytes, O), {}};
  C.R = predictWork(C.Model.Graph);
  C.Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  CHECK(C.R.Warnings.empty());
  CHECK(C.Model.Warnings.empty());
  // Every tensor's shape is inferred.
  for (const auto &V : C.Model.Graph.values())
    CHECK_MESSAGE(V->shape().isStatic(), V->name().str());
  return C;
}

Report costZooFile(const std::string &Name, int64_t Seq) {
  frontend::ImportOptions O;
  O.Dims = {{"seq", Seq}};
  auto M = frontend::importOnnxFile(ZooDir + Name + ".onnx", O);
  if (!M)
    FAIL(llvm::toString(M.takeError()));
  return predictWork(M->Graph);
}

const ir::Node *findNode(const ir::Graph &G, llvm::StringRef Name) {
  for (const auto &N : G.nodes())
    if (N->name() == Name)
      return N;
  return nullptr;
}

/// The shape of value Name (unranked, and a failed check, when absent).
ir::Shape shapeOf(const ir::Graph &G, llvm::StringRef Name) {
  const ir::Value *V = G.lookup(Name);
  CHECK_MESSAGE(V, Name.str());
  return V ? V->shape() : ir::Shape();
}

bool hasNode(const ir::Graph &G, llvm::StringRef Name, llvm::StringRef Op) {
  for (const auto &N : G.nodes())
    if (N->name() == Name)
      return N->opType() == Op;
  return false;
}

std::string specError(const TransformerSpec &S) {
  auto R = modelgen::writeTransformerOnnx(S);
  if (R) {
    FAIL_CHECK("a bad spec was accepted");
    return "";
  }
  std::string Msg = llvm::toString(R.takeError());
  CHECK(Msg.find('\n') == std::string::npos);
  return Msg;
}

bool contains(const std::string &S, llvm::StringRef Part) {
  return S.find(Part.str()) != std::string::npos;
}

} // namespace

TEST_CASE("zoo gpt: GPT-2 small has the counts of the exported gpt2_small") {
  TransformerSpec S = spec(Family::Gpt, 12, 768, 12, 1024, 50257);
  Costed C = costOf(S);
  CHECK(C.R.Total.Params == 124'439'808);
  CHECK(C.R.Total.Params == modelgen::parameterCount(*modelgen::resolve(S)));
  CHECK(C.R.Total.Macs == 145'824'153'600.0);
  Report Zoo = costZooFile("gpt2_small", 1024);
  CHECK(C.R.Total.Macs == Zoo.Total.Macs);
  CHECK(C.R.Total.Params == Zoo.Total.Params);

  const ir::Graph &G = C.Model.Graph;
  CHECK(G.inputs().front()->shape() == ir::Shape({1, 1024}));
  CHECK(G.outputs().front()->name() == "logits");
  CHECK(G.outputs().front()->shape() == ir::Shape({1, 1024, 50257}));
  CHECK(C.Model.Opset == 17);
  CHECK(C.Model.IrVersion == 8);
  for (llvm::StringRef Name :
       {"/layers.0/attn/qkv/MatMul", "/layers.11/attn/out/MatMul",
        "/layers.3/mlp/fc1/MatMul", "/layers.3/mlp/fc2/MatMul",
        "/layers.5/attn/qk/MatMul", "/layers.5/attn/pv/MatMul",
        "/lm_head/MatMul"})
    CHECK_MESSAGE(hasNode(G, Name, "MatMul"), Name.str());
  CHECK(hasNode(G, "/layers.0/ln1/LayerNormalization", "LayerNormalization"));
  CHECK(hasNode(G, "/layers.0/mlp/gelu/Tanh", "Tanh"));
  CHECK(hasNode(G, "/embed/tok/Gather", "Gather"));
  CHECK(hasNode(G, "/lm_head/Transpose", "Transpose"));
  // Tied: the head reads the token embedding; untied adds an [H, V] weight.
  CHECK(G.lookup("lm_head.weight") == nullptr);
  S.TiedEmbeddings = false;
  Costed U = costOf(S);
  CHECK(U.R.Total.Params == 124'439'808 + 768 * 50257);
  CHECK(U.R.Total.Macs == C.R.Total.Macs);
}

TEST_CASE("zoo bert: BERT-base has the counts of the exported bert_base") {
  TransformerSpec S = spec(Family::Bert, 12, 768, 12, 128, 30522);
  Costed C = costOf(S);
  CHECK(C.R.Total.Params == 109'482'240); // with BERT's 512 positions
  CHECK(C.R.Total.Macs == 11'174'215'680.0);
  Report Zoo = costZooFile("bert_base", 128);
  CHECK(C.R.Total.Macs == Zoo.Total.Macs);
  CHECK(C.R.Total.Params == Zoo.Total.Params);
  const ir::Graph &G = C.Model.Graph;
  REQUIRE(G.outputs().size() == 2);
  CHECK(G.outputs()[0]->name() == "last_hidden_state");
  CHECK(G.outputs()[0]->shape() == ir::Shape({1, 128, 768}));
  CHECK(G.outputs()[1]->name() == "pooler_output");
  CHECK(G.outputs()[1]->shape() == ir::Shape({1, 768}));
  CHECK(hasNode(G, "/layers.0/mlp/gelu/Erf", "Erf"));
  CHECK(hasNode(G, "/pooler/Gemm", "Gemm"));
  CHECK(hasNode(G, "/embed/type/Gather", "Gather"));
  CHECK_FALSE(hasNode(G, "/lm_head/MatMul", "MatMul"));
}

TEST_CASE("zoo bert: pretraining (MLM + NSP) and SQuAD heads") {
  TransformerSpec S = spec(Family::Bert, 24, 1024, 16, 128, 30522);
  Costed Base = costOf(S);
  S.Head = modelgen::BertHead::Pretraining;
  Costed Pre = costOf(S);
  // BERT-large for pretraining: 336.2 M parameters (the MLM decoder is tied
  // to the token embedding; its bias, the transform and NSP are new).
  CHECK(Pre.R.Total.Params == 336'226'108);
  CHECK(modelgen::parameterCount(*modelgen::resolve(S)) == 336'226'108);
  // MLM transform and decoder on all 128 positions, NSP on the pooled one.
  CHECK(Pre.R.Total.Macs - Base.R.Total.Macs ==
        doctest::Approx(128.0 * (1024.0 * 1024 + 1024.0 * 30522) + 1024 * 2));
  const ir::Graph &G = Pre.Model.Graph;
  REQUIRE(G.outputs().size() == 4);
  CHECK(G.outputs()[2]->name() == "prediction_log_probs");
  CHECK(G.outputs()[2]->shape() == ir::Shape({1, 128, 30522}));
  CHECK(G.outputs()[3]->name() == "seq_relationship_logits");
  CHECK(hasNode(G, "/mlm/LogSoftmax", "LogSoftmax"));
  S.Head = modelgen::BertHead::Squad;
  Costed Qa = costOf(S);
  CHECK(Qa.R.Total.Params == Base.R.Total.Params + 2 * 1024 + 2);
  REQUIRE(Qa.Model.Graph.outputs().size() == 3);
  CHECK(Qa.Model.Graph.outputs()[2]->shape() == ir::Shape({1, 128, 2}));
  CHECK(modelgen::parseBertHead("squad") == modelgen::BertHead::Squad);
  CHECK_FALSE(modelgen::parseBertHead("mlm"));
  S.Fam = Family::Gpt;
  CHECK(contains(specError(S), "--head squad is for bert"));
}

TEST_CASE("zoo gpt: Megatron GPT-3 175B and a 1T GPT import quickly") {
  struct {
    int64_t L, H, A;
  } Sizes[] = {{96, 12288, 96}, {128, 25600, 160}};
  for (const auto &Z : Sizes) {
    const int64_t S = 2048, V = 51200;
    Costed C = costOf(spec(Family::Gpt, Z.L, Z.H, Z.A, S, V));
    // Megatron's 12 L H^2 (1 + 13/(12 H) + (V + S)/(12 L H)), which leaves
    // out the final LayerNorm (2H).
    const double L = static_cast<double>(Z.L), H = static_cast<double>(Z.H);
    const double Formula =
        12 * L * H * H *
        (1 + 13 / (12 * H) + static_cast<double>(V + S) / (12 * L * H));
    CHECK(std::fabs(static_cast<double>(C.R.Total.Params) - Formula) <=
          2 * H + 1);
    CHECK(C.Seconds < 2.0);
    MESSAGE(Z.L << " layers: " << C.R.Total.Params << " parameters, "
                << C.Model.Graph.numNodes() << " nodes, imported in "
                << C.Seconds << " s");
  }
}

TEST_CASE("zoo llama: Llama-2 7B and 70B (grouped-query) parameters") {
  TransformerSpec S7 = spec(Family::Llama, 32, 4096, 32, 4096, 32000);
  auto R7 = modelgen::resolve(S7);
  REQUIRE(R7);
  CHECK(R7->Ffn == 11008); // 8H/3 rounded up to 256
  CHECK(R7->KvHeads == 32);
  CHECK_FALSE(*R7->TiedEmbeddings);
  Costed C7 = costOf(S7);
  CHECK(C7.R.Total.Params == 6'738'415'616);

  TransformerSpec S70 = spec(Family::Llama, 80, 8192, 64, 4096, 32000);
  S70.KvHeads = 8;
  S70.Ffn = 28672;
  Costed C70 = costOf(S70);
  CHECK(C70.R.Total.Params == 68'976'648'192);
  CHECK(C70.R.Total.Params ==
        modelgen::parameterCount(*modelgen::resolve(S70)));
  const ir::Graph &G = C70.Model.Graph;
  for (llvm::StringRef Name :
       {"/layers.0/attn/q/MatMul", "/layers.0/attn/k/MatMul",
        "/layers.0/attn/v/MatMul", "/layers.0/attn/out/MatMul",
        "/layers.79/mlp/gate/MatMul", "/layers.79/mlp/up/MatMul",
        "/layers.79/mlp/down/MatMul", "/lm_head/MatMul"})
    CHECK_MESSAGE(hasNode(G, Name, "MatMul"), Name.str());
  CHECK(hasNode(G, "/layers.0/attn/kv_expand/k/Expand", "Expand"));
  CHECK(hasNode(G, "/layers.0/attn/rope_q/Neg", "Neg"));
  CHECK(hasNode(G, "/layers.0/ln1/ReduceMean", "ReduceMean"));
  // K and V have 8 heads of 128; the products run over all 64.
  const ir::Value *K = G.lookup("/layers.0/attn/k/MatMul_output_0");
  REQUIRE(K);
  CHECK(K->shape() == ir::Shape({1, 4096, 1024}));
  const ir::Value *Scores = G.lookup("/layers.0/attn/qk/MatMul_output_0");
  REQUIRE(Scores);
  CHECK(Scores->shape() == ir::Shape({1, 64, 4096, 4096}));
}

TEST_CASE("zoo: batch is symbolic unless given, fp16 and bf16") {
  TransformerSpec S = spec(Family::Llama, 2, 256, 4, 64, 1000);
  S.KvHeads = 2;
  frontend::ImportOptions O;
  O.Batch = 3;
  Costed Symbolic = costOf(S, O);
  CHECK(Symbolic.Model.Graph.inputs().front()->shape() == ir::Shape({3, 64}));
  REQUIRE(Symbolic.Model.Bindings.size() == 1);
  CHECK(Symbolic.Model.Bindings.front().first == "batch");

  S.Batch = 5;
  Costed Static = costOf(S);
  CHECK(Static.Model.Graph.inputs().front()->shape() == ir::Shape({5, 64}));
  CHECK(Static.Model.Bindings.empty());
  CHECK(Static.R.Total.Macs == Symbolic.R.Total.Macs / 3 * 5);

  for (auto T : {modelgen::FloatType::F16, modelgen::FloatType::BF16})
    for (Family F : {Family::Gpt, Family::Bert, Family::Llama}) {
      TransformerSpec Half = spec(F, 2, 256, 4, 64, 1000);
      TransformerSpec Full = Half;
      Half.Type = T;
      Costed H = costOf(Half), C = costOf(Full);
      CHECK(H.R.Total.Params == C.R.Total.Params);
      CHECK(H.R.Total.Macs == C.R.Total.Macs);
      CHECK(ir::name(H.Model.Graph.outputs().front()->type()) ==
            modelgen::name(T));
    }
}

TEST_CASE("zoo: weights carry no data and point at <stem>.weights") {
  llvm::SmallString<128> Path;
  REQUIRE_FALSE(llvm::sys::fs::createTemporaryFile("modelgen", "onnx", Path));
  TransformerSpec S = spec(Family::Gpt, 2, 64, 4, 16, 100);
  if (llvm::Error E = modelgen::writeTransformerOnnxFile(S, Path))
    FAIL(llvm::toString(std::move(E)));
  auto Buf = llvm::MemoryBuffer::getFile(Path);
  REQUIRE(Buf);
  onnx::ModelProto M;
  REQUIRE(M.ParseFromString((*Buf)->getBuffer().str()));
  llvm::sys::fs::remove(Path);
  const std::string Stem = llvm::sys::path::stem(Path).str();
  unsigned Weights = 0;
  for (const onnx::TensorProto &T : M.graph().initializer()) {
    if (T.data_location() != onnx::TensorProto::EXTERNAL) {
      // Constants keep their (small) data.
      CHECK(T.raw_data().size() + T.int64_data_size() > 0);
      continue;
    }
    ++Weights;
    CHECK(T.raw_data().empty());
    CHECK(T.float_data_size() == 0);
    REQUIRE(T.external_data_size() == 3);
    CHECK(T.external_data(0).key() == "location");
    CHECK(T.external_data(0).value() == Stem + ".weights");
    CHECK(T.external_data(1).value() == "0");
    uint64_t Elements = 1;
    for (int64_t D : T.dims())
      Elements *= D;
    CHECK(T.external_data(2).value() == std::to_string(4 * Elements));
  }
  // embed tok and pos, final LN (2); per layer 2 LN (4), 4 weights, 4 biases.
  CHECK(Weights == 2 + 2 + 2 * 12);
  // The same spec gives the same bytes.
  CHECK(generate(S) == generate(S));
}

TEST_CASE("zoo: bad specs are one-line errors naming the option") {
  TransformerSpec S = spec(Family::Gpt, 12, 768, 7, 1024, 50257);
  CHECK(contains(specError(S), "--heads 7 does not divide --hidden 768"));
  S = spec(Family::Gpt, 0, 768, 12, 1024, 50257);
  CHECK(contains(specError(S), "--layers 0: a model needs at least one"));
  S = spec(Family::Llama, 2, 4096, 32, 128, 32000);
  S.KvHeads = 5;
  CHECK(contains(specError(S), "--kv-heads 5 does not divide --heads 32"));
  S.Fam = Family::Bert;
  S.KvHeads = 8;
  CHECK(contains(specError(S), "--kv-heads is for gpt and llama"));
  S = spec(Family::Llama, 2, 96, 32, 128, 32000); // head_dim 3
  CHECK(contains(specError(S), "even head dimension"));
  S = spec(Family::Gpt, 2, 64, 4, 1024, 100);
  S.MaxPositions = 512;
  CHECK(contains(specError(S), "--max-positions 512 is less than --seq 1024"));
  S = spec(Family::Bert, 2, 64, 4, 16, 100);
  S.TiedEmbeddings = true;
  CHECK(contains(specError(S), "bert has no LM head"));
  S = spec(Family::Gpt, 2, 64, 4, 16, -3);
  CHECK(contains(specError(S), "--vocab -3: must be positive"));
  S = spec(Family::Gpt, 1, 1 << 24, 1 << 24, 1 << 24, 100);
  CHECK(contains(specError(S), "over 2^62 bytes"));
  CHECK_FALSE(modelgen::parseFamily("gpt5"));
  CHECK(modelgen::parseFamily("llama") == Family::Llama);
}

namespace {

/// MACs of the attention products (qk and pv) and FLOPs of every node of
/// the attention blocks (projections, products, softmax, cache).
struct AttentionWork {
  double ProductMacs = 0;
  double Flops = 0;
};

AttentionWork attentionWork(const Report &R) {
  AttentionWork W;
  for (const NodeReport &N : R.Nodes) {
    llvm::StringRef Name = N.Name;
    if (!Name.contains("/attn/"))
      continue;
    W.Flops += N.Work.Flops;
    if (Name.endswith("/attn/qk/MatMul") || Name.endswith("/attn/pv/MatMul"))
      W.ProductMacs += N.Work.Macs;
  }
  return W;
}

} // namespace

TEST_CASE("zoo gpt: --kv-heads packs q and K key/value heads, expanded to "
          "the query heads (Falcon, StarCoder)") {
  TransformerSpec S = spec(Family::Gpt, 2, 64, 4, 8, 97);
  S.KvHeads = 1; // multi-query
  Costed C = costOf(S);
  // Per layer the packed projection is 64 x (64 + 2 x 16) with its bias.
  const uint64_t Mha = modelgen::parameterCount(
      *modelgen::resolve(spec(Family::Gpt, 2, 64, 4, 8, 97)));
  CHECK(C.R.Total.Params == modelgen::parameterCount(*modelgen::resolve(S)));
  CHECK(C.R.Total.Params == Mha - 2 * (64 * 2 * 48 + 2 * 48));
  unsigned Expands = 0;
  for (const auto &N : C.Model.Graph.nodes())
    Expands += N->opType() == "Expand";
  CHECK(Expands == 2 * 2); // keys and values of each layer
  // A decoding step caches the K heads: [b, 1, P, 16].
  S.Past = 5;
  S.Seq = 1;
  Costed D = costOf(S);
  CHECK(D.Model.Graph.inputs()[1]->shape() == ir::Shape({1, 1, 5, 16}));
}

TEST_CASE("zoo gpt: --past is one decoding step with the KV cache as inputs "
          "and outputs") {
  TransformerSpec S = spec(Family::Gpt, 2, 64, 4, 1, 97);
  S.Past = 15;
  auto R = modelgen::resolve(S);
  REQUIRE(R);
  CHECK(R->Name == "gpt_L2_H64_A4_F256_S1_P15_V97");
  CHECK(R->MaxPositions == 16); // the new token's position is 15
  Costed C = costOf(S);
  const ir::Graph &G = C.Model.Graph;
  // input_ids, then each layer's past key and value [b, A, P, d].
  REQUIRE(G.inputs().size() == 1 + 2 * 2);
  CHECK(G.inputs()[0]->name() == "input_ids");
  CHECK(G.inputs()[0]->shape() == ir::Shape({1, 1}));
  const char *Past[] = {"past.0.key", "past.0.value", "past.1.key",
                        "past.1.value"};
  const char *Present[] = {"present.0.key", "present.0.value", "present.1.key",
                           "present.1.value"};
  for (int I = 0; I < 4; ++I) {
    CHECK(G.inputs()[1 + I]->name() == Past[I]);
    CHECK(G.inputs()[1 + I]->shape() == ir::Shape({1, 4, 15, 16}));
    CHECK(G.inputs()[1 + I]->type() == ir::DType::F32);
  }
  // logits of the new token, then the caches with it appended.
  REQUIRE(G.outputs().size() == 1 + 2 * 2);
  CHECK(G.outputs()[0]->name() == "logits");
  CHECK(G.outputs()[0]->shape() == ir::Shape({1, 1, 97}));
  for (int I = 0; I < 4; ++I) {
    CHECK(G.outputs()[1 + I]->name() == Present[I]);
    CHECK(G.outputs()[1 + I]->shape() == ir::Shape({1, 4, 16, 16}));
  }
  const ir::Node *Cache = findNode(G, "/layers.1/attn/k_cache/Concat");
  REQUIRE(Cache);
  CHECK(Cache->opType() == "Concat");
  CHECK(Cache->input(0)->name() == "past.1.key");
  CHECK(Cache->output(0)->name() == "present.1.key");
  CHECK(hasNode(G, "/layers.1/attn/v_cache/Concat", "Concat"));
  CHECK(hasNode(G, "/layers.0/attn/k_t/Transpose", "Transpose"));
  CHECK(shapeOf(G, "/layers.0/attn/qk/MatMul_output_0") ==
        ir::Shape({1, 4, 1, 16}));
  // The new token reads position 15 of the table.
  const ir::Node *Positions = findNode(G, "/positions/Range");
  REQUIRE(Positions);
  REQUIRE(Positions->input(0)->data());
  CHECK(Positions->input(0)->data()->Ints.front() == 15);

  // The cache is no parameter: with the same position table, the counts
  // are those of the model without it, as perfc counts them too.
  TransformerSpec Full = spec(Family::Gpt, 2, 64, 4, 1, 97);
  Full.MaxPositions = S.MaxPositions = 64;
  const uint64_t Params = modelgen::parameterCount(*modelgen::resolve(Full));
  CHECK(modelgen::parameterCount(*modelgen::resolve(S)) == Params);
  CHECK(costOf(S).R.Total.Params == Params);
  CHECK(costOf(Full).R.Total.Params == Params);
}

TEST_CASE("zoo: the causal mask of a --past step spans P+S keys, none for one "
          "token") {
  for (Family F : {Family::Gpt, Family::Llama}) {
    TransformerSpec S = spec(F, 2, 64, 4, 1, 97);
    S.Past = 7;
    Costed One = costOf(S);
    // A single new token sees all P+1 keys: no mask, as Hugging Face.
    CHECK_FALSE(hasNode(One.Model.Graph, "/mask/Where", "Where"));
    CHECK(findNode(One.Model.Graph, "/layers.0/attn/mask/Add") == nullptr);
    CHECK(findNode(One.Model.Graph, "/layers.1/attn/mask/Add") == nullptr);

    S.Seq = 3;
    Costed Three = costOf(S);
    const ir::Graph &G = Three.Model.Graph;
    CHECK(shapeOf(G, "/mask/Where_output_0") == ir::Shape({3, 10}));
    CHECK(hasNode(G, "/mask/Range", "Range"));
    CHECK(hasNode(G, "/layers.1/attn/mask/Add", "Add"));
    CHECK(shapeOf(G, "/layers.1/attn/mask/Add_output_0") ==
          ir::Shape({1, 4, 3, 10}));

    // Without a cache, one token still has its [1, 1] mask, as before.
    Costed NoCache = costOf(spec(F, 2, 64, 4, 1, 97));
    CHECK(shapeOf(NoCache.Model.Graph, "/mask/Where_output_0") ==
          ir::Shape({1, 1}));
  }
}

TEST_CASE("zoo: attention work of a --past step grows with the cache") {
  for (Family F : {Family::Gpt, Family::Llama}) {
    const int64_t L = 2, A = 4, D = 16, Seq = 1;
    double LastFlops = 0, LastTotal = 0;
    for (int64_t P : {0, 15, 63, 255}) {
      TransformerSpec S = spec(F, L, A * D, A, Seq, 97);
      S.Past = P;
      S.MaxPositions = F == Family::Gpt ? 256 : 0; // same parameters
      Costed C = costOf(S);
      AttentionWork W = attentionWork(C.R);
      // Q.K^T and P.V: each S x (P+S) x d per head and layer.
      CHECK(W.ProductMacs ==
            static_cast<double>(2 * L * A * Seq * (P + Seq) * D));
      CHECK(W.Flops > LastFlops);
      CHECK(C.R.Total.Flops > LastTotal);
      LastFlops = W.Flops;
      LastTotal = C.R.Total.Flops;
      MESSAGE(modelgen::name(F).str()
              << " past " << P << ": attention " << W.Flops << " FLOPs");
    }
  }
}

TEST_CASE("zoo llama: grouped-query attention with --past caches K heads") {
  TransformerSpec S = spec(Family::Llama, 2, 128, 8, 4, 97);
  S.KvHeads = 2;
  S.Past = 12;
  S.Batch = 3;
  S.Type = modelgen::FloatType::F16;
  auto R = modelgen::resolve(S);
  REQUIRE(R);
  CHECK(R->Name == "llama_L2_H128_A8_K2_F512_S4_P12_V97");
  Costed C = costOf(S);
  const ir::Graph &G = C.Model.Graph;
  REQUIRE(G.inputs().size() == 5);
  REQUIRE(G.outputs().size() == 5);
  for (int I = 1; I < 5; ++I) {
    // The cache holds the 2 key/value heads, before they serve 8.
    CHECK(G.inputs()[I]->shape() == ir::Shape({3, 2, 12, 16}));
    CHECK(G.inputs()[I]->type() == ir::DType::F16);
    CHECK(G.outputs()[I]->shape() == ir::Shape({3, 2, 16, 16}));
    CHECK(G.outputs()[I]->type() == ir::DType::F16);
  }
  CHECK(G.outputs()[0]->shape() == ir::Shape({3, 4, 97}));
  // Appended after rotary, expanded after the cache.
  const ir::Node *Cache = findNode(G, "/layers.0/attn/k_cache/Concat");
  REQUIRE(Cache);
  CHECK(Cache->input(1)->name() == "/layers.0/attn/rope_k/Add_output_0");
  CHECK(shapeOf(G, "/layers.0/attn/kv_expand/k/Reshape_output_0") ==
        ir::Shape({3, 8, 16, 16}));
  CHECK(shapeOf(G, "/layers.0/attn/kv_expand/v/Reshape_output_0") ==
        ir::Shape({3, 8, 16, 16}));
  CHECK(shapeOf(G, "/layers.1/attn/qk/MatMul_output_0") ==
        ir::Shape({3, 8, 4, 16}));
  CHECK(shapeOf(G, "/layers.1/attn/pv/MatMul_output_0") ==
        ir::Shape({3, 8, 4, 16}));
  // Rotary tables for the 4 new positions, 12..15.
  CHECK(shapeOf(G, "/rotary/Cos_output_0") == ir::Shape({4, 16}));
  const ir::Node *Positions = findNode(G, "/positions/Range");
  REQUIRE(Positions);
  REQUIRE(Positions->input(0)->data());
  CHECK(Positions->input(0)->data()->Ints.front() == 12);
  // No parameter for the cache.
  TransformerSpec NoCache = S;
  NoCache.Past = 0;
  CHECK(C.R.Total.Params ==
        modelgen::parameterCount(*modelgen::resolve(NoCache)));
  CHECK(C.R.Total.Params == costOf(NoCache).R.Total.Params);
}

TEST_CASE("zoo: --past errors name the flag") {
  TransformerSpec S = spec(Family::Bert, 2, 64, 4, 1, 100);
  S.Past = 4;
  CHECK(contains(specError(S), "--past 4 is for gpt and llama"));
  S.Fam = Family::Gpt;
  S.MaxPositions = 4;
  CHECK(contains(specError(S),
                 "--max-positions 4 is less than --past 4 + --seq 1"));
  S.MaxPositions = 0;
  S.Past = -1;
  CHECK(contains(specError(S), "--past -1: must be positive"));
  S.Past = (int64_t(1) << 24);
  CHECK(contains(specError(S), "--past 16777216 + --seq 1: too many"));
}

TEST_CASE("zoo NAME: published models' shapes have their published "
          "parameter counts") {
  // Hugging Face's counts of these checkpoints (bert: BertModel with its
  // pooler; DeepSeek without the multi-token-prediction module and the
  // router's bias); GPT-3 175B as the paper's Table 2.1 shapes it.
  const std::pair<const char *, uint64_t> Published[] = {
      {"gpt2", 124'439'808},
      {"gpt3-175b", 174'604'259'328},
      {"bert-base", 109'482'240},
      {"bert-large", 335'141'888},
      {"llama-2-7b", 6'738'415'616},
      {"llama-2-13b", 13'015'864'320},
      {"llama-2-70b", 68'976'648'192},
      {"llama-3-8b", 8'030'261'248},
      {"llama-3-70b", 70'553'706'496},
      {"llama-3.1-405b", 405'853'388'800},
      {"mistral-7b", 7'241'732'096},
      {"mixtral-8x7b", 46'702'792'704},
      {"mixtral-8x22b", 140'630'071'296},
      {"deepseek-v2-lite", 15'706'484'224},
      {"deepseek-v2", 235'741'434'880},
      {"deepseek-v3", 671'026'404'352},
  };
  REQUIRE(modelgen::presets().size() == std::size(Published));
  for (const auto &[Name, Params] : Published) {
    CAPTURE(Name);
    llvm::Optional<TransformerSpec> S = modelgen::preset(Name);
    REQUIRE(S);
    S->Seq = 512;
    S->Batch = 1; // DeepSeek-V2's 160 experts: a layout for one batch
    auto R = modelgen::resolve(*S);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    CHECK(modelgen::parameterCount(*R) == Params);
  }
  CHECK_FALSE(modelgen::preset("llama-4"));
  // The graph counts what the formula does (a small override of one).
  llvm::Optional<TransformerSpec> Small = modelgen::preset("llama-3-8b");
  REQUIRE(Small);
  Small->Layers = 1;
  Small->Seq = 16;
  Costed C = costOf(*Small);
  CHECK(C.R.Total.Params ==
        modelgen::parameterCount(*modelgen::resolve(*Small)));
  // BERT's 512 positions bound its sequence.
  llvm::Optional<TransformerSpec> Bert = modelgen::preset("bert-base");
  REQUIRE(Bert);
  Bert->Seq = 1024;
  auto Long = modelgen::resolve(*Bert);
  REQUIRE_FALSE(Long);
  CHECK(llvm::toString(Long.takeError())
            .find("--max-positions 512 is less than --seq 1024") !=
        std::string::npos);
}
