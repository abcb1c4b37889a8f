//===- NchwcConv.h - NCHWc direct convolution, any vector type --*- C++ -*-===//
//
// The loop nest is MLAS's NCHWc kernel (ONNX Runtime's CPU convolution):
// for a row of output pixels and F blocks of output channels, F x P vector
// accumulators stay in registers while every input channel and kernel tap
// is folded in, one broadcast input value times F filter vectors per pixel.
// Depthwise convolutions multiply an input vector by a filter vector per
// tap instead (no reuse across output channels: one load per FMA), several
// output vectors of a row at a time, the edges one at a time.
//
// NchwcConv<Isa> is written once for any instruction set. Isa gives the
// vector type V of Lanes floats (the channel block), the register tile
// (TileBlocks output-channel blocks by TilePixels output pixels), Name, and
// the operations zero(), load(p), store(p, v), set1(x) and
// fma(a, b, c) = a * b + c.
//
// Each instance lives in a file compiled for its instruction set
// (ConvKernelsAvx512.cpp with -mavx512f, ConvKernelsAvx2.cpp with -mavx2
// -mfma, the portable one in ConvKernels.cpp), so that the vector
// operations inline into the loops with GCC and Clang alike. Those files
// declare their Isa in an anonymous namespace, which gives every instance
// internal linkage, and this header calls no inline function of another
// header: no code compiled for a wider instruction set can be shared with
// (and run by) the rest of the program. ConvKernels.cpp picks the instance
// at run time.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_CALIBRATE_NCHWCCONV_H
#define PERFC_TOOLS_CALIBRATE_NCHWCCONV_H

#include "tools/calibrate/Kernels.h"

namespace perfc::calibrate {

template <class Isa> struct NchwcConv {
  using V = typename Isa::V;
  static constexpr int B = Isa::Lanes;

  /// std::min's job, kept in the template (see the file comment).
  static constexpr int lesser(int A, int C) { return A < C ? A : C; }

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

  /// The Rest (at most R) pixels left at the end of a row, as one tile of
  /// exactly Rest; nothing when Rest is 0.
  template <int F, int R>
  static void denseTail(const ConvGeometry &G, const float *X, const float *W,
                        float *Y, int Ocb, int Oh, int Ow, int Rest) {
    if constexpr (R > 0) {
      if (Rest == R)
        denseTile<F, R>(G, X, W, Y, Ocb, Oh, Ow);
      else
        denseTail<F, R - 1>(G, X, W, Y, Ocb, Oh, Ow, Rest);
    }
  }

  template <int F>
  static void denseRow(const ConvGeometry &G, const float *X, const float *W,
                       float *Y, int Ocb, int Oh) {
    constexpr int P = Isa::TilePixels;
    // Output pixels whose window reaches into the padding: MLAS computes
    // them one at a time (bounds checked), the rest in full tiles.
    const int Edge = lesser(G.OW / 2, (G.Pad + G.Stride - 1) / G.Stride);
    for (int E = 0; E < Edge; ++E) {
      denseTile<F, 1>(G, X, W, Y, Ocb, Oh, E);
      denseTile<F, 1>(G, X, W, Y, Ocb, Oh, G.OW - 1 - E);
    }
    const int End = G.OW - Edge;
    int Ow = Edge;
    for (; Ow + P <= End; Ow += P)
      denseTile<F, P>(G, X, W, Y, Ocb, Oh, Ow);
    denseTail<F, P - 1>(G, X, W, Y, Ocb, Oh, Ow, End - Ow);
  }

  static void dense(const ConvGeometry &G, const float *X, const float *W,
                    float *Y, size_t Begin, size_t End) {
    constexpr int F = Isa::TileBlocks;
    for (size_t Item = Begin; Item < End; ++Item) {
      // Items run over (output row, group of F channel blocks), rows outer,
      // so that threads share input rows rather than filters.
      const int Oh = int(Item % size_t(G.OH));
      const int Ocb = int(Item / size_t(G.OH)) * F;
      switch (lesser(F, G.CoutBlocks - Ocb)) {
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
      const int Edge = lesser(G.OW / 2, (G.Pad + G.Stride - 1) / G.Stride);
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

/// The instances compiled for x86 vector extensions, picked at run time
/// (ConvKernelsAvx512.cpp, ConvKernelsAvx2.cpp).
void convAvx512(const ConvGeometry &G, bool Depthwise, const float *X,
                const float *W, float *Y, size_t Begin, size_t End);
ConvKernelInfo convAvx512Info();
void convAvx2(const ConvGeometry &G, bool Depthwise, const float *X,
              const float *W, float *Y, size_t Begin, size_t End);
ConvKernelInfo convAvx2Info();

} // namespace perfc::calibrate

#endif // PERFC_TOOLS_CALIBRATE_NCHWCCONV_H
