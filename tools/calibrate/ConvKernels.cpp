//===- ConvKernels.cpp - NCHWc direct convolution for calibration ---------===//
//
// One instance of ConvKernels.inc per instruction set: AVX-512F (16-float
// channel blocks, 4 x 6 zmm accumulators, as MLAS's AVX-512 kernel), AVX2 +
// FMA (8-float blocks, 2 x 6 ymm accumulators) and portable C++ (8-float
// blocks the compiler vectorizes as it can), picked at run time.
//
//===----------------------------------------------------------------------===//
#include "tools/calibrate/Kernels.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PERFC_X86 1
#endif

using namespace perfc::calibrate;

#ifdef PERFC_X86

#define PERFC_CK_NS avx512
#define PERFC_CK_ATTR __attribute__((target("avx512f")))
#define PERFC_CK_LANES 16
#define PERFC_CK_F 4
#define PERFC_CK_P 6
#define V __m512
#define VZERO() _mm512_setzero_ps()
#define VLOAD(P) _mm512_loadu_ps(P)
#define VSTORE(P, X) _mm512_storeu_ps(P, X)
#define VSET1(X) _mm512_set1_ps(X)
#define VFMA(A, B, C) _mm512_fmadd_ps(A, B, C)
#include "tools/calibrate/ConvKernels.inc"
#undef PERFC_CK_NS
#undef PERFC_CK_ATTR
#undef PERFC_CK_LANES
#undef PERFC_CK_F
#undef PERFC_CK_P
#undef V
#undef VZERO
#undef VLOAD
#undef VSTORE
#undef VSET1
#undef VFMA

#define PERFC_CK_NS avx2
#define PERFC_CK_ATTR __attribute__((target("avx2,fma")))
#define PERFC_CK_LANES 8
#define PERFC_CK_F 2
#define PERFC_CK_P 6
#define V __m256
#define VZERO() _mm256_setzero_ps()
#define VLOAD(P) _mm256_loadu_ps(P)
#define VSTORE(P, X) _mm256_storeu_ps(P, X)
#define VSET1(X) _mm256_set1_ps(X)
#define VFMA(A, B, C) _mm256_fmadd_ps(A, B, C)
#include "tools/calibrate/ConvKernels.inc"
#undef PERFC_CK_NS
#undef PERFC_CK_ATTR
#undef PERFC_CK_LANES
#undef PERFC_CK_F
#undef PERFC_CK_P
#undef V
#undef VZERO
#undef VLOAD
#undef VSTORE
#undef VSET1
#undef VFMA

#endif // PERFC_X86

namespace {
/// Eight floats the compiler may keep in vector registers.
struct V8 {
  float X[8];
};
inline V8 v8Zero() { return V8{}; }
inline V8 v8Load(const float *P) {
  V8 R;
  std::memcpy(R.X, P, sizeof(R.X));
  return R;
}
inline void v8Store(float *P, const V8 &A) { std::memcpy(P, A.X, sizeof(A.X)); }
inline V8 v8Set1(float S) {
  V8 R;
  for (float &X : R.X)
    X = S;
  return R;
}
inline V8 v8Fma(const V8 &A, const V8 &B, V8 C) {
  for (int I = 0; I < 8; ++I)
    C.X[I] += A.X[I] * B.X[I];
  return C;
}
} // namespace

#define PERFC_CK_NS portable
#define PERFC_CK_ATTR
#define PERFC_CK_LANES 8
#define PERFC_CK_F 2
#define PERFC_CK_P 4
#define V V8
#define VZERO() v8Zero()
#define VLOAD(P) v8Load(P)
#define VSTORE(P, X) v8Store(P, X)
#define VSET1(X) v8Set1(X)
#define VFMA(A, B, C) v8Fma(A, B, C)
#include "tools/calibrate/ConvKernels.inc"
#undef PERFC_CK_NS
#undef PERFC_CK_ATTR
#undef PERFC_CK_LANES
#undef PERFC_CK_F
#undef PERFC_CK_P
#undef V
#undef VZERO
#undef VLOAD
#undef VSTORE
#undef VSET1
#undef VFMA

namespace {
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
  case ConvIsa::Avx512:
    return {16, 4, 6, "avx512f"};
  case ConvIsa::Avx2:
    return {8, 2, 6, "avx2+fma"};
  case ConvIsa::Portable:
    break;
  }
  return {8, 2, 4, "portable C++"};
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
    return Depthwise ? avx512::depthwise(G, X, W, Y, Begin, End)
                     : avx512::dense(G, X, W, Y, Begin, End);
  case ConvIsa::Avx2:
    return Depthwise ? avx2::depthwise(G, X, W, Y, Begin, End)
                     : avx2::dense(G, X, W, Y, Begin, End);
#endif
  default:
    return Depthwise ? portable::depthwise(G, X, W, Y, Begin, End)
                     : portable::dense(G, X, W, Y, Begin, End);
  }
}
