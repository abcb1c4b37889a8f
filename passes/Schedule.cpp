//===- Schedule.cpp - Timelines of predicted execution --------------------===//
#include "passes/Schedule.h"

#include <algorithm>
#include <string>

namespace perfc {

namespace {

struct Op {
  bool Forward;
  unsigned Micro;
};

/// Runs each stage's program in order, each op as soon as its inputs are
/// there.
/// Transfers[s] is the time from stage s to s + 1 (and back); Record keeps
/// the events (a planner wants only the end).
Timeline run(const std::vector<StageTimes> &Stages, unsigned M,
             const std::vector<double> &Transfers,
             const std::vector<std::vector<Op>> &Program, bool Record) {
  Timeline T;
  const unsigned P = Stages.size();
  // Finish times; a negative entry is not computed yet.
  std::vector<std::vector<double>> FwdEnd(P, std::vector<double>(M, -1)),
      BwdEnd(P, std::vector<double>(M, -1));
  std::vector<size_t> Next(P, 0);
  std::vector<double> Free(P, 0);
  // Every pass over the stages runs at least one op (the schedule has no
  // deadlock), so P * 2M passes bound the loop.
  for (size_t Pass = 0; Pass < size_t(P) * 2 * M + 1; ++Pass) {
    bool Progress = false;
    for (unsigned S = 0; S < P; ++S) {
      while (Next[S] < Program[S].size()) {
        const Op &O = Program[S][Next[S]];
        double Ready = Free[S];
        if (O.Forward && S > 0) {
          if (FwdEnd[S - 1][O.Micro] < 0)
            break;
          Ready = std::max(Ready, FwdEnd[S - 1][O.Micro] + Transfers[S - 1]);
        }
        if (!O.Forward && S + 1 < P) {
          if (BwdEnd[S + 1][O.Micro] < 0)
            break;
          Ready = std::max(Ready, BwdEnd[S + 1][O.Micro] + Transfers[S]);
        }
        if (!O.Forward && FwdEnd[S][O.Micro] < 0)
          break;
        const double Dur = O.Forward ? Stages[S].Forward : Stages[S].Backward;
        (O.Forward ? FwdEnd : BwdEnd)[S][O.Micro] = Ready + Dur;
        Free[S] = Ready + Dur;
        if (Record)
          T.Events.push_back(
              {(O.Forward ? "forward " : "backward ") + std::to_string(O.Micro),
               O.Forward ? "forward" : "backward", S, 0, Ready, Dur,
               int(O.Micro)});
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
std::vector<double> uniformTransfers(const std::vector<StageTimes> &Stages,
                                     double Transfer) {
  return std::vector<double>(Stages.empty() ? 0 : Stages.size() - 1, Transfer);
}

/// Runs the schedule whose stage S of P runs StageOps(S, P, M, Ops) (which
/// appends its ops to Ops) over M micro-batches.
template <typename StageOpsFn>
Timeline schedule(const std::vector<StageTimes> &Stages, unsigned M,
                  const std::vector<double> &Transfers, bool Record,
                  StageOpsFn &&StageOps) {
  const unsigned P = Stages.size();
  if (P == 0 || M == 0)
    return Timeline();
  std::vector<std::vector<Op>> Program(P);
  for (unsigned S = 0; S < P; ++S)
    StageOps(S, P, M, Program[S]);
  return run(Stages, M, Transfers, Program, Record);
}

} // namespace

Timeline simulateOneFOneB(const std::vector<StageTimes> &Stages,
                          unsigned MicroBatches, double Transfer) {
  return simulateOneFOneB(Stages, MicroBatches,
                          uniformTransfers(Stages, Transfer));
}

Timeline simulateOneFOneB(const std::vector<StageTimes> &Stages,
                          unsigned MicroBatches,
                          const std::vector<double> &Transfers, bool Record) {
  // Each stage's program: warm-up forwards, 1F1B, cool-down backwards.
  return schedule(Stages, MicroBatches, Transfers, Record,
                  [](unsigned S, unsigned P, unsigned M, std::vector<Op> &Ops) {
                    const unsigned Warmup = std::min(M, P - S - 1);
                    unsigned F = 0, B = 0;
                    for (; F < Warmup; ++F)
                      Ops.push_back({true, F});
                    while (F < M) {
                      Ops.push_back({true, F++});
                      Ops.push_back({false, B++});
                    }
                    while (B < M)
                      Ops.push_back({false, B++});
                  });
}

Timeline simulateGPipe(const std::vector<StageTimes> &Stages,
                       unsigned MicroBatches, double Transfer) {
  return schedule(Stages, MicroBatches, uniformTransfers(Stages, Transfer),
                  /*Record=*/true,
                  [](unsigned, unsigned, unsigned M, std::vector<Op> &Ops) {
                    for (unsigned F = 0; F < M; ++F)
                      Ops.push_back({true, F});
                    // Backwards in reverse order, as GPipe's flush does.
                    for (unsigned B = M; B-- > 0;)
                      Ops.push_back({false, B});
                  });
}

} // namespace perfc
