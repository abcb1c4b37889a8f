//===- CliCommon.cpp - Shared pieces of the perfc subcommands -------------===//
#include "tools/CliCommon.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace perfc::cli {

int fail(const llvm::Twine &Msg) {
  llvm::WithColor::error(llvm::errs(), "perfc") << Msg << "\n";
  return 1;
}

int fail(llvm::Error E) { return fail(llvm::toString(std::move(E))); }

void printWarnings(llvm::StringRef File, const std::vector<Warning> &Ws) {
  constexpr size_t Shown = 5;
  for (size_t I = 0; I < Ws.size() && I < Shown; ++I) {
    auto &OS = llvm::WithColor::warning(llvm::errs(), "perfc");
    OS << File << ": ";
    if (!Ws[I].Node.empty())
      OS << "node '" << Ws[I].Node << "': ";
    OS << Ws[I].Message << "\n";
  }
  if (Ws.size() > Shown)
    llvm::WithColor::warning(llvm::errs(), "perfc")
        << File << ": " << (Ws.size() - Shown)
        << " more warnings (see the JSON output)\n";
}

bool parseOptions(int Argc, const char *const *Argv, llvm::StringRef Overview) {
  std::string Errors;
  llvm::raw_string_ostream ErrorStream(Errors);
  if (llvm::cl::ParseCommandLineOptions(Argc, Argv, Overview, &ErrorStream))
    return true;
  ErrorStream.flush();
  llvm::StringRef Msg = llvm::StringRef(Errors).trim();
  Msg.consume_front("perfc: ");
  fail(Msg.split('\n').first + " (see 'perfc --help')");
  return false;
}

int writeOutput(llvm::StringRef Path,
                llvm::function_ref<void(llvm::raw_ostream &)> Write) {
  if (Path.empty() || Path == "-") {
    Write(llvm::outs());
    llvm::outs().flush();
    return 0;
  }
  std::error_code EC;
  llvm::ToolOutputFile Out(Path, EC, llvm::sys::fs::OF_None);
  if (EC)
    return fail(Path + ": cannot write: " + EC.message());
  Write(Out.os());
  Out.os().close();
  if (Out.os().has_error()) {
    Out.os().clear_error();
    return fail(Path + ": write failed");
  }
  Out.keep();
  return 0;
}

} // namespace perfc::cli
