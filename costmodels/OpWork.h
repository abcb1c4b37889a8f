//===- OpWork.h - Device-independent work of one op ---------*- C++ -*-===//
//
// What an op does, before any hardware is involved: multiply-accumulates,
// arithmetic operations, bytes read and written, parameters. Like XLA's
// HloCostAnalysis, the counting is kept apart from turning work into time
// (the functions beside this header), so one count serves every device.
// The counting itself happens in passes/ (WorkPass and passes/ops).
//
// Conventions (README "Counting conventions"):
//  * a MAC is one multiply-add; ops built on products (Conv, ConvTranspose,
//    Gemm, MatMul, Einsum, RNN/LSTM/GRU, attention) report MACs and
//    Flops = 2 * MACs plus their elementwise epilogue (bias, activations);
//  * other ops report Flops as arithmetic operations per output (or input)
//    element; data movement ops have Flops = 0;
//  * BytesRead is every distinct input tensor once (a Gather reads only the
//    rows it gathers), BytesWritten every output, at their stored dtypes.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_COSTMODELS_OPWORK_H
#define PERFC_COSTMODELS_OPWORK_H

#include "ir/DType.h"
#include "ir/OpClass.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace perfc {

/// The matrix product an op amounts to: Batch independent (M x K) x (K x N)
/// products. Conv is an implicit GEMM: M = N*prod(out_spatial), N =
/// Cout/group, K = (Cin/group)*prod(kernel), Batch = group. Cost models use
/// it for tile and wave quantisation; all zero for other ops.
struct GemmDims {
  double Batch = 0, M = 0, N = 0, K = 0;
  bool valid() const { return Batch > 0 && M > 0 && N > 0 && K > 0; }
};

struct OpWork {
  double Macs = 0;
  double Flops = 0;
  double BytesRead = 0;
  double BytesWritten = 0;
  /// Trainable parameters first consumed by this op (see WorkPass.h).
  uint64_t Params = 0;
  OpClass Class = OpClass::Other;
  /// Element type the arithmetic runs in (the type of the op's first
  /// floating-point or integer operand); cost models pick the peak for it.
  ir::DType Type = ir::DType::F32;
  /// True for ops that only reinterpret metadata (Reshape, Squeeze,
  /// Identity, Shape): runtimes execute them without moving data.
  bool IsView = false;
  GemmDims Gemm;
  /// The formula that produced Flops, for --explain and JSON; empty for the
  /// default (no arithmetic).
  std::string Formula;

  double bytes() const { return BytesRead + BytesWritten; }
  OpWork &operator+=(const OpWork &O) {
    Macs += O.Macs;
    Flops += O.Flops;
    BytesRead += O.BytesRead;
    BytesWritten += O.BytesWritten;
    Params += O.Params;
    return *this;
  }
};

} // namespace perfc

#endif // PERFC_COSTMODELS_OPWORK_H
