//===- Report.h - What perfc predicts for one model ------------*- C++ -*-===//
//
// The result of running the passes over a model: per-node and total work,
// and, when a device is given, time. Printers (tools/) and the library API
// turn it into a table, JSON or Python data; nothing here formats text.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_REPORT_H
#define PERFC_PASSES_REPORT_H

#include "costmodels/OpWork.h"
#include "ir/Warning.h"

#include "llvm/ADT/Optional.h"

#include <string>
#include <vector>

namespace perfc {

/// Time of one node on the chosen device, with where it came from.
struct NodeTime {
  double Seconds = 0;
  double ComputeSeconds = 0;
  double MemorySeconds = 0;
  double OverheadSeconds = 0;
  std::string Bound;   ///< "compute", "memory" or "overhead".
  std::string Explain; ///< The roofline formula with its numbers.
};

struct NodeReport {
  std::string Name;
  std::string Op;
  std::string OutputShape; ///< Of the first output, e.g. "[1, 64, 112, 112]".
  OpWork Work;
  llvm::Optional<NodeTime> Time;
};

struct TensorInfo {
  std::string Name;
  std::string DType;
  std::string Shape;
};

struct ModelInfo {
  std::string Name;
  std::string Path;
  std::string GraphName;
  std::string Producer;
  int64_t IrVersion = 0;
  int64_t Opset = 0;
  uint64_t FileBytes = 0;
  uint64_t WeightBytesSkipped = 0;
  std::vector<TensorInfo> Inputs;
  std::vector<TensorInfo> Outputs;
  std::vector<std::pair<std::string, int64_t>> Bindings;
};

struct HardwareInfo {
  std::string Name;   ///< As given to --hw.
  std::string Device; ///< The device the model runs on.
  std::string Source; ///< Bundled name or file path.
};

struct Report {
  ModelInfo Model;
  llvm::Optional<HardwareInfo> Hardware;
  OpWork Total;
  llvm::Optional<double> LatencySeconds;
  std::vector<NodeReport> Nodes;
  std::vector<Warning> Warnings;
};

} // namespace perfc

#endif // PERFC_PASSES_REPORT_H
