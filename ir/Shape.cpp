//===- Shape.cpp - Tensor shapes with symbolic dimensions -----------------===//
#include "ir/Shape.h"

#include "llvm/Support/MathExtras.h"

#include <charconv>

namespace perfc::ir {

llvm::Optional<uint64_t> checkedMul(uint64_t A, uint64_t B) {
  uint64_t R = 0;
  if (__builtin_mul_overflow(A, B, &R) || R > MaxTensorSize)
    return llvm::None;
  return R;
}

llvm::Optional<uint64_t> checkedAdd(uint64_t A, uint64_t B) {
  uint64_t R = 0;
  if (__builtin_add_overflow(A, B, &R) || R > MaxTensorSize)
    return llvm::None;
  return R;
}

bool Shape::isStatic() const {
  if (!Ranked)
    return false;
  for (const Dim &D : Dims)
    if (!D.isKnown())
      return false;
  return true;
}

int64_t Shape::size(int I) const {
  int N = static_cast<int>(Dims.size());
  if (I < 0)
    I += N;
  if (I < 0 || I >= N || !Dims[I].isKnown())
    return 0;
  return Dims[I].Value;
}

llvm::SmallVector<int64_t, 4> Shape::sizes() const {
  llvm::SmallVector<int64_t, 4> R;
  for (const Dim &D : Dims)
    R.push_back(D.isKnown() ? D.Value : 0);
  return R;
}

llvm::Optional<uint64_t> Shape::numElements() const {
  if (!Ranked)
    return llvm::None;
  // Two passes, so that the answer does not depend on the order of the
  // dimensions: [0, 2^40, 2^40] and [2^40, 2^40, 0] are both empty. First,
  // every dimension must be known and fit in MaxTensorSize on its own (a
  // dimension is itself an element count: a slice along it holds that
  // many, and op formulas multiply single dimensions). Then a zero
  // dimension makes the tensor empty, which is exact, not an overflow:
  // ONNX models hold such tensors (an empty KV cache [b, h, 0, d]).
  bool Empty = false;
  for (const Dim &D : Dims) {
    if (!D.isKnown() || static_cast<uint64_t>(D.Value) > MaxTensorSize)
      return llvm::None;
    Empty |= D.Value == 0;
  }
  if (Empty)
    return uint64_t(0);
  uint64_t N = 1;
  for (const Dim &D : Dims) {
    auto P = checkedMul(N, static_cast<uint64_t>(D.Value));
    if (!P)
      return llvm::None;
    N = *P;
  }
  return N;
}

uint64_t Shape::numElementsOrZero() const {
  return numElements().getValueOr(0);
}

std::string Shape::str() const {
  if (!Ranked)
    return "[*]";
  // Called for every node of every prediction (the per-node output shape):
  // the text is made in a buffer on the stack and copied once, not
  // appended piece by piece. Symbols are the one part of unbounded size.
  char Buf[160];
  char *P = Buf;
  std::string S;
  auto Spill = [&] {
    S.append(Buf, P);
    P = Buf;
  };
  *P++ = '[';
  for (unsigned I = 0; I < Dims.size(); ++I) {
    // Room for ", " and a number of up to 20 characters.
    if (P + 24 > Buf + sizeof(Buf))
      Spill();
    if (I) {
      *P++ = ',';
      *P++ = ' ';
    }
    if (Dims[I].isKnown()) {
      P = std::to_chars(P, Buf + sizeof(Buf), Dims[I].Value).ptr;
    } else if (!Dims[I].Symbol.empty()) {
      Spill();
      S += Dims[I].Symbol;
    } else {
      *P++ = '?';
    }
  }
  *P++ = ']';
  if (S.empty())
    return std::string(Buf, P);
  Spill();
  return S;
}

} // namespace perfc::ir
