//===- FoldValue.h - The values the shape folder computes with -*- C++ -*-===//
//
// Private to frontend/. The constant tensors ShapeFolding.cpp evaluates
// shape computations on, and the helpers that the evaluators of
// FoldElementwise.cpp and FoldOps.cpp share: conversion from and to protos,
// attributes, indexing.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_FRONTEND_FOLDVALUE_H
#define PERFC_FRONTEND_FOLDVALUE_H

#include "frontend/ShapeFolding.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace perfc::frontend::fold {

using TP = onnx::TensorProto;
using Dims = llvm::SmallVector<int64_t, 4>;

inline bool isSupportedType(int32_t T) {
  return T == TP::INT64 || T == TP::INT32 || T == TP::BOOL || T == TP::FLOAT ||
         T == TP::DOUBLE;
}
inline bool isRealType(int32_t T) { return T == TP::FLOAT || T == TP::DOUBLE; }
inline bool isIndexType(int32_t T) { return T == TP::INT64 || T == TP::INT32; }

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

using Inputs = llvm::ArrayRef<const Tensor *>;
using Outputs = std::vector<Tensor>;

/// Element count of a shape; None when a dimension is negative or the
/// count exceeds Cap.
llvm::Optional<int64_t> countElements(llvm::ArrayRef<int64_t> Shape,
                                      int64_t Cap = MaxFoldedElements);

/// Integer results wrap to the width of their type, as in the C++ kernels
/// of runtimes; computed in uint64_t so that the wrap is defined.
int64_t fitInt(int32_t T, int64_t V);
double fitReal(int32_t T, double V);

/// A float converted to an integer type: truncated toward zero as C++
/// casts do; None where the value does not fit (the cast would be
/// undefined in the runtime too).
llvm::Optional<int64_t> realToInt(int32_t T, double V);

Tensor makeTensor(int32_t Type, Dims Shape);
void pushInt(Tensor &T, int64_t V);
void pushReal(Tensor &T, double V);

/// The elements of Src at the given flat indices, in a tensor of Shape.
Tensor take(const Tensor &Src, llvm::ArrayRef<size_t> Index, Dims Shape);
Tensor reshaped(const Tensor &Src, Dims Shape);

//===----------------------------------------------------------------------===//
// Conversion from and to protos
//===----------------------------------------------------------------------===//

/// The value of a tensor proto, when it holds its data in a type the folder
/// computes with and is small enough.
llvm::Optional<Tensor> fromProto(const TP &P);
void toProto(const Tensor &T, TP &P);
onnx::TypeProto typeOf(const Tensor &T);

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *findAttr(const onnx::NodeProto &N,
                                     llvm::StringRef Name);
int64_t attrInt(const onnx::NodeProto &N, llvm::StringRef Name,
                int64_t Default);
llvm::Optional<float> attrFloat(const onnx::NodeProto &N, llvm::StringRef Name);
llvm::Optional<std::vector<int64_t>> attrInts(const onnx::NodeProto &N,
                                              llvm::StringRef Name);

/// The integers of a 0-D or 1-D int32/int64 tensor (axes, shapes, indices).
llvm::Optional<std::vector<int64_t>> intList(const Tensor *T);

/// Normalizes an axis against Rank (negative counts from the back).
llvm::Optional<int64_t> normAxis(int64_t Axis, int64_t Rank);

/// Normalized, sorted, unique axes.
llvm::Optional<std::vector<int64_t>> normAxes(std::vector<int64_t> Axes,
                                              int64_t Rank);

//===----------------------------------------------------------------------===//
// Indexing helpers
//===----------------------------------------------------------------------===//

/// Product of Shape[Begin, End); None on overflow.
llvm::Optional<int64_t> productOf(llvm::ArrayRef<int64_t> Shape, size_t Begin,
                                  size_t End);

/// Row-major strides. They fit for a tensor that holds elements (at most
/// MaxFoldedElements); None when they overflow, which only an empty tensor
/// with huge dimensions can do: ops handle empty tensors first.
llvm::Optional<Dims> stridesOf(llvm::ArrayRef<int64_t> Shape);

/// Numpy's multidirectional broadcast of two shapes.
bool broadcastShapes(llvm::ArrayRef<int64_t> A, llvm::ArrayRef<int64_t> B,
                     Dims &Out);

/// For each element of a tensor of shape Out (row-major), the flat index of
/// the element of a tensor of shape In that broadcasting makes it read.
std::vector<size_t> broadcastIndex(llvm::ArrayRef<int64_t> In,
                                   llvm::ArrayRef<int64_t> Out, size_t N);

} // namespace perfc::frontend::fold

#endif // PERFC_FRONTEND_FOLDVALUE_H
