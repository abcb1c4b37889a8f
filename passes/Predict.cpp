//===- Predict.cpp - From a graph to a Report -----------------------------===//
#include "passes/Predict.h"

#include "hwdb/Cluster.h"
#include "hwdb/Device.h"
#include "hwdb/Units.h"
#include "ir/Graph.h"
#include "passes/CacheReuse.h"
#include "passes/CpuLayout.h"
#include "passes/Fp8Recipe.h"
#include "passes/InferenceMemory.h"
#include "passes/MaxBatch.h"
#include "passes/PipelineInference.h"
#include "passes/StorageType.h"
#include "passes/TpShard.h"
#include "passes/TpSizes.h"
#include "passes/TrainingForward.h"
#include "passes/WorkPass.h"

#include "llvm/Support/FormatVariadic.h"

namespace perfc {

llvm::Optional<ir::DType> computeTypeNamed(llvm::StringRef S) {
  if (S == "fp8")
    return ir::DType::F8E4M3;
  if (S == "fp32" || S == "tf32" || S == "fp16" || S == "bf16" || S == "int8")
    return ir::parseDType(S);
  return llvm::None;
}

namespace {

NodeTime zeroTime(const char *Exec, std::string Explain) {
  NodeTime T;
  T.Bound = "none";
  T.Exec = Exec;
  T.Explain = std::move(Explain);
  return T;
}

/// The peak memory of one run against the device's main memory; a warning
/// where it does not fit (reported, never hidden).
void addMemory(const ir::Graph &G, const KernelPlan &Plan,
               const PredictOptions &O, llvm::ArrayRef<KernelShare> Shares,
               Report &R) {
  const unsigned Ep = O.ExpertParallel ? O.ExpertParallel->Size : 1;
  InferenceMemoryReport M = memoryReport(
      G, Plan, *O.Device, inferenceMemory(G, Plan, O.StorageType, Shares), Ep);
  if (O.Explain)
    M.Explain = explain(M.Usage, M.PeakAt, Plan.Kernels.size(), O.StorageType) +
                (M.MaxBatch ? "; " + explainMaxBatch(M, Ep) : std::string());
  if (!M.Fits)
    R.Warnings.push_back(
        {"",
         llvm::formatv("one run needs {0} at its peak{6} (weights {1}, "
                       "activations {2} at '{3}') but {4} has {5} of "
                       "memory: use a smaller batch{7} or sequence, a "
                       "narrower --storage-type, or a larger device",
                       hw::formatDataBytes(M.Usage.PeakBytes),
                       hw::formatDataBytes(M.Usage.WeightsBytes),
                       hw::formatDataBytes(M.Usage.ActivationsBytes), M.PeakAt,
                       M.Device, hw::formatDataBytes(M.CapacityBytes),
                       Shares.empty()     ? ""
                       : O.ExpertParallel ? " per expert-parallel rank"
                                          : " per tensor-parallel rank",
                       M.MaxBatch && *M.MaxBatch > 0
                           ? llvm::formatv(" (at most {0})", *M.MaxBatch).str()
                           : std::string())
             .str()});
  R.Memory = std::move(M);
}

/// The link a group's ranks exchange over: inside a node, else between.
std::string linkName(const cost::CommGroup &Group) {
  return Group.Intra   ? Group.Intra->Name
         : Group.Inter ? Group.Inter->Name
                       : std::string();
}

/// A split inference's exchanges (PredictOptions::TensorParallel,
/// ExpertParallel), each after the kernel that writes its tensor: a kernel
/// of the communication library on the model's stream, which pays a launch
/// like any other kernel. Each one's seconds go to that kernel's
/// TpCommSeconds and, with Explain, its formula to its explanation.
class Exchanges {
public:
  Exchanges(const KernelPlan &Plan, const PredictOptions &O,
            const cost::CommGroup &Group, llvm::StringRef Ranks, Report &R)
      : Plan(Plan), O(O), Group(Group), Ranks(Ranks), R(R),
        Launch(O.Device->LaunchOverheadSeconds),
        LaunchText(Launch > 0
                       ? " + " +
                             hw::formatQuantity(Launch, hw::Quantity::Time) +
                             " launch"
                       : std::string()) {}

  /// Kind of Bytes (one rank's) of V after the kernel that writes it (a
  /// view's source's); false, and nothing priced, where no kernel does.
  bool add(cost::Collective Kind, const ir::Value *V, double Bytes) {
    const ir::Node *P = Plan.dataRoot(V)->producer();
    if (!P || Plan.KernelOf[P->index()] < 0)
      return false;
    NodeTime &T = *R.Nodes[Plan.Kernels[Plan.KernelOf[P->index()]].Head].Time;
    double Seconds = 0;
    if (O.Explain) {
      const cost::CommTime CT = cost::collectiveTime(Kind, Bytes, Group);
      Seconds = CT.Seconds + Launch;
      T.Explain += llvm::formatv(" [then an {0} of '{1}' over the {2} {3} "
                                 "ranks: {4}{5}]",
                                 cost::name(Kind), V->name(), Group.Size, Ranks,
                                 CT.Explain, LaunchText)
                       .str();
      if (Seconds > Largest) {
        Largest = Seconds;
        LargestExplain = llvm::formatv("{0} of '{1}': {2}{3}", cost::name(Kind),
                                       V->name(), CT.Explain, LaunchText);
      }
    } else {
      Seconds = cost::collectiveSeconds(Kind, Bytes, Group) + Launch;
    }
    T.TpCommSeconds += Seconds;
    Total += Seconds;
    return true;
  }

  double Total = 0;
  /// With Explain: the slowest exchange's formula.
  std::string LargestExplain;

private:
  const KernelPlan &Plan;
  const PredictOptions &O;
  const cost::CommGroup &Group;
  const llvm::StringRef Ranks;
  Report &R;
  const double Launch;
  const std::string LaunchText;
  double Largest = -1;
};

/// Tensor-parallel inference: the exchanges after the kernels that write
/// a reduced or gathered output (PredictOptions::TensorParallel), added to
/// those kernels' TpCommSeconds; returns their sum.
double addTensorParallelExchanges(const ir::Graph &G, const KernelPlan &Plan,
                                  const BlockInfo &Blocks,
                                  const PredictOptions &O, double KernelSeconds,
                                  Report &R) {
  const cost::CommGroup &Group = *O.TensorParallel;
  TensorParallelReport TP;
  TP.Degree = Group.Size;
  TP.Link = linkName(Group);
  TP.KernelSeconds = KernelSeconds;
  // Row-parallel outputs and the embedding's lookups are summed over the
  // ranks; the vocabulary-parallel head's logits are gathered, as
  // TensorRT-LLM's and vLLM's output layers gather them for sampling.
  std::vector<std::pair<const ir::Value *, cost::Collective>> Exchanged;
  for (const auto &Unit : Blocks.ForwardReduced)
    for (const ir::Value *V : Unit)
      Exchanged.push_back({V, cost::Collective::AllReduce});
  for (const auto &N : G.nodes())
    if (Blocks.Tp[N->index()] == TpRole::Vocab && N->opType() != "Gather" &&
        N->output(0))
      Exchanged.push_back({N->output(0), cost::Collective::AllGather});
  llvm::sort(Exchanged, [](const auto &A, const auto &B) {
    return A.first->index() < B.first->index();
  });
  Exchanges Priced(Plan, O, Group, "tensor-parallel", R);
  for (const auto &[V, Kind] : Exchanged) {
    const double Bytes =
        storedBytes(static_cast<double>(V->bytes()), V->type(), O.StorageType);
    if (!Priced.add(Kind, V, Bytes))
      continue;
    if (Kind == cost::Collective::AllReduce) {
      ++TP.AllReduces;
      TP.AllReduceBytes += Bytes;
    } else {
      ++TP.AllGathers;
      TP.AllGatherBytes += Bytes;
    }
  }
  const double Total = Priced.Total;
  TP.CommSeconds = Total;
  if (O.Explain) {
    TP.Explain =
        llvm::formatv(
            "one rank of {0} (Megatron-LM's split, as TensorRT-LLM and vLLM "
            "run it): column-parallel GEMMs compute 1/{0} of their output "
            "columns, row-parallel ones 1/{0} of their input rows, attention "
            "1/{0} of the heads and its key/value cache, the embedding and "
            "the output head 1/{0} of the vocabulary; norms and residual adds "
            "run whole on every rank. Then {1} all-reduce{6} ({2} in all) and "
            "{3} all-gather{7} ({4}) over {5}, each after the kernel that "
            "writes it, on the same stream (none overlaps a kernel) and "
            "launched as a kernel",
            Group.Size, TP.AllReduces, hw::formatDataBytes(TP.AllReduceBytes),
            TP.AllGathers, hw::formatDataBytes(TP.AllGatherBytes),
            TP.Link.empty() ? std::string("the group's link") : TP.Link,
            TP.AllReduces == 1 ? "" : "s", TP.AllGathers == 1 ? "" : "s")
            .str();
    if (!Priced.LargestExplain.empty())
      TP.Explain += "; the largest: " + Priced.LargestExplain;
  }
  R.TensorParallel = std::move(TP);
  return Total;
}

/// Expert-parallel inference (PredictOptions::ExpertParallel): each
/// mixture's tokens go to their experts' ranks and come back, an all-to-all
/// each way of one rank's share of the experts' inputs and outputs, after
/// the kernels that write them; added to those kernels' TpCommSeconds.
/// Returns their sum.
double addExpertParallelExchanges(const KernelPlan &Plan,
                                  const BlockInfo &Blocks,
                                  const PredictOptions &O, double KernelSeconds,
                                  Report &R) {
  const cost::CommGroup &Group = *O.ExpertParallel;
  ExpertParallelReport EP;
  EP.Degree = Group.Size;
  EP.Link = linkName(Group);
  EP.KernelSeconds = KernelSeconds;
  Exchanges Priced(Plan, O, Group, "expert-parallel", R);
  for (const auto &Unit : Blocks.ExpertExchanged)
    for (const ir::Value *V : Unit) {
      // The dispatched rows are the experts' input (often a view of the
      // copy that groups them): sent before the kernel that reads them,
      // charged to the kernel that writes them.
      const double Bytes = storedBytes(static_cast<double>(V->bytes()),
                                       V->type(), O.StorageType) /
                           Group.Size;
      if (!Priced.add(cost::Collective::AllToAll, V, Bytes))
        continue;
      ++EP.AllToAlls;
      EP.AllToAllBytes += Bytes;
    }
  EP.CommSeconds = Priced.Total;
  if (O.Explain) {
    EP.Explain =
        llvm::formatv(
            "one rank of {0} (data-parallel attention with expert "
            "parallelism, as SGLang and vLLM serve mixtures of experts): "
            "attention and the dense layers run on 1/{0} of the batch with "
            "all their weights and 1/{0} of the key/value cache; each "
            "mixture's experts are split over the ranks (1/{0} of them, and "
            "of the experts a step reaches, on each, routing balanced), and "
            "every rank's tokens go to their experts and come back: {1} "
            "all-to-all{2} ({3} of one rank's buffers) over {4}, each after "
            "the kernel that writes it, on the same stream and launched as a "
            "kernel",
            Group.Size, EP.AllToAlls, EP.AllToAlls == 1 ? "" : "s",
            hw::formatDataBytes(EP.AllToAllBytes),
            EP.Link.empty() ? std::string("the group's link") : EP.Link)
            .str();
    if (!Priced.LargestExplain.empty())
      EP.Explain += "; the largest: " + Priced.LargestExplain;
  }
  const double Total = EP.CommSeconds;
  R.ExpertParallel = std::move(EP);
  return Total;
}

void addTime(const ir::Graph &G, const GraphWork &Work, const PredictOptions &O,
             Report &R) {
  const KernelPlan Plan = [&] {
    // A training step's kernels are trainingFusion's, whatever O.Fusion
    // lists beyond Fuse and FlashAttention.
    if (O.Training)
      return trainingKernels(G, Work, computeBackward(G, Work), !O.Fusion.Fuse,
                             O.Fusion.FlashAttention);
    FusionOptions Fusion = O.Fusion;
    if (Fusion.ConvActivations.empty())
      Fusion.ConvActivations = O.Device->ConvActivations;
    return planKernels(G, Work, Fusion);
  }();
  cost::TimeOptions TO = O.Time;
  TO.Notes = TO.Notes && O.Explain;
  const std::vector<LevelShares> Residency =
      O.Training ? std::vector<LevelShares>()
                 : cacheResidency(G, Plan, *O.Device, O.StorageType);
  // Tensor parallelism: each kernel's share on one rank, as its head's
  // role splits it (a kernel's fused members go with their head).
  const unsigned Tp = O.TensorParallel ? O.TensorParallel->Size : 1;
  const unsigned Ep = O.ExpertParallel ? O.ExpertParallel->Size : 1;
  // The blocks also say which GEMMs the FP8 recipe runs in FP8.
  const bool Recipe = O.Training && O.Fp8Recipe;
  llvm::Optional<BlockInfo> OwnBlocks;
  const BlockInfo *Blocks = O.Split && !O.Training ? &O.Split->Blocks : nullptr;
  std::vector<KernelShare> Shares;
  const bool Pipelined = O.PipelineParallel && O.PipelineParallel->Stages > 1;
  if ((Tp > 1 || Ep > 1 || Recipe || Pipelined) && !Blocks) {
    OwnBlocks = analyzeBlocks(G, Work);
    Blocks = &*OwnBlocks;
  }
  if (Tp > 1 || Ep > 1)
    Shares.resize(Plan.Kernels.size());
  KernelSummary Summary;
  double Total = 0;
  for (size_t I = 0; I < Plan.Kernels.size(); ++I) {
    const Kernel &K = Plan.Kernels[I];
    // One copy of the kernel's work on the library's fast path (no split).
    const OpWork KW = [&] {
      const OpWork Own = kernelWork(K, O.Fusion.FlashAttention);
      if (Ep > 1) {
        // A rank's 1/Ep of the batch, of the experts (whose weights it
        // alone holds: their products are split by expert) and of every
        // activation; the dense weights whole.
        const bool Expert = Blocks->Expert[K.Head];
        const double Share = 1.0 / Ep;
        Shares[I] = {Expert ? Share : 1.0, Share};
        return storedWork(
            shardWork(Own, Expert ? TpRole::Sharded : TpRole::Replicated, Ep,
                      Share, 1.0),
            O.StorageType);
      }
      if (Tp <= 1)
        return storedWork(Own, O.StorageType);
      const TpRole Role = Blocks->Tp[K.Head];
      const double Share = tpShare(*Blocks, K.Head, Tp, false);
      // A row-parallel GEMM's output is whole after its all-reduce, the
      // vocabulary's after its all-gather.
      Shares[I] = {Share, Role == TpRole::Column || Role == TpRole::Sharded
                              ? Share
                              : 1.0};
      OpWork Rank = shardWork(Own, Role, Tp, Share, 1.0);
      if (Role == TpRole::Sharded)
        Rank.BytesRead += (1 - Share) * wholeReadBytes(G, Plan, K);
      return storedWork(Rank, O.StorageType);
    }();
    if (!Residency.empty())
      TO.LevelShare = Residency[I];
    const bool Fp8 = Recipe && !(O.Fusion.FlashAttention && K.Attention) &&
                     Blocks->inBlock(K.Head) &&
                     isFp8Gemm(*G.nodes()[K.Head], Work.Nodes[K.Head], Plan);
    // An FP8 GEMM as the training step prices it (Fp8Recipe.h).
    const Fp8GemmTime F8 =
        Fp8 ? fp8GemmTime(KW, /*Backward=*/false, ir::DType::F8E4M3, *O.Device,
                          TO)
            : Fp8GemmTime{cost::opTime(KW, *O.Device, TO), {}};
    const cost::OpTime &T = F8.Gemm, &Cast = F8.Cast;
    Summary.KernelBytes += KW.BytesRead + KW.BytesWritten;
    Total += T.Seconds + Cast.Seconds;
    addBoundTime(Summary, T);
    R.Nodes[K.Head].Time = kernelTime(T, K, O.Explain);
    if (Fp8) {
      addBoundTime(Summary, Cast);
      NodeTime &NT = *R.Nodes[K.Head].Time;
      NT.Fp8CastSeconds = Cast.Seconds;
      NT.Seconds += Cast.Seconds;
      if (O.Explain)
        NT.Explain += " [FP8 recipe: plus the cast of its activation "
                      "operand, a kernel of its own: " +
                      cost::explain(Cast) + "]";
    }
    for (unsigned M : K.Members)
      if (M != K.Head) {
        NodeTime F =
            zeroTime("fused", O.Explain ? "0 s (fused into the kernel of '" +
                                              R.Nodes[K.Head].Name +
                                              "', whose time includes it)"
                                        : std::string());
        F.FusedInto = R.Nodes[K.Head].Name;
        R.Nodes[M].Time = std::move(F);
      }
  }
  for (unsigned I = 0; I < Plan.Exec.size(); ++I) {
    if (Plan.Exec[I] == NodeExec::View) {
      ++Summary.Views;
      R.Nodes[I].Time =
          zeroTime("view", "0 s (view: metadata only, no data moved, no "
                           "kernel)");
    } else if (Plan.Exec[I] == NodeExec::Folded) {
      ++Summary.Folded;
      R.Nodes[I].Time = zeroTime(
          "folded", "0 s (constant-folded: its inputs are constants or "
                    "static shapes, so runtimes compute it once at load)");
    }
  }
  // ONNX Runtime's NCHWc reorders on a CPU that blocks convolutions.
  const LayoutReorders Layout =
      O.Training ? LayoutReorders() : nchwcReorders(G, Plan, *O.Device);
  for (size_t K = 0; K < Layout.Count.size(); ++K) {
    if (Layout.Count[K] == 0)
      continue;
    NodeTime &T = *R.Nodes[Plan.Kernels[K].Head].Time;
    T.ReorderSeconds = Layout.Seconds[K];
    T.Reorders = Layout.Count[K];
    T.Seconds += Layout.Seconds[K];
    if (O.Explain)
      T.Explain += llvm::formatv(" [plus {0} for {1} NCHWc reorder(s) of its "
                                 "tensors, kernels of their own]",
                                 hw::formatQuantity(Layout.Seconds[K],
                                                    hw::Quantity::Time),
                                 Layout.Count[K])
                       .str();
  }
  Total += Layout.TotalSeconds;
  Summary.MemoryBoundSeconds += Layout.TotalSeconds;
  if (Tp > 1)
    Total += addTensorParallelExchanges(G, Plan, *Blocks, O, Total, R);
  if (Ep > 1)
    Total += addExpertParallelExchanges(Plan, *Blocks, O, Total, R);
  Summary.Kernels = Plan.Kernels.size();
  Summary.AttentionKernels =
      llvm::count_if(Plan.Kernels, [](const Kernel &K) { return K.Attention; });
  Summary.Fused = Plan.numFused();
  R.LatencySeconds = Total;
  R.Kernels = Summary;
  if (Pipelined)
    addPipelineStages(G, Plan, *Blocks, O, Shares, R);
  else if (O.Memory)
    addMemory(G, Plan, O, Shares, R);
}

} // namespace

InferenceMemoryReport memoryReport(const ir::Graph &G, const KernelPlan &Plan,
                                   const hw::Device &D, InferenceMemory Usage,
                                   unsigned BatchMultiple) {
  InferenceMemoryReport M;
  M.Usage = std::move(Usage);
  M.Device = D.Name;
  M.CapacityBytes = D.Memory.empty() ? 0 : D.Memory[0].CapacityBytes;
  M.Fits = M.CapacityBytes <= 0 || M.Usage.PeakBytes <= M.CapacityBytes;
  if (!Plan.Kernels.empty())
    M.PeakAt = G.nodes()[Plan.Kernels[M.Usage.PeakKernel].Head]->name().str();
  if (llvm::Optional<int64_t> Batch = batchOf(G))
    setMaxBatch(M, *Batch, BatchMultiple);
  return M;
}

NodeTime kernelTime(const cost::OpTime &T, const Kernel &K, bool Explain,
                    llvm::StringRef Where) {
  NodeTime NT;
  NT.Seconds = T.Seconds;
  NT.ComputeSeconds = T.ComputeSeconds;
  NT.MemorySeconds = T.MemorySeconds;
  NT.OverheadSeconds = T.OverheadSeconds;
  NT.LayoutSeconds = T.LayoutSeconds;
  NT.Im2colSeconds = T.Im2colSeconds;
  NT.WinogradReduction = T.WinogradReduction;
  NT.Bound = cost::name(T.Bound);
  if (Explain)
    NT.Explain = cost::explain(T);
  if (Explain && !Where.empty())
    NT.Explain += " [on " + Where.str() + "]";
  if (Explain && K.Members.size() > 1)
    NT.Explain +=
        " [kernel of " + std::to_string(K.Members.size()) + " fused nodes]";
  if (Explain && K.AppendsTo)
    NT.Explain += " [appends its new rows to the cache '" +
                  K.AppendsTo->name().str() +
                  "' in place: the output shares its buffer]";
  NT.PeakFlops = T.PeakFlops;
  NT.ComputeEfficiency = T.ComputeEfficiency;
  NT.Bandwidth = T.Bandwidth;
  NT.MemoryLevel = T.MemoryLevel;
  NT.MemoryEfficiency = T.MemoryEfficiency;
  NT.Unit = T.Unit;
  NT.ComputeType = ir::name(T.ComputeType).str();
  NT.Unsupported = T.Unsupported;
  return NT;
}

void addBoundTime(KernelSummary &S, const cost::OpTime &T) {
  switch (T.Bound) {
  case cost::Bound::Compute:
    S.ComputeBoundSeconds += T.Seconds;
    break;
  case cost::Bound::Memory:
    S.MemoryBoundSeconds += T.Seconds;
    break;
  case cost::Bound::Overhead:
    S.OverheadBoundSeconds += T.Seconds;
    break;
  }
}

void describeNodes(const ir::Graph &G, Report &R) {
  size_t I = 0;
  for (const auto &N : G.nodes()) {
    if (I == R.Nodes.size())
      break;
    NodeReport &NR = R.Nodes[I++];
    NR.Name = N->name().str();
    NR.Op = N->domain().empty() ? N->opType().str()
                                : (N->domain() + ":" + N->opType()).str();
    if (const ir::Value *Out = N->output(0))
      NR.OutputShape = Out->shape().str();
  }
}

llvm::Expected<cost::CommGroup>
tensorParallelGroup(const hw::Cluster &C, unsigned Tp, llvm::StringRef What) {
  const auto Fail = [](std::string Message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Message);
  };
  if (Tp > C.numDevices())
    return Fail(llvm::formatv("{0} {1} splits the model over {1} devices, but "
                              "'{2}' has {3}: give a cluster with at least {1} "
                              "(e.g. dgx-a100)",
                              What, Tp, C.Name, C.numDevices()));
  // The first Tp ranks, node-major: the first kind of device of the first
  // nodes. A node of several kinds (a SoC) puts other kinds among them.
  const hw::NodeGroup &First = C.Groups.front();
  if (First.Devices.size() > 1 && Tp > First.Devices.front().Count)
    return Fail(llvm::formatv(
        "{0} {1}: the ranks of a split are devices of one kind, but '{2}' "
        "has {3} {4} before its {5}; to spread a model over a SoC's "
        "processors use --place",
        What, Tp, C.Name, First.Devices.front().Count,
        First.Devices.front().Dev->Name, First.Devices[1].Dev->Name));
  auto Group = cost::groupOf(C, Tp, /*Stride=*/1);
  if (!Group)
    return Fail((What + " " + llvm::Twine(Tp) + ": " +
                 llvm::toString(Group.takeError()))
                    .str());
  return *Group;
}

llvm::Expected<InferencePipeline> pipelineStages(const hw::Cluster &C,
                                                 unsigned Pp, unsigned Tp) {
  const auto Fail = [](std::string Message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Message);
  };
  const uint64_t Needed = uint64_t(Pp) * Tp;
  const std::string Ask =
      Tp > 1 ? llvm::formatv("--pp {0} with --tp {1}", Pp, Tp).str()
             : llvm::formatv("--pp {0}", Pp).str();
  if (Needed > C.numDevices())
    return Fail(llvm::formatv(
        "{0} runs {1} stages of {2} device{3} ({4} in all), but '{5}' has "
        "{6}: give a cluster with more (e.g. dgx-h100-superpod) or fewer "
        "stages",
        Ask, Pp, Tp, Tp == 1 ? "" : "s", Needed, C.Name, C.numDevices()));
  const hw::NodeGroup &Front = C.Groups.front();
  const unsigned PerNode = Front.devicesPerNode();
  const uint64_t OfFirstKind = Front.Devices.size() > 1
                                   ? Front.Devices.front().Count
                                   : uint64_t(Front.Count) * PerNode;
  if (Needed > OfFirstKind)
    return Fail(llvm::formatv(
        "{0}: the stages' devices are of one kind, but '{1}' has {2} {3} "
        "before other devices; to spread a model over a SoC's processors "
        "use --place",
        Ask, C.Name, OfFirstKind, Front.Devices.front().Dev->Name));
  InferencePipeline Pipe;
  Pipe.Stages = Pp;
  for (unsigned S = 1; S < Pp; ++S) {
    // Stage S - 1's last rank and stage S's first, node-major.
    const uint64_t First = uint64_t(S) * Tp;
    const bool SameNode = (First - 1) / PerNode == First / PerNode;
    const hw::Link *L = SameNode
                            ? (Front.IntraNode ? &*Front.IntraNode : nullptr)
                            : (Front.InterNode ? &*Front.InterNode : nullptr);
    if (!L)
      return Fail(llvm::formatv("{0}: cluster '{1}' has no link between "
                                "the devices of stages {2} and {3}",
                                Ask, C.Name, S, S + 1));
    Pipe.Links.push_back(L);
  }
  return Pipe;
}

llvm::Error checkPipelineParallel(const ir::Graph &, const InferenceSplit &S,
                                  unsigned Pp) {
  if (Pp <= 1)
    return llvm::Error::success();
  const unsigned NB = S.Blocks.NumBlocks;
  if (NB < Pp)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        NB == 0 ? llvm::formatv("--pp {0}: the model has no repeated blocks "
                                "(layers) to split into stages; use --pp 1",
                                Pp)
                      .str()
                : llvm::formatv("--pp {0}: the model has {1} block{2} "
                                "(layers), and each stage holds at least "
                                "one; give --pp at most {1}",
                                Pp, NB, NB == 1 ? "" : "s")
                      .str());
  return llvm::Error::success();
}

llvm::Optional<int64_t> batchOf(const ir::Graph &G) {
  if (G.inputs().empty() || !G.inputs().front())
    return llvm::None;
  const ir::Shape &S = G.inputs().front()->shape();
  if (!S.isRanked() || S.rank() == 0 || S.size(0) <= 0)
    return llvm::None;
  return S.size(0);
}

PredictOptions figuresOnly(PredictOptions O) {
  O.Explain = false;
  O.NodeNames = false;
  return O;
}

double samplesPerStep(const ir::Graph &G) {
  return double(batchOf(G).getValueOr(1));
}

llvm::Error checkTensorParallel(const ir::Graph &G, unsigned Tp) {
  if (Tp <= 1)
    return llvm::Error::success();
  return analyzeTensorParallel(G, Tp).takeError();
}

InferenceSplit analyzeInferenceSplit(const ir::Graph &G) {
  InferenceSplit S;
  S.Work = computeWork(G);
  S.Blocks = analyzeBlocks(G, S.Work);
  return S;
}

llvm::Expected<InferenceSplit> analyzeTensorParallel(const ir::Graph &G,
                                                     unsigned Tp) {
  InferenceSplit S = analyzeInferenceSplit(G);
  if (llvm::Error E = checkTensorParallel(G, S, Tp))
    return std::move(E);
  return std::move(S);
}

llvm::Error checkTensorParallel(const ir::Graph &G, const InferenceSplit &S,
                                unsigned Tp) {
  const GraphWork &Work = S.Work;
  const BlockInfo &Blocks = S.Blocks;
  if (Tp <= 1)
    return llvm::Error::success();
  if (!Blocks.HasTensorParallelPattern)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("--tp {0}: the model has no Megatron tensor-parallel "
                      "pattern (a MatMul on weights feeding, through "
                      "non-GEMM ops, another MatMul on weights within a "
                      "block), so there is nothing to split; use --tp 1",
                      Tp));
  return checkTpSizes(G, Work, Blocks, tpSplitSizes(G, Work, Blocks), Tp,
                      /*SequenceParallel=*/false);
}

llvm::Error checkExpertParallel(const ir::Graph &G, unsigned Ep) {
  if (Ep <= 1)
    return llvm::Error::success();
  return analyzeExpertParallel(G, Ep).takeError();
}

llvm::Expected<InferenceSplit> analyzeExpertParallel(const ir::Graph &G,
                                                     unsigned Ep) {
  InferenceSplit S = analyzeInferenceSplit(G);
  if (llvm::Error E = checkExpertParallel(G, S, Ep))
    return std::move(E);
  return std::move(S);
}

llvm::Error checkExpertParallel(const ir::Graph &G, const InferenceSplit &S,
                                unsigned Ep) {
  if (Ep <= 1)
    return llvm::Error::success();
  const auto Fail = [](const llvm::Twine &Message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   Message.str());
  };
  const BlockInfo &Blocks = S.Blocks;
  if (Blocks.ExpertCounts.empty())
    return Fail("--ep " + llvm::Twine(Ep) +
                ": the model has no mixture of experts (perfc zoo --experts "
                "writes one); use --tp to split a dense model");
  for (int64_t E : Blocks.ExpertCounts)
    if (E % Ep != 0)
      return Fail("--ep " + llvm::Twine(Ep) + " does not divide the " +
                  llvm::Twine(E) +
                  " experts of a mixture (each rank holds whole experts); "
                  "use an --ep that divides " +
                  llvm::Twine(E));
  const ir::Value *First = G.inputs().empty() ? nullptr : G.inputs().front();
  const int64_t Batch = batchOf(G).getValueOr(0);
  if (Batch <= 0 || Batch % Ep != 0)
    return Fail("--ep " + llvm::Twine(Ep) +
                " splits the batch over its ranks (data-parallel "
                "attention), but input '" +
                (First ? First->name() : llvm::StringRef("?")) +
                "' has a batch of " + llvm::Twine(Batch) +
                ": give a --batch that " + llvm::Twine(Ep) +
                " divides (all the ranks' sequences together)");
  return llvm::Error::success();
}

static llvm::Error noAttention() {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "--flash-attention: the model has no attention (a product of two "
      "activations, as Q.K^T, led through a softmax to a second, as P.V); "
      "drop the flag");
}

llvm::Error checkFlashAttention(const ir::Graph &G) {
  FusionOptions F;
  F.FlashAttention = true;
  const KernelPlan Plan = planKernels(G, computeWork(G), F);
  if (llvm::any_of(Plan.Kernels, [](const Kernel &K) { return K.Attention; }))
    return llvm::Error::success();
  return noAttention();
}

llvm::Error checkFlashAttention(const ir::Graph &G, const Report &R) {
  if (!R.Kernels)
    return checkFlashAttention(G);
  return R.Kernels->AttentionKernels > 0 ? llvm::Error::success()
                                         : noAttention();
}

Report predictWork(const ir::Graph &G) { return predict(G, PredictOptions()); }

Report predict(const ir::Graph &G, const PredictOptions &Options) {
  // A tensor-parallel split was checked on the same work: reused.
  llvm::Optional<GraphWork> Own;
  if (Options.Training || !Options.Split)
    Own = Options.Training ? trainingWork(G) : computeWork(G);
  const GraphWork &Work = Own ? *Own : Options.Split->Work;
  Report R;
  R.Total = Work.Total;
  R.Nodes.resize(G.numNodes());
  if (Options.NodeNames)
    describeNodes(G, R);
  R.Warnings = Own ? std::move(Own->Warnings) : Work.Warnings;
  if (Options.Device)
    addTime(G, Work, Options, R);
  // Each node's work, once addTime is done with the graph's: moved out of
  // the work made here (no copy of every formula string), copied from a
  // split's, which its caller keeps.
  for (const auto &N : G.nodes())
    R.Nodes[N->index()].Work =
        Own ? std::move(Own->Nodes[N->index()]) : Work.Nodes[N->index()];
  return R;
}

} // namespace perfc
