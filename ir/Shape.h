//===- Shape.h - Tensor shapes with symbolic dimensions ---------*- C++ -*-===//
//
// A shape is either unranked or a list of dimensions; each dimension is a
// known non-negative size, a named symbol (bound later by the user) or
// unknown. Element counts are computed with overflow checks: a product that
// does not fit in 2^62 is reported as overflow, never wrapped.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_IR_SHAPE_H
#define PERFC_IR_SHAPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <initializer_list>
#include <string>

namespace perfc::ir {

/// The largest element count or byte size perfc represents. Shapes whose
/// sizes exceed it are rejected by the frontend, so passes may multiply a
/// size by a small factor without checking.
constexpr uint64_t MaxTensorSize = uint64_t(1) << 62;

struct Dim {
  int64_t Value = -1; ///< Known size, or -1.
  std::string Symbol; ///< Name of a symbolic dimension, if any.

  static Dim known(int64_t V) { return Dim{V, {}}; }
  static Dim symbolic(llvm::StringRef S) { return Dim{-1, S.str()}; }
  bool isKnown() const { return Value >= 0; }
  bool operator==(const Dim &O) const {
    return Value == O.Value && Symbol == O.Symbol;
  }
};

class Shape {
public:
  Shape() = default; ///< Unranked.
  explicit Shape(llvm::ArrayRef<int64_t> Sizes) : Ranked(true) {
    for (int64_t S : Sizes)
      Dims.push_back(Dim::known(S));
  }
  Shape(std::initializer_list<int64_t> Sizes)
      : Shape(llvm::ArrayRef<int64_t>(Sizes)) {}
  static Shape unranked() { return Shape(); }
  static Shape scalar() { return Shape(llvm::ArrayRef<int64_t>{}); }

  bool isRanked() const { return Ranked; }
  unsigned rank() const { return Dims.size(); }
  const Dim &operator[](unsigned I) const { return Dims[I]; }
  Dim &operator[](unsigned I) { return Dims[I]; }
  llvm::ArrayRef<Dim> dims() const { return Dims; }
  void push_back(Dim D) {
    Ranked = true;
    Dims.push_back(std::move(D));
  }

  /// True when ranked and every dimension is known.
  bool isStatic() const;
  /// Size of dimension I, or 0 when unknown; negative I counts from the end.
  int64_t size(int I) const;
  /// Sizes of all dimensions, unknown ones as 0.
  llvm::SmallVector<int64_t, 4> sizes() const;
  /// Product of the dimensions; None if any is unknown, any exceeds
  /// MaxTensorSize, or the product does (0 when a dimension is 0 and every
  /// dimension fits: the result never depends on the order of the
  /// dimensions).
  llvm::Optional<uint64_t> numElements() const;
  /// Element count, with unknown dimensions counted as 0 (a shape perfc could
  /// not infer costs nothing rather than something made up).
  uint64_t numElementsOrZero() const;

  /// "[1, 3, 224, 224]", with symbols by name and unknown dims as "?".
  std::string str() const;

  bool operator==(const Shape &O) const {
    return Ranked == O.Ranked && Dims == O.Dims;
  }

private:
  bool Ranked = false;
  llvm::SmallVector<Dim, 4> Dims;
};

/// Multiplies A and B; None when the product exceeds MaxTensorSize.
llvm::Optional<uint64_t> checkedMul(uint64_t A, uint64_t B);
/// Adds A and B; None when the sum exceeds MaxTensorSize.
llvm::Optional<uint64_t> checkedAdd(uint64_t A, uint64_t B);

} // namespace perfc::ir

#endif // PERFC_IR_SHAPE_H
