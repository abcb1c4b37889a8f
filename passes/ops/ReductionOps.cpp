//===- ReductionOps.cpp - Work of reductions, softmax and pooling ---------===//
//
// Reductions cost a few flops per input element plus, for some, a finishing
// operation per output element (a divide for a mean, a square root for an L2
// norm). A special function (exp, log, sqrt) costs 4, as in
// ElementwiseOps.cpp. Reducing n elements takes n - 1 operations; perfc
// counts n, the usual approximation.
//
// | Op                                      | per in elem | per out elem   |
// |-----------------------------------------|-------------|----------------|
// | ReduceSum ReduceMax ReduceMin ReduceProd| 1           | 0              |
// | ReduceMean                              | 1           | 1 (divide)     |
// | ReduceL1 (abs, add)                     | 2           | 0              |
// | ReduceSumSquare (mul, add)              | 2           | 0              |
// | ReduceL2 (mul, add)                     | 2           | 4 (sqrt)       |
// | ReduceLogSum                            | 1           | 4 (log)        |
// | ReduceLogSumExp (max, sub, exp, add)    | 7           | 4 (log)        |
// | ArgMax ArgMin (compare-select)          | 1           | 0              |
// | Softmax (max, sub, exp, add, div)       | 8           | 0              |
// | LogSoftmax (max, sub, exp, add, sub)    | 8           | 0              |
// | Hardmax (arg-max)                       | 1           | 0              |
// | CumSum (add)                            | 1           | 0              |
// | GlobalMaxPool                           | 1           | 0              |
// | GlobalAveragePool                       | 1           | 1 (divide)     |
// | GlobalLpPool (p = 2: mul, add; root)    | 2           | 4              |
//
// ReduceLogSumExp is counted in the numerically stable form runtimes use
// (subtract the maximum first).
//
// | Pooling     | Flops                                            |
// |-------------|--------------------------------------------------|
// | MaxPool     | out_elems * prod(kernel)                         |
// | AveragePool | out_elems * (prod(kernel) + 1): adds, divide     |
// | LpPool      | out_elems * (2*prod(kernel) + 4): p = 2, root    |
//
//===----------------------------------------------------------------------===//
#include "passes/OpRegistry.h"
#include "passes/ops/OpCounts.h"

#include "ir/Graph.h"

#include <string>
#include <vector>

namespace perfc {

namespace {
/// Cost of a reduction: per input element, and per output element.
struct ReduceCost {
  const char *Op;
  unsigned PerInput;
  unsigned PerOutput;
};
} // namespace

static constexpr ReduceCost ReduceCosts[] = {
    {"ReduceSum", 1, 0},
    {"ReduceMax", 1, 0},
    {"ReduceMin", 1, 0},
    {"ReduceProd", 1, 0},
    {"ReduceMean", 1, 1},
    {"ReduceL1", 2, 0},
    {"ReduceSumSquare", 2, 0},
    {"ReduceL2", 2, 4},
    {"ReduceLogSum", 1, 4},
    {"ReduceLogSumExp", 7, 4},
    {"ArgMax", 1, 0},
    {"ArgMin", 1, 0},
    {"Softmax", SoftmaxFlops, 0},
    {"LogSoftmax", SoftmaxFlops, 0},
    {"Hardmax", 1, 0},
    {"CumSum", 1, 0},
    {"GlobalMaxPool", 1, 0},
    {"GlobalAveragePool", 1, 1},
    {"GlobalLpPool", 2, 4},
};

static const ReduceCost *reduceCost(llvm::StringRef Op) {
  for (const ReduceCost &C : ReduceCosts)
    if (Op == C.Op)
      return &C;
  return nullptr;
}

static void reduceWork(const ir::Node &N, OpWork &W) {
  const ReduceCost *C = reduceCost(N.opType());
  if (!C)
    return;
  W.Flops = C->PerInput * elems(N.input(0)) + C->PerOutput * elems(N.output(0));
  W.Formula = std::to_string(C->PerInput) + "*in_elems";
  if (C->PerOutput)
    W.Formula += " + " + std::to_string(C->PerOutput) + "*out_elems";
}

/// Product of the kernel_shape attribute; 0 when absent or negative.
static double kernelSize(const ir::Node &N) {
  std::vector<int64_t> Kernel = N.getInts("kernel_shape");
  if (Kernel.empty())
    return 0;
  double P = 1;
  for (int64_t K : Kernel)
    P *= K > 0 ? static_cast<double>(K) : 0;
  return P;
}

static void maxPoolWork(const ir::Node &N, OpWork &W) {
  W.Flops = elems(N.output(0)) * kernelSize(N);
  W.Formula = "out_elems*prod(kernel)";
}

static void averagePoolWork(const ir::Node &N, OpWork &W) {
  W.Flops = elems(N.output(0)) * (kernelSize(N) + 1);
  W.Formula = "out_elems*(prod(kernel) + 1)";
}

static void lpPoolWork(const ir::Node &N, OpWork &W) {
  W.Flops = elems(N.output(0)) * (2 * kernelSize(N) + 4);
  W.Formula = "out_elems*(2*prod(kernel) + 4)";
}

void registerReductionOps(OpRegistry &R) {
  for (const ReduceCost &C : ReduceCosts)
    R.add(C.Op, OpClass::Reduction, &reduceWork);
  R.add("MaxPool", OpClass::Reduction, &maxPoolWork);
  R.add("AveragePool", OpClass::Reduction, &averagePoolWork);
  R.add("LpPool", OpClass::Reduction, &lpPoolWork);
}

} // namespace perfc
