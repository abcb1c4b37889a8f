//===- FuzzHwYaml.cpp - Fuzz the hardware-description loader -------------===//
//
// Text is a description file: loaded as a device or cluster and as a link,
// and printed when it loads. The loader promises that no input crashes it
// and that every error is one line naming the file (FuzzCheck.h).
//
// References inside the text to other files resolve against the current
// directory, as the loader documents; run the fuzzer from a directory
// without YAML files (run.sh does) so that the input alone decides.
//
//===----------------------------------------------------------------------===//
#include "hwdb/Loader.h"
#include "hwdb/Print.h"
#include "tools/fuzz/FuzzCheck.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  if (auto C = perfc::hw::loadHardwareFromString(Text, "fuzz.yaml")) {
    perfc::hw::printCluster(*C, OS);
    (void)perfc::hw::summarize(*C);
  } else {
    perfc::fuzz::checkError(C.takeError(), "fuzz.yaml",
                            "loadHardwareFromString");
  }
  if (auto L = perfc::hw::loadLinkFromString(Text, "fuzz.yaml")) {
    perfc::hw::printLink(*L, OS);
    (void)perfc::hw::summarize(*L);
  } else {
    perfc::fuzz::checkError(L.takeError(), "fuzz.yaml", "loadLinkFromString");
  }
  return 0;
}
