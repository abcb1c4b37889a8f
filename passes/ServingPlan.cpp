//===- ServingPlan.cpp - The fastest layout that serves a model -----------===//
#include "passes/ServingPlan.h"

#include "hwdb/Cluster.h"
#include "hwdb/Units.h"
#include "ir/Graph.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace perfc;

const char *perfc::name(ServingSplit S) {
  switch (S) {
  case ServingSplit::Whole:
    return "whole";
  case ServingSplit::Tensor:
    return "tp";
  case ServingSplit::Expert:
    return "ep";
  }
  return "whole";
}

const char *perfc::name(ServingObjective O) {
  return O == ServingObjective::Throughput ? "throughput" : "latency";
}

llvm::Optional<ServingObjective>
perfc::servingObjectiveNamed(llvm::StringRef S) {
  if (S == "latency")
    return ServingObjective::Latency;
  if (S == "throughput")
    return ServingObjective::Throughput;
  return llvm::None;
}

std::string perfc::name(const ServingCandidate &C) {
  const unsigned Degree = C.Devices / std::max(C.Stages, 1u);
  std::string S =
      C.Split == ServingSplit::Whole
          ? std::string(C.Stages > 1 ? "" : name(C.Split))
          : (llvm::Twine(name(C.Split)) + " " + llvm::Twine(Degree)).str();
  if (C.Stages > 1)
    S += (S.empty() ? "pp " : " pp ") + std::to_string(C.Stages);
  return S;
}

SplitDegrees perfc::degreesOf(const ServingCandidate &C) {
  SplitDegrees D;
  D.Pp = C.Stages;
  if (C.Split == ServingSplit::Tensor)
    D.Tp = C.Devices / C.Stages;
  if (C.Split == ServingSplit::Expert)
    D.Ep = C.Devices;
  return D;
}

void perfc::setServingFigures(ServingCandidate &C, const Report &R) {
  C.LatencySeconds = R.LatencySeconds.getValueOr(0);
  C.IntervalSeconds = R.PipelineParallel ? R.PipelineParallel->IntervalSeconds
                                         : C.LatencySeconds;
  if (R.Memory) {
    C.PeakBytes = R.Memory->Usage.PeakBytes;
    C.CapacityBytes = R.Memory->CapacityBytes;
    C.Fits = R.Memory->Fits;
  }
}

namespace {

/// A serving plan none of whose layouts fits: the one that came closest.
std::string noLayoutFits(const ServingPlan &P) {
  const ServingCandidate *Least = nullptr;
  for (const ServingCandidate &C : P.Candidates)
    if (!Least || C.PeakBytes < Least->PeakBytes)
      Least = &C;
  return llvm::formatv(
             "no layout of up to {0} device{1}{6} fits in memory: the least "
             "per device is {2} ({3} on {4}), over the {5} a device has; use "
             "devices with more memory, a smaller batch or cache, "
             "--storage-type fp8 or int8, or more devices (--devices, "
             "--allow-cross-node-tp)",
             P.MaxDevices, P.MaxDevices == 1 ? "" : "s",
             hw::formatDataBytes(Least->PeakBytes), name(*Least),
             Least->Devices == 1
                 ? "one device"
                 : (llvm::Twine(Least->Devices) + " devices").str(),
             hw::formatDataBytes(Least->CapacityBytes),
             P.MaxPipelineDevices > P.MaxDevices
                 ? (" (" + llvm::Twine(P.MaxPipelineDevices) +
                    " with pipeline stages)")
                       .str()
                 : std::string())
      .str();
}

} // namespace

llvm::Expected<ServingPlan> perfc::serveLayouts(const ir::Graph &G,
                                                const ServingRequest &R) {
  const auto Fail = [](std::string Message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Message);
  };
  if (!R.Cluster || !R.Base.Device)
    return Fail("--plan without --train needs --hw naming a cluster whose "
                "devices serve the model (e.g. dgx-h100)");
  const hw::Cluster &C = *R.Cluster;
  if (R.Devices > C.numDevices())
    return Fail(llvm::formatv("--devices {0}: cluster '{1}' has {2}", R.Devices,
                              C.Name, C.numDevices()));
  if (R.MaxLatencySeconds &&
      !(*R.MaxLatencySeconds > 0 && std::isfinite(*R.MaxLatencySeconds)))
    return Fail("--max-latency must be a positive time (e.g. '50 ms')");
  const unsigned PerNode = C.Groups.front().devicesPerNode();
  ServingPlan Plan;
  Plan.Samples = samplesPerStep(G);
  Plan.Objective = R.Objective;
  Plan.MaxLatencySeconds = R.MaxLatencySeconds;
  Plan.MaxDevices =
      R.Devices ? R.Devices : (R.AllowCrossNodeTp ? C.numDevices() : PerNode);
  const unsigned MaxTp =
      R.AllowCrossNodeTp ? Plan.MaxDevices : std::min(Plan.MaxDevices, PerNode);
  // The work and blocks every layout's checks and prediction read: the same
  // for every degree.
  const InferenceSplit Analysis = analyzeInferenceSplit(G);
  const bool HasExperts = !Analysis.Blocks.ExpertCounts.empty();

  const auto Add = [&](ServingSplit Split, unsigned N,
                       const cost::CommGroup *Group,
                       const InferencePipeline *Pipe = nullptr) {
    PredictOptions O = figuresOnly(R.Base);
    O.Memory = true;
    O.Split = &Analysis;
    if (Split == ServingSplit::Tensor)
      O.TensorParallel = *Group;
    if (Split == ServingSplit::Expert)
      O.ExpertParallel = *Group;
    if (Pipe)
      O.PipelineParallel = *Pipe;
    const Report P = predict(G, O);
    ServingCandidate Cand;
    Cand.Split = Split;
    Cand.Samples = Plan.Samples;
    Cand.Stages = Pipe ? Pipe->Stages : 1;
    Cand.Devices = N * Cand.Stages;
    setServingFigures(Cand, P);
    if (P.Memory)
      Cand.MaxBatch = P.Memory->MaxBatch;
    Plan.Candidates.push_back(Cand);
  };
  // A split the model or the cluster refuses is listed with the reason,
  // once: what refuses a power of two (a size it does not divide, a
  // pattern the model lacks, devices the cluster lacks) refuses its
  // multiples too.
  bool TensorRefused = false, ExpertRefused = false;
  const auto TrySplit = [&](ServingSplit Split,
                            unsigned N) -> llvm::Optional<cost::CommGroup> {
    bool &Refused =
        Split == ServingSplit::Tensor ? TensorRefused : ExpertRefused;
    if (Refused)
      return llvm::None;
    const char *Flag = Split == ServingSplit::Tensor ? "--tp" : "--ep";
    auto Group = tensorParallelGroup(C, N, Flag);
    if (!Group) {
      Plan.Skipped.push_back(llvm::toString(Group.takeError()));
      Refused = true;
      return llvm::None;
    }
    Group->Protocol = R.Protocol;
    if (llvm::Error E = Split == ServingSplit::Tensor
                            ? checkTensorParallel(G, Analysis, N)
                            : checkExpertParallel(G, Analysis, N)) {
      Plan.Skipped.push_back(llvm::toString(std::move(E)));
      Refused = true;
      return llvm::None;
    }
    Add(Split, N, &*Group);
    return *Group;
  };
  Add(ServingSplit::Whole, 1, nullptr);
  // The tensor-parallel degrees tried (1: whole), each with its group and
  // whether its layout fits.
  struct TensorTried {
    unsigned Tp;
    llvm::Optional<cost::CommGroup> Group;
    bool Fits;
  };
  std::vector<TensorTried> TpTried = {{1, llvm::None, Plan.Candidates[0].Fits}};
  for (unsigned N = 2; N <= Plan.MaxDevices; N *= 2) {
    if (N <= MaxTp)
      if (auto Group = TrySplit(ServingSplit::Tensor, N))
        TpTried.push_back({N, Group, Plan.Candidates.back().Fits});
    if (HasExperts)
      TrySplit(ServingSplit::Expert, N);
  }
  // Pipeline stages (tensor-parallel groups of one node at most, stages
  // across nodes as serving engines place them): for each degree tried
  // whose layout does not fit, 2, 4, ... stages until one fits. At one
  // batch, more stages than the first that fits serve no better: the same
  // samples per second per device (as many batches in flight as stages)
  // with a longer pass. At each layout's largest batch they may
  // (EveryPipelineDegree): every count is tried.
  Plan.MaxPipelineDevices = R.Devices ? R.Devices : C.numDevices();
  for (const TensorTried &T : TpTried) {
    if ((T.Fits && !R.EveryPipelineDegree) || T.Tp > PerNode)
      continue;
    for (unsigned Pp = 2; uint64_t(Pp) * T.Tp <= Plan.MaxPipelineDevices;
         Pp *= 2) {
      if (llvm::Error E = checkPipelineParallel(G, Analysis, Pp)) {
        if (T.Tp == 1)
          Plan.Skipped.push_back(llvm::toString(std::move(E)));
        else
          llvm::consumeError(std::move(E));
        break;
      }
      auto Pipe = pipelineStages(C, Pp, T.Tp);
      if (!Pipe) {
        llvm::consumeError(Pipe.takeError());
        break;
      }
      Add(T.Tp > 1 ? ServingSplit::Tensor : ServingSplit::Whole, T.Tp,
          T.Group ? &*T.Group : nullptr, &*Pipe);
      if (Plan.Candidates.back().Fits && !R.EveryPipelineDegree)
        break;
    }
  }

  return Plan;
}

llvm::Error perfc::chooseServingLayout(ServingPlan &Plan) {
  const auto Fail = [](std::string Message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Message);
  };
  Plan.Chosen = llvm::None;
  // Strictly better wins: on a tie the earlier, with fewer devices.
  const auto Better = [&](const ServingCandidate &A,
                          const ServingCandidate &B) {
    if (Plan.Objective == ServingObjective::Throughput) {
      // Device-seconds a sample.
      const double CostA = A.IntervalSeconds * A.Devices / A.Samples,
                   CostB = B.IntervalSeconds * B.Devices / B.Samples;
      if (CostA != CostB)
        return CostA < CostB;
    }
    return A.LatencySeconds < B.LatencySeconds;
  };
  const ServingCandidate *Fastest = nullptr;
  for (size_t I = 0; I < Plan.Candidates.size(); ++I) {
    const ServingCandidate &Cand = Plan.Candidates[I];
    if (!Cand.Fits || (Plan.AtMaxBatch && !Cand.AtMaxBatch))
      continue;
    if (!Fastest || Cand.LatencySeconds < Fastest->LatencySeconds)
      Fastest = &Cand;
    if (Plan.MaxLatencySeconds && Cand.LatencySeconds > *Plan.MaxLatencySeconds)
      continue;
    if (!Plan.Chosen || Better(Cand, Plan.Candidates[*Plan.Chosen]))
      Plan.Chosen = I;
  }
  if (!Fastest)
    return Fail(noLayoutFits(Plan));
  if (!Plan.Chosen)
    return Fail(llvm::formatv(
        "no layout that fits meets --max-latency {0}: the fastest, {1} on {2} "
        "device{3}, takes {4}; allow more devices (--devices, "
        "--allow-cross-node-tp), a smaller batch or faster devices, or a "
        "longer bound",
        hw::formatQuantity(*Plan.MaxLatencySeconds, hw::Quantity::Time),
        name(*Fastest), Fastest->Devices, Fastest->Devices == 1 ? "" : "s",
        hw::formatQuantity(Fastest->LatencySeconds, hw::Quantity::Time)));
  return llvm::Error::success();
}

llvm::Expected<ServingPlan> perfc::planServing(const ir::Graph &G,
                                               const ServingRequest &R) {
  auto Plan = serveLayouts(G, R);
  if (!Plan)
    return Plan.takeError();
  if (llvm::Error E = chooseServingLayout(*Plan))
    return std::move(E);
  return Plan;
}
