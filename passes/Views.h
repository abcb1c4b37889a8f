//===- Views.h - Looking through chains of view ops -------------*- C++ -*-===//
//
// Reshape, Transpose, Squeeze and the like move no data (or, in a kernel
// plan, run as no kernel of their own): a read of their output is a read of
// their first input. Passes that ask what a value really is (the tensor a
// kernel reads, the parameter a MatMul multiplies by) walk up such chains;
// each pass says which producers it counts as views.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_VIEWS_H
#define PERFC_PASSES_VIEWS_H

#include "ir/Graph.h"

namespace perfc {

/// The value a read of V touches: V itself, or the first input behind the
/// chain of producers that IsView(const ir::Node &) accepts. Stops at a
/// producer without a first input, and after MaxHops steps (a bound on
/// malformed graphs, where the walk returns the value reached).
template <typename IsViewFn>
const ir::Value *throughViews(const ir::Value *V, IsViewFn &&IsView,
                              unsigned MaxHops) {
  for (unsigned Hop = 0; Hop < MaxHops; ++Hop) {
    const ir::Node *P = V->producer();
    if (!P || !IsView(*P) || !P->input(0))
      return V;
    V = P->input(0);
  }
  return V;
}

} // namespace perfc

#endif // PERFC_PASSES_VIEWS_H
