//===- LayerBuilder.cpp - Transformer layers as ONNX nodes ----------------===//
#include "tools/modelgen/LayerBuilder.h"

#include <cmath>
#include <vector>

using namespace perfc::modelgen;
using namespace perfc::modelgen::detail;

using TP = onnx::TensorProto;

LayerBuilder::LayerBuilder(const TransformerSpec &S, GraphBuilder &B)
    : S(S), B(B), H(S.Hidden), A(S.Heads), K(S.KvHeads), D(headDim(S)),
      F(S.Ffn), Seq(S.Seq), R(isMla(S) ? S.QkRopeHeadDim : D), Past(S.Past) {}

void LayerBuilder::causalMask(const std::string &Pos) {
  // One new token after the cache is the last position: it sees every key,
  // so Hugging Face's decoders (without padding) add no mask; neither do we.
  if (Past > 0 && Seq == 1)
    return;
  // The keys are the cached positions and the new ones, 0..P+S-1.
  std::string Keys = Pos;
  if (Past > 0)
    Keys = B.node("Range", "/mask/Range",
                  {B.intScalar(0), B.intScalar(Past + Seq), B.intScalar(1)});
  onnx::NodeProto &Q =
      B.add("Unsqueeze", "/mask/Unsqueeze", {Pos, B.ints({1})});
  onnx::NodeProto &Kp =
      B.add("Unsqueeze", "/mask/Unsqueeze_1", {Keys, B.ints({0})});
  std::string Future =
      B.node("Greater", "/mask/Greater", {Kp.output(0), Q.output(0)});
  Mask = B.node("Where", "/mask/Where", {Future, B.lowest(), B.scalar(0.0)});
}

/// inv_freq[j] = theta^(-2j/d), angle = pos * inv_freq, duplicated for both
/// halves.
void LayerBuilder::rotary(const std::string &Pos) {
  const double Theta = 10000.0;
  std::string PosF = cast(Pos, TP::FLOAT, "/rotary/Cast");
  std::string J = B.node("Range", "/rotary/Range",
                         {B.intScalar(0), B.intScalar(R / 2), B.intScalar(1)});
  std::string JF = cast(J, TP::FLOAT, "/rotary/Cast_1");
  std::string E =
      B.node("Mul", "/rotary/Mul",
             {JF, B.scalar(-2.0 * std::log(Theta) / static_cast<double>(R),
                           /*Fp32=*/true)});
  std::string InvFreq = B.node("Exp", "/rotary/Exp", {E});
  std::string P2 =
      B.node("Unsqueeze", "/rotary/Unsqueeze", {PosF, B.ints({1})});
  std::string Angles = B.node("Mul", "/rotary/Mul_1", {P2, InvFreq});
  const std::string Both = concatLast({Angles, Angles}, "/rotary/Concat");
  Cos = B.node("Cos", "/rotary/Cos", {Both});
  Sin = B.node("Sin", "/rotary/Sin", {Both});
  if (B.type() != FloatType::F32) {
    Cos = cast(Cos, onnxType(B.type()), "/rotary/Cast_2");
    Sin = cast(Sin, onnxType(B.type()), "/rotary/Cast_3");
  }
}

std::string LayerBuilder::cast(const std::string &X, int64_t To,
                               const std::string &Name) {
  onnx::NodeProto &N = B.add("Cast", Name, {X});
  GraphBuilder::attr(N, "to", To);
  return N.output(0);
}

std::string LayerBuilder::layerNorm(const std::string &X, const std::string &P,
                                    const std::string &W) {
  onnx::NodeProto &N =
      B.add("LayerNormalization", P + "/LayerNormalization",
            {X, B.weight(W + "weight", {H}), B.weight(W + "bias", {H})});
  GraphBuilder::attr(N, "axis", int64_t(-1));
  GraphBuilder::attr(N, "epsilon", S.Fam == Family::Bert ? 1e-12f : 1e-5f);
  return N.output(0);
}

std::string LayerBuilder::rmsNorm(const std::string &X, const std::string &P,
                                  const std::string &W, int64_t Width) {
  std::string Sq = B.node("Pow", P + "/Pow", {X, B.scalar(2.0)});
  onnx::NodeProto &M = B.add("ReduceMean", P + "/ReduceMean", {Sq});
  GraphBuilder::attr(M, "axes", llvm::ArrayRef<int64_t>{-1});
  GraphBuilder::attr(M, "keepdims", int64_t(1));
  std::string V = B.node("Add", P + "/Add", {M.output(0), B.scalar(1e-5)});
  std::string R = B.node("Sqrt", P + "/Sqrt", {V});
  R = B.node("Reciprocal", P + "/Reciprocal", {R});
  std::string Y = B.node("Mul", P + "/Mul", {X, R});
  return B.node("Mul", P + "/Mul_1",
                {Y, B.weight(W + "weight", {Width > 0 ? Width : H})});
}

std::string LayerBuilder::norm(const std::string &X, const std::string &P,
                               const std::string &W) {
  return S.Fam == Family::Llama ? rmsNorm(X, P, W) : layerNorm(X, P, W);
}

std::string LayerBuilder::linear(const std::string &X, const std::string &P,
                                 const std::string &W, int64_t In, int64_t Out,
                                 int64_t Experts, int64_t Active) {
  const std::vector<int64_t> Dims = Experts > 0
                                        ? std::vector<int64_t>{Experts, In, Out}
                                        : std::vector<int64_t>{In, Out};
  const std::vector<int64_t> BiasDims =
      Experts > 0 ? std::vector<int64_t>{Experts, 1, Out}
                  : std::vector<int64_t>{Out};
  // The experts the step reaches: the first Active of the stack.
  const auto Reached = [&](const std::string &Stack, const std::string &Name) {
    if (Active <= 0 || Active >= Experts)
      return Stack;
    return B.node("Slice", Name,
                  {Stack, B.ints({0}), B.ints({Active}), B.ints({0})});
  };
  std::string Y =
      B.node("MatMul", P + "/MatMul",
             {X, Reached(B.weight(W + "weight", Dims), P + "/Slice")});
  if (S.Fam == Family::Llama)
    return Y;
  return B.node("Add", P + "/Add",
                {Reached(B.weight(W + "bias", BiasDims), P + "/Slice_1"), Y});
}

/// [b, S, N*d] -> [b, N, S, d] (Perm {0, 2, 1, 3}) or [b, N, d, S]
/// ({0, 2, 3, 1}).
std::string LayerBuilder::splitHeads(const std::string &X, const std::string &P,
                                     int64_t N, llvm::ArrayRef<int64_t> Perm,
                                     int64_t Dim) {
  std::string Y = B.node("Reshape", P + "/Reshape",
                         {X, B.ints({0, Seq, N, Dim > 0 ? Dim : D})});
  onnx::NodeProto &T = B.add("Transpose", P + "/Transpose", {Y});
  GraphBuilder::attr(T, "perm", Perm);
  return T.output(0);
}

/// x*cos + rotate_half(x)*sin on [b, N, S, d].
std::string LayerBuilder::rope(const std::string &X, const std::string &P) {
  std::string XC = B.node("Mul", P + "/Mul", {X, Cos});
  std::string Axes = B.ints({-1});
  std::string X1 =
      B.node("Slice", P + "/Slice", {X, B.ints({0}), B.ints({R / 2}), Axes});
  std::string X2 =
      B.node("Slice", P + "/Slice_1", {X, B.ints({R / 2}), B.ints({R}), Axes});
  std::string N = B.node("Neg", P + "/Neg", {X2});
  std::string RS =
      B.node("Mul", P + "/Mul_1", {concatLast({N, X1}, P + "/Concat"), Sin});
  return B.node("Add", P + "/Add", {XC, RS});
}

/// [b, K, T, d] -> [b, A, T, d] (T = P+S keys), head h reading kv head
/// h / (A/K).
std::string LayerBuilder::expandKv(const std::string &X, const std::string &P) {
  std::string U = B.node("Unsqueeze", P + "/Unsqueeze", {X, B.ints({2})});
  std::string E =
      B.node("Expand", P + "/Expand", {U, B.ints({1, 1, A / K, 1, 1})});
  return B.node("Reshape", P + "/Reshape", {E, B.ints({0, A, Past + Seq, D})});
}

/// past.{I}.{What} [b, n, P, d] then the new X [b, n, S, d]: the cache of
/// the next step, the graph output present.{I}.{What}.
std::string LayerBuilder::appendCache(const std::string &X,
                                      const std::string &P, int64_t I,
                                      llvm::StringRef What) {
  onnx::NodeProto &C =
      B.add("Concat", P + "/Concat", {cacheName("past", I, What), X});
  GraphBuilder::attr(C, "axis", int64_t(2));
  // Named as the graph output right away: nothing reads it yet, where
  // GraphBuilder::rename would scan the whole graph once per layer.
  C.set_output(0, cacheName("present", I, What));
  return C.output(0);
}

/// Keys Kx and values V of K heads, [b, K, S, d], as attention reads them:
/// appended to their caches, expanded to the A query heads, the keys
/// transposed. Returns K^T [b, A, d, P+S]; V becomes [b, A, P+S, d].
std::string LayerBuilder::keysTransposed(std::string Kx, std::string &V,
                                         const std::string &P, int64_t I) {
  if (Past > 0) {
    Kx = appendCache(Kx, P + "/k_cache", I, "key");
    V = appendCache(V, P + "/v_cache", I, "value");
  }
  if (K != A) {
    Kx = expandKv(Kx, P + "/kv_expand/k");
    V = expandKv(V, P + "/kv_expand/v");
  }
  onnx::NodeProto &T = B.add("Transpose", P + "/k_t/Transpose", {Kx});
  GraphBuilder::attr(T, "perm", llvm::ArrayRef<int64_t>{0, 1, 3, 2});
  return T.output(0);
}

std::string LayerBuilder::attention(const std::string &X, const std::string &L,
                                    const std::string &W, int64_t I) {
  if (isMla(S))
    return latentAttention(X, L, W, I);
  const std::string P = L + "/attn";
  std::string Q, Kt, V;
  if (S.Fam == Family::Llama) {
    Q = linear(X, P + "/q", W + "attn.q.", H, H);
    std::string Kx = linear(X, P + "/k", W + "attn.k.", H, K * D);
    V = linear(X, P + "/v", W + "attn.v.", H, K * D);
    Q = rope(splitHeads(Q, P + "/q_heads", A, {0, 2, 1, 3}), P + "/rope_q");
    Kx = rope(splitHeads(Kx, P + "/k_heads", K, {0, 2, 1, 3}), P + "/rope_k");
    V = splitHeads(V, P + "/v_heads", K, {0, 2, 1, 3});
    Kt = keysTransposed(Kx, V, P, I);
  } else if (K != A) {
    // Grouped-query or multi-query attention in a GPT layer (Falcon,
    // StarCoder): one packed projection of q and K key/value heads; the
    // keys and values, appended to their cache, are expanded to the A
    // query heads.
    std::string QKV = linear(X, P + "/qkv", W + "attn.qkv.", H, H + 2 * K * D);
    onnx::NodeProto &Sp = splitLast(QKV, P + "/Split", {H, K * D, K * D});
    Q = splitHeads(Sp.output(0), P + "/q_heads", A, {0, 2, 1, 3});
    std::string Kx = splitHeads(Sp.output(1), P + "/k_heads", K, {0, 2, 1, 3});
    V = splitHeads(Sp.output(2), P + "/v_heads", K, {0, 2, 1, 3});
    Kt = keysTransposed(Kx, V, P, I);
  } else {
    std::string QKV = linear(X, P + "/qkv", W + "attn.qkv.", H, 3 * H);
    onnx::NodeProto &Sp = splitLast(QKV, P + "/Split", {H, H, H});
    Q = splitHeads(Sp.output(0), P + "/q_heads", A, {0, 2, 1, 3});
    if (Past == 0) {
      Kt = splitHeads(Sp.output(1), P + "/k_heads", A, {0, 2, 3, 1});
      V = splitHeads(Sp.output(2), P + "/v_heads", A, {0, 2, 1, 3});
    } else {
      // The cache holds k as [b, A, P, d], as Hugging Face's GPT-2 does:
      // append to it, then transpose all P+S keys.
      std::string Kx =
          appendCache(splitHeads(Sp.output(1), P + "/k_heads", A, {0, 2, 1, 3}),
                      P + "/k_cache", I, "key");
      V = appendCache(splitHeads(Sp.output(2), P + "/v_heads", A, {0, 2, 1, 3}),
                      P + "/v_cache", I, "value");
      onnx::NodeProto &T = B.add("Transpose", P + "/k_t/Transpose", {Kx});
      GraphBuilder::attr(T, "perm", llvm::ArrayRef<int64_t>{0, 1, 3, 2});
      Kt = T.output(0);
    }
  }
  return project(
      attend(Q, Kt, V, P, W, 1.0 / std::sqrt(static_cast<double>(D))), P, W, D);
}

std::string LayerBuilder::attend(const std::string &Q, const std::string &Kt,
                                 const std::string &V, const std::string &P,
                                 const std::string &W, double Scale) {
  std::string Scores = B.node("MatMul", P + "/qk/MatMul", {Q, Kt});
  Scores = B.node("Mul", P + "/scale/Mul", {Scores, B.scalar(Scale)});
  if (!Mask.empty())
    Scores = B.node("Add", P + "/mask/Add", {Scores, Mask});
  onnx::NodeProto &Sm = B.add("Softmax", P + "/Softmax", {Scores});
  GraphBuilder::attr(Sm, "axis", int64_t(-1));
  std::string Probs = dropout(Sm.output(0), P + "/dropout/Dropout");
  return B.node("MatMul", P + "/pv/MatMul", {Probs, V});
}

std::string LayerBuilder::project(const std::string &O, const std::string &P,
                                  const std::string &W, int64_t Width) {
  onnx::NodeProto &T = B.add("Transpose", P + "/merge/Transpose", {O});
  GraphBuilder::attr(T, "perm", llvm::ArrayRef<int64_t>{0, 2, 1, 3});
  std::string Merged = B.node("Reshape", P + "/merge/Reshape",
                              {T.output(0), B.ints({0, Seq, A * Width})});
  return dropout(linear(Merged, P + "/out", W + "attn.out.", A * Width, H),
                 P + "/out/Dropout");
}

onnx::NodeProto &LayerBuilder::splitLast(const std::string &X,
                                         const std::string &P,
                                         llvm::ArrayRef<int64_t> Sizes) {
  onnx::NodeProto &Sp = B.add("Split", P, {X, B.ints(Sizes)}, Sizes.size());
  GraphBuilder::attr(Sp, "axis", int64_t(-1));
  return Sp;
}

std::string LayerBuilder::concatLast(llvm::ArrayRef<std::string> Xs,
                                     const std::string &P) {
  onnx::NodeProto &C = B.add("Concat", P, Xs);
  GraphBuilder::attr(C, "axis", int64_t(-1));
  return C.output(0);
}

std::string LayerBuilder::perHead(const std::string &Weight,
                                  const std::string &P, int64_t In, int64_t N,
                                  int64_t Out, llvm::ArrayRef<int64_t> Perm) {
  std::string Y =
      B.node("Reshape", P + "/Reshape", {Weight, B.ints({In, N, Out})});
  onnx::NodeProto &T = B.add("Transpose", P + "/Transpose", {Y});
  GraphBuilder::attr(T, "perm", Perm);
  return T.output(0);
}

std::string LayerBuilder::latentAttention(const std::string &X,
                                          const std::string &L,
                                          const std::string &W, int64_t I) {
  const std::string P = L + "/attn";
  const int64_t C = S.KvLoraRank, Dn = S.QkNopeHeadDim, Dv = S.VHeadDim;
  const int64_t Dq = Dn + R;
  // Queries [b, A, S, dn + r], through a latent of their own where the
  // model has one; rotary positions on their last r channels.
  std::string Q;
  if (S.QLoraRank > 0) {
    Q = linear(X, P + "/q_a", W + "attn.q_a.", H, S.QLoraRank);
    Q = rmsNorm(Q, P + "/q_norm", W + "attn.q_norm.", S.QLoraRank);
    Q = linear(Q, P + "/q_b", W + "attn.q_b.", S.QLoraRank, A * Dq);
  } else {
    Q = linear(X, P + "/q", W + "attn.q.", H, A * Dq);
  }
  Q = splitHeads(Q, P + "/q_heads", A, {0, 2, 1, 3}, Dq);
  onnx::NodeProto &QSplit = splitLast(Q, P + "/q_split/Split", {Dn, R});
  const std::string QNope = QSplit.output(0);
  const std::string QPe = rope(QSplit.output(1), P + "/rope_q");
  // The latent [b, S, c] and the rotary key [b, 1, S, r] every head shares.
  std::string KvA = linear(X, P + "/kv_a", W + "attn.kv_a.", H, C + R);
  onnx::NodeProto &KvSplit = splitLast(KvA, P + "/kv_a/Split", {C, R});
  const std::string Latent =
      rmsNorm(KvSplit.output(0), P + "/kv_norm", W + "attn.kv_norm.", C);
  const std::string KPe =
      rope(splitHeads(KvSplit.output(1), P + "/k_pe", 1, {0, 2, 1, 3}, R),
           P + "/rope_k");
  const double Scale = 1.0 / std::sqrt(static_cast<double>(Dq));
  if (Past == 0) {
    // Every head's keys and values from the latent.
    std::string KNope =
        splitHeads(linear(Latent, P + "/k_b", W + "attn.k_b.", C, A * Dn),
                   P + "/k_heads", A, {0, 2, 1, 3}, Dn);
    std::string V =
        splitHeads(linear(Latent, P + "/v_b", W + "attn.v_b.", C, A * Dv),
                   P + "/v_heads", A, {0, 2, 1, 3}, Dv);
    std::string KPeAll =
        B.node("Expand", P + "/k_pe/Expand", {KPe, B.ints({1, A, 1, 1})});
    std::string Keys = concatLast({KNope, KPeAll}, P + "/k_cat/Concat");
    onnx::NodeProto &Kt = B.add("Transpose", P + "/k_t/Transpose", {Keys});
    GraphBuilder::attr(Kt, "perm", llvm::ArrayRef<int64_t>{0, 1, 3, 2});
    return project(attend(concatLast({QNope, QPe}, P + "/q_cat/Concat"),
                          Kt.output(0), V, P, W, Scale),
                   P, W, Dv);
  }
  // Decoding on the cached latent: k_b absorbed into the queries, v_b into
  // the output.
  std::string QLatent =
      B.node("MatMul", P + "/uk/MatMul",
             {QNope, perHead(B.weight(W + "attn.k_b.weight", {C, A * Dn}),
                             P + "/uk", C, A, Dn, {1, 2, 0})});
  std::string Query = concatLast({QLatent, QPe}, P + "/q_cat/Concat");
  std::string Entry =
      B.node("Unsqueeze", P + "/latent/Unsqueeze", {Latent, B.ints({1})});
  Entry = concatLast({Entry, KPe}, P + "/latent/Concat");
  std::string Cache = appendCache(Entry, P + "/latent_cache", I, "latent");
  onnx::NodeProto &Kt = B.add("Transpose", P + "/k_t/Transpose", {Cache});
  GraphBuilder::attr(Kt, "perm", llvm::ArrayRef<int64_t>{0, 1, 3, 2});
  std::string Values = B.node("Slice", P + "/latent_v/Slice",
                              {Cache, B.ints({0}), B.ints({C}), B.ints({-1})});
  std::string OLatent = attend(Query, Kt.output(0), Values, P, W, Scale);
  std::string O =
      B.node("MatMul", P + "/uv/MatMul",
             {OLatent, perHead(B.weight(W + "attn.v_b.weight", {C, A * Dv}),
                               P + "/uv", C, A, Dv, {1, 0, 2})});
  return project(O, P, W, Dv);
}

/// Dropout in training mode (ratio S.Dropout) when the spec asks for it.
std::string LayerBuilder::dropout(const std::string &X,
                                  const std::string &Name) {
  if (S.Dropout <= 0)
    return X;
  const std::string TrainingMode = B.boolTrue();
  return B.node("Dropout", Name,
                {X, B.scalar(S.Dropout, /*Fp32=*/true), TrainingMode});
}

std::string LayerBuilder::gelu(const std::string &X, const std::string &P) {
  if (S.Fam == Family::Bert) { // 0.5 * x * (1 + erf(x / sqrt(2)))
    std::string Y = B.node("Div", P + "/Div", {X, B.scalar(std::sqrt(2.0))});
    Y = B.node("Erf", P + "/Erf", {Y});
    Y = B.node("Add", P + "/Add", {Y, B.scalar(1.0)});
    Y = B.node("Mul", P + "/Mul", {X, Y});
    return B.node("Mul", P + "/Mul_1", {Y, B.scalar(0.5)});
  }
  // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
  std::string X3 = B.node("Mul", P + "/Mul", {X, X});
  X3 = B.node("Mul", P + "/Mul_1", {X3, X});
  std::string Y = B.node("Mul", P + "/Mul_2", {X3, B.scalar(0.044715)});
  Y = B.node("Add", P + "/Add", {X, Y});
  Y = B.node("Mul", P + "/Mul_3",
             {Y, B.scalar(std::sqrt(2.0 / 3.14159265358979323846))});
  Y = B.node("Tanh", P + "/Tanh", {Y});
  Y = B.node("Add", P + "/Add_1", {Y, B.scalar(1.0)});
  Y = B.node("Mul", P + "/Mul_4", {X, Y});
  return B.node("Mul", P + "/Mul_5", {Y, B.scalar(0.5)});
}

std::string LayerBuilder::mlp(const std::string &X, const std::string &P,
                              const std::string &W, int64_t Width,
                              int64_t Experts, int64_t Active, bool Drop) {
  const auto Out = [&](const std::string &Y, const std::string &Name) {
    return Drop ? dropout(Y, Name) : Y;
  };
  if (S.Fam == Family::Llama) {
    std::string Gate =
        linear(X, P + "/gate", W + "gate.", H, Width, Experts, Active);
    std::string Sg = B.node("Sigmoid", P + "/silu/Sigmoid", {Gate});
    Gate = B.node("Mul", P + "/silu/Mul", {Gate, Sg});
    std::string Up = linear(X, P + "/up", W + "up.", H, Width, Experts, Active);
    std::string M = B.node("Mul", P + "/Mul", {Gate, Up});
    return Out(linear(M, P + "/down", W + "down.", Width, H, Experts, Active),
               P + "/down/Dropout");
  }
  std::string Y = linear(X, P + "/fc1", W + "fc1.", H, Width, Experts, Active);
  Y = gelu(Y, P + "/gelu");
  return Out(linear(Y, P + "/fc2", W + "fc2.", Width, H, Experts, Active),
             P + "/fc2/Dropout");
}

std::string LayerBuilder::moe(const std::string &X, const std::string &L,
                              const std::string &W) {
  const std::string P = L + "/moe";
  const int64_t E = S.Experts, Top = S.TopK;
  std::string Logits = B.node("MatMul", P + "/router/MatMul",
                              {X, B.weight(W + "moe.router.weight", {H, E})});
  onnx::NodeProto &Sm = B.add("Softmax", P + "/router/Softmax", {Logits});
  GraphBuilder::attr(Sm, "axis", int64_t(-1));
  onnx::NodeProto &TopK =
      B.add("TopK", P + "/router/TopK", {Sm.output(0), B.ints({Top})}, 2);
  GraphBuilder::attr(TopK, "axis", int64_t(-1));
  const std::string Weights = TopK.output(0);
  // Each token once per expert it goes to, grouped by expert: balanced
  // routing gives each of the A experts reached R rows (expertRouting).
  const ExpertRouting R = expertRouting(S);
  std::string Rows =
      B.node("Unsqueeze", P + "/dispatch/Unsqueeze", {X, B.ints({2})});
  if (Top > 1)
    Rows = B.node("Expand", P + "/dispatch/Expand",
                  {Rows, B.ints({1, 1, Top, 1})});
  if (R.Padding > 0) {
    Rows =
        B.node("Reshape", P + "/dispatch/Reshape_1", {Rows, B.ints({-1, H})});
    Rows = B.node("Pad", P + "/dispatch/Pad",
                  {Rows, B.ints({0, 0, R.Padding, 0})});
  }
  // A layout that only this batch has (some experts, or padding) is
  // spelled out, so that rebinding the batch (perfc --batch) fails here
  // instead of running other tokens on these experts.
  Rows = B.node("Reshape", P + "/dispatch/Reshape",
                {Rows, B.ints({R.Active, R.ForThisBatch ? R.Rows : -1, H})});
  // A mixture drops out after combining its experts, not inside them.
  std::string Y = mlp(Rows, P + "/experts", W + "moe.experts.", S.MoeFfn, E,
                      R.Active, /*Drop=*/false);
  if (R.Padding > 0) {
    Y = B.node("Reshape", P + "/combine/Reshape_1", {Y, B.ints({-1, H})});
    Y = B.node(
        "Slice", P + "/combine/Slice",
        {Y, B.ints({0}), B.ints({R.Active * R.Rows - R.Padding}), B.ints({0})});
  }
  Y = B.node("Reshape", P + "/combine/Reshape", {Y, B.ints({-1, Seq, Top, H})});
  std::string Wt =
      B.node("Unsqueeze", P + "/combine/Unsqueeze", {Weights, B.ints({3})});
  Y = B.node("Mul", P + "/combine/Mul", {Y, Wt});
  onnx::NodeProto &Sum =
      B.add("ReduceSum", P + "/combine/ReduceSum", {Y, B.ints({2})});
  GraphBuilder::attr(Sum, "keepdims", int64_t(0));
  std::string Combined = Sum.output(0);
  // Shared experts: every token, beside the routed ones.
  if (S.SharedFfn > 0)
    Combined = B.node("Add", P + "/shared/Add",
                      {Combined, mlp(X, P + "/shared", W + "moe.shared.",
                                     S.SharedFfn, 0, 0, /*Drop=*/false)});
  return dropout(Combined, P + "/Dropout");
}

std::string LayerBuilder::ffn(const std::string &X, const std::string &L,
                              const std::string &W, int64_t I) {
  return isMoeLayer(S, I) ? moe(X, L, W) : mlp(X, L + "/mlp", W + "mlp.", F);
}

std::string LayerBuilder::layer(const std::string &X, int64_t I) {
  const std::string L = "/layers." + std::to_string(I);
  const std::string W = "layers." + std::to_string(I) + ".";
  if (S.Fam == Family::Bert) { // post-LN
    std::string Y =
        B.node("Add", L + "/attn/residual/Add", {X, attention(X, L, W, I)});
    Y = layerNorm(Y, L + "/ln1", W + "ln1.");
    std::string Z =
        B.node("Add", L + "/mlp/residual/Add", {Y, ffn(Y, L, W, I)});
    return layerNorm(Z, L + "/ln2", W + "ln2.");
  }
  std::string Y =
      B.node("Add", L + "/attn/residual/Add",
             {X, attention(norm(X, L + "/ln1", W + "ln1."), L, W, I)});
  return B.node("Add", L + "/mlp/residual/Add",
                {Y, ffn(norm(Y, L + "/ln2", W + "ln2."), L, W, I)});
}
