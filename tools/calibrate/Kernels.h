//===- Kernels.h - The loops calibration times ------------------*- C++ -*-===//
//
// Small kernels, each standing for a class of ONNX Runtime kernels. The
// vector ones are compiled for AVX-512, AVX2 and baseline x86-64 (GCC's
// target_clones) and picked at load time for the CPU they run on, so the
// binary stays portable and still measures the widest SIMD the CPU has.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_CALIBRATE_KERNELS_H
#define PERFC_TOOLS_CALIBRATE_KERNELS_H

#include <cstddef>
#include <cstdint>

namespace perfc::calibrate {

/// The widest vector ISA available, as used by the FMA kernels.
struct SimdInfo {
  unsigned WidthBits = 128; ///< 512 (AVX-512F), 256 (AVX/AVX2), else 128.
  bool Fma = false;         ///< FMA3 instructions.
  const char *Isa = "sse2"; ///< "avx512f", "avx2+fma", "sse2".
};
SimdInfo detectSimd();

/// Independent FMA chains on registers: Iters iterations; returns a value
/// to keep the work alive and sets *Flops to the FLOPs done.
double fmaLoopF32(uint64_t Iters, double *Flops);
double fmaLoopF64(uint64_t Iters, double *Flops);

/// A chain of dependent 1-cycle integer adds: Iters x 200 adds, as many
/// cycles; 0 where not x86-64 (then no clock is estimated).
uint64_t addChain(uint64_t Iters);
bool haveAddChain();

// Streaming kernels over [0, N).
void copyKernel(float *__restrict D, const float *__restrict S, size_t N);
void addKernel(float *__restrict C, const float *__restrict A,
               const float *__restrict B, size_t N);
void triadKernel(float *__restrict A, const float *__restrict B,
                 const float *__restrict C, float Scalar, size_t N);
/// y = exp(x), a vectorizable polynomial (as runtimes' own exp kernels).
void expKernel(float *__restrict Y, const float *__restrict X, size_t N);
/// Sum of X[0, N).
float sumKernel(const float *X, size_t N);
/// Layer normalization of Rows rows of Cols elements (scale and bias
/// vectors of Cols elements), as LayerNormalization over the last axis.
void layerNormKernel(float *__restrict Y, const float *__restrict X,
                     const float *__restrict Scale,
                     const float *__restrict Bias, size_t Rows, size_t Cols);
/// Y = X transposed by Perm, X of shape Dims (Rank axes), one element at a
/// time, each element's source offset computed from its output index (a
/// multiply-add per axis) and the index stepped like an odometer: how
/// ONNX Runtime's CPU Transpose copies a permutation that moves the
/// innermost axis and more than one axis (DoTransposeEltWise). Single
/// thread, as there.
void stridedTransposeKernel(float *__restrict Y, const float *__restrict X,
                            const size_t *Dims, const size_t *Perm,
                            size_t Rank);
/// Y[C][HW] -> Y[HW][C] for the rows [RowBegin, RowEnd) of HW, in tiles.
void transposeKernel(float *__restrict Y, const float *__restrict X, size_t C,
                     size_t HW, size_t RowBegin, size_t RowEnd);

/// A convolution in the NCHWc layout ONNX Runtime's MLAS converts CNNs to:
/// input [CinBlocks][Hp][Wp][lanes] (padding already applied: Hp = H + 2
/// pad), dense filters [CoutBlocks][CinBlocks][K][K][lanes in][lanes out],
/// depthwise filters [CoutBlocks][K][K][lanes], output
/// [CoutBlocks][OH][OW][lanes]; lanes is convKernelInfo().Lanes.
struct ConvGeometry {
  int CinBlocks = 1, CoutBlocks = 1; ///< Depthwise: both the channel blocks.
  int Hp = 1, Wp = 1;
  int K = 1, Stride = 1;
  int Pad = 0; ///< Already in Hp, Wp; edge pixels run one at a time.
  int OH = 1, OW = 1;
};

/// The direct-convolution kernel picked for this CPU at run time.
struct ConvKernelInfo {
  int Lanes;       ///< Floats per vector: the channel block.
  int TileBlocks;  ///< Output-channel blocks per register tile.
  int TilePixels;  ///< Output pixels per register tile.
  const char *Isa; ///< "avx512f", "avx2+fma", "portable C++".
};
ConvKernelInfo convKernelInfo();

/// The channel block of ONNX Runtime's NCHWc kernels on this CPU, as MLAS's
/// MlasNchwcGetBlockSize returns it: 16 with AVX-512F, 8 on other x86-64
/// CPUs; 0 (no NCHWc kernels) elsewhere: on ARM64, MLAS has them only in
/// builds made with onnxruntime_USE_ARM_NEON_NCHWC=ON, which the released
/// packages are not, and convolutions run im2col + SGEMM.
unsigned ortNchwcBlock();

/// Independent work items of a convolution (rows of output pixels times
/// register tiles of channels), to split over threads.
size_t convWorkItems(const ConvGeometry &G, bool Depthwise);
/// Computes the work items [Begin, End) of the convolution (ConvKernels.cpp).
void convNchwc(const ConvGeometry &G, bool Depthwise, const float *X,
               const float *W, float *Y, size_t Begin, size_t End);

} // namespace perfc::calibrate

#endif // PERFC_TOOLS_CALIBRATE_KERNELS_H
