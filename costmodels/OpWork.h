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
  /// The size of the left operand's innermost batch axis where M folds it
  /// in (the heads of a query that read one shared key: [b, A, s, d] x
  /// [b, 1, d, t] is b products of A*s rows); 1 where it stays in Batch.
  double FoldedHeads = 1;
  bool valid() const { return Batch > 0 && M > 0 && N > 0 && K > 0; }
};

struct OpWork {
  double Macs = 0;
  double Flops = 0;
  double BytesRead = 0;
  double BytesWritten = 0;
  /// Trainable parameters first consumed by this op (see WorkPass.h).
  uint64_t Params = 0;
  /// How many tensors those parameters are (an optimizer written as a loop
  /// over tensors launches its kernels once per tensor).
  unsigned ParamTensors = 0;
  OpClass Class = OpClass::Other;
  /// Element type the arithmetic runs in (the type of the op's first
  /// floating-point or integer operand); cost models pick the peak for it.
  ir::DType Type = ir::DType::F32;
  /// True for ops that only reinterpret metadata (Reshape, Squeeze,
  /// Identity, Shape): runtimes execute them without moving data.
  bool IsView = false;
  GemmDims Gemm;
  /// A dense 2-D convolution with a 3x3 kernel, stride 1, dilation 1 and
  /// one group: the shape cuDNN's Winograd algorithms accept (cost models
  /// price it as one where the device says its library does, see
  /// hw::Device::WinogradTile). Its gradients with respect to the input
  /// and the weights are 3x3 stride-1 products too.
  bool Winograd3x3 = false;
  /// 2-D convolutions: bytes of the activation input and of the output.
  /// A library whose matrix-unit kernels want another memory layout than
  /// the framework stores (cuDNN's tensor-core kernels want NHWC, PyTorch
  /// stores NCHW) transposes both, in and back (hw::Device::MatrixConvLayout).
  double LayoutBytes = 0;
  /// 2-D convolutions (a 4-D weight): input channels per group, the
  /// weight's second dimension. With Gemm (Batch groups of N output
  /// channels) it gives the channel counts a CPU runtime's blocked kernels
  /// depend on (hw::Device::ConvChannelBlock); 0 elsewhere.
  double ConvInPerGroup = 0;
  /// 2-D convolutions with a 1x1 kernel, stride 1 and no padding: the
  /// input already is the GEMM's operand, no im2col copy is made.
  bool ConvPointwise = false;
  /// A fused attention kernel (softmax(Q.K^T).V in one, its scores on
  /// chip): priced at the device's `fused_attention` efficiency where it
  /// gives one (hw::Device::FusedAttention), else as a GEMM.
  bool FusedAttention = false;
  /// Transposes: the elements of a permutation with no contiguous run and
  /// no two-dimensional structure: the trailing axes that stay in place
  /// hold one element (the innermost axis moves), and more than one axis
  /// changes place (neither a reshape nor a batched 2-D transpose,
  /// which blocked kernels copy at memory speed). A runtime without a
  /// general tiled transpose copies these one element at a time (ONNX
  /// Runtime's CPU Transpose: DoTransposeEltWise, a multi-index step per
  /// element; hw::Device::StridedCopySecondsPerElement). 0 elsewhere. Not
  /// summed by +=: a kernel headed by the transpose keeps it, a transpose
  /// absorbed into another kernel has none.
  double StridedElements = 0;
  /// Bytes the op reads or writes that are no tensor of the graph (a
  /// training-mode Dropout's one-byte mask, written forward and read by its
  /// backward), included in BytesRead and BytesWritten. They keep their
  /// size whatever type the float tensors are stored or trained in, and a
  /// fused kernel, which counts its traffic by the tensors that cross it,
  /// adds them for each member.
  double SideBytesRead = 0;
  double SideBytesWritten = 0;
  /// The formula that produced Flops, for --explain and JSON; empty for the
  /// default (no arithmetic).
  std::string Formula;

  double bytes() const { return BytesRead + BytesWritten; }
  OpWork &operator+=(const OpWork &O) {
    Macs += O.Macs;
    Flops += O.Flops;
    BytesRead += O.BytesRead;
    BytesWritten += O.BytesWritten;
    SideBytesRead += O.SideBytesRead;
    SideBytesWritten += O.SideBytesWritten;
    Params += O.Params;
    ParamTensors += O.ParamTensors;
    return *this;
  }
};

} // namespace perfc

#endif // PERFC_COSTMODELS_OPWORK_H
