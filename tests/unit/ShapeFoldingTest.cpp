//===- ShapeFoldingTest.cpp - Folding run-time shape computations ---------===//
#include "OnnxModels.h"
#include "TestGraphs.h"

#include "frontend/OnnxImport.h"
#include "frontend/ShapeFolding.h"
#include "frontend/WeightStripper.h"
#include "passes/WorkPass.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <chrono>
#include <cmath>
#include <fstream>

using namespace perfc;
using namespace perfc::test;

namespace {

using TP = onnx::TensorProto;

/// The dims of a tensor after inference: outputs, then value_info; -1 for
/// an unknown dim, {-2} when there is no shape at all.
std::vector<int64_t> dimsOf(const onnx::ModelProto &M,
                            const std::string &Name) {
  const onnx::ValueInfoProto *Found = nullptr;
  for (const auto &V : M.graph().output())
    if (V.name() == Name)
      Found = &V;
  for (const auto &V : M.graph().value_info())
    if (V.name() == Name)
      Found = &V;
  if (!Found || !Found->type().tensor_type().has_shape())
    return {-2};
  std::vector<int64_t> D;
  for (const auto &Dim : Found->type().tensor_type().shape().dim())
    D.push_back(Dim.has_dim_value() ? Dim.dim_value() : -1);
  return D;
}

void addScalar(onnx::ModelProto &M, const std::string &Name, int64_t V) {
  auto *T = M.mutable_graph()->add_initializer();
  T->set_name(Name);
  T->set_data_type(TP::INT64);
  T->add_int64_data(V);
}

/// Gather(Shape(X), Index) as a scalar named Out.
void addDimOf(onnx::ModelProto &M, const std::string &X, int64_t Index,
              const std::string &Out) {
  addNode(M, "Shape", {X}, {Out + "_shape"});
  addScalar(M, Out + "_index", Index);
  addNode(M, "Gather", {Out + "_shape", Out + "_index"}, {Out});
}

/// Unsqueeze(Scalar, axes=[0]) at opset 13.
void addToVector(onnx::ModelProto &M, const std::string &Scalar,
                 const std::string &Out) {
  addInts(M, Out + "_axes", {0});
  addNode(M, "Unsqueeze", {Scalar, Out + "_axes"}, {Out});
}

std::vector<std::string> opTypes(const onnx::ModelProto &M) {
  std::vector<std::string> Ops;
  for (const auto &N : M.graph().node())
    Ops.push_back(N.name() + ":" + N.op_type());
  return Ops;
}

/// Shape inference by ONNX alone, as perfc did before folding.
onnx::ModelProto plainInference(onnx::ModelProto M) {
  try {
    onnx::shape_inference::InferShapes(
        M, onnx::OpSchemaRegistry::Instance(),
        onnx::ShapeInferenceOptions(false, 0, true));
  } catch (...) {
  }
  return M;
}

/// The torchvision swin pattern: pad W up to a multiple of 4, computed from
/// the input's shape at run time.
onnx::ModelProto padChainModel() {
  onnx::ModelProto M = makeModel(13);
  addInput(M, "x", {1, 3, 7, 10});
  addDimOf(M, "x", 3, "w"); // 10
  addScalar(M, "four", 4);
  addNode(M, "Mod", {"w", "four"}, {"wmod"});    // 2
  addNode(M, "Sub", {"four", "wmod"}, {"gap"});  // 2
  addNode(M, "Mod", {"gap", "four"}, {"pad_r"}); // 2
  addToVector(M, "pad_r", "pad_r1");
  addInts(M, "zeros7", {0, 0, 0, 0, 0, 0, 0});
  auto &Cat = addNode(M, "Concat", {"zeros7", "pad_r1"}, {"pads"});
  addIntAttr(Cat, "axis", 0); // pads = [0, 0, 0, 0, 0, 0, 0, 2]
  addNode(M, "Pad", {"x", "pads"}, {"y"});
  addOutput(M, "y");
  return M;
}

} // namespace

TEST_CASE("folding: Shape -> Gather -> Mod -> Sub -> Concat -> Pad") {
  onnx::ModelProto M = padChainModel();
  // ONNX's own data propagation stops at Mod.
  std::vector<int64_t> Plain = dimsOf(plainInference(M), "y");
  CHECK(Plain != std::vector<int64_t>{1, 3, 7, 12});

  frontend::FoldingStats Stats;
  std::string Failure = frontend::inferShapesWithFolding(M, &Stats);
  CHECK(Failure.empty());
  CHECK(dimsOf(M, "y") == std::vector<int64_t>{1, 3, 7, 12});
  CHECK(dimsOf(M, "pads") == std::vector<int64_t>{8});
  CHECK(Stats.NodesFolded == 7); // All but the Pad.
  CHECK(Stats.Rounds == 2);
  CHECK(Stats.InferencePasses == 2);

  // Through the importer, with the batch symbolic and bound to 1.
  onnx::ModelProto Sym = padChainModel();
  Sym.mutable_graph()->mutable_input(0)->clear_type();
  setType(*Sym.mutable_graph()->mutable_input(0), {"batch", 3, 7, 10});
  auto IM = expectOk(frontend::importOnnxBytes(serialize(Sym), "m.onnx", {}));
  const ir::Value *Y = IM.Graph.lookup("y");
  REQUIRE(Y);
  CHECK(Y->shape() == ir::Shape({1, 3, 7, 12}));
  for (const auto &V : IM.Graph.values())
    CHECK_MESSAGE(V->shape().isStatic(), V->name().str());
}

TEST_CASE("folding keeps every node, in order") {
  onnx::ModelProto M = padChainModel();
  std::vector<std::string> Before = opTypes(M);
  int Inits = M.graph().initializer_size();
  frontend::inferShapesWithFolding(M);
  CHECK(opTypes(M) == Before);
  CHECK(M.graph().initializer_size() == Inits);
  // Every node output has a type, Constants included.
  for (const auto &N : M.graph().node())
    for (const auto &Out : N.output())
      CHECK_MESSAGE(dimsOf(M, Out) != std::vector<int64_t>{-2}, Out);
}

TEST_CASE("folding: Reshape to a computed shape") {
  // x[2,6,4] -> Reshape(x, [d0, d1*d2/2, 2]) = [2, 12, 2].
  onnx::ModelProto M = makeModel(13);
  addInput(M, "x", {2, 6, 4});
  addDimOf(M, "x", 0, "d0");
  addDimOf(M, "x", 1, "d1");
  addDimOf(M, "x", 2, "d2");
  addNode(M, "Mul", {"d1", "d2"}, {"d12"});
  addScalar(M, "two", 2);
  addNode(M, "Div", {"d12", "two"}, {"half"});
  addToVector(M, "d0", "v0");
  addToVector(M, "half", "v1");
  addInts(M, "v2", {-1});
  auto &C = addNode(M, "Concat", {"v0", "v1", "v2"}, {"target"});
  addIntAttr(C, "axis", 0);
  addNode(M, "Reshape", {"x", "target"}, {"y"});
  addOutput(M, "y");
  CHECK(dimsOf(plainInference(M), "y") != std::vector<int64_t>{2, 12, 2});
  CHECK(frontend::inferShapesWithFolding(M).empty());
  CHECK(dimsOf(M, "y") == std::vector<int64_t>{2, 12, 2});
}

TEST_CASE("folding: Range and ConstantOfShape from Shape-derived values") {
  onnx::ModelProto M = makeModel(13);
  addInput(M, "x", {1, 5, 3});
  addDimOf(M, "x", 1, "n"); // 5
  addScalar(M, "two", 2);
  addNode(M, "Mul", {"n", "two"}, {"limit"}); // 10
  addScalar(M, "zero", 0);
  addScalar(M, "one", 1);
  addNode(M, "Range", {"zero", "limit", "one"}, {"r"});
  addToVector(M, "n", "nv");
  addInts(M, "three", {3});
  auto &C = addNode(M, "Concat", {"nv", "three"}, {"shape"});
  addIntAttr(C, "axis", 0);
  addNode(M, "ConstantOfShape", {"shape"}, {"mask"});
  // A ConstantOfShape too large to fold still gets its shape.
  addInts(M, "big", {100, 100});
  auto &C2 = addNode(M, "Concat", {"nv", "big"}, {"bigshape"});
  addIntAttr(C2, "axis", 0);
  addNode(M, "ConstantOfShape", {"bigshape"}, {"bigmask"});
  addNode(M, "Shape", {"bigmask"}, {"bigmask_shape"});
  addNode(M, "ReduceProd", {"bigmask_shape"}, {"count"});
  addOutput(M, "r", TP::INT64);
  addOutput(M, "mask");
  addOutput(M, "count", TP::INT64);
  CHECK(frontend::inferShapesWithFolding(M).empty());
  CHECK(dimsOf(M, "r") == std::vector<int64_t>{10});
  CHECK(dimsOf(M, "mask") == std::vector<int64_t>{5, 3});
  CHECK(dimsOf(M, "bigmask") == std::vector<int64_t>{5, 100, 100});
  CHECK(dimsOf(M, "count") == std::vector<int64_t>{1});
}

TEST_CASE("folding: Expand, Where and Equal as torch exports expand(-1)") {
  // torch's x.expand(B, -1, -1): Where(Equal(shape, -1), ones, shape).
  onnx::ModelProto M = makeModel(13);
  addInput(M, "x", {4, 8});
  addInput(M, "cls", {1, 1, 8});
  addDimOf(M, "x", 0, "b");
  addToVector(M, "b", "bv");
  addInts(M, "rest", {-1, -1});
  auto &C = addNode(M, "Concat", {"bv", "rest"}, {"req"});
  addIntAttr(C, "axis", 0);
  addInts(M, "minus1", {-1});
  addNode(M, "Equal", {"req", "minus1"}, {"isneg"});
  addInts(M, "ones", {1, 1, 1});
  addNode(M, "Where", {"isneg", "ones", "req"}, {"shape"});
  addNode(M, "Expand", {"cls", "shape"}, {"y"});
  addOutput(M, "y");
  CHECK(frontend::inferShapesWithFolding(M).empty());
  CHECK(dimsOf(M, "y") == std::vector<int64_t>{4, 1, 8});
}

TEST_CASE("folding: division by zero leaves the shape unknown") {
  onnx::ModelProto M = makeModel(13);
  addInput(M, "x", {2, 6});
  addDimOf(M, "x", 1, "d");
  addScalar(M, "zero", 0);
  addNode(M, "Div", {"d", "zero"}, {"q"});
  addToVector(M, "q", "qv");
  addInts(M, "rest", {-1});
  auto &C = addNode(M, "Concat", {"qv", "rest"}, {"target"});
  addIntAttr(C, "axis", 0);
  addNode(M, "Reshape", {"x", "target"}, {"y"});
  addOutput(M, "y");
  frontend::inferShapesWithFolding(M);
  std::vector<int64_t> Y = dimsOf(M, "y");
  CHECK((Y == std::vector<int64_t>{-2} || Y == std::vector<int64_t>{-1, -1}));
  // The importer names the tensor it cannot size.
  std::string Msg = llvm::toString(
      frontend::importOnnxBytes(serialize(M), "m.onnx", {}).takeError());
  CHECK(Msg.find("cannot infer the shape of tensor") != std::string::npos);
}

TEST_CASE("folding: odd models do not break it") {
  // A Gather out of range, a Reshape that does not fit, a cycle-free chain
  // of wrong ranks: left unknown, never a crash.
  onnx::ModelProto M = makeModel(13);
  addInput(M, "x", {2, 3});
  addNode(M, "Shape", {"x"}, {"s"});
  addScalar(M, "nine", 9);
  addNode(M, "Gather", {"s", "nine"}, {"bad"});
  addInts(M, "wrong", {5, 5});
  addNode(M, "Reshape", {"s", "wrong"}, {"bad2"});
  addInts(M, "huge", {1000000, 1000000});
  addNode(M, "ConstantOfShape", {"huge"}, {"bad3"});
  addNode(M, "Shape", {"bad3"}, {"s3"});
  addOutput(M, "bad", TP::INT64);
  addOutput(M, "bad2", TP::INT64);
  addOutput(M, "s3", TP::INT64);
  frontend::inferShapesWithFolding(M);
  CHECK(dimsOf(M, "bad3") == std::vector<int64_t>{1000000, 1000000});
  CHECK(dimsOf(M, "s3") == std::vector<int64_t>{2});
  // An empty model and one of another domain only.
  onnx::ModelProto Empty = makeModel(13);
  CHECK(frontend::inferShapesWithFolding(Empty).empty());
  onnx::ModelProto Custom = makeModel(13);
  addInput(Custom, "x", {2});
  auto &N = addNode(Custom, "Frob", {"x"}, {"y"});
  N.set_domain("com.example");
  frontend::inferShapesWithFolding(Custom);
}

//===----------------------------------------------------------------------===//
// The interpreter, one op at a time
//===----------------------------------------------------------------------===//

namespace {

TP ints(std::vector<int64_t> V, std::vector<int64_t> Dims = {-1},
        int32_t Type = TP::INT64) {
  TP T;
  T.set_data_type(Type);
  if (Dims == std::vector<int64_t>{-1})
    Dims = {static_cast<int64_t>(V.size())};
  for (int64_t D : Dims)
    T.add_dims(D);
  for (int64_t X : V) {
    if (Type == TP::INT64)
      T.add_int64_data(X);
    else
      T.add_int32_data(static_cast<int32_t>(X));
  }
  return T;
}
TP scalar(int64_t V) { return ints({V}, {}); }
TP floats(std::vector<float> V, std::vector<int64_t> Dims = {-1}) {
  TP T;
  T.set_data_type(TP::FLOAT);
  if (Dims == std::vector<int64_t>{-1})
    Dims = {static_cast<int64_t>(V.size())};
  for (int64_t D : Dims)
    T.add_dims(D);
  for (float X : V)
    T.add_float_data(X);
  return T;
}

onnx::NodeProto node(const std::string &Op, int Inputs, int Outputs = 1) {
  onnx::NodeProto N;
  N.set_op_type(Op);
  for (int I = 0; I < Inputs; ++I)
    N.add_input("i" + std::to_string(I));
  for (int I = 0; I < Outputs; ++I)
    N.add_output("o" + std::to_string(I));
  return N;
}

struct Result {
  bool Ok = false;
  std::vector<onnx::TensorProto> Out;
  std::vector<int64_t> dims(size_t I = 0) const {
    return {Out[I].dims().begin(), Out[I].dims().end()};
  }
  std::vector<int64_t> ints(size_t I = 0) const {
    if (Out[I].data_type() == TP::INT64)
      return {Out[I].int64_data().begin(), Out[I].int64_data().end()};
    return {Out[I].int32_data().begin(), Out[I].int32_data().end()};
  }
  std::vector<float> floats(size_t I = 0) const {
    return {Out[I].float_data().begin(), Out[I].float_data().end()};
  }
};

Result eval(const onnx::NodeProto &N, std::vector<const TP *> In,
            int64_t Opset = 13) {
  Result R;
  R.Ok = frontend::evaluateNode(N, Opset, In, R.Out);
  return R;
}

} // namespace

TEST_CASE("evaluate: integer Div truncates, Mod follows the divisor") {
  TP A = ints({7, -7, 7, -7}), B = ints({2, 2, -2, -2});
  Result D = eval(node("Div", 2), {&A, &B});
  REQUIRE(D.Ok);
  CHECK(D.ints() == std::vector<int64_t>{3, -3, -3, 3});
  Result M = eval(node("Mod", 2), {&A, &B});
  REQUIRE(M.Ok);
  CHECK(M.ints() == std::vector<int64_t>{1, 1, -1, -1});
  onnx::NodeProto FMod = node("Mod", 2);
  addIntAttr(FMod, "fmod", 1);
  Result F = eval(FMod, {&A, &B});
  REQUIRE(F.Ok);
  CHECK(F.ints() == std::vector<int64_t>{1, -1, 1, -1});
  TP Zero = ints({0});
  CHECK_FALSE(eval(node("Div", 2), {&A, &Zero}).Ok);
  CHECK_FALSE(eval(node("Mod", 2), {&A, &Zero}).Ok);
  TP FA = floats({1.0f}), FZ = floats({0.0f});
  CHECK_FALSE(eval(node("Div", 2), {&FA, &FZ}).Ok);
  // Mixed types are a model error, not something to guess at.
  CHECK_FALSE(eval(node("Add", 2), {&A, &FA}).Ok);
}

TEST_CASE("evaluate: broadcasting and comparisons") {
  TP A = ints({1, 2, 3}, {3, 1}), B = ints({10, 20}, {1, 2});
  Result S = eval(node("Add", 2), {&A, &B});
  REQUIRE(S.Ok);
  CHECK(S.dims() == std::vector<int64_t>{3, 2});
  CHECK(S.ints() == std::vector<int64_t>{11, 21, 12, 22, 13, 23});
  TP C = ints({1, 2, 3});
  CHECK_FALSE(eval(node("Add", 2), {&C, &B}).Ok); // 3 vs 2
  TP Two = scalar(2);
  Result L = eval(node("Less", 2), {&C, &Two});
  REQUIRE(L.Ok);
  CHECK(L.Out[0].data_type() == TP::BOOL);
  CHECK(L.ints() == std::vector<int64_t>{1, 0, 0});
  TP D = ints({5, 1, 4});
  Result Mx = eval(node("Max", 3), {&C, &D, &Two});
  REQUIRE(Mx.Ok);
  CHECK(Mx.ints() == std::vector<int64_t>{5, 2, 4});
}

TEST_CASE("evaluate: Slice with negative steps, clamping and axes") {
  TP X = ints({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto Slice = [&](std::vector<int64_t> S, std::vector<int64_t> E,
                   std::vector<int64_t> Step) {
    TP St = ints(S), En = ints(E), Ax = ints({0}), Sp = ints(Step);
    Result R = eval(node("Slice", 5), {&X, &St, &En, &Ax, &Sp});
    REQUIRE(R.Ok);
    return R.ints();
  };
  CHECK(Slice({1}, {4}, {1}) == std::vector<int64_t>{1, 2, 3});
  CHECK(Slice({-3}, {INT64_MAX}, {1}) == std::vector<int64_t>{7, 8, 9});
  CHECK(Slice({-1}, {INT64_MIN}, {-1}) ==
        std::vector<int64_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  CHECK(Slice({8}, {1}, {-3}) == std::vector<int64_t>{8, 5, 2});
  CHECK(Slice({0}, {10}, {INT64_MAX}) == std::vector<int64_t>{0});
  CHECK(Slice({20}, {30}, {1}).empty());
  TP St = ints({0}), En = ints({1}), Ax = ints({0}), Zero = ints({0});
  CHECK_FALSE(eval(node("Slice", 5), {&X, &St, &En, &Ax, &Zero}).Ok);
  // A 2-D slice on the last axis only, axes negative.
  TP M = ints({0, 1, 2, 3, 4, 5}, {2, 3});
  TP S2 = ints({1}), E2 = ints({3}), A2 = ints({-1});
  Result R = eval(node("Slice", 4), {&M, &S2, &E2, &A2});
  REQUIRE(R.Ok);
  CHECK(R.dims() == std::vector<int64_t>{2, 2});
  CHECK(R.ints() == std::vector<int64_t>{1, 2, 4, 5});
  // Opset 9: attributes.
  onnx::NodeProto Old = node("Slice", 1);
  addIntsAttr(Old, "starts", {1});
  addIntsAttr(Old, "ends", {3});
  addIntsAttr(Old, "axes", {1});
  Result O = eval(Old, {&M}, 9);
  REQUIRE(O.Ok);
  CHECK(O.ints() == std::vector<int64_t>{1, 2, 4, 5});
}

TEST_CASE("evaluate: Gather, Concat, Unsqueeze, Squeeze across opsets") {
  TP S = ints({1, 3, 224, 224});
  TP Idx = ints({-1, 0}, {2});
  Result G = eval(node("Gather", 2), {&S, &Idx});
  REQUIRE(G.Ok);
  CHECK(G.ints() == std::vector<int64_t>{224, 1});
  TP Bad = ints({4}, {});
  CHECK_FALSE(eval(node("Gather", 2), {&S, &Bad}).Ok);
  TP M = ints({0, 1, 2, 3, 4, 5}, {2, 3}), One = scalar(1);
  onnx::NodeProto G1 = node("Gather", 2);
  addIntAttr(G1, "axis", 1);
  Result Col = eval(G1, {&M, &One});
  REQUIRE(Col.Ok);
  CHECK(Col.dims() == std::vector<int64_t>{2});
  CHECK(Col.ints() == std::vector<int64_t>{1, 4});

  onnx::NodeProto C = node("Concat", 2);
  addIntAttr(C, "axis", -1);
  Result Cat = eval(C, {&M, &M});
  REQUIRE(Cat.Ok);
  CHECK(Cat.dims() == std::vector<int64_t>{2, 6});
  CHECK(Cat.ints() == std::vector<int64_t>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});

  TP Axes = ints({0, -1});
  Result U = eval(node("Unsqueeze", 2), {&M, &Axes});
  REQUIRE(U.Ok);
  CHECK(U.dims() == std::vector<int64_t>{1, 2, 3, 1});
  onnx::NodeProto U11 = node("Unsqueeze", 1);
  addIntsAttr(U11, "axes", {1});
  Result U2 = eval(U11, {&M}, 11);
  REQUIRE(U2.Ok);
  CHECK(U2.dims() == std::vector<int64_t>{2, 1, 3});
  // Opset 13 Unsqueeze without its axes input is not a valid node.
  CHECK_FALSE(eval(node("Unsqueeze", 1), {&M}).Ok);

  TP Q = ints({7}, {1, 1, 1});
  Result Sq = eval(node("Squeeze", 1), {&Q});
  REQUIRE(Sq.Ok);
  CHECK(Sq.dims().empty());
  TP Ax1 = ints({1});
  Result Sq1 = eval(node("Squeeze", 2), {&Q, &Ax1});
  REQUIRE(Sq1.Ok);
  CHECK(Sq1.dims() == std::vector<int64_t>{1, 1});
  CHECK_FALSE(eval(node("Squeeze", 2), {&M, &Ax1}).Ok); // Dim 3, not 1.
}

TEST_CASE("evaluate: Reshape, Flatten, Transpose, Expand, Tile") {
  TP X = ints({0, 1, 2, 3, 4, 5}, {2, 3});
  TP Shape = ints({0, -1, 1});
  Result R = eval(node("Reshape", 2), {&X, &Shape});
  REQUIRE(R.Ok);
  CHECK(R.dims() == std::vector<int64_t>{2, 3, 1});
  TP Two = ints({-1, -1});
  CHECK_FALSE(eval(node("Reshape", 2), {&X, &Two}).Ok);
  TP Wrong = ints({4, 2});
  CHECK_FALSE(eval(node("Reshape", 2), {&X, &Wrong}).Ok);
  TP E = ints({}, {0}), ZeroShape = ints({0, 3});
  onnx::NodeProto AZ = node("Reshape", 2);
  addIntAttr(AZ, "allowzero", 1);
  Result Z = eval(AZ, {&E, &ZeroShape}, 14);
  REQUIRE(Z.Ok);
  CHECK(Z.dims() == std::vector<int64_t>{0, 3});

  onnx::NodeProto F = node("Flatten", 1);
  addIntAttr(F, "axis", 0);
  Result Fl = eval(F, {&X});
  REQUIRE(Fl.Ok);
  CHECK(Fl.dims() == std::vector<int64_t>{1, 6});

  Result T = eval(node("Transpose", 1), {&X});
  REQUIRE(T.Ok);
  CHECK(T.dims() == std::vector<int64_t>{3, 2});
  CHECK(T.ints() == std::vector<int64_t>{0, 3, 1, 4, 2, 5});

  TP Col = ints({1, 2}, {2, 1}), To = ints({2, 3});
  Result Ex = eval(node("Expand", 2), {&Col, &To});
  REQUIRE(Ex.Ok);
  CHECK(Ex.ints() == std::vector<int64_t>{1, 1, 1, 2, 2, 2});
  TP Huge = ints({1000000, 1000000});
  CHECK_FALSE(eval(node("Expand", 2), {&Col, &Huge}).Ok);

  TP Rep = ints({2, 1});
  Result Ti = eval(node("Tile", 2), {&Col, &Rep});
  REQUIRE(Ti.Ok);
  CHECK(Ti.dims() == std::vector<int64_t>{4, 1});
  CHECK(Ti.ints() == std::vector<int64_t>{1, 2, 1, 2});
}

TEST_CASE("evaluate: Range, ConstantOfShape, Split, NonZero, Where") {
  TP S = scalar(1), L = scalar(10), D = scalar(3);
  Result R = eval(node("Range", 3), {&S, &L, &D});
  REQUIRE(R.Ok);
  CHECK(R.ints() == std::vector<int64_t>{1, 4, 7});
  TP Back = scalar(-2), Neg = scalar(-1);
  Result R2 = eval(node("Range", 3), {&S, &Back, &Neg});
  REQUIRE(R2.Ok);
  CHECK(R2.ints() == std::vector<int64_t>{1, 0, -1});
  TP Zero = scalar(0);
  CHECK_FALSE(eval(node("Range", 3), {&S, &L, &Zero}).Ok);
  TP Big = scalar(INT64_MAX), Min = scalar(INT64_MIN), One = scalar(1);
  CHECK_FALSE(eval(node("Range", 3), {&Min, &Big, &One}).Ok);
  TP FS = floats({0.0f}, {}), FL = floats({1.0f}, {}), FD = floats({0.25f}, {});
  Result RF = eval(node("Range", 3), {&FS, &FL, &FD});
  REQUIRE(RF.Ok);
  CHECK(RF.floats() == std::vector<float>{0.0f, 0.25f, 0.5f, 0.75f});

  TP Shape = ints({2, 3});
  onnx::NodeProto C = node("ConstantOfShape", 1);
  auto *A = C.add_attribute();
  A->set_name("value");
  A->set_type(onnx::AttributeProto::TENSOR);
  *A->mutable_t() = ints({7}, {1});
  Result Cs = eval(C, {&Shape});
  REQUIRE(Cs.Ok);
  CHECK(Cs.dims() == std::vector<int64_t>{2, 3});
  CHECK(Cs.ints() == std::vector<int64_t>(6, 7));
  TP NegShape = ints({-1, 3});
  CHECK_FALSE(eval(C, {&NegShape}).Ok);
  Result Cf = eval(node("ConstantOfShape", 1), {&Shape});
  REQUIRE(Cf.Ok);
  CHECK(Cf.Out[0].data_type() == TP::FLOAT);

  TP X = ints({0, 1, 2, 3, 4, 5});
  TP Parts = ints({2, 4});
  Result Sp = eval(node("Split", 2, 2), {&X, &Parts});
  REQUIRE(Sp.Ok);
  CHECK(Sp.ints(0) == std::vector<int64_t>{0, 1});
  CHECK(Sp.ints(1) == std::vector<int64_t>{2, 3, 4, 5});
  Result Eq = eval(node("Split", 1, 3), {&X});
  REQUIRE(Eq.Ok);
  CHECK(Eq.ints(2) == std::vector<int64_t>{4, 5});
  CHECK_FALSE(eval(node("Split", 1, 4), {&X}).Ok); // 6 into 4.

  TP M = ints({0, 3, 0, 5}, {2, 2});
  Result Nz = eval(node("NonZero", 1), {&M});
  REQUIRE(Nz.Ok);
  CHECK(Nz.dims() == std::vector<int64_t>{2, 2});
  CHECK(Nz.ints() == std::vector<int64_t>{0, 1, 1, 1});

  TP Cond = ints({1, 0}, {2}, TP::BOOL), Y = scalar(-1);
  TP Xs = ints({10, 20});
  Result W = eval(node("Where", 3), {&Cond, &Xs, &Y});
  REQUIRE(W.Ok);
  CHECK(W.ints() == std::vector<int64_t>{10, -1});
}

TEST_CASE("evaluate: Cast, rounding and float ops") {
  TP F = floats({2.5f, 3.5f, -2.5f, 1.7f, -1.7f});
  Result R = eval(node("Round", 1), {&F});
  REQUIRE(R.Ok);
  CHECK(R.floats() == std::vector<float>{2.0f, 4.0f, -2.0f, 2.0f, -2.0f});
  onnx::NodeProto C = node("Cast", 1);
  addIntAttr(C, "to", TP::INT64);
  Result I = eval(C, {&F});
  REQUIRE(I.Ok);
  CHECK(I.ints() == std::vector<int64_t>{2, 3, -2, 1, -1});
  TP Inf = floats({INFINITY});
  CHECK_FALSE(eval(C, {&Inf}).Ok);
  onnx::NodeProto C32 = node("Cast", 1);
  addIntAttr(C32, "to", TP::INT32);
  TP Large = floats({3e9f});
  CHECK_FALSE(eval(C32, {&Large}).Ok);
  onnx::NodeProto CU8 = node("Cast", 1);
  addIntAttr(CU8, "to", TP::UINT8);
  CHECK_FALSE(eval(CU8, {&F}).Ok); // Not a type the folder computes in.
  // Float math happens in float: 0.1 + 0.2 rounds like float32.
  TP A = floats({0.1f}), B = floats({0.2f});
  Result S = eval(node("Add", 2), {&A, &B});
  REQUIRE(S.Ok);
  CHECK(S.floats()[0] == 0.1f + 0.2f);
  TP Neg = floats({-4.0f});
  CHECK_FALSE(eval(node("Sqrt", 1), {&Neg}).Ok);
  TP Base = ints({2, 3}), Exp = floats({0.5f});
  Result P = eval(node("Pow", 2), {&Base, &Exp});
  REQUIRE(P.Ok);
  CHECK(P.ints() == std::vector<int64_t>{1, 1});
}

TEST_CASE("evaluate: reductions, Clip, Shape and Size") {
  TP X = ints({1, 2, 3, 4, 5, 6}, {2, 3});
  TP Axes = ints({1});
  onnx::NodeProto Sum = node("ReduceSum", 2);
  addIntAttr(Sum, "keepdims", 0);
  Result S = eval(Sum, {&X, &Axes});
  REQUIRE(S.Ok);
  CHECK(S.dims() == std::vector<int64_t>{2});
  CHECK(S.ints() == std::vector<int64_t>{6, 15});
  Result P = eval(node("ReduceProd", 1), {&X});
  REQUIRE(P.Ok);
  CHECK(P.dims() == std::vector<int64_t>{1, 1});
  CHECK(P.ints() == std::vector<int64_t>{720});
  onnx::NodeProto Mn = node("ReduceMin", 1);
  addIntsAttr(Mn, "axes", {0});
  Result M = eval(Mn, {&X});
  REQUIRE(M.Ok);
  CHECK(M.ints() == std::vector<int64_t>{1, 2, 3});
  TP Empty = ints({}, {0});
  CHECK_FALSE(eval(node("ReduceMax", 1), {&Empty}).Ok);

  TP Lo = scalar(2), Hi = scalar(4);
  Result C = eval(node("Clip", 3), {&X, &Lo, &Hi});
  REQUIRE(C.Ok);
  CHECK(C.ints() == std::vector<int64_t>{2, 2, 3, 4, 4, 4});
  Result C1 = eval(node("Clip", 3), {&X, nullptr, &Hi});
  REQUIRE(C1.Ok);
  CHECK(C1.ints() == std::vector<int64_t>{1, 2, 3, 4, 4, 4});

  TP Dims;
  for (int64_t D : {1, 3, 224, 224})
    Dims.add_dims(D);
  Dims.set_data_type(TP::FLOAT); // No data: Shape reads only the dims.
  onnx::NodeProto Sh = node("Shape", 1);
  addIntAttr(Sh, "start", -2);
  Result Tail = eval(Sh, {&Dims}, 15);
  REQUIRE(Tail.Ok);
  CHECK(Tail.ints() == std::vector<int64_t>{224, 224});
  Result Sz = eval(node("Size", 1), {&Dims});
  REQUIRE(Sz.Ok);
  CHECK(Sz.ints() == std::vector<int64_t>{150528});
}

/// ONNX's backend node tests: every case of an op the folder evaluates,
/// where the folder computes a result, must match ONNX's expected output.
TEST_CASE("evaluate: empty tensors with huge dims neither overflow nor loop") {
  // A tensor with a zero dim holds nothing, so its other dims may be huge
  // while its element count is 0: products of dims must be checked (UBSan
  // caught the signed overflow) and loops must not run per outer index (a
  // hang of 2^40 empty iterations).
  const int64_t Huge = int64_t(1) << 40;
  TP Wide = ints({}, {Huge, 0});
  TP Square = ints({}, {0, Huge, Huge});

  onnx::NodeProto Concat = node("Concat", 2);
  addIntAttr(Concat, "axis", 1);
  Result C = eval(Concat, {&Wide, &Wide});
  REQUIRE(C.Ok);
  CHECK(C.dims() == std::vector<int64_t>{Huge, 0});
  TP Long = ints({}, {0, int64_t(1) << 62});
  onnx::NodeProto Concat1 = node("Concat", 2);
  addIntAttr(Concat1, "axis", 1);
  CHECK_FALSE(eval(Concat1, {&Long, &Long}).Ok); // 2^63 does not fit.

  onnx::NodeProto Gather = node("Gather", 2);
  addIntAttr(Gather, "axis", 1);
  TP NoIndex = ints({}, {0});
  Result G = eval(Gather, {&Wide, &NoIndex});
  REQUIRE(G.Ok);
  CHECK(G.dims() == std::vector<int64_t>{Huge, 0});

  onnx::NodeProto Split = node("Split", 1, 2);
  addIntAttr(Split, "axis", 1);
  Result S = eval(Split, {&Wide});
  REQUIRE(S.Ok);
  CHECK(S.dims(1) == std::vector<int64_t>{Huge, 0});

  // Empty results keep their exact shapes.
  onnx::NodeProto Transpose = node("Transpose", 1);
  addIntsAttr(Transpose, "perm", {1, 2, 0});
  Result T = eval(Transpose, {&Square});
  REQUIRE(T.Ok);
  CHECK(T.dims() == std::vector<int64_t>{Huge, Huge, 0});
  Result NZ = eval(node("NonZero", 1), {&Square});
  REQUIRE(NZ.Ok);
  CHECK(NZ.dims() == std::vector<int64_t>{3, 0});
  TP Ones = ints({1, 1});
  Result E = eval(node("Expand", 2), {&Square, &Ones});
  REQUIRE(E.Ok);
  CHECK(E.dims() == std::vector<int64_t>{0, Huge, Huge});
  TP Four = ints({}, {5, 0, Huge, Huge});
  TP Axis0 = ints({0});
  onnx::NodeProto Sum = node("ReduceSum", 2);
  addIntAttr(Sum, "keepdims", 0);
  Result RS = eval(Sum, {&Four, &Axis0});
  REQUIRE(RS.Ok);
  CHECK(RS.dims() == std::vector<int64_t>{0, Huge, Huge});
  TP Starts = ints({0}), Ends = ints({1}), Axes = ints({2});
  Result SL = eval(node("Slice", 4), {&Square, &Starts, &Ends, &Axes});
  REQUIRE(SL.Ok);
  CHECK(SL.dims() == std::vector<int64_t>{0, Huge, 1});
  // A flattened dim that does not fit is unknown, not wrapped.
  onnx::NodeProto Flatten = node("Flatten", 1);
  addIntAttr(Flatten, "axis", 1);
  CHECK_FALSE(eval(Flatten, {&Square}).Ok);
}

TEST_CASE("evaluate: agrees with ONNX's node tests") {
  const std::string Root = "/usr/share/libonnx-testdata/data/node";
  if (!llvm::sys::fs::is_directory(Root)) {
    MESSAGE("no ONNX node tests at " << Root << "; skipped");
    return;
  }
  auto ReadProto = [](const std::string &Path, auto &Proto) {
    std::ifstream In(Path, std::ios::binary);
    return In && Proto.ParseFromIstream(&In);
  };
  static const char *const Ops[] = {"Shape",      "Size",
                                    "Identity",   "Cast",
                                    "CastLike",   "Gather",
                                    "Slice",      "Concat",
                                    "Unsqueeze",  "Squeeze",
                                    "Reshape",    "Flatten",
                                    "Transpose",  "Expand",
                                    "Tile",       "ConstantOfShape",
                                    "Range",      "Split",
                                    "NonZero",    "Add",
                                    "Sub",        "Mul",
                                    "Div",        "Mod",
                                    "Pow",        "Neg",
                                    "Abs",        "Sign",
                                    "Floor",      "Ceil",
                                    "Round",      "Sqrt",
                                    "Reciprocal", "Clip",
                                    "Min",        "Max",
                                    "Sum",        "Equal",
                                    "Less",       "LessOrEqual",
                                    "Greater",    "GreaterOrEqual",
                                    "Not",        "And",
                                    "Or",         "Xor",
                                    "Where",      "ReduceProd",
                                    "ReduceSum",  "ReduceMin",
                                    "ReduceMax"};
  unsigned Cases = 0, Computed = 0;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Root, EC), End; It != End && !EC;
       It.increment(EC)) {
    std::string Dir = It->path();
    onnx::ModelProto M;
    if (!ReadProto(Dir + "/model.onnx", M) || M.graph().node_size() != 1)
      continue;
    const onnx::NodeProto &N = M.graph().node(0);
    if (!N.domain().empty() || !llvm::is_contained(Ops, N.op_type()))
      continue;
    int64_t Opset = 0;
    for (const auto &Imp : M.opset_import())
      if (Imp.domain().empty())
        Opset = Imp.version();
    std::vector<TP> Inputs(M.graph().input_size());
    bool Read = true;
    for (int I = 0; I < M.graph().input_size(); ++I)
      Read &=
          ReadProto(Dir + "/test_data_set_0/input_" + std::to_string(I) + ".pb",
                    Inputs[I]);
    std::vector<TP> Expected(M.graph().output_size());
    for (int I = 0; I < M.graph().output_size(); ++I)
      Read &= ReadProto(Dir + "/test_data_set_0/output_" + std::to_string(I) +
                            ".pb",
                        Expected[I]);
    if (!Read)
      continue;
    std::vector<const TP *> In;
    for (const std::string &Name : N.input()) {
      const TP *Found = nullptr;
      for (int I = 0; I < M.graph().input_size(); ++I)
        if (!Name.empty() && M.graph().input(I).name() == Name)
          Found = &Inputs[I];
      for (const auto &T : M.graph().initializer())
        if (!Name.empty() && T.name() == Name)
          Found = &T;
      In.push_back(Found);
    }
    ++Cases;
    std::vector<TP> Out;
    if (!frontend::evaluateNode(N, Opset, In, Out)) {
      if (getenv("PERFC_FOLD_VERBOSE"))
        MESSAGE("not computed: " << Dir);
      continue;
    }
    ++Computed;
    INFO(Dir);
    REQUIRE(Out.size() == Expected.size());
    for (size_t I = 0; I < Out.size(); ++I) {
      // Compare through ONNX's own parsing: both to doubles.
      onnx::NodeProto Id;
      Id.set_op_type("Cast");
      Id.add_output("o");
      addIntAttr(Id, "to", TP::DOUBLE);
      std::vector<TP> A, B;
      const TP *Got = &Out[I], *Want = &Expected[I];
      CHECK(Got->data_type() == Want->data_type());
      CHECK(std::vector<int64_t>(Got->dims().begin(), Got->dims().end()) ==
            std::vector<int64_t>(Want->dims().begin(), Want->dims().end()));
      if (!frontend::evaluateNode(Id, 13, {Got}, A) ||
          !frontend::evaluateNode(Id, 13, {Want}, B))
        continue; // An int64 beyond 2^53 or a type not computed: dims only.
      REQUIRE(A[0].double_data_size() == B[0].double_data_size());
      for (int K = 0; K < A[0].double_data_size(); ++K) {
        double X = A[0].double_data(K), Y = B[0].double_data(K);
        bool Same = (std::isnan(X) && std::isnan(Y)) || X == Y ||
                    std::fabs(X - Y) <= 1e-5 * std::max(1.0, std::fabs(Y));
        CHECK_MESSAGE(Same, "element " << K << ": " << X << " vs " << Y);
      }
    }
  }
  MESSAGE("ONNX node tests: " << Computed << " of " << Cases
                              << " cases computed and checked");
  CHECK(Computed > Cases / 2);
}

//===----------------------------------------------------------------------===//
// A real model
//===----------------------------------------------------------------------===//

#ifdef PERFC_SOURCE_DIR
TEST_CASE("folding: swin_t imports fully static with torch's MAC count") {
  std::string Path =
      std::string(PERFC_SOURCE_DIR) + "/tests/data/zoo/swin_t.onnx";
  if (!llvm::sys::fs::exists(Path)) {
    MESSAGE("no " << Path << "; skipped");
    return;
  }
  auto Start = std::chrono::steady_clock::now();
  auto IM = expectOk(frontend::importOnnxFile(Path, {}));
  double Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  MESSAGE("swin_t import: " << Seconds << " s, " << IM.Graph.numNodes()
                            << " nodes");
  for (const auto &V : IM.Graph.values())
    CHECK_MESSAGE(V->shape().isStatic(), V->name().str());
  CHECK(IM.Warnings.empty());
  uint64_t Macs = computeWork(IM.Graph).Total.Macs;
  const double Torch = 4490566656.0;
  CHECK(std::fabs(static_cast<double>(Macs) - Torch) <= 0.001 * Torch);

  // How much work the folding took, on the same stripped model.
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  REQUIRE(Buffer);
  auto Stripped = expectOk(frontend::stripWeights((*Buffer)->getBuffer()));
  onnx::ModelProto M;
  REQUIRE(M.ParseFromString(Stripped.Bytes));
  auto *Batch = M.mutable_graph()
                    ->mutable_input(0)
                    ->mutable_type()
                    ->mutable_tensor_type()
                    ->mutable_shape()
                    ->mutable_dim(0);
  Batch->set_dim_value(1);
  frontend::FoldingStats Stats;
  Start = std::chrono::steady_clock::now();
  std::string Failure = frontend::inferShapesWithFolding(M, &Stats);
  Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  CHECK(Failure.empty());
  MESSAGE("swin_t folding: " << Seconds << " s, " << Stats.Rounds << " sweeps, "
                             << Stats.InferencePasses << " inference passes, "
                             << Stats.NodesFolded << " nodes folded");
  CHECK(Stats.Rounds <= 3);
}
#endif
