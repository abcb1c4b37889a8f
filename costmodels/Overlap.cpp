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

OverlapTime perfc::cost::overlapGradientExchange(
    llvm::ArrayRef<LayerBackward> Layers, double BucketBytes,
    const CommGroup &G, const Compression &C, CommAlgorithm A, Collective K) {
  OverlapTime R;
  double Now = 0;       // end of the backward compute so far
  double StreamEnd = 0; // end of the last all-reduce issued
  BucketTime Open;
  bool HasOpen = false;

  auto Close = [&](double Ready) {
    Open.ReadySeconds = Ready;
    Open.WireBytes = compressedBytes(Open.Bytes, C);
    Open.StartSeconds = std::max(Ready, StreamEnd);
    const double T = collectiveSeconds(K, Open.WireBytes, G, A);
    Open.EndSeconds = Open.StartSeconds + T;
    StreamEnd = Open.EndSeconds;
    R.CommSeconds += T;
    R.Buckets.push_back(Open);
    HasOpen = false;
  };

  for (size_t I = 0; I < Layers.size(); ++I) {
    Now += nonNegative(Layers[I].Seconds);
    const double Bytes = nonNegative(Layers[I].GradientBytes);
    if (Bytes == 0)
      continue;
    if (!HasOpen) {
      Open = BucketTime();
      Open.FirstLayer = I;
      HasOpen = true;
    }
    Open.LastLayer = I;
    Open.Bytes += Bytes;
    if (!(Open.Bytes < BucketBytes))
      Close(Now);
  }
  if (HasOpen)
    Close(Now);

  R.ComputeSeconds = Now;
  R.ExposedSeconds = std::max(0.0, StreamEnd - Now);
  return R;
}

OverlapTime
perfc::cost::overlapParameterGather(llvm::ArrayRef<LayerBackward> Layers,
                                    double BucketBytes, const CommGroup &G,
                                    CommAlgorithm A) {
  // The buckets, as overlapGradientExchange fills them: each with its
  // layers' forward time.
  struct Bucket {
    BucketTime T;
    double Forward = 0;
  };
  std::vector<Bucket> Buckets;
  bool Open = false;
  double Leading = 0; // forward of layers before the first parameter
  for (size_t I = 0; I < Layers.size(); ++I) {
    const double Seconds = nonNegative(Layers[I].Seconds);
    const double Bytes = nonNegative(Layers[I].GradientBytes);
    if (Bytes > 0 && !Open) {
      Buckets.push_back(Bucket());
      Buckets.back().T.FirstLayer = I;
      Open = true;
    }
    if (Buckets.empty()) {
      Leading += Seconds;
      continue;
    }
    Bucket &B = Buckets.back();
    B.Forward += Seconds;
    if (Bytes == 0)
      continue;
    B.T.LastLayer = I;
    B.T.Bytes += Bytes;
    if (!(B.T.Bytes < BucketBytes))
      Open = false;
  }
  OverlapTime R;
  double Compute = Leading; // the forward's clock
  double Waited = 0;
  double StreamEnd = 0;
  double Dispatch = 0; // when the next bucket's gather is asked for
  for (Bucket &B : Buckets) {
    B.T.WireBytes = B.T.Bytes;
    B.T.ReadySeconds = Dispatch;
    B.T.StartSeconds = std::max(Dispatch, StreamEnd);
    const double T = collectiveSeconds(Collective::AllGather, B.T.Bytes, G, A);
    B.T.EndSeconds = B.T.StartSeconds + T;
    StreamEnd = B.T.EndSeconds;
    R.CommSeconds += T;
    // The bucket's forward starts when its parameters are gathered; its
    // pre-hook then dispatches the next bucket's gather.
    const double Start = std::max(Compute, B.T.EndSeconds);
    Waited += Start - Compute;
    Dispatch = Start;
    Compute = Start + B.Forward;
    R.Buckets.push_back(B.T);
  }
  R.ComputeSeconds = Compute - Waited;
  R.ExposedSeconds = Waited;
  return R;
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
