//===- CliParse.cpp - Parsing perfc's option values -----------------------===//
#include "tools/CliParse.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace perfc {

llvm::Expected<std::vector<std::pair<std::string, int64_t>>>
parseDimSpecs(llvm::ArrayRef<std::string> Specs) {
  std::vector<std::pair<std::string, int64_t>> Dims;
  for (const std::string &Spec : Specs) {
    auto [Name, Value] = llvm::StringRef(Spec).split('=');
    int64_t V = 0;
    if (Name.empty() || Value.getAsInteger(10, V) || V <= 0) {
      // Escaped, so that the error stays one line whatever the spec holds.
      std::string Shown;
      llvm::raw_string_ostream OS(Shown);
      llvm::printEscapedString(Spec, OS);
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--dim '" + OS.str() +
              "': expected NAME=VALUE with a positive integer");
    }
    Dims.emplace_back(Name.str(), V);
  }
  return Dims;
}

} // namespace perfc
