//===- FoldElementwise.cpp - Element-wise ops of the shape folder --------===//
#include "frontend/FoldElementwise.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace perfc::frontend::fold {
namespace {

bool isComparison(BinOp Op) {
  return Op == BinOp::Equal || Op == BinOp::Less || Op == BinOp::LessEq ||
         Op == BinOp::Greater || Op == BinOp::GreaterEq;
}
bool isLogical(BinOp Op) {
  return Op == BinOp::And || Op == BinOp::Or || Op == BinOp::Xor;
}

} // namespace

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

namespace {

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

} // namespace

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

} // namespace perfc::frontend::fold
