//===- TransformerGen.cpp - Graph-only ONNX transformers of any size ------===//
#include "tools/modelgen/TransformerGen.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>

using namespace perfc;
using namespace perfc::modelgen;

namespace {

using TP = onnx::TensorProto;

constexpr int64_t OpsetVersion = 17;
constexpr int64_t IrVersion = 8;
/// Each of --hidden, --ffn, --seq, --vocab, --heads, --max-positions and
/// --batch: positions stay exact in float32 (rotary) and products of a few
/// of them stay far from int64 overflow.
constexpr int64_t MaxDim = int64_t(1) << 24;
/// Keeps the graph well under perfc's default --max-nodes (2,000,000).
constexpr int64_t MaxLayers = 10'000;

llvm::Error error(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

int32_t onnxType(FloatType T) {
  switch (T) {
  case FloatType::F32:
    return TP::FLOAT;
  case FloatType::F16:
    return TP::FLOAT16;
  case FloatType::BF16:
    return TP::BFLOAT16;
  }
  return TP::FLOAT;
}

uint64_t byteSize(FloatType T) { return T == FloatType::F32 ? 4 : 2; }

int64_t headDim(const TransformerSpec &S) { return S.Hidden / S.Heads; }

/// Builds the graph: nodes named as documented in the header, outputs named
/// "<node>_output_<k>", constants shared by value.
class Builder {
public:
  Builder(const TransformerSpec &Spec, onnx::GraphProto &G)
      : Spec(Spec), G(G), Type(Spec.Type) {}

  onnx::NodeProto &add(llvm::StringRef Op, const std::string &Name,
                       llvm::ArrayRef<std::string> Inputs,
                       unsigned NumOutputs = 1) {
    onnx::NodeProto &N = *G.add_node();
    N.set_op_type(Op.str());
    N.set_name(Name);
    for (const std::string &In : Inputs)
      N.add_input(In);
    for (unsigned I = 0; I < NumOutputs; ++I)
      N.add_output(Name + "_output_" + std::to_string(I));
    return N;
  }

  /// A one-output node; returns its output.
  std::string node(llvm::StringRef Op, const std::string &Name,
                   llvm::ArrayRef<std::string> Inputs) {
    return add(Op, Name, Inputs).output(0);
  }

  static void attr(onnx::NodeProto &N, llvm::StringRef Name, int64_t V) {
    onnx::AttributeProto &A = *N.add_attribute();
    A.set_name(Name.str());
    A.set_type(onnx::AttributeProto::INT);
    A.set_i(V);
  }
  static void attr(onnx::NodeProto &N, llvm::StringRef Name, float V) {
    onnx::AttributeProto &A = *N.add_attribute();
    A.set_name(Name.str());
    A.set_type(onnx::AttributeProto::FLOAT);
    A.set_f(V);
  }
  static void attr(onnx::NodeProto &N, llvm::StringRef Name,
                   llvm::ArrayRef<int64_t> Vs) {
    onnx::AttributeProto &A = *N.add_attribute();
    A.set_name(Name.str());
    A.set_type(onnx::AttributeProto::INTS);
    for (int64_t V : Vs)
      A.add_ints(V);
  }

  /// A weight: dims and type, data "stored" in the absent weights file.
  std::string weight(const std::string &Name, llvm::ArrayRef<int64_t> Dims) {
    TP &T = *G.add_initializer();
    T.set_name(Name);
    T.set_data_type(onnxType(Type));
    uint64_t Elements = 1;
    for (int64_t D : Dims) {
      T.add_dims(D);
      Elements *= static_cast<uint64_t>(D);
    }
    T.set_data_location(TP::EXTERNAL);
    auto External = [&](const char *Key, const std::string &Value) {
      onnx::StringStringEntryProto &E = *T.add_external_data();
      E.set_key(Key);
      E.set_value(Value);
    };
    External("location", Spec.WeightsFile);
    External("offset", "0");
    External("length", std::to_string(Elements * byteSize(Type)));
    Params += Elements;
    return Name;
  }

  /// An int64 constant with its data (a vector, or a scalar when Scalar).
  std::string ints(llvm::ArrayRef<int64_t> Values, bool Scalar = false) {
    std::string Name = Scalar ? "const.i64" : "const.i64x";
    for (int64_t V : Values)
      Name += "." + std::to_string(V);
    if (!Made.insert(Name).second)
      return Name;
    TP &T = *G.add_initializer();
    T.set_name(Name);
    T.set_data_type(TP::INT64);
    if (!Scalar)
      T.add_dims(static_cast<int64_t>(Values.size()));
    for (int64_t V : Values)
      T.add_int64_data(V);
    return Name;
  }
  std::string intScalar(int64_t V) { return ints({V}, /*Scalar=*/true); }

  /// A scalar of the model's floating-point type (FloatType::F32 for Fp32).
  std::string scalar(double V, bool Fp32 = false) {
    FloatType T = Fp32 ? FloatType::F32 : Type;
    llvm::APFloat F(V);
    bool LosesInfo = false;
    F.convert(T == FloatType::F32   ? llvm::APFloat::IEEEsingle()
              : T == FloatType::F16 ? llvm::APFloat::IEEEhalf()
                                    : llvm::APFloat::BFloat(),
              llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
    return floatScalar(F, T);
  }

  /// The most negative finite value of the model's type (the mask's
  /// "minus infinity", as torch's finfo.min).
  std::string lowest() {
    const llvm::fltSemantics &Sem =
        Type == FloatType::F32   ? llvm::APFloat::IEEEsingle()
        : Type == FloatType::F16 ? llvm::APFloat::IEEEhalf()
                                 : llvm::APFloat::BFloat();
    return floatScalar(llvm::APFloat::getLargest(Sem, /*Negative=*/true), Type);
  }

  uint64_t params() const { return Params; }
  FloatType type() const { return Type; }

private:
  std::string floatScalar(const llvm::APFloat &F, FloatType T) {
    uint64_t Bits = F.bitcastToAPInt().getZExtValue();
    std::string Name =
        "const." + name(T).str() + "." + llvm::utohexstr(Bits, true);
    if (!Made.insert(Name).second)
      return Name;
    TP &P = *G.add_initializer();
    P.set_name(Name);
    P.set_data_type(onnxType(T));
    unsigned Bytes = static_cast<unsigned>(byteSize(T));
    std::string Raw(Bytes, '\0');
    for (unsigned I = 0; I < Bytes; ++I) // little-endian, as ONNX stores
      Raw[I] = static_cast<char>((Bits >> (8 * I)) & 0xff);
    P.set_raw_data(Raw);
    return Name;
  }

  const TransformerSpec &Spec;
  onnx::GraphProto &G;
  FloatType Type;
  llvm::StringSet<> Made;
  uint64_t Params = 0;
};

/// Emits the layers of one family.
class TransformerWriter {
public:
  TransformerWriter(const TransformerSpec &S, onnx::GraphProto &G)
      : S(S), B(S, G), G(G), H(S.Hidden), A(S.Heads), K(S.KvHeads),
        D(headDim(S)), F(S.Ffn), Seq(S.Seq) {}

  void run() {
    const std::string Ids = "input_ids";
    Pos = B.node("Range", "/positions/Range",
                 {B.intScalar(0), B.intScalar(Seq), B.intScalar(1)});
    std::string X = embed(Ids);
    if (S.Fam != Family::Bert)
      Mask = causalMask();
    if (S.Fam == Family::Llama)
      rotary();
    for (int64_t I = 0; I < S.Layers; ++I)
      X = layer(X, "/layers." + std::to_string(I),
                "layers." + std::to_string(I) + ".");
    if (S.Fam == Family::Bert) {
      rename(X, "last_hidden_state");
      X = "last_hidden_state";
      onnx::NodeProto &G0 =
          B.add("Gather", "/pooler/Gather", {X, B.intScalar(0)});
      Builder::attr(G0, "axis", int64_t(1));
      std::string P =
          B.node("Gemm", "/pooler/Gemm",
                 {G0.output(0), B.weight("pooler.dense.weight", {H, H}),
                  B.weight("pooler.dense.bias", {H})});
      rename(B.node("Tanh", "/pooler/Tanh", {P}), "pooler_output");
      if (S.Head == BertHead::Pretraining) {
        // BertPreTrainingHeads (Devlin et al. 2019; NVIDIA's PyTorch BERT
        // scores every position, the loss ignores the unmasked ones).
        std::string Y = linear(X, "/mlm/dense", "mlm.dense.", H, H);
        Y = layerNorm(gelu(Y, "/mlm/gelu"), "/mlm/ln", "mlm.ln.");
        onnx::NodeProto &T =
            B.add("Transpose", "/mlm/decoder/Transpose", {TokEmbedding});
        Builder::attr(T, "perm", llvm::ArrayRef<int64_t>{1, 0});
        Y = B.node("MatMul", "/mlm/decoder/MatMul", {Y, T.output(0)});
        Y = B.node("Add", "/mlm/decoder/Add",
                   {B.weight("mlm.decoder.bias", {S.Vocab}), Y});
        onnx::NodeProto &L = B.add("LogSoftmax", "/mlm/LogSoftmax", {Y});
        Builder::attr(L, "axis", int64_t(-1));
        rename(L.output(0), "prediction_log_probs");
        rename(B.node("Gemm", "/nsp/Gemm",
                      {"pooler_output", B.weight("nsp.weight", {H, 2}),
                       B.weight("nsp.bias", {2})}),
               "seq_relationship_logits");
      } else if (S.Head == BertHead::Squad) {
        rename(linear(X, "/qa", "qa.", H, 2), "qa_logits");
      }
      return;
    }
    X = norm(X, "/final_norm", "final_norm.");
    std::string Head;
    if (*S.TiedEmbeddings) {
      onnx::NodeProto &T =
          B.add("Transpose", "/lm_head/Transpose", {TokEmbedding});
      Builder::attr(T, "perm", llvm::ArrayRef<int64_t>{1, 0});
      Head = T.output(0);
    } else {
      Head = B.weight("lm_head.weight", {H, S.Vocab});
    }
    rename(B.node("MatMul", "/lm_head/MatMul", {X, Head}), "logits");
  }

  uint64_t params() const { return B.params(); }

private:
  /// Renames a node output (and its uses) to a graph output's name.
  void rename(const std::string &From, const std::string &To) {
    for (onnx::NodeProto &N : *G.mutable_node()) {
      for (std::string &Out : *N.mutable_output())
        if (Out == From)
          Out = To;
      for (std::string &In : *N.mutable_input())
        if (In == From)
          In = To;
    }
  }

  std::string embed(const std::string &Ids) {
    TokEmbedding = B.weight("embed.tok.weight", {S.Vocab, H});
    std::string X = B.node("Gather", "/embed/tok/Gather", {TokEmbedding, Ids});
    if (S.Fam == Family::Llama)
      return X;
    std::string P =
        B.node("Gather", "/embed/pos/Gather",
               {B.weight("embed.pos.weight", {S.MaxPositions, H}), Pos});
    X = B.node("Add", "/embed/Add", {X, P});
    if (S.Fam == Family::Gpt)
      return X;
    // BERT: token type 0 everywhere, from a [2, H] table.
    std::string Shape = B.node("Shape", "/embed/type/Shape", {Ids});
    onnx::NodeProto &Zeros =
        B.add("ConstantOfShape", "/embed/type/ConstantOfShape", {Shape});
    onnx::AttributeProto &V = *Zeros.add_attribute();
    V.set_name("value");
    V.set_type(onnx::AttributeProto::TENSOR);
    V.mutable_t()->set_data_type(TP::INT64);
    V.mutable_t()->add_dims(1);
    V.mutable_t()->add_int64_data(0);
    std::string T =
        B.node("Gather", "/embed/type/Gather",
               {B.weight("embed.type.weight", {2, H}), Zeros.output(0)});
    X = B.node("Add", "/embed/Add_1", {X, T});
    return layerNorm(X, "/embed/ln", "embed.ln.");
  }

  /// [S, S]: 0 where key <= query, the type's lowest value elsewhere.
  std::string causalMask() {
    onnx::NodeProto &Q =
        B.add("Unsqueeze", "/mask/Unsqueeze", {Pos, B.ints({1})});
    onnx::NodeProto &Kp =
        B.add("Unsqueeze", "/mask/Unsqueeze_1", {Pos, B.ints({0})});
    std::string Future =
        B.node("Greater", "/mask/Greater", {Kp.output(0), Q.output(0)});
    return B.node("Where", "/mask/Where", {Future, B.lowest(), B.scalar(0.0)});
  }

  /// Llama's cos and sin tables [S, d], from scalars: inv_freq[j] =
  /// theta^(-2j/d), angle = pos * inv_freq, duplicated for both halves.
  void rotary() {
    const double Theta = 10000.0;
    std::string PosF = cast(Pos, TP::FLOAT, "/rotary/Cast");
    std::string J =
        B.node("Range", "/rotary/Range",
               {B.intScalar(0), B.intScalar(D / 2), B.intScalar(1)});
    std::string JF = cast(J, TP::FLOAT, "/rotary/Cast_1");
    std::string E =
        B.node("Mul", "/rotary/Mul",
               {JF, B.scalar(-2.0 * std::log(Theta) / static_cast<double>(D),
                             /*Fp32=*/true)});
    std::string InvFreq = B.node("Exp", "/rotary/Exp", {E});
    std::string P2 =
        B.node("Unsqueeze", "/rotary/Unsqueeze", {PosF, B.ints({1})});
    std::string Angles = B.node("Mul", "/rotary/Mul_1", {P2, InvFreq});
    onnx::NodeProto &C = B.add("Concat", "/rotary/Concat", {Angles, Angles});
    Builder::attr(C, "axis", int64_t(-1));
    Cos = B.node("Cos", "/rotary/Cos", {C.output(0)});
    Sin = B.node("Sin", "/rotary/Sin", {C.output(0)});
    if (B.type() != FloatType::F32) {
      Cos = cast(Cos, onnxType(B.type()), "/rotary/Cast_2");
      Sin = cast(Sin, onnxType(B.type()), "/rotary/Cast_3");
    }
  }

  std::string cast(const std::string &X, int64_t To, const std::string &Name) {
    onnx::NodeProto &N = B.add("Cast", Name, {X});
    Builder::attr(N, "to", To);
    return N.output(0);
  }

  std::string layerNorm(const std::string &X, const std::string &P,
                        const std::string &W) {
    onnx::NodeProto &N =
        B.add("LayerNormalization", P + "/LayerNormalization",
              {X, B.weight(W + "weight", {H}), B.weight(W + "bias", {H})});
    Builder::attr(N, "axis", int64_t(-1));
    Builder::attr(N, "epsilon", S.Fam == Family::Bert ? 1e-12f : 1e-5f);
    return N.output(0);
  }

  std::string rmsNorm(const std::string &X, const std::string &P,
                      const std::string &W) {
    std::string Sq = B.node("Pow", P + "/Pow", {X, B.scalar(2.0)});
    onnx::NodeProto &M = B.add("ReduceMean", P + "/ReduceMean", {Sq});
    Builder::attr(M, "axes", llvm::ArrayRef<int64_t>{-1});
    Builder::attr(M, "keepdims", int64_t(1));
    std::string V = B.node("Add", P + "/Add", {M.output(0), B.scalar(1e-5)});
    std::string R = B.node("Sqrt", P + "/Sqrt", {V});
    R = B.node("Reciprocal", P + "/Reciprocal", {R});
    std::string Y = B.node("Mul", P + "/Mul", {X, R});
    return B.node("Mul", P + "/Mul_1", {Y, B.weight(W + "weight", {H})});
  }

  std::string norm(const std::string &X, const std::string &P,
                   const std::string &W) {
    return S.Fam == Family::Llama ? rmsNorm(X, P, W) : layerNorm(X, P, W);
  }

  /// X @ W (+ bias for gpt and bert), named P/MatMul and P/Add.
  std::string linear(const std::string &X, const std::string &P,
                     const std::string &W, int64_t In, int64_t Out) {
    std::string Y =
        B.node("MatMul", P + "/MatMul", {X, B.weight(W + "weight", {In, Out})});
    if (S.Fam == Family::Llama)
      return Y;
    return B.node("Add", P + "/Add", {B.weight(W + "bias", {Out}), Y});
  }

  /// [b, S, N*d] -> [b, N, S, d] (Perm {0, 2, 1, 3}) or [b, N, d, S]
  /// ({0, 2, 3, 1}).
  std::string splitHeads(const std::string &X, const std::string &P, int64_t N,
                         llvm::ArrayRef<int64_t> Perm) {
    std::string R =
        B.node("Reshape", P + "/Reshape", {X, B.ints({0, Seq, N, D})});
    onnx::NodeProto &T = B.add("Transpose", P + "/Transpose", {R});
    Builder::attr(T, "perm", Perm);
    return T.output(0);
  }

  /// x*cos + rotate_half(x)*sin on [b, N, S, d].
  std::string rope(const std::string &X, const std::string &P) {
    std::string XC = B.node("Mul", P + "/Mul", {X, Cos});
    std::string Axes = B.ints({-1});
    std::string X1 =
        B.node("Slice", P + "/Slice", {X, B.ints({0}), B.ints({D / 2}), Axes});
    std::string X2 = B.node("Slice", P + "/Slice_1",
                            {X, B.ints({D / 2}), B.ints({D}), Axes});
    std::string N = B.node("Neg", P + "/Neg", {X2});
    onnx::NodeProto &C = B.add("Concat", P + "/Concat", {N, X1});
    Builder::attr(C, "axis", int64_t(-1));
    std::string RS = B.node("Mul", P + "/Mul_1", {C.output(0), Sin});
    return B.node("Add", P + "/Add", {XC, RS});
  }

  /// [b, K, S, d] -> [b, A, S, d], head h reading kv head h / (A/K).
  std::string expandKv(const std::string &X, const std::string &P) {
    std::string U = B.node("Unsqueeze", P + "/Unsqueeze", {X, B.ints({2})});
    std::string E =
        B.node("Expand", P + "/Expand", {U, B.ints({1, 1, A / K, 1, 1})});
    return B.node("Reshape", P + "/Reshape", {E, B.ints({0, A, Seq, D})});
  }

  std::string attention(const std::string &X, const std::string &L,
                        const std::string &W) {
    const std::string P = L + "/attn";
    std::string Q, Kt, V;
    if (S.Fam == Family::Llama) {
      Q = linear(X, P + "/q", W + "attn.q.", H, H);
      std::string Kx = linear(X, P + "/k", W + "attn.k.", H, K * D);
      V = linear(X, P + "/v", W + "attn.v.", H, K * D);
      Q = rope(splitHeads(Q, P + "/q_heads", A, {0, 2, 1, 3}), P + "/rope_q");
      Kx = rope(splitHeads(Kx, P + "/k_heads", K, {0, 2, 1, 3}), P + "/rope_k");
      V = splitHeads(V, P + "/v_heads", K, {0, 2, 1, 3});
      if (K != A) {
        Kx = expandKv(Kx, P + "/kv_expand/k");
        V = expandKv(V, P + "/kv_expand/v");
      }
      onnx::NodeProto &T = B.add("Transpose", P + "/k_t/Transpose", {Kx});
      Builder::attr(T, "perm", llvm::ArrayRef<int64_t>{0, 1, 3, 2});
      Kt = T.output(0);
    } else {
      std::string QKV = linear(X, P + "/qkv", W + "attn.qkv.", H, 3 * H);
      onnx::NodeProto &Sp =
          B.add("Split", P + "/Split", {QKV, B.ints({H, H, H})}, 3);
      Builder::attr(Sp, "axis", int64_t(-1));
      Q = splitHeads(Sp.output(0), P + "/q_heads", A, {0, 2, 1, 3});
      Kt = splitHeads(Sp.output(1), P + "/k_heads", A, {0, 2, 3, 1});
      V = splitHeads(Sp.output(2), P + "/v_heads", A, {0, 2, 1, 3});
    }
    std::string Scores = B.node("MatMul", P + "/qk/MatMul", {Q, Kt});
    Scores =
        B.node("Mul", P + "/scale/Mul",
               {Scores, B.scalar(1.0 / std::sqrt(static_cast<double>(D)))});
    if (!Mask.empty())
      Scores = B.node("Add", P + "/mask/Add", {Scores, Mask});
    onnx::NodeProto &Sm = B.add("Softmax", P + "/Softmax", {Scores});
    Builder::attr(Sm, "axis", int64_t(-1));
    std::string Probs = dropout(Sm.output(0), P + "/dropout/Dropout");
    std::string O = B.node("MatMul", P + "/pv/MatMul", {Probs, V});
    onnx::NodeProto &T = B.add("Transpose", P + "/merge/Transpose", {O});
    Builder::attr(T, "perm", llvm::ArrayRef<int64_t>{0, 2, 1, 3});
    O = B.node("Reshape", P + "/merge/Reshape",
               {T.output(0), B.ints({0, Seq, H})});
    return dropout(linear(O, P + "/out", W + "attn.out.", H, H),
                   P + "/out/Dropout");
  }

  /// Dropout in training mode (ratio S.Dropout) when the spec asks for it.
  std::string dropout(const std::string &X, const std::string &Name) {
    if (S.Dropout <= 0)
      return X;
    if (TrainingMode.empty()) {
      TrainingMode = "const.bool.true";
      TP &T = *G.add_initializer();
      T.set_name(TrainingMode);
      T.set_data_type(TP::BOOL);
      T.add_int32_data(1);
    }
    return B.node("Dropout", Name,
                  {X, B.scalar(S.Dropout, /*Fp32=*/true), TrainingMode});
  }

  std::string gelu(const std::string &X, const std::string &P) {
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

  std::string mlp(const std::string &X, const std::string &L,
                  const std::string &W) {
    const std::string P = L + "/mlp";
    if (S.Fam == Family::Llama) {
      std::string Gate = linear(X, P + "/gate", W + "mlp.gate.", H, F);
      std::string Sg = B.node("Sigmoid", P + "/silu/Sigmoid", {Gate});
      Gate = B.node("Mul", P + "/silu/Mul", {Gate, Sg});
      std::string Up = linear(X, P + "/up", W + "mlp.up.", H, F);
      std::string M = B.node("Mul", P + "/Mul", {Gate, Up});
      return dropout(linear(M, P + "/down", W + "mlp.down.", F, H),
                     P + "/down/Dropout");
    }
    std::string Y = linear(X, P + "/fc1", W + "mlp.fc1.", H, F);
    Y = gelu(Y, P + "/gelu");
    return dropout(linear(Y, P + "/fc2", W + "mlp.fc2.", F, H),
                   P + "/fc2/Dropout");
  }

  std::string layer(const std::string &X, const std::string &L,
                    const std::string &W) {
    if (S.Fam == Family::Bert) { // post-LN
      std::string Y =
          B.node("Add", L + "/attn/residual/Add", {X, attention(X, L, W)});
      Y = layerNorm(Y, L + "/ln1", W + "ln1.");
      std::string Z = B.node("Add", L + "/mlp/residual/Add", {Y, mlp(Y, L, W)});
      return layerNorm(Z, L + "/ln2", W + "ln2.");
    }
    std::string Y =
        B.node("Add", L + "/attn/residual/Add",
               {X, attention(norm(X, L + "/ln1", W + "ln1."), L, W)});
    return B.node("Add", L + "/mlp/residual/Add",
                  {Y, mlp(norm(Y, L + "/ln2", W + "ln2."), L, W)});
  }

  const TransformerSpec &S;
  Builder B;
  onnx::GraphProto &G;
  const int64_t H, A, K, D, F, Seq;
  std::string Pos, Mask, Cos, Sin, TokEmbedding, TrainingMode;
};

void setTensorType(onnx::ValueInfoProto &V, int32_t ElemType,
                   const llvm::Optional<int64_t> &Batch,
                   llvm::ArrayRef<int64_t> Rest) {
  onnx::TypeProto::Tensor &T = *V.mutable_type()->mutable_tensor_type();
  T.set_elem_type(ElemType);
  onnx::TensorShapeProto &Shape = *T.mutable_shape();
  if (Batch)
    Shape.add_dim()->set_dim_value(*Batch);
  else
    Shape.add_dim()->set_dim_param("batch");
  for (int64_t D : Rest)
    Shape.add_dim()->set_dim_value(D);
}

/// Min is 0 for the options whose 0 means "the default".
llvm::Error checkDim(llvm::StringRef Flag, int64_t V, int64_t Min = 1) {
  if (V < Min)
    return error(Flag + " " + llvm::Twine(V) + ": must be positive");
  if (V > MaxDim)
    return error(Flag + " " + llvm::Twine(V) + ": too large (at most " +
                 llvm::Twine(MaxDim) + ")");
  return llvm::Error::success();
}

} // namespace

llvm::StringRef perfc::modelgen::name(Family F) {
  switch (F) {
  case Family::Gpt:
    return "gpt";
  case Family::Bert:
    return "bert";
  case Family::Llama:
    return "llama";
  }
  return "gpt";
}

llvm::Optional<Family> perfc::modelgen::parseFamily(llvm::StringRef S) {
  for (Family F : {Family::Gpt, Family::Bert, Family::Llama})
    if (S == name(F))
      return F;
  return llvm::None;
}

llvm::StringRef perfc::modelgen::name(BertHead H) {
  switch (H) {
  case BertHead::Pooler:
    return "pooler";
  case BertHead::Pretraining:
    return "pretraining";
  case BertHead::Squad:
    return "squad";
  }
  return "pooler";
}

llvm::Optional<BertHead> perfc::modelgen::parseBertHead(llvm::StringRef S) {
  for (BertHead H : {BertHead::Pooler, BertHead::Pretraining, BertHead::Squad})
    if (S == name(H))
      return H;
  return llvm::None;
}

llvm::StringRef perfc::modelgen::name(FloatType T) {
  switch (T) {
  case FloatType::F32:
    return "fp32";
  case FloatType::F16:
    return "fp16";
  case FloatType::BF16:
    return "bf16";
  }
  return "fp32";
}

llvm::Optional<FloatType> perfc::modelgen::parseFloatType(llvm::StringRef S) {
  for (FloatType T : {FloatType::F32, FloatType::F16, FloatType::BF16})
    if (S == name(T))
      return T;
  return llvm::None;
}

int64_t perfc::modelgen::llamaFfn(int64_t Hidden) {
  int64_t F = 8 * Hidden / 3;
  return (F + 255) / 256 * 256;
}

llvm::Expected<TransformerSpec>
perfc::modelgen::resolve(const TransformerSpec &Spec) {
  TransformerSpec S = Spec;
  const bool IsLlama = S.Fam == Family::Llama;
  if (S.Layers < 1)
    return error("--layers " + llvm::Twine(S.Layers) +
                 ": a model needs at least one layer");
  if (S.Layers > MaxLayers)
    return error("--layers " + llvm::Twine(S.Layers) + ": too many (at most " +
                 llvm::Twine(MaxLayers) + ")");
  if (auto E = checkDim("--hidden", S.Hidden))
    return std::move(E);
  if (auto E = checkDim("--heads", S.Heads))
    return std::move(E);
  if (auto E = checkDim("--seq", S.Seq))
    return std::move(E);
  if (auto E = checkDim("--vocab", S.Vocab))
    return std::move(E);
  if (auto E = checkDim("--ffn", S.Ffn, 0))
    return std::move(E);
  if (auto E = checkDim("--kv-heads", S.KvHeads, 0))
    return std::move(E);
  if (auto E = checkDim("--max-positions", S.MaxPositions, 0))
    return std::move(E);
  if (S.Batch)
    if (auto E = checkDim("--batch", *S.Batch))
      return std::move(E);
  if (S.Hidden % S.Heads != 0)
    return error("--heads " + llvm::Twine(S.Heads) +
                 " does not divide --hidden " + llvm::Twine(S.Hidden) +
                 ": each head takes hidden/heads "
                 "channels");
  if (S.KvHeads == 0)
    S.KvHeads = S.Heads;
  if (!IsLlama && S.KvHeads != S.Heads)
    return error("--kv-heads is for llama (grouped-query attention): " +
                 name(S.Fam) + " uses --heads for keys and values");
  if (S.Heads % S.KvHeads != 0)
    return error("--kv-heads " + llvm::Twine(S.KvHeads) +
                 " does not divide --heads " + llvm::Twine(S.Heads) +
                 ": each key/value head serves heads/kv-heads query heads");
  if (IsLlama && headDim(S) % 2 != 0)
    return error("--hidden " + llvm::Twine(S.Hidden) + " / --heads " +
                 llvm::Twine(S.Heads) + " = " + llvm::Twine(headDim(S)) +
                 ": rotary embeddings need an even head dimension");
  if (S.Ffn == 0)
    S.Ffn = IsLlama ? llamaFfn(S.Hidden) : 4 * S.Hidden;
  if (IsLlama && S.MaxPositions != 0)
    return error("--max-positions is for gpt and bert: llama has rotary "
                 "positions, no position table");
  if (S.MaxPositions == 0 && !IsLlama)
    S.MaxPositions =
        S.Fam == Family::Bert ? std::max<int64_t>(S.Seq, 512) : S.Seq;
  if (!IsLlama && S.MaxPositions < S.Seq)
    return error("--max-positions " + llvm::Twine(S.MaxPositions) +
                 " is less than --seq " + llvm::Twine(S.Seq) +
                 ": every position needs a row");
  if (S.Fam != Family::Bert && S.Head != BertHead::Pooler)
    return error("--head " + name(S.Head) + " is for bert: " + name(S.Fam) +
                 " ends in its LM head");
  if (S.Fam == Family::Bert && S.TiedEmbeddings)
    return error("bert has no LM head: --tied and --untied do not apply");
  if (!S.TiedEmbeddings && S.Fam != Family::Bert)
    S.TiedEmbeddings = S.Fam == Family::Gpt;

  // perfc refuses a tensor over 2^62 bytes: so does the generator, naming
  // the flags to lower. Doubles: the products may overflow int64.
  const double Batch = static_cast<double>(S.Batch.getValueOr(1));
  const double Bytes = static_cast<double>(byteSize(S.Type));
  const double Limit = std::ldexp(1.0, 62);
  auto Dbl = [](int64_t V) { return static_cast<double>(V); };
  struct {
    double Elements;
    const char *What;
  } Largest[] = {
      {Batch * Dbl(S.Heads) * Dbl(S.Seq) * Dbl(S.Seq),
       "the attention scores [batch, heads, seq, seq]: lower --seq"},
      {Batch * Dbl(S.Seq) * Dbl(S.Vocab),
       "the logits [batch, seq, vocab]: lower --seq or --vocab"},
      {Batch * Dbl(S.Seq) * Dbl(std::max(S.Ffn, 3 * S.Hidden)),
       "the MLP activations [batch, seq, ffn]: lower --seq or --ffn"},
      {Dbl(S.Hidden) * Dbl(std::max(S.Ffn, S.Vocab)),
       "a weight: lower --hidden, --ffn or --vocab"},
  };
  for (const auto &L : Largest)
    if (L.Elements * Bytes > Limit)
      return error(llvm::Twine(L.What) + " (over 2^62 bytes)");
  // Parameters are counted in uint64; keep them exact in a double too (an
  // upper bound of parameterCount).
  const double H = Dbl(S.Hidden), F = Dbl(S.Ffn);
  const double Params = Dbl(S.Layers) * (4 * H * H + 3 * H * F + 13 * H) +
                        3 * H * Dbl(S.Vocab) + Dbl(S.MaxPositions) * H +
                        3 * H * H;
  if (Params > std::ldexp(1.0, 53))
    return error("the model would have over 2^53 parameters: lower --layers, "
                 "--hidden or --ffn");

  if (S.Name.empty()) {
    S.Name = name(S.Fam).str() + "_L" + std::to_string(S.Layers) + "_H" +
             std::to_string(S.Hidden) + "_A" + std::to_string(S.Heads);
    if (S.KvHeads != S.Heads)
      S.Name += "_K" + std::to_string(S.KvHeads);
    S.Name += "_F" + std::to_string(S.Ffn) + "_S" + std::to_string(S.Seq) +
              "_V" + std::to_string(S.Vocab);
    if (S.Head != BertHead::Pooler)
      S.Name += "_" + name(S.Head).str();
  }
  if (S.WeightsFile.empty())
    S.WeightsFile = S.Name + ".weights";
  return S;
}

uint64_t perfc::modelgen::parameterCount(const TransformerSpec &S) {
  const uint64_t H = S.Hidden, F = S.Ffn, V = S.Vocab, L = S.Layers;
  const uint64_t KvWidth = static_cast<uint64_t>(S.KvHeads) * headDim(S);
  uint64_t N = V * H; // token embedding
  if (S.Fam == Family::Llama) {
    uint64_t Layer = H                 // ln1
                     + 2 * H * H       // q, out
                     + 2 * H * KvWidth // k, v
                     + H               // ln2
                     + 3 * H * F;      // gate, up, down
    N += L * Layer + H;                // + final norm
    if (!*S.TiedEmbeddings)
      N += H * V;
    return N;
  }
  N += static_cast<uint64_t>(S.MaxPositions) * H;
  uint64_t Layer = 2 * H                    // ln1
                   + 3 * H * H + 3 * H      // qkv
                   + H * H + H              // out
                   + 2 * H                  // ln2
                   + H * F + F + F * H + H; // fc1, fc2
  N += L * Layer;
  if (S.Fam == Family::Bert) {
    N += 2 * H + 2 * H + H * H + H; // types, embed ln, pooler
    if (S.Head == BertHead::Pretraining)
      N += H * H + H + 2 * H + V // MLM dense, ln, decoder bias (tied)
           + 2 * H + 2;          // NSP
    else if (S.Head == BertHead::Squad)
      N += 2 * H + 2;
    return N;
  }
  N += 2 * H; // final norm
  if (!*S.TiedEmbeddings)
    N += H * V;
  return N;
}

llvm::Expected<std::string>
perfc::modelgen::writeTransformerOnnx(const TransformerSpec &Spec) {
  auto Resolved = resolve(Spec);
  if (!Resolved)
    return Resolved.takeError();
  const TransformerSpec &S = *Resolved;

  onnx::ModelProto M;
  M.set_ir_version(IrVersion);
  M.set_producer_name("perfc zoo");
  M.set_model_version(1);
  M.set_doc_string(
      "Graph-only " + name(S.Fam).str() +
      " transformer written by perfc zoo: " + std::to_string(S.Layers) +
      " layers, hidden " + std::to_string(S.Hidden) + ", " +
      std::to_string(S.Heads) + " heads (" + std::to_string(S.KvHeads) +
      " kv), ffn " + std::to_string(S.Ffn) + ", seq " + std::to_string(S.Seq) +
      ", vocab " + std::to_string(S.Vocab) + ", " + name(S.Type).str() +
      ". Weights have no data.");
  onnx::OperatorSetIdProto &Op = *M.add_opset_import();
  Op.set_domain("");
  Op.set_version(OpsetVersion);
  onnx::GraphProto &G = *M.mutable_graph();
  G.set_name(S.Name);

  setTensorType(*G.add_input(), TP::INT64, S.Batch, {S.Seq});
  G.mutable_input(0)->set_name("input_ids");
  TransformerWriter W(S, G);
  W.run();
  const int32_t Elem = onnxType(S.Type);
  if (S.Fam == Family::Bert) {
    onnx::ValueInfoProto &Last = *G.add_output();
    Last.set_name("last_hidden_state");
    setTensorType(Last, Elem, S.Batch, {S.Seq, S.Hidden});
    onnx::ValueInfoProto &Pool = *G.add_output();
    Pool.set_name("pooler_output");
    setTensorType(Pool, Elem, S.Batch, {S.Hidden});
    if (S.Head == BertHead::Pretraining) {
      onnx::ValueInfoProto &Mlm = *G.add_output();
      Mlm.set_name("prediction_log_probs");
      setTensorType(Mlm, Elem, S.Batch, {S.Seq, S.Vocab});
      onnx::ValueInfoProto &Nsp = *G.add_output();
      Nsp.set_name("seq_relationship_logits");
      setTensorType(Nsp, Elem, S.Batch, {2});
    } else if (S.Head == BertHead::Squad) {
      onnx::ValueInfoProto &Qa = *G.add_output();
      Qa.set_name("qa_logits");
      setTensorType(Qa, Elem, S.Batch, {S.Seq, 2});
    }
  } else {
    onnx::ValueInfoProto &Logits = *G.add_output();
    Logits.set_name("logits");
    setTensorType(Logits, Elem, S.Batch, {S.Seq, S.Vocab});
  }
  if (W.params() != parameterCount(S))
    return error("internal error: the graph holds " + llvm::Twine(W.params()) +
                 " parameters, the formula " + llvm::Twine(parameterCount(S)));

  std::string Bytes;
  if (!M.SerializeToString(&Bytes))
    return error("cannot serialize the model (over 2 GB of graph?)");
  return Bytes;
}

llvm::Error
perfc::modelgen::writeTransformerOnnxFile(const TransformerSpec &Spec,
                                          llvm::StringRef Path) {
  TransformerSpec S = Spec;
  if (S.WeightsFile.empty())
    S.WeightsFile = llvm::sys::path::stem(Path).str() + ".weights";
  auto Bytes = writeTransformerOnnx(S);
  if (!Bytes)
    return Bytes.takeError();
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC, llvm::sys::fs::OF_None);
  if (EC)
    return error(Path + ": cannot write: " + EC.message());
  OS << *Bytes;
  OS.close();
  if (OS.has_error()) {
    OS.clear_error();
    return error(Path + ": write failed");
  }
  return llvm::Error::success();
}
