//===- ReportTable.cpp - Report as a table for people ---------------------===//
#include "tools/ReportWriters.h"

#include "hwdb/Units.h"
#include "passes/MaxBatch.h"
#include "passes/TrainExplain.h"
#include "passes/TrainOptionNames.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <cmath>
#include <numeric>

namespace perfc {
namespace {

std::string withPrefix(double V, const char *Unit) {
  static const char *const Prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  unsigned I = 0;
  double A = std::fabs(V);
  while (A >= 1000 && I + 1 < std::size(Prefixes)) {
    A /= 1000;
    V /= 1000;
    ++I;
  }
  if (I == 0 && std::floor(V) == V)
    return fmt::format("{:.0f}{}{}", V, *Unit ? " " : "", Unit);
  int Digits = A >= 100 ? 1 : A >= 10 ? 2 : 3;
  if (I == 0)
    Digits = 2;
  return fmt::format("{:.{}f} {}{}", V, Digits, Prefixes[I], Unit);
}

/// "          --max-batch: predicted at batch 67, the largest that fits
/// (...)".
std::string batchSearchLine(const BatchSearchReport &S) {
  std::string Tried;
  for (const BatchProbe &P : S.Tried)
    Tried += (Tried.empty() ? "" : ", ") + describeProbe(P);
  return fmt::format("          --max-batch: predicted at batch {}, the "
                     "largest that fits{}{} (estimate {} from batch {}; tried "
                     "{})",
                     S.Batch,
                     S.MaxLatencySeconds
                         ? " and takes at most " +
                               formatSeconds(*S.MaxLatencySeconds)
                         : std::string(),
                     S.Batch >= S.Limit ? fmt::format(" up to the search's "
                                                      "limit {}: more may fit",
                                                      S.Limit)
                                        : std::string(),
                     S.Estimate, S.FromBatch, Tried);
}

/// --plan without --train: every layout tried, the chosen one marked.
void writeServingPlan(llvm::raw_ostream &OS, const ServingPlan &P,
                      const std::string &Device) {
  const ServingCandidate *Chosen = P.chosen();
  size_t Fitting = 0;
  for (const ServingCandidate &C : P.Candidates)
    Fitting += P.AtMaxBatch ? C.AtMaxBatch : C.Fits;
  OS << fmt::format(
      "serving   plan: {} on {} x {}, {} that fits{} ({} of {} {}, up to {} "
      "device{}{})\n",
      name(*Chosen), Chosen->Devices, Device,
      P.AtMaxBatch ? "the layout with the most samples/s per device, each "
                     "at its largest batch"
      : P.Objective == ServingObjective::Throughput
          ? "the layout with the most samples/s per device"
          : "the fastest layout",
      P.MaxLatencySeconds
          ? " and takes at most " + formatSeconds(*P.MaxLatencySeconds)
          : std::string(),
      Fitting, P.Candidates.size(), P.AtMaxBatch ? "serve a batch" : "fit",
      P.MaxDevices, P.MaxDevices == 1 ? "" : "s",
      P.MaxPipelineDevices > P.MaxDevices
          ? fmt::format(", {} with pipeline stages", P.MaxPipelineDevices)
          : std::string());
  // A layout with stages serves as many batches at once as it has stages:
  // its samples/s is a batch per slowest stage. With --max-batch each
  // layout's figures are at its own batch (column "batch").
  // One row's cells after the marker: layout, devices, (batch,) latency,
  // samples/s, per device, memory/device, max batch, fits.
  const auto Row = [&](llvm::StringRef Marker,
                       llvm::ArrayRef<std::string> Cells) {
    OS << fmt::format("        {} {:<10} {:>7}", Marker, Cells[0], Cells[1]);
    size_t I = 2;
    if (P.AtMaxBatch)
      OS << fmt::format(" {:>7}", Cells[I++]);
    OS << fmt::format(" {:>12} {:>12} {:>12} {:>13} {:>9}  {}\n", Cells[I],
                      Cells[I + 1], Cells[I + 2], Cells[I + 3], Cells[I + 4],
                      Cells[I + 5]);
  };
  std::vector<std::string> Header = {"layout",    "devices",    "latency",
                                     "samples/s", "per device", "memory/device",
                                     "max batch", "fits"};
  if (P.AtMaxBatch)
    Header.insert(Header.begin() + 2, "batch");
  Row(" ", Header);
  for (const ServingCandidate &C : P.Candidates) {
    const double Rate = C.samplesPerSecond();
    // A layout serving no batch: its figures are another batch's (the
    // model's), so none are shown; why is listed below.
    const bool Shown = !P.AtMaxBatch || C.AtMaxBatch;
    const auto Cell = [&](std::string S) { return Shown ? S : "-"; };
    std::vector<std::string> Cells = {name(C),
                                      std::to_string(C.Devices),
                                      Cell(formatSeconds(C.LatencySeconds)),
                                      Cell(withPrefix(Rate, "")),
                                      Cell(withPrefix(Rate / C.Devices, "")),
                                      Cell(formatBytes(C.PeakBytes)),
                                      C.MaxBatch ? std::to_string(*C.MaxBatch)
                                                 : "-",
                                      Shown && C.Fits ? "yes" : "no"};
    if (P.AtMaxBatch)
      Cells.insert(Cells.begin() + 2, Cell(fmt::format("{:.0f}", C.Samples)));
    Row(&C == Chosen ? "*" : " ", Cells);
  }
  for (const std::string &Why : P.NotServed)
    OS << "          no batch: " << Why << "\n";
  for (const std::string &Why : P.Skipped)
    OS << "          not tried: " << Why << "\n";
}

} // namespace

std::string formatCount(double V) { return withPrefix(V, ""); }
std::string formatBytes(double B) { return withPrefix(B, "B"); }

std::string formatSeconds(double S) {
  if (S >= 1)
    return fmt::format("{:.3f} s", S);
  if (S >= 1e-3)
    return fmt::format("{:.3f} ms", S * 1e3);
  if (S >= 1e-6)
    return fmt::format("{:.2f} us", S * 1e6);
  return fmt::format("{:.1f} ns", S * 1e9);
}

std::string explainDataParallel(const TrainReport &T, const TrainOptions &O) {
  if (uint64_t(O.Dp) * O.Cp <= 1 || T.Stages.empty())
    return "";
  // The gradients are exchanged over the data-parallel ranks with their
  // context ranks.
  std::string Group = dataParallelGroupName(O);
  // Expert parallelism: the experts' share goes over the ranks holding the
  // same experts, on the same stream.
  if (O.Ep > 1)
    Group += fmt::format(" (the experts' share over {} / ep {} = {} rank{}, "
                         "{})",
                         Group, O.Ep, uint64_t(O.Dp) * O.Cp / O.Ep,
                         uint64_t(O.Dp) * O.Cp / O.Ep == 1 ? "" : "s",
                         formatSeconds(T.DpExpertCommSeconds));
  const StageReport *S = &T.Stages.front();
  for (const StageReport &X : T.Stages)
    if (X.microBatchSeconds() > S->microBatchSeconds())
      S = &X;
  const std::string F = formatSeconds(S->ForwardSeconds),
                    B = formatSeconds(S->BackwardSeconds),
                    Rs = formatSeconds(T.DpScatterSeconds),
                    RsOut = formatSeconds(T.DpScatterExposedSeconds),
                    Ag = formatSeconds(T.DpGatherSeconds),
                    AgOut = formatSeconds(T.DpGatherExposedSeconds),
                    Comm = formatSeconds(T.DpCommSeconds),
                    Exposed = formatSeconds(T.DpExposedSeconds),
                    Grads = formatBytes(T.DpWireBytes),
                    Params = formatBytes(T.DpParamBytes);
  const int64_t M = T.MicroBatches;
  // Where the parameters' all-gather runs: after the optimizer, or in
  // buckets during the next step's first forward.
  const std::string Gather =
      O.OverlapParamGather
          ? fmt::format("all-gather of {} of parameters in {} bucket{} during "
                        "the next step's first forward {} ({} waited for)",
                        Params, T.DpGatherBuckets,
                        T.DpGatherBuckets == 1 ? "" : "s", Ag, AgOut)
          : fmt::format("all-gather of {} of parameters after the optimizer "
                        "{}",
                        Params, Ag);
  switch (O.Zero) {
  case 0:
    return fmt::format("{}: all-reduce of {} of gradients in buckets as "
                       "the last micro-batch's backward (stage {}: {}) makes "
                       "them = {}, {} after it",
                       Group, Grads, S->Stage, B, Comm, Exposed);
  case 1:
    return fmt::format("{}, ZeRO 1: reduce-scatter of {} of gradients in "
                       "buckets during the last backward {} ({} after it) + "
                       "{} = {}; exposed {} + {} = {}",
                       Group, Grads, Rs, RsOut, Gather, Comm, RsOut, AgOut,
                       Exposed);
  case 2:
    return fmt::format("{}, ZeRO 2: {} x reduce-scatter of {} of gradients "
                       "in buckets, each during its micro-batch's backward {} "
                       "({} after it) + {} = {}; exposed {} x {} + {} = {}",
                       Group, M, Grads, Rs, RsOut, Gather, Comm, M, RsOut,
                       AgOut, Exposed);
  default:
    return fmt::format("{}, ZeRO 3: {} x (reduce-scatter of {} of "
                       "gradients {} + 2 x all-gather of {} of parameters {}) "
                       "= {}; exposed {} x (max(0, {} - forward {}) + max({}, "
                       "{} + {} - backward {})) = {}",
                       Group, M, Grads, Rs, Params, Ag, Comm, M, Ag, F, RsOut,
                       Ag, Rs, B, Exposed);
  }
}

void writeReportTable(const Report &R, const TableOptions &Options,
                      llvm::raw_ostream &OS) {
  const ModelInfo &M = R.Model;
  OS << fmt::format("model     {}  ({} nodes, opset {}, {})\n", M.Name,
                    R.Nodes.size(), M.Opset,
                    M.Producer.empty() ? "unknown producer" : M.Producer);
  // A decoder step's key/value caches are dozens of inputs: the first few
  // and a count (the JSON lists them all).
  constexpr size_t ShownInputs = 4;
  const size_t InputsShown =
      M.Inputs.size() > 2 * ShownInputs ? ShownInputs : M.Inputs.size();
  for (size_t I = 0; I < InputsShown; ++I)
    OS << fmt::format("input     {} {} {}\n", M.Inputs[I].Name,
                      M.Inputs[I].DType, M.Inputs[I].Shape);
  if (InputsShown < M.Inputs.size())
    OS << fmt::format("input     ... {} more, to {} (all in --format json)\n",
                      M.Inputs.size() - InputsShown, M.Inputs.back().Name);
  if (R.Hardware) {
    // What the run was told besides the device: each changes the numbers.
    std::string Given;
    if (!R.Hardware->ComputeType.empty())
      Given += ", compute " + R.Hardware->ComputeType;
    if (!R.Hardware->StorageType.empty())
      Given += ", storage " + R.Hardware->StorageType;
    if (!R.Hardware->ConvLayout.empty())
      Given += ", conv layout " + R.Hardware->ConvLayout;
    if (R.Hardware->FlashAttention)
      Given += ", FlashAttention (causal blocks skipped)";
    if (R.Hardware->LaunchOverheadSeconds)
      Given += ", launch overhead " +
               hw::formatQuantity(*R.Hardware->LaunchOverheadSeconds,
                                  hw::Quantity::Time) +
               " per kernel (--launch-overhead)";
    OS << fmt::format("hardware  {} ({}){}\n", R.Hardware->Name,
                      R.Hardware->Device, Given);
  }
  OS << fmt::format("params    {}\n", formatCount(double(R.Total.Params)));
  OS << fmt::format("MACs      {}\n", formatCount(R.Total.Macs));
  OS << fmt::format("FLOPs     {}\n", formatCount(R.Total.Flops));
  OS << fmt::format(
      "bytes     {} (read {}, written {})\n", formatBytes(R.Total.bytes()),
      formatBytes(R.Total.BytesRead), formatBytes(R.Total.BytesWritten));
  if (R.LatencySeconds)
    OS << fmt::format("latency   {}{}\n", formatSeconds(*R.LatencySeconds),
                      R.Train ? " (one micro-batch's forward on one device, "
                                "as the step prices it)"
                              : "");
  if (R.Kernels) {
    const KernelSummary &K = *R.Kernels;
    OS << fmt::format("kernels   {} ({} nodes fused, {} views, {} folded at "
                      "load), moving {}\n",
                      K.Kernels, K.Fused, K.Views, K.Folded,
                      formatBytes(K.KernelBytes));
    const double T =
        K.ComputeBoundSeconds + K.MemoryBoundSeconds + K.OverheadBoundSeconds;
    if (T > 0)
      OS << fmt::format("bound     compute {:.0f}%, memory {:.0f}%, "
                        "overhead {:.0f}% of the time\n",
                        100 * K.ComputeBoundSeconds / T,
                        100 * K.MemoryBoundSeconds / T,
                        100 * K.OverheadBoundSeconds / T);
  }
  if (R.TensorParallel) {
    const TensorParallelReport &TP = *R.TensorParallel;
    OS << fmt::format("tp        {} ranks over {}: kernels {} + {} "
                      "all-reduce{} and {} all-gather{} {} (per rank; "
                      "latency includes them)\n",
                      TP.Degree, TP.Link.empty() ? "their link" : TP.Link,
                      formatSeconds(TP.KernelSeconds), TP.AllReduces,
                      TP.AllReduces == 1 ? "" : "s", TP.AllGathers,
                      TP.AllGathers == 1 ? "" : "s",
                      formatSeconds(TP.CommSeconds));
    if (Options.Explain && !TP.Explain.empty())
      OS << "          " << TP.Explain << "\n";
  }
  if (R.ExpertParallel) {
    const ExpertParallelReport &EP = *R.ExpertParallel;
    OS << fmt::format("ep        {} ranks over {}: kernels {} + {} "
                      "all-to-all{} {} (per rank: 1/{} of the batch and of "
                      "the experts; latency includes them)\n",
                      EP.Degree, EP.Link.empty() ? "their link" : EP.Link,
                      formatSeconds(EP.KernelSeconds), EP.AllToAlls,
                      EP.AllToAlls == 1 ? "" : "s",
                      formatSeconds(EP.CommSeconds), EP.Degree);
    if (Options.Explain && !EP.Explain.empty())
      OS << "          " << EP.Explain << "\n";
  }
  if (R.PipelineParallel) {
    const PipelineParallelReport &PP = *R.PipelineParallel;
    const unsigned Ranks = R.TensorParallel ? R.TensorParallel->Degree : 1;
    OS << fmt::format("pp        {} stages of {} device{}, {} batches in "
                      "flight: a step every {} (the slowest stage), {:.4g} "
                      "samples/s; latency is one batch's pass\n",
                      PP.Degree, Ranks, Ranks == 1 ? "" : "s", PP.inFlight(),
                      formatSeconds(PP.IntervalSeconds), PP.samplesPerSecond());
    for (size_t S = 0; S < PP.Stages.size(); ++S) {
      const PipelineStageReport &St = PP.Stages[S];
      std::string Line = fmt::format(
          "  stage {:<3} blocks {}-{} ({} to {}): {} kernels {}", S + 1,
          St.FirstBlock, St.LastBlock, St.FirstBlockName, St.LastBlockName,
          St.Kernels, formatSeconds(St.KernelSeconds));
      if (!St.SendLink.empty())
        Line += fmt::format(" + send {} over {} {}", formatBytes(St.SendBytes),
                            St.SendLink, formatSeconds(St.SendSeconds));
      if (R.Memory)
        Line += fmt::format(", {} {}", formatBytes(St.Memory.Usage.PeakBytes),
                            St.Memory.Fits ? "fits" : "DOES NOT FIT");
      OS << Line << "\n";
    }
    if (Options.Explain && !PP.Explain.empty())
      OS << "          " << PP.Explain << "\n";
  }
  if (R.Memory) {
    const InferenceMemoryReport &Mem = *R.Memory;
    OS << fmt::format("memory    {} at peak{} (weights {}, activations {} at "
                      "'{}'){} {} {}\n",
                      formatBytes(Mem.Usage.PeakBytes),
                      R.PipelineParallel ? " per rank of the fullest stage"
                      : R.TensorParallel || R.ExpertParallel ? " per rank"
                                                             : "",
                      formatBytes(Mem.Usage.WeightsBytes),
                      formatBytes(Mem.Usage.ActivationsBytes), Mem.PeakAt,
                      Mem.Usage.Complete ? "," : " (at least),",
                      Mem.Fits ? "fits in" : "DOES NOT FIT in",
                      formatBytes(Mem.CapacityBytes));
    if (Mem.MaxBatch)
      OS << fmt::format(
          "max batch {}{}: {} a sample past the weights (the first input's "
          "leading dimension; all but the weights taken to grow with it){}\n",
          *Mem.MaxBatch,
          *Mem.MaxBatch == 0   ? ", not one sample fits"
          : *Mem.MaxBatch == 1 ? " fits"
                               : " fit",
          formatBytes(Mem.BytesPerSample),
          R.PipelineParallel ? "; the least any stage fits" : "");
    if (R.BatchSearch)
      OS << batchSearchLine(*R.BatchSearch) << "\n";
    if (Options.Explain && !Mem.Explain.empty())
      OS << "          " << Mem.Explain << "\n";
  }
  if (R.Serving)
    writeServingPlan(OS, *R.Serving, R.Hardware ? R.Hardware->Device : "");

  if (R.Train && R.Strategy) {
    const TrainOptions &O = *R.Strategy;
    const TrainReport &T = *R.Train;
    OS << fmt::format(
        "\ntraining  dp {} x tp {}{} x pp {}{}{}{} on {} x {}, "
        "global batch {} = {} micro-batch{} of {}\n",
        O.Dp, O.Tp,
        O.Cp > 1 ? fmt::format(" x cp {}{}", O.Cp, cpCommSuffix(O)) : "", O.Pp,
        O.Ep > 1 || O.ExpertCapacity != 1
            ? fmt::format(
                  ", ep {}{}{}", O.Ep,
                  O.ExpertCapacity != 1
                      ? fmt::format(" (capacity {:g})", O.ExpertCapacity)
                      : std::string(),
                  O.OverlapMoeExpertParallelComm ? " (all-to-alls overlapped)"
                                                 : "")
            : std::string(),
        O.Vp > 1 ? fmt::format(" (vp {})", O.Vp) : "",
        O.SequenceParallel
            ? (O.TpCommOverlap ? ", sp, tp-comm-overlap" : ", sp")
            : "",
        T.Devices, T.Device, T.GlobalBatch, T.MicroBatches,
        T.MicroBatches == 1 ? "" : "es", O.MicroBatch);
    OS << fmt::format("          {} precision, {} optimizer, ZeRO {}, "
                      "recompute {}; {} block{}{}\n",
                      ir::name(O.DType).str(), name(O.Optimizer), O.Zero,
                      recomputeLabel(O), T.ModelBlocks,
                      T.ModelBlocks == 1 ? "" : "s",
                      T.BlocksFromStructure
                          ? " (cut by structure: no node name numbers a layer)"
                          : "");
    OS << fmt::format("step      {}  ({:.1f} samples/s, {:.1f} TFLOPS per "
                      "device)\n",
                      formatSeconds(T.StepSeconds), T.SamplesPerSecond,
                      T.TflopsPerDevice);
    OS << fmt::format(
        "          compute {}, exposed comm {} (tp {}{}{}{}, p2p {}, "
        "dp {} of {}), bubble {}, optimizer {}\n",
        formatSeconds(T.ComputeSeconds), formatSeconds(T.ExposedCommSeconds),
        formatSeconds(T.TpCommSeconds),
        T.TpOverlappedSeconds > 0
            ? " of " + formatSeconds(T.TpCommSeconds + T.TpOverlappedSeconds)
            : std::string(),
        O.Cp > 1 ? fmt::format(
                       ", cp {} of {}", formatSeconds(T.CpCommSeconds),
                       formatSeconds(T.CpCommSeconds + T.CpOverlappedSeconds))
                 : std::string(),
        O.Ep > 1 ? ", ep " + formatSeconds(T.EpCommSeconds) +
                       (O.OverlapMoeExpertParallelComm
                            ? " of " + formatSeconds(T.EpCommSeconds +
                                                     T.EpOverlappedSeconds)
                            : std::string())
                 : std::string(),
        formatSeconds(T.P2pSeconds), formatSeconds(T.DpExposedSeconds),
        formatSeconds(T.DpCommSeconds), formatSeconds(T.BubbleSeconds),
        formatSeconds(T.OptimizerSeconds));
    if (T.GradAccumSeconds > 0)
      OS << fmt::format("          gradient accumulation {} ({} passes, one "
                        "per micro-batch after the first; in compute)\n",
                        formatSeconds(T.GradAccumSeconds), T.MicroBatches - 1);
    // --explain: how the step's parts add up (homogeneous pipelines; a
    // mixed-type pipeline's schedule is simulated, a data split's step is
    // its slowest type's, listed below).
    const StageReport *Slowest = nullptr;
    for (const StageReport &S : T.Stages)
      if (!Slowest || S.microBatchSeconds() > Slowest->microBatchSeconds())
        Slowest = &S;
    if (Options.Explain && Slowest && T.DataSplit.empty() &&
        T.Device.find('+') == std::string::npos) {
      const double Sum = T.MicroBatches * Slowest->microBatchSeconds() +
                         Slowest->EpOverlappedSeconds + T.BubbleSeconds +
                         T.P2pSeconds + T.GradAccumSeconds +
                         T.DpExposedSeconds + T.OptimizerSeconds;
      OS << fmt::format(
          "          time = {} micro-batches x {} (stage {}: forward {} + "
          "backward {} + recompute {} + tp comm {}{}{}){} + bubble {} + p2p "
          "{} + gradient accumulation {} + exposed dp {} + optimizer {} = "
          "{}{}\n",
          T.MicroBatches, formatSeconds(Slowest->microBatchSeconds()),
          Slowest->Stage, formatSeconds(Slowest->ForwardSeconds),
          formatSeconds(Slowest->BackwardSeconds),
          formatSeconds(Slowest->RecomputeSeconds),
          formatSeconds(Slowest->TpCommSeconds),
          O.Cp > 1 ? " + cp comm " + formatSeconds(Slowest->CpCommSeconds)
                   : std::string(),
          O.Ep > 1 ? " + ep comm " + formatSeconds(Slowest->EpCommSeconds)
                   : std::string(),
          O.OverlapMoeExpertParallelComm
              ? " + unpaired all-to-alls " +
                    formatSeconds(Slowest->EpOverlappedSeconds)
              : std::string(),
          formatSeconds(T.BubbleSeconds), formatSeconds(T.P2pSeconds),
          formatSeconds(T.GradAccumSeconds), formatSeconds(T.DpExposedSeconds),
          formatSeconds(T.OptimizerSeconds), formatSeconds(Sum),
          T.InputBound ? fmt::format("; the input pipeline's {} is longer",
                                     formatSeconds(T.InputSeconds))
                       : std::string());
      if (std::string Dp = explainDataParallel(T, O); !Dp.empty())
        OS << "          " << Dp << "\n";
      for (const std::string &Line : T.CommExplain)
        OS << "          " << Line << "\n";
    }
    if (O.InputSamplesPerSecond > 0)
      OS << fmt::format("          input pipeline {} per step at {:.6g} "
                        "samples/s per node{}\n",
                        formatSeconds(T.InputSeconds), O.InputSamplesPerSecond,
                        T.InputBound ? ": the step waits for it" : "");
    const StageReport &P = T.peak();
    OS << fmt::format(
        "memory    {} of {} per device{} (stage {}): weights "
        "{}, gradients {}, optimizer {}, activations {}, "
        "workspace {}\n",
        formatBytes(P.peakBytes()), formatBytes(T.CapacityBytes),
        T.Fits ? "" : " -- DOES NOT FIT", P.Stage, formatBytes(P.WeightsBytes),
        formatBytes(P.GradientsBytes), formatBytes(P.OptimizerBytes),
        formatBytes(P.ActivationsBytes), formatBytes(P.WorkspaceBytes));
    if (Options.Explain && !T.MemoryExplain.empty())
      OS << "          " << T.MemoryExplain << "\n";
    // An uneven data split across GPU types: each type's share and step.
    for (size_t I = 0; I < T.DataSplit.size(); ++I) {
      const DataShareReport &P = T.DataSplit[I];
      OS << fmt::format("{:<10}{} x {} replicas, {} micro-batches each ({} "
                        "samples): step {}, {} of {}\n",
                        I == 0 ? "data" : "", P.Share.Device, P.Share.Replicas,
                        P.Share.MicroBatches,
                        int64_t(P.Share.Replicas) * P.Share.MicroBatches *
                            O.MicroBatch,
                        formatSeconds(P.StepSeconds), formatBytes(P.PeakBytes),
                        formatBytes(P.CapacityBytes));
    }
    // A planner's own split (for memory, or over mixed GPU types): which
    // blocks each stage holds, on what, in how much memory.
    if (!O.ChunkBlocks.empty() && O.Vp == 1) {
      unsigned First = 0; // layers numbered from 0, as plan.stages has them
      for (const StageReport &S : T.Stages) {
        OS << fmt::format("{:<10}{}: layers {}-{} on {}, {}, {} per "
                          "micro-batch\n",
                          S.Stage == 0 ? "stages" : "", S.Stage, First,
                          First + S.Blocks - 1, S.Device,
                          formatBytes(S.peakBytes()),
                          formatSeconds(S.microBatchSeconds()));
        First += S.Blocks;
      }
    }
  }
  if (R.Plan) {
    const PlanResult &Res = R.Plan->Result;
    OS << fmt::format("plan      {} by {}{}: {} candidates ({} fit) evaluated"
                      "{}\n",
                      Res.Optimal ? "proven optimal" : "best found, NOT proven",
                      name(Res.Planner),
                      Res.TargetFramework == Framework::Any
                          ? std::string()
                          : fmt::format(" for {}", name(Res.TargetFramework)),
                      Res.Candidates, Res.Feasible,
                      R.Timings
                          ? fmt::format(" in {}, solved in {}",
                                        formatSeconds(Res.EvaluateSeconds),
                                        formatSeconds(Res.SolveSeconds))
                          : std::string());
    auto Row = [&](const PlanCandidate &C) {
      const TrainOptions &O = C.Options;
      // Mixed GPU types: each stage's device and layer count.
      std::string Stages;
      for (size_t I = 0; I < C.StageDevices.size(); ++I)
        Stages +=
            fmt::format("{}{} {}", I ? ", " : " stages ", C.StageDevices[I],
                        I < O.ChunkBlocks.size() ? O.ChunkBlocks[I] : 0u);
      for (size_t I = 0; I < O.DataSplit.size(); ++I)
        Stages += fmt::format("{}{} x{} ({} mb each)", I ? ", " : " data ",
                              O.DataSplit[I].Device, O.DataSplit[I].Replicas,
                              O.DataSplit[I].MicroBatches);
      return fmt::format(
          "dp {} tp {}{}{} pp {} vp {} mb {}{} recompute {} zero "
          "{}{}: {}, {}",
          O.Dp, O.Tp,
          O.Cp > 1 ? fmt::format(" cp {}{}", O.Cp, cpCommSuffix(O)) : "",
          O.Ep > 1 ? fmt::format(" ep {}", O.Ep) : "", O.Pp, O.Vp, O.MicroBatch,
          O.SequenceParallel ? (O.TpCommOverlap ? " sp+overlap" : " sp") : "",
          recomputeLabel(O), O.Zero, Stages, formatSeconds(C.StepSeconds),
          formatBytes(C.PeakBytes));
    };
    if (Res.Top.size() > 1) {
      OS << "top plans\n";
      for (size_t I = 0; I < Res.Top.size(); ++I)
        OS << fmt::format("  {:>3}. {}\n", I + 1, Row(Res.Top[I]));
    }
    if (!Res.Pareto.empty()) {
      OS << "pareto front (time / memory)\n";
      for (const PlanCandidate &C : Res.Pareto)
        OS << "       " << Row(C) << "\n";
    }
  }
  if (R.Placement) {
    const PlacementReport &P = *R.Placement;
    OS << fmt::format(
        "placement {} = kernels {} + {} transfers ({}) {}; "
        "{} by {}{}\n",
        formatSeconds(P.LatencySeconds),
        formatSeconds(P.LatencySeconds - P.TransferSeconds), P.Transfers,
        formatBytes(P.TransferBytes), formatSeconds(P.TransferSeconds),
        P.Optimal ? "proven optimal" : "best found, NOT proven", P.Method,
        R.Timings ? " in " + formatSeconds(P.SolveSeconds) : std::string());
    size_t Best = 0;
    for (size_t I = 0; I < P.Devices.size(); ++I) {
      if (P.SingleDeviceSeconds[I] < P.SingleDeviceSeconds[Best])
        Best = I;
      OS << fmt::format("  {:<36} {:>4} kernels {:>11}   alone {}\n",
                        P.Devices[I], P.KernelsPerDevice[I],
                        formatSeconds(P.SecondsPerDevice[I]),
                        std::isfinite(P.SingleDeviceSeconds[I])
                            ? formatSeconds(P.SingleDeviceSeconds[I])
                            : std::string("unsupported ops"));
    }
    if (std::isfinite(P.SingleDeviceSeconds[Best]))
      OS << fmt::format("  best single processor: {} {} ({:.2f}x the "
                        "placement)\n",
                        P.Devices[Best],
                        formatSeconds(P.SingleDeviceSeconds[Best]),
                        P.SingleDeviceSeconds[Best] / P.LatencySeconds);
    else
      OS << "  no single processor runs every op\n";
  }
  // A training step's backward per kernel, where the step gives one: its
  // own column, and the rows weigh forward plus backward.
  const bool Backward = R.nodeBackward(0) != nullptr;
  // Heaviest ops first: by time when there is a device, else by FLOPs then
  // bytes. Ties keep graph order, so the table is deterministic.
  std::vector<size_t> Order(R.Nodes.size());
  std::iota(Order.begin(), Order.end(), 0);
  auto Weight = [&R, Backward](size_t I) {
    const NodeReport &N = R.Nodes[I];
    if (!N.Time)
      return N.Work.Flops + 1e-9 * N.Work.bytes();
    return N.Time->Seconds + (Backward ? R.nodeBackward(I)->Seconds : 0.0);
  };
  std::stable_sort(Order.begin(), Order.end(),
                   [&](size_t A, size_t B) { return Weight(A) > Weight(B); });
  size_t Shown = Options.MaxOps == 0
                     ? Order.size()
                     : std::min<size_t>(Options.MaxOps, Order.size());
  if (Shown == 0)
    return;
  if (Shown == Order.size())
    OS << fmt::format("\nall {} ops, heaviest first:\n", Shown);
  else
    OS << fmt::format("\n{} heaviest ops of {}:\n", Shown, R.Nodes.size());
  bool Timed = R.LatencySeconds.hasValue();
  double TotalSeconds = Timed ? *R.LatencySeconds : 0;
  if (Backward)
    for (const TrainReport::NodeBackward &B : R.Train->NodeBackwards)
      TotalSeconds += B.Seconds;
  std::string Header = fmt::format("  {:<32} {:<20} {:>10} {:>10} {:>10}",
                                   "node", "op", "MACs", "FLOPs", "bytes");
  if (Timed && Backward)
    Header += fmt::format(" {:>11} {:>11} {:>6} {:<8}", "forward", "backward",
                          "share", "bound");
  else if (Timed)
    Header += fmt::format(" {:>11} {:>6} {:<8}", "latency", "share", "bound");
  OS << Header << "\n";
  for (size_t K = 0; K < Shown; ++K) {
    const NodeReport &N = R.Nodes[Order[K]];
    std::string Name = N.Name.size() > 32 ? N.Name.substr(0, 31) + "~" : N.Name;
    std::string Op = N.Op.size() > 20 ? N.Op.substr(0, 19) + "~" : N.Op;
    std::string Row =
        fmt::format("  {:<32} {:<20} {:>10} {:>10} {:>10}", Name, Op,
                    formatCount(N.Work.Macs), formatCount(N.Work.Flops),
                    formatBytes(N.Work.bytes()));
    if (Timed && N.Time && N.Time->Exec == "fused") {
      Row += fmt::format(" {:>11}{} {:>6} in {}", "-",
                         Backward ? fmt::format(" {:>11}", "-") : "", "",
                         N.Time->FusedInto);
    } else if (Timed && N.Time) {
      const double Bwd = Backward ? R.nodeBackward(Order[K])->Seconds : 0;
      const double Share =
          TotalSeconds > 0 ? 100 * (N.Time->Seconds + Bwd) / TotalSeconds : 0;
      Row += fmt::format(
          " {:>11}{} {:>5.1f}% {:<8}", formatSeconds(N.Time->Seconds),
          Backward ? fmt::format(" {:>11}", formatSeconds(Bwd)) : "", Share,
          N.Time->Bound);
    }
    OS << Row << "\n";
    if (Options.Explain) {
      if (!N.Work.Formula.empty())
        OS << "      work: " << N.Work.Formula << "\n";
      if (N.Time && !N.Time->Explain.empty())
        OS << "      time: " << N.Time->Explain << "\n";
      if (Backward && !R.nodeBackward(Order[K])->Explain.empty())
        OS << "      backward: " << R.nodeBackward(Order[K])->Explain << "\n";
      if (Backward && R.nodeBackward(Order[K])->RecomputeSeconds > 0)
        OS << "      recompute: "
           << formatSeconds(R.nodeBackward(Order[K])->RecomputeSeconds) << ", "
           << R.nodeBackward(Order[K])->RecomputeExplain << "\n";
    }
  }
}

} // namespace perfc
