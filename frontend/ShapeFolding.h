//===- ShapeFolding.h - Shape inference through run-time shape math -*- C++
//-*-===//
//
// Models exported with dynamic axes compute their shapes at run time:
// Shape -> Gather -> Mod/Div -> Unsqueeze -> Concat -> Pad/Reshape. ONNX's
// data propagation follows only a handful of those ops, so many shapes stay
// unknown after the inputs are bound, although each of them is then a
// constant, and runtimes (ONNX Runtime, TensorRT) fold them as such.
//
// inferShapesWithFolding runs ONNX shape inference, evaluates every node
// whose inputs are known small tensors (initializers that kept their data,
// Constant nodes, Shape/Size of tensors with static shapes) with a small
// interpreter, and infers again on a working copy of the model in which the
// evaluated nodes are Constants, until nothing new is learned. The model
// keeps all of its nodes: only its value_info and output types change.
//
// Evaluated ops, with ONNX semantics for opsets 1..17: Shape, Size,
// Identity, Cast, CastLike, Gather, Slice, Concat, Unsqueeze, Squeeze,
// Reshape, Flatten, Transpose, Expand, Tile, ConstantOfShape, Range, Split,
// NonZero, Add, Sub, Mul, Div, Mod, Pow, Neg, Abs, Sign, Floor, Ceil, Round,
// Sqrt, Reciprocal, Clip, Min, Max, Sum, Equal, Less, LessOrEqual, Greater,
// GreaterOrEqual, Not, And, Or, Xor, Where, ReduceProd, ReduceSum,
// ReduceMin, ReduceMax. Tensors are int64, int32, float, double or bool, of
// at most MaxFoldedElements elements. Integer Div truncates toward zero, as
// ONNX Runtime's C++ kernels do (numpy, and so ONNX's Python reference,
// floors); integer Mod with fmod=0 takes the sign of the divisor. Anything
// an op cannot compute exactly (division by zero, an index out of range, a
// float that does not fit the integer it is cast to) leaves the value
// unknown.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_FRONTEND_SHAPEFOLDING_H
#define PERFC_FRONTEND_SHAPEFOLDING_H

#include "llvm/ADT/ArrayRef.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace perfc::frontend {

/// The largest tensor the folder computes.
constexpr int64_t MaxFoldedElements = 4096;

/// What one call to inferShapesWithFolding did.
struct FoldingStats {
  unsigned Rounds = 0;          ///< Evaluation sweeps run.
  unsigned InferencePasses = 0; ///< Whole-model ONNX inference runs.
  unsigned NodesFolded = 0;     ///< Nodes whose outputs were all computed.
};

/// Infers the shapes of M's main graph (value_info and output types, and the
/// value_info of subgraphs), folding the shape computations as described
/// above. M's nodes are left as they are. Never throws; returns the first
/// failure message of ONNX shape inference in its strict mode, or "" when
/// there is none. Inference still runs to the end after a failure, leaving
/// only what depends on the failing node unknown.
std::string inferShapesWithFolding(onnx::ModelProto &M,
                                   FoldingStats *Stats = nullptr);

/// Evaluates one node of the default domain at the given opset as the
/// folder does. Inputs holds one tensor per node input (null for an absent
/// optional input); a Shape or Size node reads only its input's dims, so its
/// tensor may carry dims and no data. Returns whether every output was
/// computed; Outputs then holds one tensor per node output.
bool evaluateNode(const onnx::NodeProto &Node, int64_t Opset,
                  llvm::ArrayRef<const onnx::TensorProto *> Inputs,
                  std::vector<onnx::TensorProto> &Outputs);

} // namespace perfc::frontend

#endif // PERFC_FRONTEND_SHAPEFOLDING_H
