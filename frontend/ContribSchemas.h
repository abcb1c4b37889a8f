//===- ContribSchemas.h - Shapes of ONNX Runtime's contrib ops -*- C++ -*-===//
//
// ONNX Runtime's transformer optimizer (onnxruntime.transformers.optimizer,
// Optimum's --optimize O2 and up) rewrites BERT and GPT-2 graphs with fused
// ops of domain "com.microsoft". ONNX 1.12 knows no schema for them, so
// their outputs would stay untyped and stop the import. installContribSchemas
// registers, once per process, ONNX op schemas (since version 1) for those
// of them perfc supports, with type-and-shape inference functions that
// follow ONNX Runtime's own definitions
// (onnxruntime/core/graph/contrib_ops/bert_defs.cc and contrib_defs.cc,
// docs/ContribOperators.md):
//
//   Attention, MultiHeadAttention, SkipLayerNormalization,
//   SkipSimplifiedLayerNormalization, EmbedLayerNormalization, BiasGelu,
//   FastGelu, Gelu, QuickGelu, BiasAdd, FusedMatMul.
//
// Other ops of that domain keep no schema: they are imported as before.
// An inference function fails (fail_shape_inference) on a node that breaks
// its op's definition (a wrong rank, a missing required input), which the
// importer reports as for any standard op.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_FRONTEND_CONTRIBSCHEMAS_H
#define PERFC_FRONTEND_CONTRIBSCHEMAS_H

#include "llvm/ADT/StringRef.h"

namespace perfc::frontend {

/// ONNX Runtime's contrib domain.
inline constexpr const char *ContribDomain = "com.microsoft";

/// Registers the schemas above with ONNX's registry; later calls do nothing.
/// Thread-safe.
void installContribSchemas();

/// Whether perfc has a schema (and so shape inference) for Domain:OpType
/// outside the standard domain.
bool hasContribSchema(llvm::StringRef Domain, llvm::StringRef OpType);

} // namespace perfc::frontend

#endif // PERFC_FRONTEND_CONTRIBSCHEMAS_H
