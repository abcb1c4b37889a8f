//===- IrTest.cpp - Unit tests of the IR ----------------------------------===//
#include "TestGraphs.h"

#include "ir/Einsum.h"
#include "ir/Graph.h"
#include "ir/NameHash.h"

#include <set>

using namespace perfc;
using namespace perfc::test;

TEST_CASE("shape element counts check overflow") {
  CHECK(ir::Shape({2, 3, 4}).numElements() == uint64_t(24));
  CHECK(ir::Shape::scalar().numElements() == uint64_t(1));
  CHECK_FALSE(ir::Shape::unranked().numElements().hasValue());
  CHECK_FALSE(ir::Shape({int64_t(1) << 40, int64_t(1) << 30}).numElements());
  ir::Shape S({1, 3});
  S[0] = ir::Dim::symbolic("batch");
  CHECK_FALSE(S.numElements().hasValue());
  CHECK(S.str() == "[batch, 3]");
  CHECK(S.numElementsOrZero() == 0);
}

TEST_CASE("Shape::str: long shapes, large sizes, symbols and unknowns") {
  ir::Shape S = ir::Shape::scalar();
  CHECK(S.str() == "[]");
  std::string Expected = "[";
  for (int I = 0; I < 40; ++I) {
    if (I)
      Expected += ", ";
    if (I % 7 == 3) {
      std::string Sym(I, 's');
      S.push_back(ir::Dim::symbolic(Sym));
      Expected += Sym;
    } else if (I % 11 == 5) {
      S.push_back(ir::Dim());
      Expected += "?";
    } else {
      int64_t V = INT64_MAX - I;
      S.push_back(ir::Dim::known(V));
      Expected += std::to_string(V);
    }
  }
  CHECK(S.str() == Expected + "]");
}

TEST_CASE("shape element counts do not depend on the order of the dims") {
  const int64_t Big = int64_t(1) << 40, Huge = int64_t(1) << 62;
  // An empty tensor holds 0 elements however large its other dims are.
  for (ir::Shape S : {ir::Shape({0, Big, Big}), ir::Shape({Big, 0, Big}),
                      ir::Shape({Big, Big, 0}), ir::Shape({Huge, 0})})
    CHECK(S.numElements() == uint64_t(0));
  // A single dim above 2^62 is an overflow wherever it is, even in an
  // empty tensor.
  const int64_t TooBig = Huge + 1;
  for (ir::Shape S : {ir::Shape({0, TooBig}), ir::Shape({TooBig, 0}),
                      ir::Shape({TooBig}), ir::Shape({1, INT64_MAX, 0})})
    CHECK_FALSE(S.numElements().hasValue());
  // Products: the boundary is MaxTensorSize, in every order.
  CHECK(ir::Shape({Huge, 1}).numElements() == ir::MaxTensorSize);
  CHECK(ir::Shape({2, Huge / 2}).numElements() == ir::MaxTensorSize);
  CHECK_FALSE(ir::Shape({2, Huge / 2 + 1}).numElements());
  CHECK_FALSE(ir::Shape({Huge / 2 + 1, 2}).numElements());
  CHECK_FALSE(ir::Shape({Big, Big, 1}).numElements());
  CHECK_FALSE(ir::Shape({1, Big, Big}).numElements());
  // A value's bytes: 0 for an empty tensor, 0 (with numElements None) for
  // one that overflows; the frontend rejects the latter.
  CHECK(ir::checkedMul(ir::MaxTensorSize, 1) == ir::MaxTensorSize);
  CHECK_FALSE(ir::checkedMul(ir::MaxTensorSize, 2));
  CHECK_FALSE(ir::checkedMul(UINT64_MAX, UINT64_MAX));
  CHECK(ir::checkedMul(0, UINT64_MAX) == uint64_t(0));
  CHECK(ir::checkedAdd(ir::MaxTensorSize - 1, 1) == ir::MaxTensorSize);
  CHECK_FALSE(ir::checkedAdd(ir::MaxTensorSize, 1));
  CHECK_FALSE(ir::checkedAdd(UINT64_MAX, 1));
}

TEST_CASE("dtype names round-trip") {
  for (ir::DType T : {ir::DType::F32, ir::DType::BF16, ir::DType::I8,
                      ir::DType::F8E4M3, ir::DType::Bool})
    CHECK(ir::parseDType(ir::name(T)) == T);
  CHECK(ir::byteSize(ir::DType::F16) == 2);
  CHECK(ir::byteSize(ir::DType::C128) == 16);
  CHECK_FALSE(ir::parseDType("float").hasValue());
}

TEST_CASE("graph links producers and users and sorts topologically") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {1, 8});
  // Build the second node first: the graph must reorder them.
  ir::Value *T = B.tensor("t", {1, 8});
  ir::Value *Y = B.tensor("y", {1, 8});
  ir::Node *Second = expectOk(B.G.addNode("second", "Relu", "", {T}, {Y}));
  ir::Node *First = expectOk(B.G.addNode("first", "Neg", "", {X}, {T}));
  CHECK(T->producer() == First);
  REQUIRE(T->users().size() == 1);
  CHECK(T->users()[0] == Second);
  CHECK(llvm::errorToBool(B.G.verify())); // Out of order: verify fails.
  REQUIRE_FALSE(llvm::errorToBool(B.G.sortTopologically()));
  CHECK(B.G.nodes()[0]->name() == "first");
  CHECK(First->index() == 0);
  CHECK_FALSE(llvm::errorToBool(B.G.verify()));
}

TEST_CASE("a cycle is reported with a node on it") {
  GraphBuilder B;
  ir::Value *A = B.tensor("a", {4});
  ir::Value *C = B.tensor("c", {4});
  expectOk(B.G.addNode("n1", "Relu", "", {A}, {C}));
  expectOk(B.G.addNode("n2", "Relu", "", {C}, {A}));
  llvm::Error E = B.G.sortTopologically();
  REQUIRE(bool(E));
  std::string Msg = llvm::toString(std::move(E));
  CHECK(Msg.find("cycle") != std::string::npos);
  CHECK(Msg.find("'n1'") != std::string::npos);
}

TEST_CASE("duplicate tensor names and second producers are rejected") {
  GraphBuilder B;
  B.input("x", {1});
  llvm::Expected<ir::Value *> Dup =
      B.G.addValue("x", ir::DType::F32, ir::Shape({1}), ir::ValueKind::Input);
  REQUIRE_FALSE(bool(Dup));
  CHECK(llvm::toString(Dup.takeError()).find("defined twice") !=
        std::string::npos);
  ir::Value *X = B.G.lookup("x");
  ir::Value *Y = B.tensor("y", {1});
  expectOk(B.G.addNode("a", "Relu", "", {X}, {Y}));
  llvm::Expected<ir::Node *> Second = B.G.addNode("b", "Relu", "", {X}, {Y});
  REQUIRE_FALSE(bool(Second));
  llvm::consumeError(Second.takeError());
}

TEST_CASE("NameInfo: names of every length, sharing prefixes and "
          "suffixes, are told apart") {
  std::vector<std::string> Names;
  for (size_t Len = 0; Len <= 40; ++Len)
    for (char C : {'a', 'b', '\0', '\xff'}) {
      Names.push_back(std::string(Len, 'x') + C);
      Names.push_back(C + std::string(Len, 'x'));
    }
  Names.push_back("");
  llvm::DenseMap<llvm::StringRef, unsigned, ir::NameInfo> Map;
  for (const std::string &N : Names)
    Map.try_emplace(N, Map.size());
  // The distinct names (a few coincide, e.g. 'x' + 'a' made twice).
  std::set<std::string> Distinct(Names.begin(), Names.end());
  CHECK(Map.size() == Distinct.size());
  for (const std::string &N : Distinct) {
    CHECK(Map.count(N) == 1);
    CHECK(ir::NameInfo::getHashValue(N) ==
          ir::NameInfo::getHashValue(std::string(N)));
  }
  CHECK(Map.count("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxc") == 0);
}

TEST_CASE("attributes are typed") {
  ir::Graph G;
  ir::Node &N = *expectOk(G.addNode("n", "Conv", "", {}, {}));
  N.addAttr(ir::Attr("group", int64_t(2)));
  N.addAttr(ir::Attr("strides", std::vector<int64_t>{2, 2}));
  N.addAttr(ir::Attr("alpha", 0.5));
  N.addAttr(ir::Attr("mode", std::string("constant")));
  CHECK(N.getInt("group", 1) == 2);
  CHECK(N.getInt("missing", 7) == 7);
  CHECK(N.getInts("strides") == std::vector<int64_t>{2, 2});
  CHECK(N.getFloat("alpha", 0) == 0.5);
  CHECK(N.getString("mode") == "constant");
  CHECK(N.getInts("group").empty()); // Wrong type reads as absent.
}

TEST_CASE("einsum output dims: explicit, implicit, ellipsis, broadcast") {
  using Dims = llvm::SmallVector<int64_t, 8>;
  auto Out = [](llvm::StringRef Eq,
                std::initializer_list<Dims> In) -> llvm::Optional<Dims> {
    auto E = ir::parseEinsum(Eq);
    REQUIRE(E);
    return ir::einsumOutputDims(*E, llvm::ArrayRef<Dims>(In.begin(), In.end()));
  };
  CHECK(*Out("bij,bjk->bik", {{4, 8, 16}, {4, 16, 32}}) == Dims{4, 8, 32});
  // MaxViT's attention (capital letters, spaces).
  CHECK(*Out("B G H I D, B G H J D -> B G H I J",
             {{1, 64, 2, 49, 32}, {1, 64, 2, 49, 32}}) ==
        Dims{1, 64, 2, 49, 49});
  // Implicit output: letters used once, in ASCII order (numpy).
  CHECK(*Out("ij,jk", {{2, 3}, {3, 4}}) == Dims{2, 4});
  CHECK(*Out("ba", {{2, 3}}) == Dims{3, 2});
  CHECK(Out("ii", {{3, 3}})->empty()); // Trace: a scalar.
  // Ellipsis dims broadcast and lead an implicit output.
  CHECK(*Out("...ij,...jk", {{5, 1, 2, 3}, {7, 3, 4}}) == Dims{5, 7, 2, 4});
  CHECK(*Out("...ij,jk->...ik", {{6, 2, 3}, {3, 4}}) == Dims{6, 2, 4});
  // Unknown dims stay unknown unless another operand knows the label.
  CHECK(*Out("bij,bjk->bik", {{-1, 8, 16}, {4, 16, -1}}) == Dims{4, 8, -1});
  CHECK(*Out("bij,bjk->bik", {{1, 8, 16}, {-1, 16, 2}}) == Dims{-1, 8, 2});
  // Ranks, operand counts and sizes that do not fit.
  CHECK_FALSE(Out("ij,jk->ik", {{2, 3}}));
  CHECK_FALSE(Out("ijk,jk->ik", {{2, 3}, {3, 4}}));
  CHECK_FALSE(Out("ij,jk->ik", {{2, 3}, {5, 4}}));
  CHECK_FALSE(Out("ij->iz", {{2, 3}}));
  CHECK_FALSE(ir::parseEinsum("ij;jk->ik"));
  CHECK_FALSE(ir::parseEinsum("i...j...->ij"));
}
