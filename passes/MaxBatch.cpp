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
  while (Hi - Lo > 1) {
    const int64_t K = Lo + (Hi - Lo) / 2;
    auto A = Ask(K);
    if (!A)
      return A.takeError();
    (*A ? Lo : Hi) = K;
  }
  return llvm::Optional<int64_t>(Lo * M);
}

} // namespace perfc
