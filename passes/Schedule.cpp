//===- Schedule.cpp - Timelines of predicted execution --------------------===//
#include "passes/Schedule.h"

#include <algorithm>
#include <string>

namespace perfc {

namespace {

struct Op {
  bool Forward;
  unsigned Micro;
  unsigned Chunk;
};

/// Runs each stage's program in order, each op as soon as its inputs are
/// there. Chunk c of stage s is virtual stage c * P + s: a forward waits for
/// the virtual stage before it (on the previous stage, or for chunk c > 0 of
/// stage 0 on the last stage's chunk c - 1), a backward for the virtual
/// stage after it and for its own forward. Transfers[s] is the time from
/// stage s to s + 1 (and back); the wrap from the last stage to the first
/// takes the longest of them. Record keeps the events (a planner wants only
/// the end).
Timeline run(const ChunkTimes &Stages, unsigned M,
             const std::vector<double> &Transfers,
             const std::vector<std::vector<Op>> &Program, bool Record) {
  Timeline T;
  const unsigned P = Stages.size();
  const unsigned V = Stages.front().size();
  const double Wrap =
      Transfers.empty() ? 0.0
                        : *std::max_element(Transfers.begin(), Transfers.end());
  // Finish times by [stage][chunk * M + micro-batch]; a negative entry is
  // not computed yet.
  std::vector<std::vector<double>> FwdEnd(P, std::vector<double>(V * M, -1)),
      BwdEnd(P, std::vector<double>(V * M, -1));
  std::vector<size_t> Next(P, 0);
  std::vector<double> Free(P, 0);
  // Every pass over the stages runs at least one op (the schedule has no
  // deadlock), so P * 2VM passes bound the loop.
  for (size_t Pass = 0; Pass < size_t(P) * 2 * V * M + 1; ++Pass) {
    bool Progress = false;
    for (unsigned S = 0; S < P; ++S) {
      while (Next[S] < Program[S].size()) {
        const Op &O = Program[S][Next[S]];
        const unsigned C = O.Chunk, Mb = O.Micro;
        double Ready = Free[S];
        // The neighbouring virtual stage this op waits for, if any.
        const std::vector<double> *Dep = nullptr;
        unsigned DepChunk = 0;
        double Transfer = 0;
        if (O.Forward && (S > 0 || C > 0)) {
          Dep = S > 0 ? &FwdEnd[S - 1] : &FwdEnd[P - 1];
          DepChunk = S > 0 ? C : C - 1;
          Transfer = S > 0 ? Transfers[S - 1] : Wrap;
        } else if (!O.Forward && (S + 1 < P || C + 1 < V)) {
          Dep = S + 1 < P ? &BwdEnd[S + 1] : &BwdEnd[0];
          DepChunk = S + 1 < P ? C : C + 1;
          Transfer = S + 1 < P ? Transfers[S] : Wrap;
        }
        if (Dep) {
          const double End = (*Dep)[DepChunk * M + Mb];
          if (End < 0)
            break;
          Ready = std::max(Ready, End + Transfer);
        }
        if (!O.Forward && FwdEnd[S][C * M + Mb] < 0)
          break;
        const double Dur =
            O.Forward ? Stages[S][C].Forward : Stages[S][C].Backward;
        (O.Forward ? FwdEnd : BwdEnd)[S][C * M + Mb] = Ready + Dur;
        Free[S] = Ready + Dur;
        if (Record) {
          std::string Name =
              (O.Forward ? "forward " : "backward ") + std::to_string(Mb);
          if (V > 1)
            Name += " (chunk " + std::to_string(C) + ")";
          T.Events.push_back({std::move(Name),
                              O.Forward ? "forward" : "backward", S, 0, Ready,
                              Dur, int(Mb)});
        }
        T.End = std::max(T.End, Ready + Dur);
        ++Next[S];
        Progress = true;
      }
    }
    if (!Progress)
      break;
  }
  return T;
}

/// Transfers of Transfer seconds between every pair of adjacent stages.
std::vector<double> uniformTransfers(size_t Stages, double Transfer) {
  return std::vector<double>(Stages == 0 ? 0 : Stages - 1, Transfer);
}

/// One chunk per stage.
ChunkTimes oneChunk(const std::vector<StageTimes> &Stages) {
  ChunkTimes C;
  C.reserve(Stages.size());
  for (const StageTimes &S : Stages)
    C.push_back({S});
  return C;
}

/// Runs the schedule whose stage S of P runs StageOps(S, P, V, M, Ops)
/// (which appends its ops to Ops) over M micro-batches and V chunks.
template <typename StageOpsFn>
Timeline schedule(const ChunkTimes &Stages, unsigned M,
                  const std::vector<double> &Transfers, bool Record,
                  StageOpsFn &&StageOps) {
  const unsigned P = Stages.size();
  if (P == 0 || M == 0 || Stages.front().empty())
    return Timeline();
  std::vector<std::vector<Op>> Program(P);
  for (unsigned S = 0; S < P; ++S)
    StageOps(S, P, unsigned(Stages.front().size()), M, Program[S]);
  return run(Stages, M, Transfers, Program, Record);
}

/// Megatron-LM's 1F1B (forward_backward_pipelining_without_interleaving)
/// and, with V > 1 chunks, its interleaved form
/// (forward_backward_pipelining_with_interleaving): each stage runs its
/// warm-up forwards, then alternates one forward and one backward, then
/// drains its backwards. Interleaved, the M x V chunk passes go in groups
/// of P micro-batches, chunk by chunk (backwards from the last chunk), and
/// stage S warms up with 2 (P - S - 1) + (V - 1) P forwards (all of them
/// when M = P).
void oneFOneB(unsigned S, unsigned P, unsigned V, unsigned M,
              std::vector<Op> &Ops) {
  const unsigned Total = M * V;
  const unsigned Warmup = V == 1 ? std::min(M, P - S - 1)
                          : M == P
                              ? Total
                              : std::min(Total, (P - S - 1) * 2 + (V - 1) * P);
  const auto OpOf = [&](unsigned K, bool Forward) {
    const unsigned InGroup = K % (P * V);
    const unsigned Chunk = InGroup / P;
    return Op{Forward, (K / (P * V)) * P + K % P,
              Forward ? Chunk : V - 1 - Chunk};
  };
  unsigned F = 0, B = 0;
  for (; F < Warmup; ++F)
    Ops.push_back(OpOf(F, true));
  while (F < Total) {
    Ops.push_back(OpOf(F++, true));
    Ops.push_back(OpOf(B++, false));
  }
  while (B < Total)
    Ops.push_back(OpOf(B++, false));
}

} // namespace

Timeline simulateOneFOneB(const std::vector<StageTimes> &Stages,
                          unsigned MicroBatches, double Transfer) {
  return simulateOneFOneB(Stages, MicroBatches,
                          uniformTransfers(Stages.size(), Transfer));
}

Timeline simulateOneFOneB(const std::vector<StageTimes> &Stages,
                          unsigned MicroBatches,
                          const std::vector<double> &Transfers, bool Record) {
  return simulateOneFOneB(oneChunk(Stages), MicroBatches, Transfers, Record);
}

Timeline simulateOneFOneB(const ChunkTimes &Stages, unsigned MicroBatches,
                          const std::vector<double> &Transfers, bool Record) {
  return schedule(Stages, MicroBatches, Transfers, Record, oneFOneB);
}

Timeline simulateGPipe(const std::vector<StageTimes> &Stages,
                       unsigned MicroBatches, double Transfer) {
  return schedule(
      oneChunk(Stages), MicroBatches, uniformTransfers(Stages.size(), Transfer),
      /*Record=*/true,
      [](unsigned, unsigned, unsigned, unsigned M, std::vector<Op> &Ops) {
        for (unsigned F = 0; F < M; ++F)
          Ops.push_back({true, F, 0});
        // Backwards in reverse order, as GPipe's flush does.
        for (unsigned B = M; B-- > 0;)
          Ops.push_back({false, B, 0});
      });
}

} // namespace perfc
