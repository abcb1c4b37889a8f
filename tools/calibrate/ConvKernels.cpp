//===- ConvKernels.cpp - NCHWc direct convolution for calibration ---------===//
//
// NchwcConv (NchwcConv.h) for the instruction set this CPU has, picked at
// run time: AVX-512F (16-float channel blocks, 4 x 6 zmm accumulators, as
// MLAS's AVX-512 kernel), AVX2 + FMA (8-float blocks, 2 x 6 ymm
// accumulators) or portable C++ (8-float blocks the compiler vectorizes as
// it can: the instance in this file).
//
//===----------------------------------------------------------------------===//
#include "tools/calibrate/NchwcConv.h"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#define PERFC_X86 1
#endif

using namespace perfc::calibrate;

namespace {

struct Portable {
  /// Eight floats the compiler may keep in vector registers.
  struct V {
    float X[8];
  };
  static constexpr int Lanes = 8, TileBlocks = 2, TilePixels = 4;
  static constexpr const char *Name = "portable C++";
  static V zero() { return V{}; }
  static V load(const float *P) {
    V R;
    std::memcpy(R.X, P, sizeof(R.X));
    return R;
  }
  static void store(float *P, const V &A) { std::memcpy(P, A.X, sizeof(A.X)); }
  static V set1(float S) {
    V R;
    for (float &X : R.X)
      X = S;
    return R;
  }
  static V fma(const V &A, const V &B, V C) {
    for (int I = 0; I < 8; ++I)
      C.X[I] += A.X[I] * B.X[I];
    return C;
  }
};

enum class ConvIsa { Avx512, Avx2, Portable };

ConvIsa convIsa() {
#ifdef PERFC_X86
  const SimdInfo S = detectSimd();
  if (S.WidthBits == 512)
    return ConvIsa::Avx512;
  if (S.WidthBits == 256 && S.Fma)
    return ConvIsa::Avx2;
#endif
  return ConvIsa::Portable;
}

} // namespace

ConvKernelInfo perfc::calibrate::convKernelInfo() {
  switch (convIsa()) {
#ifdef PERFC_X86
  case ConvIsa::Avx512:
    return convAvx512Info();
  case ConvIsa::Avx2:
    return convAvx2Info();
#endif
  default:
    return NchwcConv<Portable>::info();
  }
}

unsigned perfc::calibrate::ortNchwcBlock() {
#if defined(__x86_64__)
  return convIsa() == ConvIsa::Avx512 ? 16 : 8;
#else
  return 0;
#endif
}

size_t perfc::calibrate::convWorkItems(const ConvGeometry &G, bool Depthwise) {
  if (Depthwise)
    return size_t(G.CoutBlocks) * G.OH;
  const int F = convKernelInfo().TileBlocks;
  return size_t((G.CoutBlocks + F - 1) / F) * G.OH;
}

void perfc::calibrate::convNchwc(const ConvGeometry &G, bool Depthwise,
                                 const float *X, const float *W, float *Y,
                                 size_t Begin, size_t End) {
  switch (convIsa()) {
#ifdef PERFC_X86
  case ConvIsa::Avx512:
    return convAvx512(G, Depthwise, X, W, Y, Begin, End);
  case ConvIsa::Avx2:
    return convAvx2(G, Depthwise, X, W, Y, Begin, End);
#endif
  default:
    return NchwcConv<Portable>::run(G, Depthwise, X, W, Y, Begin, End);
  }
}
