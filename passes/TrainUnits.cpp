//===- TrainUnits.cpp - A unit's costs per micro-batch --------------------===//
#include "passes/Trainer.h"

#include "passes/TpShard.h"
#include "passes/TrainOptionNames.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace perfc {
namespace trainstep {

ContextRingTerms Trainer::ringOf(const Kernel &K, double Fwd,
                                 double Bwd) const {
  ContextRingTerms R;
  for (unsigned M : K.Members) {
    const ir::Node &N = *G.nodes()[M];
    if (!Work.Nodes[M].Gemm.valid() || N.numInputs() < 2 || !N.input(1) ||
        parameterBehind(N.input(1)))
      continue;
    R.Bytes +=
        keyValueElements(N.input(1)) * elementBytes() * activationScale(M);
  }
  const bool Across = CpGroup.nodes() > 1 || !CpGroup.Intra;
  R.Link = Across ? CpGroup.Inter : CpGroup.Intra;
  if (!R.Link)
    return R;
  // Across nodes every group's ring shares the node's ports.
  const double Share =
      Across && CpGroup.InterShare > 0 && CpGroup.InterShare < 1
          ? CpGroup.InterShare
          : 1;
  R.ForwardStep = cost::p2pSeconds(R.Bytes / Share, *R.Link);
  R.BackwardStep = cost::p2pSeconds(2 * R.Bytes / Share, *R.Link);
  R.ForwardAttention = Fwd / O.Cp;
  R.BackwardAttention = Bwd / O.Cp;
  R.MergeSeconds =
      ringMergeSeconds(K, shard(kernelWork(K, true), K.Head)) / (O.Cp - 1);
  return R;
}

void Trainer::addContextExchange(const ContextRingTerms &R, bool Rerun,
                                 UnitCost &U) const {
  const double Steps = O.Cp - 1;
  const double Fwd = Steps * R.ForwardStep, Bwd = Steps * R.BackwardStep;
  const double ExposedF =
      Steps * std::max(0.0, R.ForwardStep - R.ForwardAttention);
  const double ExposedB =
      Steps * std::max(0.0, R.BackwardStep - R.BackwardAttention);
  const unsigned Forwards = Rerun ? 2 : 1;
  U.CpComm += Forwards * ExposedF + ExposedB;
  U.CpForward += ExposedF;
  U.CpOverlapped += Forwards * (Fwd - ExposedF) + (Bwd - ExposedB);
}

std::vector<ContextAllToAllTerms> Trainer::headExchanges() const {
  std::vector<ContextAllToAllTerms> T(Blocks.numUnits());
  std::vector<unsigned> Products(Blocks.numUnits(), 0);
  for (const auto &N : G.nodes()) {
    const unsigned I = N->index();
    if (!Blocks.AttentionCore[I] || !Work.Nodes[I].Gemm.valid() ||
        N->numInputs() < 2 || !N->input(0) || !N->input(1) ||
        parameterBehind(N->input(1)) || N->numOutputs() == 0 ||
        !N->outputs()[0])
      continue;
    ContextAllToAllTerms &X = T[Blocks.UnitOf[I]];
    const double Scale = elementBytes() * activationScale(I);
    const auto Exchange = [&](double Bytes) {
      const double S =
          cost::collectiveSeconds(cost::Collective::AllToAll, Bytes, CpGroup);
      X.ForwardSeconds += S;
      X.BackwardSeconds += S;
    };
    const double KeyOrValue = keyValueElements(N->input(1)) * Scale;
    X.KeyValueBytes += KeyOrValue;
    Exchange(KeyOrValue);
    // Topological order: an attention's first product, then its second.
    if (Products[Blocks.UnitOf[I]]++ % 2 == 0) {
      const double Query = keyValueElements(N->input(0)) * Scale;
      X.QueryBytes += Query;
      Exchange(Query);
    } else {
      const double Output = double(N->outputs()[0]->numElements()) * Scale;
      X.OutputBytes += Output;
      Exchange(Output);
      ++X.Attentions;
    }
  }
  return T;
}

void Trainer::addHeadExchange(const ContextAllToAllTerms &X, bool Rerun,
                              UnitCost &U) const {
  const bool Again =
      Rerun ||
      (recomputesModule(O, BlockModule::CoreAttention) && !A.FlashAttention);
  U.CpComm += (Again ? 2 : 1) * X.ForwardSeconds + X.BackwardSeconds;
  U.CpForward += X.ForwardSeconds;
}

double Trainer::expertExchangeBytes(const ir::Value *V) const {
  return double(V->numElements()) * elementBytes() * O.ExpertCapacity / O.Tp /
         O.Cp;
}

bool Trainer::rerunsExpertExchange(unsigned U) const {
  return FullyRecomputed[U] || (recomputesModule(O, BlockModule::Mixture) &&
                                !Blocks.ExpertExchanged[U].empty());
}

double Trainer::selectiveRecomputeSeconds(const Kernel &K, double Fwd) const {
  if (O.Recomp != Recompute::Selective || (A.FlashAttention && K.Attention))
    return 0;
  if (recomputed(K.Head))
    return Fwd;
  const double Ratio = fusedByteRatio(K);
  OpWork Again;
  Again.Class = OpClass::Elementwise;
  Again.Type = K.Work.Type;
  bool Any = false;
  for (unsigned M : K.Members) {
    if (!recomputed(M))
      continue;
    const OpWork S = shard(Work.Nodes[M], M);
    Again.Flops += S.Flops;
    Again.BytesRead += S.BytesRead * Ratio;
    Again.BytesWritten += S.BytesWritten * Ratio;
    Any = true;
  }
  return Any ? time(Again) : 0;
}

double Trainer::recomputeSeconds(const Kernel &K, double Fwd,
                                 std::string *Explain) const {
  if (FullyRecomputed[Blocks.UnitOf[K.Head]]) {
    if (Explain)
      *Explain = "its forward again (full recomputation of its block)";
    return Fwd;
  }
  const double Again = selectiveRecomputeSeconds(K, Fwd);
  if (Explain && Again > 0) {
    const BlockModuleSet Mine = [&] {
      BlockModuleSet S = 0;
      for (unsigned M : K.Members)
        S |= Blocks.Modules[M] & O.RecomputeModules;
      return S;
    }();
    *Explain = (recomputed(K.Head) ? std::string("its forward again")
                                   : std::string("the elementwise work of its "
                                                 "fused members again")) +
               " (selective recomputation of " +
               llvm::join(recomputeModuleNames(Mine), ", ") + ")";
  }
  return Again;
}

void Trainer::addCheckpointInputs(llvm::DenseSet<const ir::Value *> &Kept) {
  for (const auto &N : G.nodes()) {
    if (!recomputed(N->index()))
      continue;
    for (const ir::Value *In : N->inputs()) {
      if (!In || !In->producer() || !ir::isFloatingPoint(In->type()) ||
          Plan.isLoadTimeConstant(In))
        continue;
      const ir::Value *Root = Plan.dataRoot(In);
      const ir::Node *P = Root ? Root->producer() : nullptr;
      if (!P || recomputed(P->index()) || !Kept.insert(Root).second)
        continue;
      const unsigned Owner = P->index();
      const double Tokens = Blocks.Expert[Owner] ? O.ExpertCapacity : 1.0;
      Fresh[Blocks.UnitOf[N->index()]].Saved +=
          valueBytes(Root, activationScale(Owner) * Tokens);
    }
  }
}

void Trainer::addExpertExchange(unsigned I, UnitCost &U) const {
  double Fwd = 0;
  for (const ir::Value *V : Blocks.ExpertExchanged[I])
    Fwd += cost::collectiveSeconds(cost::Collective::AllToAll,
                                   expertExchangeBytes(V), EpGroup);
  U.EpComm = (rerunsExpertExchange(I) ? 2 : 1) * Fwd + Fwd;
  U.EpForward = Fwd;
}

std::string Trainer::explainExpertParallel(const StageReport &St) const {
  unsigned Calls = 0;
  const ir::Value *First = nullptr;
  for (const auto &[From, To] : St.Chunks)
    for (unsigned U = From; U <= To; ++U)
      for (const ir::Value *V : Blocks.ExpertExchanged[U]) {
        Calls += rerunsExpertExchange(U) ? 3 : 2;
        First = First ? First : V;
      }
  if (!First)
    return std::string();
  const cost::CommTime One = cost::collectiveTime(
      cost::Collective::AllToAll, expertExchangeBytes(First), EpGroup);
  return explainExpertExchange(St, O, Calls, One.Explain);
}

std::string Trainer::explainContextExchange(const StageReport &St) const {
  const auto InStage = [&](unsigned U) {
    return llvm::any_of(St.Chunks, [&](const std::pair<unsigned, unsigned> &C) {
      return C.first <= U && U <= C.second;
    });
  };
  if (O.CpComm == ContextExchange::AllToAll) {
    const std::vector<ContextAllToAllTerms> T = headExchanges();
    for (unsigned U = 0; U < T.size(); ++U)
      if (T[U].Attentions > 0 && InStage(U)) {
        const cost::CommTime One =
            cost::collectiveTime(cost::Collective::AllToAll,
                                 T[U].QueryBytes / T[U].Attentions, CpGroup);
        return perfc::explainContextAllToAll(St, O, T[U], One.Explain);
      }
    return std::string();
  }
  for (const Kernel &K : Plan.Kernels) {
    const unsigned U = Blocks.UnitOf[K.Head];
    if (K.Attention &&
        llvm::any_of(St.Chunks, [&](const std::pair<unsigned, unsigned> &C) {
          return C.first <= U && U <= C.second;
        }))
      return perfc::explainContextRing(
          St, O, ringOf(K, forwardSeconds(K), kernelBackward(K)));
  }
  return std::string();
}

bool Trainer::neverStored(const ir::Value *V) const {
  if (!A.FlashAttention || V->users().empty())
    return false;
  const ir::Node *P = V->producer();
  const int Own = P ? Plan.KernelOf[P->index()] : -1;
  const bool Constant = Plan.isLoadTimeConstant(V);
  if (!Constant && !(Own >= 0 && inFlashKernel(P->index())))
    return false;
  return llvm::all_of(V->users(), [&](const ir::Node *User) {
    const int K = Plan.KernelOf[User->index()];
    return inFlashKernel(User->index()) && (Constant || K == Own);
  });
}

void Trainer::costUnits() {
  std::vector<UnitCost> &Units = Fresh;
  llvm::DenseSet<std::pair<const ir::Value *, unsigned>> Seen;
  Units.assign(Blocks.numUnits(), UnitCost());
  // Kernels: forward as planned; backward of a GEMM kernel is one product
  // per gradient plus one kernel for its fused epilogue's gradients.
  for (const Kernel &K : Plan.Kernels) {
    const unsigned Head = K.Head;
    UnitCost &U = Units[Blocks.UnitOf[Head]];
    const bool Flash = A.FlashAttention && K.Attention;
    const double Fwd = forwardSeconds(K);
    U.Forward += Fwd;
    const double Bwd = kernelBackward(K);
    if (Flash && O.Cp > 1 && O.CpComm == ContextExchange::Ring)
      addContextExchange(ringOf(K, Fwd, Bwd),
                         FullyRecomputed[Blocks.UnitOf[Head]], U);
    const TpRole Role = Blocks.Tp[Head];
    if (Role == TpRole::Column || Role == TpRole::Row) {
      U.TpGemmForward += Fwd;
      U.TpGemmBackward += Bwd;
    }
    U.Recompute += recomputeSeconds(K, Fwd);
    U.Backward += Bwd;
    if (Flash)
      U.Saved += logSumExpBytes(K) * activationScale(Head);
  }
  if (O.Cp > 1 && O.CpComm == ContextExchange::AllToAll) {
    const std::vector<ContextAllToAllTerms> T = headExchanges();
    for (unsigned I = 0; I < Blocks.numUnits(); ++I)
      addHeadExchange(T[I], FullyRecomputed[I], Units[I]);
  }
  if (O.Ep > 1)
    for (unsigned I = 0; I < Blocks.numUnits(); ++I)
      addExpertExchange(I, Units[I]);
  // Tensor-parallel communication per micro-batch.
  if (O.Tp > 1)
    for (unsigned I = 0; I < Blocks.numUnits(); ++I) {
      double Fwd = 0, Bwd = 0;
      for (const ir::Value *V : Blocks.ForwardReduced[I])
        Fwd += tpExchange(V);
      for (const ir::Value *V : Blocks.BackwardReduced[I]) {
        Bwd += tpExchange(V);
        // Sequence parallelism keeps a column GEMM's input sharded, so
        // backward all-gathers it again for the weight gradient
        // (Korthikanti et al. 2022, section 4.2.2).
        if (O.SequenceParallel)
          Bwd += cost::collectiveSeconds(cost::Collective::AllGather,
                                         V->numElements() * elementBytes(),
                                         TpGroup);
      }
      // Sequence parallelism adds the mirror exchanges of the column
      // inputs in forward and of the row outputs in backward; the pairs
      // above already count both halves.
      // Under TpCommOverlap each exchange runs in Tp chunks against the
      // GEMM it feeds or follows: the first chunk, and what outlasts the
      // unit's tensor-parallel GEMMs in that direction, stay exposed.
      double HiddenF = 0, HiddenB = 0;
      if (O.TpCommOverlap) {
        const double Pipelined = 1.0 - 1.0 / O.Tp;
        HiddenF = std::min(Fwd * Pipelined, Units[I].TpGemmForward);
        HiddenB = std::min(Bwd * Pipelined, Units[I].TpGemmBackward);
      }
      Units[I].TpComm = Fwd - HiddenF + Bwd - HiddenB;
      Units[I].TpForward = Fwd - HiddenF;
      Units[I].TpOverlapped = HiddenF + HiddenB;
      if (FullyRecomputed[I]) {
        Units[I].TpComm += Fwd - HiddenF;
        Units[I].TpOverlapped += HiddenF;
      } else if (O.Recomp == Recompute::Selective && Fwd > 0) {
        // A recomputed row GEMM's exchange runs again, exposed and hidden
        // in the shares of the unit's forward exchanges.
        double Again = 0;
        for (const ir::Value *V : Blocks.ForwardReduced[I])
          if (V->producer() && recomputed(V->producer()->index()))
            Again += tpExchange(V);
        Units[I].TpComm += Again * (Fwd - HiddenF) / Fwd;
        Units[I].TpOverlapped += Again * HiddenF / Fwd;
      }
    }
  // Parameters, saved activations, inputs.
  for (const auto &N : G.nodes()) {
    UnitCost &U = Units[Blocks.UnitOf[N->index()]];
    // Sequence parallelism splits activations, not the replicated
    // parameters (norms, row biases).
    const bool Expert = Blocks.Expert[N->index()];
    const double Params =
        Work.Nodes[N->index()].Params *
        (Blocks.Tp[N->index()] == TpRole::Replicated ? 1.0 : 1.0 / O.Tp) /
        (Expert ? O.Ep : 1);
    U.Params += Params;
    if (Expert && O.Ep > 1)
      U.ExpertParams += Params;
    U.ParamTensors += Work.Nodes[N->index()].ParamTensors;
    for (const ir::Value *Out : N->outputs())
      if (Out && !neverStored(Out))
        U.Largest =
            std::max(U.Largest, valueBytes(Out, activationScale(N->index())));
  }
  llvm::DenseSet<const ir::Value *> Kept;
  for (const SavedTensor &S : Back.Saved) {
    const ir::Node *P = S.Value->producer();
    const unsigned Owner = P ? P->index() : S.Node;
    // Recomputed from the module's inputs, or never stored
    // (FlashAttention).
    if (P && (recomputed(Owner) ||
              (Blocks.AttentionCore[Owner] && inFlashKernel(Owner))))
      continue;
    if (O.Recomp == Recompute::Selective)
      Kept.insert(Plan.dataRoot(S.Value));
    // An expert's tokens, and its results, at the experts' capacity.
    const double Tokens =
        Blocks.Expert[Owner] || Blocks.Expert[S.Node] ? O.ExpertCapacity : 1.0;
    const double Scale = activationScale(Owner) * Tokens;
    const double Bytes =
        S.Mask ? S.bytes() * Scale : valueBytes(S.Value, Scale);
    Units[Blocks.UnitOf[S.Node]].Saved += Bytes;
  }
  if (O.Recomp == Recompute::Selective)
    addCheckpointInputs(Kept);
  // Full recomputation keeps only what enters each block.
  for (const auto &N : G.nodes()) {
    const unsigned U = Blocks.UnitOf[N->index()];
    for (const ir::Value *In : N->inputs()) {
      // A load-time constant (a causal mask) is no activation to keep.
      if (!In || !In->producer() || !ir::isFloatingPoint(In->type()) ||
          Plan.isLoadTimeConstant(In))
        continue;
      const unsigned From = Blocks.UnitOf[In->producer()->index()];
      if (From != U && Seen.insert({In, U}).second)
        Units[U].InputBytes +=
            valueBytes(In, (O.SequenceParallel ? 1.0 / O.Tp : 1.0) / O.Cp);
    }
  }
}

} // namespace trainstep
} // namespace perfc
