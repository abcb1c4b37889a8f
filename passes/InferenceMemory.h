//===- InferenceMemory.h - Peak memory of one inference run -----*- C++ -*-===//
//
// What a run of the model holds at once: the weights (initializers and
// load-time constants the kernels read), resident for the model's life, and
// the activations alive at the busiest point of the kernel order. A buffer
// lives from the kernel that writes it (a graph input: from the start) to
// the last kernel that reads it (a graph output: to the end), as ONNX
// Runtime's and TensorRT's memory planners lay them out; views share their
// source's buffer and fused intermediates never reach memory; a key/value
// cache appended in place and the next step's cache share the graph
// input's buffer (passes/Fusion.h). A kernel's
// inputs and outputs are alive together (no in-place reuse), so the figure
// is what the tensors need, not what an allocator's arena adds on top
// (alignment, fragmentation), nor library workspaces (cuDNN, cuBLAS) or the
// runtime's own memory.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_INFERENCEMEMORY_H
#define PERFC_PASSES_INFERENCEMEMORY_H

#include "ir/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"

#include <string>
#include <vector>

namespace perfc {
namespace ir {
class Graph;
} // namespace ir
struct KernelPlan;

struct InferenceMemory {
  double PeakBytes = 0; ///< WeightsBytes + ActivationsBytes.
  double WeightsBytes = 0;
  unsigned WeightTensors = 0;
  /// Activations alive at the peak, the graph inputs still read included.
  double ActivationsBytes = 0;
  unsigned LiveTensors = 0;
  double InputsBytes = 0; ///< Of ActivationsBytes: graph inputs.
  /// Every graph input held over the run (alive at the peak or not): what
  /// one more batch in flight adds (pipeline-parallel inference).
  double HeldInputsBytes = 0;
  /// The kernel (index in the plan) at whose run the activations peak.
  unsigned PeakKernel = 0;
  /// Weights and activations alive while each kernel of the plan runs, in
  /// its order (the trace's memory counter).
  std::vector<double> LiveBytes;
  /// The largest tensor alive there, and its bytes.
  std::string LargestLive;
  double LargestLiveBytes = 0;
  /// Key/value caches appended in place, sharing the graph input's buffer.
  unsigned SharedCaches = 0;
  /// False when some tensor a kernel touches has a shape not fully known:
  /// its bytes are not counted, so the peak is a lower bound.
  bool Complete = true;
};

/// What one tensor-parallel rank holds of what a kernel touches
/// (passes/TpShard.h): the share of the weights it reads, and of the
/// activations it writes and the floating-point graph inputs it reads (a
/// key/value cache split by heads). A tensor several kernels touch is held
/// at the largest share any of them asks.
struct KernelShare {
  double Weights = 1;
  double Activations = 1;
};

/// The peak memory of one run of Plan (planned over G), floating-point
/// tensors stored in Storage (their own types if none); with Shares (one
/// per kernel of Plan), one tensor-parallel rank's.
InferenceMemory inferenceMemory(const ir::Graph &G, const KernelPlan &Plan,
                                llvm::Optional<ir::DType> Storage = llvm::None,
                                llvm::ArrayRef<KernelShare> Shares = {});

/// "peak 1.2 GB at kernel '/layer1/Conv' (12 of 56) = weights ... +
/// activations ...": how M adds up, with the rule (the JSON's
/// memory.explain and --explain). HeadName names the peak kernel's head.
std::string explain(const InferenceMemory &M, const std::string &HeadName,
                    size_t Kernels, llvm::Optional<ir::DType> Storage);

} // namespace perfc

#endif // PERFC_PASSES_INFERENCEMEMORY_H
