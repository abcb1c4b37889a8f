//===- FileParser.h - The YAML walk shared by the loader --------*- C++ -*-===//
//
// Internal to hwdb. FileParser parses one description file; its generic
// parts (mapping walk, values, diagnostics) are in FileParser.cpp, devices in
// DeviceParser.cpp, links and clusters in ClusterParser.cpp; Loader.cpp finds
// the files and holds the public entry points.
//
// A schema-driven walk over llvm::yaml nodes. Two properties of LLVM's YAML
// parser shape the code:
//  * collections are parsed lazily and may be iterated once; moving past an
//    entry skips it, recursively. Every walk therefore consumes each value
//    completely or stops at the first error and unwinds without touching
//    the stream again: that keeps deeply nested garbage from ever being
//    skipped (which would recurse once per nesting level);
//  * scanner errors go to the SourceMgr's diagnostic handler and leave null
//    or partial nodes behind. The first one is captured and wins over any
//    error the walk reports after it.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_HWDB_FILEPARSER_H
#define PERFC_HWDB_FILEPARSER_H

#include "hwdb/Cluster.h"
#include "hwdb/Loader.h"
#include "hwdb/Units.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace perfc::hw::detail {

/// Larger inputs are not hardware descriptions; refusing them bounds the
/// work a fuzzer (or a wrong path) can cause.
constexpr size_t MaxFileBytes = 16u << 20;

/// An error whose message is Msg on one line (control characters escaped).
llvm::Error makeError(const llvm::Twine &Msg);

/// "did you mean 'X'? " for the candidates Word begins (up to four), else
/// for the one within a small edit distance of it; empty for none.
std::string didYouMean(llvm::StringRef Word,
                       llvm::ArrayRef<llvm::StringRef> Candidates);

/// The words separated by ", ".
std::string joined(llvm::ArrayRef<llvm::StringRef> Words);

/// What a node is, for messages: "a mapping", "a list", ...
llvm::StringRef describe(const llvm::yaml::Node *N);

/// Whether a reference is a file path rather than a bundled name.
bool isPathLike(llvm::StringRef Ref);

/// One key a mapping accepts.
struct KeySpec {
  llvm::StringRef Name;
  bool Required;
  /// A valid value, for "add e.g. 'latency: 1 us'" hints.
  llvm::StringRef Example;
};

/// Where a file came from: the name its messages use and how the
/// references inside it resolve.
struct Origin {
  std::string DisplayName;
  /// Directory for relative references; empty means the current directory.
  std::string BaseDir;
  bool Bundled = false;
  /// For bundled files, the name the file must declare.
  std::string BundledName;
};

/// A description file to parse: its text (owned when read from disk) and
/// origin.
struct SourceText {
  std::unique_ptr<llvm::MemoryBuffer> Owned;
  llvm::StringRef Text;
  Origin From;
  /// Identity for the device cache: "bundled:NAME" or the file path.
  std::string Key;
};

/// What a file holds.
struct Parsed {
  EntryKind Kind = EntryKind::Device;
  std::shared_ptr<const Device> Dev;
  llvm::Optional<Link> TheLink;
  llvm::Optional<Cluster> TheCluster;
};

class LoadContext;

/// Parses one file. Owns the SourceMgr that maps node locations to lines.
class FileParser {
public:
  FileParser(const SourceText &Src, LoadContext &Ctx)
      : Text(Src.Text), From(Src.From), Ctx(Ctx) {}

  /// Parses the file; Expect, when set, is the kind the referrer needs, and
  /// a file of another kind is rejected before its body is walked.
  llvm::Expected<Parsed> parse(llvm::Optional<EntryKind> Expect,
                               llvm::StringRef ExpectWhy);

private:
  using KeyHandler = llvm::function_ref<llvm::Error(
      llvm::StringRef Key, llvm::SMLoc KeyLoc, llvm::yaml::Node *Value)>;

  llvm::Error errorAt(llvm::SMLoc Loc, const llvm::Twine &Msg) const;
  llvm::Error errorAt(const llvm::yaml::Node *N, const llvm::Twine &Msg) const {
    return errorAt(locOf(N), Msg);
  }
  llvm::SMLoc locOf(const llvm::yaml::Node *N) const;
  llvm::Error checkText() const;
  llvm::Error diagError() const;

  llvm::Error walkMapping(llvm::yaml::Node *N, llvm::StringRef What,
                          llvm::ArrayRef<KeySpec> Keys, KeyHandler OnKey);
  llvm::Error expectSequence(llvm::yaml::Node *N, llvm::StringRef Key,
                             llvm::StringRef Example);

  llvm::Expected<llvm::StringRef> scalar(llvm::yaml::Node *N,
                                         llvm::StringRef Key,
                                         llvm::StringRef Example,
                                         llvm::SmallVectorImpl<char> &Storage);
  llvm::Expected<std::string> text(llvm::yaml::Node *N, llvm::StringRef Key,
                                   llvm::StringRef Example);
  llvm::Expected<std::string> identifier(llvm::yaml::Node *N,
                                         llvm::StringRef Key);
  llvm::Expected<Measure> quantity(llvm::yaml::Node *N, llvm::StringRef Key,
                                   Quantity Q);
  llvm::Expected<double> fraction(llvm::yaml::Node *N, llvm::StringRef Key);
  /// `true` or `false`.
  llvm::Expected<bool> flag(llvm::yaml::Node *N, llvm::StringRef Key);
  llvm::Expected<unsigned> count(llvm::yaml::Node *N, llvm::StringRef Key,
                                 bool AllowZero);

  llvm::Expected<Parsed> parseRoot(llvm::yaml::Node *Root,
                                   llvm::Optional<EntryKind> Expect,
                                   llvm::StringRef ExpectWhy);
  llvm::Expected<Device> parseDevice(llvm::yaml::Node *N);
  llvm::Error parseCompute(llvm::yaml::Node *N, Device &D);
  llvm::Error parseMemory(llvm::yaml::Node *N, Device &D);
  llvm::Error parseEfficiency(llvm::yaml::Node *N, Device &D);
  llvm::Expected<EfficiencyCurve> parseCurve(llvm::yaml::Node *N,
                                             llvm::StringRef Key, Quantity Q);
  llvm::Error parseConvActivations(llvm::yaml::Node *N, Device &D);
  llvm::Error parseSupports(llvm::yaml::Node *N, Device &D);
  llvm::Error parseSources(llvm::yaml::Node *N, std::vector<Source> &Out);
  llvm::Expected<Link> parseLink(llvm::yaml::Node *N, bool AllowBase);
  llvm::Expected<Cluster> parseCluster(llvm::yaml::Node *N);
  llvm::Expected<NodeGroup> parseGroup(llvm::yaml::Node *N);
  llvm::Expected<std::shared_ptr<const Device>> deviceRef(llvm::yaml::Node *N,
                                                          llvm::StringRef Key);
  llvm::Expected<Link> linkRef(llvm::yaml::Node *N, llvm::StringRef Key);

  static void onDiag(const llvm::SMDiagnostic &D, void *Self);

  llvm::StringRef Text;
  const Origin &From;
  LoadContext &Ctx;
  llvm::SourceMgr SM;
  /// The first scanner/parser diagnostic, already formatted.
  llvm::Optional<std::string> Diag;
};

/// State of one load: resolves references and shares a device referenced
/// more than once.
class LoadContext {
public:
  /// Finds the file Ref names. Errors carry no location: the caller
  /// attaches the one of the reference.
  llvm::Expected<SourceText> resolve(llvm::StringRef Ref, const Origin &From,
                                     EntryKind Want);

  llvm::StringMap<std::shared_ptr<const Device>> Devices;
};

/// Walks the items of a list, stopping at the first error.
template <typename Fn> llvm::Error forEachItem(llvm::yaml::Node *N, Fn &&F) {
  auto *Seq = llvm::cast<llvm::yaml::SequenceNode>(N);
  for (llvm::yaml::Node &Item : *Seq)
    if (llvm::Error E = F(&Item))
      return E;
  return llvm::Error::success();
}

} // namespace perfc::hw::detail

#endif // PERFC_HWDB_FILEPARSER_H
