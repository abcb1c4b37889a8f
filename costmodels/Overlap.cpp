//===- Overlap.cpp - Gradient all-reduce overlapped with backward ---------===//
#include "costmodels/Overlap.h"

#include "hwdb/Units.h"

#include "llvm/ADT/SmallVector.h"
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

  // Buckets of a model of equal layers come in few sizes: each size is
  // priced once (collectiveTime also writes its explanation, which a
  // planner's thousands of strategies x hundreds of buckets would pay).
  llvm::SmallVector<std::pair<double, double>, 8> Priced;
  auto Price = [&](double Bytes) {
    for (const auto &P : Priced)
      if (P.first == Bytes)
        return P.second;
    const double S = collectiveTime(K, Bytes, G, A).Seconds;
    Priced.push_back({Bytes, S});
    return S;
  };
  auto Close = [&](double Ready) {
    Open.ReadySeconds = Ready;
    Open.WireBytes = compressedBytes(Open.Bytes, C);
    Open.StartSeconds = std::max(Ready, StreamEnd);
    const double T = Price(Open.WireBytes);
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
  using hw::Quantity;
  R.Explain =
      llvm::formatv(
          "{0} buckets of up to {1} ({2} compression): {7} "
          "{3} in total, backward {4}, last {7} ends at {5}, "
          "exposed {6}",
          R.Buckets.size(), hw::formatQuantity(BucketBytes, Quantity::Capacity),
          name(C.Kind), hw::formatQuantity(R.CommSeconds, Quantity::Time),
          hw::formatQuantity(R.ComputeSeconds, Quantity::Time),
          hw::formatQuantity(StreamEnd, Quantity::Time),
          hw::formatQuantity(R.ExposedSeconds, Quantity::Time), name(K))
          .str();
  return R;
}
