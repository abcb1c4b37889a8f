//===- Fp8Recipe.cpp - FP8 training as Transformer Engine runs it ---------===//
//
// The recipe and its source are in Fp8Recipe.h.
//
//===----------------------------------------------------------------------===//
#include "passes/Fp8Recipe.h"
#include "passes/Fusion.h"

#include "ir/Graph.h"

#include "llvm/ADT/STLExtras.h"

using namespace perfc;

bool perfc::isFp8Gemm(const ir::Node &Head, const OpWork &W,
                      const KernelPlan &Plan) {
  if ((Head.opType() != "MatMul" && Head.opType() != "Gemm") ||
      !W.Gemm.valid() || W.Macs <= 0)
    return false;
  return llvm::any_of(Head.inputs(), [&](const ir::Value *In) {
    return In && Plan.isLoadTimeConstant(Plan.dataRoot(In));
  });
}

OpWork perfc::withFp8Operands(OpWork W) {
  W.BytesRead = W.SideBytesRead + (W.BytesRead - W.SideBytesRead) / 2;
  return W;
}

Fp8GemmTime perfc::fp8GemmTime(const OpWork &W, bool Backward, ir::DType Fp8,
                               const hw::Device &D,
                               const cost::TimeOptions &T) {
  const double Elements =
      W.Gemm.Batch * W.Gemm.M * (Backward ? W.Gemm.N : W.Gemm.K);
  Fp8GemmTime R;
  R.Cast = cost::opTime(fp8CastWork(Elements), D, T);
  cost::TimeOptions F = T;
  if (ir::isFloatingPoint(W.Type))
    F.ComputeType = Fp8;
  R.Gemm = cost::opTime(withFp8Operands(W), D, F);
  return R;
}

OpWork perfc::fp8CastWork(double Elements) {
  OpWork W;
  W.Class = OpClass::Elementwise;
  W.Type = ir::DType::BF16;
  W.Flops = Elements;
  W.BytesRead = 2 * Elements;
  W.BytesWritten = 2 * Elements;
  W.Formula = "cast to FP8 in both layouts: reads 2 B, writes 2 B per element";
  return W;
}
