//===- Loader.h - Load hardware descriptions from YAML ----------*- C++ -*-===//
//
// Reads device, link and cluster descriptions (schema: hwdb/README.md).
// The walk is strict and schema-driven over LLVM's YAML node API: unknown
// keys, missing fields, missing or wrong units, impossible values, wrong
// node types, duplicate keys and dangling references are all errors, each
// one line "FILE:LINE:COL: what is wrong; what to do" (line and column
// 1-based). No input, however malformed, crashes the loader.
//
// Names and paths: an argument without '/' and without a .yaml/.yml suffix
// is the name of a bundled description (hwdb/{devices,links,clusters}/*.yaml,
// embedded in the library at build time, so perfc works from any directory);
// anything else is a file path. References inside a file (a cluster's
// devices and links) follow the same rule, with relative paths taken from
// the referring file's directory. Bundled files may refer only to bundled
// names and report errors as "hwdb/devices/NAME.yaml:LINE:COL".
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_HWDB_LOADER_H
#define PERFC_HWDB_LOADER_H

#include "hwdb/Cluster.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace perfc::hw {

/// Loads a device or cluster description. A device file yields a Cluster of
/// one node holding that one device (named after it).
llvm::Expected<Cluster> loadHardware(llvm::StringRef PathOrName);

/// As loadHardware, from text; DisplayName is the file name used in error
/// messages. References to other files resolve against the current
/// directory. For tests and fuzzers.
llvm::Expected<Cluster> loadHardwareFromString(llvm::StringRef Text,
                                               llvm::StringRef DisplayName);

/// Loads a link description (hwdb/links/*.yaml or a file).
llvm::Expected<Link> loadLink(llvm::StringRef PathOrName);

/// As loadLink, from text; DisplayName as for loadHardwareFromString.
llvm::Expected<Link> loadLinkFromString(llvm::StringRef Text,
                                        llvm::StringRef DisplayName);

/// What a description file describes.
enum class EntryKind : uint8_t { Device, Link, Cluster };
llvm::StringRef name(EntryKind K);

struct BundledEntry {
  std::string Name; ///< As accepted by loadHardware / loadLink.
  EntryKind Kind = EntryKind::Device;
  std::string Path; ///< "hwdb/devices/a100-sxm4-80gb.yaml".
  /// One line of key figures ("gpu NVIDIA; tensor 312 TFLOPS fp16; ...");
  /// the error message if the bundled file does not load (a build defect
  /// the unit tests catch).
  std::string Summary;
  bool Loads = true;
};

/// Every bundled description, sorted by kind then name.
std::vector<BundledEntry> listBundled();

/// The YAML text of the bundled description NAME, as embedded at build
/// time (comments and citations included): the starting point for a
/// description of one's own. An unknown name is an error with the closest
/// bundled names.
llvm::Expected<llvm::StringRef> bundledText(llvm::StringRef Name);

} // namespace perfc::hw

#endif // PERFC_HWDB_LOADER_H
