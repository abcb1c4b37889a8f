//===- OnnxToIr.cpp - Converting checked ONNX protos to IR ----------------===//
#include "frontend/OnnxToIr.h"

#include "frontend/ContribSchemas.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"

#include <cstring>

namespace perfc::frontend {
namespace {

llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// Ops whose output sizes depend on the values of their inputs, so that
/// shape inference cannot know them from shapes alone.
bool isDataDependent(llvm::StringRef Op) {
  static const char *const Ops[] = {"NonZero",
                                    "Unique",
                                    "Compress",
                                    "NonMaxSuppression",
                                    "TopK",
                                    "StringNormalizer",
                                    "TfIdfVectorizer",
                                    "Loop",
                                    "Scan",
                                    "If",
                                    "SequenceAt",
                                    "SplitToSequence",
                                    "ConcatFromSequence",
                                    "OptionalGetElement",
                                    "SequenceMap"};
  for (const char *Name : Ops)
    if (Op == Name)
      return true;
  return false;
}

} // namespace

ir::DType convertDType(int32_t T) {
  using TP = onnx::TensorProto;
  switch (T) {
  case TP::FLOAT:
    return ir::DType::F32;
  case TP::UINT8:
    return ir::DType::U8;
  case TP::INT8:
    return ir::DType::I8;
  case TP::UINT16:
    return ir::DType::U16;
  case TP::INT16:
    return ir::DType::I16;
  case TP::INT32:
    return ir::DType::I32;
  case TP::INT64:
    return ir::DType::I64;
  case TP::STRING:
    return ir::DType::String;
  case TP::BOOL:
    return ir::DType::Bool;
  case TP::FLOAT16:
    return ir::DType::F16;
  case TP::DOUBLE:
    return ir::DType::F64;
  case TP::UINT32:
    return ir::DType::U32;
  case TP::UINT64:
    return ir::DType::U64;
  case TP::COMPLEX64:
    return ir::DType::C64;
  case TP::COMPLEX128:
    return ir::DType::C128;
  case TP::BFLOAT16:
    return ir::DType::BF16;
  default:
    return ir::DType::Undefined;
  }
}

namespace {

/// Reads little-endian values of type T out of raw_data, appending them to
/// Out (int64 or double).
template <typename T, typename Elem>
void readRaw(const std::string &Raw, llvm::SmallVectorImpl<Elem> &Out) {
  for (size_t I = 0; I + sizeof(T) <= Raw.size(); I += sizeof(T)) {
    T V;
    std::memcpy(&V, Raw.data() + I, sizeof(T));
    Out.push_back(static_cast<Elem>(V));
  }
}

/// Small constant contents, when the stripper kept them.
llvm::Optional<ir::ConstData> constData(const onnx::TensorProto &T) {
  using TP = onnx::TensorProto;
  if (T.data_location() == TP::EXTERNAL)
    return llvm::None;
  ir::ConstData D;
  const std::string &Raw = T.raw_data();
  switch (T.data_type()) {
  case TP::INT64:
    D.Ints.append(T.int64_data().begin(), T.int64_data().end());
    readRaw<int64_t>(Raw, D.Ints);
    break;
  case TP::INT32:
  case TP::INT16:
  case TP::INT8:
  case TP::UINT16:
  case TP::UINT8:
  case TP::BOOL:
    D.Ints.append(T.int32_data().begin(), T.int32_data().end());
    if (T.data_type() == TP::INT32)
      readRaw<int32_t>(Raw, D.Ints);
    else if (T.data_type() == TP::INT16)
      readRaw<int16_t>(Raw, D.Ints);
    else if (T.data_type() == TP::INT8)
      readRaw<int8_t>(Raw, D.Ints);
    else if (T.data_type() == TP::UINT16)
      readRaw<uint16_t>(Raw, D.Ints);
    else
      readRaw<uint8_t>(Raw, D.Ints);
    break;
  case TP::UINT32:
  case TP::UINT64:
    for (uint64_t V : T.uint64_data())
      D.Ints.push_back(static_cast<int64_t>(V));
    if (T.data_type() == TP::UINT32)
      readRaw<uint32_t>(Raw, D.Ints);
    else
      readRaw<uint64_t>(Raw, D.Ints);
    break;
  case TP::FLOAT:
    D.Floats.append(T.float_data().begin(), T.float_data().end());
    readRaw<float>(Raw, D.Floats);
    break;
  case TP::DOUBLE:
    D.Floats.append(T.double_data().begin(), T.double_data().end());
    readRaw<double>(Raw, D.Floats);
    break;
  default:
    return llvm::None;
  }
  return D;
}

ir::Shape shapeOfDims(const google::protobuf::RepeatedField<int64_t> &Dims) {
  // One call for the elements (RepeatedField's accessors are not inline).
  return ir::Shape(llvm::ArrayRef<int64_t>(Dims.data(), Dims.size()));
}

ir::Shape shapeOfType(const onnx::TypeProto &T) {
  if (!T.has_tensor_type() || !T.tensor_type().has_shape())
    return ir::Shape::unranked();
  ir::Shape S = ir::Shape::scalar();
  for (const auto &D : T.tensor_type().shape().dim()) {
    if (D.has_dim_value())
      S.push_back(ir::Dim::known(D.dim_value()));
    else if (D.has_dim_param())
      S.push_back(ir::Dim::symbolic(D.dim_param()));
    else
      S.push_back(ir::Dim());
  }
  return S;
}

ir::DType dtypeOfType(const onnx::TypeProto &T) {
  return T.has_tensor_type() ? convertDType(T.tensor_type().elem_type())
                             : ir::DType::Undefined;
}

ir::TensorAttr convertTensorAttr(const onnx::TensorProto &T) {
  ir::TensorAttr A;
  A.Type = convertDType(T.data_type());
  A.TensorShape = shapeOfDims(T.dims());
  A.Data = constData(T);
  return A;
}

/// Shapes must be known, non-negative and representable.
enum class ShapeState { Static, Unknown, Negative, Overflow };
ShapeState checkShape(const ir::Value &V) {
  if (V.type() == ir::DType::Undefined && !V.shape().isRanked())
    return ShapeState::Static; // Sequences, maps, optionals: no dims.
  if (!V.shape().isRanked())
    return ShapeState::Unknown;
  for (const ir::Dim &D : V.shape().dims()) {
    if (!D.Symbol.empty() || D.Value == -1)
      return ShapeState::Unknown;
    if (D.Value < 0)
      return ShapeState::Negative;
  }
  // The count kept with the value is exact when not 0 (0: empty, or
  // overflow, which numElements tells apart).
  llvm::Optional<uint64_t> N = V.numElements();
  if (!*N)
    N = V.shape().numElements();
  if (!N || !ir::checkedMul(*N, std::max(1u, ir::byteSize(V.type()))))
    return ShapeState::Overflow;
  return ShapeState::Static;
}

class GraphConverter {
public:
  GraphConverter(int64_t Opset, bool AllowUnknownShapes,
                 std::vector<Warning> &Warnings, const GraphConverter *Outer,
                 unsigned Depth)
      : Opset(Opset), AllowUnknownShapes(AllowUnknownShapes),
        Warnings(Warnings), Outer(Outer), Depth(Depth) {}

  /// The main graph's node output types from inferCommonShapes.
  void setKnown(const InferredTypes *K) { Known = K; }

  llvm::Expected<ir::Graph> convert(const onnx::GraphProto &GP) {
    ir::Graph G(GP.name());
    G.setOpsetVersion(Opset);
    // Inputs, initializers and (about) one output per node.
    size_t Outputs = 0;
    for (const auto &N : GP.node())
      Outputs += N.output_size();
    G.reserve(GP.input_size() + GP.initializer_size() + Outputs,
              GP.node_size());
    Current = &G;
    if (!Known) {
      for (const auto &VI : GP.value_info())
        Types[VI.name()] = &VI.type();
      for (const auto &VI : GP.output())
        Types[VI.name()] = &VI.type();
    }

    // Keys point into GP's strings, which outlive this loop: no copy and
    // no allocation per initializer.
    llvm::DenseSet<llvm::StringRef, ir::NameInfo> InitNames;
    InitNames.reserve(GP.initializer_size());
    for (const auto &T : GP.initializer())
      InitNames.insert(T.name());
    for (const auto &In : GP.input()) {
      if (InitNames.count(In.name()))
        continue; // Declared as an input with a default: a constant.
      auto V = G.addValue(In.name(), dtypeOfType(In.type()),
                          shapeOfType(In.type()), ir::ValueKind::Input);
      if (!V)
        return V.takeError();
      if (auto E = checkValue(**V, nullptr))
        return std::move(E);
    }
    // Each initializer fits in 2^62 bytes (checkValue), but a file may
    // declare many huge ones cheaply (stored externally): their total is
    // bounded too, so that parameter counts summed over the graph (uint64)
    // cannot wrap.
    uint64_t InitializerBytes = 0;
    for (const auto &T : GP.initializer()) {
      auto V = G.addValue(T.name(), convertDType(T.data_type()),
                          shapeOfDims(T.dims()), ir::ValueKind::Initializer);
      if (!V)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "initializer '" + T.name() +
                                           "' is defined twice");
      if (auto D = constData(T))
        (*V)->setData(std::move(*D));
      if (auto E = checkValue(**V, nullptr))
        return std::move(E);
      auto Sum = ir::checkedAdd(InitializerBytes, (*V)->bytes());
      if (!Sum)
        return makeError("initializer '" + T.name() + "' of shape " +
                         (*V)->shape().str() +
                         " brings the weights past 2^62 bytes in total: "
                         "the dimensions overflow");
      InitializerBytes = *Sum;
    }
    for (int I = 0; I < GP.node_size(); ++I)
      if (auto E = convertNode(GP.node(I), I))
        return std::move(E);
    for (const auto &Out : GP.output()) {
      ir::Value *V = resolve(Out.name());
      if (!V)
        return makeError("graph output '" + Out.name() +
                         "' is not produced by any node");
      G.markOutput(V);
    }
    if (auto E = G.sortTopologically())
      return std::move(E);
    return std::move(G);
  }

private:
  /// A value of this graph, or of an enclosing one (captured into this graph
  /// as an OuterScope value on first use).
  ir::Value *resolve(llvm::StringRef Name) {
    if (ir::Value *V = Current->lookup(Name))
      return V;
    for (const GraphConverter *O = Outer; O; O = O->Outer) {
      if (ir::Value *V = O->Current->lookup(Name)) {
        auto Captured = Current->addValue(Name, V->type(), V->shape(),
                                          ir::ValueKind::OuterScope);
        if (!Captured) {
          llvm::consumeError(Captured.takeError());
          return nullptr;
        }
        if (V->data())
          (*Captured)->setData(*V->data());
        return *Captured;
      }
    }
    return nullptr;
  }

  llvm::Error convertNode(const onnx::NodeProto &NP, int Index) {
    // The model's own strings where they serve: no copy per node.
    std::string Made;
    if (NP.name().empty())
      Made = NP.op_type() + "_" + std::to_string(Index);
    llvm::StringRef Name =
        NP.name().empty() ? llvm::StringRef(Made) : llvm::StringRef(NP.name());
    llvm::StringRef Domain = llvm::StringRef(NP.domain()) == "ai.onnx"
                                 ? llvm::StringRef()
                                 : NP.domain();
    llvm::SmallVector<ir::Value *, 4> Inputs;
    for (const std::string &In : NP.input()) {
      if (In.empty()) {
        Inputs.push_back(nullptr);
        continue;
      }
      ir::Value *V = resolve(In);
      if (!V)
        return makeError("node '" + Name + "' (" + NP.op_type() +
                         ") reads tensor '" + In +
                         "', which no node, input or initializer defines");
      Inputs.push_back(V);
    }
    llvm::SmallVector<ir::Value *, 2> Outputs;
    for (const std::string &Out : NP.output()) {
      if (Out.empty()) {
        Outputs.push_back(nullptr);
        continue;
      }
      // The shape is made where addValue takes it (no move per output).
      ir::DType T = ir::DType::Undefined;
      const InferredType *K = Known ? Known->find(Out) : nullptr;
      const onnx::TypeProto *Recorded = nullptr;
      if (K) {
        T = convertDType(K->Elem);
      } else if (!Known) {
        if (auto It = Types.find(Out); It != Types.end()) {
          Recorded = It->second;
          T = dtypeOfType(*Recorded);
        }
      }
      auto V =
          Current->addValue(Out, T,
                            K ? ir::Shape(llvm::ArrayRef<int64_t>(K->Shape))
                            : Recorded ? shapeOfType(*Recorded)
                                       : ir::Shape::unranked(),
                            ir::ValueKind::Activation);
      if (!V) {
        llvm::consumeError(V.takeError());
        return makeError("node '" + Name + "' (" + NP.op_type() +
                         ") writes tensor '" + Out +
                         "', which is already defined; tensor names must be "
                         "unique");
      }
      Outputs.push_back(*V);
    }
    auto N = Current->addNode(Name, NP.op_type(), Domain, Inputs, Outputs);
    if (!N)
      return makeError("node '" + Name + "': " + toString(N.takeError()));
    (*N)->reserveAttrs(NP.attribute_size());
    for (const auto &A : NP.attribute())
      if (auto E = convertAttr(A, **N))
        return E;
    if (Domain.empty() && llvm::StringRef(NP.op_type()) == "Constant" &&
        !Outputs.empty() && Outputs[0])
      setConstantData(**N, *Outputs[0]);
    for (ir::Value *Out : Outputs)
      if (Out)
        if (auto E = checkValue(*Out, *N))
          return E;
    return checkOperands(**N);
  }

  /// Operand checks ONNX's shape inference leaves out, where a mismatch
  /// would otherwise give a silently wrong count.
  static llvm::Error checkOperands(const ir::Node &N) {
    if (!N.domain().empty())
      return llvm::Error::success();
    if (N.opType() == "Reshape")
      return checkReshape(N);
    if (N.opType() != "Conv" && N.opType() != "ConvTranspose")
      return llvm::Error::success();
    const ir::Value *X = N.input(0), *W = N.input(1);
    if (!X || !W || X->shape().rank() < 2 || W->shape().rank() < 2)
      return llvm::Error::success();
    int64_t Group = N.getInt("group", 1);
    int64_t C = X->shape().size(1);
    int64_t Expected = W->shape().size(0);
    // group comes from the file: an absurd one must not overflow.
    bool Overflow =
        N.opType() == "Conv" &&
        __builtin_mul_overflow(W->shape().size(1), Group, &Expected);
    if (Group >= 1 && !Overflow && C == Expected)
      return llvm::Error::success();
    return makeError(
        "node '" + N.name() + "' (" + N.opType() + "): the input has " +
        llvm::Twine(C) + " channels but the weight " + W->shape().str() +
        " with group " + llvm::Twine(Group) + " expects " +
        (Overflow ? std::string("more than 2^63") : std::to_string(Expected)) +
        "; check the weight shape or the group attribute");
  }

  /// ONNX's inference takes a Reshape's target as given where it has no
  /// -1 to solve for: a target of other size (a graph written for another
  /// batch, rebound with --batch) would run on elements that do not exist.
  static llvm::Error checkReshape(const ir::Node &N) {
    const ir::Value *X = N.input(0), *Y = N.output(0);
    if (!X || !Y || !X->shape().isStatic() || !Y->shape().isStatic() ||
        X->numElements() == Y->numElements())
      return llvm::Error::success();
    return makeError("node '" + N.name() + "' (Reshape): reshapes " +
                     X->shape().str() + " (" + llvm::Twine(X->numElements()) +
                     " elements) into " + Y->shape().str() + " (" +
                     llvm::Twine(Y->numElements()) +
                     "); its shape constant was written for other input "
                     "shapes: export the model for these, or drop the "
                     "--batch, --micro-batch or --dim that rebinds them");
  }

  static void setConstantData(const ir::Node &N, ir::Value &Out) {
    if (const ir::Attr *A = N.attr("value")) {
      if (const auto *T = A->get<ir::TensorAttr>())
        if (T->Data)
          Out.setData(*T->Data);
      return;
    }
    ir::ConstData D;
    if (const ir::Attr *A = N.attr("value_int")) {
      if (const auto *V = A->get<int64_t>())
        D.Ints.push_back(*V);
    } else if (const ir::Attr *A = N.attr("value_ints")) {
      if (const auto *V = A->get<std::vector<int64_t>>())
        D.Ints.append(V->begin(), V->end());
    } else if (const ir::Attr *A = N.attr("value_float")) {
      if (const auto *V = A->get<double>())
        D.Floats.push_back(*V);
    } else if (const ir::Attr *A = N.attr("value_floats")) {
      if (const auto *V = A->get<std::vector<double>>())
        D.Floats.append(V->begin(), V->end());
    } else {
      return;
    }
    Out.setData(std::move(D));
  }

  llvm::Error convertAttr(const onnx::AttributeProto &A, ir::Node &N) {
    using AP = onnx::AttributeProto;
    switch (A.type()) {
    case AP::INT:
      N.addAttr(ir::Attr(A.name(), int64_t(A.i())));
      break;
    case AP::FLOAT:
      N.addAttr(ir::Attr(A.name(), double(A.f())));
      break;
    case AP::STRING:
      N.addAttr(ir::Attr(A.name(), A.s()));
      break;
    case AP::INTS:
      N.addAttr(ir::Attr(
          A.name(), std::vector<int64_t>(A.ints().begin(), A.ints().end())));
      break;
    case AP::FLOATS:
      N.addAttr(ir::Attr(
          A.name(), std::vector<double>(A.floats().begin(), A.floats().end())));
      break;
    case AP::STRINGS:
      N.addAttr(
          ir::Attr(A.name(), std::vector<std::string>(A.strings().begin(),
                                                      A.strings().end())));
      break;
    case AP::TENSOR:
      N.addAttr(ir::Attr(A.name(), convertTensorAttr(A.t())));
      break;
    case AP::GRAPH: {
      auto Sub = convertSubgraph(A.g(), N);
      if (!Sub)
        return Sub.takeError();
      N.addAttr(ir::Attr(A.name(), ir::GraphRef{*Sub}));
      break;
    }
    case AP::GRAPHS: {
      std::vector<ir::GraphRef> Refs;
      for (const auto &G : A.graphs()) {
        auto Sub = convertSubgraph(G, N);
        if (!Sub)
          return Sub.takeError();
        Refs.push_back(ir::GraphRef{*Sub});
      }
      N.addAttr(ir::Attr(A.name(), std::move(Refs)));
      break;
    }
    default:
      // Sparse tensors and type protos: no op formula reads them.
      break;
    }
    return llvm::Error::success();
  }

  llvm::Expected<unsigned> convertSubgraph(const onnx::GraphProto &GP,
                                           ir::Node &N) {
    GraphConverter Sub(Opset, AllowUnknownShapes, Warnings, this, Depth + 1);
    auto G = Sub.convert(GP);
    if (!G)
      return G.takeError();
    return N.addSubgraph(std::make_unique<ir::Graph>(std::move(*G)));
  }

  /// Applies the shape policy of convertGraph to one value.
  llvm::Error checkValue(ir::Value &V, const ir::Node *Producer) {
    ShapeState State = checkShape(V);
    // A contrib op perfc has a schema for types all the outputs it names:
    // an untyped one means its inference failed on this node.
    const bool KnownContrib =
        Producer && !Producer->domain().empty() &&
        hasContribSchema(Producer->domain(), Producer->opType());
    if (State == ShapeState::Static && KnownContrib &&
        V.type() == ir::DType::Undefined)
      State = ShapeState::Unknown;
    if (State == ShapeState::Static)
      return llvm::Error::success();
    std::string Where = Producer
                            ? " (output of node '" + Producer->name().str() +
                                  "', " + Producer->opType().str() + ")"
                            : "";
    switch (State) {
    case ShapeState::Static:
      return llvm::Error::success();
    case ShapeState::Negative:
      return makeError("tensor '" + V.name() + "'" + Where +
                       " has a negative dimension " + V.shape().str());
    case ShapeState::Overflow:
      return makeError("tensor '" + V.name() + "'" + Where + " of shape " +
                       V.shape().str() +
                       " holds more than 2^62 bytes: the dimensions overflow");
    case ShapeState::Unknown:
      break;
    }
    if (!Producer) {
      if (Depth > 0 || V.kind() == ir::ValueKind::Initializer)
        return llvm::Error::success();
      return makeError("input '" + V.name() + "' has shape " + V.shape().str() +
                       " with a dimension that is not bound; bind it with "
                       "--dim NAME=VALUE or --batch N");
    }
    // Unknown because an input is unknown: reported at the origin already.
    for (const ir::Value *In : Producer->inputs())
      if (In && checkShape(*In) == ShapeState::Unknown)
        return llvm::Error::success();
    if (Depth > 0 || (!Producer->domain().empty() && !KnownContrib) ||
        isDataDependent(Producer->opType()) || AllowUnknownShapes) {
      Warnings.push_back(
          {Producer->name().str(),
           "the shape of '" + V.name().str() + "' " + V.shape().str() +
               (Depth > 0 ? " inside a subgraph"
                          : " depends on values known only at run time") +
               " and could not be inferred: its unknown dimensions count "
               "as 0"});
      return llvm::Error::success();
    }
    // An op outside the standard set has no shape inference; its untyped
    // output makes everything after it unknown: name it, not its consumer.
    for (const ir::Value *In : Producer->inputs()) {
      const ir::Node *Origin = In ? In->producer() : nullptr;
      if (Origin && !Origin->domain().empty() && !In->shape().isRanked())
        return makeError(
            "cannot infer the shape of tensor '" + V.name() + "'" + Where +
            ": its input '" + In->name() + "' is the output of node '" +
            Origin->name() + "' (" + Origin->domain() + ":" + Origin->opType() +
            "), an op outside the standard ONNX set whose shapes perfc "
            "cannot infer. Export the model with standard ops only (before "
            "ONNX Runtime's transformer optimizer, for one), or pass "
            "--allow-unknown-shapes to cost its unknown dimensions as 0");
    }
    if (KnownContrib)
      return makeError(
          "cannot infer the shape of tensor '" + V.name() +
          "' (output of node '" + Producer->name() + "', " +
          Producer->domain() + ":" + Producer->opType() +
          "): its inputs or attributes do not fit the op's definition in ONNX "
          "Runtime (docs/ContribOperators.md); check the node, or pass "
          "--allow-unknown-shapes to cost its unknown dimensions as 0");
    return makeError("cannot infer the shape of tensor '" + V.name() + "'" +
                     Where + ": got " + V.shape().str() +
                     "; it depends on values known only at run time. Give "
                     "the model static shapes, or pass --allow-unknown-shapes "
                     "to cost its unknown dimensions as 0");
  }

  int64_t Opset;
  bool AllowUnknownShapes;
  std::vector<Warning> &Warnings;
  const GraphConverter *Outer;
  unsigned Depth;
  ir::Graph *Current = nullptr;
  llvm::StringMap<const onnx::TypeProto *> Types;
  const InferredTypes *Known = nullptr;
};

} // namespace

llvm::Expected<ir::Graph> convertGraph(const onnx::GraphProto &G, int64_t Opset,
                                       bool AllowUnknownShapes,
                                       std::vector<Warning> &Warnings,
                                       const InferredTypes *Known) {
  GraphConverter C(Opset, AllowUnknownShapes, Warnings, nullptr, 0);
  C.setKnown(Known);
  return C.convert(G);
}

} // namespace perfc::frontend
