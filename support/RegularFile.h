//===- RegularFile.h - Opening and reading a user's file safely -*- C++ -*-===//
//
// Models, hardware descriptions and plans come from paths a user types. A
// device (/dev/zero) would never end and a FIFO would block, so only
// regular files are read; a size cap bounds what a wrong path (or a
// fuzzer) can make perfc allocate. Errors carry the reason alone ("it is
// a directory"): callers put the file name and what they were reading in
// front, so that every message stays one line naming the file.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_SUPPORT_REGULARFILE_H
#define PERFC_SUPPORT_REGULARFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace perfc::support {

/// An open regular file, closed when this goes away.
class RegularFile {
public:
  /// Opens Path for reading; an error when it cannot be opened or is a
  /// directory or any other kind of non-regular file.
  static llvm::Expected<RegularFile> open(const llvm::Twine &Path);

  RegularFile(RegularFile &&Other) noexcept;
  RegularFile &operator=(RegularFile &&Other) noexcept;
  RegularFile(const RegularFile &) = delete;
  RegularFile &operator=(const RegularFile &) = delete;
  ~RegularFile();

  llvm::sys::fs::file_t handle() const { return FD; }
  /// The size when opened.
  uint64_t size() const { return Size; }

private:
  RegularFile(llvm::sys::fs::file_t FD, uint64_t Size) : FD(FD), Size(Size) {}

  llvm::sys::fs::file_t FD;
  uint64_t Size;
};

/// Reads the whole regular file Path, of at most MaxBytes. What names what
/// the file should be ("a plan") in the message about its size:
/// "it is N bytes, more than the MAX WHAT may have".
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readRegularFile(const llvm::Twine &Path, uint64_t MaxBytes,
                llvm::StringRef What);

} // namespace perfc::support

#endif // PERFC_SUPPORT_REGULARFILE_H
