//===- Bundled.h - Descriptions embedded at build time ----------*- C++ -*-===//
//
// Internal to hwdb. EmbedFiles.cmake turns hwdb/{devices,links,clusters}/
// *.yaml into BundledFiles.cpp (in the build tree) defining bundledFiles(),
// so that loading a bundled name needs no file system access.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_HWDB_BUNDLED_H
#define PERFC_HWDB_BUNDLED_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace perfc::hw::detail {

struct BundledFile {
  const char *Path; ///< "hwdb/devices/a100-sxm4-80gb.yaml": used in messages.
  const char *Name; ///< "a100-sxm4-80gb": the file name without .yaml.
  const char *Data;
  size_t Size;

  llvm::StringRef text() const { return llvm::StringRef(Data, Size); }
};

/// Sorted by path.
llvm::ArrayRef<BundledFile> bundledFiles();

} // namespace perfc::hw::detail

#endif // PERFC_HWDB_BUNDLED_H
