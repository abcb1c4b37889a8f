//===- LoadTimeConstants.cpp - Values known without running ---------------===//

#include "passes/LoadTimeConstants.h"

using namespace perfc;

LoadTimeConstants::LoadTimeConstants(const ir::Graph &G)
    : Known(G.numValues()) {
  for (const ir::Value *V : G.values())
    if (V->isConstant())
      Known.set(V->index());
  // Producers precede their users, so each node's inputs are settled when
  // it is reached.
  for (const ir::Node *N : G.nodes()) {
    const llvm::StringRef Op = N->opType();
    const bool FromConstants =
        Op == "Shape" || Op == "Size" || Op == "Constant" ||
        llvm::all_of(N->inputs(),
                     [&](const ir::Value *In) { return !In || contains(In); });
    if (FromConstants)
      for (const ir::Value *Out : N->outputs())
        if (Out)
          Known.set(Out->index());
  }
}
