//===- Predict.cpp - From a graph to a Report -----------------------------===//
#include "passes/Predict.h"

#include "ir/Graph.h"
#include "passes/WorkPass.h"

namespace perfc {

Report predictWork(const ir::Graph &G) {
  GraphWork Work = computeWork(G);
  Report R;
  R.Total = Work.Total;
  R.Warnings = std::move(Work.Warnings);
  R.Nodes.reserve(G.numNodes());
  for (const auto &N : G.nodes()) {
    NodeReport NR;
    NR.Name = N->name().str();
    NR.Op = N->domain().empty() ? N->opType().str()
                                : (N->domain() + ":" + N->opType()).str();
    if (const ir::Value *Out = N->output(0))
      NR.OutputShape = Out->shape().str();
    NR.Work = std::move(Work.Nodes[N->index()]);
    R.Nodes.push_back(std::move(NR));
  }
  return R;
}

} // namespace perfc
