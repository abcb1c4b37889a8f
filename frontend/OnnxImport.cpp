//===- OnnxImport.cpp - ONNX models into the perfc IR ---------------------===//
#include "frontend/OnnxImport.h"

#include "frontend/CommonShapes.h"
#include "frontend/ContribSchemas.h"
#include "frontend/OnnxToIr.h"
#include "frontend/ShapeFolding.h"
#include "frontend/WeightStripper.h"
#include "support/RegularFile.h"

#include "ir/NameHash.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <google/protobuf/arena.h>

#include <algorithm>
#include <cstdint>

namespace perfc::frontend {
namespace {

/// Errors name the file first: "PATH: message".
class ErrorPrefix {
public:
  explicit ErrorPrefix(llvm::StringRef File) : File(File) {}
  llvm::Error operator()(const llvm::Twine &Msg) const {
    // Names in a model are arbitrary bytes: control characters are escaped
    // ("\0A", as llvm::printEscapedString writes them) so that the error
    // stays one line. Found by tools/fuzz/fuzz_onnx.
    std::string Line;
    for (char C : (File + ": " + Msg).str()) {
      if (static_cast<unsigned char>(C) < 0x20 || C == 0x7f) {
        Line += '\\';
        Line += llvm::hexdigit((C >> 4) & 0xf);
        Line += llvm::hexdigit(C & 0xf);
      } else {
        Line += C;
      }
    }
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Line);
  }
  llvm::Error wrap(llvm::Error E) const {
    return (*this)(llvm::toString(std::move(E)));
  }

private:
  std::string File;
};

bool isDefaultDomain(const std::string &D) {
  return D.empty() || D == "ai.onnx";
}

std::string nodeLabel(const onnx::NodeProto &N, int Index) {
  std::string Name =
      N.name().empty() ? N.op_type() + "_" + std::to_string(Index) : N.name();
  return "node '" + Name + "' (" + N.op_type() + ")";
}

/// Checks names and edges of the main graph and puts its nodes in
/// topological order (ONNX requires it, but files in the wild break it and
/// shape inference needs it).
llvm::Error checkAndSortNodes(onnx::GraphProto &G, int64_t Opset,
                              const ErrorPrefix &Err) {
  // -1: input or initializer. Keys are G's own strings, unchanged until
  // the nodes are reordered at the end.
  llvm::DenseMap<llvm::StringRef, int, ir::NameInfo> Producer(
      G.input_size() + G.initializer_size() + G.node_size());
  for (const auto &In : G.input())
    Producer[In.name()] = -1;
  for (const auto &T : G.initializer()) {
    // -2 marks initializers, to find one defined twice.
    auto Ins = Producer.try_emplace(T.name(), -2);
    if (!Ins.second && Ins.first->second == -2)
      return Err("initializer '" + T.name() + "' is defined twice");
    Ins.first->second = -2;
  }
  const int N = G.node_size();
  // Op types known to the registry, with the attributes their schema
  // requires: a model has a few kinds of ops many times over, and a
  // registry lookup costs a hundred map probes.
  struct KnownOp {
    llvm::StringRef Type;
    llvm::SmallVector<const onnx::OpSchema::Attribute *, 2> Required;
  };
  llvm::SmallVector<KnownOp, 16> KnownOps;
  for (int I = 0; I < N; ++I) {
    const auto &Node = G.node(I);
    if (isDefaultDomain(Node.domain())) {
      auto *Known = llvm::find_if(
          KnownOps, [&](const KnownOp &K) { return K.Type == Node.op_type(); });
      if (Known == KnownOps.end()) {
        const onnx::OpSchema *Schema = onnx::OpSchemaRegistry::Schema(
            Node.op_type(), static_cast<int>(Opset), onnx::ONNX_DOMAIN);
        if (!Schema)
          return Err(nodeLabel(Node, I) + ": '" + Node.op_type() +
                     "' is not an op of the standard ONNX op set at opset " +
                     std::to_string(Opset) +
                     "; check the op type or the model's opset_import");
        KnownOps.push_back({Node.op_type(), {}});
        Known = &KnownOps.back();
        for (const auto &Entry : Schema->attributes())
          if (Entry.second.required)
            Known->Required.push_back(&Entry.second);
      }
      // ONNX's inference reads required attributes unchecked (Scan without
      // a body graph crashes it), and nothing could cost the node.
      for (const onnx::OpSchema::Attribute *A : Known->Required) {
        const auto Found =
            llvm::find_if(Node.attribute(), [&](const onnx::AttributeProto &P) {
              return P.name() == A->name;
            });
        if (Found == Node.attribute().end())
          return Err(nodeLabel(Node, I) + " lacks its required attribute '" +
                     A->name + "'; the model is malformed, re-export it");
        if (Found->type() != A->type)
          return Err(nodeLabel(Node, I) + ": attribute '" + A->name +
                     "' is of type " +
                     onnx::AttributeProto::AttributeType_Name(Found->type()) +
                     " where the op needs " +
                     onnx::AttributeProto::AttributeType_Name(A->type) +
                     "; the model is malformed, re-export it");
      }
    }
    for (const std::string &Out : Node.output()) {
      if (Out.empty())
        continue;
      auto Ins = Producer.try_emplace(Out, I);
      if (!Ins.second) {
        int Other = Ins.first->second;
        return Err(nodeLabel(Node, I) + " writes tensor '" + Out + "', which " +
                   (Other < 0 ? std::string("is a graph input or initializer")
                              : "is also written by " +
                                    nodeLabel(G.node(Other), Other)) +
                   "; tensor names must be unique");
      }
    }
  }
  // Every edge is looked up first: a model is usually in order already
  // (every producer before its users), and then Kahn's algorithm below,
  // which keeps the order of independent nodes, would change nothing.
  bool InOrder = true;
  for (int I = 0; I < N; ++I) {
    for (const std::string &In : G.node(I).input()) {
      if (In.empty())
        continue;
      auto It = Producer.find(In);
      if (It == Producer.end()) {
        // Subgraph bodies may read outer names, but the main graph may not.
        return Err(nodeLabel(G.node(I), I) + " reads tensor '" + In +
                   "', which no node, input or initializer defines");
      }
      InOrder &= It->second < I;
    }
  }
  if (InOrder)
    return llvm::Error::success();
  std::vector<unsigned> InDegree(N, 0);
  std::vector<llvm::SmallVector<int, 2>> Users(N);
  for (int I = 0; I < N; ++I) {
    llvm::SmallVector<int, 4> Preds;
    for (const std::string &In : G.node(I).input()) {
      if (In.empty())
        continue;
      int P = Producer.find(In)->second;
      if (P >= 0 && !llvm::is_contained(Preds, P))
        Preds.push_back(P);
    }
    for (int P : Preds) {
      Users[P].push_back(I);
      ++InDegree[I];
    }
  }
  std::vector<int> Order;
  Order.reserve(N);
  std::vector<int> Ready;
  for (int I = N - 1; I >= 0; --I)
    if (InDegree[I] == 0)
      Ready.push_back(I);
  std::make_heap(Ready.begin(), Ready.end(), std::greater<int>());
  while (!Ready.empty()) {
    std::pop_heap(Ready.begin(), Ready.end(), std::greater<int>());
    int I = Ready.back();
    Ready.pop_back();
    Order.push_back(I);
    for (int U : Users[I])
      if (--InDegree[U] == 0) {
        Ready.push_back(U);
        std::push_heap(Ready.begin(), Ready.end(), std::greater<int>());
      }
  }
  if (static_cast<int>(Order.size()) != N) {
    for (int I = 0; I < N; ++I)
      if (InDegree[I] != 0)
        return Err(nodeLabel(G.node(I), I) +
                   " is on a cycle: the graph is not a DAG");
  }
  bool Sorted = true;
  for (int I = 0; I < N; ++I)
    Sorted &= Order[I] == I;
  if (!Sorted) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> Nodes;
    Nodes.Reserve(N);
    for (int I : Order)
      *Nodes.Add() = std::move(*G.mutable_node(I));
    G.mutable_node()->Swap(&Nodes);
  }
  return llvm::Error::success();
}

/// Attributes ONNX 1.12's shape inference divides by without a check: a
/// zero stride kills the process with SIGFPE in its Conv and pooling
/// inference (found by the bit-flip test). Checked in every graph, nested
/// ones included (the stripper bounds their depth), before inference runs.
llvm::Error checkDivisorAttributes(const onnx::GraphProto &G,
                                   const ErrorPrefix &Err) {
  for (int I = 0; I < G.node_size(); ++I) {
    const onnx::NodeProto &N = G.node(I);
    for (const onnx::AttributeProto &A : N.attribute()) {
      if (isDefaultDomain(N.domain()) && A.name() == "strides")
        for (int64_t S : A.ints())
          if (S <= 0)
            return Err(nodeLabel(N, I) + ": 'strides' holds " +
                       std::to_string(S) + "; every stride must be positive");
      if (A.has_g())
        if (auto E = checkDivisorAttributes(A.g(), Err))
          return E;
      for (const onnx::GraphProto &Sub : A.graphs())
        if (auto E = checkDivisorAttributes(Sub, Err))
          return E;
    }
  }
  return llvm::Error::success();
}

/// The elements a tensor's inline data holds, as ONNX's ParseData reads
/// them (raw_data in whole elements, complex numbers two values each), -1
/// where raw_data is not a whole number of elements; None for a type not
/// checked here.
llvm::Optional<int64_t> inlineElements(const onnx::TensorProto &T) {
  using TP = onnx::TensorProto;
  int64_t Bytes = 0, Values = 0, PerElement = 1;
  switch (T.data_type()) {
  case TP::FLOAT:
    Bytes = 4, Values = T.float_data_size();
    break;
  case TP::COMPLEX64:
    Bytes = 8, Values = T.float_data_size(), PerElement = 2;
    break;
  case TP::DOUBLE:
    Bytes = 8, Values = T.double_data_size();
    break;
  case TP::COMPLEX128:
    Bytes = 16, Values = T.double_data_size(), PerElement = 2;
    break;
  case TP::INT64:
    Bytes = 8, Values = T.int64_data_size();
    break;
  case TP::UINT64:
    Bytes = 8, Values = T.uint64_data_size();
    break;
  case TP::UINT32:
    Bytes = 4, Values = T.uint64_data_size();
    break;
  case TP::INT32:
    Bytes = 4, Values = T.int32_data_size();
    break;
  case TP::INT16:
  case TP::UINT16:
  case TP::FLOAT16:
  case TP::BFLOAT16:
    Bytes = 2, Values = T.int32_data_size();
    break;
  case TP::INT8:
  case TP::UINT8:
  case TP::BOOL:
    Bytes = 1, Values = T.int32_data_size();
    break;
  default:
    return llvm::None;
  }
  if (T.has_raw_data()) {
    const int64_t Raw = int64_t(T.raw_data().size());
    return Raw % Bytes ? -1 : Raw / Bytes;
  }
  return Values % PerElement ? -1 : Values / PerElement;
}

/// Whether every tensor G and its subgraphs hold inline (initializers, the
/// values of Constant nodes) has as many elements as its shape: ONNX 1.12's
/// shape inference reads a constant's values without checking them (Range
/// reads the first value of a scalar that has none) and crashes on a
/// corrupt one. Weights stored outside (or stripped) are not checked.
llvm::Error checkInlineData(const onnx::GraphProto &G, const ErrorPrefix &Err) {
  const auto Check = [&](const onnx::TensorProto &T,
                         const std::string &What) -> llvm::Error {
    if (T.data_location() == onnx::TensorProto::EXTERNAL)
      return llvm::Error::success();
    const llvm::Optional<int64_t> Held = inlineElements(T);
    if (!Held)
      return llvm::Error::success();
    int64_t Needed = 1;
    std::string Shape;
    for (int64_t D : T.dims()) {
      Shape += (Shape.empty() ? "" : ", ") + std::to_string(D);
      // A negative or overflowing size is caught where shapes are read.
      if (D < 0 || (D > 0 && Needed > INT64_MAX / D))
        return llvm::Error::success();
      Needed *= D;
    }
    if (*Held == Needed)
      return llvm::Error::success();
    return Err(What +
               (*Held < 0 ? " has raw data that is not a whole "
                            "number of elements"
                          : " holds " + std::to_string(*Held) + " value" +
                                (*Held == 1 ? "" : "s")) +
               " but its shape [" + Shape + "] needs " +
               std::to_string(Needed) +
               ": the file is corrupt or was cut short; re-export the model");
  };
  for (const onnx::TensorProto &T : G.initializer())
    if (auto E = Check(T, "initializer '" + T.name() + "'"))
      return E;
  for (int I = 0; I < G.node_size(); ++I) {
    const onnx::NodeProto &N = G.node(I);
    for (const onnx::AttributeProto &A : N.attribute()) {
      if (A.has_t())
        if (auto E = Check(A.t(),
                           nodeLabel(N, I) + ": attribute '" + A.name() + "'"))
          return E;
      if (A.has_g())
        if (auto E = checkInlineData(A.g(), Err))
          return E;
      for (const onnx::GraphProto &Sub : A.graphs())
        if (auto E = checkInlineData(Sub, Err))
          return E;
    }
  }
  return llvm::Error::success();
}

/// Binds --batch and --dim on the graph inputs (see OnnxImport.h). Returns
/// whether any dimension changed.
llvm::Expected<bool>
bindInputDims(onnx::GraphProto &G, const ImportOptions &Options,
              std::vector<std::pair<std::string, int64_t>> &Bindings,
              const ErrorPrefix &Err) {
  // Keys point into G's own strings (names are not changed here): no copy
  // and no allocation per initializer, of which a CNN has hundreds.
  llvm::DenseSet<llvm::StringRef, ir::NameInfo> Inits;
  Inits.reserve(G.initializer_size());
  for (const auto &T : G.initializer())
    Inits.insert(T.name());
  std::vector<onnx::TensorShapeProto *> Shapes;
  for (auto &In : *G.mutable_input())
    if (!Inits.count(In.name()) && In.type().has_tensor_type() &&
        In.type().tensor_type().has_shape())
      Shapes.push_back(
          In.mutable_type()->mutable_tensor_type()->mutable_shape());

  llvm::StringMap<int64_t> Bound;
  llvm::SmallVector<std::string, 4> Symbols;
  for (auto *S : Shapes)
    for (const auto &D : S->dim())
      if (D.has_dim_param() && !llvm::is_contained(Symbols, D.dim_param()))
        Symbols.push_back(D.dim_param());

  for (const auto &[Name, Value] : Options.Dims) {
    if (Value <= 0)
      return Err("--dim " + Name + "=" + std::to_string(Value) +
                 ": a dimension must be positive");
    if (!llvm::is_contained(Symbols, Name))
      return Err("--dim " + Name + ": no input dimension is named '" + Name +
                 "'; the model's symbolic dimensions are: " +
                 (Symbols.empty() ? std::string("(none)")
                                  : llvm::join(Symbols, ", ")));
    Bound[Name] = Value;
  }
  if (Options.Batch && *Options.Batch <= 0)
    return Err("--batch " + std::to_string(*Options.Batch) +
               ": the batch must be positive");

  bool Changed = false;
  auto Set = [&Changed](onnx::TensorShapeProto_Dimension &D, int64_t V) {
    if (!D.has_dim_value() || D.dim_value() != V)
      Changed = true;
    D.set_dim_value(V); // Also clears dim_param (a oneof).
  };
  // The batch: the first dimension of every input of rank >= 1.
  for (auto *S : Shapes) {
    if (S->dim_size() == 0)
      continue;
    auto &D0 = *S->mutable_dim(0);
    if (D0.has_dim_param() && !Bound.count(D0.dim_param())) {
      int64_t B = Options.Batch.getValueOr(1);
      Bound[D0.dim_param()] = B;
    }
    if (Options.Batch)
      Set(D0, *Options.Batch);
  }
  for (auto *S : Shapes)
    for (auto &D : *S->mutable_dim())
      if (D.has_dim_param()) {
        auto It = Bound.find(D.dim_param());
        if (It != Bound.end())
          Set(D, It->second);
      }
  for (const std::string &Sym : Symbols)
    if (Bound.count(Sym))
      Bindings.emplace_back(Sym, Bound[Sym]);
  // Anything still symbolic or unknown cannot be costed.
  for (const auto &In : G.input()) {
    if (Inits.count(In.name()) || !In.type().has_tensor_type() ||
        !In.type().tensor_type().has_shape())
      continue;
    const auto &Dims = In.type().tensor_type().shape().dim();
    for (int I = 0; I < Dims.size(); ++I) {
      if (Dims[I].has_dim_param())
        return Err("input '" + In.name() + "' dimension " + std::to_string(I) +
                   " is symbolic ('" + Dims[I].dim_param() +
                   "'): bind it with --dim " + Dims[I].dim_param() + "=VALUE");
      if (!Dims[I].has_dim_value())
        return Err("input '" + In.name() + "' dimension " + std::to_string(I) +
                   " has no size" +
                   (I == 0 ? std::string(": give it one with --batch N")
                           : ": the model must give its inputs sizes"));
      if (Dims[I].dim_value() < 0)
        return Err("input '" + In.name() + "' dimension " + std::to_string(I) +
                   " is negative (" + std::to_string(Dims[I].dim_value()) +
                   ")");
    }
  }
  return Changed;
}

/// After a rebinding, shapes recorded in the file are stale: keep types,
/// drop the shapes so that inference recomputes them.
void dropRecordedShapes(onnx::GraphProto &G) {
  G.clear_value_info();
  for (auto &Out : *G.mutable_output())
    if (Out.type().has_tensor_type())
      Out.mutable_type()->mutable_tensor_type()->clear_shape();
}

/// First line of a possibly multi-line library message.
std::string firstLine(llvm::StringRef S) {
  return S.substr(0, S.find('\n')).trim().str();
}

} // namespace

int64_t maxSupportedOpset() {
  const auto &Map =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto It = Map.find(onnx::ONNX_DOMAIN);
  return It == Map.end() ? 0 : It->second.second;
}

/// The rest of the import, once the weights are gone.
static llvm::Expected<ImportedModel>
importStripped(llvm::Expected<StrippedModel> Stripped,
               llvm::StringRef DisplayName, uint64_t FileBytes,
               const ImportOptions &Options) {
  ErrorPrefix Err(DisplayName);
  if (!Stripped)
    return Err.wrap(Stripped.takeError());

  // On an arena: a model is thousands of small messages and strings, and
  // allocating and freeing them one by one cost as much as everything else
  // the import does. The first block fits a typical stripped model; large
  // graphs grow in blocks of at most 4 MiB, not in one huge allocation.
  google::protobuf::ArenaOptions ArenaOpts;
  ArenaOpts.start_block_size = std::min<size_t>(
      std::max<size_t>(16 << 10, 2 * Stripped->Bytes.size()), 4 << 20);
  ArenaOpts.max_block_size = 4 << 20;
  google::protobuf::Arena Arena(ArenaOpts);
  onnx::ModelProto &Model =
      *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&Arena);
  if (!Model.ParseFromString(Stripped->Bytes))
    return Err("not an ONNX model: the protobuf does not parse as a "
               "ModelProto");
  if (!Model.has_graph() || Model.ir_version() <= 0)
    return Err("not an ONNX model: no graph or no IR version (is this the "
               "right file?)");

  ImportedModel Result;
  Result.Name = llvm::sys::path::stem(DisplayName).str();
  Result.GraphName = Model.graph().name();
  Result.Producer =
      Model.producer_name() +
      (Model.producer_version().empty() ? "" : " " + Model.producer_version());
  Result.IrVersion = Model.ir_version();
  Result.FileBytes = FileBytes;
  Result.WeightBytesSkipped = Stripped->DroppedBytes;

  int64_t Opset = -1;
  for (const auto &Imp : Model.opset_import())
    if (isDefaultDomain(Imp.domain()))
      Opset = Imp.version();
  if (Opset < 0 && Model.ir_version() < 3)
    Opset = 1; // Before IR 3, models had no opset_import: opset 1.
  bool UsesDefaultDomain = false;
  for (const auto &N : Model.graph().node())
    UsesDefaultDomain |= isDefaultDomain(N.domain());
  if (Opset < 0 && UsesDefaultDomain)
    return Err("the model imports no opset of the standard ONNX domain; add "
               "an opset_import entry for domain \"\"");
  if (Opset > maxSupportedOpset())
    return Err("opset " + std::to_string(Opset) +
               " is newer than this build's ONNX library knows (up to " +
               std::to_string(maxSupportedOpset()) +
               "); export the model at an older opset");
  if (Opset < 0)
    Opset = 0; // Only other domains: no standard op to look up.
  // ONNX's inference finds a contrib op's schema through the model's import
  // of its domain, as ONNX Runtime does: without one it cannot infer it.
  bool ImportsContrib = false;
  for (const auto &Imp : Model.opset_import())
    ImportsContrib |= Imp.domain() == ContribDomain;
  for (int I = 0; I < Model.graph().node_size() && !ImportsContrib; ++I) {
    const onnx::NodeProto &N = Model.graph().node(I);
    if (hasContribSchema(N.domain(), N.op_type()))
      return Err(nodeLabel(N, I) + " is an op of domain " + N.domain() +
                 ", which the model does not import; add an opset_import "
                 "entry for domain \"" +
                 N.domain() + "\" version 1");
  }
  Result.Opset = Opset;

  onnx::GraphProto &G = *Model.mutable_graph();
  if (auto E = checkAndSortNodes(G, Opset, Err))
    return std::move(E);
  if (auto E = checkDivisorAttributes(G, Err))
    return std::move(E);
  if (auto E = checkInlineData(G, Err))
    return std::move(E);
  auto Changed = bindInputDims(G, Options, Result.Bindings, Err);
  if (!Changed)
    return Changed.takeError();
  if (*Changed)
    dropRecordedShapes(G);

  std::string InferenceFailure;
  InferredTypes Known;
  const bool Common =
      Options.CommonShapes && inferCommonShapes(Model, Opset, &Known);
  if (!Common)
    InferenceFailure = inferShapesWithFolding(Model);

  auto Graph = convertGraph(G, Opset, Options.AllowUnknownShapes,
                            Result.Warnings, Common ? &Known : nullptr);
  if (!Graph) {
    std::string Msg = toString(Graph.takeError());
    if (!InferenceFailure.empty())
      Msg += " (ONNX shape inference: " + firstLine(InferenceFailure) + ")";
    return Err(Msg);
  }
  if (!InferenceFailure.empty())
    Result.Warnings.push_back(
        {"", "ONNX shape inference: " + firstLine(InferenceFailure)});
  Result.Graph = std::move(*Graph);
  if (Result.Graph.name().empty())
    Result.Graph.setName(Result.Name);
  return std::move(Result);
}

static StripLimits limitsFor(const ImportOptions &Options) {
  StripLimits Limits;
  Limits.MaxNodes = Options.MaxNodes;
  return Limits;
}

llvm::Expected<ImportedModel> importOnnxBytes(llvm::StringRef Bytes,
                                              llvm::StringRef DisplayName,
                                              const ImportOptions &Options) {
  if (Bytes.empty())
    return ErrorPrefix(DisplayName)("the file is empty, not an ONNX model");
  return importStripped(stripWeights(Bytes, limitsFor(Options)), DisplayName,
                        Bytes.size(), Options);
}

llvm::Expected<ImportedModel> importOnnxFile(llvm::StringRef Path,
                                             const ImportOptions &Options) {
  ErrorPrefix Err(Path);
  auto File = support::RegularFile::open(Path);
  if (!File)
    return Err("cannot read the file: " + toString(File.takeError()));
  if (File->size() == 0)
    return Err("the file is empty, not an ONNX model");
  // Read with pread, skipping the weights: never mapped, never copied.
  return importStripped(
      stripWeightsFromFile(File->handle(), File->size(), limitsFor(Options)),
      Path, File->size(), Options);
}

} // namespace perfc::frontend
