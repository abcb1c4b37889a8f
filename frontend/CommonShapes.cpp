//===- CommonShapes.cpp - Shape inference for common ops without ONNX -----===//
//
// Every formula here is ONNX 1.12's for the case it accepts; every case it
// is not sure of (an attribute form it does not cover, a dimension ONNX
// would reject or leave unknown) makes the whole model go to ONNX. Being
// conservative costs only time.
//
//===----------------------------------------------------------------------===//
#include "frontend/CommonShapes.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

#include <vector>

namespace perfc::frontend {
namespace {

using Dims = llvm::SmallVector<int64_t, 4>;

using TensorType = InferredType;

enum class OpKind {
  Unsupported,
  Unary,
  Binary,
  Conv,
  Pool,
  GlobalPool,
  BatchNorm,
  Flatten,
  Gemm,
  MatMul,
  Concat,
  Constant
};

OpKind kindOf(llvm::StringRef Op) {
  return llvm::StringSwitch<OpKind>(Op)
      .Cases("Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid",
             OpKind::Unary)
      .Cases("HardSwish", "Elu", "Softplus", "Clip", "Identity", OpKind::Unary)
      .Cases("Neg", "Abs", "Sqrt", "Exp", "Erf", OpKind::Unary)
      .Case("Reciprocal", OpKind::Unary)
      .Cases("Add", "Sub", "Mul", "Div", OpKind::Binary)
      .Case("Conv", OpKind::Conv)
      .Cases("MaxPool", "AveragePool", OpKind::Pool)
      .Cases("GlobalAveragePool", "GlobalMaxPool", OpKind::GlobalPool)
      .Case("BatchNormalization", OpKind::BatchNorm)
      .Case("Flatten", OpKind::Flatten)
      .Case("Gemm", OpKind::Gemm)
      .Case("MatMul", OpKind::MatMul)
      .Case("Concat", OpKind::Concat)
      .Case("Constant", OpKind::Constant)
      .Default(OpKind::Unsupported);
}

/// The attributes the formulas read, gathered in one pass over a node.
/// Any attribute of an unexpected type makes the node unsupported.
struct Attrs {
  const onnx::AttributeProto *Strides = nullptr, *Pads = nullptr,
                             *Dilations = nullptr, *KernelShape = nullptr,
                             *Axis = nullptr, *TransA = nullptr,
                             *TransB = nullptr, *Group = nullptr,
                             *CeilMode = nullptr, *AutoPad = nullptr,
                             *TrainingMode = nullptr;
  bool Other = false; ///< An attribute the formulas do not know.

  static bool read(const onnx::NodeProto &N, Attrs &A) {
    using AP = onnx::AttributeProto;
    for (const AP &P : N.attribute()) {
      llvm::StringRef Name = P.name();
      const AP **Slot = llvm::StringSwitch<const AP **>(Name)
                            .Case("strides", &A.Strides)
                            .Case("pads", &A.Pads)
                            .Case("dilations", &A.Dilations)
                            .Case("kernel_shape", &A.KernelShape)
                            .Case("axis", &A.Axis)
                            .Case("transA", &A.TransA)
                            .Case("transB", &A.TransB)
                            .Case("group", &A.Group)
                            .Case("ceil_mode", &A.CeilMode)
                            .Case("auto_pad", &A.AutoPad)
                            .Case("training_mode", &A.TrainingMode)
                            .Default(nullptr);
      if (!Slot) {
        A.Other = true;
        continue;
      }
      if (*Slot)
        return false; // Given twice.
      bool IsInts = Slot == &A.Strides || Slot == &A.Pads ||
                    Slot == &A.Dilations || Slot == &A.KernelShape;
      bool IsString = Slot == &A.AutoPad;
      AP::AttributeType Want = IsInts     ? AP::INTS
                               : IsString ? AP::STRING
                                          : AP::INT;
      if (P.type() != Want)
        return false;
      *Slot = &P;
    }
    return true;
  }
};

int64_t intOr(const onnx::AttributeProto *A, int64_t Default) {
  return A ? A->i() : Default;
}

bool intsOf(const onnx::AttributeProto *A, size_t Size, int64_t Default,
            Dims &Out) {
  if (!A) {
    Out.assign(Size, Default);
    return true;
  }
  if (static_cast<size_t>(A->ints_size()) != Size)
    return false;
  Out.assign(A->ints().begin(), A->ints().end());
  return true;
}

/// auto_pad absent or NOTSET: the explicit pads apply.
bool explicitPads(const Attrs &A) {
  return !A.AutoPad || A.AutoPad->s() == "NOTSET";
}

/// ONNX's convPoolShapeInference for explicit pads and floor mode.
bool spatialDims(llvm::ArrayRef<int64_t> X, llvm::ArrayRef<int64_t> Kernel,
                 const Attrs &A, bool UseDilation, Dims &Out) {
  size_t N = X.size() - 2;
  if (Kernel.size() != N || !explicitPads(A) || intOr(A.CeilMode, 0) != 0)
    return false;
  Dims Strides, Dilations, Pads;
  if (!intsOf(A.Strides, N, 1, Strides) || !intsOf(A.Pads, 2 * N, 0, Pads))
    return false;
  if (UseDilation) {
    if (!intsOf(A.Dilations, N, 1, Dilations))
      return false;
  } else {
    if (A.Dilations)
      return false;
    Dilations.assign(N, 1);
  }
  for (size_t I = 0; I < N; ++I) {
    int64_t K = Kernel[I], S = Strides[I], D = Dilations[I];
    // Dims come from the file unchecked (the IR rejects sizes past 2^62
    // later): bounded here so that the sum below cannot overflow.
    if (K < 1 || S < 1 || D < 1 || Pads[I] < 0 || Pads[I + N] < 0 ||
        K > (int64_t(1) << 31) || D > (int64_t(1) << 31) ||
        Pads[I] > (int64_t(1) << 40) || Pads[I + N] > (int64_t(1) << 40) ||
        X[I + 2] < 0 || X[I + 2] > (int64_t(1) << 62))
      return false;
    int64_t Effective = (K - 1) * D + 1;
    int64_t In = X[I + 2] + Pads[I] + Pads[I + N];
    if (In < Effective)
      return false; // ONNX's truncating division would hide this.
    Out.push_back(1 + (In - Effective) / S);
  }
  return true;
}

bool broadcast(llvm::ArrayRef<int64_t> A, llvm::ArrayRef<int64_t> B,
               Dims &Out) {
  size_t R = std::max(A.size(), B.size());
  Out.assign(R, 1);
  for (size_t I = 0; I < R; ++I) {
    int64_t DA = I < R - A.size() ? 1 : A[I - (R - A.size())];
    int64_t DB = I < R - B.size() ? 1 : B[I - (R - B.size())];
    if (DA == 0 || DB == 0)
      return false; // Zero-sized broadcasting: leave it to ONNX.
    if (DA != DB && DA != 1 && DB != 1)
      return false;
    Out[I] = std::max(DA, DB);
  }
  return true;
}

class Inferrer {
public:
  Inferrer(onnx::GraphProto &G, int64_t Opset, InferredTypes *Out)
      : G(G), Opset(Opset), Out(Out),
        Index(G.initializer_size() + G.input_size() + G.node_size()) {
    Storage.reserve(G.initializer_size() + G.input_size() + G.node_size());
  }

  bool run() {
    if (Opset < 7)
      return false; // Older broadcasting and attribute forms.
    for (const auto &T : G.initializer()) {
      TensorType TT;
      TT.Elem = T.data_type();
      TT.Shape.assign(T.dims().begin(), T.dims().end());
      if (!known(TT) || !add(T.name(), std::move(TT)))
        return false;
    }
    for (const auto &In : G.input()) {
      TensorType TT;
      if (!typeOf(In.type(), TT) || !known(TT) ||
          !add(In.name(), std::move(TT)))
        return false; // Also an input that is an initializer: ONNX's way.
    }
    FirstResult = Storage.size();
    Results.reserve(G.node_size());
    for (const auto &N : G.node())
      if (!inferNode(N))
        return false;
    return write();
  }

private:
  bool add(llvm::StringRef Name, TensorType T) {
    if (!Index.try_emplace(Name, Storage.size()).second)
      return false;
    Storage.push_back(std::move(T));
    return true;
  }

  static bool known(const TensorType &T) {
    if (T.Elem <= 0)
      return false;
    for (int64_t D : T.Shape)
      if (D < 0)
        return false;
    return true;
  }

  static bool typeOf(const onnx::TypeProto &T, TensorType &Out) {
    if (!T.has_tensor_type() || !T.tensor_type().has_shape())
      return false;
    Out.Elem = T.tensor_type().elem_type();
    for (const auto &D : T.tensor_type().shape().dim()) {
      if (!D.has_dim_value())
        return false;
      Out.Shape.push_back(D.dim_value());
    }
    return true;
  }

  const TensorType *input(const onnx::NodeProto &N, int I) const {
    if (&N == InputsOf)
      return I < static_cast<int>(Inputs.size()) ? Inputs[I] : nullptr;
    if (I >= N.input_size() || N.input(I).empty())
      return nullptr;
    auto It = Index.find(N.input(I));
    return It == Index.end() ? nullptr : &Storage[It->second];
  }

  bool inferNode(const onnx::NodeProto &N) {
    if (!(N.domain().empty() || N.domain() == "ai.onnx") ||
        N.output_size() != 1 || N.output(0).empty())
      return false;
    OpKind Kind = kindOf(N.op_type());
    if (Kind == OpKind::Constant)
      return inferConstant(N);
    if (Kind == OpKind::Unsupported)
      return false;
    if (N.input_size() < 1)
      return false;
    // Every input named must be known (optional ones may be absent). Each
    // is looked up once: the formulas below ask for them again.
    InputsOf = nullptr;
    Inputs.clear();
    for (int I = 0; I < N.input_size(); ++I) {
      const TensorType *T = input(N, I);
      if (!T && !N.input(I).empty())
        return false;
      Inputs.push_back(T);
    }
    InputsOf = &N;
    const TensorType *X = input(N, 0);
    if (!X)
      return false;
    Attrs A;
    if (!Attrs::read(N, A))
      return false;
    TensorType Out;
    Out.Elem = X->Elem;
    llvm::ArrayRef<int64_t> XS = X->Shape;
    switch (Kind) {
    case OpKind::Unsupported:
    case OpKind::Constant:
      return false;
    case OpKind::Unary:
      Out.Shape = X->Shape;
      break;
    case OpKind::Binary: {
      const TensorType *B = input(N, 1);
      if (N.input_size() != 2 || !B || B->Elem != X->Elem ||
          N.attribute_size() != 0 || !broadcast(XS, B->Shape, Out.Shape))
        return false;
      break;
    }
    case OpKind::Conv: {
      const TensorType *W = input(N, 1);
      if (N.input_size() > 3 || !W || XS.size() < 3 ||
          W->Shape.size() != XS.size() || A.Other)
        return false;
      int64_t Group = intOr(A.Group, 1);
      if (Group < 1 || W->Shape[1] > (int64_t(1) << 31) ||
          Group > (int64_t(1) << 31) || XS[1] != W->Shape[1] * Group)
        return false;
      if (const TensorType *B = input(N, 2))
        if (B->Shape.size() != 1 || B->Shape[0] != W->Shape[0])
          return false;
      llvm::ArrayRef<int64_t> Kernel =
          llvm::makeArrayRef(W->Shape).drop_front(2);
      Dims Attr;
      if (A.KernelShape) {
        Attr.assign(A.KernelShape->ints().begin(), A.KernelShape->ints().end());
        if (Attr != Dims(Kernel.begin(), Kernel.end()))
          return false;
      }
      Out.Shape = {XS[0], W->Shape[0]};
      if (!spatialDims(XS, Kernel, A, /*UseDilation=*/true, Out.Shape))
        return false;
      break;
    }
    case OpKind::Pool: {
      bool Max = N.op_type() == "MaxPool";
      if (N.input_size() != 1 || XS.size() < 3 || !A.KernelShape || A.Group ||
          A.Axis || A.TransA || A.TransB || A.TrainingMode)
        return false;
      // MaxPool knows storage_order, AveragePool count_include_pad: neither
      // changes the shape; anything else is unknown here.
      for (const auto &P : N.attribute())
        if (P.name() == "storage_order"       ? !Max
            : P.name() == "count_include_pad" ? Max
                                              : false)
          return false;
      Dims Kernel(A.KernelShape->ints().begin(), A.KernelShape->ints().end());
      Out.Shape = {XS[0], XS[1]};
      // MaxPool has had dilations since opset 10; AveragePool not in 1.12.
      if (!spatialDims(XS, Kernel, A, /*UseDilation=*/Max && Opset >= 10,
                       Out.Shape))
        return false;
      break;
    }
    case OpKind::GlobalPool:
      if (N.input_size() != 1 || XS.size() < 3 || N.attribute_size() != 0)
        return false;
      Out.Shape.assign(XS.size(), 1);
      Out.Shape[0] = XS[0];
      Out.Shape[1] = XS[1];
      break;
    case OpKind::BatchNorm: {
      if (N.input_size() != 5 || XS.size() < 2 || intOr(A.TrainingMode, 0) != 0)
        return false;
      for (const auto &P : N.attribute())
        if (P.name() != "epsilon" && P.name() != "momentum" &&
            P.name() != "training_mode")
          return false; // spatial (opset < 9), is_test, consumed_inputs.
      for (int I = 1; I < 5; ++I) {
        const TensorType *P = input(N, I);
        if (!P || P->Shape.size() != 1 || P->Shape[0] != XS[1])
          return false;
      }
      if (Opset < 9)
        return false;
      Out.Shape = X->Shape;
      break;
    }
    case OpKind::Flatten: {
      int64_t Axis = intOr(A.Axis, 1);
      if (N.input_size() != 1 || A.Other || A.Strides || A.Pads ||
          A.Dilations || A.KernelShape || A.Group || Axis < 0 ||
          Axis > static_cast<int64_t>(XS.size()) || XS.empty())
        return false;
      int64_t Rows = 1, Cols = 1;
      for (size_t I = 0; I < XS.size(); ++I) {
        int64_t &P = static_cast<int64_t>(I) < Axis ? Rows : Cols;
        if (__builtin_mul_overflow(P, XS[I], &P))
          return false;
      }
      Out.Shape = {Rows, Cols};
      break;
    }
    case OpKind::Gemm: {
      const TensorType *B = input(N, 1);
      if (!B || N.input_size() > 3 || XS.size() != 2 || B->Shape.size() != 2)
        return false;
      for (const auto &P : N.attribute())
        if (P.name() != "alpha" && P.name() != "beta" && P.name() != "transA" &&
            P.name() != "transB")
          return false; // broadcast (opset < 7).
      bool TA = intOr(A.TransA, 0) != 0, TB = intOr(A.TransB, 0) != 0;
      int64_t M = TA ? XS[1] : XS[0], KA = TA ? XS[0] : XS[1];
      int64_t KB = TB ? B->Shape[1] : B->Shape[0];
      int64_t NOut = TB ? B->Shape[0] : B->Shape[1];
      if (KA != KB)
        return false;
      if (const TensorType *C = input(N, 2)) {
        Dims Unused;
        if (C->Shape.size() > 2 || !broadcast(C->Shape, {M, NOut}, Unused) ||
            Unused != Dims{M, NOut})
          return false;
      }
      Out.Shape = {M, NOut};
      break;
    }
    case OpKind::MatMul: {
      const TensorType *B = input(N, 1);
      if (!B || N.input_size() != 2 || N.attribute_size() != 0 ||
          XS.size() < 2 || B->Shape.size() < 2 || B->Elem != X->Elem)
        return false;
      llvm::ArrayRef<int64_t> BS = B->Shape;
      if (XS.back() != BS[BS.size() - 2])
        return false;
      if (!broadcast(XS.drop_back(2), BS.drop_back(2), Out.Shape))
        return false;
      Out.Shape.push_back(XS[XS.size() - 2]);
      Out.Shape.push_back(BS.back());
      break;
    }
    case OpKind::Concat: {
      if (!A.Axis || N.attribute_size() != 1 || XS.empty() || Opset < 11)
        return false;
      int64_t R = static_cast<int64_t>(XS.size());
      int64_t Axis = A.Axis->i();
      if (Axis < -R || Axis >= R)
        return false;
      if (Axis < 0)
        Axis += R;
      Out.Shape = X->Shape;
      for (int I = 1; I < N.input_size(); ++I) {
        const TensorType *In = input(N, I);
        if (!In || In->Elem != X->Elem || In->Shape.size() != XS.size())
          return false;
        for (int64_t D = 0; D < R; ++D)
          if (D != Axis && In->Shape[D] != XS[D])
            return false;
        if (__builtin_add_overflow(Out.Shape[Axis], In->Shape[Axis],
                                   &Out.Shape[Axis]))
          return false;
      }
      break;
    }
    }
    return record(N, std::move(Out));
  }

  bool record(const onnx::NodeProto &N, TensorType Out) {
    if (!add(N.output(0), std::move(Out)))
      return false;
    Results.push_back({&N.output(0), unsigned(Storage.size() - 1)});
    return true;
  }

  /// A Constant holding a tensor (the other value_* forms go to ONNX).
  bool inferConstant(const onnx::NodeProto &N) {
    if (N.input_size() != 0 || N.attribute_size() != 1)
      return false;
    const onnx::AttributeProto &A = N.attribute(0);
    if (A.name() != "value" || A.type() != onnx::AttributeProto::TENSOR ||
        !A.has_t())
      return false;
    TensorType Out;
    Out.Elem = A.t().data_type();
    Out.Shape.assign(A.t().dims().begin(), A.t().dims().end());
    if (!known(Out))
      return false;
    return record(N, std::move(Out));
  }

  /// Merges Inferred into a recorded type as ONNX's strict inference does,
  /// or says that ONNX would fail (or keep something else) on it.
  static bool mergeInto(const TensorType &Inferred, onnx::TypeProto &T,
                        bool DryRun) {
    if (T.value_case() != onnx::TypeProto::kTensorType &&
        T.value_case() != onnx::TypeProto::VALUE_NOT_SET)
      return false;
    auto *TT = T.mutable_tensor_type();
    if (TT->elem_type() != 0 && TT->elem_type() != Inferred.Elem)
      return false;
    if (TT->has_shape()) {
      auto *S = TT->mutable_shape();
      if (static_cast<size_t>(S->dim_size()) != Inferred.Shape.size())
        return false;
      for (int I = 0; I < S->dim_size(); ++I)
        if (S->dim(I).has_dim_value() &&
            S->dim(I).dim_value() != Inferred.Shape[I])
          return false;
      if (!DryRun)
        for (int I = 0; I < S->dim_size(); ++I)
          S->mutable_dim(I)->set_dim_value(Inferred.Shape[I]);
    } else if (!DryRun) {
      auto *S = TT->mutable_shape();
      for (int64_t D : Inferred.Shape)
        S->add_dim()->set_dim_value(D);
    }
    if (!DryRun)
      TT->set_elem_type(Inferred.Elem);
    return true;
  }

  /// Writes the results: into recorded value_info and outputs where the
  /// model has them, as new value_info otherwise. Checks everything first,
  /// so that a model ONNX must see is left untouched.
  bool write() {
    // The recorded types (value_info, graph outputs) of node outputs, by
    // index into Storage: a model records a few, and looking each up in
    // Index costs less than looking every result up in a table of them.
    std::vector<onnx::TypeProto *> RecordedOf(Storage.size()),
        OutputOf(Storage.size());
    auto Collect = [this](auto &Infos, std::vector<onnx::TypeProto *> &Of) {
      llvm::DenseSet<llvm::StringRef, ir::NameInfo> Seen;
      for (auto &V : Infos) {
        if (!Seen.insert(V.name()).second)
          return false; // A name recorded twice: ONNX's to judge.
        auto It = Index.find(V.name());
        if (It != Index.end() && It->second >= FirstResult)
          Of[It->second] = V.mutable_type();
      }
      return true;
    };
    if (!Collect(*G.mutable_value_info(), RecordedOf) ||
        !Collect(*G.mutable_output(), OutputOf))
      return false;
    for (bool DryRun : {true, false}) {
      for (const auto &[Name, I] : Results) {
        const TensorType &T = Storage[I];
        onnx::TypeProto *R = RecordedOf[I], *O = OutputOf[I];
        if (R && !mergeInto(T, *R, DryRun))
          return false;
        if (O && !mergeInto(T, *O, DryRun))
          return false;
        if (DryRun || R || O || Out)
          continue;
        onnx::ValueInfoProto *V = G.add_value_info();
        V->set_name(*Name);
        auto *TT = V->mutable_type()->mutable_tensor_type();
        TT->set_elem_type(T.Elem);
        auto *S = TT->mutable_shape();
        for (int64_t D : T.Shape)
          S->add_dim()->set_dim_value(D);
      }
      // Graph outputs that no node writes keep their recorded types.
    }
    if (Out) {
      // Handed over whole: inputs and initializers come along, which the
      // caller, asking for node outputs, never looks up.
      Out->Index = std::move(Index);
      Out->Types = std::move(Storage);
    }
    return true;
  }

  onnx::GraphProto &G;
  int64_t Opset;
  InferredTypes *Out;
  /// The types known so far: names (held by the model) to Storage, which
  /// is reserved for every tensor so that pointers into it stay valid.
  llvm::DenseMap<llvm::StringRef, unsigned, ir::NameInfo> Index;
  std::vector<TensorType> Storage;
  /// The types of the inputs of node InputsOf (null: absent).
  const onnx::NodeProto *InputsOf = nullptr;
  llvm::SmallVector<const TensorType *, 6> Inputs;
  /// Storage from here on holds node outputs.
  unsigned FirstResult = 0;
  /// Node outputs in node order, as indices into Storage.
  std::vector<std::pair<const std::string *, unsigned>> Results;
};

} // namespace

bool inferCommonShapes(onnx::ModelProto &M, int64_t Opset, InferredTypes *Out) {
  if (!M.has_graph())
    return false;
  return Inferrer(*M.mutable_graph(), Opset, Out).run();
}

} // namespace perfc::frontend
