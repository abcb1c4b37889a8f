//===- ZooModels.h - Transformers from perfc zoo's generator ----*- C++ -*-===//
//
// Tests of the generator, the training passes and the planner all need a
// transformer of a given shape as ONNX bytes or imported; these helpers
// make one and fail the calling test on any error.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TESTS_ZOOMODELS_H
#define PERFC_TESTS_ZOOMODELS_H

#include "frontend/OnnxImport.h"
#include "tools/modelgen/TransformerGen.h"

#include "llvm/Support/Error.h"

#include <doctest/doctest.h>

#include <string>

namespace perfc::test {

/// A spec of family F: layers x hidden (heads), sequence and vocabulary;
/// everything else the generator's default.
inline modelgen::TransformerSpec transformerSpec(modelgen::Family F,
                                                 int64_t Layers, int64_t Hidden,
                                                 int64_t Heads, int64_t Seq,
                                                 int64_t Vocab) {
  modelgen::TransformerSpec Spec;
  Spec.Fam = F;
  Spec.Layers = Layers;
  Spec.Hidden = Hidden;
  Spec.Heads = Heads;
  Spec.Seq = Seq;
  Spec.Vocab = Vocab;
  return Spec;
}

/// The ONNX bytes `perfc zoo` writes for Spec.
inline std::string zooBytes(const modelgen::TransformerSpec &Spec) {
  auto Bytes = modelgen::writeTransformerOnnx(Spec);
  REQUIRE_MESSAGE(bool(Bytes), llvm::toString(Bytes.takeError()));
  return std::move(*Bytes);
}

/// Bytes imported as the command line would (Name appears in errors).
inline frontend::ImportedModel importZoo(llvm::StringRef Bytes,
                                         frontend::ImportOptions O = {},
                                         llvm::StringRef Name = "zoo.onnx") {
  auto M = frontend::importOnnxBytes(Bytes, Name, O);
  REQUIRE_MESSAGE(bool(M), llvm::toString(M.takeError()));
  return std::move(*M);
}

} // namespace perfc::test

#endif // PERFC_TESTS_ZOOMODELS_H
