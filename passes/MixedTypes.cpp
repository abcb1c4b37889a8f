//===- MixedTypes.cpp - Training on clusters of several GPU types ---------===//
#include "passes/MixedTypes.h"
#include "passes/Fp8Recipe.h"

#include "costmodels/Collectives.h"
#include "passes/Schedule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace perfc {

namespace {

llvm::Error fail(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// The type named Name among Types; Types.end() when none is.
template <typename Range> auto typeNamed(Range &Types, llvm::StringRef Name) {
  return llvm::find_if(Types,
                       [&](const GpuType &T) { return T.Dev->Name == Name; });
}

/// A homogeneous cluster of one type, with at least Needed devices: what
/// predictTraining costs that type's stages on (its node's links, its
/// tensor- and data-parallel groups). The name keys the unit-cost cache.
hw::Cluster typeCluster(const hw::Cluster &C, const GpuType &T,
                        unsigned Needed) {
  hw::Cluster Sub;
  Sub.Name = C.Name + "/" + T.Dev->Name;
  hw::NodeGroup G = *T.Group;
  G.Count = std::max(G.Count, (Needed + T.PerNode - 1) / T.PerNode);
  Sub.Groups.push_back(std::move(G));
  return Sub;
}

/// The inter-node link of lower effective bandwidth (stages on different
/// types sit on different nodes).
const hw::Link *slower(const hw::Link *X, const hw::Link *Y) {
  if (!X || !Y)
    return X ? X : Y;
  return X->BandwidthBytesPerSecond * X->Efficiency <=
                 Y->BandwidthBytesPerSecond * Y->Efficiency
             ? X
             : Y;
}

const hw::Link *interNode(const hw::NodeGroup &G) {
  return G.InterNode ? &*G.InterNode : nullptr;
}

const hw::Link *slowerLink(const hw::NodeGroup &A, const hw::NodeGroup &B) {
  return slower(interNode(A), interNode(B));
}

} // namespace

llvm::Error checkTrainable(const hw::Cluster &C) {
  for (const hw::NodeGroup &G : C.Groups) {
    if (G.Devices.size() < 2)
      continue;
    std::string Names;
    const hw::Device *Pick = nullptr;
    for (const hw::NodeDevice &D : G.Devices) {
      Names += (Names.empty() ? "" : ", ") + D.Dev->Name;
      if (!Pick || (Pick->Kind != hw::DeviceKind::Gpu &&
                    D.Dev->Kind == hw::DeviceKind::Gpu))
        Pick = D.Dev.get();
    }
    return fail(llvm::formatv(
        "cluster '{0}' holds several kinds of processor in one node ({1}); "
        "a training step runs on one kind: give it alone, e.g. '{2}' (mixed "
        "GPU clusters hold one type per node group)",
        C.Name, Names, Pick->Name));
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<GpuType>> gpuTypes(const hw::Cluster &C) {
  std::vector<GpuType> Types;
  if (llvm::Error E = checkTrainable(C))
    return std::move(E);
  for (const hw::NodeGroup &G : C.Groups) {
    const auto &Dev = G.Devices.front().Dev;
    auto It = typeNamed(Types, Dev->Name);
    if (It == Types.end()) {
      Types.push_back({Dev, 0, G.devicesPerNode(), &G});
      It = Types.end() - 1;
    }
    It->Devices += G.Count * G.devicesPerNode();
    It->PerNode = std::min(It->PerNode, G.devicesPerNode());
  }
  return Types;
}

bool isMixedCluster(const hw::Cluster &C) {
  for (const hw::NodeGroup &G : C.Groups)
    for (const hw::NodeDevice &D : G.Devices)
      if (D.Dev->Name != C.primaryDevice().Name)
        return true;
  return false;
}

llvm::Optional<std::vector<unsigned>>
splitStages(const std::vector<StageSpec> &Stages, unsigned L,
            const StageMemory &Mem) {
  const unsigned P = Stages.size();
  if (P == 0 || L < P)
    return llvm::None;
  for (const StageSpec &S : Stages)
    if (!S.Units || S.Units->size() != L + 2)
      return llvm::None;
  // Prefix sums of each distinct unit-cost vector (one per device type).
  struct Prefix {
    std::vector<double> Time, Params, Saved, Inputs;
  };
  std::map<const std::vector<UnitCost> *, Prefix> Sums;
  for (const StageSpec &S : Stages) {
    Prefix &Pr = Sums[S.Units];
    if (!Pr.Time.empty())
      continue;
    for (auto *V : {&Pr.Time, &Pr.Params, &Pr.Saved, &Pr.Inputs})
      V->assign(L + 3, 0);
    for (unsigned U = 0; U < L + 2; ++U) {
      const UnitCost &C = (*S.Units)[U];
      Pr.Time[U + 1] = Pr.Time[U] + C.total();
      Pr.Params[U + 1] = Pr.Params[U] + C.Params;
      Pr.Saved[U + 1] = Pr.Saved[U] + C.Saved;
      Pr.Inputs[U + 1] = Pr.Inputs[U] + C.InputBytes;
    }
  }
  // A necessary condition, cheap: the stages' capacities must hold every
  // parameter's states and each stage's activations at the least in-flight
  // count (skips the search for hopeless strategies).
  {
    double Need = 0, Have = 0;
    unsigned LeastFlight = UINT32_MAX;
    for (const StageSpec &S : Stages) {
      Have += S.CapacityBytes;
      LeastFlight = std::min(LeastFlight, S.InFlight);
    }
    const Prefix &Pr = Sums[Stages.front().Units];
    Need = Mem.BytesPerParam * Pr.Params[L + 2];
    if (Mem.Recomp != Recompute::Full)
      Need += LeastFlight * Pr.Saved[L + 2];
    if (Need > Have)
      return llvm::None;
  }
  const double Inf = std::numeric_limits<double>::infinity();
  // Best[s][i]: the least slowest-stage time of stages 0..s covering units
  // 0..i (blocks 1..i); From[s][i] the first unit of stage s.
  std::vector<std::vector<double>> Best(P, std::vector<double>(L + 2, Inf));
  std::vector<std::vector<unsigned>> From(P, std::vector<unsigned>(L + 2, 0));
  for (unsigned S = 0; S < P; ++S) {
    const StageSpec &St = Stages[S];
    const Prefix &Pr = Sums[St.Units];
    const bool Last = S + 1 == P;
    // Stage S ends at unit I (the epilogue L + 1 for the last stage) and
    // starts after unit J (J = -1 for the first, which holds the prologue).
    const unsigned IFirst = Last ? L + 1 : S + 1;
    const unsigned ILast = Last ? L + 1 : L - (P - 1 - S);
    for (unsigned I = IFirst; I <= ILast; ++I) {
      // Starts from the latest down (the range only grows, so memory only
      // rises: stop at the first overflow). Stage 0 starts at the prologue;
      // stage S > 0 after the S blocks the stages before it need at least.
      const unsigned JHigh = S == 0 ? 0 : (Last ? L : I);
      const unsigned JLow = S == 0 ? 0 : S + 1;
      double MaxSaved = 0, Largest = 0;
      for (unsigned K = JHigh + 1; K <= I; ++K) {
        MaxSaved = std::max(MaxSaved, (*St.Units)[K].Saved);
        Largest = std::max(Largest, (*St.Units)[K].Largest);
      }
      for (unsigned Start = JHigh + 1; Start-- > JLow;) {
        const UnitCost &U = (*St.Units)[Start];
        MaxSaved = std::max(MaxSaved, U.Saved);
        Largest = std::max(Largest, U.Largest);
        const double Params = Pr.Params[I + 1] - Pr.Params[Start];
        const double Act =
            Mem.Recomp == Recompute::Full
                ? St.InFlight * (Pr.Inputs[I + 1] - Pr.Inputs[Start]) + MaxSaved
                : St.InFlight * (Pr.Saved[I + 1] - Pr.Saved[Start]);
        const double Bytes = Mem.BytesPerParam * Params + Act + Largest;
        if (Bytes > St.CapacityBytes)
          break;
        const double T = Pr.Time[I + 1] - Pr.Time[Start];
        const double V = S == 0 ? T : std::max(Best[S - 1][Start - 1], T);
        if (V < Best[S][I]) {
          Best[S][I] = V;
          From[S][I] = Start;
        }
      }
    }
  }
  if (!(Best[P - 1][L + 1] < Inf))
    return llvm::None;
  std::vector<unsigned> Sizes(P);
  unsigned I = L + 1;
  for (unsigned S = P; S-- > 0;) {
    const unsigned Start = From[S][I];
    Sizes[S] = std::min(I, L) + 1 - std::max(Start, 1u);
    I = Start - 1;
  }
  return Sizes;
}

llvm::Optional<std::vector<unsigned>>
splitData(const std::vector<unsigned> &Replicas, unsigned M,
          const std::function<double(unsigned, unsigned)> &TimeOf) {
  const size_t N = Replicas.size();
  if (!N || llvm::is_contained(Replicas, 0u))
    return llvm::None;
  // Most micro-batches a replica of type g can take: all others at one.
  std::vector<unsigned> Most(N, 0);
  uint64_t Floor = 0;
  for (unsigned R : Replicas)
    Floor += R;
  if (Floor > M)
    return llvm::None;
  for (size_t G = 0; G < N; ++G)
    Most[G] = 1 + unsigned((M - Floor) / Replicas[G]);
  // Counts per type with every type's time within Bound, summing to M.
  auto Fit = [&](double Bound) -> llvm::Optional<std::vector<unsigned>> {
    // Reach[g][s]: the count of type g-1 that reaches total s (0: none).
    std::vector<std::vector<unsigned>> Reach(N + 1,
                                             std::vector<unsigned>(M + 1, 0));
    std::vector<char> Can(M + 1, 0), Next(M + 1, 0);
    Can[0] = 1;
    for (size_t G = 0; G < N; ++G) {
      std::fill(Next.begin(), Next.end(), 0);
      for (unsigned K = 1; K <= Most[G] && TimeOf(G, K) <= Bound; ++K)
        for (unsigned S = 0; S + uint64_t(K) * Replicas[G] <= M; ++S)
          if (Can[S] && !Next[S + K * Replicas[G]]) {
            Next[S + K * Replicas[G]] = 1;
            Reach[G + 1][S + K * Replicas[G]] = K;
          }
      Can.swap(Next);
    }
    if (!Can[M])
      return llvm::None;
    std::vector<unsigned> Micro(N, 0);
    unsigned S = M;
    for (size_t G = N; G-- > 0;) {
      Micro[G] = Reach[G + 1][S];
      S -= Micro[G] * Replicas[G];
    }
    return Micro;
  };
  std::vector<double> Bounds;
  for (size_t G = 0; G < N; ++G)
    for (unsigned K = 1; K <= Most[G]; ++K)
      Bounds.push_back(TimeOf(G, K));
  llvm::sort(Bounds);
  Bounds.erase(std::unique(Bounds.begin(), Bounds.end()), Bounds.end());
  size_t Lo = 0, Hi = Bounds.size();
  while (Lo < Hi) {
    const size_t Mid = (Lo + Hi) / 2;
    if (Fit(Bounds[Mid]))
      Hi = Mid;
    else
      Lo = Mid + 1;
  }
  if (Lo == Bounds.size())
    return llvm::None;
  return Fit(Bounds[Lo]);
}

llvm::Expected<TrainReport>
predictMixed(const TrainingAnalysis &A, const hw::Cluster &C,
             const TrainOptions &O,
             const std::vector<std::string> &StageDevices) {
  if (StageDevices.size() != O.Pp)
    return fail(llvm::formatv("a mixed plan names {0} stage devices for pp {1}",
                              StageDevices.size(), O.Pp));
  if (O.Vp != 1)
    return fail("mixed GPU types: interleaving (--vp) is not modelled; use "
                "--vp 1");
  if (O.Cp != 1)
    return fail("mixed GPU types: context parallelism (--cp) is not "
                "modelled; use --cp 1");
  if (O.Ep != 1)
    return fail("mixed GPU types: expert parallelism (--ep) is not "
                "modelled; use --ep 1");
  if (O.Schedule != PipelineSchedule::OneFOneB)
    return fail("mixed GPU types: only the 1F1B schedule is modelled");
  if (groupedFullRecompute(O))
    return fail("mixed GPU types: full recomputation of some blocks or of "
                "groups of blocks (--recompute-method block, "
                "--recompute-num-layers above 1) is not modelled; use "
                "--recompute-num-layers 1, uniform");
  auto Types = gpuTypes(C);
  if (!Types)
    return Types.takeError();
  const unsigned PerStage = O.Dp * O.Tp;
  // Which type each stage runs on; devices used per type.
  std::vector<unsigned> TypeOf(O.Pp);
  std::vector<unsigned> Used(Types->size(), 0);
  for (unsigned S = 0; S < O.Pp; ++S) {
    auto It = typeNamed(*Types, StageDevices[S]);
    if (It == Types->end())
      return fail(llvm::formatv("stage {0}: cluster '{1}' has no device '{2}'",
                                S, C.Name, StageDevices[S]));
    TypeOf[S] = It - Types->begin();
    Used[TypeOf[S]] += PerStage;
  }
  for (size_t T = 0; T < Types->size(); ++T) {
    if (Used[T] > (*Types)[T].Devices)
      return fail(llvm::formatv(
          "the plan puts {0} stages of dp {1} x tp {2} on '{3}', {4} devices, "
          "but cluster '{5}' has {6}",
          Used[T] / PerStage, O.Dp, O.Tp, (*Types)[T].Dev->Name, Used[T],
          C.Name, (*Types)[T].Devices));
    if (Used[T] && (*Types)[T].PerNode % O.Tp)
      return fail(llvm::formatv("--tp {0}: a node of '{1}' holds {2} devices; "
                                "tensor parallelism stays inside a node",
                                O.Tp, (*Types)[T].Dev->Name,
                                (*Types)[T].PerNode));
  }
  // Each used type's prediction of the whole pipeline: its stages' times
  // and memory, its links.
  const unsigned Needed = PerStage * O.Pp;
  std::vector<hw::Cluster> Subs(Types->size());
  std::vector<llvm::Optional<TrainReport>> Reports(Types->size());
  TrainOptions Opt = O;
  Opt.Timeline = false;
  Opt.Explain = false; // per-type sub-steps: their text is not reported
  auto PredictAll = [&]() -> llvm::Error {
    for (size_t T = 0; T < Types->size(); ++T) {
      if (!Used[T])
        continue;
      if (Subs[T].Groups.empty())
        Subs[T] = typeCluster(C, (*Types)[T], Needed);
      auto R = predictTraining(A, Subs[T], Opt);
      if (!R)
        return R.takeError();
      Reports[T] = std::move(*R);
    }
    return llvm::Error::success();
  };
  if (llvm::Error E = PredictAll())
    return std::move(E);
  const unsigned L = A.Blocks.NumBlocks;
  if (O.ChunkBlocks.empty() && O.Pp > 1) {
    std::vector<StageSpec> Specs(O.Pp);
    StageMemory Mem;
    Mem.Recomp = O.Recomp;
    for (unsigned S = 0; S < O.Pp; ++S) {
      const unsigned T = TypeOf[S];
      Specs[S].Units = A.cachedUnits(Subs[T], Opt);
      Specs[S].CapacityBytes = (*Types)[T].Dev->mainMemory().CapacityBytes;
      Specs[S].InFlight = Reports[T]->Stages[S].InFlight;
      Mem.BytesPerParam = Reports[T]->modelStateBytesPerParam();
    }
    auto Split = splitStages(Specs, L, Mem);
    if (!Split) { // nothing fits: balance time alone, report the overflow
      for (StageSpec &S : Specs)
        S.CapacityBytes = std::numeric_limits<double>::infinity();
      Split = splitStages(Specs, L, Mem);
    }
    if (Split) {
      Opt.ChunkBlocks = *Split;
      if (llvm::Error E = PredictAll())
        return std::move(E);
    }
  }
  // Stage s as its own type predicts it.
  TrainReport R;
  const TrainReport &Any = *Reports[TypeOf[0]];
  R.Devices = Needed;
  R.ModelBlocks = Any.ModelBlocks;
  R.BlocksFromStructure = Any.BlocksFromStructure;
  R.MicroBatches = Any.MicroBatches;
  R.GlobalBatch = Any.GlobalBatch;
  std::vector<StageTimes> Times;
  unsigned Slow = 0;
  for (unsigned S = 0; S < O.Pp; ++S) {
    const StageReport &St = Reports[TypeOf[S]]->Stages[S];
    R.Stages.push_back(St);
    Times.push_back({St.ForwardSeconds + St.TpForwardSeconds,
                     St.BackwardSeconds + St.RecomputeSeconds +
                         St.TpCommSeconds - St.TpForwardSeconds});
    if (St.microBatchSeconds() > R.Stages[Slow].microBatchSeconds())
      Slow = S;
  }
  // Transfers between neighbours: a type's own link inside its stages (as
  // its prediction has it), the slower inter-node link across types.
  std::vector<double> Transfers;
  const double M = R.MicroBatches;
  double MaxTransfer = 0;
  for (unsigned S = 0; S + 1 < O.Pp; ++S) {
    double T;
    if (TypeOf[S] == TypeOf[S + 1]) {
      T = Reports[TypeOf[S]]->P2pSeconds / (2 * M);
    } else {
      const hw::Link *Link = slowerLink(*(*Types)[TypeOf[S]].Group,
                                        *(*Types)[TypeOf[S + 1]].Group);
      if (!Link)
        return fail(llvm::formatv("cluster '{0}': no link between '{1}' and "
                                  "'{2}' nodes; add an inter_node_link",
                                  C.Name, StageDevices[S],
                                  StageDevices[S + 1]));
      // What crosses the cut after stage S.
      const double Message =
          A.cutBytesAfter(R.Stages[S].Chunks.back().second) *
          (ir::byteSize(trainingStorageType(O.DType)) / 4.0) / O.Tp;
      T = cost::p2pSeconds(Message, *Link);
    }
    Transfers.push_back(T);
    MaxTransfer = std::max(MaxTransfer, T);
  }
  const double End =
      simulateOneFOneB(Times, unsigned(R.MicroBatches), Transfers, false).End;
  // Data-parallel exchange and optimizer: the largest among the types
  // (each type's prediction prices its slowest stage: an upper bound where
  // a stage of another type holds more parameters).
  // Eager gradient accumulation likewise.
  auto TailSeconds = [](const TrainReport &T) {
    return T.GradAccumSeconds + T.DpExposedSeconds + T.OptimizerSeconds;
  };
  unsigned Tail = TypeOf[0];
  for (size_t T = 0; T < Types->size(); ++T)
    if (Reports[T] && TailSeconds(*Reports[T]) > TailSeconds(*Reports[Tail]))
      Tail = T;
  const TrainReport &TR = *Reports[Tail];
  const StageReport &SS = R.Stages[Slow];
  R.GradAccumSeconds = TR.GradAccumSeconds;
  R.DpCommSeconds = TR.DpCommSeconds;
  R.DpExposedSeconds = TR.DpExposedSeconds;
  // What the data-parallel explanation names: the same type's figures.
  R.DpWireBytes = TR.DpWireBytes;
  R.DpParamBytes = TR.DpParamBytes;
  R.DpScatterSeconds = TR.DpScatterSeconds;
  R.DpScatterExposedSeconds = TR.DpScatterExposedSeconds;
  R.DpGatherSeconds = TR.DpGatherSeconds;
  R.DpGatherExposedSeconds = TR.DpGatherExposedSeconds;
  R.DpGatherBuckets = TR.DpGatherBuckets;
  R.OptimizerSeconds = TR.OptimizerSeconds;
  R.TpCommSeconds = M * SS.TpCommSeconds;
  R.TpOverlappedSeconds = M * SS.TpOverlappedSeconds;
  R.ComputeSeconds =
      M * (SS.ForwardSeconds + SS.BackwardSeconds + SS.RecomputeSeconds) +
      R.GradAccumSeconds;
  // The busiest boundary's transfers; the simulated schedule holds those on
  // its critical path.
  R.P2pSeconds = 2 * M * MaxTransfer;
  R.BubbleSeconds = std::max(0.0, End - M * SS.microBatchSeconds());
  R.CommSeconds =
      R.TpCommSeconds + R.TpOverlappedSeconds + R.P2pSeconds + R.DpCommSeconds;
  R.ExposedCommSeconds = R.TpCommSeconds + R.DpExposedSeconds;
  R.StepSeconds = End + TailSeconds(R);
  R.SamplesPerSecond = R.GlobalBatch / R.StepSeconds;
  R.ModelFlops = A.FlopsPerMicroBatch * M * O.Dp;
  R.TflopsPerDevice = R.ModelFlops / R.StepSeconds / R.Devices / 1e12;
  applyInputRate(R, O, C.Groups.front().devicesPerNode());
  // Fits: every stage in its own device; the peak stage is the fullest.
  std::string Names;
  for (unsigned S = 0; S < O.Pp; ++S) {
    const double Cap = (*Types)[TypeOf[S]].Dev->mainMemory().CapacityBytes;
    if (R.Stages[S].peakBytes() > Cap)
      R.Fits = false;
    if (R.Stages[S].peakBytes() > R.Stages[R.PeakStage].peakBytes())
      R.PeakStage = S;
    if (S == 0 || StageDevices[S] != StageDevices[S - 1])
      Names += (S ? "+" : "") + StageDevices[S];
  }
  R.Device = Names;
  R.CapacityBytes =
      (*Types)[TypeOf[R.PeakStage]].Dev->mainMemory().CapacityBytes;
  return R;
}

namespace {

/// The types of a data split, in its order, checked against the cluster.
llvm::Expected<std::vector<GpuType>> splitTypes(const hw::Cluster &C,
                                                const TrainOptions &O) {
  if (O.DataSplit.empty())
    return fail("no data split given");
  if (O.Pp != 1 || O.Vp != 1)
    return fail(llvm::formatv("an uneven data split runs whole replicas on "
                              "each type: it needs pp 1 and vp 1, not pp {0} "
                              "vp {1}",
                              O.Pp, O.Vp));
  auto Types = gpuTypes(C);
  if (!Types)
    return Types.takeError();
  std::vector<GpuType> Of;
  uint64_t Replicas = 0, Samples = 0;
  for (const DataShare &D : O.DataSplit) {
    auto It = typeNamed(*Types, D.Device);
    if (It == Types->end())
      return fail(llvm::formatv("data split: cluster '{0}' has no device '{1}'",
                                C.Name, D.Device));
    if (llvm::any_of(Of, [&](const GpuType &T) { return T.Dev == It->Dev; }))
      return fail(llvm::formatv("data split: '{0}' is named twice", D.Device));
    if (D.Replicas == 0 || D.MicroBatches == 0)
      return fail(llvm::formatv("data split: '{0}' needs at least one replica "
                                "and one micro-batch per replica",
                                D.Device));
    if (uint64_t(D.Replicas) * O.Tp > It->Devices)
      return fail(llvm::formatv("data split: {0} replicas of tp {1} on '{2}' "
                                "need {3} devices, but cluster '{4}' has {5}",
                                D.Replicas, O.Tp, D.Device,
                                uint64_t(D.Replicas) * O.Tp, C.Name,
                                It->Devices));
    if (It->PerNode % O.Tp)
      return fail(llvm::formatv("--tp {0}: a node of '{1}' holds {2} devices; "
                                "tensor parallelism stays inside a node",
                                O.Tp, D.Device, It->PerNode));
    Replicas += D.Replicas;
    uint64_t Part = 0;
    if (O.MicroBatch <= 0 ||
        __builtin_mul_overflow(uint64_t(D.Replicas) * D.MicroBatches,
                               uint64_t(O.MicroBatch), &Part) ||
        __builtin_add_overflow(Samples, Part, &Samples))
      return fail(llvm::formatv("data split: '{0}''s samples (replicas x "
                                "micro-batches x micro-batch size) overflow",
                                D.Device));
    Of.push_back(*It);
  }
  if (Replicas != O.Dp)
    return fail(llvm::formatv("data split: its replicas sum to {0}, but dp is "
                              "{1}",
                              Replicas, O.Dp));
  if (O.GlobalBatch && Samples != uint64_t(O.GlobalBatch))
    return fail(llvm::formatv("data split: replicas x micro-batches x "
                              "micro-batch size sum to {0} samples, but the "
                              "global batch is {1}",
                              Samples, O.GlobalBatch));
  return Of;
}

/// Type T's cluster for a data split: its node group, enough nodes for all
/// O.Dp replicas (the exchange's ring spans them), and Link between nodes.
hw::Cluster splitCluster(const hw::Cluster &C, const GpuType &T,
                         const TrainOptions &O, const hw::Link *Link) {
  hw::Cluster Sub = typeCluster(C, T, O.Dp * O.Tp);
  if (Link)
    Sub.Groups.front().InterNode = *Link;
  return Sub;
}

/// The slowest inter-node link among the split's types.
const hw::Link *splitLink(const std::vector<GpuType> &Types) {
  const hw::Link *Slow = nullptr;
  for (const GpuType &T : Types)
    Slow = slower(Slow, interNode(*T.Group));
  return Slow;
}

/// Type T's part of a data split, its replicas running Micro micro-batches.
llvm::Expected<TrainReport> predictShare(const TrainingAnalysis &A,
                                         const hw::Cluster &Sub,
                                         const TrainOptions &O,
                                         unsigned Micro) {
  TrainOptions Own = O;
  Own.DataSplit.clear();
  Own.Timeline = false;
  Own.Explain = false;
  Own.GlobalBatch = int64_t(O.Dp) * Micro * O.MicroBatch;
  Own.InputSamplesPerSecond = 0; // the whole split's, in predictDataSplit
  return predictTraining(A, Sub, Own);
}

} // namespace

llvm::Expected<TrainReport> predictDataSplit(const TrainingAnalysis &A,
                                             const hw::Cluster &C,
                                             const TrainOptions &O) {
  if (O.Cp != 1)
    return fail("an uneven data split: context parallelism (--cp) is not "
                "modelled; use --cp 1");
  if (O.Ep != 1)
    return fail("an uneven data split: expert parallelism (--ep) is not "
                "modelled; use --ep 1");
  auto Types = splitTypes(C, O);
  if (!Types)
    return Types.takeError();
  const hw::Link *Link = splitLink(*Types);
  std::vector<TrainReport> Parts;
  size_t Slow = 0, Full = 0;
  double LeastFree = std::numeric_limits<double>::infinity();
  for (size_t G = 0; G < Types->size(); ++G) {
    auto P = predictShare(A, splitCluster(C, (*Types)[G], O, Link), O,
                          O.DataSplit[G].MicroBatches);
    if (!P)
      return P.takeError();
    Parts.push_back(std::move(*P));
    if (Parts[G].StepSeconds > Parts[Slow].StepSeconds)
      Slow = G;
    const double Free = Parts[G].CapacityBytes - Parts[G].peak().peakBytes();
    if (Free < LeastFree) {
      LeastFree = Free;
      Full = G;
    }
  }
  TrainReport R = Parts[Slow];
  R.Stages = Parts[Full].Stages;
  R.PeakStage = Parts[Full].PeakStage;
  R.CapacityBytes = Parts[Full].CapacityBytes;
  R.MicroBatches = Parts[Full].MicroBatches; // its stage's count
  R.Devices = O.Dp * O.Tp;
  R.GlobalBatch = 0;
  double MicroBatches = 0;
  std::string Names;
  for (size_t G = 0; G < Types->size(); ++G) {
    const DataShare &D = O.DataSplit[G];
    const TrainReport &P = Parts[G];
    R.GlobalBatch += int64_t(D.Replicas) * D.MicroBatches * O.MicroBatch;
    MicroBatches += double(D.Replicas) * D.MicroBatches;
    R.Fits = R.Fits && P.Fits;
    Names += (G ? "+" : "") + D.Device;
    R.DataSplit.push_back({D, P.StepSeconds, P.ComputeSeconds,
                           P.peak().peakBytes(), P.CapacityBytes});
  }
  R.Device = Names;
  R.SamplesPerSecond = R.GlobalBatch / R.StepSeconds;
  R.ModelFlops = A.FlopsPerMicroBatch * MicroBatches;
  R.TflopsPerDevice = R.ModelFlops / R.StepSeconds / R.Devices / 1e12;
  applyInputRate(R, O, C.Groups.front().devicesPerNode());
  return R;
}

llvm::Error balanceDataSplit(const TrainingAnalysis &A, const hw::Cluster &C,
                             TrainOptions &O) {
  const uint64_t M = O.MicroBatch > 0 && O.GlobalBatch % O.MicroBatch == 0
                         ? uint64_t(O.GlobalBatch / O.MicroBatch)
                         : 0;
  uint64_t Replicas = 0;
  for (DataShare &D : O.DataSplit) {
    D.MicroBatches = 1; // checked below with the counts chosen
    Replicas += D.Replicas;
  }
  if (M == 0 || M < Replicas || M > std::numeric_limits<unsigned>::max())
    return fail(llvm::formatv(
        "data split: global batch {0} in micro-batches of {1} cannot give "
        "each of {2} replicas at least one micro-batch",
        O.GlobalBatch, O.MicroBatch, Replicas));
  TrainOptions Probe = O;
  Probe.GlobalBatch = 0;
  auto Types = splitTypes(C, Probe);
  if (!Types)
    return Types.takeError();
  const hw::Link *Link = splitLink(*Types);
  // Step time a + b k of each type at k micro-batches per replica.
  std::vector<double> Fixed, PerMicro;
  std::vector<unsigned> Counts;
  for (size_t G = 0; G < Types->size(); ++G) {
    const hw::Cluster Sub = splitCluster(C, (*Types)[G], O, Link);
    auto One = predictShare(A, Sub, O, 1);
    if (!One)
      return One.takeError();
    auto Two = predictShare(A, Sub, O, 2);
    if (!Two)
      return Two.takeError();
    PerMicro.push_back(std::max(0.0, Two->StepSeconds - One->StepSeconds));
    Fixed.push_back(One->StepSeconds - PerMicro.back());
    Counts.push_back(O.DataSplit[G].Replicas);
  }
  auto Split = splitData(Counts, unsigned(M), [&](unsigned G, unsigned K) {
    return Fixed[G] + PerMicro[G] * K;
  });
  if (!Split)
    return fail(llvm::formatv("data split: {0} micro-batches cannot be shared "
                              "in whole micro-batches over the replicas",
                              M));
  for (size_t G = 0; G < Split->size(); ++G)
    O.DataSplit[G].MicroBatches = (*Split)[G];
  return llvm::Error::success();
}

} // namespace perfc
