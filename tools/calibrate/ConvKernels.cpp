//===- ConvKernels.cpp - NCHWc direct convolution for calibration ---------===//
//
// The loop nest is MLAS's NCHWc kernel (ONNX Runtime's CPU convolution):
// for a row of output pixels and F blocks of output channels, F x P vector
// accumulators stay in registers while every input channel and kernel tap
// is folded in, one broadcast input value times F filter vectors per pixel.
// Depthwise convolutions multiply an input vector by a filter vector per
// tap instead (no reuse across output channels: one load per FMA), several
// output vectors of a row at a time, the edges one at a time.
//
// One template, NchwcConv<Isa>, instantiated per instruction set, each with
// its vector type and register tile: AVX-512F (16-float channel blocks,
// 4 x 6 zmm accumulators, as MLAS's AVX-512 kernel), AVX2 + FMA (8-float
// blocks, 2 x 6 ymm accumulators) and portable C++ (8-float blocks the
// compiler vectorizes as it can), picked at run time.
//
//===----------------------------------------------------------------------===//
#include "tools/calibrate/Kernels.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PERFC_X86 1
#endif

// The kernel templates are compiled without the instruction set of their
// vector type and only ever run inlined into a function that has it (the
// entries below); g++ warns that their standalone form would pass vectors
// in another ABI, which cannot happen.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

using namespace perfc::calibrate;

namespace {

// Each instruction set: its vector type V of Lanes floats (the channel
// block), the register tile (TileBlocks output-channel blocks by
// TilePixels output pixels) and the five operations the kernels use, with
// fma(A, B, C) = A * B + C.

#ifdef PERFC_X86
struct Avx512 {
  using V = __m512;
  static constexpr int Lanes = 16, TileBlocks = 4, TilePixels = 6;
  static constexpr const char *Name = "avx512f";
  [[gnu::target("avx512f")]] static V zero() { return _mm512_setzero_ps(); }
  [[gnu::target("avx512f")]] static V load(const float *P) {
    return _mm512_loadu_ps(P);
  }
  [[gnu::target("avx512f")]] static void store(float *P, V X) {
    _mm512_storeu_ps(P, X);
  }
  [[gnu::target("avx512f")]] static V set1(float X) {
    return _mm512_set1_ps(X);
  }
  [[gnu::target("avx512f")]] static V fma(V A, V B, V C) {
    return _mm512_fmadd_ps(A, B, C);
  }
};

struct Avx2 {
  using V = __m256;
  static constexpr int Lanes = 8, TileBlocks = 2, TilePixels = 6;
  static constexpr const char *Name = "avx2+fma";
  [[gnu::target("avx2,fma")]] static V zero() { return _mm256_setzero_ps(); }
  [[gnu::target("avx2,fma")]] static V load(const float *P) {
    return _mm256_loadu_ps(P);
  }
  [[gnu::target("avx2,fma")]] static void store(float *P, V X) {
    _mm256_storeu_ps(P, X);
  }
  [[gnu::target("avx2,fma")]] static V set1(float X) {
    return _mm256_set1_ps(X);
  }
  [[gnu::target("avx2,fma")]] static V fma(V A, V B, V C) {
    return _mm256_fmadd_ps(A, B, C);
  }
};
#endif // PERFC_X86

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

template <class Isa> struct NchwcConv {
  using V = typename Isa::V;
  static constexpr int B = Isa::Lanes;

  template <int F, int P>
  static void denseTile(const ConvGeometry &G, const float *X, const float *W,
                        float *Y, int Ocb, int Oh, int Ow) {
    V Acc[F][P];
#pragma GCC unroll 8
    for (int f = 0; f < F; ++f)
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p)
        Acc[f][p] = Isa::zero();
    const size_t FStride = size_t(G.CinBlocks) * G.K * G.K * B * B;
    const size_t XStep = size_t(G.Stride) * B;
    for (int Icb = 0; Icb < G.CinBlocks; ++Icb)
      for (int Kh = 0; Kh < G.K; ++Kh) {
        const float *XRow =
            X + (size_t(Icb) * G.Hp + size_t(Oh) * G.Stride + Kh) * G.Wp * B +
            size_t(Ow) * XStep;
        const float *WRow =
            W + ((size_t(Ocb) * G.CinBlocks + Icb) * G.K + Kh) * G.K * B * B;
        for (int Kw = 0; Kw < G.K; ++Kw) {
          const float *Xp = XRow + size_t(Kw) * B;
          const float *Wp = WRow + size_t(Kw) * B * B;
          for (int Ic = 0; Ic < B; ++Ic) {
            V Wv[F];
#pragma GCC unroll 8
            for (int f = 0; f < F; ++f)
              Wv[f] = Isa::load(Wp + f * FStride + size_t(Ic) * B);
#pragma GCC unroll 8
            for (int p = 0; p < P; ++p) {
              const V Xv = Isa::set1(Xp[p * XStep + Ic]);
#pragma GCC unroll 8
              for (int f = 0; f < F; ++f)
                Acc[f][p] = Isa::fma(Xv, Wv[f], Acc[f][p]);
            }
          }
        }
      }
#pragma GCC unroll 8
    for (int f = 0; f < F; ++f)
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p)
        Isa::store(Y + ((size_t(Ocb + f) * G.OH + Oh) * G.OW + Ow + p) * B,
                   Acc[f][p]);
  }

  template <int F>
  static void denseRow(const ConvGeometry &G, const float *X, const float *W,
                       float *Y, int Ocb, int Oh) {
    constexpr int P = Isa::TilePixels;
    // Output pixels whose window reaches into the padding: MLAS computes
    // them one at a time (bounds checked), the rest in full tiles.
    const int Edge = std::min(G.OW / 2, (G.Pad + G.Stride - 1) / G.Stride);
    for (int E = 0; E < Edge; ++E) {
      denseTile<F, 1>(G, X, W, Y, Ocb, Oh, E);
      denseTile<F, 1>(G, X, W, Y, Ocb, Oh, G.OW - 1 - E);
    }
    const int End = G.OW - Edge;
    int Ow = Edge;
    for (; Ow + P <= End; Ow += P)
      denseTile<F, P>(G, X, W, Y, Ocb, Oh, Ow);
    switch (End - Ow) {
    case 5:
      denseTile<F, 5>(G, X, W, Y, Ocb, Oh, Ow);
      break;
    case 4:
      denseTile<F, 4>(G, X, W, Y, Ocb, Oh, Ow);
      break;
    case 3:
      denseTile<F, 3>(G, X, W, Y, Ocb, Oh, Ow);
      break;
    case 2:
      denseTile<F, 2>(G, X, W, Y, Ocb, Oh, Ow);
      break;
    case 1:
      denseTile<F, 1>(G, X, W, Y, Ocb, Oh, Ow);
      break;
    default:
      break;
    }
  }

  static void dense(const ConvGeometry &G, const float *X, const float *W,
                    float *Y, size_t Begin, size_t End) {
    constexpr int F = Isa::TileBlocks;
    for (size_t Item = Begin; Item < End; ++Item) {
      // Items run over (output row, group of F channel blocks), rows outer,
      // so that threads share input rows rather than filters.
      const int Oh = int(Item % size_t(G.OH));
      const int Ocb = int(Item / size_t(G.OH)) * F;
      switch (std::min(F, G.CoutBlocks - Ocb)) {
      case F:
        denseRow<F>(G, X, W, Y, Ocb, Oh);
        break;
      case 1:
        denseRow<1>(G, X, W, Y, Ocb, Oh);
        break;
      default:
        for (int O = Ocb; O < G.CoutBlocks; ++O)
          denseRow<1>(G, X, W, Y, O, Oh);
        break;
      }
    }
  }

  template <int P>
  static void depthwiseTile(const ConvGeometry &G, const float *X,
                            const float *W, float *Y, int Cb, int Oh, int Ow) {
    V Acc[P];
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
      Acc[p] = Isa::zero();
    const size_t XStep = size_t(G.Stride) * B;
    const unsigned H = unsigned(G.Hp - 2 * G.Pad),
                   Wd = unsigned(G.Wp - 2 * G.Pad);
    for (int Kh = 0; Kh < G.K; ++Kh) {
      // Taps in the padding are skipped, as a kernel reading the unpadded
      // tensor must (MLAS does; the input here is padded, so the check is
      // the only cost).
      if (unsigned(Oh * G.Stride + Kh - G.Pad) >= H)
        continue;
      const float *XRow =
          X + (size_t(Cb) * G.Hp + size_t(Oh) * G.Stride + Kh) * G.Wp * B +
          size_t(Ow) * XStep;
      const float *WRow = W + (size_t(Cb) * G.K + Kh) * G.K * B;
      for (int Kw = 0; Kw < G.K; ++Kw) {
        if (P == 1 && unsigned(Ow * G.Stride + Kw - G.Pad) >= Wd)
          continue;
        const V Wv = Isa::load(WRow + size_t(Kw) * B);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p)
          Acc[p] = Isa::fma(Isa::load(XRow + p * XStep + size_t(Kw) * B), Wv,
                            Acc[p]);
      }
    }
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
      Isa::store(Y + ((size_t(Cb) * G.OH + Oh) * G.OW + Ow + p) * B, Acc[p]);
  }

  static void depthwise(const ConvGeometry &G, const float *X, const float *W,
                        float *Y, size_t Begin, size_t End) {
    // MLAS's NCHWc depthwise structure (MlasConvDepthwiseFloatKernel): per
    // output row, the outputs whose window reaches into the padding one at
    // a time with every tap checked, the interior vectorised over the
    // output width, P output vectors at a time as independent FMA chains
    // (one input load per FMA, the filter vector shared). Taps stream
    // through once per output; what does not shrink with the kernel size
    // (the row's setup, the edge outputs, the output stores) is the
    // per-output floor the description's time_per_output measures.
    constexpr int P = Isa::TilePixels;
    for (size_t Item = Begin; Item < End; ++Item) {
      const int Oh = int(Item % size_t(G.OH));
      const int Cb = int(Item / size_t(G.OH));
      const int Edge = std::min(G.OW / 2, (G.Pad + G.Stride - 1) / G.Stride);
      for (int E = 0; E < Edge; ++E) {
        depthwiseTile<1>(G, X, W, Y, Cb, Oh, E);
        depthwiseTile<1>(G, X, W, Y, Cb, Oh, G.OW - 1 - E);
      }
      const int Stop = G.OW - Edge;
      int Ow = Edge;
      for (; Ow + P <= Stop; Ow += P)
        depthwiseTile<P>(G, X, W, Y, Cb, Oh, Ow);
      for (; Ow < Stop; ++Ow)
        depthwiseTile<1>(G, X, W, Y, Cb, Oh, Ow);
    }
  }

  static void run(const ConvGeometry &G, bool Depthwise, const float *X,
                  const float *W, float *Y, size_t Begin, size_t End) {
    if (Depthwise)
      depthwise(G, X, W, Y, Begin, End);
    else
      dense(G, X, W, Y, Begin, End);
  }

  static ConvKernelInfo info() {
    return {Isa::Lanes, Isa::TileBlocks, Isa::TilePixels, Isa::Name};
  }
};

// The entries: each enables its vector type's instruction set and inlines
// every call below it (flatten), so that the template's code is compiled
// for that set and the vector operations become single instructions.
#ifdef PERFC_X86
[[gnu::target("avx512f"), gnu::flatten]] void
convAvx512(const ConvGeometry &G, bool Depthwise, const float *X,
           const float *W, float *Y, size_t Begin, size_t End) {
  NchwcConv<Avx512>::run(G, Depthwise, X, W, Y, Begin, End);
}

[[gnu::target("avx2,fma"), gnu::flatten]] void
convAvx2(const ConvGeometry &G, bool Depthwise, const float *X, const float *W,
         float *Y, size_t Begin, size_t End) {
  NchwcConv<Avx2>::run(G, Depthwise, X, W, Y, Begin, End);
}
#endif

[[gnu::flatten]] void convPortable(const ConvGeometry &G, bool Depthwise,
                                   const float *X, const float *W, float *Y,
                                   size_t Begin, size_t End) {
  NchwcConv<Portable>::run(G, Depthwise, X, W, Y, Begin, End);
}

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
    return NchwcConv<Avx512>::info();
  case ConvIsa::Avx2:
    return NchwcConv<Avx2>::info();
#endif
  default:
    return NchwcConv<Portable>::info();
  }
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
    return convPortable(G, Depthwise, X, W, Y, Begin, End);
  }
}
