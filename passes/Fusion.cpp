//===- Fusion.cpp - Which nodes run as which kernels ----------------------===//
#include "passes/Fusion.h"

#include "ir/Graph.h"
#include "passes/Views.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace perfc {
namespace {

/// Ops whose outputs are not a function of their inputs: never folded.
bool isNondeterministic(const ir::Node &N) {
  return llvm::StringSwitch<bool>(N.opType())
      .Cases("RandomNormal", "RandomUniform", "RandomNormalLike",
             "RandomUniformLike", "Multinomial", "Bernoulli", true)
      .Default(false);
}

bool canHeadFusion(OpClass C) {
  return C == OpClass::Gemm || C == OpClass::Conv ||
         C == OpClass::Elementwise || C == OpClass::Normalization ||
         C == OpClass::Reduction;
}

class Planner {
public:
  Planner(const ir::Graph &G, const GraphWork &W, const FusionOptions &O)
      : G(G), Work(W), Options(O) {
    Plan.Exec.assign(G.numNodes(), NodeExec::Kernel);
    Plan.KernelOf.assign(G.numNodes(), -1);
    // At most one kernel per node: no reallocation moves the kernels.
    Plan.Kernels.reserve(G.numNodes());
  }

  KernelPlan run() {
    for (const auto &N : G.nodes())
      place(*N);
    if (Options.Fuse)
      fuseCacheAppends();
    if ((Options.Fuse && Options.FuseAttention) || Options.FlashAttention)
      fuseAttention();
    dropEmptyKernels();
    for (Kernel &K : Plan.Kernels)
      combineWork(K);
    return std::move(Plan);
  }

private:
  bool foldable(const ir::Node &N) const {
    if (!Options.FoldConstants || isNondeterministic(N) ||
        !N.subgraphs().empty() || !N.domain().empty())
      return false;
    // Shapes are static after import, so Shape and Size are constants.
    if (N.opType() == "Shape" || N.opType() == "Size")
      return true;
    for (const ir::Value *In : N.inputs())
      if (In && !Plan.isLoadTimeConstant(In))
        return false;
    return true;
  }

  /// The node computing V's data, looking through views; null for graph
  /// inputs and constants.
  const ir::Node *dataProducer(const ir::Value *V) const {
    return dataRoot(V)->producer();
  }

  int kernelOfValue(const ir::Value *V) const {
    const ir::Node *P = dataProducer(V);
    return P ? Plan.KernelOf[P->index()] : -1;
  }

  bool canJoin(const ir::Node &N, const Kernel &K) const {
    if (K.Members.size() >= MaxFusedNodes)
      return false;
    const OpWork &Mine = Work.Nodes[N.index()];
    const OpClass HeadClass = Work.Nodes[K.Head].Class;
    if (!canHeadFusion(HeadClass))
      return false;
    // A training-mode Dropout starts a pointwise kernel of its own, which
    // what follows may join: no GEMM epilogue draws random numbers
    // (cuBLASLt's: bias, ReLU, GELU), and the frameworks' fused dropouts
    // are kernels of their own (Megatron-LM's bias_dropout_add, apex's
    // fused dropout-add-LayerNorm; Megatron-LM's scaled masked softmax
    // leaves the attention dropout to a kernel after it).
    if (N.opType() == "Dropout")
      return false;
    if (HeadClass == OpClass::Conv && !Options.ConvActivations.empty() &&
        (Mine.Class == OpClass::Elementwise ||
         Mine.Class == OpClass::Normalization))
      return joinsConvEpilogue(N, K);
    if (Mine.Class == OpClass::Elementwise)
      return true;
    if (Mine.Class == OpClass::Normalization)
      return Options.FoldBatchNorm && N.opType() == "BatchNormalization";
    if (Mine.Class == OpClass::Reduction)
      return HeadClass != OpClass::Gemm && HeadClass != OpClass::Conv;
    return false;
  }

  bool isConvActivation(const ir::Node &N) const {
    return llvm::is_contained(Options.ConvActivations, N.opType().str());
  }

  /// HardSwish written out, x * HardSigmoid(x) (exporters before opset 14
  /// write it so): the HardSigmoid of the pair, whose input has no other
  /// reader than the Mul. Runtimes that list HardSwish apply the pair as
  /// one activation (ONNX Runtime 1.31 fuses it into NCHWc convolutions).
  const ir::Node *hardSwishMulOf(const ir::Node &N) const {
    if (N.opType() != "HardSigmoid" || !N.input(0) || !N.output(0) ||
        !llvm::is_contained(Options.ConvActivations, "HardSwish"))
      return nullptr;
    const ir::Value *X = dataRoot(N.input(0));
    if (X->users().size() != 2 || N.output(0)->users().size() != 1)
      return nullptr;
    const ir::Node *Mul = N.output(0)->users().front();
    if (Mul->opType() != "Mul" || Mul->numInputs() != 2)
      return nullptr;
    for (const ir::Value *In : Mul->inputs())
      if (!In || (In != N.output(0) && dataRoot(In) != X))
        return nullptr;
    return Mul;
  }

  /// The node ends a convolution's epilogue: its activation (the Mul of a
  /// written-out HardSwish, not its HardSigmoid).
  bool endsConvEpilogue(const ir::Node &N) const {
    if (N.opType() == "Mul" && N.numInputs() == 2)
      for (const ir::Value *In : N.inputs())
        if (In && In->producer() && hardSwishMulOf(*In->producer()) == &N)
          return true;
    return isConvActivation(N) && !hardSwishMulOf(N);
  }

  /// A convolution's in-register epilogue on a runtime that applies only
  /// the listed activations (FusionOptions::ConvActivations).
  bool joinsConvEpilogue(const ir::Node &N, const Kernel &K) const {
    for (unsigned M : K.Members)
      if (endsConvEpilogue(*G.nodes()[M]))
        return false; // nothing after the activation
    const llvm::StringRef Op = N.opType();
    if (Op == "BatchNormalization")
      return Options.FoldBatchNorm;
    if (Op == "Add")
      return true; // bias, or a residual the kernel accumulates into
    if (hardSwishMulOf(N))
      return true;
    if (Op == "Mul" && endsConvEpilogue(N))
      return true; // HardSwish's Mul; its HardSigmoid is in this kernel
    if (Op == "Mul" || Op == "Sub" || Op == "Div") {
      // Folded into the weights: the kernel's value and constants only.
      const int Self = Plan.KernelOf[K.Head];
      unsigned Constants = 0;
      for (const ir::Value *In : N.inputs()) {
        if (!In)
          continue;
        if (Plan.isLoadTimeConstant(In))
          ++Constants;
        else if (kernelOfValue(In) != Self)
          return false;
      }
      return Constants > 0;
    }
    if (!isConvActivation(N) || !N.input(0))
      return false;
    // The activation replaces what it reads; another reader would need the
    // value before it, so the runtime keeps them apart.
    return dataRoot(N.input(0))->users().size() == 1;
  }

  void place(const ir::Node &N) {
    const unsigned Index = N.index();
    if (foldable(N)) {
      Plan.Exec[Index] = NodeExec::Folded;
      return;
    }
    if (Work.Nodes[Index].IsView) {
      Plan.Exec[Index] = NodeExec::View;
      return;
    }
    if (Options.Fuse && N.domain().empty()) {
      // Kernels this node reads from; joining one older than another would
      // make the kernels cyclic.
      int Newest = -1;
      for (const ir::Value *In : N.inputs())
        if (In)
          Newest = std::max(Newest, kernelOfValue(In));
      for (const ir::Value *In : N.inputs()) {
        if (!In)
          continue;
        const int K = kernelOfValue(In);
        if (K >= 0 && K == Newest && canJoin(N, Plan.Kernels[K])) {
          Plan.Kernels[K].Members.push_back(Index);
          Plan.KernelOf[Index] = K;
          return;
        }
      }
    }
    Kernel K;
    K.Head = Index;
    K.Members.push_back(Index);
    Plan.KernelOf[Index] = static_cast<int>(Plan.Kernels.size());
    Plan.Kernels.push_back(std::move(K));
  }

  /// A product of two activations (no weights behind either operand): a
  /// MatMul, or a two-operand Einsum that contracts like one (MaxViT's
  /// attention and other exports of torch.einsum).
  bool isActivationProduct(const ir::Node *N) const {
    if (!N || (N->opType() != "MatMul" &&
               !(N->opType() == "Einsum" && N->numInputs() == 2 &&
                 Work.Nodes[N->index()].Gemm.valid())))
      return false;
    for (const ir::Value *In : N->inputs()) {
      if (!In)
        return false;
      const ir::Value *Root = dataRoot(In);
      if (Root->isConstant() || !Root->producer() ||
          Plan.Exec[Root->producer()->index()] == NodeExec::Folded)
        return false;
    }
    return true;
  }

  bool isLayoutOp(const ir::Node *N) const {
    return N && Plan.Exec[N->index()] == NodeExec::Kernel &&
           (N->opType() == "Transpose" || N->opType() == "Split");
  }

  /// Whether every user of V (through views) is in Allowed. Users folded
  /// at load time (a Shape of a static tensor) do not read it at run time.
  bool onlyUsedBy(const ir::Value *V,
                  const llvm::SmallVectorImpl<const ir::Node *> &Allowed,
                  unsigned Depth = 0) const {
    if (V->isGraphOutput() || Depth > 16)
      return false;
    for (const ir::Node *U : V->users()) {
      if (Plan.Exec[U->index()] == NodeExec::Folded)
        continue;
      if (Plan.Exec[U->index()] == NodeExec::View) {
        for (const ir::Value *Out : U->outputs())
          if (Out && !onlyUsedBy(Out, Allowed, Depth + 1))
            return false;
      } else if (!llvm::is_contained(Allowed, U)) {
        return false;
      }
    }
    return true;
  }

  /// Merges the kernels of Nodes into kernel Into (whole kernels: every
  /// member of each joins).
  void mergeInto(int Into, llvm::ArrayRef<const ir::Node *> Nodes) {
    for (const ir::Node *N : Nodes) {
      const int From = Plan.KernelOf[N->index()];
      if (From < 0 || From == Into)
        continue;
      for (unsigned M : Plan.Kernels[From].Members) {
        Plan.Kernels[Into].Members.push_back(M);
        Plan.KernelOf[M] = Into;
      }
      Plan.Kernels[From].Members.clear();
    }
  }

  /// Key/value cache appends (Fusion.h): a two-input Concat of a graph
  /// input and new rows whose output is a graph output. The kernel writes
  /// the new rows in place and takes in their prologue (the head split and
  /// rotary embedding only it reads, as TensorRT-LLM's and vLLM's cache
  /// update kernels apply them); the projections it reads are remembered
  /// for the attention that reads the cache (one QKV GEMM).
  void fuseCacheAppends() {
    for (const auto &NPtr : G.nodes()) {
      const ir::Node *N = NPtr;
      if (N->opType() != "Concat" || N->numInputs() != 2 || !N->input(0) ||
          !N->input(1) || !N->output(0) || !N->output(0)->isGraphOutput() ||
          Plan.KernelOf[N->index()] < 0)
        continue;
      const ir::Value *Past = dataRoot(N->input(0));
      if (Past->kind() != ir::ValueKind::Input ||
          Past->type() != N->output(0)->type())
        continue;
      llvm::SmallVector<const ir::Node *, 16> Chain{N};
      llvm::SmallVector<const ir::Node *, 2> Projections;
      absorbOperand(N->input(1), Chain, Projections);
      // A packed QKV's Split is the attention's to take or leave.
      Pending.clear();
      const int Into = Plan.KernelOf[N->index()];
      mergeInto(Into, Chain);
      Plan.Kernels[Into].AppendsTo = Past;
      AppendProjections[N] = Projections;
    }
  }

  /// An op a fused attention kernel applies to an operand as it loads it:
  /// the head split (Transpose, a packed QKV's Split), the rotary position
  /// embedding between it and the product (x*cos + rotate_half(x)*sin,
  /// rotate_half a Slice, Neg and Concat), which TensorRT-LLM's attention
  /// plugin and ONNX Runtime's GroupQueryAttention (do_rotary) apply to the
  /// tiles they load, and grouped-query attention's Expand of K and V
  /// heads (those kernels read each shared head where it is). Only where
  /// its kernel runs nothing else (a bias Add fused into its GEMM is the
  /// GEMM's).
  bool isOperandPrologue(const ir::Node *N) const {
    const int K = N ? Plan.KernelOf[N->index()] : -1;
    if (K < 0)
      return false;
    for (unsigned M : Plan.Kernels[K].Members) {
      const ir::Node *Member = G.nodes()[M];
      const llvm::StringRef Op = Member->opType();
      if (!isLayoutOp(Member) && Op != "Slice" && Op != "Concat" &&
          Op != "Expand" && Work.Nodes[M].Class != OpClass::Elementwise)
        return false;
    }
    return true;
  }

  /// From an operand of an attention product back over its prologue (views,
  /// head split, rotary embedding) as far as only this attention reads it:
  /// those nodes join the attention kernel (Chain); the kernels that feed
  /// them, the projections, go to Projections.
  void absorbOperand(const ir::Value *V,
                     llvm::SmallVectorImpl<const ir::Node *> &Chain,
                     llvm::SmallVectorImpl<const ir::Node *> &Projections) {
    const size_t First = Chain.size();
    // The prologue's nodes (appended to Chain) and, for each kernel beyond
    // it, the prologue node that reads it (null: the operand itself).
    llvm::SmallVector<std::pair<const ir::Node *, const ir::Node *>, 4> Ends;
    llvm::SmallVector<std::pair<const ir::Value *, const ir::Node *>, 8> Stack{
        {V, nullptr}};
    while (!Stack.empty() && Chain.size() - First < 32) {
      const auto [X, Via] = Stack.pop_back_val();
      const ir::Node *P = dataProducer(X);
      if (!P || llvm::is_contained(Chain, P) || llvm::is_contained(Pending, P))
        continue;
      // A cache the append wrote in place: its projections are this
      // operand's.
      if (auto It = AppendProjections.find(P); It != AppendProjections.end()) {
        for (const ir::Node *E : It->second)
          Ends.push_back({E, Via});
        continue;
      }
      if (!isOperandPrologue(P)) {
        if (Plan.KernelOf[P->index()] >= 0)
          Ends.push_back({P, Via});
        continue;
      }
      Chain.push_back(P);
      for (const ir::Value *In : P->inputs())
        if (In && !Plan.isLoadTimeConstant(dataRoot(In)))
          Stack.push_back({In, P});
    }
    // Keep what only the attention and the kept nodes read, and whose
    // kernel joins whole; to a fixed point, since dropping a node exposes
    // what feeds it.
    auto Kept = [&](const ir::Node *N) {
      for (const ir::Value *Out : N->outputs())
        if (Out && !onlyUsedBy(Out, Chain))
          return false;
      for (unsigned M : Plan.Kernels[Plan.KernelOf[N->index()]].Members)
        if (!llvm::is_contained(Chain, G.nodes()[M]))
          return false;
      return true;
    };
    for (bool Changed = true; Changed;) {
      Changed = false;
      for (size_t I = First; I < Chain.size(); ++I) {
        if (Kept(Chain[I]))
          continue;
        // A Split of a packed QKV feeds all three operands: it qualifies
        // once the other operands' prologues have joined (checked after
        // all three).
        if (Chain[I]->opType() == "Split")
          Pending.push_back(Chain[I]);
        Chain.erase(Chain.begin() + I);
        Changed = true;
        break;
      }
    }
    for (const auto &[End, Via] : Ends)
      if ((!Via || llvm::is_contained(Chain, Via)) &&
          !llvm::is_contained(Projections, End))
        Projections.push_back(End);
  }

  /// The Transpose merging the heads of P.V's output, if only it reads it.
  const ir::Node *layoutConsumer(const ir::Value *V) const {
    if (!V || V->isGraphOutput() || V->users().size() != 1)
      return nullptr;
    const ir::Node *U = V->users()[0];
    return U->opType() == "Transpose" &&
                   Plan.Exec[U->index()] == NodeExec::Kernel
               ? U
               : nullptr;
  }

  /// Q, K and V projections of one input (MatMul or Gemm on a constant
  /// weight, in kernels of their own) run as one GEMM over the
  /// concatenated weights, as TensorRT and ONNX Runtime's packed-QKV
  /// attention do: one kernel, the input read once, N summed.
  bool fuseProjections(llvm::ArrayRef<const ir::Node *> Ends) {
    llvm::SmallVector<int, 3> Kernels;
    const ir::Value *Input = nullptr;
    for (const ir::Node *E : Ends) {
      const int K = Plan.KernelOf[E->index()];
      if (K < 0 || llvm::is_contained(Kernels, K))
        continue;
      const ir::Node &H = *G.nodes()[Plan.Kernels[K].Head];
      const OpWork &W = Work.Nodes[H.index()];
      if ((H.opType() != "MatMul" && H.opType() != "Gemm") || !W.Gemm.valid() ||
          H.numInputs() < 2 || !H.input(0) || !H.input(1) ||
          !Plan.isLoadTimeConstant(dataRoot(H.input(1))))
        return false;
      const ir::Value *In = dataRoot(H.input(0));
      if (Input && In != Input)
        return false;
      Input = In;
      Kernels.push_back(K);
    }
    if (Kernels.size() < 2)
      return false;
    std::sort(Kernels.begin(), Kernels.end());
    const int Into = Kernels.front();
    for (unsigned I = 1; I < Kernels.size(); ++I) {
      const int From = Kernels[I];
      ExtraN[Plan.Kernels[Into].Head] +=
          Work.Nodes[Plan.Kernels[From].Head].Gemm.N;
      for (unsigned M : Plan.Kernels[From].Members) {
        Plan.Kernels[Into].Members.push_back(M);
        Plan.KernelOf[M] = Into;
      }
      Plan.Kernels[From].Members.clear();
    }
    return true;
  }

  /// Whether the load-time constant V is computed the way causal masks are:
  /// from an outer comparison of two position vectors (k > q: GPT and
  /// Llama exports, perfc zoo), from Trilu, or from a boolean constant
  /// (HF GPT-2's tril buffer, sliced). A relative position bias (Swin,
  /// MaxViT: a Gather from a trainable table) and Swin's shifted-window
  /// mask (an equality test of region ids) are square constants too, but
  /// not triangular: their kernels skip nothing.
  bool isTriangularMask(const ir::Value *Mask) const {
    // Depth-first over the folded subgraph computing Mask, each value once.
    llvm::SmallVector<const ir::Value *, 16> Work{Mask};
    llvm::SmallPtrSet<const ir::Value *, 16> Seen{Mask};
    while (!Work.empty() && Seen.size() < 256) {
      const ir::Value *V = Work.pop_back_val();
      if (V->isConstant()) {
        if (V->type() == ir::DType::Bool && V->shape().rank() >= 2)
          return true;
        continue;
      }
      // Through folded nodes and views of them (the mask is a load-time
      // constant, or a view of one).
      const ir::Node *P = V->producer();
      if (!P || Plan.Exec[P->index()] == NodeExec::Kernel)
        continue;
      const llvm::StringRef Op = P->opType();
      if (Op == "Trilu")
        return true;
      if (Op == "Greater" || Op == "Less" || Op == "GreaterOrEqual" ||
          Op == "LessOrEqual") {
        // An outer comparison: neither side a scalar, the result a matrix.
        const ir::Value *A = P->input(0), *B = P->input(1);
        if (A && B && A->numElements() > 1 && B->numElements() > 1 &&
            V->shape().rank() >= 2)
          return true;
        continue;
      }
      for (const ir::Value *In : P->inputs())
        if (In && Seen.insert(In).second)
          Work.push_back(In);
    }
    return false;
  }

  /// The load-time constant causal mask of the scores' square last two dims
  /// an Add or Where of K applies (Kernel::Causal); null if none.
  const ir::Value *constantSquareMask(const Kernel &K) const {
    for (unsigned M : K.Members) {
      const ir::Node &N = *G.nodes()[M];
      if (N.opType() != "Add" && N.opType() != "Where")
        continue;
      const ir::Value *Out = N.output(0);
      if (!Out || Out->shape().rank() < 2)
        continue;
      const ir::Shape &S = Out->shape();
      const int64_t Rows = S[S.rank() - 2].Value, Cols = S[S.rank() - 1].Value;
      if (Rows <= 1 || Rows != Cols)
        continue;
      for (const ir::Value *In : N.inputs()) {
        if (!In || !Plan.isLoadTimeConstant(dataRoot(In)) ||
            In->shape().rank() < 2)
          continue;
        const ir::Shape &MS = In->shape();
        if (MS[MS.rank() - 2].Value == Rows &&
            MS[MS.rank() - 1].Value == Cols && isTriangularMask(In))
          return dataRoot(In);
      }
    }
    return nullptr;
  }

  /// Attention as FlashAttention, TensorRT's MHA plugin and ONNX Runtime's
  /// Attention kernel run it: P = softmax(mask(scale(Q.K^T))), O = P.V in
  /// one kernel whose scores never reach memory. Finds each Softmax between
  /// two activation products (through pointwise ops, views and dropout) and
  /// merges their kernels into the first product's.
  void fuseAttention() {
    for (const auto &SPtr : G.nodes()) {
      const ir::Node *S = SPtr;
      if (S->opType() != "Softmax" || Plan.KernelOf[S->index()] < 0)
        continue;
      llvm::SmallVector<const ir::Node *, 8> Chain{S};
      // Back to Q.K^T.
      const ir::Node *A = nullptr;
      const ir::Value *V = S->input(0);
      for (unsigned Depth = 0; V && Depth < 8; ++Depth) {
        const ir::Node *P = dataProducer(V);
        if (isActivationProduct(P)) {
          A = P;
          break;
        }
        if (!P || Work.Nodes[P->index()].Class != OpClass::Elementwise)
          break;
        Chain.push_back(P);
        V = nullptr;
        for (const ir::Value *In : P->inputs())
          if (In && !In->isConstant() && dataProducer(In) &&
              Plan.Exec[dataProducer(In)->index()] != NodeExec::Folded) {
            V = In;
            break;
          }
      }
      // Forward to P.V.
      const ir::Node *B = nullptr;
      const ir::Value *Out = S->output(0);
      for (unsigned Depth = 0; Out && Depth < 8 && A; ++Depth) {
        if (Out->users().size() != 1)
          break;
        const ir::Node *U = Out->users()[0];
        if (isActivationProduct(U) && U->input(0) == Out) {
          B = U;
          break;
        }
        const NodeExec E = Plan.Exec[U->index()];
        if (E != NodeExec::View &&
            Work.Nodes[U->index()].Class != OpClass::Elementwise &&
            U->opType() != "Dropout")
          break;
        if (E != NodeExec::View)
          Chain.push_back(U);
        Out = U->output(0);
      }
      if (!A || !B)
        continue;
      const int Into = Plan.KernelOf[A->index()];
      Chain.push_back(B);
      // Fused attention kernels read Q, K and V where the projections left
      // them and write the heads merged (TensorRT's MHA plugin reads the
      // packed QKV GEMM output; FlashAttention takes strided Q, K, V): the
      // head split and merge Transposes (and a Split of a packed QKV) run
      // inside the kernel.
      llvm::SmallVector<const ir::Node *, 4> Projections;
      Chain.push_back(
          A); // already in the kernel; a user the layout ops may have
      for (const ir::Value *In : {A->input(0), A->input(1), B->input(1)})
        if (In)
          absorbOperand(In, Chain, Projections);
      if (const ir::Node *M = layoutConsumer(B->output(0)))
        Chain.push_back(M);
      for (const ir::Node *Sp : Pending) {
        bool Private = true;
        for (const ir::Value *Out : Sp->outputs())
          if (Out && !onlyUsedBy(Out, Chain))
            Private = false;
        if (!Private)
          continue;
        Chain.push_back(Sp);
        if (const ir::Node *P =
                Sp->input(0) ? dataProducer(Sp->input(0)) : nullptr)
          if (Plan.KernelOf[P->index()] >= 0 &&
              !llvm::is_contained(Projections, P))
            Projections.push_back(P);
      }
      Pending.clear();
      mergeInto(Into, Chain);
      Kernel &Fused = Plan.Kernels[Into];
      Fused.Attention = true;
      Fused.Causal = constantSquareMask(Fused) != nullptr;
      if (Options.Fuse)
        fuseProjections(Projections);
    }
  }

  /// Drops the kernels merging emptied, keeping the order of the rest.
  void dropEmptyKernels() {
    if (llvm::none_of(Plan.Kernels,
                      [](const Kernel &K) { return K.Members.empty(); }))
      return;
    std::vector<int> NewIndex(Plan.Kernels.size(), -1);
    std::vector<Kernel> Kept;
    for (unsigned K = 0; K < Plan.Kernels.size(); ++K)
      if (!Plan.Kernels[K].Members.empty()) {
        NewIndex[K] = Kept.size();
        Kept.push_back(std::move(Plan.Kernels[K]));
      }
    Plan.Kernels = std::move(Kept);
    for (int &K : Plan.KernelOf)
      if (K >= 0)
        K = NewIndex[K];
  }

  /// Whether V (or a view of it) is read outside kernel K or is a graph
  /// output.
  bool escapes(const ir::Value *V, int K, unsigned Depth = 0) const {
    if (V->isGraphOutput() || Depth > 64)
      return true;
    for (const ir::Node *U : V->users()) {
      if (Plan.Exec[U->index()] == NodeExec::View) {
        for (const ir::Value *Out : U->outputs())
          if (Out && escapes(Out, K, Depth + 1))
            return true;
      } else if (Plan.KernelOf[U->index()] != K) {
        return true;
      }
    }
    return false;
  }

  const ir::Value *dataRoot(const ir::Value *V) const {
    return Plan.dataRoot(V);
  }

  /// Records that K reads (writes) the tensor V from (to) memory; returns
  /// its bytes. Empty tensors are not recorded.
  double addRead(Kernel &K, const ir::Value *V) {
    const double B = static_cast<double>(V->bytes());
    if (B > 0)
      K.Reads.push_back({V, B});
    return B;
  }
  double addWrite(Kernel &K, const ir::Value *V) {
    const double B = static_cast<double>(V->bytes());
    if (B > 0)
      K.Writes.push_back({V, B});
    return B;
  }

  void combineWork(Kernel &K) {
    combineMembers(K);
    if (K.AppendsTo)
      appendInPlace(K);
    if (Options.FlashAttention && K.Attention && K.Causal)
      dropCausalMask(K);
  }

  /// FlashAttention masks causally as it goes, from the rows' and columns'
  /// indices: the kernel never reads the mask tensor, which therefore
  /// needs no memory either (passes/InferenceMemory.h follows the reads).
  void dropCausalMask(Kernel &K) {
    const ir::Value *Mask = constantSquareMask(K);
    for (auto *It = K.Reads.begin(); It != K.Reads.end(); ++It)
      if (It->V == Mask) {
        K.Work.BytesRead = std::max(0.0, K.Work.BytesRead - It->Bytes);
        K.Reads.erase(It);
        break;
      }
  }

  /// A cache append's kernel reads and writes the new rows only: the cache
  /// stays where it is, and its output shares its buffer.
  void appendInPlace(Kernel &K) {
    const ir::Value *Present = G.nodes()[K.Head]->output(0);
    const double Cache = static_cast<double>(K.AppendsTo->bytes());
    for (auto *It = K.Reads.begin(); It != K.Reads.end(); ++It)
      if (It->V == K.AppendsTo) {
        K.Work.BytesRead = std::max(0.0, K.Work.BytesRead - It->Bytes);
        K.Reads.erase(It);
        break;
      }
    for (auto *It = K.Writes.begin(); It != K.Writes.end(); ++It)
      if (It->V == Present) {
        K.Work.BytesWritten = std::max(0.0, K.Work.BytesWritten - Cache);
        K.Writes.erase(It);
        break;
      }
  }

  void combineMembers(Kernel &K) {
    const OpWork &Head = Work.Nodes[K.Head];
    K.Work = Head;
    const int Self = Plan.KernelOf[K.Head];
    const ir::Node &HeadNode = *G.nodes()[K.Head];
    // The head's reads stand (a Gather reads only what it gathers): its
    // inputs from outside the kernel, each scaled to the share of them it
    // reads. An operand computed inside the kernel (a Transpose absorbed
    // into attention) is not read from memory.
    double Whole = 0;
    for (const ir::Value *In : HeadNode.inputs()) {
      if (!In)
        continue;
      const ir::Value *Root = dataRoot(In);
      if (kernelOfValue(In) == Self)
        K.Work.BytesRead = std::max(
            0.0, K.Work.BytesRead - static_cast<double>(Root->bytes()));
      else if (llvm::none_of(K.Reads,
                             [&](const TensorUse &U) { return U.V == Root; }))
        Whole += addRead(K, Root);
    }
    if (Whole > Head.BytesRead && Whole > 0)
      for (TensorUse &U : K.Reads)
        U.Bytes *= Head.BytesRead / Whole;
    if (K.Members.size() == 1) {
      for (const ir::Value *Out : HeadNode.outputs())
        if (Out)
          addWrite(K, Out);
      return;
    }
    // Other members add the distinct tensors they read from outside.
    llvm::DenseSet<const ir::Value *> Read;
    for (const ir::Value *In : HeadNode.inputs())
      if (In)
        Read.insert(dataRoot(In));
    K.Work.BytesWritten = 0;
    // What backward keeps (FusionOptions::Kept) of what the kernel computes
    // is written, and so is a training dropout's mask; but a fused attention
    // keeps only its softmax's statistics: FlashAttention recomputes the
    // scores and draws the dropout mask again in backward (Dao et al. 2022,
    // Algorithm 2).
    const bool KeepsForBackward = !K.Attention;
    for (unsigned M : K.Members) {
      const ir::Node &N = *G.nodes()[M];
      if (M != K.Head) {
        const OpWork &W = Work.Nodes[M];
        K.Work.Macs += W.Macs;
        K.Work.Flops += W.Flops;
        K.Work.Params += W.Params;
        for (const ir::Value *In : N.inputs()) {
          if (!In)
            continue;
          const ir::Value *Root = dataRoot(In);
          if (kernelOfValue(In) != Self && Read.insert(Root).second)
            K.Work.BytesRead += addRead(K, Root);
        }
      }
      for (const ir::Value *Out : N.outputs())
        if (Out && (escapes(Out, Self) || (KeepsForBackward && Options.Kept &&
                                           Options.Kept->contains(Out))))
          K.Work.BytesWritten += addWrite(K, Out);
      if (KeepsForBackward) {
        K.Work.BytesRead += Work.Nodes[M].SideBytesRead;
        K.Work.BytesWritten += Work.Nodes[M].SideBytesWritten;
      }
    }
    auto Extra = ExtraN.find(K.Head);
    if (Extra != ExtraN.end())
      K.Work.Gemm.N += Extra->second;
    // Appended in place to the head's copy: this runs for every kernel.
    if (!K.Work.Formula.empty())
      (K.Work.Formula += " + ")
          .append(std::to_string(K.Members.size() - 1))
          .append(" fused op(s)");
  }

  const ir::Graph &G;
  const GraphWork &Work;
  const FusionOptions &Options;
  KernelPlan Plan;
  /// Splits of a packed QKV seen while absorbing one attention's operands.
  llvm::SmallVector<const ir::Node *, 2> Pending;
  /// The projections each cache append's new rows come from, by its
  /// Concat.
  llvm::DenseMap<const ir::Node *, llvm::SmallVector<const ir::Node *, 2>>
      AppendProjections;
  /// Horizontally fused projections: the N of the other GEMMs, by the
  /// kernel's head.
  llvm::DenseMap<unsigned, double> ExtraN;
};

} // namespace

unsigned KernelPlan::numFused() const {
  unsigned N = 0;
  for (const Kernel &K : Kernels)
    N += K.Members.size() - 1;
  return N;
}

const ir::Value *KernelPlan::dataRoot(const ir::Value *V) const {
  // Exec.size() hops: as many as there are nodes, a bound no DAG reaches.
  return throughViews(
      V, [&](const ir::Node &P) { return Exec[P.index()] == NodeExec::View; },
      Exec.size());
}

bool KernelPlan::isLoadTimeConstant(const ir::Value *V) const {
  if (V->isConstant())
    return true;
  const ir::Node *P = V->producer();
  return P && Exec[P->index()] == NodeExec::Folded;
}

OpWork kernelWork(const Kernel &K, bool FlashAttention) {
  OpWork W = K.Work;
  W.FusedAttention = K.Attention;
  if (!FlashAttention || !K.Attention || !K.Causal)
    return W;
  W.Macs *= 0.5;
  W.Flops *= 0.5;
  W.Formula += " (causal: the blocks above the diagonal skipped, half "
               "the arithmetic)";
  return W;
}

KernelPlan planKernels(const ir::Graph &G, const GraphWork &Work,
                       const FusionOptions &Options) {
  return Planner(G, Work, Options).run();
}

} // namespace perfc
