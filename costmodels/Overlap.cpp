//===- Overlap.cpp - Gradient all-reduce overlapped with backward ---------===//
#include "costmodels/Overlap.h"

#include "hwdb/Units.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace perfc;
using namespace perfc::cost;

const char *perfc::cost::name(CompressionKind K) {
  switch (K) {
  case CompressionKind::None:
    return "none";
  case CompressionKind::Fp16:
    return "fp16";
  case CompressionKind::TopK:
    return "top-k";
  }
  return "none";
}

namespace {
/// V if it is a positive number, else 0.
double nonNegative(double V) { return V > 0 ? V : 0; }
} // namespace

double perfc::cost::compressedBytes(double Bytes, const Compression &C) {
  const double B = nonNegative(Bytes);
  const double Elem = C.ElementBytes > 0 ? C.ElementBytes : 4;
  switch (C.Kind) {
  case CompressionKind::None:
    return B;
  case CompressionKind::Fp16:
    return B * std::min(1.0, 2 / Elem);
  case CompressionKind::TopK: {
    const double R = std::min(1.0, nonNegative(C.Ratio));
    return R * B * (1 + nonNegative(C.IndexBytes) / Elem);
  }
  }
  return B;
}

OverlapTime
perfc::cost::overlapGradientAllReduce(llvm::ArrayRef<LayerBackward> Layers,
                                      double BucketBytes, const CommGroup &G,
                                      const Compression &C, CommAlgorithm A) {
  return overlapGradientExchange(Layers, BucketBytes, G, C, A,
                                 Collective::AllReduce);
}

namespace {

/// Whether a bucket holding Bytes is closed as full (a NaN cap closes
/// every bucket).
bool full(double Bytes, double BucketBytes) { return !(Bytes < BucketBytes); }

/// The buckets Layers' bytes fill, in order: one opens at the first layer
/// with bytes and closes once it holds at least BucketBytes; the last one
/// closes at the end, however full. Each with FirstLayer, LastLayer and
/// Bytes; no times.
std::vector<BucketTime> fillBuckets(llvm::ArrayRef<LayerBackward> Layers,
                                    double BucketBytes) {
  std::vector<BucketTime> Buckets;
  bool Open = false;
  for (size_t I = 0; I < Layers.size(); ++I) {
    const double Bytes = nonNegative(Layers[I].GradientBytes);
    if (Bytes == 0)
      continue;
    if (!Open) {
      Buckets.emplace_back();
      Buckets.back().FirstLayer = I;
      Open = true;
    }
    BucketTime &B = Buckets.back();
    B.LastLayer = I;
    B.Bytes += Bytes;
    Open = !full(B.Bytes, BucketBytes);
  }
  return Buckets;
}

} // namespace

OverlapTime perfc::cost::overlapGradientExchange(
    llvm::ArrayRef<LayerBackward> Layers, double BucketBytes,
    const CommGroup &G, const Compression &C, CommAlgorithm A, Collective K) {
  OverlapTime R;
  R.Buckets = fillBuckets(Layers, BucketBytes);
  // The backward's clock: the seconds of the layers before Next, summed
  // in order as far as each bucket asks (one pass over the layers).
  double Now = 0;
  size_t Next = 0;
  const auto Through = [&](size_t Last) {
    for (; Next < Last; ++Next)
      Now += nonNegative(Layers[Next].Seconds);
    return Now;
  };
  double StreamEnd = 0; // end of the last all-reduce issued
  for (BucketTime &B : R.Buckets) {
    // A full bucket goes when its last layer's backward ends; the last,
    // not full, when the backward does.
    B.ReadySeconds =
        Through(full(B.Bytes, BucketBytes) ? B.LastLayer + 1 : Layers.size());
    B.WireBytes = compressedBytes(B.Bytes, C);
    B.StartSeconds = std::max(B.ReadySeconds, StreamEnd);
    const double T = collectiveSeconds(K, B.WireBytes, G, A);
    B.EndSeconds = B.StartSeconds + T;
    StreamEnd = B.EndSeconds;
    R.CommSeconds += T;
  }
  R.ComputeSeconds = Through(Layers.size());
  R.ExposedSeconds = std::max(0.0, StreamEnd - R.ComputeSeconds);
  return R;
}

OverlapTime
perfc::cost::overlapParameterGather(llvm::ArrayRef<LayerBackward> Layers,
                                    double BucketBytes, const CommGroup &G,
                                    CommAlgorithm A) {
  // The buckets as overlapGradientExchange fills them; a bucket's forward
  // runs from its first layer to the next bucket's, and the layers before
  // the first bucket's run while its gather does.
  OverlapTime R;
  R.Buckets = fillBuckets(Layers, BucketBytes);
  const auto Forward = [&](size_t First, size_t Last) {
    double Sum = 0;
    for (size_t I = First; I < Last; ++I)
      Sum += nonNegative(Layers[I].Seconds);
    return Sum;
  };
  // The forward's clock, from the layers before the first parameter.
  double Compute = Forward(0, R.Buckets.empty() ? Layers.size()
                                                : R.Buckets.front().FirstLayer);
  double Waited = 0;
  double StreamEnd = 0;
  double Dispatch = 0; // when the next bucket's gather is asked for
  for (size_t I = 0; I < R.Buckets.size(); ++I) {
    BucketTime &B = R.Buckets[I];
    B.WireBytes = B.Bytes;
    B.ReadySeconds = Dispatch;
    B.StartSeconds = std::max(Dispatch, StreamEnd);
    const double T = collectiveSeconds(Collective::AllGather, B.Bytes, G, A);
    B.EndSeconds = B.StartSeconds + T;
    StreamEnd = B.EndSeconds;
    R.CommSeconds += T;
    // The bucket's forward starts when its parameters are gathered; its
    // pre-hook then dispatches the next bucket's gather.
    const double Start = std::max(Compute, B.EndSeconds);
    Waited += Start - Compute;
    Dispatch = Start;
    Compute = Start + Forward(B.FirstLayer, I + 1 < R.Buckets.size()
                                                ? R.Buckets[I + 1].FirstLayer
                                                : Layers.size());
  }
  R.ComputeSeconds = Compute - Waited;
  R.ExposedSeconds = Waited;
  return R;
}

double perfc::cost::sharedStreamExposed(llvm::ArrayRef<BucketTime> A,
                                        llvm::ArrayRef<BucketTime> B,
                                        double ComputeSeconds) {
  std::vector<std::pair<double, double>> Ready; // (ready, duration)
  for (llvm::ArrayRef<BucketTime> Set : {A, B})
    for (const BucketTime &T : Set)
      Ready.push_back({T.ReadySeconds, T.EndSeconds - T.StartSeconds});
  std::stable_sort(
      Ready.begin(), Ready.end(),
      [](const auto &X, const auto &Y) { return X.first < Y.first; });
  double End = 0;
  for (const auto &[At, Seconds] : Ready)
    End = std::max(End, At) + Seconds;
  return std::max(0.0, End - ComputeSeconds);
}

std::string perfc::cost::explain(const OverlapTime &T, double BucketBytes,
                                 const Compression &C, Collective K) {
  using hw::Quantity;
  // The buckets queue on one stream: the last one issued ends last.
  const double StreamEnd = T.Buckets.empty() ? 0 : T.Buckets.back().EndSeconds;
  return llvm::formatv(
             "{0} buckets of up to {1} ({2} compression): {7} "
             "{3} in total, backward {4}, last {7} ends at {5}, "
             "exposed {6}",
             T.Buckets.size(),
             hw::formatQuantity(BucketBytes, Quantity::Capacity), name(C.Kind),
             hw::formatQuantity(T.CommSeconds, Quantity::Time),
             hw::formatQuantity(T.ComputeSeconds, Quantity::Time),
             hw::formatQuantity(StreamEnd, Quantity::Time),
             hw::formatQuantity(T.ExposedSeconds, Quantity::Time), name(K))
      .str();
}
