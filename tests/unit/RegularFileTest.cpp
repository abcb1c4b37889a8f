//===- RegularFileTest.cpp - support/RegularFile.h ------------------------===//
#include "support/RegularFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

#include <string>

using namespace perfc::support;

namespace {
std::string errorOf(llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> R) {
  if (R) {
    FAIL_CHECK("read where an error was expected");
    return "";
  }
  return llvm::toString(R.takeError());
}
} // namespace

TEST_CASE("readRegularFile: a file within the cap is read whole") {
  llvm::SmallString<128> Path;
  int FD = -1;
  REQUIRE(!llvm::sys::fs::createTemporaryFile("perfc-rf", "txt", FD, Path));
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << "0123456789";
  }
  auto Read = readRegularFile(Path, 10, "a test file");
  REQUIRE(Read);
  CHECK((*Read)->getBuffer() == "0123456789");
  // One byte over the cap: refused with the size, the cap and the kind.
  CHECK(errorOf(readRegularFile(Path, 9, "a test file")) ==
        "it is 10 bytes, more than the 9 a test file may have");
  auto Open = RegularFile::open(Path);
  REQUIRE(Open);
  CHECK(Open->size() == 10);
  llvm::sys::fs::remove(Path);
}

TEST_CASE("readRegularFile: directories, devices and missing files are "
          "refused with the reason alone") {
  CHECK(errorOf(readRegularFile(PERFC_SOURCE_DIR, 1 << 20, "x")) ==
        "it is a directory");
  CHECK(errorOf(readRegularFile("/dev/zero", 1 << 20, "x")) ==
        "it is not a regular file");
  CHECK(errorOf(readRegularFile("/nonexistent/f", 1 << 20, "x")) ==
        "No such file or directory");
}
