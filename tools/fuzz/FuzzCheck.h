//===- FuzzCheck.h - The error contract, checked inside fuzz targets -*- C++
//-*-//
//
// perfc promises that bad input gives one line that names the file: the
// fuzz targets check that promise on every error they see and abort when it
// is broken, so that libFuzzer reports the input like a crash.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_FUZZ_FUZZCHECK_H
#define PERFC_TOOLS_FUZZ_FUZZCHECK_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

namespace perfc::fuzz {

/// Aborts unless Msg is non-empty, one line (no newline or carriage
/// return), and, when Name is given, contains Name (the file or buffer
/// name the loader was given).
inline void checkMessage(llvm::StringRef Msg, llvm::StringRef Name,
                         llvm::StringRef Where) {
  const char *Broken = nullptr;
  if (Msg.trim().empty())
    Broken = "is empty";
  else if (Msg.find_first_of("\n\r") != llvm::StringRef::npos)
    Broken = "is not one line";
  else if (!Name.empty() && !Msg.contains(Name))
    Broken = "does not name the file";
  if (!Broken)
    return;
  llvm::errs() << "error contract broken by " << Where << ": the message "
               << Broken << " (expected '" << Name << "'):\n"
               << Msg << "\n";
  std::abort();
}

/// Consumes E and checks its message with checkMessage.
inline void checkError(llvm::Error E, llvm::StringRef Name,
                       llvm::StringRef Where) {
  const std::string Msg = llvm::toString(std::move(E));
  checkMessage(Msg, Name, Where);
}

} // namespace perfc::fuzz

#endif // PERFC_TOOLS_FUZZ_FUZZCHECK_H
