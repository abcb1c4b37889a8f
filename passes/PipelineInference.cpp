//===- PipelineInference.cpp - An inference step over pipeline stages -----===//
#include "passes/PipelineInference.h"

#include "hwdb/Cluster.h"
#include "hwdb/Device.h"
#include "hwdb/Units.h"
#include "ir/Graph.h"
#include "passes/Blocks.h"
#include "passes/InferenceMemory.h"
#include "passes/MaxBatch.h"
#include "passes/StorageType.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>

namespace perfc {

std::vector<std::pair<unsigned, unsigned>>
balancedStages(llvm::ArrayRef<double> UnitSeconds, unsigned Stages,
               const std::vector<std::vector<double>> &Send) {
  const unsigned NB = UnitSeconds.size() - 2;
  // Prefix sums over the blocks: Sum[J] is blocks 1..J.
  std::vector<double> Sum(NB + 1, 0.0);
  for (unsigned J = 1; J <= NB; ++J)
    Sum[J] = Sum[J - 1] + UnitSeconds[J];
  const auto Cost = [&](unsigned S, unsigned I, unsigned J) {
    double C = Sum[J] - Sum[I - 1];
    if (I == 1)
      C += UnitSeconds[0];
    if (J == NB)
      C += UnitSeconds[NB + 1];
    else
      C += Send[S][J];
    return C;
  };
  constexpr double Inf = std::numeric_limits<double>::infinity();
  // Best[S][J]: the slowest of stages 0..S holding blocks 1..J; From[S][J]
  // the first block of stage S there.
  std::vector<std::vector<double>> Best(Stages,
                                        std::vector<double>(NB + 1, Inf));
  std::vector<std::vector<unsigned>> From(Stages,
                                          std::vector<unsigned>(NB + 1, 0));
  for (unsigned J = 1; J <= NB; ++J) {
    Best[0][J] = Cost(0, 1, J);
    From[0][J] = 1;
  }
  for (unsigned S = 1; S < Stages; ++S)
    for (unsigned J = S + 1; J <= NB; ++J)
      // The latest start on a tie: earlier stages keep more blocks, the
      // last (which holds the output head) fewer.
      for (unsigned I = J; I >= S + 1; --I) {
        const double M = std::max(Best[S - 1][I - 1], Cost(S, I, J));
        if (M < Best[S][J]) {
          Best[S][J] = M;
          From[S][J] = I;
        }
      }
  std::vector<std::pair<unsigned, unsigned>> Split(Stages);
  unsigned J = NB;
  for (unsigned S = Stages; S-- > 0;) {
    Split[S] = {From[S][J], J};
    J = From[S][J] - 1;
  }
  return Split;
}

namespace {

std::string fourDigits(double X) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::format("%.4g", X);
  return OS.str();
}

/// What crosses each cut after unit J (J = 0..NumBlocks): the activations
/// a unit at or before J writes and one after J reads, each counted once,
/// as stored. Graph inputs (each stage is fed its own) and weights do not
/// cross.
std::vector<double> cutBytes(const ir::Graph &G, const KernelPlan &Plan,
                             const BlockInfo &Blocks,
                             llvm::Optional<ir::DType> Storage) {
  const unsigned Units = Blocks.numUnits();
  std::vector<int> LastReader(G.numValues(), -1);
  for (const Kernel &K : Plan.Kernels) {
    const int Unit = int(Blocks.UnitOf[K.Head]);
    for (const TensorUse &U : K.Reads)
      if (U.V && U.V->index() < LastReader.size())
        LastReader[U.V->index()] = std::max(LastReader[U.V->index()], Unit);
  }
  std::vector<double> Delta(Units + 1, 0.0);
  for (const auto &V : G.values()) {
    const int Reader = LastReader[V->index()];
    const ir::Node *P = V->producer();
    if (Reader < 0 || !P || V->isConstant() ||
        Plan.Exec[P->index()] == NodeExec::Folded)
      continue;
    const unsigned Writer = Blocks.UnitOf[P->index()];
    if (int(Writer) >= Reader)
      continue;
    const double Bytes =
        storedBytes(static_cast<double>(V->bytes()), V->type(), Storage);
    Delta[Writer] += Bytes;
    Delta[Reader] -= Bytes;
  }
  std::vector<double> Cut(Units, 0.0);
  double Live = 0;
  for (unsigned J = 0; J < Units; ++J) {
    Live += Delta[J];
    Cut[J] = Live;
  }
  return Cut;
}

} // namespace

void addPipelineStages(const ir::Graph &G, const KernelPlan &Plan,
                       const BlockInfo &Blocks, const PredictOptions &O,
                       llvm::ArrayRef<KernelShare> Shares, Report &R) {
  const InferencePipeline &Pipe = *O.PipelineParallel;
  const unsigned P = Pipe.Stages;
  const unsigned NB = Blocks.NumBlocks;
  const unsigned Tp = O.TensorParallel ? O.TensorParallel->Size : 1;
  const double Launch = O.Device->LaunchOverheadSeconds;
  // Each unit's kernels with their exchanges, one rank's.
  std::vector<double> UnitSeconds(Blocks.numUnits(), 0.0);
  for (const Kernel &K : Plan.Kernels) {
    const NodeTime &T = *R.Nodes[K.Head].Time;
    UnitSeconds[Blocks.UnitOf[K.Head]] += T.Seconds + T.TpCommSeconds;
  }
  const std::vector<double> Cut = cutBytes(G, Plan, Blocks, O.StorageType);
  // One rank's message of each cut, and what stage S pays to send it.
  std::vector<std::vector<double>> Send(P, std::vector<double>(NB + 1, 0.0));
  for (unsigned S = 0; S + 1 < P; ++S)
    for (unsigned J = 1; J < NB; ++J)
      Send[S][J] = cost::p2pSeconds(Cut[J] / Tp, *Pipe.Links[S]) + Launch;
  const auto Split = balancedStages(UnitSeconds, P, Send);

  PipelineParallelReport PR;
  PR.Degree = P;
  PR.Samples = samplesPerStep(G);
  std::vector<unsigned> StageOfUnit(Blocks.numUnits(), 0);
  for (unsigned S = 0; S < P; ++S) {
    for (unsigned B = Split[S].first; B <= Split[S].second; ++B)
      StageOfUnit[B] = S;
  }
  StageOfUnit.back() = P - 1;
  PR.NodeStage.resize(G.numNodes());
  for (unsigned N = 0; N < G.numNodes(); ++N)
    PR.NodeStage[N] = StageOfUnit[Blocks.UnitOf[N]];
  PR.Stages.resize(P);
  for (unsigned S = 0; S < P; ++S) {
    PipelineStageReport &St = PR.Stages[S];
    St.FirstBlock = Split[S].first;
    St.LastBlock = Split[S].second;
    St.FirstBlockName = Blocks.BlockNames[St.FirstBlock - 1];
    St.LastBlockName = Blocks.BlockNames[St.LastBlock - 1];
    if (S + 1 < P) {
      St.SendBytes = Cut[St.LastBlock] / Tp;
      St.SendSeconds = Send[S][St.LastBlock];
      St.SendLink = Pipe.Links[S]->Name;
    }
  }
  for (const Kernel &K : Plan.Kernels) {
    PipelineStageReport &St = PR.Stages[PR.NodeStage[K.Head]];
    const NodeTime &T = *R.Nodes[K.Head].Time;
    St.KernelSeconds += T.Seconds + T.TpCommSeconds;
    ++St.Kernels;
  }
  for (const PipelineStageReport &St : PR.Stages) {
    PR.LatencySeconds += St.seconds();
    PR.IntervalSeconds = std::max(PR.IntervalSeconds, St.seconds());
  }
  R.LatencySeconds = PR.LatencySeconds;

  if (O.Memory) {
    // Each stage's rank: its kernels at their shares, none of the others'.
    std::vector<KernelShare> StageShares(Plan.Kernels.size());
    const PipelineStageReport *Fullest = nullptr;
    for (unsigned S = 0; S < P; ++S) {
      for (size_t K = 0; K < Plan.Kernels.size(); ++K)
        StageShares[K] = PR.NodeStage[Plan.Kernels[K].Head] != S
                             ? KernelShare{0, 0}
                         : Shares.empty() ? KernelShare{}
                                          : Shares[K];
      PipelineStageReport &St = PR.Stages[S];
      InferenceMemory Usage =
          inferenceMemory(G, Plan, O.StorageType, StageShares);
      St.InFlightInputsBytes = (P - 1) * Usage.HeldInputsBytes;
      // The activations received: the receiving ranks gather their 1/tp
      // messages whole (held while the first block runs; counted as if at
      // the peak, an upper bound by one message).
      St.ReceivedBytes = S > 0 ? PR.Stages[S - 1].SendBytes * Tp : 0;
      const double Extra = St.InFlightInputsBytes + St.ReceivedBytes;
      Usage.ActivationsBytes += Extra;
      Usage.InputsBytes += St.InFlightInputsBytes;
      Usage.PeakBytes += Extra;
      St.Memory = memoryReport(G, Plan, *O.Device, std::move(Usage));
      if (!Fullest ||
          St.Memory.Usage.PeakBytes > Fullest->Memory.Usage.PeakBytes)
        Fullest = &St;
    }
    InferenceMemoryReport M = Fullest->Memory;
    M.Fits = llvm::all_of(PR.Stages, [](const PipelineStageReport &St) {
      return St.Memory.Fits;
    });
    const unsigned FullestIndex = unsigned(Fullest - PR.Stages.data());
    PR.FullestStage = FullestIndex;
    // The batch every stage fits: the least of theirs (a stage with fewer
    // weights may hold fewer in-flight caches than the fullest).
    const PipelineStageReport *Limiting = nullptr;
    for (const PipelineStageReport &St : PR.Stages)
      if (!Limiting || (Limiting->Memory.MaxBatch &&
                        (!St.Memory.MaxBatch ||
                         *St.Memory.MaxBatch < *Limiting->Memory.MaxBatch)))
        Limiting = &St;
    M.MaxBatch = Limiting->Memory.MaxBatch;
    M.BytesPerSample = Limiting->Memory.BytesPerSample;
    if (O.Explain)
      M.Explain =
          llvm::formatv("the fullest stage, {0} of {1}: ", FullestIndex + 1, P)
              .str() +
          explain(M.Usage, M.PeakAt, Plan.Kernels.size(), O.StorageType) +
          llvm::formatv("; of its activations, the inputs of the {0} other "
                        "batch{1} in flight ({2}) and the activations the "
                        "stage before sends ({3})",
                        P - 1, P == 2 ? "" : "es",
                        hw::formatDataBytes(Fullest->InFlightInputsBytes),
                        hw::formatDataBytes(Fullest->ReceivedBytes))
              .str() +
          (M.MaxBatch
               ? "; stage " + std::to_string(Limiting - PR.Stages.data() + 1) +
                     "'s " + explainMaxBatch(Limiting->Memory, 1)
               : std::string());
    if (!M.Fits)
      R.Warnings.push_back(
          {"", llvm::formatv(
                   "pipeline stage {0} of {1} needs {2} per device at its "
                   "peak (weights {3}, activations {4} with the {5} batches "
                   "in flight) but {6} has {7} of memory: use more stages "
                   "(--pp) or devices per stage (--tp), a narrower "
                   "--storage-type, a smaller batch or cache, or a larger "
                   "device",
                   FullestIndex + 1, P, hw::formatDataBytes(M.Usage.PeakBytes),
                   hw::formatDataBytes(M.Usage.WeightsBytes),
                   hw::formatDataBytes(M.Usage.ActivationsBytes), P, M.Device,
                   hw::formatDataBytes(M.CapacityBytes))
                   .str()});
    R.Memory = std::move(M);
  }

  if (O.Explain) {
    const PipelineStageReport &Slow = *std::max_element(
        PR.Stages.begin(), PR.Stages.end(),
        [](const PipelineStageReport &A, const PipelineStageReport &B) {
          return A.seconds() < B.seconds();
        });
    const PipelineStageReport *Sends = nullptr;
    for (const PipelineStageReport &St : PR.Stages)
      if (St.SendBytes > 0 && (!Sends || St.SendSeconds > Sends->SendSeconds))
        Sends = &St;
    PR.Explain =
        llvm::formatv(
            "{0} stages of {1}{2} device{3} each (vLLM's, TensorRT-LLM's and "
            "SGLang's pipeline parallelism): each holds contiguous blocks, "
            "the first also the prologue, the last the epilogue, split so "
            "that the slowest stage (kernels and send) is fastest; a stage "
            "sends what crosses its cut to the next, each rank 1/{4} of it, "
            "after its kernels on the same stream. latency = the stages' "
            "kernels and sends, one batch's pass = {5}; {0} batches in "
            "flight, one completing a step every {6} (the slowest stage, "
            "{7} of {0}): {8} samples/s",
            P, Tp, Tp > 1 ? " tensor-parallel" : "", Tp == 1 ? "" : "s", Tp,
            hw::formatQuantity(PR.LatencySeconds, hw::Quantity::Time),
            hw::formatQuantity(PR.IntervalSeconds, hw::Quantity::Time),
            unsigned(&Slow - PR.Stages.data()) + 1,
            fourDigits(PR.samplesPerSecond()))
            .str();
    if (Sends)
      PR.Explain +=
          llvm::formatv(
              "; the largest send: {0} from stage {1}, {2}{3}",
              hw::formatDataBytes(Sends->SendBytes),
              unsigned(Sends - PR.Stages.data()) + 1,
              cost::p2pTime(Sends->SendBytes,
                            *Pipe.Links[Sends - PR.Stages.data()])
                  .Explain,
              Launch > 0
                  ? " + " + hw::formatQuantity(Launch, hw::Quantity::Time) +
                        " launch"
                  : std::string())
              .str();
  }
  R.PipelineParallel = std::move(PR);
}

} // namespace perfc
