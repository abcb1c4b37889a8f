//===- TestGraphs.h - Small IR graphs built by hand for tests --*- C++ -*-===//
#ifndef PERFC_TESTS_TESTGRAPHS_H
#define PERFC_TESTS_TESTGRAPHS_H

#include "ir/Graph.h"

#include <doctest/doctest.h>

#include <initializer_list>

namespace perfc::test {

/// The index of G's node named Name; fails the test if there is none.
inline unsigned nodeIndex(const ir::Graph &G, llvm::StringRef Name) {
  for (const auto &N : G.nodes())
    if (N->name() == Name)
      return N->index();
  FAIL("no node " << Name.str());
  return 0;
}

/// Unwraps an Expected, failing the test with its message.
template <typename T> T expectOk(llvm::Expected<T> E) {
  if (!E) {
    std::string Msg = llvm::toString(E.takeError());
    FAIL(Msg);
  }
  return std::move(*E);
}

/// Builds graphs tersely: tensors by name, nodes by op type.
class GraphBuilder {
public:
  ir::Graph G{"test"};

  ir::Value *input(llvm::StringRef Name, std::initializer_list<int64_t> Dims,
                   ir::DType T = ir::DType::F32) {
    return expectOk(G.addValue(Name, T, ir::Shape(Dims), ir::ValueKind::Input));
  }
  ir::Value *weight(llvm::StringRef Name, std::initializer_list<int64_t> Dims,
                    ir::DType T = ir::DType::F32) {
    return expectOk(
        G.addValue(Name, T, ir::Shape(Dims), ir::ValueKind::Initializer));
  }
  ir::Value *constInts(llvm::StringRef Name, std::vector<int64_t> Ints) {
    ir::Value *V = expectOk(G.addValue(
        Name, ir::DType::I64, ir::Shape({static_cast<int64_t>(Ints.size())}),
        ir::ValueKind::Initializer));
    ir::ConstData D;
    D.Ints.assign(Ints.begin(), Ints.end());
    V->setData(std::move(D));
    return V;
  }
  ir::Value *tensor(llvm::StringRef Name, std::initializer_list<int64_t> Dims,
                    ir::DType T = ir::DType::F32) {
    return expectOk(
        G.addValue(Name, T, ir::Shape(Dims), ir::ValueKind::Activation));
  }
  /// Adds a node with one output of the given shape.
  ir::Node *node(llvm::StringRef Op, std::initializer_list<ir::Value *> Ins,
                 std::initializer_list<int64_t> OutDims,
                 ir::DType T = ir::DType::F32) {
    std::string OutName = Op.str() + "_" + std::to_string(Counter++);
    ir::Value *Out = tensor(OutName, OutDims, T);
    return expectOk(G.addNode(OutName + "_node", Op, "", Ins, {Out}));
  }
  /// Output value of node N.
  static ir::Value *out(ir::Node *N, unsigned I = 0) { return N->output(I); }

private:
  unsigned Counter = 0;
};

} // namespace perfc::test

#endif // PERFC_TESTS_TESTGRAPHS_H
