//===- ConvKernelsAvx2.cpp - NCHWc convolution, AVX2 + FMA ----------------===//
//
// NchwcConv's AVX2 + FMA instance: this file is compiled with -mavx2 -mfma
// (tools/calibrate/CMakeLists.txt) and run only where the CPU has them
// (ConvKernels.cpp).
//
//===----------------------------------------------------------------------===//
#include "tools/calibrate/NchwcConv.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

using namespace perfc::calibrate;

namespace {
struct Avx2 {
  using V = __m256;
  static constexpr int Lanes = 8, TileBlocks = 2, TilePixels = 6;
  static constexpr const char *Name = "avx2+fma";
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float *P) { return _mm256_loadu_ps(P); }
  static void store(float *P, V X) { _mm256_storeu_ps(P, X); }
  static V set1(float X) { return _mm256_set1_ps(X); }
  static V fma(V A, V B, V C) { return _mm256_fmadd_ps(A, B, C); }
};
} // namespace

void perfc::calibrate::convAvx2(const ConvGeometry &G, bool Depthwise,
                                const float *X, const float *W, float *Y,
                                size_t Begin, size_t End) {
  NchwcConv<Avx2>::run(G, Depthwise, X, W, Y, Begin, End);
}

ConvKernelInfo perfc::calibrate::convAvx2Info() {
  return NchwcConv<Avx2>::info();
}

#endif
