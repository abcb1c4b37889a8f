//===- TrainStep.cpp - Training step time and memory for a strategy -------===//
#include "passes/TrainStep.h"

#include "passes/Trainer.h"
#include "passes/TrainingForward.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace perfc {

const char *name(Recompute R) {
  switch (R) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "none";
}

const char *name(RecomputeMethod M) {
  return M == RecomputeMethod::Block ? "block" : "uniform";
}

TrainingAnalysis::UnitKey TrainingAnalysis::unitKey(const hw::Cluster &C,
                                                    const TrainOptions &O,
                                                    Recompute Costed) {
  return {C.Name,
          O.Tp,
          O.SequenceParallel,
          uint8_t(Costed),
          uint8_t(O.DType),
          uint8_t(O.Layout),
          uint8_t(O.Protocol),
          O.TpCommOverlap,
          O.Cp,
          uint8_t(O.CpComm),
          O.Ep,
          O.ExpertCapacity,
          Costed == Recompute::Selective ? O.RecomputeModules
                                         : BlockModuleSet(0)};
}

const std::vector<UnitCost> *
TrainingAnalysis::cachedUnits(const hw::Cluster &C,
                              const TrainOptions &O) const {
  auto It = UnitCache.find(unitKey(C, O));
  return It == UnitCache.end() ? nullptr : &It->second;
}

llvm::Error recomputeModulesMissing(const TrainOptions &O,
                                    BlockModuleSet Found) {
  if (O.Recomp != Recompute::Selective)
    return llvm::Error::success();
  if (O.RecomputeModules == bit(BlockModule::CoreAttention) &&
      !(Found & O.RecomputeModules))
    return trainstep::fail(
        "--recompute selective recomputes the attention core, and the model "
        "has none (a product of two activations led to a second within a "
        "block); use --recompute none or full");
  for (unsigned I = 0; I < NumBlockModules; ++I) {
    const BlockModule M = BlockModule(I);
    if (!(O.RecomputeModules & bit(M)) || (Found & bit(M)))
      continue;
    const char *What = "";
    switch (M) {
    case BlockModule::CoreAttention:
      What = "no attention core (a product of two activations led to a "
             "second within a block)";
      break;
    case BlockModule::Norm:
      What = "no norm making a projection's input within a block (a "
             "normalization op, or a mean of squares or values)";
      break;
    case BlockModule::LatentUp:
      What = "no latent attention (a low-rank down projection whose output "
             "reaches a column GEMM on the way to an attention core)";
      break;
    case BlockModule::Mlp:
      What = "no dense MLP (a column/row GEMM pair without an attention "
             "core, in a block without experts)";
      break;
    case BlockModule::ExpertActivation:
    case BlockModule::Mixture:
      What = "no mixture of experts (GEMMs on a weight stack [E, in, out])";
      break;
    case BlockModule::SharedExperts:
      What = "no shared experts (a column/row GEMM pair beside a mixture's "
             "experts)";
      break;
    }
    return trainstep::fail(llvm::formatv(
        "--recompute-modules {0}: the model has {1}; drop {0}", name(M), What));
  }
  return llvm::Error::success();
}

namespace trainstep {

llvm::Expected<TrainReport> Trainer::run() {
  if (llvm::Error E = check())
    return std::move(E);
  if (O.Tp > 1 && !Blocks.HasTensorParallelPattern)
    return fail(llvm::formatv(
        "--tp {0}: the model has no Megatron tensor-parallel pattern (a "
        "MatMul on weights feeding, through non-GEMM ops, another MatMul "
        "on weights within a block); use --tp 1",
        O.Tp));
  if (llvm::Error E =
          checkTpSizes(G, Work, Blocks, A.TpSizes, O.Tp, O.SequenceParallel))
    return std::move(E);
  // Both act on the attention core alone: without one they would change
  // nothing while the report said they were on.
  if (A.FlashAttention && !A.HasAttentionCore)
    return fail("--flash-attention: the model has no attention core (a "
                "product of two activations, as Q.K^T, led through other "
                "ops to a second, as P.V, within a block); drop the flag");
  if (llvm::Error E = recomputeModulesMissing(O, Blocks.ModulesFound))
    return std::move(E);
  if (llvm::Error E = checkContextParallel())
    return std::move(E);
  if (llvm::Error E = makeGroups())
    return std::move(E);
  const bool Full = O.Recomp == Recompute::Full;
  if (!Full || O.Method == RecomputeMethod::Uniform) {
    Units = &unitCosts(Full);
    auto Chunks = partition();
    if (!Chunks)
      return Chunks.takeError();
    return assemble(*Chunks);
  }
  // The block method reruns the first N blocks of each chunk: the split
  // comes first, balanced on the costs without recomputation (each chunk
  // holding N blocks adds the same reruns, so the split that balances
  // those balances these; one holding fewer reruns them all).
  Units = &unitCosts(false);
  auto Chunks = partition();
  if (!Chunks)
    return Chunks.takeError();
  const std::vector<UnitCost> &Plain = *Units;
  const std::vector<UnitCost> &Again = unitCosts(true);
  Merged = Plain;
  FullyRecomputed.clear();
  FullyRecomputed.resize(Blocks.numUnits());
  for (const auto &[First, Last] : *Chunks) {
    unsigned Rerun = 0;
    for (unsigned U = First; U <= Last && Rerun < O.RecomputeNumLayers; ++U)
      if (Blocks.isBlock(U)) {
        FullyRecomputed[U] = true;
        Merged[U] = Again[U];
        ++Rerun;
      }
  }
  Units = &Merged;
  return assemble(*Chunks);
}

const std::vector<UnitCost> &Trainer::unitCosts(bool Rerun) {
  // Costs are per unit: those of every block rerun and of none, each
  // cached, make any choice of blocks.
  FullyRecomputed.clear();
  FullyRecomputed.resize(Blocks.numUnits());
  if (Rerun)
    for (unsigned U = 0; U < Blocks.numUnits(); ++U)
      FullyRecomputed[U] = Blocks.isBlock(U);
  const TrainingAnalysis::UnitKey Key = TrainingAnalysis::unitKey(
      C, O, !Rerun && O.Recomp == Recompute::Full ? Recompute::None : O.Recomp);
  auto It = A.UnitCache.find(Key);
  if (It == A.UnitCache.end()) {
    costUnits();
    It = A.UnitCache.emplace(Key, std::move(Fresh)).first;
  }
  return It->second;
}

llvm::Error Trainer::makeGroups() {
  for (auto [Dim, Group] :
       {std::make_pair(cost::ParallelDim::Tensor, &TpGroup),
        std::make_pair(cost::ParallelDim::Data, &DpGroup)}) {
    auto Gr = cost::groupOf(C, Layout, Dim);
    if (!Gr)
      return Gr.takeError();
    *Group = *Gr;
    Group->Protocol = O.Protocol;
  }
  // A sequence's context ranks: the first Cp of a data-parallel group
  // with its context ranks.
  if (O.Cp > 1) {
    auto Gr = cost::groupOf(C, O.Cp, O.Tp);
    if (!Gr)
      return Gr.takeError();
    CpGroup = *Gr;
  }
  // A mixture's expert ranks follow the tensor and context ranks; the
  // ranks holding the same experts are Ep of them apart. (Under context
  // parallelism those are the context ranks of each too, which no single
  // stride reaches: taken as Tp x Ep apart.)
  if (O.Ep > 1) {
    auto Gr = cost::groupOf(C, O.Ep, O.Tp * O.Cp);
    if (!Gr)
      return Gr.takeError();
    EpGroup = *Gr;
    EpGroup.Protocol = O.Protocol;
    const unsigned Replicas = Layout.Data / O.Ep;
    if (Replicas > 1) {
      auto Gr = cost::groupOf(C, Replicas, O.Tp * O.Ep);
      if (!Gr)
        return Gr.takeError();
      ExpertDpGroup = *Gr;
      ExpertDpGroup.Protocol = O.Protocol;
    }
  }
  // Neighbouring pipeline stages are Tensor x Context x Data ranks apart:
  // another node once that fills a node.
  const unsigned PerNode = C.Groups.front().devicesPerNode();
  const auto &Front = C.Groups.front();
  P2pLink = (uint64_t(O.Tp) * Layout.Data >= PerNode || !Front.IntraNode)
                ? (Front.InterNode ? &*Front.InterNode : nullptr)
                : &*Front.IntraNode;
  if (O.Pp > 1 && !P2pLink)
    return fail(llvm::formatv("--pp {0}: cluster '{1}' has no link between "
                              "the devices of neighbouring stages",
                              O.Pp, C.Name));
  return llvm::Error::success();
}

} // namespace trainstep

using trainstep::fail;

TrainingAnalysis::TrainingAnalysis(const ir::Graph &G, bool Unfused,
                                   bool FlashAttention)
    : G(&G), Unfused(Unfused), FlashAttention(FlashAttention),
      Work(trainingWork(G)), Back(computeBackward(G, Work)),
      Plan(trainingKernels(G, Work, Back, Unfused, FlashAttention)),
      Blocks(analyzeBlocks(G, Work)), TpSizes(tpSplitSizes(G, Work, Blocks)),
      HasAttentionCore(llvm::is_contained(Blocks.AttentionCore, true)) {
  // What selective recomputation recomputes: training's alone.
  findBlockModules(G, Work, Blocks);
  CutBytes.assign(Blocks.numUnits(), 0.0);
  for (const auto &N : G.nodes()) {
    FlopsPerMicroBatch +=
        Work.Nodes[N->index()].Flops + Back.Work[N->index()].Flops;
    const unsigned To = Blocks.UnitOf[N->index()];
    for (const ir::Value *In : N->inputs()) {
      // A weight's view is not sent, nor a load-time constant (a mask):
      // every stage has its own.
      if (!In || !In->producer() || !ir::isFloatingPoint(In->type()) ||
          parameterBehind(In) || Plan.isLoadTimeConstant(In))
        continue;
      const unsigned From = Blocks.UnitOf[In->producer()->index()];
      if (From == To)
        continue;
      const double Bytes = 4.0 * In->numElements();
      for (unsigned U = std::min(From, To); U < std::max(From, To); ++U)
        CutBytes[U] = std::max(CutBytes[U], Bytes);
    }
  }
}

void applyInputRate(TrainReport &R, const TrainOptions &O,
                    unsigned DevicesPerNode) {
  if (!(O.InputSamplesPerSecond > 0) || R.GlobalBatch <= 0 || R.Devices == 0)
    return;
  const unsigned PerNode = std::max(1u, DevicesPerNode);
  const unsigned Nodes = (R.Devices + PerNode - 1) / PerNode;
  const unsigned Loading = std::max(1u, std::min(std::max(1u, O.Dp), Nodes));
  R.InputSeconds = double(R.GlobalBatch) / Loading / O.InputSamplesPerSecond;
  R.InputBound = R.InputSeconds > R.StepSeconds;
  if (!R.InputBound)
    return;
  R.InputWaitSeconds = R.InputSeconds - R.StepSeconds;
  R.StepSeconds = R.InputSeconds;
  R.SamplesPerSecond = R.GlobalBatch / R.StepSeconds;
  R.TflopsPerDevice = R.ModelFlops / R.StepSeconds / R.Devices / 1e12;
}

llvm::Error contextParallelNeedsFlashAttention(unsigned Cp) {
  return fail(llvm::formatv("--cp {0}: context parallelism runs ring "
                            "attention in FlashAttention-style kernels "
                            "(Transformer Engine's); add --flash-attention, "
                            "or exchange heads instead with --cp-comm a2a",
                            Cp));
}

llvm::Error headExchangeNeedsAttention(unsigned Cp) {
  return fail(llvm::formatv("--cp {0} --cp-comm a2a: the model has no "
                            "attention core (a softmax between two products "
                            "of activations) to exchange heads around; use "
                            "--cp 1",
                            Cp));
}

llvm::Error expertsDoNotSplit(unsigned Ep, int64_t Experts) {
  return fail(llvm::formatv("--ep {0}: a mixture of {1} experts does not "
                            "split over {0} ranks; use an ep that divides {1}",
                            Ep, Experts));
}

llvm::Error expertOverlapRefusal(const TrainOptions &O) {
  // Megatron-Core's TransformerConfig refuses these.
  if (O.Recomp == Recompute::Full)
    return fail("--overlap-moe-expert-parallel-comm co-schedules one "
                "micro-batch's forward with another's backward, which full "
                "recomputation does not allow (Megatron-Core refuses it): "
                "use --recompute none or selective");
  if (!isMixedPrecision(O.DType))
    return fail("--overlap-moe-expert-parallel-comm runs in mixed precision "
                "only (Megatron-Core: bf16 or fp16 models): use --dtype "
                "bf16, fp16 or fp8");
  if (O.Pp > 1 && O.Vp == 1)
    return fail(llvm::formatv(
        "--overlap-moe-expert-parallel-comm with --pp {0} needs the "
        "interleaved schedule (Megatron-Core's combined 1F1B): add --vp of "
        "at least 2",
        O.Pp));
  return llvm::Error::success();
}

llvm::Expected<TrainReport> predictTraining(const TrainingAnalysis &A,
                                            const hw::Cluster &C,
                                            const TrainOptions &O) {
  return trainstep::Trainer(A, C, O).run();
}

llvm::Expected<TrainReport> predictTraining(const ir::Graph &G,
                                            const hw::Cluster &C,
                                            const TrainOptions &O) {
  return predictTraining(TrainingAnalysis(G, O.Unfused, O.FlashAttention), C,
                         O);
}

} // namespace perfc
