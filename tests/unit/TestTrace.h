//===- TestTrace.h - A report's Chrome trace, parsed ------------*- C++ -*-===//
#ifndef PERFC_TESTS_TESTTRACE_H
#define PERFC_TESTS_TESTTRACE_H

#include "passes/Report.h"
#include "tools/ReportWriters.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

#include <string>

namespace perfc::test {

/// The events of the trace writeChromeTrace writes for R; fails the test
/// case where the trace is not JSON with a traceEvents array.
inline llvm::json::Array traceEvents(const Report &R) {
  std::string Trace;
  llvm::raw_string_ostream OS(Trace);
  writeChromeTrace(R, OS);
  OS.flush();
  llvm::Expected<llvm::json::Value> Doc = llvm::json::parse(Trace);
  REQUIRE_MESSAGE(bool(Doc), llvm::toString(Doc.takeError()));
  REQUIRE(Doc->getAsObject());
  const llvm::json::Array *Events = Doc->getAsObject()->getArray("traceEvents");
  REQUIRE(Events);
  return *Events;
}

} // namespace perfc::test

#endif // PERFC_TESTS_TESTTRACE_H
