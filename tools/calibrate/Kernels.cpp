//===- Kernels.cpp - The loops calibration times --------------------------===//
#include "tools/calibrate/Kernels.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

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

// clang-format off
#define PERFC_12(X, ...)                                                       \
  X(0, __VA_ARGS__) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__)      \
  X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__)      \
  X(8, __VA_ARGS__) X(9, __VA_ARGS__) X(10, __VA_ARGS__) X(11, __VA_ARGS__)
// clang-format on

#ifdef PERFC_X86
namespace {

// One body for the four x86 kernels. A macro, not a template over an ISA
// type: the intrinsics inline only into a function compiled for their
// instruction set, and a target attribute cannot depend on a template
// argument. VEC is the vector type, MM the intrinsics' prefix (_mm512,
// _mm256), SFX their element suffix (ps, pd), ELEM the element type and LIT
// its literal suffix (f or nothing).
#define PERFC_FMA_DECL(K, VEC, MM, SFX, LIT)                                   \
  VEC A##K = MM##_set1_##SFX(1.0##LIT + (K)*1e-3##LIT);
#define PERFC_FMA_STEP(K, MM, SFX) A##K = MM##_fmadd_##SFX(A##K, M, C);
#define PERFC_FMA_SUM(K, MM, SFX) S = MM##_add_##SFX(S, A##K);
#define PERFC_FMA_CHAINS(NAME, TARGET, VEC, MM, SFX, ELEM, LIT)                \
  __attribute__((target(TARGET))) double NAME(uint64_t Iters) {                \
    PERFC_12(PERFC_FMA_DECL, VEC, MM, SFX, LIT)                                \
    const VEC M = MM##_set1_##SFX(0.999999##LIT),                              \
              C = MM##_set1_##SFX(1e-7##LIT);                                  \
    for (uint64_t I = 0; I < Iters; ++I) {                                     \
      PERFC_12(PERFC_FMA_STEP, MM, SFX)                                        \
    }                                                                          \
    VEC S = MM##_setzero_##SFX();                                              \
    PERFC_12(PERFC_FMA_SUM, MM, SFX)                                           \
    alignas(sizeof(VEC)) ELEM Out[sizeof(VEC) / sizeof(ELEM)];                 \
    MM##_store_##SFX(Out, S);                                                  \
    double T = 0;                                                              \
    for (ELEM X : Out)                                                         \
      T += X;                                                                  \
    return T;                                                                  \
  }

PERFC_FMA_CHAINS(fma512F32, "avx512f", __m512, _mm512, ps, float, f)
PERFC_FMA_CHAINS(fma512F64, "avx512f", __m512d, _mm512, pd, double, )
PERFC_FMA_CHAINS(fma256F32, "avx2,fma", __m256, _mm256, ps, float, f)
PERFC_FMA_CHAINS(fma256F64, "avx2,fma", __m256d, _mm256, pd, double, )

#undef PERFC_FMA_CHAINS
#undef PERFC_FMA_SUM
#undef PERFC_FMA_STEP
#undef PERFC_FMA_DECL

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

namespace {
/// The widest kernel this CPU runs for T (float or double); *Flops counts
/// 12 chains of one FMA (2 FLOPs) per lane per iteration.
template <typename T> double fmaLoop(uint64_t Iters, double *Flops) {
#ifdef PERFC_X86
  constexpr bool F32 = std::is_same_v<T, float>;
  SimdInfo S = detectSimd();
  if (S.WidthBits == 512) {
    *Flops = double(Iters) * 12 * (64 / sizeof(T)) * 2;
    return F32 ? fma512F32(Iters) : fma512F64(Iters);
  }
  if (S.Fma) {
    *Flops = double(Iters) * 12 * (32 / sizeof(T)) * 2;
    return F32 ? fma256F32(Iters) : fma256F64(Iters);
  }
#endif
  *Flops = double(Iters) * 48 * 2;
  return mulAddLoop<T>(Iters);
}
} // namespace

double perfc::calibrate::fmaLoopF32(uint64_t Iters, double *Flops) {
  return fmaLoop<float>(Iters, Flops);
}

double perfc::calibrate::fmaLoopF64(uint64_t Iters, double *Flops) {
  return fmaLoop<double>(Iters, Flops);
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
/// The sum of Term(X[i]) over X[0, N), in L lanes of partial sums, so the
/// additions vectorize without reassociation flags and do not wait on one
/// another. Always inlined: each clone of a PERFC_CLONES caller gets the
/// loop compiled for its own instruction set.
template <size_t L, typename F>
__attribute__((always_inline)) inline float laneSum(const float *X, size_t N,
                                                    F Term) {
  float Acc[L] = {};
  size_t I = 0;
  for (; I + L <= N; I += L)
    for (size_t J = 0; J < L; ++J)
      Acc[J] += Term(X[I + J]);
  float S = 0;
  for (; I < N; ++I)
    S += Term(X[I]);
  for (float A : Acc)
    S += A;
  return S;
}
} // namespace

PERFC_CLONES float perfc::calibrate::sumKernel(const float *X, size_t N) {
  return laneSum<64>(X, N, [](float V) { return V; });
}

PERFC_CLONES void perfc::calibrate::layerNormKernel(
    float *__restrict Y, const float *__restrict X,
    const float *__restrict Scale, const float *__restrict Bias, size_t Rows,
    size_t Cols) {
  for (size_t R = 0; R < Rows; ++R) {
    const float *Row = X + R * Cols;
    float *Out = Y + R * Cols;
    float Mean =
        laneSum<16>(Row, Cols, [](float V) { return V; }) / float(Cols);
    float Var = laneSum<16>(Row, Cols,
                            [Mean](float V) {
                              const float D = V - Mean;
                              return D * D;
                            }) /
                float(Cols);
    float Inv = 1.0f / __builtin_sqrtf(Var + 1e-5f);
    for (size_t J = 0; J < Cols; ++J)
      Out[J] = (Row[J] - Mean) * Inv * Scale[J] + Bias[J];
  }
}

void perfc::calibrate::stridedTransposeKernel(float *__restrict Y,
                                              const float *__restrict X,
                                              const size_t *Dims,
                                              const size_t *Perm, size_t Rank) {
  constexpr size_t MaxRank = 8;
  if (Rank == 0 || Rank > MaxRank)
    return;
  // Output axis I walks input axis Perm[I]: its extent and input stride.
  size_t Extent[MaxRank], Stride[MaxRank], Index[MaxRank] = {};
  size_t Elements = 1;
  for (size_t I = 0; I < Rank; ++I) {
    size_t S = 1;
    for (size_t J = Perm[I] + 1; J < Rank; ++J)
      S *= Dims[J];
    Stride[I] = S;
    Extent[I] = Dims[Perm[I]];
    Elements *= Dims[I];
  }
  for (size_t E = 0; E < Elements; ++E) {
    size_t Offset = 0;
    for (size_t I = 0; I < Rank; ++I)
      Offset += Index[I] * Stride[I];
    Y[E] = X[Offset];
    for (size_t I = Rank; I-- > 0;) {
      if (++Index[I] < Extent[I])
        break;
      Index[I] = 0;
    }
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
