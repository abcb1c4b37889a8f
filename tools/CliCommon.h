//===- CliCommon.h - Shared pieces of the perfc subcommands -----*- C++ -*-===//
//
// Every subcommand reports failure the same way: one line on stderr,
// "perfc: error: ...", and exit status 1.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_CLICOMMON_H
#define PERFC_TOOLS_CLICOMMON_H

#include "ir/Warning.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace perfc::cli {

int fail(const llvm::Twine &Msg);
int fail(llvm::Error E);

/// Prints at most a few warnings on stderr; the JSON has them all.
void printWarnings(llvm::StringRef File, const std::vector<Warning> &Ws);

/// Runs cl::ParseCommandLineOptions, capturing its messages so that a bad
/// option is one "perfc: error:" line. Returns false (after printing) on
/// failure.
bool parseOptions(int Argc, const char *const *Argv, llvm::StringRef Overview);

/// Writes through Write to Path ("" or "-": stdout). Fails with one line if
/// the file cannot be written.
int writeOutput(llvm::StringRef Path,
                llvm::function_ref<void(llvm::raw_ostream &)> Write);

} // namespace perfc::cli

#endif // PERFC_TOOLS_CLICOMMON_H
