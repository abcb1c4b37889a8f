//===- Fusion.h - Which nodes run as which kernels --------------*- C++ -*-===//
//
// Runtimes do not launch one kernel per ONNX node. ONNX Runtime, TensorRT
// and XLA all
//  * fold at load time every node whose inputs are constants (and Shape or
//    Size of a tensor whose shape is static): the shape arithmetic of
//    exported models costs nothing at run time;
//  * run view ops (Reshape, Squeeze, Identity, ...) as metadata changes;
//  * fuse elementwise epilogues into their producer (Conv + BatchNorm +
//    Relu, MatMul + bias + GELU, residual Add) and chains of elementwise
//    ops and reductions into one loop (LayerNorm, GELU, Softmax
//    decompositions), so intermediate tensors never reach memory.
// planKernels turns a graph and its work into that list of kernels; the
// latency pass then prices each kernel once, with the combined work and the
// bytes that cross its boundary.
//
// The rules (README "Fusion"): a node of class elementwise, or a
// BatchNormalization (unless FoldBatchNorm is off, as in training), joins the
// kernel that produces one of its inputs when that kernel is headed by a gemm,
// conv, elementwise, normalization or reduction op; a reduction joins a kernel
// headed by an elementwise, normalization or reduction op (never a GEMM's).
// Views are looked through. A node never joins a kernel older than another
// kernel it reads from (that would make the kernels cyclic), and a kernel holds
// at most MaxFusedNodes nodes. Everything else starts its own kernel. Finally,
// attention (Q.K^T, pointwise scaling and masking, Softmax, dropout, P.V)
// becomes one kernel, as FlashAttention and the runtimes' fused attention
// kernels run it; the head split/merge Transposes, a packed QKV's Split or
// Slices, the rotary embedding of Q and K and grouped-query attention's
// Expand of the K and V heads that only it reads run inside it, and the Q,
// K, V projections of
// one input run as one GEMM (N summed), as TensorRT's fused QKV and ONNX
// Runtime's packed-QKV Attention do. A decoder's key/value cache append
// (Concat(past, new) returned as the next step's cache) writes the new rows
// in place, with the rotary embedding and head split that only it reads, as
// serving runtimes keep the cache in one buffer (TensorRT-LLM, vLLM, ONNX
// Runtime's GroupQueryAttention); without Fuse (an eager framework's
// torch.cat) it copies the whole cache.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_FUSION_H
#define PERFC_PASSES_FUSION_H

#include "costmodels/OpWork.h"
#include "passes/WorkPass.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace perfc {
namespace ir {
class Graph;
class Value;
} // namespace ir

/// How a node is executed.
enum class NodeExec : uint8_t {
  Kernel, ///< Part of a kernel (as its head or fused into it).
  View,   ///< Metadata only: no kernel, no bytes.
  Folded, ///< Computed once at load time from constants.
};

/// A tensor a kernel moves across its boundary and the bytes of it the
/// kernel touches (the whole tensor, or what a Gather or Slice head reads).
struct TensorUse {
  const ir::Value *V = nullptr; ///< A data root: never a view's output.
  double Bytes = 0;
};

struct Kernel {
  unsigned Head = 0; ///< Node index of the first node; names the kernel.
  llvm::SmallVector<unsigned, 4> Members; ///< Node indices, head first.
  /// The distinct tensors the kernel reads from memory and those it writes
  /// there (read by another kernel or returned): what Work's bytes count,
  /// tensor by tensor, for the cache model (passes/CacheReuse.h).
  llvm::SmallVector<TensorUse, 4> Reads;
  llvm::SmallVector<TensorUse, 2> Writes;
  /// Combined work: arithmetic summed; class, type and GEMM dims of the
  /// head; bytes read from outside the kernel and written to outside it.
  OpWork Work;
  /// A fused attention: both products of one softmax(Q.K^T).V.
  bool Attention = false;
  /// ... masked by a load-time constant square over the scores' last two
  /// dims (GPT's and Llama's triangular masks, as exporters and perfc zoo
  /// write them; BERT's padding mask is an input): causal attention, whose
  /// FlashAttention-style kernels skip the blocks above the diagonal.
  bool Causal = false;
  /// A key/value cache append (Concat of a graph input, the cache, and the
  /// new rows, returned as a graph output) run in place: the new rows are
  /// written into the cache's buffer, which the output shares, so neither
  /// the cache's read nor its copy is in Work, Reads or Writes. The cache
  /// (a graph input) is AppendsTo.
  const ir::Value *AppendsTo = nullptr;
};

struct KernelPlan {
  std::vector<NodeExec> Exec;  ///< Indexed by node index.
  std::vector<int> KernelOf;   ///< Kernel index per node, -1 if none.
  std::vector<Kernel> Kernels; ///< In the order their heads run.
  unsigned numFused() const;   ///< Nodes that joined another's kernel.
  /// The value whose bytes a read of V touches: V itself, or what the View
  /// nodes producing V alias.
  const ir::Value *dataRoot(const ir::Value *V) const;
  /// Whether V is known at load time: an initializer or a folded output.
  bool isLoadTimeConstant(const ir::Value *V) const;
};

struct FusionOptions {
  bool Fuse = true;          ///< Fuse epilogues and elementwise chains.
  bool FoldConstants = true; ///< Fold constant subgraphs at load time.
  /// Run softmax(Q.K^T).V as one kernel (FlashAttention, TensorRT, ONNX
  /// Runtime's Attention): the scores never reach memory.
  bool FuseAttention = true;
  /// Run attention as one kernel whatever Fuse says: training code that
  /// calls FlashAttention (Dao et al. 2022; flash_attn_func, PyTorch's
  /// scaled_dot_product_attention) from an eager framework or a compiled
  /// one. Without Fuse the Q, K and V projections stay separate GEMMs.
  bool FlashAttention = false;
  /// Fold BatchNormalization into the kernel that produces its input, as
  /// inference runtimes do (its statistics are constants). Training computes
  /// the statistics of each batch: a reduction over the whole input before
  /// anything can be normalised, so BatchNormalization heads a kernel of its
  /// own (cuDNN's batch-norm kernels, into which a following ReLU or
  /// residual Add fuses) and the convolution writes its output.
  bool FoldBatchNorm = true;
  /// The activations a convolution's kernel applies in its registers (ONNX
  /// op types; hw::Device::ConvActivations, CPU runtimes). Non-empty: a
  /// convolution's kernel takes BatchNormalization, Add (bias, residual),
  /// Mul, Sub or Div by a load-time constant (folded into its weights) and
  /// then one of these, the activation only where it is the sole reader of
  /// what it activates (HardSwish also written out, x * HardSigmoid(x));
  /// nothing joins after the activation, and any other elementwise op
  /// starts a kernel of its own. Empty: any elementwise chain joins.
  std::vector<std::string> ConvActivations;
  /// Tensors a training step keeps for backward: a fused kernel writes
  /// them even where no other kernel reads them.
  const llvm::DenseSet<const ir::Value *> *Kept = nullptr;
};

/// Kernel K's work as the runtime runs it: with FlashAttention (a training
/// step's --flash-attention, or inference runtimes whose fused attention
/// kernels are FlashAttention-style: FlashAttention itself, vLLM's and
/// TensorRT-LLM's current ones), causal attention skips the blocks above
/// the diagonal, half the products' arithmetic (FlashAttention's benchmarks
/// count FLOPs / 2 when causal); other fused attention kernels (ONNX
/// Runtime's MLAS attention on CPUs, TensorRT's BERT plugins) and unfused
/// attention multiply the whole score matrix and then mask it. K's work
/// otherwise.
OpWork kernelWork(const Kernel &K, bool FlashAttention);

constexpr unsigned MaxFusedNodes = 64;

KernelPlan planKernels(const ir::Graph &G, const GraphWork &Work,
                       const FusionOptions &Options = FusionOptions());

} // namespace perfc

#endif // PERFC_PASSES_FUSION_H
