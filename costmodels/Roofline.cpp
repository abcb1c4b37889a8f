//===- Roofline.cpp - Time of one op on one device ------------------------===//
#include "costmodels/Roofline.h"

#include "hwdb/Units.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace perfc;
using namespace perfc::cost;

namespace {

/// Classes whose arithmetic is products that matrix units accelerate.
bool isMatrixClass(OpClass C) {
  return C == OpClass::Gemm || C == OpClass::Conv || C == OpClass::Recurrent;
}

struct UnitChoice {
  const hw::ComputeUnit *Unit = nullptr;
  ir::DType Type = ir::DType::F32;
  double Peak = 0;
  bool Fallback = false;
};

/// The first unit of the requested class that computes T.
UnitChoice firstOf(const hw::Device &D, bool Matrix, ir::DType T) {
  for (const hw::ComputeUnit &U : D.Units)
    if (hw::isMatrixUnit(U.Kind) == Matrix)
      if (auto P = U.peak(T))
        return {&U, T, *P, false};
  return {};
}

/// The unit with the highest peak for T, of any class.
UnitChoice bestOf(const hw::Device &D, ir::DType T) {
  UnitChoice Best;
  for (const hw::ComputeUnit &U : D.Units)
    if (auto P = U.peak(T))
      if (*P > Best.Peak)
        Best = {&U, T, *P, false};
  return Best;
}

/// A vector unit without arithmetic for a type narrower than 32 bits
/// computes it in a wider one it has: 8-bit types (FP8, INT8) in FP16 where
/// the unit has it, as TensorRT runs an INT8 or FP8 engine's layers that have
/// no 8-bit kernel (softmax, LayerNorm) in FP16; else, and for 16-bit
/// types, in FP32.
ir::DType widerOnVector(const hw::Device &D, ir::DType T) {
  if (ir::bitWidth(T) >= 32)
    return T;
  if (ir::bitWidth(T) == 8 && firstOf(D, /*Matrix=*/false, ir::DType::F16).Unit)
    return ir::DType::F16;
  return ir::DType::F32;
}

/// See the unit-choice rules in Roofline.h.
UnitChoice chooseUnit(const hw::Device &D, OpClass C, ir::DType T) {
  const bool Matrix = isMatrixClass(C);
  if (T == ir::DType::TF32 && !Matrix)
    T = ir::DType::F32;
  for (ir::DType Try : {T, ir::DType::F32}) {
    if (Matrix)
      if (UnitChoice U = firstOf(D, /*Matrix=*/true, Try); U.Unit)
        return U;
    if (UnitChoice U = firstOf(D, /*Matrix=*/false, Try); U.Unit)
      return U;
    // Matrix units run products only: an elementwise op, a reduction or a
    // copy stays on the vector unit, in a wider type where it must.
    if (!Matrix)
      if (UnitChoice U = firstOf(D, /*Matrix=*/false, widerOnVector(D, Try));
          U.Unit)
        return U;
    if (UnitChoice U = bestOf(D, Try); U.Unit)
      return U;
    // TF32 is fp32 arithmetic; a device without a tf32 mode computes it in
    // fp32 at the fp32 rate, which is not a fallback. Other types are.
    if (T != ir::DType::TF32)
      break;
  }
  UnitChoice U = firstOf(D, /*Matrix=*/false, ir::DType::F32);
  if (!U.Unit)
    U = bestOf(D, ir::DType::F32);
  U.Fallback = U.Unit != nullptr;
  return U;
}

/// The memory level an op's bytes move through: the innermost level with a
/// bandwidth whose capacity holds Bytes (the op's working set, every byte it
/// reads and writes), else main memory. Levels are main memory first, then
/// caches outermost first, so the search runs from the back. Why the whole
/// working set: a kernel's inputs are in a cache only if the kernel that
/// wrote them left them there and nothing evicted them, which a level that
/// holds the op's whole traffic makes likely, as a calibration loop
/// rerunning one op over the same buffers measures; an op whose traffic
/// exceeds the level streams through main memory.
const hw::MemoryLevel &levelFor(const hw::Device &D, double Bytes) {
  for (size_t I = D.Memory.size(); I-- > 1;) {
    const hw::MemoryLevel &L = D.Memory[I];
    if (L.BandwidthBytesPerSecond > 0 && Bytes <= L.CapacityBytes)
      return L;
  }
  return D.mainMemory();
}

/// Seconds to move Bytes through the level that holds them, at the memory
/// efficiency E gives that size: a pass of its own over a working set (a
/// GEMM's epilogue, an im2col copy).
double passSeconds(const hw::Device &D, const hw::ClassEfficiency &E,
                   double Bytes) {
  if (Bytes <= 0)
    return 0;
  return Bytes /
         (levelFor(D, Bytes).BandwidthBytesPerSecond * E.Memory.at(Bytes));
}

/// A 2-D convolution whose channel counts the work pass recorded
/// (OpWork::ConvInPerGroup with GEMM dims): what the CPU channel-block
/// rules read.
bool hasConvChannels(const OpWork &W) {
  return W.Class == OpClass::Conv && W.ConvInPerGroup > 0 && W.Gemm.valid();
}

std::string fmt(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.3g", V);
  return Buf;
}

} // namespace

const char *perfc::cost::name(Bound B) {
  switch (B) {
  case Bound::Compute:
    return "compute";
  case Bound::Memory:
    return "memory";
  case Bound::Overhead:
    return "overhead";
  }
  return "overhead";
}

double perfc::cost::quantization(const GemmDims &G, unsigned Cores,
                                 unsigned TileM, unsigned TileN,
                                 std::string *Note) {
  if (!G.valid() || Cores == 0 || TileM == 0 || TileN == 0)
    return 1;
  const auto Reuse = [](double M, double N) { return M * N / (M + N); };
  const double FullReuse = Reuse(TileM, TileN);
  double Best = 0;
  // The best tiling, described once after the search (formatting in the
  // loop cost more than the search).
  double BestTm = 0, BestTn = 0, BestSplitK = 0, BestTiles = 0, BestWaves = 0;
  for (unsigned DivM : {1u, 2u, 4u, 8u})
    for (unsigned DivN : {1u, 2u, 4u, 8u})
      for (double SplitK : {1.0, 2.0, 4.0, 8.0, 16.0}) {
        const double Tm = std::max(MinTile, TileM / DivM);
        const double Tn = std::max(MinTile, TileN / DivN);
        const double Unsplit =
            G.Batch * std::ceil(G.M / Tm) * std::ceil(G.N / Tn);
        // Split-K only for a product whose output tiles leave SMs idle in
        // its one wave (cuBLAS's and CUTLASS's use of it): with a wave or
        // more of tiles it only adds a reduction.
        if (SplitK > 1 && (G.K / SplitK < MinSplitDepth || Unsplit >= Cores))
          break;
        const double Tiles = Unsplit * SplitK;
        const double Waves = std::ceil(Tiles / Cores);
        const double Useful =
            G.Batch * G.M * G.N * SplitK / (Waves * Cores * Tm * Tn);
        const double Factor = Useful * Reuse(Tm, Tn) / FullReuse;
        if (Factor > Best) {
          Best = Factor;
          BestTm = Tm;
          BestTn = Tn;
          BestSplitK = SplitK;
          BestTiles = Tiles;
          BestWaves = Waves;
        }
      }
  if (Note && Best > 0)
    *Note = llvm::formatv("{0}x{1} tiles, split-K {2}: {3} blocks in "
                          "{4} wave(s) of {5} SMs",
                          int64_t(BestTm), int64_t(BestTn), int64_t(BestSplitK),
                          int64_t(BestTiles), int64_t(BestWaves), Cores)
                .str();
  return std::min(1.0, std::max(Best, 1e-6));
}

bool perfc::cost::runsBlocked(const OpWork &W, unsigned Block, unsigned Align) {
  if (Block == 0 || !hasConvChannels(W))
    return true;
  if (Align == 0)
    Align = Block;
  const auto Multiple = [](double Channels, unsigned Of) {
    return std::fmod(Channels, Of) == 0;
  };
  const double Groups = W.Gemm.Batch, OutPerGroup = W.Gemm.N;
  if (Groups > 1) {
    if (W.ConvInPerGroup == 1 && OutPerGroup == 1)
      return Multiple(Groups, Align); // depthwise
    return Multiple(W.ConvInPerGroup, Block) && Multiple(OutPerGroup, Block);
  }
  return W.ConvInPerGroup < Block || Multiple(W.ConvInPerGroup, Align);
}

double perfc::cost::channelPadding(const OpWork &W, unsigned Block) {
  if (Block == 0 || !hasConvChannels(W))
    return 1;
  const auto Padded = [Block](double Channels) {
    return std::ceil(Channels / Block) * Block / Channels;
  };
  const double Groups = W.Gemm.Batch, OutPerGroup = W.Gemm.N;
  if (Groups > 1)
    return W.ConvInPerGroup == 1 && OutPerGroup == 1 ? Padded(Groups) : 1;
  // Fewer input channels than a block are read from NCHW as they are.
  const double In = W.ConvInPerGroup < Block ? 1 : Padded(W.ConvInPerGroup);
  return In * Padded(OutPerGroup);
}

OpTime perfc::cost::opTime(const OpWork &W, const hw::Device &D,
                           const TimeOptions &O) {
  OpTime T;
  T.Flops = W.Flops;
  T.Bytes = W.bytes();
  T.Class = W.Class;
  T.IsView = W.IsView;
  ir::DType Type = W.Type;
  if (O.ComputeType && ir::isFloatingPoint(W.Type))
    Type = *O.ComputeType;
  T.RequestedType = Type;
  T.ComputeType = Type;
  if (W.IsView)
    return T;

  if (!D.supports(W.Class, Type)) {
    T.Unsupported = true;
    T.Seconds = T.ComputeSeconds = std::numeric_limits<double>::infinity();
    T.Bound = Bound::Compute;
    return T;
  }
  const UnitChoice U = chooseUnit(D, W.Class, Type);
  if (!U.Unit) {
    T.Unsupported = true;
    T.Seconds = T.ComputeSeconds = std::numeric_limits<double>::infinity();
    T.Bound = Bound::Compute;
    return T;
  }
  T.Unit = hw::name(U.Unit->Kind);
  T.ComputeType = U.Type;
  T.Fallback = U.Fallback;
  T.PeakFlops = U.Peak;

  // Depthwise convolutions (one output channel per group) get their own
  // efficiencies where the device gives them (CPUs: vector code without a
  // dense convolution's register reuse).
  // CPU convolutions off the runtime's channel blocks run as a GEMM per
  // group (see runsBlocked): GEMM efficiency at one group's product.
  T.GenericConv = D.Kind == hw::DeviceKind::Cpu &&
                  !runsBlocked(W, D.ConvChannelBlock, D.ConvChannelAlign);
  const bool Depthwise = !T.GenericConv && W.Class == OpClass::Conv &&
                         W.Gemm.valid() && W.Gemm.Batch > 1 && W.Gemm.N == 1;
  const hw::ClassEfficiency &E =
      T.GenericConv                          ? D.efficiency(OpClass::Gemm)
      : Depthwise && D.DepthwiseConv         ? *D.DepthwiseConv
      : W.FusedAttention && D.FusedAttention ? *D.FusedAttention
                                             : D.efficiency(W.Class);
  bool OnMatrixUnit = hw::isMatrixUnit(U.Unit->Kind);
  // Blocked CPU convolutions compute whole channel blocks: their products
  // are those of the padded channel counts.
  if (!T.GenericConv && D.Kind == hw::DeviceKind::Cpu && W.Macs > 0)
    T.ChannelPadding = channelPadding(W, D.ConvChannelBlock);
  const double PaddedFlops = W.Flops + 2 * W.Macs * (T.ChannelPadding - 1);
  const double SizeFlops =
      T.GenericConv ? 2 * W.Gemm.M * W.Gemm.N * W.Gemm.K : PaddedFlops;
  T.ComputeEfficiency = E.compute(OnMatrixUnit).at(SizeFlops);
  if (isMatrixClass(W.Class) && D.Kind == hw::DeviceKind::Gpu && OnMatrixUnit) {
    T.Quantization = quantization(W.Gemm, D.Cores, D.GemmTileM, D.GemmTileN,
                                  O.Notes ? &T.QuantizationNote : nullptr);
    // Libraries fall back to CUDA-core kernels (GEMV, small GEMMs) where
    // tensor-core tiles would be mostly padding: take the faster. Both run
    // at the class's efficiency for this size on their unit (the CUDA-core
    // kernel is a GEMM too), so the peaks, those efficiencies and the
    // tiles' padding decide. FP8 has no CUDA-core arithmetic: those kernels
    // (a decoding step's attention over an FP8 cache, TensorRT-LLM's
    // masked multi-head attention) convert on load and compute in FP16, so
    // the fallback is priced at the vector units' FP16 rate (FP32 where
    // they have no FP16), the bytes staying FP8.
    UnitChoice Vector = firstOf(D, /*Matrix=*/false, U.Type);
    if (!Vector.Unit && ir::isFloat8(U.Type))
      for (ir::DType Wider : {ir::DType::F16, ir::DType::F32})
        if (!Vector.Unit)
          Vector = firstOf(D, /*Matrix=*/false, Wider);
    const double VectorEfficiency = E.compute(false).at(W.Flops);
    if (Vector.Unit && Vector.Peak * VectorEfficiency >
                           U.Peak * T.ComputeEfficiency * T.Quantization) {
      T.Unit = hw::name(Vector.Unit->Kind);
      T.ComputeType = Vector.Type;
      T.PeakFlops = Vector.Peak;
      T.ComputeEfficiency = VectorEfficiency;
      T.Quantization = 1;
      T.QuantizationNote.clear();
      OnMatrixUnit = false;
    } else {
      T.ComputeEfficiency *= T.Quantization;
    }
  }
  T.MemoryEfficiency = E.Memory.at(T.Bytes);
  const hw::MemoryLevel *Level = &levelFor(D, T.Bytes);
  T.LevelBytes = T.Bytes;
  if (O.LevelShare.size() == D.Memory.size() && T.Bytes > 0) {
    // Each level carries what it serves and what the levels outside it
    // serve (main memory first, caches outermost first); the slowest
    // crossing sets the pace.
    double Outside = 0, Slowest = -1;
    for (size_t I = 0; I < D.Memory.size(); ++I) {
      const hw::MemoryLevel &L = D.Memory[I];
      Outside += O.LevelShare[I];
      if (L.BandwidthBytesPerSecond <= 0)
        continue;
      const double Crossing = std::min(1.0, Outside) * T.Bytes;
      const double Seconds = Crossing / L.BandwidthBytesPerSecond;
      if (Seconds > Slowest) {
        Slowest = Seconds;
        Level = &L;
        T.LevelBytes = Crossing;
      }
    }
    if (O.Notes)
      for (size_t I = 0; I < D.Memory.size(); ++I)
        if (O.LevelShare[I] > 0)
          T.ResidencyNote += (T.ResidencyNote.empty() ? "" : ", ") +
                             D.Memory[I].Name + " " +
                             fmt(100 * O.LevelShare[I]) + "%";
  }
  T.Bandwidth = Level->BandwidthBytesPerSecond;
  if (Level != &D.mainMemory())
    T.MemoryLevel = Level->Name;
  // The loader guarantees positive peaks, bandwidths and efficiencies, so
  // these divisions are finite.
  // Winograd (see the header): fewer multiplies for the products, the
  // epilogue unchanged; T.Flops is what the compute term divides.
  if (W.Class == OpClass::Conv && W.Winograd3x3 && D.WinogradTile > 0 &&
      !OnMatrixUnit && W.Macs > 0) {
    const double M = D.WinogradTile;
    T.WinogradReduction = 9 * M * M / ((M + 2) * (M + 2));
    T.Flops = W.Flops - 2 * W.Macs * (1 - 1 / T.WinogradReduction);
  }
  // (Winograd is a GPU library's choice; a description giving both keeps
  // Winograd's count.)
  if (T.ChannelPadding > 1 && T.WinogradReduction == 1)
    T.Flops = PaddedFlops;
  T.ComputeSeconds =
      T.Flops > 0 ? T.Flops / (T.PeakFlops * T.ComputeEfficiency) : 0;
  T.MemorySeconds =
      T.Bytes > 0 ? T.LevelBytes / (T.Bandwidth * T.MemoryEfficiency) : 0;
  // CPUs: ONNX Runtime's CPU provider runs a MatMul's elementwise epilogue
  // (bias, GELU, residual Add: the FLOPs beyond the products) as kernels of
  // their own, not in the GEMM's registers (ort_profile_bert_base: 86 Add
  // and 12 BiasGelu nodes beside 84 MatMuls), so its arithmetic runs at
  // elementwise efficiency on the vector unit, over one more pass through
  // the output (read and written). Convolutions keep theirs: MLAS applies
  // activations in-register and batch norm folds into the weights.
  if (D.Kind == hw::DeviceKind::Cpu && W.Class == OpClass::Gemm && W.Macs > 0 &&
      W.Flops > 2 * W.Macs) {
    const double EpiFlops = W.Flops - 2 * W.Macs;
    const double EpiBytes = 2 * W.BytesWritten;
    const hw::ClassEfficiency &EE = D.efficiency(OpClass::Elementwise);
    const UnitChoice Vec = firstOf(D, /*Matrix=*/false, T.ComputeType);
    const double VecPeak = Vec.Unit ? Vec.Peak : T.PeakFlops;
    T.EpilogueSeconds =
        std::max(EpiFlops / (VecPeak * EE.compute(false).at(EpiFlops)),
                 passSeconds(D, EE, EpiBytes));
    T.ComputeSeconds =
        2 * W.Macs / (T.PeakFlops * T.ComputeEfficiency) + T.EpilogueSeconds;
  }
  // Depthwise convolutions: a floor of a time per output element where
  // the device gives one (the kernel's loads, stores and edge handling per
  // output vector, which do not shrink with the kernel size).
  if (Depthwise && D.DepthwiseSecondsPerOutput > 0) {
    T.Outputs = W.Gemm.Batch * W.Gemm.M * W.Gemm.N * T.ChannelPadding;
    T.SecondsPerOutput = D.DepthwiseSecondsPerOutput;
    const double PerOutput = T.Outputs * T.SecondsPerOutput;
    if (PerOutput > T.ComputeSeconds) {
      T.ComputeSeconds = PerOutput;
      T.PerOutputBound = true;
    }
  }
  // Transposes the runtime copies one element at a time: a floor of a time
  // per element (a multi-index step and a scattered load each), which the
  // bytes' term at memory speed misses by an order of magnitude.
  if (W.StridedElements > 0 && D.StridedCopySecondsPerElement > 0) {
    T.StridedCopy = true;
    T.Outputs = W.StridedElements;
    T.SecondsPerOutput = D.StridedCopySecondsPerElement;
    const double PerElement = T.Outputs * T.SecondsPerOutput;
    if (PerElement > T.ComputeSeconds) {
      T.ComputeSeconds = PerElement;
      T.PerOutputBound = true;
    }
  }
  // The generic path's im2col copy: one group's [K x M] matrix at a time
  // (the buffer is reused), written and then read by the GEMM, at the
  // data-movement efficiency of the level that holds it. A pointwise
  // convolution multiplies its input in place.
  if (T.GenericConv && !W.ConvPointwise) {
    const double GroupBytes = 2 * W.Gemm.K * W.Gemm.M * ir::byteSize(W.Type);
    T.Im2colSeconds =
        W.Gemm.Batch *
        passSeconds(D, D.efficiency(OpClass::DataMovement), GroupBytes);
  }
  // Layout transposes around matrix-unit convolutions (see the header):
  // each of the input and the output is read and written once more, by a
  // kernel of its own.
  if (W.Class == OpClass::Conv && W.LayoutBytes > 0 && OnMatrixUnit &&
      O.Layout != hw::ConvLayout::Native &&
      D.MatrixConvLayout != hw::ConvLayout::Native &&
      O.Layout != D.MatrixConvLayout) {
    const double Moved = 2 * W.LayoutBytes;
    const hw::ClassEfficiency &DM = D.efficiency(OpClass::DataMovement);
    T.LayoutSeconds = Moved / (T.Bandwidth * DM.Memory.at(Moved)) +
                      2 * D.LaunchOverheadSeconds;
  }
  T.OverheadSeconds = D.LaunchOverheadSeconds;
  T.Seconds = std::max(T.ComputeSeconds, T.MemorySeconds) + T.OverheadSeconds +
              T.LayoutSeconds + T.Im2colSeconds;
  if (T.OverheadSeconds > T.ComputeSeconds &&
      T.OverheadSeconds > T.MemorySeconds)
    T.Bound = Bound::Overhead;
  else
    T.Bound =
        T.ComputeSeconds >= T.MemorySeconds ? Bound::Compute : Bound::Memory;
  return T;
}

std::string perfc::cost::explain(const OpTime &T) {
  using hw::Quantity;
  if (T.IsView)
    return "0 s (view: metadata only, no data moved, no kernel)";
  if (T.Unsupported)
    return llvm::formatv("inf (unsupported: the device does not run this op "
                         "in {0}; place it on another processor)",
                         ir::name(T.RequestedType))
        .str();
  const bool Ops = ir::isInteger(T.ComputeType);
  // The per-output term of a depthwise convolution sits beside the FLOP
  // term, and the bound names it when it sets the time.
  const std::string PerOutput =
      T.SecondsPerOutput > 0
          ? llvm::formatv(
                ", {0} {1} x {2}", int64_t(T.Outputs),
                T.StridedCopy ? "elements copied one at a time" : "outputs",
                hw::formatQuantity(T.SecondsPerOutput, Quantity::Time))
                .str()
          : std::string();
  const std::string BoundName =
      T.PerOutputBound && T.Bound == Bound::Compute
          ? std::string(T.StridedCopy ? "bound by the element-at-a-time copy"
                                      : "compute-bound by the per-output term")
          : std::string(name(T.Bound)) + "-bound";
  const std::string Level =
      T.MemoryLevel.empty() ? std::string() : " " + T.MemoryLevel;
  std::string S = llvm::formatv(
      "max({0} / ({1} x {2}){11}, {3} / ({4}{12} x {5})) + {6} = {7} ({8}; "
      "{9} {10}",
      hw::formatQuantity(T.Flops, Quantity::Work, Ops),
      hw::formatQuantity(T.PeakFlops, Quantity::Throughput, Ops),
      fmt(T.ComputeEfficiency), hw::formatDataBytes(T.LevelBytes),
      hw::formatQuantity(T.Bandwidth, Quantity::Bandwidth),
      fmt(T.MemoryEfficiency),
      hw::formatQuantity(T.OverheadSeconds, Quantity::Time),
      hw::formatQuantity(T.Seconds, Quantity::Time), BoundName, T.Unit,
      ir::name(T.ComputeType), PerOutput, Level);
  if (!T.ResidencyNote.empty())
    S += llvm::formatv("; cache reuse over the schedule: of its {0}, {1}",
                       hw::formatDataBytes(T.Bytes), T.ResidencyNote)
             .str();
  if (T.EpilogueSeconds > 0)
    S += llvm::formatv("; compute includes {0} for the elementwise epilogue "
                       "as a pass of its own",
                       hw::formatQuantity(T.EpilogueSeconds, Quantity::Time))
             .str();
  if (T.Quantization < 1)
    S += llvm::formatv("; efficiency includes tile/wave quantisation {0} "
                       "({1})",
                       fmt(T.Quantization), T.QuantizationNote)
             .str();
  if (T.WinogradReduction > 1)
    S += llvm::formatv("; Winograd: the products' FLOPs / {0} (3x3 stride-1 "
                       "convolution on the vector units)",
                       fmt(T.WinogradReduction))
             .str();
  if (T.LayoutSeconds > 0)
    S += llvm::formatv("; plus {0} transposing input and output to the "
                       "tensor-core layout and back",
                       hw::formatQuantity(T.LayoutSeconds, Quantity::Time))
             .str();
  if (T.ChannelPadding > 1)
    S += llvm::formatv("; FLOPs of channels padded to whole blocks (x{0})",
                       fmt(T.ChannelPadding))
             .str();
  if (T.GenericConv)
    S += llvm::formatv("; generic convolution (channels off the runtime's "
                       "blocks): GEMM efficiency at one group's product{0}",
                       T.Im2colSeconds > 0
                           ? llvm::formatv(", plus {0} for the im2col copy",
                                           hw::formatQuantity(T.Im2colSeconds,
                                                              Quantity::Time))
                                 .str()
                           : std::string())
             .str();
  if (T.Fallback)
    S += llvm::formatv("; fallback: no unit computes {0}",
                       ir::name(T.RequestedType))
             .str();
  else if (T.ComputeType != T.RequestedType &&
           T.RequestedType != ir::DType::TF32)
    S += llvm::formatv(
             !isMatrixClass(T.Class)
                 ? "; {0} loaded and stored, computed in {1} on the {2} units, "
                   "which have no {0} (matrix units run products only)"
             : ir::isFloat8(T.RequestedType) &&
                     llvm::StringRef(T.Unit) == "vector"
                 ? "; {0} converted on load and computed in {1} on the vector "
                   "units, which have no {0} and beat tensor-core tiles that "
                   "would be mostly padding"
                 : "; {0} asked, run in {1}: the device computes no {0}",
             ir::name(T.RequestedType), ir::name(T.ComputeType), T.Unit)
             .str();
  return S + ")";
}
