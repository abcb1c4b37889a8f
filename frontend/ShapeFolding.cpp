//===- ShapeFolding.cpp - Shape inference through run-time shape math -----===//
#include "frontend/ShapeFolding.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace perfc::frontend {
namespace {

using TP = onnx::TensorProto;
using Dims = llvm::SmallVector<int64_t, 4>;

/// Elements evaluated over a whole model (outputs plus inputs read), so
/// that a model of many mid-sized shape tensors stays cheap to import.
constexpr uint64_t MaxTotalElements = uint64_t(1) << 24;
/// Each sweep evaluates everything it can in one topological pass, so two
/// rounds usually suffice; the bound is for pathological models.
constexpr unsigned MaxRounds = 10;

bool isDefaultDomain(const std::string &D) {
  return D.empty() || D == "ai.onnx";
}

bool isSupportedType(int32_t T) {
  return T == TP::INT64 || T == TP::INT32 || T == TP::BOOL || T == TP::FLOAT ||
         T == TP::DOUBLE;
}
bool isRealType(int32_t T) { return T == TP::FLOAT || T == TP::DOUBLE; }
bool isIndexType(int32_t T) { return T == TP::INT64 || T == TP::INT32; }

/// A tensor the folder knows the value of. Integer and bool elements live
/// in Ints, float and double ones in Reals; float elements are kept rounded
/// to float after every operation, so that results match float32 kernels.
struct Tensor {
  int32_t Type = TP::UNDEFINED;
  Dims Shape;
  std::vector<int64_t> Ints;
  std::vector<double> Reals;

  bool isReal() const { return isRealType(Type); }
  size_t size() const { return isReal() ? Reals.size() : Ints.size(); }
  int64_t rank() const { return static_cast<int64_t>(Shape.size()); }
  double real(size_t I) const {
    return isReal() ? Reals[I] : static_cast<double>(Ints[I]);
  }
};

/// Element count of a shape; None when a dimension is negative or the
/// count exceeds Cap.
llvm::Optional<int64_t> countElements(llvm::ArrayRef<int64_t> Shape,
                                      int64_t Cap = MaxFoldedElements) {
  bool Zero = false;
  for (int64_t D : Shape) {
    if (D < 0)
      return llvm::None;
    Zero |= D == 0;
  }
  if (Zero)
    return 0;
  int64_t N = 1;
  for (int64_t D : Shape) {
    if (N > Cap / D)
      return llvm::None;
    N *= D;
  }
  return N;
}

/// Integer results wrap to the width of their type, as in the C++ kernels
/// of runtimes; computed in uint64_t so that the wrap is defined.
int64_t fitInt(int32_t T, int64_t V) {
  if (T == TP::INT32)
    return static_cast<int32_t>(static_cast<uint32_t>(V));
  if (T == TP::BOOL)
    return V != 0;
  return V;
}

double fitReal(int32_t T, double V) {
  if (T != TP::FLOAT || std::isnan(V))
    return V;
  if (std::fabs(V) > static_cast<double>(FLT_MAX))
    return V > 0 ? std::numeric_limits<double>::infinity()
                 : -std::numeric_limits<double>::infinity();
  return static_cast<double>(static_cast<float>(V));
}

/// A float converted to an integer type: truncated toward zero as C++
/// casts do; None where the value does not fit (the cast would be
/// undefined in the runtime too).
llvm::Optional<int64_t> realToInt(int32_t T, double V) {
  if (T == TP::BOOL)
    return V != 0.0;
  if (!std::isfinite(V))
    return llvm::None;
  double R = std::trunc(V);
  if (T == TP::INT32) {
    if (R < -2147483648.0 || R > 2147483647.0)
      return llvm::None;
    return static_cast<int64_t>(R);
  }
  if (R < -9223372036854775808.0 || R >= 9223372036854775808.0)
    return llvm::None;
  return static_cast<int64_t>(R);
}

Tensor makeTensor(int32_t Type, Dims Shape) {
  Tensor T;
  T.Type = Type;
  T.Shape = std::move(Shape);
  return T;
}

void pushInt(Tensor &T, int64_t V) { T.Ints.push_back(fitInt(T.Type, V)); }
void pushReal(Tensor &T, double V) { T.Reals.push_back(fitReal(T.Type, V)); }

/// The elements of Src at the given flat indices, in a tensor of Shape.
Tensor take(const Tensor &Src, llvm::ArrayRef<size_t> Index, Dims Shape) {
  Tensor T = makeTensor(Src.Type, std::move(Shape));
  if (Src.isReal()) {
    T.Reals.reserve(Index.size());
    for (size_t I : Index)
      T.Reals.push_back(Src.Reals[I]);
  } else {
    T.Ints.reserve(Index.size());
    for (size_t I : Index)
      T.Ints.push_back(Src.Ints[I]);
  }
  return T;
}

Tensor reshaped(const Tensor &Src, Dims Shape) {
  Tensor T = Src;
  T.Shape = std::move(Shape);
  return T;
}

//===----------------------------------------------------------------------===//
// Conversion from and to protos
//===----------------------------------------------------------------------===//

template <typename T>
bool readRaw(const std::string &Raw, size_t N, std::vector<int64_t> &Out) {
  if (Raw.size() != N * sizeof(T))
    return false;
  Out.resize(N);
  for (size_t I = 0; I < N; ++I) {
    T V;
    std::memcpy(&V, Raw.data() + I * sizeof(T), sizeof(T));
    Out[I] = static_cast<int64_t>(V);
  }
  return true;
}
template <typename T>
bool readRawReal(const std::string &Raw, size_t N, std::vector<double> &Out) {
  if (Raw.size() != N * sizeof(T))
    return false;
  Out.resize(N);
  for (size_t I = 0; I < N; ++I) {
    T V;
    std::memcpy(&V, Raw.data() + I * sizeof(T), sizeof(T));
    Out[I] = static_cast<double>(V);
  }
  return true;
}

/// The value of a tensor proto, when it holds its data in a type the folder
/// computes with and is small enough.
llvm::Optional<Tensor> fromProto(const TP &P) {
  if (!isSupportedType(P.data_type()) || P.data_location() == TP::EXTERNAL ||
      P.has_segment())
    return llvm::None;
  Tensor T = makeTensor(P.data_type(), Dims(P.dims().begin(), P.dims().end()));
  auto Count = countElements(T.Shape);
  if (!Count)
    return llvm::None;
  size_t N = static_cast<size_t>(*Count);
  const std::string &Raw = P.raw_data();
  bool Ok = false;
  switch (P.data_type()) {
  case TP::INT64:
    if (P.has_raw_data())
      Ok = readRaw<int64_t>(Raw, N, T.Ints);
    else if ((Ok = static_cast<size_t>(P.int64_data_size()) == N))
      T.Ints.assign(P.int64_data().begin(), P.int64_data().end());
    break;
  case TP::INT32:
  case TP::BOOL:
    if (P.has_raw_data())
      Ok = P.data_type() == TP::INT32 ? readRaw<int32_t>(Raw, N, T.Ints)
                                      : readRaw<uint8_t>(Raw, N, T.Ints);
    else if ((Ok = static_cast<size_t>(P.int32_data_size()) == N))
      T.Ints.assign(P.int32_data().begin(), P.int32_data().end());
    for (int64_t &V : T.Ints)
      V = fitInt(T.Type, V);
    break;
  case TP::FLOAT:
    if (P.has_raw_data())
      Ok = readRawReal<float>(Raw, N, T.Reals);
    else if ((Ok = static_cast<size_t>(P.float_data_size()) == N))
      T.Reals.assign(P.float_data().begin(), P.float_data().end());
    break;
  case TP::DOUBLE:
    if (P.has_raw_data())
      Ok = readRawReal<double>(Raw, N, T.Reals);
    else if ((Ok = static_cast<size_t>(P.double_data_size()) == N))
      T.Reals.assign(P.double_data().begin(), P.double_data().end());
    break;
  default:
    break;
  }
  if (!Ok)
    return llvm::None;
  return T;
}

void toProto(const Tensor &T, TP &P) {
  P.Clear();
  P.set_data_type(T.Type);
  for (int64_t D : T.Shape)
    P.add_dims(D);
  switch (T.Type) {
  case TP::INT64:
    P.mutable_int64_data()->Add(T.Ints.begin(), T.Ints.end());
    break;
  case TP::INT32:
  case TP::BOOL:
    for (int64_t V : T.Ints)
      P.add_int32_data(static_cast<int32_t>(V));
    break;
  case TP::FLOAT:
    for (double V : T.Reals)
      P.add_float_data(static_cast<float>(V));
    break;
  case TP::DOUBLE:
    P.mutable_double_data()->Add(T.Reals.begin(), T.Reals.end());
    break;
  default:
    break;
  }
}

onnx::TypeProto typeOf(const Tensor &T) {
  onnx::TypeProto Type;
  auto *TT = Type.mutable_tensor_type();
  TT->set_elem_type(T.Type);
  auto *S = TT->mutable_shape();
  for (int64_t D : T.Shape)
    S->add_dim()->set_dim_value(D);
  return Type;
}

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

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *findAttr(const onnx::NodeProto &N,
                                     llvm::StringRef Name) {
  for (const auto &A : N.attribute())
    if (A.name() == Name)
      return &A;
  return nullptr;
}

int64_t attrInt(const onnx::NodeProto &N, llvm::StringRef Name,
                int64_t Default) {
  const auto *A = findAttr(N, Name);
  return A && A->has_i() ? A->i() : Default;
}

llvm::Optional<float> attrFloat(const onnx::NodeProto &N,
                                llvm::StringRef Name) {
  const auto *A = findAttr(N, Name);
  if (!A || !A->has_f())
    return llvm::None;
  return A->f();
}

llvm::Optional<std::vector<int64_t>> attrInts(const onnx::NodeProto &N,
                                              llvm::StringRef Name) {
  const auto *A = findAttr(N, Name);
  if (!A)
    return llvm::None;
  return std::vector<int64_t>(A->ints().begin(), A->ints().end());
}

/// The integers of a 0-D or 1-D int32/int64 tensor (axes, shapes, indices).
llvm::Optional<std::vector<int64_t>> intList(const Tensor *T) {
  if (!T || !isIndexType(T->Type) || T->rank() > 1)
    return llvm::None;
  return T->Ints;
}

/// Normalizes an axis against Rank (negative counts from the back).
llvm::Optional<int64_t> normAxis(int64_t Axis, int64_t Rank) {
  if (Axis < -Rank || Axis >= Rank)
    return llvm::None;
  return Axis < 0 ? Axis + Rank : Axis;
}

/// Normalized, sorted, unique axes.
llvm::Optional<std::vector<int64_t>> normAxes(std::vector<int64_t> Axes,
                                              int64_t Rank) {
  for (int64_t &A : Axes) {
    auto N = normAxis(A, Rank);
    if (!N)
      return llvm::None;
    A = *N;
  }
  llvm::sort(Axes);
  if (std::adjacent_find(Axes.begin(), Axes.end()) != Axes.end())
    return llvm::None;
  return Axes;
}

//===----------------------------------------------------------------------===//
// Indexing helpers
//===----------------------------------------------------------------------===//

/// A * B for non-negative sizes; None when it does not fit in int64_t.
/// A tensor with a zero dimension holds nothing however large its other
/// dimensions are, so products of dims can overflow even where the element
/// count is small.
llvm::Optional<int64_t> mulDims(int64_t A, int64_t B) {
  int64_t R = 0;
  if (__builtin_mul_overflow(A, B, &R))
    return llvm::None;
  return R;
}

/// Product of Shape[Begin, End); None on overflow.
llvm::Optional<int64_t> productOf(llvm::ArrayRef<int64_t> Shape, size_t Begin,
                                  size_t End) {
  int64_t P = 1;
  for (size_t I = Begin; I < End; ++I) {
    auto R = mulDims(P, Shape[I]);
    if (!R)
      return llvm::None;
    P = *R;
  }
  return P;
}

/// Row-major strides. They fit for a tensor that holds elements (at most
/// MaxFoldedElements); None when they overflow, which only an empty tensor
/// with huge dimensions can do: ops handle empty tensors first.
llvm::Optional<Dims> stridesOf(llvm::ArrayRef<int64_t> Shape) {
  Dims S(Shape.size(), 1);
  for (size_t I = Shape.size(); I-- > 1;) {
    auto R = mulDims(S[I], Shape[I]);
    if (!R)
      return llvm::None;
    S[I - 1] = *R;
  }
  return S;
}

/// Numpy's multidirectional broadcast of two shapes.
bool broadcastShapes(llvm::ArrayRef<int64_t> A, llvm::ArrayRef<int64_t> B,
                     Dims &Out) {
  size_t R = std::max(A.size(), B.size());
  Out.assign(R, 1);
  for (llvm::ArrayRef<int64_t> S : {A, B})
    for (size_t I = 0; I < S.size(); ++I) {
      int64_t &O = Out[R - S.size() + I];
      if (O == 1)
        O = S[I];
      else if (S[I] != 1 && S[I] != O)
        return false;
    }
  return true;
}

/// For each element of a tensor of shape Out (row-major), the flat index of
/// the element of a tensor of shape In that broadcasting makes it read.
std::vector<size_t> broadcastIndex(llvm::ArrayRef<int64_t> In,
                                   llvm::ArrayRef<int64_t> Out, size_t N) {
  // With N > 0 every dim of In is 1 or that of Out, so the strides below
  // are at most N; with N == 0 they could overflow.
  if (N == 0)
    return {};
  size_t R = Out.size();
  Dims Stride(R, 0);
  int64_t S = 1;
  for (size_t I = In.size(); I-- > 0;) {
    size_t O = R - In.size() + I;
    Stride[O] = In[I] == 1 ? 0 : S;
    S *= In[I];
  }
  std::vector<size_t> Index(N);
  Dims Pos(R, 0);
  int64_t Off = 0;
  for (size_t K = 0; K < N; ++K) {
    Index[K] = static_cast<size_t>(Off);
    for (size_t D = R; D-- > 0;) {
      if (++Pos[D] < Out[D]) {
        Off += Stride[D];
        break;
      }
      Off -= Stride[D] * (Out[D] - 1);
      Pos[D] = 0;
    }
  }
  return Index;
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

using Inputs = llvm::ArrayRef<const Tensor *>;
using Outputs = std::vector<Tensor>;

enum class BinOp {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  FMod,
  Pow,
  Min,
  Max,
  Equal,
  Less,
  LessEq,
  Greater,
  GreaterEq,
  And,
  Or,
  Xor
};

bool isComparison(BinOp Op) {
  return Op == BinOp::Equal || Op == BinOp::Less || Op == BinOp::LessEq ||
         Op == BinOp::Greater || Op == BinOp::GreaterEq;
}
bool isLogical(BinOp Op) {
  return Op == BinOp::And || Op == BinOp::Or || Op == BinOp::Xor;
}

llvm::Optional<int64_t> intBinary(BinOp Op, int64_t X, int64_t Y) {
  uint64_t UX = static_cast<uint64_t>(X), UY = static_cast<uint64_t>(Y);
  switch (Op) {
  case BinOp::Add:
    return static_cast<int64_t>(UX + UY);
  case BinOp::Sub:
    return static_cast<int64_t>(UX - UY);
  case BinOp::Mul:
    return static_cast<int64_t>(UX * UY);
  case BinOp::Div:
    // C++ division truncates toward zero, as ONNX Runtime's integer Div.
    if (Y == 0 || (X == std::numeric_limits<int64_t>::min() && Y == -1))
      return llvm::None;
    return X / Y;
  case BinOp::Mod:
  case BinOp::FMod: {
    if (Y == 0)
      return llvm::None;
    if (Y == -1)
      return 0;
    int64_t R = X % Y; // The sign of the dividend, like fmod.
    if (Op == BinOp::Mod && R != 0 && ((R < 0) != (Y < 0)))
      R += Y; // fmod=0: the sign of the divisor, like Python.
    return R;
  }
  case BinOp::Pow: {
    if (Y < 0) {
      if (X == 1)
        return 1;
      if (X == -1)
        return (Y % 2 == 0) ? 1 : -1;
      return llvm::None; // A fraction, truncated: kernels disagree.
    }
    uint64_t R = 1, B = UX;
    for (uint64_t E = UY; E; E >>= 1) {
      if (E & 1)
        R *= B;
      B *= B;
    }
    return static_cast<int64_t>(R);
  }
  case BinOp::Min:
    return std::min(X, Y);
  case BinOp::Max:
    return std::max(X, Y);
  case BinOp::Equal:
    return X == Y;
  case BinOp::Less:
    return X < Y;
  case BinOp::LessEq:
    return X <= Y;
  case BinOp::Greater:
    return X > Y;
  case BinOp::GreaterEq:
    return X >= Y;
  case BinOp::And:
    return X && Y;
  case BinOp::Or:
    return X || Y;
  case BinOp::Xor:
    return (X != 0) != (Y != 0);
  }
  return llvm::None;
}

llvm::Optional<double> realBinary(BinOp Op, double X, double Y) {
  switch (Op) {
  case BinOp::Add:
    return X + Y;
  case BinOp::Sub:
    return X - Y;
  case BinOp::Mul:
    return X * Y;
  case BinOp::Div:
    if (Y == 0.0)
      return llvm::None;
    return X / Y;
  case BinOp::FMod:
    if (Y == 0.0)
      return llvm::None;
    return std::fmod(X, Y);
  case BinOp::Mod:
    return llvm::None; // ONNX requires fmod=1 for floats.
  case BinOp::Pow:
    return std::pow(X, Y);
  case BinOp::Min:
    return std::isnan(X) || std::isnan(Y) ? std::nan("") : std::min(X, Y);
  case BinOp::Max:
    return std::isnan(X) || std::isnan(Y) ? std::nan("") : std::max(X, Y);
  case BinOp::Equal:
    return X == Y;
  case BinOp::Less:
    return X < Y;
  case BinOp::LessEq:
    return X <= Y;
  case BinOp::Greater:
    return X > Y;
  case BinOp::GreaterEq:
    return X >= Y;
  default:
    return llvm::None;
  }
}

bool binary(BinOp Op, const Tensor &A, const Tensor &B, Tensor &Out) {
  if (isLogical(Op)) {
    if (A.Type != TP::BOOL || B.Type != TP::BOOL)
      return false;
  } else if (Op == BinOp::Pow) {
    if (A.Type == TP::BOOL || B.Type == TP::BOOL)
      return false;
  } else if (A.Type != B.Type || (A.Type == TP::BOOL && Op != BinOp::Equal)) {
    return false;
  }
  Dims Shape;
  if (!broadcastShapes(A.Shape, B.Shape, Shape))
    return false;
  auto Count = countElements(Shape);
  if (!Count)
    return false;
  size_t N = static_cast<size_t>(*Count);
  std::vector<size_t> IA = broadcastIndex(A.Shape, Shape, N);
  std::vector<size_t> IB = broadcastIndex(B.Shape, Shape, N);
  bool Bool = isComparison(Op) || isLogical(Op);
  Out = makeTensor(Bool ? TP::BOOL : A.Type, std::move(Shape));
  for (size_t K = 0; K < N; ++K) {
    if (!A.isReal() && !B.isReal()) {
      auto R = intBinary(Op, A.Ints[IA[K]], B.Ints[IB[K]]);
      if (!R)
        return false;
      pushInt(Out, *R);
      continue;
    }
    // Pow of an integer base to a float exponent: computed in double and
    // converted back, as ONNX Runtime does.
    auto R = realBinary(Op, A.real(IA[K]), B.real(IB[K]));
    if (!R)
      return false;
    if (Out.isReal()) {
      pushReal(Out, *R);
    } else {
      auto I = realToInt(Out.Type, *R);
      if (!I)
        return false;
      pushInt(Out, *I);
    }
  }
  return true;
}

bool variadic(BinOp Op, Inputs In, Outputs &Out) {
  if (In.empty() || llvm::is_contained(In, nullptr))
    return false;
  Tensor Acc = *In[0];
  if (Acc.Type == TP::BOOL)
    return false;
  for (const Tensor *T : In.drop_front()) {
    Tensor Next;
    if (!binary(Op, Acc, *T, Next))
      return false;
    Acc = std::move(Next);
  }
  Out.push_back(std::move(Acc));
  return true;
}

enum class UnOp { Neg, Abs, Sign, Floor, Ceil, Round, Sqrt, Reciprocal, Not };

bool unary(UnOp Op, const Tensor &X, Outputs &Out) {
  Tensor T = makeTensor(X.Type, X.Shape);
  if (Op == UnOp::Not) {
    if (X.Type != TP::BOOL)
      return false;
    for (int64_t V : X.Ints)
      T.Ints.push_back(!V);
  } else if (X.Type == TP::BOOL) {
    return false;
  } else if (X.isReal()) {
    for (double V : X.Reals) {
      double R = V;
      switch (Op) {
      case UnOp::Neg:
        R = -V;
        break;
      case UnOp::Abs:
        R = std::fabs(V);
        break;
      case UnOp::Sign:
        R = V > 0 ? 1.0 : V < 0 ? -1.0 : V;
        break;
      case UnOp::Floor:
        R = std::floor(V);
        break;
      case UnOp::Ceil:
        R = std::ceil(V);
        break;
      case UnOp::Round: {
        // Halves to even, whatever the current rounding mode.
        R = std::round(V);
        if (std::fabs(V - std::trunc(V)) == 0.5)
          R = 2.0 * std::round(V / 2.0);
        break;
      }
      case UnOp::Sqrt:
        if (V < 0)
          return false;
        R = std::sqrt(V);
        break;
      case UnOp::Reciprocal:
        if (V == 0.0)
          return false;
        R = 1.0 / V;
        break;
      case UnOp::Not:
        break;
      }
      pushReal(T, R);
    }
  } else {
    for (int64_t V : X.Ints) {
      uint64_t U = static_cast<uint64_t>(V);
      switch (Op) {
      case UnOp::Neg:
        pushInt(T, static_cast<int64_t>(0 - U));
        break;
      case UnOp::Abs:
        pushInt(T, V < 0 ? static_cast<int64_t>(0 - U) : V);
        break;
      case UnOp::Sign:
        pushInt(T, V > 0 ? 1 : V < 0 ? -1 : 0);
        break;
      case UnOp::Floor:
      case UnOp::Ceil:
      case UnOp::Round:
        pushInt(T, V);
        break;
      default:
        return false; // Float-only ops.
      }
    }
  }
  Out.push_back(std::move(T));
  return true;
}

bool castTo(const Tensor &X, int32_t To, Tensor &Out) {
  if (!isSupportedType(To))
    return false;
  Out = makeTensor(To, X.Shape);
  for (size_t I = 0, E = X.size(); I < E; ++I) {
    if (Out.isReal()) {
      pushReal(Out, X.real(I));
    } else if (X.isReal()) {
      auto V = realToInt(To, X.Reals[I]);
      if (!V)
        return false;
      pushInt(Out, *V);
    } else {
      pushInt(Out, X.Ints[I]);
    }
  }
  return true;
}

class Evaluator {
public:
  explicit Evaluator(int64_t Opset) : Opset(Opset) {}

  /// Computes every output of N, or returns false.
  bool eval(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const std::string &Op = N.op_type();
    auto Arg = [&](size_t I) -> const Tensor * {
      return I < In.size() ? In[I] : nullptr;
    };
    // Every op reads its first input.
    if (!Arg(0) && Op != "Sum" && Op != "Min" && Op != "Max")
      return false;

    if (Op == "Identity") {
      Out.push_back(*In[0]);
      return true;
    }
    if (Op == "Cast") {
      const auto *A = findAttr(N, "to");
      if (!A || !A->has_i())
        return false; // Opset 1 names the type with a string.
      Tensor T;
      if (!castTo(*In[0], static_cast<int32_t>(A->i()), T))
        return false;
      Out.push_back(std::move(T));
      return true;
    }
    if (Op == "CastLike") {
      Tensor T;
      if (!Arg(1) || !castTo(*In[0], In[1]->Type, T))
        return false;
      Out.push_back(std::move(T));
      return true;
    }
    if (Op == "Shape")
      return shape(N, In[0]->Shape, Out);
    if (Op == "Size") {
      auto Count =
          countElements(In[0]->Shape, std::numeric_limits<int64_t>::max());
      if (!Count)
        return false;
      Tensor T = makeTensor(TP::INT64, {});
      T.Ints.push_back(*Count);
      Out.push_back(std::move(T));
      return true;
    }
    if (Op == "Gather")
      return gather(N, *In[0], Arg(1), Out);
    if (Op == "Slice")
      return slice(N, In, Out);
    if (Op == "Concat")
      return concat(N, In, Out);
    if (Op == "Unsqueeze")
      return unsqueeze(N, In, Out);
    if (Op == "Squeeze")
      return squeeze(N, In, Out);
    if (Op == "Reshape")
      return reshape(N, In, Out);
    if (Op == "Flatten")
      return flatten(N, *In[0], Out);
    if (Op == "Transpose")
      return transpose(N, *In[0], Out);
    if (Op == "Expand")
      return expand(*In[0], Arg(1), Out);
    if (Op == "Tile")
      return tile(*In[0], Arg(1), Out);
    if (Op == "ConstantOfShape")
      return constantOfShape(N, *In[0], Out);
    if (Op == "Range")
      return range(In, Out);
    if (Op == "Split")
      return split(N, In, Out);
    if (Op == "NonZero")
      return nonZero(*In[0], Out);
    if (Op == "Where")
      return where(In, Out);
    if (Op == "Clip")
      return clip(N, In, Out);
    if (Op == "ReduceSum" || Op == "ReduceProd" || Op == "ReduceMin" ||
        Op == "ReduceMax")
      return reduce(N, In, Out);

    static const struct {
      const char *Name;
      UnOp Op;
    } Unary[] = {{"Neg", UnOp::Neg},   {"Abs", UnOp::Abs},
                 {"Sign", UnOp::Sign}, {"Floor", UnOp::Floor},
                 {"Ceil", UnOp::Ceil}, {"Round", UnOp::Round},
                 {"Sqrt", UnOp::Sqrt}, {"Reciprocal", UnOp::Reciprocal},
                 {"Not", UnOp::Not}};
    for (const auto &U : Unary)
      if (Op == U.Name)
        return unary(U.Op, *In[0], Out);

    static const struct {
      const char *Name;
      BinOp Op;
    } Binary[] = {
        {"Add", BinOp::Add},         {"Sub", BinOp::Sub},
        {"Mul", BinOp::Mul},         {"Div", BinOp::Div},
        {"Pow", BinOp::Pow},         {"Equal", BinOp::Equal},
        {"Less", BinOp::Less},       {"LessOrEqual", BinOp::LessEq},
        {"Greater", BinOp::Greater}, {"GreaterOrEqual", BinOp::GreaterEq},
        {"And", BinOp::And},         {"Or", BinOp::Or},
        {"Xor", BinOp::Xor}};
    for (const auto &B : Binary)
      if (Op == B.Name) {
        // Before opset 7, Add & co. broadcast only with an attribute:
        // those semantics are not worth the code.
        if (Opset < 7 || In.size() != 2 || !Arg(1))
          return false;
        Tensor T;
        if (!binary(B.Op, *In[0], *In[1], T))
          return false;
        Out.push_back(std::move(T));
        return true;
      }
    if (Op == "Mod") {
      Tensor T;
      BinOp M = attrInt(N, "fmod", 0) ? BinOp::FMod : BinOp::Mod;
      if (!Arg(1) || !binary(M, *In[0], *In[1], T))
        return false;
      Out.push_back(std::move(T));
      return true;
    }
    if (Opset >= 8) {
      if (Op == "Sum")
        return variadic(BinOp::Add, In, Out);
      if (Op == "Min")
        return variadic(BinOp::Min, In, Out);
      if (Op == "Max")
        return variadic(BinOp::Max, In, Out);
    }
    return false;
  }

  /// Shape, reading only the dims of its input.
  bool shape(const onnx::NodeProto &N, llvm::ArrayRef<int64_t> S,
             Outputs &Out) const {
    int64_t R = static_cast<int64_t>(S.size());
    auto Clamp = [R](int64_t V) {
      if (V < 0)
        V += R;
      return std::min(std::max(V, int64_t(0)), R);
    };
    int64_t Start = Clamp(attrInt(N, "start", 0));
    int64_t End = Clamp(attrInt(N, "end", R));
    Tensor T = makeTensor(TP::INT64, {std::max(End - Start, int64_t(0))});
    for (int64_t I = Start; I < End; ++I)
      T.Ints.push_back(S[I]);
    Out.push_back(std::move(T));
    return true;
  }

private:
  bool gather(const onnx::NodeProto &N, const Tensor &Data,
              const Tensor *Indices, Outputs &Out) const {
    if (!Indices || !isIndexType(Indices->Type) || Data.rank() == 0)
      return false;
    auto Axis = normAxis(attrInt(N, "axis", 0), Data.rank());
    if (!Axis)
      return false;
    int64_t D = Data.Shape[*Axis];
    Dims Shape(Data.Shape.begin(), Data.Shape.begin() + *Axis);
    Shape.append(Indices->Shape.begin(), Indices->Shape.end());
    Shape.append(Data.Shape.begin() + *Axis + 1, Data.Shape.end());
    auto Count = countElements(Shape);
    if (!Count)
      return false;
    auto Outer = productOf(Data.Shape, 0, *Axis);
    auto Inner = productOf(Data.Shape, *Axis + 1, Data.rank());
    if (!Outer || !Inner)
      return false;
    std::vector<size_t> Index;
    Index.reserve(static_cast<size_t>(*Count));
    // An empty result needs no index; Outer may then be huge.
    for (int64_t O = 0; *Count > 0 && O < *Outer; ++O)
      for (int64_t J : Indices->Ints) {
        if (J < -D || J >= D)
          return false;
        if (J < 0)
          J += D;
        for (int64_t I = 0; I < *Inner; ++I)
          Index.push_back(static_cast<size_t>((O * D + J) * *Inner + I));
      }
    Out.push_back(take(Data, Index, std::move(Shape)));
    return true;
  }

  bool slice(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const Tensor &Data = *In[0];
    int64_t R = Data.rank();
    llvm::Optional<std::vector<int64_t>> Starts, Ends, Axes, Steps;
    if (Opset < 10) {
      Starts = attrInts(N, "starts");
      Ends = attrInts(N, "ends");
      Axes = attrInts(N, "axes");
    } else {
      auto Opt = [&](size_t I) -> const Tensor * {
        return I < In.size() ? In[I] : nullptr;
      };
      if (!Opt(1) || !Opt(2))
        return false;
      Starts = intList(Opt(1));
      Ends = intList(Opt(2));
      if (Opt(3) && !(Axes = intList(Opt(3))))
        return false;
      if (Opt(4) && !(Steps = intList(Opt(4))))
        return false;
    }
    if (!Starts || !Ends || Starts->size() != Ends->size())
      return false;
    size_t K = Starts->size();
    if (!Axes) {
      Axes.emplace();
      for (size_t I = 0; I < K; ++I)
        Axes->push_back(static_cast<int64_t>(I));
    }
    if (!Steps)
      Steps.emplace(K, 1);
    if (Axes->size() != K || Steps->size() != K)
      return false;
    Dims Start(R, 0), Step(R, 1), Shape(Data.Shape);
    std::vector<bool> Seen(R, false);
    for (size_t I = 0; I < K; ++I) {
      auto A = normAxis((*Axes)[I], R);
      if (!A || Seen[*A] || (*Steps)[I] == 0)
        return false;
      Seen[*A] = true;
      int64_t D = Data.Shape[*A], S = (*Steps)[I];
      int64_t B = (*Starts)[I], E = (*Ends)[I];
      if (B < 0)
        B += D;
      if (E < 0)
        E += D;
      // Counts written as 1 + (span - 1) / step, which cannot overflow for
      // the huge steps exporters use to mean "all".
      int64_t Count = 0;
      if (S > 0) {
        B = std::min(std::max(B, int64_t(0)), D);
        E = std::min(std::max(E, int64_t(0)), D);
        if (E > B)
          Count = 1 + (E - B - 1) / S;
      } else {
        B = std::min(std::max(B, int64_t(0)), D - 1);
        E = std::min(std::max(E, int64_t(-1)), D - 1);
        if (B > E)
          Count = S == std::numeric_limits<int64_t>::min()
                      ? 1
                      : 1 + (B - E - 1) / -S;
      }
      Start[*A] = B;
      Step[*A] = S;
      Shape[*A] = Count;
    }
    auto Total = countElements(Shape);
    if (!Total)
      return false;
    if (*Total == 0) {
      Out.push_back(take(Data, {}, std::move(Shape)));
      return true;
    }
    auto Stride = stridesOf(Data.Shape);
    if (!Stride)
      return false;
    std::vector<size_t> Index;
    Index.reserve(static_cast<size_t>(*Total));
    Dims Pos(R, 0);
    for (int64_t Idx = 0; Idx < *Total; ++Idx) {
      int64_t Off = 0;
      for (int64_t D = 0; D < R; ++D)
        Off += (Start[D] + Pos[D] * Step[D]) * (*Stride)[D];
      Index.push_back(static_cast<size_t>(Off));
      for (int64_t D = R; D-- > 0;) {
        if (++Pos[D] < Shape[D])
          break;
        Pos[D] = 0;
      }
    }
    Out.push_back(take(Data, Index, std::move(Shape)));
    return true;
  }

  bool concat(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    if (In.empty() || llvm::is_contained(In, nullptr))
      return false;
    const Tensor &First = *In[0];
    int64_t R = First.rank();
    const auto *AxisAttr = findAttr(N, "axis");
    if (R == 0 || (!AxisAttr && Opset >= 4))
      return false;
    auto Axis = normAxis(AxisAttr ? AxisAttr->i() : 1, R);
    if (!Axis)
      return false;
    Dims Shape(First.Shape);
    Shape[*Axis] = 0;
    for (const Tensor *T : In) {
      if (T->Type != First.Type || T->rank() != R)
        return false;
      for (int64_t D = 0; D < R; ++D)
        if (D != *Axis && T->Shape[D] != First.Shape[D])
          return false;
      if (__builtin_add_overflow(Shape[*Axis], T->Shape[*Axis], &Shape[*Axis]))
        return false;
    }
    auto Count = countElements(Shape);
    auto Outer = productOf(Shape, 0, *Axis);
    auto Inner = productOf(Shape, *Axis + 1, R);
    if (!Count || !Outer || !Inner)
      return false;
    Tensor T = makeTensor(First.Type, std::move(Shape));
    // An empty result needs no copy; Outer may then be huge.
    for (int64_t O = 0; *Count > 0 && O < *Outer; ++O)
      for (const Tensor *X : In) {
        size_t Block = static_cast<size_t>(X->Shape[*Axis] * *Inner);
        size_t Begin = static_cast<size_t>(O) * Block;
        if (T.isReal())
          T.Reals.insert(T.Reals.end(), X->Reals.begin() + Begin,
                         X->Reals.begin() + Begin + Block);
        else
          T.Ints.insert(T.Ints.end(), X->Ints.begin() + Begin,
                        X->Ints.begin() + Begin + Block);
      }
    Out.push_back(std::move(T));
    return true;
  }

  /// The axes of Squeeze/Unsqueeze/ReduceSum: an attribute, or from
  /// FromOpset on, the second input.
  llvm::Optional<std::vector<int64_t>> axesOf(const onnx::NodeProto &N,
                                              Inputs In, int64_t FromOpset,
                                              bool &Present) const {
    Present = false;
    if (Opset < FromOpset) {
      auto A = attrInts(N, "axes");
      Present = A.hasValue();
      return A ? A : std::vector<int64_t>();
    }
    const Tensor *T = In.size() > 1 ? In[1] : nullptr;
    if (!T)
      return std::vector<int64_t>();
    Present = true;
    return intList(T);
  }

  bool unsqueeze(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    bool Present;
    auto Axes = axesOf(N, In, 13, Present);
    if (!Axes || !Present)
      return false;
    int64_t R = In[0]->rank() + static_cast<int64_t>(Axes->size());
    auto Sorted = normAxes(*Axes, R);
    if (!Sorted)
      return false;
    Dims Shape;
    auto Src = In[0]->Shape.begin();
    for (int64_t D = 0; D < R; ++D)
      Shape.push_back(llvm::is_contained(*Sorted, D) ? 1 : *Src++);
    Out.push_back(reshaped(*In[0], std::move(Shape)));
    return true;
  }

  bool squeeze(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    bool Present;
    auto Axes = axesOf(N, In, 13, Present);
    if (!Axes)
      return false;
    const Tensor &X = *In[0];
    if (!Present || Axes->empty()) {
      Axes->clear();
      for (int64_t D = 0; D < X.rank(); ++D)
        if (X.Shape[D] == 1)
          Axes->push_back(D);
    }
    auto Sorted = normAxes(*Axes, X.rank());
    if (!Sorted)
      return false;
    Dims Shape;
    for (int64_t D = 0; D < X.rank(); ++D) {
      if (!llvm::is_contained(*Sorted, D))
        Shape.push_back(X.Shape[D]);
      else if (X.Shape[D] != 1)
        return false;
    }
    Out.push_back(reshaped(X, std::move(Shape)));
    return true;
  }

  bool reshape(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const Tensor &X = *In[0];
    llvm::Optional<std::vector<int64_t>> Target =
        Opset < 5 ? attrInts(N, "shape")
                  : intList(In.size() > 1 ? In[1] : nullptr);
    if (!Target || (Opset >= 5 && In[1]->rank() != 1))
      return false;
    bool AllowZero = Opset >= 14 && attrInt(N, "allowzero", 0) != 0;
    Dims Shape;
    int64_t Infer = -1, Known = 1;
    for (size_t I = 0; I < Target->size(); ++I) {
      int64_t D = (*Target)[I];
      if (D == 0 && !AllowZero) {
        if (static_cast<int64_t>(I) >= X.rank())
          return false;
        D = X.Shape[I];
      }
      if (D == -1) {
        if (Infer >= 0)
          return false;
        Infer = static_cast<int64_t>(I);
      } else if (D < 0) {
        return false;
      } else {
        if (D != 0 && Known > MaxFoldedElements / D)
          return false;
        Known *= D;
      }
      Shape.push_back(D);
    }
    int64_t Total = static_cast<int64_t>(X.size());
    if (Infer >= 0) {
      if (Known == 0 || Total % Known != 0)
        return false;
      Shape[Infer] = Total / Known;
    } else if (Known != Total) {
      return false;
    }
    Out.push_back(reshaped(X, std::move(Shape)));
    return true;
  }

  bool flatten(const onnx::NodeProto &N, const Tensor &X, Outputs &Out) const {
    int64_t R = X.rank(), Axis = attrInt(N, "axis", 1);
    if (Axis < -R || Axis > R)
      return false;
    if (Axis < 0)
      Axis += R;
    auto A = productOf(X.Shape, 0, Axis);
    auto B = productOf(X.Shape, Axis, R);
    if (!A || !B)
      return false;
    Out.push_back(reshaped(X, {*A, *B}));
    return true;
  }

  bool transpose(const onnx::NodeProto &N, const Tensor &X,
                 Outputs &Out) const {
    int64_t R = X.rank();
    std::vector<int64_t> Perm;
    if (auto P = attrInts(N, "perm"); P && !P->empty())
      Perm = *P;
    else
      for (int64_t D = R; D-- > 0;)
        Perm.push_back(D);
    if (static_cast<int64_t>(Perm.size()) != R)
      return false;
    std::vector<int64_t> Check = Perm;
    llvm::sort(Check);
    for (int64_t D = 0; D < R; ++D)
      if (Check[D] != D)
        return false;
    Dims Shape, PermStride;
    for (int64_t P : Perm)
      Shape.push_back(X.Shape[P]);
    size_t N0 = X.size();
    if (N0 == 0) {
      Out.push_back(reshaped(X, std::move(Shape)));
      return true;
    }
    auto Stride = stridesOf(X.Shape);
    if (!Stride)
      return false;
    for (int64_t P : Perm)
      PermStride.push_back((*Stride)[P]);
    std::vector<size_t> Index;
    Index.reserve(N0);
    Dims Pos(R, 0);
    for (size_t K = 0; K < N0; ++K) {
      int64_t Off = 0;
      for (int64_t D = 0; D < R; ++D)
        Off += Pos[D] * PermStride[D];
      Index.push_back(static_cast<size_t>(Off));
      for (int64_t D = R; D-- > 0;) {
        if (++Pos[D] < Shape[D])
          break;
        Pos[D] = 0;
      }
    }
    Out.push_back(take(X, Index, std::move(Shape)));
    return true;
  }

  bool expand(const Tensor &X, const Tensor *ShapeT, Outputs &Out) const {
    auto Target = intList(ShapeT);
    if (!Target || ShapeT->rank() != 1)
      return false;
    Dims Shape;
    if (!broadcastShapes(X.Shape, *Target, Shape))
      return false;
    auto Count = countElements(Shape);
    if (!Count)
      return false;
    auto Index = broadcastIndex(X.Shape, Shape, static_cast<size_t>(*Count));
    Out.push_back(take(X, Index, std::move(Shape)));
    return true;
  }

  bool tile(const Tensor &X, const Tensor *RepeatsT, Outputs &Out) const {
    auto Repeats = intList(RepeatsT);
    if (Opset < 6 || !Repeats || RepeatsT->rank() != 1 ||
        static_cast<int64_t>(Repeats->size()) != X.rank())
      return false;
    Dims Shape;
    for (int64_t D = 0; D < X.rank(); ++D) {
      int64_t Rep = (*Repeats)[D];
      if (Rep < 0 || (Rep != 0 && X.Shape[D] > MaxFoldedElements / Rep))
        return false;
      Shape.push_back(X.Shape[D] * Rep);
    }
    auto Count = countElements(Shape);
    if (!Count)
      return false;
    if (*Count == 0) {
      Out.push_back(take(X, {}, std::move(Shape)));
      return true;
    }
    auto Stride = stridesOf(X.Shape);
    if (!Stride)
      return false;
    std::vector<size_t> Index;
    Index.reserve(static_cast<size_t>(*Count));
    Dims Pos(X.rank(), 0);
    for (int64_t K = 0; K < *Count; ++K) {
      int64_t Off = 0;
      for (int64_t D = 0; D < X.rank(); ++D)
        Off += (Pos[D] % X.Shape[D]) * (*Stride)[D];
      Index.push_back(static_cast<size_t>(Off));
      for (int64_t D = X.rank(); D-- > 0;) {
        if (++Pos[D] < Shape[D])
          break;
        Pos[D] = 0;
      }
    }
    Out.push_back(take(X, Index, std::move(Shape)));
    return true;
  }

  bool constantOfShape(const onnx::NodeProto &N, const Tensor &ShapeT,
                       Outputs &Out) const {
    auto Target = intList(&ShapeT);
    if (!Target || ShapeT.rank() != 1)
      return false;
    Dims Shape(Target->begin(), Target->end());
    auto Count = countElements(Shape);
    if (!Count)
      return false;
    Tensor Fill = makeTensor(TP::FLOAT, {});
    Fill.Reals.push_back(0.0);
    if (const auto *A = findAttr(N, "value")) {
      auto V = fromProto(A->t());
      if (!V || V->size() != 1)
        return false;
      Fill = std::move(*V);
    }
    Tensor T = makeTensor(Fill.Type, std::move(Shape));
    if (T.isReal())
      T.Reals.assign(static_cast<size_t>(*Count), Fill.Reals[0]);
    else
      T.Ints.assign(static_cast<size_t>(*Count), Fill.Ints[0]);
    Out.push_back(std::move(T));
    return true;
  }

  bool range(Inputs In, Outputs &Out) const {
    if (In.size() != 3 || llvm::is_contained(In, nullptr))
      return false;
    const Tensor &Start = *In[0], &Limit = *In[1], &Delta = *In[2];
    int32_t Type = Start.Type;
    if (Type == TP::BOOL || Limit.Type != Type || Delta.Type != Type ||
        Start.size() != 1 || Limit.size() != 1 || Delta.size() != 1 ||
        Start.rank() > 1 || Limit.rank() > 1 || Delta.rank() > 1)
      return false;
    Tensor T = makeTensor(Type, {0});
    if (Start.isReal()) {
      double S = Start.Reals[0], D = Delta.Reals[0];
      if (D == 0.0)
        return false;
      double N = std::ceil(fitReal(Type, Limit.Reals[0] - S) / D);
      if (!std::isfinite(N) || N > static_cast<double>(MaxFoldedElements))
        return false;
      int64_t Count = N > 0 ? static_cast<int64_t>(N) : 0;
      // Accumulated in the element type, as ONNX Runtime's kernel does.
      double V = S;
      for (int64_t I = 0; I < Count; ++I) {
        T.Reals.push_back(V);
        V = fitReal(Type, V + D);
      }
      T.Shape[0] = Count;
    } else {
      __int128 S = Start.Ints[0], L = Limit.Ints[0], D = Delta.Ints[0];
      if (D == 0)
        return false;
      __int128 Diff = L - S, Count = 0;
      if ((Diff > 0 && D > 0) || (Diff < 0 && D < 0))
        Count = (Diff + D + (D > 0 ? -1 : 1)) / D;
      if (Count > MaxFoldedElements)
        return false;
      for (__int128 I = 0; I < Count; ++I)
        pushInt(T, static_cast<int64_t>(S + I * D));
      T.Shape[0] = static_cast<int64_t>(Count);
    }
    Out.push_back(std::move(T));
    return true;
  }

  bool split(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const Tensor &X = *In[0];
    if (X.rank() == 0 || N.output_size() == 0)
      return false;
    auto Axis = normAxis(attrInt(N, "axis", 0), X.rank());
    if (!Axis)
      return false;
    int64_t D = X.Shape[*Axis], Parts = N.output_size();
    std::vector<int64_t> Sizes;
    if (Opset < 13) {
      if (auto S = attrInts(N, "split"))
        Sizes = *S;
      else if (Opset < 2 && In.size() > 1 && In[1])
        return false; // Split-1 could take the sizes as an input.
    } else if (In.size() > 1 && In[1]) {
      auto S = intList(In[1]);
      if (!S)
        return false;
      Sizes = *S;
    }
    if (Sizes.empty()) {
      if (D % Parts != 0)
        return false;
      Sizes.assign(static_cast<size_t>(Parts), D / Parts);
    }
    if (static_cast<int64_t>(Sizes.size()) != Parts)
      return false;
    int64_t Sum = 0;
    for (int64_t S : Sizes) {
      if (S < 0 || S > D || __builtin_add_overflow(Sum, S, &Sum))
        return false;
    }
    if (Sum != D)
      return false;
    auto Outer = productOf(X.Shape, 0, *Axis);
    auto Inner = productOf(X.Shape, *Axis + 1, X.rank());
    if (!Outer || !Inner)
      return false;
    int64_t Offset = 0;
    for (int64_t S : Sizes) {
      Dims Shape(X.Shape);
      Shape[*Axis] = S;
      std::vector<size_t> Index;
      // A non-empty X holds Outer * D * Inner <= MaxFoldedElements
      // elements, so these products fit; an empty X has empty parts, and
      // Outer may then be huge.
      for (int64_t O = 0; X.size() > 0 && O < *Outer; ++O)
        for (int64_t J = 0; J < S * *Inner; ++J)
          Index.push_back(static_cast<size_t>((O * D + Offset) * *Inner + J));
      Out.push_back(take(X, Index, std::move(Shape)));
      Offset += S;
    }
    return true;
  }

  bool nonZero(const Tensor &X, Outputs &Out) const {
    int64_t R = X.rank();
    if (R == 0)
      return false; // numpy deprecates it; runtimes disagree.
    std::vector<size_t> Hits;
    for (size_t I = 0, E = X.size(); I < E; ++I)
      if (X.isReal() ? X.Reals[I] != 0.0 : X.Ints[I] != 0)
        Hits.push_back(I);
    int64_t NNZ = static_cast<int64_t>(Hits.size());
    if (!countElements({R, NNZ}))
      return false;
    Tensor T = makeTensor(TP::INT64, {R, NNZ});
    if (Hits.empty()) {
      Out.push_back(std::move(T));
      return true;
    }
    auto Stride = stridesOf(X.Shape);
    if (!Stride)
      return false;
    for (int64_t D = 0; D < R; ++D)
      for (size_t H : Hits)
        T.Ints.push_back((static_cast<int64_t>(H) / (*Stride)[D]) % X.Shape[D]);
    Out.push_back(std::move(T));
    return true;
  }

  bool where(Inputs In, Outputs &Out) const {
    if (In.size() != 3 || llvm::is_contained(In, nullptr))
      return false;
    const Tensor &C = *In[0], &X = *In[1], &Y = *In[2];
    if (C.Type != TP::BOOL || X.Type != Y.Type)
      return false;
    Dims CX, Shape;
    if (!broadcastShapes(C.Shape, X.Shape, CX) ||
        !broadcastShapes(CX, Y.Shape, Shape))
      return false;
    auto Count = countElements(Shape);
    if (!Count)
      return false;
    size_t N = static_cast<size_t>(*Count);
    auto IC = broadcastIndex(C.Shape, Shape, N);
    auto IX = broadcastIndex(X.Shape, Shape, N);
    auto IY = broadcastIndex(Y.Shape, Shape, N);
    Tensor T = makeTensor(X.Type, std::move(Shape));
    for (size_t K = 0; K < N; ++K) {
      bool Pick = C.Ints[IC[K]] != 0;
      if (T.isReal())
        T.Reals.push_back(Pick ? X.Reals[IX[K]] : Y.Reals[IY[K]]);
      else
        T.Ints.push_back(Pick ? X.Ints[IX[K]] : Y.Ints[IY[K]]);
    }
    Out.push_back(std::move(T));
    return true;
  }

  bool clip(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const Tensor &X = *In[0];
    if (X.Type == TP::BOOL)
      return false;
    double Lo = -std::numeric_limits<double>::infinity();
    double Hi = std::numeric_limits<double>::infinity();
    int64_t LoI = std::numeric_limits<int64_t>::min();
    int64_t HiI = std::numeric_limits<int64_t>::max();
    if (Opset < 11) {
      if (!X.isReal())
        return false;
      Lo = attrFloat(N, "min").getValueOr(-FLT_MAX);
      Hi = attrFloat(N, "max").getValueOr(FLT_MAX);
    } else {
      for (size_t I : {size_t(1), size_t(2)}) {
        const Tensor *B = I < In.size() ? In[I] : nullptr;
        if (!B)
          continue;
        if (B->Type != X.Type || B->size() != 1)
          return false;
        if (X.isReal())
          (I == 1 ? Lo : Hi) = B->Reals[0];
        else
          (I == 1 ? LoI : HiI) = B->Ints[0];
      }
    }
    Tensor T = makeTensor(X.Type, X.Shape);
    for (size_t I = 0, E = X.size(); I < E; ++I) {
      // Max after min, as the kernels do when the bounds cross.
      if (X.isReal())
        pushReal(T, std::min(std::max(X.Reals[I], Lo), Hi));
      else
        pushInt(T, std::min(std::max(X.Ints[I], LoI), HiI));
    }
    Out.push_back(std::move(T));
    return true;
  }

  bool reduce(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const std::string &Op = N.op_type();
    const Tensor &X = *In[0];
    if (X.Type == TP::BOOL)
      return false;
    bool Present;
    auto Axes = axesOf(N, In, Op == "ReduceSum" ? 13 : 18, Present);
    if (!Axes)
      return false;
    bool KeepDims = attrInt(N, "keepdims", 1) != 0;
    if (Axes->empty()) {
      if (attrInt(N, "noop_with_empty_axes", 0) != 0) {
        Out.push_back(X);
        return true;
      }
      for (int64_t D = 0; D < X.rank(); ++D)
        Axes->push_back(D);
    }
    auto Sorted = normAxes(*Axes, X.rank());
    if (!Sorted)
      return false;
    Dims Shape, Kept; // Kept: output shape with reduced dims as 1.
    bool Empty = X.size() == 0;
    for (int64_t D = 0; D < X.rank(); ++D) {
      bool Reduced = llvm::is_contained(*Sorted, D);
      Kept.push_back(Reduced ? 1 : X.Shape[D]);
      if (!Reduced || KeepDims)
        Shape.push_back(Reduced ? 1 : X.Shape[D]);
    }
    auto Count = countElements(Kept);
    if (!Count)
      return false;
    bool IsMinMax = Op == "ReduceMin" || Op == "ReduceMax";
    if (Empty && IsMinMax && *Count > 0)
      return false; // The min of nothing.
    // Each output element accumulates the inputs that map to it.
    size_t NOut = static_cast<size_t>(*Count);
    std::vector<int64_t> AccI(NOut, Op == "ReduceProd" ? 1 : 0);
    std::vector<double> AccR(NOut, Op == "ReduceProd" ? 1.0 : 0.0);
    std::vector<bool> Seen(NOut, false);
    // Only the loop over X's elements reads the strides: an empty X may
    // have strides that overflow.
    auto OutStride = stridesOf(Kept);
    if (!OutStride && !Empty)
      return false;
    Dims Pos(X.rank(), 0);
    for (size_t K = 0, E = X.size(); K < E; ++K) {
      int64_t O = 0;
      for (int64_t D = 0; D < X.rank(); ++D)
        O += (Kept[D] == 1 ? 0 : Pos[D]) * (*OutStride)[D];
      size_t Slot = static_cast<size_t>(O);
      if (X.isReal()) {
        double V = X.Reals[K], &A = AccR[Slot];
        if (Op == "ReduceSum")
          A = fitReal(X.Type, A + V);
        else if (Op == "ReduceProd")
          A = fitReal(X.Type, A * V);
        else if (!Seen[Slot] || std::isnan(V))
          A = V;
        else if (!std::isnan(A))
          A = Op == "ReduceMin" ? std::min(A, V) : std::max(A, V);
      } else {
        int64_t V = X.Ints[K], &A = AccI[Slot];
        if (Op == "ReduceSum")
          A = fitInt(X.Type, *intBinary(BinOp::Add, A, V));
        else if (Op == "ReduceProd")
          A = fitInt(X.Type, *intBinary(BinOp::Mul, A, V));
        else if (!Seen[Slot])
          A = V;
        else
          A = Op == "ReduceMin" ? std::min(A, V) : std::max(A, V);
      }
      Seen[Slot] = true;
      for (int64_t D = X.rank(); D-- > 0;) {
        if (++Pos[D] < X.Shape[D])
          break;
        Pos[D] = 0;
      }
    }
    Tensor T = makeTensor(X.Type, std::move(Shape));
    if (T.isReal())
      T.Reals = std::move(AccR);
    else
      T.Ints = std::move(AccI);
    Out.push_back(std::move(T));
    return true;
  }

  int64_t Opset;
};

/// Evaluates N with In, checking what comes out.
bool evaluate(const Evaluator &E, const onnx::NodeProto &N, Inputs In,
              Outputs &Out) {
  Out.clear();
  if (!E.eval(N, In, Out) || Out.size() != static_cast<size_t>(N.output_size()))
    return false;
  for (const Tensor &T : Out) {
    auto Count = countElements(T.Shape);
    if (!isSupportedType(T.Type) || !Count ||
        static_cast<size_t>(*Count) != T.size())
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

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
  Folder(onnx::ModelProto &Model, int64_t Opset)
      : W(&Model), Opset(Opset), Eval(Opset) {
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
    if (!evaluate(Eval, N, In, Out))
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
      learnType(Name, perfc::frontend::typeOf(Out[I]), Result);
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
  Evaluator Eval;
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
    if (!evaluate(Evaluator(Opset), Node, In, Out))
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
