//===- CalibrateTest.cpp - A quick calibration loads and makes sense ------===//
//
// Runs a quick calibration on two threads, writes the description to a
// temporary file, loads it with hw::loadHardware and checks that its
// figures are positive and finite. Exit status 0 on success.
//
//===----------------------------------------------------------------------===//
#include "tools/calibrate/Calibrate.h"
#include "hwdb/Loader.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <string>

using namespace perfc;

namespace {
int Failures = 0;

void check(bool Ok, const llvm::Twine &What) {
  if (!Ok) {
    llvm::errs() << "FAILED: " << What << "\n";
    ++Failures;
  }
}

bool positive(double V) { return std::isfinite(V) && V > 0; }

void checkCurve(const hw::EfficiencyCurve &C, const llvm::Twine &What) {
  for (double Size : {1e3, 1e6, 1e9, 1e12}) {
    double E = C.at(Size);
    check(positive(E) && E <= 1,
          What + " at " + std::to_string(Size) + " is " + std::to_string(E));
  }
}
} // namespace

int main() {
  calibrate::CalibrateOptions O;
  O.Threads = 2;
  O.Quick = true;
  calibrate::Measurements M;
  auto Yaml = calibrate::calibrate(O, &M);
  if (!Yaml) {
    llvm::errs() << "FAILED: calibrate: " << llvm::toString(Yaml.takeError())
                 << "\n";
    return 1;
  }
  llvm::SmallString<128> Path;
  if (std::error_code EC =
          llvm::sys::fs::createTemporaryFile("calibrated", "yaml", Path)) {
    llvm::errs() << "FAILED: temporary file: " << EC.message() << "\n";
    return 1;
  }
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    OS << *Yaml;
  }
  auto C = hw::loadHardware(Path);
  llvm::sys::fs::remove(Path);
  if (!C) {
    llvm::errs() << "FAILED: loadHardware: " << llvm::toString(C.takeError())
                 << "\n"
                 << *Yaml;
    return 1;
  }
  const hw::Device &D = C->primaryDevice();
  check(D.Kind == hw::DeviceKind::Cpu, "kind is cpu");
  check(D.Cores == 2, "cores is the thread count");
  const hw::ComputeUnit *U = D.unit(hw::UnitKind::Simd);
  check(U && U->peak(ir::DType::F32) && positive(*U->peak(ir::DType::F32)),
        "fp32 simd peak");
  check(U && U->peak(ir::DType::F64) && positive(*U->peak(ir::DType::F64)),
        "fp64 simd peak");
  check(positive(D.mainMemory().BandwidthBytesPerSecond), "DRAM bandwidth");
  check(positive(D.mainMemory().CapacityBytes), "DRAM capacity");
  check(positive(D.LaunchOverheadSeconds) && D.LaunchOverheadSeconds < 1e-3,
        "launch overhead " + std::to_string(D.LaunchOverheadSeconds));
  for (size_t I = 0; I < hw::NumOpClasses; ++I) {
    auto Class = static_cast<OpClass>(I);
    checkCurve(D.efficiency(Class).Compute,
               hw::opClassKey(Class) + " compute efficiency");
    checkCurve(D.efficiency(Class).Memory,
               hw::opClassKey(Class) + " memory efficiency");
  }
  check(D.DepthwiseConv.hasValue(), "depthwise_conv efficiency");
  // One element at a time costs a nanosecond or a few, not 1000.
  check(positive(D.StridedCopySecondsPerElement) &&
            D.StridedCopySecondsPerElement < 1e-6,
        "time_per_strided_element " +
            std::to_string(D.StridedCopySecondsPerElement));
  if (D.DepthwiseConv)
    checkCurve(D.DepthwiseConv->Compute, "depthwise_conv compute efficiency");
    // The runtime's convolution paths: MLAS's NCHWc channel block (16 with
    // AVX-512F, else 8) on x86-64, none elsewhere; MLAS's activations.
#if defined(__x86_64__)
  check(D.ConvChannelBlock == 8 || D.ConvChannelBlock == 16,
        "conv_channel_block " + std::to_string(D.ConvChannelBlock));
  check(D.ConvChannelAlign > 0 && D.ConvChannelAlign <= D.ConvChannelBlock,
        "conv_channel_align " + std::to_string(D.ConvChannelAlign));
#else
  check(D.ConvChannelBlock == 0, "no conv_channel_block off x86-64, got " +
                                     std::to_string(D.ConvChannelBlock));
#endif
  check(llvm::is_contained(D.ConvActivations, "Relu"),
        "conv_activations include Relu");
  check(!D.efficiency(OpClass::Gemm).Compute.isConstant(),
        "gemm compute efficiency is a curve over size");
  check(!D.Sources.empty() &&
            llvm::StringRef(D.Sources[0].Document)
                .startswith("measured by perfc calibrate on "),
        "source cites the calibration");
  for (double V : {M.PeakF32, M.PeakF64, M.CopyBandwidth, M.TriadBandwidth,
                   M.DispatchSeconds, M.ForkJoinSeconds, M.SmallGemmSeconds,
                   M.ConvCompute, M.DepthwiseConvCompute, M.GemmMemory})
    check(positive(V), "measured figure " + std::to_string(V));
  for (const auto *List : {&M.Gemm, &M.GemmShapes, &M.Conv, &M.DepthwiseConv,
                           &M.Memory, &M.Vector})
    for (const calibrate::KernelRate &R : *List)
      check(positive(R.Work) && positive(R.Seconds) && positive(R.Rate) &&
                positive(R.Efficiency) && R.Efficiency <= 1,
            R.What + " rate " + std::to_string(R.Rate));
  check(M.WallSeconds < 30,
        "quick calibration took " + std::to_string(M.WallSeconds) + " s");
  if (Failures) {
    llvm::errs() << *Yaml;
    return 1;
  }
  llvm::outs() << "calibrate: quick description loads; fp32 peak "
               << llvm::format("%.1f", M.PeakF32 / 1e9) << " GFLOPS, "
               << llvm::format("%.1f", M.MainBandwidth / 1e9) << " GB/s, "
               << llvm::format("%.2f", M.DispatchSeconds * 1e6)
               << " us dispatch, " << llvm::format("%.1f", M.WallSeconds)
               << " s\n";
  return 0;
}
