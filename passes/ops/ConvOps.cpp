//===- ConvOps.cpp - Work of convolutions ---------------------------------===//
//
// Conv, ConvTranspose and the integer and quantised convolutions. They report
// MACs and Flops = 2 * MACs plus their elementwise epilogue.
//
// | Op            | MACs                                  | epilogue/out elem |
// |---------------|---------------------------------------|-------------------|
// | Conv          | N*Cout*prod(out_sp)*(Cin/g)*prod(k)   | 1 (bias, if B)    |
// | ConvInteger   | as Conv                               | -                 |
// | QLinearConv   | as Conv                               | 3 (requantize)    |
// |               |                                       | + 1 (bias, if B)  |
// | ConvTranspose | N*Cin*prod(in_sp)*(Cout/g)*prod(k)    | 1 (bias, if B)    |
//
// A Conv's weight is [Cout, Cin/group, k...] and its output
// [N, Cout, out spatial...], so MACs = elems(Y) * prod(W.shape[1:]): stride,
// padding and dilation act through the output shape. A ConvTranspose's
// weight is [Cin, Cout/group, k...] and each input pixel scatters a whole
// kernel, so MACs = elems(X) * prod(W.shape[1:]); the overlap-add of the
// scattered kernels is part of the MACs. Requantising an output (multiply by
// the combined scale, add the zero point, saturate) is 3 flops; zero points
// of the inputs are folded into sums by runtimes and cost nothing here.
//
//===----------------------------------------------------------------------===//
#include "passes/OpRegistry.h"
#include "passes/ops/OpCounts.h"

#include "ir/Graph.h"

#include <algorithm>
#include <vector>

namespace perfc {

/// MACs each output (Conv) or input (ConvTranspose) element takes: the
/// product of the weight's dimensions after the first, i.e. channels per
/// group times the kernel. Without a weight shape, falls back on the
/// kernel_shape attribute and the channels of X. 0 when unknown.
static double macsPerElement(const ir::Node &N, const ir::Value *X,
                             const ir::Value *Wt, bool Transposed) {
  if (Wt && Wt->shape().isRanked() && Wt->shape().rank() >= 2) {
    double P = 1;
    for (unsigned I = 1; I < Wt->shape().rank(); ++I)
      P *= static_cast<double>(Wt->shape().size(I));
    return P;
  }
  std::vector<int64_t> Kernel = N.getInts("kernel_shape");
  int64_t Group = N.getInt("group", 1);
  // A Conv's per-group input channels come from X; a ConvTranspose's
  // per-group output channels would need the output, which W also lacks.
  if (Transposed || Kernel.empty() || Group <= 0 || !X)
    return 0;
  double P = static_cast<double>(X->shape().size(1) / Group);
  for (int64_t K : Kernel)
    P *= static_cast<double>(std::max<int64_t>(K, 0));
  return P;
}

/// Bias adds: one per output element when the bias input is present.
static void addBias(const ir::Node &N, unsigned BiasInput, OpWork &W) {
  if (!N.input(BiasInput))
    return;
  W.Flops += elems(N.output(0));
  W.Formula += " + out_elems (bias)";
}

/// Conv as an implicit GEMM (see GemmDims).
static GemmDims implicitGemm(const ir::Node &N, double MacsPerElement) {
  const ir::Value *Y = N.output(0);
  if (!Y || !Y->shape().isRanked() || Y->shape().rank() < 2)
    return {};
  const double Groups = std::max<int64_t>(1, N.getInt("group", 1));
  const double Cout = Y->shape().size(1);
  if (Cout <= 0)
    return {};
  return {Groups, elems(Y) / Cout, Cout / Groups, MacsPerElement};
}

/// Attribute list all of whose entries are 1 (absent: the ONNX default, 1).
static bool allOnes(const ir::Node &N, llvm::StringRef Name) {
  for (int64_t V : N.getInts(Name))
    if (V != 1)
      return false;
  return true;
}

/// Attribute list all of whose entries are 0 (absent: the ONNX default).
/// auto_pad SAME_* pads a 1x1 stride-1 kernel by nothing, so only the
/// explicit pads matter here.
static bool allZeros(const ir::Node &N, llvm::StringRef Name) {
  for (int64_t V : N.getInts(Name))
    if (V != 0)
      return false;
  return true;
}

/// A dense 2-D 3x3 convolution with stride 1 and dilation 1 (see
/// OpWork::Winograd3x3), read from the weight's shape [Cout, Cin, 3, 3].
static bool isWinograd3x3(const ir::Node &N, const ir::Value *Wt) {
  if (!Wt || !Wt->shape().isRanked() || Wt->shape().rank() != 4)
    return false;
  return Wt->shape().size(2) == 3 && Wt->shape().size(3) == 3 &&
         N.getInt("group", 1) == 1 && allOnes(N, "strides") &&
         allOnes(N, "dilations");
}

static void convWork(const ir::Node &N, OpWork &W) {
  const double PerElement =
      macsPerElement(N, N.input(0), N.input(1), /*Transposed=*/false);
  W.Macs = elems(N.output(0)) * PerElement;
  W.Gemm = implicitGemm(N, PerElement);
  W.Flops = 2 * W.Macs;
  W.Formula = "2*N*Cout*prod(out_spatial)*(Cin/group)*prod(kernel)";
  addBias(N, 2, W);
  W.Winograd3x3 = isWinograd3x3(N, N.input(1));
  const ir::Value *X = N.input(0), *Y = N.output(0);
  if (X && Y && X->shape().isRanked() && X->shape().rank() == 4)
    W.LayoutBytes = static_cast<double>(X->bytes() + Y->bytes());
  const ir::Value *Wt = N.input(1);
  if (Wt && Wt->shape().isRanked() && Wt->shape().rank() == 4 &&
      Wt->shape().size(1) > 0) {
    W.ConvInPerGroup = static_cast<double>(Wt->shape().size(1));
    W.ConvPointwise = Wt->shape().size(2) == 1 && Wt->shape().size(3) == 1 &&
                      allOnes(N, "strides") && allZeros(N, "pads");
  }
}

static void convIntegerWork(const ir::Node &N, OpWork &W) {
  // Inputs: x, w, x_zero_point, w_zero_point; no bias.
  W.Macs = elems(N.output(0)) *
           macsPerElement(N, N.input(0), N.input(1), /*Transposed=*/false);
  W.Flops = 2 * W.Macs;
  W.Formula = "2*N*Cout*prod(out_spatial)*(Cin/group)*prod(kernel)";
}

static void qLinearConvWork(const ir::Node &N, OpWork &W) {
  // Inputs: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B.
  W.Macs = elems(N.output(0)) *
           macsPerElement(N, N.input(0), N.input(3), /*Transposed=*/false);
  W.Flops = 2 * W.Macs + RequantizeFlops * elems(N.output(0));
  W.Formula = "2*N*Cout*prod(out_spatial)*(Cin/group)*prod(kernel) + "
              "3*out_elems (requantize)";
  addBias(N, 8, W);
}

static void convTransposeWork(const ir::Node &N, OpWork &W) {
  W.Macs = elems(N.input(0)) *
           macsPerElement(N, N.input(0), N.input(1), /*Transposed=*/true);
  W.Flops = 2 * W.Macs;
  W.Formula = "2*N*Cin*prod(in_spatial)*(Cout/group)*prod(kernel)";
  addBias(N, 2, W);
}

void registerConvOps(OpRegistry &R) {
  R.add("Conv", OpClass::Conv, &convWork);
  // Quantized weights count as parameters whatever their integer type;
  // scales and zero points do not.
  R.add("ConvInteger", OpClass::Conv, &convIntegerWork,
        {inputBits({1}), inputBits({2, 3})});
  R.add("QLinearConv", OpClass::Conv, &qLinearConvWork,
        {inputBits({3, 8}), inputBits({1, 2, 4, 5, 6, 7})});
  R.add("ConvTranspose", OpClass::Conv, &convTransposeWork);
}

} // namespace perfc
