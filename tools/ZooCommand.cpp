//===- ZooCommand.cpp - perfc zoo gpt|bert|llama ... -o FILE.onnx ---------===//
//
// Writes a graph-only transformer of the given dimensions
// (tools/modelgen/TransformerGen.h) for perfc to cost.
//
//===----------------------------------------------------------------------===//
#include "tools/CliCommon.h"
#include "tools/Commands.h"
#include "tools/modelgen/TransformerGen.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace perfc;
namespace cl = llvm::cl;

namespace {

/// 124439808 -> "124,439,808".
std::string grouped(uint64_t V) {
  std::string Digits = std::to_string(V), Out;
  for (size_t I = 0; I < Digits.size(); ++I) {
    if (I && (Digits.size() - I) % 3 == 0)
      Out += ',';
    Out += Digits[I];
  }
  return Out;
}

} // namespace

int perfc::cli::runZoo(int Argc, const char *const *Argv) {
  cl::OptionCategory Category("perfc zoo options");
  cl::opt<std::string> FamilyName(
      cl::Positional,
      cl::desc("gpt|bert|llama, or a published model's name (perfc zoo list)"),
      cl::cat(Category));
  cl::opt<std::string> Layers("layers",
                              cl::desc("Transformer layers (required)"),
                              cl::value_desc("L"), cl::cat(Category));
  cl::opt<std::string> Hidden("hidden", cl::desc("Hidden size (required)"),
                              cl::value_desc("H"), cl::cat(Category));
  cl::opt<std::string> Heads("heads", cl::desc("Attention heads (required)"),
                             cl::value_desc("A"), cl::cat(Category));
  cl::opt<std::string> KvHeads(
      "kv-heads",
      cl::desc("Key/value heads: grouped-query attention, 1 multi-query "
               "(gpt, llama; default A)"),
      cl::value_desc("K"), cl::cat(Category));
  cl::opt<std::string> KvLoraRank(
      "kv-lora-rank",
      cl::desc("Multi-head latent attention (llama; DeepSeek-V2/V3's MLA): "
               "keys and values from a shared latent of rank C, which the "
               "cache holds (C + rotary channels per token and layer)"),
      cl::value_desc("C"), cl::cat(Category));
  cl::opt<std::string> QLoraRank(
      "q-lora-rank",
      cl::desc("MLA: queries through a latent of rank Q too (DeepSeek-V3: "
               "1536; default none)"),
      cl::value_desc("Q"), cl::cat(Category));
  cl::opt<std::string> QkNopeHeadDim(
      "qk-nope-head-dim",
      cl::desc("MLA: query/key channels per head without positions "
               "(default 128)"),
      cl::value_desc("D"), cl::cat(Category));
  cl::opt<std::string> QkRopeHeadDim(
      "qk-rope-head-dim",
      cl::desc("MLA: rotary channels, one key for all heads (default 64)"),
      cl::value_desc("D"), cl::cat(Category));
  cl::opt<std::string> VHeadDim(
      "v-head-dim", cl::desc("MLA: value channels per head (default 128)"),
      cl::value_desc("D"), cl::cat(Category));
  cl::opt<std::string> Ffn(
      "ffn", cl::desc("MLP width (default 4H; llama: 8H/3 rounded up to 256)"),
      cl::value_desc("F"), cl::cat(Category));
  cl::opt<std::string> Experts(
      "experts",
      cl::desc("Experts per MLP: every layer's MLP (or those --moe-every and "
               "--dense-layers choose) becomes a mixture of E experts with "
               "top-k routing (gpt, llama); a step's tokens reach the "
               "experts uniform routing gives them, fewer than E for few "
               "tokens (decoding: give --batch)"),
      cl::value_desc("E"), cl::cat(Category));
  cl::opt<std::string> TopK(
      "top-k",
      cl::desc("Experts each token goes to (default 2; needs "
               "--experts)"),
      cl::value_desc("k"), cl::cat(Category));
  cl::opt<std::string> MoeFfn(
      "moe-ffn",
      cl::desc("Each expert's MLP width (default --ffn, which "
               "stays the dense layers' width)"),
      cl::value_desc("F"), cl::cat(Category));
  cl::opt<std::string> SharedFfn(
      "shared-ffn",
      cl::desc("Shared experts' MLP width, every token through it beside "
               "the routed experts (DeepSeek-MoE, Qwen2-MoE; default none)"),
      cl::value_desc("F"), cl::cat(Category));
  cl::opt<std::string> MoeEvery(
      "moe-every",
      cl::desc("Layer i is a mixture when i % N == 0, the others dense "
               "(Megatron-Core's --moe-layer-freq; default 1)"),
      cl::value_desc("N"), cl::cat(Category));
  cl::opt<std::string> DenseLayers(
      "dense-layers",
      cl::desc("The first K layers dense (DeepSeek's first_k_dense_replace)"),
      cl::value_desc("K"), cl::cat(Category));
  cl::opt<std::string> Seq("seq", cl::desc("Sequence length (required)"),
                           cl::value_desc("S"), cl::cat(Category));
  cl::opt<std::string> Past(
      "past",
      cl::desc("Cached tokens: the model is one decoding step of --seq new "
               "tokens after P tokens whose keys and values are graph inputs "
               "(past.{i}.key/value) and outputs (present.{i}.key/value); gpt "
               "and llama"),
      cl::value_desc("P"), cl::cat(Category));
  cl::opt<std::string> Vocab("vocab", cl::desc("Vocabulary size (required)"),
                             cl::value_desc("V"), cl::cat(Category));
  cl::opt<std::string> Batch(
      "batch", cl::desc("A static batch (default: the symbol 'batch')"),
      cl::value_desc("B"), cl::cat(Category));
  cl::opt<std::string> MaxPositions(
      "max-positions",
      cl::desc("Rows of the position table (gpt: S; bert: max(S, 512))"),
      cl::value_desc("P"), cl::cat(Category));
  cl::opt<bool> Tied("tied",
                     cl::desc("LM head shares the token embedding "
                              "(gpt's default)"),
                     cl::cat(Category));
  cl::opt<bool> Untied("untied",
                       cl::desc("LM head has its own [H, V] weight "
                                "(llama's default)"),
                       cl::cat(Category));
  cl::opt<std::string> DType("dtype",
                             cl::desc("Weights and activations: fp32, fp16 "
                                      "or bf16"),
                             cl::init("fp32"), cl::value_desc("T"),
                             cl::cat(Category));
  cl::opt<std::string> DropoutOpt(
      "dropout",
      cl::desc("Dropout probability: adds training-mode Dropout after the "
               "attention probabilities and each residual branch (default 0: "
               "none)"),
      cl::value_desc("P"), cl::cat(Category));
  cl::opt<std::string> HeadOpt(
      "head",
      cl::desc("bert: pooler (default), pretraining (+ MLM and NSP heads) or "
               "squad (+ span head)"),
      cl::value_desc("H"), cl::cat(Category));
  cl::opt<std::string> ModelName(
      "name", cl::desc("Graph name (default e.g. gpt_L12_H768_A12_...)"),
      cl::value_desc("NAME"), cl::cat(Category));
  cl::opt<std::string> OutputPath("o", cl::desc("The ONNX file to write"),
                                  cl::value_desc("FILE.onnx"),
                                  cl::cat(Category));
  cl::HideUnrelatedOptions(Category);
  if (!parseOptions(
          Argc, Argv,
          "perfc zoo: writes a graph-only transformer (no weight data) of any "
          "size\n\n"
          "  perfc zoo gpt|bert|llama --layers L --hidden H --heads A "
          "[--kv-heads K | --kv-lora-rank C]\n"
          "            [--ffn F] [--experts E [--top-k k]] --seq S [--past "
          "P]\n"
          "            --vocab V [--batch B] -o FILE.onnx\n"
          "  perfc zoo NAME --seq S [--past P] [--batch B] [any flag above] "
          "-o FILE.onnx\n"
          "            a published model's shape (perfc zoo list names "
          "them)\n"))
    return 1;

  if (FamilyName.empty())
    return fail("zoo: expected a family, gpt, bert or llama, or a model "
                "'perfc zoo list' names (see 'perfc zoo --help')");
  if (FamilyName == "list") {
    for (const modelgen::Preset &P : modelgen::presets())
      llvm::outs() << llvm::left_justify(P.Name, 18) << P.Source << "\n";
    return 0;
  }
  // A published model's shape, which the flags given override.
  const llvm::Optional<modelgen::TransformerSpec> Preset =
      modelgen::preset(FamilyName);
  const auto Family = Preset ? llvm::Optional<modelgen::Family>(Preset->Fam)
                             : modelgen::parseFamily(FamilyName);
  if (!Family) {
    std::string Names;
    for (const modelgen::Preset &P : modelgen::presets())
      Names += (Names.empty() ? "" : ", ") + P.Name.str();
    return fail("zoo: unknown family or model '" + FamilyName +
                "': use gpt, bert, llama or one of " + Names);
  }
  std::string Missing;
  for (const cl::opt<std::string> *O : {&Layers, &Hidden, &Heads, &Seq, &Vocab})
    if (!O->getNumOccurrences() && (!Preset || O == &Seq))
      Missing += (Missing.empty() ? "--" : ", --") + O->ArgStr.str();
  if (!Missing.empty())
    return fail("zoo: missing " + Missing + " (see 'perfc zoo --help')");

  // Integers are parsed here, not by cl, whose message for a bad value is
  // two lines.
  modelgen::TransformerSpec Spec =
      Preset.getValueOr(modelgen::TransformerSpec());
  if (!Preset)
    Spec.Fam = *Family;
  struct {
    const cl::opt<std::string> &Opt;
    int64_t &Value;
  } Ints[] = {{Layers, Spec.Layers},
              {Hidden, Spec.Hidden},
              {Heads, Spec.Heads},
              {KvHeads, Spec.KvHeads},
              {Ffn, Spec.Ffn},
              {Seq, Spec.Seq},
              {Vocab, Spec.Vocab},
              {MaxPositions, Spec.MaxPositions},
              {Past, Spec.Past},
              {Experts, Spec.Experts},
              {TopK, Spec.TopK},
              {MoeFfn, Spec.MoeFfn},
              {SharedFfn, Spec.SharedFfn},
              {MoeEvery, Spec.MoeEvery},
              {DenseLayers, Spec.DenseLayers},
              {KvLoraRank, Spec.KvLoraRank},
              {QLoraRank, Spec.QLoraRank},
              {QkNopeHeadDim, Spec.QkNopeHeadDim},
              {QkRopeHeadDim, Spec.QkRopeHeadDim},
              {VHeadDim, Spec.VHeadDim}};
  for (const auto &I : Ints) {
    if (!I.Opt.getNumOccurrences())
      continue;
    if (llvm::StringRef(I.Opt).getAsInteger(10, I.Value))
      return fail("zoo: --" + I.Opt.ArgStr + " '" + I.Opt +
                  "': expected an integer");
    // An explicit 0 is an error, not the default the spec reads it as.
    if (I.Value == 0 &&
        (&I.Opt == &KvHeads || &I.Opt == &Ffn || &I.Opt == &MaxPositions ||
         &I.Opt == &Experts || &I.Opt == &TopK || &I.Opt == &MoeFfn ||
         &I.Opt == &SharedFfn || &I.Opt == &MoeEvery || &I.Opt == &KvLoraRank ||
         &I.Opt == &QLoraRank || &I.Opt == &QkNopeHeadDim ||
         &I.Opt == &QkRopeHeadDim || &I.Opt == &VHeadDim))
      return fail("zoo: --" + I.Opt.ArgStr + " 0: must be positive");
  }
  if (DropoutOpt.getNumOccurrences()) {
    double P = 0;
    if (llvm::StringRef(DropoutOpt).getAsDouble(P) || !(P >= 0 && P < 1))
      return fail("zoo: --dropout '" + DropoutOpt +
                  "': expected a probability in [0, 1)");
    Spec.Dropout = P;
  }
  if (Batch.getNumOccurrences()) {
    int64_t B = 0;
    if (llvm::StringRef(Batch).getAsInteger(10, B))
      return fail("zoo: --batch '" + Batch + "': expected an integer");
    Spec.Batch = B;
  }
  auto Type = modelgen::parseFloatType(DType);
  if (!Type)
    return fail("zoo: unknown --dtype '" + DType + "': use fp32, fp16 or bf16");
  Spec.Type = *Type;
  if (Tied && Untied)
    return fail("zoo: --tied and --untied contradict each other");
  if (Tied || Untied)
    Spec.TiedEmbeddings = Tied.getValue();
  if (HeadOpt.getNumOccurrences()) {
    auto Head = modelgen::parseBertHead(HeadOpt);
    if (!Head)
      return fail("zoo: unknown --head '" + HeadOpt +
                  "': use pooler, pretraining or squad");
    Spec.Head = *Head;
  }
  Spec.Name = ModelName;
  if (OutputPath.empty())
    return fail("zoo: no output file: give -o FILE.onnx");

  const bool ToStdout = OutputPath == "-";
  if (!ToStdout)
    Spec.WeightsFile = llvm::sys::path::stem(OutputPath).str() + ".weights";
  auto Resolved = modelgen::resolve(Spec);
  if (!Resolved)
    return fail("zoo: " + llvm::toString(Resolved.takeError()));
  auto Bytes = modelgen::writeTransformerOnnx(*Resolved);
  if (!Bytes)
    return fail("zoo: " + llvm::toString(Bytes.takeError()));
  if (int Status =
          writeOutput(OutputPath, [&](llvm::raw_ostream &OS) { OS << *Bytes; }))
    return Status;
  if (ToStdout)
    return 0;

  const modelgen::TransformerSpec &S = *Resolved;
  uint64_t Params = modelgen::parameterCount(S);
  uint64_t WeightBytes = Params * (S.Type == modelgen::FloatType::F32 ? 4 : 2);
  llvm::outs() << OutputPath << ": "
               << (Preset ? FamilyName + " (" + modelgen::name(S.Fam) + ")"
                          : modelgen::name(S.Fam).str())
               << ", " << S.Layers << (S.Layers == 1 ? " layer" : " layers")
               << ", hidden " << S.Hidden << ", " << S.Heads << " heads";
  if (S.KvHeads != S.Heads)
    llvm::outs() << " (" << S.KvHeads << " kv)";
  if (modelgen::isMla(S)) {
    llvm::outs() << " (latent attention, kv rank " << S.KvLoraRank;
    if (S.QLoraRank > 0)
      llvm::outs() << ", q rank " << S.QLoraRank;
    llvm::outs() << "; " << S.KvLoraRank + S.QkRopeHeadDim
                 << " cached per token and layer)";
  }
  llvm::outs() << ", ffn " << S.Ffn;
  if (S.Experts > 0) {
    llvm::outs() << "; " << S.Experts << " experts";
    if (S.MoeFfn != S.Ffn)
      llvm::outs() << " of " << S.MoeFfn;
    llvm::outs() << " (top-" << S.TopK;
    // Where a step's tokens reach fewer experts, or pad their rows.
    const modelgen::ExpertRouting R = modelgen::expertRouting(S);
    if (R.ForThisBatch) {
      const int64_t Tokens = *S.Batch * S.Seq;
      llvm::outs() << "; " << Tokens
                   << (Tokens == 1 ? " token reaches " : " tokens reach ")
                   << R.Active << ", " << R.Rows
                   << (R.Rows == 1 ? " row" : " rows") << " each";
      if (R.Padding > 0)
        llvm::outs() << ", " << R.Padding << " padded";
    }
    llvm::outs() << ")";
    if (S.SharedFfn > 0)
      llvm::outs() << " + shared " << S.SharedFfn;
    if (S.MoeEvery > 1 || S.DenseLayers > 0) {
      int64_t Mixtures = 0;
      for (int64_t I = 0; I < S.Layers; ++I)
        Mixtures += modelgen::isMoeLayer(S, I);
      llvm::outs() << " in " << Mixtures << " layers";
    }
  }
  llvm::outs() << ", seq " << S.Seq;
  if (S.Past > 0)
    llvm::outs() << " after " << S.Past << " cached";
  llvm::outs() << ", vocab " << S.Vocab << ": " << grouped(Params)
               << " parameters (" << grouped(WeightBytes) << " bytes of "
               << modelgen::name(S.Type) << " weights, not written; "
               << grouped(Bytes->size()) << " bytes of graph)\n";
  return 0;
}
