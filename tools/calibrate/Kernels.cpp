//===- Kernels.cpp - The loops calibration times --------------------------===//
#include "tools/calibrate/Kernels.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PERFC_X86 1
#endif

#if defined(PERFC_X86) && defined(__GNUC__) && !defined(__clang__)
// GCC: one clone per ISA, chosen by an ifunc resolver at load time. The
// copy loop must stay a loop (not a memcpy call, whose large-size path
// uses non-temporal stores no runtime kernel uses).
#define PERFC_CLONES                                                           \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#define PERFC_NO_MEMCPY                                                        \
  __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define PERFC_CLONES
#define PERFC_NO_MEMCPY
#endif

using namespace perfc::calibrate;

SimdInfo perfc::calibrate::detectSimd() {
  SimdInfo S;
#ifdef PERFC_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    S.WidthBits = 512;
    S.Fma = true;
    S.Isa = "avx512f";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    S.WidthBits = 256;
    S.Fma = true;
    S.Isa = "avx2+fma";
  } else if (__builtin_cpu_supports("avx")) {
    S.WidthBits = 256;
    S.Isa = "sse2";
  }
#endif
  return S;
}

//===----------------------------------------------------------------------===//
// FMA peak: 12 independent accumulators cover 2 pipes x 4-5 cycles latency.
//===----------------------------------------------------------------------===//

#define PERFC_12(X)                                                            \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

#ifdef PERFC_X86
namespace {

__attribute__((target("avx512f"))) double fma512F32(uint64_t Iters) {
#define DECL(K) __m512 A##K = _mm512_set1_ps(1.0f + (K)*1e-3f);
  PERFC_12(DECL)
#undef DECL
  const __m512 M = _mm512_set1_ps(0.999999f), C = _mm512_set1_ps(1e-7f);
  for (uint64_t I = 0; I < Iters; ++I) {
#define STEP(K) A##K = _mm512_fmadd_ps(A##K, M, C);
    PERFC_12(STEP)
#undef STEP
  }
  __m512 S = _mm512_setzero_ps();
#define SUM(K) S = _mm512_add_ps(S, A##K);
  PERFC_12(SUM)
#undef SUM
  alignas(64) float Out[16];
  _mm512_store_ps(Out, S);
  double T = 0;
  for (float X : Out)
    T += X;
  return T;
}

__attribute__((target("avx512f"))) double fma512F64(uint64_t Iters) {
#define DECL(K) __m512d A##K = _mm512_set1_pd(1.0 + (K)*1e-3);
  PERFC_12(DECL)
#undef DECL
  const __m512d M = _mm512_set1_pd(0.999999), C = _mm512_set1_pd(1e-7);
  for (uint64_t I = 0; I < Iters; ++I) {
#define STEP(K) A##K = _mm512_fmadd_pd(A##K, M, C);
    PERFC_12(STEP)
#undef STEP
  }
  __m512d S = _mm512_setzero_pd();
#define SUM(K) S = _mm512_add_pd(S, A##K);
  PERFC_12(SUM)
#undef SUM
  alignas(64) double Out[8];
  _mm512_store_pd(Out, S);
  double T = 0;
  for (double X : Out)
    T += X;
  return T;
}

__attribute__((target("avx2,fma"))) double fma256F32(uint64_t Iters) {
#define DECL(K) __m256 A##K = _mm256_set1_ps(1.0f + (K)*1e-3f);
  PERFC_12(DECL)
#undef DECL
  const __m256 M = _mm256_set1_ps(0.999999f), C = _mm256_set1_ps(1e-7f);
  for (uint64_t I = 0; I < Iters; ++I) {
#define STEP(K) A##K = _mm256_fmadd_ps(A##K, M, C);
    PERFC_12(STEP)
#undef STEP
  }
  __m256 S = _mm256_setzero_ps();
#define SUM(K) S = _mm256_add_ps(S, A##K);
  PERFC_12(SUM)
#undef SUM
  alignas(32) float Out[8];
  _mm256_store_ps(Out, S);
  double T = 0;
  for (float X : Out)
    T += X;
  return T;
}

__attribute__((target("avx2,fma"))) double fma256F64(uint64_t Iters) {
#define DECL(K) __m256d A##K = _mm256_set1_pd(1.0 + (K)*1e-3);
  PERFC_12(DECL)
#undef DECL
  const __m256d M = _mm256_set1_pd(0.999999), C = _mm256_set1_pd(1e-7);
  for (uint64_t I = 0; I < Iters; ++I) {
#define STEP(K) A##K = _mm256_fmadd_pd(A##K, M, C);
    PERFC_12(STEP)
#undef STEP
  }
  __m256d S = _mm256_setzero_pd();
#define SUM(K) S = _mm256_add_pd(S, A##K);
  PERFC_12(SUM)
#undef SUM
  alignas(32) double Out[4];
  _mm256_store_pd(Out, S);
  return Out[0] + Out[1] + Out[2] + Out[3];
}

} // namespace
#endif

namespace {
/// Portable fallback: a multiply and an add per lane, 4 lanes per vector
/// where the compiler vectorizes.
template <typename T> double mulAddLoop(uint64_t Iters) {
  T A[12 * 4];
  for (int K = 0; K < 48; ++K)
    A[K] = T(1) + T(K) * T(1e-3);
  const T M = T(0.999999), C = T(1e-7);
  for (uint64_t I = 0; I < Iters; ++I)
    for (int K = 0; K < 48; ++K)
      A[K] = A[K] * M + C;
  double S = 0;
  for (T X : A)
    S += X;
  return S;
}
} // namespace

double perfc::calibrate::fmaLoopF32(uint64_t Iters, double *Flops) {
#ifdef PERFC_X86
  SimdInfo S = detectSimd();
  if (S.WidthBits == 512) {
    *Flops = double(Iters) * 12 * 16 * 2;
    return fma512F32(Iters);
  }
  if (S.Fma) {
    *Flops = double(Iters) * 12 * 8 * 2;
    return fma256F32(Iters);
  }
#endif
  *Flops = double(Iters) * 48 * 2;
  return mulAddLoop<float>(Iters);
}

double perfc::calibrate::fmaLoopF64(uint64_t Iters, double *Flops) {
#ifdef PERFC_X86
  SimdInfo S = detectSimd();
  if (S.WidthBits == 512) {
    *Flops = double(Iters) * 12 * 8 * 2;
    return fma512F64(Iters);
  }
  if (S.Fma) {
    *Flops = double(Iters) * 12 * 4 * 2;
    return fma256F64(Iters);
  }
#endif
  *Flops = double(Iters) * 48 * 2;
  return mulAddLoop<double>(Iters);
}

bool perfc::calibrate::haveAddChain() {
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

uint64_t perfc::calibrate::addChain(uint64_t Iters) {
  uint64_t X = 0;
#if defined(__x86_64__)
  for (uint64_t I = 0; I < Iters; ++I)
    asm volatile(".rept 200\n\taddq $1, %0\n\t.endr" : "+r"(X));
#else
  (void)Iters;
#endif
  return X;
}

//===----------------------------------------------------------------------===//
// Streaming and elementwise kernels.
//===----------------------------------------------------------------------===//

PERFC_CLONES PERFC_NO_MEMCPY void
perfc::calibrate::copyKernel(float *__restrict D, const float *__restrict S,
                             size_t N) {
  for (size_t I = 0; I < N; ++I)
    D[I] = S[I];
}

PERFC_CLONES void perfc::calibrate::addKernel(float *__restrict C,
                                              const float *__restrict A,
                                              const float *__restrict B,
                                              size_t N) {
  for (size_t I = 0; I < N; ++I)
    C[I] = A[I] + B[I];
}

PERFC_CLONES void perfc::calibrate::triadKernel(float *__restrict A,
                                                const float *__restrict B,
                                                const float *__restrict C,
                                                float Scalar, size_t N) {
  for (size_t I = 0; I < N; ++I)
    A[I] = B[I] + Scalar * C[I];
}

PERFC_CLONES void perfc::calibrate::expKernel(float *__restrict Y,
                                              const float *__restrict X,
                                              size_t N) {
  for (size_t I = 0; I < N; ++I) {
    float V = X[I];
    V = V < -87.0f ? -87.0f : V;
    V = V > 88.0f ? 88.0f : V;
    // exp(v) = 2^r x exp(f), r = round(v / ln 2), |f| <= ln 2 / 2.
    const float Magic = 12582912.0f; // 1.5 x 2^23: rounds to an integer
    float R = (V * 1.44269504f + Magic) - Magic;
    float F = V - R * 0.693145752f - R * 1.42860677e-6f;
    float P = 1.98756912e-4f;
    P = P * F + 1.39819994e-3f;
    P = P * F + 8.33345205e-3f;
    P = P * F + 4.16657962e-2f;
    P = P * F + 1.66666657e-1f;
    P = P * F + 5.00000012e-1f;
    P = P * F + 1.0f;
    P = P * F + 1.0f;
    int32_t Bits = (static_cast<int32_t>(R) + 127) << 23;
    float Scale;
    std::memcpy(&Scale, &Bits, sizeof(Scale));
    Y[I] = P * Scale;
  }
}

namespace {
/// 64 lanes of partial sums, so the additions vectorize without
/// reassociation flags and do not wait on one another.
constexpr size_t Lanes = 64;
} // namespace

PERFC_CLONES float perfc::calibrate::sumKernel(const float *X, size_t N) {
  float Acc[Lanes] = {};
  size_t I = 0;
  for (; I + Lanes <= N; I += Lanes)
    for (size_t J = 0; J < Lanes; ++J)
      Acc[J] += X[I + J];
  float S = 0;
  for (; I < N; ++I)
    S += X[I];
  for (float A : Acc)
    S += A;
  return S;
}

namespace {
inline float sumSquaresOfDiff(const float *X, size_t N, float Mean) {
  float Acc[16] = {};
  size_t I = 0;
  for (; I + 16 <= N; I += 16)
    for (size_t J = 0; J < 16; ++J) {
      float D = X[I + J] - Mean;
      Acc[J] += D * D;
    }
  float S = 0;
  for (; I < N; ++I)
    S += (X[I] - Mean) * (X[I] - Mean);
  for (float A : Acc)
    S += A;
  return S;
}
inline float sum16(const float *X, size_t N) {
  float Acc[16] = {};
  size_t I = 0;
  for (; I + 16 <= N; I += 16)
    for (size_t J = 0; J < 16; ++J)
      Acc[J] += X[I + J];
  float S = 0;
  for (; I < N; ++I)
    S += X[I];
  for (float A : Acc)
    S += A;
  return S;
}
} // namespace

PERFC_CLONES void perfc::calibrate::layerNormKernel(
    float *__restrict Y, const float *__restrict X,
    const float *__restrict Scale, const float *__restrict Bias, size_t Rows,
    size_t Cols) {
  for (size_t R = 0; R < Rows; ++R) {
    const float *Row = X + R * Cols;
    float *Out = Y + R * Cols;
    float Mean = sum16(Row, Cols) / float(Cols);
    float Var = sumSquaresOfDiff(Row, Cols, Mean) / float(Cols);
    float Inv = 1.0f / __builtin_sqrtf(Var + 1e-5f);
    for (size_t J = 0; J < Cols; ++J)
      Out[J] = (Row[J] - Mean) * Inv * Scale[J] + Bias[J];
  }
}

PERFC_CLONES void perfc::calibrate::transposeKernel(float *__restrict Y,
                                                    const float *__restrict X,
                                                    size_t C, size_t HW,
                                                    size_t RowBegin,
                                                    size_t RowEnd) {
  constexpr size_t T = 16;
  for (size_t P0 = RowBegin; P0 < RowEnd; P0 += T) {
    size_t P1 = std::min(P0 + T, RowEnd);
    for (size_t C0 = 0; C0 < C; C0 += T) {
      size_t C1 = std::min(C0 + T, C);
      for (size_t P = P0; P < P1; ++P)
        for (size_t Ch = C0; Ch < C1; ++Ch)
          Y[P * C + Ch] = X[Ch * HW + P];
    }
  }
}
