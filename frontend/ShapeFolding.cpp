//===- ShapeFolding.cpp - Shape inference through run-time shape math -----===//
#include "frontend/ShapeFolding.h"

#include "frontend/ContribSchemas.h"
#include "frontend/FoldOps.h"
#include "frontend/FoldValue.h"

#include "ir/Einsum.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace perfc::frontend {

using namespace fold;

namespace {

/// Elements evaluated over a whole model (outputs plus inputs read), so
/// that a model of many mid-sized shape tensors stays cheap to import.
constexpr uint64_t MaxTotalElements = uint64_t(1) << 24;
/// Each sweep evaluates everything it can in one topological pass, so two
/// rounds usually suffice; the bound is for pathological models.
constexpr unsigned MaxRounds = 10;

bool isDefaultDomain(const std::string &D) {
  return D.empty() || D == "ai.onnx";
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

/// The dims of a tensor type when all of them are known.
llvm::Optional<Dims> staticShape(const onnx::TypeProto *T) {
  if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape())
    return llvm::None;
  Dims S;
  for (const auto &D : T->tensor_type().shape().dim()) {
    if (!D.has_dim_value() || D.dim_value() < 0)
      return llvm::None;
    S.push_back(D.dim_value());
  }
  return S;
}

/// How much of a type is known: elem type, rank, each dimension.
unsigned knowledge(const onnx::TypeProto &T) {
  if (!T.has_tensor_type())
    return T.value_case() == onnx::TypeProto::VALUE_NOT_SET ? 0 : 1;
  const auto &TT = T.tensor_type();
  unsigned K = TT.elem_type() != TP::UNDEFINED;
  if (TT.has_shape()) {
    K += 1;
    for (const auto &D : TT.shape().dim())
      K += D.has_dim_value();
  }
  return K;
}

/// Whether a computed value agrees with what inference said of it; a
/// disagreement means the model or the folder is wrong, and folding would
/// turn it into an inference failure.
bool agrees(const Tensor &V, const onnx::TypeProto *T) {
  if (!T || !T->has_tensor_type())
    return true;
  const auto &TT = T->tensor_type();
  if (TT.elem_type() != TP::UNDEFINED && TT.elem_type() != V.Type)
    return false;
  if (!TT.has_shape())
    return true;
  if (TT.shape().dim_size() != V.rank())
    return false;
  for (int I = 0; I < TT.shape().dim_size(); ++I) {
    const auto &D = TT.shape().dim(I);
    if (D.has_dim_value() && D.dim_value() != V.Shape[I])
      return false;
  }
  return true;
}

int64_t defaultOpset(const onnx::ModelProto &M) {
  for (const auto &Imp : M.opset_import())
    if (isDefaultDomain(Imp.domain()))
      return Imp.version();
  return M.ir_version() < 3 ? 1 : -1;
}

/// The schema a registry entry is, to be patched: the registry hands out
/// const pointers to schemas it owns as mutable objects.
onnx::OpSchema *mutableSchema(const onnx::OpSchema &Copy) {
  auto *S = const_cast<onnx::OpSchema *>(onnx::OpSchemaRegistry::Schema(
      Copy.Name(), Copy.SinceVersion(), Copy.domain()));
  return S && S->SinceVersion() == Copy.SinceVersion() ? S : nullptr;
}

/// ONNX 1.12 infers only the rank of an Einsum's output (later versions
/// infer its dims too); its dims follow from the equation and the
/// operands' dims. Sets the dims inference left unknown; a symbolic or
/// unknown operand dim leaves the dims it decides unknown.
void inferEinsumDims(onnx::InferenceContext &Ctx) {
  const onnx::AttributeProto *Eq = Ctx.getAttribute("equation");
  if (!Eq || !Eq->has_s() || Ctx.getNumOutputs() != 1)
    return;
  const llvm::Optional<ir::EinsumEquation> E = ir::parseEinsum(Eq->s());
  if (!E)
    return;
  llvm::SmallVector<llvm::SmallVector<int64_t, 8>, 3> Dims;
  for (size_t I = 0; I < Ctx.getNumInputs(); ++I) {
    const onnx::TypeProto *T = Ctx.getInputType(I);
    if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape())
      return;
    Dims.emplace_back();
    for (const auto &D : T->tensor_type().shape().dim())
      Dims.back().push_back(D.has_dim_value() ? D.dim_value() : -1);
  }
  const auto Out = ir::einsumOutputDims(*E, Dims);
  onnx::TypeProto *OutType = Ctx.getOutputType(0);
  if (!Out || !OutType || !OutType->has_tensor_type())
    return;
  onnx::TensorShapeProto *Shape =
      OutType->mutable_tensor_type()->mutable_shape();
  if (Shape->dim_size() != static_cast<int>(Out->size()))
    return; // Inference disagrees on the rank: leave its answer.
  for (size_t I = 0; I < Out->size(); ++I) {
    onnx::TensorShapeProto::Dimension *D = Shape->mutable_dim(I);
    if (!D->has_dim_value() && (*Out)[I] >= 0)
      D->set_dim_value((*Out)[I]);
  }
}

/// ONNX 1.12 infers Slice-1 (opset < 10: starts, ends and axes as
/// attributes) only for non-negative starts and ends, and an exporter
/// writes x[:, -1] as starts -1, ends INT64_MAX; it then leaves every dim
/// unknown. The dims follow the rule of Slice-10 and later (negative bounds
/// count from the end, then clamp); axes not sliced keep their size.
void inferSliceV1Dims(onnx::InferenceContext &Ctx) {
  const onnx::TypeProto *In =
      Ctx.getNumInputs() ? Ctx.getInputType(0) : nullptr;
  onnx::TypeProto *Out = Ctx.getNumOutputs() ? Ctx.getOutputType(0) : nullptr;
  const onnx::AttributeProto *Starts = Ctx.getAttribute("starts");
  const onnx::AttributeProto *Ends = Ctx.getAttribute("ends");
  const onnx::AttributeProto *Axes = Ctx.getAttribute("axes");
  if (!In || !Out || !Starts || !Ends || !In->has_tensor_type() ||
      !In->tensor_type().has_shape() ||
      Starts->ints_size() != Ends->ints_size() ||
      (Axes && Axes->ints_size() != Starts->ints_size()))
    return;
  const auto &InShape = In->tensor_type().shape();
  const int Rank = InShape.dim_size();
  onnx::TensorShapeProto *Shape = Out->mutable_tensor_type()->mutable_shape();
  if (Shape->dim_size() == 0)
    for (int I = 0; I < Rank; ++I)
      *Shape->add_dim() = InShape.dim(I);
  if (Shape->dim_size() != Rank)
    return;
  // Axes not sliced keep their size.
  for (int I = 0; I < Rank; ++I)
    if (!Shape->dim(I).has_dim_value() && InShape.dim(I).has_dim_value())
      Shape->mutable_dim(I)->set_dim_value(InShape.dim(I).dim_value());
  for (int J = 0; J < Starts->ints_size(); ++J) {
    int64_t Axis = Axes ? Axes->ints(J) : J;
    if (Axis < 0)
      Axis += Rank;
    if (Axis < 0 || Axis >= Rank || !InShape.dim(Axis).has_dim_value())
      continue;
    const int64_t Size = InShape.dim(Axis).dim_value();
    auto Clamp = [Size](int64_t V) {
      if (V < 0)
        V = V < -Size ? 0 : V + Size;
      return std::min(V, Size);
    };
    const int64_t Begin = Clamp(Starts->ints(J)), End = Clamp(Ends->ints(J));
    Shape->mutable_dim(Axis)->set_dim_value(std::max<int64_t>(0, End - Begin));
  }
}

/// Runs Complete after the schema's own inference, to fill in what it
/// leaves unknown.
void completeInference(const onnx::OpSchema &Copy,
                       void (*Complete)(onnx::InferenceContext &)) {
  if (onnx::OpSchema *S = mutableSchema(Copy)) {
    onnx::InferenceFunction Inner = S->GetTypeAndShapeInferenceFunction();
    S->TypeAndShapeInferenceFunction(
        [Inner, Complete](onnx::InferenceContext &Ctx) {
          Inner(Ctx);
          Complete(Ctx);
        });
  }
}

/// ONNX's inference functions read the attributes their op requires
/// without checking that they are there or of their type: Scan's without
/// a `body` graph dereferences a null one (found by tools/fuzz/fuzz_onnx).
/// ONNX's checker would reject such a node; here its inference fails, with
/// the attribute named.
void requireAttributes(const onnx::OpSchema &Copy) {
  std::vector<std::pair<std::string, onnx::AttributeProto::AttributeType>>
      Required;
  for (const auto &[Name, Attr] : Copy.attributes())
    if (Attr.required)
      Required.emplace_back(Name, Attr.type);
  if (Required.empty())
    return;
  onnx::OpSchema *S = mutableSchema(Copy);
  if (!S)
    return;
  onnx::InferenceFunction Inner = S->GetTypeAndShapeInferenceFunction();
  S->TypeAndShapeInferenceFunction([Inner,
                                    Required](onnx::InferenceContext &Ctx) {
    for (const auto &[Name, Type] : Required) {
      const onnx::AttributeProto *A = Ctx.getAttribute(Name);
      if (!A)
        fail_shape_inference("the required attribute '", Name, "' is missing");
      if (A->type() != Type)
        fail_shape_inference(
            "the attribute '", Name, "' has type ",
            onnx::AttributeProto::AttributeType_Name(A->type()), ", not ",
            onnx::AttributeProto::AttributeType_Name(Type));
    }
    Inner(Ctx);
  });
}

/// Crashes of ONNX 1.12's shape inference on malformed models (found by
/// tools/fuzz/fuzz_onnx; python's onnx.shape_inference crashes the same
/// way), each fixed by running the check ONNX lacks before its function,
/// once per process:
///  * data propagation for Shape dereferences the type of its input
///    without checking there is one (an input declared without a type, the
///    output of an op of another domain): a node whose first input is
///    untyped gets no propagated data. (Every op that propagates data
///    requires its first input; later ones may be absent optional inputs,
///    whose type is null too, so they are not checked. Other ops were tried
///    with untyped inputs and do not crash.)
///  * inference of Conv, ConvTranspose, ConvInteger and QLinearConv indexes
///    the weight's dims by the input's rank, and crashes when the ranks
///    differ: it now fails for that node as for any model error.
void installInferenceGuards() {
  static const bool Done = [] {
    struct WeightedOp {
      const char *Name;
      size_t X, W; ///< Input indices of the data and the weight.
    };
    static const WeightedOp ConvOps[] = {{"Conv", 0, 1},
                                         {"ConvTranspose", 0, 1},
                                         {"ConvInteger", 0, 1},
                                         {"QLinearConv", 0, 3}};
    for (const onnx::OpSchema &Copy :
         onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
      if (Copy.has_data_propagation_function())
        if (onnx::OpSchema *S = mutableSchema(Copy)) {
          onnx::DataPropagationFunction Inner = S->GetDataPropagationFunction();
          S->PartialDataPropagationFunction(
              [Inner](onnx::DataPropagationContext &Ctx) {
                if (Ctx.getNumInputs() > 0 && !Ctx.getInputType(0))
                  return;
                Inner(Ctx);
              });
        }
      if (!isDefaultDomain(Copy.domain()) ||
          !Copy.has_type_and_shape_inference_function())
        continue;
      requireAttributes(Copy);
      if (Copy.Name() == "Einsum")
        completeInference(Copy, &inferEinsumDims);
      if (Copy.Name() == "Slice" && Copy.SinceVersion() == 1)
        completeInference(Copy, &inferSliceV1Dims);
      for (const WeightedOp &Op : ConvOps) {
        if (Copy.Name() != Op.Name)
          continue;
        onnx::OpSchema *S = mutableSchema(Copy);
        if (!S)
          continue;
        onnx::InferenceFunction Inner = S->GetTypeAndShapeInferenceFunction();
        S->TypeAndShapeInferenceFunction([Inner,
                                          Op](onnx::InferenceContext &Ctx) {
          auto RankOf = [&Ctx](size_t I) -> int {
            const onnx::TypeProto *T =
                I < Ctx.getNumInputs() ? Ctx.getInputType(I) : nullptr;
            if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape())
              return -1;
            return T->tensor_type().shape().dim_size();
          };
          int RX = RankOf(Op.X), RW = RankOf(Op.W);
          if (RX >= 0 && RW >= 0 && RX != RW)
            fail_shape_inference("the input has rank ", RX,
                                 " but the weight has rank ", RW,
                                 "; they must be equal");
          Inner(Ctx);
        });
      }
    }
    return true;
  }();
  (void)Done;
}

/// ONNX shape inference over the whole model. Strict first, for the
/// message of the first node that fails; then lenient, so that one failing
/// node does not stop inference of the others. ONNX 1.12's lenient mode
/// still gives up on a failure inside data propagation (a Gather index out
/// of range), so a last pass runs without it: the folding has the values.
std::string runInference(onnx::ModelProto &M) {
  installContribSchemas();
  installInferenceGuards();
  auto Run = [&M](int Strict, bool DataProp) -> std::string {
    try {
      onnx::shape_inference::InferShapes(
          M, onnx::OpSchemaRegistry::Instance(),
          onnx::ShapeInferenceOptions(/*check_type=*/false, Strict, DataProp));
      return "";
    } catch (const std::exception &E) {
      return *E.what() ? E.what() : "unknown error";
    } catch (...) {
      return "unknown error";
    }
  };
  std::string Failure = Run(1, true);
  if (!Failure.empty() && !Run(0, true).empty())
    Run(0, false);
  return Failure;
}

bool hasSubgraph(const onnx::NodeProto &N) {
  for (const auto &A : N.attribute())
    if (A.has_g() || A.graphs_size() > 0)
      return true;
  return false;
}

/// The folding state of one model: the values known so far and the working
/// copy W in which the nodes that computed them are Constants.
class Folder {
public:
  Folder(onnx::ModelProto &Model, int64_t Opset) : W(&Model), Opset(Opset) {
    onnx::GraphProto &G = *W->mutable_graph();
    for (const auto &T : G.initializer())
      if (auto V = fromProto(T))
        remember(T.name(), std::move(*V));
    for (const auto &N : G.node())
      if (N.op_type() == "Constant" && isDefaultDomain(N.domain()) &&
          N.output_size() == 1)
        if (auto V = constantValue(N))
          remember(N.output(0), std::move(*V));
    Origin.resize(G.node_size());
    for (int I = 0; I < G.node_size(); ++I)
      Origin[I] = I;
  }

  struct SweepResult {
    unsigned NewValues = 0;
    bool Improved = false; ///< Learned a type ONNX's last pass had not.
  };

  /// One topological pass over W: evaluates what it can, and infers the
  /// types of the other nodes with ONNX's per-node inference, so that the
  /// shapes its evaluations reveal are known downstream in the same pass.
  SweepResult sweep() {
    SweepResult Result;
    onnx::GraphProto &G = *W->mutable_graph();
    Types.clear();
    TypePtrs.clear();
    auto AddType = [this](const std::string &Name, const onnx::TypeProto &T) {
      auto It = Types.insert_or_assign(Name, T).first;
      TypePtrs[Name] = &It->second;
    };
    for (const auto &T : G.initializer())
      AddType(T.name(), typeOfInitializer(T));
    for (const auto &V : G.input())
      AddType(V.name(), V.type());
    for (const auto &V : G.value_info())
      AddType(V.name(), V.type());
    for (const auto &V : G.output())
      AddType(V.name(), V.type());
    Data.clear();
    for (const auto &T : G.initializer())
      if (T.data_location() != TP::EXTERNAL)
        Data[T.name()] = &T;
    for (const auto &[Name, P] : Protos)
      Data[Name] = &P;

    for (int I = 0; I < G.node_size(); ++I) {
      onnx::NodeProto &N = *G.mutable_node(I);
      if (!isDefaultDomain(N.domain()) || allOutputsKnown(N))
        continue;
      if (tryEvaluate(N, Result))
        continue;
      bool Static = true;
      for (const std::string &Out : N.output())
        if (!Out.empty())
          Static &= staticShape(typeOf(Out)).hasValue();
      if (!Static)
        inferNode(N, Result);
    }
    return Result;
  }

  /// Rewrites W: each node whose outputs are all known becomes one
  /// Constant per output, which ONNX's inference reads as input data.
  unsigned fold() {
    onnx::GraphProto &G = *W->mutable_graph();
    google::protobuf::RepeatedPtrField<onnx::NodeProto> Nodes;
    Nodes.Reserve(G.node_size());
    std::vector<int> NewOrigin;
    unsigned Folded = 0;
    for (int I = 0; I < G.node_size(); ++I) {
      onnx::NodeProto &N = *G.mutable_node(I);
      bool Foldable = isDefaultDomain(N.domain()) && allOutputsKnown(N) &&
                      !isConstantWithTensor(N);
      if (!Foldable) {
        *Nodes.Add() = std::move(N);
        NewOrigin.push_back(Origin[I]);
        continue;
      }
      Folded += N.op_type() != "Constant";
      for (const std::string &Out : N.output()) {
        if (Out.empty())
          continue;
        onnx::NodeProto &C = *Nodes.Add();
        C.set_op_type("Constant");
        C.set_name(N.name());
        C.add_output(Out);
        auto *A = C.add_attribute();
        A->set_name("value");
        A->set_type(onnx::AttributeProto::TENSOR);
        *A->mutable_t() = Protos.at(Out);
        NewOrigin.push_back(-1);
      }
    }
    G.mutable_node()->Swap(&Nodes);
    Origin = std::move(NewOrigin);
    return Folded;
  }

  /// Moves the working model to Copy, a copy of the current one (the
  /// caller's model is swept in place until the first fold).
  void moveTo(onnx::ModelProto &Copy) { W = &Copy; }

  /// The index in the original model of W's node I; -1 for a folded one.
  int origin(int I) const { return Origin[I]; }

private:
  static onnx::TypeProto typeOfInitializer(const TP &T) {
    onnx::TypeProto Type;
    auto *TT = Type.mutable_tensor_type();
    TT->set_elem_type(T.data_type());
    auto *S = TT->mutable_shape();
    for (int64_t D : T.dims())
      S->add_dim()->set_dim_value(D);
    return Type;
  }

  static bool isConstantWithTensor(const onnx::NodeProto &N) {
    return N.op_type() == "Constant" && findAttr(N, "value") != nullptr;
  }

  static llvm::Optional<Tensor> constantValue(const onnx::NodeProto &N) {
    if (const auto *A = findAttr(N, "value"))
      return A->has_t() ? fromProto(A->t()) : llvm::None;
    Tensor T;
    if (const auto *A = findAttr(N, "value_int")) {
      T = makeTensor(TP::INT64, {});
      T.Ints.push_back(A->i());
    } else if (const auto *A = findAttr(N, "value_ints")) {
      T = makeTensor(TP::INT64, {A->ints_size()});
      T.Ints.assign(A->ints().begin(), A->ints().end());
    } else if (const auto *A = findAttr(N, "value_float")) {
      T = makeTensor(TP::FLOAT, {});
      T.Reals.push_back(A->f());
    } else if (const auto *A = findAttr(N, "value_floats")) {
      T = makeTensor(TP::FLOAT, {A->floats_size()});
      T.Reals.assign(A->floats().begin(), A->floats().end());
    } else {
      return llvm::None;
    }
    if (!countElements(T.Shape))
      return llvm::None;
    return T;
  }

  void remember(const std::string &Name, Tensor V) {
    auto P = Protos.insert_or_assign(Name, TP()).first;
    toProto(V, P->second);
    Data[Name] = &P->second;
    Values.insert_or_assign(Name, std::move(V));
  }

  const onnx::TypeProto *typeOf(const std::string &Name) const {
    auto It = TypePtrs.find(Name);
    return It == TypePtrs.end() ? nullptr : It->second;
  }

  bool allOutputsKnown(const onnx::NodeProto &N) const {
    bool Any = false;
    for (const std::string &Out : N.output()) {
      if (Out.empty())
        continue;
      if (!Values.count(Out))
        return false;
      Any = true;
    }
    return Any;
  }

  /// Records T as the type of Name, noting whether it says more than the
  /// type ONNX's last whole-model pass gave.
  void learnType(const std::string &Name, const onnx::TypeProto &T,
                 SweepResult &Result) {
    auto It = Types.find(Name);
    if (It == Types.end()) {
      It = Types.emplace(Name, T).first;
      TypePtrs[Name] = &It->second;
      Result.Improved |= knowledge(T) > 0 && Improved.insert(Name).second;
      return;
    }
    unsigned Before = knowledge(It->second);
    try {
      // The check throws on a rank mismatch, which the merge assumes away.
      onnx::shape_inference::checkShapesAndTypes(T, It->second);
      onnx::shape_inference::mergeShapesAndTypes(T, &It->second);
    } catch (...) {
      return; // A conflict: keep what the whole-model pass said.
    }
    if (knowledge(It->second) > Before && Improved.insert(Name).second)
      Result.Improved = true;
  }

  bool tryEvaluate(const onnx::NodeProto &N, SweepResult &Result) {
    if (Work >= MaxTotalElements || N.op_type() == "Constant" || hasSubgraph(N))
      return false;
    bool ShapeOnly = N.op_type() == "Shape" || N.op_type() == "Size";
    llvm::SmallVector<const Tensor *, 4> In;
    Tensor DimsOnly;
    uint64_t Cost = 0;
    for (int I = 0; I < N.input_size(); ++I) {
      const std::string &Name = N.input(I);
      if (Name.empty()) {
        In.push_back(nullptr);
        continue;
      }
      auto It = Values.find(Name);
      if (It != Values.end()) {
        In.push_back(&It->second);
        Cost += It->second.size();
        continue;
      }
      if (!ShapeOnly || I != 0)
        return false;
      auto S = staticShape(typeOf(Name));
      if (!S)
        return false;
      DimsOnly.Shape = *S;
      In.push_back(&DimsOnly);
    }
    Outputs Out;
    if (!evaluate(Opset, N, In, Out))
      return false;
    for (int I = 0; I < N.output_size(); ++I) {
      if (!agrees(Out[I], typeOf(N.output(I))))
        return false;
      Cost += Out[I].size();
    }
    Work += Cost;
    for (int I = 0; I < N.output_size(); ++I) {
      const std::string &Name = N.output(I);
      if (Name.empty())
        continue;
      learnType(Name, fold::typeOf(Out[I]), Result);
      remember(Name, std::move(Out[I]));
    }
    ++Result.NewValues;
    return true;
  }

  /// ONNX's inference function for one node, with the types and values
  /// known so far. Nodes with subgraphs need a graph context: the
  /// whole-model pass handles them.
  void inferNode(onnx::NodeProto &N, SweepResult &Result) {
    if (hasSubgraph(N))
      return;
    const onnx::OpSchema *S = onnx::OpSchemaRegistry::Schema(
        N.op_type(), static_cast<int>(Opset), onnx::ONNX_DOMAIN);
    if (!S || !S->has_type_and_shape_inference_function())
      return;
    try {
      std::unordered_map<std::string, const onnx::SparseTensorProto *> Sparse;
      onnx::shape_inference::InferenceContextImpl Ctx(N, TypePtrs, Data,
                                                      Sparse);
      S->GetTypeAndShapeInferenceFunction()(Ctx);
      for (int I = 0; I < N.output_size(); ++I) {
        const onnx::TypeProto *T = Ctx.getOutputType(I);
        if (!N.output(I).empty() && T &&
            T->value_case() != onnx::TypeProto::VALUE_NOT_SET)
          learnType(N.output(I), *T, Result);
      }
    } catch (...) {
      // The whole-model pass reports inference failures.
    }
  }

  onnx::ModelProto *W;
  int64_t Opset;
  uint64_t Work = 0;
  std::unordered_map<std::string, Tensor> Values;
  /// Values as protos, for ONNX's inference functions and for Constants.
  std::unordered_map<std::string, TP> Protos;
  /// Per sweep: the types known, and the data ONNX's inference reads.
  std::unordered_map<std::string, onnx::TypeProto> Types;
  std::unordered_map<std::string, onnx::TypeProto *> TypePtrs;
  std::unordered_map<std::string, const TP *> Data;
  /// Names whose types a sweep improved once: if the whole-model pass does
  /// not confirm an improvement, another round would not either.
  std::unordered_set<std::string> Improved;
  std::vector<int> Origin;
};

/// Whether every output of every node of G's default domain has a type
/// that says everything (elem type and each dimension), seen as the
/// folder's sweep sees types (value_info, then graph outputs, the later
/// winning). Then a sweep cannot learn anything and folding is skipped.
bool allNodeOutputsStatic(const onnx::GraphProto &G) {
  llvm::StringMap<const onnx::TypeProto *> Types;
  for (const auto &V : G.value_info())
    Types[V.name()] = &V.type();
  for (const auto &V : G.output())
    Types[V.name()] = &V.type();
  for (const auto &N : G.node()) {
    if (!isDefaultDomain(N.domain()))
      continue;
    for (const std::string &Out : N.output()) {
      if (Out.empty())
        continue;
      auto It = Types.find(Out);
      if (It == Types.end() || !It->second->has_tensor_type())
        return false;
      const auto &TT = It->second->tensor_type();
      if (TT.elem_type() == TP::UNDEFINED || !TT.has_shape())
        return false;
      for (const auto &D : TT.shape().dim())
        if (!D.has_dim_value())
          return false;
    }
  }
  return true;
}

} // namespace

std::string inferShapesWithFolding(onnx::ModelProto &M, FoldingStats *Stats) {
  FoldingStats Local;
  FoldingStats &St = Stats ? *Stats : Local;
  St = FoldingStats();
  int64_t Opset = defaultOpset(M);
  if (Opset < 1)
    Opset = 1;
  // The first inference pass and the first sweep work on M itself: most
  // models need no folding, and copying a ModelProto costs as much as
  // inferring its shapes. Only a fold, which rewrites nodes, needs the
  // working copy W; what inference learns on it then moves back to M.
  const std::string FirstFailure = runInference(M);
  std::string Failure = FirstFailure;
  ++St.InferencePasses;
  if (allNodeOutputsStatic(M.graph()))
    return Failure; // A sweep would learn nothing.
  try {
    llvm::Optional<onnx::ModelProto> W;
    Folder F(M, Opset);
    for (unsigned Round = 0; Round < MaxRounds; ++Round) {
      ++St.Rounds;
      Folder::SweepResult R = F.sweep();
      if (!R.Improved)
        break; // The last pass is as good as anything folding would give.
      if (!W) {
        W.emplace(M);
        F.moveTo(*W);
      }
      St.NodesFolded += F.fold();
      Failure = runInference(*W);
      ++St.InferencePasses;
    }
    if (!W)
      return Failure;
    // M keeps its nodes; only what inference learned moves over.
    onnx::GraphProto &G = *M.mutable_graph();
    const onnx::GraphProto &WG = W->graph();
    *G.mutable_value_info() = WG.value_info();
    for (int I = 0; I < G.output_size() && I < WG.output_size(); ++I)
      *G.mutable_output(I)->mutable_type() = WG.output(I).type();
    for (int I = 0; I < WG.node_size(); ++I) {
      int O = F.origin(I);
      if (O >= 0 && O < G.node_size() && hasSubgraph(WG.node(I)))
        *G.mutable_node(O)->mutable_attribute() = WG.node(I).attribute();
    }
    return Failure;
  } catch (...) {
    // Out of memory, most likely: M holds the first pass's shapes, which
    // are still worth having.
  }
  return FirstFailure;
}

bool evaluateNode(const onnx::NodeProto &Node, int64_t Opset,
                  llvm::ArrayRef<const onnx::TensorProto *> Inputs,
                  std::vector<onnx::TensorProto> &Outputs) {
  Outputs.clear();
  try {
    bool ShapeOnly = Node.op_type() == "Shape" || Node.op_type() == "Size";
    std::vector<Tensor> Values;
    Values.reserve(Inputs.size());
    llvm::SmallVector<const Tensor *, 4> In;
    for (size_t I = 0; I < Inputs.size(); ++I) {
      if (!Inputs[I]) {
        In.push_back(nullptr);
        continue;
      }
      if (ShapeOnly && I == 0) {
        Tensor T;
        T.Shape.assign(Inputs[I]->dims().begin(), Inputs[I]->dims().end());
        Values.push_back(std::move(T));
      } else {
        auto V = fromProto(*Inputs[I]);
        if (!V)
          return false;
        Values.push_back(std::move(*V));
      }
      In.push_back(&Values.back());
    }
    std::vector<Tensor> Out;
    if (!evaluate(Opset, Node, In, Out))
      return false;
    Outputs.resize(Out.size());
    for (size_t I = 0; I < Out.size(); ++I)
      toProto(Out[I], Outputs[I]);
    return true;
  } catch (...) {
    Outputs.clear();
    return false;
  }
}

} // namespace perfc::frontend
