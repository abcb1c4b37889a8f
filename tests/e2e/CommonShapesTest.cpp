//===- CommonShapesTest.cpp - perfc's shape formulas agree with ONNX's ----===//
//
// The importer infers the shapes of common ops itself and runs ONNX's
// inference only for models outside them (frontend/CommonShapes.h). Every
// model here is imported both ways, and the two imports must agree on
// everything: the error, or every value's type and shape, the warnings and
// the bindings. The models: the zoo, ONNX's backend node tests, the bad
// corpus, and generated Conv/pooling/broadcast cases.
//
//===----------------------------------------------------------------------===//
#include "frontend/CommonShapes.h"
#include "frontend/OnnxImport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace perfc;

namespace {

std::vector<std::string> modelsUnder(const std::string &Dir, bool Nested) {
  std::vector<std::string> Models;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    llvm::SmallString<256> Path(It->path());
    if (Nested)
      llvm::sys::path::append(Path, "model.onnx");
    if (llvm::sys::path::extension(Path) == ".onnx" &&
        llvm::sys::fs::is_regular_file(Path))
      Models.push_back(std::string(Path));
  }
  std::sort(Models.begin(), Models.end());
  return Models;
}

void describeGraph(const ir::Graph &G, std::string &Out) {
  auto Value = [&Out](const ir::Value *V) {
    if (!V) {
      Out += " -";
      return;
    }
    Out += " " + V->name().str() + ":" + ir::name(V->type()).str() +
           V->shape().str();
  };
  for (const ir::Value *V : G.inputs())
    Value(V);
  Out += "\n";
  for (const auto &N : G.nodes()) {
    Out += N->name().str() + " " + N->opType().str() + " <-";
    for (const ir::Value *V : N->inputs())
      Value(V);
    Out += " ->";
    for (const ir::Value *V : N->outputs())
      Value(V);
    Out += "\n";
    for (const auto &Sub : N->subgraphs())
      describeGraph(*Sub, Out);
  }
  Out += "outputs";
  for (const ir::Value *V : G.outputs())
    Value(V);
  Out += "\n";
}

/// Everything an import says, as text to compare.
std::string describe(llvm::Expected<frontend::ImportedModel> R) {
  if (!R)
    return "error: " + llvm::toString(R.takeError());
  std::string Out;
  describeGraph(R->Graph, Out);
  for (const Warning &W : R->Warnings)
    Out += "warning " + W.Node + ": " + W.Message + "\n";
  for (const auto &[Name, Value] : R->Bindings)
    Out += "bind " + Name + "=" + std::to_string(Value) + "\n";
  Out += "opset " + std::to_string(R->Opset) + "\n";
  return Out;
}

/// Imports Bytes with and without the formulas; true when they were used
/// (the model parses and inferCommonShapes accepts it).
bool checkBothWays(llvm::StringRef Bytes, const std::string &Name,
                   frontend::ImportOptions O = {}) {
  O.CommonShapes = false;
  std::string Onnx = describe(frontend::importOnnxBytes(Bytes, Name, O));
  O.CommonShapes = true;
  std::string Common = describe(frontend::importOnnxBytes(Bytes, Name, O));
  INFO(Name);
  CHECK(Common == Onnx);
  return Common == Onnx && Onnx.rfind("error: ", 0) != 0;
}

std::string readFile(const std::string &Path) {
  auto Buf = llvm::MemoryBuffer::getFile(Path);
  REQUIRE(Buf);
  return (*Buf)->getBuffer().str();
}

/// Whether the formulas cover a model (without importing it).
bool covered(const std::string &Bytes) {
  onnx::ModelProto M;
  if (!M.ParseFromString(Bytes))
    return false;
  for (auto &In : *M.mutable_graph()->mutable_input())
    if (In.type().tensor_type().shape().dim_size() > 0 &&
        In.type().tensor_type().shape().dim(0).has_dim_param())
      In.mutable_type()
          ->mutable_tensor_type()
          ->mutable_shape()
          ->mutable_dim(0)
          ->set_dim_value(1);
  int64_t Opset = 0;
  for (const auto &Imp : M.opset_import())
    if (Imp.domain().empty())
      Opset = Imp.version();
  return frontend::inferCommonShapes(M, Opset);
}

} // namespace

TEST_CASE("common shapes: the zoo imports the same with and without") {
  std::vector<std::string> Models =
      modelsUnder(std::string(PERFC_SOURCE_DIR) + "/tests/data/zoo", false);
  REQUIRE(Models.size() >= 10);
  unsigned Covered = 0;
  for (const std::string &Path : Models) {
    std::string Bytes = readFile(Path);
    frontend::ImportOptions Batch4;
    Batch4.Batch = 4;
    checkBothWays(Bytes, Path);
    checkBothWays(Bytes, Path, Batch4);
    Covered += covered(Bytes);
  }
  // The CNNs of the zoo are the formulas' purpose.
  for (const char *Cnn : {"resnet18", "resnet50", "vgg16", "mobilenet_v2"}) {
    INFO(Cnn);
    CHECK(covered(readFile(std::string(PERFC_SOURCE_DIR) + "/tests/data/zoo/" +
                           Cnn + ".onnx")));
  }
  MESSAGE(Covered << " of " << Models.size()
                  << " zoo models use perfc's shape formulas");
}

TEST_CASE("common shapes: ONNX's node tests and the bad corpus agree") {
  std::vector<std::string> Models = modelsUnder(PERFC_ONNX_NODE_TESTS, true);
  REQUIRE(Models.size() >= 900);
  for (const std::string &Bad :
       modelsUnder(std::string(PERFC_SOURCE_DIR) + "/tests/data/bad", false))
    Models.push_back(Bad);
  unsigned Used = 0;
  frontend::ImportOptions Lenient;
  Lenient.AllowUnknownShapes = true;
  for (const std::string &Path : Models) {
    std::string Bytes = readFile(Path);
    checkBothWays(Bytes, Path);
    Used += checkBothWays(Bytes, Path, Lenient) && covered(Bytes);
  }
  MESSAGE(Used << " of " << Models.size()
               << " node-test and bad models use perfc's shape formulas");
  CHECK(Used >= 50);
}

namespace {

onnx::ValueInfoProto &
addValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &To,
         const std::string &Name, std::vector<int64_t> Dims) {
  onnx::ValueInfoProto &V = *To.Add();
  V.set_name(Name);
  auto *T = V.mutable_type()->mutable_tensor_type();
  T->set_elem_type(onnx::TensorProto::FLOAT);
  auto *S = T->mutable_shape();
  for (int64_t D : Dims)
    S->add_dim()->set_dim_value(D);
  return V;
}

void addInts(onnx::NodeProto &N, const std::string &Name,
             std::vector<int64_t> Values) {
  auto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INTS);
  for (int64_t V : Values)
    A->add_ints(V);
}

void addInt(onnx::NodeProto &N, const std::string &Name, int64_t Value) {
  auto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(Value);
}

onnx::ModelProto oneNodeModel(int64_t Opset) {
  onnx::ModelProto M;
  M.set_ir_version(8);
  M.add_opset_import()->set_version(Opset);
  M.mutable_graph()->set_name("g");
  return M;
}

} // namespace

TEST_CASE("common shapes: generated Conv and pooling cases agree") {
  unsigned Cases = 0, Used = 0;
  for (const char *Op : {"Conv", "MaxPool", "AveragePool"})
    for (int64_t In : {1, 5, 7, 8})
      for (int64_t K : {1, 2, 3})
        for (int64_t S : {1, 2, 3})
          for (int64_t P : {0, 1, 2})
            for (int64_t D : {1, 2})
              for (int64_t Ceil : {0, 1})
                for (int64_t Opset : {9, 11, 13}) {
                  bool Conv = llvm::StringRef(Op) == "Conv";
                  if (Conv && Ceil)
                    continue;
                  onnx::ModelProto M = oneNodeModel(Opset);
                  onnx::GraphProto &G = *M.mutable_graph();
                  addValue(*G.mutable_input(), "x", {2, 4, In, In + 1});
                  onnx::NodeProto &N = *G.add_node();
                  N.set_op_type(Op);
                  N.set_name("n");
                  N.add_input("x");
                  if (Conv) {
                    addValue(*G.mutable_input(), "w", {6, 2, K, K});
                    N.add_input("w");
                    addInt(N, "group", 2);
                  } else {
                    addInts(N, "kernel_shape", {K, K});
                    if (Ceil)
                      addInt(N, "ceil_mode", 1);
                  }
                  N.add_output("y");
                  addInts(N, "strides", {S, S});
                  addInts(N, "pads", {P, 0, P, P});
                  if (D != 1)
                    addInts(N, "dilations", {D, D});
                  G.add_output()->set_name("y");
                  std::string Bytes = M.SerializeAsString();
                  ++Cases;
                  frontend::ImportOptions O;
                  O.AllowUnknownShapes = true;
                  Used += checkBothWays(
                              Bytes,
                              std::string(Op) + " in " + std::to_string(In) +
                                  " k" + std::to_string(K) + " s" +
                                  std::to_string(S) + " p" + std::to_string(P) +
                                  " d" + std::to_string(D) + " ceil" +
                                  std::to_string(Ceil) + " opset" +
                                  std::to_string(Opset),
                              O) &&
                          covered(Bytes);
                }
  MESSAGE(Used << " of " << Cases << " generated cases use the formulas");
  CHECK(Used > Cases / 3);
}

TEST_CASE("common shapes: generated broadcasting, Gemm, MatMul and Concat") {
  using Dims = std::vector<int64_t>;
  struct Case {
    const char *Op;
    Dims A, B;
  };
  const Case Cases[] = {
      {"Add", {2, 3, 4}, {4}},
      {"Add", {2, 1, 4}, {3, 1}},
      {"Mul", {2, 3, 4}, {2, 3, 4}},
      {"Sub", {1}, {5, 1, 2}},
      {"Div", {2, 3}, {4, 3}},
      {"Add", {2, 3}, {2, 0}},
      {"Gemm", {2, 3}, {3, 4}},
      {"Gemm", {2, 3}, {4, 4}},
      {"MatMul", {2, 3}, {3, 4}},
      {"MatMul", {5, 2, 3}, {3, 4}},
      {"MatMul", {5, 1, 2, 3}, {7, 3, 4}},
      {"MatMul", {2, 3}, {2, 4}},
      {"MatMul", {3}, {3, 4}},
      {"Concat", {2, 3}, {2, 5}},
      {"Concat", {2, 3}, {3, 3}},
      {"Flatten", {2, 3, 4}, {}},
      {"Relu", {2, 3, 4}, {}},
      {"GlobalAveragePool", {2, 3, 4, 5}, {}},
  };
  for (const Case &C : Cases)
    for (int64_t Opset : {7, 11, 13, 17}) {
      onnx::ModelProto M = oneNodeModel(Opset);
      onnx::GraphProto &G = *M.mutable_graph();
      addValue(*G.mutable_input(), "a", C.A);
      onnx::NodeProto &N = *G.add_node();
      N.set_op_type(C.Op);
      N.set_name("n");
      N.add_input("a");
      if (!C.B.empty()) {
        addValue(*G.mutable_input(), "b", C.B);
        N.add_input("b");
      }
      if (llvm::StringRef(C.Op) == "Concat")
        addInt(N, "axis", -1);
      N.add_output("y");
      // A recorded output shape, partly wrong in some cases.
      addValue(*G.mutable_output(), "y", {2, 4});
      frontend::ImportOptions O;
      O.AllowUnknownShapes = true;
      checkBothWays(M.SerializeAsString(),
                    std::string(C.Op) + " opset " + std::to_string(Opset), O);
    }
}
