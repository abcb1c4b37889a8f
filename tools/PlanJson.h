//===- PlanJson.h - Reading a training plan perfc wrote ---------*- C++ -*-===//
//
// `perfc MODEL --train --strategy plan.json` predicts a plan that
// `--plan --format json` wrote: the whole JSON output or its "plan" object
// alone. The reading is kept out of the command so that tests and the
// fuzzer (tools/fuzz/FuzzPlanJson.cpp) call the same code as the tool.
//
// Errors are one line that starts with the file name and names the place:
// "FILE:LINE:COL: ..." for text that is not JSON, "FILE: 'plan.tp' ..." (the
// JSON path) for a value that is missing, mistyped or out of range.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_PLANJSON_H
#define PERFC_TOOLS_PLANJSON_H

#include "passes/TrainStep.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace perfc {

/// The model a plan was made for ("plan.model"); what is absent is not
/// checked.
struct PlanModel {
  std::string Name; ///< The ONNX graph name; "" when absent.
  /// The model file's stem ("plan.model.file_stem"), for messages only:
  /// exporters give most graphs the same name (torch_jit), so the stem is
  /// what tells a user which model the plan was made for. "" when absent.
  std::string FileStem;
  llvm::Optional<uint64_t> Nodes;
  llvm::Optional<double> Params;
};

struct PlanFile {
  /// The caller's options with the plan's strategy written over them;
  /// Options.ChunkBlocks is the split of "plan.stages[].layers" when the
  /// plan has stages (so a split the planner moved for memory, or made for
  /// mixed GPU types, is predicted as planned).
  TrainOptions Options;
  PlanModel Model;
  /// "plan.stages[].device", one per stage, when every stage names one:
  /// the GPU type each stage runs on (a mixed cluster needs it).
  std::vector<std::string> StageDevices;
};

/// The largest parallel degree (dp, tp, pp, vp) a plan may give: hwdb's
/// largest count (hwdb/Units.cpp), and small enough that products of three
/// degrees cannot overflow 64 bits.
constexpr int64_t MaxPlanDegree = 1000000;

/// Parses the text of a plan; Name (the file name) starts every error.
/// Fields a plan may omit (dtype, optimizer, partition, global_batch) and
/// options a plan does not hold (schedule, compression...) keep Base's
/// values.
llvm::Expected<PlanFile> parsePlanJson(llvm::StringRef Text,
                                       llvm::StringRef Name,
                                       const TrainOptions &Base);

/// Reads and parses the plan at Path. Only regular files are read (a FIFO
/// or /dev/zero would block or never end), of at most 256 MiB.
llvm::Expected<PlanFile> readPlanJson(llvm::StringRef Path,
                                      const TrainOptions &Base);

/// A plan made for another model is an error, not a silent prediction: the
/// fingerprint in the plan must match the model's graph name, node count
/// and parameter count. FileStem, the model file's stem, only names the
/// model in the message, as the plan's own file_stem does.
llvm::Error checkPlanModel(const PlanModel &Planned, llvm::StringRef PlanName,
                           llvm::StringRef GraphName, uint64_t Nodes,
                           double Params, llvm::StringRef FileStem = "");

} // namespace perfc

#endif // PERFC_TOOLS_PLANJSON_H
