//===- Predict.h - From a graph to a Report --------------------*- C++ -*-===//
//
// The pipeline entry point the CLI and the library share: runs the passes
// over a graph and fills a Report.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_PREDICT_H
#define PERFC_PASSES_PREDICT_H

#include "passes/Report.h"

namespace perfc {
namespace ir {
class Graph;
}

/// Work of every node and the totals; the Report's Model is left for the
/// caller to fill.
Report predictWork(const ir::Graph &G);

} // namespace perfc

#endif // PERFC_PASSES_PREDICT_H
