//===- TrainOptionNames.cpp - Training options by name --------------------===//
#include "passes/TrainOptionNames.h"

#include "llvm/ADT/StringSwitch.h"

namespace perfc {

llvm::Optional<Recompute> recomputeNamed(llvm::StringRef S) {
  return llvm::StringSwitch<llvm::Optional<Recompute>>(S)
      .Case("none", Recompute::None)
      .Case("selective", Recompute::Selective)
      .Case("full", Recompute::Full)
      .Default(llvm::None);
}

llvm::Optional<BlockModule> recomputeModuleNamed(llvm::StringRef S) {
  for (unsigned I = 0; I < NumBlockModules; ++I)
    if (S == name(BlockModule(I)))
      return BlockModule(I);
  return llvm::None;
}

llvm::Error parseRecomputeModules(llvm::ArrayRef<std::string> Names,
                                  llvm::StringRef What,
                                  llvm::StringRef RecomputeWhat, bool NoneGiven,
                                  TrainOptions &O) {
  if (Names.empty())
    return llvm::Error::success();
  BlockModuleSet Set = 0;
  for (const std::string &N : Names) {
    const llvm::Optional<BlockModule> M = recomputeModuleNamed(N);
    if (!M)
      return unknownName(What, N, RecomputeModuleChoices);
    Set |= bit(*M);
  }
  if (O.Recomp == Recompute::Full || NoneGiven)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "recompute modules are what selective recomputation recomputes: "
        "drop " +
            RecomputeWhat + " " + name(O.Recomp) +
            " (the modules imply selective)");
  O.Recomp = Recompute::Selective;
  O.RecomputeModules = Set;
  return llvm::Error::success();
}

llvm::Optional<RecomputeMethod> recomputeMethodNamed(llvm::StringRef S) {
  return llvm::StringSwitch<llvm::Optional<RecomputeMethod>>(S)
      .Case("uniform", RecomputeMethod::Uniform)
      .Case("block", RecomputeMethod::Block)
      .Default(llvm::None);
}

llvm::Error parseRecomputeLayers(llvm::StringRef Method,
                                 llvm::Optional<unsigned> NumLayers,
                                 bool RecomputeGiven,
                                 const RecomputeLayerNames &Names,
                                 TrainOptions &O) {
  if (Method.empty() && !NumLayers)
    return llvm::Error::success();
  auto Fail = [](const llvm::Twine &Msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
  };
  llvm::Optional<RecomputeMethod> M = RecomputeMethod::Uniform;
  if (!Method.empty() && !(M = recomputeMethodNamed(Method)))
    return unknownName(Names.Method, Method, RecomputeMethodChoices);
  if (NumLayers && *NumLayers == 0)
    return Fail(Names.NumLayers + " must be at least 1 (the blocks full "
                                  "recomputation reruns together, or of "
                                  "each pipeline chunk)");
  const llvm::StringRef Given = NumLayers ? Names.NumLayers : Names.Method;
  if (O.Recomp != Recompute::Full &&
      (RecomputeGiven || O.Recomp == Recompute::Selective))
    return Fail(Given +
                " chooses the blocks full recomputation reruns, and "
                "recomputation here is " +
                name(O.Recomp) + ": drop " + Given + ", or use " +
                Names.Recompute + " full");
  if (*M == RecomputeMethod::Block && !NumLayers)
    return Fail(Names.Method +
                " block reruns the first N blocks of each "
                "pipeline chunk: give " +
                Names.NumLayers + " N");
  O.Recomp = Recompute::Full;
  O.Method = *M;
  O.RecomputeNumLayers = NumLayers ? *NumLayers : 1;
  return llvm::Error::success();
}

std::vector<std::string> recomputeModuleNames(BlockModuleSet S) {
  std::vector<std::string> Names;
  for (unsigned I = 0; I < NumBlockModules; ++I)
    if (S & bit(BlockModule(I)))
      Names.push_back(name(BlockModule(I)));
  return Names;
}

std::string recomputeLabel(const TrainOptions &O) {
  std::string Label = name(O.Recomp);
  if (O.Recomp == Recompute::Full &&
      (O.Method != RecomputeMethod::Uniform || O.RecomputeNumLayers != 1))
    return Label +
           (O.Method == RecomputeMethod::Block ? " (block method, "
                                               : " (uniform method, groups "
                                                 "of ") +
           std::to_string(O.RecomputeNumLayers) +
           (O.RecomputeNumLayers == 1 ? " block)" : " blocks)");
  if (O.Recomp != Recompute::Selective ||
      O.RecomputeModules == bit(BlockModule::CoreAttention))
    return Label;
  const std::vector<std::string> Names =
      recomputeModuleNames(O.RecomputeModules);
  Label += " (";
  for (size_t I = 0; I < Names.size(); ++I)
    Label += (I ? ", " : "") + Names[I];
  return Label + ")";
}

llvm::Optional<ir::DType> trainDTypeNamed(llvm::StringRef S) {
  if (S == "fp8")
    return ir::DType::F8E4M3;
  if (S == "fp32" || S == "tf32" || S == "fp16" || S == "bf16")
    return ir::parseDType(S);
  return llvm::None;
}

llvm::Optional<OptimizerKind> optimizerNamed(llvm::StringRef S) {
  return llvm::StringSwitch<llvm::Optional<OptimizerKind>>(S)
      .Case("sgd", OptimizerKind::Sgd)
      .Case("momentum", OptimizerKind::Momentum)
      .Cases("adam", "adamw", OptimizerKind::Adam)
      .Default(llvm::None);
}

llvm::Optional<Partition> partitionNamed(llvm::StringRef S) {
  return llvm::StringSwitch<llvm::Optional<Partition>>(S)
      .Case("balanced", Partition::Balanced)
      .Case("even", Partition::Even)
      .Default(llvm::None);
}

llvm::Optional<PipelineSchedule> scheduleNamed(llvm::StringRef S) {
  return llvm::StringSwitch<llvm::Optional<PipelineSchedule>>(S)
      .Case("1f1b", PipelineSchedule::OneFOneB)
      .Case("gpipe", PipelineSchedule::GPipe)
      .Default(llvm::None);
}

llvm::Optional<ContextExchange> contextExchangeNamed(llvm::StringRef S) {
  return llvm::StringSwitch<llvm::Optional<ContextExchange>>(S)
      .Case("p2p", ContextExchange::Ring)
      .Case("a2a", ContextExchange::AllToAll)
      .Default(llvm::None);
}

llvm::Optional<cost::CommProtocol> commProtocolNamed(llvm::StringRef S) {
  return llvm::StringSwitch<llvm::Optional<cost::CommProtocol>>(S.lower())
      .Case("auto", cost::CommProtocol::Auto)
      .Case("ll", cost::CommProtocol::LL)
      .Case("ll128", cost::CommProtocol::LL128)
      .Case("simple", cost::CommProtocol::Simple)
      .Case("alpha-beta", cost::CommProtocol::AlphaBeta)
      .Default(llvm::None);
}

llvm::Error unknownName(llvm::StringRef What, llvm::StringRef S,
                        llvm::StringRef Choices) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown " + What + " '" + S + "': use " +
                                     Choices);
}

namespace {
/// Field = the value Name stands for, or the error naming Prefix + Option.
template <typename T>
llvm::Error set(T &Field, llvm::Optional<T> Value, llvm::StringRef Prefix,
                llvm::StringRef Option, llvm::StringRef Name,
                llvm::StringRef Choices) {
  if (!Value)
    return unknownName((Prefix + Option).str(), Name, Choices);
  Field = *Value;
  return llvm::Error::success();
}
} // namespace

llvm::Error parseTrainChoices(const TrainChoiceNames &N, llvm::StringRef Prefix,
                              TrainOptions &O) {
  if (llvm::Error E = set(O.Recomp, recomputeNamed(N.Recompute), Prefix,
                          "recompute", N.Recompute, RecomputeChoices))
    return E;
  if (llvm::Error E = set(O.DType, trainDTypeNamed(N.DType), Prefix, "dtype",
                          N.DType, TrainDTypeChoices))
    return E;
  if (llvm::Error E = set(O.Optimizer, optimizerNamed(N.Optimizer), Prefix,
                          "optimizer", N.Optimizer, OptimizerChoices))
    return E;
  return set(O.Split, partitionNamed(N.Partition), Prefix, "partition",
             N.Partition, PartitionChoices);
}

llvm::Error parseGradCompression(llvm::StringRef S, llvm::StringRef What,
                                 cost::Compression &C) {
  llvm::StringRef Ratio = S;
  if (S == "fp16") {
    C.Kind = cost::CompressionKind::Fp16;
  } else if (Ratio.consume_front("topk:")) {
    double R = 0;
    if (Ratio.getAsDouble(R) || !(R > 0 && R <= 1))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          What + " topk:R: R must be a share in (0, 1], e.g. topk:0.01");
    C.Kind = cost::CompressionKind::TopK;
    C.Ratio = R;
  } else if (S != "none") {
    return unknownName(What, S, GradCompressionChoices);
  }
  return llvm::Error::success();
}

llvm::Error setInputRate(double Rate, llvm::StringRef What, TrainOptions &O) {
  if (!(Rate >= 1e-6 && Rate <= 1e15))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        What + " must be a number of samples per second from 1e-6 to 1e15");
  O.InputSamplesPerSecond = Rate;
  return llvm::Error::success();
}

const char *name(Partition P) {
  return P == Partition::Even ? "even" : "balanced";
}

const char *name(PipelineSchedule S) {
  return S == PipelineSchedule::GPipe ? "gpipe" : "1f1b";
}

const char *name(ContextExchange E) {
  return E == ContextExchange::AllToAll ? "a2a" : "p2p";
}

std::string gradCompressionName(const cost::Compression &C) {
  if (C.Kind == cost::CompressionKind::TopK)
    return "topk:" + std::to_string(C.Ratio);
  return cost::name(C.Kind);
}

} // namespace perfc
