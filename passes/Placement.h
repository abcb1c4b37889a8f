//===- Placement.h - Inference kernels on the processors of a SoC -*- C++ -*-//
//
// Heterogeneous placement (issue 5, part 2): a node of a cluster that holds
// several kinds of processor (a phone SoC's CPU clusters, GPU and NPU; a
// Jetson's CPU, GPU and DLAs) joined by one intra-node link (the SoC's
// shared memory). Each kernel of the kernel plan (passes/Fusion.h) goes to
// one processor; the latency of a placement is
//
//   sum over kernels of opTime(kernel, its processor)
//   + sum over tensors t and processors d that hold a consumer of t but
//     not its producer of p2pTime(bytes(t), intra-node link)
//
// one kernel at a time, as ONNX Runtime's sequential executor with several
// execution providers, TensorRT with DLA layers and QNN's graph
// partitioning run a graph: processors do not overlap (a parallel schedule
// is not modelled). A tensor sent to a processor is sent once however many
// kernels there read it. Graph inputs and weights are resident in the
// shared memory for every processor (loaded once, before the run), and the
// outputs are read where they were written: neither is a transfer.
//
// Several identical devices of one kind (Orin's two DLAs) are one
// placement target: with one kernel at a time, a second copy gains nothing.
//
// Compute type per processor: each processor runs a kernel in the
// requested type (--compute-type, else the op's own) if its `supports`
// list allows it; else in the fastest floating-point type its list allows
// (an NPU that runs fp16 and int8 takes an fp32 model in fp16); else the
// kernel is unsupported there. An int8-only processor therefore runs only
// models asked for in int8 (quantization is the deployer's decision, not
// the placer's). Integer ops (indices, shapes) keep their type.
//
// Solvers: Z3 as weighted MaxSAT over 0-1 variables (x[k][d], exactly one
// per kernel; y[t][d] implied by a consumer of t on d without its producer;
// soft costs in integer nanoseconds), under a time limit, after removing
// the (kernel, device) pairs no optimal placement uses (a pair slower than
// the kernel's fastest device by more than all of the kernel's transfers);
// an exact dynamic program when the kernels form a chain (every tensor goes
// from kernel i to kernel i + 1); a local-search heuristic (from each single
// device and the per-kernel fastest, move one or two adjacent kernels while
// that helps) as the fallback and the bound Z3's answer must beat.
// `Optimal` is true only when proven.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_PLACEMENT_H
#define PERFC_PASSES_PLACEMENT_H

#include "costmodels/Roofline.h"
#include "passes/Fusion.h"
#include "passes/Report.h"

#include "llvm/ADT/Optional.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace perfc {
namespace ir {
class Graph;
}
namespace hw {
struct Cluster;
}

/// The abstract problem: kernel times per device and the tensors between
/// kernels, each with its transfer time.
struct PlacementProblem {
  unsigned NumDevices = 0;
  /// [kernel][device] seconds; +infinity where the device cannot run it.
  std::vector<std::vector<double>> Seconds;
  struct Tensor {
    unsigned Producer = 0;           ///< Kernel index.
    std::vector<unsigned> Consumers; ///< Kernel indices, ascending.
    double TransferSeconds = 0;      ///< To any other device.
    double Bytes = 0;
  };
  std::vector<Tensor> Tensors;

  unsigned numKernels() const { return Seconds.size(); }
  /// Every tensor goes from kernel i to kernel i + 1.
  bool isChain() const;
  /// Latency of Assign (device per kernel); Transfer gets the transfer part.
  double evaluate(const std::vector<unsigned> &Assign,
                  double *Transfer = nullptr) const;
};

enum class PlacementSolver : uint8_t {
  Auto,       ///< Chain DP on chains, else Z3 (heuristic if Z3 times out).
  Z3,         ///< Z3 even on chains.
  Heuristic,  ///< Local search only (never proven).
  BruteForce, ///< Every assignment (tests; refuses large problems).
};

struct PlacementSolution {
  std::vector<unsigned> Assign; ///< Device per kernel.
  double Seconds = 0;           ///< Kernels plus transfers.
  double TransferSeconds = 0;
  bool Optimal = false;
  double SolveSeconds = 0;
  /// "z3", "z3 (time limit)", "chain-dp", "heuristic", "brute-force";
  /// "heuristic (z3 time limit)" when Z3 ran out of time and the heuristic's
  /// placement was better.
  std::string Method;
};

/// Infeasible when some kernel runs on no device: the error names it.
llvm::Expected<PlacementSolution>
solvePlacement(const PlacementProblem &P,
               PlacementSolver S = PlacementSolver::Auto,
               double TimeLimitSeconds = 10);

struct PlacementOptions {
  cost::TimeOptions Time; ///< ComputeType: the requested type.
  llvm::Optional<ir::DType> StorageType;
  FusionOptions Fusion;
  PlacementSolver Solver = PlacementSolver::Auto;
  double TimeLimitSeconds = 10;
};

/// One placement target.
struct PlacementDevice {
  std::string Name;
  const hw::Device *Dev = nullptr;
  unsigned Count = 1; ///< Identical devices of the kind in the node.
};

struct PlacementResult {
  std::vector<PlacementDevice> Devices;
  KernelPlan Plan;
  /// Device index per kernel, and per node (-1 for views and folded nodes).
  std::vector<unsigned> KernelDevice;
  std::vector<int> NodeDevice;
  /// The chosen times: [kernel] on its device, with the type it ran in.
  std::vector<cost::OpTime> KernelTimes;
  double LatencySeconds = 0; ///< Kernels plus transfers.
  double KernelSeconds = 0;
  double TransferSeconds = 0;
  double TransferBytes = 0;
  unsigned Transfers = 0; ///< (tensor, device) hand-offs.
  /// Per device: kernels placed there and their seconds.
  std::vector<unsigned> KernelsPerDevice;
  std::vector<double> SecondsPerDevice;
  /// Per device: the whole model there (+infinity if some kernel cannot
  /// run there).
  std::vector<double> SingleDeviceSeconds;
  bool Optimal = false;
  double SolveSeconds = 0;
  std::string Method;
  unsigned Tensors = 0; ///< Tensors between kernels (edges of the problem).
  /// Remarks for the report: processors priced in another type than the
  /// one asked for while others run it (the comparison is then not like
  /// for like).
  std::vector<Warning> Warnings;
};

/// The placement of G's kernels on the processors of C's first node group.
/// Errors: a cluster whose node holds one device kind, no intra-node link,
/// a node no processor runs (named).
llvm::Expected<PlacementResult>
placeGraph(const ir::Graph &G, const hw::Cluster &C, const PlacementOptions &O);

/// Makes R (from predict() with the same fusion options) describe the
/// placement: each kernel's time on its processor, the nodes' devices,
/// the latency with transfers, and R.Placement.
void applyPlacement(const PlacementResult &P, Report &R, bool Explain = true);

} // namespace perfc

#endif // PERFC_PASSES_PLACEMENT_H
