//===- PredictCommand.cpp - perfc MODEL.onnx [--hw HW] --------------------===//
//
// Loads the model (frontend), the hardware (hwdb) when given, runs the
// prediction (passes) and prints the Report as a table or JSON.
//
//===----------------------------------------------------------------------===//
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "hwdb/Units.h"
#include "ir/Shape.h"
#include "passes/Frameworks.h"
#include "passes/Planner.h"
#include "passes/Predict.h"
#include "passes/ServingPlan.h"
#include "passes/TrainOptionNames.h"
#include "passes/TrainStep.h"
#include "perfc/Version.h"
#include "tools/CliCommon.h"
#include "tools/CliParse.h"
#include "tools/Commands.h"
#include "tools/InferenceRun.h"
#include "tools/PlanJson.h"
#include "tools/ReportAssembly.h"
#include "tools/ReportWriters.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <memory>

using namespace perfc;
namespace cl = llvm::cl;

namespace {

std::vector<TensorInfo> describe(llvm::ArrayRef<ir::Value *> Values) {
  std::vector<TensorInfo> Out;
  for (const ir::Value *V : Values)
    Out.push_back(
        {V->name().str(), ir::name(V->type()).str(), V->shape().str()});
  return Out;
}

/// --compute-type (and --storage-type): "" for none.
llvm::Expected<llvm::Optional<ir::DType>> parseComputeType(llvm::StringRef S) {
  if (S.empty())
    return llvm::None;
  if (auto T = computeTypeNamed(S))
    return llvm::Optional<ir::DType>(*T);
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown --compute-type '" + S + "': use " +
                                     ComputeTypeChoices);
}

/// --time-limit out of range: negative, not a number or infinite.
std::string timeLimitError(double Seconds) {
  return fmt::format("--time-limit {}: give a number of seconds, 0 or more "
                     "(0: no limit)",
                     Seconds);
}

} // namespace

int perfc::cli::runPredict(int Argc, const char *const *Argv) {
  // Options are locals: LLVM's cl registers them on construction, and the
  // tool keeps no global state.
  cl::OptionCategory Category("perfc options");
  cl::opt<std::string> ModelPath(cl::Positional, cl::desc("<model.onnx>"),
                                 cl::cat(Category));
  cl::opt<std::string> Hw("hw",
                          cl::desc("Hardware: a YAML file or a bundled name "
                                   "(see 'perfc hw list'); adds latency"),
                          cl::value_desc("HW"), cl::cat(Category));
  cl::opt<int64_t> Batch(
      "batch", cl::desc("Set the first dimension of every model input"),
      cl::value_desc("N"), cl::cat(Category));
  cl::opt<bool> MaxBatchOpt(
      "max-batch",
      cl::desc("Without --train, with --hw: predict at the largest batch "
               "(every input's first dimension) whose run fits in memory "
               "(and meets --max-latency); with --plan, each layout at its "
               "own"),
      cl::cat(Category));
  cl::list<std::string> DimSpecs(
      "dim", cl::desc("Bind a symbolic dimension (repeatable)"),
      cl::value_desc("NAME=VALUE"), cl::cat(Category));
  // A plain string, checked below: cl's enum parser prints its own
  // two-line error straight to errs().
  cl::opt<std::string> OutFormat(
      "format",
      cl::desc("Output format: table (for people) or json (schema in README)"),
      cl::init("table"), cl::value_desc("table|json"), cl::cat(Category));
  cl::opt<std::string> OutputPath("o", cl::desc("Write the output to FILE"),
                                  cl::value_desc("FILE"), cl::cat(Category));
  cl::opt<std::string> ComputeType(
      "compute-type",
      cl::desc("Run floating-point arithmetic in this type (fp32, tf32, "
               "fp16, bf16, fp8, int8), e.g. an fp32 model on tensor cores"),
      cl::value_desc("TYPE"), cl::cat(Category));
  cl::opt<std::string> StorageTypeOpt(
      "storage-type",
      cl::desc("Store floating-point tensors in this type (fp16, bf16, fp8, "
               "int8), as deployed engines do; default: the model's types"),
      cl::value_desc("TYPE"), cl::cat(Category));
  cl::opt<std::string> ConvLayoutOpt(
      "conv-layout",
      cl::desc("Layout the framework stores 2-D convolution activations in: "
               "native (as the kernels want; default), nchw (PyTorch's "
               "default) or nhwc (channels_last); where it differs from the "
               "device's matrix_conv_layout, tensor-core convolutions also "
               "pay a transpose of their input and output"),
      cl::init("native"), cl::value_desc("native|nchw|nhwc"),
      cl::cat(Category));
  cl::opt<bool> Place(
      "place",
      cl::desc("With --hw naming a SoC or mixed machine: put each kernel on "
               "the processor (CPU, GPU, NPU) that minimizes the latency, "
               "transfers counted (Z3; --time-limit bounds it, default 10 s)"),
      cl::cat(Category));
  cl::opt<bool> Timings(
      "timings",
      cl::desc("With --plan or --place: also report how long the search "
               "took (evaluate_s, solve_s, candidates_per_s); off, the same "
               "inputs give the same bytes out"),
      cl::cat(Category));
  cl::opt<std::string> LaunchOverhead(
      "launch-overhead",
      cl::desc("With --hw: the cost of one kernel launch, replacing every "
               "device's launch_overhead, e.g. '1 us' for CUDA graphs or "
               "TensorRT's asynchronous enqueue"),
      cl::value_desc("TIME"), cl::cat(Category));
  cl::opt<std::string> MemoryReserve(
      "memory-reserve",
      cl::desc("With --hw: memory each device keeps for the runtime (CUDA "
               "context, NCCL buffers, allocator fragmentation), taken from "
               "its capacity before anything is fitted, e.g. '4 GiB'"),
      cl::value_desc("SIZE"), cl::cat(Category));
  cl::opt<bool> NoFusion(
      "no-fusion",
      cl::desc("Time every node as its own kernel (no epilogue or "
               "elementwise fusion; constants are still folded)"),
      cl::cat(Category));
  // Training (README "Training").
  cl::OptionCategory TrainCategory("perfc training options");
  cl::opt<bool> Train("train",
                      cl::desc("Predict a training step (forward, backward, "
                               "optimizer) instead of inference"),
                      cl::cat(TrainCategory));
  cl::opt<int64_t> GlobalBatch("global-batch",
                               cl::desc("Samples per step over all replicas "
                                        "(default: micro-batch x dp)"),
                               cl::value_desc("N"), cl::cat(TrainCategory));
  cl::opt<int64_t> MicroBatch("micro-batch",
                              cl::desc("Samples per micro-batch (default: "
                                       "--batch, else 1)"),
                              cl::value_desc("N"), cl::cat(TrainCategory));
  cl::opt<unsigned> Dp("dp", cl::desc("Data-parallel degree"), cl::init(1),
                       cl::value_desc("N"), cl::cat(TrainCategory));
  cl::opt<unsigned> Tp(
      "tp",
      cl::desc("Tensor-parallel degree; without --train, with --hw naming a "
               "cluster: inference split over that many of its devices "
               "(Megatron-style, as TensorRT-LLM and vLLM run it)"),
      cl::init(1), cl::value_desc("N"), cl::cat(TrainCategory));
  cl::opt<unsigned> Cp(
      "cp",
      cl::desc("With --train: context-parallel degree, each sequence split "
               "over N GPUs (Megatron-Core's --context-parallel-size): ring "
               "attention with --flash-attention, or all-to-all with "
               "--cp-comm a2a"),
      cl::init(1), cl::value_desc("N"), cl::cat(TrainCategory));
  cl::opt<std::string> CpCommOpt(
      "cp-comm",
      cl::desc("With --cp: how context ranks exchange the attention's inputs "
               "(Megatron-Core's --cp-comm-type): p2p passes keys and values "
               "round a ring, overlapped with the attention (needs "
               "--flash-attention); a2a trades tokens for heads before and "
               "after the attention core (DeepSpeed-Ulysses; the heads must "
               "split). Default: a2a with --framework deepspeed, else p2p"),
      cl::value_desc("p2p|a2a"), cl::cat(TrainCategory));
  cl::opt<unsigned> Ep(
      "ep",
      cl::desc("Expert-parallel degree. With --train, Megatron-Core's "
               "--expert-model-parallel-size: each mixture of experts split "
               "over N of the dp x cp ranks, tokens exchanged all-to-all. "
               "Without, serving over N devices of --hw: attention and dense "
               "layers data-parallel (1/N of the batch each), experts split "
               "N ways, tokens exchanged all-to-all (SGLang's and vLLM's "
               "expert parallelism)"),
      cl::init(1), cl::value_desc("N"), cl::cat(TrainCategory));
  cl::opt<std::string> MoeCapacity(
      "moe-capacity",
      cl::desc("With --train on a mixture of experts: the tokens each expert "
               "processes over its balanced share (Megatron-Core's "
               "--moe-expert-capacity-factor with padding, or a dropless "
               "router's busiest expert over the mean; default 1)"),
      cl::value_desc("F"), cl::cat(TrainCategory));
  cl::opt<unsigned> Pp("pp", cl::desc("Pipeline-parallel degree"), cl::init(1),
                       cl::value_desc("N"), cl::cat(TrainCategory));
  cl::opt<unsigned> Vp("vp",
                       cl::desc("Model chunks per pipeline stage "
                                "(interleaved 1F1B)"),
                       cl::init(1), cl::value_desc("N"),
                       cl::cat(TrainCategory));
  cl::opt<bool> Sp("sp", cl::desc("Sequence parallelism (with --tp)"),
                   cl::cat(TrainCategory));
  cl::opt<bool> TpCommOverlap(
      "tp-comm-overlap",
      cl::desc("With --train --sp: overlap the tensor-parallel all-gathers "
               "and reduce-scatters with the GEMMs they feed or follow, as "
               "Megatron-Core with Transformer Engine's userbuffers does "
               "(--tp-comm-overlap there)"),
      cl::cat(TrainCategory));
  cl::opt<bool> OverlapParamGather(
      "overlap-param-gather",
      cl::desc("With --train --zero 1 or 2: all-gather the updated parameters "
               "in buckets during the next step's first forward instead of "
               "after the optimizer, as Megatron-Core's distributed optimizer "
               "does (--overlap-param-gather there)"),
      cl::cat(TrainCategory));
  cl::opt<bool> OverlapMoeComm(
      "overlap-moe-expert-parallel-comm",
      cl::desc("With --train --ep N: run each micro-batch's all-to-alls "
               "beside another micro-batch's kernels (its forward "
               "co-scheduled with another's backward), as Megatron-Core's "
               "combined 1F1B does (--overlap-moe-expert-parallel-comm "
               "there; DeepSeek-V3's DualPipe likewise)"),
      cl::cat(TrainCategory));
  cl::opt<std::string> RecomputeOpt(
      "recompute",
      cl::desc("Activation recomputation: none, selective (the "
               "attention core) or full"),
      cl::init("none"), cl::value_desc("none|selective|full"),
      cl::cat(TrainCategory));
  cl::list<std::string> RecomputeModulesOpt(
      "recompute-modules", cl::CommaSeparated,
      cl::desc("What selective recomputation recomputes (implies --recompute "
               "selective), Megatron-Core's --recompute-modules: core_attn "
               "(the default), layernorm, mla_up_proj, mlp, moe_act, moe, "
               "shared_experts"),
      cl::value_desc("M1,M2,..."), cl::cat(TrainCategory));
  cl::opt<std::string> RecomputeMethodOpt(
      "recompute-method",
      cl::desc("Which blocks full recomputation reruns (implies --recompute "
               "full), Megatron's --recompute-method: uniform (every block, "
               "keeping the input of each group of --recompute-num-layers "
               "blocks; the default) or block (only the first "
               "--recompute-num-layers blocks of each pipeline chunk)"),
      cl::value_desc("uniform|block"), cl::cat(TrainCategory));
  cl::opt<unsigned> RecomputeNumLayers(
      "recompute-num-layers",
      cl::desc("Full recomputation's blocks per group (uniform) or per "
               "pipeline chunk (block), Megatron's --recompute-num-layers "
               "(implies --recompute full; default 1)"),
      cl::value_desc("N"), cl::cat(TrainCategory));
  cl::opt<std::string> ScheduleOpt(
      "schedule",
      cl::desc("Pipeline schedule: 1f1b (PipeDream-Flush, Megatron-LM; "
               "interleaved with --vp) or gpipe"),
      cl::init("1f1b"), cl::value_desc("1f1b|gpipe"), cl::cat(TrainCategory));
  cl::opt<bool> Fp32Grads(
      "fp32-grads",
      cl::desc("Keep gradients in fp32 under mixed precision (Megatron-LM's "
               "main_grad): 18 bytes per parameter with Adam instead of 16"),
      cl::cat(TrainCategory));
  cl::opt<bool> PerTensorOpt(
      "per-tensor-optimizer",
      cl::desc("The optimizer is a loop over parameter tensors, one kernel "
               "per elementwise op (torch.optim for-loop, BertAdam), not one "
               "fused multi-tensor pass (apex FusedAdam/FusedLAMB)"),
      cl::cat(TrainCategory));
  cl::opt<bool> FlashAttentionOpt(
      "flash-attention",
      cl::desc("Attention runs as FlashAttention does: one kernel that "
               "skips the blocks above a causal mask's diagonal (inference "
               "as FlashAttention, vLLM and TensorRT-LLM run it); with "
               "--train one kernel forward and one backward per attention "
               "core, no s^2 tensors kept, the scores recomputed in "
               "backward"),
      cl::cat(Category));
  cl::opt<std::string> InputRate(
      "input-rate",
      cl::desc("Samples per second one node's host input pipeline delivers "
               "(data loader: decode, augmentation), all its GPUs together; "
               "a step waits when loading its share takes longer"),
      cl::value_desc("N"), cl::cat(TrainCategory));
  cl::opt<std::string> CommProtocolOpt(
      "comm-protocol",
      cl::desc("Protocol of the tensor- and data-parallel collectives (and "
               "of --tp inference): auto prices each as NCCL's own model "
               "picks it; LL, LL128 or Simple pin one, as NCCL_PROTO does; "
               "alpha-beta keeps the textbook forms"),
      cl::init("auto"), cl::value_desc("auto|LL|LL128|Simple|alpha-beta"),
      cl::cat(TrainCategory));
  cl::opt<std::string> GradCompression(
      "grad-compression",
      cl::desc("Data-parallel gradient compression: none, fp16, or topk:R "
               "(send the R share of largest values with their indices)"),
      cl::init("none"), cl::value_desc("none|fp16|topk:R"),
      cl::cat(TrainCategory));
  cl::opt<unsigned> Zero("zero",
                         cl::desc("ZeRO stage: 1 shards optimizer states, 2 "
                                  "also gradients, 3 also weights"),
                         cl::init(0), cl::value_desc("0-3"),
                         cl::cat(TrainCategory));
  cl::opt<std::string> TrainDType(
      "dtype",
      cl::desc("Training precision: fp32, tf32, or mixed fp16, bf16, "
               "fp8"),
      cl::init("fp32"), cl::value_desc("TYPE"), cl::cat(TrainCategory));
  cl::opt<std::string> OptimizerOpt(
      "optimizer", cl::desc("sgd, momentum or adam (AdamW costs the same)"),
      cl::init("adam"), cl::value_desc("sgd|momentum|adam"),
      cl::cat(TrainCategory));
  cl::opt<std::string> PartitionOpt(
      "partition",
      cl::desc("Pipeline split: balanced (by predicted time) or even (equal "
               "block counts, as Megatron-LM)"),
      cl::init("balanced"), cl::value_desc("balanced|even"),
      cl::cat(TrainCategory));
  // The planner (issue 5).
  cl::opt<bool> Plan("plan",
                     cl::desc("With --train: find the strategy with the "
                              "lowest predicted step time that fits (pinned "
                              "--dp/--tp/--pp/--vp/--sp/--micro-batch/"
                              "--recompute/--zero are kept)"),
                     cl::cat(TrainCategory));
  cl::opt<std::string> PlannerOpt(
      "planner",
      cl::desc("z3 (proves the optimum over the enumerated space) or "
               "exhaustive (a plain loop, the reference)"),
      cl::init("z3"), cl::value_desc("z3|exhaustive"), cl::cat(TrainCategory));
  cl::opt<double> TimeLimit(
      "time-limit",
      cl::desc("Bound the search; the best plan found is marked not proven"),
      cl::init(0), cl::value_desc("S"), cl::cat(TrainCategory));
  cl::opt<unsigned> TopK("top", cl::desc("With --plan: list the K best plans"),
                         cl::init(0), cl::value_desc("K"),
                         cl::cat(TrainCategory));
  cl::opt<bool> Pareto("pareto",
                       cl::desc("With --plan: the time/memory Pareto front"),
                       cl::cat(TrainCategory));
  cl::opt<unsigned> Devices(
      "devices",
      cl::desc("With --plan: devices to use (default: all of the cluster)"),
      cl::init(0), cl::value_desc("N"), cl::cat(TrainCategory));
  cl::opt<bool> CrossNodeTp(
      "allow-cross-node-tp",
      cl::desc("With --plan: let tensor parallelism span nodes"),
      cl::cat(TrainCategory));
  cl::opt<std::string> ObjectiveOpt(
      "objective",
      cl::desc("With --plan without --train: choose the layout with the "
               "lowest latency, or the most samples/s per device (the fewest "
               "device-seconds per step)"),
      cl::init("latency"), cl::value_desc("latency|throughput"),
      cl::cat(TrainCategory));
  cl::opt<std::string> MaxLatency(
      "max-latency",
      cl::desc("With --plan without --train: only layouts whose step takes "
               "at most this long (a latency target, e.g. '50 ms'); with "
               "--max-batch, only batches whose step does"),
      cl::value_desc("TIME"), cl::cat(TrainCategory));
  cl::opt<std::string> FrameworkOpt(
      "framework",
      cl::desc("With --train: only strategies this framework runs (megatron: "
               "ZeRO 0-1; deepspeed: ZeRO 0-1 with pp > 1, no vp, cp by "
               "all-to-all; fsdp: ZeRO 0, 2 or 3); --plan searches them, a "
               "given strategy is checked"),
      cl::init("any"), cl::value_desc("any|megatron|deepspeed|fsdp"),
      cl::cat(TrainCategory));
  cl::opt<std::string> StrategyPath(
      "strategy",
      cl::desc("With --train: predict the plan in FILE (written by --plan "
               "--format json)"),
      cl::value_desc("plan.json"), cl::cat(TrainCategory));
  cl::opt<std::string> TracePath(
      "trace",
      cl::desc("Write the predicted timeline as a Chrome/Perfetto trace "
               "(with --hw)"),
      cl::value_desc("FILE.json"), cl::cat(Category));
  cl::opt<unsigned> MaxOps("ops", cl::desc("Ops listed in the table (0: all)"),
                           cl::init(15), cl::value_desc("N"),
                           cl::cat(Category));
  cl::opt<bool> Explain("explain",
                        cl::desc("Show the formula behind each number"),
                        cl::cat(Category));
  cl::opt<bool> AllowUnknownShapes(
      "allow-unknown-shapes",
      cl::desc("Cost dimensions that depend on run-time values as 0 (with a "
               "warning) instead of failing"),
      cl::cat(Category));
  cl::opt<uint64_t> MaxNodes(
      "max-nodes", cl::desc("Refuse models with more nodes than this"),
      cl::init(2'000'000), cl::value_desc("N"), cl::cat(Category));

  cl::HideUnrelatedOptions({&Category, &TrainCategory});
  if (!parseOptions(Argc, Argv,
                    "perfc: predicts what a deep-learning model costs on given "
                    "hardware\n\n  perfc MODEL.onnx [--hw HW] [--batch N] "
                    "[--dim NAME=VALUE] [--format table|json] [-o FILE]\n"
                    "  perfc hw list | perfc hw show NAME\n"))
    return 1;

  if (OutFormat != "table" && OutFormat != "json")
    return fail("unknown --format '" + OutFormat + "': use 'table' or 'json'");
  auto Compute = parseComputeType(ComputeType);
  if (!Compute)
    return fail(Compute.takeError());
  auto Storage = parseComputeType(StorageTypeOpt);
  if (!Storage)
    return fail("--storage-type: " + llvm::toString(Storage.takeError()));
  const llvm::Optional<hw::ConvLayout> Layout =
      hw::parseConvLayout(ConvLayoutOpt);
  if (!Layout)
    return fail("unknown --conv-layout '" + ConvLayoutOpt +
                "': use native, nchw or nhwc");
  const llvm::Optional<Framework> TargetFramework =
      frameworkNamed(FrameworkOpt);
  if (!TargetFramework)
    return fail(unknownName("--framework", FrameworkOpt, FrameworkChoices));
  const llvm::Optional<cost::CommProtocol> Protocol =
      commProtocolNamed(CommProtocolOpt);
  if (!Protocol)
    return fail(
        unknownName("--comm-protocol", CommProtocolOpt, CommProtocolChoices));
  if (ModelPath.empty())
    return fail("no model given: usage 'perfc MODEL.onnx [--hw HW]' (see "
                "'perfc --help')");

  // An option that acts in one mode only is refused in the others: taken
  // silently, it would print a prediction that looks like what was asked
  // for and is not (--dtype bf16 on an inference priced it in fp32).
  if (!Train && TrainDType.getNumOccurrences())
    return fail("--dtype sets a training step's precision: add --train, or "
                "for inference give --compute-type (arithmetic) and "
                "--storage-type (tensors)");
  // The first of Options given on the command line, if any.
  const auto firstGiven = [](std::initializer_list<const cl::Option *> Options)
      -> const cl::Option * {
    for (const cl::Option *O : Options)
      if (O->getNumOccurrences())
        return O;
    return nullptr;
  };
  if (const cl::Option *O =
          Train ? nullptr
                : firstGiven({&OptimizerOpt, &Fp32Grads, &PerTensorOpt,
                              &FrameworkOpt, &PartitionOpt, &ScheduleOpt, &Vp,
                              &GradCompression, &OverlapMoeComm,
                              std::addressof(RecomputeModulesOpt),
                              &RecomputeMethodOpt, &RecomputeNumLayers}))
    return fail(fmt::format("--{} applies to a training step: add --train "
                            "(see 'perfc --help')",
                            O->ArgStr.str()));
  if (const cl::Option *O =
          Plan || Place ? nullptr : firstGiven({&TimeLimit, &Timings}))
    return fail(fmt::format("--{} applies to a search: add --train --plan, "
                            "or --place",
                            O->ArgStr.str()));
  if (const cl::Option *O = Plan ? nullptr
                                 : firstGiven({&PlannerOpt, &TopK, &Pareto,
                                               &Devices, &CrossNodeTp}))
    return fail(fmt::format("--{} applies to the planner's search: add "
                            "--train --plan",
                            O->ArgStr.str()));
  if (!Train && !Tp.getNumOccurrences() && !Ep.getNumOccurrences() &&
      CommProtocolOpt.getNumOccurrences())
    return fail("--comm-protocol prices collectives, which only a split "
                "runs: add --train, or --tp N or --ep N with a cluster");
  if (Hw.empty() && ConvLayoutOpt.getNumOccurrences())
    return fail("--conv-layout needs --hw (the transposes it prices depend "
                "on the device's matrix_conv_layout)");

  if (TpCommOverlap && !Train)
    return fail("--tp-comm-overlap overlaps a training step's tensor-parallel "
                "exchanges: add --train --tp N --sp");
  if (OverlapParamGather && !Train)
    return fail("--overlap-param-gather overlaps a training step's parameter "
                "all-gather: add --train --zero 1 (or 2)");
  if (Sp && !Train && Tp <= 1)
    return fail("--sp splits a training step's activations by sequence: add "
                "--train --tp N");

  TrainOptions TrainOpts;
  PlanModel PlannedFor;
  std::vector<std::string> PlanDevices; // --strategy: each stage's device
  if (Train) {
    if (Place)
      return fail("--place places inference kernels; for training use "
                  "--plan");
    if (llvm::Error E = parseTrainChoices(
            {RecomputeOpt, TrainDType, OptimizerOpt, PartitionOpt}, "--",
            TrainOpts))
      return fail(std::move(E));
    if (llvm::Error E = parseRecomputeModules(
            RecomputeModulesOpt, "--recompute-modules", "--recompute",
            RecomputeOpt.getNumOccurrences() && RecomputeOpt == "none",
            TrainOpts))
      return fail(std::move(E));
    if (llvm::Error E = parseRecomputeLayers(
            RecomputeMethodOpt,
            RecomputeNumLayers.getNumOccurrences()
                ? llvm::Optional<unsigned>(RecomputeNumLayers)
                : llvm::None,
            RecomputeOpt.getNumOccurrences(),
            {"--recompute-method", "--recompute-num-layers", "--recompute"},
            TrainOpts))
      return fail(std::move(E));
    if (Hw.empty())
      return fail("--train needs --hw (a device or cluster)");
    TrainOpts.Dp = Dp;
    TrainOpts.Tp = Tp;
    TrainOpts.Cp = Cp;
    TrainOpts.Ep = Ep;
    if (MoeCapacity.getNumOccurrences() &&
        !llvm::to_float(MoeCapacity, TrainOpts.ExpertCapacity))
      return fail("--moe-capacity '" + MoeCapacity +
                  "': expected a number, the experts' tokens over their "
                  "balanced share (1: balanced)");
    TrainOpts.Pp = Pp;
    TrainOpts.Vp = Vp;
    TrainOpts.SequenceParallel = Sp;
    TrainOpts.TpCommOverlap = TpCommOverlap;
    TrainOpts.OverlapParamGather = OverlapParamGather;
    TrainOpts.OverlapMoeExpertParallelComm = OverlapMoeComm;
    TrainOpts.Zero = Zero;
    // int64_t on every branch: a bare 1 made the conditional int and cut
    // the options' values to 32 bits (2^32 became 0).
    TrainOpts.MicroBatch =
        MicroBatch.getNumOccurrences()
            ? int64_t(MicroBatch)
            : (Batch.getNumOccurrences() ? int64_t(Batch) : int64_t(1));
    if (TrainOpts.MicroBatch <= 0)
      return fail("--micro-batch must be positive");
    // The largest micro_batch a plan file may hold, too.
    if (uint64_t(TrainOpts.MicroBatch) > ir::MaxTensorSize)
      return fail(llvm::formatv("--micro-batch {0} is too large: at most "
                                "2^62 = {1} samples",
                                TrainOpts.MicroBatch, ir::MaxTensorSize)
                      .str());
    if (GlobalBatch.getNumOccurrences() && GlobalBatch <= 0)
      return fail(llvm::formatv("--global-batch {0}: give a positive number "
                                "of samples per step",
                                int64_t(GlobalBatch))
                      .str());
    TrainOpts.GlobalBatch = GlobalBatch;
    TrainOpts.Fp32Gradients = Fp32Grads;
    TrainOpts.PerTensorOptimizer = PerTensorOpt;
    TrainOpts.Unfused = NoFusion;
    TrainOpts.FlashAttention = FlashAttentionOpt;
    TrainOpts.Layout = *Layout;
    TrainOpts.Protocol = *Protocol;
    const llvm::Optional<PipelineSchedule> Schedule =
        scheduleNamed(ScheduleOpt);
    if (!Schedule)
      return fail(unknownName("--schedule", ScheduleOpt, ScheduleChoices));
    TrainOpts.Schedule = *Schedule;
    TrainOpts.CpComm = defaultContextExchange(*TargetFramework);
    if (CpCommOpt.getNumOccurrences()) {
      const llvm::Optional<ContextExchange> Exchange =
          contextExchangeNamed(CpCommOpt);
      if (!Exchange)
        return fail(
            unknownName("--cp-comm", CpCommOpt, ContextExchangeChoices));
      TrainOpts.CpComm = *Exchange;
    }
    if (llvm::Error E = parseGradCompression(
            GradCompression, "--grad-compression", TrainOpts.GradCompression))
      return fail(std::move(E));
    TrainOpts.Timeline = !TracePath.empty();
    if (!StrategyPath.empty()) {
      if (Plan)
        return fail("--strategy and --plan: give one (a plan to predict, or "
                    "a search)");
      auto Read = readPlanJson(StrategyPath, TrainOpts);
      if (!Read)
        return fail(Read.takeError());
      // A strategy flag beside the plan must agree with it: taken
      // silently, the plan's value would replace what was asked for.
      const TrainOptions &Asked = TrainOpts, &Planned = Read->Options;
      const auto Str = [](const auto &V) { return fmt::format("{}", V); };
      const auto OnOff = [](bool B) { return B ? "on" : "off"; };
      for (const auto &[Opt, Want, Have] : std::initializer_list<
               std::tuple<const cl::Option *, std::string, std::string>>{
               {&Dp, Str(Asked.Dp), Str(Planned.Dp)},
               {&Tp, Str(Asked.Tp), Str(Planned.Tp)},
               {&Cp, Str(Asked.Cp), Str(Planned.Cp)},
               {&CpCommOpt, name(Asked.CpComm), name(Planned.CpComm)},
               {&Ep, Str(Asked.Ep), Str(Planned.Ep)},
               {&MoeCapacity, Str(Asked.ExpertCapacity),
                Str(Planned.ExpertCapacity)},
               {&Pp, Str(Asked.Pp), Str(Planned.Pp)},
               {&Vp, Str(Asked.Vp), Str(Planned.Vp)},
               {&Sp, OnOff(Asked.SequenceParallel),
                OnOff(Planned.SequenceParallel)},
               {&TpCommOverlap, OnOff(Asked.TpCommOverlap),
                OnOff(Planned.TpCommOverlap)},
               {&OverlapParamGather, OnOff(Asked.OverlapParamGather),
                OnOff(Planned.OverlapParamGather)},
               {&OverlapMoeComm, OnOff(Asked.OverlapMoeExpertParallelComm),
                OnOff(Planned.OverlapMoeExpertParallelComm)},
               {&MicroBatch, Str(Asked.MicroBatch), Str(Planned.MicroBatch)},
               {&GlobalBatch, Str(Asked.GlobalBatch), Str(Planned.GlobalBatch)},
               {&RecomputeOpt, name(Asked.Recomp), name(Planned.Recomp)},
               {std::addressof(RecomputeModulesOpt), recomputeLabel(Asked),
                recomputeLabel(Planned)},
               {&RecomputeMethodOpt, recomputeLabel(Asked),
                recomputeLabel(Planned)},
               {&RecomputeNumLayers, recomputeLabel(Asked),
                recomputeLabel(Planned)},
               {&Zero, Str(Asked.Zero), Str(Planned.Zero)},
               {&TrainDType, ir::name(Asked.DType).str(),
                ir::name(Planned.DType).str()},
               {&OptimizerOpt, name(Asked.Optimizer), name(Planned.Optimizer)},
               {&PartitionOpt, name(Asked.Split), name(Planned.Split)},
               {&FlashAttentionOpt, OnOff(Asked.FlashAttention),
                OnOff(Planned.FlashAttention)}})
        if (Opt->getNumOccurrences() && Want != Have)
          return fail(fmt::format(
              "--{0} and --strategy disagree: the plan in {1} has --{0} {2}, "
              "the command line --{0} {3}; drop --{0} (or --strategy)",
              Opt->ArgStr.str(), StrategyPath, Have, Want));
      TrainOpts = std::move(Read->Options);
      PlannedFor = std::move(Read->Model);
      PlanDevices = std::move(Read->StageDevices);
    }
    // A property of the hosts, not of the plan: after --strategy.
    if (InputRate.getNumOccurrences()) {
      double Rate = 0;
      if (!llvm::to_float(InputRate, Rate))
        return fail("--input-rate '" + InputRate +
                    "' is not a number of samples per second");
      if (llvm::Error E = setInputRate(Rate, "--input-rate", TrainOpts))
        return fail(std::move(E));
    }
    if (Plan) {
      if (PlannerOpt != "z3" && PlannerOpt != "exhaustive")
        return fail("unknown --planner '" + PlannerOpt +
                    "': use z3 or exhaustive");
      if (!GlobalBatch.getNumOccurrences())
        return fail("--plan needs --global-batch (samples per step)");
      if (!(TimeLimit >= 0) || !std::isfinite(TimeLimit))
        return fail(timeLimitError(TimeLimit));
    }
  } else if (Place && Hw.empty()) {
    return fail("--place needs --hw (a SoC or mixed machine, e.g. "
                "snapdragon-8-gen-2)");
  } else if (Place && (!(TimeLimit >= 0) || !std::isfinite(TimeLimit))) {
    return fail(timeLimitError(TimeLimit));
  } else if (!StrategyPath.empty()) {
    return fail("--strategy needs --train: a plan file holds a training "
                "strategy (without --train, --plan chooses how to serve)");
  } else if (Dp.getNumOccurrences() || Cp.getNumOccurrences() ||
             CpCommOpt.getNumOccurrences() || MoeCapacity.getNumOccurrences() ||
             GlobalBatch.getNumOccurrences() ||
             MicroBatch.getNumOccurrences() ||
             RecomputeOpt.getNumOccurrences() || Zero.getNumOccurrences() ||
             InputRate.getNumOccurrences()) {
    return fail(
        "training options (--dp, --cp, --cp-comm, --moe-capacity, "
        "--global-batch, --micro-batch, --recompute, --zero, --input-rate) "
        "need --train");
  } else if (Ep.getNumOccurrences()) {
    // A mixture of experts served over an expert-parallel group.
    if (Ep == 0)
      return fail("--ep 0: give the number of devices the experts are split "
                  "over, 1 or more");
    if (Hw.empty())
      return fail("--ep needs --hw naming a cluster whose devices serve the "
                  "model (e.g. dgx-h100)");
    if (Tp > 1)
      return fail("--ep and --tp: expert-parallel inference runs attention "
                  "data-parallel and whole on each rank; give one of them");
    if (Place)
      return fail("--place and --ep: --place puts each kernel on one "
                  "processor of a SoC, --ep splits a mixture over a "
                  "cluster's devices; give one");
    if (Sp)
      return fail("--sp splits training activations by sequence; for "
                  "inference give --ep alone");
  }
  if (!Train && Plan) {
    // Serving: the layout is what the plan chooses.
    if (Hw.empty())
      return fail("--plan without --train chooses how to serve the model "
                  "over a cluster: add --hw naming one (e.g. dgx-h100)");
    if (Tp.getNumOccurrences() || Ep.getNumOccurrences() ||
        Pp.getNumOccurrences() || Place)
      return fail(fmt::format(
          "--plan without --train chooses the layout (whole, --tp, --pp or "
          "--ep); drop --{}, or drop --plan to predict that layout",
          Tp.getNumOccurrences()   ? "tp"
          : Ep.getNumOccurrences() ? "ep"
          : Pp.getNumOccurrences() ? "pp"
                                   : "place"));
    if (const cl::Option *O =
            firstGiven({&PlannerOpt, &TopK, &Pareto, &TimeLimit, &Timings}))
      return fail(fmt::format("--{} applies to the training planner's "
                              "search; serving plans every layout (add "
                              "--train to plan a training step)",
                              O->ArgStr.str()));
  }
  if (const cl::Option *O = !Train && Plan ? nullptr
                            : !Train && MaxBatchOpt
                                ? firstGiven({&ObjectiveOpt})
                                : firstGiven({&ObjectiveOpt, &MaxLatency}))
    return fail(fmt::format(
        "--{} chooses among the layouts of a serving plan: give --plan "
        "without --train{}",
        O->ArgStr.str(),
        Train ? " (the training planner minimises the step's time)"
        : O == &MaxLatency
            ? " (or --max-batch: the largest batch whose step meets it)"
            : ""));
  const llvm::Optional<ServingObjective> Objective =
      servingObjectiveNamed(ObjectiveOpt);
  if (!Objective)
    return fail("unknown --objective '" + ObjectiveOpt +
                "': use latency or throughput");
  llvm::Optional<double> MaxLatencySeconds;
  if (MaxLatency.getNumOccurrences()) {
    auto M = hw::parseQuantity(MaxLatency, hw::Quantity::Time);
    if (!M)
      return fail("--max-latency '" + MaxLatency +
                  "': " + llvm::toString(M.takeError()));
    MaxLatencySeconds = M->Value;
    // A plan's bound is checked where the plan uses it (planServing).
    if (!Plan && !(M->Value > 0 && std::isfinite(M->Value)))
      return fail("--max-latency must be a positive time (e.g. '50 ms')");
  }
  // Either plan's: 0 is the option's "not given" (every device of the
  // cluster, or of its first node when serving).
  if (Plan && Devices.getNumOccurrences() && Devices == 0)
    return fail("--devices 0: give how many of the cluster's devices the "
                "plan may use, 1 or more");
  if (!Train && Pp.getNumOccurrences()) {
    // Inference over pipeline stages.
    if (Pp == 0)
      return fail("--pp 0: give the number of pipeline stages, 1 or more");
    if (Hw.empty())
      return fail("--pp needs --hw naming a cluster whose devices hold the "
                  "stages (e.g. dgx-h100-superpod)");
    if (Ep.getNumOccurrences())
      return fail("--pp and --ep: pipeline stages of an expert-parallel "
                  "group are not modelled for inference; give one of them");
    if (Place)
      return fail("--place and --pp: --place puts each kernel on one "
                  "processor of a SoC, --pp splits the blocks over a "
                  "cluster's devices; give one");
  }
  if (!Train && Tp.getNumOccurrences()) {
    // Inference split over a tensor-parallel group.
    if (Tp == 0)
      return fail("--tp 0: give the number of devices the model is split "
                  "over, 1 or more");
    if (Hw.empty())
      return fail("--tp needs --hw naming a cluster whose devices the model "
                  "is split over (e.g. dgx-a100)");
    if (Place)
      return fail("--place and --tp: --place puts each kernel on one "
                  "processor of a SoC, --tp splits every kernel over a "
                  "cluster's devices; give one");
    if (Sp)
      return fail("--sp splits training activations by sequence; for "
                  "inference give --tp alone");
  }

  if (MaxBatchOpt) {
    if (Train)
      return fail("--max-batch finds the largest inference batch that fits; "
                  "a training step's micro-batch is --micro-batch (--plan "
                  "searches it)");
    if (Hw.empty())
      return fail("--max-batch needs --hw: what fits depends on the "
                  "device's memory");
    if (Place)
      return fail("--max-batch and --place: give one (--max-batch predicts "
                  "a layout of a cluster's devices, given by --tp, --pp or "
                  "--ep, or chosen by --plan)");
    // Each layout at its largest batch is compared by what it serves.
    if (Plan && ObjectiveOpt.getNumOccurrences() &&
        ObjectiveOpt != "throughput")
      return fail("--plan --max-batch ranks each layout at its largest batch "
                  "by samples/s per device; the lowest latency is a batch "
                  "of 1: drop --objective " +
                  ObjectiveOpt + " or --max-batch");
  }

  frontend::ImportOptions Import;
  if (Batch.getNumOccurrences())
    Import.Batch = Batch;
  if (Train)
    Import.Batch = TrainOpts.MicroBatch;
  // The parser tools/fuzz/fuzz_cli runs (its errors escape control bytes).
  auto Dims = parseDimSpecs(DimSpecs);
  if (!Dims)
    return fail(Dims.takeError());
  Import.Dims = std::move(*Dims);
  Import.MaxNodes = MaxNodes;
  Import.AllowUnknownShapes = AllowUnknownShapes;

  // Hardware first: a bad description fails fast, before a large model
  // loads.
  llvm::Optional<hw::Cluster> Cluster;
  if (!Hw.empty()) {
    auto C = hw::loadHardware(Hw);
    if (!C)
      return fail(C.takeError());
    Cluster = std::move(*C);
    if (Train)
      if (llvm::Error E = checkTrainable(*Cluster))
        return fail(std::move(E));
  }
  llvm::Optional<double> LaunchSeconds;
  if (LaunchOverhead.getNumOccurrences()) {
    if (!Cluster)
      return fail("--launch-overhead needs --hw (it replaces the "
                  "description's launch_overhead)");
    auto M = hw::parseQuantity(LaunchOverhead, hw::Quantity::Time);
    if (!M)
      return fail("--launch-overhead '" + LaunchOverhead +
                  "': " + llvm::toString(M.takeError()));
    if (llvm::Error E = hw::setLaunchOverhead(
            *Cluster, M->Value, "--launch-overhead '" + LaunchOverhead + "'"))
      return fail(std::move(E));
    LaunchSeconds = M->Value;
  }
  llvm::Optional<double> ReserveBytes;
  if (MemoryReserve.getNumOccurrences()) {
    if (!Cluster)
      return fail("--memory-reserve needs --hw (it is taken from the "
                  "devices' memory)");
    // A size with its unit, or 0 (no reserve).
    auto M = hw::parseQuantity(MemoryReserve, hw::Quantity::Capacity,
                               /*AllowZero=*/true);
    if (!M)
      return fail("--memory-reserve '" + MemoryReserve +
                  "': " + llvm::toString(M.takeError()));
    if (llvm::Error E = hw::reserveMemory(
            *Cluster, M->Value, "--memory-reserve '" + MemoryReserve + "'"))
      return fail(std::move(E));
    ReserveBytes = M->Value;
  }

  auto Model = frontend::importOnnxFile(ModelPath, Import);
  if (!Model)
    return fail(Model.takeError());

  PredictOptions Options;
  Options.Time.ComputeType = *Compute;
  Options.Time.Layout = *Layout;
  Options.StorageType = *Storage;
  // With --train the per-node report is one micro-batch's forward pass as
  // the step prices it, in the training precision: arithmetic in --dtype,
  // and under mixed precision activations and weights in 16 (or 8) bits.
  // --compute-type and --storage-type still override.
  Options.Fusion.Fuse = !NoFusion;
  Options.Fusion.FlashAttention = FlashAttentionOpt;
  std::string ComputeTypeShown = ComputeType.getValue();
  llvm::StringRef ComputeChoice = "--compute-type";
  if (Train)
    if (auto T = applyTrainingForward(Options, TrainOpts,
                                      ComputeType.getNumOccurrences() > 0,
                                      StorageTypeOpt.getNumOccurrences() > 0)) {
      ComputeTypeShown = ir::name(*T);
      ComputeChoice = "--dtype";
    }
  Options.Memory = !Train;
  if (Cluster)
    Options.Device = &Cluster->primaryDevice();
  // The layout given or planned, at the model's batch or the largest.
  InferenceRequest Inference;
  Inference.ModelPath = ModelPath;
  Inference.Graph = &Model->Graph;
  Inference.Options = Options;
  Inference.Cluster = Cluster ? &*Cluster : nullptr;
  Inference.Protocol = *Protocol;
  if (!Train)
    Inference.Degrees = {unsigned(Tp), unsigned(Ep), unsigned(Pp)};
  if (!Train && Plan) {
    ServingRequest Serve;
    Serve.Devices = Devices;
    Serve.AllowCrossNodeTp = CrossNodeTp;
    Serve.Objective = *Objective;
    Serve.MaxLatencySeconds = MaxLatencySeconds;
    Inference.Serve = Serve;
  }
  Inference.MaxBatch = MaxBatchOpt;
  Inference.MaxLatencySeconds = MaxLatencySeconds;
  // --max-batch: the model read again at each batch tried.
  Inference.ImportAt = [&](int64_t At) {
    frontend::ImportOptions AtBatch = Import;
    AtBatch.Batch = At;
    return frontend::importOnnxFile(ModelPath, AtBatch);
  };
  auto Run = predictInference(std::move(Inference));
  if (!Run)
    return fail(Run.takeError());
  // The rest of the report describes the model predicted: imported again
  // at the batch --max-batch found.
  if (Run->Model)
    *Model = std::move(*Run->Model);
  Report R = std::move(Run->R);
  if (!Train && FlashAttentionOpt)
    if (llvm::Error E = checkFlashAttention(Model->Graph, R))
      return fail(ModelPath + ": " + llvm::toString(std::move(E)));
  R.Timings = Timings;
  if (Place)
    if (llvm::Error E =
            placeKernels(R, Model->Graph, *Cluster, Options, TimeLimit))
      return fail(ModelPath + ": " + llvm::toString(std::move(E)));
  R.Model.Name = Model->Name;
  R.Model.Path = ModelPath;
  R.Model.GraphName = Model->GraphName;
  R.Model.Producer = Model->Producer;
  R.Model.IrVersion = Model->IrVersion;
  R.Model.Opset = Model->Opset;
  R.Model.FileBytes = Model->FileBytes;
  R.Model.WeightBytesSkipped = Model->WeightBytesSkipped;
  // The shapes the report shows: the import's, or the step's micro-batch's.
  const auto SetShapes = [&R](const frontend::ImportedModel &M) {
    R.Model.Inputs = describe(M.Graph.inputs());
    R.Model.Outputs = describe(M.Graph.outputs());
    R.Model.Bindings = M.Bindings;
  };
  SetShapes(*Model);
  R.Warnings.insert(R.Warnings.begin(), Model->Warnings.begin(),
                    Model->Warnings.end());
  if (Cluster) {
    const hw::Device &D = Cluster->primaryDevice();
    R.Hardware = describeHardware(Hw, D, Cluster->Name, ComputeTypeShown,
                                  LaunchSeconds, Options);
    R.Hardware->MemoryReserveBytes = ReserveBytes;
    if (llvm::Error E = checkRunnable(R, D, ModelPath, ComputeChoice))
      return fail(std::move(E));
  }

  const double ModelParams = R.Total.Params;
  if (Train && !StrategyPath.empty()) {
    if (llvm::Error E = checkPlanModel(
            PlannedFor, StrategyPath, Model->GraphName,
            Model->Graph.nodes().size(), ModelParams, Model->Name))
      return fail(std::move(E));
  }
  // One import and analysis per micro-batch size the planner considers;
  // the graphs stay alive until the end.
  std::map<int64_t, std::pair<std::unique_ptr<frontend::ImportedModel>,
                              std::unique_ptr<TrainingAnalysis>>>
      Analyses;
  if (Train && Plan) {
    PlanRequest Req;
    Req.Analysis = [&](int64_t Mb) -> llvm::Expected<const TrainingAnalysis *> {
      auto &Slot = Analyses[Mb];
      if (!Slot.second) {
        if (Mb == *Import.Batch) {
          Slot.second = std::make_unique<TrainingAnalysis>(
              Model->Graph, NoFusion, FlashAttentionOpt);
        } else {
          frontend::ImportOptions At = Import;
          At.Batch = Mb;
          auto M = frontend::importOnnxFile(ModelPath, At);
          if (!M)
            return M.takeError();
          Slot.first = std::make_unique<frontend::ImportedModel>(std::move(*M));
          Slot.second = std::make_unique<TrainingAnalysis>(
              Slot.first->Graph, NoFusion, FlashAttentionOpt);
        }
      }
      return Slot.second.get();
    };
    Req.Cluster = &*Cluster;
    Req.GlobalBatch = GlobalBatch;
    Req.Devices = Devices;
    Req.Base = TrainOpts;
    Req.AllowCrossNodeTp = CrossNodeTp;
    Req.MemoryReserveBytes = ReserveBytes.getValueOr(0);
    Req.TargetFramework = *TargetFramework;
    Req.Planner =
        PlannerOpt == "z3" ? PlannerKind::Z3 : PlannerKind::Exhaustive;
    Req.TimeLimitSeconds = TimeLimit;
    Req.TopK = std::max(1u, TopK.getValue());
    Req.Pareto = Pareto;
    Req.Progress = llvm::sys::Process::StandardErrIsDisplayed();
    PlanFixed &F = Req.Fixed;
    if (Dp.getNumOccurrences())
      F.Dp = Dp;
    if (Tp.getNumOccurrences())
      F.Tp = Tp;
    if (Cp.getNumOccurrences())
      F.Cp = Cp;
    if (CpCommOpt.getNumOccurrences())
      F.CpComm = TrainOpts.CpComm;
    if (Ep.getNumOccurrences())
      F.Ep = Ep;
    if (Pp.getNumOccurrences())
      F.Pp = Pp;
    if (Vp.getNumOccurrences())
      F.Vp = Vp;
    if (Sp.getNumOccurrences())
      F.Sp = bool(Sp);
    if (MicroBatch.getNumOccurrences())
      F.MicroBatch = TrainOpts.MicroBatch;
    if (RecomputeOpt.getNumOccurrences() ||
        RecomputeModulesOpt.getNumOccurrences() ||
        RecomputeMethodOpt.getNumOccurrences() ||
        RecomputeNumLayers.getNumOccurrences())
      F.Recomp = TrainOpts.Recomp;
    if (Zero.getNumOccurrences())
      F.Zero = Zero;
    auto Res = planTraining(Req);
    if (!Res)
      return fail(ModelPath + ": " + llvm::toString(Res.takeError()));
    TrainOpts = Res->Options;
    TrainOpts.Timeline = !TracePath.empty();
    Report::PlanInfo Info;
    Info.Result = std::move(*Res);
    Info.ModelName = Model->GraphName;
    Info.ModelFileStem = Model->Name;
    Info.ModelNodes = Model->Graph.nodes().size();
    Info.ModelParams = ModelParams;
    Info.DevicesPerNode = Cluster->Groups.front().devicesPerNode();
    Info.TimeLimitSeconds = TimeLimit;
    R.Plan = std::move(Info);
  }

  if (Train) {
    // Under --plan or --strategy the graph must be the one imported at the
    // strategy's micro-batch.
    llvm::Optional<frontend::ImportedModel> AtMb;
    const ir::Graph *TrainGraph = &Model->Graph;
    auto Planned = Analyses.find(TrainOpts.MicroBatch);
    if (Planned == Analyses.end() && TrainOpts.MicroBatch != *Import.Batch) {
      frontend::ImportOptions At = Import;
      At.Batch = TrainOpts.MicroBatch;
      auto M = frontend::importOnnxFile(ModelPath, At);
      if (!M)
        return fail(M.takeError());
      AtMb = std::move(*M);
      TrainGraph = &AtMb->Graph;
    }
    // The report's prediction explains its communication and memory (the
    // planner's candidates above did not need to).
    TrainOpts.Explain = true;
    if (llvm::Error E = checkFramework(*TargetFramework, TrainOpts))
      return fail(StrategyPath.empty()
                      ? llvm::toString(std::move(E))
                      : StrategyPath + ": " + llvm::toString(std::move(E)));
    // A plan over mixed GPU types is predicted stage by stage on each
    // type (predictMixed); the planner's report is that prediction.
    // A --strategy plan on a mixed cluster names each stage's device.
    // An uneven data split (from a plan or --strategy) is predicted type
    // by type (predictDataSplit).
    const bool MixedPlan =
        R.Plan && (!R.Plan->Result.StageDevices.empty() ||
                   !R.Plan->Result.Options.DataSplit.empty());
    const bool Split = !MixedPlan && !TrainOpts.DataSplit.empty();
    const bool Mixed = !MixedPlan && !Split && isMixedCluster(*Cluster);
    if (Mixed && PlanDevices.size() != TrainOpts.Pp)
      return fail(ModelPath + ": cluster '" + Cluster->Name +
                  "' mixes GPU types; plan it with --plan (each pipeline "
                  "stage on one type, or an uneven data split), or give "
                  "--strategy such a plan");
    llvm::Optional<TrainingAnalysis> Fresh;
    const TrainingAnalysis *An = nullptr;
    if (Planned != Analyses.end())
      An = Planned->second.second.get();
    else if (Split || Mixed) {
      Fresh.emplace(*TrainGraph, TrainOpts.Unfused);
      An = &*Fresh;
    }
    auto T = MixedPlan ? llvm::Expected<TrainReport>(R.Plan->Result.Report)
             : Split   ? predictDataSplit(*An, *Cluster, TrainOpts)
             : Mixed   ? predictMixed(*An, *Cluster, TrainOpts, PlanDevices)
             : An      ? predictTraining(*An, *Cluster, TrainOpts)
                       : predictTraining(*TrainGraph, *Cluster, TrainOpts);
    if (!T) {
      // A strategy read from a plan file is the plan's fault: name it.
      if (!StrategyPath.empty())
        return fail(StrategyPath + ": the plan does not apply to " + ModelPath +
                    ": " + llvm::toString(T.takeError()));
      return fail(ModelPath + ": " + llvm::toString(T.takeError()));
    }
    // The per-node report at the step's micro-batch (a plan or a strategy
    // may choose another than the one the model was first imported at).
    const frontend::ImportedModel *AtStep = AtMb ? &*AtMb
                                            : Planned != Analyses.end()
                                                ? Planned->second.first.get()
                                                : nullptr;
    if (AtStep) {
      Report Step = predict(AtStep->Graph, Options);
      R.Nodes = std::move(Step.Nodes);
      R.Total = Step.Total;
      R.LatencySeconds = Step.LatencySeconds;
      R.Kernels = Step.Kernels;
      SetShapes(*AtStep);
    }
    R.Strategy = TrainOpts;
    R.Train = std::move(*T);
    addStepWarnings(R);
  }

  int Status = writeOutput(OutputPath, [&](llvm::raw_ostream &OS) {
    if (OutFormat == "json") {
      writeReportJson(R, OS);
    } else {
      TableOptions T;
      T.MaxOps = MaxOps;
      T.Explain = Explain;
      writeReportTable(R, T, OS);
    }
  });
  if (Status == 0 && !TracePath.empty()) {
    if (!R.Hardware)
      return fail("--trace needs --hw: a timeline needs times");
    Status = writeOutput(
        TracePath, [&](llvm::raw_ostream &OS) { writeChromeTrace(R, OS); });
  }
  if (Status == 0)
    printWarnings(ModelPath, R.Warnings);
  return Status;
}
