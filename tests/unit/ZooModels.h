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
#include <onnx/onnx_pb.h>

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

/// Bytes with every node renamed `n<i>`: the model as an exporter that
/// numbers no layers would write it.
inline std::string withAnonymousNodes(const std::string &Bytes) {
  onnx::ModelProto P;
  REQUIRE(P.ParseFromString(Bytes));
  for (int I = 0; I < P.graph().node_size(); ++I)
    P.mutable_graph()->mutable_node(I)->set_name("n" + std::to_string(I));
  return P.SerializeAsString();
}

} // namespace perfc::test

#endif // PERFC_TESTS_ZOOMODELS_H
