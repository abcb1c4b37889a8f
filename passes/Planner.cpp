//===- Planner.cpp - The training planner (Z3 or exhaustive) --------------===//
#include "passes/Planner.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <z3++.h>

#include "costmodels/Collectives.h"

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
  if (O.Vp > 1)
    S += llvm::formatv(", vp {0}", O.Vp).str();
  S += llvm::formatv(", micro-batch {0}", O.MicroBatch).str();
  if (O.SequenceParallel)
    S += ", sp";
  S += std::string(", recompute ") + name(O.Recomp);
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

/// The unit costs predictTraining cached for this cluster and strategy
/// (call it first).
const std::vector<UnitCost> *unitsOf(const TrainingAnalysis &A,
                                     const hw::Cluster &C,
                                     const TrainOptions &O) {
  auto It = A.UnitCache.find(TrainingAnalysis::UnitKey{
      C.Name, O.Tp, O.SequenceParallel, uint8_t(O.Recomp), uint8_t(O.DType),
      uint8_t(O.Layout)});
  return It == A.UnitCache.end() ? nullptr : &It->second;
}

/// Model-state bytes per parameter of a prediction (weights, gradients,
/// optimizer states after ZeRO's sharding): the same on every stage.
double bytesPerParam(const TrainReport &T) {
  for (const StageReport &S : T.Stages)
    if (S.Params > 0)
      return (S.WeightsBytes + S.GradientsBytes + S.OptimizerBytes) / S.Params;
  return 0;
}

/// One GPU type of a mixed cluster.
struct GpuType {
  std::shared_ptr<const hw::Device> Dev;
  unsigned Devices = 0;
  unsigned PerNode = 0;           ///< The fewest per node among its groups.
  const hw::NodeGroup *Group = 0; ///< Its first node group: links.
};

/// The type named Name among Types; Types.end() when none is.
template <typename Range> auto typeNamed(Range &Types, llvm::StringRef Name) {
  return llvm::find_if(Types,
                       [&](const GpuType &T) { return T.Dev->Name == Name; });
}

llvm::Expected<std::vector<GpuType>> gpuTypes(const hw::Cluster &C) {
  std::vector<GpuType> Types;
  for (const hw::NodeGroup &G : C.Groups) {
    if (G.Devices.size() != 1)
      return fail(llvm::formatv(
          "cluster '{0}': a node group holds several device kinds; training "
          "on mixed GPUs needs one type per node group",
          C.Name));
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

} // namespace

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
  if (O.Schedule != PipelineSchedule::OneFOneB)
    return fail("mixed GPU types: only the 1F1B schedule is modelled");
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
      Specs[S].Units = unitsOf(A, Subs[T], Opt);
      Specs[S].CapacityBytes = (*Types)[T].Dev->mainMemory().CapacityBytes;
      Specs[S].InFlight = Reports[T]->Stages[S].InFlight;
      Mem.BytesPerParam = bytesPerParam(*Reports[T]);
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
      const double Message =
          A.BoundaryBytes * (ir::byteSize(O.DType) / 4.0) / O.Tp;
      T = cost::p2pTime(Message, *Link).Seconds;
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
  R.OptimizerSeconds = TR.OptimizerSeconds;
  R.TpCommSeconds = M * SS.TpCommSeconds;
  R.ComputeSeconds =
      M * (SS.ForwardSeconds + SS.BackwardSeconds + SS.RecomputeSeconds) +
      R.GradAccumSeconds;
  // The busiest boundary's transfers; the simulated schedule holds those on
  // its critical path.
  R.P2pSeconds = 2 * M * MaxTransfer;
  R.BubbleSeconds = std::max(0.0, End - M * SS.microBatchSeconds());
  R.CommSeconds = R.TpCommSeconds + R.P2pSeconds + R.DpCommSeconds;
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
  Own.GlobalBatch = int64_t(O.Dp) * Micro * O.MicroBatch;
  Own.InputSamplesPerSecond = 0; // the whole split's, in predictDataSplit
  return predictTraining(A, Sub, Own);
}

} // namespace

llvm::Expected<TrainReport> predictDataSplit(const TrainingAnalysis &A,
                                             const hw::Cluster &C,
                                             const TrainOptions &O) {
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
  if (F.Dp && (*F.Dp == 0 || (!Mixed && N % *F.Dp)))
    return fail(llvm::formatv("--dp {0} does not divide the {1} devices used",
                              *F.Dp, N));
  if (!Mixed) {
    const uint64_t Pinned =
        uint64_t(F.Dp.getValueOr(1)) * F.Tp.getValueOr(1) * F.Pp.getValueOr(1);
    if (N % Pinned)
      return fail(llvm::formatv("dp x tp x pp pinned to {0} does not divide "
                                "the {1} devices used",
                                Pinned, N));
  }
  if (F.Vp && *F.Vp > 1 && F.Pp && *F.Pp == 1)
    return fail("--vp (interleaved 1F1B) needs --pp of at least 2");
  if (F.Sp && *F.Sp && F.Tp && *F.Tp == 1)
    return fail("--sp (sequence parallelism) needs --tp of at least 2");
  if (F.Zero && *F.Zero > 3)
    return fail("--zero must be 0, 1, 2 or 3");

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
      for (Recompute Rc : pick(F.Recomp, {Recompute::None, Recompute::Selective,
                                          Recompute::Full}))
        for (bool Sp : pick(F.Sp, {false, true})) {
          if (Sp && O.Tp == 1)
            continue;
          for (unsigned Z : pick(F.Zero, {0u, 1u, 2u, 3u})) {
            if (Z > 0 && O.Dp == 1 && !F.Zero)
              continue;
            O.MicroBatch = Mb;
            O.GlobalBatch = R.GlobalBatch;
            O.Recomp = Rc;
            O.SequenceParallel = Sp;
            O.Zero = Z;
            O.Timeline = false;
            Space.push_back({O, Devs});
          }
        }
    }
  };
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
        O.Dp = 0;
        for (unsigned T : Order) {
          O.DataSplit.push_back({Types[T].Dev->Name, Types[T].Devices / Tp, 0});
          O.Dp += Types[T].Devices / Tp;
        }
        if ((F.Dp && O.Dp != *F.Dp) || (R.Devices && O.Dp * Tp != R.Devices))
          continue;
        AddRest(O, {});
      }
  }
  for (unsigned Tp : Mixed ? std::vector<unsigned>{} : Tps)
    for (unsigned Pp = 1; Pp <= std::max(1u, Blocks); ++Pp) {
      if ((N / Tp) % Pp || (F.Pp && Pp != *F.Pp))
        continue;
      const unsigned Dp = N / Tp / Pp;
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
        O.Pp = Pp;
        O.Vp = Vp;
        AddRest(O, {});
      }
    }

  PlanResult Res;
  Res.Planner = R.Planner;
  Res.Space = Space.size();
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
        "replica)"));

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
  for (const Point &Pt : Space) {
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
        O.ChunkBlocks.empty() && O.Split == Partition::Balanced)
      if (const std::vector<UnitCost> *U = unitsOf(*A, C, O)) {
        std::vector<StageSpec> Specs;
        for (const StageReport &S : T->Stages)
          Specs.push_back({U, T->CapacityBytes, S.InFlight});
        if (auto Split =
                splitStages(Specs, Blocks, {bytesPerParam(*T), O.Recomp})) {
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
    PlanCandidate P;
    P.Options = Chosen;
    P.StageDevices = Pt.Devs;
    P.StepSeconds = T->StepSeconds;
    P.PeakBytes = T->peak().peakBytes();
    P.TimeNs = int64_t(std::llround(P.StepSeconds * 1e9));
    P.Bytes = int64_t(std::llround(P.PeakBytes));
    P.HeadroomBytes = int64_t(std::floor(headroom(*T, C)));
    if (!Smallest || P.PeakBytes < Smallest->PeakBytes) {
      Smallest = P;
      SmallestCapacity = T->CapacityBytes;
    }
    if (T->Fits)
      All.push_back(P);
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
          "no strategy fits in {0} per device: the smallest needs {1} ({2})",
          gib(Capacity), gib(Smallest->PeakBytes),
          describe(Smallest->Options)));
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
        P.set("timeout", unsigned(std::ceil(Left * 1000)));
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
