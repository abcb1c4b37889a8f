//===- CacheReuse.h - Which memory level serves each kernel -----*- C++ -*-===//
//
// A kernel's inputs are in a cache when the kernel that wrote them (or last
// read them) ran recently enough that what was touched since has not pushed
// them out. cacheResidency replays one run of a kernel plan in the steady
// state of a server running the model run after run (the weights in the
// stack as the previous run left them) through an LRU stack of whole
// tensors (Mattson et al., "Evaluation techniques for storage hierarchies",
// 1970: one stack serves every cache size). A tensor read at stack distance
// d (the bytes of the distinct tensors touched since its last use, itself
// included) comes from the innermost cache with a bandwidth whose capacity
// holds d, else from main memory; a tensor not in the stack (a graph input,
// fresh each run) comes from main memory. Writes go into the innermost
// cache; a tensor that a later read finds only in an outer level was
// written back there on the way, so its writer pays that level too
// (write-back caches), and graph outputs go to main memory. A tensor leaves
// the stack when it dies (after its last reader): runtimes hand a dead
// tensor's buffer to the next one (TensorRT's and ONNX Runtime's memory
// planners, PyTorch's caching allocator), so its lines are overwritten in
// the cache rather than written back. Weights stay from run to run.
//
// Why: the per-op rule (costmodels/Roofline.h) serves an op from a cache
// only when the op's own traffic fits there. A ResNet-50 residual block's
// last convolution at batch 32 on an L4 (INT8) moves 58 MB: it reads a
// 6 MB input its neighbour just wrote and the 26 MB block input written
// three kernels before, both still in the 48 MB L2; the rule priced all
// of it at GDDR6 speed. And a batch-1 BERT GEMM's 5 MB of weights fit an
// A100's L2 on their own, but the model's 220 MB of weights do not: each
// run streams them from HBM.
//
// Training steps keep the per-op rule: their saved activations and
// gradients dwarf the caches.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_CACHEREUSE_H
#define PERFC_PASSES_CACHEREUSE_H

#include "ir/DType.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace perfc {
namespace hw {
struct Device;
} // namespace hw
namespace ir {
class Graph;
} // namespace ir
struct KernelPlan;

/// The share of one kernel's bytes (reads and writes, weighted by the
/// kernel's Work) that each memory level of the device serves, indexed like
/// hw::Device::Memory; empty where the kernel lists no tensors (its shapes
/// are unknown), which leaves it to the per-op rule.
using LevelShares = llvm::SmallVector<double, 4>;

/// One LevelShares per kernel of Plan (planned over G), in its order, run on D
/// with floating-point tensors stored in Storage (their own types if none).
/// Empty when D has no cache level with a bandwidth: main memory serves
/// everything, as the per-op rule says.
std::vector<LevelShares>
cacheResidency(const ir::Graph &G, const KernelPlan &Plan, const hw::Device &D,
               llvm::Optional<ir::DType> Storage = llvm::None);

} // namespace perfc

#endif // PERFC_PASSES_CACHEREUSE_H
