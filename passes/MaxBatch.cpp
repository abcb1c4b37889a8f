//===- MaxBatch.cpp - The largest batch an inference run fits -------------===//
#include "passes/MaxBatch.h"

#include "hwdb/Units.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

namespace perfc {

void setMaxBatch(InferenceMemoryReport &M, int64_t Batch, unsigned Multiple) {
  M.MaxBatch = llvm::None;
  M.BytesPerSample = 0;
  const double PerBatch = M.Usage.PeakBytes - M.Usage.WeightsBytes;
  if (Batch <= 0 || Multiple == 0 || M.CapacityBytes <= 0 ||
      !M.Usage.Complete || PerBatch <= 0)
    return;
  M.BytesPerSample = PerBatch / double(Batch);
  const double Room = M.CapacityBytes - M.Usage.WeightsBytes;
  // Bounded well inside uint64_t (and exact in a double): a batch of 2^50
  // says "no limit" as plainly as any larger one.
  const double Samples =
      Room <= 0 ? 0 : std::min(std::floor(Room / M.BytesPerSample), 0x1p50);
  M.MaxBatch = uint64_t(Samples) / Multiple * Multiple;
}

std::string explainMaxBatch(const InferenceMemoryReport &M, unsigned Multiple) {
  if (!M.MaxBatch)
    return "";
  return llvm::formatv(
             "max batch {0} = floor((capacity {1} - weights {2}) "
             "/ {3} a sample){4}, every byte but the weights taken "
             "to grow with the batch (caches, activations)",
             *M.MaxBatch, hw::formatDataBytes(M.CapacityBytes),
             hw::formatDataBytes(M.Usage.WeightsBytes),
             hw::formatDataBytes(M.BytesPerSample),
             Multiple > 1
                 ? llvm::formatv(", a multiple of ep {0}", Multiple).str()
                 : std::string())
      .str();
}

std::string describeProbe(const BatchProbe &P) {
  if (!P.Fits)
    return llvm::formatv("{0} does not fit", P.Batch).str();
  if (!P.MeetsLatency)
    return llvm::formatv("{0} fits", P.Batch).str();
  return llvm::formatv("{0} {1} {2}", P.Batch,
                       *P.MeetsLatency ? "fits in" : "takes",
                       hw::formatQuantity(P.LatencySeconds, hw::Quantity::Time))
      .str();
}

llvm::Expected<llvm::Optional<int64_t>> largestFittingBatch(
    int64_t Estimate, unsigned Multiple, int64_t Limit,
    llvm::Optional<double> MaxLatencySeconds,
    llvm::function_ref<llvm::Expected<BatchProbe>(int64_t)> Probe,
    std::vector<BatchProbe> &Tried) {
  const int64_t M = std::max<int64_t>(Multiple, 1);
  // Batches are counted in multiples of M: K stands for K x M.
  const int64_t Top = std::max<int64_t>(Limit / M, 1);
  const auto Ask = [&](int64_t K) -> llvm::Expected<bool> {
    auto P = Probe(K * M);
    if (!P)
      return P.takeError();
    P->Batch = K * M;
    Tried.push_back(*P);
    return P->admitted();
  };
  // Lo is admitted (0: none known), Hi is not (Top + 1: none known).
  int64_t Lo = 0, Hi = Top + 1;
  const int64_t Start = std::clamp<int64_t>(Estimate / M, 1, Top);
  auto AtStart = Ask(Start);
  if (!AtStart)
    return AtStart.takeError();
  if (*AtStart) {
    Lo = Start;
    // Up: the next multiple, then steps that double until one is not.
    for (int64_t Step = 1; Lo < Top; Step *= 2) {
      const int64_t K = std::min(Lo + Step, Top);
      auto A = Ask(K);
      if (!A)
        return A.takeError();
      if (!*A) {
        Hi = K;
        break;
      }
      Lo = K;
    }
  } else {
    Hi = Start;
    // Down: halve until one is admitted (1 is the last try).
    while (Lo == 0) {
      const int64_t K = Hi / 2;
      if (K < 1)
        return llvm::None;
      auto A = Ask(K);
      if (!A)
        return A.takeError();
      (*A ? Lo : Hi) = K;
    }
  }
  // Between them: bisection, or where a latency bound is what stops the
  // batch above (it fits, but its step is too slow), the batch the bound
  // falls at on the line through the two steps' times (nearly affine in
  // the batch, not quite: waves, tiles), then the one above it to confirm.
  // Where two such guesses in a row fall short (a convex curve: the line
  // lies above it), a bisection step, so the bracket at least halves every
  // five batches.
  const auto ProbeAt = [&](int64_t K) -> const BatchProbe * {
    for (auto It = Tried.rbegin(); It != Tried.rend(); ++It)
      if (It->Batch == K * M)
        return &*It;
    return nullptr;
  };
  enum class Next { Interpolate, CheckAbove, Bisect } Step = Next::Interpolate;
  unsigned Short = 0; // Guesses in a row that were admitted, as was the next.
  while (Hi - Lo > 1) {
    int64_t K = Lo + (Hi - Lo) / 2;
    const BatchProbe *Low = ProbeAt(Lo), *High = ProbeAt(Hi);
    const bool Bound = MaxLatencySeconds && Low && High && High->Fits &&
                       High->LatencySeconds > Low->LatencySeconds;
    if (Bound && Step == Next::CheckAbove) {
      K = Lo + 1;
    } else if (Bound && Step == Next::Interpolate) {
      const double Share = (*MaxLatencySeconds - Low->LatencySeconds) /
                           (High->LatencySeconds - Low->LatencySeconds);
      K = std::clamp<int64_t>(Lo + int64_t(std::floor(Share * double(Hi - Lo))),
                              Lo + 1, Hi - 1);
    }
    const Next Taken = Bound ? Step : Next::Bisect;
    auto A = Ask(K);
    if (!A)
      return A.takeError();
    (*A ? Lo : Hi) = K;
    if (Taken == Next::Interpolate && *A) {
      Step = Next::CheckAbove;
    } else if (Taken == Next::CheckAbove) {
      Step = ++Short == 2 ? Next::Bisect : Next::Interpolate;
    } else {
      Short = Taken == Next::Bisect ? 0 : Short;
      Step = Next::Interpolate;
    }
  }
  return llvm::Optional<int64_t>(Lo * M);
}

} // namespace perfc
