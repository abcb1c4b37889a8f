//===- PerfcModule.cpp - import perfc (pybind11) --------------------------===//
//
// The C++ API (include/perfc/perfc.h) for Python, returning plain Python
// data. The GIL is released while models import and predictions run, so
// Python threads predict in parallel.
//
//   import perfc
//   hw = perfc.load_hw("jetson-agx-orin")
//   m = perfc.Model.from_onnx("resnet50.onnx", batch=8)
//   r = perfc.predict(m, hw)            # dict: totals, latency_s, ops, ...
//   j = perfc.predict_json(m, hw)       # the CLI's JSON, as a string
//
//===----------------------------------------------------------------------===//
#include "perfc/perfc.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>

namespace py = pybind11;
using namespace perfc::api;
using T = ModelBuilder::Tensor;

namespace {

/// recompute_modules: a list of names, or one string of names separated by
/// commas (as --recompute-modules takes them). A blank entry is kept, for
/// the library to refuse as the CLI does ("unknown recompute module ''").
std::vector<std::string> moduleNames(py::handle V) {
  if (py::isinstance<py::str>(V)) {
    std::vector<std::string> Names;
    const std::string S = V.cast<std::string>();
    size_t From = 0;
    while (From <= S.size()) {
      const size_t To = std::min(S.find(',', From), S.size());
      std::string Name = S.substr(From, To - From);
      Name.erase(0, Name.find_first_not_of(' '));
      Name.erase(Name.find_last_not_of(' ') + 1);
      Names.push_back(Name);
      From = To + 1;
    }
    return Names;
  }
  return V.cast<std::vector<std::string>>();
}

/// recompute_num_layers: a whole number of blocks, 1 or more (the C++
/// API reads 0 as not given, which a Python caller never means).
unsigned numLayers(py::handle V) {
  const int64_t N = V.cast<int64_t>();
  if (N < 1 || N > int64_t(UINT32_MAX))
    throw py::value_error("recompute_num_layers must be at least 1 (the "
                          "blocks full recomputation reruns together, or of "
                          "each pipeline chunk)");
  return unsigned(N);
}

/// Sets the strategy option Key, which perfc.predict's train dict and
/// perfc.plan's options share (Options: TrainOptions or PlanOptions, whose
/// fields of these names take the same values, pinned where optional);
/// false for another key.
template <typename Options>
bool setStrategyKey(Options &O, const std::string &Key, py::handle V) {
  if (Key == "dp")
    O.dp = V.cast<unsigned>();
  else if (Key == "tp")
    O.tp = V.cast<unsigned>();
  else if (Key == "pp")
    O.pp = V.cast<unsigned>();
  else if (Key == "vp")
    O.vp = V.cast<unsigned>();
  else if (Key == "cp")
    O.cp = V.cast<unsigned>();
  else if (Key == "ep")
    O.ep = V.cast<unsigned>();
  else if (Key == "cp_comm")
    O.cpComm = V.cast<std::string>();
  else if (Key == "sp")
    O.sp = V.cast<bool>();
  else if (Key == "tp_comm_overlap")
    O.tpCommOverlap = V.cast<bool>();
  else if (Key == "overlap_param_gather")
    O.overlapParamGather = V.cast<bool>();
  else if (Key == "overlap_moe_expert_parallel_comm")
    O.overlapMoeExpertParallelComm = V.cast<bool>();
  else if (Key == "flash_attention")
    O.flashAttention = V.cast<bool>();
  else if (Key == "global_batch")
    O.globalBatch = V.cast<int64_t>();
  else if (Key == "zero")
    O.zero = V.cast<unsigned>();
  else if (Key == "recompute")
    O.recompute = V.cast<std::string>();
  else if (Key == "recompute_modules")
    O.recomputeModules = moduleNames(V);
  else if (Key == "recompute_method")
    O.recomputeMethod = V.cast<std::string>();
  else if (Key == "recompute_num_layers")
    O.recomputeNumLayers = numLayers(V);
  else if (Key == "dtype")
    O.dtype = V.cast<std::string>();
  else if (Key == "optimizer")
    O.optimizer = V.cast<std::string>();
  else if (Key == "partition")
    O.partition = V.cast<std::string>();
  else if (Key == "grad_compression")
    O.gradCompression = V.cast<std::string>();
  else if (Key == "comm_protocol")
    O.commProtocol = V.cast<std::string>();
  else
    return false;
  return true;
}

ImportOptions importOptions(py::object Batch, py::object Dims, bool Unknown) {
  ImportOptions O;
  if (!Batch.is_none())
    O.batch = Batch.cast<int64_t>();
  if (!Dims.is_none())
    for (auto [K, V] : Dims.cast<py::dict>())
      O.dims.emplace_back(K.cast<std::string>(), V.cast<int64_t>());
  O.allowUnknownShapes = Unknown;
  return O;
}

/// The keyword arguments predict() and predict_json() share besides
/// compute_type, fusion, train and launch_overhead_s.
struct PredictKwargs {
  std::string StorageType;
  std::string ConvLayout = "native";
  bool Place = false;
  bool Timings = false;              ///< predict_json: the placement's solve_s.
  unsigned Tp = 1;                   ///< Tensor-parallel inference (as --tp).
  bool FlashAttention = false;       ///< Inference (as --flash-attention).
  std::string CommProtocol = "auto"; ///< Tp's exchanges (--comm-protocol).
  /// Bytes each device keeps for the runtime (--memory-reserve); None: 0.
  py::object MemoryReserve = py::none();
  unsigned Ep = 1; ///< Expert-parallel serving (as --ep without --train).
  /// Serving plan (as --plan without --train), over up to this many
  /// devices (0: the first node's).
  bool ServePlan = false;
  unsigned ServePlanDevices = 0;
  /// Its objective and latency bound (as --objective, --max-latency).
  std::string ServePlanObjective = "latency";
  py::object ServePlanMaxLatency = py::none();
  unsigned Pp = 1; ///< Pipeline stages for inference (as --pp).
  /// The largest batch that fits (as --max-batch), within a bound in
  /// seconds where given (as --max-latency).
  bool MaxBatch = false;
  py::object MaxBatchLatency = py::none();
};

PredictOptions predictOptions(const std::string &ComputeType, bool Fusion,
                              py::object Train,
                              py::object LaunchOverhead = py::none(),
                              const PredictKwargs &Extra = {}) {
  PredictOptions O;
  O.computeType = ComputeType;
  O.storageType = Extra.StorageType;
  O.convLayout = Extra.ConvLayout;
  O.place = Extra.Place;
  O.timings = Extra.Timings;
  O.tensorParallel = Extra.Tp;
  O.expertParallel = Extra.Ep;
  O.pipelineParallel = Extra.Pp;
  O.servePlan = Extra.ServePlan;
  O.servePlanDevices = Extra.ServePlanDevices;
  O.servePlanObjective = Extra.ServePlanObjective;
  if (!Extra.ServePlanMaxLatency.is_none())
    O.servePlanMaxLatencySeconds = Extra.ServePlanMaxLatency.cast<double>();
  O.maxBatch = Extra.MaxBatch;
  if (!Extra.MaxBatchLatency.is_none())
    O.maxBatchLatencySeconds = Extra.MaxBatchLatency.cast<double>();
  O.flashAttention = Extra.FlashAttention;
  O.commProtocol = Extra.CommProtocol;
  O.fusion = Fusion;
  if (!LaunchOverhead.is_none())
    O.launchOverheadSeconds = LaunchOverhead.cast<double>();
  if (!Extra.MemoryReserve.is_none())
    O.memoryReserveBytes = Extra.MemoryReserve.cast<double>();
  if (!Train.is_none() &&
      !(py::isinstance<py::bool_>(Train) && !Train.cast<bool>())) {
    TrainOptions TO;
    if (py::isinstance<py::dict>(Train))
      for (auto [K, V] : Train.cast<py::dict>()) {
        std::string Key = K.cast<std::string>();
        if (setStrategyKey(TO, Key, V))
          continue;
        if (Key == "moe_capacity")
          TO.moeCapacity = V.cast<double>();
        else if (Key == "input_rate")
          TO.inputRate = V.cast<double>();
        else
          throw py::value_error(
              "unknown train option '" + Key +
              "': use dp, tp, pp, vp, cp, cp_comm, ep, moe_capacity, sp, "
              "tp_comm_overlap, overlap_param_gather, "
              "overlap_moe_expert_parallel_comm, global_batch, "
              "recompute, recompute_modules, recompute_method, "
              "recompute_num_layers, dtype, optimizer, partition, "
              "grad_compression, comm_protocol, zero, "
              "input_rate, flash_attention");
      }
    else if (!py::isinstance<py::bool_>(Train))
      throw py::type_error("train: a dict of options, or True");
    O.train = TO;
  }
  return O;
}

/// S as a Python str. Names come from models and hardware files as
/// arbitrary bytes (ONNX does not check its strings): what is not UTF-8
/// becomes U+FFFD, as in the JSON report, where a plain conversion would
/// raise UnicodeDecodeError and lose the whole result.
py::str text(const std::string &S) {
  PyObject *O = PyUnicode_DecodeUTF8(
      S.data(), static_cast<Py_ssize_t>(S.size()), "replace");
  if (!O)
    throw py::error_already_set();
  return py::reinterpret_steal<py::str>(O);
}

Prediction run(const Model &M, const Hardware *Hw, const PredictOptions &O) {
  py::gil_scoped_release NoGil;
  return predict(M, Hw, O);
}

py::dict toDict(const Prediction &P, const Model &M, const Hardware *Hw,
                bool Ops) {
  py::dict D;
  D["model"] = text(M.name());
  D["nodes"] = M.numNodes();
  D["batch"] = M.batch();
  if (Hw) {
    D["hw"] = text(Hw->name());
    D["device"] = text(Hw->device());
  }
  D["params"] = P.params();
  D["flops"] = P.flops();
  D["macs"] = P.macs();
  D["bytes"] = P.bytes();
  if (auto L = P.latencySeconds())
    D["latency_s"] = *L;
  else
    D["latency_s"] = py::none();
  if (auto Tr = P.train()) {
    py::dict TD;
    TD["step_s"] = Tr->stepSeconds;
    TD["compute_s"] = Tr->computeSeconds;
    TD["comm_s"] = Tr->commSeconds;
    TD["exposed_comm_s"] = Tr->exposedCommSeconds;
    TD["bubble_s"] = Tr->bubbleSeconds;
    TD["optimizer_s"] = Tr->optimizerSeconds;
    TD["grad_accum_s"] = Tr->gradAccumSeconds;
    TD["samples_per_s"] = Tr->samplesPerSecond;
    TD["model_flops"] = Tr->modelFlops;
    TD["tflops_per_device"] = Tr->tflopsPerDevice;
    TD["input_s"] = Tr->inputSeconds;
    TD["input_bound"] = Tr->inputBound;
    TD["input_wait_s"] = Tr->inputWaitSeconds;
    TD["peak_bytes"] = Tr->peakBytes;
    TD["capacity_bytes"] = Tr->capacityBytes;
    TD["devices"] = Tr->devices;
    TD["global_batch"] = Tr->globalBatch;
    TD["micro_batches"] = Tr->microBatches;
    TD["fits"] = Tr->fits;
    TD["blocks"] = Tr->blocks;
    TD["blocks_from"] = Tr->blocksFromStructure ? "structure" : "names";
    D["train"] = TD;
  }
  if (auto Mem = P.memory()) {
    // The JSON's "memory" keys (inference), without the explanation.
    py::dict MD;
    MD["peak_bytes"] = Mem->peakBytes;
    MD["weights_bytes"] = Mem->weightsBytes;
    MD["activations_bytes"] = Mem->activationsBytes;
    MD["inputs_bytes"] = Mem->inputsBytes;
    MD["capacity_bytes"] = Mem->capacityBytes;
    MD["fits"] = Mem->fits;
    MD["complete"] = Mem->complete;
    MD["peak_at"] = text(Mem->peakAt);
    if (Mem->maxBatch) {
      MD["max_batch"] = *Mem->maxBatch;
      MD["bytes_per_sample"] = Mem->bytesPerSample;
    }
    D["memory"] = MD;
  }
  if (auto TP = P.tensorParallel()) {
    // The JSON's "tensor_parallel" keys, without the explanation.
    py::dict TD;
    TD["degree"] = TP->degree;
    TD["link"] = text(TP->link);
    TD["all_reduces"] = TP->allReduces;
    TD["all_gathers"] = TP->allGathers;
    TD["kernels_s"] = TP->kernelSeconds;
    TD["comm_s"] = TP->commSeconds;
    D["tensor_parallel"] = TD;
  }
  if (auto EP = P.expertParallel()) {
    // The JSON's "expert_parallel" keys, without the explanation.
    py::dict ED;
    ED["degree"] = EP->degree;
    ED["link"] = text(EP->link);
    ED["all_to_alls"] = EP->allToAlls;
    ED["all_to_all_bytes"] = EP->allToAllBytes;
    ED["kernels_s"] = EP->kernelSeconds;
    ED["comm_s"] = EP->commSeconds;
    D["expert_parallel"] = ED;
  }
  if (auto PP = P.pipelineParallel()) {
    // The JSON's "pipeline_parallel" keys, without names and explanation.
    py::dict PD;
    PD["degree"] = PP->degree;
    PD["in_flight_batches"] = PP->inFlightBatches;
    PD["latency_s"] = PP->latencySeconds;
    PD["interval_s"] = PP->intervalSeconds;
    PD["samples_per_s"] = PP->samplesPerSecond;
    py::list Stages;
    for (const auto &St : PP->stages) {
      py::dict SD;
      SD["first_block"] = St.firstBlock;
      SD["last_block"] = St.lastBlock;
      SD["kernels"] = St.kernels;
      SD["kernels_s"] = St.kernelSeconds;
      SD["send_bytes"] = St.sendBytes;
      SD["send_s"] = St.sendSeconds;
      SD["time_s"] = St.kernelSeconds + St.sendSeconds;
      SD["peak_bytes"] = St.peakBytes;
      SD["fits"] = St.fits;
      Stages.append(SD);
    }
    PD["stages"] = Stages;
    D["pipeline_parallel"] = PD;
  }
  if (auto SP = P.servingPlan()) {
    // The JSON's "serving_plan" keys.
    py::dict SD;
    SD["objective"] = SP->objective;
    if (SP->maxLatencySeconds)
      SD["max_latency_s"] = *SP->maxLatencySeconds;
    SD["samples"] = SP->samples;
    const ServingPlanSummary::Layout &C = SP->layouts[SP->chosen];
    py::dict Chosen;
    Chosen["split"] = C.split;
    Chosen["devices"] = C.devices;
    Chosen["pp"] = C.stages;
    SD["chosen"] = Chosen;
    py::list Layouts;
    for (const ServingPlanSummary::Layout &L : SP->layouts) {
      py::dict LD;
      LD["split"] = L.split;
      LD["devices"] = L.devices;
      LD["pp"] = L.stages;
      LD["latency_s"] = L.latencySeconds;
      LD["interval_s"] = L.intervalSeconds;
      LD["samples"] = L.samples;
      if (SP->atMaxBatch)
        LD["at_max_batch"] = L.atMaxBatch;
      const double Rate =
          L.intervalSeconds > 0 ? L.samples / L.intervalSeconds : 0.0;
      LD["samples_per_s"] = Rate;
      LD["samples_per_s_per_device"] = Rate / L.devices;
      LD["peak_bytes"] = L.peakBytes;
      LD["capacity_bytes"] = L.capacityBytes;
      LD["fits"] = L.fits;
      if (L.maxBatch)
        LD["max_batch"] = *L.maxBatch;
      Layouts.append(LD);
    }
    SD["candidates"] = Layouts;
    py::list Skipped;
    for (const std::string &Why : SP->skipped)
      Skipped.append(text(Why));
    SD["skipped"] = Skipped;
    SD["at_max_batch"] = SP->atMaxBatch;
    if (SP->atMaxBatch) {
      py::list NotServed;
      for (const std::string &Why : SP->notServed)
        NotServed.append(text(Why));
      SD["not_served"] = NotServed;
    }
    D["serving_plan"] = SD;
  }
  if (auto B = P.batchSearch()) {
    // The JSON's "batch_search".
    py::dict BD;
    BD["batch"] = B->batch;
    BD["from_batch"] = B->fromBatch;
    BD["estimate"] = B->estimate;
    BD["limit"] = B->limit;
    if (B->maxLatencySeconds)
      BD["max_latency_s"] = *B->maxLatencySeconds;
    py::list Tried;
    for (const BatchSearchSummary::Probe &T : B->tried) {
      py::dict TD;
      TD["batch"] = T.batch;
      TD["fits"] = T.fits;
      TD["latency_s"] = T.latencySeconds;
      if (T.meetsLatency)
        TD["meets_latency"] = *T.meetsLatency;
      Tried.append(TD);
    }
    BD["tried"] = Tried;
    D["batch_search"] = BD;
  }
  if (auto Pl = P.placement()) {
    // The JSON's "placement" keys, without the per-kernel assignment
    // (predict_json has it).
    py::dict PD;
    PD["latency_s"] = Pl->latencySeconds;
    PD["transfers_s"] = Pl->transferSeconds;
    PD["transfers"] = Pl->transfers;
    PD["transfer_bytes"] = Pl->transferBytes;
    PD["optimal"] = Pl->optimal;
    PD["method"] = Pl->method;
    py::list Devices, Single;
    for (const PlacementSummary::Processor &Pr : Pl->processors) {
      py::dict Dev;
      Dev["name"] = text(Pr.name);
      Dev["kernels"] = Pr.kernels;
      Dev["time_s"] = Pr.seconds;
      Devices.append(Dev);
      py::dict Alone;
      Alone["device"] = text(Pr.name);
      Alone["latency_s"] = Pr.aloneSeconds
                               ? py::object(py::float_(*Pr.aloneSeconds))
                               : py::object(py::none());
      Single.append(Alone);
    }
    PD["devices"] = Devices;
    PD["single_device"] = Single;
    D["placement"] = PD;
  }
  if (Ops) {
    py::list L;
    for (const OpRow &R : P.ops()) {
      py::dict O;
      O["name"] = text(R.name);
      O["op"] = text(R.op);
      O["output_shape"] = text(R.outputShape);
      O["params"] = R.params;
      O["flops"] = R.flops;
      O["macs"] = R.macs;
      O["bytes_read"] = R.bytesRead;
      O["bytes_written"] = R.bytesWritten;
      if (R.seconds) {
        O["seconds"] = *R.seconds;
        O["bound"] = R.bound;
        O["exec"] = R.exec;
      }
      L.append(std::move(O));
    }
    D["ops"] = std::move(L);
  }
  py::list W;
  for (const std::string &S : P.warnings())
    W.append(text(S));
  D["warnings"] = std::move(W);
  return D;
}

/// PlanOptions from a dict of options (perfc.plan's options and keyword
/// arguments), keys as the CLI's flags in snake case.
PlanOptions planOptions(py::dict Options) {
  PlanOptions O;
  for (auto [K, V] : Options) {
    std::string Key = K.cast<std::string>();
    if (setStrategyKey(O, Key, V))
      continue;
    if (Key == "devices")
      O.devices = V.cast<unsigned>();
    else if (Key == "planner")
      O.planner = V.cast<std::string>();
    else if (Key == "time_limit")
      O.timeLimitSeconds = V.cast<double>();
    else if (Key == "top")
      O.top = V.cast<unsigned>();
    else if (Key == "pareto")
      O.pareto = V.cast<bool>();
    else if (Key == "timings")
      O.timings = V.cast<bool>();
    else if (Key == "cross_node_tp")
      O.crossNodeTp = V.cast<bool>();
    else if (Key == "framework")
      O.framework = V.cast<std::string>();
    else if (Key == "memory_reserve_bytes")
      O.memoryReserveBytes = V.cast<double>();
    else if (Key == "micro_batch")
      O.microBatch = V.cast<int64_t>();
    else if (Key == "compute_type")
      O.computeType = V.cast<std::string>();
    else if (Key == "fusion")
      O.fusion = V.cast<bool>();
    else
      throw py::value_error(
          "unknown plan option '" + Key +
          "': use global_batch, devices, planner, time_limit, top, pareto, "
          "cross_node_tp, dp, tp, cp, cp_comm, ep, pp, vp, zero, sp, "
          "tp_comm_overlap, overlap_param_gather, "
          "overlap_moe_expert_parallel_comm, flash_attention, "
          "micro_batch, recompute, recompute_modules, recompute_method, "
          "recompute_num_layers, "
          "dtype, optimizer, partition, grad_compression, comm_protocol, "
          "compute_type, fusion, timings, memory_reserve_bytes");
  }
  return O;
}

/// perfc.plan's options argument merged with its keyword arguments.
std::string planJson(const Model &M, const Hardware &Hw, py::object Options,
                     py::kwargs Kwargs, bool Compact) {
  py::dict All;
  if (!Options.is_none()) {
    if (!py::isinstance<py::dict>(Options))
      throw py::type_error("options: a dict of plan options");
    for (auto [K, V] : Options.cast<py::dict>())
      All[K] = V;
  }
  for (auto [K, V] : Kwargs)
    All[K] = V;
  PlanOptions O = planOptions(All);
  py::gil_scoped_release NoGil;
  return toJson(plan(M, Hw, O), Compact);
}

const Hardware *hwOrNull(py::object Hw) {
  return Hw.is_none() ? nullptr : Hw.cast<const Hardware *>();
}

} // namespace

PYBIND11_MODULE(perfc, m) {
  m.doc() = "perfc: analytical performance predictions for ONNX models";
  m.attr("__version__") = version();
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  // Tried before register_exception's own translator (pybind11 tries the
  // last registered first): the message through text(), since one name in
  // it that is not UTF-8 made PyErr_SetString drop the whole message.
  py::register_exception_translator([](std::exception_ptr P) {
    try {
      if (P)
        std::rethrow_exception(P);
    } catch (const Error &E) {
      const py::object Type = py::module_::import("perfc").attr("Error");
      PyErr_SetObject(Type.ptr(), text(E.what()).ptr());
    }
  });

  py::class_<Hardware>(m, "Hardware")
      .def_static("load", &Hardware::load, py::arg("name_or_path"),
                  py::call_guard<py::gil_scoped_release>())
      .def_static("from_yaml", &Hardware::fromYaml, py::arg("text"),
                  py::arg("name") = "<yaml>")
      .def_static("bundled", &Hardware::bundled)
      .def_property_readonly("name",
                             [](const Hardware &H) { return text(H.name()); })
      .def_property_readonly("device",
                             [](const Hardware &H) { return text(H.device()); })
      .def_property_readonly("devices", &Hardware::devices)
      .def("__repr__", [](const Hardware &H) {
        return text("<perfc.Hardware '" + H.name() + "' device '" + H.device() +
                    "'>");
      });
  m.def(
      "load_hw", [](const std::string &S) { return Hardware::load(S); },
      py::arg("name_or_path"),
      "Loads a bundled hardware description by name, or a YAML file.");

  py::class_<Model>(m, "Model")
      .def_static(
          "from_onnx",
          [](py::object Src, py::object Batch, py::object Dims,
             bool AllowUnknownShapes, py::object Name) {
            ImportOptions O = importOptions(Batch, Dims, AllowUnknownShapes);
            if (py::isinstance<py::bytes>(Src) ||
                py::isinstance<py::bytearray>(Src) ||
                py::isinstance<py::memoryview>(Src)) {
              std::string Bytes = py::isinstance<py::bytes>(Src)
                                      ? Src.cast<std::string>()
                                      : py::bytes(Src).cast<std::string>();
              std::string N =
                  Name.is_none() ? "model.onnx" : Name.cast<std::string>();
              py::gil_scoped_release NoGil;
              return Model::fromOnnxBytes(Bytes, O, N);
            }
            std::string Path = py::str(Src).cast<std::string>();
            py::gil_scoped_release NoGil;
            return Model::fromOnnxFile(Path, O);
          },
          py::arg("path_or_bytes"), py::arg("batch") = py::none(),
          py::arg("dims") = py::none(), py::arg("allow_unknown_shapes") = false,
          py::arg("name") = py::none(),
          "An ONNX model from a path or from its serialized bytes.")
      .def_property_readonly("name",
                             [](const Model &M) { return text(M.name()); })
      .def_property_readonly("num_nodes", &Model::numNodes)
      .def_property_readonly("batch", &Model::batch)
      .def("__repr__", [](const Model &M) {
        return text("<perfc.Model '" + M.name() + "' " +
                    std::to_string(M.numNodes()) + " nodes>");
      });

  py::class_<T>(m, "Tensor").def_readonly("id", &T::Id);

  py::class_<ModelBuilder>(m, "ModelBuilder")
      .def(py::init<std::string, std::string>(), py::arg("name") = "model",
           py::arg("dtype") = "fp32")
      .def("input", &ModelBuilder::input, py::arg("name"), py::arg("shape"))
      .def("conv", &ModelBuilder::conv, py::arg("x"), py::arg("out_channels"),
           py::arg("kernel"), py::arg("stride") = 1, py::arg("pad") = -1,
           py::arg("groups") = 1, py::arg("bias") = true,
           py::arg("dilation") = 1)
      .def("depthwise_conv", &ModelBuilder::depthwiseConv, py::arg("x"),
           py::arg("kernel"), py::arg("stride") = 1, py::arg("pad") = -1)
      .def("gemm", &ModelBuilder::gemm, py::arg("x"), py::arg("out_features"),
           py::arg("bias") = true)
      .def("linear", &ModelBuilder::gemm, py::arg("x"), py::arg("out_features"),
           py::arg("bias") = true)
      .def("matmul", py::overload_cast<T, T>(&ModelBuilder::matmul),
           py::arg("a"), py::arg("b"))
      .def("matmul", py::overload_cast<T, int64_t>(&ModelBuilder::matmul),
           py::arg("x"), py::arg("out_features"))
      .def("batch_norm", &ModelBuilder::batchNorm, py::arg("x"))
      .def("layer_norm", &ModelBuilder::layerNorm, py::arg("x"))
      .def("add", &ModelBuilder::add, py::arg("a"), py::arg("b"))
      .def("mul", &ModelBuilder::mul, py::arg("a"), py::arg("b"))
      .def("relu", &ModelBuilder::relu, py::arg("x"))
      .def("relu6", &ModelBuilder::relu6, py::arg("x"))
      .def("sigmoid", &ModelBuilder::sigmoid, py::arg("x"))
      .def("tanh", &ModelBuilder::tanh, py::arg("x"))
      .def("hard_swish", &ModelBuilder::hardSwish, py::arg("x"))
      .def("max_pool", &ModelBuilder::maxPool, py::arg("x"), py::arg("kernel"),
           py::arg("stride") = 0, py::arg("pad") = 0)
      .def("avg_pool", &ModelBuilder::avgPool, py::arg("x"), py::arg("kernel"),
           py::arg("stride") = 0, py::arg("pad") = 0)
      .def("global_avg_pool", &ModelBuilder::globalAvgPool, py::arg("x"))
      .def("flatten", &ModelBuilder::flatten, py::arg("x"))
      .def("softmax", &ModelBuilder::softmax, py::arg("x"),
           py::arg("axis") = -1)
      .def("concat", &ModelBuilder::concat, py::arg("xs"), py::arg("axis") = 1)
      .def("output", &ModelBuilder::output, py::arg("x"))
      .def("shape", &ModelBuilder::shape, py::arg("x"))
      .def("build", &ModelBuilder::build);

  m.def(
      "predict",
      [](const Model &M, py::object Hw, const std::string &ComputeType,
         bool Fusion, py::object Train, bool Ops, py::object Launch,
         const std::string &StorageType, const std::string &ConvLayout,
         bool Place, unsigned Tp, bool Flash, const std::string &Protocol,
         py::object Reserve, unsigned Ep, bool ServePlan,
         unsigned ServePlanDevices, const std::string &Objective,
         py::object MaxLatency, unsigned Pp, bool MaxBatch,
         py::object MaxBatchLatency) {
        const Hardware *H = hwOrNull(Hw);
        Prediction P =
            run(M, H,
                predictOptions(ComputeType, Fusion, Train, Launch,
                               {StorageType, ConvLayout, Place, false, Tp,
                                Flash, Protocol, Reserve, Ep, ServePlan,
                                ServePlanDevices, Objective, MaxLatency, Pp,
                                MaxBatch, MaxBatchLatency}));
        return toDict(P, M, H, Ops);
      },
      py::arg("model"), py::arg("hw") = py::none(), py::kw_only(),
      py::arg("compute_type") = "", py::arg("fusion") = true,
      py::arg("train") = py::none(), py::arg("ops") = true,
      py::arg("launch_overhead_s") = py::none(), py::arg("storage_type") = "",
      py::arg("conv_layout") = "native", py::arg("place") = false,
      py::arg("tp") = 1, py::arg("flash_attention") = false,
      py::arg("comm_protocol") = "auto",
      py::arg("memory_reserve_bytes") = py::none(), py::arg("ep") = 1,
      py::arg("serve_plan") = false, py::arg("serve_plan_devices") = 0,
      py::arg("serve_plan_objective") = "latency",
      py::arg("serve_plan_max_latency_s") = py::none(), py::arg("pp") = 1,
      py::arg("max_batch") = false, py::arg("max_latency_s") = py::none(),
      "Predicts the model on hw (None: work only). train: a dict of "
      "training options (dp, tp, pp, recompute, dtype, ...) or True. "
      "launch_overhead_s: seconds per kernel launch instead of the "
      "description's (as --launch-overhead). storage_type: fp16, bf16, fp8 "
      "or int8 tensors, as a deployed engine stores them (as "
      "--storage-type); conv_layout: native, nchw or nhwc (as "
      "--conv-layout). place: each kernel on the processor of a SoC or "
      "mixed machine that minimizes latency (as --place). tp: inference "
      "split over that many devices of hw's cluster (as --tp); "
      "comm_protocol: its exchanges' protocol (as --comm-protocol). "
      "flash_attention: attention as FlashAttention runs it, the blocks "
      "above a causal mask's diagonal skipped (as --flash-attention; with "
      "train, its flash_attention key). memory_reserve_bytes: memory each "
      "device keeps for the runtime (as --memory-reserve). ep: a mixture "
      "of experts served over that many devices of hw's cluster, attention "
      "data-parallel and experts split (as --ep without --train). "
      "serve_plan: every layout (whole, tp, ep) up to serve_plan_devices "
      "(0: the first node's) predicted, the fastest that fits returned (as "
      "--plan without --train; serve_plan_objective 'throughput': the most "
      "samples/s per device, as --objective; serve_plan_max_latency_s: as "
      "--max-latency). pp: inference over that many pipeline stages of hw's "
      "cluster, each a tp group (as --pp without --train). max_batch: "
      "predicted at the largest batch that fits, the model imported again "
      "at each batch tried (as --max-batch; with serve_plan, each layout at "
      "its own, ranked by samples/s per device); max_latency_s: only "
      "batches whose step takes at most that (as --max-latency). Returns a "
      "dict: totals, latency_s, train, memory, tensor_parallel, "
      "expert_parallel, pipeline_parallel, serving_plan, batch_search, "
      "placement, "
      "ops (unless ops=False), warnings.");
  m.def(
      "predict_json",
      [](const Model &M, py::object Hw, const std::string &ComputeType,
         bool Fusion, py::object Train, bool Compact, py::object Launch,
         const std::string &StorageType, const std::string &ConvLayout,
         bool Place, bool Timings, unsigned Tp, bool Flash,
         const std::string &Protocol, py::object Reserve, unsigned Ep,
         bool ServePlan, unsigned ServePlanDevices,
         const std::string &Objective, py::object MaxLatency, unsigned Pp,
         bool MaxBatch, py::object MaxBatchLatency) {
        const Hardware *H = hwOrNull(Hw);
        Prediction P =
            run(M, H,
                predictOptions(ComputeType, Fusion, Train, Launch,
                               {StorageType, ConvLayout, Place, Timings, Tp,
                                Flash, Protocol, Reserve, Ep, ServePlan,
                                ServePlanDevices, Objective, MaxLatency, Pp,
                                MaxBatch, MaxBatchLatency}));
        py::gil_scoped_release NoGil;
        return toJson(P, Compact);
      },
      py::arg("model"), py::arg("hw") = py::none(), py::kw_only(),
      py::arg("compute_type") = "", py::arg("fusion") = true,
      py::arg("train") = py::none(), py::arg("compact") = false,
      py::arg("launch_overhead_s") = py::none(), py::arg("storage_type") = "",
      py::arg("conv_layout") = "native", py::arg("place") = false,
      py::arg("timings") = false, py::arg("tp") = 1,
      py::arg("flash_attention") = false, py::arg("comm_protocol") = "auto",
      py::arg("memory_reserve_bytes") = py::none(), py::arg("ep") = 1,
      py::arg("serve_plan") = false, py::arg("serve_plan_devices") = 0,
      py::arg("serve_plan_objective") = "latency",
      py::arg("serve_plan_max_latency_s") = py::none(), py::arg("pp") = 1,
      py::arg("max_batch") = false, py::arg("max_latency_s") = py::none(),
      "The CLI's JSON report (perfc MODEL --format json) as a string; "
      "timings: with place, the solver's run time too (as --timings); tp: "
      "as --tp; flash_attention: as --flash-attention; comm_protocol: as "
      "--comm-protocol; memory_reserve_bytes: as --memory-reserve; ep: as "
      "--ep without --train; serve_plan, serve_plan_devices, "
      "serve_plan_objective, serve_plan_max_latency_s: as --plan (and "
      "--devices, --objective, --max-latency) without --train; pp: as --pp "
      "without --train; max_batch, max_latency_s: as --max-batch and "
      "--max-latency.");
  m.def(
      "plan",
      [](const Model &M, const Hardware &Hw, py::object Options, bool Report,
         py::kwargs Kwargs) {
        std::string J = planJson(M, Hw, Options, Kwargs, /*Compact=*/true);
        py::object D = py::module_::import("json").attr("loads")(J);
        return Report ? D : py::object(D["plan"]);
      },
      py::arg("model"), py::arg("hw"), py::arg("options") = py::none(),
      py::kw_only(), py::arg("report") = false,
      "Plans the training of model on hw (perfc --train --plan): options is "
      "a dict (or keyword arguments) of global_batch (required), devices, "
      "planner, time_limit, top, pareto, cross_node_tp, pinned dp, tp, pp, "
      "vp, zero, sp, micro_batch, recompute, and dtype, optimizer, "
      "partition, grad_compression, compute_type, fusion, timings (the "
      "search's run times, which differ from run to run). Returns the CLI's "
      "JSON 'plan' object as a dict; report=True: the whole report (with "
      "'plans' and 'pareto' when asked for).");
  m.def(
      "plan_json",
      [](const Model &M, const Hardware &Hw, py::object Options, bool Compact,
         py::kwargs Kwargs) {
        return planJson(M, Hw, Options, Kwargs, Compact);
      },
      py::arg("model"), py::arg("hw"), py::arg("options") = py::none(),
      py::kw_only(), py::arg("compact") = false,
      "The CLI's JSON report of perfc --train --plan, as a string.");
}
