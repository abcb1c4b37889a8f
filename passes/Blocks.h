//===- Blocks.h - Repeated blocks, tensor-parallel roles, attention -*- C++
//-*-//
//
// Training strategies need more structure than a list of ops:
//  * pipeline parallelism cuts the model between its repeated blocks
//    (transformer layers, ResNet stages' blocks);
//  * Megatron-style tensor parallelism shards MatMul pairs: a
//    column-parallel MatMul (weights split by output columns) whose output
//    flows, through non-GEMM ops only, into a row-parallel MatMul (split by
//    input rows), which ends with an all-reduce (Shoeybi et al. 2019); a
//    projection that narrows its input into projections that widen theirs
//    is a low-rank down projection (latent attention's q_a and kv_a), which
//    runs whole on every rank, and an operand that a product's heads all
//    share (the cached latent) is read whole by every rank;
//  * selective recomputation recomputes the attention core: the ops from
//    the Q.K^T product to the P.V product (Korthikanti et al. 2022).
// analyzeBlocks finds them in any graph, by structure, with one naming
// convention: a block is the node-name prefix up to the first path
// component that ends in ".<number>" (`/h.3/attn/...`, `/layers.3/...`,
// `/layer1/layer1.0/conv1/...`), as PyTorch's exporter and perfc's model
// generator name nodes, or "_<number>" (`/encoder/layers/encoder_layer_3/`,
// torchvision's ViT) where every block so numbered holds at least 8 nodes
// (Inception's `branch3x3dbl_1` names one convolution, not a layer). Where
// no name numbers a block, blocks come from structure: cuts where a single
// activation crosses between consecutive nodes, a stretch without a
// convolution or GEMM on weights joining the block before it (DenseNet's
// dense blocks and transitions, Inception's modules; a transformer's
// attention and MLP halves, its embeddings leading the first block and its
// head ending the last, where the vocabulary split looks for them). Nodes
// before the first block form the prologue
// (embeddings), nodes after a block without a block name of their own the
// epilogue of the last (final norm, head).
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_BLOCKS_H
#define PERFC_PASSES_BLOCKS_H

#include "passes/WorkPass.h"

#include <string>
#include <vector>

namespace perfc {
namespace ir {
class Graph;
class Value;
} // namespace ir

/// A node's part in Megatron tensor parallelism.
enum class TpRole : uint8_t {
  Replicated, ///< Every rank computes it whole (norms, residual adds).
  Column,     ///< GEMM split by output columns.
  Row,        ///< GEMM split by input rows; its output is all-reduced.
  Sharded,    ///< Between a column and a row GEMM: each rank has 1/tp.
  Vocab,      ///< Embedding lookups and the output head, split by vocabulary.
};
const char *name(TpRole R);

/// The parts of a transformer block that Megatron-Core's selective
/// recomputation names (TransformerConfig::recompute_modules), found by
/// structure (findBlockModules). A node may be in several: an expert's
/// activation is in its mixture too.
enum class BlockModule : uint8_t {
  CoreAttention, ///< core_attn: the attention core (BlockInfo::AttentionCore).
  Norm,          ///< layernorm: a norm feeding a block's projections.
  LatentUp,      ///< mla_up_proj: latent attention's up projections, RoPE.
  Mlp,           ///< mlp: a dense block's MLP.
  ExpertActivation, ///< moe_act: the experts' activation function.
  Mixture,          ///< moe: the whole mixture of experts.
  SharedExperts,    ///< shared_experts: a mixture's dense MLP.
};
inline constexpr unsigned NumBlockModules = 7;
/// A set of modules, one bit per BlockModule.
using BlockModuleSet = uint8_t;
inline constexpr BlockModuleSet bit(BlockModule M) {
  return BlockModuleSet(1u << unsigned(M));
}
/// Megatron-Core's name of M ("core_attn", "moe_act", ...).
const char *name(BlockModule M);

struct BlockInfo {
  /// Unit of each node: 0 is the prologue, 1..NumBlocks the blocks in
  /// order, NumBlocks + 1 the epilogue.
  std::vector<unsigned> UnitOf;
  unsigned NumBlocks = 0;
  std::vector<std::string> BlockNames; ///< NumBlocks names.
  std::vector<TpRole> Tp;              ///< Per node.
  std::vector<bool> AttentionCore;     ///< Per node.
  /// Per unit: the GEMM outputs all-reduced in forward (row-parallel and
  /// vocabulary-parallel embedding outputs) and the inputs of column-parallel
  /// groups, whose gradients are all-reduced in backward; each counted once.
  std::vector<std::vector<const ir::Value *>> ForwardReduced;
  std::vector<std::vector<const ir::Value *>> BackwardReduced;
  /// Whether any column/row pair was found.
  bool HasTensorParallelPattern = false;
  /// Mixtures of experts: per node, whether it reads a weight stack
  /// [E, in, out] (E > 1) with an activation [E, rows, in] as its first
  /// dimension (a batched MatMul of E experts, as perfc zoo --experts
  /// writes them) or a bias stack [E, 1, out] of such a node's unit. Expert
  /// parallelism splits these nodes' experts over its ranks.
  std::vector<bool> Expert;
  /// The distinct expert counts E of the model's mixtures.
  std::vector<int64_t> ExpertCounts;
  /// Per unit: what expert parallelism exchanges all-to-all, each once: the
  /// inputs of the experts' column GEMMs (the tokens dispatched to them)
  /// and the outputs of their row GEMMs (the results combined).
  std::vector<std::vector<const ir::Value *>> ExpertExchanged;
  /// Whether the blocks come from structure: no node name numbers a layer.
  bool FromStructure = false;
  /// Per node, the modules of its block it is in, and every module some
  /// node of the graph is in: filled by findBlockModules, which training's
  /// analysis calls (empty after analyzeBlocks alone: inference reads
  /// none of them).
  std::vector<BlockModuleSet> Modules;
  BlockModuleSet ModulesFound = 0;

  unsigned numUnits() const { return NumBlocks + 2; }
  /// Whether unit Unit is a block (not the prologue or epilogue).
  bool isBlock(unsigned Unit) const { return Unit >= 1 && Unit <= NumBlocks; }
  /// Whether node Node is in a block.
  bool inBlock(unsigned Node) const { return isBlock(UnitOf[Node]); }
};

/// Whether V is a trainable parameter: a floating-point initializer of two
/// or more elements (as the work pass counts parameters).
bool isParameter(const ir::Value *V);

/// Whether N takes some experts of a stack [E, in, out]: a Slice along
/// axis 0 alone (perfc zoo's stand-in for the experts a step's few tokens
/// reach). The slice is part of the parameter, as a view is all of it.
bool slicesExperts(const ir::Node &N);

/// The parameter stack N takes some experts of (slicesExperts), or null.
const ir::Value *stackSliced(const ir::Node &N);

/// Whether N is a MatMul or Gemm.
bool isGemmOp(const ir::Node &N);

/// Whether N is a GEMM reading a parameter (a projection, a convolution's
/// GEMM form excepted).
bool isParamGemm(const ir::Node &N);

/// The parameter V reads, looking through views and transposes (a tied
/// output head's transposed embedding) and slices of expert stacks; null
/// if V is an activation.
const ir::Value *parameterBehind(const ir::Value *V);

/// For a product of two activations, the operand that the other's heads
/// share: size 1 on a batch axis where the other has more (latent
/// attention's cached latent, which every head reads); null if none. Tensor
/// parallelism splits the heads, not this operand: every rank reads it
/// whole.
const ir::Value *sharedOperand(const ir::Node &N);

BlockInfo analyzeBlocks(const ir::Graph &G, const GraphWork &Work);

/// Fills Info.Modules from the blocks, tensor-parallel roles, attention
/// cores and experts analyzeBlocks found (TrainingAnalysis calls it), by
/// structure, within each block:
///  * core_attn: the attention core;
///  * mla_up_proj: what a low-rank down projection's output (a replicated
///    projection whose output reaches a column GEMM) computes on the way to
///    an attention core: the latent norms, the up projections, the heads'
///    RoPE (Megatron-Core's qkv_up_proj_and_rope_apply);
///  * layernorm: a norm (a normalization op, or a mean of squares or
///    values) producing a projection's input, with the nodes whose results
///    only it reads (an RMSNorm written out as Pow, ReduceMean, ...), not
///    the residual stream it reads; those of mla_up_proj excluded;
///  * mlp, shared_experts, moe_act: a column/row group (column GEMMs, the
///    sharded nodes after them, the row GEMMs) without an attention core:
///    with experts, its nodes other than the GEMMs are the experts'
///    activation; without, in a block with experts it is a shared expert,
///    in one without the dense MLP;
///  * moe: what is computed from the mixture's input alone (router,
///    dispatch, experts, combine, shared experts), the input being the
///    earliest projection input from which every expert node is computed.
void findBlockModules(const ir::Graph &G, const GraphWork &Work,
                      BlockInfo &Info);

} // namespace perfc

#endif // PERFC_PASSES_BLOCKS_H
