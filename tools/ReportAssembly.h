//===- ReportAssembly.h - Pieces of a report the CLI and API share -*- C++
//-*-===//
//
// `perfc MODEL` (tools/PredictCommand.cpp) and the library (api/) assemble
// the same Report; what they add to the passes' results beyond copying
// fields lives here, so that their messages and warnings stay one text.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_REPORTASSEMBLY_H
#define PERFC_TOOLS_REPORTASSEMBLY_H

#include "hwdb/Cluster.h"
#include "hwdb/Device.h"
#include "ir/DType.h"
#include "passes/Predict.h"
#include "passes/Report.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace perfc {
namespace ir {
class Graph;
} // namespace ir

/// A device that cannot run an op gives no latency: an error naming the
/// first such node (Path: the model's; Choice: what to change, e.g.
/// "--compute-type"), rather than an infinite time.
llvm::Error checkRunnable(const Report &R, const hw::Device &D,
                          llvm::StringRef Path, llvm::StringRef Choice);

/// With a training step, the per-node report is one micro-batch's forward
/// pass as the step prices it (PredictOptions::Training: its kernels, its
/// work, each kernel from its own traffic; FlashAttention and Unfused as
/// Train says) in the training precision: arithmetic in Train.DType (unless
/// ComputeGiven: --compute-type), and under mixed precision (16- or 8-bit
/// types) tensors stored in it (unless StorageGiven: --storage-type).
/// Returns the compute type it set, if any.
llvm::Optional<ir::DType> applyTrainingForward(PredictOptions &PO,
                                               const TrainOptions &Train,
                                               bool ComputeGiven,
                                               bool StorageGiven);

/// The report's "hardware": Name as given, the device the model runs on,
/// the cluster, and what the run was told beside it (the compute type
/// shown, PO's storage type and convolution layout, a launch overhead that
/// replaced the description's).
HardwareInfo describeHardware(llvm::StringRef Name, const hw::Device &D,
                              llvm::StringRef Cluster,
                              llvm::StringRef ComputeTypeShown,
                              llvm::Optional<double> LaunchOverheadSeconds,
                              const PredictOptions &PO);

/// --place: G's kernels on the processors of C's node, priced as PO prices
/// them (compute and storage types, layout, fusion); R (from predict() with
/// PO) then describes the placement. TimeLimitSeconds 0: the solver's
/// default. The error is placeGraph's, without the model's path.
llvm::Error placeKernels(Report &R, const ir::Graph &G, const hw::Cluster &C,
                         const PredictOptions &PO, double TimeLimitSeconds);

/// Appends the training step's warnings: a per-node forward repriced by
/// --compute-type or --storage-type away from the step's --dtype,
/// input-bound (the devices wait for the host input pipeline) and "does
/// not fit" (its devices' memory).
void addStepWarnings(Report &R);

} // namespace perfc

#endif // PERFC_TOOLS_REPORTASSEMBLY_H
