//===- ErrorContractTest.cpp - Errors are one line naming the file --------===//
//
// Inputs the fuzzers (tools/fuzz, FuzzCheck.h) found breaking the contract
// that every error is one line starting with the file name: names in a
// model and values of --dim are arbitrary bytes.
//
//===----------------------------------------------------------------------===//
#include "OnnxModels.h"

#include "frontend/OnnxImport.h"

#include <doctest/doctest.h>

using namespace perfc;
using namespace perfc::test;

namespace {

std::string importError(const onnx::ModelProto &M,
                        const frontend::ImportOptions &O = {}) {
  auto R = frontend::importOnnxBytes(serialize(M), "m.onnx", O);
  if (R) {
    FAIL_CHECK("imported where an error was expected");
    return "";
  }
  return llvm::toString(R.takeError());
}

} // namespace

TEST_CASE("a newline in a tensor name is escaped in the error") {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {4});
  addNode(M, "Relu", {"x"}, {"y"}, "relu");
  addOutput(M, "y\nz"); // no node writes it
  CHECK(importError(M) ==
        "m.onnx: graph output 'y\\0Az' is not produced by any node");
}

TEST_CASE("a carriage return in a --dim name is escaped in the error") {
  // fuzz_cli: "--dim \rd3seq=4" on a model whose dims are batch and seq.
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {"batch", "seq"});
  addNode(M, "Relu", {"x"}, {"y"}, "relu");
  addOutput(M, "y");
  frontend::ImportOptions O;
  O.Dims = {{"\rd3seq", 4}};
  const std::string E = importError(M, O);
  CHECK(E.find('\r') == std::string::npos);
  CHECK(E.find('\n') == std::string::npos);
  CHECK(llvm::StringRef(E).startswith("m.onnx: --dim \\0Dd3seq: no input "
                                      "dimension is named '\\0Dd3seq'"));
}
