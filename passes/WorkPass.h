//===- WorkPass.h - Per-op work over a whole graph -------------*- C++ -*-===//
//
// Runs the op registry over every node of a graph and sums the result.
//
// Parameters: a floating-point constant (initializer) of two or more
// elements is a parameter, counted once, at the first node that consumes it
// in topological order. An op's registry entry can override that per input
// (InputRoles): BatchNormalization's running mean and variance, which
// frameworks keep as buffers, quantization scales and Resize scales are not
// parameters; the int8 weights of quantized ops are. Scalars (an epsilon, a
// 1/sqrt(d) scale) are constants, not parameters.
//
// Nested graphs are costed conservatively: If costs its more expensive
// branch; Loop costs its body times the trip count when the count is a
// constant (once, with a warning, otherwise); Scan costs its body times the
// scanned length.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_WORKPASS_H
#define PERFC_PASSES_WORKPASS_H

#include "costmodels/OpWork.h"
#include "ir/Warning.h"
#include "passes/OpRegistry.h"

#include <string>
#include <vector>

namespace perfc {
namespace ir {
class Graph;
}

struct GraphWork {
  std::vector<OpWork> Nodes; ///< Indexed by Node::index().
  OpWork Total;
  std::vector<Warning> Warnings;
};

GraphWork computeWork(const ir::Graph &G,
                      const OpRegistry &Registry = defaultOpRegistry());

/// The work of one node with the registry defaults applied, parameters not
/// counted (they depend on the rest of the graph). Nested graphs are not
/// entered: use computeWork for If/Loop/Scan.
OpWork computeNodeWork(const ir::Node &N, const OpInfo *Info);

} // namespace perfc

#endif // PERFC_PASSES_WORKPASS_H
