//===- Fp8Recipe.cpp - FP8 training as Transformer Engine runs it ---------===//
//
// The recipe and its source are in Fp8Recipe.h.
//
//===----------------------------------------------------------------------===//
#include "passes/Fp8Recipe.h"
#include "passes/Fusion.h"

#include "ir/Graph.h"

using namespace perfc;

bool perfc::isFp8Gemm(const ir::Node &Head, const OpWork &W,
                      const KernelPlan &Plan) {
  if ((Head.opType() != "MatMul" && Head.opType() != "Gemm") ||
      !W.Gemm.valid() || W.Macs <= 0)
    return false;
  for (const ir::Value *In : Head.inputs()) {
    if (!In)
      continue;
    const ir::Value *Root = Plan.dataRoot(In);
    if (Root->isConstant())
      return true;
    const ir::Node *P = Root->producer();
    if (P && Plan.Exec[P->index()] == NodeExec::Folded)
      return true;
  }
  return false;
}

OpWork perfc::withFp8Operands(OpWork W) {
  W.BytesRead = W.SideBytesRead + (W.BytesRead - W.SideBytesRead) / 2;
  return W;
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
