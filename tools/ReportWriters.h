//===- ReportWriters.h - Report as JSON and as a table ---------*- C++ -*-===//
//
// JSON follows the schema documented in README ("JSON output"); its
// `schema_version` changes only when a field is removed or changes meaning.
// Both writers are deterministic: the same Report gives the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_REPORTWRITERS_H
#define PERFC_TOOLS_REPORTWRITERS_H

#include "passes/Report.h"

#include "llvm/Support/raw_ostream.h"

namespace perfc {

constexpr int ReportSchemaVersion = 1;

void writeReportJson(const Report &R, llvm::raw_ostream &OS);

struct TableOptions {
  unsigned MaxOps = 15; ///< Heaviest ops listed; 0 lists all.
  bool Explain = false; ///< Add each op's formula under its row.
};
void writeReportTable(const Report &R, const TableOptions &Options,
                      llvm::raw_ostream &OS);

/// The predicted timeline in Chrome's trace format (chrome://tracing,
/// Perfetto): inference as the kernels in order, training as the 1F1B
/// schedule of each pipeline stage with its communication.
void writeChromeTrace(const Report &R, llvm::raw_ostream &OS);

/// "4.09 G", "25.6 M", "812" (SI prefixes, three significant digits).
std::string formatCount(double V);
/// "1.23 ms", "45.6 us".
std::string formatSeconds(double S);
/// "97.5 MB", "1.2 GB" (decimal units).
std::string formatBytes(double B);

/// How the data-parallel exchange of a step adds up (which collectives,
/// how many, what each costs and what the backward hides), for --explain
/// and the JSON's step.dp_explain; "" without data parallelism.
std::string explainDataParallel(const TrainReport &T, const TrainOptions &O);

} // namespace perfc

#endif // PERFC_TOOLS_REPORTWRITERS_H
