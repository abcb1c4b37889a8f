//===- CalibrateCommand.cpp - perfc calibrate --out FILE.yaml -------------===//
//
// Measures the machine it runs on (tools/calibrate) and writes a device
// description usable with --hw.
//
//===----------------------------------------------------------------------===//
#include "tools/CliCommon.h"
#include "tools/Commands.h"
#include "tools/calibrate/Calibrate.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;
using namespace perfc;

int perfc::cli::runCalibrate(int Argc, const char *const *Argv) {
  cl::OptionCategory Category("perfc calibrate options");
  cl::opt<std::string> Out("out",
                           cl::desc("Write the description to FILE (default: "
                                    "stdout)"),
                           cl::value_desc("FILE.yaml"), cl::cat(Category));
  cl::opt<unsigned> Threads(
      "threads",
      cl::desc("Threads to measure with, as the runtime will use (default 2)"),
      cl::init(2), cl::value_desc("N"), cl::cat(Category));
  cl::opt<bool> Quick("quick",
                      cl::desc("A few seconds, rough figures (for tests)"),
                      cl::cat(Category));
  cl::opt<std::string> Name("name",
                            cl::desc("Device name (default calibrated-<host>)"),
                            cl::value_desc("NAME"), cl::cat(Category));
  constexpr unsigned MaxRounds = 50;
  cl::opt<unsigned> Rounds(
      "rounds",
      cl::desc("Time every kernel in N rounds, the fastest counting (default "
               "2, 1 with --quick; about 20 s a round)"),
      cl::init(0), cl::value_desc("N"), cl::cat(Category));
  cl::opt<std::string> BlasCore(
      "blas-core",
      cl::desc("OPENBLAS_CORETYPE to measure with ('env': the environment's; "
               "default: the CPU's widest kernels)"),
      cl::value_desc("NAME"), cl::cat(Category));
  cl::opt<bool> Silent("silent", cl::desc("No progress on stderr"),
                       cl::cat(Category));
  cl::HideUnrelatedOptions(Category);
  if (!parseOptions(Argc, Argv,
                    "perfc calibrate: measures this machine (GEMM and "
                    "convolution throughput by size, memory bandwidth, "
                    "per-op dispatch) in under a minute and writes a device "
                    "description for --hw\n\n"
                    "  perfc calibrate --out FILE.yaml [--threads N] "
                    "[--rounds N]\n"))
    return 1;
  if (Threads == 0)
    return fail("calibrate: --threads must be at least 1");
  // 0 is the option's "not given"; a round takes about 20 s, so a slip of
  // the keyboard (--rounds 200) would run for an hour.
  if (Rounds.getNumOccurrences() && (Rounds == 0 || Rounds > MaxRounds))
    return fail("calibrate: --rounds " + llvm::Twine(Rounds) + ": give 1 to " +
                llvm::Twine(MaxRounds) + " (about 20 s a round)");
  calibrate::CalibrateOptions O;
  O.Threads = Threads;
  O.Quick = Quick;
  O.Rounds = Rounds;
  O.Name = Name;
  O.BlasCoreType = BlasCore;
  if (!Silent)
    O.Log = &llvm::errs();
  auto Yaml = calibrate::calibrate(O);
  if (!Yaml)
    return fail("calibrate: " + llvm::toString(Yaml.takeError()));
  return writeOutput(Out, [&](llvm::raw_ostream &OS) { OS << *Yaml; });
}
