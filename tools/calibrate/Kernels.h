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
/// Y[C][HW] -> Y[HW][C] for the rows [RowBegin, RowEnd) of HW, in tiles.
void transposeKernel(float *__restrict Y, const float *__restrict X, size_t C,
                     size_t HW, size_t RowBegin, size_t RowEnd);
/// im2col of one NCHW image (no padding beyond Pad, dilation 1): Col is
/// (C*KH*KW) x (OH*OW).
void im2col(float *__restrict Col, const float *__restrict X, int C, int H,
            int W, int KH, int KW, int Stride, int Pad, int OH, int OW);

} // namespace perfc::calibrate

#endif // PERFC_TOOLS_CALIBRATE_KERNELS_H
