//===- TrainPipeline.cpp - Stages, report and timeline of a step ----------===//
#include "passes/Trainer.h"

#include <algorithm>

namespace perfc {
namespace trainstep {

llvm::Expected<std::vector<std::pair<unsigned, unsigned>>>
Trainer::partition() {
  // check() refused more chunks than blocks.
  const unsigned L = Blocks.NumBlocks;
  const unsigned NumChunks = O.Pp * O.Vp;
  std::vector<std::pair<unsigned, unsigned>> Chunks;
  if (NumChunks == 1) {
    Chunks.push_back({0, Blocks.numUnits() - 1});
    return Chunks;
  }
  std::vector<unsigned> Sizes(NumChunks, L / NumChunks);
  if (!O.ChunkBlocks.empty()) {
    uint64_t Sum = 0;
    for (unsigned B : O.ChunkBlocks)
      Sum += B;
    if (O.ChunkBlocks.size() != NumChunks ||
        std::count(O.ChunkBlocks.begin(), O.ChunkBlocks.end(), 0u) || Sum != L)
      return fail(llvm::formatv(
          "the stage split gives {0} chunks of {1} blocks in all, but pp "
          "{2} x vp {3} needs {4} chunks of at least one block, {5} in all",
          O.ChunkBlocks.size(), Sum, O.Pp, O.Vp, NumChunks, L));
    Sizes = O.ChunkBlocks;
  } else if (O.Split == Partition::Even) {
    if (L % NumChunks)
      return fail(llvm::formatv(
          "an even split of {0} blocks into pp {1} x vp {2} = {3} chunks "
          "is impossible; use --partition balanced or other degrees",
          L, O.Pp, O.Vp, NumChunks));
  } else {
    Sizes = balance(NumChunks);
  }
  unsigned First = 1;
  for (unsigned I = 0; I < NumChunks; ++I) {
    unsigned Last = First + Sizes[I] - 1;
    Chunks.push_back(
        {I == 0 ? 0 : First, I + 1 == NumChunks ? Blocks.NumBlocks + 1 : Last});
    First = Last + 1;
  }
  return Chunks;
}

std::vector<unsigned> Trainer::balance(unsigned NumChunks) const {
  const unsigned L = Blocks.NumBlocks;
  std::vector<double> T(L + 2);
  for (unsigned U = 0; U < L + 2; ++U)
    T[U] = (*Units)[U].total();
  // Prologue and epilogue ride with the first and last block.
  std::vector<double> B(T.begin() + 1, T.begin() + 1 + L);
  B.front() += T.front();
  B.back() += T.back();
  // Greedy fill under a cap on a chunk's time; fails when the blocks do
  // not fit in NumChunks chunks under it.
  auto Fill = [&](double Cap, std::vector<unsigned> &Sizes) {
    Sizes.assign(NumChunks, 0);
    unsigned C = 0;
    double Acc = 0;
    for (unsigned I = 0; I < L; ++I) {
      const unsigned Left = L - I;
      const unsigned ChunksAfter = NumChunks - C - 1;
      const bool Full = Acc + B[I] > Cap;
      if (Sizes[C] > 0 && C + 1 < NumChunks && (Full || Left <= ChunksAfter)) {
        ++C;
        Acc = 0;
      }
      if (Acc + B[I] > Cap && Sizes[C] > 0)
        return false;
      Sizes[C]++;
      Acc += B[I];
    }
    return C + 1 == NumChunks;
  };
  double Lo = *std::max_element(B.begin(), B.end()), Hi = 0;
  for (double X : B)
    Hi += X;
  std::vector<unsigned> Best(NumChunks, L / NumChunks), Sizes;
  for (unsigned I = 0; I < L % NumChunks; ++I)
    Best[NumChunks - 1 - I]++;
  for (int Iter = 0; Iter < 60; ++Iter) {
    const double Mid = (Lo + Hi) / 2;
    if (Fill(Mid, Sizes)) {
      Best = Sizes;
      Hi = Mid;
    } else {
      Lo = Mid;
    }
  }
  return Best;
}

llvm::Expected<TrainReport>
Trainer::assemble(const std::vector<std::pair<unsigned, unsigned>> &Chunks) {
  TrainReport R;
  R.Devices = Layout.ranks();
  R.ModelBlocks = Blocks.NumBlocks;
  R.BlocksFromStructure = Blocks.FromStructure;
  R.MicroBatches = MicroBatches;
  R.GlobalBatch = GlobalBatch;
  R.Device = Dev.Name;
  R.CapacityBytes = Dev.mainMemory().CapacityBytes;
  const ModelStateBytes States = modelStateBytes(
      O.Optimizer, trainingStorageType(O.DType), O.Fp32Gradients);
  const double Wbytes = States.Weights, Gbytes = States.Gradients;
  // ZeRO shards over a data-parallel group with its context ranks, which
  // hold the same parameters (Megatron-Core's distributed optimizer).
  const double Dp = double(O.Dp) * O.Cp;
  std::vector<std::string> MemoryNotes; // per stage, with O.Explain
  for (unsigned S = 0; S < O.Pp; ++S) {
    StageReport St;
    St.Stage = S;
    St.Device = Dev.Name;
    double ChunkActivation = 0, RecomputeKept = 0, MaxBlockSaved = 0,
           MaxUnitParams = 0;
    for (unsigned C = S; C < Chunks.size(); C += O.Pp) {
      auto [First, Last] = Chunks[C];
      St.Chunks.push_back({First, Last});
      // Under full recomputation a chunk keeps the input of each group it
      // reruns (N blocks under the uniform method, one under the block
      // method) and all of a block's activations it does not; a group's
      // activations live again, together, while it is recomputed.
      unsigned Position = 0;
      double GroupSaved = 0;
      for (unsigned U = First; U <= Last; ++U) {
        const UnitCost &UC = (*Units)[U];
        if (!Blocks.isBlock(U)) {
          // The prologue and epilogue (embedding, head and loss) keep their
          // inputs; their activations count once, as a block's rerun.
          RecomputeKept += UC.InputBytes;
          MaxBlockSaved = std::max(MaxBlockSaved, UC.Saved);
        } else if (!FullyRecomputed[U]) {
          RecomputeKept += UC.Saved;
        } else {
          const unsigned Group =
              O.Method == RecomputeMethod::Block ? 1 : O.RecomputeNumLayers;
          if (Position++ % Group == 0) {
            RecomputeKept += UC.InputBytes;
            GroupSaved = 0;
          }
          GroupSaved += UC.Saved;
          MaxBlockSaved = std::max(MaxBlockSaved, GroupSaved);
          ++St.RecomputedBlocks;
        }
        St.ForwardSeconds += UC.Forward;
        St.BackwardSeconds += UC.Backward;
        St.RecomputeSeconds += UC.Recompute;
        St.TpCommSeconds += UC.TpComm;
        St.TpForwardSeconds += UC.TpForward;
        St.TpOverlappedSeconds += UC.TpOverlapped;
        St.CpCommSeconds += UC.CpComm;
        St.CpForwardSeconds += UC.CpForward;
        St.CpOverlappedSeconds += UC.CpOverlapped;
        St.EpCommSeconds += UC.EpComm;
        St.EpForwardSeconds += UC.EpForward;
        St.Params += UC.Params;
        St.ExpertParams += UC.ExpertParams;
        St.ParamTensors += UC.ParamTensors;
        ChunkActivation += UC.Saved;
        St.WorkspaceBytes = std::max(St.WorkspaceBytes, UC.Largest);
        MaxUnitParams = std::max(MaxUnitParams, UC.Params);
        if (Blocks.isBlock(U))
          ++St.Blocks;
      }
    }
    // Micro-batches (chunk forwards) in flight: all of them under GPipe,
    // which runs every forward before the first backward; under 1F1B
    // the warm-up depth.
    const int64_t MaxFlight = int64_t(MicroBatches) * O.Vp;
    int64_t Flight = O.Schedule == PipelineSchedule::GPipe ? MaxFlight
                     : O.Vp == 1
                         ? int64_t(O.Pp - S)
                         : int64_t(O.Vp - 1) * O.Pp + 2 * (O.Pp - S - 1) + 1;
    // Megatron-Core's combined 1F1B runs one forward more before the
    // backwards start, to pair each backward with another's forward.
    if (O.OverlapMoeExpertParallelComm)
      ++Flight;
    Flight = std::max<int64_t>(1, std::min(Flight, MaxFlight));
    St.InFlight = Flight;
    if (O.OverlapMoeExpertParallelComm) {
      // A micro-batch's all-to-alls run beside the kernels of the one it
      // is co-scheduled with (its forward with another's backward, its
      // backward with another's forward): only what outlasts them waits.
      St.EpOverlappedSeconds =
          std::min(St.EpCommSeconds, St.ForwardSeconds + St.BackwardSeconds +
                                         St.RecomputeSeconds);
      St.EpCommSeconds -= St.EpOverlappedSeconds;
    }
    const double PerChunk = ChunkActivation / O.Vp;
    if (O.Recomp == Recompute::Full)
      St.ActivationsBytes = Flight * (RecomputeKept / O.Vp) + MaxBlockSaved;
    else
      St.ActivationsBytes = Flight * PerChunk;
    St.WeightsBytes = St.Params * Wbytes / (O.Zero >= 3 ? Dp : 1);
    // ZeRO 3 computes a unit on its gathered parameters while the next
    // unit's are gathered (FSDP's prefetch): two units whole, less the
    // shard already counted in the weights.
    const double Gathered =
        O.Zero >= 3 && Dp > 1 ? 2 * MaxUnitParams * Wbytes * (1 - 1 / Dp) : 0;
    St.WorkspaceBytes += Gathered;
    St.GradientsBytes = shardedParams(St, O.Zero >= 2) * Gbytes;
    St.OptimizerBytes = shardedParams(St, O.Zero >= 1) * States.Optimizer;
    if (O.Explain) {
      MemoryTerms T;
      T.States = States;
      T.KeptPerMicroBatch = PerChunk;
      T.InputsPerMicroBatch = RecomputeKept / O.Vp;
      T.LargestBlockSaved = MaxBlockSaved;
      T.GatheredParamBytes = Gathered;
      MemoryNotes.push_back(explainMemory(St, O, T));
    }
    R.Stages.push_back(std::move(St));
  }
  // The slowest stage sets the pace.
  unsigned Slow = 0;
  for (unsigned S = 1; S < R.Stages.size(); ++S)
    if (R.Stages[S].microBatchSeconds() > R.Stages[Slow].microBatchSeconds())
      Slow = S;
  const StageReport &SS = R.Stages[Slow];
  if (O.Explain && O.Tp > 1)
    R.CommExplain =
        explainTensorParallel(SS, Blocks, FullyRecomputed, O, TpGroup);
  const double T = SS.microBatchSeconds();
  const double M = MicroBatches;
  // Fill and drain: each stage but the slowest adds its own micro-batch
  // time (Alpa's pipeline latency, Zheng et al. OSDI 2022: the stages'
  // sum plus (m - 1) times the slowest, exact when the slowest stage is
  // the last, an upper bound of the simulated 1F1B otherwise), divided by
  // vp when interleaved: Megatron-LM's (pp - 1) / vp x T on equal stages.
  double Others = 0;
  for (unsigned S = 0; S < R.Stages.size(); ++S)
    if (S != Slow)
      Others += R.Stages[S].microBatchSeconds();
  R.BubbleSeconds = Others / O.Vp;
  // Activations between stages: the largest tensor crossing one of the
  // stages' cuts (a CNN's early cuts carry far more than its late ones).
  if (O.Pp > 1) {
    double Largest = 0;
    for (const StageReport &St : R.Stages)
      for (const auto &Chunk : St.Chunks)
        Largest = std::max(Largest, A.cutBytesAfter(Chunk.second));
    const double Boundary = Largest * byteScale();
    // Megatron's scatter/gather: each tensor-parallel rank sends 1/tp
    // (of its context rank's tokens).
    const double Message = Boundary / O.Tp / O.Cp;
    R.P2pSeconds = 2 * M * O.Vp * cost::p2pSeconds(Message, *P2pLink);
    if (O.Explain)
      R.CommExplain.push_back(
          explainPipelineMessages(MicroBatches, O, Message, *P2pLink));
  }
  if (O.Explain && O.Cp > 1)
    if (std::string Line = explainContextExchange(SS); !Line.empty())
      R.CommExplain.push_back(std::move(Line));
  if (O.Explain && O.Ep > 1)
    if (std::string Line = explainExpertParallel(SS); !Line.empty())
      R.CommExplain.push_back(std::move(Line));
  if (Dp > 1)
    addDataParallelExchange(R, SS, Wbytes, Gbytes);
  // Optimizer: one elementwise pass over the shard.
  R.OptimizerSeconds =
      optimizerStepSeconds(shardedParams(SS, O.Zero >= 1), SS.ParamTensors,
                           States, O.Optimizer, O.PerTensorOptimizer, Dev);
  if (A.Unfused && MicroBatches > 1)
    R.GradAccumSeconds = (M - 1) * gradientAccumulationPassSeconds(
                                       SS.Params, SS.ParamTensors,
                                       trainingStorageType(O.DType), Dev);
  R.TpCommSeconds = M * SS.TpCommSeconds;
  R.TpOverlappedSeconds = M * SS.TpOverlappedSeconds;
  R.CpCommSeconds = M * SS.CpCommSeconds;
  R.CpOverlappedSeconds = M * SS.CpOverlappedSeconds;
  // The first forward and the last backward have no partner: their
  // all-to-alls wait, once a step.
  R.EpCommSeconds = M * SS.EpCommSeconds + SS.EpOverlappedSeconds;
  R.EpOverlappedSeconds = (M - 1) * SS.EpOverlappedSeconds;
  R.ComputeSeconds =
      M * (SS.ForwardSeconds + SS.BackwardSeconds + SS.RecomputeSeconds) +
      R.GradAccumSeconds;
  R.CommSeconds = R.TpCommSeconds + R.TpOverlappedSeconds + R.CpCommSeconds +
                  R.CpOverlappedSeconds + R.EpCommSeconds +
                  R.EpOverlappedSeconds + R.P2pSeconds + R.DpCommSeconds;
  R.ExposedCommSeconds = R.TpCommSeconds + R.CpCommSeconds + R.EpCommSeconds +
                         R.P2pSeconds + R.DpExposedSeconds;
  R.StepSeconds = M * T + SS.EpOverlappedSeconds + R.BubbleSeconds +
                  R.P2pSeconds + R.GradAccumSeconds + R.DpExposedSeconds +
                  R.OptimizerSeconds;
  R.SamplesPerSecond = GlobalBatch / R.StepSeconds;
  // Model FLOPs: forward and backward of every node, unsharded, per
  // sample of the micro-batch, times the global batch.
  const double PerMicro = A.FlopsPerMicroBatch;
  R.ModelFlops = PerMicro * M * O.Dp;
  R.TflopsPerDevice = R.ModelFlops / R.StepSeconds / R.Devices / 1e12;
  applyInputRate(R, O, C.Groups.front().devicesPerNode());
  if (O.Timeline) {
    R.Trace = timeline(R);
    // The first stage's host loads the next step's samples while this
    // one trains (stream 2); an input-bound step ends when it is done.
    if (R.InputSeconds > 0) {
      R.Trace.Events.push_back(
          {"load next step's samples", "input", 0, 2, 0, R.InputSeconds, -1});
      R.Trace.End = std::max(R.Trace.End, R.InputSeconds);
    }
  }
  for (unsigned S = 0; S < R.Stages.size(); ++S)
    if (R.Stages[S].peakBytes() > R.Stages[R.PeakStage].peakBytes())
      R.PeakStage = S;
  R.Fits = R.peak().peakBytes() <= R.CapacityBytes;
  if (O.Explain && R.PeakStage < MemoryNotes.size())
    R.MemoryExplain = MemoryNotes[R.PeakStage];
  // Per node, for the report's rows (whole kernels: one rank is the
  // whole model only without tensor or context parallelism).
  if (O.Explain && O.Tp == 1 && O.Cp == 1) {
    R.NodeBackwards.resize(G.numNodes());
    for (const Kernel &K : Plan.Kernels) {
      TrainReport::NodeBackward &B = R.NodeBackwards[K.Head];
      B.Seconds = kernelBackward(K, &B.Explain);
      B.RecomputeSeconds =
          recomputeSeconds(K, forwardSeconds(K), &B.RecomputeExplain);
    }
  }
  return R;
}

ChunkTimes Trainer::chunkTimes(const TrainReport &R) const {
  ChunkTimes Times;
  for (const StageReport &S : R.Stages) {
    std::vector<StageTimes> &Chunks = Times.emplace_back();
    // The share of the all-to-alls that stays exposed (all of them unless
    // OverlapMoeExpertParallelComm hides some).
    const double EpAll = S.EpCommSeconds + S.EpOverlappedSeconds;
    const double EpShown = EpAll > 0 ? S.EpCommSeconds / EpAll : 1;
    for (const auto &[First, Last] : S.Chunks) {
      StageTimes &C = Chunks.emplace_back();
      for (unsigned U = First; U <= Last; ++U) {
        const UnitCost &UC = (*Units)[U];
        C.Forward +=
            UC.Forward + UC.TpForward + UC.CpForward + EpShown * UC.EpForward;
        C.Backward += UC.Backward + UC.Recompute + UC.TpComm - UC.TpForward +
                      UC.CpComm - UC.CpForward +
                      EpShown * (UC.EpComm - UC.EpForward);
      }
    }
  }
  return Times;
}

Timeline Trainer::timeline(const TrainReport &R) const {
  const ChunkTimes Times = chunkTimes(R);
  const double Transfer = R.MicroBatches > 0 && O.Vp > 0
                              ? R.P2pSeconds / (2.0 * R.MicroBatches * O.Vp)
                              : 0;
  std::vector<StageTimes> Whole;
  for (const std::vector<StageTimes> &S : Times) {
    StageTimes &W = Whole.emplace_back();
    for (const StageTimes &C : S) {
      W.Forward += C.Forward;
      W.Backward += C.Backward;
    }
  }
  Timeline T =
      O.Schedule == PipelineSchedule::GPipe
          ? simulateGPipe(Whole, R.MicroBatches, Transfer)
          : simulateOneFOneB(Times, R.MicroBatches,
                             std::vector<double>(Times.size() - 1, Transfer));
  // Under --overlap-param-gather this step's parameters are gathered as
  // its first forward starts (the previous step's optimizer updated
  // them): the forward waits what the step pays for it, so everything
  // else starts that much later.
  const bool Overlapped = O.OverlapParamGather && R.DpGatherBuckets > 0;
  const double Wait = Overlapped ? R.DpGatherExposedSeconds : 0;
  if (Wait > 0)
    for (TimelineEvent &E : T.Events)
      E.Start += Wait;
  T.End += Wait;
  // Under --overlap-moe-expert-parallel-comm the first forward's and the
  // last backward's all-to-alls have no partner to hide behind; the step
  // pays the slowest stage's (assemble), drawn as one span after the
  // schedule.
  unsigned Slow = 0;
  for (unsigned S = 1; S < R.Stages.size(); ++S)
    if (R.Stages[S].microBatchSeconds() > R.Stages[Slow].microBatchSeconds())
      Slow = S;
  const double Unpaired =
      R.Stages.empty() ? 0 : R.Stages[Slow].EpOverlappedSeconds;
  if (Unpaired > 0)
    for (unsigned S = 0; S < R.Stages.size(); ++S)
      T.Events.push_back({"expert all-to-alls without a partner (the first "
                          "forward's, the last backward's)",
                          "comm", S, 1, T.End, Unpaired, -1});
  T.End += Unpaired;
  // Eager accumulation passes run inside the micro-batches' backwards;
  // drawn as one span after the last, where the step pays for them.
  const double End = T.End + R.GradAccumSeconds;
  // The exchange after the backward: all of it, or without the gather.
  const double After =
      Overlapped ? R.DpCommSeconds - R.DpGatherSeconds : R.DpCommSeconds;
  const double AfterExposed = R.DpExposedSeconds - Wait;
  for (unsigned S = 0; S < R.Stages.size(); ++S) {
    if (R.GradAccumSeconds > 0)
      T.Events.push_back({"gradient accumulation", "compute", S, 0, T.End,
                          R.GradAccumSeconds, -1});
    if (Overlapped)
      T.Events.push_back({"parameter all-gather (during the first forward)",
                          "comm", S, 1, 0, R.DpGatherSeconds, -1});
    if (After > 0)
      T.Events.push_back({"data-parallel gradients", "comm", S, 1,
                          End - std::min(End, After - AfterExposed), After,
                          -1});
    T.Events.push_back({"optimizer step", "optimizer", S, 0, End + AfterExposed,
                        R.OptimizerSeconds, -1});
  }
  T.End = End + AfterExposed + R.OptimizerSeconds;
  return T;
}

} // namespace trainstep
} // namespace perfc
