//===- ReportJson.cpp - Report as JSON ------------------------------------===//
#include "tools/ReportWriters.h"

#include "perfc/Version.h"

#include "llvm/Support/JSON.h"

#include <cmath>

namespace perfc {
namespace {

/// Counts are integers in JSON while a double holds them exactly (below
/// 2^53); larger ones (training FLOPs of big models) are plain numbers.
llvm::json::Value count(double V) {
  if (V >= 0 && V < 9007199254740992.0 && std::floor(V) == V)
    return static_cast<int64_t>(V);
  return V;
}

void writeWork(llvm::json::OStream &J, const OpWork &W) {
  J.attribute("params", static_cast<int64_t>(W.Params));
  J.attribute("flops", count(W.Flops));
  J.attribute("macs", count(W.Macs));
  J.attribute("bytes", count(W.bytes()));
  J.attribute("bytes_read", count(W.BytesRead));
  J.attribute("bytes_written", count(W.BytesWritten));
}

void writeTensors(llvm::json::OStream &J, llvm::StringRef Key,
                  const std::vector<TensorInfo> &Tensors) {
  J.attributeArray(Key, [&] {
    for (const TensorInfo &T : Tensors)
      J.object([&] {
        J.attribute("name", T.Name);
        J.attribute("dtype", T.DType);
        J.attribute("shape", T.Shape);
      });
  });
}

} // namespace

void writeReportJson(const Report &R, llvm::raw_ostream &OS) {
  llvm::json::OStream J(OS, 2);
  J.object([&] {
    J.attribute("schema_version", ReportSchemaVersion);
    J.attribute("perfc_version", PERFC_VERSION_STRING);
    J.attributeObject("model", [&] {
      const ModelInfo &M = R.Model;
      J.attribute("name", M.Name);
      J.attribute("path", M.Path);
      J.attribute("graph_name", M.GraphName);
      J.attribute("producer", M.Producer);
      J.attribute("ir_version", M.IrVersion);
      J.attribute("opset", M.Opset);
      J.attribute("nodes", static_cast<int64_t>(R.Nodes.size()));
      J.attribute("file_bytes", static_cast<int64_t>(M.FileBytes));
      J.attribute("weight_bytes_skipped",
                  static_cast<int64_t>(M.WeightBytesSkipped));
      writeTensors(J, "inputs", M.Inputs);
      writeTensors(J, "outputs", M.Outputs);
      J.attributeObject("bindings", [&] {
        for (const auto &[Name, Value] : M.Bindings)
          J.attribute(Name, Value);
      });
    });
    if (R.Hardware)
      J.attributeObject("hardware", [&] {
        J.attribute("name", R.Hardware->Name);
        J.attribute("device", R.Hardware->Device);
        J.attribute("source", R.Hardware->Source);
        if (!R.Hardware->ComputeType.empty())
          J.attribute("compute_type", R.Hardware->ComputeType);
      });
    J.attributeObject("totals", [&] {
      writeWork(J, R.Total);
      if (R.LatencySeconds)
        J.attribute("latency_s", *R.LatencySeconds);
      if (R.Kernels) {
        const KernelSummary &K = *R.Kernels;
        J.attribute("kernels", int64_t(K.Kernels));
        J.attribute("fused_nodes", int64_t(K.Fused));
        J.attribute("view_nodes", int64_t(K.Views));
        J.attribute("folded_nodes", int64_t(K.Folded));
        J.attributeObject("time_by_bound_s", [&] {
          J.attribute("compute", K.ComputeBoundSeconds);
          J.attribute("memory", K.MemoryBoundSeconds);
          J.attribute("overhead", K.OverheadBoundSeconds);
        });
      }
    });
    J.attributeArray("nodes", [&] {
      for (const NodeReport &N : R.Nodes)
        J.object([&] {
          J.attribute("name", N.Name);
          J.attribute("op", N.Op);
          J.attribute("class", name(N.Work.Class));
          J.attribute("dtype", ir::name(N.Work.Type));
          J.attribute("output_shape", N.OutputShape);
          writeWork(J, N.Work);
          J.attribute("formula", N.Work.Formula);
          if (N.Time) {
            J.attribute("latency_s", N.Time->Seconds);
            J.attribute("bound", N.Time->Bound);
            J.attribute("compute_s", N.Time->ComputeSeconds);
            J.attribute("memory_s", N.Time->MemorySeconds);
            J.attribute("overhead_s", N.Time->OverheadSeconds);
            J.attribute("exec", N.Time->Exec);
            if (!N.Time->FusedInto.empty())
              J.attribute("fused_into", N.Time->FusedInto);
            if (N.Time->Exec == "kernel") {
              J.attribute("unit", N.Time->Unit);
              J.attribute("compute_type", N.Time->ComputeType);
              J.attribute("peak_flops", N.Time->PeakFlops);
              J.attribute("compute_efficiency", N.Time->ComputeEfficiency);
              J.attribute("bandwidth_bytes_per_s", N.Time->Bandwidth);
              J.attribute("memory_efficiency", N.Time->MemoryEfficiency);
            }
            J.attribute("explain", N.Time->Explain);
          }
        });
    });
    J.attributeArray("warnings", [&] {
      for (const Warning &W : R.Warnings)
        J.object([&] {
          J.attribute("node", W.Node);
          J.attribute("message", W.Message);
        });
    });
  });
  OS << "\n";
}

} // namespace perfc
