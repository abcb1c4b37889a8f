//===- JsonText.h - Arbitrary bytes as JSON text ----------------*- C++ -*-===//
//
// JSON text is UTF-8, and llvm::json::Value and ObjectKey assert on anything
// else (builds without NDEBUG abort; with it they repair the text quietly).
// What perfc writes into JSON comes partly from its users as arbitrary
// bytes: names in a model (ONNX's proto2 strings are not checked), a
// hardware file, a path or a --dim name on the command line. Every such
// string goes through jsonText. Found by the bit-flip test under the
// sanitizer build once assertions were on.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_SUPPORT_JSONTEXT_H
#define PERFC_SUPPORT_JSONTEXT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace perfc {

/// S unchanged when it is valid UTF-8; else with each byte that is not
/// part of a valid sequence replaced by U+FFFD (llvm::json::fixUTF8).
inline std::string jsonText(llvm::StringRef S) {
  return llvm::json::isUTF8(S) ? S.str() : llvm::json::fixUTF8(S);
}

} // namespace perfc

#endif // PERFC_SUPPORT_JSONTEXT_H
