//===- FrontendTest.cpp - ONNX import: weights, shapes, bad input ---------===//
#include "OnnxModels.h"
#include "TestGraphs.h"

#include "frontend/OnnxImport.h"
#include "frontend/WeightStripper.h"
#include "passes/WorkPass.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace perfc;
using namespace perfc::test;

namespace {

frontend::ImportedModel importOk(const onnx::ModelProto &M,
                                 frontend::ImportOptions O = {}) {
  return expectOk(frontend::importOnnxBytes(serialize(M), "m.onnx", O));
}

/// The one-line error an import gives; fails the test if it succeeds.
std::string importError(llvm::StringRef Bytes, frontend::ImportOptions O = {}) {
  auto R = frontend::importOnnxBytes(Bytes, "m.onnx", O);
  if (R) {
    FAIL_CHECK("import succeeded where an error was expected");
    return "";
  }
  std::string Msg = llvm::toString(R.takeError());
  CHECK(Msg.find('\n') == std::string::npos);
  CHECK(llvm::StringRef(Msg).startswith("m.onnx: "));
  return Msg;
}
std::string importError(const onnx::ModelProto &M,
                        frontend::ImportOptions O = {}) {
  return importError(serialize(M), O);
}

bool contains(const std::string &S, llvm::StringRef Part) {
  return S.find(Part.str()) != std::string::npos;
}

const ir::Value &value(const frontend::ImportedModel &IM,
                       llvm::StringRef Name) {
  const ir::Value *V = IM.Graph.lookup(Name);
  REQUIRE(V);
  return *V;
}

} // namespace

TEST_CASE("embedded weights are skipped but their shapes kept") {
  onnx::ModelProto M = convReluModel();
  frontend::ImportedModel IM = importOk(M);
  CHECK(IM.WeightBytesSkipped >= 4 * 3 * 3 * 3 * 4);
  CHECK(value(IM, "w").shape() == ir::Shape({4, 3, 3, 3}));
  CHECK_FALSE(value(IM, "w").data().hasValue());
  CHECK(value(IM, "y").shape() == ir::Shape({1, 4, 8, 8}));
  GraphWork W = computeWork(IM.Graph);
  CHECK(W.Total.Params == 108);
  CHECK(W.Total.Macs == 4 * 8 * 8 * 3 * 9);
  REQUIRE(IM.Bindings.size() == 1);
  CHECK(IM.Bindings[0].first == "batch");
  CHECK(IM.Bindings[0].second == 1);
}

TEST_CASE("external data, present or absent, is never read") {
  llvm::SmallString<128> Dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("perfc-ext", Dir));
  auto Write = [](llvm::StringRef Path, llvm::StringRef Bytes) {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    REQUIRE_FALSE(EC);
    OS << Bytes;
  };
  onnx::ModelProto M = convReluModel();
  onnx::TensorProto &W = *M.mutable_graph()->mutable_initializer(0);
  W.clear_raw_data();
  W.set_data_location(onnx::TensorProto::EXTERNAL);
  auto *Loc = W.add_external_data();
  Loc->set_key("location");
  Loc->set_value("weights.bin");
  llvm::SmallString<128> ModelPath(Dir);
  llvm::sys::path::append(ModelPath, "model.onnx");
  Write(ModelPath, serialize(M));

  // Absent data file.
  auto Absent = expectOk(frontend::importOnnxFile(ModelPath, {}));
  CHECK(computeWork(Absent.Graph).Total.Params == 108);
  // Present (garbage that would fail if read as weights).
  llvm::SmallString<128> DataPath(Dir);
  llvm::sys::path::append(DataPath, "weights.bin");
  Write(DataPath, "short");
  auto Present = expectOk(frontend::importOnnxFile(ModelPath, {}));
  CHECK(computeWork(Present.Graph).Total.Macs ==
        computeWork(Absent.Graph).Total.Macs);
  llvm::sys::fs::remove_directories(Dir);
}

TEST_CASE("a missing file is one clear error") {
  auto R = frontend::importOnnxFile("/nonexistent/model.onnx", {});
  REQUIRE_FALSE(bool(R));
  std::string Msg = llvm::toString(R.takeError());
  CHECK(contains(Msg, "/nonexistent/model.onnx: cannot read the file"));
}

TEST_CASE("--batch rewrites the first dimension and shapes are re-inferred") {
  onnx::ModelProto M = convReluModel();
  frontend::ImportOptions O;
  O.Batch = 8;
  frontend::ImportedModel IM = importOk(M, O);
  CHECK(value(IM, "y").shape() == ir::Shape({8, 4, 8, 8}));
  // A fixed batch is rewritten too, and stale recorded shapes are dropped.
  onnx::ModelProto Fixed = makeModel();
  addInput(Fixed, "x", {2, 16});
  addNode(Fixed, "Relu", {"x"}, {"y"});
  auto *Out = Fixed.mutable_graph()->add_output();
  Out->set_name("y");
  setType(*Out, {2, 16});
  O.Batch = 5;
  CHECK(value(importOk(Fixed, O), "y").shape() == ir::Shape({5, 16}));
}

TEST_CASE("--dim binds named dimensions, unbound or unknown names fail") {
  onnx::ModelProto M = makeModel();
  addInput(M, "ids", {"batch", "seq"}, onnx::TensorProto::INT64);
  addNode(M, "Cast", {"ids"}, {"y"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto A;
    A.set_name("to");
    A.set_type(onnx::AttributeProto::INT);
    A.set_i(onnx::TensorProto::FLOAT);
    return A;
  }());
  addOutput(M, "y");
  std::string Unbound = importError(M);
  CHECK(contains(Unbound, "'seq'"));
  CHECK(contains(Unbound, "--dim seq=VALUE"));

  frontend::ImportOptions O;
  O.Dims = {{"seq", 128}};
  O.Batch = 2;
  CHECK(value(importOk(M, O), "y").shape() == ir::Shape({2, 128}));

  O.Dims = {{"sequence", 128}};
  std::string Wrong = importError(M, O);
  CHECK(contains(Wrong, "no input dimension is named 'sequence'"));
  CHECK(contains(Wrong, "batch, seq"));
}

TEST_CASE("truncated, bit-flipped and foreign files are rejected") {
  std::string Bytes = serialize(convReluModel());
  for (size_t Cut : {Bytes.size() - 1, Bytes.size() / 2, size_t(3)}) {
    std::string Msg = importError(llvm::StringRef(Bytes).take_front(Cut));
    CHECK((contains(Msg, "malformed") || contains(Msg, "not an ONNX model")));
  }
  CHECK(contains(importError(""), "empty"));
  CHECK(contains(importError("name: hello\nvalue: [1, 2]\n"), "ONNX model"));
  // Flipping every byte in turn never crashes; it either imports or fails
  // with one line.
  for (size_t I = 0; I < Bytes.size(); I += 7) {
    std::string Flipped = Bytes;
    Flipped[I] = static_cast<char>(Flipped[I] ^ 0x5a);
    auto R = frontend::importOnnxBytes(Flipped, "m.onnx", {});
    if (!R) {
      std::string Msg = llvm::toString(R.takeError());
      CHECK(Msg.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("graph structure errors name the node") {
  SUBCASE("cycle") {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {4});
    addNode(M, "Add", {"x", "b"}, {"a"}, "first");
    addNode(M, "Relu", {"a"}, {"b"}, "second");
    addOutput(M, "b");
    std::string Msg = importError(M);
    CHECK(contains(Msg, "cycle"));
    CHECK(contains(Msg, "node 'first' (Add)"));
  }
  SUBCASE("edge to a missing tensor") {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {4});
    addNode(M, "Add", {"x", "ghost"}, {"y"}, "adder");
    addOutput(M, "y");
    std::string Msg = importError(M);
    CHECK(contains(Msg, "node 'adder' (Add) reads tensor 'ghost'"));
  }
  SUBCASE("duplicate producer") {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {4});
    addNode(M, "Relu", {"x"}, {"y"}, "one");
    addNode(M, "Neg", {"x"}, {"y"}, "two");
    addOutput(M, "y");
    std::string Msg = importError(M);
    CHECK(contains(Msg, "node 'two' (Neg) writes tensor 'y'"));
    CHECK(contains(Msg, "node 'one' (Relu)"));
  }
  SUBCASE("unknown op") {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {4});
    addNode(M, "Frobnicate", {"x"}, {"y"}, "f");
    addOutput(M, "y");
    CHECK(contains(importError(M), "'Frobnicate' is not an op"));
  }
  SUBCASE("nodes out of order are sorted") {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {4});
    addNode(M, "Relu", {"a"}, {"y"}, "second");
    addNode(M, "Neg", {"x"}, {"a"}, "first");
    addOutput(M, "y");
    frontend::ImportedModel IM = importOk(M);
    CHECK(IM.Graph.nodes()[0]->name() == "first");
    CHECK(value(IM, "y").shape() == ir::Shape({4}));
  }
}

TEST_CASE("old opsets load, opsets from the future are rejected") {
  onnx::ModelProto Old = makeModel(6);
  addInput(Old, "x", {4});
  addNode(Old, "Relu", {"x"}, {"y"});
  addOutput(Old, "y");
  CHECK(importOk(Old).Opset == 6);
  onnx::ModelProto Future = makeModel(99);
  addInput(Future, "x", {4});
  addNode(Future, "Relu", {"x"}, {"y"});
  addOutput(Future, "y");
  CHECK(contains(importError(Future), "opset 99 is newer"));
}

TEST_CASE("shapes: overflow, negative and uninferable dims are errors") {
  SUBCASE("2^62 dimension") {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {int64_t(1) << 62, 4});
    addNode(M, "Relu", {"x"}, {"y"});
    addOutput(M, "y");
    CHECK(contains(importError(M), "overflow"));
  }
  SUBCASE("negative dimension") {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {2, -3});
    addNode(M, "Relu", {"x"}, {"y"});
    addOutput(M, "y");
    CHECK(contains(importError(M), "negative"));
  }
  SUBCASE("Reshape to a shape known only at run time") {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {2, 6});
    addInput(M, "shape", {2}, onnx::TensorProto::INT64);
    addNode(M, "Reshape", {"x", "shape"}, {"y"}, "reshape");
    addOutput(M, "y");
    std::string Msg = importError(M);
    CHECK(contains(Msg, "cannot infer the shape of tensor 'y'"));
    CHECK(contains(Msg, "node 'reshape', Reshape"));
    CHECK(contains(Msg, "--allow-unknown-shapes"));
    frontend::ImportOptions O;
    O.AllowUnknownShapes = true;
    frontend::ImportedModel IM = importOk(M, O);
    REQUIRE(IM.Warnings.size() == 1);
    CHECK(IM.Warnings[0].Node == "reshape");
  }
  SUBCASE("Reshape to a constant shape of another size") {
    // ONNX's inference takes a target without -1 as given: 12 elements
    // would silently become 8.
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {2, 6});
    addInts(M, "shape", {2, 4});
    addNode(M, "Reshape", {"x", "shape"}, {"y"}, "reshape");
    addOutput(M, "y");
    CHECK(contains(importError(M),
                   "node 'reshape' (Reshape): reshapes [2, 6] (12 elements) "
                   "into [2, 4] (8); its shape constant was written for "
                   "other input shapes"));
    // The same size is fine.
    onnx::ModelProto Ok = makeModel();
    addInput(Ok, "x", {2, 6});
    addInts(Ok, "shape", {3, 4});
    addNode(Ok, "Reshape", {"x", "shape"}, {"y"}, "reshape");
    addOutput(Ok, "y");
    CHECK(importOk(Ok).Graph.lookup("y")->shape() == ir::Shape({3, 4}));
  }
  SUBCASE("an absurd Conv group is an error, not an overflow") {
    // Cin/group * group overflowed int64_t in the channel check (UBSan).
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {1, 4, 8, 8});
    addWeight(M, "w", {2, 4, 1, 1});
    auto &Conv = addNode(M, "Conv", {"x", "w"}, {"y"}, "conv");
    addIntAttr(Conv, "group", int64_t(1) << 62);
    addOutput(M, "y");
    setType(*M.mutable_graph()->mutable_output(0), {1, 2, 8, 8});
    CHECK(contains(importError(M), "node 'conv' (Conv): the input has 4 "
                                   "channels but the weight [2, 4, 1, 1] "
                                   "with group 4611686018427387904 expects "
                                   "more than 2^63"));
  }
  SUBCASE("Shape of a tensor without a type does not crash ONNX") {
    // ONNX 1.12's data propagation for Shape dereferenced the missing type
    // (found by tools/fuzz/fuzz_onnx).
    onnx::ModelProto M = makeModel();
    M.mutable_graph()->add_input()->set_name("x");
    addNode(M, "Shape", {"x"}, {"y"}, "shape");
    addOutput(M, "y", onnx::TensorProto::INT64);
    CHECK(contains(importError(M), "cannot infer the shape of tensor 'y'"));
    frontend::ImportOptions O;
    O.AllowUnknownShapes = true;
    importOk(M, O);
  }
  SUBCASE("a Conv weight of another rank than its input does not crash ONNX") {
    // ONNX 1.12's Conv-family inference indexed one shape by the other's
    // rank (found by tools/fuzz/fuzz_onnx).
    for (const char *Op : {"Conv", "ConvTranspose", "ConvInteger"}) {
      CAPTURE(Op);
      const bool Int = std::string(Op) == "ConvInteger";
      const int32_t T =
          Int ? onnx::TensorProto::UINT8 : onnx::TensorProto::FLOAT;
      onnx::ModelProto M = makeModel();
      addInput(M, "x", {1, 2}, T);
      addInput(M, "w", {2, 2, 3}, T);
      addNode(M, Op, {"x", "w"}, {"y"}, "conv");
      addOutput(M, "y", Int ? onnx::TensorProto::INT32 : T);
      CHECK(contains(importError(M), "the input has rank 2 but the weight "
                                     "has rank 3; they must be equal"));
    }
  }
  SUBCASE("data-dependent sizes are a warning, not an error") {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {2, 6});
    addNode(M, "NonZero", {"x"}, {"nz"}, "nonzero");
    addNode(M, "Transpose", {"nz"}, {"y"}, "after");
    addOutput(M, "y", onnx::TensorProto::INT64);
    frontend::ImportedModel IM = importOk(M);
    REQUIRE(IM.Warnings.size() == 1);
    CHECK(IM.Warnings[0].Node == "nonzero");
  }
}

TEST_CASE("constants keep small integer data, lose large float data") {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {2, 6});
  addInts(M, "shape", {3, 4});
  addWeight(M, "big", {100, 100});
  addNode(M, "Reshape", {"x", "shape"}, {"r"});
  addNode(M, "MatMul", {"big", "big"}, {"mm"});
  addOutput(M, "r");
  addOutput(M, "mm");
  frontend::ImportedModel IM = importOk(M);
  REQUIRE(value(IM, "shape").data().hasValue());
  CHECK(value(IM, "shape").data()->Ints.size() == 2);
  CHECK(value(IM, "r").shape() == ir::Shape({3, 4}));
  CHECK_FALSE(value(IM, "big").data().hasValue());
  CHECK(IM.WeightBytesSkipped >= 40000);
}

TEST_CASE("the node limit is a resource error, found before parsing") {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {4});
  std::string Prev = "x";
  for (int I = 0; I < 50; ++I) {
    std::string Next = "t" + std::to_string(I);
    addNode(M, "Relu", {Prev}, {Next});
    Prev = Next;
  }
  addOutput(M, Prev);
  frontend::ImportOptions O;
  O.MaxNodes = 10;
  std::string Msg = importError(M, O);
  CHECK(contains(Msg, "more than 10 nodes"));
  CHECK(contains(Msg, "--max-nodes"));
}

TEST_CASE("If costs its costlier branch, Loop its body times the count") {
  auto Branch = [](const std::string &Name, int Depth) {
    onnx::GraphProto G;
    G.set_name(Name);
    std::string Prev = "x";
    for (int I = 0; I < Depth; ++I) {
      auto *N = G.add_node();
      N->set_op_type("Relu");
      N->add_input(Prev);
      Prev = Name + std::to_string(I);
      N->add_output(Prev);
    }
    auto *Out = G.add_output();
    Out->set_name(Prev);
    setType(*Out, {16});
    return G;
  };
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {16});
  addInput(M, "cond", {}, onnx::TensorProto::BOOL);
  auto &If = addNode(M, "If", {"cond"}, {"y"}, "if");
  auto *Then = If.add_attribute();
  Then->set_name("then_branch");
  Then->set_type(onnx::AttributeProto::GRAPH);
  *Then->mutable_g() = Branch("then", 3);
  auto *Else = If.add_attribute();
  Else->set_name("else_branch");
  Else->set_type(onnx::AttributeProto::GRAPH);
  *Else->mutable_g() = Branch("else", 1);
  addOutput(M, "y");
  frontend::ImportedModel IM = importOk(M);
  GraphWork W = computeWork(IM.Graph);
  CHECK(W.Total.Flops == 3 * 16);
}

TEST_CASE("the stripper keeps tensors that shape inference reads") {
  onnx::ModelProto M = makeModel();
  addInts(M, "axes", {0, 1});
  addWeight(M, "tiny", {2});
  addWeight(M, "big", {64, 64});
  auto Stripped = expectOk(frontend::stripWeights(serialize(M)));
  onnx::ModelProto Back;
  REQUIRE(Back.ParseFromString(Stripped.Bytes));
  const auto &Inits = Back.graph().initializer();
  CHECK(Inits[0].int64_data_size() == 2);
  CHECK(Inits[1].raw_data().size() == 8);
  CHECK(Inits[2].raw_data().empty());
  CHECK(Inits[2].data_location() == onnx::TensorProto::EXTERNAL);
  CHECK(Inits[2].dims_size() == 2);
  CHECK(Stripped.DroppedBytes >= 64 * 64 * 4);
}

TEST_CASE("the stripper drops external_data and keeps the rest as it was") {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {64});
  addWeight(M, "big", {64, 64});
  onnx::TensorProto &Big = *M.mutable_graph()->mutable_initializer(0);
  Big.clear_raw_data();
  Big.set_data_location(onnx::TensorProto::EXTERNAL);
  for (const char *Key : {"location", "offset", "length"}) {
    auto *E = Big.add_external_data();
    E->set_key(Key);
    E->set_value("a value longer than fifteen bytes");
  }
  addNode(M, "Relu", {"x"}, {"y"}, "relu");
  addOutput(M, "y");
  auto Stripped = expectOk(frontend::stripWeights(serialize(M)));
  onnx::ModelProto Back;
  REQUIRE(Back.ParseFromString(Stripped.Bytes));
  const auto &T = Back.graph().initializer(0);
  CHECK(T.external_data_size() == 0);
  CHECK(T.name() == "big");
  CHECK(T.dims_size() == 2);
  CHECK(T.data_location() == onnx::TensorProto::EXTERNAL);
  // Not weight data: nothing counted as dropped.
  CHECK(Stripped.DroppedBytes == 0);
  CHECK(Stripped.Nodes == 1);
  // Everything else comes through byte for byte.
  CHECK(Back.graph().node(0).SerializeAsString() ==
        M.graph().node(0).SerializeAsString());
  Big.clear_external_data();
  CHECK(Back.SerializeAsString() == M.SerializeAsString());
}

TEST_CASE("Einsum outputs get their dims (ONNX 1.12 infers only the rank)") {
  onnx::ModelProto M = makeModel(13);
  addInput(M, "q", {"batch", 12, 128, 64});
  addInput(M, "k", {"batch", 12, 128, 64});
  auto &E = addNode(M, "Einsum", {"q", "k"}, {"s"}, "scores");
  auto *Eq = E.add_attribute();
  Eq->set_name("equation");
  Eq->set_type(onnx::AttributeProto::STRING);
  Eq->set_s("bhqd,bhkd->bhqk");
  addNode(M, "Softmax", {"s"}, {"y"}, "softmax");
  addOutput(M, "y");
  frontend::ImportOptions O;
  O.Batch = 2;
  frontend::ImportedModel IM = importOk(M, O);
  CHECK(value(IM, "s").shape() == ir::Shape({2, 12, 128, 128}));
  CHECK(value(IM, "y").shape() == ir::Shape({2, 12, 128, 128}));
  // Its cost follows: 2 * b*h*q*k*d, as the batched GEMM it lowers to.
  GraphWork W = computeWork(IM.Graph);
  const ir::Node *S = value(IM, "s").producer();
  REQUIRE(S);
  CHECK(W.Nodes[S->index()].Macs == 2.0 * 12 * 128 * 128 * 64);
  CHECK(W.Nodes[S->index()].Gemm.Batch == 24);
  CHECK(W.Nodes[S->index()].Gemm.K == 64);
}

TEST_CASE("Slice-1 with negative starts gets its dims (opset 9 exports)") {
  // torch.onnx at opset 9 writes y[:, -1] as starts -1, ends INT64_MAX;
  // ONNX 1.12 leaves every dim of it unknown.
  onnx::ModelProto M = makeModel(9);
  addInput(M, "x", {"batch", 32, 256});
  auto &S = addNode(M, "Slice", {"x"}, {"y"}, "last");
  addIntsAttr(S, "starts", {-1, 0});
  addIntsAttr(S, "ends", {INT64_MAX, -16});
  addIntsAttr(S, "axes", {1, -1});
  addOutput(M, "y");
  frontend::ImportOptions O;
  O.Batch = 4;
  CHECK(value(importOk(M, O), "y").shape() == ir::Shape({4, 1, 240}));
}

TEST_CASE("a shape unknown after an op of another domain names that op") {
  onnx::ModelProto M = makeModel(13);
  auto *Ms = M.add_opset_import();
  Ms->set_domain("com.microsoft");
  Ms->set_version(1);
  addInput(M, "x", {1, 128, 768});
  // An op of ONNX Runtime that perfc has no schema for (ContribSchemas.h
  // lists those it has).
  addNode(M, "GemmFastGelu", {"x"}, {"a"}, "attn").set_domain("com.microsoft");
  addNode(M, "Relu", {"a"}, {"y"}, "relu");
  addOutput(M, "y");
  const std::string Msg = importError(M);
  CHECK(contains(Msg, "tensor 'y' (output of node 'relu', Relu)"));
  CHECK(contains(Msg, "node 'attn' (com.microsoft:GemmFastGelu)"));
  CHECK(contains(Msg, "--allow-unknown-shapes"));
  // With the flag: warnings, and the unknown dims cost 0.
  frontend::ImportOptions O;
  O.AllowUnknownShapes = true;
  CHECK(importOk(M, O).Warnings.size() >= 1);
}

TEST_CASE("a node without a required attribute, or with one of the wrong "
          "type, is an error, also inside a subgraph (no crash)") {
  // ONNX 1.12's Scan inference dereferences a missing body (found by
  // tools/fuzz/fuzz_onnx).
  onnx::ModelProto M = makeModel(13);
  addInput(M, "x", {4, 8});
  addIntAttr(addNode(M, "Scan", {"x"}, {"y"}, "scan"), "num_scan_inputs", 1);
  addOutput(M, "y");
  std::string Msg = importError(M);
  CHECK(contains(Msg, "node 'scan' (Scan) lacks its required attribute "
                      "'body'"));
  // An INT where a GRAPH belongs.
  addIntAttr(*M.mutable_graph()->mutable_node(0), "body", 5);
  Msg = importError(M);
  CHECK(contains(Msg, "attribute 'body' is of type INT where the op needs "
                      "GRAPH"));
  // Inside an If's branch the main graph's check does not look: ONNX's
  // inference of the branch must not crash either.
  onnx::ModelProto Nested = makeModel(13);
  addInput(Nested, "c", {}, onnx::TensorProto::BOOL);
  addInput(Nested, "x", {4, 8});
  auto &If = addNode(Nested, "If", {"c"}, {"y"}, "if");
  for (const char *Branch : {"then_branch", "else_branch"}) {
    auto *A = If.add_attribute();
    A->set_name(Branch);
    A->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto *G = A->mutable_g();
    G->set_name(Branch);
    auto *S = G->add_node();
    S->set_op_type("Scan");
    S->set_name("inner_scan");
    S->add_input("x");
    S->add_output("z");
    G->add_output()->set_name("z");
  }
  addOutput(Nested, "y");
  auto R = frontend::importOnnxBytes(serialize(Nested), "m.onnx", {});
  if (!R)
    CHECK(llvm::toString(R.takeError()).find('\n') == std::string::npos);
}
