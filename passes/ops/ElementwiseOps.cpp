//===- ElementwiseOps.cpp - Work of elementwise ops -----------------------===//
//
// Unary, binary and variadic maps: Flops = output elements * a per-element
// cost; bytes keep the defaults (every distinct input once, so a broadcast
// operand is read once, and every output).
//
// A cost is the number of FP32-pipe operations one element takes. Plain
// arithmetic, compares, selects and conversions are 1. A special function
// (exp, log, sqrt, sin, cos) is 4: GPUs run it on the special-function unit,
// which issues at a quarter of the FMA rate (16 vs 64 lanes per NVIDIA SM),
// and vectorised CPU libm paths spend 4-10 operations on it. Composite
// functions add up their parts, with a fused multiply-add counted as 2
// (one MAC = 2 flops, as everywhere in perfc).
//
// | Ops                                                  | Flops/elem      |
// |------------------------------------------------------|-----------------|
// | Add Sub Mul Div Neg Abs Relu Sign Ceil Floor Round   | 1               |
// | Reciprocal Not And Or Xor BitShift IsInf IsNaN Where | 1               |
// | Equal Greater GreaterOrEqual Less LessOrEqual        | 1               |
// | ThresholdedRelu (select), Cast CastLike (convert)    | 1               |
// | Clip (min, max), LeakyRelu PRelu (compare, mul)      | 2               |
// | DequantizeLinear ((x - zp) * scale)                  | 2               |
// | Softsign (abs, add, div), Shrink (2 compares, add)   | 3               |
// | Mod (div, trunc, mul, sub), HardSigmoid (fma,min,max)| 4               |
// | QuantizeLinear (scale, round, add zp, saturate)      | 4               |
// | Exp Log Sqrt Sin Cos (one special function)          | 4               |
// | HardSwish (HardSigmoid, mul)                         | 5               |
// | Sigmoid (exp, add, div)                              | 6               |
// | Tanh (2/(1+exp(-2x)) - 1: exp, add, div, sub)        | 7               |
// | Elu (compare, exp, sub, mul)                         | 7               |
// | Selu (Elu, mul), Atanh (add, sub, div, log, mul)     | 8               |
// | Tan (sin, cos, div), Pow (exp(y*log x)), Softplus    | 9               |
// | Erf (degree ~9 polynomial), Asin Acos Atan (poly)    | 10              |
// | Sinh Cosh (2 exp, add, mul), Celu (div, exp, ...)    | 10              |
// | Asinh Acosh (log(x + sqrt(x*x +- 1)))                | 11              |
// | Sum Max Min (variadic)                               | inputs - 1      |
// | Mean (variadic: the adds, then one scale)            | inputs          |
//
//===----------------------------------------------------------------------===//
#include "passes/OpRegistry.h"
#include "passes/ops/OpCounts.h"

#include "ir/Graph.h"

#include <string>

namespace perfc {

namespace {
/// Cost of one output element of a fixed-arity elementwise op.
struct ElementCost {
  const char *Op;
  unsigned Flops;
};
} // namespace

// The table above, as data: it is both the cost lookup and the list of ops
// registered with `mapWork`.
static constexpr ElementCost MapCosts[] = {
    // Arithmetic, logic, compares, selects, conversions: one operation.
    {"Add", 1},
    {"Sub", 1},
    {"Mul", 1},
    {"Div", 1},
    {"Neg", 1},
    {"Abs", 1},
    {"Relu", 1},
    {"Sign", 1},
    {"Ceil", 1},
    {"Floor", 1},
    {"Round", 1},
    {"Reciprocal", 1},
    {"Not", 1},
    {"And", 1},
    {"Or", 1},
    {"Xor", 1},
    {"BitShift", 1},
    {"IsInf", 1},
    {"IsNaN", 1},
    {"Where", 1},
    {"Equal", 1},
    {"Greater", 1},
    {"GreaterOrEqual", 1},
    {"Less", 1},
    {"LessOrEqual", 1},
    {"ThresholdedRelu", 1},
    {"Cast", 1},
    {"CastLike", 1},
    // Two or more simple operations.
    {"Clip", 2},
    {"LeakyRelu", 2},
    {"PRelu", 2},
    {"DequantizeLinear", 2},
    {"Softsign", 3},
    {"Shrink", 3},
    {"Mod", 4},
    {"HardSigmoid", 4},
    {"QuantizeLinear", 4},
    {"HardSwish", 5},
    // Special functions and what is built on them.
    {"Exp", 4},
    {"Log", 4},
    {"Sqrt", 4},
    {"Sin", 4},
    {"Cos", 4},
    {"Sigmoid", 6},
    {"Tanh", 7},
    {"Elu", 7},
    {"Selu", 8},
    {"Atanh", 8},
    {"Tan", 9},
    {"Pow", 9},
    {"Softplus", 9},
    {"Erf", 10},
    {"Asin", 10},
    {"Acos", 10},
    {"Atan", 10},
    {"Sinh", 10},
    {"Cosh", 10},
    {"Celu", 10},
    {"Asinh", 11},
    {"Acosh", 11},
};

static unsigned mapCost(llvm::StringRef Op) {
  for (const ElementCost &C : MapCosts)
    if (Op == C.Op)
      return C.Flops;
  return 1; // Unreachable for registered ops; 1 is the safe guess.
}

/// Unary and binary maps (and Where, Clip, PRelu with their extra operands).
static void mapWork(const ir::Node &N, OpWork &W) {
  unsigned Cost = mapCost(N.opType());
  W.Flops = Cost * elems(N.output(0));
  W.Formula = std::to_string(Cost) + "*out_elems";
}

static unsigned presentInputs(const ir::Node &N) {
  unsigned Count = 0;
  for (const ir::Value *In : N.inputs())
    Count += In != nullptr;
  return Count;
}

/// Sum, Max, Min: one binary operation per extra operand and output element.
static void variadicWork(const ir::Node &N, OpWork &W) {
  unsigned Inputs = presentInputs(N);
  unsigned Extra = Inputs > 0 ? Inputs - 1 : 0;
  W.Flops = Extra * elems(N.output(0));
  W.Formula = "(inputs-1)*out_elems";
}

/// Mean: the adds of Sum, then one scale by 1/inputs.
static void meanWork(const ir::Node &N, OpWork &W) {
  W.Flops = presentInputs(N) * elems(N.output(0));
  W.Formula = "inputs*out_elems";
}

void registerElementwiseOps(OpRegistry &R) {
  for (const ElementCost &C : MapCosts)
    R.add(C.Op, OpClass::Elementwise, &mapWork);
  for (const char *Op : {"Sum", "Max", "Min"})
    R.add(Op, OpClass::Elementwise, &variadicWork);
  R.add("Mean", OpClass::Elementwise, &meanWork);
  // In QDQ models the weights are integer constants fed to
  // DequantizeLinear; scales and zero points are not parameters.
  R.add("DequantizeLinear", OpClass::Elementwise, &mapWork,
        {inputBits({0}), inputBits({1, 2})});
  R.add("QuantizeLinear", OpClass::Elementwise, &mapWork,
        {0, inputBits({1, 2})});
}

} // namespace perfc
