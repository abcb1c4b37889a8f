//===- Loader.cpp - Load hardware descriptions from YAML ------------------===//
//
// Finds description files (bundled names or paths, for top-level arguments
// and for references inside files) and holds the public entry points. The
// parsing itself is FileParser's (FileParser.h).
//
//===----------------------------------------------------------------------===//
#include "hwdb/Loader.h"

#include "hwdb/Bundled.h"
#include "hwdb/FileParser.h"
#include "hwdb/Print.h"
#include "support/RegularFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <memory>

using namespace perfc;
using namespace perfc::hw;
using namespace perfc::hw::detail;

namespace {

llvm::StringRef kindDirectory(EntryKind K) {
  switch (K) {
  case EntryKind::Device:
    return "devices";
  case EntryKind::Link:
    return "links";
  case EntryKind::Cluster:
    return "clusters";
  }
  return "devices";
}

/// The kind of a bundled file, from its directory.
EntryKind bundledKind(const detail::BundledFile &F) {
  const llvm::StringRef Path = F.Path;
  if (Path.startswith("hwdb/links/"))
    return EntryKind::Link;
  if (Path.startswith("hwdb/clusters/"))
    return EntryKind::Cluster;
  return EntryKind::Device;
}

const detail::BundledFile *findBundled(llvm::StringRef Name) {
  for (const detail::BundledFile &F : detail::bundledFiles())
    if (Name == F.Name)
      return &F;
  return nullptr;
}

std::vector<llvm::StringRef> bundledNames(llvm::Optional<EntryKind> Kind) {
  std::vector<llvm::StringRef> Names;
  for (const detail::BundledFile &F : detail::bundledFiles())
    if (!Kind || bundledKind(F) == *Kind)
      Names.push_back(F.Name);
  return Names;
}

/// Reads a description file (a regular file of at most MaxFileBytes). The
/// error is the reason alone; callers add the path.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readDescription(const llvm::Twine &Path) {
  return support::readRegularFile(Path, MaxFileBytes, "a hardware description");
}

} // namespace

llvm::Expected<SourceText>
LoadContext::resolve(llvm::StringRef Ref, const Origin &From, EntryKind Want) {
  SourceText Src;
  if (!isPathLike(Ref)) {
    const detail::BundledFile *F = findBundled(Ref);
    if (!F)
      return makeError(llvm::formatv(
          "unknown {0} '{1}'; {2}use a bundled {0} name (see 'perfc hw list') "
          "or a path to a .yaml file",
          name(Want), Ref, didYouMean(Ref, bundledNames(Want))));
    if (bundledKind(*F) != Want)
      return makeError(llvm::formatv("'{0}' is a bundled {1}, not a {2}; "
                                     "name a {2} here",
                                     Ref, name(bundledKind(*F)), name(Want)));
    Src.Text = F->text();
    Src.From.DisplayName = F->Path;
    Src.From.Bundled = true;
    Src.From.BundledName = F->Name;
    Src.Key = ("bundled:" + Ref).str();
    return Src;
  }
  if (From.Bundled)
    return makeError(llvm::formatv("bundled descriptions may refer only to "
                                   "bundled names, not to the path '{0}'; "
                                   "use the name of a file under hwdb/{1}/",
                                   Ref, kindDirectory(Want)));
  llvm::SmallString<256> Path;
  if (llvm::sys::path::is_absolute(Ref) || From.BaseDir.empty())
    Path = Ref;
  else {
    Path = From.BaseDir;
    llvm::sys::path::append(Path, Ref);
  }
  auto Buf = readDescription(Path);
  if (!Buf)
    return makeError(llvm::formatv("cannot read '{0}': {1}; check the path "
                                   "(relative paths start at the referring "
                                   "file's directory)",
                                   Path, llvm::toString(Buf.takeError())));
  Src.Owned = std::move(*Buf);
  Src.Text = Src.Owned->getBuffer();
  Src.From.DisplayName = std::string(Path);
  Src.From.BaseDir = std::string(llvm::sys::path::parent_path(Path));
  Src.Key = std::string(Path);
  return Src;
}

namespace {

//===-- Entry points -----------------------------------------------------===//

Cluster clusterOf(std::shared_ptr<const Device> D) {
  Cluster C;
  C.Name = D->Name;
  C.Description = D->Description;
  NodeGroup G;
  G.Devices.push_back({std::move(D), 1});
  C.Groups.push_back(std::move(G));
  return C;
}

llvm::Expected<Parsed> parseSource(const SourceText &Src) {
  LoadContext Ctx;
  FileParser P(Src, Ctx);
  return P.parse(llvm::None, "");
}

/// Finds the file for a top-level argument (no referrer, so no location).
llvm::Expected<SourceText> resolveTop(llvm::StringRef PathOrName) {
  SourceText Src;
  if (!isPathLike(PathOrName)) {
    const detail::BundledFile *F = findBundled(PathOrName);
    if (!F)
      return makeError(llvm::formatv(
          "unknown hardware '{0}'; {1}run 'perfc hw list' for the bundled "
          "names, or give a path to a .yaml file",
          PathOrName, didYouMean(PathOrName, bundledNames(llvm::None))));
    Src.Text = F->text();
    Src.From.DisplayName = F->Path;
    Src.From.Bundled = true;
    Src.From.BundledName = F->Name;
    return Src;
  }
  auto Buf = readDescription(PathOrName);
  if (!Buf)
    return makeError(llvm::formatv("{0}: cannot read the file: {1}; check "
                                   "the path",
                                   PathOrName,
                                   llvm::toString(Buf.takeError())));
  Src.Owned = std::move(*Buf);
  Src.Text = Src.Owned->getBuffer();
  Src.From.DisplayName = PathOrName.str();
  Src.From.BaseDir = std::string(llvm::sys::path::parent_path(PathOrName));
  return Src;
}

llvm::Expected<Cluster> toCluster(llvm::Expected<Parsed> P,
                                  llvm::StringRef What) {
  if (!P)
    return P.takeError();
  if (P->Kind == EntryKind::Device)
    return clusterOf(P->Dev);
  if (P->Kind == EntryKind::Cluster)
    return std::move(*P->TheCluster);
  return makeError(llvm::formatv("{0} describes a link, not a device or a "
                                 "cluster; load a device or cluster (links "
                                 "load with loadLink)",
                                 What));
}

} // namespace

llvm::StringRef perfc::hw::name(EntryKind K) {
  switch (K) {
  case EntryKind::Device:
    return "device";
  case EntryKind::Link:
    return "link";
  case EntryKind::Cluster:
    return "cluster";
  }
  return "device";
}

llvm::Expected<Cluster> perfc::hw::loadHardware(llvm::StringRef PathOrName) {
  auto Src = resolveTop(PathOrName);
  if (!Src)
    return Src.takeError();
  return toCluster(parseSource(*Src), Src->From.DisplayName);
}

llvm::Expected<Cluster>
perfc::hw::loadHardwareFromString(llvm::StringRef Text,
                                  llvm::StringRef DisplayName) {
  SourceText Src;
  Src.Text = Text;
  Src.From.DisplayName = DisplayName.str();
  return toCluster(parseSource(Src), DisplayName);
}

static llvm::Expected<Link> toLink(llvm::Expected<Parsed> P,
                                   llvm::StringRef What) {
  if (!P)
    return P.takeError();
  if (P->Kind != EntryKind::Link)
    return makeError(llvm::formatv("{0} describes a {1}, not a link; load it "
                                   "with loadHardware",
                                   What, name(P->Kind)));
  return std::move(*P->TheLink);
}

llvm::Expected<Link> perfc::hw::loadLink(llvm::StringRef PathOrName) {
  auto Src = resolveTop(PathOrName);
  if (!Src)
    return Src.takeError();
  return toLink(parseSource(*Src), Src->From.DisplayName);
}

llvm::Expected<Link>
perfc::hw::loadLinkFromString(llvm::StringRef Text,
                              llvm::StringRef DisplayName) {
  SourceText Src;
  Src.Text = Text;
  Src.From.DisplayName = DisplayName.str();
  return toLink(parseSource(Src), DisplayName);
}

llvm::Expected<llvm::StringRef> perfc::hw::bundledText(llvm::StringRef Name) {
  if (const detail::BundledFile *F = findBundled(Name))
    return F->text();
  if (isPathLike(Name))
    return makeError(llvm::formatv("'{0}' is a file path, not the name of a "
                                   "bundled description; read the file "
                                   "itself, or see 'perfc hw list'",
                                   Name));
  return makeError(llvm::formatv(
      "unknown hardware '{0}'; {1}run 'perfc hw list' for the bundled names",
      Name, didYouMean(Name, bundledNames(llvm::None))));
}

std::vector<BundledEntry> perfc::hw::listBundled() {
  std::vector<BundledEntry> Entries;
  for (const detail::BundledFile &F : detail::bundledFiles()) {
    BundledEntry En;
    En.Name = F.Name;
    En.Kind = bundledKind(F);
    En.Path = F.Path;
    SourceText Src;
    Src.Text = F.text();
    Src.From.DisplayName = F.Path;
    Src.From.Bundled = true;
    Src.From.BundledName = F.Name;
    auto P = parseSource(Src);
    if (!P) {
      En.Loads = false;
      En.Summary = llvm::toString(P.takeError());
    } else if (P->Kind != En.Kind) {
      En.Loads = false;
      En.Summary = llvm::formatv("{0}: describes a {1} but lies under "
                                 "hwdb/{2}/",
                                 F.Path, name(P->Kind), kindDirectory(En.Kind))
                       .str();
    } else if (P->Kind == EntryKind::Device) {
      En.Summary = summarize(*P->Dev);
    } else if (P->Kind == EntryKind::Link) {
      En.Summary = summarize(*P->TheLink);
    } else {
      En.Summary = summarize(*P->TheCluster);
    }
    Entries.push_back(std::move(En));
  }
  llvm::stable_sort(Entries, [](const BundledEntry &A, const BundledEntry &B) {
    return std::make_pair(A.Kind, llvm::StringRef(A.Name)) <
           std::make_pair(B.Kind, llvm::StringRef(B.Name));
  });
  return Entries;
}
