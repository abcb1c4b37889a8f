//===- Attr.h - Typed op attributes ----------------------------*- C++ -*-===//
//
// Attributes of an op: a name and one typed value. Tensor-valued attributes
// keep their type and shape, and their data only when it is small (shape
// constants); graph-valued attributes (If/Loop/Scan bodies) are owned by the
// node as subgraphs and referenced here by index.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_IR_ATTR_H
#define PERFC_IR_ATTR_H

#include "ir/DType.h"
#include "ir/Shape.h"

#include "llvm/ADT/SmallVector.h"

#include <string>
#include <variant>
#include <vector>

namespace perfc::ir {

/// The values of a small constant tensor, widened to int64 or double. Only
/// tensors of a few thousand elements keep data: they define shapes, axes,
/// pads and trip counts. Weights never do.
struct ConstData {
  llvm::SmallVector<int64_t, 4> Ints;
  llvm::SmallVector<double, 0> Floats;
  bool isInt() const { return !Ints.empty() || Floats.empty(); }
};

struct TensorAttr {
  DType Type = DType::Undefined;
  Shape TensorShape;
  llvm::Optional<ConstData> Data;
};

/// Index into Node::subgraphs().
struct GraphRef {
  unsigned Index = 0;
};

class Attr {
public:
  using ValueT =
      std::variant<int64_t, double, std::string, std::vector<int64_t>,
                   std::vector<double>, std::vector<std::string>, TensorAttr,
                   GraphRef, std::vector<GraphRef>>;

  Attr(std::string Name, ValueT V) : Name(std::move(Name)), V(std::move(V)) {}

  llvm::StringRef name() const { return Name; }
  const ValueT &value() const { return V; }

  template <typename T> const T *get() const { return std::get_if<T>(&V); }

private:
  std::string Name;
  ValueT V;
};

} // namespace perfc::ir

#endif // PERFC_IR_ATTR_H
