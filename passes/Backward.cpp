//===- Backward.cpp - Backward work and the tensors saved for it ----------===//
#include "passes/Backward.h"

#include "ir/Graph.h"
#include "passes/Blocks.h"
#include "passes/LoadTimeConstants.h"
#include "passes/TrainingForward.h"
#include "passes/Views.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"

#include <functional>

namespace perfc {

double SavedTensor::bytes() const {
  return Mask ? static_cast<double>(Value->numElements())
              : static_cast<double>(Value->bytes());
}

namespace {

unsigned activationInputs(const ir::Node &N, const LoadTimeConstants &C) {
  unsigned Count = 0;
  for (const ir::Value *In : N.inputs())
    if (In && !C.contains(In))
      ++Count;
  return Count;
}

bool isSoftmax(const ir::Node &N) {
  return N.opType() == "Softmax" || N.opType() == "LogSoftmax";
}

/// Ops whose backward needs none of their inputs (given its own mask for
/// Dropout): sums, differences, scaling by constants, copies.
bool isLinear(const ir::Node &N, const LoadTimeConstants &C) {
  const bool Fixed =
      llvm::StringSwitch<bool>(N.opType())
          .Cases("Add", "Sub", "Neg", "Cast", "Identity", true)
          .Cases("Dropout", "Where", "Expand", "ReduceMean", "ReduceSum", true)
          .Default(false);
  if (Fixed)
    return true;
  if (N.opType() == "Mul" || N.opType() == "Div")
    return activationInputs(N, C) <= 1;
  return false;
}

bool inChain(const ir::Node &N, const OpWork &W) {
  if (W.IsView || isSoftmax(N))
    return false;
  return W.Class == OpClass::Elementwise || W.Class == OpClass::Normalization ||
         W.Class == OpClass::Reduction || N.opType() == "Dropout";
}

bool isGemmLike(const OpWork &W) {
  return (W.Class == OpClass::Gemm || W.Class == OpClass::Conv ||
          W.Class == OpClass::Recurrent) &&
         W.Macs > 0;
}

class Expander {
public:
  Expander(const ir::Graph &G, const GraphWork &W)
      : G(G), Constants(G), Work(W) {}

  BackwardInfo run() {
    Info.Work.resize(G.numNodes());
    Info.NeedsGrad.assign(G.numNodes(), false);
    propagateGradients();
    for (const auto &N : G.nodes())
      if (Info.NeedsGrad[N->index()])
        Info.Work[N->index()] = backwardWork(*N);
    findSaved();
    return std::move(Info);
  }

private:
  /// Integer tensors carry no gradient, except a QuantizeLinear's output:
  /// training a QDQ graph is quantisation-aware training, whose fake
  /// quantisation passes the gradient straight through (the STE).
  bool requiresGrad(const ir::Value *V) const {
    if (isParameter(V))
      return true;
    const ir::Node *P = V->producer();
    return P &&
           (ir::isFloatingPoint(V->type()) ||
            (P->opType() == "QuantizeLinear" && P->domain().empty())) &&
           Info.NeedsGrad[P->index()];
  }

  /// An Add (or a Sub's first operand) whose gradient goes, unchanged and
  /// without a broadcast to undo, to its only input that needs one.
  bool passesGradientThrough(const ir::Node &N) const {
    if ((N.opType() != "Add" && N.opType() != "Sub") || N.numInputs() != 2 ||
        !N.input(0) || !N.input(1) || !N.output(0))
      return false;
    const bool Grad0 = requiresGrad(N.input(0));
    const bool Grad1 = requiresGrad(N.input(1));
    if (Grad0 == Grad1 || (N.opType() == "Sub" && Grad1))
      return false;
    const ir::Value *In = Grad0 ? N.input(0) : N.input(1);
    return In->shape() == N.output(0)->shape();
  }

  void propagateGradients() {
    for (const auto &N : G.nodes())
      for (const ir::Value *In : N->inputs())
        if (In && requiresGrad(In)) {
          Info.NeedsGrad[N->index()] = true;
          break;
        }
  }

  OpWork backwardWork(const ir::Node &N) const {
    const OpWork &F = Work.Nodes[N.index()];
    OpWork B;
    B.Class = F.Class;
    B.Type = F.Type;
    B.Gemm = F.Gemm;
    B.Winograd3x3 = F.Winograd3x3;
    if (F.IsView) {
      B.IsView = true;
      return B;
    }
    if (isGemmLike(F)) {
      // One product per operand that needs a gradient (the first two
      // inputs: data and weights).
      unsigned Grads = 0;
      for (unsigned I = 0; I < 2 && I < N.numInputs(); ++I)
        if (N.input(I) && requiresGrad(N.input(I)))
          ++Grads;
      B.Macs = Grads * F.Macs;
      B.Flops = Grads * 2 * F.Macs;
      B.BytesRead = Grads * F.BytesRead;
      B.BytesWritten = Grads * F.BytesWritten;
      // dgrad transposes dy in and dx out, wgrad x and dy in.
      B.LayoutBytes = Grads * F.LayoutBytes;
      B.Formula = std::to_string(Grads) + " x forward product";
      return B;
    }
    if (passesGradientThrough(N)) {
      // PyTorch's AddBackward/SubBackward hand dy on unchanged to the one
      // input that needs it (the scores of an attention mask's add): no
      // kernel.
      B.IsView = true;
      B.Formula = "identity: dy passes through to the one input needing it";
      return B;
    }
    if (N.opType() == "BatchNormalization" && N.input(0)) {
      // Batch statistics (training mode): one pass reads x and dy for the
      // two reductions (sum dy, sum dy * x_hat), a second reads them again
      // to write dx, as cuDNN's batch-norm backward does; the parameter
      // gradients are per channel.
      const double X = static_cast<double>(N.input(0)->bytes());
      const double Params = F.Params * ir::byteSize(F.Type);
      B.Flops = 2 * F.Flops;
      B.BytesRead = 4 * X + Params;
      B.BytesWritten = X + Params;
      B.Formula = "batch-norm backward: x, dy read twice, dx written";
      return B;
    }
    if (N.opType() == "Dropout" && N.input(0)) {
      // dx = dy * mask * scale: dy and the 1-byte mask read, dx written.
      const double X = static_cast<double>(N.input(0)->bytes());
      B.Flops = 2.0 * N.input(0)->numElements();
      B.SideBytesRead = droppedMaskBytes(N);
      B.BytesRead = X + B.SideBytesRead;
      B.BytesWritten = X;
      B.Formula = "dropout backward: dy and the 1-byte mask read, dx written";
      return B;
    }
    switch (F.Class) {
    case OpClass::Elementwise:
      B.Flops = F.Flops;
      B.BytesRead = F.BytesRead + F.BytesWritten / 2;
      B.BytesWritten = F.BytesWritten;
      break;
    case OpClass::Normalization:
    case OpClass::Reduction:
      B.Flops = 2 * F.Flops;
      B.BytesRead = F.BytesRead + F.BytesWritten / 2;
      B.BytesWritten = F.BytesWritten;
      break;
    default:
      B.Flops = F.Flops;
      B.BytesRead = F.BytesRead;
      B.BytesWritten = F.BytesWritten;
      break;
    }
    return B;
  }

  /// What a read of V touches, through views.
  const ir::Value *dataRoot(const ir::Value *V) const {
    return throughViews(
        V,
        [&](const ir::Node &P) {
          return Work.Nodes[P.index()].IsView && P.opType() != "Dropout";
        },
        64);
  }

  void save(const ir::Value *V, unsigned Node, bool Mask = false) {
    if (!V || Constants.contains(V))
      return;
    V = Mask ? V : dataRoot(V);
    if (Mask ? SeenMasks.insert(V).second : Seen.insert(V).second)
      Info.Saved.push_back({V, Node, Mask});
  }

  void findSaved() {
    // Chains of pointwise ops and reductions: union by producer edges.
    llvm::EquivalenceClasses<unsigned> Chains;
    auto InChain = [&](const ir::Node &N) {
      return Info.NeedsGrad[N.index()] && inChain(N, Work.Nodes[N.index()]);
    };
    for (const auto &N : G.nodes()) {
      if (!InChain(*N))
        continue;
      Chains.insert(N->index());
      for (const ir::Value *In : N->inputs())
        if (In)
          if (const ir::Node *P = dataRoot(In)->producer())
            if (InChain(*P))
              Chains.unionSets(P->index(), N->index());
    }
    for (const auto &N : G.nodes()) {
      const unsigned I = N->index();
      if (!Info.NeedsGrad[I])
        continue;
      const OpWork &W = Work.Nodes[I];
      if (isGemmLike(W)) {
        for (const ir::Value *In : N->inputs())
          if (In && !isParameter(In) && ir::isFloatingPoint(In->type()))
            save(In, I);
      } else if (isSoftmax(*N)) {
        save(N->output(0), I);
      } else if (N->opType() == "Dropout") {
        save(N->output(0), I, /*Mask=*/true);
      }
    }
    // Each chain keeps the roots of its nonlinear ops' inputs.
    for (auto It = Chains.begin(); It != Chains.end(); ++It) {
      if (!It->isLeader())
        continue;
      llvm::DenseSet<unsigned> Members;
      for (auto M = Chains.member_begin(It); M != Chains.member_end(); ++M)
        Members.insert(*M);
      llvm::SetVector<const ir::Value *> Candidates;
      llvm::DenseMap<const ir::Value *, unsigned> NeededBy;
      for (auto M = Chains.member_begin(It); M != Chains.member_end(); ++M) {
        const ir::Node &N = *G.nodes()[*M];
        if (isLinear(N, Constants))
          continue;
        for (const ir::Value *In : N.inputs())
          if (In && !Constants.contains(In)) {
            const ir::Value *C = climb(In, Members);
            if (Candidates.insert(C))
              NeededBy[C] = N.index();
          }
      }
      for (const ir::Value *C : Candidates)
        if (!derivedFromOther(C, Candidates, Members))
          save(C, NeededBy[C]);
    }
  }

  /// Climbs from V through linear chain ops of one activation input.
  const ir::Value *climb(const ir::Value *V,
                         const llvm::DenseSet<unsigned> &Members) const {
    for (unsigned Depth = 0; Depth < 64; ++Depth) {
      V = dataRoot(V);
      const ir::Node *P = V->producer();
      if (!P || !Members.count(P->index()) || !isLinear(*P, Constants) ||
          activationInputs(*P, Constants) != 1)
        return V;
      for (const ir::Value *In : P->inputs())
        if (In && !Constants.contains(In)) {
          V = In;
          break;
        }
    }
    return V;
  }

  /// Whether C can be computed inside the chain from the other candidates
  /// (and constants) alone: then backward recomputes it cheaply from them
  /// (erf(x / sqrt 2) from x, x - mean(x) from x) and it need not be kept.
  /// A residual sum x + f(x) is not: f(x) comes from outside the chain.
  bool derivedFromOther(const ir::Value *C,
                        const llvm::SetVector<const ir::Value *> &Candidates,
                        const llvm::DenseSet<unsigned> &Members) const {
    llvm::DenseMap<const ir::Value *, bool> Memo;
    unsigned Budget = 1024;
    std::function<bool(const ir::Value *, bool)> Computable =
        [&](const ir::Value *V, bool Top) -> bool {
      V = dataRoot(V);
      if (!Top && Candidates.count(V))
        return true;
      if (Constants.contains(V))
        return true;
      auto It = Memo.find(V);
      if (It != Memo.end())
        return It->second;
      const ir::Node *P = V->producer();
      if (!P || !Members.count(P->index()) || Budget == 0)
        return Memo[V] = false;
      --Budget;
      Memo[V] = false; // cycles cannot happen in a DAG; guards recursion
      bool All = true, Any = false;
      for (const ir::Value *In : P->inputs()) {
        if (!In || Constants.contains(In))
          continue;
        Any = true;
        if (!Computable(In, false)) {
          All = false;
          break;
        }
      }
      return Memo[V] = All && Any;
    };
    return Computable(C, true);
  }

  const ir::Graph &G;
  const LoadTimeConstants Constants;
  const GraphWork &Work;
  BackwardInfo Info;
  llvm::DenseSet<const ir::Value *> Seen, SeenMasks;
};

} // namespace

BackwardInfo computeBackward(const ir::Graph &G, const GraphWork &Work) {
  return Expander(G, Work).run();
}

} // namespace perfc
