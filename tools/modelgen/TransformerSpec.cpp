//===- TransformerSpec.cpp - Names, defaults and limits of a spec ---------===//
//
// The enum names the `perfc zoo` flags take, resolve() (defaults and the
// checks that name the flag to change) and the parameter count the
// generated graph must match.
//
//===----------------------------------------------------------------------===//
#include "tools/modelgen/TransformerGen.h"

#include "tools/modelgen/GraphBuilder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace perfc;
using namespace perfc::modelgen;
using namespace perfc::modelgen::detail;

namespace {

/// Each of --hidden, --ffn, --seq, --vocab, --heads, --max-positions,
/// --batch and --past (and --past + --seq): positions stay exact in float32
/// (rotary) and products of a few of them stay far from int64 overflow.
constexpr int64_t MaxDim = int64_t(1) << 24;
/// Keeps the graph well under perfc's default --max-nodes (2,000,000).
constexpr int64_t MaxLayers = 10'000;

/// Min is 0 for the options whose 0 means "the default".
llvm::Error checkDim(llvm::StringRef Flag, int64_t V, int64_t Min = 1) {
  if (V < Min)
    return error(Flag + " " + llvm::Twine(V) + ": must be positive");
  if (V > MaxDim)
    return error(Flag + " " + llvm::Twine(V) + ": too large (at most " +
                 llvm::Twine(MaxDim) + ")");
  return llvm::Error::success();
}

/// Checks the latent-attention options of S and fills their defaults
/// (DeepSeek-V2's and V3's head dimensions). S.KvHeads is resolved.
llvm::Error checkMla(TransformerSpec &S) {
  for (const auto &[Flag, V] :
       {std::make_pair("--kv-lora-rank", S.KvLoraRank),
        std::make_pair("--q-lora-rank", S.QLoraRank),
        std::make_pair("--qk-nope-head-dim", S.QkNopeHeadDim),
        std::make_pair("--qk-rope-head-dim", S.QkRopeHeadDim),
        std::make_pair("--v-head-dim", S.VHeadDim)}) {
    if (auto E = checkDim(Flag, V, 0))
      return E;
    if (V > 0 && S.KvLoraRank == 0)
      return error(llvm::Twine(Flag) + " " + llvm::Twine(V) +
                   " shapes multi-head latent attention: add --kv-lora-rank");
  }
  if (!isMla(S))
    return llvm::Error::success();
  if (S.Fam != Family::Llama)
    return error("--kv-lora-rank is for llama (DeepSeek's multi-head latent "
                 "attention, with RMSNorm and rotary positions): " +
                 name(S.Fam) + " has its own attention");
  if (S.KvHeads != S.Heads)
    return error("--kv-heads " + llvm::Twine(S.KvHeads) +
                 " does not apply to --kv-lora-rank: every head's keys and "
                 "values come from the one shared latent");
  if (S.QkNopeHeadDim == 0)
    S.QkNopeHeadDim = 128;
  if (S.QkRopeHeadDim == 0)
    S.QkRopeHeadDim = 64;
  if (S.VHeadDim == 0)
    S.VHeadDim = 128;
  if (S.QkRopeHeadDim % 2 != 0)
    return error("--qk-rope-head-dim " + llvm::Twine(S.QkRopeHeadDim) +
                 ": rotary embeddings need an even dimension");
  return llvm::Error::success();
}

/// Parameters of one layer's attention with its norm before it, as
/// doubles (the overflow bound) or exactly (parameterCount).
template <typename T> T attentionParameters(const TransformerSpec &S) {
  const T H = T(S.Hidden), A = T(S.Heads);
  if (!isMla(S)) {
    const T KvWidth = T(S.KvHeads) * T(headDim(S));
    return S.Fam == Family::Llama
               ? H + 2 * H * H + 2 * H * KvWidth
               : 2 * H + H * (H + 2 * KvWidth) + (H + 2 * KvWidth) + H * H + H;
  }
  const T C = T(S.KvLoraRank), QRank = T(S.QLoraRank);
  const T Dq = T(S.QkNopeHeadDim) + T(S.QkRopeHeadDim), Dv = T(S.VHeadDim);
  const T Queries =
      S.QLoraRank > 0 ? H * QRank + QRank + QRank * A * Dq : H * A * Dq;
  return H                                   // ln1
         + Queries                           // q_a, q_norm, q_b (or q)
         + H * (C + T(S.QkRopeHeadDim)) + C  // kv_a, kv_norm
         + C * A * (T(S.QkNopeHeadDim) + Dv) // k_b, v_b
         + A * Dv * H;                       // out
}

} // namespace

bool perfc::modelgen::isMla(const TransformerSpec &S) {
  return S.KvLoraRank > 0;
}

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
  if (auto E = checkDim("--past", S.Past, 0))
    return std::move(E);
  if (S.Past > 0 && S.Fam == Family::Bert)
    return error("--past " + llvm::Twine(S.Past) +
                 " is for gpt and llama (decoding with a KV cache): bert is "
                 "an encoder, it has no cache");
  // The last position, P + S - 1, must stay exact too.
  const int64_t Positions = S.Past + S.Seq;
  if (S.Past > 0 && Positions > MaxDim)
    return error("--past " + llvm::Twine(S.Past) + " + --seq " +
                 llvm::Twine(S.Seq) + ": too many positions (at most " +
                 llvm::Twine(MaxDim) + ")");
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
  if (S.Fam == Family::Bert && S.KvHeads != S.Heads)
    return error("--kv-heads is for gpt and llama (grouped-query and "
                 "multi-query attention): bert uses --heads for keys and "
                 "values");
  if (S.Heads % S.KvHeads != 0)
    return error("--kv-heads " + llvm::Twine(S.KvHeads) +
                 " does not divide --heads " + llvm::Twine(S.Heads) +
                 ": each key/value head serves heads/kv-heads query heads");
  if (auto E = checkMla(S))
    return std::move(E);
  if (IsLlama && !isMla(S) && headDim(S) % 2 != 0)
    return error("--hidden " + llvm::Twine(S.Hidden) + " / --heads " +
                 llvm::Twine(S.Heads) + " = " + llvm::Twine(headDim(S)) +
                 ": rotary embeddings need an even head dimension");
  if (S.Ffn == 0)
    S.Ffn = IsLlama ? llamaFfn(S.Hidden) : 4 * S.Hidden;
  if (S.Experts > 0 && S.MoeFfn == 0)
    S.MoeFfn = S.Ffn;
  if (IsLlama && S.MaxPositions != 0)
    return error("--max-positions is for gpt and bert: llama has rotary "
                 "positions, no position table");
  if (S.MaxPositions == 0 && !IsLlama)
    S.MaxPositions =
        S.Fam == Family::Bert ? std::max<int64_t>(S.Seq, 512) : Positions;
  if (!IsLlama && S.MaxPositions < Positions) {
    std::string Need = "--seq " + std::to_string(S.Seq);
    if (S.Past > 0)
      Need = "--past " + std::to_string(S.Past) + " + " + Need;
    return error("--max-positions " + llvm::Twine(S.MaxPositions) +
                 " is less than " + Need + ": every position needs a row");
  }
  if (auto E = checkDim("--experts", S.Experts, 0))
    return std::move(E);
  if (auto E = checkDim("--top-k", S.TopK, 0))
    return std::move(E);
  if (S.Experts > 0 && S.Fam == Family::Bert)
    return error("--experts is for gpt and llama: perfc's bert has a dense "
                 "MLP");
  if (S.TopK > 0 && S.Experts == 0)
    return error("--top-k " + llvm::Twine(S.TopK) +
                 " needs --experts: it is the experts each token is routed "
                 "to");
  if (S.Experts == 1)
    return error("--experts 1: a mixture needs at least 2 experts (leave "
                 "--experts out for a dense MLP)");
  if (S.Experts > 0 && S.TopK == 0)
    S.TopK = std::min<int64_t>(2, S.Experts);
  for (const auto &[Flag, V] :
       {std::make_pair("--moe-ffn", S.MoeFfn),
        std::make_pair("--shared-ffn", S.SharedFfn),
        std::make_pair("--moe-every", S.MoeEvery),
        std::make_pair("--dense-layers", S.DenseLayers)}) {
    if (auto E = checkDim(Flag, V, 0))
      return std::move(E);
    if (V > 0 && S.Experts == 0)
      return error(llvm::Twine(Flag) + " " + llvm::Twine(V) +
                   " shapes a mixture of experts: add --experts");
  }
  if (S.Experts > 0 && S.MoeEvery == 0)
    S.MoeEvery = 1;
  if (S.Experts > 0 &&
      !llvm::any_of(llvm::seq<int64_t>(0, S.Layers),
                    [&](int64_t I) { return isMoeLayer(S, I); }))
    return error("--dense-layers " + llvm::Twine(S.DenseLayers) +
                 " and --moe-every " + llvm::Twine(S.MoeEvery) +
                 " leave no layer of " + llvm::Twine(S.Layers) +
                 " a mixture of experts");
  if (S.TopK > S.Experts)
    return error("--top-k " + llvm::Twine(S.TopK) + " is more than --experts " +
                 llvm::Twine(S.Experts) + ": a token goes to distinct experts");
  // A symbolic batch gets one layout for every batch: batch 1's must need
  // no padding and reach every expert (then so does every larger batch's).
  const auto AtBatchOne = [&] {
    TransformerSpec One = S;
    One.Batch = 1;
    return expertRouting(One);
  };
  if (S.Experts > 0 && !S.Batch && AtBatchOne().ForThisBatch)
    return error("--experts " + llvm::Twine(S.Experts) + " at --seq " +
                 llvm::Twine(S.Seq) + " x --top-k " + llvm::Twine(S.TopK) +
                 " needs --batch: how many experts a step's tokens reach, "
                 "and the rows each runs, depend on the batch");
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
  // The widest head (latent attention's may be wider than hidden/heads).
  const double HeadWidth =
      isMla(S) ? static_cast<double>(
                     std::max(S.QkNopeHeadDim + S.QkRopeHeadDim, S.VHeadDim))
               : static_cast<double>(headDim(S));
  const double Bytes = static_cast<double>(byteSize(S.Type));
  const double Limit = std::ldexp(1.0, 62);
  auto Dbl = [](int64_t V) { return static_cast<double>(V); };
  struct {
    double Elements;
    const char *What;
  } Largest[] = {
      {Batch * Dbl(S.Heads) * Dbl(S.Seq) * Dbl(Positions),
       S.Past > 0 ? "the attention scores [batch, heads, seq, past+seq]: "
                    "lower --seq or --past"
                  : "the attention scores [batch, heads, seq, seq]: lower "
                    "--seq"},
      {Batch * Dbl(S.Seq) * Dbl(S.Vocab),
       "the logits [batch, seq, vocab]: lower --seq or --vocab"},
      {Batch * Dbl(S.Seq) *
           std::max(Dbl(std::max(S.Ffn, 3 * S.Hidden)),
                    Dbl(S.Heads) * HeadWidth),
       "the MLP activations [batch, seq, ffn]: lower --seq or --ffn"},
      {Dbl(S.Hidden) *
           std::max(Dbl(std::max({S.Ffn, S.Vocab, S.MoeFfn, S.SharedFfn})) *
                        Dbl(std::max<int64_t>(S.Experts, 1)),
                    Dbl(S.Heads) * HeadWidth),
       "a weight: lower --hidden, --ffn, --vocab or --experts"},
      {Batch * Dbl(S.Seq) * Dbl(std::max<int64_t>(S.TopK, 1)) *
           Dbl(std::max({S.Ffn, S.Hidden, S.MoeFfn, S.SharedFfn})),
       "the experts' activations [batch, seq, top-k, ffn]: lower --seq, "
       "--ffn or --top-k"},
      // Latent attention's widest weight and its queries on the latent.
      {isMla(S) ? std::max({Dbl(S.Hidden) * Dbl(S.QLoraRank),
                            std::max(Dbl(S.Hidden), Dbl(S.QLoraRank)) *
                                Dbl(S.Heads) * HeadWidth,
                            Dbl(S.Hidden) * Dbl(S.KvLoraRank + S.QkRopeHeadDim),
                            Dbl(S.KvLoraRank) * Dbl(S.Heads) * HeadWidth})
                : 0,
       "a latent attention weight: lower --kv-lora-rank, --q-lora-rank or the "
       "head dimensions"},
      {isMla(S) && S.Past > 0 ? Batch * Dbl(S.Heads) * Dbl(S.Seq) *
                                    Dbl(S.KvLoraRank + S.QkRopeHeadDim)
                              : 0,
       "the queries on the latent [batch, heads, seq, kv-lora-rank]: lower "
       "--kv-lora-rank or --seq"},
      // Under the MLP's bound without a cache (K*d <= H).
      {Batch * Dbl(Positions) *
           (isMla(S) ? Dbl(S.KvLoraRank) + Dbl(S.QkRopeHeadDim)
                     : Dbl(S.KvHeads * headDim(S))),
       "a layer's key/value cache [batch, kv-heads, past+seq, head-dim]: "
       "lower --past"},
  };
  for (const auto &L : Largest)
    if (L.Elements * Bytes > Limit)
      return error(llvm::Twine(L.What) + " (over 2^62 bytes)");
  // Parameters are counted in uint64; keep them exact in a double too (an
  // upper bound of parameterCount).
  const double H = Dbl(S.Hidden), F = Dbl(S.Ffn);
  const double Experts = Dbl(std::max<int64_t>(S.Experts, 1));
  // The widest MLP, for every expert and the shared ones.
  const double Wide = std::max({F, Dbl(S.MoeFfn), Dbl(S.SharedFfn)});
  const double Params =
      Dbl(S.Layers) * (std::max(4 * H * H, attentionParameters<double>(S)) +
                       (Experts + 1) * (3 * H * Wide + 2 * H) + 13 * H) +
      3 * H * Dbl(S.Vocab) + Dbl(S.MaxPositions) * H + 3 * H * H;
  if (Params > std::ldexp(1.0, 53))
    return error("the model would have over 2^53 parameters: lower --layers, "
                 "--hidden or --ffn");

  if (S.Name.empty()) {
    S.Name = name(S.Fam).str() + "_L" + std::to_string(S.Layers) + "_H" +
             std::to_string(S.Hidden) + "_A" + std::to_string(S.Heads);
    if (S.KvHeads != S.Heads)
      S.Name += "_K" + std::to_string(S.KvHeads);
    if (isMla(S)) {
      S.Name += "_MLA" + std::to_string(S.KvLoraRank);
      if (S.QLoraRank > 0)
        S.Name += "q" + std::to_string(S.QLoraRank);
      if (S.QkNopeHeadDim != 128 || S.QkRopeHeadDim != 64 || S.VHeadDim != 128)
        S.Name += "n" + std::to_string(S.QkNopeHeadDim) + "r" +
                  std::to_string(S.QkRopeHeadDim) + "v" +
                  std::to_string(S.VHeadDim);
    }
    S.Name += "_F" + std::to_string(S.Ffn);
    if (S.Experts > 0)
      S.Name += "_E" + std::to_string(S.Experts) + "k" +
                std::to_string(S.TopK) +
                (S.MoeFfn != S.Ffn ? "f" + std::to_string(S.MoeFfn) : "") +
                (S.SharedFfn > 0 ? "s" + std::to_string(S.SharedFfn) : "") +
                (S.MoeEvery > 1 ? "every" + std::to_string(S.MoeEvery) : "") +
                (S.DenseLayers > 0 ? "d" + std::to_string(S.DenseLayers) : "");
    S.Name += "_S" + std::to_string(S.Seq);
    if (S.Past > 0)
      S.Name += "_P" + std::to_string(S.Past);
    S.Name += "_V" + std::to_string(S.Vocab);
    if (S.Head != BertHead::Pooler)
      S.Name += "_" + name(S.Head).str();
  }
  if (S.WeightsFile.empty())
    S.WeightsFile = S.Name + ".weights";
  return S;
}

bool perfc::modelgen::isMoeLayer(const TransformerSpec &S, int64_t I) {
  return S.Experts > 0 && I >= S.DenseLayers &&
         I % std::max<int64_t>(S.MoeEvery, 1) == 0;
}

double perfc::modelgen::expectedActiveExperts(int64_t E, int64_t K, double T) {
  return double(E) * (1 - std::pow(1 - double(K) / double(E), T));
}

perfc::modelgen::ExpertRouting
perfc::modelgen::expertRouting(const TransformerSpec &S) {
  ExpertRouting R;
  if (S.Experts <= 0)
    return R;
  R.Active = S.Experts;
  if (!S.Batch)
    return R;
  const int64_t T = *S.Batch * S.Seq, Routed = T * S.TopK;
  // The average lies between k (one token) and E; the clamp keeps its
  // rounding there.
  R.Active = std::clamp<int64_t>(
      std::llround(expectedActiveExperts(S.Experts, S.TopK, double(T))), S.TopK,
      S.Experts);
  R.Rows = (Routed + R.Active - 1) / R.Active;
  R.Padding = R.Active * R.Rows - Routed;
  R.ForThisBatch = R.Active < S.Experts || R.Padding > 0;
  return R;
}

uint64_t perfc::modelgen::parameterCount(const TransformerSpec &S) {
  const uint64_t H = S.Hidden, V = S.Vocab, L = S.Layers;
  const bool Llama = S.Fam == Family::Llama;
  // An MLP of width W: gate, up, down (llama) or fc1, fc2 with biases.
  const auto Mlp = [&](uint64_t W) {
    return Llama ? 3 * H * W : H * W + W + W * H + H;
  };
  // Every layer's MLP, or mixture: the router, E experts, shared experts.
  const uint64_t E = static_cast<uint64_t>(S.Experts);
  uint64_t Mlps = 0;
  for (int64_t I = 0; I < S.Layers; ++I)
    Mlps += isMoeLayer(S, I) ? H * E + E * Mlp(S.MoeFfn) +
                                   (S.SharedFfn > 0 ? Mlp(S.SharedFfn) : 0)
                             : Mlp(S.Ffn);
  uint64_t N = V * H; // token embedding
  // Each layer's attention and the norms before it and the MLP.
  const uint64_t Layer = attentionParameters<uint64_t>(S) + (Llama ? H : 2 * H);
  if (Llama) {
    N += L * Layer + Mlps + H; // + final norm
    if (!*S.TiedEmbeddings)
      N += H * V;
    return N;
  }
  N += static_cast<uint64_t>(S.MaxPositions) * H;
  N += L * Layer + Mlps;
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
