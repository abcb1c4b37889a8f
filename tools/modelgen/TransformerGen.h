//===- TransformerGen.h - Graph-only ONNX transformers of any size -*- C++ -*-//
//
// Writes a decoder (GPT, Llama) or encoder (BERT) transformer as an ONNX
// model directly from its dimensions: no weights, no torch, no Python, so
// that any size from GPT-2 to a trillion parameters can be studied. Weights
// are initializers with their dims and type but no data: each is marked as
// stored externally in "<stem>.weights" (offset 0, its byte length), a file
// that does not exist, exactly like the stripped models of tests/data/zoo.
// Small constants (Reshape shapes, axes, scalars) keep their data, so that
// shape inference resolves every tensor. Opset 17, IR version 8.
//
// Input: `input_ids` int64 [batch, S] ("batch" is symbolic unless
// Spec.Batch is set; S is static). Outputs: `logits` [batch, S, V] for GPT
// and Llama; `last_hidden_state` [batch, S, H] and `pooler_output`
// [batch, H] for BERT.
//
// With Spec.Past = P > 0 (gpt, llama), the model is one decoding step with
// a KV cache, as Hugging Face and optimum export it: S new tokens (S is
// usually 1) after P cached ones. Inputs `past.{i}.key` and
// `past.{i}.value` [batch, K, P, d] follow `input_ids`, layer by layer (K
// key/value heads, d head_dim, the model's float type); outputs
// `present.{i}.key` and `present.{i}.value` [batch, K, P+S, d], the cache
// with the new tokens appended, follow `logits`. The new tokens sit at
// positions P..P+S-1 and attend to all P+S keys. Without it (P = 0) the
// graph is the same as before the option existed, byte for byte.
//
// Node names (passes find layers and Megatron tensor-parallel pairs from
// them; keep them stable):
//
//   /embed/tok/Gather               token embedding (all families)
//   /embed/pos/Gather               learned positions (gpt, bert)
//   /embed/type/Gather              token types, all type 0 (bert)
//   /embed/ln/LayerNormalization    embedding LayerNorm (bert)
//   /positions/Range                position ids 0..S-1, int64 (P..P+S-1
//                                   with a cache)
//   /mask/...                       causal mask [S, S], once (gpt, llama):
//                                   Unsqueeze, Greater (key > query), Where;
//                                   with a cache [S, P+S], the key positions
//                                   0..P+S-1 from /mask/Range first, and no
//                                   mask at all when S = 1 (every cached key
//                                   is visible; no /attn/mask/Add either)
//   /rotary/...                     cos and sin [S, head_dim], once (llama):
//                                   computed in the graph from scalars, so
//                                   they are not parameters
//   /layers.{i}/ln1/...             norm before attention (gpt, llama: pre-
//                                   norm) or after it (bert: post-norm)
//   /layers.{i}/ln2/...             norm before (gpt, llama) / after (bert)
//                                   the MLP
//     gpt, bert: one LayerNormalization node; llama: RMSNorm decomposed as
//     Pow, ReduceMean, Add (eps), Sqrt, Reciprocal, Mul, Mul (weight)
//   /layers.{i}/attn/qkv/MatMul     fused [H, 3H] projection (gpt, bert),
//   /layers.{i}/attn/qkv/Add        + bias; then /attn/Split into q, k, v
//   /layers.{i}/attn/q/MatMul       separate [H, H], [H, K*d], [H, K*d]
//   /layers.{i}/attn/k/MatMul       projections without bias (llama)
//   /layers.{i}/attn/v/MatMul
//   /layers.{i}/attn/{q,k,v}_heads/ Reshape [b, S, n, d] and Transpose to
//                                   [b, n, S, d] (k of gpt without a cache,
//                                   bert: [b, A, d, S])
//   /layers.{i}/attn/rope_q/...     x*cos + rotate_half(x)*sin (llama):
//   /layers.{i}/attn/rope_k/...     Mul, Slice, Slice, Neg, Concat, Mul, Add
//   /layers.{i}/attn/k_cache/Concat with a cache: past.{i}.key, then the new
//   /layers.{i}/attn/v_cache/Concat k [b, K, S, d] (llama: after rotary,
//                                   before kv_expand), on the sequence axis;
//                                   likewise v. Their outputs are the graph
//                                   outputs present.{i}.key and .value
//   /layers.{i}/attn/kv_expand/...  GQA (llama, K < A): Unsqueeze, Expand,
//                                   Reshape of k and v from K to A heads
//   /layers.{i}/attn/k_t/Transpose  K^T [b, A, d, S] (llama); with a cache
//                                   [b, A, d, P+S] (llama and gpt)
//   /layers.{i}/attn/qk/MatMul      Q.K^T [batch, A, S, S] ([.., S, P+S])
//   /layers.{i}/attn/scale/Mul      by 1/sqrt(head_dim)
//   /layers.{i}/attn/mask/Add       + causal mask (gpt, llama)
//   /layers.{i}/attn/Softmax
//   /layers.{i}/attn/pv/MatMul      P.V [batch, A, S, d]
//   /layers.{i}/attn/merge/...      Transpose, Reshape to [b, S, H]
//   /layers.{i}/attn/out/MatMul     [H, H] output projection (+ /out/Add
//                                   bias for gpt, bert)
//   /layers.{i}/attn/residual/Add
//   /layers.{i}/mlp/fc1/MatMul      [H, F] (+ /fc1/Add bias), GELU as
//   /layers.{i}/mlp/gelu/...        tanh approximation (gpt: Mul, Mul, Mul,
//                                   Add, Mul, Tanh, Add, Mul, Mul) or erf
//                                   (bert: Div, Erf, Add, Mul, Mul)
//   /layers.{i}/mlp/fc2/MatMul      [F, H] (+ /fc2/Add bias)      (gpt, bert)
//   /layers.{i}/mlp/gate/MatMul     [H, F]                          (llama)
//   /layers.{i}/mlp/silu/Sigmoid,   SiLU as gate*Sigmoid(gate)
//   /layers.{i}/mlp/silu/Mul
//   /layers.{i}/mlp/up/MatMul       [H, F]
//   /layers.{i}/mlp/Mul             silu(gate) * up
//   /layers.{i}/mlp/down/MatMul     [F, H]
//   /layers.{i}/mlp/residual/Add
//   /final_norm/...                 final LayerNorm (gpt) or RMSNorm (llama)
//   /lm_head/Transpose              tied head: the token embedding
//                                   transposed to [H, V] (gpt default)
//   /lm_head/MatMul                 [H, V]; reads a Transpose of
//                                   `embed.tok.weight` when tied, else its
//                                   own `lm_head.weight` (llama default)
//   /pooler/Gather, /pooler/Gemm,   token 0, dense with bias, Tanh (bert)
//   /pooler/Tanh
//   /mlm/dense/{MatMul,Add},        bert --head pretraining: the MLM
//   /mlm/gelu/..., /mlm/ln/...,     transform on every position, the
//   /mlm/decoder/{Transpose,        decoder tied to the token embedding
//   MatMul,Add}, /mlm/LogSoftmax    (+ bias [V]) and the cross-entropy's
//                                   log-softmax: `prediction_log_probs`
//                                   [batch, S, V]
//   /nsp/Gemm                       [H, 2] on pooler_output:
//                                   `seq_relationship_logits` [batch, 2]
//   /qa/{MatMul,Add}                bert --head squad: [H, 2] on every
//                                   position: `qa_logits` [batch, S, 2]
//
// With Spec.Experts = E (gpt, llama; top-k routing, k = Spec.TopK), each
// layer's MLP is a mixture of experts of width F, as Mixtral (llama) or
// GShard/Switch (gpt) build it, written with standard ops under balanced
// routing: every expert receives T*k/E of the T = batch*S tokens (capacity
// factor 1, no token dropped), the load that the auxiliary balancing loss
// aims for and that analytical models (Calculon, Megatron's own estimates)
// assume.
//
// Few tokens (decoding, small batches) reach only some experts, and only
// theirs are read: under uniform routing a step's T tokens reach
// A = E (1 - (1 - k/E)^T) experts on average (each token picks k distinct
// experts; an expert misses a token with probability 1 - k/E), rounded, k
// at T = 1 and E for a training batch. Each of the A runs R = ceil(T*k/A)
// rows; where A*R exceeds T*k the rows are padded, as grouped-GEMM MoE
// kernels (vLLM's fused_moe, Megatron-Core's capacity buffers) pad each
// expert's rows. The graph then takes the first A experts of each weight
// stack (a Slice along the experts, a stand-in of the same cost for
// whichever A the router picks; perfc holds the whole stack in memory) and
// pads the dispatched rows (Pad) and drops the padding after (Slice). With
// a symbolic batch (no --batch) the layout must hold for every batch: all
// E experts reached at batch 1, S*k a multiple of E.
//
//   /layers.{i}/moe/router/MatMul   [H, E] router (gate) logits
//   /layers.{i}/moe/router/Softmax  routing probabilities
//   /layers.{i}/moe/router/TopK     the k largest: weights [b, S, k]
//   /layers.{i}/moe/dispatch/...    Unsqueeze, Expand to [b, S, k, H] (k > 1)
//                                   and Reshape to [A, R, H] (with padding:
//                                   Reshape to [T*k, H], Pad, Reshape): the
//                                   permutation copy that groups each
//                                   expert's tokens
//   /layers.{i}/moe/experts/...     the family's MLP on [A, R, H] with
//                                   weights [E, in, out] (batched MatMuls,
//                                   biases [E, 1, out] for gpt; each through
//                                   a .../Slice to [A, ...] when A < E):
//                                   gate, up, down (llama) or fc1, gelu, fc2
//                                   (gpt)
//   /layers.{i}/moe/combine/...     Reshape to [b, S, k, H] (padding dropped
//                                   by a Slice first), Mul by the routing
//                                   weights, ReduceSum over k
//
//   /layers.{i}/moe/shared/...      with Spec.SharedFfn, a dense MLP of that
//                                   width on every token, added to the
//                                   combined output (shared experts)
//
// The experts' weights are `layers.{i}.moe.experts.gate.weight` etc., the
// router's `layers.{i}.moe.router.weight`, the shared experts'
// `layers.{i}.moe.shared.gate.weight`; the experts' first and last MatMuls
// are a Megatron tensor-parallel pair like a dense MLP's. Experts are
// Spec.MoeFfn wide; layers that Spec.MoeEvery and Spec.DenseLayers leave
// dense keep the /mlp/ of width Ffn.
//
// Each node's output is "<node name>_output_0" (Split: _0.._2), except the
// graph outputs. Constants are shared initializers named by value
// ("const.i64x.0.1024.12.64" a shape, "const.fp32.3f000000" a scalar).
//
// With Spec.KvLoraRank = c (llama), attention is DeepSeek-V2/V3's multi-head
// latent attention (MLA): each head's query and key have dn channels
// without positions and r rotary ones, its value dv. The keys and values
// of all heads come from one latent [b, S, c] and one rotary key [b, S, r]
// that every head shares; queries come through a latent of their own of
// rank Spec.QLoraRank (or straight from the hidden state when it is 0).
//
//   /layers.{i}/attn/q_a/MatMul     [H, q_rank], /attn/q_norm/... (RMSNorm),
//   /layers.{i}/attn/q_b/MatMul     [q_rank, A*(dn+r)] (or /attn/q/MatMul
//                                   [H, A*(dn+r)] without a query latent)
//   /layers.{i}/attn/q_heads/...    Reshape, Transpose to [b, A, S, dn+r];
//   /layers.{i}/attn/q_split/Split  into dn and r channels; /attn/rope_q/
//   /layers.{i}/attn/kv_a/MatMul    [H, c+r], then /attn/kv_a/Split into the
//                                   latent (/attn/kv_norm/..., RMSNorm) and
//                                   the rotary key (/attn/k_pe/... Reshape,
//                                   Transpose to [b, 1, S, r]; /attn/rope_k/)
//
// Without a cache (training, prefill) the heads' keys and values are
// computed from the latent, as DeepSeek's own code and Megatron-Core do:
//
//   /layers.{i}/attn/k_b/MatMul     [c, A*dn], /attn/k_heads/... [b, A, S, dn]
//   /layers.{i}/attn/v_b/MatMul     [c, A*dv], /attn/v_heads/... [b, A, S, dv]
//   /layers.{i}/attn/k_pe/Expand    the rotary key to all A heads
//   /layers.{i}/attn/q_cat/Concat,  q and k [b, A, S, dn+r]; then k_t, qk,
//   /layers.{i}/attn/k_cat/Concat   scale (1/sqrt(dn+r)), mask, Softmax, pv
//
// With a cache (decoding) the cache holds the latent and the rotary key,
// c+r elements per token and layer, and attention runs on the latent with
// k_b and v_b absorbed into the query and the output, as vLLM, SGLang and
// FlashMLA decode: `past.{i}.latent` [b, 1, P, c+r] is the input,
// `present.{i}.latent` [b, 1, P+S, c+r] the output (no key or value).
//
//   /layers.{i}/attn/uk/...         k_b's weight viewed as A matrices
//                                   [dn, c] (Reshape, Transpose) and the
//                                   MatMul of the queries' dn channels by
//                                   them: [b, A, S, c]
//   /layers.{i}/attn/q_cat/Concat   with the rotary channels: [b, A, S, c+r]
//   /layers.{i}/attn/latent/...     the new entries [b, 1, S, c+r]
//                                   (Unsqueeze, Concat)
//   /layers.{i}/attn/latent_cache/  Concat after past.{i}.latent
//   /layers.{i}/attn/k_t/Transpose  the cache as keys [b, 1, c+r, P+S]
//   /layers.{i}/attn/latent_v/Slice its first c channels as values
//   /layers.{i}/attn/qk, scale, ... as above, pv giving [b, A, S, c]
//   /layers.{i}/attn/uv/...         v_b's weight viewed as A matrices
//                                   [c, dv] and the MatMul by them
//
// Then /attn/merge/... [b, S, A*dv] and /attn/out/MatMul [A*dv, H]. Weights:
// `layers.{i}.attn.q_a.weight`, `.q_norm.weight`, `.q_b.weight` (or
// `.q.weight`), `.kv_a.weight`, `.kv_norm.weight`, `.k_b.weight`,
// `.v_b.weight`, `.out.weight`. Under tensor parallelism the down
// projections (q_a, kv_a) and their norms run whole on every rank, q_b,
// k_b and v_b are column-parallel and out row-parallel, as in Megatron-Core.
//
// Megatron tensor-parallel pairs (column-parallel, then row-parallel):
// attn/qkv (or attn/q, k, v) with attn/out; mlp/fc1 with mlp/fc2;
// mlp/gate and mlp/up with mlp/down. The MatMul weights are initializers
// named `layers.{i}.attn.qkv.weight` ([in, out] layout, as ONNX MatMul reads
// them), biases `...bias`, norms `layers.{i}.ln1.weight`.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_MODELGEN_TRANSFORMERGEN_H
#define PERFC_TOOLS_MODELGEN_TRANSFORMERGEN_H

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace perfc::modelgen {

enum class Family {
  Gpt,   ///< GPT-2 / Megatron GPT: learned positions, pre-LN, fused QKV,
         ///< tanh GELU, biases, LM head tied to the token embedding.
  Bert,  ///< BERT: post-LN, erf GELU, token types, pooler, no LM head.
  Llama, ///< Llama: RMSNorm, rotary, GQA, SwiGLU, no biases, untied head.
};

/// "gpt", "bert", "llama".
llvm::StringRef name(Family F);
llvm::Optional<Family> parseFamily(llvm::StringRef S);

/// What a BERT model ends in.
enum class BertHead {
  Pooler,      ///< The encoder and its pooler only (token 0, dense, Tanh).
  Pretraining, ///< + MLM head over every position (dense, GELU, LayerNorm,
               ///< decoder tied to the token embedding + bias, LogSoftmax
               ///< of the cross-entropy) and NSP head (pooled -> 2).
  Squad,       ///< + SQuAD span head: every position -> 2 (start, end).
};
/// "pooler", "pretraining", "squad".
llvm::StringRef name(BertHead H);
llvm::Optional<BertHead> parseBertHead(llvm::StringRef S);

/// The floating-point type of weights and activations.
enum class FloatType { F32, F16, BF16 };
llvm::StringRef name(FloatType T); ///< "fp32", "fp16", "bf16".
llvm::Optional<FloatType> parseFloatType(llvm::StringRef S);

struct TransformerSpec {
  Family Fam = Family::Gpt;
  int64_t Layers = 0;
  int64_t Hidden = 0;
  int64_t Heads = 0;
  /// Key/value heads (grouped-query attention; 1: multi-query; gpt and
  /// llama); 0: Heads.
  int64_t KvHeads = 0;
  /// MLP width; 0: the family's rule (4H; llama: 8H/3 rounded up to a
  /// multiple of 256).
  int64_t Ffn = 0;
  int64_t Seq = 0;
  int64_t Vocab = 0;
  /// Rows of the learned position table (gpt, bert); 0: Past + Seq for
  /// gpt, max(Seq, 512) for bert (BERT's 512 positions).
  int64_t MaxPositions = 0;
  /// A static batch; None: the symbolic dimension "batch".
  llvm::Optional<int64_t> Batch;
  /// Tokens already in the KV cache (gpt, llama): above 0, the model is one
  /// decoding step of Seq new tokens after Past cached ones, whose keys and
  /// values are graph inputs and outputs (see the top of this file). 0: no
  /// cache, the whole sequence at once.
  int64_t Past = 0;
  /// LM head shares the token embedding; None: the family's default (gpt
  /// tied, llama untied). Must be None for bert, which has no LM head.
  llvm::Optional<bool> TiedEmbeddings;
  FloatType Type = FloatType::F32;
  /// Dropout probability; above 0, Dropout nodes in training mode follow
  /// the attention probabilities and each residual branch, where GPT,
  /// BERT and Megatron-LM apply them (their masks are part of the
  /// activation memory of training). 0: none.
  double Dropout = 0;
  /// BERT only: the task head after the encoder (Pooler: none).
  BertHead Head = BertHead::Pooler;
  /// Experts per MLP (gpt, llama): above 1, every layer's MLP is a
  /// mixture of experts (see the top of this file). 0: a dense MLP.
  int64_t Experts = 0;
  /// Experts each token is routed to (1 <= TopK <= Experts); 0: 2 when
  /// Experts is set (Mixtral, GShard).
  int64_t TopK = 0;
  /// Each expert's MLP width; 0: Ffn. Ffn stays the dense layers' width
  /// (DeepSeek-V3: 18432 dense, 2048 per expert).
  int64_t MoeFfn = 0;
  /// Width of the shared experts that every token goes through beside the
  /// routed ones (DeepSeek-MoE, Qwen2-MoE; Megatron-Core's
  /// --moe-shared-expert-intermediate-size: their widths summed); 0: none.
  int64_t SharedFfn = 0;
  /// Every MoeEvery-th layer is a mixture, the others dense (Megatron-Core's
  /// --moe-layer-freq: layer i when i % MoeEvery == 0); 0: 1, every layer.
  int64_t MoeEvery = 0;
  /// The first DenseLayers layers are dense (DeepSeek's
  /// first_k_dense_replace); 0: none.
  int64_t DenseLayers = 0;
  /// Multi-head latent attention (llama; DeepSeek-V2, V3): above 0, keys
  /// and values come from a shared latent of this rank (kv_lora_rank),
  /// which a cache holds instead of them (see the top of this file). 0: the
  /// family's attention.
  int64_t KvLoraRank = 0;
  /// With KvLoraRank: queries come through a latent of this rank too
  /// (q_lora_rank; DeepSeek-V3: 1536); 0: projected from the hidden state
  /// directly (DeepSeek-V2-Lite).
  int64_t QLoraRank = 0;
  /// With KvLoraRank: each head's query and key channels without positions
  /// (qk_nope_head_dim; 0: 128), with rotary positions (qk_rope_head_dim;
  /// 0: 64; one rotary key that every head shares) and its value channels
  /// (v_head_dim; 0: 128), DeepSeek-V2's and V3's.
  int64_t QkNopeHeadDim = 0;
  int64_t QkRopeHeadDim = 0;
  int64_t VHeadDim = 0;
  /// Graph name; "": e.g. "gpt_L12_H768_A12_F3072_S1024_V50257" (with a
  /// cache "..._S1_P1023_V50257").
  std::string Name;
  /// external_data location of every weight; "": "<Name>.weights".
  std::string WeightsFile;
};

/// The spec with every default filled in (KvHeads, Ffn, MaxPositions,
/// TiedEmbeddings, Name, WeightsFile), or a one-line error naming the
/// option that is wrong (as the `perfc zoo` flag, e.g. "--heads 7 does not
/// divide --hidden 768").
llvm::Expected<TransformerSpec> resolve(const TransformerSpec &Spec);

/// A published model's shape (TransformerPresets.cpp): its name for
/// `perfc zoo NAME` and where its numbers come from.
struct Preset {
  llvm::StringRef Name;
  llvm::StringRef Source;
};
/// Every preset, in the order `perfc zoo` lists them.
std::vector<Preset> presets();
/// The dimensions of the preset Name (family, layers, widths, heads,
/// vocabulary, experts, latent attention), the workload left unset; None
/// for an unknown name.
llvm::Optional<TransformerSpec> preset(llvm::StringRef Name);

/// Whether S has multi-head latent attention (KvLoraRank > 0).
bool isMla(const TransformerSpec &S);

/// Whether layer I of a resolved spec is a mixture of experts.
bool isMoeLayer(const TransformerSpec &S, int64_t I);

/// How a mixture's routed rows meet its experts (see the top of this file).
struct ExpertRouting {
  int64_t Active = 0;  ///< A: the experts a step's tokens reach.
  int64_t Rows = 0;    ///< R: the rows each of them runs.
  int64_t Padding = 0; ///< A*R - T*k: rows padded, 0 if none.
  /// Some experts, or padding: a layout only this batch has.
  bool ForThisBatch = false;
};

/// The average number of experts, of E with top-k routing, that T tokens
/// reach under uniform routing: E (1 - (1 - k/E)^T).
double expectedActiveExperts(int64_t E, int64_t K, double T);

/// The layout of a resolved spec with experts; with a symbolic batch, that
/// of every batch (all experts, S*k/E rows per sequence; Rows 0).
ExpertRouting expertRouting(const TransformerSpec &S);

/// Llama's MLP width rule: 256 * ceil(floor(8H/3) / 256).
int64_t llamaFfn(int64_t Hidden);

/// Parameters of the model, counted from the spec (tied weights once);
/// what perfc counts on the generated graph. Spec must be resolved.
uint64_t parameterCount(const TransformerSpec &Spec);

/// The serialized ModelProto.
llvm::Expected<std::string> writeTransformerOnnx(const TransformerSpec &Spec);

/// Writes the model to Path; an empty Spec.WeightsFile becomes
/// "<stem of Path>.weights". Errors are one line naming Path.
llvm::Error writeTransformerOnnxFile(const TransformerSpec &Spec,
                                     llvm::StringRef Path);

} // namespace perfc::modelgen

#endif // PERFC_TOOLS_MODELGEN_TRANSFORMERGEN_H
