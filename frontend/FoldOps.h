//===- FoldOps.h - The ONNX ops the shape folder evaluates ------*- C++ -*-===//
//
// Private to frontend/. The interpreter of the shape folder: one evaluator
// per ONNX op that ShapeFolding.h lists, and the dispatch from op types to
// them.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_FRONTEND_FOLDOPS_H
#define PERFC_FRONTEND_FOLDOPS_H

#include "frontend/FoldValue.h"

namespace perfc::frontend::fold {

/// Evaluates N with In at the given opset, checking what comes out.
bool evaluate(int64_t Opset, const onnx::NodeProto &N, Inputs In, Outputs &Out);

} // namespace perfc::frontend::fold

#endif // PERFC_FRONTEND_FOLDOPS_H
