//===- TrainChecks.cpp - The training strategy's rules --------------------===//
#include "passes/Trainer.h"

#include <algorithm>

namespace perfc {
namespace trainstep {

namespace {

/// How perfc recognises a mixture of experts, for the errors of options
/// that need one.
constexpr const char *MixtureOfExpertsShape =
    "a batched MatMul on a whole weight stack [experts, in, out], as perfc "
    "zoo --experts writes it for a batch whose tokens reach every expert";

} // namespace

llvm::Error Trainer::check() {
  if (O.Dp == 0 || O.Tp == 0 || O.Pp == 0 || O.Vp == 0 || O.Cp == 0 ||
      O.Ep == 0)
    return fail("parallel degrees must be positive");
  if (O.MicroBatch <= 0)
    return fail("--micro-batch must be positive");
  if (O.Recomp == Recompute::Full && O.RecomputeNumLayers == 0)
    return fail("--recompute-num-layers must be at least 1 (the blocks "
                "full recomputation reruns together, or of each chunk)");
  // 0 means "not given" (micro-batch x dp); a negative one would make
  // every time of the step negative.
  if (O.GlobalBatch < 0)
    return fail(llvm::formatv("--global-batch {0}: give a positive number "
                              "of samples per step",
                              O.GlobalBatch));
  // Replicas of unequal shares are predicted type by type
  // (predictDataSplit); here it would be silently ignored.
  if (!O.DataSplit.empty())
    return fail("an uneven data split is predicted per GPU type "
                "(predictDataSplit), not as one strategy");
  // Megatron-Core numbers ranks tensor, context, data, pipeline: a data-
  // parallel group with its context ranks is Data here, the Cp ranks of
  // one sequence its first Cp (stride Tp). In 64 bits: both from the user.
  const uint64_t DataWithContext = uint64_t(O.Dp) * O.Cp;
  if (O.Cp > 1 && DataWithContext > C.numDevices())
    return fail(llvm::formatv("dp {0} x cp {1} = {2} devices, but cluster "
                              "'{3}' has {4}",
                              O.Dp, O.Cp, DataWithContext, C.Name,
                              C.numDevices()));
  Layout.Tensor = O.Tp;
  Layout.Data = unsigned(DataWithContext);
  Layout.Pipeline = O.Pp;
  const uint64_t Needed = Layout.ranks();
  if (Needed > C.numDevices())
    return fail(
        O.Cp > 1
            ? llvm::formatv("dp {0} x cp {1} x tp {2} x pp {3} = {4} "
                            "devices, but cluster '{5}' has {6}",
                            O.Dp, O.Cp, O.Tp, O.Pp, Needed, C.Name,
                            C.numDevices())
                  .str()
            : llvm::formatv("dp {0} x tp {1} x pp {2} = {3} devices, but "
                            "cluster '{4}' has {5}",
                            O.Dp, O.Tp, O.Pp, Needed, C.Name, C.numDevices())
                  .str());
  // Both come from the user (flags or a plan file): multiply checked.
  int64_t PerStep = 0;
  if (__builtin_mul_overflow(O.MicroBatch, int64_t(O.Dp), &PerStep))
    return fail(llvm::formatv("--micro-batch {0} x dp {1} overflows; use "
                              "smaller values",
                              O.MicroBatch, O.Dp));
  GlobalBatch = O.GlobalBatch ? O.GlobalBatch : PerStep;
  if (GlobalBatch % PerStep != 0)
    return fail(llvm::formatv("--global-batch {0} is not a multiple of "
                              "--micro-batch {1} x dp {2}",
                              GlobalBatch, O.MicroBatch, O.Dp));
  MicroBatches = GlobalBatch / PerStep;
  if (O.Zero > 3)
    return fail("--zero must be 0, 1, 2 or 3");
  if (O.SequenceParallel && O.Tp < 2)
    return fail("--sp (sequence parallelism) needs --tp of at least 2");
  if (O.TpCommOverlap && !O.SequenceParallel)
    return fail("--tp-comm-overlap overlaps the all-gathers and "
                "reduce-scatters of sequence parallelism: add --sp (and "
                "--tp of at least 2)");
  if (O.OverlapParamGather && O.Zero != 1 && O.Zero != 2)
    return fail(llvm::formatv(
        "--overlap-param-gather overlaps the sharded optimizer's "
        "all-gather of the updated parameters with the next forward, but "
        "ZeRO {0} has {1}: use --zero 1 or 2",
        O.Zero,
        O.Zero == 0 ? "no sharded optimizer"
                    : "its parameters gathered for every micro-batch"));
  if (llvm::Error E = checkExpertParallel(DataWithContext))
    return E;
  if (O.Vp > 1 && O.Pp == 1)
    return fail("--vp (interleaved 1F1B) needs --pp of at least 2");
  // In 64 bits: pp x vp from the user could wrap to 0 in 32.
  const uint64_t Chunks = uint64_t(O.Pp) * O.Vp;
  if (Chunks > std::max(1u, Blocks.NumBlocks))
    return fail(llvm::formatv(
        "pp {0} x vp {1} = {2} pipeline chunks, but the model has {3} "
        "blocks; use fewer stages",
        O.Pp, O.Vp, Chunks, Blocks.NumBlocks));
  // Megatron-LM's interleaved schedule runs the micro-batches in groups
  // of pp and refuses other counts (pipeline_parallel/schedules.py).
  if (O.Vp > 1 && MicroBatches % O.Pp != 0)
    return fail(llvm::formatv(
        "--vp {0}: the interleaved schedule runs micro-batches in groups "
        "of pp {1}, but a step has {2} per data-parallel rank (global "
        "batch {3} / (micro-batch {4} x dp {5})); give a global batch "
        "that makes it a multiple of {1}",
        O.Vp, O.Pp, MicroBatches, GlobalBatch, O.MicroBatch, O.Dp));
  if (O.Vp > 1 && O.Schedule == PipelineSchedule::GPipe)
    return fail("--vp interleaves 1F1B; GPipe has no interleaved form: use "
                "--schedule 1f1b or --vp 1");
  return llvm::Error::success();
}

llvm::Error Trainer::checkExpertParallel(uint64_t DataWithContext) const {
  if (O.ExpertCapacity != 1) {
    if (!(O.ExpertCapacity > 0 && O.ExpertCapacity <= 1e6))
      return fail(llvm::formatv("--moe-capacity {0}: give the experts' "
                                "tokens over their balanced share, a "
                                "number above 0 (1: balanced)",
                                formatCount(O.ExpertCapacity)));
    if (Blocks.ExpertCounts.empty())
      return fail(llvm::formatv("--moe-capacity {0}: the model has no "
                                "mixture of experts ({1}); drop the flag",
                                formatCount(O.ExpertCapacity),
                                MixtureOfExpertsShape));
  }
  if (O.Ep == 1)
    return O.OverlapMoeExpertParallelComm
               ? fail("--overlap-moe-expert-parallel-comm hides expert "
                      "parallelism's all-to-alls: add --ep N (N of at "
                      "least 2) on a mixture of experts")
               : llvm::Error::success();
  if (Blocks.ExpertCounts.empty())
    return fail(llvm::formatv("--ep {0}: the model has no mixture of "
                              "experts ({1}); use --ep 1",
                              O.Ep, MixtureOfExpertsShape));
  if (DataWithContext % O.Ep != 0)
    return fail(llvm::formatv(
        "--ep {0} does not divide dp {1} x cp {2} = {3}: expert "
        "parallelism splits the experts over ranks of a data-parallel "
        "group (Megatron-Core's expert-model-parallel size); use an ep "
        "that divides {3}",
        O.Ep, O.Dp, O.Cp, DataWithContext));
  for (int64_t E : Blocks.ExpertCounts)
    if (E % O.Ep != 0)
      return expertsDoNotSplit(O.Ep, E);
  // The dispatcher's all-to-all sends each tensor rank's 1 / tp of the
  // tokens, which sequence parallelism gives it (Megatron-Core refuses
  // the pair without it).
  if (O.Tp > 1 && !O.SequenceParallel)
    return fail(llvm::formatv("--ep {0} with --tp {1} needs --sp: "
                              "Megatron-Core's token dispatcher splits the "
                              "tokens over the tensor ranks by sequence "
                              "parallelism",
                              O.Ep, O.Tp));
  if (O.Zero == 3)
    return fail(llvm::formatv("--ep {0} with --zero 3 is not modelled "
                              "(Megatron-Core shards no parameters); use "
                              "--zero 0, 1 or 2",
                              O.Ep));
  if (O.OverlapMoeExpertParallelComm)
    return expertOverlapRefusal(O);
  return llvm::Error::success();
}

llvm::Error Trainer::checkContextParallel() const {
  if (O.Cp == 1)
    return llvm::Error::success();
  if (O.CpComm == ContextExchange::AllToAll)
    return checkHeadExchange();
  if (!A.FlashAttention)
    return contextParallelNeedsFlashAttention(O.Cp);
  for (const Kernel &K : Plan.Kernels) {
    if (!K.Attention)
      continue;
    const int64_t Keys = attentionKeys(K);
    if (Keys > 0 && Keys % (2 * int64_t(O.Cp)) != 0)
      return fail(llvm::formatv(
          "--cp {0}: the sequence ({1} keys in attention '{2}') must cut "
          "into 2 x cp = {3} equal chunks (Megatron-Core's load-balanced "
          "split); use a cp that divides {4}",
          O.Cp, Keys, G.nodes()[K.Head]->name(), 2 * int64_t(O.Cp), Keys / 2));
  }
  return llvm::Error::success();
}

llvm::Error Trainer::checkHeadExchange() const {
  bool Found = false;
  for (const auto &N : G.nodes()) {
    if (N->opType() != "Softmax" || !Blocks.AttentionCore[N->index()] ||
        !N->input(0))
      continue;
    Found = true;
    const ir::Shape &Sh = N->input(0)->shape();
    const unsigned R = Sh.rank();
    const auto Prefix = [&] {
      return llvm::formatv("--cp {0} --cp-comm a2a: attention '{1}'", O.Cp,
                           N->name())
          .str();
    };
    for (unsigned D = R >= 2 ? R - 2 : R; D < R; ++D)
      if (Sh[D].Value > 0 && Sh[D].Value % O.Cp != 0)
        return fail(llvm::formatv("{0} has {1} tokens, which do not split "
                                  "over {2} ranks; use a cp that divides {1}",
                                  Prefix(), Sh[D].Value, O.Cp));
    if (R < 4)
      continue;
    // The scores are [batch, heads, queries, keys]; a rank's heads are its
    // tensor-parallel share. Its key/value heads split too (Transformer
    // Engine views each of Q, K and V as [..., cp, heads / cp, dim]):
    // fewer under grouped-query attention, as the projections make them.
    const double Heads = double(Sh[1].Value) * tpScale(N->index());
    if (Sh[1].Value > 0 && std::fmod(Heads, double(O.Cp)) != 0)
      return fail(llvm::formatv(
          "{0} has {1} heads per tensor-parallel rank, which do not split "
          "over {2} ranks (the all-to-all trades tokens for heads); use a cp "
          "that divides {1}, or --cp-comm p2p",
          Prefix(), formatCount(Heads), O.Cp));
    const double KvHeads = keyValueHeads(*N, Heads);
    if (KvHeads > 0 && std::fmod(KvHeads, double(O.Cp)) != 0)
      return fail(llvm::formatv(
          "{0} has {1} key/value heads per tensor-parallel rank, which do "
          "not split over {2} ranks (the all-to-all trades tokens for "
          "heads); use a cp that divides {1}, or --cp-comm p2p",
          Prefix(), formatCount(KvHeads), O.Cp));
  }
  if (!Found)
    return headExchangeNeedsAttention(O.Cp);
  return llvm::Error::success();
}

double Trainer::keyValueHeads(const ir::Node &S, double Heads) const {
  const ir::Node *P = S.input(0) ? S.input(0)->producer() : nullptr;
  // Back through the core's elementwise steps (scale, mask, bias) to
  // the product.
  while (P && !(Work.Nodes[P->index()].Gemm.valid() &&
                Blocks.AttentionCore[P->index()])) {
    const ir::Node *Next = nullptr;
    for (const ir::Value *In : P->inputs())
      if (In && In->producer() &&
          Blocks.AttentionCore[In->producer()->index()]) {
        Next = In->producer();
        break;
      }
    P = Next;
  }
  if (!P || P->numInputs() < 2 || !P->input(0) || !P->input(1))
    return 0;
  const ir::Shape &Sh = S.input(0)->shape();
  const double Queries = double(Sh[Sh.rank() - 2].Value);
  const double Keys = double(Sh[Sh.rank() - 1].Value);
  const double Q = keyValueElements(P->input(0));
  const double K = keyValueElements(P->input(1));
  if (!(Q > 0 && K > 0 && Queries > 0 && Keys > 0))
    return 0;
  return Heads * (K * Queries) / (Q * Keys);
}

const ir::Value *Trainer::softmaxInput(const Kernel &K) const {
  for (unsigned M : K.Members) {
    const ir::Node &N = *G.nodes()[M];
    if (N.opType() == "Softmax" && N.input(0))
      return N.input(0);
  }
  return nullptr;
}

int64_t Trainer::attentionKeys(const Kernel &K) const {
  const ir::Value *Scores = softmaxInput(K);
  if (!Scores || Scores->shape().rank() == 0)
    return 0;
  const ir::Shape &Sh = Scores->shape();
  return Sh[Sh.rank() - 1].Value;
}

} // namespace trainstep
} // namespace perfc
