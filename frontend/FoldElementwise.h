//===- FoldElementwise.h - Element-wise ops of the shape folder -*- C++ -*-===//
//
// Private to frontend/. The arithmetic, comparisons, logic and casts of the
// shape folder's interpreter, element by element with numpy broadcasting;
// FoldOps.cpp evaluates the ONNX ops with them.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_FRONTEND_FOLDELEMENTWISE_H
#define PERFC_FRONTEND_FOLDELEMENTWISE_H

#include "frontend/FoldValue.h"

namespace perfc::frontend::fold {

enum class BinOp {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  FMod,
  Pow,
  Min,
  Max,
  Equal,
  Less,
  LessEq,
  Greater,
  GreaterEq,
  And,
  Or,
  Xor
};

enum class UnOp { Neg, Abs, Sign, Floor, Ceil, Round, Sqrt, Reciprocal, Not };

llvm::Optional<int64_t> intBinary(BinOp Op, int64_t X, int64_t Y);
bool binary(BinOp Op, const Tensor &A, const Tensor &B, Tensor &Out);
bool variadic(BinOp Op, Inputs In, Outputs &Out);
bool unary(UnOp Op, const Tensor &X, Outputs &Out);
bool castTo(const Tensor &X, int32_t To, Tensor &Out);

} // namespace perfc::frontend::fold

#endif // PERFC_FRONTEND_FOLDELEMENTWISE_H
