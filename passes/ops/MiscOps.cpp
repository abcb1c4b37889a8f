//===- MiscOps.cpp - Work of random, signal, detection and other ops ------===//
//
// Ops that fit no other family. A special function costs 4 and a fused
// multiply-add 2, as in ElementwiseOps.cpp.
//
// | Op                        | Flops                                        |
// |---------------------------|----------------------------------------------|
// | RandomUniform(Like)       | 8 * out_elems                                |
// | RandomNormal(Like)        | 20 * out_elems                               |
// | Bernoulli                 | 9 * out_elems                                |
// | Multinomial               | batch*(5*C + samples*(8 + log2(C)))          |
// | DynamicQuantizeLinear     | 6 * in_elems                                 |
// | TopK                      | in_elems * max(1, log2(k))                   |
// | NonZero                   | in_elems                                     |
// | Unique                    | n * log2(n), n = in_elems                    |
// | NonMaxSuppression         | batch*classes*(S*log2(S) + 12*S*(S-1)/2)     |
// | RoiAlign                  | out_elems * (8*s^2 + 1)                      |
// | MaxRoiPool                | 4 * out_elems                                |
// | GridSample                | taps*out_elems + 4*elems(grid)               |
// | DFT                       | transforms * 5*L*log2(L)                     |
// | STFT                      | batch*frames*(5*L*log2(L) + L if window)     |
// | HannWindow HammingWindow  | 7 * out_elems                                |
// | BlackmanWindow            | 14 * out_elems                               |
// | MelWeightMatrix           | 4 * out_elems                                |
// | Det                       | 2 * MACs, MACs = batch * n^3/3               |
// | SoftmaxCrossEntropyLoss   | 8*elems(scores) + 2*elems(labels)            |
// | NegativeLogLikelihoodLoss | 3 * elems(target)                            |
// | TfIdfVectorizer           | in_elems*(max_gram - min_gram + 1) + out_elems|
// | StringNormalizer, Sequence*, ConcatFromSequence, SplitToSequence | 0     |
//
// Why these numbers:
//  * a uniform sample is a generator step (~6 integer ops, XORWOW or MT19937
//    amortised), a convert and a scale-and-shift: 8. A normal sample is half
//    a Box-Muller pair: two uniforms, log, sqrt, sin, cos and a few
//    multiplies for two numbers, then a scale-and-shift: 20. Bernoulli is a
//    uniform and a compare: 9. Multinomial takes exp and a prefix sum per
//    class (5), then per sample a uniform and a binary search;
//  * DynamicQuantizeLinear finds min and max (2), then quantizes (4);
//  * TopK selects with a heap of k; Unique sorts;
//  * NonMaxSuppression sorts each class's S boxes and, at worst, computes
//    the IoU (12 flops) of every pair;
//  * RoiAlign takes s^2 bilinear samples per bin (s = sampling_ratio; 2, what
//    Mask R-CNN uses, when adaptive), 4 taps (8 flops) each, then averages;
//    MaxRoiPool's bins depend on the ROIs: ~2x2 feature pixels assumed;
//  * GridSample has 8 (bilinear), 32 (bicubic) or 0 (nearest) tap flops per
//    output, and unnormalises each grid coordinate (fma, floor, sub);
//  * DFT and STFT count 5*L*log2(L) per transform of length L (the radix-2
//    FFT count); STFT also multiplies each frame by its window, if any. L is
//    the constant dft_length or frame_length, else the axis length (DFT) or
//    the window's length or what the output's frequency bins imply (STFT);
//  * a window element is an argument (1), a cosine (4) and an fma (2);
//    Blackman has two of each; a mel filter weight is sub, div, min, max;
//  * Det is an LU decomposition, n^3/3 multiply-adds per matrix;
//  * the losses are a log-softmax (8 per score, as in ReductionOps.cpp),
//    then per target a negate, a weight and a reduction add.
//
// Random generators and window functions are write-only: they read no
// tensor data (a *Like op reads only its input's shape).
// NegativeLogLikelihoodLoss reads, like a Gather, only the scores its
// targets select.
//
//===----------------------------------------------------------------------===//
#include "passes/OpRegistry.h"
#include "passes/ops/OpCounts.h"

#include "ir/Graph.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace perfc {

/// Flops per sample (see the table above).
static constexpr double UniformFlops = 8;
static constexpr double NormalFlops = 20;
/// Flops of the IoU of two boxes in NonMaxSuppression.
static constexpr double IoUFlops = 12;

/// log2(N) for N >= 2, else 0.
static double log2Of(double N) { return N >= 2 ? std::log2(N) : 0; }

/// The first integer of a small constant input, or Default.
static int64_t constantInt(const ir::Value *V, int64_t Default) {
  if (!V || !V->data())
    return Default;
  const ir::ConstData &D = *V->data();
  if (!D.Ints.empty())
    return D.Ints.front();
  if (!D.Floats.empty())
    return static_cast<int64_t>(D.Floats.front());
  return Default;
}

/// Sets a per-output-element cost.
static void perOutput(const ir::Node &N, OpWork &W, double Cost,
                      const char *Formula) {
  W.Flops = Cost * elems(N.output(0));
  W.Formula = Formula;
}

//===----------------------------------------------------------------------===//
// Random numbers
//===----------------------------------------------------------------------===//

static void randomUniformWork(const ir::Node &N, OpWork &W) {
  W.BytesRead = 0;
  perOutput(N, W, UniformFlops, "8*out_elems");
}

static void randomNormalWork(const ir::Node &N, OpWork &W) {
  W.BytesRead = 0;
  perOutput(N, W, NormalFlops, "20*out_elems");
}

static void bernoulliWork(const ir::Node &N, OpWork &W) {
  perOutput(N, W, UniformFlops + 1, "9*out_elems");
}

static void multinomialWork(const ir::Node &N, OpWork &W) {
  // Input: [batch, classes] unnormalised log-probabilities.
  const ir::Value *In = N.input(0);
  if (!In)
    return;
  double Batch = In->shape().size(0);
  double Classes = In->shape().size(1);
  double Samples =
      static_cast<double>(std::max<int64_t>(N.getInt("sample_size", 1), 0));
  W.Flops = Batch * (5 * Classes + Samples * (UniformFlops + log2Of(Classes)));
  W.Formula = "batch*(5*classes + samples*(8 + log2(classes)))";
}

//===----------------------------------------------------------------------===//
// Selection, sorting, detection
//===----------------------------------------------------------------------===//

static void dynamicQuantizeWork(const ir::Node &N, OpWork &W) {
  W.Flops = 6 * elems(N.input(0));
  W.Formula = "6*in_elems (min, max, quantize)";
}

static void topKWork(const ir::Node &N, OpWork &W) {
  const ir::Value *X = N.input(0), *Values = N.output(0);
  if (!X)
    return;
  // K is the output's size along the axis; else the K input (opset 10+) or
  // attribute (opset 1).
  int64_t Axis = N.getInt("axis", -1);
  double K = Values ? Values->shape().size(static_cast<int>(Axis)) : 0;
  if (K == 0)
    K = static_cast<double>(constantInt(N.input(1), N.getInt("k", 0)));
  W.Flops = elems(X) * std::max(1.0, log2Of(K));
  W.Formula = "in_elems*max(1, log2(k))";
}

static void nonZeroWork(const ir::Node &N, OpWork &W) {
  W.Flops = elems(N.input(0));
  W.Formula = "in_elems";
}

static void uniqueWork(const ir::Node &N, OpWork &W) {
  double Elems = elems(N.input(0));
  W.Flops = Elems * log2Of(Elems);
  W.Formula = "n*log2(n)";
}

static void nonMaxSuppressionWork(const ir::Node &N, OpWork &W) {
  // scores: [batch, classes, boxes].
  const ir::Value *Scores = N.input(1);
  if (!Scores)
    return;
  double Batch = Scores->shape().size(0);
  double Classes = Scores->shape().size(1);
  double S = Scores->shape().size(2);
  double Pairs = S > 1 ? S * (S - 1) / 2 : 0;
  W.Flops = Batch * Classes * (S * log2Of(S) + IoUFlops * Pairs);
  W.Formula = "batch*classes*(S*log2(S) + 12*S*(S-1)/2)";
}

static void roiAlignWork(const ir::Node &N, OpWork &W) {
  int64_t Ratio = N.getInt("sampling_ratio", 0);
  // Adaptive sampling (0) depends on each ROI's size; 2 is what detection
  // models (Mask R-CNN) use.
  double S = Ratio > 0 ? static_cast<double>(Ratio) : 2;
  W.Flops = elems(N.output(0)) * (8 * S * S + 1);
  W.Formula = "out_elems*(8*s^2 + 1)";
}

static void maxRoiPoolWork(const ir::Node &N, OpWork &W) {
  perOutput(N, W, 4, "4*out_elems (~2x2 bins)");
}

static void gridSampleWork(const ir::Node &N, OpWork &W) {
  std::string Mode = N.getString("mode", "bilinear");
  double Taps = Mode == "nearest" ? 0 : Mode == "bicubic" ? 32 : 8;
  W.Flops = Taps * elems(N.output(0)) + 4 * elems(N.input(1));
  W.Formula =
      std::to_string(static_cast<int>(Taps)) + "*out_elems + 4*elems(grid)";
}

//===----------------------------------------------------------------------===//
// Signal processing
//===----------------------------------------------------------------------===//

/// Flops of one FFT of length L.
static double fftFlops(double L) { return 5 * L * log2Of(L); }

static void dftWork(const ir::Node &N, OpWork &W) {
  // input: [batch, n_1, ..., n_k, 1 or 2 (real, imaginary)].
  const ir::Value *X = N.input(0);
  if (!X || !X->shape().isRanked() || X->shape().rank() < 2)
    return;
  int Axis = static_cast<int>(N.getInt("axis", 1));
  double AxisLen = X->shape().size(Axis);
  double Components = X->shape().size(-1);
  if (AxisLen == 0 || Components == 0)
    return;
  double Transforms = elems(X) / (AxisLen * Components);
  double L = static_cast<double>(constantInt(N.input(1), 0));
  if (L <= 0)
    L = AxisLen;
  W.Flops = Transforms * fftFlops(L);
  W.Formula = "transforms*5*L*log2(L)";
}

static void stftWork(const ir::Node &N, OpWork &W) {
  // signal: [batch, length, 1 or 2]; output: [batch, frames, bins, 2].
  const ir::Value *Signal = N.input(0), *Window = N.input(2),
                  *Out = N.output(0);
  if (!Signal || !Out)
    return;
  double L = static_cast<double>(constantInt(N.input(3), 0));
  if (L <= 0 && Window)
    L = Window->shape().size(0);
  if (L <= 0) {
    // The output's bins: L / 2 + 1 when one-sided (the default), else L.
    double Bins = Out->shape().size(2);
    bool OneSided = N.getInt("onesided", 1) != 0;
    L = OneSided ? std::max(0.0, 2 * (Bins - 1)) : Bins;
  }
  double Batch = Signal->shape().size(0);
  double Frames = Out->shape().size(1);
  double Windowing = Window ? L : 0;
  W.Flops = Batch * Frames * (fftFlops(L) + Windowing);
  W.Formula =
      Window ? "batch*frames*(5*L*log2(L) + L)" : "batch*frames*5*L*log2(L)";
}

static void hannWindowWork(const ir::Node &N, OpWork &W) {
  W.BytesRead = 0;
  perOutput(N, W, 7, "7*out_elems");
}

static void blackmanWindowWork(const ir::Node &N, OpWork &W) {
  W.BytesRead = 0;
  perOutput(N, W, 14, "14*out_elems");
}

static void melWeightMatrixWork(const ir::Node &N, OpWork &W) {
  W.BytesRead = 0;
  perOutput(N, W, 4, "4*out_elems");
}

//===----------------------------------------------------------------------===//
// Linear algebra, losses, text
//===----------------------------------------------------------------------===//

static void detWork(const ir::Node &N, OpWork &W) {
  // X: [*, n, n].
  const ir::Value *X = N.input(0);
  if (!X || !X->shape().isRanked() || X->shape().rank() < 2)
    return;
  double Dim = X->shape().size(-1);
  if (Dim == 0)
    return;
  double Batch = elems(X) / (Dim * Dim);
  W.Macs = Batch * Dim * Dim * Dim / 3;
  W.Flops = 2 * W.Macs;
  W.Formula = "2*batch*n^3/3";
}

static void softmaxCrossEntropyWork(const ir::Node &N, OpWork &W) {
  W.Flops = 8 * elems(N.input(0)) + 2 * elems(N.input(1));
  W.Formula = "8*elems(scores) + 2*elems(labels)";
}

static void negativeLogLikelihoodWork(const ir::Node &N, OpWork &W) {
  // input: [N, C, d...], target: [N, d...], weight: [C].
  const ir::Value *Input = N.input(0), *Target = N.input(1);
  if (!Input || !Target)
    return;
  double Targets = elems(Target);
  W.BytesRead = bytesOf(Target) + bytesOf(N.input(2)) +
                Targets * ir::byteSize(Input->type());
  W.Flops = 3 * Targets;
  W.Formula = "3*elems(target)";
}

static void tfIdfWork(const ir::Node &N, OpWork &W) {
  int64_t Grams =
      N.getInt("max_gram_length", 0) - N.getInt("min_gram_length", 0) + 1;
  double Lookups = static_cast<double>(std::max<int64_t>(Grams, 0));
  W.Flops = elems(N.input(0)) * Lookups + elems(N.output(0));
  W.Formula = "in_elems*(max_gram - min_gram + 1) + out_elems";
}

void registerMiscOps(OpRegistry &R) {
  R.add("RandomUniform", OpClass::Other, &randomUniformWork);
  R.add("RandomUniformLike", OpClass::Other, &randomUniformWork);
  R.add("RandomNormal", OpClass::Other, &randomNormalWork);
  R.add("RandomNormalLike", OpClass::Other, &randomNormalWork);
  R.add("Bernoulli", OpClass::Other, &bernoulliWork);
  R.add("Multinomial", OpClass::Other, &multinomialWork);
  R.add("DynamicQuantizeLinear", OpClass::Elementwise, &dynamicQuantizeWork);
  R.add("TopK", OpClass::Reduction, &topKWork);
  R.add("NonZero", OpClass::Other, &nonZeroWork);
  R.add("Unique", OpClass::Other, &uniqueWork);
  R.add("NonMaxSuppression", OpClass::Other, &nonMaxSuppressionWork);
  R.add("RoiAlign", OpClass::Other, &roiAlignWork);
  R.add("MaxRoiPool", OpClass::Reduction, &maxRoiPoolWork);
  R.add("GridSample", OpClass::Other, &gridSampleWork);
  R.add("DFT", OpClass::Other, &dftWork);
  // A constant window is part of the transform, not a parameter.
  R.add("STFT", OpClass::Other, &stftWork, {0, inputBits({2})});
  R.add("HannWindow", OpClass::Other, &hannWindowWork);
  R.add("HammingWindow", OpClass::Other, &hannWindowWork);
  R.add("BlackmanWindow", OpClass::Other, &blackmanWindowWork);
  R.add("MelWeightMatrix", OpClass::Other, &melWeightMatrixWork);
  R.add("Det", OpClass::Other, &detWork);
  R.add("SoftmaxCrossEntropyLoss", OpClass::Reduction,
        &softmaxCrossEntropyWork);
  R.add("NegativeLogLikelihoodLoss", OpClass::Reduction,
        &negativeLogLikelihoodWork);
  R.add("TfIdfVectorizer", OpClass::Other, &tfIdfWork);
  R.add("StringNormalizer", OpClass::Other);
  // Sequences hold tensors by reference: building, indexing and measuring
  // them moves nothing beyond the defaults. SequenceMap's body is not
  // entered (WorkPass only enters If, Loop and Scan).
  for (const char *Op :
       {"SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase",
        "SequenceInsert", "SequenceLength", "SequenceMap"})
    R.add(Op, OpClass::Other);
  for (const char *Op : {"ConcatFromSequence", "SplitToSequence"})
    R.add(Op, OpClass::DataMovement);
}

} // namespace perfc
