//===- Print.cpp - Human-readable hardware descriptions -------------------===//
#include "hwdb/Print.h"

#include "hwdb/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdio>

using namespace perfc;
using namespace perfc::hw;

namespace {

/// Up to four significant digits, no trailing zeros: 0.8, 0.77, 1.
std::string num(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.4g", V);
  return Buf;
}

llvm::StringRef typeName(ir::DType T) {
  return T == ir::DType::F8E4M3 ? "fp8" : ir::name(T);
}

std::string peakText(ir::DType T, double Peak) {
  return formatQuantity(Peak, Quantity::Throughput, ir::isInteger(T));
}

/// "fp8" for the pair of fp8 types at one rate, else the type's name.
llvm::SmallVector<std::pair<std::string, std::string>, 8>
peakList(const ComputeUnit &U) {
  llvm::SmallVector<std::pair<std::string, std::string>, 8> Out;
  for (const auto &[T, Peak] : U.Peaks) {
    if (T == ir::DType::F8E5M2 && U.peak(ir::DType::F8E4M3) == Peak)
      continue;
    std::string Name = ir::name(T).str();
    if (T == ir::DType::F8E4M3 && U.peak(ir::DType::F8E5M2) == Peak)
      Name = "fp8";
    Out.emplace_back(std::move(Name), peakText(T, Peak));
  }
  return Out;
}

std::string curveText(const EfficiencyCurve &C, Quantity SizeQ) {
  if (C.isConstant())
    return num(C.Constant);
  std::string S = "[";
  for (const auto &[Size, Eff] : C.Points) {
    if (S.size() > 1)
      S += ", ";
    S += formatQuantity(Size, SizeQ) + ": " + num(Eff);
  }
  return S + "]";
}

void printSources(const std::vector<Source> &Sources, llvm::raw_ostream &OS,
                  llvm::StringRef Indent) {
  if (Sources.empty())
    return;
  // The `gives` texts carry the [n] markers the YAML comments refer to.
  OS << Indent << "sources:\n";
  for (const Source &S : Sources)
    OS << Indent << "  - " << (S.Url.empty() ? S.Document : S.Url) << "\n"
       << Indent << "    " << S.Gives << "\n";
}

std::string linkFigures(const Link &L) {
  return llvm::formatv(
             "{0}, {1} per direction, latency {2}, efficiency {3}",
             name(L.Kind),
             formatQuantity(L.BandwidthBytesPerSecond, Quantity::Bandwidth),
             formatQuantity(L.LatencySeconds, Quantity::Time),
             num(L.Efficiency))
             .str() +
         (L.SwitchReduction ? ", in-switch reduction (NVLS)" : "");
}

std::string nodeContents(const NodeGroup &G) {
  std::string S;
  for (const NodeDevice &ND : G.Devices) {
    if (!S.empty())
      S += " + ";
    if (ND.Count > 1)
      S += llvm::formatv("{0} x ", ND.Count).str();
    S += ND.Dev->Name;
  }
  return S;
}

} // namespace

namespace perfc::hw::detail {
std::string summaryLine(const Device &D, const ComputeUnit *Unit,
                        ir::DType Type, double Peak);
} // namespace perfc::hw::detail
using perfc::hw::detail::summaryLine;

std::string perfc::hw::summarize(const Device &D) {
  // The headline is the best fp16/bf16 peak where there is one (the figure
  // devices are usually compared by), else the largest floating-point peak,
  // else the largest integer one.
  {
    const ComputeUnit *LeadUnit = nullptr;
    ir::DType LeadType = ir::DType::F16;
    double LeadPeak = 0;
    for (const ComputeUnit &U : D.Units)
      for (ir::DType T : {ir::DType::F16, ir::DType::BF16})
        if (auto P = U.peak(T); P && *P > LeadPeak) {
          LeadPeak = *P;
          LeadType = T;
          LeadUnit = &U;
        }
    if (LeadUnit)
      return summaryLine(D, LeadUnit, LeadType, LeadPeak);
  }
  const ComputeUnit *BestUnit = nullptr;
  ir::DType BestType = ir::DType::F32;
  double Best = 0;
  bool BestIsInt = true;
  for (const ComputeUnit &U : D.Units)
    for (const auto &[T, Peak] : U.Peaks) {
      const bool IsInt = ir::isInteger(T);
      if ((BestIsInt && !IsInt) || (IsInt == BestIsInt && Peak > Best)) {
        Best = Peak;
        BestType = T;
        BestUnit = &U;
        BestIsInt = IsInt;
      }
    }
  return summaryLine(D, BestUnit, BestType, Best);
}

std::string perfc::hw::detail::summaryLine(const Device &D,
                                           const ComputeUnit *Unit,
                                           ir::DType Type, double Peak) {
  std::string S = name(D.Kind).str();
  if (!D.Vendor.empty())
    S += " " + D.Vendor;
  if (Unit)
    S += llvm::formatv("; {0} {1} {2}", name(Unit->Kind), typeName(Type),
                       peakText(Type, Peak))
             .str();
  const MemoryLevel &M = D.mainMemory();
  S += llvm::formatv(
           "; {0} {1} at {2}", M.Name,
           formatQuantity(M.CapacityBytes, Quantity::Capacity),
           formatQuantity(M.BandwidthBytesPerSecond, Quantity::Bandwidth))
           .str();
  return S;
}

std::string perfc::hw::summarize(const Link &L) { return linkFigures(L); }

std::string perfc::hw::summarize(const Cluster &C) {
  std::string S;
  for (const NodeGroup &G : C.Groups) {
    if (!S.empty())
      S += "; ";
    S += llvm::formatv("{0} node{1} x ({2})", G.Count, G.Count > 1 ? "s" : "",
                       nodeContents(G))
             .str();
    if (G.IntraNode)
      S += ", " + G.IntraNode->Name;
    if (G.InterNode)
      S += llvm::formatv(", {0} x {1}", G.NicsPerNode, G.InterNode->Name).str();
  }
  return S + llvm::formatv("; {0} devices", C.numDevices()).str();
}

void perfc::hw::printDevice(const Device &D, llvm::raw_ostream &OS) {
  OS << D.Name;
  if (!D.Description.empty())
    OS << ": " << D.Description;
  OS << "\n  kind: " << name(D.Kind);
  if (!D.Vendor.empty())
    OS << ", " << D.Vendor;
  if (D.Cores) {
    // What the vendor calls its cores: NVIDIA SMs, AMD compute units.
    const llvm::StringRef Vendor(D.Vendor);
    const char *Unit = D.Kind != DeviceKind::Gpu     ? " cores"
                       : Vendor.startswith("NVIDIA") ? " SMs"
                       : Vendor.startswith("AMD")    ? " CUs"
                                                     : " cores";
    OS << ", " << D.Cores << Unit;
  }
  if (D.ClockHz > 0)
    OS << " at " << formatQuantity(D.ClockHz, Quantity::Frequency);
  if (D.SimdWidthBits)
    OS << ", " << D.SimdWidthBits << "-bit SIMD";
  if (D.GemmTileM)
    OS << ", GEMM tile " << D.GemmTileM << "x" << D.GemmTileN;
  if (D.FmaUnits)
    OS << ", " << D.FmaUnits << " FMA units per core";
  OS << "\n  compute (peak):\n";
  for (const ComputeUnit &U : D.Units) {
    OS << llvm::formatv("    {0,-8}", name(U.Kind));
    bool First = true;
    for (const auto &[TypeName, Peak] : peakList(U)) {
      OS << (First ? " " : ", ") << TypeName << " " << Peak;
      First = false;
    }
    OS << "\n";
  }
  OS << "  memory:\n";
  for (const MemoryLevel &M : D.Memory) {
    OS << llvm::formatv("    {0,-8} {1}", M.Name,
                        formatQuantity(M.CapacityBytes, Quantity::Capacity));
    if (M.BandwidthBytesPerSecond > 0)
      OS << " at "
         << formatQuantity(M.BandwidthBytesPerSecond, Quantity::Bandwidth);
    OS << "\n";
  }
  OS << "  launch overhead: "
     << formatQuantity(D.LaunchOverheadSeconds, Quantity::Time) << "\n";
  OS << "  efficiency (fraction of peak compute / of the bandwidth of the "
        "memory level an op's bytes fit, else main memory):\n";
  for (size_t I = 0; I < NumOpClasses; ++I) {
    const ClassEfficiency &E = D.Efficiencies[I];
    OS << llvm::formatv("    {0,-15} {1} / {2}{3}\n",
                        opClassKey(static_cast<OpClass>(I)),
                        curveText(E.Compute, Quantity::Work),
                        curveText(E.Memory, Quantity::Capacity),
                        E.Explicit ? "" : "  (default)");
    if (E.VectorCompute)
      OS << llvm::formatv("    {0,-15} {1} on the vector units\n", "",
                          curveText(*E.VectorCompute, Quantity::Work));
  }
  if (D.DepthwiseConv) {
    OS << llvm::formatv("    {0,-15} {1} / {2}", "depthwise_conv",
                        curveText(D.DepthwiseConv->Compute, Quantity::Work),
                        curveText(D.DepthwiseConv->Memory, Quantity::Capacity));
    if (D.DepthwiseSecondsPerOutput > 0)
      OS << " / " << formatQuantity(D.DepthwiseSecondsPerOutput, Quantity::Time)
         << " per output";
    OS << "\n";
  }
  if (D.FusedAttention)
    OS << llvm::formatv(
        "    {0,-15} {1} / {2}\n", "fused_attention",
        curveText(D.FusedAttention->Compute, Quantity::Work),
        curveText(D.FusedAttention->Memory, Quantity::Capacity));
  if (D.WinogradTile > 0)
    OS << llvm::formatv("  conv: 3x3 stride-1 on vector units as Winograd "
                        "F({0}x{0},3x3)\n",
                        D.WinogradTile);
  if (D.ConvChannelBlock > 0)
    OS << llvm::formatv("  conv: direct kernels in {0}-channel blocks (counts "
                        "that are multiples of {1} padded); other channel "
                        "counts as im2col + GEMM per group\n",
                        D.ConvChannelBlock,
                        D.ConvChannelAlign ? D.ConvChannelAlign
                                           : D.ConvChannelBlock);
  if (!D.ConvActivations.empty()) {
    OS << "  conv: kernels apply";
    for (size_t I = 0; I < D.ConvActivations.size(); ++I)
      OS << (I ? ", " : " ") << D.ConvActivations[I];
    OS << "; other elementwise ops after a convolution run on their own\n";
  }
  if (D.MatrixConvLayout != ConvLayout::Native)
    OS << "  conv: matrix-unit kernels want " << name(D.MatrixConvLayout)
       << "\n";
  if (!D.Supports.OpClasses.empty() || !D.Supports.DTypes.empty()) {
    OS << "  supports:";
    if (!D.Supports.OpClasses.empty()) {
      OS << " op classes";
      for (OpClass C : D.Supports.OpClasses)
        OS << " " << opClassKey(C);
      OS << ";";
    }
    if (!D.Supports.DTypes.empty()) {
      OS << " dtypes";
      for (ir::DType T : D.Supports.DTypes)
        OS << " " << ir::name(T);
    }
    OS << "\n";
  }
  printSources(D.Sources, OS, "  ");
}

void perfc::hw::printLink(const Link &L, llvm::raw_ostream &OS) {
  OS << L.Name;
  if (!L.Description.empty())
    OS << ": " << L.Description;
  OS << "\n  " << linkFigures(L) << "\n";
  printSources(L.Sources, OS, "  ");
}

void perfc::hw::printCluster(const Cluster &C, llvm::raw_ostream &OS) {
  // A device file loads as a one-device cluster named after the device:
  // show just the device.
  if (C.Groups.size() == 1 && C.numDevices() == 1 &&
      !C.Groups.front().IntraNode && !C.Groups.front().InterNode &&
      C.Name == C.primaryDevice().Name) {
    printDevice(C.primaryDevice(), OS);
    return;
  }
  OS << C.Name;
  if (!C.Description.empty())
    OS << ": " << C.Description;
  OS << llvm::formatv("\n  {0} node{1}, {2} device{3}\n", C.numNodes(),
                      C.numNodes() == 1 ? "" : "s", C.numDevices(),
                      C.numDevices() == 1 ? "" : "s");
  for (const NodeGroup &G : C.Groups) {
    OS << llvm::formatv("  {0}{1} node{2} x ({3})\n",
                        G.Name.empty() ? "" : G.Name + ": ", G.Count,
                        G.Count == 1 ? "" : "s", nodeContents(G));
    if (G.IntraNode)
      OS << "    intra-node: " << G.IntraNode->Name << " ("
         << linkFigures(*G.IntraNode) << ")\n";
    if (G.InterNode)
      OS << "    inter-node: " << G.NicsPerNode << " x " << G.InterNode->Name
         << " (" << linkFigures(*G.InterNode) << ")\n";
  }
  printSources(C.Sources, OS, "  ");
  llvm::SmallPtrSet<const Device *, 8> Printed;
  for (const NodeGroup &G : C.Groups)
    for (const NodeDevice &ND : G.Devices)
      if (Printed.insert(ND.Dev.get()).second) {
        OS << "\n";
        printDevice(*ND.Dev, OS);
      }
}
