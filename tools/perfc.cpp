//===- perfc.cpp - The perfc command-line tool ----------------------------===//
//
// A thin shell: picks the subcommand, which parses its options, calls the
// libraries and prints. Every failure is one line on stderr,
// "perfc: error: ...", and exit 1.
//
//===----------------------------------------------------------------------===//
#include "frontend/OnnxImport.h"
#include "perfc/Version.h"
#include "tools/Commands.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

int main(int Argc, char **Argv) {
  llvm::InitLLVM X(Argc, Argv);
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &OS) {
    OS << "perfc " << PERFC_VERSION_STRING << " (ONNX opsets "
       << perfc::frontend::MinSupportedOpset << "-"
       << perfc::frontend::maxSupportedOpset() << ")\n";
  });
  const llvm::StringRef First = Argc > 1 ? Argv[1] : "";
  // A subcommand sees "perfc hw" as its program name and its own options.
  if (First == "hw") {
    Argv[1] = const_cast<char *>("perfc hw");
    return perfc::cli::runHw(Argc - 1, Argv + 1);
  }
  if (First == "calibrate") {
    Argv[1] = const_cast<char *>("perfc calibrate");
    return perfc::cli::runCalibrate(Argc - 1, Argv + 1);
  }
  if (First == "batch") {
    Argv[1] = const_cast<char *>("perfc batch");
    return perfc::cli::runBatch(Argc - 1, Argv + 1);
  }
  if (First == "zoo") {
    Argv[1] = const_cast<char *>("perfc zoo");
    return perfc::cli::runZoo(Argc - 1, Argv + 1);
  }
  return perfc::cli::runPredict(Argc, Argv);
}
