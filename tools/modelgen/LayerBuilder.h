//===- LayerBuilder.h - Transformer layers as ONNX nodes --------*- C++ -*-===//
//
// Internal to perfc_modelgen: the pieces a transformer layer is made of
// (LayerNorm and RMSNorm, linear layers, GELU, attention with rotary and
// grouped-query heads, the GELU and SwiGLU MLPs, dropout) and the layer
// itself, pre-norm (gpt, llama) or post-norm (bert). Node and weight names
// are the ones TransformerGen.h documents.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_MODELGEN_LAYERBUILDER_H
#define PERFC_TOOLS_MODELGEN_LAYERBUILDER_H

#include "tools/modelgen/GraphBuilder.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace perfc::modelgen::detail {

/// Emits layers through a GraphBuilder. Holds what every layer reads once
/// made: the causal mask (gpt, llama) and the rotary tables (llama).
class LayerBuilder {
public:
  /// S must be resolved.
  LayerBuilder(const TransformerSpec &S, GraphBuilder &B);

  /// The causal mask [S, S] from the position ids Pos: 0 where key <=
  /// query, the type's lowest value elsewhere. Attention adds it from then
  /// on. With a cache of P tokens it is [S, P+S] (the queries at P..P+S-1),
  /// and none at all for a single new token, which sees every key.
  void causalMask(const std::string &Pos);

  /// Llama's cos and sin tables [S, d] from the position ids Pos; attention
  /// rotates q and k with them from then on.
  void rotary(const std::string &Pos);

  /// Transformer layer I on X [b, S, H]: nodes "/layers.{I}/...", weights
  /// "layers.{I}. ...", and with a cache the tensors past.{I}.key, .value
  /// (graph inputs) and present.{I}.key, .value (outputs). Returns its
  /// output.
  std::string layer(const std::string &X, int64_t I);

  /// LayerNormalization named P/LayerNormalization, weights W{weight,bias}.
  std::string layerNorm(const std::string &X, const std::string &P,
                        const std::string &W);
  /// The family's norm: RMSNorm for llama, else LayerNorm.
  std::string norm(const std::string &X, const std::string &P,
                   const std::string &W);
  /// X @ W (+ bias for gpt and bert), named P/MatMul and P/Add; with
  /// Experts > 0, W is [Experts, In, Out] and the bias [Experts, 1, Out],
  /// of which the first Active (0: all) are read, through P/Slice and
  /// P/Slice_1.
  std::string linear(const std::string &X, const std::string &P,
                     const std::string &W, int64_t In, int64_t Out,
                     int64_t Experts = 0, int64_t Active = 0);
  /// GELU: erf form for bert, tanh approximation for gpt.
  std::string gelu(const std::string &X, const std::string &P);

private:
  std::string cast(const std::string &X, int64_t To, const std::string &Name);
  /// RMSNorm over the last axis, of Width channels (0: H).
  std::string rmsNorm(const std::string &X, const std::string &P,
                      const std::string &W, int64_t Width = 0);
  /// [b, S, N*Dim] -> [b, N, S, Dim] or [b, N, Dim, S] (Perm); Dim 0: D.
  std::string splitHeads(const std::string &X, const std::string &P, int64_t N,
                         llvm::ArrayRef<int64_t> Perm, int64_t Dim = 0);
  /// Rotary embedding of the last axis (R channels).
  std::string rope(const std::string &X, const std::string &P);
  /// Split of X along its last axis into Sizes, named P.
  onnx::NodeProto &splitLast(const std::string &X, const std::string &P,
                             llvm::ArrayRef<int64_t> Sizes);
  /// Concatenation along the last axis, named P.
  std::string concatLast(llvm::ArrayRef<std::string> Xs, const std::string &P);
  /// A 2-D weight [In, N*Out] viewed as N matrices [In, Out] (Perm {1, 0,
  /// 2}) or [Out, In] ({1, 2, 0}): Reshape and Transpose named P/...
  std::string perHead(const std::string &Weight, const std::string &P,
                      int64_t In, int64_t N, int64_t Out,
                      llvm::ArrayRef<int64_t> Perm);
  /// softmax(mask(Q.Kt * Scale)).V over the heads (qk, scale, mask,
  /// Softmax, dropout, pv).
  std::string attend(const std::string &Q, const std::string &Kt,
                     const std::string &V, const std::string &P,
                     const std::string &W, double Scale);
  /// O [b, A, S, Width] merged to [b, S, A*Width] and projected to H.
  std::string project(const std::string &O, const std::string &P,
                      const std::string &W, int64_t Width);
  /// DeepSeek's multi-head latent attention (TransformerGen.h).
  std::string latentAttention(const std::string &X, const std::string &L,
                              const std::string &W, int64_t I);
  std::string expandKv(const std::string &X, const std::string &P);
  std::string appendCache(const std::string &X, const std::string &P, int64_t I,
                          llvm::StringRef What);
  std::string keysTransposed(std::string Kx, std::string &V,
                             const std::string &P, int64_t I);
  std::string attention(const std::string &X, const std::string &L,
                        const std::string &W, int64_t I);
  std::string dropout(const std::string &X, const std::string &Name);
  /// The family's MLP of width Width, nodes P/..., weights W...; Experts >
  /// 0: E of them at once on X [E, rows, H] (batched MatMuls), or the first
  /// Active of them on X [Active, rows, H]. Drop: dropout on its output (a
  /// dense layer's residual branch).
  std::string mlp(const std::string &X, const std::string &P,
                  const std::string &W, int64_t Width, int64_t Experts = 0,
                  int64_t Active = 0, bool Drop = true);
  /// A mixture of S.Experts MLPs, top-S.TopK routing (TransformerGen.h).
  std::string moe(const std::string &X, const std::string &L,
                  const std::string &W);
  /// Layer I's MLP: a mixture where isMoeLayer says so.
  std::string ffn(const std::string &X, const std::string &L,
                  const std::string &W, int64_t I);

  const TransformerSpec &S;
  GraphBuilder &B;
  const int64_t H, A, K, D, F, Seq;
  /// Rotary channels: D, or latent attention's qk_rope_head_dim.
  const int64_t R;
  /// Cached tokens (S.Past); keys and values span Past + Seq positions.
  const int64_t Past;
  std::string Mask, Cos, Sin;
};

} // namespace perfc::modelgen::detail

#endif // PERFC_TOOLS_MODELGEN_LAYERBUILDER_H
