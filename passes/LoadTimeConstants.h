//===- LoadTimeConstants.h - Values known without running -------*- C++ -*-===//
//
// Which values of a graph are known before it runs: initializers, outputs of
// Shape, Size and Constant (shapes are static after import), and whatever is
// computed from those alone (a reshape target built by Concat of Gathers of
// Shape, a weight cast to fp16). The backward expansion and the block
// analysis ask this of nearly every input of every node; found once per graph
// in one pass over its topological order, each answer is a bit test (walking
// producers on every question took a fifth of a GPT-3 plan's instructions).
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_LOADTIMECONSTANTS_H
#define PERFC_PASSES_LOADTIMECONSTANTS_H

#include "ir/Graph.h"

#include "llvm/ADT/BitVector.h"

namespace perfc {

class LoadTimeConstants {
public:
  /// G's nodes must be in topological order (ir::Graph::verify).
  explicit LoadTimeConstants(const ir::Graph &G);

  /// Whether V, a value of the graph given, is known at load time.
  bool contains(const ir::Value *V) const {
    return V->index() < Known.size() && Known.test(V->index());
  }

private:
  llvm::BitVector Known;
};

} // namespace perfc

#endif // PERFC_PASSES_LOADTIMECONSTANTS_H
