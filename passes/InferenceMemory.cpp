//===- InferenceMemory.cpp - Peak memory of one inference run -------------===//
#include "passes/InferenceMemory.h"

#include "passes/Blocks.h"

#include "hwdb/Units.h"
#include "ir/Graph.h"
#include "passes/Fusion.h"
#include "passes/StorageType.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <vector>

namespace perfc {

namespace {

/// A buffer's life over the kernel order: [First, Last], in kernel indices.
struct Life {
  int First = -1;
  int Last = -1;
  double Bytes = 0; ///< Held: Full, or one rank's Share of it.
  double Full = 0;
  /// With kernel shares: the largest asked so far; -1 until one is.
  double Share = -1;
  bool Weight = false;
};

bool isWeight(const ir::Value &V, const KernelPlan &Plan) {
  const ir::Node *P = V.producer();
  return V.isConstant() || (P && Plan.Exec[P->index()] == NodeExec::Folded);
}

/// What reading V keeps in memory: V, or for some experts of a stack
/// sliced at load the whole stack (the router picks others at the next
/// step). Runs for every operand of every kernel: the cheap tests first.
const ir::Value *heldFor(const ir::Value *V, const KernelPlan &Plan) {
  const ir::Node *P = V->producer();
  if (!P || Plan.Exec[P->index()] != NodeExec::Folded)
    return V;
  const ir::Value *Whole = stackSliced(*P);
  return Whole ? Whole : V;
}

} // namespace

InferenceMemory inferenceMemory(const ir::Graph &G, const KernelPlan &Plan,
                                llvm::Optional<ir::DType> Storage,
                                llvm::ArrayRef<KernelShare> Shares) {
  InferenceMemory M;
  const int N = static_cast<int>(Plan.Kernels.size());
  if (N == 0)
    return M;
  std::vector<Life> Lives(G.numValues());
  std::vector<unsigned> Touched;
  // A cache appended in place (Kernel::AppendsTo) and the next step's
  // cache are one buffer: the graph input's, alive to the end.
  // Each such cache is split as the kernel that appends to it splits its
  // rows (by heads, or whole where every head reads one latent), whichever
  // kernel reads it.
  struct Cache {
    const ir::Value *Input;
    int AppendedBy;
  };
  llvm::DenseMap<const ir::Value *, Cache> SharedWith;
  for (int K = 0; K < N; ++K)
    if (const Kernel &Ker = Plan.Kernels[K]; Ker.AppendsTo)
      SharedWith[G.nodes()[Ker.Head]->output(0)] = {Ker.AppendsTo, K};
  M.SharedCaches = SharedWith.size();
  auto use = [&](const ir::Value *V, int K, bool Write) {
    if (!V || V->index() >= Lives.size())
      return;
    if (!Write)
      V = heldFor(V, Plan);
    const bool Returned = V->isGraphOutput();
    int ShareOf = K;
    if (auto It = SharedWith.find(V); It != SharedWith.end()) {
      V = It->second.Input;
      ShareOf = It->second.AppendedBy;
      Write = false;
    }
    Life &L = Lives[V->index()];
    if (L.First < 0) {
      Touched.push_back(V->index());
      // The whole tensor is held, whatever share of it a kernel reads (a
      // Gather's rows of an embedding table).
      L.Full = storedBytes(static_cast<double>(V->bytes()), V->type(), Storage);
      L.Bytes = L.Full;
      L.Weight = isWeight(*V, Plan);
      // Read before any kernel writes it: a graph input, there from the
      // start (weights are there for good, handled apart).
      L.First = Write ? K : 0;
    }
    if (!Shares.empty()) {
      // One rank's share: of a weight as its reader splits it, of what a
      // kernel writes and of a floating-point graph input as the kernel
      // splits its activations; another graph input (token ids) whole
      // where the kernel holds anything (a kernel of another pipeline
      // stage holds nothing: share 0); the largest any kernel asks. Reading
      // an activation asks nothing: its writer laid it out (a row-parallel
      // GEMM reads its input split as the kernel before wrote it).
      const KernelShare &S = Shares[K];
      const bool Input = !V->producer();
      const double Share = L.Weight ? S.Weights
                           : Write || (Input && ir::isFloatingPoint(V->type()))
                               ? Shares[ShareOf].Activations
                           : Input
                               ? (S.Weights > 0 || S.Activations > 0 ? 1 : 0)
                               : -1;
      if (Share > L.Share) {
        L.Share = Share;
        L.Bytes = L.Full * Share;
      }
    }
    L.Last = std::max(L.Last, K);
    if (Returned)
      L.Last = N - 1;
  };
  for (int K = 0; K < N; ++K) {
    const Kernel &Ker = Plan.Kernels[K];
    for (const TensorUse &U : Ker.Reads)
      use(U.V, K, /*Write=*/false);
    for (const TensorUse &U : Ker.Writes)
      use(U.V, K, /*Write=*/true);
    // A tensor of unknown shape has no elements on record (an empty one is
    // static); most have some, which is cheap to ask.
    const auto Known = [](const ir::Value *V) {
      return !V || V->numElements() > 0 || V->shape().isStatic();
    };
    for (unsigned Member : Ker.Members) {
      const ir::Node &Node = *G.nodes()[Member];
      M.Complete = M.Complete && llvm::all_of(Node.inputs(), Known) &&
                   llvm::all_of(Node.outputs(), Known);
    }
  }
  // Sweep the kernel order: +bytes where a buffer is born, -bytes after
  // its last use.
  std::vector<double> Delta(N + 1, 0.0);
  for (unsigned I : Touched) {
    const Life &L = Lives[I];
    if (L.Weight) {
      M.WeightsBytes += L.Bytes;
      ++M.WeightTensors;
      continue;
    }
    if (!G.values()[I]->producer())
      M.HeldInputsBytes += L.Bytes;
    Delta[L.First] += L.Bytes;
    Delta[L.Last + 1] -= L.Bytes;
  }
  double Live = 0;
  M.LiveBytes.resize(N);
  for (int K = 0; K < N; ++K) {
    Live += Delta[K];
    M.LiveBytes[K] = M.WeightsBytes + Live;
    if (Live > M.ActivationsBytes) {
      M.ActivationsBytes = Live;
      M.PeakKernel = static_cast<unsigned>(K);
    }
  }
  // What is alive at the peak, summed again in the order the buffers were
  // first touched, so that the figures do not depend on the sweep's
  // rounding.
  const int P = static_cast<int>(M.PeakKernel);
  double Activations = 0;
  const ir::Value *Largest = nullptr;
  for (unsigned I : Touched) {
    const Life &L = Lives[I];
    if (L.Weight || L.First > P || L.Last < P || L.Bytes <= 0)
      continue;
    Activations += L.Bytes;
    ++M.LiveTensors;
    const ir::Value &V = *G.values()[I];
    if (!V.producer())
      M.InputsBytes += L.Bytes;
    if (L.Bytes > M.LargestLiveBytes) {
      M.LargestLiveBytes = L.Bytes;
      Largest = &V;
    }
  }
  if (Largest)
    M.LargestLive = Largest->name().str();
  M.ActivationsBytes = Activations;
  M.PeakBytes = M.WeightsBytes + M.ActivationsBytes;
  return M;
}

std::string explain(const InferenceMemory &M, const std::string &HeadName,
                    size_t Kernels, llvm::Optional<ir::DType> Storage) {
  using hw::formatDataBytes;
  std::string S = llvm::formatv(
      "peak {0} = weights {1} ({2} tensors: initializers and what is folded "
      "from them at load{3}, resident) + activations {4} "
      "alive while kernel '{5}' ({6} of {7}) runs ({8} tensors",
      formatDataBytes(M.PeakBytes), formatDataBytes(M.WeightsBytes),
      M.WeightTensors,
      Storage ? (", stored as " + ir::name(*Storage)).str() : std::string(),
      formatDataBytes(M.ActivationsBytes), HeadName, M.PeakKernel + 1, Kernels,
      M.LiveTensors);
  if (M.InputsBytes > 0)
    S += ", graph inputs " + formatDataBytes(M.InputsBytes);
  if (!M.LargestLive.empty())
    S += ", the largest '" + M.LargestLive + "' " +
         formatDataBytes(M.LargestLiveBytes);
  S += "); each buffer lives from the kernel that writes it (graph inputs: "
       "from the start) to the last that reads it (graph outputs: to the "
       "end), views share their source's, fused intermediates stay on chip, "
       "none is reused in place";
  if (M.SharedCaches > 0)
    S += " but the " + std::to_string(M.SharedCaches) +
         " key/value caches appended in place, which the next step's share";
  S += "; allocator padding, library workspaces and the runtime's own memory "
       "are not counted";
  if (!M.Complete)
    S += "; tensors of unknown shape are not counted (a lower bound)";
  return S;
}

} // namespace perfc
