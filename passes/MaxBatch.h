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
/// fits, by asking Fits at batches: first Estimate (setMaxBatch's figure,
/// exact where the bytes are linear in the batch) and the next multiple,
/// then, where the bytes are not linear, doubling steps up from what fits
/// or down from what does not, and bisection between. Each batch asked and
/// its answer is appended to Tried, in order; each batch that fits is
/// larger than every batch asked before it that fit, so the last that fits
/// is the result. Errors: Fits's; not even
/// Multiple fits (the message names the smallest batch tried).
llvm::Expected<int64_t>
largestFittingBatch(int64_t Estimate, unsigned Multiple, int64_t Limit,
                    llvm::function_ref<llvm::Expected<bool>(int64_t)> Fits,
                    std::vector<BatchProbe> &Tried);

} // namespace perfc

#endif // PERFC_PASSES_MAXBATCH_H
