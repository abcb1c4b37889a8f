//===- TestKernels.h - Kernel plans of the tests' graphs -------*- C++ -*-===//
#ifndef PERFC_TESTS_TESTKERNELS_H
#define PERFC_TESTS_TESTKERNELS_H

#include "TestGraphs.h"

#include "passes/Fusion.h"
#include "passes/WorkPass.h"

namespace perfc::test {

/// G's kernels, fused (the runtimes' default) or one per node.
inline KernelPlan planOf(const ir::Graph &G, bool Fuse = true) {
  FusionOptions O;
  O.Fuse = Fuse;
  return planKernels(G, computeWork(G), O);
}

/// a = Relu(x); b = Relu(a); c = Relu(b); e = Add(a, c), e returned, each
/// of Elements fp32 values: the residual a waits over the branch. Returns
/// the Add.
inline ir::Node *residualBlock(GraphBuilder &B, int64_t Elements) {
  ir::Node *A = B.node("Relu", {B.input("x", {Elements})}, {Elements});
  ir::Node *Bn = B.node("Relu", {B.out(A)}, {Elements});
  ir::Node *C = B.node("Relu", {B.out(Bn)}, {Elements});
  ir::Node *E = B.node("Add", {B.out(A), B.out(C)}, {Elements});
  B.G.markOutput(B.out(E));
  return E;
}

} // namespace perfc::test

#endif // PERFC_TESTS_TESTKERNELS_H
