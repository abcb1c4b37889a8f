//===- Api.cpp - perfc/perfc.h: hardware, ONNX models, predict, JSON ------===//
//
// predict() assembles the same Report as `perfc MODEL` (tools/
// PredictCommand.cpp) and toJson() prints it with the CLI's writer
// (tools/ReportJson.cpp), so the library and the tool agree byte for byte.
//
//===----------------------------------------------------------------------===//
#include "api/ApiImpl.h"

#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "passes/InferenceLayout.h"
#include "passes/Planner.h"
#include "passes/Predict.h"
#include "passes/ServingPlan.h"
#include "passes/TrainOptionNames.h"
#include "passes/TrainStep.h"
#include "perfc/Version.h"
#include "tools/InferenceRun.h"
#include "tools/ReportAssembly.h"
#include "tools/ReportWriters.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cmath>
#include <cstring>
#include <list>
#include <mutex>

namespace perfc::api {

void throwError(llvm::Error E) { throw Error(llvm::toString(std::move(E))); }
void throwError(const std::string &Message) { throw Error(Message); }

const char *version() { return PERFC_VERSION_STRING; }

//===-- Hardware ----------------------------------------------------------===//

static Hardware makeHardware(std::string Name, llvm::Expected<hw::Cluster> C) {
  if (!C)
    throwError(C.takeError());
  auto I = std::make_shared<Hardware::Impl>();
  I->Name = std::move(Name);
  I->Cluster = std::move(*C);
  return Hardware(std::move(I));
}

Hardware Hardware::load(const std::string &NameOrPath) {
  return makeHardware(NameOrPath, hw::loadHardware(NameOrPath));
}

Hardware Hardware::fromYaml(const std::string &Text,
                            const std::string &DisplayName) {
  return makeHardware(DisplayName,
                      hw::loadHardwareFromString(Text, DisplayName));
}

std::vector<std::string> Hardware::bundled() {
  std::vector<std::string> Names;
  for (const hw::BundledEntry &E : hw::listBundled())
    Names.push_back(E.Name);
  return Names;
}

const std::string &Hardware::name() const { return P->Name; }
std::string Hardware::device() const { return P->Cluster.primaryDevice().Name; }
unsigned Hardware::devices() const { return P->Cluster.numDevices(); }

//===-- Model -------------------------------------------------------------===//

void finishModel(Model::Impl &M) {
  auto Describe = [](llvm::ArrayRef<ir::Value *> Values) {
    std::vector<TensorInfo> Out;
    for (const ir::Value *V : Values)
      Out.push_back(
          {V->name().str(), ir::name(V->type()).str(), V->shape().str()});
    return Out;
  };
  M.Info.Inputs = Describe(M.Graph.inputs());
  M.Info.Outputs = Describe(M.Graph.outputs());
  M.Batch = 1;
  if (!M.Graph.inputs().empty()) {
    const ir::Shape &S = M.Graph.inputs().front()->shape();
    if (S.isRanked() && S.rank() >= 1 && S[0].isKnown())
      M.Batch = S[0].Value;
  }
}

static frontend::ImportOptions importOptions(const ImportOptions &O) {
  frontend::ImportOptions I;
  if (O.batch) {
    if (*O.batch <= 0)
      throwError("batch must be positive, not " + std::to_string(*O.batch));
    I.Batch = *O.batch;
  }
  for (const auto &[Name, Value] : O.dims) {
    if (Name.empty() || Value <= 0)
      throwError("dimension '" + Name + "=" + std::to_string(Value) +
                 "': expected a name and a positive size");
    I.Dims.emplace_back(Name, Value);
  }
  I.AllowUnknownShapes = O.allowUnknownShapes;
  return I;
}

/// IM as a model read from Path (or Bytes) with Options.
static Model modelFrom(frontend::ImportedModel IM, const std::string &Path,
                       const ImportOptions &Options,
                       std::shared_ptr<const std::string> Bytes) {
  auto M = std::make_shared<Model::Impl>();
  if (Bytes)
    M->SourceBytes = std::move(Bytes);
  else
    M->SourcePath = Path;
  M->SourceOptions = Options;
  M->Graph = std::move(IM.Graph);
  M->Info.Name = IM.Name;
  M->Info.Path = Path;
  M->Info.GraphName = IM.GraphName;
  M->Info.Producer = IM.Producer;
  M->Info.IrVersion = IM.IrVersion;
  M->Info.Opset = IM.Opset;
  M->Info.FileBytes = IM.FileBytes;
  M->Info.WeightBytesSkipped = IM.WeightBytesSkipped;
  M->Info.Bindings = IM.Bindings;
  M->Warnings = std::move(IM.Warnings);
  finishModel(*M);
  return Model(std::move(M));
}

static Model makeModel(llvm::Expected<frontend::ImportedModel> IM,
                       const std::string &Path, const ImportOptions &Options,
                       std::shared_ptr<const std::string> Bytes) {
  if (!IM)
    throwError(IM.takeError());
  return modelFrom(std::move(*IM), Path, Options, std::move(Bytes));
}

llvm::Expected<frontend::ImportedModel> importAtBatch(const Model::Impl &MI,
                                                      int64_t Batch) {
  frontend::ImportOptions At;
  At.Batch = Batch;
  for (const auto &D : MI.SourceOptions.dims)
    At.Dims.push_back(D);
  At.AllowUnknownShapes = MI.SourceOptions.allowUnknownShapes;
  if (MI.SourceBytes)
    return frontend::importOnnxBytes(*MI.SourceBytes, MI.Info.Path, At);
  return frontend::importOnnxFile(MI.SourcePath, At);
}

Model modelAtBatch(const Model::Impl &MI, frontend::ImportedModel IM,
                   int64_t Batch) {
  ImportOptions Options = MI.SourceOptions;
  Options.batch = Batch;
  return modelFrom(std::move(IM), MI.Info.Path, Options, MI.SourceBytes);
}

Model Model::fromOnnxFile(const std::string &Path,
                          const ImportOptions &Options) {
  return makeModel(frontend::importOnnxFile(Path, importOptions(Options)), Path,
                   Options, nullptr);
}

namespace {
/// The most recent imports from bytes: NAS loops re-import the same
/// candidates, and an import (protobuf parse, ONNX shape inference) costs
/// far more than a prediction. Entries keep the bytes they were made from
/// and match on them exactly.
class BytesCache {
public:
  static constexpr size_t Capacity = 32;

  /// Hash: hashOf(Bytes), computed once by the caller for find and insert.
  std::shared_ptr<const Model::Impl> find(std::string_view Bytes, uint64_t Hash,
                                          const std::string &Key) {
    std::lock_guard<std::mutex> Lock(Mutex);
    // The hash first: candidates of a search loop differ near their ends
    // as often as not, and comparing each one's bytes in full against 32
    // entries would read more memory than importing it.
    for (auto It = Entries.begin(); It != Entries.end(); ++It)
      if (It->Hash == Hash && It->Key == Key &&
          It->Bytes->size() == Bytes.size() &&
          std::memcmp(It->Bytes->data(), Bytes.data(), Bytes.size()) == 0) {
        Entries.splice(Entries.begin(), Entries, It);
        return It->M;
      }
    return nullptr;
  }
  /// Bytes: the model's own copy (Model::Impl::SourceBytes), shared.
  void insert(std::shared_ptr<const std::string> Bytes, uint64_t Hash,
              std::string Key, std::shared_ptr<const Model::Impl> M) {
    std::lock_guard<std::mutex> Lock(Mutex);
    Entries.push_front({std::move(Bytes), Hash, std::move(Key), std::move(M)});
    if (Entries.size() > Capacity)
      Entries.pop_back();
  }

private:
  struct Entry {
    std::shared_ptr<const std::string> Bytes;
    uint64_t Hash;
    std::string Key;
    std::shared_ptr<const Model::Impl> M;
  };
  std::mutex Mutex;
  std::list<Entry> Entries;
};

BytesCache &bytesCache() {
  static BytesCache Cache;
  return Cache;
}
} // namespace

Model Model::fromOnnxBytes(std::string_view Bytes, const ImportOptions &Options,
                           const std::string &Name) {
  std::string Key = Name + '\0' +
                    (Options.batch ? std::to_string(*Options.batch) : "-") +
                    '\0' + (Options.allowUnknownShapes ? "u" : "s");
  for (const auto &[N, V] : Options.dims)
    Key += '\0' + N + '=' + std::to_string(V);
  const uint64_t Hash =
      llvm::xxHash64(llvm::StringRef(Bytes.data(), Bytes.size()));
  if (auto Hit = bytesCache().find(Bytes, Hash, Key))
    return Model(std::move(Hit));
  auto Copy = std::make_shared<const std::string>(Bytes);
  Model M = makeModel(
      frontend::importOnnxBytes(llvm::StringRef(Bytes.data(), Bytes.size()),
                                Name, importOptions(Options)),
      Name, Options, Copy);
  bytesCache().insert(std::move(Copy), Hash, std::move(Key), M.P);
  return M;
}

const std::string &Model::name() const { return P->Info.Name; }
unsigned Model::numNodes() const { return P->Graph.numNodes(); }
int64_t Model::batch() const { return P->Batch; }

//===-- predict -----------------------------------------------------------===//

namespace {

/// A compute or storage type by name (What says which, for the error);
/// "" for none.
llvm::Optional<ir::DType> parseType(const std::string &S,
                                    llvm::StringRef What) {
  if (S.empty())
    return llvm::None;
  if (auto T = computeTypeNamed(S))
    return T;
  throwError(
      ("unknown " + What + " '" + S + "': use " + ComputeTypeChoices).str());
}

/// maxBatch's refusals; the latency bound its search admits batches by
/// (maxBatchLatencySeconds, or with servePlan servePlanMaxLatencySeconds).
llvm::Optional<double> checkMaxBatch(const Model::Impl &MI,
                                     const hw::Cluster *Cluster,
                                     const PredictOptions &Options) {
  if (Options.train)
    throwError("maxBatch finds the largest inference batch that fits; a "
               "training step's micro-batch is the model's batch (plan "
               "searches it)");
  if (!Cluster)
    throwError("maxBatch needs hardware: what fits depends on the device's "
               "memory");
  if (Options.place)
    throwError("maxBatch and place: give one (maxBatch predicts a layout of "
               "a cluster's devices, given by tensorParallel, "
               "pipelineParallel or expertParallel, or chosen by servePlan)");
  if (MI.SourcePath.empty() && !MI.SourceBytes)
    throwError(MI.Info.Path +
               ": maxBatch imports the model again at each batch it tries; "
               "a model made with ModelBuilder has one batch: build it at "
               "the batches to compare");
  llvm::Optional<double> Bound;
  if (Options.maxBatchLatencySeconds)
    Bound = *Options.maxBatchLatencySeconds;
  if (Options.servePlan && Options.servePlanMaxLatencySeconds) {
    if (Bound && *Bound != *Options.servePlanMaxLatencySeconds)
      throwError("maxBatchLatencySeconds and servePlanMaxLatencySeconds "
                 "differ; give the bound once");
    Bound = *Options.servePlanMaxLatencySeconds;
  }
  if (Bound && !(*Bound > 0 && std::isfinite(*Bound)))
    throwError("maxBatchLatencySeconds must be a positive number of "
               "seconds");
  return Bound;
}

} // namespace

cost::CommProtocol commProtocol(const std::string &Name) {
  const llvm::Optional<cost::CommProtocol> P = commProtocolNamed(Name);
  if (!P)
    throwError(unknownName("comm protocol", Name, CommProtocolChoices));
  return *P;
}

perfc::TrainOptions trainOptions(const TrainOptions &T, int64_t MicroBatch) {
  perfc::TrainOptions O;
  O.Dp = T.dp;
  O.Tp = T.tp;
  O.Pp = T.pp;
  O.Vp = T.vp;
  O.Cp = T.cp;
  O.Ep = T.ep;
  O.ExpertCapacity = T.moeCapacity;
  if (!O.Dp || !O.Tp || !O.Pp || !O.Vp || !O.Cp || !O.Ep)
    throwError("dp, tp, pp, vp, cp and ep must be at least 1");
  O.SequenceParallel = T.sp;
  O.TpCommOverlap = T.tpCommOverlap;
  O.OverlapParamGather = T.overlapParamGather;
  O.OverlapMoeExpertParallelComm = T.overlapMoeExpertParallelComm;
  O.MicroBatch = MicroBatch;
  O.GlobalBatch = T.globalBatch;
  O.Zero = T.zero;
  if (T.zero > 3)
    throwError("zero must be a ZeRO stage 0..3");
  if (llvm::Error E = parseTrainChoices(
          {T.recompute, T.dtype, T.optimizer, T.partition}, "", O))
    throwError(std::move(E));
  if (llvm::Error E = parseRecomputeModules(
          T.recomputeModules, "recompute module", "recompute", false, O))
    throwError(std::move(E));
  if (llvm::Error E = parseRecomputeLayers(
          T.recomputeMethod,
          T.recomputeNumLayers ? llvm::Optional<unsigned>(T.recomputeNumLayers)
                               : llvm::None,
          false, {"recompute method", "recompute num layers", "recompute"}, O))
    throwError(std::move(E));
  if (llvm::Error E = parseGradCompression(
          T.gradCompression, "grad compression", O.GradCompression))
    throwError(std::move(E));
  O.Protocol = commProtocol(T.commProtocol);
  if (T.inputRate != 0)
    if (llvm::Error E = setInputRate(T.inputRate, "input rate (0: none)", O))
      throwError(std::move(E));
  O.FlashAttention = T.flashAttention;
  const llvm::Optional<ContextExchange> Exchange =
      contextExchangeNamed(T.cpComm);
  if (!Exchange)
    throwError(unknownName("cp comm", T.cpComm, ContextExchangeChoices));
  O.CpComm = *Exchange;
  return O;
}

Prediction predict(const Model &M, const Hardware *Hw,
                   const PredictOptions &Options) {
  return Prediction(makePrediction(M, Hw, Options, /*Explain=*/false));
}

std::shared_ptr<Prediction::Impl> makePrediction(const Model &M,
                                                 const Hardware *Hw,
                                                 const PredictOptions &Options,
                                                 bool Explain, bool ForStep) {
  const Model::Impl &MI = M.impl();
  perfc::PredictOptions PO;
  PO.Explain = Explain;
  // The rows' names and shapes (strings for every node) only when a caller
  // asks for them: ops() and errors describe nodes from the graph then.
  PO.NodeNames = Explain;
  PO.Time.ComputeType = parseType(Options.computeType, "compute type");
  PO.StorageType = parseType(Options.storageType, "storage type");
  if (auto L = hw::parseConvLayout(Options.convLayout))
    PO.Time.Layout = *L;
  else
    throwError("unknown conv layout '" + Options.convLayout +
               "': use native, nchw or nhwc");
  PO.Fusion.Fuse = Options.fusion;
  if (Options.flashAttention && Options.train)
    throwError("flashAttention is an inference option; for training set "
               "train.flashAttention");
  PO.Fusion.FlashAttention = Options.flashAttention;
  PO.Memory = !Options.train && !ForStep; // a step's memory is the step's
  const hw::Cluster *Cluster = Hw ? &Hw->impl().Cluster : nullptr;
  // Another runtime's launch cost or memory reserve: the prediction's own
  // copy of the devices (the handle stays immutable and shared).
  llvm::Optional<hw::Cluster> Own;
  const auto OwnCluster = [&](const std::string &Option) -> hw::Cluster & {
    if (!Cluster)
      throwError(Option + " needs hardware");
    if (!Own) {
      Own = *Cluster;
      Cluster = &*Own;
    }
    return *Own;
  };
  if (Options.launchOverheadSeconds)
    if (llvm::Error E = hw::setLaunchOverhead(
            OwnCluster("launchOverheadSeconds"), *Options.launchOverheadSeconds,
            "launchOverheadSeconds (launch_overhead_s)"))
      throwError(std::move(E));
  if (Options.memoryReserveBytes)
    if (llvm::Error E = hw::reserveMemory(
            OwnCluster("memoryReserveBytes"), *Options.memoryReserveBytes,
            "memoryReserveBytes (memory_reserve_bytes)"))
      throwError(std::move(E));
  if (Cluster)
    PO.Device = &Cluster->primaryDevice();
  if (Options.train && !Cluster)
    throwError("a training prediction needs hardware (a device or cluster)");
  if (Options.train && Options.place)
    throwError("place places inference kernels; for training use plan");
  if (Options.tensorParallel == 0)
    throwError("tensorParallel 0: give the number of devices the model is "
               "split over, 1 or more");
  const cost::CommProtocol Protocol = commProtocol(Options.commProtocol);
  if (Options.pipelineParallel == 0)
    throwError("pipelineParallel 0: give the number of pipeline stages, 1 "
               "or more");
  // maxBatch: the bound its search admits batches by.
  llvm::Optional<double> BatchBound;
  if (Options.maxBatch)
    BatchBound = checkMaxBatch(MI, Cluster, Options);
  else if (Options.maxBatchLatencySeconds)
    throwError("maxBatchLatencySeconds bounds maxBatch's search: set "
               "maxBatch");
  if (!Options.servePlan && (Options.servePlanObjective != "latency" ||
                             Options.servePlanMaxLatencySeconds))
    throwError("servePlanObjective and servePlanMaxLatencySeconds choose "
               "among a serving plan's layouts: set servePlan");
  // A serving plan picks the split the prediction then makes.
  llvm::Optional<ServingRequest> Serve;
  if (Options.servePlan) {
    if (Options.train)
      throwError("servePlan chooses how to serve an inference; plan a "
                 "training step with perfc::api::plan");
    if (Options.place || Options.tensorParallel != 1 ||
        Options.expertParallel != 1 || Options.pipelineParallel != 1)
      throwError("servePlan chooses the layout (whole, tensorParallel, "
                 "pipelineParallel or expertParallel); leave place, "
                 "tensorParallel, pipelineParallel and expertParallel unset, "
                 "or drop servePlan");
    if (!Cluster)
      throwError("servePlan needs hardware: a cluster whose devices serve "
                 "the model");
    Serve.emplace();
    Serve->Devices = Options.servePlanDevices;
    Serve->AllowCrossNodeTp = Options.servePlanCrossNodeTp;
    const llvm::Optional<ServingObjective> Objective =
        servingObjectiveNamed(Options.servePlanObjective);
    if (!Objective)
      throwError("unknown servePlanObjective '" + Options.servePlanObjective +
                 "': use latency or throughput");
    Serve->Objective = *Objective;
    if (Options.servePlanMaxLatencySeconds)
      Serve->MaxLatencySeconds = *Options.servePlanMaxLatencySeconds;
  }
  if (Options.tensorParallel > 1) {
    if (Options.train)
      throwError("tensorParallel splits inference; a training step's tensor "
                 "parallelism is train.tp");
    if (Options.place)
      throwError("place and tensorParallel: place puts each kernel on one "
                 "processor of a SoC, tensorParallel splits every kernel "
                 "over a cluster's devices; give one");
    if (!Cluster)
      throwError("tensorParallel needs hardware: a cluster whose devices the "
                 "model is split over");
  }
  if (Options.expertParallel == 0)
    throwError("expertParallel 0: give the number of devices the experts "
               "are split over, 1 or more");
  if (Options.expertParallel > 1) {
    if (Options.train)
      throwError("expertParallel serves inference; a training step's expert "
                 "parallelism is train.ep");
    if (Options.tensorParallel > 1)
      throwError("expertParallel and tensorParallel: expert-parallel "
                 "inference runs attention data-parallel and whole on each "
                 "rank; give one of them");
    if (Options.place)
      throwError("place and expertParallel: place puts each kernel on one "
                 "processor of a SoC, expertParallel splits a mixture over a "
                 "cluster's devices; give one");
    if (!Cluster)
      throwError("expertParallel needs hardware: a cluster whose devices "
                 "serve the model");
  }
  if (Options.pipelineParallel > 1) {
    if (Options.train)
      throwError("pipelineParallel splits inference; a training step's "
                 "pipeline parallelism is train.pp");
    if (Options.place)
      throwError("place and pipelineParallel: place puts each kernel on one "
                 "processor of a SoC, pipelineParallel splits the blocks over "
                 "a cluster's devices; give one");
    if (Options.expertParallel > 1)
      throwError("pipelineParallel and expertParallel: pipeline stages of an "
                 "expert-parallel group are not modelled for inference; give "
                 "one of them");
    if (!Cluster)
      throwError("pipelineParallel needs hardware: a cluster whose devices "
                 "hold the stages");
  }
  if (Options.train)
    if (llvm::Error E = checkTrainable(*Cluster))
      throwError(std::move(E));
  // A step on mixed GPU types depends on which stage runs where; predicting
  // it on the first type alone would be a silently wrong number (the CLI
  // refuses the same way).
  if (Options.train && isMixedCluster(*Cluster))
    throwError(MI.Info.Path + ": cluster '" + Cluster->Name +
               "' mixes GPU types; plan it with perfc::api::plan (each "
               "pipeline stage on one type) instead of predict");

  // The step's options first: the per-node report is then one
  // micro-batch's forward in the training precision.
  llvm::Optional<perfc::TrainOptions> Train;
  std::string ComputeTypeShown = Options.computeType;
  if (Options.train) {
    Train = trainOptions(*Options.train, MI.Batch);
    // An eager framework's step, as --no-fusion.
    Train->Unfused = !Options.fusion;
    // The JSON's step.comm_explain, as the CLI's; not in the fast path.
    Train->Explain = Explain;
    Train->Layout = PO.Time.Layout;
    if (auto T = applyTrainingForward(PO, *Train, !Options.computeType.empty(),
                                      !Options.storageType.empty()))
      ComputeTypeShown = ir::name(*T);
  }

  auto I = std::make_shared<Prediction::Impl>(M);
  I->Explained = Explain;
  if (Hw)
    I->Hw = *Hw;
  I->Options = Options;
  Report &R = I->R;
  // The layout given or planned, at the model's batch or the largest.
  InferenceRequest Inference;
  Inference.ModelPath = MI.Info.Path;
  Inference.Graph = &MI.Graph;
  Inference.Options = PO;
  Inference.Cluster = Cluster;
  Inference.Protocol = Protocol;
  Inference.Degrees = {Options.tensorParallel, Options.expertParallel,
                       Options.pipelineParallel};
  Inference.Names = {"tensorParallel", "expertParallel"};
  Inference.Serve = std::move(Serve);
  Inference.MaxBatch = Options.maxBatch;
  Inference.MaxLatencySeconds = BatchBound;
  Inference.ImportAt = [&MI](int64_t Batch) {
    return importAtBatch(MI, Batch);
  };
  auto Run = predictInference(std::move(Inference));
  if (!Run)
    throwError(Run.takeError());
  // The report is the found batch's, of the model imported at it.
  if (Run->Model) {
    const int64_t Batch = Run->R.BatchSearch->Batch;
    I->M = modelAtBatch(MI, std::move(*Run->Model), Batch);
  }
  R = std::move(Run->R);
  const Model::Impl &Used = I->M.impl();
  if (Options.flashAttention)
    if (llvm::Error E = checkFlashAttention(Used.Graph, R))
      throwError(Used.Info.Path + ": " + llvm::toString(std::move(E)));
  R.Timings = Options.timings;
  if (Options.place) {
    if (!Cluster)
      throwError("place needs hardware: a SoC or mixed machine");
    if (!(Options.placeTimeLimitSeconds >= 0) ||
        !std::isfinite(Options.placeTimeLimitSeconds))
      throwError("placeTimeLimitSeconds: give a number of seconds, 0 or "
                 "more (0: 10 s)");
    if (llvm::Error E = placeKernels(R, MI.Graph, *Cluster, PO,
                                     Options.placeTimeLimitSeconds))
      throwError(MI.Info.Path + ": " + llvm::toString(std::move(E)));
  }
  R.Model = Used.Info;
  R.Warnings.insert(R.Warnings.begin(), Used.Warnings.begin(),
                    Used.Warnings.end());
  if (Cluster) {
    const hw::Device &D = Cluster->primaryDevice();
    R.Hardware = describeHardware(
        Hw->name(), D, Cluster->Name, ComputeTypeShown,
        Options.launchOverheadSeconds
            ? llvm::Optional<double>(*Options.launchOverheadSeconds)
            : llvm::None,
        PO);
    if (Options.memoryReserveBytes)
      R.Hardware->MemoryReserveBytes = *Options.memoryReserveBytes;
    if (!PO.NodeNames && llvm::any_of(R.Nodes, [](const NodeReport &N) {
          return N.Time && N.Time->Unsupported;
        }))
      describeNodes(Used.Graph, R); // the error names the node
    if (llvm::Error E = checkRunnable(R, D, Used.Info.Path, "compute type"))
      throwError(std::move(E));
  }
  if (Train) {
    auto T = predictTraining(MI.Graph, *Cluster, *Train);
    if (!T)
      throwError(MI.Info.Path + ": " + llvm::toString(T.takeError()));
    R.Strategy = *Train;
    R.Train = std::move(*T);
    addStepWarnings(R);
  }
  return I;
}

//===-- Prediction --------------------------------------------------------===//

double Prediction::params() const { return P->R.Total.Params; }
double Prediction::flops() const { return P->R.Total.Flops; }
double Prediction::macs() const { return P->R.Total.Macs; }
double Prediction::bytes() const { return P->R.Total.bytes(); }

std::optional<double> Prediction::latencySeconds() const {
  if (P->R.LatencySeconds)
    return *P->R.LatencySeconds;
  return std::nullopt;
}

std::optional<TrainSummary> Prediction::train() const {
  if (!P->R.Train)
    return std::nullopt;
  return summarize(*P->R.Train);
}

std::optional<MemorySummary> Prediction::memory() const {
  if (!P->R.Memory)
    return std::nullopt;
  const InferenceMemoryReport &M = *P->R.Memory;
  MemorySummary S;
  S.peakBytes = M.Usage.PeakBytes;
  S.weightsBytes = M.Usage.WeightsBytes;
  S.activationsBytes = M.Usage.ActivationsBytes;
  S.inputsBytes = M.Usage.InputsBytes;
  S.capacityBytes = M.CapacityBytes;
  S.fits = M.Fits;
  S.complete = M.Usage.Complete;
  S.peakAt = M.PeakAt;
  if (M.MaxBatch)
    S.maxBatch = *M.MaxBatch;
  S.bytesPerSample = M.BytesPerSample;
  return S;
}

std::optional<TensorParallelSummary> Prediction::tensorParallel() const {
  if (!P->R.TensorParallel)
    return std::nullopt;
  const TensorParallelReport &TP = *P->R.TensorParallel;
  TensorParallelSummary S;
  S.degree = TP.Degree;
  S.link = TP.Link;
  S.allReduces = TP.AllReduces;
  S.allGathers = TP.AllGathers;
  S.kernelSeconds = TP.KernelSeconds;
  S.commSeconds = TP.CommSeconds;
  return S;
}

std::optional<ExpertParallelSummary> Prediction::expertParallel() const {
  if (!P->R.ExpertParallel)
    return std::nullopt;
  const ExpertParallelReport &EP = *P->R.ExpertParallel;
  ExpertParallelSummary S;
  S.degree = EP.Degree;
  S.link = EP.Link;
  S.allToAlls = EP.AllToAlls;
  S.allToAllBytes = EP.AllToAllBytes;
  S.kernelSeconds = EP.KernelSeconds;
  S.commSeconds = EP.CommSeconds;
  return S;
}

std::optional<PipelineParallelSummary> Prediction::pipelineParallel() const {
  if (!P->R.PipelineParallel)
    return std::nullopt;
  const PipelineParallelReport &PP = *P->R.PipelineParallel;
  PipelineParallelSummary S;
  S.degree = PP.Degree;
  S.inFlightBatches = PP.inFlight();
  S.latencySeconds = PP.LatencySeconds;
  S.intervalSeconds = PP.IntervalSeconds;
  S.samplesPerSecond = PP.samplesPerSecond();
  for (const PipelineStageReport &St : PP.Stages) {
    PipelineParallelSummary::Stage T;
    T.firstBlock = St.FirstBlock;
    T.lastBlock = St.LastBlock;
    T.kernels = St.Kernels;
    T.kernelSeconds = St.KernelSeconds;
    T.sendBytes = St.SendBytes;
    T.sendSeconds = St.SendSeconds;
    T.peakBytes = St.Memory.Usage.PeakBytes;
    T.fits = St.Memory.Fits;
    S.stages.push_back(T);
  }
  return S;
}

std::optional<ServingPlanSummary> Prediction::servingPlan() const {
  if (!P->R.Serving)
    return std::nullopt;
  const ServingPlan &SP = *P->R.Serving;
  ServingPlanSummary S;
  for (const ServingCandidate &C : SP.Candidates)
    S.layouts.push_back(
        {name(C.Split), C.Devices, C.LatencySeconds, C.PeakBytes,
         C.CapacityBytes, C.Fits, C.Stages, C.IntervalSeconds,
         C.MaxBatch ? std::optional<uint64_t>(*C.MaxBatch) : std::nullopt,
         C.Samples, C.AtMaxBatch});
  S.chosen = SP.Chosen.getValueOr(0);
  S.samples = SP.Samples;
  S.objective = name(SP.Objective);
  if (SP.MaxLatencySeconds)
    S.maxLatencySeconds = *SP.MaxLatencySeconds;
  S.skipped = SP.Skipped;
  S.atMaxBatch = SP.AtMaxBatch;
  S.notServed = SP.NotServed;
  return S;
}

std::optional<BatchSearchSummary> Prediction::batchSearch() const {
  if (!P->R.BatchSearch)
    return std::nullopt;
  const BatchSearchReport &B = *P->R.BatchSearch;
  BatchSearchSummary S;
  S.batch = B.Batch;
  S.fromBatch = B.FromBatch;
  S.estimate = B.Estimate;
  S.limit = B.Limit;
  if (B.MaxLatencySeconds)
    S.maxLatencySeconds = *B.MaxLatencySeconds;
  for (const BatchProbe &T : B.Tried)
    S.tried.push_back(
        {T.Batch, T.Fits, T.LatencySeconds,
         T.MeetsLatency ? std::optional<bool>(*T.MeetsLatency) : std::nullopt});
  return S;
}

std::optional<PlacementSummary> Prediction::placement() const {
  if (!P->R.Placement)
    return std::nullopt;
  const PlacementReport &PR = *P->R.Placement;
  PlacementSummary S;
  S.latencySeconds = PR.LatencySeconds;
  S.transferSeconds = PR.TransferSeconds;
  S.transferBytes = PR.TransferBytes;
  S.transfers = PR.Transfers;
  S.optimal = PR.Optimal;
  S.method = PR.Method;
  for (size_t I = 0; I < PR.Devices.size(); ++I) {
    PlacementSummary::Processor D;
    D.name = PR.Devices[I];
    D.kernels = PR.KernelsPerDevice[I];
    D.seconds = PR.SecondsPerDevice[I];
    if (std::isfinite(PR.SingleDeviceSeconds[I]))
      D.aloneSeconds = PR.SingleDeviceSeconds[I];
    S.processors.push_back(std::move(D));
  }
  return S;
}

TrainSummary summarize(const TrainReport &T) {
  TrainSummary S;
  S.stepSeconds = T.StepSeconds;
  S.computeSeconds = T.ComputeSeconds;
  S.commSeconds = T.CommSeconds;
  S.exposedCommSeconds = T.ExposedCommSeconds;
  S.bubbleSeconds = T.BubbleSeconds;
  S.optimizerSeconds = T.OptimizerSeconds;
  S.gradAccumSeconds = T.GradAccumSeconds;
  S.samplesPerSecond = T.SamplesPerSecond;
  S.modelFlops = T.ModelFlops;
  S.tflopsPerDevice = T.TflopsPerDevice;
  S.inputSeconds = T.InputSeconds;
  S.inputBound = T.InputBound;
  S.inputWaitSeconds = T.InputWaitSeconds;
  S.peakBytes = T.Stages.empty() ? 0 : T.peak().peakBytes();
  S.capacityBytes = T.CapacityBytes;
  S.devices = T.Devices;
  S.globalBatch = T.GlobalBatch;
  S.microBatches = T.MicroBatches;
  S.fits = T.Fits;
  S.blocks = T.ModelBlocks;
  S.blocksFromStructure = T.BlocksFromStructure;
  return S;
}

std::vector<OpRow> Prediction::ops() const {
  std::vector<OpRow> Rows;
  Rows.reserve(P->R.Nodes.size());
  // A fast-path prediction (no explanations, so no names: see
  // makePrediction) describes a copy's nodes from the graph.
  Report Named;
  const bool Describe = !P->Explained;
  if (Describe) {
    Named.Nodes.resize(P->R.Nodes.size());
    describeNodes(P->M.impl().Graph, Named);
  }
  for (size_t I = 0; I < P->R.Nodes.size(); ++I) {
    const NodeReport &N = P->R.Nodes[I];
    const NodeReport &Names = Describe ? Named.Nodes[I] : N;
    OpRow Row;
    Row.name = Names.Name;
    Row.op = Names.Op;
    Row.outputShape = Names.OutputShape;
    Row.params = N.Work.Params;
    Row.flops = N.Work.Flops;
    Row.macs = N.Work.Macs;
    Row.bytesRead = N.Work.BytesRead;
    Row.bytesWritten = N.Work.BytesWritten;
    if (N.Time) {
      Row.seconds = N.Time->Seconds;
      Row.bound = N.Time->Bound;
      Row.exec = N.Time->Exec;
    }
    Rows.push_back(std::move(Row));
  }
  return Rows;
}

std::vector<std::string> Prediction::warnings() const {
  return warningLines(P->R.Warnings);
}

std::vector<std::string> warningLines(const std::vector<Warning> &Warnings) {
  std::vector<std::string> Out;
  for (const Warning &W : Warnings)
    Out.push_back(W.Node.empty() ? W.Message
                                 : "node '" + W.Node + "': " + W.Message);
  return Out;
}

std::string toJson(const Prediction &P, bool Compact) {
  const Prediction::Impl &I = P.impl();
  std::shared_ptr<Prediction::Impl> Full;
  if (!I.Explained && I.R.BatchSearch) {
    // The batch found, predicted again with explanations: the model at it
    // (I.M) in the layout found, the search and plan as they were.
    PredictOptions At = I.Options;
    At.maxBatch = false;
    At.maxBatchLatencySeconds.reset();
    if (I.R.Serving) {
      const SplitDegrees D = degreesOf(*I.R.Serving->chosen());
      At.servePlan = false;
      At.servePlanObjective = "latency";
      At.servePlanMaxLatencySeconds.reset();
      At.tensorParallel = D.Tp;
      At.expertParallel = D.Ep;
      At.pipelineParallel = D.Pp;
    }
    Full = makePrediction(I.M, I.Hw ? &*I.Hw : nullptr, At, true);
    Full->R.BatchSearch = I.R.BatchSearch;
    Full->R.Serving = I.R.Serving;
  } else if (!I.Explained) {
    Full = makePrediction(I.M, I.Hw ? &*I.Hw : nullptr, I.Options, true);
  }
  std::string S;
  {
    llvm::raw_string_ostream OS(S);
    writeReportJson(Full ? Full->R : I.R, OS);
  }
  return Compact ? compactJson(S) : S;
}

std::string compactJson(const std::string &S) {
  // The writer indents; drop whitespace outside strings.
  std::string Out;
  Out.reserve(S.size());
  bool InString = false, Escaped = false;
  for (char C : S) {
    if (InString) {
      Out += C;
      if (Escaped)
        Escaped = false;
      else if (C == '\\')
        Escaped = true;
      else if (C == '"')
        InString = false;
    } else if (C == '"') {
      InString = true;
      Out += C;
    } else if (C != ' ' && C != '\n' && C != '\t' && C != '\r') {
      Out += C;
    }
  }
  return Out;
}

} // namespace perfc::api
