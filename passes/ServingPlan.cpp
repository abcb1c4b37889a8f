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
  return C.Split == ServingSplit::Whole
             ? std::string(name(C.Split))
             : (llvm::Twine(name(C.Split)) + " " + llvm::Twine(C.Devices))
                   .str();
}

namespace {

/// The batch one step serves: the first input's leading dimension.
double samplesOf(const ir::Graph &G) {
  if (G.inputs().empty() || !G.inputs().front())
    return 1;
  const ir::Shape &S = G.inputs().front()->shape();
  if (!S.isRanked() || S.rank() == 0 || S.size(0) <= 0)
    return 1;
  return double(S.size(0));
}

/// A serving plan none of whose layouts fits: the one that came closest.
std::string noLayoutFits(const ServingPlan &P) {
  const ServingCandidate *Least = nullptr;
  for (const ServingCandidate &C : P.Candidates)
    if (!Least || C.PeakBytes < Least->PeakBytes)
      Least = &C;
  return llvm::formatv(
             "no layout of up to {0} device{1} fits in memory: the least per "
             "device is {2} ({3} on {4}), over the {5} a device has; use "
             "devices with more memory, a smaller batch or cache, "
             "--storage-type fp8 or int8, or more devices (--devices, "
             "--allow-cross-node-tp)",
             P.MaxDevices, P.MaxDevices == 1 ? "" : "s",
             hw::formatDataBytes(Least->PeakBytes), name(*Least),
             Least->Devices == 1
                 ? "one device"
                 : (llvm::Twine(Least->Devices) + " devices").str(),
             hw::formatDataBytes(Least->CapacityBytes))
      .str();
}

} // namespace

llvm::Expected<ServingPlan> perfc::planServing(const ir::Graph &G,
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
  Plan.Samples = samplesOf(G);
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
                       const cost::CommGroup *Group) {
    PredictOptions O = R.Base;
    O.Explain = false;
    O.NodeNames = false;
    O.Memory = true;
    O.Split = &Analysis;
    if (Split == ServingSplit::Tensor)
      O.TensorParallel = *Group;
    if (Split == ServingSplit::Expert)
      O.ExpertParallel = *Group;
    const Report P = predict(G, O);
    ServingCandidate Cand;
    Cand.Split = Split;
    Cand.Devices = N;
    Cand.LatencySeconds = P.LatencySeconds.getValueOr(0);
    if (P.Memory) {
      Cand.PeakBytes = P.Memory->Usage.PeakBytes;
      Cand.CapacityBytes = P.Memory->CapacityBytes;
      Cand.Fits = P.Memory->Fits;
    }
    Plan.Candidates.push_back(Cand);
  };
  // A split the model or the cluster refuses is listed with the reason,
  // once: what refuses a power of two (a size it does not divide, a
  // pattern the model lacks, devices the cluster lacks) refuses its
  // multiples too.
  bool TensorRefused = false, ExpertRefused = false;
  const auto TrySplit = [&](ServingSplit Split, unsigned N) {
    bool &Refused =
        Split == ServingSplit::Tensor ? TensorRefused : ExpertRefused;
    if (Refused)
      return;
    const char *Flag = Split == ServingSplit::Tensor ? "--tp" : "--ep";
    auto Group = tensorParallelGroup(C, N, Flag);
    if (!Group) {
      Plan.Skipped.push_back(llvm::toString(Group.takeError()));
      Refused = true;
      return;
    }
    Group->Protocol = R.Protocol;
    if (llvm::Error E = Split == ServingSplit::Tensor
                            ? checkTensorParallel(G, Analysis, N)
                            : checkExpertParallel(G, Analysis, N)) {
      Plan.Skipped.push_back(llvm::toString(std::move(E)));
      Refused = true;
      return;
    }
    Add(Split, N, &*Group);
  };
  Add(ServingSplit::Whole, 1, nullptr);
  for (unsigned N = 2; N <= Plan.MaxDevices; N *= 2) {
    if (N <= MaxTp)
      TrySplit(ServingSplit::Tensor, N);
    if (HasExperts)
      TrySplit(ServingSplit::Expert, N);
  }

  // Strictly better wins: on a tie the earlier, with fewer devices.
  const auto Better = [&](const ServingCandidate &A,
                          const ServingCandidate &B) {
    if (R.Objective == ServingObjective::Throughput) {
      const double CostA = A.LatencySeconds * A.Devices,
                   CostB = B.LatencySeconds * B.Devices;
      if (CostA != CostB)
        return CostA < CostB;
    }
    return A.LatencySeconds < B.LatencySeconds;
  };
  const ServingCandidate *Fastest = nullptr;
  for (size_t I = 0; I < Plan.Candidates.size(); ++I) {
    const ServingCandidate &Cand = Plan.Candidates[I];
    if (!Cand.Fits)
      continue;
    if (!Fastest || Cand.LatencySeconds < Fastest->LatencySeconds)
      Fastest = &Cand;
    if (R.MaxLatencySeconds && Cand.LatencySeconds > *R.MaxLatencySeconds)
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
        hw::formatQuantity(*R.MaxLatencySeconds, hw::Quantity::Time),
        name(*Fastest), Fastest->Devices, Fastest->Devices == 1 ? "" : "s",
        hw::formatQuantity(Fastest->LatencySeconds, hw::Quantity::Time)));
  return Plan;
}
