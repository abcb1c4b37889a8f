//===- OnnxToIr.h - Converting checked ONNX protos to IR -------*- C++ -*-===//
//
// Internal to the frontend: turns a ModelProto whose structure has been
// checked and whose shapes have been inferred into an ir::Graph.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_FRONTEND_ONNXTOIR_H
#define PERFC_FRONTEND_ONNXTOIR_H

#include "frontend/CommonShapes.h"
#include "ir/Graph.h"
#include "ir/Warning.h"

#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <vector>

namespace perfc::frontend {

ir::DType convertDType(int32_t OnnxElemType);

/// Converts the main graph and, recursively, the bodies of If/Loop/Scan.
/// Shapes left unknown by inference are an error at the node where they
/// first appear, unless that node's output size depends on data by nature
/// (NonZero, Unique, ...), it is outside the standard op set, it is inside a
/// subgraph, or AllowUnknownShapes is set: then a warning, and the unknown
/// dimensions count as 0.
/// Known: the types of the main graph's node outputs when
/// inferCommonShapes gave them (instead of value_info).
llvm::Expected<ir::Graph> convertGraph(const onnx::GraphProto &G, int64_t Opset,
                                       bool AllowUnknownShapes,
                                       std::vector<Warning> &Warnings,
                                       const InferredTypes *Known = nullptr);

} // namespace perfc::frontend

#endif // PERFC_FRONTEND_ONNXTOIR_H
