//===- ContribOps.cpp - Work of ONNX Runtime's com.microsoft ops ----------===//
//
// The fused ops ONNX Runtime's transformer optimizer writes into BERT and
// GPT-2 graphs (definitions: onnxruntime/core/graph/contrib_ops/bert_defs.cc
// and contrib_defs.cc, docs/ContribOperators.md). Each is costed as the
// standard ops it replaces are costed by perfc, so that a model counts the
// same arithmetic before and after the optimizer; only the bytes differ,
// since a fused op does not write its intermediates to memory.
//
// Attention: input [B, S, H_in], weights [H_in, H_q + H_k + H_v] (H_q =
// H_k; each a third of the weights' columns unless qkv_hidden_sizes says
// otherwise), past [2, B, heads, P, d]; L = P + S keys; scores = B * heads *
// S * L.
//
// | Op                      | MACs                  | other flops           |
// |-------------------------|-----------------------|-----------------------|
// | Attention               | B*S*H_in*(3H) (proj.) | B*S*(3H) bias if any; |
// |                         | + B*S*L*H_q (Q K^T)   | scores * (1 scale +   |
// |                         | + B*S*L*H_v (P V)     | 8 softmax + 1 mask if |
// |                         |                       | any + 1 attn. bias)   |
// | MultiHeadAttention      | B*S*L*D_q + B*S*L*D_v | as Attention, bias on |
// |                         | (no projection)       | Q, K and V if given   |
// | FusedMatMul             | MatMul's, after the   | out_elems if alpha!=1 |
// |                         | transposes            |                       |
//
// | Op                              | Flops per element of the input      |
// |---------------------------------|-------------------------------------|
// | SkipLayerNormalization          | 1 skip add (+1 bias) + 6 + 1 gamma  |
// |                                 | (+1 beta): Add(s) + LayerNorm       |
// | SkipSimplifiedLayerNormalization| 1 skip add (+1 bias) + 3 + 1 gamma  |
// | EmbedLayerNormalization         | (E - 1) adds + 8 (LayerNorm with    |
// |                                 | gamma and beta) per output element  |
// | Gelu                            | 14: Div, Erf (10), Add, Mul, Mul    |
// | BiasGelu                        | 15: Gelu + bias add                 |
// | FastGelu                        | 22 (+1 bias): Pow (9), Mul, Add,    |
// |                                 | Mul, Tanh (7), Add, Mul, Mul        |
// | QuickGelu                       | 8: Mul (alpha), Sigmoid (6), Mul    |
// | BiasAdd                         | 2: X + bias + skip                  |
//
// The attention products, softmax (8 per score, ReductionOps.cpp), scale
// (the Div by sqrt(d) of an exported graph) and mask add are those of the
// standard decomposition. LayerNormalization's 6 + 1 + 1 are
// NormalizationOps.cpp's; the simplified (RMS) form drops the mean and the
// subtraction: sum of squares (mul, add) and the multiply by 1/rms, 3. The
// GELU counts are ElementwiseOps.cpp's figures for the ops an exporter
// writes: torch's erf GELU (x * 0.5 * (1 + erf(x / sqrt 2))) and the tanh
// approximation of GPT-2 (0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 *
// pow(x, 3))))). QuickGelu is x * sigmoid(alpha * x).
//
// EmbedLayerNormalization gathers E rows per token (word, position and,
// with segment ids, segment embeddings; E = 2 or 3) and reads, as Gather
// is counted (DataMovementOps.cpp), only those rows: E * the output's
// bytes, plus the ids, gamma, beta and mask. The mask_index it also writes
// is a sum over each mask row: one add per mask element.
//
// Unknown sizes read as 0, as everywhere: the counts are then 0, never a
// guess.
//
//===----------------------------------------------------------------------===//
#include "passes/OpRegistry.h"
#include "passes/ops/MatMulShapes.h"
#include "passes/ops/OpCounts.h"

#include "ir/Graph.h"

#include <string>
#include <vector>

namespace perfc {

/// The RMS form's: sum of squares (mul, add) and the multiply by 1/rms.
static constexpr double RmsNormFlops = 3;

/// Size I of V (negative from the end); 0 when unknown or absent.
static double dim(const ir::Value *V, int I) {
  return V ? static_cast<double>(V->shape().size(I)) : 0;
}

static unsigned rankOf(const ir::Value *V) {
  return V && V->shape().isRanked() ? V->shape().rank() : 0;
}

/// A positive integer attribute; 0 when absent or not positive.
static double positiveAttr(const ir::Node &N, llvm::StringRef Name) {
  int64_t V = N.getInt(Name, 0);
  return V > 0 ? static_cast<double>(V) : 0;
}

/// The flops around the attention products: bias adds, then per score the
/// scale, the softmax and the adds of a mask or an attention bias.
static double attentionEpilogue(double Scores, bool Mask, bool AttnBias,
                                std::string &Formula) {
  double PerScore = 1 + SoftmaxFlops + (Mask ? 1 : 0) + (AttnBias ? 1 : 0);
  Formula += " + " + std::to_string(static_cast<int>(PerScore)) +
             "*B*heads*S*L (scale, softmax" + (Mask ? ", mask" : "") +
             (AttnBias ? ", attention bias" : "") + ")";
  return PerScore * Scores;
}

static void attentionWork(const ir::Node &N, OpWork &W) {
  const ir::Value *X = N.input(0), *Wt = N.input(1);
  const double B = dim(X, 0), S = dim(X, 1), Hin = dim(X, 2);
  const double Htot = dim(Wt, 1);
  double Hq = Htot / 3, Hv = Htot / 3;
  const std::vector<int64_t> Sizes = N.getInts("qkv_hidden_sizes");
  if (Sizes.size() == 3 && Sizes[0] > 0 && Sizes[2] > 0) {
    Hq = static_cast<double>(Sizes[0]);
    Hv = static_cast<double>(Sizes[2]);
  }
  const double Heads = positiveAttr(N, "num_heads");
  const ir::Value *Past = N.input(4);
  const double L = S + (rankOf(Past) == 5 ? dim(Past, 3) : 0);
  const double Proj = B * S * Hin * Htot;
  W.Macs = Proj + B * S * L * Hq + B * S * L * Hv;
  W.Gemm = {B, S, Htot, Hin};
  W.Flops = 2 * W.Macs;
  W.Formula = "2*B*S*H_in*(3H) (QKV projection) + 2*B*S*L*H (Q K^T) + "
              "2*B*S*L*H_v (P V)";
  if (N.input(2)) {
    W.Flops += B * S * Htot;
    W.Formula += " + B*S*(3H) (bias)";
  }
  W.Flops += attentionEpilogue(B * Heads * S * L, N.input(3) != nullptr,
                               N.input(5) != nullptr, W.Formula);
}

static void multiHeadAttentionWork(const ir::Node &N, OpWork &W) {
  const ir::Value *Q = N.input(0), *K = N.input(1), *V = N.input(2);
  const double Heads = positiveAttr(N, "num_heads");
  const double B = dim(Q, 0), S = dim(Q, 1);
  double Dq = 0, Dk = 0, Dv = 0, L = 0;
  if (rankOf(Q) == 5) { // Packed QKV [B, S, heads, 3, d].
    Dq = Dk = Dv = dim(Q, 2) * dim(Q, 4);
    L = S;
  } else if (rankOf(Q) == 3) {
    Dq = dim(Q, 2);
    if (rankOf(K) == 5) { // Packed KV [B, L, heads, 2, d].
      L = dim(K, 1);
      Dk = Dv = dim(K, 2) * dim(K, 4);
    } else if (rankOf(K) == 3) {
      L = dim(K, 1);
      Dk = dim(K, 2);
      Dv = dim(V, 2);
    } else if (rankOf(K) == 4) { // [B, heads, L, d], no projection bias.
      L = dim(K, 2);
      Dk = dim(K, 1) * dim(K, 3);
      Dv = rankOf(V) == 4 ? dim(V, 1) * dim(V, 3) : 0;
    }
  }
  const ir::Value *PastKey = N.input(6);
  const double Total = L + (rankOf(PastKey) == 4 ? dim(PastKey, 2) : 0);
  W.Macs = B * S * Total * Dq + B * S * Total * Dv;
  W.Gemm = Heads > 0 ? GemmDims{B * Heads, S, Total, Dq / Heads} : GemmDims();
  W.Flops = 2 * W.Macs;
  W.Formula = "2*B*S*L*D (Q K^T) + 2*B*S*L*D_v (P V)";
  if (N.input(3)) {
    W.Flops += B * S * Dq + B * L * (Dk + Dv);
    W.Formula += " + B*S*D + B*L*(D + D_v) (bias)";
  }
  W.Flops += attentionEpilogue(B * Heads * S * Total, N.input(4) != nullptr,
                               N.input(5) != nullptr, W.Formula);
}

static void fusedMatMulWork(const ir::Node &N, OpWork &W) {
  MatMulTransposes T;
  T.TransA = N.getInt("transA", 0) != 0;
  T.TransB = N.getInt("transB", 0) != 0;
  T.TransBatchA = N.getInt("transBatchA", 0) != 0;
  T.TransBatchB = N.getInt("transBatchB", 0) != 0;
  const GemmDims D = matMulGemmDims(N.input(0), N.input(1), T);
  W.Macs = D.Batch * D.M * D.N * D.K;
  W.Gemm = D;
  W.Flops = 2 * W.Macs;
  W.Formula = "2*batch*M*K*N";
  if (N.getFloat("alpha", 1.0) != 1.0) {
    W.Flops += elems(N.output(0));
    W.Formula += " + out_elems (alpha)";
  }
}

/// SkipLayerNormalization (bias at input 4, beta at 3) and the simplified
/// form (bias at input 3, no beta).
template <bool Simplified>
static void skipLayerNormWork(const ir::Node &N, OpWork &W) {
  const bool Bias = N.input(Simplified ? 3 : 4) != nullptr;
  const bool Beta = !Simplified && N.input(3) != nullptr;
  const double PerElem = 1 + (Bias ? 1 : 0) +
                         (Simplified ? RmsNormFlops : LayerNormFlops) + 1 +
                         (Beta ? 1 : 0);
  W.Flops = PerElem * elems(N.input(0));
  W.Formula = std::to_string(static_cast<int>(PerElem)) +
              "*in_elems (skip add" + (Bias ? ", bias add" : "") + ", " +
              (Simplified ? "RMS" : "layer") + " normalization)";
}

static void embedLayerNormWork(const ir::Node &N, OpWork &W) {
  const ir::Value *Out = N.output(0);
  const bool Segment = N.input(1) && N.input(4);
  const double Rows = Segment ? 3 : 2;
  W.Flops = (Rows - 1 + LayerNormFlops + 2) * elems(Out) + elems(N.input(7));
  W.Formula = std::string(Segment ? "10" : "9") +
              "*out_elems (embedding adds, layer normalization) + "
              "elems(mask) (mask index)";
  W.BytesRead = Rows * bytesOf(Out);
  for (unsigned I : {0u, 1u, 5u, 6u, 7u, 8u})
    W.BytesRead += bytesOf(N.input(I));
}

namespace {
struct ElementCost {
  const char *Op;
  unsigned Flops;
  const char *Formula;
};
} // namespace

static constexpr ElementCost GeluCosts[] = {
    {"Gelu", 14, "14*out_elems (erf GELU)"},
    {"BiasGelu", 15, "15*out_elems (bias add, erf GELU)"},
    {"QuickGelu", 8, "8*out_elems (x*sigmoid(alpha*x))"},
    {"BiasAdd", 2, "2*out_elems (bias and skip adds)"},
};

template <unsigned I> static void geluWork(const ir::Node &N, OpWork &W) {
  W.Flops = GeluCosts[I].Flops * elems(N.output(0));
  W.Formula = GeluCosts[I].Formula;
}

static void fastGeluWork(const ir::Node &N, OpWork &W) {
  const bool Bias = N.input(1) != nullptr;
  W.Flops = (Bias ? 23 : 22) * elems(N.output(0));
  W.Formula =
      Bias ? "23*out_elems (bias add, tanh GELU)" : "22*out_elems (tanh GELU)";
}

void registerContribOps(OpRegistry &R) {
  const std::string D = "com.microsoft:";
  R.add(D + "Attention", OpClass::Gemm, &attentionWork);
  R.add(D + "MultiHeadAttention", OpClass::Gemm, &multiHeadAttentionWork);
  R.add(D + "FusedMatMul", OpClass::Gemm, &fusedMatMulWork);
  R.add(D + "SkipLayerNormalization", OpClass::Normalization,
        &skipLayerNormWork<false>);
  R.add(D + "SkipSimplifiedLayerNormalization", OpClass::Normalization,
        &skipLayerNormWork<true>);
  R.add(D + "EmbedLayerNormalization", OpClass::Normalization,
        &embedLayerNormWork);
  R.add(D + GeluCosts[0].Op, OpClass::Elementwise, &geluWork<0>);
  R.add(D + GeluCosts[1].Op, OpClass::Elementwise, &geluWork<1>);
  R.add(D + GeluCosts[2].Op, OpClass::Elementwise, &geluWork<2>);
  R.add(D + GeluCosts[3].Op, OpClass::Elementwise, &geluWork<3>);
  R.add(D + "FastGelu", OpClass::Elementwise, &fastGeluWork);
}

} // namespace perfc
