//===- TrainStep.cpp - Training step time and memory for a strategy -------===//
#include "passes/TrainStep.h"

#include "costmodels/Collectives.h"
#include "costmodels/Overlap.h"
#include "costmodels/Roofline.h"
#include "ir/Graph.h"
#include "passes/Backward.h"
#include "passes/Blocks.h"
#include "passes/Fp8Recipe.h"
#include "passes/Fusion.h"
#include "passes/TpShard.h"
#include "passes/TrainExplain.h"
#include "passes/TrainingForward.h"
#include "passes/WorkPass.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

namespace perfc {

const char *name(Recompute R) {
  switch (R) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "none";
}

TrainingAnalysis::UnitKey TrainingAnalysis::unitKey(const hw::Cluster &C,
                                                    const TrainOptions &O) {
  return {C.Name,
          O.Tp,
          O.SequenceParallel,
          uint8_t(O.Recomp),
          uint8_t(O.DType),
          uint8_t(O.Layout),
          uint8_t(O.Protocol),
          O.TpCommOverlap,
          O.Cp,
          uint8_t(O.CpComm),
          O.Ep,
          O.ExpertCapacity};
}

const std::vector<UnitCost> *
TrainingAnalysis::cachedUnits(const hw::Cluster &C,
                              const TrainOptions &O) const {
  auto It = UnitCache.find(unitKey(C, O));
  return It == UnitCache.end() ? nullptr : &It->second;
}

namespace {

llvm::Error fail(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// How perfc recognises a mixture of experts, for the errors of options
/// that need one.
constexpr const char *MixtureOfExpertsShape =
    "a batched MatMul on a weight stack [experts, in, out], as perfc zoo "
    "--experts writes it";

/// A count that may be fractional: "3", or "2.50".
std::string formatCount(double N) {
  return N == std::floor(N) ? std::to_string(int64_t(N))
                            : llvm::formatv("{0:F2}", N).str();
}

class Trainer {
public:
  Trainer(const TrainingAnalysis &A, const hw::Cluster &C,
          const TrainOptions &O)
      : A(A), G(A.graph()), Work(A.Work), Plan(A.Plan), Back(A.Back),
        Blocks(A.Blocks), C(C), O(O), Dev(C.primaryDevice()) {}

  llvm::Expected<TrainReport> run() {
    if (llvm::Error E = check())
      return std::move(E);
    if (O.Tp > 1 && !Blocks.HasTensorParallelPattern)
      return fail(llvm::formatv(
          "--tp {0}: the model has no Megatron tensor-parallel pattern (a "
          "MatMul on weights feeding, through non-GEMM ops, another MatMul "
          "on weights within a block); use --tp 1",
          O.Tp));
    if (llvm::Error E =
            checkTpSizes(G, Work, Blocks, A.TpSizes, O.Tp, O.SequenceParallel))
      return std::move(E);
    // Both act on the attention core alone: without one they would change
    // nothing while the report said they were on.
    if (A.FlashAttention && !A.HasAttentionCore)
      return fail("--flash-attention: the model has no attention core (a "
                  "product of two activations, as Q.K^T, led through other "
                  "ops to a second, as P.V, within a block); drop the flag");
    if (O.Recomp == Recompute::Selective && !A.HasAttentionCore)
      return fail("--recompute selective recomputes the attention core, and "
                  "the model has none (a product of two activations led to a "
                  "second within a block); use --recompute none or full");
    if (llvm::Error E = checkContextParallel())
      return std::move(E);
    if (llvm::Error E = makeGroups())
      return std::move(E);
    const TrainingAnalysis::UnitKey Key = TrainingAnalysis::unitKey(C, O);
    auto It = A.UnitCache.find(Key);
    if (It == A.UnitCache.end()) {
      costUnits();
      It = A.UnitCache.emplace(Key, std::move(Fresh)).first;
    }
    Units = &It->second;
    auto Chunks = partition();
    if (!Chunks)
      return Chunks.takeError();
    return assemble(*Chunks);
  }

private:
  llvm::Error check() {
    if (O.Dp == 0 || O.Tp == 0 || O.Pp == 0 || O.Vp == 0 || O.Cp == 0 ||
        O.Ep == 0)
      return fail("parallel degrees must be positive");
    if (O.MicroBatch <= 0)
      return fail("--micro-batch must be positive");
    // 0 means "not given" (micro-batch x dp); a negative one would make
    // every time of the step negative.
    if (O.GlobalBatch < 0)
      return fail(llvm::formatv("--global-batch {0}: give a positive number "
                                "of samples per step",
                                O.GlobalBatch));
    // Replicas of unequal shares are predicted type by type
    // (predictDataSplit); here it would be silently ignored.
    if (!O.DataSplit.empty())
      return fail("an uneven data split is predicted per GPU type "
                  "(predictDataSplit), not as one strategy");
    // Megatron-Core numbers ranks tensor, context, data, pipeline: a data-
    // parallel group with its context ranks is Data here, the Cp ranks of
    // one sequence its first Cp (stride Tp). In 64 bits: both from the user.
    const uint64_t DataWithContext = uint64_t(O.Dp) * O.Cp;
    if (O.Cp > 1 && DataWithContext > C.numDevices())
      return fail(llvm::formatv("dp {0} x cp {1} = {2} devices, but cluster "
                                "'{3}' has {4}",
                                O.Dp, O.Cp, DataWithContext, C.Name,
                                C.numDevices()));
    Layout.Tensor = O.Tp;
    Layout.Data = unsigned(DataWithContext);
    Layout.Pipeline = O.Pp;
    const uint64_t Needed = Layout.ranks();
    if (Needed > C.numDevices())
      return fail(
          O.Cp > 1
              ? llvm::formatv("dp {0} x cp {1} x tp {2} x pp {3} = {4} "
                              "devices, but cluster '{5}' has {6}",
                              O.Dp, O.Cp, O.Tp, O.Pp, Needed, C.Name,
                              C.numDevices())
                    .str()
              : llvm::formatv("dp {0} x tp {1} x pp {2} = {3} devices, but "
                              "cluster '{4}' has {5}",
                              O.Dp, O.Tp, O.Pp, Needed, C.Name, C.numDevices())
                    .str());
    // Both come from the user (flags or a plan file): multiply checked.
    int64_t PerStep = 0;
    if (__builtin_mul_overflow(O.MicroBatch, int64_t(O.Dp), &PerStep))
      return fail(llvm::formatv("--micro-batch {0} x dp {1} overflows; use "
                                "smaller values",
                                O.MicroBatch, O.Dp));
    GlobalBatch = O.GlobalBatch ? O.GlobalBatch : PerStep;
    if (GlobalBatch % PerStep != 0)
      return fail(llvm::formatv("--global-batch {0} is not a multiple of "
                                "--micro-batch {1} x dp {2}",
                                GlobalBatch, O.MicroBatch, O.Dp));
    MicroBatches = GlobalBatch / PerStep;
    if (O.Zero > 3)
      return fail("--zero must be 0, 1, 2 or 3");
    if (O.SequenceParallel && O.Tp < 2)
      return fail("--sp (sequence parallelism) needs --tp of at least 2");
    if (O.TpCommOverlap && !O.SequenceParallel)
      return fail("--tp-comm-overlap overlaps the all-gathers and "
                  "reduce-scatters of sequence parallelism: add --sp (and "
                  "--tp of at least 2)");
    if (O.OverlapParamGather && O.Zero != 1 && O.Zero != 2)
      return fail(llvm::formatv(
          "--overlap-param-gather overlaps the sharded optimizer's "
          "all-gather of the updated parameters with the next forward, but "
          "ZeRO {0} has {1}: use --zero 1 or 2",
          O.Zero,
          O.Zero == 0 ? "no sharded optimizer"
                      : "its parameters gathered for every micro-batch"));
    if (llvm::Error E = checkExpertParallel(DataWithContext))
      return E;
    if (O.Vp > 1 && O.Pp == 1)
      return fail("--vp (interleaved 1F1B) needs --pp of at least 2");
    // In 64 bits: pp x vp from the user could wrap to 0 in 32.
    const uint64_t Chunks = uint64_t(O.Pp) * O.Vp;
    if (Chunks > std::max(1u, Blocks.NumBlocks))
      return fail(llvm::formatv(
          "pp {0} x vp {1} = {2} pipeline chunks, but the model has {3} "
          "blocks; use fewer stages",
          O.Pp, O.Vp, Chunks, Blocks.NumBlocks));
    // Megatron-LM's interleaved schedule runs the micro-batches in groups
    // of pp and refuses other counts (pipeline_parallel/schedules.py).
    if (O.Vp > 1 && MicroBatches % O.Pp != 0)
      return fail(llvm::formatv(
          "--vp {0}: the interleaved schedule runs micro-batches in groups "
          "of pp {1}, but a step has {2} per data-parallel rank (global "
          "batch {3} / (micro-batch {4} x dp {5})); give a global batch "
          "that makes it a multiple of {1}",
          O.Vp, O.Pp, MicroBatches, GlobalBatch, O.MicroBatch, O.Dp));
    if (O.Vp > 1 && O.Schedule == PipelineSchedule::GPipe)
      return fail("--vp interleaves 1F1B; GPipe has no interleaved form: use "
                  "--schedule 1f1b or --vp 1");
    return llvm::Error::success();
  }

  /// Expert parallelism splits each mixture's experts over Ep of the
  /// DataWithContext ranks that see different tokens.
  llvm::Error checkExpertParallel(uint64_t DataWithContext) const {
    if (O.ExpertCapacity != 1) {
      if (!(O.ExpertCapacity > 0 && O.ExpertCapacity <= 1e6))
        return fail(llvm::formatv("--moe-capacity {0}: give the experts' "
                                  "tokens over their balanced share, a "
                                  "number above 0 (1: balanced)",
                                  formatCount(O.ExpertCapacity)));
      if (Blocks.ExpertCounts.empty())
        return fail(llvm::formatv("--moe-capacity {0}: the model has no "
                                  "mixture of experts ({1}); drop the flag",
                                  formatCount(O.ExpertCapacity),
                                  MixtureOfExpertsShape));
    }
    if (O.Ep == 1)
      return llvm::Error::success();
    if (Blocks.ExpertCounts.empty())
      return fail(llvm::formatv("--ep {0}: the model has no mixture of "
                                "experts ({1}); use --ep 1",
                                O.Ep, MixtureOfExpertsShape));
    if (DataWithContext % O.Ep != 0)
      return fail(llvm::formatv(
          "--ep {0} does not divide dp {1} x cp {2} = {3}: expert "
          "parallelism splits the experts over ranks of a data-parallel "
          "group (Megatron-Core's expert-model-parallel size); use an ep "
          "that divides {3}",
          O.Ep, O.Dp, O.Cp, DataWithContext));
    for (int64_t E : Blocks.ExpertCounts)
      if (E % O.Ep != 0)
        return expertsDoNotSplit(O.Ep, E);
    // The dispatcher's all-to-all sends each tensor rank's 1 / tp of the
    // tokens, which sequence parallelism gives it (Megatron-Core refuses
    // the pair without it).
    if (O.Tp > 1 && !O.SequenceParallel)
      return fail(llvm::formatv("--ep {0} with --tp {1} needs --sp: "
                                "Megatron-Core's token dispatcher splits the "
                                "tokens over the tensor ranks by sequence "
                                "parallelism",
                                O.Ep, O.Tp));
    if (O.Zero == 3)
      return fail(llvm::formatv("--ep {0} with --zero 3 is not modelled "
                                "(Megatron-Core shards no parameters); use "
                                "--zero 0, 1 or 2",
                                O.Ep));
    return llvm::Error::success();
  }

  /// Context parallelism runs ring attention in FlashAttention-style
  /// kernels (Transformer Engine's), over a sequence that cuts into 2 Cp
  /// equal chunks (Megatron-Core's load-balanced split).
  llvm::Error checkContextParallel() const {
    if (O.Cp == 1)
      return llvm::Error::success();
    if (O.CpComm == ContextExchange::AllToAll)
      return checkHeadExchange();
    if (!A.FlashAttention)
      return contextParallelNeedsFlashAttention(O.Cp);
    for (const Kernel &K : Plan.Kernels) {
      if (!K.Attention)
        continue;
      const int64_t Keys = attentionKeys(K);
      if (Keys > 0 && Keys % (2 * int64_t(O.Cp)) != 0)
        return fail(llvm::formatv(
            "--cp {0}: the sequence ({1} keys in attention '{2}') must cut "
            "into 2 x cp = {3} equal chunks (Megatron-Core's load-balanced "
            "split); use a cp that divides {4}",
            O.Cp, Keys, G.nodes()[K.Head]->name(), 2 * int64_t(O.Cp),
            Keys / 2));
    }
    return llvm::Error::success();
  }

  /// Under the all-to-all exchange every attention core's tokens and each
  /// rank's heads (its tensor-parallel share) must split into Cp equal
  /// parts, as DeepSpeed-Ulysses and Transformer Engine's "a2a" require.
  llvm::Error checkHeadExchange() const {
    bool Found = false;
    for (const auto &N : G.nodes()) {
      if (N->opType() != "Softmax" || !Blocks.AttentionCore[N->index()] ||
          !N->input(0))
        continue;
      Found = true;
      const ir::Shape &Sh = N->input(0)->shape();
      const unsigned R = Sh.rank();
      const auto Prefix = [&] {
        return llvm::formatv("--cp {0} --cp-comm a2a: attention '{1}'", O.Cp,
                             N->name())
            .str();
      };
      for (unsigned D = R >= 2 ? R - 2 : R; D < R; ++D)
        if (Sh[D].Value > 0 && Sh[D].Value % O.Cp != 0)
          return fail(llvm::formatv("{0} has {1} tokens, which do not split "
                                    "over {2} ranks; use a cp that divides {1}",
                                    Prefix(), Sh[D].Value, O.Cp));
      if (R < 4)
        continue;
      // The scores are [batch, heads, queries, keys]; a rank's heads are its
      // tensor-parallel share. Its key/value heads split too (Transformer
      // Engine views each of Q, K and V as [..., cp, heads / cp, dim]):
      // fewer under grouped-query attention, as the projections make them.
      const double Heads = double(Sh[1].Value) * tpScale(N->index());
      if (Sh[1].Value > 0 && std::fmod(Heads, double(O.Cp)) != 0)
        return fail(llvm::formatv(
            "{0} has {1} heads per tensor-parallel rank, which do not split "
            "over {2} ranks (the all-to-all trades tokens for heads); use a cp "
            "that divides {1}, or --cp-comm p2p",
            Prefix(), formatCount(Heads), O.Cp));
      const double KvHeads = keyValueHeads(*N, Heads);
      if (KvHeads > 0 && std::fmod(KvHeads, double(O.Cp)) != 0)
        return fail(llvm::formatv(
            "{0} has {1} key/value heads per tensor-parallel rank, which do "
            "not split over {2} ranks (the all-to-all trades tokens for "
            "heads); use a cp that divides {1}, or --cp-comm p2p",
            Prefix(), formatCount(KvHeads), O.Cp));
    }
    if (!Found)
      return headExchangeNeedsAttention(O.Cp);
    return llvm::Error::success();
  }

  /// The key/value heads of the attention whose scores softmax S
  /// normalises, [batch, heads, queries, keys] with Heads heads per rank:
  /// Heads x (K's elements x queries) / (Q's x keys), K and Q the operands
  /// of the product making the scores as the projections made them (before
  /// a grouped-query expansion); 0 where the product is not found.
  double keyValueHeads(const ir::Node &S, double Heads) const {
    const ir::Node *P = S.input(0) ? S.input(0)->producer() : nullptr;
    // Back through the core's elementwise steps (scale, mask, bias) to
    // the product.
    while (P && !(Work.Nodes[P->index()].Gemm.valid() &&
                  Blocks.AttentionCore[P->index()])) {
      const ir::Node *Next = nullptr;
      for (const ir::Value *In : P->inputs())
        if (In && In->producer() &&
            Blocks.AttentionCore[In->producer()->index()]) {
          Next = In->producer();
          break;
        }
      P = Next;
    }
    if (!P || P->numInputs() < 2 || !P->input(0) || !P->input(1))
      return 0;
    const ir::Shape &Sh = S.input(0)->shape();
    const double Queries = double(Sh[Sh.rank() - 2].Value);
    const double Keys = double(Sh[Sh.rank() - 1].Value);
    const double Q = keyValueElements(P->input(0));
    const double K = keyValueElements(P->input(1));
    if (!(Q > 0 && K > 0 && Queries > 0 && Keys > 0))
      return 0;
    return Heads * (K * Queries) / (Q * Keys);
  }

  /// The scores an attention kernel's softmax normalises; null if none.
  const ir::Value *softmaxInput(const Kernel &K) const {
    for (unsigned M : K.Members) {
      const ir::Node &N = *G.nodes()[M];
      if (N.opType() == "Softmax" && N.input(0))
        return N.input(0);
    }
    return nullptr;
  }

  /// The keys an attention kernel attends to: its scores' last dimension;
  /// 0 where unknown.
  int64_t attentionKeys(const Kernel &K) const {
    const ir::Value *Scores = softmaxInput(K);
    if (!Scores || Scores->shape().rank() == 0)
      return 0;
    const ir::Shape &Sh = Scores->shape();
    return Sh[Sh.rank() - 1].Value;
  }

  llvm::Error makeGroups() {
    for (auto [Dim, Group] :
         {std::make_pair(cost::ParallelDim::Tensor, &TpGroup),
          std::make_pair(cost::ParallelDim::Data, &DpGroup)}) {
      auto Gr = cost::groupOf(C, Layout, Dim);
      if (!Gr)
        return Gr.takeError();
      *Group = *Gr;
      Group->Protocol = O.Protocol;
    }
    // A sequence's context ranks: the first Cp of a data-parallel group
    // with its context ranks.
    if (O.Cp > 1) {
      auto Gr = cost::groupOf(C, O.Cp, O.Tp);
      if (!Gr)
        return Gr.takeError();
      CpGroup = *Gr;
    }
    // A mixture's expert ranks follow the tensor and context ranks; the
    // ranks holding the same experts are Ep of them apart. (Under context
    // parallelism those are the context ranks of each too, which no single
    // stride reaches: taken as Tp x Ep apart.)
    if (O.Ep > 1) {
      auto Gr = cost::groupOf(C, O.Ep, O.Tp * O.Cp);
      if (!Gr)
        return Gr.takeError();
      EpGroup = *Gr;
      EpGroup.Protocol = O.Protocol;
      const unsigned Replicas = Layout.Data / O.Ep;
      if (Replicas > 1) {
        auto Gr = cost::groupOf(C, Replicas, O.Tp * O.Ep);
        if (!Gr)
          return Gr.takeError();
        ExpertDpGroup = *Gr;
        ExpertDpGroup.Protocol = O.Protocol;
      }
    }
    // Neighbouring pipeline stages are Tensor x Context x Data ranks apart:
    // another node once that fills a node.
    const unsigned PerNode = C.Groups.front().devicesPerNode();
    const auto &Front = C.Groups.front();
    P2pLink = (uint64_t(O.Tp) * Layout.Data >= PerNode || !Front.IntraNode)
                  ? (Front.InterNode ? &*Front.InterNode : nullptr)
                  : &*Front.IntraNode;
    if (O.Pp > 1 && !P2pLink)
      return fail(llvm::formatv("--pp {0}: cluster '{1}' has no link between "
                                "the devices of neighbouring stages",
                                O.Pp, C.Name));
    return llvm::Error::success();
  }

  /// Storage of float tensors moves to the training type, from whatever
  /// type the graph stores them in (an fp16 export trained in fp16 moves
  /// its bytes as they are). Work of other types is scaled as fp32, as
  /// the float tensors around it.
  double byteScale(ir::DType Stored = ir::DType::F32) const {
    const double From =
        ir::isFloatingPoint(Stored) ? double(ir::byteSize(Stored)) : 4.0;
    return ir::byteSize(trainingStorageType(O.DType)) / From;
  }

  /// Bytes of one element of the activations and gradients training
  /// stores and exchanges.
  double elementBytes() const {
    return double(ir::byteSize(trainingStorageType(O.DType)));
  }

  /// The share of a node's work one tensor-parallel rank does.
  double tpScale(unsigned Node) const {
    return tpShare(Blocks, Node, O.Tp, O.SequenceParallel);
  }

  /// The share of a node's activations one rank keeps: its tensor-
  /// parallel share of the context-parallel rank's tokens.
  double activationScale(unsigned Node) const { return tpScale(Node) / O.Cp; }

  /// W on one rank: its tensor-parallel share (TpShard.h), then a context-
  /// parallel rank's tokens: the arithmetic, the activations' bytes and the
  /// GEMM's rows (tokens, or an attention's queries) divided by Cp, a
  /// weight read whole.
  OpWork shard(const OpWork &W, unsigned Node) const {
    OpWork S =
        shardWork(W, Blocks.Tp[Node], O.Tp, tpScale(Node), byteScale(W.Type));
    if (O.Cp > 1)
      shardContext(S, Node);
    if (Blocks.Expert[Node]) {
      if (O.ExpertCapacity != 1)
        scaleExpertTokens(S);
      if (O.Ep > 1)
        shardExperts(S);
    }
    return S;
  }

  /// An expert node at O.ExpertCapacity times its balanced tokens: its
  /// products' rows, arithmetic and activations scaled, its weights read
  /// once as before.
  void scaleExpertTokens(OpWork &S) const {
    const double F = O.ExpertCapacity;
    const double Weight = weightBytes(S);
    S.Macs *= F;
    S.Flops *= F;
    S.BytesRead = (S.BytesRead - Weight) * F + Weight;
    S.BytesWritten *= F;
    S.SideBytesRead *= F;
    S.SideBytesWritten *= F;
    S.LayoutBytes *= F;
    if (S.Gemm.valid())
      S.Gemm.M *= F;
  }

  /// The weight bytes W reads: a GEMM's K x N per product, or all it
  /// reads when that is less.
  double weightBytes(const OpWork &W) const {
    return W.Params > 0 && W.Gemm.valid()
               ? std::min(W.BytesRead,
                          W.Gemm.Batch * W.Gemm.K * W.Gemm.N * elementBytes())
               : 0;
  }

  /// An expert node on one of Ep ranks: E / Ep experts' weights, each
  /// expert's product on the tokens of all Ep ranks (balanced routing:
  /// the same rows in all, Ep times as many per expert).
  void shardExperts(OpWork &S) const {
    const double Ep = O.Ep;
    const double Weight = weightBytes(S);
    S.BytesRead -= Weight * (1 - 1 / Ep);
    S.Params /= Ep;
    if (S.Gemm.valid()) {
      S.Gemm.Batch /= Ep;
      S.Gemm.M *= Ep;
    }
  }

  /// S on one of Cp context ranks (see shard).
  void shardContext(OpWork &S, unsigned Node) const {
    const double Cp = O.Cp;
    const double Weight = weightBytes(S);
    S.Macs /= Cp;
    S.Flops /= Cp;
    S.BytesRead = (S.BytesRead - Weight) / Cp + Weight;
    S.BytesWritten /= Cp;
    S.SideBytesRead /= Cp;
    S.SideBytesWritten /= Cp;
    S.LayoutBytes /= Cp;
    // The all-to-all gives an attention core's products all the tokens of
    // 1 / Cp of the heads: fewer products, not fewer rows.
    if (S.Gemm.valid() && O.CpComm == ContextExchange::AllToAll &&
        Blocks.AttentionCore[Node])
      S.Gemm.Batch /= Cp;
    else if (S.Gemm.valid())
      S.Gemm.M /= Cp;
  }

  /// How the step times work of type Type: in the training type, under the
  /// FP8 recipe in BF16 (its FP8 GEMMs are timed by fp8GemmTime).
  cost::TimeOptions timeOptions(ir::DType Type, bool Notes) const {
    cost::TimeOptions T;
    // The step reads times only; tiling notes would be formatted for every
    // GEMM of every strategy the planner tries.
    T.Notes = Notes;
    if (ir::isFloatingPoint(Type))
      T.ComputeType = trainingStorageType(O.DType);
    T.Layout = O.Layout;
    return T;
  }

  cost::OpTime timing(const OpWork &W, bool Notes = false) const {
    return cost::opTime(W, Dev, timeOptions(W.Type, Notes));
  }

  double time(const OpWork &W) const { return timing(W).Seconds; }

  /// Whether kernel K is a Linear layer's GEMM that the FP8 recipe runs in
  /// FP8 (Fp8Recipe.h): in a transformer block, as Transformer Engine's
  /// modules are (Megatron's embedding and output layer stay BF16).
  bool fp8Gemm(const Kernel &K) const {
    return isFp8Recipe(O.DType) && !(A.FlashAttention && K.Attention) &&
           Blocks.inBlock(K.Head) &&
           isFp8Gemm(*G.nodes()[K.Head], Work.Nodes[K.Head], Plan);
  }

  /// FP8 GEMM W (sharded, stored in BF16) with its cast (Fp8Recipe.h).
  Fp8GemmTime fp8GemmTiming(const OpWork &W, bool Backward, bool Notes) const {
    return fp8GemmTime(W, Backward, O.DType, Dev, timeOptions(W.Type, Notes));
  }

  /// The forward time of kernel K (sharded), FP8 casts included; under
  /// context parallelism an attention's merges of its ring steps too.
  double forwardSeconds(const Kernel &K) const {
    const OpWork W = shard(kernelWork(K, A.FlashAttention), K.Head);
    if (fp8Gemm(K))
      return fp8GemmTiming(W, /*Backward=*/false, false).seconds();
    return time(W) + ringMergeSeconds(K, W);
  }

  /// Under context parallelism, what ring attention adds to FlashAttention
  /// kernel K (its work on one rank W) in each direction: each of the
  /// Cp - 1 steps after the first merges its partial result into the
  /// running one (forward: the output rescaled by the two log-sum-exps,
  /// Transformer Engine's out correction; backward: the query gradient
  /// accumulated), an elementwise kernel reading both and writing one.
  double ringMergeSeconds(const Kernel &K, const OpWork &W) const {
    if (!(A.FlashAttention && K.Attention) || O.Cp == 1 ||
        O.CpComm != ContextExchange::Ring)
      return 0;
    OpWork Merge;
    Merge.Class = OpClass::Elementwise;
    Merge.Type = W.Type;
    Merge.BytesRead = 2 * W.BytesWritten;
    Merge.BytesWritten = W.BytesWritten;
    Merge.Flops = 4 * W.BytesWritten / elementBytes();
    return (O.Cp - 1) * time(Merge);
  }

  double allReduce(double Bytes, const cost::CommGroup &G) const {
    return cost::collectiveSeconds(cost::Collective::AllReduce, Bytes, G);
  }

  /// One tensor-parallel exchange of a full activation: an all-reduce, or
  /// with sequence parallelism a reduce-scatter and an all-gather.
  double tpExchange(const ir::Value *V) const {
    const double Bytes = V->numElements() * elementBytes();
    if (!O.SequenceParallel)
      return allReduce(Bytes, TpGroup);
    return cost::collectiveSeconds(cost::Collective::ReduceScatter, Bytes,
                                   TpGroup) +
           cost::collectiveSeconds(cost::Collective::AllGather, Bytes, TpGroup);
  }

  double valueBytes(const ir::Value *V, double Scale) const {
    const double Bytes = static_cast<double>(V->bytes());
    return (ir::isFloatingPoint(V->type()) ? Bytes * byteScale(V->type())
                                           : Bytes) *
           Scale;
  }

  /// FlashAttention's backward kernel from its forward's work: it
  /// recomputes the scores and runs five products of the forward's size
  /// where the forward ran two (FlashAttention-2's benchmarks count 2.5x
  /// the forward's FLOPs), reads Q, K, V, the output and its gradient and
  /// writes the gradients of Q, K and V.
  static OpWork flashBackward(const OpWork &Fwd) {
    OpWork B = Fwd;
    B.Macs *= 2.5;
    B.Flops *= 2.5;
    B.BytesRead = Fwd.BytesRead + 2 * Fwd.BytesWritten;
    B.BytesWritten = Fwd.BytesRead;
    B.Formula = "FlashAttention backward: 2.5x the forward's FLOPs; reads "
                "Q, K, V, O, dO, writes dQ, dK, dV";
    return B;
  }

  bool inFlashKernel(unsigned Node) const {
    if (!A.FlashAttention)
      return false;
    const int K = Plan.KernelOf[Node];
    return K >= 0 && Plan.Kernels[K].Attention;
  }

  /// What FlashAttention keeps besides its inputs and output: the
  /// softmax's log-sum-exp, one fp32 per row of scores.
  double logSumExpBytes(const Kernel &K) const {
    const ir::Value *Scores = softmaxInput(K);
    if (!Scores)
      return 0;
    const ir::Shape &Sh = Scores->shape();
    const int64_t Cols = Sh.rank() ? Sh[Sh.rank() - 1].Value : 1;
    return Cols > 0 ? 4.0 * double(Scores->numElements()) / double(Cols) : 0;
  }

  /// The product a GEMM head runs with the GEMMs fused horizontally into
  /// its kernel (projections of one input, planKernels' packed QKV): one
  /// GEMM N wide as their Ns together, the input read once; the members
  /// joined go to Joined. Without such members, the head's own work.
  OpWork horizontalGemm(const Kernel &K,
                        llvm::SmallVectorImpl<unsigned> &Joined) const {
    OpWork W = Work.Nodes[K.Head];
    const ir::Node &Head = *G.nodes()[K.Head];
    if (!W.Gemm.valid() || Head.numInputs() == 0 || !Head.input(0))
      return W;
    // Projections of one input: the same data read as the head's first
    // operand (an attention's two products never share theirs).
    const ir::Value *Shared = Plan.dataRoot(Head.input(0));
    for (unsigned M : K.Members) {
      const OpWork &Other = Work.Nodes[M];
      const ir::Node &N = *G.nodes()[M];
      if (M == K.Head || !Other.Gemm.valid() || Other.Macs <= 0 ||
          Other.Gemm.M != W.Gemm.M || Other.Gemm.K != W.Gemm.K ||
          Other.Gemm.Batch != W.Gemm.Batch || N.numInputs() == 0 ||
          !N.input(0) || Plan.dataRoot(N.input(0)) != Shared)
        continue;
      // What the other GEMM adds: its weight (a K x N share of its reads)
      // and its output; the shared input is read once.
      const double Input = Other.Gemm.Batch * Other.Gemm.M * Other.Gemm.K;
      const double Weight = Other.Gemm.K * Other.Gemm.N;
      W.BytesRead += Other.BytesRead * Weight / (Input + Weight);
      W.BytesWritten += Other.BytesWritten;
      W.Macs += Other.Macs;
      W.Flops += Other.Flops;
      W.Gemm.N += Other.Gemm.N;
      W.Params += Other.Params;
      Joined.push_back(M);
    }
    return W;
  }

  /// One micro-batch's backward through kernel K on one rank: a product
  /// head's gradients as products of its forward's size (with the GEMMs
  /// fused horizontally into it, at their joint width, as the forward ran
  /// them), the fused members' other gradients as one elementwise kernel
  /// (bytes scaled as the fusion scaled the forward's), or
  /// FlashAttention's backward kernel.
  double kernelBackward(const Kernel &K, std::string *Explain = nullptr) const {
    // Tiling notes and explanations only where a caller reads them.
    const bool Notes = Explain != nullptr;
    const unsigned Head = K.Head;
    if (A.FlashAttention && K.Attention) {
      const OpWork Fwd = kernelWork(K, true);
      const OpWork W = shard(flashBackward(Fwd), Head);
      const cost::OpTime T = timing(W, Notes);
      if (Explain)
        *Explain = W.Formula + ": " + cost::explain(T);
      // The query gradient, accumulated over the ring's steps: the size of
      // the forward's output.
      return T.Seconds + ringMergeSeconds(K, shard(Fwd, Head));
    }
    double Seconds = 0;
    double FusedBytes = 0;
    for (unsigned M : K.Members)
      FusedBytes += Work.Nodes[M].bytes();
    const double Ratio = FusedBytes > 0 ? K.Work.bytes() / FusedBytes : 1;
    OpWork Rest;
    Rest.Class = OpClass::Elementwise;
    Rest.Type = K.Work.Type;
    bool HasRest = false;
    llvm::SmallVector<unsigned, 2> Joined;
    const OpWork Product = horizontalGemm(K, Joined);
    for (unsigned M : K.Members) {
      if (!Back.NeedsGrad[M] || llvm::is_contained(Joined, M))
        continue;
      const OpWork &B = Back.Work[M];
      if (B.IsView)
        continue;
      if (M == Head && B.Macs > 0) {
        const double Grads =
            Work.Nodes[M].Macs > 0 ? B.Macs / Work.Nodes[M].Macs : 0;
        const bool Fp8 = fp8Gemm(K);
        const Fp8GemmTime F8 =
            Fp8 ? fp8GemmTiming(shard(Product, M), /*Backward=*/true, Notes)
                : Fp8GemmTime{timing(shard(Product, M), Notes), {}};
        const cost::OpTime &T = F8.Gemm, &Cast = F8.Cast;
        Seconds += Grads * T.Seconds + Cast.Seconds;
        if (Explain)
          *Explain +=
              llvm::formatv(
                  "{0} product{1} of the forward's size{2} (the "
                  "gradients of its operands that need one), each {3}",
                  formatCount(Grads), Grads == 1 ? "" : "s",
                  Joined.empty() ? std::string()
                                 : llvm::formatv(", with the {0} GEMM{1} fused "
                                                 "beside it (N {2})",
                                                 Joined.size(),
                                                 Joined.size() == 1 ? "" : "s",
                                                 int64_t(Product.Gemm.N))
                                       .str(),
                  cost::explain(T))
                  .str();
        if (Explain && Fp8)
          *Explain += "; plus the FP8 cast of the output's gradient (FP8 "
                      "recipe): " +
                      cost::explain(Cast);
        continue;
      }
      OpWork S = shard(B, M);
      Rest.Flops += S.Flops;
      Rest.BytesRead += S.BytesRead * Ratio;
      Rest.BytesWritten += S.BytesWritten * Ratio;
      if (M == Head)
        Rest.Class = B.Class;
      HasRest = true;
    }
    if (!HasRest)
      return Seconds;
    const cost::OpTime T = timing(Rest, Notes);
    if (Explain)
      *Explain += (Explain->empty() ? "" : "; plus ") +
                  std::string("one kernel for the gradients of ") +
                  (K.Members.size() > 1 ? "its fused members" : "the op") +
                  ": " + cost::explain(T);
    return Seconds + T.Seconds;
  }

  /// The elements of an attention product's second operand (K^T, V) as the
  /// projections made them: through the views and copies before the
  /// product (transposes, a grouped-query attention's expansion of its
  /// key/value heads), the smallest.
  static double keyValueElements(const ir::Value *V) {
    double Least = double(V->numElements());
    while (const ir::Node *P = V->producer()) {
      const llvm::StringRef Op = P->opType();
      if (!(Op == "Reshape" || Op == "Transpose" || Op == "Expand" ||
            Op == "Unsqueeze" || Op == "Squeeze" || Op == "Tile" ||
            Op == "Flatten" || Op == "Identity") ||
          P->numInputs() == 0 || !P->input(0))
        break;
      V = P->input(0);
      Least = std::min(Least, double(V->numElements()));
    }
    return Least;
  }

  /// The ring of FlashAttention kernel K under context parallelism
  /// (forward Fwd, backward Bwd on one rank, already its share of the
  /// queries), per micro-batch; the link is the one the ring's slowest hop
  /// crosses. Its keys and values are the
  /// second operands of its two products. Transformer Engine sends the
  /// keys and values on at each of the Cp - 1 steps forward, and in
  /// backward their gradients too (twice the bytes); each transfer runs
  /// beside one step's attention, 1 / Cp of the rank's.
  ContextRingTerms ringOf(const Kernel &K, double Fwd, double Bwd) const {
    ContextRingTerms R;
    for (unsigned M : K.Members) {
      const ir::Node &N = *G.nodes()[M];
      if (!Work.Nodes[M].Gemm.valid() || N.numInputs() < 2 || !N.input(1) ||
          parameterBehind(N.input(1)))
        continue;
      R.Bytes +=
          keyValueElements(N.input(1)) * elementBytes() * activationScale(M);
    }
    const bool Across = CpGroup.nodes() > 1 || !CpGroup.Intra;
    R.Link = Across ? CpGroup.Inter : CpGroup.Intra;
    if (!R.Link)
      return R;
    // Across nodes every group's ring shares the node's ports.
    const double Share =
        Across && CpGroup.InterShare > 0 && CpGroup.InterShare < 1
            ? CpGroup.InterShare
            : 1;
    R.ForwardStep = cost::p2pSeconds(R.Bytes / Share, *R.Link);
    R.BackwardStep = cost::p2pSeconds(2 * R.Bytes / Share, *R.Link);
    R.ForwardAttention = Fwd / O.Cp;
    R.BackwardAttention = Bwd / O.Cp;
    R.MergeSeconds =
        ringMergeSeconds(K, shard(kernelWork(K, true), K.Head)) / (O.Cp - 1);
    return R;
  }

  /// Adds ring R's exchanges to unit U: of each of the Cp - 1 steps, what
  /// outlasts that step's attention is exposed (the first step computes on
  /// the rank's own keys while the second's arrive); full recomputation
  /// runs the forward's again.
  void addContextExchange(const ContextRingTerms &R, UnitCost &U) const {
    const double Steps = O.Cp - 1;
    const double Fwd = Steps * R.ForwardStep, Bwd = Steps * R.BackwardStep;
    const double ExposedF =
        Steps * std::max(0.0, R.ForwardStep - R.ForwardAttention);
    const double ExposedB =
        Steps * std::max(0.0, R.BackwardStep - R.BackwardAttention);
    const unsigned Forwards = O.Recomp == Recompute::Full ? 2 : 1;
    U.CpComm += Forwards * ExposedF + ExposedB;
    U.CpForward += ExposedF;
    U.CpOverlapped += Forwards * (Fwd - ExposedF) + (Bwd - ExposedB);
  }

  /// Under the all-to-all exchange, per unit and micro-batch: each
  /// attention core's Q and K (its first product's operands), V and its
  /// output (the second's operand and result) on one rank, S / Cp tokens of
  /// the rank's heads, each exchanged all-to-all over the context ranks in
  /// a call of its own (DeepSpeed-Ulysses' _SeqAllToAll per tensor),
  /// forward; their gradients the other way in backward. K and V are
  /// measured before a grouped-query expansion, as they are sent.
  std::vector<ContextAllToAllTerms> headExchanges() const {
    std::vector<ContextAllToAllTerms> T(Blocks.numUnits());
    std::vector<unsigned> Products(Blocks.numUnits(), 0);
    for (const auto &N : G.nodes()) {
      const unsigned I = N->index();
      if (!Blocks.AttentionCore[I] || !Work.Nodes[I].Gemm.valid() ||
          N->numInputs() < 2 || !N->input(0) || !N->input(1) ||
          parameterBehind(N->input(1)) || N->numOutputs() == 0 ||
          !N->outputs()[0])
        continue;
      ContextAllToAllTerms &X = T[Blocks.UnitOf[I]];
      const double Scale = elementBytes() * activationScale(I);
      const auto Exchange = [&](double Bytes) {
        const double S =
            cost::collectiveSeconds(cost::Collective::AllToAll, Bytes, CpGroup);
        X.ForwardSeconds += S;
        X.BackwardSeconds += S;
      };
      const double KeyOrValue = keyValueElements(N->input(1)) * Scale;
      X.KeyValueBytes += KeyOrValue;
      Exchange(KeyOrValue);
      // Topological order: an attention's first product, then its second.
      if (Products[Blocks.UnitOf[I]]++ % 2 == 0) {
        const double Query = keyValueElements(N->input(0)) * Scale;
        X.QueryBytes += Query;
        Exchange(Query);
      } else {
        const double Output = double(N->outputs()[0]->numElements()) * Scale;
        X.OutputBytes += Output;
        Exchange(Output);
        ++X.Attentions;
      }
    }
    return T;
  }

  /// Adds the all-to-alls X of a unit to U: on the critical path, the
  /// forward's again where recomputation reruns the attention core
  /// (full, or selective without FlashAttention).
  void addHeadExchange(const ContextAllToAllTerms &X, bool InBlock,
                       UnitCost &U) const {
    const bool Again = (O.Recomp == Recompute::Full && InBlock) ||
                       (O.Recomp == Recompute::Selective && !A.FlashAttention);
    U.CpComm += (Again ? 2 : 1) * X.ForwardSeconds + X.BackwardSeconds;
    U.CpForward += X.ForwardSeconds;
  }

  /// The bytes one rank sends in expert parallelism's all-to-all of
  /// tensor V (BlockInfo::ExpertExchanged): its tokens' rows, of which a
  /// tensor-parallel rank sends its 1 / Tp (Megatron-Core's dispatcher
  /// gathers them over the tensor ranks after it; the row GEMMs'
  /// reductions, priced as tensor parallelism's, do that work).
  double expertExchangeBytes(const ir::Value *V) const {
    return double(V->numElements()) * elementBytes() * O.ExpertCapacity / O.Tp /
           O.Cp;
  }

  /// Whether backward reruns unit U's forward: full recomputation, in a
  /// block.
  bool rerunsForward(unsigned U) const {
    return O.Recomp == Recompute::Full && Blocks.isBlock(U);
  }

  /// Expert parallelism's all-to-alls of unit I, per micro-batch: each
  /// mixture's tokens to their experts and the results back, forward; their
  /// gradients the other way, backward; the forward's again where full
  /// recomputation reruns the block. On the critical path.
  void addExpertExchange(unsigned I, UnitCost &U) const {
    double Fwd = 0;
    for (const ir::Value *V : Blocks.ExpertExchanged[I])
      Fwd += cost::collectiveSeconds(cost::Collective::AllToAll,
                                     expertExchangeBytes(V), EpGroup);
    U.EpComm = (rerunsForward(I) ? 2 : 1) * Fwd + Fwd;
    U.EpForward = Fwd;
  }

  /// Expert parallelism's all-to-alls of stage St, explained with the
  /// first one of its units.
  std::string explainExpertParallel(const StageReport &St) const {
    unsigned Calls = 0;
    const ir::Value *First = nullptr;
    for (const auto &[From, To] : St.Chunks)
      for (unsigned U = From; U <= To; ++U)
        for (const ir::Value *V : Blocks.ExpertExchanged[U]) {
          Calls += rerunsForward(U) ? 3 : 2;
          First = First ? First : V;
        }
    if (!First)
      return std::string();
    const cost::CommTime One = cost::collectiveTime(
        cost::Collective::AllToAll, expertExchangeBytes(First), EpGroup);
    return explainExpertExchange(St, O, Calls, One.Explain);
  }

  /// The context exchange (ring or all-to-alls) of the first attention of
  /// stage St's chunks, explained.
  std::string explainContextExchange(const StageReport &St) const {
    const auto InStage = [&](unsigned U) {
      return llvm::any_of(St.Chunks,
                          [&](const std::pair<unsigned, unsigned> &C) {
                            return C.first <= U && U <= C.second;
                          });
    };
    if (O.CpComm == ContextExchange::AllToAll) {
      const std::vector<ContextAllToAllTerms> T = headExchanges();
      for (unsigned U = 0; U < T.size(); ++U)
        if (T[U].Attentions > 0 && InStage(U)) {
          const cost::CommTime One =
              cost::collectiveTime(cost::Collective::AllToAll,
                                   T[U].QueryBytes / T[U].Attentions, CpGroup);
          return perfc::explainContextAllToAll(St, O, T[U], One.Explain);
        }
      return std::string();
    }
    for (const Kernel &K : Plan.Kernels) {
      const unsigned U = Blocks.UnitOf[K.Head];
      if (K.Attention &&
          llvm::any_of(St.Chunks, [&](const std::pair<unsigned, unsigned> &C) {
            return C.first <= U && U <= C.second;
          }))
        return perfc::explainContextRing(
            St, O, ringOf(K, forwardSeconds(K), kernelBackward(K)));
    }
    return std::string();
  }

  /// Whether FlashAttention keeps V from memory: its scores and
  /// probabilities (read only inside the kernel that makes them), and a
  /// load-time mask only such kernels read (they mask as they go).
  bool neverStored(const ir::Value *V) const {
    if (!A.FlashAttention || V->users().empty())
      return false;
    const ir::Node *P = V->producer();
    const int Own = P ? Plan.KernelOf[P->index()] : -1;
    const bool Constant = Plan.isLoadTimeConstant(V);
    if (!Constant && !(Own >= 0 && inFlashKernel(P->index())))
      return false;
    return llvm::all_of(V->users(), [&](const ir::Node *User) {
      const int K = Plan.KernelOf[User->index()];
      return inFlashKernel(User->index()) && (Constant || K == Own);
    });
  }

  void costUnits() {
    std::vector<UnitCost> &Units = Fresh;
    llvm::DenseSet<std::pair<const ir::Value *, unsigned>> Seen;
    Units.assign(Blocks.numUnits(), UnitCost());
    // Kernels: forward as planned; backward of a GEMM kernel is one product
    // per gradient plus one kernel for its fused epilogue's gradients.
    for (const Kernel &K : Plan.Kernels) {
      const unsigned Head = K.Head;
      UnitCost &U = Units[Blocks.UnitOf[Head]];
      const bool Flash = A.FlashAttention && K.Attention;
      const double Fwd = forwardSeconds(K);
      U.Forward += Fwd;
      const double Bwd = kernelBackward(K);
      if (Flash && O.Cp > 1 && O.CpComm == ContextExchange::Ring)
        addContextExchange(ringOf(K, Fwd, Bwd), U);
      const TpRole Role = Blocks.Tp[Head];
      if (Role == TpRole::Column || Role == TpRole::Row) {
        U.TpGemmForward += Fwd;
        U.TpGemmBackward += Bwd;
      }
      const bool Core = Blocks.AttentionCore[Head];
      const bool InBlock = Blocks.inBlock(Head);
      if (O.Recomp == Recompute::Full && InBlock)
        U.Recompute += Fwd;
      else if (O.Recomp == Recompute::Selective && Core && !Flash)
        U.Recompute += Fwd;
      U.Backward += Bwd;
      if (Flash)
        U.Saved += logSumExpBytes(K) * activationScale(Head);
    }
    if (O.Cp > 1 && O.CpComm == ContextExchange::AllToAll) {
      const std::vector<ContextAllToAllTerms> T = headExchanges();
      for (unsigned I = 0; I < Blocks.numUnits(); ++I)
        addHeadExchange(T[I], Blocks.isBlock(I), Units[I]);
    }
    if (O.Ep > 1)
      for (unsigned I = 0; I < Blocks.numUnits(); ++I)
        addExpertExchange(I, Units[I]);
    // Tensor-parallel communication per micro-batch.
    if (O.Tp > 1)
      for (unsigned I = 0; I < Blocks.numUnits(); ++I) {
        double Fwd = 0, Bwd = 0;
        for (const ir::Value *V : Blocks.ForwardReduced[I])
          Fwd += tpExchange(V);
        for (const ir::Value *V : Blocks.BackwardReduced[I]) {
          Bwd += tpExchange(V);
          // Sequence parallelism keeps a column GEMM's input sharded, so
          // backward all-gathers it again for the weight gradient
          // (Korthikanti et al. 2022, section 4.2.2).
          if (O.SequenceParallel)
            Bwd += cost::collectiveSeconds(cost::Collective::AllGather,
                                           V->numElements() * elementBytes(),
                                           TpGroup);
        }
        const bool InBlock = Blocks.isBlock(I);
        // Sequence parallelism adds the mirror exchanges of the column
        // inputs in forward and of the row outputs in backward; the pairs
        // above already count both halves.
        // Under TpCommOverlap each exchange runs in Tp chunks against the
        // GEMM it feeds or follows: the first chunk, and what outlasts the
        // unit's tensor-parallel GEMMs in that direction, stay exposed.
        double HiddenF = 0, HiddenB = 0;
        if (O.TpCommOverlap) {
          const double Pipelined = 1.0 - 1.0 / O.Tp;
          HiddenF = std::min(Fwd * Pipelined, Units[I].TpGemmForward);
          HiddenB = std::min(Bwd * Pipelined, Units[I].TpGemmBackward);
        }
        Units[I].TpComm = Fwd - HiddenF + Bwd - HiddenB;
        Units[I].TpForward = Fwd - HiddenF;
        Units[I].TpOverlapped = HiddenF + HiddenB;
        if (O.Recomp == Recompute::Full && InBlock) {
          Units[I].TpComm += Fwd - HiddenF;
          Units[I].TpOverlapped += HiddenF;
        }
      }
    // Parameters, saved activations, inputs.
    for (const auto &N : G.nodes()) {
      UnitCost &U = Units[Blocks.UnitOf[N->index()]];
      // Sequence parallelism splits activations, not the replicated
      // parameters (norms, row biases).
      const bool Expert = Blocks.Expert[N->index()];
      const double Params =
          Work.Nodes[N->index()].Params *
          (Blocks.Tp[N->index()] == TpRole::Replicated ? 1.0 : 1.0 / O.Tp) /
          (Expert ? O.Ep : 1);
      U.Params += Params;
      if (Expert && O.Ep > 1)
        U.ExpertParams += Params;
      U.ParamTensors += Work.Nodes[N->index()].ParamTensors;
      for (const ir::Value *Out : N->outputs())
        if (Out && !neverStored(Out))
          U.Largest =
              std::max(U.Largest, valueBytes(Out, activationScale(N->index())));
    }
    for (const SavedTensor &S : Back.Saved) {
      const ir::Node *P = S.Value->producer();
      const unsigned Owner = P ? P->index() : S.Node;
      // Recomputed from the core's inputs, or never stored
      // (FlashAttention).
      if (P && Blocks.AttentionCore[Owner] &&
          (O.Recomp == Recompute::Selective || inFlashKernel(Owner)))
        continue;
      // An expert's tokens, and its results, at the experts' capacity.
      const double Tokens = Blocks.Expert[Owner] || Blocks.Expert[S.Node]
                                ? O.ExpertCapacity
                                : 1.0;
      const double Scale = activationScale(Owner) * Tokens;
      const double Bytes =
          S.Mask ? S.bytes() * Scale : valueBytes(S.Value, Scale);
      Units[Blocks.UnitOf[S.Node]].Saved += Bytes;
    }
    // Full recomputation keeps only what enters each block.
    for (const auto &N : G.nodes()) {
      const unsigned U = Blocks.UnitOf[N->index()];
      for (const ir::Value *In : N->inputs()) {
        // A load-time constant (a causal mask) is no activation to keep.
        if (!In || !In->producer() || !ir::isFloatingPoint(In->type()) ||
            Plan.isLoadTimeConstant(In))
          continue;
        const unsigned From = Blocks.UnitOf[In->producer()->index()];
        if (From != U && Seen.insert({In, U}).second)
          Units[U].InputBytes +=
              valueBytes(In, (O.SequenceParallel ? 1.0 / O.Tp : 1.0) / O.Cp);
      }
    }
  }

  /// Chunks as ranges of units; chunk c runs on stage c % pp.
  llvm::Expected<std::vector<std::pair<unsigned, unsigned>>> partition() {
    // check() refused more chunks than blocks.
    const unsigned L = Blocks.NumBlocks;
    const unsigned NumChunks = O.Pp * O.Vp;
    std::vector<std::pair<unsigned, unsigned>> Chunks;
    if (NumChunks == 1) {
      Chunks.push_back({0, Blocks.numUnits() - 1});
      return Chunks;
    }
    std::vector<unsigned> Sizes(NumChunks, L / NumChunks);
    if (!O.ChunkBlocks.empty()) {
      uint64_t Sum = 0;
      for (unsigned B : O.ChunkBlocks)
        Sum += B;
      if (O.ChunkBlocks.size() != NumChunks ||
          std::count(O.ChunkBlocks.begin(), O.ChunkBlocks.end(), 0u) ||
          Sum != L)
        return fail(llvm::formatv(
            "the stage split gives {0} chunks of {1} blocks in all, but pp "
            "{2} x vp {3} needs {4} chunks of at least one block, {5} in all",
            O.ChunkBlocks.size(), Sum, O.Pp, O.Vp, NumChunks, L));
      Sizes = O.ChunkBlocks;
    } else if (O.Split == Partition::Even) {
      if (L % NumChunks)
        return fail(llvm::formatv(
            "an even split of {0} blocks into pp {1} x vp {2} = {3} chunks "
            "is impossible; use --partition balanced or other degrees",
            L, O.Pp, O.Vp, NumChunks));
    } else {
      Sizes = balance(NumChunks);
    }
    unsigned First = 1;
    for (unsigned I = 0; I < NumChunks; ++I) {
      unsigned Last = First + Sizes[I] - 1;
      Chunks.push_back({I == 0 ? 0 : First,
                        I + 1 == NumChunks ? Blocks.NumBlocks + 1 : Last});
      First = Last + 1;
    }
    return Chunks;
  }

  /// Block counts per chunk minimising the slowest stage (each stage's
  /// chunks are summed), by trying every bound on a chunk's time between
  /// the largest block and the total, in binary search over the greedy
  /// fill.
  std::vector<unsigned> balance(unsigned NumChunks) const {
    const unsigned L = Blocks.NumBlocks;
    std::vector<double> T(L + 2);
    for (unsigned U = 0; U < L + 2; ++U)
      T[U] = (*Units)[U].total();
    // Prologue and epilogue ride with the first and last block.
    std::vector<double> B(T.begin() + 1, T.begin() + 1 + L);
    B.front() += T.front();
    B.back() += T.back();
    // Greedy fill under a cap on a chunk's time; fails when the blocks do
    // not fit in NumChunks chunks under it.
    auto Fill = [&](double Cap, std::vector<unsigned> &Sizes) {
      Sizes.assign(NumChunks, 0);
      unsigned C = 0;
      double Acc = 0;
      for (unsigned I = 0; I < L; ++I) {
        const unsigned Left = L - I;
        const unsigned ChunksAfter = NumChunks - C - 1;
        const bool Full = Acc + B[I] > Cap;
        if (Sizes[C] > 0 && C + 1 < NumChunks &&
            (Full || Left <= ChunksAfter)) {
          ++C;
          Acc = 0;
        }
        if (Acc + B[I] > Cap && Sizes[C] > 0)
          return false;
        Sizes[C]++;
        Acc += B[I];
      }
      return C + 1 == NumChunks;
    };
    double Lo = *std::max_element(B.begin(), B.end()), Hi = 0;
    for (double X : B)
      Hi += X;
    std::vector<unsigned> Best(NumChunks, L / NumChunks), Sizes;
    for (unsigned I = 0; I < L % NumChunks; ++I)
      Best[NumChunks - 1 - I]++;
    for (int Iter = 0; Iter < 60; ++Iter) {
      const double Mid = (Lo + Hi) / 2;
      if (Fill(Mid, Sizes)) {
        Best = Sizes;
        Hi = Mid;
      } else {
        Lo = Mid;
      }
    }
    return Best;
  }

  llvm::Expected<TrainReport>
  assemble(const std::vector<std::pair<unsigned, unsigned>> &Chunks) {
    TrainReport R;
    R.Devices = Layout.ranks();
    R.ModelBlocks = Blocks.NumBlocks;
    R.BlocksFromStructure = Blocks.FromStructure;
    R.MicroBatches = MicroBatches;
    R.GlobalBatch = GlobalBatch;
    R.Device = Dev.Name;
    R.CapacityBytes = Dev.mainMemory().CapacityBytes;
    const ModelStateBytes States = modelStateBytes(
        O.Optimizer, trainingStorageType(O.DType), O.Fp32Gradients);
    const double Wbytes = States.Weights, Gbytes = States.Gradients;
    // ZeRO shards over a data-parallel group with its context ranks, which
    // hold the same parameters (Megatron-Core's distributed optimizer).
    const double Dp = double(O.Dp) * O.Cp;
    std::vector<std::string> MemoryNotes; // per stage, with O.Explain
    for (unsigned S = 0; S < O.Pp; ++S) {
      StageReport St;
      St.Stage = S;
      St.Device = Dev.Name;
      double ChunkActivation = 0, ChunkInputs = 0, MaxBlockSaved = 0,
             MaxUnitParams = 0;
      for (unsigned C = S; C < Chunks.size(); C += O.Pp) {
        auto [First, Last] = Chunks[C];
        St.Chunks.push_back({First, Last});
        for (unsigned U = First; U <= Last; ++U) {
          const UnitCost &UC = (*Units)[U];
          St.ForwardSeconds += UC.Forward;
          St.BackwardSeconds += UC.Backward;
          St.RecomputeSeconds += UC.Recompute;
          St.TpCommSeconds += UC.TpComm;
          St.TpForwardSeconds += UC.TpForward;
          St.TpOverlappedSeconds += UC.TpOverlapped;
          St.CpCommSeconds += UC.CpComm;
          St.CpForwardSeconds += UC.CpForward;
          St.CpOverlappedSeconds += UC.CpOverlapped;
          St.EpCommSeconds += UC.EpComm;
          St.EpForwardSeconds += UC.EpForward;
          St.Params += UC.Params;
          St.ExpertParams += UC.ExpertParams;
          St.ParamTensors += UC.ParamTensors;
          ChunkActivation += UC.Saved;
          ChunkInputs += UC.InputBytes;
          MaxBlockSaved = std::max(MaxBlockSaved, UC.Saved);
          St.WorkspaceBytes = std::max(St.WorkspaceBytes, UC.Largest);
          MaxUnitParams = std::max(MaxUnitParams, UC.Params);
          if (Blocks.isBlock(U))
            ++St.Blocks;
        }
      }
      // Micro-batches (chunk forwards) in flight: all of them under GPipe,
      // which runs every forward before the first backward; under 1F1B
      // the warm-up depth.
      const int64_t MaxFlight = int64_t(MicroBatches) * O.Vp;
      int64_t Flight = O.Schedule == PipelineSchedule::GPipe ? MaxFlight
                       : O.Vp == 1
                           ? int64_t(O.Pp - S)
                           : int64_t(O.Vp - 1) * O.Pp + 2 * (O.Pp - S - 1) + 1;
      Flight = std::max<int64_t>(1, std::min(Flight, MaxFlight));
      St.InFlight = Flight;
      const double PerChunk = ChunkActivation / O.Vp;
      if (O.Recomp == Recompute::Full)
        St.ActivationsBytes = Flight * (ChunkInputs / O.Vp) + MaxBlockSaved;
      else
        St.ActivationsBytes = Flight * PerChunk;
      St.WeightsBytes = St.Params * Wbytes / (O.Zero >= 3 ? Dp : 1);
      // ZeRO 3 computes a unit on its gathered parameters while the next
      // unit's are gathered (FSDP's prefetch): two units whole, less the
      // shard already counted in the weights.
      const double Gathered =
          O.Zero >= 3 && Dp > 1 ? 2 * MaxUnitParams * Wbytes * (1 - 1 / Dp) : 0;
      St.WorkspaceBytes += Gathered;
      St.GradientsBytes = shardedParams(St, O.Zero >= 2) * Gbytes;
      St.OptimizerBytes = shardedParams(St, O.Zero >= 1) * States.Optimizer;
      if (O.Explain) {
        MemoryTerms T;
        T.States = States;
        T.KeptPerMicroBatch = PerChunk;
        T.InputsPerMicroBatch = ChunkInputs / O.Vp;
        T.LargestBlockSaved = MaxBlockSaved;
        T.GatheredParamBytes = Gathered;
        MemoryNotes.push_back(explainMemory(St, O, T));
      }
      R.Stages.push_back(std::move(St));
    }
    // The slowest stage sets the pace.
    unsigned Slow = 0;
    for (unsigned S = 1; S < R.Stages.size(); ++S)
      if (R.Stages[S].microBatchSeconds() > R.Stages[Slow].microBatchSeconds())
        Slow = S;
    const StageReport &SS = R.Stages[Slow];
    if (O.Explain && O.Tp > 1)
      R.CommExplain = explainTensorParallel(SS, Blocks, O, TpGroup);
    const double T = SS.microBatchSeconds();
    const double M = MicroBatches;
    // Fill and drain: each stage but the slowest adds its own micro-batch
    // time (Alpa's pipeline latency, Zheng et al. OSDI 2022: the stages'
    // sum plus (m - 1) times the slowest, exact when the slowest stage is
    // the last, an upper bound of the simulated 1F1B otherwise), divided by
    // vp when interleaved: Megatron-LM's (pp - 1) / vp x T on equal stages.
    double Others = 0;
    for (unsigned S = 0; S < R.Stages.size(); ++S)
      if (S != Slow)
        Others += R.Stages[S].microBatchSeconds();
    R.BubbleSeconds = Others / O.Vp;
    // Activations between stages: the largest tensor crossing one of the
    // stages' cuts (a CNN's early cuts carry far more than its late ones).
    if (O.Pp > 1) {
      double Largest = 0;
      for (const StageReport &St : R.Stages)
        for (const auto &Chunk : St.Chunks)
          Largest = std::max(Largest, A.cutBytesAfter(Chunk.second));
      const double Boundary = Largest * byteScale();
      // Megatron's scatter/gather: each tensor-parallel rank sends 1/tp
      // (of its context rank's tokens).
      const double Message = Boundary / O.Tp / O.Cp;
      R.P2pSeconds = 2 * M * O.Vp * cost::p2pSeconds(Message, *P2pLink);
      if (O.Explain)
        R.CommExplain.push_back(
            explainPipelineMessages(MicroBatches, O, Message, *P2pLink));
    }
    if (O.Explain && O.Cp > 1)
      if (std::string Line = explainContextExchange(SS); !Line.empty())
        R.CommExplain.push_back(std::move(Line));
    if (O.Explain && O.Ep > 1)
      if (std::string Line = explainExpertParallel(SS); !Line.empty())
        R.CommExplain.push_back(std::move(Line));
    if (Dp > 1)
      addDataParallelExchange(R, SS, Wbytes, Gbytes);
    // Optimizer: one elementwise pass over the shard.
    R.OptimizerSeconds =
        optimizerStepSeconds(shardedParams(SS, O.Zero >= 1), SS.ParamTensors,
                             States, O.Optimizer, O.PerTensorOptimizer, Dev);
    if (A.Unfused && MicroBatches > 1)
      R.GradAccumSeconds = (M - 1) * gradientAccumulationPassSeconds(
                                         SS.Params, SS.ParamTensors,
                                         trainingStorageType(O.DType), Dev);
    R.TpCommSeconds = M * SS.TpCommSeconds;
    R.TpOverlappedSeconds = M * SS.TpOverlappedSeconds;
    R.CpCommSeconds = M * SS.CpCommSeconds;
    R.CpOverlappedSeconds = M * SS.CpOverlappedSeconds;
    R.EpCommSeconds = M * SS.EpCommSeconds;
    R.ComputeSeconds =
        M * (SS.ForwardSeconds + SS.BackwardSeconds + SS.RecomputeSeconds) +
        R.GradAccumSeconds;
    R.CommSeconds = R.TpCommSeconds + R.TpOverlappedSeconds + R.CpCommSeconds +
                    R.CpOverlappedSeconds + R.EpCommSeconds + R.P2pSeconds +
                    R.DpCommSeconds;
    R.ExposedCommSeconds = R.TpCommSeconds + R.CpCommSeconds + R.EpCommSeconds +
                           R.P2pSeconds + R.DpExposedSeconds;
    R.StepSeconds = M * T + R.BubbleSeconds + R.P2pSeconds +
                    R.GradAccumSeconds + R.DpExposedSeconds +
                    R.OptimizerSeconds;
    R.SamplesPerSecond = GlobalBatch / R.StepSeconds;
    // Model FLOPs: forward and backward of every node, unsharded, per
    // sample of the micro-batch, times the global batch.
    const double PerMicro = A.FlopsPerMicroBatch;
    R.ModelFlops = PerMicro * M * O.Dp;
    R.TflopsPerDevice = R.ModelFlops / R.StepSeconds / R.Devices / 1e12;
    applyInputRate(R, O, C.Groups.front().devicesPerNode());
    if (O.Timeline) {
      R.Trace = timeline(R);
      // The first stage's host loads the next step's samples while this
      // one trains (stream 2); an input-bound step ends when it is done.
      if (R.InputSeconds > 0) {
        R.Trace.Events.push_back(
            {"load next step's samples", "input", 0, 2, 0, R.InputSeconds, -1});
        R.Trace.End = std::max(R.Trace.End, R.InputSeconds);
      }
    }
    for (unsigned S = 0; S < R.Stages.size(); ++S)
      if (R.Stages[S].peakBytes() > R.Stages[R.PeakStage].peakBytes())
        R.PeakStage = S;
    R.Fits = R.peak().peakBytes() <= R.CapacityBytes;
    if (O.Explain && R.PeakStage < MemoryNotes.size())
      R.MemoryExplain = MemoryNotes[R.PeakStage];
    // Per node, for the report's rows (whole kernels: one rank is the
    // whole model only without tensor or context parallelism).
    if (O.Explain && O.Tp == 1 && O.Cp == 1) {
      R.NodeBackwards.resize(G.numNodes());
      for (const Kernel &K : Plan.Kernels) {
        TrainReport::NodeBackward &B = R.NodeBackwards[K.Head];
        B.Seconds = kernelBackward(K, &B.Explain);
      }
    }
    return R;
  }

  /// The parameters of stage St whose states one device keeps: all, or
  /// under a ZeRO stage that shards them (Sharded) the dense ones' share of
  /// a data-parallel group with its context ranks and the experts' share
  /// of the Dp x Cp / Ep ranks holding the same experts.
  double shardedParams(const StageReport &St, bool Sharded) const {
    if (!Sharded)
      return St.Params;
    const double Dp = double(O.Dp) * O.Cp;
    return (St.Params - St.ExpertParams) / Dp + St.ExpertParams * O.Ep / Dp;
  }

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
                               double Wbytes, double Gbytes) const {
    const double M = MicroBatches;
    const double GradBytes = SS.Params * Gbytes;
    std::vector<cost::LayerBackward> Layers, ExpertLayers;
    for (auto C = SS.Chunks.rbegin(); C != SS.Chunks.rend(); ++C)
      for (unsigned U = C->second + 1; U-- > C->first;) {
        const UnitCost &UC = (*Units)[U];
        Layers.push_back({UC.Backward + UC.Recompute + UC.TpComm -
                              UC.TpForward + UC.CpComm - UC.CpForward +
                              UC.EpComm - UC.EpForward,
                          (UC.Params - UC.ExpertParams) * Gbytes});
        ExpertLayers.push_back(
            {Layers.back().Seconds, UC.ExpertParams * Gbytes});
      }
    const cost::Collective Kind = O.Zero == 0 ? cost::Collective::AllReduce
                                              : cost::Collective::ReduceScatter;
    cost::OverlapTime T = cost::overlapGradientExchange(
        Layers, O.BucketBytes, DpGroup, O.GradCompression,
        cost::CommAlgorithm::Auto, Kind);
    // The experts' gradients: over the ranks holding the same experts, in
    // buckets of their own on the same stream (Megatron-Core keeps an
    // expert buffer beside the dense one).
    const bool ExpertReplicas = O.Ep > 1 && ExpertDpGroup.Size > 1;
    cost::OverlapTime TE;
    double ExpertGather = 0;
    if (ExpertReplicas) {
      TE = cost::overlapGradientExchange(ExpertLayers, O.BucketBytes,
                                         ExpertDpGroup, O.GradCompression,
                                         cost::CommAlgorithm::Auto, Kind);
      R.DpExpertCommSeconds = TE.CommSeconds;
      if (O.Zero > 0)
        ExpertGather =
            cost::collectiveSeconds(cost::Collective::AllGather,
                                    SS.ExpertParams * Wbytes, ExpertDpGroup);
      R.DpExpertCommSeconds += ExpertGather;
      T.ExposedSeconds =
          cost::sharedStreamExposed(T.Buckets, TE.Buckets, T.ComputeSeconds);
      T.CommSeconds += TE.CommSeconds;
    }
    R.DpWireBytes = cost::compressedBytes(GradBytes, O.GradCompression);
    llvm::Optional<cost::OverlapTime> Buckets; // --overlap-param-gather's
    double Comm = T.CommSeconds, Exposed = T.ExposedSeconds;
    if (O.Zero > 0) {
      R.DpParamBytes = SS.Params * Wbytes;
      double Gather = cost::collectiveSeconds(
                          cost::Collective::AllGather,
                          (SS.Params - SS.ExpertParams) * Wbytes, DpGroup) +
                      ExpertGather;
      double GatherExposed = Gather;
      if (O.OverlapParamGather && (O.Zero == 1 || O.Zero == 2)) {
        // The next step's first forward through the stage, unit by unit,
        // each waiting for its parameters' bucket.
        std::vector<cost::LayerBackward> Forward, ExpertForward;
        for (const auto &C : SS.Chunks)
          for (unsigned U = C.first; U <= C.second; ++U) {
            const UnitCost &UC = (*Units)[U];
            const double Seconds =
                UC.Forward + UC.TpForward + UC.CpForward + UC.EpForward;
            Forward.push_back(
                {Seconds, (UC.Params - UC.ExpertParams) * Wbytes});
            ExpertForward.push_back({Seconds, UC.ExpertParams * Wbytes});
          }
        Buckets = cost::overlapParameterGather(Forward, O.BucketBytes, DpGroup);
        Gather = Buckets->CommSeconds;
        GatherExposed = Buckets->ExposedSeconds;
        R.DpGatherBuckets = Buckets->Buckets.size();
        // The experts' buckets gather over their own ranks, beside the
        // dense ones (Megatron-Core's expert buffer has its own bucket
        // group): the forward waits for the later of the two.
        if (ExpertReplicas) {
          const cost::OverlapTime E = cost::overlapParameterGather(
              ExpertForward, O.BucketBytes, ExpertDpGroup);
          R.DpExpertCommSeconds += E.CommSeconds - ExpertGather;
          Gather += E.CommSeconds;
          GatherExposed = std::max(GatherExposed, E.ExposedSeconds);
        }
      }
      R.DpScatterSeconds = T.CommSeconds;
      R.DpScatterExposedSeconds = T.ExposedSeconds;
      R.DpGatherSeconds = Gather;
      R.DpGatherExposedSeconds = GatherExposed;
      const double F = SS.ForwardSeconds, B = SS.BackwardSeconds;
      const auto Over = [](double C, double Hidden) {
        return std::max(0.0, C - Hidden);
      };
      if (O.Zero == 1) {
        Comm = T.CommSeconds + Gather;
        Exposed = T.ExposedSeconds + GatherExposed;
      } else if (O.Zero == 2) {
        Comm = M * T.CommSeconds + Gather;
        Exposed = M * T.ExposedSeconds + GatherExposed;
      } else {
        Comm = M * (T.CommSeconds + 2 * Gather);
        Exposed =
            M * (Over(Gather, F) +
                 std::max(T.ExposedSeconds, Over(Gather + T.CommSeconds, B)));
      }
    }
    R.DpCommSeconds = Comm;
    R.DpExposedSeconds = Exposed;
    if (O.Explain) {
      // T's buckets are the dense ones still (the experts' are TE's).
      for (std::string &Line : explainDataParallelCollectives(
               T, O, (SS.Params - SS.ExpertParams) * Wbytes, DpGroup,
               Buckets ? &*Buckets : nullptr))
        R.CommExplain.push_back(std::move(Line));
      if (ExpertReplicas)
        for (std::string &Line : explainExpertGradients(
                 TE, O, SS.ExpertParams * Wbytes, ExpertDpGroup))
          R.CommExplain.push_back(std::move(Line));
    }
  }

  /// One micro-batch's times of each stage's chunks, their tensor-parallel
  /// exchanges included.
  ChunkTimes chunkTimes(const TrainReport &R) const {
    ChunkTimes Times;
    for (const StageReport &S : R.Stages) {
      std::vector<StageTimes> &Chunks = Times.emplace_back();
      for (const auto &[First, Last] : S.Chunks) {
        StageTimes &C = Chunks.emplace_back();
        for (unsigned U = First; U <= Last; ++U) {
          const UnitCost &UC = (*Units)[U];
          C.Forward += UC.Forward + UC.TpForward + UC.CpForward + UC.EpForward;
          C.Backward += UC.Backward + UC.Recompute + UC.TpComm - UC.TpForward +
                        UC.CpComm - UC.CpForward + UC.EpComm - UC.EpForward;
        }
      }
    }
    return Times;
  }

  Timeline timeline(const TrainReport &R) const {
    const ChunkTimes Times = chunkTimes(R);
    const double Transfer = R.MicroBatches > 0 && O.Vp > 0
                                ? R.P2pSeconds / (2.0 * R.MicroBatches * O.Vp)
                                : 0;
    std::vector<StageTimes> Whole;
    for (const std::vector<StageTimes> &S : Times) {
      StageTimes &W = Whole.emplace_back();
      for (const StageTimes &C : S) {
        W.Forward += C.Forward;
        W.Backward += C.Backward;
      }
    }
    Timeline T =
        O.Schedule == PipelineSchedule::GPipe
            ? simulateGPipe(Whole, R.MicroBatches, Transfer)
            : simulateOneFOneB(Times, R.MicroBatches,
                               std::vector<double>(Times.size() - 1, Transfer));
    // Under --overlap-param-gather this step's parameters are gathered as
    // its first forward starts (the previous step's optimizer updated
    // them): the forward waits what the step pays for it, so everything
    // else starts that much later.
    const bool Overlapped = O.OverlapParamGather && R.DpGatherBuckets > 0;
    const double Wait = Overlapped ? R.DpGatherExposedSeconds : 0;
    if (Wait > 0)
      for (TimelineEvent &E : T.Events)
        E.Start += Wait;
    T.End += Wait;
    // Eager accumulation passes run inside the micro-batches' backwards;
    // drawn as one span after the last, where the step pays for them.
    const double End = T.End + R.GradAccumSeconds;
    // The exchange after the backward: all of it, or without the gather.
    const double After =
        Overlapped ? R.DpCommSeconds - R.DpGatherSeconds : R.DpCommSeconds;
    const double AfterExposed = R.DpExposedSeconds - Wait;
    for (unsigned S = 0; S < R.Stages.size(); ++S) {
      if (R.GradAccumSeconds > 0)
        T.Events.push_back({"gradient accumulation", "compute", S, 0, T.End,
                            R.GradAccumSeconds, -1});
      if (Overlapped)
        T.Events.push_back({"parameter all-gather (during the first forward)",
                            "comm", S, 1, 0, R.DpGatherSeconds, -1});
      if (After > 0)
        T.Events.push_back({"data-parallel gradients", "comm", S, 1,
                            End - std::min(End, After - AfterExposed), After,
                            -1});
      T.Events.push_back({"optimizer step", "optimizer", S, 0,
                          End + AfterExposed, R.OptimizerSeconds, -1});
    }
    T.End = End + AfterExposed + R.OptimizerSeconds;
    return T;
  }

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
};

} // namespace

TrainingAnalysis::TrainingAnalysis(const ir::Graph &G, bool Unfused,
                                   bool FlashAttention)
    : G(&G), Unfused(Unfused), FlashAttention(FlashAttention),
      Work(trainingWork(G)), Back(computeBackward(G, Work)),
      Plan(trainingKernels(G, Work, Back, Unfused, FlashAttention)),
      Blocks(analyzeBlocks(G, Work)), TpSizes(tpSplitSizes(G, Work, Blocks)),
      HasAttentionCore(llvm::is_contained(Blocks.AttentionCore, true)) {
  CutBytes.assign(Blocks.numUnits(), 0.0);
  for (const auto &N : G.nodes()) {
    FlopsPerMicroBatch +=
        Work.Nodes[N->index()].Flops + Back.Work[N->index()].Flops;
    const unsigned To = Blocks.UnitOf[N->index()];
    for (const ir::Value *In : N->inputs()) {
      // A weight's view is not sent, nor a load-time constant (a mask):
      // every stage has its own.
      if (!In || !In->producer() || !ir::isFloatingPoint(In->type()) ||
          parameterBehind(In) || Plan.isLoadTimeConstant(In))
        continue;
      const unsigned From = Blocks.UnitOf[In->producer()->index()];
      if (From == To)
        continue;
      const double Bytes = 4.0 * In->numElements();
      for (unsigned U = std::min(From, To); U < std::max(From, To); ++U)
        CutBytes[U] = std::max(CutBytes[U], Bytes);
    }
  }
}

void applyInputRate(TrainReport &R, const TrainOptions &O,
                    unsigned DevicesPerNode) {
  if (!(O.InputSamplesPerSecond > 0) || R.GlobalBatch <= 0 || R.Devices == 0)
    return;
  const unsigned PerNode = std::max(1u, DevicesPerNode);
  const unsigned Nodes = (R.Devices + PerNode - 1) / PerNode;
  const unsigned Loading = std::max(1u, std::min(std::max(1u, O.Dp), Nodes));
  R.InputSeconds = double(R.GlobalBatch) / Loading / O.InputSamplesPerSecond;
  R.InputBound = R.InputSeconds > R.StepSeconds;
  if (!R.InputBound)
    return;
  R.InputWaitSeconds = R.InputSeconds - R.StepSeconds;
  R.StepSeconds = R.InputSeconds;
  R.SamplesPerSecond = R.GlobalBatch / R.StepSeconds;
  R.TflopsPerDevice = R.ModelFlops / R.StepSeconds / R.Devices / 1e12;
}

llvm::Error contextParallelNeedsFlashAttention(unsigned Cp) {
  return fail(llvm::formatv("--cp {0}: context parallelism runs ring "
                            "attention in FlashAttention-style kernels "
                            "(Transformer Engine's); add --flash-attention, "
                            "or exchange heads instead with --cp-comm a2a",
                            Cp));
}

llvm::Error headExchangeNeedsAttention(unsigned Cp) {
  return fail(llvm::formatv("--cp {0} --cp-comm a2a: the model has no "
                            "attention core (a softmax between two products "
                            "of activations) to exchange heads around; use "
                            "--cp 1",
                            Cp));
}

llvm::Error expertsDoNotSplit(unsigned Ep, int64_t Experts) {
  return fail(llvm::formatv("--ep {0}: a mixture of {1} experts does not "
                            "split over {0} ranks; use an ep that divides {1}",
                            Ep, Experts));
}

llvm::Expected<TrainReport> predictTraining(const TrainingAnalysis &A,
                                            const hw::Cluster &C,
                                            const TrainOptions &O) {
  return Trainer(A, C, O).run();
}

llvm::Expected<TrainReport> predictTraining(const ir::Graph &G,
                                            const hw::Cluster &C,
                                            const TrainOptions &O) {
  return predictTraining(TrainingAnalysis(G, O.Unfused, O.FlashAttention), C,
                         O);
}

} // namespace perfc
