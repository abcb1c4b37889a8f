//===- RegularFile.cpp - Opening and reading a user's file safely ---------===//
#include "support/RegularFile.h"

#include "llvm/Support/FormatVariadic.h"

using namespace perfc::support;

namespace {
llvm::Error reason(const llvm::Twine &Why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Why);
}
} // namespace

llvm::Expected<RegularFile> RegularFile::open(const llvm::Twine &Path) {
  auto FD = llvm::sys::fs::openNativeFileForRead(Path);
  if (!FD)
    return reason(llvm::errorToErrorCode(FD.takeError()).message());
  // Owns the descriptor from here: every way out closes it.
  RegularFile File(*FD, 0);
  llvm::sys::fs::file_status Status;
  if (std::error_code EC = llvm::sys::fs::status(*FD, Status))
    return reason(EC.message());
  if (Status.type() == llvm::sys::fs::file_type::directory_file)
    return reason("it is a directory");
  if (Status.type() != llvm::sys::fs::file_type::regular_file)
    return reason("it is not a regular file");
  File.Size = Status.getSize();
  return std::move(File);
}

RegularFile::RegularFile(RegularFile &&Other) noexcept
    : FD(Other.FD), Size(Other.Size) {
  Other.FD = llvm::sys::fs::kInvalidFile;
}

RegularFile &RegularFile::operator=(RegularFile &&Other) noexcept {
  if (this != &Other) {
    if (FD != llvm::sys::fs::kInvalidFile)
      (void)llvm::sys::fs::closeFile(FD);
    FD = Other.FD;
    Size = Other.Size;
    Other.FD = llvm::sys::fs::kInvalidFile;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (FD != llvm::sys::fs::kInvalidFile)
    (void)llvm::sys::fs::closeFile(FD);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
perfc::support::readRegularFile(const llvm::Twine &Path, uint64_t MaxBytes,
                                llvm::StringRef What) {
  auto File = RegularFile::open(Path);
  if (!File)
    return File.takeError();
  if (File->size() > MaxBytes)
    return reason(llvm::formatv("it is {0} bytes, more than the {1} {2} may "
                                "have",
                                File->size(), MaxBytes, What));
  auto Buf = llvm::MemoryBuffer::getOpenFile(File->handle(), Path, File->size(),
                                             /*RequiresNullTerminator=*/false);
  if (!Buf)
    return reason(Buf.getError().message());
  return std::move(*Buf);
}
