//===- Trainer.h - The training step's worker, inside passes/ ---*- C++ -*-===//
//
// predictTraining's work for one strategy, one class whose members are
// defined by topic: TrainStep.cpp (the driver, the groups of ranks),
// TrainChecks.cpp (the strategy's rules), TrainKernels.cpp (one rank's share
// of a kernel and its time), TrainUnits.cpp (a unit's costs per micro-batch,
// with the exchanges inside it), TrainPipeline.cpp (stages, schedule and
// timeline) and TrainDataParallel.cpp (the gradients' and parameters'
// exchanges between replicas). Private to passes/: nothing outside includes
// it.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_TRAINER_H
#define PERFC_PASSES_TRAINER_H

#include "passes/TrainStep.h"

#include "costmodels/Collectives.h"
#include "costmodels/Roofline.h"
#include "ir/Graph.h"
#include "passes/Backward.h"
#include "passes/Blocks.h"
#include "passes/Fp8Recipe.h"
#include "passes/Fusion.h"
#include "passes/Schedule.h"
#include "passes/TrainExplain.h"
#include "passes/WorkPass.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <string>
#include <vector>

namespace perfc {
namespace trainstep {

inline llvm::Error fail(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// A count that may be fractional: "3", or "2.50".
inline std::string formatCount(double N) {
  return N == std::floor(N) ? std::to_string(int64_t(N))
                            : llvm::formatv("{0:F2}", N).str();
}

class Trainer {
public:
  Trainer(const TrainingAnalysis &A, const hw::Cluster &C,
          const TrainOptions &O)
      : A(A), G(A.graph()), Work(A.Work), Plan(A.Plan), Back(A.Back),
        Blocks(A.Blocks), C(C), O(O), Dev(C.primaryDevice()) {}

  llvm::Expected<TrainReport> run();

private:
  // TrainChecks.cpp: the strategy's rules, before any cost.

  llvm::Error check();

  /// Expert parallelism splits each mixture's experts over Ep of the
  /// DataWithContext ranks that see different tokens.
  llvm::Error checkExpertParallel(uint64_t DataWithContext) const;

  /// Context parallelism runs ring attention in FlashAttention-style
  /// kernels (Transformer Engine's), over a sequence that cuts into 2 Cp
  /// equal chunks (Megatron-Core's load-balanced split).
  llvm::Error checkContextParallel() const;

  /// Under the all-to-all exchange every attention core's tokens and each
  /// rank's heads (its tensor-parallel share) must split into Cp equal
  /// parts, as DeepSpeed-Ulysses and Transformer Engine's "a2a" require.
  llvm::Error checkHeadExchange() const;

  /// The key/value heads of the attention whose scores softmax S
  /// normalises, [batch, heads, queries, keys] with Heads heads per rank:
  /// Heads x (K's elements x queries) / (Q's x keys), K and Q the operands
  /// of the product making the scores as the projections made them (before
  /// a grouped-query expansion); 0 where the product is not found.
  double keyValueHeads(const ir::Node &S, double Heads) const;

  /// The scores an attention kernel's softmax normalises; null if none.
  const ir::Value *softmaxInput(const Kernel &K) const;

  /// The keys an attention kernel attends to: its scores' last dimension;
  /// 0 where unknown.
  int64_t attentionKeys(const Kernel &K) const;

  // TrainStep.cpp: the groups of ranks each exchange runs over.

  llvm::Error makeGroups();

  // TrainKernels.cpp: one rank's share of a kernel, and its time.

  /// Storage of float tensors moves to the training type, from whatever
  /// type the graph stores them in (an fp16 export trained in fp16 moves
  /// its bytes as they are). Work of other types is scaled as fp32, as
  /// the float tensors around it.
  double byteScale(ir::DType Stored = ir::DType::F32) const;

  /// Bytes of one element of the activations and gradients training
  /// stores and exchanges.
  double elementBytes() const;

  /// The share of a node's work one tensor-parallel rank does.
  double tpScale(unsigned Node) const;

  /// The share of a node's activations one rank keeps: its tensor-
  /// parallel share of the context-parallel rank's tokens.
  double activationScale(unsigned Node) const { return tpScale(Node) / O.Cp; }

  /// W on one rank: its tensor-parallel share (TpShard.h), then a context-
  /// parallel rank's tokens: the arithmetic, the activations' bytes and the
  /// GEMM's rows (tokens, or an attention's queries) divided by Cp, a
  /// weight read whole.
  OpWork shard(const OpWork &W, unsigned Node) const;

  /// An expert node at O.ExpertCapacity times its balanced tokens: its
  /// products' rows, arithmetic and activations scaled, its weights read
  /// once as before.
  void scaleExpertTokens(OpWork &S) const;

  /// The weight bytes W reads: a GEMM's K x N per product, or all it
  /// reads when that is less.
  double weightBytes(const OpWork &W) const;

  /// An expert node on one of Ep ranks: E / Ep experts' weights, each
  /// expert's product on the tokens of all Ep ranks (balanced routing:
  /// the same rows in all, Ep times as many per expert).
  void shardExperts(OpWork &S) const;

  /// S on one of Cp context ranks (see shard).
  void shardContext(OpWork &S, unsigned Node) const;

  /// How the step times work of type Type: in the training type, under the
  /// FP8 recipe in BF16 (its FP8 GEMMs are timed by fp8GemmTime).
  cost::TimeOptions timeOptions(ir::DType Type, bool Notes) const;

  cost::OpTime timing(const OpWork &W, bool Notes = false) const {
    return cost::opTime(W, Dev, timeOptions(W.Type, Notes));
  }

  double time(const OpWork &W) const { return timing(W).Seconds; }

  /// Whether kernel K is a Linear layer's GEMM that the FP8 recipe runs in
  /// FP8 (Fp8Recipe.h): in a transformer block, as Transformer Engine's
  /// modules are (Megatron's embedding and output layer stay BF16).
  bool fp8Gemm(const Kernel &K) const;

  /// FP8 GEMM W (sharded, stored in BF16) with its cast (Fp8Recipe.h).
  Fp8GemmTime fp8GemmTiming(const OpWork &W, bool Backward, bool Notes) const;

  /// The forward time of kernel K (sharded), FP8 casts included; under
  /// context parallelism an attention's merges of its ring steps too.
  double forwardSeconds(const Kernel &K) const;

  /// Under context parallelism, what ring attention adds to FlashAttention
  /// kernel K (its work on one rank W) in each direction: each of the
  /// Cp - 1 steps after the first merges its partial result into the
  /// running one (forward: the output rescaled by the two log-sum-exps,
  /// Transformer Engine's out correction; backward: the query gradient
  /// accumulated), an elementwise kernel reading both and writing one.
  double ringMergeSeconds(const Kernel &K, const OpWork &W) const;

  double allReduce(double Bytes, const cost::CommGroup &G) const {
    return cost::collectiveSeconds(cost::Collective::AllReduce, Bytes, G);
  }

  /// One tensor-parallel exchange of a full activation: an all-reduce, or
  /// with sequence parallelism a reduce-scatter and an all-gather.
  double tpExchange(const ir::Value *V) const;

  double valueBytes(const ir::Value *V, double Scale) const;

  /// FlashAttention's backward kernel from its forward's work: it
  /// recomputes the scores and runs five products of the forward's size
  /// where the forward ran two (FlashAttention-2's benchmarks count 2.5x
  /// the forward's FLOPs), reads Q, K, V, the output and its gradient and
  /// writes the gradients of Q, K and V.
  static OpWork flashBackward(const OpWork &Fwd);

  bool inFlashKernel(unsigned Node) const;

  /// What FlashAttention keeps besides its inputs and output: the
  /// softmax's log-sum-exp, one fp32 per row of scores.
  double logSumExpBytes(const Kernel &K) const;

  /// The product a GEMM head runs with the GEMMs fused horizontally into
  /// its kernel (projections of one input, planKernels' packed QKV): one
  /// GEMM N wide as their Ns together, the input read once; the members
  /// joined go to Joined. Without such members, the head's own work.
  OpWork horizontalGemm(const Kernel &K,
                        llvm::SmallVectorImpl<unsigned> &Joined) const;

  /// What fusing kernel K's members saved of their bytes: the kernel's
  /// over the members' own (1 for a kernel of one node). Work redone for
  /// some of its members moves their bytes at this share.
  double fusedByteRatio(const Kernel &K) const;

  /// One micro-batch's backward through kernel K on one rank: a product
  /// head's gradients as products of its forward's size (with the GEMMs
  /// fused horizontally into it, at their joint width, as the forward ran
  /// them), the fused members' other gradients as one elementwise kernel
  /// (bytes scaled as the fusion scaled the forward's), or
  /// FlashAttention's backward kernel.
  double kernelBackward(const Kernel &K, std::string *Explain = nullptr) const;

  /// The elements of an attention product's second operand (K^T, V) as the
  /// projections made them: through the views and copies before the
  /// product (transposes, a grouped-query attention's expansion of its
  /// key/value heads), the smallest.
  static double keyValueElements(const ir::Value *V);

  // TrainUnits.cpp: a unit's costs per micro-batch, with the exchanges
  // inside it (tensor, context and expert parallelism's).

  /// The ring of FlashAttention kernel K under context parallelism
  /// (forward Fwd, backward Bwd on one rank, already its share of the
  /// queries), per micro-batch; the link is the one the ring's slowest hop
  /// crosses. Its keys and values are the
  /// second operands of its two products. Transformer Engine sends the
  /// keys and values on at each of the Cp - 1 steps forward, and in
  /// backward their gradients too (twice the bytes); each transfer runs
  /// beside one step's attention, 1 / Cp of the rank's.
  ContextRingTerms ringOf(const Kernel &K, double Fwd, double Bwd) const;

  /// Adds ring R's exchanges to unit U: of each of the Cp - 1 steps, what
  /// outlasts that step's attention is exposed (the first step computes on
  /// the rank's own keys while the second's arrive); full recomputation
  /// of the unit (Rerun) runs the forward's again.
  void addContextExchange(const ContextRingTerms &R, bool Rerun,
                          UnitCost &U) const;

  /// Under the all-to-all exchange, per unit and micro-batch: each
  /// attention core's Q and K (its first product's operands), V and its
  /// output (the second's operand and result) on one rank, S / Cp tokens of
  /// the rank's heads, each exchanged all-to-all over the context ranks in
  /// a call of its own (DeepSpeed-Ulysses' _SeqAllToAll per tensor),
  /// forward; their gradients the other way in backward. K and V are
  /// measured before a grouped-query expansion, as they are sent.
  std::vector<ContextAllToAllTerms> headExchanges() const;

  /// Adds the all-to-alls X of a unit to U: on the critical path, the
  /// forward's again where recomputation reruns the attention core
  /// (full of the unit, Rerun, or selective without FlashAttention).
  void addHeadExchange(const ContextAllToAllTerms &X, bool Rerun,
                       UnitCost &U) const;

  /// The bytes one rank sends in expert parallelism's all-to-all of
  /// tensor V (BlockInfo::ExpertExchanged): its tokens' rows, of which a
  /// tensor-parallel rank sends its 1 / Tp (Megatron-Core's dispatcher
  /// gathers them over the tensor ranks after it; the row GEMMs'
  /// reductions, priced as tensor parallelism's, do that work).
  double expertExchangeBytes(const ir::Value *V) const;

  /// Whether backward reruns the all-to-alls of unit U's mixtures: full
  /// recomputation, in a block, or selective recomputation of moe.
  bool rerunsExpertExchange(unsigned U) const;

  /// Whether selective recomputation runs node Node again.
  bool recomputed(unsigned Node) const {
    return selectivelyRecomputed(O, Blocks, Node);
  }

  /// What selective recomputation runs again of kernel K (forward Fwd on
  /// one rank): all of it where its head is recomputed; where only fused
  /// members are (an activation fused into the GEMM before it), their
  /// elementwise work as one kernel, bytes scaled as the fusion scaled the
  /// forward's; nothing for FlashAttention's kernel, whose backward
  /// recomputes its scores anyway.
  double selectiveRecomputeSeconds(const Kernel &K, double Fwd) const;

  /// What recomputation (full, in a block, or selective) runs again of
  /// kernel K (forward Fwd on one rank): costUnits' sum and the report's
  /// rows alike; with Explain, why.
  double recomputeSeconds(const Kernel &K, double Fwd,
                          std::string *Explain = nullptr) const;

  /// Adds to each unit's kept activations what selective recomputation
  /// needs kept that nothing else keeps: the inputs of its recomputed
  /// nodes made by nodes it does not recompute (Megatron-Core's
  /// checkpoint inputs). Kept: the data roots already kept.
  void addCheckpointInputs(llvm::DenseSet<const ir::Value *> &Kept);

  /// Expert parallelism's all-to-alls of unit I, per micro-batch: each
  /// mixture's tokens to their experts and the results back, forward; their
  /// gradients the other way, backward; the forward's again where full
  /// recomputation reruns the block. On the critical path.
  void addExpertExchange(unsigned I, UnitCost &U) const;

  /// Expert parallelism's all-to-alls of stage St, explained with the
  /// first one of its units.
  std::string explainExpertParallel(const StageReport &St) const;

  /// The context exchange (ring or all-to-alls) of the first attention of
  /// stage St's chunks, explained.
  std::string explainContextExchange(const StageReport &St) const;

  /// Whether FlashAttention keeps V from memory: its scores and
  /// probabilities (read only inside the kernel that makes them), and a
  /// load-time mask only such kernels read (they mask as they go).
  bool neverStored(const ir::Value *V) const;

  /// Each unit's costs (cached in the analysis) with every block's
  /// forward rerun by full recomputation (Rerun), or none's; sets
  /// FullyRecomputed to match.
  const std::vector<UnitCost> &unitCosts(bool Rerun);

  /// Unit costs per micro-batch, full recomputation rerunning the units
  /// FullyRecomputed marks.
  void costUnits();

  // TrainPipeline.cpp: stages, the step's report, the schedule's timeline.

  /// Chunks as ranges of units; chunk c runs on stage c % pp.
  llvm::Expected<std::vector<std::pair<unsigned, unsigned>>> partition();

  /// Block counts per chunk minimising the slowest stage (each stage's
  /// chunks are summed), by trying every bound on a chunk's time between
  /// the largest block and the total, in binary search over the greedy
  /// fill.
  std::vector<unsigned> balance(unsigned NumChunks) const;

  llvm::Expected<TrainReport>
  assemble(const std::vector<std::pair<unsigned, unsigned>> &Chunks);

  /// One micro-batch's times of each stage's chunks, their tensor-parallel
  /// exchanges included.
  ChunkTimes chunkTimes(const TrainReport &R) const;

  Timeline timeline(const TrainReport &R) const;

  // TrainDataParallel.cpp: the exchanges between data-parallel replicas.

  /// The parameters of stage St whose states one device keeps: all, or
  /// under a ZeRO stage that shards them (Sharded) the dense ones' share of
  /// a data-parallel group with its context ranks and the experts' share
  /// of the Dp x Cp / Ep ranks holding the same experts.
  double shardedParams(const StageReport &St, bool Sharded) const;

  /// Data-parallel gradients, exchanged in buckets as the backward makes
  /// them (costmodels/Overlap.h), units in reverse order. Without ZeRO,
  /// DDP all-reduces them during the last micro-batch's backward. ZeRO 1
  /// (Megatron-LM's distributed optimizer) keeps whole gradients and
  /// reduce-scatters them the same way once a step. ZeRO 2 and 3 keep only
  /// their gradient shard, so every micro-batch's gradients are
  /// reduce-scattered during its own backward (DeepSpeed). ZeRO 1 and 2
  /// all-gather the updated parameters after the optimizer, before the
  /// next forward; ZeRO 3 keeps them sharded and gathers them for each
  /// micro-batch's forward (hidden behind it as far as it lasts) and
  /// backward (sharing the backward with the reduce-scatters).
  void addDataParallelExchange(TrainReport &R, const StageReport &SS,
                               double Wbytes, double Gbytes) const;

  // The model's analysis, the strategy, and what run() builds.
  const TrainingAnalysis &A;
  const ir::Graph &G;
  const GraphWork &Work;
  const KernelPlan &Plan;
  const BackwardInfo &Back;
  const BlockInfo &Blocks;
  const hw::Cluster &C;
  const TrainOptions &O;
  const hw::Device &Dev;
  cost::ParallelLayout Layout;
  cost::CommGroup TpGroup, DpGroup, CpGroup, EpGroup, ExpertDpGroup;
  const hw::Link *P2pLink = nullptr;
  int64_t GlobalBatch = 0, MicroBatches = 1;
  std::vector<UnitCost> Fresh;
  const std::vector<UnitCost> *Units = nullptr;
  /// Per unit: whether full recomputation reruns its forward (every block,
  /// or under the block method the first N of each chunk).
  llvm::BitVector FullyRecomputed;
  /// The units' costs under the block method: rerun blocks' and others'.
  std::vector<UnitCost> Merged;
};

} // namespace trainstep
} // namespace perfc

#endif // PERFC_PASSES_TRAINER_H
