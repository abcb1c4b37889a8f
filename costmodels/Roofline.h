//===- Roofline.h - Time of one op on one device ----------------*- C++ -*-===//
//
// The roofline model with per-class efficiencies and a fixed per-op
// overhead:
//
//   Seconds = max(Flops / (Peak(unit, type) x ComputeEff(class, Flops)),
//                 Bytes / (Bandwidth(level) x MemoryEff(class, Bytes)))
//             + Overhead
//
// where level is the innermost memory level of the description that has a
// bandwidth and whose capacity holds the op's Bytes (its working set), and
// main memory where none does. Caches without a bandwidth are never chosen,
// so a description that gives none prices every byte at main memory. GPUs
// list their L2 with its bandwidth: an INT8 ResNet-50 layer at batch 1
// (a few MB) runs from the 40-50 MB L2 of an A100, H100 or L4, not from
// HBM or GDDR6. A caller that follows the tensors through a schedule
// (passes/CacheReuse.h) passes the share of the bytes each level serves
// instead (TimeOptions::LevelShare), and the slowest level's crossing is
// the memory term.
//
// Depthwise convolutions on a device that gives a time per output element
// (`efficiency: depthwise_conv: time_per_output`) have a second compute
// term, Outputs x time_per_output, and the larger of the two is the
// compute time: CPU depthwise kernels take nearly the same time per output
// whatever the kernel size (ONNX Runtime, 2 threads of a Zen 5: 0.43 /
// 0.48 / 0.56 ns for 3x3 / 5x5 / 7x7, tools/bench/results/nas_ranking.md),
// which FLOPs over a peak cannot express.
//
// Why max(): a well-pipelined kernel overlaps its loads with its
// arithmetic, so the slower of the two sets the pace; the efficiencies
// absorb the imperfect overlap. Why the overhead is added, not overlapped:
//  * GPUs and other accelerators: each op is at least one kernel, and the
//    launch (host API call, grid setup, drain at the end) is serial with
//    the kernel's work in a dependent chain of ops, which is what a model's
//    forward pass is. CUDA graphs and fusion reduce it; they are priced by
//    lowering the device's launch_overhead, not by this formula;
//  * CPUs: the runtime's per-op dispatch (scheduling, shape checks, thread
//    pool wake-up) runs on the same cores before the kernel does, so it is
//    serial too; `launch_overhead` of a CPU description is that dispatch.
//
// Unit choice (chooseUnit in Roofline.cpp): GEMM, conv and recurrent ops run
// on the matrix-class unit (tensor cores, AMX, matrix cores) if it computes
// their type, else on the vector-class unit; everything else runs on the
// vector-class unit. Matrix units run products only: where the vector unit
// has no arithmetic for a type narrower than 32 bits, a non-matrix op
// computes there in a wider one (8-bit types in FP16 where it has FP16,
// else and 16-bit types in FP32; its bytes unchanged, no fallback flag),
// never on the tensor cores. If neither computes the type (or a device has no
// vector unit, as an NPU), the unit with the best peak for it does; if none
// does, the op is priced at the fp32 vector peak and OpTime::Fallback says so.
// TF32 is a matrix-unit mode of fp32 arithmetic: non-matrix ops, and devices
// without tf32 peaks, compute it as fp32 (no fallback flag). On a GPU a GEMM
// whose tensor-core tiles would be mostly padding (a GEMV, a decoding step's
// attention) runs on the vector unit where that is faster (see quantization
// below); an FP8 one there converts on load and computes in FP16 (FP32 where
// the vector unit has no FP16), its bytes staying FP8. A device whose
// `supports` list excludes the op's class or type (an NPU) cannot run it at
// all: OpTime::Unsupported is set and Seconds is +infinity, so that a placement
// that ignores the flag can never look cheap.
//
// Fused attention kernels (OpWork::FusedAttention: softmax(Q.K^T).V as one)
// take the description's `fused_attention` efficiency where it gives one,
// else gemm's: their products interleave with a softmax and reach less of
// the tensor cores than a GEMM of the same FLOPs.
//
// Convolution algorithms and layouts, where the device describes its
// library (hwdb keys winograd_tile and matrix_conv_layout):
//  * Winograd: cuDNN runs dense 3x3 stride-1 convolutions on CUDA cores
//    (FP32 without tensor cores) with its WINOGRAD algorithms, forward,
//    dgrad and wgrad; F(m x m, 3x3) computes an m x m output tile with
//    (m+2)^2 multiplies instead of 9 m^2 (Lavin & Gray, "Fast Algorithms for
//    Convolutional Neural Networks", CVPR 2016), so the products' FLOPs are
//    divided by 9 m^2 / (m+2)^2 (2.25 for m = 2) and the conv efficiency
//    applies to what is left (the transforms are taken as absorbed, like
//    an implicit GEMM's index arithmetic). Tensor-core kernels are implicit
//    GEMMs and keep their FLOPs;
//  * layout: cuDNN's tensor-core convolutions want NHWC and "may use ...
//    NCHW-to-NHWC transformations to call the Tensor Core operations"
//    (cuDNN Developer Guide, Tensor Transformations): a framework storing
//    NCHW pays a transpose of the input before and of the output after
//    (TimeOptions::Layout, OpTime::LayoutSeconds).
//
// Extension points, each a separate function composed by the caller rather
// than a flag in here:
//  * fusion: a fused group is one OpWork (summed Flops, only the group's
//    external bytes, one overhead); the fusion pass builds it and calls
//    opTime once, so nothing here changes;
//  * GEMM/conv wave and tile quantisation: a function from (M, N, K, tile,
//    Cores) to an efficiency factor, multiplied into ComputeEfficiency
//    before the division (needs shapes, which OpWork does not carry yet);
//  * CPU SIMD and core effects: the same hook, using Device::Cores,
//    SimdWidthBits and FmaUnits (vector-length remainders, threads < cores);
//  * collectives and transfers: alpha-beta over hw::Link (LatencySeconds is
//    alpha, 1 / (BandwidthBytesPerSecond x Efficiency) is beta), in a
//    header of their own (costmodels/Collectives.h), not in this one.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_COSTMODELS_ROOFLINE_H
#define PERFC_COSTMODELS_ROOFLINE_H

#include "costmodels/OpWork.h"
#include "hwdb/Device.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"

#include <string>

namespace perfc::cost {

/// Which term of the roofline sets an op's time.
enum class Bound : uint8_t { Compute, Memory, Overhead };
/// "compute", "memory", "overhead".
const char *name(Bound B);

struct TimeOptions {
  /// Run floating-point arithmetic in this type instead of the op's own,
  /// e.g. an fp32 model on tensor cores in fp16, bf16 or tf32. Integer ops
  /// keep their type. Only the arithmetic changes: the bytes are those of
  /// the OpWork (re-count the work with converted tensors to model storage
  /// in a narrower type too).
  llvm::Optional<ir::DType> ComputeType;
  /// Memory layout the framework stores 2-D convolution activations in
  /// (PyTorch: NCHW unless channels_last). Where it differs from the
  /// layout the device's matrix-unit kernels want
  /// (hw::Device::MatrixConvLayout), each such convolution also pays a
  /// transpose of its input and of its output (OpTime::LayoutSeconds).
  /// Native: stored as the kernels want, nothing added.
  hw::ConvLayout Layout = hw::ConvLayout::Native;
  /// Describe the tiling in OpTime::QuantizationNote (for explanations);
  /// off, opTime formats no text.
  bool Notes = true;
  /// Where the op's bytes are when it runs, from a model of the schedule
  /// (passes/CacheReuse.h): the share of its bytes each memory level of the
  /// device serves, indexed like hw::Device::Memory (main memory first);
  /// the shares sum to 1. Empty: the level that holds the op's own working
  /// set serves all of it (levelFor, see the header). With shares, the
  /// bytes served by a level and every level outside it cross that level,
  /// and the slowest crossing sets the memory term:
  ///   MemorySeconds = max over levels L with a bandwidth of
  ///                   Bytes x (share of L and levels outside L)
  ///                   / (Bandwidth(L) x MemoryEff(class, Bytes)).
  llvm::ArrayRef<double> LevelShare;
};

struct OpTime {
  double Seconds = 0;
  double ComputeSeconds = 0;
  double MemorySeconds = 0;
  double OverheadSeconds = 0;
  /// CPUs: a GEMM's elementwise epilogue run as a pass of its own (see
  /// opTime); included in ComputeSeconds. 0 elsewhere.
  double EpilogueSeconds = 0;
  /// Depthwise convolutions on a device with a time per output element
  /// (hw::Device::DepthwiseSecondsPerOutput): the output elements and that
  /// time. ComputeSeconds is then max(FLOP term, Outputs x
  /// SecondsPerOutput); PerOutputBound says the second one set it. 0 and
  /// false elsewhere. Transposes copied one element at a time
  /// (OpWork::StridedElements) on a device with a time per such element
  /// (hw::Device::StridedCopySecondsPerElement) use the same fields, with
  /// StridedCopy set: Outputs are the elements copied.
  double Outputs = 0;
  double SecondsPerOutput = 0;
  bool PerOutputBound = false;
  bool StridedCopy = false;
  /// Dense 3x3 stride-1 convolutions on the vector units of a device whose
  /// library runs them as Winograd F(m x m, 3x3): the factor the products'
  /// FLOPs are divided by, m^2 x 9 / (m + 2)^2; 1 elsewhere.
  double WinogradReduction = 1;
  /// Convolutions on matrix units whose activations are stored in another
  /// layout than the kernels want: the two transpose kernels (input in,
  /// output back), each reading and writing its tensor at data-movement
  /// memory efficiency plus a launch. Added to Seconds (separate kernels,
  /// serial with the convolution); 0 elsewhere.
  double LayoutSeconds = 0;
  /// CPUs: a 2-D convolution whose channels do not come in the device's
  /// blocks (hw::Device::ConvChannelBlock, runsBlocked) runs the runtime's
  /// generic path, an SGEMM per group after an im2col copy of the input:
  /// the compute term then takes the `gemm` efficiency at one group's
  /// product, and Im2colSeconds, the copy (written, then read by the GEMM,
  /// at data-movement efficiency from the level that holds one group's
  /// copy), is added to Seconds. False and 0 elsewhere.
  bool GenericConv = false;
  double Im2colSeconds = 0;
  /// CPUs: a blocked 2-D convolution's products grow by this factor when
  /// its channel counts are padded to whole blocks (channelPadding); 1
  /// elsewhere.
  double ChannelPadding = 1;
  cost::Bound Bound = cost::Bound::Overhead;
  /// Peak of the chosen unit for ComputeType (FLOP/s, op/s for integers).
  double PeakFlops = 0;
  double ComputeEfficiency = 0;
  /// Share of the GPU's thread-block slots doing useful work in a GEMM or
  /// conv, after tile and wave quantisation (see quantization()); 1 where
  /// not modelled.
  double Quantization = 1;
  /// The tile behind Quantization ("128x128, 6 tiles in 1 wave of 108").
  std::string QuantizationNote;
  /// Bandwidth of the memory level the op's bytes move through (bytes/s):
  /// the innermost level with a bandwidth that holds its working set, else
  /// main memory (see the header comment).
  double Bandwidth = 0;
  /// That level's name where it is a cache ("L2"); empty for main memory.
  std::string MemoryLevel;
  /// The bytes that cross that level: Bytes, or with TimeOptions::LevelShare
  /// the share of them served by it and the levels outside it.
  double LevelBytes = 0;
  /// With LevelShare and notes: each level's share ("GDDR6 38%, L2 62%").
  std::string ResidencyNote;
  double MemoryEfficiency = 0;
  /// The compute unit that runs the op ("tensor", "vector", ...); a static
  /// string. Empty for views and unsupported ops.
  const char *Unit = "";
  /// The work the terms divide, and its class, copied for explain().
  double Flops = 0;
  double Bytes = 0;
  OpClass Class = OpClass::Other;
  /// The type the arithmetic runs in (after the override and fallback).
  ir::DType ComputeType = ir::DType::F32;
  /// The type the op asked for (after the override, before fallback).
  ir::DType RequestedType = ir::DType::F32;
  /// No unit computes RequestedType; priced at the fp32 vector peak.
  bool Fallback = false;
  /// The device cannot run the op (its `supports` list excludes the class
  /// or type, or it has no unit for the type and none for fp32). Seconds is
  /// +infinity.
  bool Unsupported = false;
  bool IsView = false;
};

/// Time of W on D. Views (W.IsView) cost nothing.
/// Smallest tile side (the tensor-core MMA granularity) and the smallest K
/// slice a split-K kernel gives one block.
constexpr unsigned MinTile = 16;
constexpr double MinSplitDepth = 128;

/// Tile and wave quantisation of a GEMM of dims G on a GPU with Cores
/// streaming multiprocessors and a thread-block output tile of TileM x
/// TileN (NVIDIA, "Matrix Multiplication Background User's Guide"): the
/// output is covered by ceil(M/tm)*ceil(N/tn) tiles per batch, which run in
/// ceil(tiles/Cores) waves, so the useful share of the work the SMs do is
/// Batch*M*N / (waves*Cores*tm*tn). Like cuBLAS's heuristics, the tile is
/// chosen among TileM x TileN and its halvings (down to an eighth, at least
/// MinTile), with split-K (up to 16 slices of at least MinSplitDepth) for
/// deep, narrow products whose output tiles fill less than one wave (with a
/// wave or more, splitting only adds a reduction); a smaller tile reuses each
/// operand less, so its own efficiency is taken as its tm*tn/(tm+tn) relative
/// to the full tile's. Applies to matrix units (tensor cores); where the vector
/// units would be faster, opTime uses them instead, as cuBLAS picks GEMV or
/// CUDA-core kernels.
/// Returns the factor that multiplies the compute efficiency, in (0, 1].
double quantization(const GemmDims &G, unsigned Cores, unsigned TileM,
                    unsigned TileN, std::string *Note = nullptr);

/// Whether a CPU runtime whose direct convolution kernels take channels in
/// blocks of Block, padding counts that are multiples of Align (0: Block)
/// to whole blocks, runs this 2-D convolution with them. The rule is ONNX
/// Runtime's NCHWc transformer (onnxruntime/core/optimizer/
/// nchwc_transformer.cc), as ORT 1.31 applies it on AVX-512 (Block 16,
/// Align 4; tools/bench/ort_nchwc_rule.py checks it case by case): one
/// group: input channels fewer than a block, or a multiple of Align (the
/// output channels are padded); depthwise: channels a multiple of Align;
/// other groups: input and output channels per group whole blocks. True
/// where Block is 0, for other ops, and where the shape is unknown.
bool runsBlocked(const OpWork &W, unsigned Block, unsigned Align = 0);

/// How much a blocked convolution's products grow when the runtime pads its
/// channels to whole blocks of Block: one group: the output channels, and
/// the input channels unless fewer than a block (read from NCHW as they
/// are); depthwise: the channels; other groups are whole blocks already.
/// 1 where Block is 0 and for other ops.
double channelPadding(const OpWork &W, unsigned Block);

OpTime opTime(const OpWork &W, const hw::Device &D,
              const TimeOptions &O = TimeOptions());

/// One line with the numbers plugged into the formula, e.g.
/// "max(3.7 GFLOP / (312 TFLOPS x 0.75), 25.1 MB / (2.039 TB/s x 0.85))
///  + 5 us = 20.8 us (compute-bound; tensor fp16)".
std::string explain(const OpTime &T);

} // namespace perfc::cost

#endif // PERFC_COSTMODELS_ROOFLINE_H
