//===- CpuLayout.cpp - ONNX Runtime's NCHWc layout and its reorders -------===//
#include "passes/CpuLayout.h"

#include "costmodels/Roofline.h"
#include "hwdb/Device.h"
#include "ir/Graph.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace perfc {

namespace {

bool isPool(llvm::StringRef Op) {
  return llvm::StringSwitch<bool>(Op)
      .Cases("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
             true)
      .Default(false);
}

bool isRank4(const ir::Value *V) {
  return V && V->shape().isRanked() && V->shape().rank() == 4;
}

class LayoutPlanner {
public:
  LayoutPlanner(const ir::Graph &G, const KernelPlan &Plan, const hw::Device &D)
      : G(G), Plan(Plan), D(D) {}

  LayoutReorders run() {
    const size_t N = Plan.Kernels.size();
    L.Blocked.assign(N, false);
    L.Seconds.assign(N, 0);
    L.Count.assign(N, 0);
    std::vector<llvm::SmallVector<const ir::Value *, 4>> Inputs(N);
    for (size_t K = 0; K < N; ++K) {
      Inputs[K] = externalInputs(K);
      L.Blocked[K] = blocked(K, Inputs[K]);
    }
    for (size_t K = 0; K < N; ++K)
      for (const ir::Value *V : Inputs[K]) {
        const bool FromBlocked = producerBlocked(V);
        if (L.Blocked[K] ? !FromBlocked && !readsNchwDirectly(K, V)
                         : FromBlocked)
          reorder(K, V);
      }
    // Graph outputs leave the blocked layout.
    for (const ir::Value *V : G.outputs())
      if (V && producerBlocked(V))
        reorder(static_cast<size_t>(kernelOf(V)), Plan.dataRoot(V));
    return std::move(L);
  }

private:
  const ir::Graph &G;
  const KernelPlan &Plan;
  const hw::Device &D;
  LayoutReorders L;
  llvm::DenseSet<const ir::Value *> Reordered;

  int kernelOf(const ir::Value *V) const {
    const ir::Node *P = Plan.dataRoot(V)->producer();
    return P ? Plan.KernelOf[P->index()] : -1;
  }

  bool producerBlocked(const ir::Value *V) const {
    const int K = kernelOf(V);
    return K >= 0 && L.Blocked[static_cast<size_t>(K)];
  }

  bool isRuntimeValue(const ir::Value *V) const {
    if (!V || V->isConstant())
      return false;
    const ir::Node *P = Plan.dataRoot(V)->producer();
    return !P || Plan.Exec[P->index()] == NodeExec::Kernel;
  }

  /// Tensors the kernel reads that another kernel (or the graph input)
  /// produces, each once.
  llvm::SmallVector<const ir::Value *, 4> externalInputs(size_t K) const {
    llvm::SmallVector<const ir::Value *, 4> Ins;
    const int Self = static_cast<int>(K);
    for (unsigned M : Plan.Kernels[K].Members)
      for (const ir::Value *In : G.nodes()[M]->inputs()) {
        if (!isRuntimeValue(In) || kernelOf(In) == Self)
          continue;
        if (!llvm::is_contained(Ins, In))
          Ins.push_back(In);
      }
    return Ins;
  }

  const ir::Node &head(size_t K) const {
    return *G.nodes()[Plan.Kernels[K].Head];
  }

  /// Ins: the kernel's external inputs (externalInputs).
  bool blocked(size_t K, llvm::ArrayRef<const ir::Value *> Ins) const {
    const Kernel &Ker = Plan.Kernels[K];
    const ir::Node &H = head(K);
    const llvm::StringRef Op = H.opType();
    if (Ker.Work.Class == OpClass::Conv)
      return H.domain().empty() && Op == "Conv" &&
             Ker.Work.ConvInPerGroup > 0 && isRank4(H.output(0)) &&
             cost::runsBlocked(Ker.Work, D.ConvChannelBlock,
                               D.ConvChannelAlign);
    // Pooling, and a BatchNormalization of its own (ORT turns it into a
    // 1x1 depthwise NCHWc convolution), of a blocked 4-D tensor.
    if (isPool(Op) || Op == "BatchNormalization")
      return isRank4(H.input(0)) && producerBlocked(H.input(0));
    // A Pad before a pool or convolution (exporters write count-excluding
    // average pooling so): ORT's pad fusion folds it into its consumer.
    if (Op == "Pad")
      return isRank4(H.input(0)) && producerBlocked(H.input(0)) &&
             H.getString("mode", "constant") == "constant" &&
             llvm::all_of(H.output(0)->users(), [](const ir::Node *U) {
               return isPool(U->opType()) || U->opType() == "Conv";
             });
    if (Op == "Concat") {
      if (H.getInt("axis", 0) != 1 || !isRank4(H.output(0)))
        return false;
      for (const ir::Value *In : H.inputs())
        if (!In || !producerBlocked(In) || !isRank4(In) ||
            In->shape().size(1) % int64_t(D.ConvChannelBlock) != 0)
          return false;
      return true;
    }
    if (Ker.Work.Class != OpClass::Elementwise || !isRank4(H.output(0)))
      return false;
    // Every tensor the kernel reads from elsewhere: blocked, and of the
    // output's shape (ORT has no NCHWc broadcast).
    if (Ins.empty())
      return false;
    for (const ir::Value *In : Ins)
      if (!producerBlocked(In) || !(In->shape() == H.output(0)->shape()))
        return false;
    return true;
  }

  /// A blocked convolution with fewer input channels than a block reads
  /// its NCHW input directly (the first layer of an image model).
  bool readsNchwDirectly(size_t K, const ir::Value *V) const {
    const Kernel &Ker = Plan.Kernels[K];
    return Ker.Work.Class == OpClass::Conv && head(K).input(0) == V &&
           Ker.Work.ConvInPerGroup < D.ConvChannelBlock;
  }

  /// Prices V's reorder, charged to kernel K, once per tensor.
  void reorder(size_t K, const ir::Value *V) {
    if (!Reordered.insert(Plan.dataRoot(V)).second)
      return;
    // A data-movement kernel: the tensor read and written once.
    OpWork W;
    W.Class = OpClass::DataMovement;
    W.Type = V->type();
    W.BytesRead = W.BytesWritten = static_cast<double>(V->bytes());
    cost::TimeOptions O;
    O.Notes = false;
    const double Seconds = cost::opTime(W, D, O).Seconds;
    L.Seconds[K] += Seconds;
    ++L.Count[K];
    L.TotalSeconds += Seconds;
    ++L.Total;
  }
};

} // namespace

LayoutReorders nchwcReorders(const ir::Graph &G, const KernelPlan &Plan,
                             const hw::Device &D) {
  if (D.Kind != hw::DeviceKind::Cpu || D.ConvChannelBlock == 0)
    return LayoutReorders();
  return LayoutPlanner(G, Plan, D).run();
}

} // namespace perfc
