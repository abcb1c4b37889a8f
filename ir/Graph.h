//===- Graph.h - The perfc IR: values, nodes and graphs ---------*- C++ -*-===//
//
// A Graph owns its Values (tensors) and Nodes (ops). Nodes are kept in
// topological order once `sortTopologically` has run; each Value knows its
// producer and its users. The IR has no notion of a file format or of
// hardware: the frontend builds it, passes annotate it through side tables
// indexed by Node::index(), and cost models never see it.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_IR_GRAPH_H
#define PERFC_IR_GRAPH_H

#include "ir/Attr.h"
#include "ir/DType.h"
#include "ir/NameHash.h"
#include "ir/Shape.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace perfc::ir {

class Node;
class Graph;
template <typename T> class Pool;

enum class ValueKind : uint8_t {
  Activation,  ///< Produced by a node.
  Input,       ///< A graph input fed at run time.
  Initializer, ///< A constant stored with the model (weights, shape consts).
  OuterScope,  ///< A subgraph's reference to a value of an enclosing graph.
};

class Value {
public:
  llvm::StringRef name() const { return Name; }
  DType type() const { return Type; }
  const Shape &shape() const { return TheShape; }
  ValueKind kind() const { return Kind; }
  bool isConstant() const { return Kind == ValueKind::Initializer; }

  /// Bytes this tensor occupies; 0 when its shape is not fully known.
  uint64_t bytes() const;
  /// Shape::numElementsOrZero, kept with the shape: passes ask for it many
  /// times per value.
  uint64_t numElements() const { return Elements; }

  Node *producer() const { return Producer; }
  llvm::ArrayRef<Node *> users() const { return Users; }
  bool isGraphOutput() const { return GraphOutput; }
  /// Position in the graph's value list (dense, from 0): the index of side
  /// tables over values.
  unsigned index() const { return Index; }

  /// Small constant contents (Constant nodes, integer initializers); None for
  /// weights and activations.
  const llvm::Optional<ConstData> &data() const { return Data; }

  void setType(DType T) { Type = T; }
  void setShape(Shape S) {
    TheShape = std::move(S);
    Elements = TheShape.numElementsOrZero();
  }
  void setData(ConstData D) { Data = std::move(D); }

private:
  friend class Graph;
  friend class Pool<Value>;
  /// Name: stored by the graph, which outlives its values.
  Value(llvm::StringRef Name, DType T, Shape &&S, ValueKind K)
      : Name(Name), Type(T), TheShape(std::move(S)),
        Elements(TheShape.numElementsOrZero()), Kind(K) {}

  llvm::StringRef Name;
  DType Type;
  Shape TheShape;
  uint64_t Elements;
  ValueKind Kind;
  bool GraphOutput = false;
  unsigned Index = 0;
  Node *Producer = nullptr;
  llvm::SmallVector<Node *, 2> Users;
  llvm::Optional<ConstData> Data;
};

class Node {
public:
  llvm::StringRef name() const { return Name; }
  llvm::StringRef opType() const { return OpType; }
  /// Empty for the default (standard) op set.
  llvm::StringRef domain() const { return Domain; }
  /// Position in the graph's node list (topological once sorted).
  unsigned index() const { return Index; }

  /// Inputs in operand order; an omitted optional input is nullptr.
  llvm::ArrayRef<Value *> inputs() const { return Inputs; }
  llvm::ArrayRef<Value *> outputs() const { return Outputs; }
  unsigned numInputs() const { return Inputs.size(); }
  unsigned numOutputs() const { return Outputs.size(); }
  /// Input I, or nullptr when absent or out of range.
  Value *input(unsigned I) const {
    return I < Inputs.size() ? Inputs[I] : nullptr;
  }
  Value *output(unsigned I) const {
    return I < Outputs.size() ? Outputs[I] : nullptr;
  }

  llvm::ArrayRef<Attr> attrs() const { return Attrs; }
  const Attr *attr(llvm::StringRef AttrName) const;
  int64_t getInt(llvm::StringRef AttrName, int64_t Default) const;
  double getFloat(llvm::StringRef AttrName, double Default) const;
  std::string getString(llvm::StringRef AttrName,
                        llvm::StringRef Default = "") const;
  /// An ints attribute, or an empty vector.
  std::vector<int64_t> getInts(llvm::StringRef AttrName) const;
  void addAttr(Attr A) { Attrs.push_back(std::move(A)); }
  /// Room for N attributes, so that a node with more than fit inline
  /// grows its list once.
  void reserveAttrs(unsigned N) { Attrs.reserve(N); }

  llvm::ArrayRef<std::unique_ptr<Graph>> subgraphs() const { return Subgraphs; }
  unsigned addSubgraph(std::unique_ptr<Graph> G);

private:
  friend class Graph;
  friend class Pool<Node>;
  /// The strings are stored by the graph, which outlives its nodes.
  Node(llvm::StringRef Name, llvm::StringRef OpType, llvm::StringRef Domain)
      : Name(Name), OpType(OpType), Domain(Domain) {}

  llvm::StringRef Name;
  llvm::StringRef OpType;
  llvm::StringRef Domain;
  unsigned Index = 0;
  /// Inline room for BatchNormalization's five inputs.
  llvm::SmallVector<Value *, 5> Inputs;
  llvm::SmallVector<Value *, 2> Outputs;
  llvm::SmallVector<Attr, 4> Attrs;
  std::vector<std::unique_ptr<Graph>> Subgraphs;
};

/// Objects of one type allocated in slabs, destroyed with the pool.
template <typename T> class Pool {
public:
  Pool() = default;
  Pool(Pool &&) = default;
  Pool &operator=(Pool &&O) {
    // SpecificBumpPtrAllocator's own assignment frees without destroying.
    Objects.DestroyAll();
    Objects = std::move(O.Objects);
    return *this;
  }
  template <typename... Args> T *make(Args &&...A) {
    return new (Objects.Allocate()) T(std::forward<Args>(A)...);
  }

private:
  llvm::SpecificBumpPtrAllocator<T> Objects;
};

class Graph {
public:
  explicit Graph(std::string Name = "") : Name(std::move(Name)) {}
  Graph(Graph &&) = default;
  Graph &operator=(Graph &&) = default;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  llvm::StringRef name() const { return Name; }
  void setName(std::string N) { Name = std::move(N); }

  /// Room for this many values and nodes, so that a graph built from a
  /// file of known size grows its tables once.
  void reserve(size_t NumValues, size_t NumNodes);

  /// Creates a value; its name must be new in this graph.
  llvm::Expected<Value *> addValue(llvm::StringRef Name, DType T, Shape S,
                                   ValueKind K);
  /// Looks a value up by name; nullptr if absent.
  Value *lookup(llvm::StringRef Name) const;

  /// Creates a node consuming Inputs (nullptr entries are absent optional
  /// inputs) and producing Outputs, which must not have a producer yet.
  llvm::Expected<Node *> addNode(llvm::StringRef Name, llvm::StringRef OpType,
                                 llvm::StringRef Domain,
                                 llvm::ArrayRef<Value *> Inputs,
                                 llvm::ArrayRef<Value *> Outputs);

  void markOutput(Value *V);

  llvm::ArrayRef<Node *> nodes() const { return Nodes; }
  llvm::ArrayRef<Value *> values() const { return Values; }
  size_t numValues() const { return Values.size(); }
  llvm::ArrayRef<Value *> inputs() const { return Inputs; }
  llvm::ArrayRef<Value *> outputs() const { return Outputs; }
  unsigned numNodes() const { return Nodes.size(); }

  /// Orders the nodes so that every producer precedes its users (Kahn's
  /// algorithm; ties keep the original order, so the result is
  /// deterministic). Fails naming a node on a cycle.
  llvm::Error sortTopologically();

  /// Checks the invariants passes rely on: topological order, producer and
  /// user links, unique names, and sizes: every tensor of static shape
  /// holds at most MaxTensorSize bytes, and so do the initializers together
  /// (so that parameter and byte counts summed over the graph cannot wrap).
  llvm::Error verify() const;

  /// Opset version of the standard op set the model was written against
  /// (op semantics change between versions, e.g. Split's `split` input).
  int64_t opsetVersion() const { return OpsetVersion; }
  void setOpsetVersion(int64_t V) { OpsetVersion = V; }

private:
  /// A copy of S that lives as long as the graph.
  llvm::StringRef save(llvm::StringRef S);

  std::string Name;
  int64_t OpsetVersion = 0;
  /// Names of values and nodes and op types: one allocation per slab, not
  /// one per string (a CNN has hundreds of each). Moving the graph keeps
  /// the slabs where they are.
  llvm::BumpPtrAllocator Strings;
  /// Values and nodes, owned here and allocated in slabs for the same
  /// reason.
  Pool<Value> ValuePool;
  Pool<Node> NodePool;
  std::vector<Value *> Values;
  std::vector<Node *> Nodes;
  llvm::SmallVector<Value *, 4> Inputs;
  llvm::SmallVector<Value *, 4> Outputs;
  /// Keys are the values' own names (in Strings).
  llvm::DenseMap<llvm::StringRef, Value *, NameInfo> ValueByName;
};

} // namespace perfc::ir

#endif // PERFC_IR_GRAPH_H
