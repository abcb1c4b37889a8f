//===- ContribOpsTest.cpp - ONNX Runtime's com.microsoft ops --------------===//
//
// Shapes (frontend/ContribSchemas.cpp) and work (passes/ops/ContribOps.cpp)
// of the fused ops ONNX Runtime's transformer optimizer writes, checked on
// models built here, and one BERT layer written with standard ops and with
// the fused ones.
//
//===----------------------------------------------------------------------===//
#include "OnnxModels.h"
#include "TestGraphs.h"

#include "frontend/OnnxImport.h"
#include "passes/TrainStep.h"
#include "passes/WorkPass.h"

using namespace perfc;
using namespace perfc::test;

namespace {

constexpr int32_t I32 = onnx::TensorProto::INT32;

onnx::ModelProto contribModel() {
  onnx::ModelProto M = makeModel(17);
  auto *Ms = M.add_opset_import();
  Ms->set_domain("com.microsoft");
  Ms->set_version(1);
  return M;
}

onnx::NodeProto &addContrib(onnx::ModelProto &M, const std::string &Op,
                            std::vector<std::string> Inputs,
                            std::vector<std::string> Outputs,
                            const std::string &Name) {
  onnx::NodeProto &N =
      addNode(M, Op, std::move(Inputs), std::move(Outputs), Name);
  N.set_domain("com.microsoft");
  return N;
}

void addFloatAttr(onnx::NodeProto &N, const std::string &Name, float V) {
  auto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::FLOAT);
  A->set_f(V);
}

frontend::ImportedModel importOk(const onnx::ModelProto &M,
                                 frontend::ImportOptions O = {}) {
  return expectOk(frontend::importOnnxBytes(serialize(M), "m.onnx", O));
}

std::string importError(const onnx::ModelProto &M) {
  auto R = frontend::importOnnxBytes(serialize(M), "m.onnx", {});
  if (R) {
    FAIL_CHECK("import succeeded where an error was expected");
    return "";
  }
  std::string Msg = llvm::toString(R.takeError());
  CHECK(Msg.find('\n') == std::string::npos);
  CHECK(llvm::StringRef(Msg).startswith("m.onnx: "));
  return Msg;
}

bool contains(const std::string &S, llvm::StringRef Part) {
  return S.find(Part.str()) != std::string::npos;
}

ir::Shape shapeOf(const frontend::ImportedModel &IM, llvm::StringRef Name) {
  const ir::Value *V = IM.Graph.lookup(Name);
  REQUIRE(V);
  return V->shape();
}

/// The work of the node named Name.
OpWork workOf(const frontend::ImportedModel &IM, const GraphWork &GW,
              llvm::StringRef Name) {
  return GW.Nodes[nodeIndex(IM.Graph, Name)];
}

/// Imports M and returns the work of its node Name, checking that nothing
/// was costed as zero for being outside the standard set.
OpWork importedWork(const onnx::ModelProto &M, llvm::StringRef Name,
                    frontend::ImportedModel *Out = nullptr) {
  frontend::ImportedModel IM = importOk(M);
  GraphWork GW = computeWork(IM.Graph, defaultOpRegistry());
  for (const Warning &W : GW.Warnings)
    CHECK_MESSAGE(W.Message.find("outside the standard") == std::string::npos,
                  W.Message);
  OpWork W = workOf(IM, GW, Name);
  W.Params = GW.Total.Params;
  if (Out)
    *Out = std::move(IM);
  return W;
}

} // namespace

TEST_CASE("contrib Attention: shapes and work") {
  // B = 2, S = 16, H = 64 in 4 heads of 16.
  onnx::ModelProto M = contribModel();
  addInput(M, "x", {2, 16, 64});
  addInput(M, "mask", {2, 16}, I32);
  addWeight(M, "w", {64, 192});
  addWeight(M, "b", {192});
  auto &A = addContrib(M, "Attention", {"x", "w", "b", "mask"},
                       {"a", "present"}, "attn");
  addIntAttr(A, "num_heads", 4);
  addOutput(M, "a");
  addOutput(M, "present");
  frontend::ImportedModel IM;
  OpWork W = importedWork(M, "attn", &IM);
  CHECK(shapeOf(IM, "a") == ir::Shape({2, 16, 64}));
  CHECK(shapeOf(IM, "present") == ir::Shape({2, 2, 4, 16, 16}));
  // Projection 2*16*64*192 = 393216 MACs; Q K^T and P V 2*16*16*64 each.
  CHECK(W.Macs == 393216 + 2 * 32768);
  // Bias 2*16*192 = 6144; scores 2*4*16*16 = 2048, each scaled, masked and
  // softmaxed: 10 flops.
  CHECK(W.Flops == 2 * W.Macs + 6144 + 10 * 2048);
  CHECK(W.Class == OpClass::Gemm);
  CHECK(W.Gemm.Batch == 2);
  CHECK(W.Gemm.M == 16);
  CHECK(W.Gemm.N == 192);
  CHECK(W.Gemm.K == 64);
  CHECK(W.Params == 64 * 192 + 192);
  CHECK(W.Formula.find("softmax") != std::string::npos);
}

TEST_CASE("contrib Attention: qkv_hidden_sizes and past") {
  onnx::ModelProto M = contribModel();
  addInput(M, "x", {2, 16, 64});
  addInput(M, "past", {2, 2, 4, 5, 8});
  addWeight(M, "w", {64, 96});
  auto &A =
      addContrib(M, "Attention", {"x", "w", "", "", "past"}, {"a", "p"}, "at");
  addIntAttr(A, "num_heads", 4);
  addIntsAttr(A, "qkv_hidden_sizes", {32, 32, 32});
  addOutput(M, "a");
  addOutput(M, "p");
  frontend::ImportedModel IM;
  OpWork W = importedWork(M, "at", &IM);
  CHECK(shapeOf(IM, "a") == ir::Shape({2, 16, 32}));
  CHECK(shapeOf(IM, "p") == ir::Shape({2, 2, 4, 21, 8}));
  // L = 5 past + 16 new keys.
  CHECK(W.Macs == 2.0 * 16 * 64 * 96 + 2 * (2.0 * 16 * 21 * 32));
  CHECK(W.Flops == 2 * W.Macs + 9 * (2.0 * 4 * 16 * 21));
}

TEST_CASE("contrib MultiHeadAttention: separate and packed forms") {
  onnx::ModelProto M = contribModel();
  addInput(M, "q", {2, 16, 64});
  addInput(M, "k", {2, 10, 64});
  addInput(M, "v", {2, 10, 32});
  addInput(M, "qkv", {2, 16, 4, 3, 16});
  auto &A = addContrib(M, "MultiHeadAttention", {"q", "k", "v"}, {"o"}, "mha");
  addIntAttr(A, "num_heads", 4);
  auto &P = addContrib(M, "MultiHeadAttention", {"qkv"}, {"po"}, "packed");
  addIntAttr(P, "num_heads", 4);
  addOutput(M, "o");
  addOutput(M, "po");
  frontend::ImportedModel IM;
  OpWork W = importedWork(M, "mha", &IM);
  CHECK(shapeOf(IM, "o") == ir::Shape({2, 16, 32}));
  CHECK(shapeOf(IM, "po") == ir::Shape({2, 16, 64}));
  CHECK(W.Macs == 2.0 * 16 * 10 * 64 + 2.0 * 16 * 10 * 32);
  CHECK(W.Flops == 2 * W.Macs + 9 * (2.0 * 4 * 16 * 10));
  OpWork Packed = importedWork(M, "packed");
  CHECK(Packed.Macs == 2 * (2.0 * 16 * 16 * 64));
}

TEST_CASE("contrib SkipLayerNormalization and the simplified form") {
  onnx::ModelProto M = contribModel();
  addInput(M, "x", {2, 16, 64});
  addInput(M, "s", {2, 16, 64});
  addWeight(M, "g", {64});
  addWeight(M, "beta", {64});
  addWeight(M, "bias", {64});
  addContrib(M, "SkipLayerNormalization", {"x", "s", "g", "beta", "bias"},
             {"y", "mean", "isd", "sum"}, "sln");
  addContrib(M, "SkipSimplifiedLayerNormalization", {"x", "s", "g", "bias"},
             {"z"}, "ssln");
  for (const char *Out : {"y", "mean", "isd", "sum", "z"})
    addOutput(M, Out);
  frontend::ImportedModel IM;
  OpWork W = importedWork(M, "sln", &IM);
  CHECK(shapeOf(IM, "y") == ir::Shape({2, 16, 64}));
  CHECK(shapeOf(IM, "mean") == ir::Shape({2, 16, 1}));
  CHECK(shapeOf(IM, "isd") == ir::Shape({2, 16, 1}));
  CHECK(shapeOf(IM, "sum") == ir::Shape({2, 16, 64}));
  CHECK(shapeOf(IM, "z") == ir::Shape({2, 16, 64}));
  // Skip add, bias add, LayerNormalization with gamma and beta: 10.
  CHECK(W.Flops == 10 * 2048);
  CHECK(W.Class == OpClass::Normalization);
  // Skip add, bias add, RMS normalisation (3), gamma: 6.
  CHECK(importedWork(M, "ssln").Flops == 6 * 2048);
}

TEST_CASE("contrib EmbedLayerNormalization: shapes, gathered bytes, params") {
  onnx::ModelProto M = contribModel();
  addInput(M, "ids", {2, 16}, I32);
  addInput(M, "seg", {2, 16}, I32);
  addInput(M, "mask", {2, 16}, I32);
  addWeight(M, "word", {100, 64});
  addWeight(M, "pos", {32, 64});
  addWeight(M, "segemb", {2, 64});
  addWeight(M, "g", {64});
  addWeight(M, "b", {64});
  addContrib(M, "EmbedLayerNormalization",
             {"ids", "seg", "word", "pos", "segemb", "g", "b", "mask"},
             {"e", "mi"}, "emb");
  addOutput(M, "e");
  addOutput(M, "mi", I32);
  frontend::ImportedModel IM;
  OpWork W = importedWork(M, "emb", &IM);
  CHECK(shapeOf(IM, "e") == ir::Shape({2, 16, 64}));
  CHECK(shapeOf(IM, "mi") == ir::Shape({2}));
  // Two adds and LayerNormalization (8) per element, one add per mask
  // element for the mask index.
  CHECK(W.Flops == 10 * 2048 + 32);
  // Three gathered rows per token, as Gather counts them, then the ids,
  // segment ids, gamma, beta and mask: never the whole tables.
  CHECK(W.BytesRead == 3 * 2048 * 4 + 128 + 128 + 256 + 256 + 128);
  CHECK(W.Params == 6400 + 2048 + 128 + 64 + 64);
}

TEST_CASE("contrib GELU family and BiasAdd keep the input's shape") {
  onnx::ModelProto M = contribModel();
  addInput(M, "x", {2, 16, 64});
  addInput(M, "s", {2, 16, 64});
  addWeight(M, "b", {64});
  addContrib(M, "BiasGelu", {"x", "b"}, {"bg"}, "bg");
  addContrib(M, "FastGelu", {"x", "b"}, {"fg"}, "fg");
  addContrib(M, "FastGelu", {"x"}, {"fg0"}, "fg0");
  addContrib(M, "Gelu", {"x"}, {"g"}, "g");
  addFloatAttr(addContrib(M, "QuickGelu", {"x"}, {"qg"}, "qg"), "alpha",
               1.702f);
  addContrib(M, "BiasAdd", {"x", "b", "s"}, {"ba"}, "ba");
  for (const char *Out : {"bg", "fg", "fg0", "g", "qg", "ba"})
    addOutput(M, Out);
  frontend::ImportedModel IM = importOk(M);
  GraphWork GW = computeWork(IM.Graph, defaultOpRegistry());
  CHECK(GW.Warnings.empty());
  const std::pair<const char *, double> Expected[] = {
      {"bg", 15}, {"fg", 23}, {"fg0", 22}, {"g", 14}, {"qg", 8}, {"ba", 2}};
  for (const auto &[Name, PerElem] : Expected) {
    INFO(Name);
    CHECK(shapeOf(IM, Name) == ir::Shape({2, 16, 64}));
    OpWork W = workOf(IM, GW, Name);
    CHECK(W.Flops == PerElem * 2048);
    CHECK(W.Class == OpClass::Elementwise);
  }
}

TEST_CASE("contrib FusedMatMul: transposes, batch transposes, alpha") {
  onnx::ModelProto M = contribModel();
  addInput(M, "a", {3, 8, 4});
  addInput(M, "bt", {5, 8});
  addInput(M, "ab", {4, 3, 8});
  addWeight(M, "b", {8, 5});
  auto &F = addContrib(M, "FusedMatMul", {"a", "bt"}, {"y"}, "fmm");
  addIntAttr(F, "transA", 1);
  addIntAttr(F, "transB", 1);
  addFloatAttr(F, "alpha", 0.5f);
  // transBatchA: [4, 3, 8] is read as [3, 4, 8].
  auto &G = addContrib(M, "FusedMatMul", {"ab", "b"}, {"z"}, "batch");
  addIntAttr(G, "transBatchA", 1);
  addOutput(M, "y");
  addOutput(M, "z");
  frontend::ImportedModel IM;
  OpWork W = importedWork(M, "fmm", &IM);
  CHECK(shapeOf(IM, "y") == ir::Shape({3, 4, 5}));
  CHECK(shapeOf(IM, "z") == ir::Shape({3, 4, 5}));
  CHECK(W.Macs == 3 * 4 * 8 * 5);
  CHECK(W.Flops == 2 * W.Macs + 60); // alpha scales each output.
  CHECK(W.Gemm.Batch == 3);
  CHECK(W.Gemm.M == 4);
  CHECK(W.Gemm.N == 5);
  CHECK(W.Gemm.K == 8);
  CHECK(importedWork(M, "batch").Macs == 3 * 4 * 8 * 5);
}

TEST_CASE("a malformed contrib node is a one-line error naming it") {
  struct Case {
    const char *What, *Op;
    std::vector<std::string> Inputs;
    const char *Reason;
  };
  const Case Cases[] = {
      {"rank-2 input", "Attention", {"x2", "w"}, "shall have 3 dimensions"},
      {"no weights", "Attention", {"x"}, "input 1 (weights) is required"},
      {"no gamma", "SkipLayerNormalization", {"x", "x"}, "input 2 (gamma)"},
      {"inner dims differ", "FusedMatMul", {"x", "x"}, "inner dimensions"},
      {"no bias", "BiasGelu", {"x"}, "input 1 (bias)"},
  };
  for (const Case &C : Cases) {
    INFO(C.What);
    onnx::ModelProto M = contribModel();
    addInput(M, "x", {2, 16, 64});
    addInput(M, "x2", {16, 64});
    addWeight(M, "w", {64, 192});
    addIntAttr(addContrib(M, C.Op, C.Inputs, {"y"}, "bad"), "num_heads", 4);
    addNode(M, "Relu", {"y"}, {"z"}, "relu");
    addOutput(M, "z");
    const std::string Msg = importError(M);
    CHECK(contains(Msg, "node 'bad', com.microsoft:" + std::string(C.Op)));
    CHECK(contains(Msg, C.Reason));
  }
}

TEST_CASE("a com.microsoft op perfc does not know still warns, costs zero") {
  onnx::ModelProto M = contribModel();
  addInput(M, "x", {2, 16, 64});
  addContrib(M, "GemmFastGelu", {"x"}, {"y"}, "gfg");
  addOutput(M, "y");
  frontend::ImportOptions O;
  O.AllowUnknownShapes = true;
  frontend::ImportedModel IM = importOk(M, O);
  GraphWork GW = computeWork(IM.Graph, defaultOpRegistry());
  OpWork W = workOf(IM, GW, "gfg");
  CHECK(W.Flops == 0);
  CHECK(W.Class == OpClass::Other);
  bool Warned = false;
  for (const Warning &Wn : GW.Warnings)
    Warned |=
        Wn.Message.find("com.microsoft:GemmFastGelu' is outside the "
                        "standard op set: costed as zero") != std::string::npos;
  CHECK(Warned);
}

namespace {

// One BERT-base encoder layer (H = 768, 12 heads of 64, FFN 3072) over
// B = 1, S = 128, as torch exports it and as ONNX Runtime's optimizer
// fuses it.
constexpr int64_t S = 128, H = 768, Heads = 12, D = 64, F = 3072;

void addLayerNorm(onnx::ModelProto &M, const std::string &X,
                  const std::string &Prefix, const std::string &Out) {
  addWeight(M, Prefix + "_g", {H});
  addWeight(M, Prefix + "_b", {H});
  auto &N = addNode(M, "LayerNormalization", {X, Prefix + "_g", Prefix + "_b"},
                    {Out}, Prefix);
  addIntAttr(N, "axis", -1);
}

/// x -> MatMul(w) -> Add(b).
std::string addDense(onnx::ModelProto &M, const std::string &X,
                     const std::string &Name, int64_t In, int64_t Out) {
  addWeight(M, Name + "_w", {In, Out});
  addWeight(M, Name + "_b", {Out});
  addNode(M, "MatMul", {X, Name + "_w"}, {Name + "_mm"}, Name + "_mm");
  addNode(M, "Add", {Name + "_mm", Name + "_b"}, {Name}, Name + "_add");
  return Name;
}

/// [1, S, H] -> [1, heads, S, d] (Perm {0, 2, 1, 3}) or K^T (Perm
/// {0, 2, 3, 1}).
std::string splitHeads(onnx::ModelProto &M, const std::string &X,
                       std::vector<int64_t> Perm) {
  addNode(M, "Reshape", {X, "heads_shape"}, {X + "_r"}, X + "_r");
  auto &T = addNode(M, "Transpose", {X + "_r"}, {X + "_t"}, X + "_t");
  addIntsAttr(T, "perm", Perm);
  return X + "_t";
}

onnx::ModelProto standardBertLayer() {
  onnx::ModelProto M = makeModel(17);
  addInput(M, "x", {1, S, H});
  addInput(M, "mask", {1, 1, 1, S}); // Additive, as HF's extended mask.
  addInts(M, "heads_shape", {1, S, Heads, D});
  addInts(M, "merge_shape", {1, S, H});
  auto &Scale = *M.mutable_graph()->add_initializer();
  Scale.set_name("scale");
  Scale.set_data_type(onnx::TensorProto::FLOAT);
  Scale.add_float_data(8.0f);
  const std::string Q =
      splitHeads(M, addDense(M, "x", "q", H, H), {0, 2, 1, 3});
  const std::string K =
      splitHeads(M, addDense(M, "x", "k", H, H), {0, 2, 3, 1});
  const std::string V =
      splitHeads(M, addDense(M, "x", "v", H, H), {0, 2, 1, 3});
  addNode(M, "MatMul", {Q, K}, {"scores"}, "qk");
  addNode(M, "Div", {"scores", "scale"}, {"scaled"}, "scale");
  addNode(M, "Add", {"scaled", "mask"}, {"masked"}, "mask_add");
  addIntAttr(addNode(M, "Softmax", {"masked"}, {"probs"}, "softmax"), "axis",
             -1);
  addNode(M, "MatMul", {"probs", V}, {"ctx"}, "pv");
  addIntsAttr(addNode(M, "Transpose", {"ctx"}, {"ctx_t"}, "ctx_t"), "perm",
              {0, 2, 1, 3});
  addNode(M, "Reshape", {"ctx_t", "merge_shape"}, {"ctx_m"}, "ctx_m");
  addDense(M, "ctx_m", "o", H, H);
  addNode(M, "Add", {"o", "x"}, {"res1"}, "res1");
  addLayerNorm(M, "res1", "ln1", "h1");
  addDense(M, "h1", "ff1", H, F);
  // torch's erf GELU: x * 0.5 * (1 + erf(x / sqrt 2)).
  for (const char *C : {"sqrt2", "one", "half"}) {
    auto &T = *M.mutable_graph()->add_initializer();
    T.set_name(C);
    T.set_data_type(onnx::TensorProto::FLOAT);
    T.add_float_data(1.0f);
  }
  addNode(M, "Div", {"ff1", "sqrt2"}, {"g_div"}, "g_div");
  addNode(M, "Erf", {"g_div"}, {"g_erf"}, "g_erf");
  addNode(M, "Add", {"g_erf", "one"}, {"g_add"}, "g_add");
  addNode(M, "Mul", {"ff1", "g_add"}, {"g_mul"}, "g_mul");
  addNode(M, "Mul", {"g_mul", "half"}, {"gelu"}, "g_half");
  addDense(M, "gelu", "ff2", F, H);
  addNode(M, "Add", {"ff2", "h1"}, {"res2"}, "res2");
  addLayerNorm(M, "res2", "ln2", "y");
  addOutput(M, "y");
  return M;
}

onnx::ModelProto contribBertLayer() {
  onnx::ModelProto M = contribModel();
  addInput(M, "x", {1, S, H});
  addInput(M, "mask", {1, S}, I32); // ONNX Runtime's raw 0/1 mask.
  addWeight(M, "qkv_w", {H, 3 * H});
  addWeight(M, "qkv_b", {3 * H});
  addIntAttr(addContrib(M, "Attention", {"x", "qkv_w", "qkv_b", "mask"},
                        {"ctx"}, "attn"),
             "num_heads", Heads);
  // The output projection as FusedMatMul with its weight stored transposed.
  addWeight(M, "o_w", {H, H});
  addWeight(M, "o_b", {H});
  addIntAttr(addContrib(M, "FusedMatMul", {"ctx", "o_w"}, {"o"}, "o_mm"),
             "transB", 1);
  addWeight(M, "ln1_g", {H});
  addWeight(M, "ln1_b", {H});
  addContrib(M, "SkipLayerNormalization", {"o", "x", "ln1_g", "ln1_b", "o_b"},
             {"h1"}, "ln1");
  addWeight(M, "ff1_w", {H, F});
  addWeight(M, "ff1_b", {F});
  addNode(M, "MatMul", {"h1", "ff1_w"}, {"ff1"}, "ff1_mm");
  addContrib(M, "BiasGelu", {"ff1", "ff1_b"}, {"gelu"}, "gelu");
  addWeight(M, "ff2_w", {F, H});
  addWeight(M, "ff2_b", {H});
  addNode(M, "MatMul", {"gelu", "ff2_w"}, {"ff2"}, "ff2_mm");
  addWeight(M, "ln2_g", {H});
  addWeight(M, "ln2_b", {H});
  addContrib(M, "SkipLayerNormalization",
             {"ff2", "h1", "ln2_g", "ln2_b", "ff2_b"}, {"y"}, "ln2");
  addOutput(M, "y");
  return M;
}

} // namespace

TEST_CASE("a BERT layer costs the same with ONNX Runtime's fused ops") {
  frontend::ImportedModel Std = importOk(standardBertLayer());
  frontend::ImportedModel Fused = importOk(contribBertLayer());
  CHECK(shapeOf(Fused, "y") == ir::Shape({1, S, H}));
  const GraphWork WS = computeWork(Std.Graph, defaultOpRegistry());
  const GraphWork WF = computeWork(Fused.Graph, defaultOpRegistry());
  CHECK(WF.Warnings.empty());
  // The same weights, merged (Q, K and V in one matrix) or not.
  CHECK(WS.Total.Params == WF.Total.Params);
  CHECK(WF.Total.Params == 4 * (H * H + H) + 2 * H * F + F + H + 4 * H);
  MESSAGE("standard layer: " << WS.Total.Flops << " flops, " << WS.Total.bytes()
                             << " bytes; fused: " << WF.Total.Flops
                             << " flops, " << WF.Total.bytes() << " bytes");
  // The fused ops are costed as the ops they replace: the same MACs, and
  // the same flops (the scale, mask and softmax per score, bias and
  // residual adds, LayerNormalization, erf GELU) to the last one.
  CHECK(WF.Total.Macs == WS.Total.Macs);
  CHECK(WF.Total.Flops == doctest::Approx(WS.Total.Flops).epsilon(0.01));
  CHECK(WF.Total.Flops == WS.Total.Flops);
  // Fewer bytes: fused ops write no intermediates (scores, Q/K/V heads,
  // GELU's steps).
  CHECK(WF.Total.bytes() < WS.Total.bytes());
  // Training: backward counts the fused ops as it counts the ops they
  // replace (GEMM-like ones 2x their products, the others by class).
  const TrainingAnalysis TS(Std.Graph), TF(Fused.Graph);
  MESSAGE("forward + backward flops: standard "
          << TS.FlopsPerMicroBatch << ", fused " << TF.FlopsPerMicroBatch);
  CHECK(TF.FlopsPerMicroBatch ==
        doctest::Approx(TS.FlopsPerMicroBatch).epsilon(0.02));
}

TEST_CASE("a known contrib op in a model that does not import its domain") {
  onnx::ModelProto M = makeModel(17);
  addInput(M, "x", {2, 16, 64});
  addContrib(M, "Gelu", {"x"}, {"y"}, "gelu");
  addOutput(M, "y");
  const std::string Msg = importError(M);
  CHECK(contains(Msg, "node 'gelu' (Gelu)"));
  CHECK(contains(Msg, "opset_import entry for domain \"com.microsoft\""));
}
