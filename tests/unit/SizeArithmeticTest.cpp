//===- SizeArithmeticTest.cpp - Sizes from user input never wrap ----------===//
//
// Element counts, byte totals, parameter counts and parallel degrees come
// from files and flags. Each test gives values at or past the 64-bit (or
// 2^62) boundary and checks for an error or a saturated, flagged count:
// never a wrapped number or a crash.
//
//===----------------------------------------------------------------------===//
#include "OnnxModels.h"
#include "TestGraphs.h"

#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "passes/TrainStep.h"
#include "passes/WorkPass.h"
#include "tools/modelgen/TransformerGen.h"

using namespace perfc;
using namespace perfc::test;

namespace {

constexpr int64_t Pow2(unsigned N) { return int64_t(1) << N; }

/// Imports M; the error message when it fails.
llvm::Expected<frontend::ImportedModel> import(const onnx::ModelProto &M) {
  return frontend::importOnnxBytes(serialize(M), "m.onnx", {});
}

std::string importError(const onnx::ModelProto &M) {
  auto R = import(M);
  if (R) {
    FAIL_CHECK("imported where an error was expected");
    return "";
  }
  return llvm::toString(R.takeError());
}

/// An initializer with dims but no data, stored in a file that does not
/// exist (as perfc's stripped models are).
void addExternalWeight(onnx::ModelProto &M, const std::string &Name,
                       std::vector<int64_t> Dims) {
  auto *T = M.mutable_graph()->add_initializer();
  T->set_name(Name);
  T->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t D : Dims)
    T->add_dims(D);
  T->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *E = T->add_external_data();
  E->set_key("location");
  E->set_value("absent.weights");
}

} // namespace

TEST_CASE("an empty tensor imports whatever the order of its huge dims") {
  for (auto Dims : {std::vector<int64_t>{0, Pow2(40), Pow2(40)},
                    std::vector<int64_t>{Pow2(40), Pow2(40), 0},
                    std::vector<int64_t>{Pow2(40), 0, Pow2(40)}}) {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {Dims[0], Dims[1], Dims[2]});
    addNode(M, "Relu", {"x"}, {"y"}, "relu");
    addOutput(M, "y");
    auto R = import(M);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    GraphWork W = computeWork(R->Graph);
    CHECK(W.Total.bytes() == 0);
    CHECK(W.Total.Flops == 0);
  }
  // A dim past 2^62 is an overflow even in an empty tensor, in any place.
  for (auto Dims : {std::vector<int64_t>{0, Pow2(62) + 1},
                    std::vector<int64_t>{Pow2(62) + 1, 0}}) {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {Dims[0], Dims[1]});
    addNode(M, "Relu", {"x"}, {"y"}, "relu");
    addOutput(M, "y");
    CHECK(llvm::StringRef(importError(M)).contains("the dimensions overflow"));
  }
}

TEST_CASE("initializers whose total passes 2^62 bytes are refused") {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {4});
  for (const char *Name : {"w0", "w1", "w2"})
    addExternalWeight(M, Name, {Pow2(59)}); // 2^61 bytes each
  addNode(M, "Relu", {"x"}, {"y"}, "relu");
  addOutput(M, "y");
  CHECK(importError(M) ==
        "m.onnx: initializer 'w2' of shape [576460752303423488] brings the "
        "weights past 2^62 bytes in total: the dimensions overflow");
  // Two of them are exactly 2^62 bytes: allowed.
  M.mutable_graph()->mutable_initializer()->RemoveLast();
  auto R = import(M);
  CHECK_MESSAGE(bool(R), llvm::toString(R.takeError()));
}

TEST_CASE("Graph::verify checks sizes: each tensor and the weights' total") {
  {
    GraphBuilder B;
    ir::Value *X = B.input("x", {Pow2(40), Pow2(40)});
    B.G.markOutput(B.out(B.node("Relu", {X}, {Pow2(40), Pow2(40)})));
    llvm::Error E = B.G.verify();
    REQUIRE(bool(E));
    CHECK(llvm::toString(std::move(E)) ==
          "tensor 'x' of shape [1099511627776, 1099511627776] holds more "
          "than 2^62 bytes: the dimensions overflow");
  }
  {
    GraphBuilder B;
    ir::Value *X = B.input("x", {4});
    ir::Value *Y = X;
    for (const char *Name : {"w0", "w1", "w2"}) {
      ir::Value *W = B.weight(Name, {Pow2(61)}, ir::DType::I8);
      Y = B.out(B.node("Add", {Y, W}, {4}));
    }
    B.G.markOutput(Y);
    llvm::Error E = B.G.verify();
    REQUIRE(bool(E));
    CHECK(llvm::toString(std::move(E)) ==
          "initializer 'w2' brings the weights past 2^62 bytes in total");
  }
}

TEST_CASE("parameter counts saturate with a warning, never wrap") {
  // Built by hand (no verify): three fp8 weights of 2^61 elements; their
  // sum, 3 x 2^61, passes 2^62.
  GraphBuilder B;
  ir::Value *X = B.input("x", {4}, ir::DType::F8E4M3);
  ir::Value *Y = X;
  for (const char *Name : {"w0", "w1", "w2"}) {
    ir::Value *W = B.weight(Name, {Pow2(61)}, ir::DType::F8E4M3);
    Y = B.out(B.node("Add", {Y, W}, {4}, ir::DType::F8E4M3));
  }
  B.G.markOutput(Y);
  GraphWork W = computeWork(B.G);
  CHECK(W.Total.Params == ir::MaxTensorSize);
  uint64_t Sum = 0;
  for (const OpWork &N : W.Nodes)
    Sum += N.Params;
  CHECK(Sum == ir::MaxTensorSize); // the nodes add up to the total
  unsigned Saturated = 0;
  for (const Warning &Wn : W.Warnings)
    if (llvm::StringRef(Wn.Message).contains("saturated at 2^62")) {
      ++Saturated;
      CHECK(llvm::StringRef(Wn.Message).contains("'w2'"));
    }
  CHECK(Saturated == 1);
}

TEST_CASE("training degrees from the user: products checked, no wrap") {
  modelgen::TransformerSpec Spec;
  Spec.Layers = 2;
  Spec.Hidden = 64;
  Spec.Heads = 4;
  Spec.Seq = 16;
  Spec.Vocab = 64;
  Spec.Batch = 1;
  auto Bytes = modelgen::writeTransformerOnnx(Spec);
  REQUIRE(bool(Bytes));
  auto M = frontend::importOnnxBytes(*Bytes, "tiny.onnx", {});
  REQUIRE(bool(M));
  auto C = hw::loadHardware("dgx-a100");
  REQUIRE(bool(C));
  TrainingAnalysis A(M->Graph);

  // pp x vp = 2 x 2^31 is 0 in 32 bits: once a division by zero.
  TrainOptions O;
  O.Pp = 2;
  O.Vp = 1u << 31;
  auto T = predictTraining(A, *C, O);
  REQUIRE(!T);
  CHECK(llvm::toString(T.takeError()) ==
        "pp 2 x vp 2147483648 = 4294967296 pipeline chunks, but the model "
        "has 2 blocks; use fewer stages");

  // micro-batch x dp past int64.
  TrainOptions Big;
  Big.Dp = 8;
  Big.MicroBatch = INT64_MAX / 4;
  auto U = predictTraining(A, *C, Big);
  REQUIRE(!U);
  CHECK(llvm::StringRef(llvm::toString(U.takeError()))
            .contains("x dp 8 overflows"));
}
