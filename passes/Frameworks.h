//===- Frameworks.h - What each training framework can run ------*- C++ -*-===//
//
// A strategy the cost model prices is not always one a framework runs: the
// planner's fastest plan may pair pipeline stages with ZeRO 2, which
// DeepSpeed refuses. `--framework` restricts plans (and checks a given
// strategy) to what one framework runs:
//
//  * megatron: Megatron-LM with its distributed optimizer, which shards the
//    optimizer states and main parameters only (ZeRO 1;
//    megatron/core/optimizer/distrib_optimizer.py), so ZeRO 0 or 1; any
//    tp, pp, vp and sp. (Its newer FSDP modes are not this setting.)
//  * deepspeed: ZeRO 0-3, but its pipeline engine asserts "ZeRO-2 and
//    ZeRO-3 are incompatible with pipeline parallelism"
//    (deepspeed/runtime/pipe/engine.py), and runs plain 1F1B
//    (deepspeed/runtime/pipe/schedule.py TrainSchedule): with pp > 1,
//    ZeRO 0 or 1; vp 1. It splits sequences with DeepSpeed-Ulysses'
//    all-to-all of heads (deepspeed/sequence/layer.py), not a ring: --cp
//    with --cp-comm a2a, its default there.
//  * fsdp: PyTorch FSDP / FSDP2 (TorchTitan): NO_SHARD (DDP, ZeRO 0),
//    SHARD_GRAD_OP (ZeRO 2) or FULL_SHARD (ZeRO 3); it has no
//    optimizer-only sharding, so not ZeRO 1. TorchTitan composes it with
//    tp, pp and interleaved schedules.
//  * any: every strategy perfc prices (the default).
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_FRAMEWORKS_H
#define PERFC_PASSES_FRAMEWORKS_H

#include "passes/TrainStep.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace perfc {

enum class Framework : uint8_t { Any, Megatron, DeepSpeed, Fsdp };

inline constexpr const char FrameworkChoices[] =
    "any, megatron, deepspeed or fsdp";

/// "any", "megatron", "deepspeed", "fsdp".
const char *name(Framework F);
llvm::Optional<Framework> frameworkNamed(llvm::StringRef S);

/// Why F does not run the strategy O ("DeepSpeed's pipeline engine runs
/// ZeRO 0 or 1 only"); null when it does. Cheap: the planner asks it of
/// every candidate.
const char *frameworkRefusal(Framework F, const TrainOptions &O);

/// The context-parallel exchange F runs when none is given: DeepSpeed's
/// all-to-all (Ulysses), every other framework's ring.
ContextExchange defaultContextExchange(Framework F);

/// frameworkRefusal as an error naming the framework, the strategy's
/// values and what to change.
llvm::Error checkFramework(Framework F, const TrainOptions &O);

} // namespace perfc

#endif // PERFC_PASSES_FRAMEWORKS_H
