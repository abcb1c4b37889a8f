//===- CommonShapes.h - Shape inference for common ops without ONNX -*- C++
//-*-===//
//
// ONNX's shape inference (InferShapes) builds maps of every name, copies
// every type it reads and checks what it writes; for a CNN of 200 nodes it
// costs more than parsing the model. Most models perfc is asked to rank in
// a search loop are made of a few ops whose shapes follow from static
// input shapes by simple formulas, so the importer first tries these
// formulas and runs ONNX only when a model steps outside them.
//
// inferCommonShapes succeeds only when every node of the main graph is one
// of the ops below, in the default domain, with static shapes, attributes
// in the forms the formulas cover, and no condition under which ONNX 1.12's
// strict inference would fail or say less; then it writes the types ONNX
// would have written (value_info for intermediate tensors, merged into
// recorded value_info and graph outputs) and returns true. Otherwise it
// returns false and leaves the model as it was: the caller runs ONNX.
//
// Ops: Conv; MaxPool, AveragePool (floor mode, explicit pads, one output);
// GlobalAveragePool, GlobalMaxPool; BatchNormalization (inference, one
// output); Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, Elu,
// Softplus, Clip, Identity, Neg, Abs, Sqrt, Exp, Erf, Reciprocal; Add, Sub,
// Mul, Div (broadcasting, opset >= 7); Flatten; Gemm; MatMul (rank >= 2);
// Concat; Constant (a tensor value). tests/e2e/CommonShapesTest.cpp checks the
// results against ONNX's on the model zoo and on generated cases of each op.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_FRONTEND_COMMONSHAPES_H
#define PERFC_FRONTEND_COMMONSHAPES_H

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include "ir/NameHash.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <vector>

namespace perfc::frontend {

/// A tensor type the formulas inferred: ONNX elem type and static dims.
struct InferredType {
  int32_t Elem = 0;
  llvm::SmallVector<int64_t, 4> Shape;
};
/// By tensor name (the names are the model's strings).
/// Types by tensor name (names held by the model): the graph's inputs,
/// initializers and node outputs.
struct InferredTypes {
  /// Indices into Types.
  llvm::DenseMap<llvm::StringRef, unsigned, ir::NameInfo> Index;
  std::vector<InferredType> Types;

  const InferredType *find(llvm::StringRef Name) const {
    auto It = Index.find(Name);
    return It == Index.end() ? nullptr : &Types[It->second];
  }
};

/// Infers the shapes of M's main graph as described above; false (and M
/// unchanged) when ONNX's inference must run instead. With Out, the types
/// of node outputs go to Out rather than into new value_info entries
/// (recorded value_info and graph outputs are still merged), which is what
/// convertGraph reads them from without building a map of its own.
bool inferCommonShapes(onnx::ModelProto &M, int64_t Opset,
                       InferredTypes *Out = nullptr);

} // namespace perfc::frontend

#endif // PERFC_FRONTEND_COMMONSHAPES_H
