//===- Device.h - One processor: peaks, memories, efficiencies --*- C++ -*-===//
//
// A Device is one processor as the cost models see it: the peak of each
// compute unit per element type, memory levels with capacity and bandwidth,
// the fixed cost of launching work on it, and how close to peak each class
// of op gets. Devices are loaded from YAML (Loader.h) and are immutable
// afterwards, so one loaded description can be shared across threads.
//
// All figures are in base units: FLOP/s (op/s for integer types), bytes,
// bytes/s, seconds, Hz.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_HWDB_DEVICE_H
#define PERFC_HWDB_DEVICE_H

// Only the OpClass enumeration is used from this header; hwdb does not link
// perfc_costmodels (which depends on hwdb), so op class names are parsed
// here with hwdb's own table (see opClassKey).
#include "ir/DType.h"
#include "ir/OpClass.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace perfc::hw {

enum class DeviceKind : uint8_t { Gpu, Cpu, Npu, Dsp };
llvm::StringRef name(DeviceKind K);

/// The kinds of compute unit a description may list. The set is closed so
/// that cost models can decide by kind which unit runs an op: matrix-class
/// units (tensor cores, AMX, matrix cores, NPU MAC arrays) run products,
/// vector-class units run everything else.
enum class UnitKind : uint8_t {
  Tensor, ///< NVIDIA tensor cores.
  Matrix, ///< Other matrix engines: AMD matrix cores, Intel AMX, NPU arrays.
  Vector, ///< GPU CUDA cores / stream processors, NPU vector units.
  Simd,   ///< CPU SIMD (AVX-512, NEON) with its FMA units.
};
/// "tensor", "matrix", "vector", "simd"; a static string, so cost models can
/// keep the pointer beyond the Device's lifetime.
const char *name(UnitKind K);
bool isMatrixUnit(UnitKind K);

/// Number of OpClass enumerators (OpClass::Other is the last).
constexpr size_t NumOpClasses = static_cast<size_t>(OpClass::Other) + 1;
/// The YAML key of an op class ("gemm", "data_movement"); kept in hwdb so
/// that hwdb need not link the cost models.
llvm::StringRef opClassKey(OpClass C);
llvm::Optional<OpClass> parseOpClassKey(llvm::StringRef Key);

/// One compute unit and its peak throughput per element type.
struct ComputeUnit {
  UnitKind Kind = UnitKind::Vector;
  /// (type, FLOP/s or op/s), in the order the description gives them.
  llvm::SmallVector<std::pair<ir::DType, double>, 8> Peaks;

  /// Peak for T, or None when this unit cannot compute in T.
  llvm::Optional<double> peak(ir::DType T) const;
};

/// One level of the memory hierarchy. Level 0 of a Device is main memory
/// (HBM, GDDR, DRAM, LPDDR); later levels are caches, outermost first.
struct MemoryLevel {
  std::string Name;
  double CapacityBytes = 0;
  /// Bytes per second; 0 where no bandwidth is known (only caches may omit
  /// it, main memory always has one).
  double BandwidthBytesPerSecond = 0;
};

/// A fraction of peak, either a constant or a function of problem size:
/// points (size, efficiency), sizes ascending, interpolated linearly in
/// log(size) and clamped at both ends. Size is FLOPs for compute curves and
/// bytes for memory curves. Small kernels reach a smaller share of peak than
/// large ones, which is what the points express.
struct EfficiencyCurve {
  double Constant = 1.0;
  std::vector<std::pair<double, double>> Points;

  double at(double Size) const;
  bool isConstant() const { return Points.empty(); }
};

/// How close to peak one op class gets on this device.
struct ClassEfficiency {
  EfficiencyCurve Compute; ///< Share of the compute unit's peak.
  /// Share of the vector units' peak where the class runs there on a
  /// device with a matrix unit and the description gives it apart
  /// (`vector_compute`): a V100's CUDA-core SGEMM reaches 0.92 of its peak
  /// where its tensor-core HGEMM reaches 0.78. Unset: Compute.
  llvm::Optional<EfficiencyCurve> VectorCompute;
  /// The compute curve for a kernel on a matrix unit or not.
  const EfficiencyCurve &compute(bool OnMatrixUnit) const {
    return !OnMatrixUnit && VectorCompute ? *VectorCompute : Compute;
  }
  /// Share of the bandwidth of the memory level the op runs from: the
  /// innermost level with a bandwidth that holds its working set, else
  /// main memory (costmodels/Roofline.h).
  EfficiencyCurve Memory;
  /// False where the description gave nothing for this class and the values
  /// were copied from `default`.
  bool Explicit = false;
};

/// Where a figure came from.
struct Source {
  std::string Url;      ///< Either Url or Document is set.
  std::string Document; ///< A document without a stable URL.
  std::string Gives;    ///< Which figures it gives.
};

/// What an accelerator with a restricted instruction set (an NPU, a DLA) can
/// run. Empty lists mean no restriction on that axis.
struct SupportSet {
  llvm::SmallVector<OpClass, 4> OpClasses;
  llvm::SmallVector<ir::DType, 4> DTypes;
};

/// Memory layout of 2-D convolution activations. Native: whatever the
/// kernels want (no conversion is priced).
enum class ConvLayout : uint8_t { Native, Nchw, Nhwc };
/// "native", "nchw", "nhwc".
const char *name(ConvLayout L);
llvm::Optional<ConvLayout> parseConvLayout(llvm::StringRef S);

struct Device {
  std::string Name;
  DeviceKind Kind = DeviceKind::Gpu;
  std::string Vendor;
  std::string Description;
  /// SMs (NVIDIA), CUs (AMD), cores (CPU, NPU); 0 where not given.
  unsigned Cores = 0;
  /// The clock the peaks are quoted at; 0 where not given.
  double ClockHz = 0;
  /// CPU vector register width in bits and FMA pipes per core; 0 where not
  /// given. Informational now; the CPU SIMD model will use them.
  unsigned SimdWidthBits = 0;
  /// GPU GEMM tile (rows x columns of the output one thread block
  /// computes) for wave and tile quantisation; 0 where not given, and then
  /// no quantisation is modelled.
  unsigned GemmTileM = 0;
  unsigned GemmTileN = 0;
  unsigned FmaUnits = 0;
  std::vector<ComputeUnit> Units;
  /// Main memory first, then caches; never empty.
  std::vector<MemoryLevel> Memory;
  /// Fixed cost per op: kernel launch on accelerators, runtime dispatch on
  /// CPUs.
  double LaunchOverheadSeconds = 0;
  /// Indexed by OpClass; every entry is filled (from `default` where the
  /// description does not list the class).
  std::array<ClassEfficiency, NumOpClasses> Efficiencies;
  /// Depthwise convolutions (one output channel per group), where the
  /// description gives them apart (`efficiency: depthwise_conv`): CPU
  /// runtimes run them as vector code, one load per FMA, without the
  /// register reuse of a dense convolution. Unset: `conv`'s. Sides the
  /// entry leaves out are `conv`'s.
  llvm::Optional<ClassEfficiency> DepthwiseConv;
  /// Fused attention kernels (softmax(Q.K^T).V as one kernel: FlashAttention,
  /// cuDNN's and TensorRT's fused attention; OpWork::FusedAttention), where
  /// the description gives them apart (`efficiency: fused_attention`): they
  /// interleave their products with a softmax and reach a smaller share of
  /// the tensor cores than a GEMM of their FLOPs (FlashAttention-2 reaches
  /// 35% of an H100's, Shah et al. 2024). Unset: `gemm`'s. Sides the entry
  /// leaves out are `gemm`'s.
  llvm::Optional<ClassEfficiency> FusedAttention;
  /// Depthwise convolutions: the kernel's time per output element
  /// (`efficiency: depthwise_conv: time_per_output`), a floor beside the
  /// FLOP term: CPU depthwise kernels (MLAS) take nearly the same time per
  /// output whatever the kernel size (loads, stores, edge handling per
  /// output vector), so a 7x7 costs little more than a 3x3 though it has
  /// 5.4x the FLOPs. 0 where not given (then FLOPs alone).
  double DepthwiseSecondsPerOutput = 0;
  /// Transposes copied one element at a time (OpWork::StridedElements):
  /// the runtime's time per element (`efficiency: data_movement:
  /// time_per_strided_element`), a floor beside the bytes' term. CPU
  /// runtimes without a general tiled transpose (ONNX Runtime's generic
  /// Transpose steps a multi-index per element, several ns each) are far
  /// below memory speed there. 0 where not given (then bytes alone).
  double StridedCopySecondsPerElement = 0;
  /// Output tile m of the Winograd F(m x m, 3x3) algorithm the device's
  /// library runs dense 3x3 stride-1 convolutions with on its vector
  /// units (cuDNN on CUDA cores, FP32): m^2 x 9 / (m + 2)^2 fewer
  /// multiplies (Lavin & Gray 2016). 0: direct or implicit-GEMM only.
  unsigned WinogradTile = 0;
  /// CPUs: the channel block of the runtime's blocked direct convolution
  /// kernels (ONNX Runtime's NCHWc kernels in MLAS: the vector width in
  /// floats, 16 with AVX-512, 8 with AVX2), and the alignment of the
  /// channel counts it pads to whole blocks (4 in ONNX Runtime 1.30-1.31;
  /// 0: the block). A 2-D convolution whose channels the runtime does not
  /// block (cost::runsBlocked, tools/bench/ort_nchwc_rule.py) runs its
  /// generic path instead: per group an im2col copy of the input, then an
  /// SGEMM, priced with the `gemm` efficiency at one group's product and
  /// the copy at data-movement efficiency. Block 0: every convolution runs
  /// the direct kernels (`conv` efficiency).
  unsigned ConvChannelBlock = 0;
  unsigned ConvChannelAlign = 0;
  /// CPUs: the activations the runtime's convolution kernels apply in
  /// their registers (ONNX op types; ONNX Runtime 1.31: Relu, LeakyRelu,
  /// Tanh, Sigmoid, Clip, HardSigmoid and HardSwish, the last also written
  /// out as x * HardSigmoid(x)). Given, a convolution's kernel takes its bias,
  /// folded BatchNormalization, constant scale or shift, a residual Add and
  /// one of these (only as the sole reader of what it activates), and any
  /// other elementwise op after it runs as a kernel of its own (SiLU's
  /// Sigmoid and Mul: ONNX Runtime's QuickGelu). Empty: any elementwise
  /// chain fuses into its convolution (cuDNN, TensorRT and XLA fusions).
  std::vector<std::string> ConvActivations;
  /// The layout the device's matrix-unit convolution kernels want (cuDNN's
  /// tensor-core kernels: NHWC). A framework storing the other layout pays
  /// a transpose of each convolution's input and output around them.
  /// Native: no preference.
  ConvLayout MatrixConvLayout = ConvLayout::Native;
  SupportSet Supports;
  std::vector<Source> Sources;

  const ComputeUnit *unit(UnitKind K) const;
  const MemoryLevel &mainMemory() const { return Memory.front(); }
  const ClassEfficiency &efficiency(OpClass C) const {
    return Efficiencies[static_cast<size_t>(C)];
  }
  /// False where the description restricts op classes or types (`supports`)
  /// and C or T is outside them.
  bool supports(OpClass C, ir::DType T) const;
};

} // namespace perfc::hw

#endif // PERFC_HWDB_DEVICE_H
