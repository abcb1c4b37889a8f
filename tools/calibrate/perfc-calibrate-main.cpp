//===- perfc-calibrate-main.cpp - Calibration on its own ------------------===//
//
//   perfc-calibrate --out FILE.yaml [--threads N] [--quick] [--name NAME]
//                   [--blas-core NAME|env] [--silent]
//
// Measures this machine (tools/calibrate/Calibrate.h) and writes the device
// description to FILE.yaml (stdout without --out); progress on stderr.
// `perfc calibrate` is the same through the main tool.
//
//===----------------------------------------------------------------------===//
#include "tools/calibrate/Calibrate.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

int main(int Argc, char **Argv) {
  llvm::InitLLVM X(Argc, Argv);
  cl::OptionCategory Cat("perfc-calibrate options");
  cl::opt<std::string> Out("out", cl::desc("Write the description to FILE"),
                           cl::value_desc("FILE"), cl::init("-"), cl::cat(Cat));
  cl::opt<unsigned> Threads("threads",
                            cl::desc("Threads to measure with (default 2)"),
                            cl::init(2), cl::cat(Cat));
  cl::opt<bool> Quick("quick", cl::desc("A few seconds, rough figures"),
                      cl::cat(Cat));
  cl::opt<unsigned> Rounds(
      "rounds", cl::desc("Time every kernel in N rounds (default 2)"),
      cl::init(0), cl::cat(Cat));
  cl::opt<std::string> Name("name",
                            cl::desc("Device name (default calibrated-<host>)"),
                            cl::cat(Cat));
  cl::opt<std::string> BlasCore(
      "blas-core",
      cl::desc("OPENBLAS_CORETYPE to measure with ('env': the environment's; "
               "default: the CPU's widest kernels)"),
      cl::cat(Cat));
  cl::opt<bool> Silent("silent", cl::desc("No progress on stderr"),
                       cl::cat(Cat));
  cl::HideUnrelatedOptions(Cat);
  cl::ParseCommandLineOptions(
      Argc, Argv, "perfc-calibrate: measure this machine as a perfc device\n");

  perfc::calibrate::CalibrateOptions O;
  O.Threads = Threads;
  O.Quick = Quick;
  O.Rounds = Rounds;
  O.Name = Name;
  O.BlasCoreType = BlasCore;
  if (!Silent)
    O.Log = &llvm::errs();
  auto Yaml = perfc::calibrate::calibrate(O);
  if (!Yaml) {
    llvm::WithColor::error(llvm::errs(), "perfc-calibrate")
        << llvm::toString(Yaml.takeError()) << "\n";
    return 1;
  }
  std::error_code EC;
  llvm::ToolOutputFile F(Out, EC, llvm::sys::fs::OF_Text);
  if (EC) {
    llvm::WithColor::error(llvm::errs(), "perfc-calibrate")
        << Out << ": " << EC.message() << "\n";
    return 1;
  }
  F.os() << *Yaml;
  F.keep();
  return 0;
}
