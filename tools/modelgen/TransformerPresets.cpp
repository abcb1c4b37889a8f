//===- TransformerPresets.cpp - Published models' shapes by name ----------===//
//
// `perfc zoo NAME`: the dimensions of well-known models, each from its
// published configuration (Hugging Face config.json, or the paper where the
// model has none), so that a study of Llama-3-70B or DeepSeek-V3 does not
// start by copying a dozen numbers. The workload (sequence, cache, batch,
// type) stays the user's to give; any shape flag overrides the preset's.
// Not modelled from the configurations: rotary scaling (rope_theta, YaRN),
// sliding windows, DeepSeek's router bias and group-limited routing and
// its multi-token prediction module; layer norms' epsilons.
//
//===----------------------------------------------------------------------===//
#include "tools/modelgen/TransformerGen.h"

#include "llvm/ADT/STLExtras.h"

using namespace perfc;
using namespace perfc::modelgen;

namespace {

/// A preset: its name, where its numbers come from, and how to fill them
/// into a spec.
struct PresetEntry {
  const char *Name;
  const char *Source;
  void (*Fill)(TransformerSpec &);
};

void dense(TransformerSpec &S, Family F, int64_t Layers, int64_t Hidden,
           int64_t Heads, int64_t KvHeads, int64_t Ffn, int64_t Vocab) {
  S.Fam = F;
  S.Layers = Layers;
  S.Hidden = Hidden;
  S.Heads = Heads;
  S.KvHeads = KvHeads;
  S.Ffn = Ffn;
  S.Vocab = Vocab;
}

/// DeepSeek-V2/V3: latent attention, the first layers dense, the others
/// mixtures with shared experts (their n_shared_experts summed into one
/// width, as Megatron-Core's --moe-shared-expert-intermediate-size).
void deepSeek(TransformerSpec &S, int64_t Layers, int64_t Hidden, int64_t Heads,
              int64_t QLoraRank, int64_t Ffn, int64_t Experts, int64_t TopK,
              int64_t MoeFfn, int64_t SharedFfn, int64_t DenseLayers,
              int64_t Vocab) {
  dense(S, Family::Llama, Layers, Hidden, Heads, 0, Ffn, Vocab);
  S.KvLoraRank = 512;
  S.QLoraRank = QLoraRank;
  S.Experts = Experts;
  S.TopK = TopK;
  S.MoeFfn = MoeFfn;
  S.SharedFfn = SharedFfn;
  S.DenseLayers = DenseLayers;
}

constexpr PresetEntry Presets[] = {
    {"gpt2", "openai-community/gpt2 config.json (124M)",
     [](TransformerSpec &S) {
       dense(S, Family::Gpt, 12, 768, 12, 0, 0, 50257);
       S.MaxPositions = 1024;
     }},
    {"gpt3-175b",
     "Brown et al. 2020, Table 2.1 (GPT-3 175B: 96 layers of 12288, 96 "
     "heads, context 2048; GPT-2's vocabulary)",
     [](TransformerSpec &S) {
       dense(S, Family::Gpt, 96, 12288, 96, 0, 0, 50257);
       S.MaxPositions = 2048;
     }},
    {"bert-base", "google-bert/bert-base-uncased config.json",
     [](TransformerSpec &S) {
       dense(S, Family::Bert, 12, 768, 12, 0, 3072, 30522);
       S.MaxPositions = 512;
     }},
    {"bert-large", "google-bert/bert-large-uncased config.json",
     [](TransformerSpec &S) {
       dense(S, Family::Bert, 24, 1024, 16, 0, 4096, 30522);
       S.MaxPositions = 512;
     }},
    {"llama-2-7b", "meta-llama/Llama-2-7b-hf config.json",
     [](TransformerSpec &S) {
       dense(S, Family::Llama, 32, 4096, 32, 0, 11008, 32000);
     }},
    {"llama-2-13b", "meta-llama/Llama-2-13b-hf config.json",
     [](TransformerSpec &S) {
       dense(S, Family::Llama, 40, 5120, 40, 0, 13824, 32000);
     }},
    {"llama-2-70b", "meta-llama/Llama-2-70b-hf config.json",
     [](TransformerSpec &S) {
       dense(S, Family::Llama, 80, 8192, 64, 8, 28672, 32000);
     }},
    {"llama-3-8b", "meta-llama/Meta-Llama-3-8B config.json",
     [](TransformerSpec &S) {
       dense(S, Family::Llama, 32, 4096, 32, 8, 14336, 128256);
     }},
    {"llama-3-70b", "meta-llama/Meta-Llama-3-70B config.json",
     [](TransformerSpec &S) {
       dense(S, Family::Llama, 80, 8192, 64, 8, 28672, 128256);
     }},
    {"llama-3.1-405b", "meta-llama/Llama-3.1-405B config.json",
     [](TransformerSpec &S) {
       dense(S, Family::Llama, 126, 16384, 128, 8, 53248, 128256);
     }},
    {"mistral-7b",
     "mistralai/Mistral-7B-v0.1 config.json (its 4096-token sliding window "
     "not modelled)",
     [](TransformerSpec &S) {
       dense(S, Family::Llama, 32, 4096, 32, 8, 14336, 32000);
     }},
    {"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1 config.json",
     [](TransformerSpec &S) {
       dense(S, Family::Llama, 32, 4096, 32, 8, 14336, 32000);
       S.Experts = 8;
       S.TopK = 2;
     }},
    {"mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1 config.json",
     [](TransformerSpec &S) {
       dense(S, Family::Llama, 56, 6144, 48, 8, 16384, 32768);
       S.Experts = 8;
       S.TopK = 2;
     }},
    {"deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite config.json",
     [](TransformerSpec &S) {
       deepSeek(S, 27, 2048, 16, 0, 10944, 64, 6, 1408, 2 * 1408, 1, 102400);
     }},
    {"deepseek-v2", "deepseek-ai/DeepSeek-V2 config.json",
     [](TransformerSpec &S) {
       deepSeek(S, 60, 5120, 128, 1536, 12288, 160, 6, 1536, 2 * 1536, 1,
                102400);
     }},
    {"deepseek-v3", "deepseek-ai/DeepSeek-V3 config.json",
     [](TransformerSpec &S) {
       deepSeek(S, 61, 7168, 128, 1536, 18432, 256, 8, 2048, 2048, 3, 129280);
     }},
};

} // namespace

llvm::Optional<TransformerSpec> perfc::modelgen::preset(llvm::StringRef Name) {
  for (const PresetEntry &P : Presets)
    if (Name == P.Name) {
      TransformerSpec S;
      P.Fill(S);
      return S;
    }
  return llvm::None;
}

std::vector<Preset> perfc::modelgen::presets() {
  std::vector<Preset> All;
  for (const PresetEntry &P : Presets)
    All.push_back({P.Name, P.Source});
  return All;
}
