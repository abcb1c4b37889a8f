//===- BlockModules.cpp - Megatron-Core's modules of a block --------------===//
//
// findBlockModules (Blocks.h): which of a block's parts, as Megatron-Core's
// selective recomputation names them, each node is in. Found per block from
// what analyzeBlocks already knows (tensor-parallel roles, attention cores,
// experts) and the graph's edges; node names are not read.
//
//===----------------------------------------------------------------------===//
#include "passes/Blocks.h"

#include "ir/Graph.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <iterator>

namespace perfc {

const char *name(BlockModule M) {
  switch (M) {
  case BlockModule::CoreAttention:
    return "core_attn";
  case BlockModule::Norm:
    return "layernorm";
  case BlockModule::LatentUp:
    return "mla_up_proj";
  case BlockModule::Mlp:
    return "mlp";
  case BlockModule::ExpertActivation:
    return "moe_act";
  case BlockModule::Mixture:
    return "moe";
  case BlockModule::SharedExperts:
    return "shared_experts";
  }
  return "core_attn";
}

namespace {

/// The activation a projection reads: its first input that is not a
/// parameter or a constant.
const ir::Value *activationOf(const ir::Node &N) {
  for (const ir::Value *In : N.inputs())
    if (In && !In->isConstant() && !parameterBehind(In))
      return In;
  return nullptr;
}

/// The ops a norm is made of: a normalization op, or the mean of squares
/// (RMSNorm) or of values (LayerNorm) a norm written out in elementary ops
/// starts from.
bool isNormOp(const ir::Node &N, const GraphWork &Work) {
  const llvm::StringRef Op = N.opType();
  return Work.Nodes[N.index()].Class == OpClass::Normalization ||
         Op == "ReduceMean" || Op == "ReduceSumSquare" || Op == "ReduceL2";
}

bool inGroup(TpRole R) {
  return R == TpRole::Column || R == TpRole::Sharded || R == TpRole::Row;
}

class ModuleFinder {
public:
  ModuleFinder(const ir::Graph &G, const GraphWork &Work, BlockInfo &Info,
               unsigned Unit)
      : G(G), Work(Work), Info(Info), Unit(Unit) {
    for (const auto &N : G.nodes())
      if (Info.UnitOf[N->index()] == Unit)
        Nodes.push_back(N);
    HasExperts = llvm::any_of(
        Nodes, [&](const ir::Node *N) { return Info.Expert[N->index()]; });
  }

  void run() {
    for (const ir::Node *N : Nodes)
      if (Info.AttentionCore[N->index()])
        add(N, BlockModule::CoreAttention);
    findLatentUp();
    findNorms();
    findGroups();
    if (HasExperts)
      findMixture();
  }

private:
  bool here(const ir::Node *N) const {
    return N && Info.UnitOf[N->index()] == Unit;
  }

  void add(const ir::Node *N, BlockModule M) {
    Info.Modules[N->index()] |= bit(M);
  }

  bool has(const ir::Node *N, BlockModule M) const {
    return (Info.Modules[N->index()] & bit(M)) != 0;
  }

  /// Users of N's outputs in this block.
  template <typename Fn> bool anyUser(const ir::Node *N, Fn &&F) const {
    for (const ir::Value *Out : N->outputs())
      if (Out)
        for (const ir::Node *U : Out->users())
          if (here(U) && F(U))
            return true;
    return false;
  }

  void findLatentUp() {
    // Nodes from which an attention core is reached.
    llvm::DenseSet<const ir::Node *> ReachesCore;
    for (auto It = Nodes.rbegin(); It != Nodes.rend(); ++It)
      if (anyUser(*It, [&](const ir::Node *U) {
            return Info.AttentionCore[U->index()] || ReachesCore.count(U);
          }))
        ReachesCore.insert(*It);
    // Down projections: replicated projections whose output reaches a
    // column GEMM through other nodes than projections.
    llvm::DenseSet<const ir::Node *> Down, FromDown;
    for (const ir::Node *N : Nodes) {
      if (!isParamGemm(*N) || Info.Tp[N->index()] != TpRole::Replicated)
        continue;
      llvm::SmallVector<const ir::Node *, 16> Stack{N};
      llvm::DenseSet<const ir::Node *> Seen{N};
      bool ReachesColumn = false;
      while (!Stack.empty() && !ReachesColumn) {
        const ir::Node *X = Stack.pop_back_val();
        anyUser(X, [&](const ir::Node *U) {
          if (isParamGemm(*U)) {
            ReachesColumn |= Info.Tp[U->index()] == TpRole::Column;
          } else if (Seen.insert(U).second) {
            Stack.push_back(U);
          }
          return false;
        });
      }
      if (ReachesColumn)
        Down.insert(N);
    }
    if (Down.empty())
      return;
    for (const ir::Node *N : Nodes) {
      const bool From = llvm::any_of(N->inputs(), [&](const ir::Value *In) {
        const ir::Node *P = In ? In->producer() : nullptr;
        return P && (Down.count(P) || FromDown.count(P));
      });
      if (!From)
        continue;
      FromDown.insert(N);
      if (ReachesCore.count(N) && !Info.AttentionCore[N->index()] &&
          !Down.count(N))
        add(N, BlockModule::LatentUp);
    }
  }

  void findNorms() {
    for (const ir::Node *N : Nodes) {
      if (!isParamGemm(*N))
        continue;
      const ir::Value *In = activationOf(*N);
      const ir::Node *Seed = In ? In->producer() : nullptr;
      if (!here(Seed) || isGemmOp(*Seed) || has(Seed, BlockModule::Norm) ||
          has(Seed, BlockModule::LatentUp))
        continue;
      // The seed and, backwards, the nodes whose results only the region
      // reads: a norm's own steps, not the residual stream it reads (nor,
      // behind a normalization op, what makes its input: post-LN's residual
      // add).
      llvm::DenseSet<const ir::Node *> Region{Seed};
      bool Norm = isNormOp(*Seed, Work);
      const auto From = llvm::find(Nodes, Seed);
      for (auto It = std::make_reverse_iterator(From); It != Nodes.rend();
           ++It) {
        const ir::Node *X = *It;
        if (isGemmOp(*X) || Info.Tp[X->index()] != TpRole::Replicated)
          continue;
        bool AnyUser = false, AllInRegion = true;
        for (const ir::Value *Out : X->outputs())
          if (Out)
            for (const ir::Node *U : Out->users()) {
              AnyUser = true;
              AllInRegion &=
                  Region.count(U) != 0 &&
                  Work.Nodes[U->index()].Class != OpClass::Normalization;
            }
        if (AnyUser && AllInRegion) {
          Region.insert(X);
          Norm |= isNormOp(*X, Work);
        }
      }
      if (!Norm)
        continue;
      for (const ir::Node *X : Region)
        add(X, BlockModule::Norm);
    }
  }

  void findGroups() {
    // Column/row groups: their nodes joined by the edges between them.
    llvm::EquivalenceClasses<const ir::Node *> Groups;
    for (const ir::Node *N : Nodes) {
      if (!inGroup(Info.Tp[N->index()]))
        continue;
      Groups.insert(N);
      for (const ir::Value *In : N->inputs()) {
        const ir::Node *P = In ? In->producer() : nullptr;
        if (here(P) && inGroup(Info.Tp[P->index()]))
          Groups.unionSets(N, P);
      }
    }
    for (auto It = Groups.begin(); It != Groups.end(); ++It) {
      if (!It->isLeader())
        continue;
      bool Attention = false, Experts = false;
      for (auto M = Groups.member_begin(It); M != Groups.member_end(); ++M) {
        Attention |= Info.AttentionCore[(*M)->index()];
        Experts |= Info.Expert[(*M)->index()];
      }
      if (Attention)
        continue;
      for (auto M = Groups.member_begin(It); M != Groups.member_end(); ++M) {
        if (Experts) {
          if (!isParamGemm(**M))
            add(*M, BlockModule::ExpertActivation);
        } else {
          add(*M, HasExperts ? BlockModule::SharedExperts : BlockModule::Mlp);
        }
      }
    }
  }

  /// What is computed from From alone, in node order.
  llvm::SmallVector<const ir::Node *, 32>
  computedFrom(const ir::Value *From) const {
    llvm::DenseSet<const ir::Node *> In;
    llvm::SmallVector<const ir::Node *, 32> Closure;
    for (const ir::Node *N : Nodes) {
      bool Reads = false, Only = true;
      for (const ir::Value *V : N->inputs()) {
        if (!V || V->isConstant() || parameterBehind(V))
          continue;
        if (V == From || (V->producer() && In.count(V->producer())))
          Reads = true;
        else
          Only = false;
      }
      if (Reads && Only) {
        In.insert(N);
        Closure.push_back(N);
      }
    }
    return Closure;
  }

  void findMixture() {
    unsigned Experts = 0;
    for (const ir::Node *N : Nodes)
      Experts += Info.Expert[N->index()];
    // Projection inputs in node order: the earliest from which every
    // expert node is computed is the mixture's input.
    llvm::SmallVector<const ir::Value *, 8> Inputs;
    for (const ir::Node *N : Nodes)
      if (isParamGemm(*N))
        if (const ir::Value *In = activationOf(*N))
          if (!llvm::is_contained(Inputs, In))
            Inputs.push_back(In);
    for (const ir::Value *In : Inputs) {
      const auto Closure = computedFrom(In);
      unsigned Reached = 0;
      for (const ir::Node *N : Closure)
        Reached += Info.Expert[N->index()];
      if (Reached != Experts)
        continue;
      for (const ir::Node *N : Closure)
        add(N, BlockModule::Mixture);
      return;
    }
  }

  const ir::Graph &G;
  const GraphWork &Work;
  BlockInfo &Info;
  const unsigned Unit;
  std::vector<const ir::Node *> Nodes;
  bool HasExperts = false;
};

} // namespace

void findBlockModules(const ir::Graph &G, const GraphWork &Work,
                      BlockInfo &Info) {
  Info.Modules.assign(G.numNodes(), 0);
  for (unsigned U = 1; U <= Info.NumBlocks; ++U)
    ModuleFinder(G, Work, Info, U).run();
  Info.ModulesFound = 0;
  for (const BlockModuleSet S : Info.Modules)
    Info.ModulesFound |= S;
}

} // namespace perfc
