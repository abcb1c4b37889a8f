//===- FoldValue.cpp - The values the shape folder computes with ---------===//
#include "frontend/FoldValue.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace perfc::frontend::fold {

llvm::Optional<int64_t> countElements(llvm::ArrayRef<int64_t> Shape,
                                      int64_t Cap) {
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

namespace {

/// N little-endian values of type T from raw_data into Out (int64 or
/// double); false when raw_data does not hold exactly N of them.
template <typename T, typename Elem>
bool readRaw(const std::string &Raw, size_t N, std::vector<Elem> &Out) {
  if (Raw.size() != N * sizeof(T))
    return false;
  Out.resize(N);
  for (size_t I = 0; I < N; ++I) {
    T V;
    std::memcpy(&V, Raw.data() + I * sizeof(T), sizeof(T));
    Out[I] = static_cast<Elem>(V);
  }
  return true;
}

} // namespace

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
      Ok = readRaw<float>(Raw, N, T.Reals);
    else if ((Ok = static_cast<size_t>(P.float_data_size()) == N))
      T.Reals.assign(P.float_data().begin(), P.float_data().end());
    break;
  case TP::DOUBLE:
    if (P.has_raw_data())
      Ok = readRaw<double>(Raw, N, T.Reals);
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

llvm::Optional<std::vector<int64_t>> intList(const Tensor *T) {
  if (!T || !isIndexType(T->Type) || T->rank() > 1)
    return llvm::None;
  return T->Ints;
}

llvm::Optional<int64_t> normAxis(int64_t Axis, int64_t Rank) {
  if (Axis < -Rank || Axis >= Rank)
    return llvm::None;
  return Axis < 0 ? Axis + Rank : Axis;
}

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

namespace {

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

} // namespace

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

} // namespace perfc::frontend::fold
