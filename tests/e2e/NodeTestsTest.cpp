//===- NodeTestsTest.cpp - Every ONNX backend node test gets a cost -------===//
//
// Debian's libonnx-testdata ships ONNX's backend node tests: 932 one-op
// models over 167 op types. Each must import and get a cost; the few that
// cannot are listed in README ("ONNX node tests") with their reasons, and
// the pass rate must stay at or above 99%.
//
//===----------------------------------------------------------------------===//
#include "frontend/OnnxImport.h"
#include "passes/WorkPass.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <set>

using namespace perfc;

namespace {

std::vector<std::string> nodeTestModels() {
  std::vector<std::string> Models;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(PERFC_ONNX_NODE_TESTS, EC), End;
       It != End && !EC; It.increment(EC)) {
    llvm::SmallString<256> Path(It->path());
    llvm::sys::path::append(Path, "model.onnx");
    if (llvm::sys::fs::exists(Path))
      Models.push_back(std::string(Path));
  }
  std::sort(Models.begin(), Models.end());
  return Models;
}

} // namespace

TEST_CASE("ONNX backend node tests: at least 99% import and get a cost") {
  std::vector<std::string> Models = nodeTestModels();
  REQUIRE(Models.size() >= 900);
  std::vector<std::string> Failures;
  std::set<std::string> OpTypes, Unregistered;
  // Many node tests feed shapes as run-time inputs (Reshape's target shape,
  // Range's limits): costed as --allow-unknown-shapes does. The strict count
  // is reported too.
  frontend::ImportOptions Lenient;
  Lenient.AllowUnknownShapes = true;
  std::vector<std::string> StrictFailures;
  for (const std::string &Path : Models) {
    if (auto Strict = frontend::importOnnxFile(Path, {}); !Strict)
      StrictFailures.push_back(llvm::toString(Strict.takeError()));
    auto M = frontend::importOnnxFile(Path, Lenient);
    if (!M) {
      Failures.push_back(llvm::toString(M.takeError()));
      continue;
    }
    GraphWork W = computeWork(M->Graph);
    for (const auto &N : M->Graph.nodes()) {
      OpTypes.insert(N->opType().str());
      if (N->domain().empty() && !defaultOpRegistry().lookup(N->opType()))
        Unregistered.insert(N->opType().str());
    }
    // Every cost is a finite, non-negative number.
    CHECK(W.Total.Flops >= 0);
    CHECK(W.Total.bytes() >= 0);
    CHECK(W.Total.Flops == W.Total.Flops);
  }
  for (const std::string &F : Failures)
    MESSAGE(F);
  double PassRate = 1.0 - double(Failures.size()) / double(Models.size());
  MESSAGE("node tests: " << Models.size() << " models, " << OpTypes.size()
                         << " op types, " << Failures.size() << " failures, "
                         << "pass rate " << PassRate * 100 << "%; "
                         << StrictFailures.size()
                         << " fail without --allow-unknown-shapes");
  for (const std::string &F : StrictFailures)
    MESSAGE("strict: " << F);
  CHECK(PassRate >= 0.99);
  // By default (no flag), too: README lists each of these failures.
  CHECK(1.0 - double(StrictFailures.size()) / double(Models.size()) >= 0.99);
  CHECK(OpTypes.size() >= 160);
  for (const std::string &Op : Unregistered)
    MESSAGE("no work formula: " << Op);
  CHECK(Unregistered.empty());
}

TEST_CASE("ONNX backend node tests: inferred output shapes equal the "
          "expected outputs'") {
  // Each node test ships the outputs its model must compute
  // (test_data_set_0/output_K.pb). Where perfc infers an output's shape
  // fully, without the run-time inputs, it must be that tensor's shape.
  unsigned Compared = 0;
  std::vector<std::string> Mismatches;
  for (const std::string &Path : nodeTestModels()) {
    // The models declare their outputs' shapes: drop them (and any
    // value_info), keeping the element types, so that inference decides.
    auto Bytes = llvm::MemoryBuffer::getFile(Path);
    REQUIRE(Bytes);
    onnx::ModelProto Proto;
    if (!Proto.ParseFromString((*Bytes)->getBuffer().str()))
      continue;
    Proto.mutable_graph()->clear_value_info();
    for (auto &Out : *Proto.mutable_graph()->mutable_output())
      if (Out.type().has_tensor_type())
        Out.mutable_type()->mutable_tensor_type()->clear_shape();
    std::string Stripped;
    Proto.SerializeToString(&Stripped);
    auto M = frontend::importOnnxBytes(Stripped, Path, {});
    if (!M) {
      llvm::consumeError(M.takeError());
      continue;
    }
    const auto &Outputs = M->Graph.outputs();
    for (unsigned K = 0; K < Outputs.size(); ++K) {
      const ir::Shape &S = Outputs[K]->shape();
      if (!S.isStatic())
        continue;
      llvm::SmallString<256> Pb(llvm::sys::path::parent_path(Path));
      llvm::sys::path::append(Pb, "test_data_set_0",
                              "output_" + std::to_string(K) + ".pb");
      auto Buffer = llvm::MemoryBuffer::getFile(Pb);
      onnx::TensorProto Expected;
      if (!Buffer || !Expected.ParseFromString((*Buffer)->getBuffer().str()))
        continue; // Sequence, optional or map outputs are not tensors.
      std::vector<int64_t> Want(Expected.dims().begin(), Expected.dims().end());
      std::vector<int64_t> Got;
      for (unsigned D = 0; D < S.rank(); ++D)
        Got.push_back(S[D].Value);
      ++Compared;
      if (Got != Want)
        Mismatches.push_back(Path + " output " + std::to_string(K) + ": " +
                             S.str());
    }
  }
  MESSAGE(Compared << " output shapes compared");
  for (const std::string &Mm : Mismatches)
    MESSAGE("shape mismatch: " << Mm);
  CHECK(Compared >= 800);
  CHECK(Mismatches.empty());
}
