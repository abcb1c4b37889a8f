//===- Frameworks.cpp - What each training framework can run --------------===//

#include "passes/Frameworks.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace perfc;

const char *perfc::name(Framework F) {
  switch (F) {
  case Framework::Any:
    return "any";
  case Framework::Megatron:
    return "megatron";
  case Framework::DeepSpeed:
    return "deepspeed";
  case Framework::Fsdp:
    return "fsdp";
  }
  return "any";
}

llvm::Optional<Framework> perfc::frameworkNamed(llvm::StringRef S) {
  return llvm::StringSwitch<llvm::Optional<Framework>>(S)
      .Case("any", Framework::Any)
      .Case("megatron", Framework::Megatron)
      .Case("deepspeed", Framework::DeepSpeed)
      .Case("fsdp", Framework::Fsdp)
      .Default(llvm::None);
}

const char *perfc::frameworkRefusal(Framework F, const TrainOptions &O) {
  switch (F) {
  case Framework::Any:
    return nullptr;
  case Framework::Megatron:
    if (O.Zero > 1)
      return "Megatron-LM's distributed optimizer shards optimizer states "
             "only: --zero 0 or 1";
    return nullptr;
  case Framework::DeepSpeed:
    if (O.Pp > 1 && O.Zero > 1)
      return "DeepSpeed's pipeline engine refuses ZeRO 2 and 3 (\"ZeRO-2 and "
             "ZeRO-3 are incompatible with pipeline parallelism\"): --zero 0 "
             "or 1 with --pp above 1";
    if (O.Vp > 1)
      return "DeepSpeed's pipeline engine runs plain 1F1B, not the "
             "interleaved schedule: --vp 1";
    if (O.OverlapParamGather)
      return "DeepSpeed's ZeRO 1 and 2 all-gather the updated parameters "
             "inside the optimizer step, not during the next forward: drop "
             "--overlap-param-gather";
    if (O.OverlapMoeExpertParallelComm)
      return "DeepSpeed-MoE runs each all-to-all in its own micro-batch's "
             "pass, not beside another's (Megatron-Core's combined 1F1B): "
             "drop --overlap-moe-expert-parallel-comm";
    if (O.Cp > 1 && O.CpComm == ContextExchange::Ring)
      return "DeepSpeed splits sequences with Ulysses' all-to-all of heads, "
             "not a ring of keys and values: --cp-comm a2a";
    return nullptr;
  case Framework::Fsdp:
    if (O.Zero == 1)
      return "FSDP shards nothing (NO_SHARD), gradients and optimizer states "
             "(SHARD_GRAD_OP) or everything (FULL_SHARD), never the optimizer "
             "states alone: --zero 0, 2 or 3";
    if (O.OverlapMoeExpertParallelComm)
      return "FSDP has no combined 1F1B schedule to hide expert "
             "parallelism's all-to-alls (Megatron-Core's "
             "--overlap-moe-expert-parallel-comm): drop the flag";
    return nullptr;
  }
  return nullptr;
}

ContextExchange perfc::defaultContextExchange(Framework F) {
  return F == Framework::DeepSpeed ? ContextExchange::AllToAll
                                   : ContextExchange::Ring;
}

llvm::Error perfc::checkFramework(Framework F, const TrainOptions &O) {
  const char *Why = frameworkRefusal(F, O);
  if (!Why)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("--framework {0} does not run pp {1}, vp {2}, {5}ZeRO "
                    "{3}: {4} (or --framework any)",
                    name(F), O.Pp, O.Vp, O.Zero, Why,
                    O.Cp > 1 ? llvm::formatv("cp {0}, ", O.Cp).str()
                             : std::string())
          .str());
}
