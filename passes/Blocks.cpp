//===- Blocks.cpp - Repeated blocks, tensor-parallel roles, attention -----===//
#include "passes/Blocks.h"

#include "ir/Graph.h"
#include "passes/LoadTimeConstants.h"
#include "passes/Views.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>

namespace perfc {

const char *name(TpRole R) {
  switch (R) {
  case TpRole::Replicated:
    return "replicated";
  case TpRole::Column:
    return "column";
  case TpRole::Row:
    return "row";
  case TpRole::Sharded:
    return "sharded";
  case TpRole::Vocab:
    return "vocab";
  }
  return "replicated";
}

bool isParameter(const ir::Value *V) {
  return V && V->isConstant() && ir::isFloatingPoint(V->type()) &&
         V->numElements() >= 2;
}

bool slicesExperts(const ir::Node &N) {
  if (N.opType() != "Slice" || N.numInputs() < 3 || !N.input(0) ||
      N.input(0)->shape().rank() != 3)
    return false;
  // One start and end; along axis 0 (given, or the default for one), step 1.
  const auto Ints = [&](unsigned I) -> llvm::Optional<llvm::ArrayRef<int64_t>> {
    if (N.numInputs() <= I || !N.input(I))
      return llvm::None;
    const auto &D = N.input(I)->data();
    if (!D || !D->isInt())
      return llvm::ArrayRef<int64_t>();
    return llvm::ArrayRef<int64_t>(D->Ints);
  };
  const auto Is = [&](unsigned I, int64_t Want) {
    auto V = Ints(I);
    return !V || (V->size() == 1 && V->front() == Want);
  };
  const auto Starts = Ints(1);
  return Starts && Starts->size() == 1 && Is(3, 0) && Is(4, 1);
}

const ir::Value *stackSliced(const ir::Node &N) {
  return slicesExperts(N) ? parameterBehind(N.input(0)) : nullptr;
}

const ir::Value *parameterBehind(const ir::Value *V) {
  if (!V)
    return nullptr;
  const ir::Value *Root = throughViews(
      V,
      [](const ir::Node &P) {
        const llvm::StringRef Op = P.opType();
        return Op == "Transpose" || Op == "Reshape" || Op == "Identity" ||
               Op == "Cast" || Op == "Squeeze" || Op == "Unsqueeze" ||
               slicesExperts(P);
      },
      /*MaxHops=*/7);
  return isParameter(Root) ? Root : nullptr;
}

namespace {

/// Blocks no smaller than this, in nodes, where a block is numbered with
/// an underscore: a repeated layer is a subgraph of some size, where
/// `branch3x3dbl_1` (Inception's) names one convolution of a branch.
constexpr unsigned MinUnderscoreBlockNodes = 8;

/// "/layer1/layer1.0/conv1/Conv" -> "/layer1/layer1.0"; with Underscore,
/// also "/encoder/layers/encoder_layer_3/mlp/..." ->
/// "/encoder/layers/encoder_layer_3" (torchvision's ViT); "" if no
/// component but the last ends in ".<number>" (or "_<number>"). Sets
/// *ByUnderscore when the underscore made the match.
llvm::StringRef blockPrefix(llvm::StringRef Name, bool Underscore,
                            bool *ByUnderscore = nullptr) {
  size_t Pos = 0;
  while (Pos < Name.size()) {
    size_t End = Name.find('/', Pos + 1);
    if (End == llvm::StringRef::npos)
      End = Name.size();
    llvm::StringRef Component = Name.slice(Pos, End);
    const size_t Sep = Component.find_last_of(Underscore ? "._" : ".");
    if (Sep != llvm::StringRef::npos && Sep + 1 < Component.size() &&
        End < Name.size()) {
      llvm::StringRef Digits = Component.substr(Sep + 1);
      if (llvm::all_of(Digits, [](char C) { return C >= '0' && C <= '9'; })) {
        if (ByUnderscore)
          *ByUnderscore = Component[Sep] == '_';
        return Name.substr(0, End);
      }
    }
    Pos = End;
  }
  return "";
}

class Analyzer {
public:
  Analyzer(const ir::Graph &G, const GraphWork &Work)
      : G(G), Work(Work), Constants(G) {}

  BlockInfo run() {
    findInputOnly();
    assignUnits();
    Info.Tp.assign(G.numNodes(), TpRole::Replicated);
    Info.AttentionCore.assign(G.numNodes(), false);
    Info.ForwardReduced.resize(Info.numUnits());
    Info.BackwardReduced.resize(Info.numUnits());
    for (unsigned B = 1; B <= Info.NumBlocks; ++B)
      findTensorParallel(B);
    findVocabParallel();
    findAttentionCores();
    findExperts();
    return std::move(Info);
  }

private:
  /// Values computed from the graph's inputs and load-time constants
  /// alone, reading no parameter: a key/value cache passed in, an attention
  /// mask and what is derived from it. Each rank holds its own share of a
  /// cache and the whole of a mask, so a node between a column and a row
  /// GEMM may read them and stay sharded.
  void findInputOnly() {
    InputOnly.resize(G.numValues());
    for (const ir::Value *In : G.inputs())
      if (In)
        InputOnly.set(In->index());
    for (const auto &N : G.nodes()) {
      bool FromInputs = false, Only = true;
      for (const ir::Value *In : N->inputs()) {
        if (!In)
          continue;
        if (parameterBehind(In))
          Only = false; // an embedding lookup: the residual stream
        else if (Constants.contains(In))
          continue;
        else if (InputOnly.test(In->index()))
          FromInputs = true;
        else
          Only = false;
      }
      if (FromInputs && Only)
        for (const ir::Value *Out : N->outputs())
          if (Out)
            InputOnly.set(Out->index());
    }
  }

  bool isInputOnly(const ir::Value *V) const {
    return V->index() < InputOnly.size() && InputOnly.test(V->index());
  }

  /// Whether blocks numbered with an underscore are repeated layers here:
  /// each such prefix heads at least MinUnderscoreBlockNodes nodes.
  bool underscoreBlocks() const {
    llvm::StringMap<unsigned> Nodes;
    for (const auto &Node : G.nodes()) {
      bool ByUnderscore = false;
      llvm::StringRef Prefix =
          blockPrefix(Node->name(), /*Underscore=*/true, &ByUnderscore);
      if (!Prefix.empty() && ByUnderscore)
        ++Nodes[Prefix];
    }
    return !Nodes.empty() && llvm::all_of(Nodes, [](const auto &E) {
      return E.getValue() >= MinUnderscoreBlockNodes;
    });
  }

  void assignUnits() {
    const unsigned N = G.numNodes();
    std::vector<int> Block(N, -1);
    llvm::StringMap<unsigned> Ids;
    const bool Underscore = underscoreBlocks();
    for (const auto &Node : G.nodes()) {
      llvm::StringRef Prefix = blockPrefix(Node->name(), Underscore);
      if (Prefix.empty())
        continue;
      auto [It, New] = Ids.try_emplace(Prefix, Ids.size());
      if (New)
        Info.BlockNames.push_back(Prefix.str());
      Block[Node->index()] = It->second;
    }
    Info.NumBlocks = Ids.empty() ? structuralBlocks(Block) : Ids.size();
    Info.UnitOf.assign(N, 0);
    int Last = -1;
    unsigned LastBlockNode = 0;
    for (unsigned I = 0; I < N; ++I)
      if (Block[I] >= 0)
        LastBlockNode = I;
    for (unsigned I = 0; I < N; ++I) {
      if (Block[I] >= 0)
        Last = Block[I];
      if (Block[I] >= 0)
        Info.UnitOf[I] = Block[I] + 1;
      else if (Last < 0)
        Info.UnitOf[I] = 0;
      else if (I > LastBlockNode)
        Info.UnitOf[I] = Info.NumBlocks + 1;
      else
        Info.UnitOf[I] = Last + 1;
    }
  }

  /// Blocks where the names give none (other exporters, DenseNet's
  /// `denselayer1`, Inception's `Mixed_5b`): the graph cut where a single
  /// activation crosses from one node to the next in topological order, as
  /// GPipe cuts a sequential network and torch.utils.checkpoint_sequential
  /// checkpoints it; values computed from the graph's inputs alone (a mask)
  /// reach every stage and do not count. A stretch without parameters (an
  /// activation, a norm, a pool, a residual add: no products with weights)
  /// joins the block before it, so that a block is a layer with its
  /// convolution or GEMM. Fills Block with ids in order and
  /// returns their number, or leaves Block alone and returns 0 when fewer
  /// than two blocks result.
  unsigned structuralBlocks(std::vector<int> &Block) {
    const unsigned N = G.numNodes();
    if (N < 2)
      return 0;
    // Live[b]: activations crossing the boundary before node b.
    std::vector<int> Live(N + 1, 0);
    for (const auto &Node : G.nodes()) {
      const unsigned I = Node->index();
      for (const ir::Value *Out : Node->outputs()) {
        // A weight's view (a tied head's transposed embedding) travels
        // with the weight, not between stages.
        if (!Out || Constants.contains(Out) || isInputOnly(Out) ||
            parameterBehind(Out))
          continue;
        unsigned LastUse = I;
        for (const ir::Node *U : Out->users())
          LastUse = std::max(LastUse, U->index());
        if (Out->isGraphOutput())
          LastUse = N;
        if (LastUse > I) {
          ++Live[I + 1];
          --Live[LastUse < N ? LastUse + 1 : N];
        }
      }
    }
    std::vector<int> Ids(N, 0);
    int Current = 0, Crossing = 0;
    bool CurrentHasWeights = false, SegmentHasWeights = false;
    unsigned SegmentStart = 0;
    auto closeSegment = [&](unsigned End) {
      if (SegmentHasWeights && CurrentHasWeights)
        ++Current;
      CurrentHasWeights |= SegmentHasWeights;
      for (unsigned J = SegmentStart; J < End; ++J)
        Ids[J] = Current;
      SegmentStart = End;
      SegmentHasWeights = false;
    };
    for (unsigned I = 0; I < N; ++I) {
      Crossing += Live[I];
      if (I > 0 && Crossing <= 1)
        closeSegment(I);
      SegmentHasWeights |= hasWeightedProducts(*G.nodes()[I]);
    }
    closeSegment(N);
    const unsigned Count = Current + 1;
    if (Count < 2)
      return 0;
    // A weight's view belongs with its first reader.
    for (const auto &Node : G.nodes()) {
      const ir::Value *Out = Node->numOutputs() ? Node->output(0) : nullptr;
      if (Node->numOutputs() != 1 || !Out || !parameterBehind(Out) ||
          Out->users().empty())
        continue;
      unsigned First = N;
      for (const ir::Node *U : Out->users())
        First = std::min(First, U->index());
      Ids[Node->index()] = Ids[First];
    }
    Info.FromStructure = true;
    Info.BlockNames.assign(Count, std::string());
    for (unsigned I = N; I-- > 0;) {
      Block[I] = Ids[I];
      Info.BlockNames[Ids[I]] = G.nodes()[I]->name().str();
    }
    return Count;
  }

  /// A convolution or GEMM with weights: multiply-accumulates reading a
  /// parameter.
  bool hasWeightedProducts(const ir::Node &N) const {
    if (N.index() >= Work.Nodes.size() || !(Work.Nodes[N.index()].Macs > 0))
      return false;
    return llvm::any_of(N.inputs(), [](const ir::Value *In) {
      return parameterBehind(In) != nullptr;
    });
  }

  /// The activation input of a parameter GEMM.
  const ir::Value *activationInput(const ir::Node &N) const {
    for (const ir::Value *In : N.inputs())
      if (In && !parameterBehind(In) && !Constants.contains(In))
        return In;
    return nullptr;
  }

  /// A GEMM by a weight matrix viewed as one matrix per head (a 2-D
  /// weight [in, A*out] reshaped to [A, in, out]: latent attention's k_b
  /// and v_b absorbed into the query and the output). Each head's product
  /// runs where the head is, between a column and a row GEMM.
  bool isPerHeadGemm(const ir::Node &N) const {
    if (!isGemmOp(N))
      return false;
    for (const ir::Value *In : N.inputs()) {
      const ir::Value *P = In ? parameterBehind(In) : nullptr;
      if (P && P != In && In->shape().isRanked() && In->shape().rank() >= 3 &&
          P->shape().isRanked() && P->shape().rank() == 2)
        return true;
    }
    return false;
  }

  /// A GEMM that tensor parallelism splits by columns or rows.
  bool isProjection(const ir::Node &N) const {
    return isParamGemm(N) && !isPerHeadGemm(N);
  }

  /// Megatron's column/row pairs of one block (BlockInfo::Tp). A
  /// projection's closure is what is computed from its output alone (with
  /// constants, parameters, values of the graph's inputs alone such as a
  /// cache or a mask, and shared operands), stopping at projections: the
  /// row GEMMs. A column GEMM is a projection whose closure reaches a row
  /// GEMM; the nodes between them are sharded (the heads). Projections
  /// that narrow their input and whose closure meets only projections that
  /// widen theirs are low-rank down projections (latent attention's q_a and
  /// kv_a): Megatron-Core runs them, and what follows them up to the
  /// widening GEMMs, whole on every rank; the widening GEMMs are columns.
  void findTensorParallel(unsigned Unit) {
    std::vector<const ir::Node *> Nodes;
    for (const auto &N : G.nodes())
      if (Info.UnitOf[N->index()] == Unit)
        Nodes.push_back(N);
    auto Trivial = [&](const ir::Value *In) {
      return !In || Constants.contains(In) || parameterBehind(In) ||
             isInputOnly(In);
    };
    // Down projections and the nodes computed from them alone.
    llvm::DenseSet<const ir::Node *> Down, Replicated;
    for (size_t I = 0; I < Nodes.size(); ++I) {
      const ir::Node *N = Nodes[I];
      const GemmDims &D = Work.Nodes[N->index()].Gemm;
      if (!isProjection(*N) || !D.valid() || !(D.N < D.K))
        continue;
      llvm::SmallPtrSet<const ir::Node *, 32> Reached{N};
      llvm::SmallVector<const ir::Node *, 32> Closure;
      bool AnyRow = false, AllWiden = true;
      for (size_t J = I + 1; J < Nodes.size() && AllWiden; ++J) {
        const ir::Node *X = Nodes[J];
        const ir::Value *Shared = sharedOperand(*X);
        bool From = false, Only = true;
        for (const ir::Value *In : X->inputs()) {
          if (Trivial(In) || In == Shared)
            continue;
          if (In->producer() && Reached.count(In->producer()))
            From = true;
          else
            Only = false;
        }
        if (!From || !Only)
          continue;
        if (isProjection(*X)) {
          const GemmDims &R = Work.Nodes[X->index()].Gemm;
          AnyRow = true;
          AllWiden = R.valid() && R.N > R.K;
          continue;
        }
        Reached.insert(X);
        Closure.push_back(X);
      }
      if (AnyRow && AllWiden) {
        Down.insert(N);
        Replicated.insert(Closure.begin(), Closure.end());
      }
    }
    // The other projections, grouped by the tensor they read (the order of
    // the exchanges below).
    llvm::MapVector<const ir::Value *, std::vector<const ir::Node *>> Groups;
    for (const ir::Node *N : Nodes)
      if (isProjection(*N) && !Down.count(N))
        if (const ir::Value *In = activationInput(*N))
          Groups[In].push_back(N);
    // Forward, in node order: each node of a closure with the first group
    // whose closure it is in; the row GEMMs with theirs.
    llvm::DenseMap<const ir::Node *, unsigned> GroupOf;
    std::vector<const ir::Node *> Order;
    std::vector<std::pair<unsigned, const ir::Node *>> Rows;
    llvm::DenseSet<const ir::Node *> RowSet;
    for (const ir::Node *X : Nodes) {
      if (Down.count(X) || Replicated.count(X))
        continue;
      const ir::Value *Shared = sharedOperand(*X);
      unsigned Group = ~0u;
      bool Only = true;
      for (const ir::Value *In : X->inputs()) {
        if (Trivial(In) || In == Shared)
          continue;
        const ir::Node *P = In->producer();
        if (auto It = P ? GroupOf.find(P) : GroupOf.end(); It != GroupOf.end())
          Group = std::min(Group, It->second);
        else if (!P || !(Down.count(P) || Replicated.count(P)))
          Only = false;
      }
      const bool FromClosure = Group != ~0u && Only;
      if (isProjection(*X)) {
        if (FromClosure) {
          Rows.push_back({Group, X});
          RowSet.insert(X);
        } else if (const ir::Value *In = activationInput(*X)) {
          GroupOf[X] = Groups.find(In) - Groups.begin();
          Order.push_back(X);
        }
        continue;
      }
      if (FromClosure) {
        GroupOf[X] = Group;
        Order.push_back(X);
      }
    }
    if (Rows.empty())
      return;
    // Backward: the closure's nodes from which a row GEMM is reachable
    // (not through an operand every head shares).
    llvm::DenseSet<const ir::Node *> ReachesRow(RowSet.begin(), RowSet.end());
    for (auto It = Order.rbegin(); It != Order.rend(); ++It)
      for (const ir::Value *Out : (*It)->outputs())
        if (Out && llvm::any_of(Out->users(), [&](const ir::Node *U) {
              return ReachesRow.count(U) != 0 && sharedOperand(*U) != Out;
            })) {
          ReachesRow.insert(*It);
          break;
        }
    llvm::DenseSet<unsigned> GroupsWithColumns;
    for (const ir::Node *X : Order) {
      if (!ReachesRow.count(X))
        continue;
      if (isProjection(*X)) {
        // A mixture's router reads the same input as its shared expert's
        // GEMMs and leads only to the routing weights: it runs whole.
        Info.Tp[X->index()] = TpRole::Column;
        GroupsWithColumns.insert(GroupOf[X]);
      } else {
        Info.Tp[X->index()] = TpRole::Sharded;
      }
    }
    llvm::stable_sort(
        Rows, [](const auto &L, const auto &R) { return L.first < R.first; });
    for (const auto &[Group, R] : Rows) {
      Info.Tp[R->index()] = TpRole::Row;
      if (const ir::Value *Out = R->output(0))
        Info.ForwardReduced[Unit].push_back(Out);
    }
    for (unsigned I = 0; I < Groups.size(); ++I)
      if (GroupsWithColumns.count(I))
        Info.BackwardReduced[Unit].push_back((Groups.begin() + I)->first);
    Info.HasTensorParallelPattern = true;
  }

  /// Megatron's vocabulary-parallel embedding and output layer: the
  /// prologue's lookups of token ids (a Gather on a parameter whose indices
  /// come from a graph input; position tables are indexed by constants) and
  /// the epilogue's GEMMs on a parameter with the vocabulary as a dimension
  /// (the tied embedding, or an output projection).
  void findVocabParallel() {
    const unsigned Epilogue = Info.NumBlocks + 1;
    // Structural blocks have no prologue or epilogue: the embeddings lead
    // the first block, the head ends the last.
    auto inPrologue = [&](unsigned U) {
      return U == 0 || (Info.FromStructure && U == 1);
    };
    auto inEpilogue = [&](unsigned U) {
      return U == Epilogue || (Info.FromStructure && U == Info.NumBlocks);
    };
    llvm::SmallVector<int64_t, 2> Vocab;
    for (const auto &N : G.nodes()) {
      if (!inPrologue(Info.UnitOf[N->index()]) || N->opType() != "Gather")
        continue;
      const ir::Value *Table = parameterBehind(N->input(0));
      const ir::Value *Ids = N->input(1);
      if (!Table || !Ids || Constants.contains(Ids) ||
          Table->shape().rank() != 2)
        continue;
      Info.Tp[N->index()] = TpRole::Vocab;
      Vocab.push_back(Table->shape().size(0));
      if (const ir::Value *Out = N->output(0))
        Info.ForwardReduced[Info.UnitOf[N->index()]].push_back(Out);
    }
    for (const auto &N : G.nodes()) {
      const unsigned Unit = Info.UnitOf[N->index()];
      if (!inEpilogue(Unit) || !isParamGemm(*N) ||
          Info.Tp[N->index()] != TpRole::Replicated)
        continue;
      for (const ir::Value *In : N->inputs()) {
        const ir::Value *P = In ? parameterBehind(In) : nullptr;
        if (!P || !llvm::any_of(P->shape().dims(), [&](const ir::Dim &D) {
              return llvm::is_contained(Vocab, D.Value);
            }))
          continue;
        Info.Tp[N->index()] = TpRole::Vocab;
        if (const ir::Value *A = activationInput(*N))
          Info.BackwardReduced[Unit].push_back(A);
        break;
      }
    }
  }

  /// The experts of a weight stack P ([E, ...], rank 3, E > 1); 0 for
  /// any other parameter.
  static int64_t stackedExperts(const ir::Value *P) {
    if (!P || P->shape().rank() != 3 || P->shape()[0].Value < 2)
      return 0;
    return P->shape()[0].Value;
  }

  void findExperts() {
    Info.Expert.assign(G.numNodes(), false);
    Info.ExpertExchanged.resize(Info.numUnits());
    // Batched GEMMs on a weight stack, by unit.
    std::vector<llvm::SmallVector<int64_t, 2>> UnitExperts(Info.numUnits());
    for (const auto &N : G.nodes()) {
      if (!isGemmOp(*N))
        continue;
      const ir::Value *In = activationInput(*N);
      for (const ir::Value *W : N->inputs()) {
        // The stack, or the experts a decoding step reaches of it (a
        // Slice: [A, in, out]), one per row group of the activation.
        const int64_t E = stackedExperts(W ? parameterBehind(W) : nullptr);
        if (E == 0 || !In || In->shape().rank() != 3 ||
            !W->shape().isRanked() || W->shape().rank() != 3 ||
            In->shape()[0].Value != W->shape()[0].Value)
          continue;
        Info.Expert[N->index()] = true;
        auto &Counts = UnitExperts[Info.UnitOf[N->index()]];
        if (!llvm::is_contained(Counts, E))
          Counts.push_back(E);
        if (!llvm::is_contained(Info.ExpertCounts, E))
          Info.ExpertCounts.push_back(E);
      }
    }
    // Their bias stacks [E, 1, out].
    for (const auto &N : G.nodes()) {
      const auto &Counts = UnitExperts[Info.UnitOf[N->index()]];
      if (Info.Expert[N->index()] || Counts.empty())
        continue;
      for (const ir::Value *In : N->inputs())
        if (llvm::is_contained(
                Counts, stackedExperts(In ? parameterBehind(In) : nullptr)))
          Info.Expert[N->index()] = true;
    }
    // What the all-to-alls carry: the experts' column inputs, row outputs.
    for (const auto &N : G.nodes()) {
      const unsigned I = N->index();
      if (!Info.Expert[I] || !isGemmOp(*N))
        continue;
      auto &Sent = Info.ExpertExchanged[Info.UnitOf[I]];
      const ir::Value *V = Info.Tp[I] == TpRole::Column ? activationInput(*N)
                           : Info.Tp[I] == TpRole::Row  ? N->output(0)
                                                        : nullptr;
      if (V && !llvm::is_contained(Sent, V))
        Sent.push_back(V);
    }
  }

  void findAttentionCores() {
    // Products of two activations (Q.K^T, P.V) and the ops between them.
    for (const auto &A : G.nodes()) {
      if (!isGemmOp(*A) || isParamGemm(*A) || Info.UnitOf[A->index()] == 0)
        continue;
      const unsigned Unit = Info.UnitOf[A->index()];
      llvm::SetVector<const ir::Node *> Reached;
      Reached.insert(A);
      const ir::Node *Second = nullptr;
      for (size_t I = 0; I < Reached.size() && !Second; ++I)
        for (const ir::Value *Out : Reached[I]->outputs()) {
          if (!Out)
            continue;
          for (const ir::Node *U : Out->users()) {
            if (Info.UnitOf[U->index()] != Unit || isParamGemm(*U))
              continue;
            if (isGemmOp(*U) && U != A) {
              Second = U;
              break;
            }
            Reached.insert(U);
          }
          if (Second)
            break;
        }
      if (!Second)
        continue;
      // Keep the nodes on a path to the second product.
      llvm::DenseSet<const ir::Node *> OnPath{Second};
      for (size_t I = Reached.size(); I-- > 0;)
        for (const ir::Value *Out : Reached[I]->outputs())
          if (Out && llvm::any_of(Out->users(), [&](const ir::Node *U) {
                return OnPath.count(U) != 0;
              })) {
            OnPath.insert(Reached[I]);
            break;
          }
      for (const ir::Node *X : OnPath)
        Info.AttentionCore[X->index()] = true;
    }
  }

  const ir::Graph &G;
  const GraphWork &Work;
  const LoadTimeConstants Constants;
  llvm::BitVector InputOnly;
  BlockInfo Info;
};

} // namespace

bool isGemmOp(const ir::Node &N) {
  return N.opType() == "MatMul" || N.opType() == "Gemm";
}

bool isParamGemm(const ir::Node &N) {
  return isGemmOp(N) && llvm::any_of(N.inputs(), [](const ir::Value *In) {
           return In && parameterBehind(In);
         });
}

const ir::Value *sharedOperand(const ir::Node &N) {
  if (!isGemmOp(N) || N.numInputs() < 2 || !N.input(0) || !N.input(1))
    return nullptr;
  const ir::Shape &A = N.input(0)->shape(), &B = N.input(1)->shape();
  if (!A.isRanked() || !B.isRanked() || A.rank() < 3 || B.rank() < 3)
    return nullptr;
  const int RA = static_cast<int>(A.rank()), RB = static_cast<int>(B.rank());
  for (int I = 3; I <= std::min(RA, RB); ++I) {
    const int64_t DA = A.size(RA - I), DB = B.size(RB - I);
    if (DB == 1 && DA > 1)
      return N.input(1);
    if (DA == 1 && DB > 1)
      return N.input(0);
  }
  return nullptr;
}

BlockInfo analyzeBlocks(const ir::Graph &G, const GraphWork &Work) {
  return Analyzer(G, Work).run();
}

} // namespace perfc
