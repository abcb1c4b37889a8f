//===- Graph.cpp - The perfc IR: values, nodes and graphs -----------------===//
#include "ir/Graph.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <cstring>
#include <deque>

namespace perfc::ir {

static llvm::Error irError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

uint64_t Value::bytes() const {
  return checkedMul(numElements(), byteSize(Type)).getValueOr(0);
}

const Attr *Node::attr(llvm::StringRef AttrName) const {
  for (const Attr &A : Attrs)
    if (A.name() == AttrName)
      return &A;
  return nullptr;
}

int64_t Node::getInt(llvm::StringRef AttrName, int64_t Default) const {
  if (const Attr *A = attr(AttrName))
    if (const auto *V = A->get<int64_t>())
      return *V;
  return Default;
}

double Node::getFloat(llvm::StringRef AttrName, double Default) const {
  if (const Attr *A = attr(AttrName)) {
    if (const auto *V = A->get<double>())
      return *V;
    if (const auto *V = A->get<int64_t>())
      return static_cast<double>(*V);
  }
  return Default;
}

std::string Node::getString(llvm::StringRef AttrName,
                            llvm::StringRef Default) const {
  if (const Attr *A = attr(AttrName))
    if (const auto *V = A->get<std::string>())
      return *V;
  return Default.str();
}

std::vector<int64_t> Node::getInts(llvm::StringRef AttrName) const {
  if (const Attr *A = attr(AttrName))
    if (const auto *V = A->get<std::vector<int64_t>>())
      return *V;
  return {};
}

unsigned Node::addSubgraph(std::unique_ptr<Graph> G) {
  Subgraphs.push_back(std::move(G));
  return Subgraphs.size() - 1;
}

void Graph::reserve(size_t NumValues, size_t NumNodes) {
  Values.reserve(NumValues);
  Nodes.reserve(NumNodes);
  ValueByName.reserve(NumValues);
}

llvm::StringRef Graph::save(llvm::StringRef S) {
  if (S.empty())
    return {};
  char *P = Strings.Allocate<char>(S.size());
  std::memcpy(P, S.data(), S.size());
  return {P, S.size()};
}

llvm::Expected<Value *> Graph::addValue(llvm::StringRef VName, DType T, Shape S,
                                        ValueKind K) {
  auto Ins = ValueByName.try_emplace(VName, nullptr);
  if (!Ins.second)
    return irError("tensor name '" + VName + "' is defined twice");
  // The key becomes the stored copy, which outlives VName.
  llvm::StringRef Saved = save(VName);
  Value *V = ValuePool.make(Saved, T, std::move(S), K);
  V->Index = static_cast<unsigned>(Values.size());
  Values.push_back(V);
  Ins.first->first = Saved; // The same text: the same bucket.
  Ins.first->second = V;
  if (K == ValueKind::Input)
    Inputs.push_back(V);
  return V;
}

Value *Graph::lookup(llvm::StringRef VName) const {
  auto It = ValueByName.find(VName);
  return It == ValueByName.end() ? nullptr : It->second;
}

llvm::Expected<Node *> Graph::addNode(llvm::StringRef NName,
                                      llvm::StringRef OpType,
                                      llvm::StringRef Domain,
                                      llvm::ArrayRef<Value *> NodeInputs,
                                      llvm::ArrayRef<Value *> NodeOutputs) {
  for (Value *Out : NodeOutputs) {
    if (!Out)
      continue;
    if (Out->Producer || Out->Kind != ValueKind::Activation)
      return irError("tensor '" + Out->name() + "' has more than one producer");
  }
  Node *N = NodePool.make(save(NName), save(OpType), save(Domain));
  Nodes.push_back(N);
  N->Index = Nodes.size() - 1;
  N->Inputs.assign(NodeInputs.begin(), NodeInputs.end());
  N->Outputs.assign(NodeOutputs.begin(), NodeOutputs.end());
  for (Value *In : NodeInputs)
    if (In && !llvm::is_contained(In->Users, N))
      In->Users.push_back(N);
  for (Value *Out : NodeOutputs)
    if (Out)
      Out->Producer = N;
  return N;
}

void Graph::markOutput(Value *V) {
  if (!V->GraphOutput) {
    V->GraphOutput = true;
    Outputs.push_back(V);
  }
}

llvm::Error Graph::sortTopologically() {
  const size_t N = Nodes.size();
  // Already in order (every producer before its users, as graphs from a
  // checked file are): Kahn's algorithm below, which keeps the order of
  // independent nodes, would change nothing.
  bool InOrder = true;
  for (size_t I = 0; I < N && InOrder; ++I)
    for (Value *In : Nodes[I]->Inputs)
      if (In && In->Producer && In->Producer->Index >= I) {
        InOrder = false;
        break;
      }
  if (InOrder)
    return llvm::Error::success();
  llvm::DenseMap<const Node *, size_t> Pos;
  for (size_t I = 0; I < N; ++I)
    Pos[Nodes[I]] = I;
  // In-degree counts distinct producer nodes feeding each node.
  std::vector<unsigned> InDegree(N, 0);
  std::vector<llvm::SmallVector<size_t, 2>> Succ(N);
  for (size_t I = 0; I < N; ++I) {
    llvm::SmallVector<const Node *, 4> Preds;
    for (Value *In : Nodes[I]->Inputs)
      if (In && In->Producer && !llvm::is_contained(Preds, In->Producer))
        Preds.push_back(In->Producer);
    for (const Node *P : Preds) {
      Succ[Pos[P]].push_back(I);
      ++InDegree[I];
    }
  }
  // A min-ordered ready set keeps the original order among independent nodes.
  std::vector<size_t> Order;
  Order.reserve(N);
  std::vector<size_t> Ready;
  for (size_t I = N; I-- > 0;)
    if (InDegree[I] == 0)
      Ready.push_back(I);
  std::make_heap(Ready.begin(), Ready.end(), std::greater<size_t>());
  while (!Ready.empty()) {
    std::pop_heap(Ready.begin(), Ready.end(), std::greater<size_t>());
    size_t I = Ready.back();
    Ready.pop_back();
    Order.push_back(I);
    for (size_t S : Succ[I])
      if (--InDegree[S] == 0) {
        Ready.push_back(S);
        std::push_heap(Ready.begin(), Ready.end(), std::greater<size_t>());
      }
  }
  if (Order.size() != N) {
    for (size_t I = 0; I < N; ++I)
      if (InDegree[I] != 0)
        return irError("node '" + Nodes[I]->name() + "' (" +
                       Nodes[I]->opType() +
                       ") is on a cycle: the graph is not a DAG");
  }
  std::vector<Node *> Sorted;
  Sorted.reserve(N);
  for (size_t I : Order)
    Sorted.push_back(Nodes[I]);
  Nodes = std::move(Sorted);
  for (size_t I = 0; I < N; ++I)
    Nodes[I]->Index = I;
  return llvm::Error::success();
}

llvm::Error Graph::verify() const {
  for (const auto &N : Nodes) {
    for (Value *In : N->Inputs) {
      if (!In)
        continue;
      if (In->Producer && In->Producer->Index >= N->Index)
        return irError("node '" + N->name() + "' uses '" + In->name() +
                       "' before it is produced");
      if (!llvm::is_contained(In->Users, N))
        return irError("tensor '" + In->name() + "' does not list user '" +
                       N->name() + "'");
    }
    for (Value *Out : N->Outputs)
      if (Out && Out->Producer != N)
        return irError("tensor '" + Out->name() + "' has the wrong producer");
  }
  uint64_t InitializerBytes = 0;
  for (const auto &V : Values) {
    if (!V->shape().isStatic())
      continue;
    auto Elements = V->shape().numElements();
    if (!Elements || !checkedMul(*Elements, std::max(1u, byteSize(V->type()))))
      return irError("tensor '" + V->name() + "' of shape " + V->shape().str() +
                     " holds more than 2^62 bytes: the dimensions overflow");
    if (V->kind() != ValueKind::Initializer)
      continue;
    auto Sum = checkedAdd(InitializerBytes, V->bytes());
    if (!Sum)
      return irError("initializer '" + V->name() +
                     "' brings the weights past 2^62 bytes in total");
    InitializerBytes = *Sum;
  }
  return llvm::Error::success();
}

} // namespace perfc::ir
