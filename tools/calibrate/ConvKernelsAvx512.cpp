//===- ConvKernelsAvx512.cpp - NCHWc convolution, AVX-512F ----------------===//
//
// NchwcConv's AVX-512F instance: this file is compiled with -mavx512f
// (tools/calibrate/CMakeLists.txt) and run only where the CPU has them
// (ConvKernels.cpp).
//
//===----------------------------------------------------------------------===//
#include "tools/calibrate/NchwcConv.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

using namespace perfc::calibrate;

namespace {
struct Avx512 {
  using V = __m512;
  static constexpr int Lanes = 16, TileBlocks = 4, TilePixels = 6;
  static constexpr const char *Name = "avx512f";
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float *P) { return _mm512_loadu_ps(P); }
  static void store(float *P, V X) { _mm512_storeu_ps(P, X); }
  static V set1(float X) { return _mm512_set1_ps(X); }
  static V fma(V A, V B, V C) { return _mm512_fmadd_ps(A, B, C); }
};
} // namespace

void perfc::calibrate::convAvx512(const ConvGeometry &G, bool Depthwise,
                                  const float *X, const float *W, float *Y,
                                  size_t Begin, size_t End) {
  NchwcConv<Avx512>::run(G, Depthwise, X, W, Y, Begin, End);
}

ConvKernelInfo perfc::calibrate::convAvx512Info() {
  return NchwcConv<Avx512>::info();
}

#endif
