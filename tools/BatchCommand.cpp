//===- BatchCommand.cpp - perfc batch FILE.jsonl [--jobs N] ---------------===//
//
// Sweeps: one prediction per input line, through the library API
// (include/perfc/perfc.h), on a pool of threads. Each line is a JSON object
//
//   {"model": "m.onnx", "hw": "a100-sxm4-80gb", "batch": 8,
//    "dims": {"seq": 128}, "compute_type": "fp16", "storage_type": "fp16",
//    "conv_layout": "nchw", "fusion": true,
//    "allow_unknown_shapes": false, "launch_overhead_s": 1e-6, "tp": 4,
//    "comm_protocol": "auto", "flash_attention": false,
//    "memory_reserve_bytes": 4e9,
//    "train": {"dp": 8, "recompute": "full", "input_rate": 17800}}
//
// ("model" required; "train" also takes true, and its "micro_batch" sets
// the batch as --micro-batch does; "tp" and "pp" split an inference as --tp
// and --pp do, "ep"
// serves a mixture of experts as --ep does without --train,
// "comm_protocol" prices its exchanges as --comm-protocol does,
// "flash_attention" runs its attention as --flash-attention does,
// "max_batch" and "max_latency_s" predict at the largest batch as
// --max-batch and --max-latency do). Each
// output line is, in input order, the JSON `perfc MODEL --format json` prints,
// on one line, or
// {"line":N,"error":"..."} for a line that fails; the others go on. Blank
// lines and lines starting with '#' give no output. Hardware descriptions
// are loaded once, models once per (path, batch, dims) and shared by the
// threads. Exit status 1 when any line failed.
//
//===----------------------------------------------------------------------===//
#include "perfc/perfc.h"
#include "support/JsonText.h"
#include "tools/CliCommon.h"
#include "tools/Commands.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

using namespace perfc;
namespace cl = llvm::cl;

namespace {

struct Job {
  unsigned Line = 0;
  std::string Model, Hw;
  api::ImportOptions Import;
  api::PredictOptions Predict;
  std::string Error; ///< Set: the line is malformed.
};

/// Parses one line; on failure sets Job::Error.
Job parseLine(unsigned Line, llvm::StringRef Text) {
  Job J;
  J.Line = Line;
  auto Fail = [&](const std::string &What) {
    J.Error = What;
    return J;
  };
  auto Doc = llvm::json::parse(Text);
  if (!Doc)
    return Fail("not JSON: " + llvm::toString(Doc.takeError()));
  const llvm::json::Object *O = Doc->getAsObject();
  if (!O)
    return Fail("expected a JSON object");
  static constexpr llvm::StringLiteral Keys[] = {"model",
                                                 "hw",
                                                 "batch",
                                                 "dims",
                                                 "train",
                                                 "compute_type",
                                                 "storage_type",
                                                 "conv_layout",
                                                 "fusion",
                                                 "allow_unknown_shapes",
                                                 "launch_overhead_s",
                                                 "tp",
                                                 "ep",
                                                 "pp",
                                                 "serve_plan",
                                                 "serve_plan_devices",
                                                 "serve_plan_objective",
                                                 "serve_plan_max_latency_s",
                                                 "max_batch",
                                                 "max_latency_s",
                                                 "comm_protocol",
                                                 "flash_attention",
                                                 "memory_reserve_bytes"};
  for (const auto &KV : *O)
    if (!llvm::is_contained(Keys, llvm::StringRef(KV.first)))
      return Fail("unknown key '" + KV.first.str() + "': use " +
                  llvm::join(std::begin(Keys), std::end(Keys), ", "));
  auto Model = O->getString("model");
  if (!Model || Model->empty())
    return Fail("'model' (a path to an ONNX file) is missing or not a string");
  J.Model = Model->str();
  if (O->get("hw")) {
    auto Hw = O->getString("hw");
    if (!Hw)
      return Fail("'hw' must be a string (a bundled name or a YAML path)");
    J.Hw = Hw->str();
  }
  if (O->get("batch")) {
    auto B = O->getInteger("batch");
    if (!B || *B <= 0)
      return Fail("'batch' must be a positive integer");
    J.Import.batch = *B;
  }
  if (const llvm::json::Value *D = O->get("dims")) {
    const llvm::json::Object *DO = D->getAsObject();
    if (!DO)
      return Fail("'dims' must be an object {\"NAME\": SIZE}");
    for (const auto &KV : *DO) {
      auto V = KV.second.getAsInteger();
      if (!V || *V <= 0)
        return Fail("'dims." + KV.first.str() + "' must be a positive integer");
      J.Import.dims.emplace_back(KV.first.str(), *V);
    }
    // json::Object is unordered: bind in name order, deterministically.
    std::sort(J.Import.dims.begin(), J.Import.dims.end());
  }
  // Names the library checks itself (unknown types and layouts).
  for (auto [Key, Into] : {std::pair<llvm::StringRef, std::string *>{
                               "compute_type", &J.Predict.computeType},
                           {"storage_type", &J.Predict.storageType},
                           {"conv_layout", &J.Predict.convLayout},
                           {"comm_protocol", &J.Predict.commProtocol}})
    if (O->get(Key)) {
      auto S = O->getString(Key);
      if (!S)
        return Fail("'" + Key.str() + "' must be a string");
      *Into = S->str();
    }
  // Switches: --no-fusion, --flash-attention (inference; a step's is
  // train.flash_attention), --plan and --max-batch without --train,
  // --allow-unknown-shapes; the library checks how they combine.
  for (auto [Key, Into] :
       {std::pair<llvm::StringRef, bool *>{"fusion", &J.Predict.fusion},
        {"flash_attention", &J.Predict.flashAttention},
        {"serve_plan", &J.Predict.servePlan},
        {"max_batch", &J.Predict.maxBatch},
        {"allow_unknown_shapes", &J.Import.allowUnknownShapes}})
    if (O->get(Key)) {
      auto F = O->getBoolean(Key);
      if (!F)
        return Fail("'" + Key.str() + "' must be true or false");
      *Into = *F;
    }
  // Quantities, whose ranges are checked where they are applied
  // (hw::setLaunchOverhead, hw::reserveMemory, the serving plan and the
  // max-batch search): --launch-overhead, --memory-reserve, --max-latency
  // with --max-batch and with --plan.
  for (auto [Key, Into, Unit] :
       {std::tuple<llvm::StringRef, std::optional<double> *, const char *>{
            "launch_overhead_s", &J.Predict.launchOverheadSeconds, "seconds"},
        {"memory_reserve_bytes", &J.Predict.memoryReserveBytes, "bytes"},
        {"max_latency_s", &J.Predict.maxBatchLatencySeconds, "seconds"},
        {"serve_plan_max_latency_s", &J.Predict.servePlanMaxLatencySeconds,
         "seconds"}})
    if (O->get(Key)) {
      auto N = O->getNumber(Key);
      if (!N)
        return Fail("'" + Key.str() + "' must be a number of " + Unit);
      *Into = *N;
    }
  if (O->get("serve_plan_objective")) {
    auto S = O->getString("serve_plan_objective");
    if (!S)
      return Fail("'serve_plan_objective' must be a string: latency or "
                  "throughput");
    J.Predict.servePlanObjective = S->str();
  }
  // Device counts: tensor-parallel inference (--tp), expert-parallel
  // serving (--ep without --train), the largest layout a serving plan
  // tries (--devices with --plan); the library checks the rest.
  for (auto [Key, Into, What] :
       {std::tuple<llvm::StringRef, unsigned *, const char *>{
            "tp", &J.Predict.tensorParallel,
            "the devices an inference is split over"},
        {"ep", &J.Predict.expertParallel,
         "the devices a mixture of experts is served over"},
        {"pp", &J.Predict.pipelineParallel,
         "the pipeline stages an inference is split into"},
        {"serve_plan_devices", &J.Predict.servePlanDevices,
         "the largest layout a serving plan tries"}})
    if (O->get(Key)) {
      auto N = O->getInteger(Key);
      if (!N || *N < 1 || *N > std::numeric_limits<unsigned>::max())
        return Fail("'" + Key.str() + "' must be an integer >= 1 (" + What +
                    ")");
      *Into = unsigned(*N);
    }
  if (const llvm::json::Value *T = O->get("train")) {
    if (auto B = T->getAsBoolean()) {
      if (*B)
        J.Predict.train = api::TrainOptions();
    } else if (const llvm::json::Object *TO = T->getAsObject()) {
      api::TrainOptions Tr;
      for (const auto &KV : *TO) {
        llvm::StringRef K = KV.first;
        const llvm::json::Value &V = KV.second;
        auto Int = [&](int64_t Min) -> std::optional<int64_t> {
          auto I = V.getAsInteger();
          if (!I || *I < Min)
            return std::nullopt;
          return *I;
        };
        auto Str = [&]() -> std::optional<std::string> {
          if (auto S = V.getAsString())
            return S->str();
          return std::nullopt;
        };
        std::optional<int64_t> I;
        std::optional<std::string> S;
        if (K == "dp" || K == "tp" || K == "pp" || K == "vp" || K == "cp" ||
            K == "ep") {
          // Above 2^32 - 1 the degree would wrap to another number.
          if (!(I = Int(1)) || *I > int64_t(UINT32_MAX))
            return Fail("'train." + K.str() +
                        "' must be an integer from 1 to 4294967295");
          (K == "dp"   ? Tr.dp
           : K == "tp" ? Tr.tp
           : K == "pp" ? Tr.pp
           : K == "cp" ? Tr.cp
           : K == "ep" ? Tr.ep
                       : Tr.vp) = unsigned(*I);
        } else if (K == "zero") {
          if (!(I = Int(0)) || *I > 3)
            return Fail("'train.zero' must be a ZeRO stage 0..3");
          Tr.zero = unsigned(*I);
        } else if (K == "global_batch") {
          if (!(I = Int(1)))
            return Fail("'train.global_batch' must be a positive integer");
          Tr.globalBatch = *I;
        } else if (K == "recompute_num_layers") {
          if (!(I = Int(1)) || *I > UINT32_MAX)
            return Fail("'train.recompute_num_layers' must be a positive "
                        "integer (blocks per group or per chunk)");
          Tr.recomputeNumLayers = unsigned(*I);
        } else if (K == "micro_batch") {
          if (!(I = Int(1)))
            return Fail("'train.micro_batch' must be a positive integer");
          J.Import.batch = *I;
        } else if (K == "input_rate") {
          auto R = V.getAsNumber();
          if (!R)
            return Fail("'train.input_rate' must be a number of samples per "
                        "second");
          Tr.inputRate = *R;
        } else if (K == "moe_capacity") {
          auto R = V.getAsNumber();
          if (!R)
            return Fail("'train.moe_capacity' must be a number");
          Tr.moeCapacity = *R;
        } else if (K == "sp" || K == "flash_attention" ||
                   K == "tp_comm_overlap" || K == "overlap_param_gather" ||
                   K == "overlap_moe_expert_parallel_comm") {
          auto B = V.getAsBoolean();
          if (!B)
            return Fail("'train." + K.str() + "' must be true or false");
          (K == "sp"                     ? Tr.sp
           : K == "flash_attention"      ? Tr.flashAttention
           : K == "tp_comm_overlap"      ? Tr.tpCommOverlap
           : K == "overlap_param_gather" ? Tr.overlapParamGather
                                         : Tr.overlapMoeExpertParallelComm) =
              *B;
        } else if (K == "recompute" || K == "dtype" || K == "optimizer" ||
                   K == "partition" || K == "grad_compression" ||
                   K == "comm_protocol" || K == "cp_comm" ||
                   K == "recompute_method") {
          if (!(S = Str()))
            return Fail("'train." + K.str() + "' must be a string");
          (K == "recompute"          ? Tr.recompute
           : K == "dtype"            ? Tr.dtype
           : K == "optimizer"        ? Tr.optimizer
           : K == "partition"        ? Tr.partition
           : K == "grad_compression" ? Tr.gradCompression
           : K == "cp_comm"          ? Tr.cpComm
           : K == "recompute_method" ? Tr.recomputeMethod
                                     : Tr.commProtocol) = *S;
        } else if (K == "recompute_modules") {
          // An array of names, or one string of names separated by commas
          // (as --recompute-modules takes them); a blank entry is kept, for
          // the library to refuse as the CLI does.
          Tr.recomputeModules.clear();
          if ((S = Str())) {
            llvm::SmallVector<llvm::StringRef, 8> Parts;
            llvm::StringRef(*S).split(Parts, ',', -1, /*KeepEmpty=*/true);
            for (llvm::StringRef P : Parts)
              Tr.recomputeModules.push_back(P.trim().str());
          } else if (const llvm::json::Array *A = V.getAsArray()) {
            for (const llvm::json::Value &E : *A) {
              llvm::Optional<llvm::StringRef> N = E.getAsString();
              if (!N)
                return Fail("'train.recompute_modules' must be an array of "
                            "module names");
              Tr.recomputeModules.push_back(N->str());
            }
          } else {
            return Fail("'train.recompute_modules' must be an array of module "
                        "names or a string of them separated by commas");
          }
        } else {
          return Fail(
              "unknown key 'train." + K.str() +
              "': use dp, tp, pp, vp, cp, cp_comm, ep, moe_capacity, sp, "
              "tp_comm_overlap, "
              "overlap_param_gather, overlap_moe_expert_parallel_comm, "
              "micro_batch, "
              "global_batch, recompute, recompute_modules, recompute_method, "
              "recompute_num_layers, dtype, optimizer, "
              "partition, grad_compression, comm_protocol, zero, "
              "input_rate, flash_attention");
        }
      }
      J.Predict.train = Tr;
    } else {
      return Fail("'train' must be true or an object of training options");
    }
  }
  return J;
}

/// Loads each distinct key once, on first use, from any thread.
template <typename T> class OnceCache {
public:
  template <typename Load>
  const T &get(const std::string &Key, Load L, std::string &Error) {
    Slot *S;
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      std::unique_ptr<Slot> &P = Slots[Key];
      if (!P)
        P = std::make_unique<Slot>();
      S = P.get();
    }
    std::call_once(S->Once, [&] {
      try {
        S->Value.emplace(L());
      } catch (const api::Error &E) {
        S->Error = E.what();
      }
    });
    Error = S->Error;
    return *S->Value;
  }

private:
  struct Slot {
    std::once_flag Once;
    std::optional<T> Value;
    std::string Error;
  };
  std::mutex Mutex;
  std::map<std::string, std::unique_ptr<Slot>> Slots;
};

std::string errorLine(unsigned Line, const std::string &Message) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  {
    // In this order (a json::Object would sort its keys).
    llvm::json::OStream J(OS);
    J.object([&] {
      J.attribute("line", int64_t(Line));
      J.attribute("error", jsonText(Message));
    });
  }
  return OS.str();
}

} // namespace

int perfc::cli::runBatch(int Argc, const char *const *Argv) {
  cl::OptionCategory Category("perfc batch options");
  cl::opt<std::string> InputPath(cl::Positional, cl::desc("<jobs.jsonl>"),
                                 cl::cat(Category));
  cl::opt<unsigned> Jobs("jobs", cl::desc("Threads (default: every core)"),
                         cl::init(0), cl::value_desc("N"), cl::cat(Category));
  cl::opt<std::string> OutputPath("o", cl::desc("Write the results to FILE"),
                                  cl::value_desc("FILE"), cl::cat(Category));
  cl::HideUnrelatedOptions(Category);
  if (!parseOptions(Argc, Argv,
                    "perfc batch: one prediction per JSON line, results as "
                    "JSON lines in input order\n\n  perfc batch FILE.jsonl "
                    "[--jobs N] [-o FILE]\n  (FILE '-': standard input)\n"))
    return 1;
  if (InputPath.empty())
    return fail("no input given: usage 'perfc batch FILE.jsonl' (one JSON "
                "object per line, e.g. {\"model\": \"m.onnx\", \"hw\": "
                "\"a100-sxm4-80gb\"})");
  auto Buf = InputPath == "-" ? llvm::MemoryBuffer::getSTDIN()
                              : llvm::MemoryBuffer::getFile(InputPath);
  if (!Buf)
    return fail(InputPath +
                ": cannot read the file: " + Buf.getError().message());

  std::vector<Job> Work;
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  (*Buf)->getBuffer().split(Lines, '\n');
  for (unsigned I = 0; I < Lines.size(); ++I) {
    llvm::StringRef L = Lines[I].trim();
    if (L.empty() || L.startswith("#"))
      continue;
    Work.push_back(parseLine(I + 1, L));
  }

  OnceCache<api::Hardware> HwCache;
  OnceCache<api::Model> ModelCache;
  std::vector<std::string> Out(Work.size());
  std::vector<char> Failed(Work.size(), 0);
  std::atomic<size_t> Next{0};
  auto Worker = [&] {
    for (size_t I; (I = Next.fetch_add(1)) < Work.size();) {
      const Job &J = Work[I];
      auto Err = [&](const std::string &M) {
        Out[I] = errorLine(J.Line, M);
        Failed[I] = 1;
      };
      if (!J.Error.empty()) {
        Err(J.Error);
        continue;
      }
      std::string E;
      const api::Hardware *Hw = nullptr;
      if (!J.Hw.empty()) {
        Hw = &HwCache.get(
            J.Hw, [&] { return api::Hardware::load(J.Hw); }, E);
        if (!E.empty()) {
          Err(E);
          continue;
        }
      }
      std::string Key =
          J.Model + '\0' +
          (J.Import.batch ? std::to_string(*J.Import.batch) : "-") +
          (J.Import.allowUnknownShapes ? "u" : "s");
      for (const auto &[N, V] : J.Import.dims)
        Key += '\0' + N + '=' + std::to_string(V);
      const api::Model &M = ModelCache.get(
          Key, [&] { return api::Model::fromOnnxFile(J.Model, J.Import); }, E);
      if (!E.empty()) {
        Err(E);
        continue;
      }
      try {
        Out[I] = api::toJson(api::predict(M, Hw, J.Predict), true);
      } catch (const api::Error &X) {
        Err(X.what());
      }
    }
  };
  unsigned N = Jobs ? Jobs : std::max(1u, std::thread::hardware_concurrency());
  N = std::max<size_t>(1, std::min<size_t>(N, Work.size()));
  std::vector<std::thread> Pool;
  for (unsigned I = 1; I < N; ++I)
    Pool.emplace_back(Worker);
  Worker();
  for (std::thread &T : Pool)
    T.join();

  int Status = writeOutput(OutputPath, [&](llvm::raw_ostream &OS) {
    for (const std::string &S : Out)
      OS << S << '\n';
  });
  if (Status)
    return Status;
  return std::count(Failed.begin(), Failed.end(), 1) ? 1 : 0;
}
