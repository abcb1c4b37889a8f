//===- CliCommon.cpp - Shared pieces of the perfc subcommands -------------===//
#include "tools/CliCommon.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <memory>
#include <string>

#include <unistd.h>

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

namespace {

/// Runs F with file descriptor 2 sent to a temporary file and returns what
/// was written there. llvm::cl reports a value that does not parse (an
/// integer option given 'abc') on llvm::errs() itself, bypassing the
/// stream ParseCommandLineOptions takes; this keeps the error one line.
std::string captureStderr(llvm::function_ref<void()> F) {
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> Tmp(std::tmpfile(),
                                                       &std::fclose);
  const int Saved = Tmp ? ::dup(2) : -1;
  if (Saved < 0) {
    F();
    return "";
  }
  llvm::errs().flush();
  ::dup2(::fileno(Tmp.get()), 2);
  F();
  llvm::errs().flush();
  ::dup2(Saved, 2);
  ::close(Saved);
  std::rewind(Tmp.get());
  std::string Text;
  char Buf[512];
  size_t N;
  while ((N = std::fread(Buf, 1, sizeof(Buf), Tmp.get())) > 0)
    Text.append(Buf, N);
  return Text;
}

/// LLVM's "for the --batch option: 'abc' value invalid for long argument!"
/// as "--batch 'abc': expected an integer"; other messages unchanged.
std::string optionError(llvm::StringRef Line) {
  Line = Line.trim();
  // "perfc: ..." or "perfc calibrate: ...": the program name goes.
  if (Line.startswith("perfc"))
    Line = Line.split(": ").second;
  llvm::StringRef Rest = Line;
  if (!Rest.consume_front("for the ") || !Rest.contains(" option: '"))
    return Line.str();
  auto [Option, Value] = Rest.split(" option: '");
  const size_t End = Value.rfind("' value invalid for ");
  if (End == llvm::StringRef::npos)
    return Line.str();
  const llvm::StringRef Type = Value.substr(End).drop_front(20);
  Value = Value.take_front(End);
  const char *Expected = Type.startswith("floating") ? "a number"
                         : Type.startswith("u")      ? "a non-negative integer"
                                                     : "an integer";
  return (Option + " '" + Value + "': expected " + Expected).str();
}

} // namespace

bool parseOptions(int Argc, const char *const *Argv, llvm::StringRef Overview) {
  std::string Errors;
  llvm::raw_string_ostream ErrorStream(Errors);
  bool Parsed = false;
  const std::string Direct = captureStderr([&] {
    Parsed =
        llvm::cl::ParseCommandLineOptions(Argc, Argv, Overview, &ErrorStream);
  });
  if (Parsed)
    return true;
  ErrorStream.flush();
  // The first line that says something, from either stream, and LLVM's
  // suggestion for a misspelt option ("Did you mean '--format'?") if any.
  llvm::StringRef Msg, Suggestion;
  for (llvm::StringRef Text :
       {llvm::StringRef(Direct), llvm::StringRef(Errors)})
    for (llvm::StringRef Rest = Text; !Rest.empty();) {
      auto [Line, Next] = Rest.split('\n');
      Rest = Next;
      if (Line.contains("Did you mean"))
        Suggestion = Line.substr(Line.find("Did you mean")).trim();
      else if (Msg.empty() && !Line.trim().empty())
        Msg = Line.split("  Try: ").first;
    }
  if (Msg.empty())
    Msg = "invalid command line";
  std::string Text = optionError(Msg);
  if (!Suggestion.empty())
    Text += " " + Suggestion.str();
  fail(Text + " (see 'perfc --help')");
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
