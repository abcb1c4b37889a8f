//===- NormalizationOps.cpp - Work of normalisations ----------------------===//
//
// Normalisations cost a few flops per input element; the per-row or
// per-channel work (a reciprocal square root per row, folding the scale of
// a BatchNormalization) is negligible and not counted. A fused multiply-add
// counts 2.
//
// | Op                          | Flops/elem | breakdown                     |
// |-----------------------------|------------|-------------------------------|
// | BatchNormalization, infer.  | 2          | x*a + b (a, b per channel)    |
// | BatchNormalization, training| 6          | + mean (1), variance (3)      |
// | LayerNormalization          | 6 + 1 (+1) | statistics and normalise (6), |
// |                             |            | scale (1), bias if B (1)      |
// | InstanceNormalization       | 8          | as LayerNormalization         |
// | MeanVarianceNormalization   | 6          | as LayerNormalization, no     |
// |                             |            | scale or bias                 |
// | LpNormalization             | 3          | abs or square, add; divide    |
// | LRN                         | 2*size + 12| window sum of squares         |
// |                             |            | (2*size), bias + alpha/size*s |
// |                             |            | (2), pow (9), divide (1)      |
//
// Statistics and normalise: mean (add), variance (sub, mul, add), then
// (x - mean) * rstd (sub, mul). Pow is exp(beta * log(.)) as in
// ElementwiseOps.cpp.
//
// BatchNormalization's running mean and variance (inputs 3 and 4) are
// statistics, not trainable parameters: its entry marks them so.
//
//===----------------------------------------------------------------------===//
#include "passes/OpRegistry.h"
#include "passes/ops/OpCounts.h"

#include "ir/Graph.h"

#include <string>

namespace perfc {

static unsigned presentOutputs(const ir::Node &N) {
  unsigned Count = 0;
  for (const ir::Value *Out : N.outputs())
    Count += Out != nullptr;
  return Count;
}

static void batchNormWork(const ir::Node &N, OpWork &W) {
  // Training mode: the attribute (opset 14+), or the optional statistics
  // outputs, which older opsets produce only when training.
  bool Training = N.getInt("training_mode", 0) != 0 || presentOutputs(N) > 1;
  double X = elems(N.input(0));
  if (Training) {
    W.Flops = 6 * X;
    W.Formula = "6*in_elems (batch statistics + x*a+b)";
  } else {
    W.Flops = 2 * X;
    W.Formula = "2*in_elems (x*a+b)";
  }
}

static void layerNormWork(const ir::Node &N, OpWork &W) {
  // Scale (input 1) is required; bias (input 2) is optional.
  unsigned PerElem = LayerNormFlops + 1 + (N.input(2) ? 1 : 0);
  W.Flops = PerElem * elems(N.input(0));
  W.Formula = std::to_string(PerElem) + "*in_elems";
}

static void instanceNormWork(const ir::Node &N, OpWork &W) {
  W.Flops = 8 * elems(N.input(0));
  W.Formula = "8*in_elems";
}

static void meanVarianceNormWork(const ir::Node &N, OpWork &W) {
  W.Flops = 6 * elems(N.input(0));
  W.Formula = "6*in_elems";
}

static void lpNormWork(const ir::Node &N, OpWork &W) {
  W.Flops = 3 * elems(N.input(0));
  W.Formula = "3*in_elems";
}

static void lrnWork(const ir::Node &N, OpWork &W) {
  int64_t Size = N.getInt("size", 0);
  double PerElem = 2.0 * static_cast<double>(Size > 0 ? Size : 0) + 12;
  W.Flops = PerElem * elems(N.input(0));
  W.Formula = "(2*size + 12)*in_elems";
}

void registerNormalizationOps(OpRegistry &R) {
  // Running mean and variance are statistics, not parameters.
  R.add("BatchNormalization", OpClass::Normalization, &batchNormWork,
        {/*Weights=*/0, /*NotParameters=*/inputBits({3, 4})});
  R.add("LayerNormalization", OpClass::Normalization, &layerNormWork);
  R.add("InstanceNormalization", OpClass::Normalization, &instanceNormWork);
  R.add("MeanVarianceNormalization", OpClass::Normalization,
        &meanVarianceNormWork);
  R.add("LpNormalization", OpClass::Normalization, &lpNormWork);
  R.add("LRN", OpClass::Normalization, &lrnWork);
}

} // namespace perfc
