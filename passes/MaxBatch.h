//===- MaxBatch.h - The largest batch an inference run fits -----*- C++ -*-===//
//
// How many samples (sequences, images) a device serves at once: from one
// run's memory, every byte past the weights taken to grow with the batch
// (setMaxBatch), and, where the model can be imported again at another
// batch, by predicting there (largestFittingBatch: perfc --max-batch).
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_MAXBATCH_H
#define PERFC_PASSES_MAXBATCH_H

#include "passes/Report.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace perfc {

/// Sets M.MaxBatch and M.BytesPerSample for a run of Batch samples: the
/// largest multiple of Multiple whose run fits M.CapacityBytes if every
/// byte but the weights grows in proportion to the batch (key/value caches
/// and activations do), floor((capacity - weights) / ((peak - weights) /
/// Batch)), as a serving engine sizes its cache from what the weights and
/// a profiled step leave. A tensor without a batch dimension (a causal
/// mask, rotary tables) grows too under this rule, so above Batch the
/// figure is a lower bound; below Batch (a run that does not fit), an
/// estimate. None where the capacity is unknown or the peak incomplete.
void setMaxBatch(InferenceMemoryReport &M, int64_t Batch, unsigned Multiple);

/// "max batch N = floor((C - W) / S) ...": how M.MaxBatch follows (the
/// memory explanation's last clause); empty without one.
std::string explainMaxBatch(const InferenceMemoryReport &M, unsigned Multiple);

/// The largest multiple of Multiple from 1 x Multiple to Limit whose run
/// is admitted (BatchProbe::admitted: it fits, and meets a latency bound
/// where there is one), by asking Probe at batches: first Estimate
/// (setMaxBatch's figure, exact where the bytes are linear in the batch)
/// and the next multiple, then, where they are not (or a latency bound
/// binds first), doubling steps up from what is admitted or down from what
/// is not, and bisection between; where MaxLatencySeconds (the bound the
/// probes' MeetsLatency was judged by) stops the batch above, the batch
/// interpolated at the bound on the two steps' times instead, and the one
/// above it. Each probe is appended to Tried in order
/// (its Batch set here); each batch admitted is larger than every batch
/// admitted before it, so the last admitted is the result. None where not
/// even Multiple is (Tried's last probe says why). Errors: Probe's.
llvm::Expected<llvm::Optional<int64_t>> largestFittingBatch(
    int64_t Estimate, unsigned Multiple, int64_t Limit,
    llvm::Optional<double> MaxLatencySeconds,
    llvm::function_ref<llvm::Expected<BatchProbe>(int64_t)> Probe,
    std::vector<BatchProbe> &Tried);

/// "67 fits", "68 does not fit"; with a latency bound "33 fits in 41.2 ms"
/// or "40 takes 52.0 ms" (over the bound).
std::string describeProbe(const BatchProbe &P);

} // namespace perfc

#endif // PERFC_PASSES_MAXBATCH_H
