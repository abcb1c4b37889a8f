//===- PlanJson.cpp - Reading a training plan perfc wrote -----------------===//
#include "tools/PlanJson.h"

#include "ir/Shape.h"
#include "passes/TrainOptionNames.h"
#include "support/RegularFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace perfc;

namespace {

/// A plan perfc writes is a few KB, its whole JSON output a few MB per
/// million nodes; beyond this a file is not a plan.
constexpr uint64_t MaxPlanBytes = uint64_t(256) << 20;

/// perfc's output nests about six levels deep. LLVM's JSON parser and
/// json::Value's destructor recurse once per level, so deeper text could
/// exhaust the stack; it is refused before parsing.
constexpr unsigned MaxNesting = 64;

llvm::Error planError(llvm::StringRef Name, const llvm::Twine &What) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 Name + ": " + What);
}

/// "NAME:LINE:COL: WHAT", as compilers print a place in a file.
llvm::Error planErrorAt(llvm::StringRef Name, size_t Line, size_t Column,
                        const llvm::Twine &What) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 Name + ":" + llvm::Twine(Line) + ":" +
                                     llvm::Twine(Column) + ": " + What);
}

/// Field = Value where a name stood for one; false where it did not.
template <typename T> bool set(T &Field, llvm::Optional<T> Value) {
  if (!Value)
    return false;
  Field = *Value;
  return true;
}

/// Text from the file as it goes into a message: control bytes escaped so
/// that the error stays one line, and long strings cut.
std::string quoted(llvm::StringRef S) {
  constexpr size_t MaxShown = 64;
  std::string Out = "'";
  for (char C : S.take_front(MaxShown)) {
    if (static_cast<unsigned char>(C) < 0x20 || C == 0x7f) {
      // As llvm::printEscapedString and the other loaders write them.
      Out += '\\';
      Out += llvm::hexdigit((C >> 4) & 0xf);
      Out += llvm::hexdigit(C & 0xf);
    } else {
      Out += C;
    }
  }
  if (S.size() > MaxShown)
    Out += "...";
  return Out + "'";
}

/// 1-based line and column of byte Offset of Text.
std::pair<size_t, size_t> lineColumn(llvm::StringRef Text, size_t Offset) {
  llvm::StringRef Before = Text.take_front(Offset);
  const size_t Line = Before.count('\n') + 1;
  const size_t LineStart = Before.rfind('\n');
  const size_t Column =
      LineStart == llvm::StringRef::npos ? Offset + 1 : Offset - LineStart;
  return {Line, Column};
}

/// The first place where brackets nest deeper than MaxNesting, if any.
llvm::Optional<size_t> tooDeep(llvm::StringRef Text) {
  unsigned Depth = 0;
  bool InString = false;
  for (size_t I = 0; I < Text.size(); ++I) {
    const char C = Text[I];
    if (InString) {
      if (C == '\\')
        ++I;
      else if (C == '"')
        InString = false;
    } else if (C == '"') {
      InString = true;
    } else if (C == '[' || C == '{') {
      if (++Depth > MaxNesting)
        return I;
    } else if ((C == ']' || C == '}') && Depth > 0) {
      --Depth;
    }
  }
  return llvm::None;
}

/// LLVM's json::ParseError prints "[LINE:COL, byte=OFFSET]: MESSAGE" with a
/// 1-based line and a 0-based column, and does not expose the fields. The
/// parser reports after consuming the offending character, so its 0-based
/// column is that character's 1-based one. This turns it into
/// "NAME:LINE:COL: not JSON: MESSAGE".
llvm::Error notJson(llvm::StringRef Name, llvm::Error E) {
  const std::string Msg = llvm::toString(std::move(E));
  llvm::StringRef Rest = Msg;
  unsigned Line = 0, Column = 0;
  if (Rest.consume_front("[") && !Rest.consumeInteger(10, Line) &&
      Rest.consume_front(":") && !Rest.consumeInteger(10, Column)) {
    auto [Position, Text] = Rest.split("]: ");
    if (!Text.empty())
      return planErrorAt(Name, Line, std::max(Column, 1u), "not JSON: " + Text);
  }
  return planError(Name, "not JSON: " + Msg);
}

/// Parses the fields of one "plan" object; Where is its JSON path.
class PlanReader {
public:
  PlanReader(llvm::StringRef Name, const llvm::json::Object &P,
             llvm::StringRef Where)
      : Name(Name), P(P), Where(Where) {}

  llvm::Expected<PlanFile> read(const TrainOptions &Base) {
    PlanFile F;
    F.Options = Base;
    TrainOptions &O = F.Options;
    int64_t Dp = 0, Tp = 0, Pp = 0, Vp = 0, Mb = 0, Zero = 0;
    for (auto [Key, Min, Max, Out] :
         {std::make_tuple("dp", int64_t(1), int64_t(MaxPlanDegree), &Dp),
          std::make_tuple("tp", int64_t(1), int64_t(MaxPlanDegree), &Tp),
          std::make_tuple("pp", int64_t(1), int64_t(MaxPlanDegree), &Pp),
          std::make_tuple("vp", int64_t(1), int64_t(MaxPlanDegree), &Vp),
          std::make_tuple("micro_batch", int64_t(1), int64_t(ir::MaxTensorSize),
                          &Mb),
          std::make_tuple("zero", int64_t(0), int64_t(3), &Zero)})
      if (llvm::Error E = integer(Key, Min, Max, *Out))
        return std::move(E);
    O.Dp = unsigned(Dp);
    O.Tp = unsigned(Tp);
    O.Pp = unsigned(Pp);
    O.Vp = unsigned(Vp);
    O.MicroBatch = Mb;
    O.Zero = unsigned(Zero);
    if (P.get("global_batch")) {
      int64_t Global = 0;
      if (llvm::Error E =
              integer("global_batch", 1, int64_t(ir::MaxTensorSize), Global))
        return std::move(E);
      O.GlobalBatch = Global;
    }
    llvm::Optional<bool> Sp = P.getBoolean("sp");
    if (!Sp)
      return fail("sp", "is missing or not true/false");
    O.SequenceParallel = *Sp;
    // Optional: plans written before them have none (no overlap).
    if (llvm::Error E = optionalBool("tp_comm_overlap", O.TpCommOverlap))
      return std::move(E);
    if (llvm::Error E =
            optionalBool("overlap_param_gather", O.OverlapParamGather))
      return std::move(E);
    if (llvm::Error E = optionalBool("overlap_moe_expert_parallel_comm",
                                     O.OverlapMoeExpertParallelComm))
      return std::move(E);
    // Optional: plans written before it have none (no context split).
    if (P.get("cp")) {
      int64_t Cp = 1;
      if (llvm::Error E = integer("cp", 1, int64_t(MaxPlanDegree), Cp))
        return std::move(E);
      O.Cp = unsigned(Cp);
    }
    // Optional: plans written before it have none (no expert split).
    if (P.get("ep")) {
      int64_t Ep = 1;
      if (llvm::Error E = integer("ep", 1, int64_t(MaxPlanDegree), Ep))
        return std::move(E);
      O.Ep = unsigned(Ep);
    }
    // Optional: plans written before it have none (the ring, or what the
    // command line gave).
    if (llvm::Error E = optionalString(
            "cp_comm",
            [&](llvm::StringRef S) {
              return set(O.CpComm, contextExchangeNamed(S));
            },
            ContextExchangeChoices))
      return std::move(E);

    llvm::Optional<llvm::StringRef> Recomp = P.getString("recompute");
    if (!Recomp)
      return fail("recompute", "is missing or not a string");
    const llvm::Optional<Recompute> R = recomputeNamed(*Recomp);
    if (!R)
      return fail("recompute",
                  "is " + quoted(*Recomp) + ": use " + RecomputeChoices);
    O.Recomp = *R;
    O.RecomputeModules = bit(BlockModule::CoreAttention);
    if (const llvm::json::Value *V = P.get("recompute_modules")) {
      const llvm::json::Array *A = V->getAsArray();
      if (!A || A->empty())
        return fail("recompute_modules",
                    llvm::Twine("is not a non-empty array of module names (") +
                        RecomputeModuleChoices + ")");
      if (O.Recomp != Recompute::Selective)
        return fail("recompute_modules",
                    "is given, and recompute is " + quoted(*Recomp) +
                        ": modules are what selective recomputation "
                        "recomputes");
      BlockModuleSet Set = 0;
      for (size_t I = 0; I < A->size(); ++I) {
        const llvm::Optional<llvm::StringRef> S = (*A)[I].getAsString();
        const llvm::Optional<BlockModule> M =
            S ? recomputeModuleNamed(*S) : llvm::None;
        if (!M)
          return fail(llvm::formatv("recompute_modules[{0}]", I).str(),
                      llvm::Twine("is not one of ") + RecomputeModuleChoices);
        Set |= bit(*M);
      }
      O.RecomputeModules = Set;
    }
    O.Method = RecomputeMethod::Uniform;
    O.RecomputeNumLayers = 1;
    const llvm::json::Value *Method = P.get("recompute_method");
    const llvm::json::Value *Layers = P.get("recompute_num_layers");
    if ((Method || Layers) && O.Recomp != Recompute::Full)
      return fail(Method ? "recompute_method" : "recompute_num_layers",
                  "is given, and recompute is " + quoted(*Recomp) +
                      ": it chooses the blocks full recomputation reruns");
    if (Method) {
      const llvm::Optional<llvm::StringRef> S = Method->getAsString();
      const llvm::Optional<RecomputeMethod> M =
          S ? recomputeMethodNamed(*S) : llvm::None;
      if (!M)
        return fail("recompute_method",
                    llvm::Twine("is not one of ") + RecomputeMethodChoices);
      O.Method = *M;
    }
    if (Layers) {
      const llvm::Optional<int64_t> N = Layers->getAsInteger();
      if (!N || *N < 1 || *N > std::numeric_limits<unsigned>::max())
        return fail("recompute_num_layers",
                    "is not a whole number of blocks, 1 or more");
      O.RecomputeNumLayers = unsigned(*N);
    } else if (O.Method == RecomputeMethod::Block) {
      return fail("recompute_method",
                  "is 'block', and recompute_num_layers (the blocks each "
                  "chunk reruns) is missing");
    }

    if (llvm::Error E = optionalString(
            "dtype",
            [&](llvm::StringRef S) {
              // perfc writes fp8 as ir::name's "fp8e4m3".
              return set(O.DType, S == "fp8e4m3" ? llvm::Optional<ir::DType>(
                                                       ir::DType::F8E4M3)
                                                 : trainDTypeNamed(S));
            },
            TrainDTypeChoices))
      return std::move(E);
    if (llvm::Error E = optionalString(
            "optimizer",
            [&](llvm::StringRef S) {
              return set(O.Optimizer, optimizerNamed(S));
            },
            OptimizerChoices))
      return std::move(E);
    if (llvm::Error E = optionalString(
            "partition",
            [&](llvm::StringRef S) { return set(O.Split, partitionNamed(S)); },
            PartitionChoices))
      return std::move(E);

    // Optional (plans written before it have none): the plan was made for
    // FlashAttention training (--flash-attention).
    if (llvm::Error E = optionalBool("flash_attention", O.FlashAttention))
      return std::move(E);
    // Optional (plans written before it have none): the experts' capacity.
    if (const llvm::json::Value *V = P.get("moe_capacity")) {
      const llvm::Optional<double> F = V->getAsNumber();
      if (!F || !(*F > 0 && *F <= 1e6))
        return fail("moe_capacity", "is not a number above 0 (at most 1e6)");
      O.ExpertCapacity = *F;
    }

    if (llvm::Error E = stages(F))
      return std::move(E);
    if (llvm::Error E = dataSplit(O))
      return std::move(E);

    if (const llvm::json::Value *M = P.get("model")) {
      const llvm::json::Object *Model = M->getAsObject();
      if (!Model)
        return fail("model", "is not an object");
      if (const llvm::json::Value *V = Model->get("name")) {
        llvm::Optional<llvm::StringRef> S = V->getAsString();
        if (!S)
          return fail("model.name", "is not a string");
        F.Model.Name = S->str();
      }
      if (const llvm::json::Value *V = Model->get("file_stem")) {
        llvm::Optional<llvm::StringRef> S = V->getAsString();
        if (!S)
          return fail("model.file_stem", "is not a string");
        F.Model.FileStem = S->str();
      }
      if (const llvm::json::Value *V = Model->get("nodes")) {
        llvm::Optional<int64_t> N = V->getAsInteger();
        if (!N || *N < 0)
          return fail("model.nodes", "is not a count of nodes");
        F.Model.Nodes = uint64_t(*N);
      }
      if (const llvm::json::Value *V = Model->get("params")) {
        llvm::Optional<double> N = V->getAsNumber();
        if (!N || !std::isfinite(*N) || *N < 0)
          return fail("model.params", "is not a count of parameters");
        F.Model.Params = *N;
      }
    }
    return std::move(F);
  }

private:
  llvm::StringRef Name;
  const llvm::json::Object &P;
  llvm::StringRef Where;

  llvm::Error fail(llvm::StringRef Key, const llvm::Twine &What) const {
    return planError(Name, "'" + Where + "." + Key + "' " + What);
  }

  /// "stages": pp objects, each with "layers" (its vp chunks as [first,
  /// last] layers, chunk c on stage c mod pp, contiguous from layer 0) and
  /// optionally "device". Absent: the split is left to the partition.
  llvm::Error stages(PlanFile &F) const {
    const llvm::json::Value *V = P.get("stages");
    if (!V)
      return llvm::Error::success();
    const llvm::json::Array *A = V->getAsArray();
    TrainOptions &O = F.Options;
    if (!A || A->size() != O.Pp)
      return fail("stages", llvm::formatv("is not an array of pp = {0} "
                                          "stages",
                                          O.Pp));
    const uint64_t Chunks = uint64_t(O.Pp) * O.Vp;
    // Per stage, its vp ranges, each stage checked before the next is read:
    // memory grows with the file, never with the degrees it claims (pp
    // 1000 x vp 10^6 allocated up front would be 16 GB).
    std::vector<std::vector<std::pair<int64_t, int64_t>>> Ranges;
    std::vector<std::string> Devices;
    for (unsigned S = 0; S < O.Pp; ++S) {
      const std::string At = llvm::formatv("stages[{0}]", S).str();
      const llvm::json::Object *St = (*A)[S].getAsObject();
      if (!St)
        return fail(At, "is not an object");
      const llvm::json::Array *L = St->getArray("layers");
      if (!L || L->size() != O.Vp)
        return fail(At + ".layers",
                    llvm::formatv("is not an array of vp = {0} [first, "
                                  "last] layer ranges",
                                  O.Vp));
      Ranges.emplace_back();
      for (unsigned C = 0; C < O.Vp; ++C) {
        const llvm::json::Array *R = (*L)[C].getAsArray();
        llvm::Optional<int64_t> First, Last;
        if (R && R->size() == 2) {
          First = (*R)[0].getAsInteger();
          Last = (*R)[1].getAsInteger();
        }
        if (!First || !Last || *First < 0 || *Last < *First ||
            *Last >= MaxPlanDegree)
          return fail(llvm::formatv("{0}.layers[{1}]", At, C).str(),
                      "is not a [first, last] range of layers");
        Ranges.back().push_back({*First, *Last});
      }
      if (const llvm::json::Value *D = St->get("device")) {
        llvm::Optional<llvm::StringRef> Name = D->getAsString();
        if (!Name)
          return fail(At + ".device", "is not a string");
        Devices.push_back(Name->str());
      }
    }
    // Chunk c is stage c mod pp's (c / pp)-th range.
    auto Range = [&](uint64_t C) { return Ranges[C % O.Pp][C / O.Pp]; };
    int64_t Next = 0;
    for (uint64_t C = 0; C < Chunks; ++C) {
      if (Range(C).first != Next)
        return fail(
            llvm::formatv("stages[{0}].layers[{1}]", C % O.Pp, C / O.Pp).str(),
            llvm::formatv("starts at layer {0}; the chunks must "
                          "follow each other from layer 0 (expected "
                          "{1})",
                          Range(C).first, Next));
      Next = Range(C).second + 1;
    }
    // One chunk holds the whole model (and, in a model without blocks, the
    // writer's [0, 0]): nothing to split.
    if (Chunks > 1)
      for (uint64_t C = 0; C < Chunks; ++C)
        O.ChunkBlocks.push_back(unsigned(Range(C).second - Range(C).first + 1));
    if (Devices.size() == O.Pp)
      F.StageDevices = std::move(Devices);
    return llvm::Error::success();
  }

  /// "data_split" (an uneven data split across GPU types): objects with
  /// "device", "replicas" and "micro_batches" (per replica and step);
  /// "batch_per_replica", when present, must agree. Absent: none. Whether
  /// it matches dp, pp and the cluster is checked when it is predicted.
  llvm::Error dataSplit(TrainOptions &O) const {
    const llvm::json::Value *V = P.get("data_split");
    if (!V)
      return llvm::Error::success();
    const llvm::json::Array *A = V->getAsArray();
    if (!A || A->empty())
      return fail("data_split", "is not a non-empty array of {device, "
                                "replicas, micro_batches} objects");
    for (size_t I = 0; I < A->size(); ++I) {
      const std::string At = llvm::formatv("data_split[{0}]", I).str();
      const llvm::json::Object *D = (*A)[I].getAsObject();
      if (!D)
        return fail(At, "is not an object");
      llvm::Optional<llvm::StringRef> Device = D->getString("device");
      if (!Device || Device->empty())
        return fail(At + ".device", "is missing or not a device name");
      DataShare Share;
      Share.Device = Device->str();
      for (auto [Key, Out] :
           {std::pair<const char *, unsigned *>{"replicas", &Share.Replicas},
            {"micro_batches", &Share.MicroBatches}}) {
        llvm::Optional<int64_t> N = D->getInteger(Key);
        if (!N || *N < 1 || *N > MaxPlanDegree)
          return fail(At + "." + Key,
                      llvm::formatv("is missing or not a count from 1 to {0}",
                                    MaxPlanDegree));
        *Out = unsigned(*N);
      }
      if (const llvm::json::Value *B = D->get("batch_per_replica")) {
        llvm::Optional<int64_t> N = B->getAsInteger();
        int64_t Batch = 0;
        if (__builtin_mul_overflow(int64_t(Share.MicroBatches), O.MicroBatch,
                                   &Batch))
          return fail(At + ".micro_batches",
                      "times micro_batch overflows 64 bits");
        if (!N || *N != Batch)
          return fail(
              At + ".batch_per_replica",
              llvm::formatv("is not micro_batches x micro_batch = {0}", Batch));
      }
      O.DataSplit.push_back(std::move(Share));
    }
    return llvm::Error::success();
  }

  llvm::Error integer(llvm::StringRef Key, int64_t Min, int64_t Max,
                      int64_t &Out) const {
    llvm::Optional<int64_t> V = P.getInteger(Key);
    if (!V)
      return fail(Key, "is missing or not an integer");
    if (*V < Min)
      return fail(Key, "is " + llvm::Twine(*V) + ", below its minimum " +
                           llvm::Twine(Min));
    if (*V > Max)
      return fail(Key, "is " + llvm::Twine(*V) + ", above its maximum " +
                           llvm::Twine(Max));
    Out = *V;
    return llvm::Error::success();
  }

  /// A true/false field that may be absent (Out keeps its value then).
  llvm::Error optionalBool(llvm::StringRef Key, bool &Out) const {
    const llvm::json::Value *V = P.get(Key);
    if (!V)
      return llvm::Error::success();
    const llvm::Optional<bool> B = V->getAsBoolean();
    if (!B)
      return fail(Key, "is not true/false");
    Out = *B;
    return llvm::Error::success();
  }

  /// A string field that may be absent; Set returns false for an unknown
  /// value.
  template <typename SetFn>
  llvm::Error optionalString(llvm::StringRef Key, SetFn Set,
                             llvm::StringRef Choices) const {
    const llvm::json::Value *V = P.get(Key);
    if (!V)
      return llvm::Error::success();
    llvm::Optional<llvm::StringRef> S = V->getAsString();
    if (!S)
      return fail(Key, "is not a string");
    if (!Set(*S))
      return fail(Key, "is " + quoted(*S) + ": use " + Choices);
    return llvm::Error::success();
  }
};

} // namespace

llvm::Expected<PlanFile> perfc::parsePlanJson(llvm::StringRef Text,
                                              llvm::StringRef Name,
                                              const TrainOptions &Base) {
  if (llvm::Optional<size_t> At = tooDeep(Text)) {
    auto [Line, Column] = lineColumn(Text, *At);
    return planErrorAt(Name, Line, Column,
                       llvm::formatv("brackets nest more than {0} levels "
                                     "deep; this is not a plan perfc wrote",
                                     MaxNesting));
  }
  auto Doc = llvm::json::parse(Text);
  if (!Doc)
    return notJson(Name, Doc.takeError());
  const llvm::json::Object *Top = Doc->getAsObject();
  if (!Top)
    return planError(Name,
                     "expected a JSON object (a plan written by perfc --plan)");
  if (const llvm::json::Value *Plan = Top->get("plan")) {
    const llvm::json::Object *P = Plan->getAsObject();
    if (!P)
      return planError(Name, "'plan' is not an object");
    return PlanReader(Name, *P, "plan").read(Base);
  }
  // The plan object alone, as a user may cut it out of the output.
  if (!Top->get("tp"))
    return planError(Name, "no 'plan' object; write one with perfc --train "
                           "--plan --format json");
  return PlanReader(Name, *Top, "plan").read(Base);
}

llvm::Expected<PlanFile> perfc::readPlanJson(llvm::StringRef Path,
                                             const TrainOptions &Base) {
  auto Buf = support::readRegularFile(Path, MaxPlanBytes, "a plan");
  if (!Buf)
    return planError(Path,
                     "cannot read the plan: " + toString(Buf.takeError()));
  return parsePlanJson((*Buf)->getBuffer(), Path, Base);
}

llvm::Error perfc::checkPlanModel(const PlanModel &Planned,
                                  llvm::StringRef PlanName,
                                  llvm::StringRef GraphName, uint64_t Nodes,
                                  double Params, llvm::StringRef FileStem) {
  const bool NameOk = Planned.Name.empty() || Planned.Name == GraphName;
  const bool NodesOk = !Planned.Nodes || *Planned.Nodes == Nodes;
  // Both counts are exact integers below 2^53 for any model perfc loads,
  // and JSON carries doubles exactly.
  const bool ParamsOk = !Planned.Params || *Planned.Params == Params;
  if (NameOk && NodesOk && ParamsOk)
    return llvm::Error::success();
  auto Count = [](auto V) {
    return V ? llvm::formatv("{0:F0}", double(*V)).str() : std::string("?");
  };
  // "model 'resnet18' (graph 'torch_jit', N nodes, P parameters)", or
  // "graph 'torch_jit' (N nodes, P parameters)" without a file stem.
  auto Describe = [](llvm::StringRef Stem, llvm::StringRef Graph,
                     const std::string &N, const std::string &P) {
    const std::string Counts = N + " nodes, " + P + " parameters)";
    if (Stem.empty())
      return "graph " + quoted(Graph) + " (" + Counts;
    return "model " + quoted(Stem) + " (graph " + quoted(Graph) + ", " + Counts;
  };
  return planError(PlanName,
                   "the plan is for " +
                       Describe(Planned.FileStem, Planned.Name,
                                Count(Planned.Nodes), Count(Planned.Params)) +
                       ", not " +
                       Describe(FileStem, GraphName, std::to_string(Nodes),
                                llvm::formatv("{0:F0}", Params).str()) +
                       "; plan this model with --plan");
}
