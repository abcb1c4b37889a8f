//===- Planner.cpp - The training planner (Z3 or exhaustive) --------------===//
#include "passes/Planner.h"

#include "passes/Saturating.h"
#include "passes/TrainExplain.h"
#include "passes/TrainOptionNames.h"
#include "passes/Z3Timeout.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

namespace perfc {

const char *name(PlannerKind K) {
  return K == PlannerKind::Z3 ? "z3" : "exhaustive";
}

namespace {

using Clock = std::chrono::steady_clock;

llvm::Error fail(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

double since(Clock::time_point T) {
  return std::chrono::duration<double>(Clock::now() - T).count();
}

bool isPow2(unsigned X) { return X && !(X & (X - 1)); }

/// "80 GiB", "37.5 GiB".
std::string gib(double Bytes) {
  const double G = Bytes / double(1ull << 30);
  if (std::fabs(G - std::round(G)) < 0.05)
    return llvm::formatv("{0:F0} GiB", G).str();
  return llvm::formatv("{0:F1} GiB", G).str();
}

std::string describe(const TrainOptions &O) {
  std::string S = llvm::formatv("dp {0}, tp {1}, pp {2}", O.Dp, O.Tp, O.Pp);
  if (O.Cp > 1)
    S += llvm::formatv(", cp {0}{1}", O.Cp, cpCommSuffix(O)).str();
  if (O.Ep > 1)
    S += llvm::formatv(", ep {0}", O.Ep).str();
  if (O.Vp > 1)
    S += llvm::formatv(", vp {0}", O.Vp).str();
  S += llvm::formatv(", micro-batch {0}", O.MicroBatch).str();
  if (O.SequenceParallel)
    S += ", sp";
  if (O.TpCommOverlap)
    S += ", tp-comm-overlap";
  // The modules are left out (a plan's candidates differ by recompute
  // kind); the blocks full recomputation reruns, where not every one
  // alone, are named.
  S += ", recompute " +
       (O.Recomp == Recompute::Full ? recomputeLabel(O) : name(O.Recomp));
  S += llvm::formatv(", zero {0}", O.Zero).str();
  // An uneven data split: "..., data a100 x16 (3 micro-batches each) +
  // v100 x16 (1 each)".
  for (size_t I = 0; I < O.DataSplit.size(); ++I) {
    const DataShare &D = O.DataSplit[I];
    S += llvm::formatv("{0}{1} x{2}", I ? " + " : ", data ", D.Device,
                       D.Replicas)
             .str();
    if (D.MicroBatches)
      S += llvm::formatv(I ? " ({0} each)" : " ({0} micro-batches each)",
                         D.MicroBatches)
               .str();
  }
  return S;
}

/// With the stage devices of a mixed plan: "..., stages a100 x3 + v100 x1".
std::string describe(const TrainOptions &O,
                     const std::vector<std::string> &Devs) {
  std::string S = describe(O);
  for (size_t I = 0; I < Devs.size();) {
    size_t J = I;
    while (J < Devs.size() && Devs[J] == Devs[I])
      ++J;
    S += llvm::formatv("{0}{1} x{2}", I ? " + " : ", stages ", Devs[I], J - I)
             .str();
    I = J;
  }
  return S;
}

/// The lexicographic key both planners minimise.
bool better(const PlanCandidate &A, const PlanCandidate &B) {
  return std::tie(A.TimeNs, A.Bytes) < std::tie(B.TimeNs, B.Bytes);
}

template <typename T>
std::vector<T> pick(const llvm::Optional<T> &Fixed, std::vector<T> All) {
  if (Fixed)
    return {*Fixed};
  return All;
}

/// Free memory of the fullest stage, each on its own device.
double headroom(const TrainReport &T, const hw::Cluster &C) {
  double Least = std::numeric_limits<double>::infinity();
  for (const StageReport &S : T.Stages) {
    double Cap = T.CapacityBytes;
    for (const hw::NodeGroup &G : C.Groups)
      for (const hw::NodeDevice &D : G.Devices)
        if (D.Dev->Name == S.Device)
          Cap = D.Dev->mainMemory().CapacityBytes;
    Least = std::min(Least, Cap - S.peakBytes());
  }
  return Least;
}

/// A strategy less its recomputation (and the overlaps that follow from
/// it): where the block method's search pairs a step without recomputation
/// with one under full recomputation.
using StrategyKey = std::tuple<unsigned, unsigned, unsigned, uint8_t, unsigned,
                               unsigned, unsigned, int64_t, bool, unsigned>;
StrategyKey recomputeFree(const TrainOptions &O) {
  return {O.Dp, O.Tp, O.Cp,         uint8_t(O.CpComm),  O.Pp,
          O.Vp, O.Ep, O.MicroBatch, O.SequenceParallel, O.Zero};
}

/// What the planners compare of a strategy predicted as T.
PlanCandidate candidate(const TrainOptions &O,
                        const std::vector<std::string> &StageDevices,
                        const TrainReport &T, const hw::Cluster &C) {
  PlanCandidate P;
  P.Options = O;
  P.StageDevices = StageDevices;
  P.StepSeconds = T.StepSeconds;
  P.PeakBytes = T.peak().peakBytes();
  P.TimeNs = roundSaturated(P.StepSeconds * 1e9);
  P.Bytes = roundSaturated(P.PeakBytes);
  P.HeadroomBytes = floorSaturated(headroom(T, C));
  return P;
}

} // namespace

llvm::Expected<PlanResult> planTraining(const PlanRequest &R) {
  const auto Start = Clock::now();
  if (!R.Cluster || !R.Analysis)
    return fail("planner: no cluster or model given");
  const hw::Cluster &C = *R.Cluster;
  const PlanFixed &F = R.Fixed;
  const unsigned Total = C.numDevices();
  const unsigned N = R.Devices ? R.Devices : Total;
  if (N > Total)
    return fail(llvm::formatv("--devices {0}: cluster '{1}' has {2} devices", N,
                              C.Name, Total));
  if (R.GlobalBatch <= 0)
    return fail("--plan needs --global-batch (samples per step)");

  std::vector<int64_t> Mbs = pick(F.MicroBatch, R.MicroBatchSizes);
  auto FirstA = R.Analysis(Mbs.front());
  if (!FirstA)
    return FirstA.takeError();
  const unsigned Blocks = (*FirstA)->Blocks.NumBlocks;
  const bool HasTp = (*FirstA)->Blocks.HasTensorParallelPattern;
  // Context parallelism runs ring attention in FlashAttention's kernels, or
  // exchanges heads around any attention core (all-to-all): a dimension of
  // the search only where the analyses allow it, in the exchanges they
  // allow (PlanFixed::CpComm).
  const bool Flash = (*FirstA)->FlashAttention;
  std::vector<ContextExchange> Exchanges;
  if (F.CpComm)
    Exchanges = {*F.CpComm};
  else if (Flash)
    Exchanges = {ContextExchange::Ring, ContextExchange::AllToAll};
  else
    Exchanges = {R.Base.CpComm};
  llvm::erase_if(Exchanges, [&](ContextExchange E) {
    return E == ContextExchange::Ring && !Flash;
  });
  const bool HeadExchange =
      llvm::is_contained(Exchanges, ContextExchange::AllToAll);
  const bool CanCp = (*FirstA)->HasAttentionCore && !Exchanges.empty();
  // A degree given as the base strategy's counts as pinned.
  const llvm::Optional<unsigned> PinCp =
      F.Cp
          ? F.Cp
          : (R.Base.Cp != 1 ? llvm::Optional<unsigned>(R.Base.Cp) : llvm::None);
  // Expert parallelism: for models with mixtures, pinned like cp.
  const std::vector<int64_t> &ExpertCounts = (*FirstA)->Blocks.ExpertCounts;
  const llvm::Optional<unsigned> PinEp =
      F.Ep
          ? F.Ep
          : (R.Base.Ep != 1 ? llvm::Optional<unsigned>(R.Base.Ep) : llvm::None);
  // Mixed GPU types: pipeline stages on types (see the header).
  const bool Mixed = isMixedCluster(C);
  std::vector<GpuType> Types;
  if (Mixed) {
    auto T = gpuTypes(C);
    if (!T)
      return T.takeError();
    Types = std::move(*T);
    if (F.Vp && *F.Vp > 1)
      return fail(llvm::formatv("--vp {0}: interleaving is not modelled on "
                                "mixed GPU types (cluster '{1}'); use --vp 1",
                                *F.Vp, C.Name));
    if (R.Base.Schedule != PipelineSchedule::OneFOneB)
      return fail("mixed GPU types: only the 1F1B schedule is modelled");
  }
  const unsigned PerNode = [&] {
    if (!Mixed)
      return C.Groups.front().devicesPerNode();
    unsigned Most = 0; // a pinned tp must fit a node of some type
    for (const GpuType &T : Types)
      Most = std::max(Most, T.PerNode);
    return Most;
  }();

  // Pinned degrees that no candidate can satisfy.
  if (F.Tp) {
    if (*F.Tp > 1 && !HasTp)
      return fail(llvm::formatv(
          "--tp {0}: the model has no Megatron tensor-parallel pattern",
          *F.Tp));
    if (R.AllowCrossNodeTp && !Mixed ? (*F.Tp == 0 || N % *F.Tp)
                                     : (!isPow2(*F.Tp) || PerNode % *F.Tp))
      return fail(
          R.AllowCrossNodeTp && !Mixed
              ? llvm::formatv("--tp {0} does not divide the {1} devices used",
                              *F.Tp, N)
                    .str()
              : llvm::formatv("--tp {0}: tensor parallelism must be a power "
                              "of two dividing the {1} devices of a node of "
                              "'{2}' (or --allow-cross-node-tp)",
                              *F.Tp, PerNode, C.Name)
                    .str());
  }
  if (F.Pp && (*F.Pp == 0 || *F.Pp > std::max(1u, Blocks)))
    return fail(llvm::formatv("--pp {0}: the model has {1} blocks, and a "
                              "pipeline stage needs at least one",
                              *F.Pp, Blocks));
  if (PinCp && *PinCp != 1) {
    if (*PinCp == 0 || N % *PinCp)
      return fail(llvm::formatv("--cp {0} does not divide the {1} devices used",
                                *PinCp, N));
    if (!CanCp && HeadExchange)
      return headExchangeNeedsAttention(*PinCp);
    if (!CanCp)
      return contextParallelNeedsFlashAttention(*PinCp);
    if (Mixed)
      return fail(llvm::formatv("--cp {0}: context parallelism is not "
                                "modelled on mixed GPU types (cluster '{1}'); "
                                "use --cp 1",
                                *PinCp, C.Name));
  }
  if (PinEp && *PinEp != 1) {
    if (ExpertCounts.empty())
      return fail(llvm::formatv("--ep {0}: the model has no mixture of "
                                "experts; use --ep 1",
                                *PinEp));
    for (int64_t E : ExpertCounts)
      if (*PinEp == 0 || E % *PinEp)
        return expertsDoNotSplit(*PinEp, E);
    if (*PinEp == 0 || N % *PinEp)
      return fail(llvm::formatv("--ep {0} does not divide the {1} devices used",
                                *PinEp, N));
    if (Mixed)
      return fail(llvm::formatv("--ep {0}: expert parallelism is not "
                                "modelled on mixed GPU types (cluster '{1}'); "
                                "use --ep 1",
                                *PinEp, C.Name));
  }
  if (F.Dp && (*F.Dp == 0 || (!Mixed && N % *F.Dp)))
    return fail(llvm::formatv("--dp {0} does not divide the {1} devices used",
                              *F.Dp, N));
  if (!Mixed) {
    const uint64_t Pinned = uint64_t(F.Dp.getValueOr(1)) * F.Tp.getValueOr(1) *
                            F.Pp.getValueOr(1) * PinCp.getValueOr(1);
    if (N % Pinned)
      return fail(llvm::formatv("dp x tp x cp x pp pinned to {0} does not "
                                "divide the {1} devices used",
                                Pinned, N));
  }
  if (F.Vp && *F.Vp > 1 && F.Pp && *F.Pp == 1)
    return fail("--vp (interleaved 1F1B) needs --pp of at least 2");
  if (F.Sp && *F.Sp && F.Tp && *F.Tp == 1)
    return fail("--sp (sequence parallelism) needs --tp of at least 2");
  if (F.Zero && *F.Zero > 3)
    return fail("--zero must be 0, 1, 2 or 3");
  {
    // The pinned choices alone, the rest at the values every framework
    // runs (pp 1, vp 1, ZeRO 0).
    TrainOptions Pinned;
    Pinned.Pp = F.Pp.getValueOr(1);
    Pinned.Vp = F.Vp.getValueOr(1);
    Pinned.Zero = F.Zero.getValueOr(0);
    Pinned.Cp = PinCp.getValueOr(1);
    Pinned.CpComm =
        F.CpComm ? *F.CpComm : defaultContextExchange(R.TargetFramework);
    Pinned.OverlapParamGather = R.Base.OverlapParamGather;
    Pinned.OverlapMoeExpertParallelComm = R.Base.OverlapMoeExpertParallelComm;
    if (llvm::Error E = checkFramework(R.TargetFramework, Pinned))
      return std::move(E);
  }

  // Recomputation: none; selective of the attention core, and where the
  // model has them also of the modules Megatron-Core recomputes by
  // discarding their outputs (norms, the experts' activation, latent
  // attention's up projections: little arithmetic for the memory they
  // hold); full. Pinned, it keeps the base strategy's modules.
  std::vector<std::pair<Recompute, BlockModuleSet>> Recomputes;
  if (F.Recomp) {
    Recomputes = {{*F.Recomp, R.Base.RecomputeModules}};
  } else {
    const BlockModuleSet Found = (*FirstA)->Blocks.ModulesFound;
    const BlockModuleSet Core = bit(BlockModule::CoreAttention);
    const BlockModuleSet Light = Found & (Core | bit(BlockModule::Norm) |
                                          bit(BlockModule::ExpertActivation) |
                                          bit(BlockModule::LatentUp));
    Recomputes = {{Recompute::None, Core}, {Recompute::Selective, Core}};
    if (Light && Light != Core)
      Recomputes.push_back({Recompute::Selective, Light});
    Recomputes.push_back({Recompute::Full, Core});
  }

  // The space, in evaluation order.
  std::vector<unsigned> Tps;
  for (unsigned T = 1; T <= N; ++T) {
    if (N % T)
      continue;
    if (T > 1 && !HasTp)
      break;
    if (!R.AllowCrossNodeTp && (!isPow2(T) || PerNode % T))
      continue;
    Tps.push_back(T);
  }
  Tps = pick(F.Tp, Tps);
  struct Point {
    TrainOptions O;
    std::vector<std::string> Devs; ///< Mixed: each stage's device.
  };
  std::vector<Point> Space;
  // The choices every strategy makes besides its degrees.
  // An uneven data split (O.DataSplit) needs only whole micro-batches, at
  // least one per replica; its counts are chosen when it is evaluated.
  auto AddRest = [&](TrainOptions O, const std::vector<std::string> &Devs) {
    for (int64_t Mb : Mbs) {
      if (O.DataSplit.empty()
              ? (R.GlobalBatch / O.Dp) % Mb != 0
              : R.GlobalBatch % Mb != 0 || R.GlobalBatch / Mb < int64_t(O.Dp))
        continue;
      // Interleaved 1F1B runs micro-batches in groups of pp.
      if (O.Vp > 1 && (R.GlobalBatch / O.Dp / Mb) % O.Pp)
        continue;
      for (const auto &[Rc, Modules] : Recomputes)
        for (bool Sp : pick(F.Sp, {false, true})) {
          if (Sp && O.Tp == 1)
            continue;
          // Megatron-Core's dispatcher needs sequence parallelism to split
          // the tokens over tensor ranks.
          if (O.Ep > 1 && O.Tp > 1 && !Sp)
            continue;
          for (unsigned Z : pick(F.Zero, {0u, 1u, 2u, 3u})) {
            // ZeRO shards over the data-parallel ranks with their context
            // ranks.
            if (Z > 0 && O.Dp * O.Cp == 1 && !F.Zero)
              continue;
            // Expert parallelism with ZeRO 3 is not modelled.
            if (Z == 3 && O.Ep > 1)
              continue;
            O.MicroBatch = Mb;
            O.GlobalBatch = R.GlobalBatch;
            O.Recomp = Rc;
            O.RecomputeModules = Modules;
            O.SequenceParallel = Sp;
            // Overlap, where asked, applies to the strategies that have
            // sequence-parallel exchanges to overlap.
            O.TpCommOverlap = R.Base.TpCommOverlap && Sp;
            // Likewise the parameters' gather, where ZeRO shards the
            // optimizer and keeps whole parameters.
            O.OverlapParamGather =
                R.Base.OverlapParamGather && (Z == 1 || Z == 2);
            // And the experts' all-to-alls, where Megatron-Core's combined
            // 1F1B runs (expertOverlapRefusal says where it does not).
            O.OverlapMoeExpertParallelComm =
                R.Base.OverlapMoeExpertParallelComm && O.Ep > 1 &&
                !errorToBool(expertOverlapRefusal(O));
            O.Zero = Z;
            O.Timeline = false;
            O.Explain = false; // the report's prediction explains itself
            if (frameworkRefusal(R.TargetFramework, O))
              continue;
            Space.push_back({O, Devs});
          }
        }
    }
  };
  // Expert-parallel degrees for Ranks data-parallel ranks (with their
  // context ranks): 1, and for models with mixtures the powers of two that
  // divide Ranks and every mixture's experts; a pinned degree (checked
  // against the experts above) where it divides Ranks.
  auto expertDegrees = [&](unsigned Ranks) {
    if (PinEp)
      return Ranks % *PinEp == 0 ? std::vector<unsigned>{*PinEp}
                                 : std::vector<unsigned>{};
    std::vector<unsigned> Eps = {1};
    if (!ExpertCounts.empty())
      for (unsigned Ep = 2; Ep <= Ranks && Ranks % Ep == 0; Ep *= 2) {
        if (llvm::any_of(ExpertCounts, [&](int64_t E) { return E % Ep; }))
          break;
        Eps.push_back(Ep);
      }
    return Eps;
  };
  // Adds the strategies of every micro-batch size in Mbs to Space.
  auto BuildSpace = [&] {
    if (Mixed) {
      // Whole types, in every order: tp inside a node of each, dp x tp
      // dividing each type's devices, one stage per dp x tp of them.
      std::vector<unsigned> TpsMixed;
      for (unsigned T = 1; T <= PerNode; T *= 2)
        if (T == 1 || HasTp)
          TpsMixed.push_back(T);
      for (unsigned Tp : pick(F.Tp, TpsMixed))
        for (unsigned Mask = 1; Mask < (1u << Types.size()); ++Mask) {
          std::vector<unsigned> Order;
          unsigned Least = UINT32_MAX;
          for (unsigned T = 0; T < Types.size(); ++T)
            if (Mask & (1u << T)) {
              Order.push_back(T);
              Least = std::min(Least, Types[T].Devices);
            }
          if (llvm::any_of(Order,
                           [&](unsigned T) { return Types[T].PerNode % Tp; }))
            continue;
          do {
            for (unsigned Dp = 1; uint64_t(Dp) * Tp <= Least; ++Dp) {
              if (llvm::any_of(Order, [&](unsigned T) {
                    return Types[T].Devices % (Dp * Tp);
                  }))
                continue;
              std::vector<std::string> Devs;
              for (unsigned T : Order)
                Devs.insert(Devs.end(), Types[T].Devices / (Dp * Tp),
                            Types[T].Dev->Name);
              const unsigned Pp = Devs.size();
              if (Pp > std::max(1u, Blocks) || (F.Pp && Pp != *F.Pp) ||
                  (F.Dp && Dp != *F.Dp) || R.GlobalBatch % Dp ||
                  (R.Devices && Dp * Tp * Pp != R.Devices))
                continue;
              TrainOptions O = R.Base;
              O.Dp = Dp;
              O.Tp = Tp;
              O.Cp = 1;
              O.Pp = Pp;
              O.Vp = 1;
              AddRest(O, Devs);
            }
          } while (std::next_permutation(Order.begin(), Order.end()));
          // The uneven data split over these types: every device of each a
          // replica's (tp devices), pp 1.
          if (Order.size() < 2 || (F.Pp && *F.Pp != 1) || (F.Vp && *F.Vp != 1))
            continue;
          TrainOptions O = R.Base;
          O.Tp = Tp;
          O.Cp = 1;
          O.Dp = 0;
          for (unsigned T : Order) {
            O.DataSplit.push_back(
                {Types[T].Dev->Name, Types[T].Devices / Tp, 0});
            O.Dp += Types[T].Devices / Tp;
          }
          if ((F.Dp && O.Dp != *F.Dp) || (R.Devices && O.Dp * Tp != R.Devices))
            continue;
          AddRest(O, {});
        }
    }
    // Context-parallel degrees: powers of two up to 32 (Megatron-Core's
    // runs reach 32 at a million tokens), where FlashAttention allows them.
    std::vector<unsigned> Cps = {1};
    if (CanCp)
      for (unsigned Cp = 2; Cp <= 32 && Cp <= N; Cp *= 2)
        Cps.push_back(Cp);
    Cps = pick(PinCp, Cps);
    for (unsigned Tp : Mixed ? std::vector<unsigned>{} : Tps)
      for (unsigned Cp : Cps)
        for (unsigned Pp = 1; Pp <= std::max(1u, Blocks); ++Pp) {
          if ((N / Tp) % Cp || (N / Tp / Cp) % Pp || (F.Pp && Pp != *F.Pp))
            continue;
          const unsigned Dp = N / Tp / Cp / Pp;
          if (F.Dp && Dp != *F.Dp)
            continue;
          if (R.GlobalBatch % Dp)
            continue;
          if (R.Base.Split == Partition::Even && Blocks % Pp)
            continue;
          // vp 3 too: Megatron-LM runs 175B and 530B with it.
          for (unsigned Vp : pick(F.Vp, {1u, 2u, 3u, 4u})) {
            if (Vp > 1 && (Pp == 1 || Blocks % (Pp * Vp)))
              continue;
            TrainOptions O = R.Base;
            O.Dp = Dp;
            O.Tp = Tp;
            O.Cp = Cp;
            O.Pp = Pp;
            O.Vp = Vp;
            for (unsigned Ep : expertDegrees(Dp * Cp)) {
              O.Ep = Ep;
              if (Cp == 1) {
                AddRest(O, {});
                continue;
              }
              for (ContextExchange E : Exchanges) {
                O.CpComm = E;
                AddRest(O, {});
              }
            }
          }
        }
  };
  BuildSpace();

  PlanResult Res;
  Res.Planner = R.Planner;
  Res.TargetFramework = R.TargetFramework;
  if (Space.empty())
    return fail(llvm::formatv(
        "no strategy satisfies the constraints: {0} devices (tp {1}), global "
        "batch {2}, micro-batch {3}{4}",
        N,
        R.AllowCrossNodeTp
            ? "dividing the devices"
            : llvm::formatv("a power of two up to {0}", PerNode).str(),
        R.GlobalBatch,
        F.MicroBatch ? std::to_string(*F.MicroBatch) : "1, 2, 4 or 8",
        " (dp must divide the global batch, the micro-batch the samples per "
        "replica)" +
            (R.TargetFramework == Framework::Any
                 ? std::string()
                 : std::string(", run by --framework ") +
                       name(R.TargetFramework))));

  // Evaluate every candidate with the cost model.
  std::vector<PlanCandidate> All;
  All.reserve(Space.size());
  llvm::Optional<PlanCandidate> Smallest; // the least memory, fitting or not
  double SmallestCapacity = 0;
  std::string FirstError;
  const double Capacity = C.primaryDevice().mainMemory().CapacityBytes;
  auto LastProgress = Start;
  bool Printed = false;
  std::map<int64_t, const TrainingAnalysis *> Analyses;
  // The least fitting step time at each micro-batch size evaluated.
  std::map<int64_t, double> BestAt;
  // For the block method's search: the strategies (less their
  // recomputation) that overflow without recomputation, with their step
  // time, and those that fit with full recomputation.
  std::map<StrategyKey, double> Overflowing;
  std::map<StrategyKey, TrainOptions> FullFits;
  for (size_t Next = 0;;) {
    for (; Next < Space.size(); ++Next) {
      const Point &Pt = Space[Next];
      const TrainOptions &O = Pt.O;
      if (R.TimeLimitSeconds > 0 && Res.Candidates > 0 &&
          since(Start) > R.TimeLimitSeconds) {
        Res.TimedOut = true;
        break;
      }
      const TrainingAnalysis *&A = Analyses[O.MicroBatch];
      if (!A) {
        auto Got = R.Analysis(O.MicroBatch);
        if (!Got)
          return Got.takeError();
        A = *Got;
      }
      TrainOptions Chosen = O;
      llvm::Expected<TrainReport> T = TrainReport();
      if (!O.DataSplit.empty()) {
        if (llvm::Error E = balanceDataSplit(*A, C, Chosen))
          T = std::move(E);
        else
          T = predictDataSplit(*A, C, Chosen);
      } else {
        T = Pt.Devs.empty() ? predictTraining(*A, C, O)
                            : predictMixed(*A, C, O, Pt.Devs);
      }
      // The time-balanced split overflows a stage: move blocks so that every
      // stage fits, if any split does (vp 1; mixed plans split for memory
      // already).
      if (T && !T->Fits && Pt.Devs.empty() && O.DataSplit.empty() && O.Pp > 1 &&
          O.Vp == 1 && O.Schedule == PipelineSchedule::OneFOneB &&
          O.ChunkBlocks.empty() && O.Split == Partition::Balanced &&
          !groupedFullRecompute(O))
        if (const std::vector<UnitCost> *U = A->cachedUnits(C, O)) {
          std::vector<StageSpec> Specs;
          for (const StageReport &S : T->Stages)
            Specs.push_back({U, T->CapacityBytes, S.InFlight});
          if (auto Split = splitStages(
                  Specs, Blocks, {T->modelStateBytesPerParam(), O.Recomp})) {
            Chosen.ChunkBlocks = *Split;
            auto Moved = predictTraining(*A, C, Chosen);
            if (Moved && Moved->Fits)
              T = std::move(Moved);
            else
              Chosen = O;
          }
        }
      ++Res.Candidates;
      if (!T) {
        std::string E = llvm::toString(T.takeError());
        if (FirstError.empty())
          FirstError = describe(O, Pt.Devs) + ": " + E;
        continue;
      }
      // A mixed plan keeps the split it was predicted with.
      if (!Pt.Devs.empty() && Chosen.Pp > 1 && Chosen.ChunkBlocks.empty())
        for (const StageReport &S : T->Stages)
          Chosen.ChunkBlocks.push_back(S.Blocks);
      const PlanCandidate P = candidate(Chosen, Pt.Devs, *T, C);
      if (!F.Recomp && Pt.Devs.empty() && O.DataSplit.empty()) {
        if (O.Recomp == Recompute::None && !T->Fits)
          Overflowing.try_emplace(recomputeFree(O), P.StepSeconds);
        else if (O.Recomp == Recompute::Full && T->Fits)
          FullFits.try_emplace(recomputeFree(O), O);
      }
      if (!Smallest || P.PeakBytes < Smallest->PeakBytes) {
        Smallest = P;
        SmallestCapacity = T->CapacityBytes;
      }
      if (T->Fits) {
        All.push_back(P);
        auto [It, New] = BestAt.try_emplace(O.MicroBatch, P.StepSeconds);
        if (!New)
          It->second = std::min(It->second, P.StepSeconds);
      }
      if (R.Progress &&
          std::chrono::duration<double>(Clock::now() - LastProgress).count() >
              0.25 &&
          since(Start) > 1) {
        LastProgress = Clock::now();
        llvm::errs() << llvm::formatv(
            "\rperfc: planning: {0} of {1} candidates evaluated, {2} fit",
            Res.Candidates, Space.size(), All.size());
        Printed = true;
      }
    }
    // Larger micro-batches while they pay: data-parallel CNN and BERT
    // training runs 32 to 256 samples per GPU, where Megatron-style plans
    // stop at a few. Doubled while the largest size so far beats every
    // smaller one, up to the global batch.
    if (F.MicroBatch || Res.TimedOut || BestAt.empty())
      break;
    const int64_t Largest = *std::max_element(Mbs.begin(), Mbs.end());
    const auto Top = BestAt.find(Largest);
    const int64_t Doubled = Largest * 2;
    if (Doubled > R.GlobalBatch || Top == BestAt.end() ||
        llvm::any_of(BestAt, [&](const auto &E) {
          return E.first < Largest && E.second <= Top->second;
        }))
      break;
    // A size the model cannot be imported at (its tensors would overflow)
    // ends the growth; the plan stands on the sizes before it.
    auto Grown = R.Analysis(Doubled);
    if (!Grown) {
      llvm::consumeError(Grown.takeError());
      break;
    }
    Analyses[Doubled] = *Grown;
    Mbs = {Doubled};
    const size_t Before = Space.size();
    BuildSpace();
    if (Space.size() == Before)
      break;
  }
  // Full recomputation of only some blocks (Megatron's --recompute-method
  // block, as NeMo's configurations set recompute_num_layers): for a
  // strategy that overflows without recomputation and fits with full, the
  // fewest blocks per chunk rerun that fit. Memory falls and time rises
  // with the blocks rerun, so bisection finds it; the step without
  // recomputation bounds it from below, so a strategy is searched only
  // where that bound beats the best plan so far (cheapest bound first).
  uint64_t Searched = 0;
  if (!F.Recomp && !Res.TimedOut && !All.empty()) {
    std::vector<std::pair<double, StrategyKey>> Order;
    for (const auto &[Key, Seconds] : Overflowing)
      if (FullFits.count(Key))
        Order.push_back({Seconds, Key});
    llvm::sort(Order);
    double BestSeconds = All.front().StepSeconds;
    for (const PlanCandidate &P : All)
      BestSeconds = std::min(BestSeconds, P.StepSeconds);
    for (const auto &[Bound, Key] : Order) {
      if (Bound >= BestSeconds)
        break;
      if (R.TimeLimitSeconds > 0 && since(Start) > R.TimeLimitSeconds) {
        Res.TimedOut = true;
        break;
      }
      TrainOptions O = FullFits.find(Key)->second;
      const TrainingAnalysis &A = *Analyses[O.MicroBatch];
      O.Method = RecomputeMethod::Block;
      // Lo blocks per chunk overflow; Hi, every block of every chunk, is
      // full recomputation again (on the split without it), taken to fit.
      unsigned Lo = 0, Hi = A.Blocks.NumBlocks;
      llvm::Optional<PlanCandidate> Found;
      while (Hi - Lo > 1) {
        O.RecomputeNumLayers = (Lo + Hi) / 2;
        auto T = predictTraining(A, C, O);
        ++Searched;
        if (!T) {
          llvm::consumeError(T.takeError());
          break;
        }
        if (T->Fits) {
          Hi = O.RecomputeNumLayers;
          Found = candidate(O, {}, *T, C);
        } else {
          Lo = O.RecomputeNumLayers;
        }
      }
      if (!Found || Found->StepSeconds >= BestSeconds)
        continue;
      BestSeconds = Found->StepSeconds;
      All.push_back(*Found);
    }
  }
  Res.Candidates += Searched;
  Res.Space = Space.size() + Searched;
  if (Printed)
    llvm::errs() << "\n";
  Res.EvaluateSeconds = since(Start);
  Res.Feasible = All.size();
  if (All.empty()) {
    if (Smallest && Mixed)
      return fail(llvm::formatv(
          "no strategy fits in the memory of its stages' devices: the "
          "smallest needs {0} on a {1} device ({2})",
          gib(Smallest->PeakBytes), gib(SmallestCapacity),
          describe(Smallest->Options, Smallest->StageDevices)));
    if (Smallest)
      return fail(llvm::formatv(
          "no strategy fits in {0} per device{3}: the smallest needs {1} ({2})",
          gib(Capacity), gib(Smallest->PeakBytes), describe(Smallest->Options),
          R.MemoryReserveBytes > 0
              ? llvm::formatv(" (what --memory-reserve's {0} leaves)",
                              gib(R.MemoryReserveBytes))
                    .str()
              : std::string()));
    if (Res.TimedOut)
      return fail(llvm::formatv("--time-limit {0}: no candidate evaluated in "
                                "time; allow more",
                                R.TimeLimitSeconds));
    return fail("no strategy can be predicted: " + FirstError);
  }

  // The loop's minimum: the exhaustive planner's answer, and the fallback
  // when Z3 runs out of time.
  size_t Best = 0;
  for (size_t I = 1; I < All.size(); ++I)
    if (better(All[I], All[Best]))
      Best = I;
  const auto SolveStart = Clock::now();
  if (R.Planner == PlannerKind::Exhaustive) {
    Res.Optimal = !Res.TimedOut;
  } else {
    // Z3's input: the candidates no other beats in both time and memory
    // (a lexicographic minimum of time then memory is never dominated, so
    // this loses no optimum; it keeps the solver's problem to the front,
    // tens of candidates instead of thousands, which Z3 solves in
    // milliseconds where the full set takes seconds).
    std::vector<size_t> Input;
    {
      std::vector<size_t> Order(All.size());
      for (size_t I = 0; I < All.size(); ++I)
        Order[I] = I;
      std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
        return better(All[A], All[B]);
      });
      int64_t Least = INT64_MAX;
      for (size_t I : Order)
        if (All[I].Bytes < Least) {
          Input.push_back(I);
          Least = All[I].Bytes;
        }
      // Shuffle the front out of sorted order: Z3 must find the minimum,
      // not read it off the first Boolean.
      std::reverse(Input.begin(), Input.end());
    }
    Res.SolverInput = Input.size();
    try {
      z3::context Ctx;
      z3::optimize Opt(Ctx);
      if (R.TimeLimitSeconds > 0) {
        z3::params P(Ctx);
        const double Left = std::max(0.001, R.TimeLimitSeconds - since(Start));
        P.set("timeout", z3TimeoutMs(Left));
        Opt.set(P);
      }
      // One Boolean per candidate, exactly one true; time and memory are
      // sums of b_i * t_i (linear, integers).
      z3::expr_vector Chosen(Ctx), Time(Ctx), Memory(Ctx), Free(Ctx);
      std::vector<int> Ones(Input.size(), 1);
      const z3::expr Zero = Ctx.int_val(0);
      for (size_t I = 0; I < Input.size(); ++I) {
        const PlanCandidate &P = All[Input[I]];
        z3::expr B = Ctx.bool_const(("c" + std::to_string(I)).c_str());
        Chosen.push_back(B);
        Time.push_back(z3::ite(B, Ctx.int_val(P.TimeNs), Zero));
        Memory.push_back(z3::ite(B, Ctx.int_val(P.Bytes), Zero));
        Free.push_back(z3::ite(B, Ctx.int_val(P.HeadroomBytes), Zero));
      }
      Opt.add(z3::pbeq(Chosen, Ones.data(), 1));
      // Every stage within its device's memory (free memory not negative;
      // on one GPU type: the peak at most the capacity).
      Opt.add(z3::sum(Free) >= Zero);
      // Lexicographic (Z3's default priority): time, then memory.
      Opt.minimize(z3::sum(Time));
      Opt.minimize(z3::sum(Memory));
      if (Opt.check() == z3::sat) {
        z3::model M = Opt.get_model();
        for (size_t I = 0; I < Input.size(); ++I)
          if (M.eval(Chosen[I], true).is_true()) {
            Best = Input[I];
            break;
          }
        Res.Optimal = !Res.TimedOut;
      } else {
        Res.Optimal = false; // unknown (time limit): the loop's best
        Res.TimedOut = true;
      }
    } catch (const z3::exception &E) {
      return fail(llvm::Twine("planner: Z3 failed: ") + E.msg());
    }
  }
  Res.SolveSeconds = since(SolveStart);

  Res.Options = All[Best].Options;
  Res.StageDevices = All[Best].StageDevices;
  const TrainingAnalysis *A = Analyses[Res.Options.MicroBatch];
  auto T = !Res.Options.DataSplit.empty() ? predictDataSplit(*A, C, Res.Options)
           : Res.StageDevices.empty()
               ? predictTraining(*A, C, Res.Options)
               : predictMixed(*A, C, Res.Options, Res.StageDevices);
  if (!T)
    return T.takeError();
  Res.Report = std::move(*T);

  // Top K and the Pareto front, from the evaluated candidates.
  std::vector<PlanCandidate> Sorted = All;
  std::stable_sort(Sorted.begin(), Sorted.end(), better);
  const PlanCandidate Chosen = All[Best];
  if (R.TopK > 0) {
    Res.Top.push_back(Chosen);
    for (const PlanCandidate &P : Sorted) {
      if (Res.Top.size() >= R.TopK)
        break;
      if (describe(P.Options, P.StageDevices) !=
          describe(Chosen.Options, Chosen.StageDevices))
        Res.Top.push_back(P);
    }
  }
  if (R.Pareto) {
    int64_t Least = INT64_MAX;
    for (const PlanCandidate &P : Sorted)
      if (P.Bytes < Least) {
        Res.Pareto.push_back(P);
        Least = P.Bytes;
      }
  }
  return Res;
}

} // namespace perfc
