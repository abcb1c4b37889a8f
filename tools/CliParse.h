//===- CliParse.h - Parsing perfc's option values ---------------*- C++ -*-===//
//
// The parts of perfc's command line that turn user text into values, kept
// out of perfc.cpp so that tests and the fuzzer (tools/fuzz/FuzzCli.cpp)
// call the same code as the tool.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_CLIPARSE_H
#define PERFC_TOOLS_CLIPARSE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace perfc {

/// Parses the values of repeated `--dim NAME=VALUE` options, in order. The
/// name must be non-empty and the value a positive decimal integer that fits
/// in int64_t. The error is one line: "--dim 'SPEC': expected NAME=VALUE
/// with a positive integer".
llvm::Expected<std::vector<std::pair<std::string, int64_t>>>
parseDimSpecs(llvm::ArrayRef<std::string> Specs);

} // namespace perfc

#endif // PERFC_TOOLS_CLIPARSE_H
