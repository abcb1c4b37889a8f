//===- TrainOptionNames.h - Training options by name ------------*- C++ -*-===//
//
// The names users give training options: recompute, dtype, optimizer,
// partition, schedule and gradient compression. The CLI's flags, the
// C++/Python API's fields and plan files read them through these, so that
// one spelling is accepted everywhere and an unknown name gets one wording:
// "unknown WHAT 'NAME': use CHOICES", WHAT being the option as the caller's
// user writes it ("--recompute" on the command line, "recompute" in the
// API).
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_TRAINOPTIONNAMES_H
#define PERFC_PASSES_TRAINOPTIONNAMES_H

#include "passes/TrainStep.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace perfc {

/// The names each option accepts, as errors list them.
inline constexpr const char RecomputeChoices[] = "none, selective or full";
inline constexpr const char RecomputeModuleChoices[] =
    "core_attn, layernorm, mla_up_proj, mlp, moe_act, moe or shared_experts";
inline constexpr const char RecomputeMethodChoices[] = "uniform or block";
inline constexpr const char TrainDTypeChoices[] =
    "fp32, tf32, fp16, bf16 or fp8";
inline constexpr const char OptimizerChoices[] = "sgd, momentum or adam";
inline constexpr const char PartitionChoices[] = "balanced or even";
inline constexpr const char ScheduleChoices[] = "1f1b or gpipe";
inline constexpr const char GradCompressionChoices[] = "none, fp16 or topk:R";
inline constexpr const char ContextExchangeChoices[] = "p2p or a2a";
inline constexpr const char CommProtocolChoices[] =
    "auto, LL, LL128, Simple or alpha-beta";

/// The value a name stands for; None when it is none of the choices.
llvm::Optional<Recompute> recomputeNamed(llvm::StringRef S);
/// Megatron's --recompute-method names (name(RecomputeMethod)).
llvm::Optional<RecomputeMethod> recomputeMethodNamed(llvm::StringRef S);
/// Megatron-Core's recompute_modules names (name(BlockModule)).
llvm::Optional<BlockModule> recomputeModuleNamed(llvm::StringRef S);
/// fp8 is FP8 E4M3, the format training recipes compute in.
llvm::Optional<ir::DType> trainDTypeNamed(llvm::StringRef S);
/// adamw is accepted as adam (it costs the same).
llvm::Optional<OptimizerKind> optimizerNamed(llvm::StringRef S);
llvm::Optional<Partition> partitionNamed(llvm::StringRef S);
llvm::Optional<PipelineSchedule> scheduleNamed(llvm::StringRef S);
/// Megatron-Core's --cp-comm-type names: p2p (the ring), a2a (Ulysses).
llvm::Optional<ContextExchange> contextExchangeNamed(llvm::StringRef S);
/// NCCL's protocol names in any case, as NCCL_PROTO reads them ("ll128",
/// "Simple"), "auto" and "alpha-beta"; cost::name gives them back.
llvm::Optional<cost::CommProtocol> commProtocolNamed(llvm::StringRef S);

/// "unknown What 'S': use Choices".
llvm::Error unknownName(llvm::StringRef What, llvm::StringRef S,
                        llvm::StringRef Choices);

/// The recompute, dtype, optimizer and partition names a user gave.
struct TrainChoiceNames {
  llvm::StringRef Recompute, DType, Optimizer, Partition;
};

/// Sets O's recompute, dtype, optimizer and partition from Names, checked
/// in that order; the first unknown one fails, named Prefix + "recompute"
/// (and so on): Prefix is "--" for flags, "" for API fields.
llvm::Error parseTrainChoices(const TrainChoiceNames &Names,
                              llvm::StringRef Prefix, TrainOptions &O);

/// Sets O.RecomputeModules to the modules Names names (Megatron-Core's
/// names, each any number of times) and O.Recomp to selective, which they
/// imply. An unknown name fails ("unknown What 'x': use ..."), as do names
/// beside full recomputation or beside none given explicitly (NoneGiven;
/// RecomputeWhat names that option). No names: O is left as it is.
llvm::Error parseRecomputeModules(llvm::ArrayRef<std::string> Names,
                                  llvm::StringRef What,
                                  llvm::StringRef RecomputeWhat, bool NoneGiven,
                                  TrainOptions &O);

/// How the caller's user writes the options parseRecomputeLayers reads
/// ("--recompute-method", "--recompute-num-layers", "--recompute" on the
/// command line).
struct RecomputeLayerNames {
  llvm::StringRef Method, NumLayers, Recompute;
};

/// Sets which blocks full recomputation reruns (O.Method,
/// O.RecomputeNumLayers; Megatron's --recompute-method and
/// --recompute-num-layers) from a method name (empty: not given) and a
/// number of blocks (None: not given); either implies full recomputation,
/// the method uniform and the number 1 by default. An unknown method, a
/// number of 0, the block method without a number, or either beside none
/// or selective recomputation (RecomputeGiven: the recompute option was
/// given; selective from recompute modules counts too) fails. Neither
/// given: O is left as it is.
llvm::Error parseRecomputeLayers(llvm::StringRef Method,
                                 llvm::Optional<unsigned> NumLayers,
                                 bool RecomputeGiven,
                                 const RecomputeLayerNames &Names,
                                 TrainOptions &O);

/// The names of the modules in S, in BlockModule order.
std::vector<std::string> recomputeModuleNames(BlockModuleSet S);

/// O's recomputation as reports print it: "none", "full", "selective", or
/// with modules other than the attention core's "selective (layernorm,
/// moe_act)", or with other blocks than each alone "full (block method,
/// 4 blocks)" or "full (uniform method, groups of 2 blocks)".
std::string recomputeLabel(const TrainOptions &O);

/// Sets C's kind (and ratio) from none, fp16 or topk:R, R in (0, 1];
/// What names the option in errors.
llvm::Error parseGradCompression(llvm::StringRef S, llvm::StringRef What,
                                 cost::Compression &C);

/// Sets O.InputSamplesPerSecond from a rate in samples per second, within
/// [1e-6, 1e15] (outside that a step's input time is not a finite number a
/// user could mean); What names the option in errors.
llvm::Error setInputRate(double Rate, llvm::StringRef What, TrainOptions &O);

/// The names the parsers above read back.
const char *name(Partition P);
const char *name(PipelineSchedule S);
const char *name(ContextExchange E);
/// none, fp16 or topk:R.
std::string gradCompressionName(const cost::Compression &C);

} // namespace perfc

#endif // PERFC_PASSES_TRAINOPTIONNAMES_H
