//===- Plan.cpp - perfc/perfc.h: the training planner ---------------------===//
//
// plan() assembles the report `perfc MODEL --train --plan --format json`
// prints (tools/PredictCommand.cpp): the inference prediction, the
// planner's result (passes/Planner.h) and the training step of the chosen
// strategy, and toJson() writes it with the CLI's writer.
//
//===----------------------------------------------------------------------===//
#include "api/ApiImpl.h"

#include "frontend/OnnxImport.h"
#include "passes/Planner.h"
#include "passes/TrainOptionNames.h"
#include "passes/TrainStep.h"
#include "tools/ReportAssembly.h"
#include "tools/ReportWriters.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>

namespace perfc::api {
namespace {

/// The graph and training analysis of a model at one micro-batch size.
struct AtMicroBatch {
  std::unique_ptr<frontend::ImportedModel> Imported; ///< Null: the model's.
  std::unique_ptr<TrainingAnalysis> Analysis;
};

} // namespace

Plan plan(const Model &M, const Hardware &Hw, const PlanOptions &Options) {
  const Model::Impl &MI = M.impl();
  // The runtime's reserve: the plan's own copy of the devices (the handle
  // stays immutable and shared).
  llvm::Optional<hw::Cluster> Reserved;
  if (Options.memoryReserveBytes) {
    Reserved = Hw.impl().Cluster;
    if (llvm::Error E =
            hw::reserveMemory(*Reserved, *Options.memoryReserveBytes,
                              "memoryReserveBytes (memory_reserve_bytes)"))
      throwError(std::move(E));
  }
  const hw::Cluster &Cluster = Reserved ? *Reserved : Hw.impl().Cluster;
  const std::string &Where = MI.Info.Path.empty() ? MI.Info.Name : MI.Info.Path;
  if (Options.globalBatch <= 0)
    throwError("plan needs globalBatch (samples per step)");
  const llvm::Optional<perfc::Framework> Framework =
      frameworkNamed(Options.framework);
  if (!Framework)
    throwError(llvm::toString(
        unknownName("framework", Options.framework, FrameworkChoices)));
  if (Options.planner != "z3" && Options.planner != "exhaustive")
    throwError("unknown planner '" + Options.planner +
               "': use z3 or exhaustive");
  if (!(Options.timeLimitSeconds >= 0) ||
      !std::isfinite(Options.timeLimitSeconds))
    throwError("the time limit must be a number of seconds, 0 or more (0: "
               "none)");
  const bool Built = !MI.SourceBytes && MI.SourcePath.empty();
  if (Built && Options.microBatch && *Options.microBatch != MI.Batch)
    throwError(Where + ": a model made with ModelBuilder has one batch (" +
               std::to_string(MI.Batch) + "): build it at micro-batch " +
               std::to_string(*Options.microBatch) +
               ", or leave microBatch "
               "unset");

  // The inference part of the report, as `perfc MODEL --hw HW` prints it.
  PredictOptions PO;
  PO.computeType = Options.computeType;
  PO.fusion = Options.fusion;
  PO.timings = Options.timings;
  PO.memoryReserveBytes = Options.memoryReserveBytes;
  Report R = makePrediction(M, &Hw, PO, /*Explain=*/true, /*ForStep=*/true)->R;

  TrainOptions Base;
  Base.globalBatch = Options.globalBatch;
  Base.recompute = Options.recompute.value_or("none");
  if (Options.recompute == std::string("none") &&
      !Options.recomputeModules.empty())
    throwError("recompute modules are what selective recomputation "
               "recomputes: drop recompute none (the modules imply "
               "selective)");
  Base.recomputeModules = Options.recomputeModules;
  if ((Options.recompute == std::string("none") ||
       Options.recompute == std::string("selective")) &&
      (!Options.recomputeMethod.empty() || Options.recomputeNumLayers))
    throwError("recompute method and num layers choose the blocks full "
               "recomputation reruns: drop recompute " +
               *Options.recompute + " (they imply full)");
  Base.recomputeMethod = Options.recomputeMethod;
  Base.recomputeNumLayers = Options.recomputeNumLayers;
  Base.dtype = Options.dtype;
  Base.optimizer = Options.optimizer;
  Base.partition = Options.partition;
  Base.gradCompression = Options.gradCompression;
  Base.commProtocol = Options.commProtocol;
  Base.tpCommOverlap = Options.tpCommOverlap;
  Base.overlapParamGather = Options.overlapParamGather;
  Base.overlapMoeExpertParallelComm = Options.overlapMoeExpertParallelComm;
  Base.flashAttention = Options.flashAttention;
  Base.cpComm =
      Options.cpComm.value_or(perfc::name(defaultContextExchange(*Framework)));
  Base.zero = Options.zero.value_or(0);
  perfc::TrainOptions TrainOpts = trainOptions(Base, MI.Batch);
  TrainOpts.Unfused = !Options.fusion;

  std::map<int64_t, AtMicroBatch> Analyses;
  PlanRequest Req;
  Req.Analysis = [&](int64_t Mb) -> llvm::Expected<const TrainingAnalysis *> {
    AtMicroBatch &Slot = Analyses[Mb];
    if (!Slot.Analysis) {
      if (Mb == MI.Batch) {
        Slot.Analysis = std::make_unique<TrainingAnalysis>(
            MI.Graph, !Options.fusion, Options.flashAttention);
      } else {
        auto IM = importAtBatch(MI, Mb);
        if (!IM)
          return IM.takeError();
        Slot.Imported =
            std::make_unique<frontend::ImportedModel>(std::move(*IM));
        Slot.Analysis = std::make_unique<TrainingAnalysis>(
            Slot.Imported->Graph, !Options.fusion, Options.flashAttention);
      }
    }
    return Slot.Analysis.get();
  };
  Req.Cluster = &Cluster;
  Req.GlobalBatch = Options.globalBatch;
  Req.Devices = Options.devices;
  Req.Base = TrainOpts;
  Req.AllowCrossNodeTp = Options.crossNodeTp;
  Req.MemoryReserveBytes = Options.memoryReserveBytes.value_or(0);
  Req.TargetFramework = *Framework;
  Req.Planner =
      Options.planner == "z3" ? PlannerKind::Z3 : PlannerKind::Exhaustive;
  Req.TimeLimitSeconds = Options.timeLimitSeconds;
  Req.TopK = std::max(1u, Options.top);
  Req.Pareto = Options.pareto;
  PlanFixed &F = Req.Fixed;
  if (Options.dp)
    F.Dp = *Options.dp;
  if (Options.tp)
    F.Tp = *Options.tp;
  if (Options.cp)
    F.Cp = *Options.cp;
  if (Options.ep)
    F.Ep = *Options.ep;
  if (Options.cpComm)
    F.CpComm = TrainOpts.CpComm;
  if (Options.pp)
    F.Pp = *Options.pp;
  if (Options.vp)
    F.Vp = *Options.vp;
  if (Options.sp)
    F.Sp = *Options.sp;
  if (Options.microBatch) {
    if (*Options.microBatch <= 0)
      throwError("microBatch must be positive");
    F.MicroBatch = *Options.microBatch;
  }
  if (Built) {
    // One graph, one batch: the only micro-batch there is.
    F.MicroBatch = MI.Batch;
    Req.MicroBatchSizes = {MI.Batch};
  }
  if (Options.recompute || !Options.recomputeModules.empty() ||
      !Options.recomputeMethod.empty() || Options.recomputeNumLayers)
    F.Recomp = TrainOpts.Recomp;
  if (Options.zero)
    F.Zero = *Options.zero;

  auto Res = planTraining(Req);
  if (!Res)
    throwError(Where + ": " + llvm::toString(Res.takeError()));
  TrainOpts = Res->Options;
  Report::PlanInfo Info;
  Info.Result = std::move(*Res);
  Info.ModelName = MI.Info.GraphName;
  Info.ModelFileStem = MI.Info.Name;
  Info.ModelNodes = MI.Graph.nodes().size();
  Info.ModelParams = R.Total.Params;
  Info.DevicesPerNode = Cluster.Groups.front().devicesPerNode();
  Info.TimeLimitSeconds = Options.timeLimitSeconds;
  R.Plan = std::move(Info);

  // The chosen strategy's step, as the CLI predicts it after planning.
  // Mixed GPU types (stages on types, or an uneven data split): the
  // planner's own prediction of the plan.
  const bool MixedPlan = !R.Plan->Result.StageDevices.empty() ||
                         !R.Plan->Result.Options.DataSplit.empty();
  if (!MixedPlan && isMixedCluster(Cluster))
    throwError(Where + ": cluster '" + Cluster.Name +
               "' mixes GPU types and the plan does not say each stage's");
  llvm::Expected<TrainReport> T = R.Plan->Result.Report;
  if (!MixedPlan) {
    auto At = Req.Analysis(TrainOpts.MicroBatch);
    if (!At)
      throwError(Where + ": " + llvm::toString(At.takeError()));
    T = predictTraining(**At, Cluster, TrainOpts);
  }
  if (!T)
    throwError(Where + ": " + llvm::toString(T.takeError()));
  R.Strategy = TrainOpts;
  R.Train = std::move(*T);
  addStepWarnings(R);
  auto I = std::make_shared<Plan::Impl>();
  I->R = std::move(R);
  return Plan(std::move(I));
}

TrainOptions Plan::strategy() const {
  const perfc::TrainOptions &O = *P->R.Strategy;
  TrainOptions T;
  T.dp = O.Dp;
  T.tp = O.Tp;
  T.pp = O.Pp;
  T.vp = O.Vp;
  T.cp = O.Cp;
  T.cpComm = perfc::name(O.CpComm);
  T.ep = O.Ep;
  T.moeCapacity = O.ExpertCapacity;
  T.sp = O.SequenceParallel;
  T.tpCommOverlap = O.TpCommOverlap;
  T.overlapParamGather = O.OverlapParamGather;
  T.overlapMoeExpertParallelComm = O.OverlapMoeExpertParallelComm;
  T.globalBatch = O.GlobalBatch;
  T.recompute = name(O.Recomp);
  if (O.Recomp == Recompute::Selective)
    T.recomputeModules = recomputeModuleNames(O.RecomputeModules);
  if (O.Recomp == Recompute::Full) {
    T.recomputeMethod = name(O.Method);
    T.recomputeNumLayers = O.RecomputeNumLayers;
  }
  T.dtype = O.DType == ir::DType::F8E4M3 ? "fp8" : ir::name(O.DType).str();
  T.optimizer = name(O.Optimizer);
  T.partition = name(O.Split);
  T.gradCompression = gradCompressionName(O.GradCompression);
  T.commProtocol = cost::name(O.Protocol);
  T.zero = O.Zero;
  return T;
}

int64_t Plan::microBatch() const { return P->R.Strategy->MicroBatch; }
TrainSummary Plan::train() const { return summarize(*P->R.Train); }
bool Plan::optimal() const { return P->R.Plan->Result.Optimal; }
std::vector<std::string> Plan::stageDevices() const {
  return P->R.Plan->Result.StageDevices;
}
std::vector<DataShare> Plan::dataSplit() const {
  std::vector<DataShare> Out;
  const perfc::TrainOptions &O = P->R.Plan->Result.Options;
  for (const perfc::DataShare &D : O.DataSplit)
    Out.push_back({D.Device, D.Replicas, D.MicroBatches,
                   int64_t(D.MicroBatches) * O.MicroBatch});
  return Out;
}
std::vector<std::string> Plan::warnings() const {
  return warningLines(P->R.Warnings);
}

std::string toJson(const Plan &P, bool Compact) {
  std::string S;
  {
    llvm::raw_string_ostream OS(S);
    writeReportJson(P.impl().R, OS);
  }
  return Compact ? compactJson(S) : S;
}

} // namespace perfc::api
