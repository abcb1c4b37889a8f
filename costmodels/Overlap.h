//===- Overlap.h - Gradient all-reduce overlapped with backward -*- C++ -*-===//
//
// Data-parallel training all-reduces the gradients while the backward pass
// is still running, in buckets, as PyTorch DistributedDataParallel does
// (Li et al., "PyTorch Distributed: Experiences on Accelerating Data
// Parallel Training", VLDB 2020; torch.nn.parallel.DistributedDataParallel,
// bucket_cap_mb = 25):
//
//  * layers run backward in reverse order; a layer's gradients exist when
//    its backward compute ends;
//  * gradients fill the current bucket in that order; a bucket closes as
//    soon as it holds at least BucketBytes (so a gradient larger than the
//    cap makes a bucket of its own, possibly with what came before), and the
//    last bucket closes, however full, when backward ends;
//  * a bucket's all-reduce starts when the bucket has closed and the
//    previous all-reduce has finished: one communication stream, buckets in
//    order;
//  * exposed time = end of the last all-reduce - end of backward compute,
//    at least 0: what data parallelism adds to the step.
//
// Not modelled: DDP's smaller first bucket (1 MiB) and its bucket rebuild
// after the first iteration, the slowdown communication kernels cause to the
// compute they share the GPU with, and the compute of compression.
//
// Gradient compression is applied to each bucket's bytes before the
// all-reduce is priced:
//  * Fp16: gradients cast to fp16 on the wire: Bytes x 2 / ElementBytes
//    (halves fp32 gradients; nothing for gradients already 16-bit);
//  * TopK with Ratio r: the r x Bytes / ElementBytes largest elements are
//    sent with their indices: r x Bytes x (1 + IndexBytes / ElementBytes),
//    i.e. 2 r Bytes for fp32 values with int32 indices. This is priced as an
//    all-reduce of that many bytes, a lower bound: real sparse all-reduces
//    (all-gather of each rank's values and indices) send up to n times more,
//    and above r = ElementBytes / (ElementBytes + IndexBytes) top-k sends
//    more than the dense gradient.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_COSTMODELS_OVERLAP_H
#define PERFC_COSTMODELS_OVERLAP_H

#include "costmodels/Collectives.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace perfc::cost {

enum class CompressionKind : uint8_t { None, Fp16, TopK };
/// "none", "fp16", "top-k".
const char *name(CompressionKind K);

struct Compression {
  CompressionKind Kind = CompressionKind::None;
  /// TopK: share of the elements sent, clamped to [0, 1].
  double Ratio = 1;
  /// Bytes per gradient element before compression (fp32).
  double ElementBytes = 4;
  /// TopK: bytes per index sent with each value (int32).
  double IndexBytes = 4;
};

/// Bytes on the wire for Bytes of gradients (formulas above).
double compressedBytes(double Bytes, const Compression &C);

/// PyTorch DDP's default bucket size, 25 MiB.
constexpr double DdpBucketBytes = 25.0 * 1024 * 1024;

/// One layer's backward pass.
struct LayerBackward {
  double Seconds = 0;       ///< backward compute time
  double GradientBytes = 0; ///< its parameters' gradients
};

struct BucketTime {
  /// Layers whose gradients it holds, as indices into the input (backward
  /// order).
  size_t FirstLayer = 0, LastLayer = 0;
  double Bytes = 0;     ///< gradient bytes
  double WireBytes = 0; ///< after compression
  double ReadySeconds = 0, StartSeconds = 0, EndSeconds = 0;
};

struct OverlapTime {
  double ComputeSeconds = 0; ///< end of backward compute
  double CommSeconds = 0;    ///< sum of the buckets' all-reduce times
  /// max(0, end of the last all-reduce - ComputeSeconds).
  double ExposedSeconds = 0;
  std::vector<BucketTime> Buckets;
};

/// Simulates bucketed gradient all-reduce over G during backward. Layers are
/// in backward order (the last layer of the model first). Negative or NaN
/// figures are read as 0; BucketBytes <= 0 closes a bucket after every
/// layer with gradients. Every all-reduce is priced by collectiveTime with
/// algorithm A.
OverlapTime overlapGradientAllReduce(llvm::ArrayRef<LayerBackward> Layers,
                                     double BucketBytes, const CommGroup &G,
                                     const Compression &C = Compression(),
                                     CommAlgorithm A = CommAlgorithm::Auto);

/// A one-line summary of T with its numbers, T made by
/// overlapGradientExchange with BucketBytes, C and K. Apart from the
/// simulation, which a planner runs for every strategy and reads none of.
std::string explain(const OverlapTime &T, double BucketBytes,
                    const Compression &C, Collective K);

/// As overlapGradientAllReduce, each bucket exchanged by collective K: a
/// reduce-scatter where the optimizer is sharded (ZeRO; Megatron-LM's
/// distributed optimizer reduce-scatters its buckets during backward).
OverlapTime overlapGradientExchange(llvm::ArrayRef<LayerBackward> Layers,
                                    double BucketBytes, const CommGroup &G,
                                    const Compression &C, CommAlgorithm A,
                                    Collective K);

/// Two bucket sequences simulated apart (each by overlapGradientExchange,
/// say the dense gradients and a mixture's experts', over different
/// groups) sharing one communication stream: each bucket starts when it is
/// ready and the stream is free, in the order they become ready, and lasts
/// as long as it did alone. Returns what outlasts ComputeSeconds (the
/// backward's end), at least 0.
double sharedStreamExposed(llvm::ArrayRef<BucketTime> A,
                           llvm::ArrayRef<BucketTime> B, double ComputeSeconds);

/// The updated parameters' all-gather of a sharded optimizer, overlapped
/// with the next step's first forward, as Megatron-Core runs it under
/// --overlap-param-gather (distributed/param_and_grad_buffer.py): Layers in
/// forward order (Seconds their forward, GradientBytes their parameters'
/// bytes) fill buckets of BucketBytes as the gradients' buckets are filled;
/// the first bucket's all-gather starts when the optimizer step ends and is
/// waited for; each bucket's forward pre-hook waits for its own all-gather
/// and dispatches the next bucket's, so a gather starts when the previous
/// bucket's forward starts (and the previous gather has ended: one
/// stream). ComputeSeconds is the forward's compute, ExposedSeconds the
/// time the forward waits, CommSeconds the gathers' sum; a bucket's
/// ReadySeconds is when its dispatch was asked for.
OverlapTime overlapParameterGather(llvm::ArrayRef<LayerBackward> Layers,
                                   double BucketBytes, const CommGroup &G,
                                   CommAlgorithm A = CommAlgorithm::Auto);

} // namespace perfc::cost

#endif // PERFC_COSTMODELS_OVERLAP_H
