//===- OpRegistry.h - Work formulas keyed by op type -----------*- C++ -*-===//
//
// One entry per standard op type: its class and a function that fills in
// its work. Ops of another domain are keyed "domain:op_type"
// ("com.microsoft:Attention"). Entries live next to the ops they describe
// (passes/ops/*.cpp), each family adding itself through a register function, so
// a new op is a local change. The registry is built once and immutable
// afterwards.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_OPREGISTRY_H
#define PERFC_PASSES_OPREGISTRY_H

#include "costmodels/OpWork.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"

#include <initializer_list>

namespace perfc {
namespace ir {
class Node;
}

/// Fills in the work of one node. On entry W holds the defaults: the entry's
/// class, BytesRead = all distinct inputs, BytesWritten = all outputs, no
/// arithmetic. A function overrides what differs. Shapes may be partially
/// unknown (then sizes read as 0): a function must not fail or divide by zero
/// on them.
using OpWorkFn = void (*)(const ir::Node &N, OpWork &W);

/// Which constant inputs of an op are parameters. By default a
/// floating-point constant of two or more elements is one (see WorkPass.h);
/// an op overrides that per input position (bit I = input I).
struct InputRoles {
  /// Weights whatever their type: int8 weights of quantized ops.
  uint32_t Weights = 0;
  /// Never parameters: statistics (BatchNormalization's running mean and
  /// variance), quantization scales and zero points, Resize scales.
  uint32_t NotParameters = 0;
};

struct OpInfo {
  OpClass Class = OpClass::Other;
  OpWorkFn Fn = nullptr; ///< nullptr: the defaults are right.
  InputRoles Roles;
};

/// Bits for the given input positions.
constexpr uint32_t inputBits(std::initializer_list<unsigned> Inputs) {
  uint32_t Bits = 0;
  for (unsigned I : Inputs)
    Bits |= 1u << I;
  return Bits;
}

class OpRegistry {
public:
  void add(llvm::StringRef OpType, OpClass Class, OpWorkFn Fn = nullptr,
           InputRoles Roles = {}) {
    Entries[OpType] = OpInfo{Class, Fn, Roles};
  }
  const OpInfo *lookup(llvm::StringRef OpType) const {
    auto It = Entries.find(OpType);
    return It == Entries.end() ? nullptr : &It->second;
  }
  /// The entry of an op of Domain ("" for the standard domain).
  const OpInfo *lookup(llvm::StringRef Domain, llvm::StringRef OpType) const {
    if (Domain.empty())
      return lookup(OpType);
    llvm::SmallString<64> Key(Domain);
    Key += ':';
    Key += OpType;
    return lookup(Key.str());
  }
  size_t size() const { return Entries.size(); }
  const llvm::StringMap<OpInfo> &entries() const { return Entries; }

private:
  llvm::StringMap<OpInfo> Entries;
};

/// The registry of every standard ONNX op perfc costs, and of the ONNX
/// Runtime contrib ops it supports. Built on first use,
/// immutable afterwards, safe to share between threads.
const OpRegistry &defaultOpRegistry();

// Families (passes/ops/*.cpp).
void registerElementwiseOps(OpRegistry &R);
void registerMatMulOps(OpRegistry &R);
void registerConvOps(OpRegistry &R);
void registerNormalizationOps(OpRegistry &R);
void registerReductionOps(OpRegistry &R);
void registerDataMovementOps(OpRegistry &R);
void registerRecurrentOps(OpRegistry &R);
void registerMiscOps(OpRegistry &R);
/// ONNX Runtime's com.microsoft ops, keyed "com.microsoft:Op".
void registerContribOps(OpRegistry &R);

} // namespace perfc

#endif // PERFC_PASSES_OPREGISTRY_H
