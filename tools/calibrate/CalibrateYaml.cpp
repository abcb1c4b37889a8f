//===- CalibrateYaml.cpp - The calibrated device as hwdb YAML -------------===//
#include "tools/calibrate/Calibrate.h"

#include "tools/calibrate/CalibrateDetail.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

using namespace perfc::calibrate;
using namespace perfc::calibrate::detail;

namespace {

/// About four significant digits, never in exponent notation (the hwdb
/// unit parser reads plain decimals).
std::string num(double V) {
  double A = std::fabs(V);
  int Decimals = A >= 1000 ? 0 : A >= 100 ? 1 : A >= 10 ? 2 : A >= 1 ? 3 : 4;
  if (A > 0 && A < 0.001)
    Decimals = 8;
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%.*f", Decimals, V);
  std::string S = Buf;
  if (S.find('.') != std::string::npos) {
    while (S.back() == '0')
      S.pop_back();
    if (S.back() == '.')
      S.pop_back();
  }
  return S;
}

std::string flops(double V) { return num(V / 1e9) + " GFLOPS"; }
std::string work(double V) {
  if (V >= 1e12)
    return num(V / 1e12) + " TFLOP";
  if (V >= 1e9)
    return num(V / 1e9) + " GFLOP";
  if (V >= 1e6)
    return num(V / 1e6) + " MFLOP";
  return num(V) + " FLOP";
}
std::string bandwidth(double V) { return num(V / 1e9) + " GB/s"; }
std::string capacity(double V) {
  if (V >= 1024 * MiB)
    return num(V / (1024 * MiB)) + " GiB";
  if (V >= MiB)
    return num(V / MiB) + " MiB";
  if (V >= KiB)
    return num(V / KiB) + " KiB";
  return num(V) + " B";
}
std::string eff(double E) { return num(clampEff(E)); }

/// The depthwise KxK shapes' times per output element, "0.1 / 0.12 ns".
std::string perOutputList(const Measurements &M, int K) {
  const std::string Prefix =
      "depthwise " + std::to_string(K) + "x" + std::to_string(K) + "/";
  std::string S;
  for (size_t I = 0; I < M.DepthwiseConv.size(); ++I) {
    if (M.DepthwiseConv[I].What.rfind(Prefix, 0) != 0 ||
        I >= M.DepthwisePerOutput.size())
      continue;
    S += (S.empty() ? "" : " / ") + num(M.DepthwisePerOutput[I] * 1e9);
  }
  return S.empty() ? "none measured" : S + " ns";
}
std::string seconds(double S) {
  if (S >= 1e-3)
    return num(S * 1e3) + " ms";
  if (S >= 1e-6)
    return num(S * 1e6) + " us";
  return num(std::max(S, 1e-9) * 1e9) + " ns";
}

std::string quoted(llvm::StringRef S) {
  std::string Out = "\"";
  for (char C : S) {
    if (C == '"' || C == '\\')
      Out += '\\';
    if (static_cast<unsigned char>(C) < 0x20)
      C = ' ';
    Out += C;
  }
  return Out + "\"";
}

/// A curve of points with strictly ascending sizes (equal sizes merged);
/// a constant where fewer than two remain.
std::string curve(Curve C, std::string (*Size)(double)) {
  llvm::sort(C);
  Curve Merged;
  for (auto &[S, E] : C) {
    if (!Merged.empty() && S <= Merged.back().first * 1.01)
      Merged.back().second = std::min(Merged.back().second, E);
    else
      Merged.push_back({S, E});
  }
  if (Merged.empty())
    return "1";
  if (Merged.size() == 1)
    return eff(Merged[0].second);
  std::string Out = "[";
  for (size_t I = 0; I < Merged.size(); ++I) {
    if (I)
      Out += ", ";
    Out += "[" + Size(Merged[I].first) + ", " + eff(Merged[I].second) + "]";
  }
  return Out + "]";
}

std::string deviceName(const Measurements &M, const CalibrateOptions &O) {
  if (!O.Name.empty())
    return O.Name;
  std::string N = "calibrated-";
  for (char C : M.Host)
    N += (llvm::isAlnum(C) || C == '-' || C == '_' || C == '.' || C == '+')
             ? C
             : '-';
  return N;
}

} // namespace

std::string perfc::calibrate::toYaml(const Measurements &M,
                                     const CalibrateOptions &O) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  std::string Src = "measured by perfc calibrate on " + M.Host + ", " + M.Date +
                    " (" + M.CpuModel + ", " + std::to_string(M.Threads) +
                    " threads, OpenBLAS " + M.BlasCore + " kernels" +
                    (O.Quick ? ", quick" : "") + ")";
  OS << "# " << Src << ".\n"
     << "# Regenerate: perfc calibrate --out FILE.yaml --threads " << M.Threads
     << (O.Quick ? " --quick" : "") << " (took " << fx(M.WallSeconds, 1)
     << " s).\n"
     << "# Peaks are FMA loops on every thread and bandwidths STREAM-like\n"
     << "# copy and triad, the best of several runs; efficiencies are kernel\n"
     << "# rates (10th percentile of call times; convolutions: the best call)\n"
     << "# over them (memory rates on a cache-sized set: over that cache's\n"
     << "# bandwidth, add's best there), clamped to (0, 1]. [1] is this run.\n"
     << "#\n";
  for (const std::string &N : M.Notes)
    OS << "# Note: " << N << ".\n";
  OS << "# Load average before measuring: " << fx(M.LoadAverage, 2) << ".\n"
     << "#\n# Raw figures:\n"
     << "#   fp32 FMA peak " << flops(M.PeakF32) << " on " << M.Threads
     << " threads, " << flops(M.PeakF32OneThread) << " on one; fp64 "
     << flops(M.PeakF64) << "\n"
     << "#   memory: copy " << bandwidth(M.CopyBandwidth) << ", triad "
     << bandwidth(M.TriadBandwidth) << " over " << capacity(M.StreamArrayBytes)
     << " arrays\n";
  for (const KernelRate &R : M.Memory)
    OS << "#   " << R.What << " over " << capacity(R.Work) << ": "
       << bandwidth(R.Rate) << "\n";
  for (const KernelRate &R : M.Vector)
    OS << "#   " << R.What << " in cache: " << flops(R.Rate) << "\n";
  for (const auto *List : {&M.Gemm, &M.GemmShapes, &M.Conv, &M.DepthwiseConv})
    for (const KernelRate &R : *List)
      OS << "#   " << R.What << ": " << flops(R.Rate) << " in "
         << seconds(R.Seconds) << " (" << num(R.Efficiency) << ")\n";
  OS << "#   " << M.Gemv.What << ": " << bandwidth(M.Gemv.Rate) << "\n"
     << "#   fork/join over " << M.Threads << " threads "
     << seconds(M.ForkJoinSeconds) << ", with a tiny kernel "
     << seconds(M.DispatchSeconds) << "; a 16x16x16 SGEMM call "
     << seconds(M.SmallGemmSeconds) << "\n"
     << "#   transpose one element at a time ([1, 64, 8, 7, 8, 7] by (0, 2, "
        "4, 3, 5, 1), one thread): "
     << seconds(M.StridedCopySecondsPerElement) << " per element\n"
     << "#   OpenBLAS: " << M.BlasConfig << " (" << M.BlasPath << ")\n";

  OS << "device:\n"
     << "  name: " << deviceName(M, O) << "\n"
     << "  kind: cpu\n";
  if (!M.Vendor.empty())
    OS << "  vendor: " << quoted(M.Vendor) << "\n";
  OS << "  description: "
     << quoted(std::to_string(M.Threads) + " threads of " + M.CpuModel + " (" +
               std::to_string(M.LogicalCpus) + " CPUs), " + Src)
     << "\n"
     << "  cores: " << M.Threads << "             # threads measured [1]\n";
  if (M.ClockHz > 0)
    OS << "  clock: " << num(M.ClockHz / 1e9)
       << " GHz       # dependent integer adds [1]\n";
  OS << "  simd_width: " << M.SimdWidthBits << " bits  # CPUID: " << M.Isa
     << " [1]\n";
  if (M.FmaUnits)
    OS << "  fma_units: " << M.FmaUnits
       << "          # FMA peak per thread / (clock x lanes x 2) [1]\n";
  OS << "  compute:\n"
     << "    simd:\n"
     << "      fp32: " << flops(M.PeakF32) << "  # FMA loop [1]\n"
     << "      fp64: " << flops(M.PeakF64) << "\n"
     << "  memory:\n"
     << "    - {name: DRAM, capacity: " << capacity(M.MemoryBytes)
     << ", bandwidth: " << bandwidth(M.MainBandwidth) << "}  # best of copy "
     << "and triad [1]\n";
  if (M.L3Bytes > 0) {
    OS << "    - {name: L3, capacity: " << capacity(M.L3Bytes);
    if (M.L3Bandwidth > 0)
      OS << ", bandwidth: " << bandwidth(M.L3Bandwidth);
    OS << "}\n";
  }
  if (M.L2BytesPerCore > 0) {
    OS << "    - {name: L2, capacity: "
       << capacity(M.L2BytesPerCore * M.Threads);
    if (M.L2Bandwidth > 0)
      OS << ", bandwidth: " << bandwidth(M.L2Bandwidth);
    OS << "}  # " << capacity(M.L2BytesPerCore) << " per core\n";
  }
  if (M.OrtNchwcBlock > 0)
    OS << "  # ONNX Runtime's NCHWc kernels block channels by the vector "
          "width;\n"
       << "  # channel counts that are multiples of 4 are padded to whole "
          "blocks\n"
       << "  # (ORT 1.30-1.31, tools/bench/ort_nchwc_rule.py), others run "
          "im2col + SGEMM\n"
       << "  conv_channel_block: " << M.OrtNchwcBlock << "\n"
       << "  conv_channel_align: 4\n";
  else
    OS << "  # No conv_channel_block: ONNX Runtime's released builds have no "
          "NCHWc\n"
       << "  # kernels on this architecture (MLAS: x86-64 only, ARM64 with\n"
       << "  # onnxruntime_USE_ARM_NEON_NCHWC=ON); convolutions keep their "
          "channels\n";
  OS << "  # ONNX Runtime 1.31 applies these activations inside its "
        "convolutions\n"
     << "  # (MLAS_ACTIVATION_KIND, and HardSwish, also written out as\n"
     << "  # x * HardSigmoid(x)); others, SiLU among them, run as kernels "
        "of their own\n"
     << "  conv_activations: [Relu, LeakyRelu, Tanh, Sigmoid, Clip, "
        "HardSigmoid, HardSwish]\n";
  OS << "  launch_overhead: " << seconds(M.DispatchSeconds)
     << "  # fork/join over the threads with a tiny kernel [1]\n"
     << "  efficiency:\n"
     << "    default: {compute: " << eff(M.ElementwiseCompute)
     << ", memory: " << curve(M.ElementwiseMemory, capacity) << "}\n"
     << "    # OpenBLAS SGEMM: squares to 1024^3, then transformer shapes at "
        "seq 128\n"
     << "    # (projections, MLP, LM head); beyond the last point its "
        "efficiency holds\n"
     << "    # (re-calibrate for larger batches); memory: SGEMV beyond the "
        "caches\n"
     << "    gemm:\n"
     << "      compute: " << curve(M.GemmCompute, work) << "\n"
     << "      memory: " << eff(M.GemmMemory) << "\n"
     << "    # direct NCHWc convolution (" << M.ConvKernel
     << "), ResNet/VGG/MobileNet\n"
     << "    # shapes by FLOPs; all together " << num(M.ConvCompute) << "\n"
     << "    conv:\n"
     << "      compute: " << curve(M.ConvComputeCurve, work) << "\n"
     << "      memory: " << eff(M.GemmMemory) << "\n"
     << "    # the same kernels' depthwise form, MLAS's structure (the\n"
     << "    # interior of a row several output vectors at a time, edge "
        "outputs one\n"
     << "    # at a time with taps checked against the padding) on MobileNet "
        "3x3,\n"
     << "    # EfficientNet 5x5, ConvNeXt 7x7 shapes; time = max(FLOPs /\n"
     << "    # (peak x compute), outputs x time_per_output): time_per_output "
        "is\n"
     << "    # the 3x3 shapes' median time per output element ("
     << perOutputList(M, 3) << "),\n"
     << "    # compute the 7x7 shapes' rate over the peak (per output: "
     << perOutputList(M, 7) << ")\n"
     << "    depthwise_conv:\n"
     << "      compute: " << eff(M.DepthwiseFlopCompute) << "\n"
     << "      memory: " << eff(M.GemmMemory) << "\n"
     << "      time_per_output: " << num(M.DepthwiseSecondsPerOutput * 1e9)
     << " ns\n"
     << "    # a small GEMM per step: the 128^3 SGEMM\n"
     << "    recurrent: {compute: " << eff(M.RecurrentCompute)
     << ", memory: " << eff(M.GemmMemory) << "}\n"
     << "    # exp in cache (4 FLOP/element); add c = a + b by size\n"
     << "    elementwise:\n"
     << "      compute: " << eff(M.ElementwiseCompute) << "\n"
     << "      memory: " << curve(M.ElementwiseMemory, capacity) << "\n"
     << "    # sum in cache (1 FLOP/element); by size\n"
     << "    reduction:\n"
     << "      compute: " << eff(M.ReductionCompute) << "\n"
     << "      memory: " << curve(M.ReductionMemory, capacity) << "\n"
     << "    # layer normalization over 768 (8 FLOP/element); by size\n"
     << "    normalization:\n"
     << "      compute: " << eff(M.NormalizationCompute) << "\n"
     << "      memory: " << curve(M.NormalizationMemory, capacity) << "\n"
     << "    # NCHW -> NHWC transpose of 64 channels, by size; transposes "
        "that\n"
     << "    # move the innermost axis and more, one element at a time\n"
     << "    data_movement:\n"
     << "      compute: " << eff(M.ElementwiseCompute) << "\n"
     << "      memory: " << curve(M.DataMovementMemory, capacity) << "\n";
  if (M.StridedCopySecondsPerElement > 0)
    OS << "      time_per_strided_element: "
       << num(M.StridedCopySecondsPerElement * 1e9) << " ns\n";
  OS << "  sources:\n"
     << "    - document: " << quoted(Src) << "\n"
     << "      gives: " << quoted("[1] every figure in this file") << "\n";
  return OS.str();
}
