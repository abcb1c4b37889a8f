//===- Calibrate.h - Measure this machine as an hwdb device -----*- C++ -*-===//
//
// `perfc calibrate` measures the CPU it runs on and writes a device
// description in the hwdb YAML schema (hwdb/README.md), so that perfc's
// latency predictions can be made for, and checked on, the very machine
// that runs the model:
//
//  * peaks: FP32 and FP64 FMA loops on every thread (the hardware peak the
//    efficiencies are fractions of), the clock from a chain of dependent
//    integer adds, SIMD width from CPUID, FMA pipes per core from both;
//  * gemm: OpenBLAS SGEMM at square sizes to 1024^3 and at the shapes of
//    batch-1 transformers (seq 128 projections, MLP, GPT-2's LM head, which
//    runs at half a square product's rate): one efficiency curve over
//    FLOPs; 2048^3, one attention head and a classifier SGEMV are reported;
//    SGEMV over a matrix larger than the last-level cache (GEMM's memory
//    efficiency);
//  * conv: direct convolution in the NCHWc layout (NchwcConv.h, the
//    loop nest of ONNX Runtime's MLAS kernels, AVX-512/AVX2/portable
//    picked at run time) over the zoo's CNN shapes: dense (ResNet, VGG,
//    MobileNet pointwise) and depthwise (MobileNet, EfficientNet,
//    ConvNeXt), each an efficiency curve over FLOPs. im2col + SGEMM, what
//    this measured before, reaches half of what runtimes do on CPUs;
//  * memory: STREAM-like copy and triad over arrays much larger than the
//    last-level cache (main-memory bandwidth, the best of the repetitions),
//    and the same kernels on cache-resident arrays (cache bandwidths);
//  * elementwise, reduction, normalization and data movement: an add, an
//    exp, a sum, a layer normalization and a transpose, cache-resident
//    (compute efficiency, in perfc's FLOP convention per op) and from
//    cache-resident to larger than the caches (memory efficiency curves,
//    each point over the bandwidth of the level its set fits, as the
//    roofline prices it);
//  * dispatch overhead: a fork/join over the threads of a spinning pool
//    running a tiny kernel, back to back (launch_overhead).
//  * a transpose copied one element at a time (a 6-D window partition that
//    moves the innermost axis, each element's offset computed from its
//    index, one thread, as ONNX Runtime's generic Transpose copies it):
//    data_movement's time_per_strided_element.
//
// Peaks and bandwidths are the best of several repetitions (as STREAM
// reports); kernel rates and overheads are the 10th percentile of their
// call times (robust against a machine shared with other work, which only
// ever slows calls down), convolutions' the best call (the VGG shape's
// 10 ms calls are seldom left alone for 10% of them). Every kernel is
// timed in each of two rounds (CalibrateOptions::Rounds) and its faster
// round counts: on a shared VM a slow phase of seconds otherwise halves a
// figure (a transpose's or a small SGEMM's) in one run of calibrate and
// not the next. Efficiencies are kernel
// rates over the peak or bandwidth, clamped to (0, 1] as the schema requires: a
// cache-resident kernel faster than main memory gets 1 on the main-memory
// curve, and the cache levels carry their own measured bandwidths.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_CALIBRATE_CALIBRATE_H
#define PERFC_TOOLS_CALIBRATE_CALIBRATE_H

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <utility>
#include <vector>

namespace perfc::calibrate {

struct CalibrateOptions {
  /// Threads to measure with (the runtime's intra-op threads); >= 1.
  unsigned Threads = 2;
  /// A few seconds instead of under a minute: smaller arrays, fewer sizes,
  /// shorter timings. For tests; the figures are rough.
  bool Quick = false;
  /// Times every kernel is measured, in rounds some seconds apart; each
  /// kernel's fastest round counts. On a machine shared with other work a
  /// slow phase of a few seconds then spoils no figure unless it returns
  /// at the same kernel of every round. 0: 2 (1 with Quick).
  unsigned Rounds = 0;
  /// The device's `name:`; empty: "calibrated-<host>".
  std::string Name;
  /// OPENBLAS_CORETYPE to measure with: "" picks the AVX-512 kernels on
  /// CPUs that have AVX-512 (overriding the environment), "env" keeps the
  /// environment's, anything else is used as given (see Blas.h).
  std::string BlasCoreType;
  /// Progress lines ("calibrate: ..."), or none.
  llvm::raw_ostream *Log = nullptr;
};

/// One timed kernel.
struct KernelRate {
  std::string What;      ///< "sgemm 1024x1024x1024", "conv 3x3 64->64 56x56".
  double Work = 0;       ///< FLOPs (compute kernels) or bytes (memory kernels).
  double Seconds = 0;    ///< Time of one call (10th percentile).
  double Rate = 0;       ///< Work / Seconds: FLOP/s or bytes/s.
  double Efficiency = 0; ///< Rate over the peak or the level's bandwidth.
};

/// (size, efficiency) points: size in FLOPs or bytes, as in hwdb curves.
using Curve = std::vector<std::pair<double, double>>;

struct Measurements {
  // The machine.
  std::string Host, Date, CpuModel, Vendor;
  unsigned LogicalCpus = 0, Threads = 0;
  unsigned SimdWidthBits = 0;
  std::string Isa;
  double ClockHz = 0;    ///< 0 where not measured.
  unsigned FmaUnits = 0; ///< 0 where the figures do not give a whole number.
  double MemoryBytes = 0, L2BytesPerCore = 0, L3Bytes = 0;
  std::string BlasPath, BlasCore, BlasConfig;
  std::string BlasInheritedCoreType; ///< OPENBLAS_CORETYPE before calibrating.
  /// Set where the L3 size CPUID reports was not believed (a VM that
  /// reports the whole socket's L3): what was reported.
  double L3ReportedBytes = 0;
  /// /proc/loadavg (1 minute) before measuring: other work on the machine.
  double LoadAverage = 0;
  /// Notes on the run (a busy machine, an override), one per line.
  std::vector<std::string> Notes;

  // Peaks (FLOP/s) over all threads, and FP32 on one thread.
  double PeakF32 = 0, PeakF64 = 0, PeakF32OneThread = 0;

  // Bandwidths (bytes/s, STREAM counting: bytes read + bytes written).
  double CopyBandwidth = 0, TriadBandwidth = 0;
  double MainBandwidth = 0; ///< max(copy, triad): the description's DRAM.
  double L2Bandwidth = 0, L3Bandwidth = 0; ///< 0 where not measured.
  double StreamArrayBytes = 0;

  // Kernels.
  std::vector<KernelRate> Gemm;          ///< Square SGEMMs (the curve).
  std::vector<KernelRate> GemmShapes;    ///< Model-shaped SGEMMs, SGEMV.
  KernelRate Gemv;                       ///< SGEMV larger than the caches.
  std::vector<KernelRate> Conv;          ///< Dense NCHWc direct convolutions.
  std::vector<KernelRate> DepthwiseConv; ///< Depthwise NCHWc convolutions.
  std::string ConvKernel;                ///< ISA and tile of those kernels.
  unsigned ConvLanes = 0; ///< Their channel block (floats per vector).
  /// ONNX Runtime's NCHWc channel block here (ortNchwcBlock); 0: none.
  unsigned OrtNchwcBlock = 0;
  std::vector<KernelRate> Memory; ///< Streaming kernels by size.
  std::vector<KernelRate> Vector; ///< exp, sum, layer norm in cache.

  // Efficiencies as written to the description.
  Curve GemmCompute;
  double GemmMemory = 0;
  double ConvCompute = 0;          ///< All dense shapes together.
  double DepthwiseConvCompute = 0; ///< All depthwise shapes together.
  Curve ConvComputeCurve;          ///< By FLOPs.
  /// The depthwise two-term fit (max(FLOPs / (peak x compute), outputs x
  /// time per output)): the median time per output element of the 3x3
  /// shapes (the fewest FLOPs per output, so the per-output floor shows),
  /// and the 7x7 shapes' rate over the peak (the most FLOPs per output).
  double DepthwiseSecondsPerOutput = 0;
  double DepthwiseFlopCompute = 0;
  /// Per depthwise shape: seconds per output element (same order as
  /// DepthwiseConv).
  std::vector<double> DepthwisePerOutput;
  /// A transpose copied one element at a time (stridedTransposeKernel over
  /// a window partition's [1, 64, 8, 7, 8, 7] by (0, 2, 4, 3, 5, 1), one
  /// thread): seconds per element.
  double StridedCopySecondsPerElement = 0;
  double RecurrentCompute = 0;
  double ElementwiseCompute = 0, ReductionCompute = 0, NormalizationCompute = 0;
  Curve ElementwiseMemory, ReductionMemory, NormalizationMemory,
      DataMovementMemory;

  // Per-op overheads (seconds).
  double ForkJoinSeconds = 0;  ///< Empty fork/join over the threads.
  double DispatchSeconds = 0;  ///< Fork/join with a tiny kernel.
  double SmallGemmSeconds = 0; ///< A 16x16x16 SGEMM call.

  double WallSeconds = 0;
};

/// Runs the measurements.
llvm::Expected<Measurements> measure(const CalibrateOptions &O);

/// The device description (hwdb YAML) for M, with the raw figures as
/// comments.
std::string toYaml(const Measurements &M, const CalibrateOptions &O);

/// measure() then toYaml(); checks that the text loads with
/// hw::loadHardwareFromString. Out, if given, receives the figures.
llvm::Expected<std::string> calibrate(const CalibrateOptions &O,
                                      Measurements *Out = nullptr);

} // namespace perfc::calibrate

#endif // PERFC_TOOLS_CALIBRATE_CALIBRATE_H
