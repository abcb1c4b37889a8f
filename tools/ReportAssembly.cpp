//===- ReportAssembly.cpp - Pieces of a report the CLI and API share ------===//
#include "tools/ReportAssembly.h"
#include "passes/Fp8Recipe.h"

#include "passes/Placement.h"

#include "llvm/Support/FormatVariadic.h"

namespace perfc {

llvm::Error checkRunnable(const Report &R, const hw::Device &D,
                          llvm::StringRef Path, llvm::StringRef Choice) {
  for (const NodeReport &N : R.Nodes)
    if (N.Time && N.Time->Unsupported)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          Path + ": node '" + N.Name + "' (" + N.Op + "): device '" + D.Name +
              "' does not run " + N.Time->ComputeType + " " +
              name(N.Work.Class) + " ops; choose another device or " + Choice);
  return llvm::Error::success();
}

llvm::Optional<ir::DType> applyTrainingForward(PredictOptions &PO,
                                               const TrainOptions &Train,
                                               bool ComputeGiven,
                                               bool StorageGiven) {
  PO.Training = true;
  PO.Fusion.Fuse = !Train.Unfused;
  PO.Fusion.FlashAttention = Train.FlashAttention;
  const ir::DType T = Train.DType;
  // FP8 trains as Transformer Engine does: BF16 tensors, FP8 GEMMs.
  const ir::DType Stored = trainingStorageType(T);
  if (!StorageGiven && ir::isFloatingPoint(Stored) && ir::byteSize(Stored) < 4)
    PO.StorageType = Stored;
  if (ComputeGiven || T == ir::DType::F32)
    return llvm::None;
  PO.Fp8Recipe = isFp8Recipe(T);
  PO.Time.ComputeType = Stored;
  return T;
}

HardwareInfo describeHardware(llvm::StringRef Name, const hw::Device &D,
                              llvm::StringRef Cluster,
                              llvm::StringRef ComputeTypeShown,
                              llvm::Optional<double> LaunchOverheadSeconds,
                              const PredictOptions &PO) {
  HardwareInfo H;
  H.Name = Name.str();
  H.Device = D.Name;
  H.Source = Cluster.str();
  H.ComputeType = ComputeTypeShown.str();
  H.LaunchOverheadSeconds = LaunchOverheadSeconds;
  if (PO.StorageType)
    H.StorageType = ir::name(*PO.StorageType).str();
  if (PO.Time.Layout != hw::ConvLayout::Native)
    H.ConvLayout = hw::name(PO.Time.Layout);
  H.FlashAttention = !PO.Training && PO.Fusion.FlashAttention;
  return H;
}

llvm::Error placeKernels(Report &R, const ir::Graph &G, const hw::Cluster &C,
                         const PredictOptions &PO, double TimeLimitSeconds) {
  PlacementOptions O;
  O.Time = PO.Time;
  O.StorageType = PO.StorageType;
  O.Fusion = PO.Fusion;
  if (TimeLimitSeconds > 0)
    O.TimeLimitSeconds = TimeLimitSeconds;
  auto P = placeGraph(G, C, O);
  if (!P)
    return P.takeError();
  applyPlacement(*P, R, PO.Explain);
  return llvm::Error::success();
}

void addStepWarnings(Report &R) {
  // --compute-type or --storage-type other than the training precision
  // reprice the per-node forward only: say so, rather than leave two
  // precisions side by side unexplained.
  if (R.Train && R.Strategy && R.Hardware) {
    const ir::DType T = R.Strategy->DType;
    const bool Mixed = ir::byteSize(T) < 4;
    const std::string Train = ir::name(T).str();
    const std::string &Compute = R.Hardware->ComputeType;
    const std::string &Storage = R.Hardware->StorageType;
    const bool OtherCompute = !Compute.empty() && Compute != Train;
    const bool OtherStorage =
        !Storage.empty() &&
        (!Mixed || Storage != ir::name(trainingStorageType(T)).str());
    if (OtherCompute || OtherStorage)
      R.Warnings.push_back(
          {"", llvm::formatv("the per-node forward is priced with {0}{1}{2}; "
                             "the step trains in {3} (--dtype)",
                             OtherCompute ? "compute " + Compute : "",
                             OtherCompute && OtherStorage ? " and " : "",
                             OtherStorage ? "storage " + Storage : "", Train)
                   .str()});
  }
  if (R.Train && R.Train->InputBound)
    R.Warnings.push_back(
        {"",
         llvm::formatv("input-bound: the devices wait {0:F1} ms ({1:F0}% "
                       "of the step) for the host input pipeline; its "
                       "rate, not the GPUs, sets the throughput",
                       R.Train->InputWaitSeconds * 1e3,
                       100 * R.Train->InputWaitSeconds / R.Train->StepSeconds)
             .str()});
  if (!R.Train || R.Train->Fits)
    return;
  R.Warnings.push_back(
      {"",
       llvm::formatv("does not fit: {0:F1} GiB per device on stage "
                     "{1}, {2:F1} GiB available",
                     R.Train->peak().peakBytes() / (1u << 30),
                     R.Train->peak().Stage, R.Train->CapacityBytes / (1u << 30))
           .str()});
}

} // namespace perfc
