//===- Loader.cpp - Load hardware descriptions from YAML ------------------===//
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
#include "hwdb/Loader.h"

#include "hwdb/Bundled.h"
#include "hwdb/Print.h"
#include "hwdb/Units.h"
#include "support/RegularFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

#include <cmath>
#include <memory>

using namespace perfc;
using namespace perfc::hw;
namespace yaml = llvm::yaml;

namespace {

/// Larger inputs are not hardware descriptions; refusing them bounds the
/// work a fuzzer (or a wrong path) can cause.
constexpr size_t MaxFileBytes = 16u << 20;

/// Messages quote user text, which may hold line breaks or other control
/// characters (a multi-line scalar, garbage); escape them so that every
/// error stays one line.
std::string oneLine(llvm::StringRef Msg) {
  std::string Out;
  Out.reserve(Msg.size());
  for (char C : Msg) {
    if (C == '\n')
      Out += "\\n";
    else if (C == '\t')
      Out += "\\t";
    else if (static_cast<unsigned char>(C) < 0x20 || C == 0x7f)
      Out += llvm::formatv("\\x{0:x-2}", static_cast<unsigned char>(C)).str();
    else
      Out += C;
  }
  return Out;
}

llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 oneLine(Msg.str()));
}

/// Line and column (1-based) of Offset in Text.
std::pair<unsigned, unsigned> lineColumnOf(llvm::StringRef Text,
                                           size_t Offset) {
  const llvm::StringRef Before = Text.take_front(Offset);
  const unsigned Line = 1 + Before.count('\n');
  const size_t LineStart = Before.rfind('\n');
  const size_t Col =
      LineStart == llvm::StringRef::npos ? Offset + 1 : Offset - LineStart;
  return {Line, static_cast<unsigned>(Col)};
}

/// The closest candidate within a small edit distance, or empty.
llvm::StringRef closest(llvm::StringRef Word,
                        llvm::ArrayRef<llvm::StringRef> Candidates) {
  llvm::StringRef Best;
  unsigned BestDist = std::max<unsigned>(2, Word.size() / 3) + 1;
  for (llvm::StringRef C : Candidates) {
    const unsigned D = Word.edit_distance(C, true, BestDist);
    if (D < BestDist) {
      BestDist = D;
      Best = C;
    }
  }
  return Best;
}

std::string didYouMean(llvm::StringRef Word,
                       llvm::ArrayRef<llvm::StringRef> Candidates) {
  const llvm::StringRef Best = closest(Word, Candidates);
  if (!Best.empty())
    return llvm::formatv("did you mean '{0}'? ", Best).str();
  // A short name ("a100") is far in edit distance from the full ones
  // ("a100-sxm4-80gb") but is their prefix.
  std::vector<std::string> Prefixed;
  for (llvm::StringRef C : Candidates)
    if (!Word.empty() && C.startswith(Word) && Prefixed.size() < 4)
      Prefixed.push_back(("'" + C + "'").str());
  if (Prefixed.empty())
    return "";
  if (Prefixed.size() == 1)
    return "did you mean " + Prefixed.front() + "? ";
  return "did you mean one of " +
         llvm::join(Prefixed.begin(), Prefixed.end(), ", ") + "? ";
}

std::string joined(llvm::ArrayRef<llvm::StringRef> Words) {
  return llvm::join(Words.begin(), Words.end(), ", ");
}

llvm::StringRef describe(const yaml::Node *N) {
  switch (N->getType()) {
  case yaml::Node::NK_Scalar:
  case yaml::Node::NK_BlockScalar:
    return "a single value";
  case yaml::Node::NK_Mapping:
    return "a mapping";
  case yaml::Node::NK_Sequence:
    return "a list";
  case yaml::Node::NK_Alias:
    return "an alias";
  case yaml::Node::NK_KeyValue:
    return "a key";
  case yaml::Node::NK_Null:
    return "nothing";
  }
  return "something else";
}

/// One key a mapping accepts.
struct KeySpec {
  llvm::StringRef Name;
  bool Required;
  /// A valid value, for "add e.g. 'latency: 1 us'" hints.
  llvm::StringRef Example;
};

bool isPathLike(llvm::StringRef Ref) {
  return Ref.contains('/') || Ref.contains('\\') || Ref.endswith(".yaml") ||
         Ref.endswith(".yml");
}

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

/// Reads a description file (a regular file of at most MaxFileBytes). The
/// error is the reason alone; callers add the path.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readDescription(const llvm::Twine &Path) {
  return support::readRegularFile(Path, MaxFileBytes, "a hardware description");
}

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
      llvm::StringRef Key, llvm::SMLoc KeyLoc, yaml::Node *Value)>;

  llvm::Error errorAt(llvm::SMLoc Loc, const llvm::Twine &Msg) const;
  llvm::Error errorAt(const yaml::Node *N, const llvm::Twine &Msg) const {
    return errorAt(locOf(N), Msg);
  }
  llvm::SMLoc locOf(const yaml::Node *N) const;
  llvm::Error checkText() const;
  llvm::Error diagError() const;

  llvm::Error walkMapping(yaml::Node *N, llvm::StringRef What,
                          llvm::ArrayRef<KeySpec> Keys, KeyHandler OnKey);
  llvm::Error expectSequence(yaml::Node *N, llvm::StringRef Key,
                             llvm::StringRef Example);

  llvm::Expected<llvm::StringRef> scalar(yaml::Node *N, llvm::StringRef Key,
                                         llvm::StringRef Example,
                                         llvm::SmallVectorImpl<char> &Storage);
  llvm::Expected<std::string> text(yaml::Node *N, llvm::StringRef Key,
                                   llvm::StringRef Example);
  llvm::Expected<std::string> identifier(yaml::Node *N, llvm::StringRef Key);
  llvm::Expected<Measure> quantity(yaml::Node *N, llvm::StringRef Key,
                                   Quantity Q);
  llvm::Expected<double> fraction(yaml::Node *N, llvm::StringRef Key);
  llvm::Expected<unsigned> count(yaml::Node *N, llvm::StringRef Key,
                                 bool AllowZero);

  llvm::Expected<Parsed> parseRoot(yaml::Node *Root,
                                   llvm::Optional<EntryKind> Expect,
                                   llvm::StringRef ExpectWhy);
  llvm::Expected<Device> parseDevice(yaml::Node *N);
  llvm::Error parseCompute(yaml::Node *N, Device &D);
  llvm::Error parseMemory(yaml::Node *N, Device &D);
  llvm::Error parseEfficiency(yaml::Node *N, Device &D);
  llvm::Expected<EfficiencyCurve> parseCurve(yaml::Node *N, llvm::StringRef Key,
                                             Quantity Q);
  llvm::Error parseSupports(yaml::Node *N, Device &D);
  llvm::Error parseSources(yaml::Node *N, std::vector<Source> &Out);
  llvm::Expected<Link> parseLink(yaml::Node *N, bool AllowBase);
  llvm::Expected<Cluster> parseCluster(yaml::Node *N);
  llvm::Expected<NodeGroup> parseGroup(yaml::Node *N);
  llvm::Expected<std::shared_ptr<const Device>> deviceRef(yaml::Node *N,
                                                          llvm::StringRef Key);
  llvm::Expected<Link> linkRef(yaml::Node *N, llvm::StringRef Key);

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

void FileParser::onDiag(const llvm::SMDiagnostic &D, void *Self) {
  auto *P = static_cast<FileParser *>(Self);
  if (P->Diag)
    return;
  llvm::StringRef Msg = D.getMessage();
  Msg.consume_back(".");
  // SMDiagnostic columns are 0-based; messages use 1-based ones.
  P->Diag = llvm::formatv("{0}:{1}:{2}: invalid YAML: {3}; fix the syntax "
                          "here (see hwdb/README.md for the schema)",
                          P->From.DisplayName, std::max(D.getLineNo(), 1),
                          D.getColumnNo() + 1, Msg)
                .str();
}

llvm::Error FileParser::errorAt(llvm::SMLoc Loc, const llvm::Twine &Msg) const {
  unsigned Line = 1, Col = 1;
  if (Loc.isValid() && SM.FindBufferContainingLoc(Loc) != 0)
    std::tie(Line, Col) = SM.getLineAndColumn(Loc);
  return makeError(
      llvm::formatv("{0}:{1}:{2}: {3}", From.DisplayName, Line, Col, Msg.str())
          .str());
}

llvm::SMLoc FileParser::locOf(const yaml::Node *N) const {
  const llvm::SMLoc Start = N->getSourceRange().Start;
  if (!Start.isValid() ||
      !(llvm::isa<yaml::SequenceNode>(N) || llvm::isa<yaml::MappingNode>(N)))
    return Start;
  // LLVM starts a flow collection at the token after its bracket; point at
  // the bracket itself, the thing the message is about. (Only a flow
  // collection can follow an opening bracket; block ones start at their
  // first '-' or key.)
  const char *P = Start.getPointer();
  while (P > Text.begin() &&
         (P[-1] == ' ' || P[-1] == '\t' || P[-1] == '\n' || P[-1] == '\r'))
    --P;
  if (P > Text.begin() && (P[-1] == '[' || P[-1] == '{'))
    return llvm::SMLoc::getFromPointer(P - 1);
  return Start;
}

llvm::Error FileParser::diagError() const { return makeError(*Diag); }

llvm::Error FileParser::checkText() const {
  const auto Fail = [&](size_t Offset, const llvm::Twine &Msg) {
    const auto [Line, Col] = lineColumnOf(Text, Offset);
    return makeError(llvm::formatv("{0}:{1}:{2}: {3}", From.DisplayName, Line,
                                   Col, Msg.str()));
  };
  if (Text.size() > MaxFileBytes)
    return Fail(0, llvm::formatv("file is {0} bytes, too large for a hardware "
                                 "description; the limit is {1} bytes",
                                 Text.size(), MaxFileBytes));
  const size_t Nul = Text.find('\0');
  if (Nul != llvm::StringRef::npos)
    return Fail(Nul, "file contains a NUL byte, so it is not text; hardware "
                     "descriptions are UTF-8 YAML files");
  const auto *Begin = reinterpret_cast<const llvm::UTF8 *>(Text.data());
  const llvm::UTF8 *Pos = Begin;
  if (!llvm::isLegalUTF8String(&Pos, Begin + Text.size()))
    return Fail(Pos - Begin, "file is not valid UTF-8 text; hardware "
                             "descriptions are UTF-8 YAML files");
  return llvm::Error::success();
}

llvm::Expected<Parsed> FileParser::parse(llvm::Optional<EntryKind> Expect,
                                         llvm::StringRef ExpectWhy) {
  if (llvm::Error E = checkText())
    return E;
  SM.setDiagHandler(&FileParser::onDiag, this);
  yaml::Stream Stream(Text, SM, /*ShowColors=*/false);
  yaml::document_iterator Doc = Stream.begin();
  yaml::Node *Root = Doc == Stream.end() ? nullptr : Doc->getRoot();
  llvm::Expected<Parsed> Result = parseRoot(Root, Expect, ExpectWhy);
  if (Diag) {
    llvm::consumeError(Result.takeError());
    return diagError();
  }
  if (!Result)
    return Result.takeError();
  // The root has been consumed completely, so moving on to look for a
  // second document skips nothing deep.
  ++Doc;
  if (Doc != Stream.end()) {
    yaml::Node *Next = Doc->getRoot();
    if (Diag)
      return diagError();
    if (Next && !llvm::isa<yaml::NullNode>(Next))
      return errorAt(Next, "a second YAML document ('---') follows; a file "
                           "holds one description, so move it to its own "
                           "file");
  }
  if (Diag)
    return diagError();
  return Result;
}

llvm::Expected<llvm::StringRef>
FileParser::scalar(yaml::Node *N, llvm::StringRef Key, llvm::StringRef Example,
                   llvm::SmallVectorImpl<char> &Storage) {
  if (auto *S = llvm::dyn_cast<yaml::ScalarNode>(N))
    return S->getValue(Storage);
  if (auto *B = llvm::dyn_cast<yaml::BlockScalarNode>(N))
    return B->getValue();
  return errorAt(N, llvm::formatv("'{0}' must be a single value, not {1}; "
                                  "write e.g. '{0}: {2}'",
                                  Key, describe(N), Example));
}

llvm::Expected<std::string> FileParser::text(yaml::Node *N, llvm::StringRef Key,
                                             llvm::StringRef Example) {
  llvm::SmallString<64> Storage;
  auto S = scalar(N, Key, Example, Storage);
  if (!S)
    return S.takeError();
  const llvm::StringRef T = S->trim();
  if (T.empty())
    return errorAt(N, llvm::formatv("'{0}' is empty; write e.g. '{0}: {1}'",
                                    Key, Example));
  return T.str();
}

llvm::Expected<std::string> FileParser::identifier(yaml::Node *N,
                                                   llvm::StringRef Key) {
  auto T = text(N, Key, "a100-sxm4-80gb");
  if (!T)
    return T.takeError();
  // Names are typed on command lines and told apart from paths by the
  // absence of '/' and of a .yaml suffix.
  for (char C : *T)
    if (!llvm::isAlnum(C) && C != '-' && C != '_' && C != '.' && C != '+')
      return errorAt(N, llvm::formatv("{0} '{1}' contains '{2}'; names use "
                                      "only letters, digits, '-', '_', '.' "
                                      "and '+'",
                                      Key, *T, C));
  if (isPathLike(*T))
    return errorAt(N, llvm::formatv("{0} '{1}' ends like a file name; drop "
                                    "the .yaml suffix",
                                    Key, *T));
  return T;
}

/// A figure of kind Q, for messages that show how to write one.
llvm::StringRef exampleOf(Quantity Q) {
  switch (Q) {
  case Quantity::Throughput:
    return "312 TFLOPS";
  case Quantity::Work:
    return "1 GFLOP";
  case Quantity::Bandwidth:
    return "2039 GB/s";
  case Quantity::Capacity:
    return "80 GB";
  case Quantity::Time:
    return "5 us";
  case Quantity::Frequency:
    return "1410 MHz";
  case Quantity::Bits:
    return "512 bits";
  }
  return "2039 GB/s";
}

llvm::Expected<Measure> FileParser::quantity(yaml::Node *N, llvm::StringRef Key,
                                             Quantity Q) {
  llvm::SmallString<32> Storage;
  auto S = scalar(N, Key, exampleOf(Q), Storage);
  if (!S)
    return S.takeError();
  auto M = parseQuantity(*S, Q);
  if (!M)
    return errorAt(N, "'" + Key + "': " + llvm::toString(M.takeError()));
  // The unit points into Storage, which dies here.
  M->Unit = llvm::StringRef();
  return M;
}

llvm::Expected<double> FileParser::fraction(yaml::Node *N,
                                            llvm::StringRef Key) {
  llvm::SmallString<32> Storage;
  auto S = scalar(N, Key, "0.8", Storage);
  if (!S)
    return S.takeError();
  auto F = parseFraction(*S);
  if (!F)
    return errorAt(N, "'" + Key + "': " + llvm::toString(F.takeError()));
  return F;
}

llvm::Expected<unsigned> FileParser::count(yaml::Node *N, llvm::StringRef Key,
                                           bool AllowZero) {
  llvm::SmallString<32> Storage;
  auto S = scalar(N, Key, "8", Storage);
  if (!S)
    return S.takeError();
  auto C = parseCount(*S, AllowZero);
  if (!C)
    return errorAt(N, "'" + Key + "': " + llvm::toString(C.takeError()));
  return C;
}

llvm::Error FileParser::expectSequence(yaml::Node *N, llvm::StringRef Key,
                                       llvm::StringRef Example) {
  if (llvm::isa<yaml::SequenceNode>(N))
    return llvm::Error::success();
  return errorAt(N, llvm::formatv("'{0}' must be a list, not {1}; write e.g. "
                                  "'{0}: {2}'",
                                  Key, describe(N), Example));
}

llvm::Error FileParser::walkMapping(yaml::Node *N, llvm::StringRef What,
                                    llvm::ArrayRef<KeySpec> Keys,
                                    KeyHandler OnKey) {
  auto *M = llvm::dyn_cast<yaml::MappingNode>(N);
  if (!M)
    return errorAt(N, llvm::formatv("{0} must be a mapping of 'key: value' "
                                    "entries, not {1}; see hwdb/README.md",
                                    What, describe(N)));
  llvm::StringMap<llvm::SMLoc> Seen;
  for (yaml::KeyValueNode &KV : *M) {
    yaml::Node *K = KV.getKey();
    if (Diag || !K)
      return Diag ? diagError()
                  : errorAt(M, "invalid YAML: an entry without a key; write "
                               "'key: value'");
    auto *KS = llvm::dyn_cast<yaml::ScalarNode>(K);
    if (!KS)
      return errorAt(K, llvm::formatv("keys in {0} must be plain words, not "
                                      "{1}; write 'key: value'",
                                      What, describe(K)));
    llvm::SmallString<32> KeyStorage;
    const llvm::StringRef Key = KS->getValue(KeyStorage);
    const llvm::SMLoc KeyLoc = KS->getSourceRange().Start;
    const KeySpec *Spec =
        llvm::find_if(Keys, [&](const KeySpec &S) { return S.Name == Key; });
    if (Spec == Keys.end()) {
      std::vector<llvm::StringRef> Names;
      for (const KeySpec &S : Keys)
        Names.push_back(S.Name);
      return errorAt(KeyLoc, llvm::formatv("unknown key '{0}' in {1}; {2}the "
                                           "known keys are {3}",
                                           Key, What, didYouMean(Key, Names),
                                           joined(Names)));
    }
    const auto [It, Inserted] = Seen.try_emplace(Key, KeyLoc);
    if (!Inserted)
      return errorAt(KeyLoc,
                     llvm::formatv("duplicate key '{0}' in {1} (first "
                                   "at line {2}); keep only one",
                                   Key, What,
                                   SM.getLineAndColumn(It->second).first));
    yaml::Node *V = KV.getValue();
    if (Diag)
      return diagError();
    if (!V || llvm::isa<yaml::NullNode>(V))
      return errorAt(KeyLoc, llvm::formatv("'{0}' has no value; write e.g. "
                                           "'{0}: {1}'",
                                           Key, Spec->Example));
    if (llvm::isa<yaml::AliasNode>(V))
      return errorAt(V, llvm::formatv("'{0}' is an alias (*name); aliases "
                                      "are not supported, write the value "
                                      "out",
                                      Key));
    if (llvm::Error E = OnKey(Key, KeyLoc, V))
      return E;
  }
  if (Diag)
    return diagError();
  for (const KeySpec &S : Keys)
    if (S.Required && !Seen.count(S.Name))
      return errorAt(M, llvm::formatv("{0} is missing the required key '{1}'; "
                                      "add e.g. '{1}: {2}'",
                                      What, S.Name, S.Example));
  return llvm::Error::success();
}

/// Walks the items of a list, stopping at the first error.
template <typename Fn> llvm::Error forEachItem(yaml::Node *N, Fn &&F) {
  auto *Seq = llvm::cast<yaml::SequenceNode>(N);
  for (yaml::Node &Item : *Seq)
    if (llvm::Error E = F(&Item))
      return E;
  return llvm::Error::success();
}

//===-- Root -------------------------------------------------------------===//

llvm::Expected<Parsed> FileParser::parseRoot(yaml::Node *Root,
                                             llvm::Optional<EntryKind> Expect,
                                             llvm::StringRef ExpectWhy) {
  if (Diag)
    return diagError();
  if (!Root || llvm::isa<yaml::NullNode>(Root))
    return errorAt(llvm::SMLoc(),
                   "file is empty; a hardware description is a mapping "
                   "with one top-level key, 'device:', 'link:' or "
                   "'cluster:' (see hwdb/README.md)");
  if (!llvm::isa<yaml::MappingNode>(Root))
    return errorAt(Root, llvm::formatv("the file holds {0}; a hardware "
                                       "description is a mapping with one "
                                       "top-level key, 'device:', 'link:' or "
                                       "'cluster:'",
                                       describe(Root)));
  Parsed P;
  llvm::Optional<llvm::StringRef> First;
  llvm::SMLoc FirstLoc;
  const KeySpec Keys[] = {{"device", false, "{name: ..., kind: gpu, ...}"},
                          {"link", false, "{name: ..., kind: nvlink, ...}"},
                          {"cluster", false, "{name: ..., nodes: [...]}"}};
  llvm::Error E = walkMapping(
      Root, "the top level", Keys,
      [&](llvm::StringRef Key, llvm::SMLoc Loc, yaml::Node *V) -> llvm::Error {
        if (First)
          return errorAt(Loc, llvm::formatv("'{0}' follows '{1}'; a file "
                                            "describes one thing, so move "
                                            "'{0}' to its own file",
                                            Key, *First));
        First = Key == "device" ? "device" : Key == "link" ? "link" : "cluster";
        FirstLoc = Loc;
        const EntryKind K = Key == "device" ? EntryKind::Device
                            : Key == "link" ? EntryKind::Link
                                            : EntryKind::Cluster;
        if (Expect && *Expect != K)
          return errorAt(Loc, llvm::formatv("this file describes a {0}, but "
                                            "{1} needs a {2}; refer to a {2} "
                                            "file instead",
                                            name(K), ExpectWhy, name(*Expect)));
        P.Kind = K;
        if (K == EntryKind::Device) {
          auto D = parseDevice(V);
          if (!D)
            return D.takeError();
          P.Dev = std::make_shared<const Device>(std::move(*D));
        } else if (K == EntryKind::Link) {
          auto L = parseLink(V, /*AllowBase=*/false);
          if (!L)
            return L.takeError();
          P.TheLink = std::move(*L);
        } else {
          auto C = parseCluster(V);
          if (!C)
            return C.takeError();
          P.TheCluster = std::move(*C);
        }
        return llvm::Error::success();
      });
  if (E)
    return E;
  if (!First)
    return errorAt(Root, "the file has no 'device:', 'link:' or 'cluster:' "
                         "key; start the description with one of them");
  // Bundled names are what users type, so they must match the file names
  // that listBundled and loadHardware go by.
  if (From.Bundled) {
    const llvm::StringRef Declared = P.Dev       ? P.Dev->Name
                                     : P.TheLink ? P.TheLink->Name
                                                 : P.TheCluster->Name;
    if (Declared != From.BundledName)
      return errorAt(FirstLoc, llvm::formatv("the description is named '{0}' "
                                             "but the file is '{1}.yaml'; "
                                             "rename one so they match",
                                             Declared, From.BundledName));
  }
  return P;
}

//===-- Devices ----------------------------------------------------------===//

llvm::Expected<Device> FileParser::parseDevice(yaml::Node *N) {
  Device D;
  llvm::SMLoc MemoryLoc;
  static const KeySpec Keys[] = {
      {"name", true, "a100-sxm4-80gb"},
      {"kind", true, "gpu"},
      {"vendor", false, "NVIDIA"},
      {"description", false, "NVIDIA A100 SXM4 80GB"},
      {"cores", false, "108"},
      {"clock", false, "1410 MHz"},
      {"simd_width", false, "512 bits"},
      {"fma_units", false, "2"},
      {"gemm_tile", false, "[128, 128]"},
      {"compute", true, "{vector: {fp32: 19.5 TFLOPS}}"},
      {"memory", true,
       "[{name: HBM2e, capacity: 80 GB, bandwidth: 2039 GB/s}]"},
      {"launch_overhead", true, "5 us"},
      {"efficiency", true, "{default: {compute: 0.5, memory: 0.8}}"},
      {"winograd_tile", false, "2"},
      {"matrix_conv_layout", false, "nhwc"},
      {"supports", false, "{op_classes: [conv, gemm], dtypes: [int8, fp16]}"},
      {"sources", false, "[{url: https://..., gives: peak FLOPS}]"},
  };
  llvm::Error E = walkMapping(
      N, "device", Keys,
      [&](llvm::StringRef Key, llvm::SMLoc, yaml::Node *V) -> llvm::Error {
        if (Key == "name") {
          auto S = identifier(V, Key);
          if (!S)
            return S.takeError();
          D.Name = std::move(*S);
        } else if (Key == "kind") {
          auto S = text(V, Key, "gpu");
          if (!S)
            return S.takeError();
          const llvm::StringRef Kinds[] = {"gpu", "cpu", "npu", "dsp"};
          const auto *It = llvm::find(Kinds, *S);
          if (It == std::end(Kinds))
            return errorAt(V, llvm::formatv("unknown device kind '{0}'; {1}"
                                            "use one of gpu, cpu, npu, dsp",
                                            *S, didYouMean(*S, Kinds)));
          D.Kind = static_cast<DeviceKind>(It - std::begin(Kinds));
        } else if (Key == "vendor" || Key == "description") {
          auto S = text(V, Key, Key == "vendor" ? "NVIDIA" : "...");
          if (!S)
            return S.takeError();
          (Key == "vendor" ? D.Vendor : D.Description) = std::move(*S);
        } else if (Key == "cores" || Key == "fma_units") {
          auto C = count(V, Key, /*AllowZero=*/false);
          if (!C)
            return C.takeError();
          (Key == "cores" ? D.Cores : D.FmaUnits) = *C;
        } else if (Key == "clock") {
          auto M = quantity(V, Key, Quantity::Frequency);
          if (!M)
            return M.takeError();
          D.ClockHz = M->Value;
        } else if (Key == "simd_width") {
          auto M = quantity(V, Key, Quantity::Bits);
          if (!M)
            return M.takeError();
          D.SimdWidthBits = static_cast<unsigned>(std::min(M->Value, 1e6));
        } else if (Key == "gemm_tile") {
          auto *Seq = llvm::dyn_cast<yaml::SequenceNode>(V);
          llvm::SmallVector<unsigned, 2> Dims;
          if (Seq)
            for (yaml::Node &Item : *Seq) {
              auto C = count(&Item, Key, /*AllowZero=*/false);
              if (!C)
                return C.takeError();
              Dims.push_back(*C);
            }
          if (Dims.size() != 2)
            return errorAt(V, "'gemm_tile' must be a list of two positive "
                              "counts, rows and columns, e.g. [128, 128]");
          D.GemmTileM = Dims[0];
          D.GemmTileN = Dims[1];
        } else if (Key == "compute") {
          return parseCompute(V, D);
        } else if (Key == "memory") {
          MemoryLoc = V->getSourceRange().Start;
          return parseMemory(V, D);
        } else if (Key == "launch_overhead") {
          auto M = quantity(V, Key, Quantity::Time);
          if (!M)
            return M.takeError();
          D.LaunchOverheadSeconds = M->Value;
        } else if (Key == "winograd_tile") {
          auto C = count(V, Key, /*AllowZero=*/false);
          if (!C)
            return C.takeError();
          if (*C > 6)
            return errorAt(V, "'winograd_tile' is the output tile m of "
                              "F(m x m, 3x3), 1 to 6 (larger tiles lose "
                              "accuracy; libraries use 2 or 4)");
          D.WinogradTile = *C;
        } else if (Key == "matrix_conv_layout") {
          auto S = text(V, Key, "nhwc");
          if (!S)
            return S.takeError();
          auto L = parseConvLayout(*S);
          if (!L)
            return errorAt(V, llvm::formatv("unknown layout '{0}' for "
                                            "'matrix_conv_layout'; use nchw, "
                                            "nhwc or native",
                                            *S));
          D.MatrixConvLayout = *L;
        } else if (Key == "efficiency") {
          return parseEfficiency(V, D);
        } else if (Key == "supports") {
          return parseSupports(V, D);
        } else if (Key == "sources") {
          return parseSources(V, D.Sources);
        }
        return llvm::Error::success();
      });
  if (E)
    return E;
  if (D.mainMemory().BandwidthBytesPerSecond <= 0)
    return errorAt(MemoryLoc,
                   llvm::formatv("main memory '{0}' (the first memory level) "
                                 "has no bandwidth; add e.g. 'bandwidth: 2039 "
                                 "GB/s' (caches may omit it, main memory may "
                                 "not)",
                                 D.mainMemory().Name));
  return D;
}

/// DType keys of `compute`; "fp8" stands for both fp8 encodings, which
/// every current accelerator runs at the same rate.
llvm::SmallVector<ir::DType, 2> parseDTypeKey(llvm::StringRef Key) {
  if (Key == "fp8")
    return {ir::DType::F8E4M3, ir::DType::F8E5M2};
  if (auto T = ir::parseDType(Key))
    if (*T != ir::DType::Bool && *T != ir::DType::String &&
        *T != ir::DType::C64 && *T != ir::DType::C128)
      return {*T};
  return {};
}

const llvm::StringRef DTypeKeys[] = {
    "fp64", "fp32",  "tf32",  "fp16",   "bf16",  "fp8",    "fp8e4m3", "fp8e5m2",
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",   "uint64"};

llvm::Error FileParser::parseCompute(yaml::Node *N, Device &D) {
  static const KeySpec Units[] = {
      {"tensor", false, "{fp16: 312 TFLOPS}"},
      {"matrix", false, "{bf16: 1307 TFLOPS}"},
      {"vector", false, "{fp32: 19.5 TFLOPS}"},
      {"simd", false, "{fp32: 2.1 TFLOPS}"},
  };
  if (llvm::Error E = walkMapping(
          N, "compute", Units,
          [&](llvm::StringRef UnitName, llvm::SMLoc UnitLoc,
              yaml::Node *V) -> llvm::Error {
            ComputeUnit U;
            U.Kind =
                static_cast<UnitKind>(llvm::find_if(Units,
                                                    [&](const KeySpec &S) {
                                                      return S.Name == UnitName;
                                                    }) -
                                      std::begin(Units));
            auto *M = llvm::dyn_cast<yaml::MappingNode>(V);
            if (!M)
              return errorAt(V, llvm::formatv("compute unit '{0}' must map "
                                              "element types to peaks, not "
                                              "be {1}; write e.g. '{0}: "
                                              "{{fp16: 312 TFLOPS}'",
                                              UnitName, describe(V)));
            for (yaml::KeyValueNode &KV : *M) {
              yaml::Node *K = KV.getKey();
              if (Diag || !K)
                return Diag ? diagError()
                            : errorAt(M, "invalid YAML: an entry without a "
                                         "key; write 'key: value'");
              llvm::SmallString<16> KeyStorage;
              auto Key = scalar(K, "element type", "fp16", KeyStorage);
              if (!Key)
                return Key.takeError();
              const auto Types = parseDTypeKey(*Key);
              if (Types.empty()) {
                if (*Key == "int4" || *Key == "uint4")
                  return errorAt(
                      K, llvm::formatv("'{0}' cannot be expressed: perfc's "
                                       "IR has no 4-bit types yet; leave "
                                       "this peak out",
                                       *Key));
                return errorAt(K, llvm::formatv("unknown element type '{0}' in "
                                                "compute unit '{1}'; {2}use "
                                                "one of {3}",
                                                *Key, UnitName,
                                                didYouMean(*Key, DTypeKeys),
                                                joined(DTypeKeys)));
              }
              for (ir::DType T : Types)
                if (U.peak(T))
                  return errorAt(
                      K, llvm::formatv("duplicate element type '{0}' in "
                                       "compute unit '{1}' ('fp8' covers "
                                       "fp8e4m3 and fp8e5m2); keep only one",
                                       ir::name(T), UnitName));
              yaml::Node *PV = KV.getValue();
              if (Diag)
                return diagError();
              if (!PV || llvm::isa<yaml::NullNode>(PV))
                return errorAt(K, llvm::formatv("'{0}' has no value; write "
                                                "e.g. '{0}: 312 TFLOPS'",
                                                *Key));
              auto Peak = quantity(PV, *Key, Quantity::Throughput);
              if (!Peak)
                return Peak.takeError();
              // An integer peak in FLOPS (or a float one in OPS) is most
              // often a line copied from the wrong row of a datasheet.
              const bool IntType = ir::isInteger(Types.front());
              if (Peak->CountsOps != IntType)
                return errorAt(
                    PV,
                    llvm::formatv("{0} peak is given in {1}; {0} throughput is "
                                  "counted in {2}, e.g. '{0}: {3}'",
                                  *Key, IntType ? "FLOPS" : "OPS",
                                  IntType ? "operations (OPS, TOPS)"
                                          : "floating-point operations (FLOPS)",
                                  IntType ? "624 TOPS" : "312 TFLOPS"));
              for (ir::DType T : Types)
                U.Peaks.emplace_back(T, Peak->Value);
            }
            if (Diag)
              return diagError();
            if (U.Peaks.empty())
              return errorAt(UnitLoc, llvm::formatv("compute unit '{0}' lists "
                                                    "no element types; add "
                                                    "e.g. 'fp32: 19.5 TFLOPS'",
                                                    UnitName));
            D.Units.push_back(std::move(U));
            return llvm::Error::success();
          }))
    return E;
  if (D.Units.empty())
    return errorAt(N, "'compute' lists no units; add e.g. 'vector: {fp32: "
                      "19.5 TFLOPS}'");
  return llvm::Error::success();
}

llvm::Error FileParser::parseMemory(yaml::Node *N, Device &D) {
  if (llvm::Error E = expectSequence(
          N, "memory",
          "[{name: HBM2e, capacity: 80 GB, bandwidth: 2039 GB/s}]"))
    return E;
  static const KeySpec Keys[] = {
      {"name", true, "HBM2e"},
      {"capacity", true, "80 GB"},
      {"bandwidth", false, "2039 GB/s"},
  };
  if (llvm::Error E = forEachItem(N, [&](yaml::Node *Item) -> llvm::Error {
        MemoryLevel L;
        if (llvm::Error E = walkMapping(
                Item, "memory level", Keys,
                [&](llvm::StringRef Key, llvm::SMLoc,
                    yaml::Node *V) -> llvm::Error {
                  if (Key == "name") {
                    auto S = text(V, Key, "HBM2e");
                    if (!S)
                      return S.takeError();
                    L.Name = std::move(*S);
                    return llvm::Error::success();
                  }
                  const bool Cap = Key == "capacity";
                  auto M = quantity(
                      V, Key, Cap ? Quantity::Capacity : Quantity::Bandwidth);
                  if (!M)
                    return M.takeError();
                  (Cap ? L.CapacityBytes : L.BandwidthBytesPerSecond) =
                      M->Value;
                  return llvm::Error::success();
                }))
          return E;
        D.Memory.push_back(std::move(L));
        return llvm::Error::success();
      }))
    return E;
  if (Diag)
    return diagError();
  if (D.Memory.empty())
    return errorAt(N, "'memory' is empty; list main memory first, e.g. "
                      "'- {name: HBM2e, capacity: 80 GB, bandwidth: 2039 "
                      "GB/s}'");
  return llvm::Error::success();
}

llvm::Expected<EfficiencyCurve>
FileParser::parseCurve(yaml::Node *N, llvm::StringRef Key, Quantity Q) {
  EfficiencyCurve C;
  if (!llvm::isa<yaml::SequenceNode>(N)) {
    auto F = fraction(N, Key);
    if (!F)
      return F.takeError();
    C.Constant = *F;
    return C;
  }
  const llvm::StringRef Example = Q == Quantity::Work
                                      ? "[[1 GFLOP, 0.3], [1 TFLOP, 0.8]]"
                                      : "[[1 MB, 0.3], [1 GB, 0.85]]";
  if (llvm::Error E = forEachItem(N, [&](yaml::Node *Item) -> llvm::Error {
        auto *Pair = llvm::dyn_cast<yaml::SequenceNode>(Item);
        if (!Pair)
          return errorAt(Item, llvm::formatv("a point of the '{0}' curve must "
                                             "be a pair [size, efficiency], "
                                             "not {1}; write e.g. '{0}: {2}'",
                                             Key, describe(Item), Example));
        llvm::SmallVector<yaml::Node *, 2> Parts;
        for (yaml::Node &Part : *Pair) {
          if (Parts.size() == 2)
            return errorAt(&Part, llvm::formatv("a point of the '{0}' curve "
                                                "has more than two values; "
                                                "write [size, efficiency]",
                                                Key));
          // Each part is read as it is reached: iterating on would skip it.
          if (Parts.empty()) {
            auto Size = quantity(&Part, Key, Q);
            if (!Size)
              return Size.takeError();
            if (!C.Points.empty() && Size->Value <= C.Points.back().first)
              return errorAt(&Part, llvm::formatv("the points of the '{0}' "
                                                  "curve must grow in size; "
                                                  "sort them ascending",
                                                  Key));
            C.Points.emplace_back(Size->Value, 0);
          } else {
            auto F = fraction(&Part, Key);
            if (!F)
              return F.takeError();
            C.Points.back().second = *F;
          }
          Parts.push_back(&Part);
        }
        if (Diag)
          return diagError();
        if (Parts.size() != 2)
          return errorAt(Item, llvm::formatv("a point of the '{0}' curve "
                                             "needs two values; write "
                                             "[size, efficiency]",
                                             Key));
        return llvm::Error::success();
      }))
    return E;
  if (Diag)
    return diagError();
  if (C.Points.size() < 2)
    return errorAt(N, llvm::formatv("the '{0}' curve needs at least two "
                                    "points, or use a single fraction; "
                                    "write e.g. '{0}: {1}'",
                                    Key, Example));
  C.Constant = C.Points.back().second;
  return C;
}

llvm::Error FileParser::parseEfficiency(yaml::Node *N, Device &D) {
  llvm::SmallVector<KeySpec, NumOpClasses + 1> Keys;
  Keys.push_back({"default", true, "{compute: 0.5, memory: 0.8}"});
  for (size_t I = 0; I < NumOpClasses; ++I)
    Keys.push_back(
        {opClassKey(static_cast<OpClass>(I)), false, "{compute: 0.75}"});
  // Not a class: a kind of conv that CPU runtimes run with other kernels.
  Keys.push_back({"depthwise_conv", false, "{compute: 0.1}"});
  struct Entry {
    llvm::Optional<EfficiencyCurve> Compute, Memory, VectorCompute;
    double SecondsPerOutput = 0;
  };
  Entry Default;
  llvm::Optional<Entry> Depthwise;
  std::array<llvm::Optional<Entry>, NumOpClasses> Classes;
  static const KeySpec DefaultKeys[] = {
      {"compute", false, "0.75"},
      {"memory", false, "0.85"},
  };
  // An op class may give its kernels on the vector units (CUDA cores
  // beside tensor cores) their own compute efficiency.
  static const KeySpec EntryKeys[] = {
      {"compute", false, "0.75"},
      {"memory", false, "0.85"},
      {"vector_compute", false, "0.9"},
  };
  // Depthwise convolutions also take a time per output element.
  static const KeySpec DepthwiseKeys[] = {
      {"compute", false, "0.75"},
      {"memory", false, "0.85"},
      {"time_per_output", false, "0.45 ns"},
  };
  if (llvm::Error E = walkMapping(
          N, "efficiency", Keys,
          [&](llvm::StringRef Class, llvm::SMLoc ClassLoc,
              yaml::Node *V) -> llvm::Error {
            Entry En;
            const std::string What =
                llvm::formatv("efficiency '{0}'", Class).str();
            const llvm::ArrayRef<KeySpec> Allowed =
                Class == "depthwise_conv" ? llvm::makeArrayRef(DepthwiseKeys)
                : Class == "default"      ? llvm::makeArrayRef(DefaultKeys)
                                          : llvm::makeArrayRef(EntryKeys);
            if (llvm::Error E = walkMapping(
                    V, What, Allowed,
                    [&](llvm::StringRef Key, llvm::SMLoc,
                        yaml::Node *EV) -> llvm::Error {
                      if (Key == "time_per_output") {
                        auto M = quantity(EV, Key, Quantity::Time);
                        if (!M)
                          return M.takeError();
                        // Zero would silently drop the term; a negative
                        // or infinite time is no time.
                        if (!(M->Value > 0) || !std::isfinite(M->Value))
                          return errorAt(EV,
                                         "'time_per_output' must be a positive "
                                         "time per output element; write e.g. "
                                         "'time_per_output: 0.45 ns', or leave "
                                         "the key out");
                        En.SecondsPerOutput = M->Value;
                        return llvm::Error::success();
                      }
                      const bool IsMemory = Key == "memory";
                      auto C = parseCurve(EV, Key,
                                          IsMemory ? Quantity::Capacity
                                                   : Quantity::Work);
                      if (!C)
                        return C.takeError();
                      (Key == "compute" ? En.Compute
                       : IsMemory       ? En.Memory
                                        : En.VectorCompute) = std::move(*C);
                      return llvm::Error::success();
                    }))
              return E;
            if (Class == "default") {
              if (!En.Compute || !En.Memory)
                return errorAt(
                    ClassLoc, llvm::formatv("efficiency 'default' needs both "
                                            "'compute' and 'memory'; add "
                                            "'{0}: 0.8'",
                                            En.Compute ? "memory" : "compute"));
              Default = std::move(En);
            } else if (Class == "depthwise_conv") {
              Depthwise = std::move(En);
            } else {
              Classes[static_cast<size_t>(*parseOpClassKey(Class))] =
                  std::move(En);
            }
            return llvm::Error::success();
          }))
    return E;
  for (size_t I = 0; I < NumOpClasses; ++I) {
    ClassEfficiency &CE = D.Efficiencies[I];
    const Entry *En = Classes[I] ? &*Classes[I] : nullptr;
    CE.Explicit = En != nullptr;
    CE.Compute = En && En->Compute ? *En->Compute : *Default.Compute;
    CE.Memory = En && En->Memory ? *En->Memory : *Default.Memory;
    if (En)
      CE.VectorCompute = En->VectorCompute;
  }
  if (Depthwise) {
    const ClassEfficiency &Conv = D.efficiency(OpClass::Conv);
    ClassEfficiency DW;
    DW.Explicit = true;
    DW.Compute = Depthwise->Compute ? *Depthwise->Compute : Conv.Compute;
    DW.Memory = Depthwise->Memory ? *Depthwise->Memory : Conv.Memory;
    D.DepthwiseConv = std::move(DW);
    D.DepthwiseSecondsPerOutput = Depthwise->SecondsPerOutput;
  }
  return llvm::Error::success();
}

llvm::Error FileParser::parseSupports(yaml::Node *N, Device &D) {
  static const KeySpec Keys[] = {
      {"op_classes", false, "[conv, gemm]"},
      {"dtypes", false, "[int8, fp16]"},
  };
  return walkMapping(
      N, "supports", Keys,
      [&](llvm::StringRef Key, llvm::SMLoc, yaml::Node *V) -> llvm::Error {
        const bool Classes = Key == "op_classes";
        if (llvm::Error E =
                expectSequence(V, Key, Keys[Classes ? 0 : 1].Example))
          return E;
        std::vector<llvm::StringRef> ClassNames;
        for (size_t I = 0; I < NumOpClasses; ++I)
          ClassNames.push_back(opClassKey(static_cast<OpClass>(I)));
        if (llvm::Error E =
                forEachItem(V, [&](yaml::Node *Item) -> llvm::Error {
                  llvm::SmallString<16> Storage;
                  auto S =
                      scalar(Item, Key, Classes ? "gemm" : "int8", Storage);
                  if (!S)
                    return S.takeError();
                  if (Classes) {
                    auto C = parseOpClassKey(*S);
                    if (!C)
                      return errorAt(
                          Item, llvm::formatv("unknown op class '{0}'; {1}use "
                                              "one of {2}",
                                              *S, didYouMean(*S, ClassNames),
                                              joined(ClassNames)));
                    D.Supports.OpClasses.push_back(*C);
                    return llvm::Error::success();
                  }
                  const auto Types = parseDTypeKey(*S);
                  if (Types.empty())
                    return errorAt(Item,
                                   llvm::formatv("unknown element type "
                                                 "'{0}'; {1}use one of {2}",
                                                 *S, didYouMean(*S, DTypeKeys),
                                                 joined(DTypeKeys)));
                  D.Supports.DTypes.append(Types.begin(), Types.end());
                  return llvm::Error::success();
                }))
          return E;
        if (Diag)
          return diagError();
        if ((Classes ? D.Supports.OpClasses.size()
                     : D.Supports.DTypes.size()) == 0)
          return errorAt(V, llvm::formatv("'{0}' is empty; list what the "
                                          "device runs or leave the key out",
                                          Key));
        return llvm::Error::success();
      });
}

llvm::Error FileParser::parseSources(yaml::Node *N, std::vector<Source> &Out) {
  if (llvm::Error E = expectSequence(N, "sources",
                                     "[{url: https://..., gives: peak FLOPS}]"))
    return E;
  static const KeySpec Keys[] = {
      {"url", false, "https://www.nvidia.com/..."},
      {"document", false, "NVIDIA A100 Tensor Core GPU Architecture, p. 36"},
      {"gives", true, "peak FLOPS per dtype"},
  };
  if (llvm::Error E = forEachItem(N, [&](yaml::Node *Item) -> llvm::Error {
        Source S;
        if (llvm::Error E =
                walkMapping(Item, "source", Keys,
                            [&](llvm::StringRef Key, llvm::SMLoc,
                                yaml::Node *V) -> llvm::Error {
                              auto T = text(V, Key, Keys[0].Example);
                              if (!T)
                                return T.takeError();
                              (Key == "url"        ? S.Url
                               : Key == "document" ? S.Document
                                                   : S.Gives) = std::move(*T);
                              return llvm::Error::success();
                            }))
          return E;
        if (S.Url.empty() == S.Document.empty())
          return errorAt(Item, "a source needs exactly one of 'url' or "
                               "'document'; name where the figures come from");
        Out.push_back(std::move(S));
        return llvm::Error::success();
      }))
    return E;
  if (Diag)
    return diagError();
  return llvm::Error::success();
}

//===-- Links ------------------------------------------------------------===//

llvm::Expected<Link> FileParser::parseLink(yaml::Node *N, bool AllowBase) {
  static const KeySpec Keys[] = {
      {"name", false, "nvlink3"},
      {"kind", false, "nvlink"},
      {"description", false, "..."},
      {"bandwidth", false, "300 GB/s"},
      {"latency", false, "1 us"},
      {"efficiency", false, "0.8"},
      {"sources", false, "[{url: https://..., gives: bandwidth}]"},
      {"base", false, "soc-shared-memory"},
  };
  llvm::ArrayRef<KeySpec> Accepted(Keys);
  if (!AllowBase)
    Accepted = Accepted.drop_back();
  Link L;
  llvm::StringMap<bool> Given;
  llvm::Optional<Link> Base;
  const llvm::StringRef Kinds[] = {"nvlink",     "nvswitch", "pcie",
                                   "infiniband", "ethernet", "shared_memory"};
  llvm::Error E = walkMapping(
      N, "link", Accepted,
      [&](llvm::StringRef Key, llvm::SMLoc, yaml::Node *V) -> llvm::Error {
        Given[Key] = true;
        if (Key == "name") {
          auto S = identifier(V, Key);
          if (!S)
            return S.takeError();
          L.Name = std::move(*S);
        } else if (Key == "kind") {
          auto S = text(V, Key, "nvlink");
          if (!S)
            return S.takeError();
          const auto *It = llvm::find(Kinds, *S);
          if (It == std::end(Kinds))
            return errorAt(V, llvm::formatv("unknown link kind '{0}'; {1}use "
                                            "one of {2}",
                                            *S, didYouMean(*S, Kinds),
                                            joined(Kinds)));
          L.Kind = static_cast<LinkKind>(It - std::begin(Kinds));
        } else if (Key == "description") {
          auto S = text(V, Key, "...");
          if (!S)
            return S.takeError();
          L.Description = std::move(*S);
        } else if (Key == "bandwidth") {
          auto M = quantity(V, Key, Quantity::Bandwidth);
          if (!M)
            return M.takeError();
          L.BandwidthBytesPerSecond = M->Value;
        } else if (Key == "latency") {
          auto M = quantity(V, Key, Quantity::Time);
          if (!M)
            return M.takeError();
          L.LatencySeconds = M->Value;
        } else if (Key == "efficiency") {
          auto F = fraction(V, Key);
          if (!F)
            return F.takeError();
          L.Efficiency = *F;
        } else if (Key == "sources") {
          return parseSources(V, L.Sources);
        } else if (Key == "base") {
          auto B = linkRef(V, Key);
          if (!B)
            return B.takeError();
          Base = std::move(*B);
        }
        return llvm::Error::success();
      });
  if (E)
    return E;
  if (!Base) {
    for (llvm::StringRef Required :
         {"name", "kind", "bandwidth", "latency", "efficiency"})
      if (!Given.count(Required))
        return errorAt(
            N, llvm::formatv("link is missing the required key '{0}'; add "
                             "e.g. '{0}: {1}'{2}",
                             Required,
                             llvm::find_if(Keys,
                                           [&](const KeySpec &S) {
                                             return S.Name == Required;
                                           })
                                 ->Example,
                             AllowBase ? " (or 'base: NAME' to start from a "
                                         "bundled link)"
                                       : ""));
    return L;
  }
  // Start from the base and apply what this mapping overrides.
  Link Result = std::move(*Base);
  if (Given.count("name"))
    Result.Name = L.Name;
  if (Given.count("kind"))
    Result.Kind = L.Kind;
  if (Given.count("description"))
    Result.Description = L.Description;
  if (Given.count("bandwidth"))
    Result.BandwidthBytesPerSecond = L.BandwidthBytesPerSecond;
  if (Given.count("latency"))
    Result.LatencySeconds = L.LatencySeconds;
  if (Given.count("efficiency"))
    Result.Efficiency = L.Efficiency;
  if (Given.count("sources"))
    Result.Sources.insert(Result.Sources.begin(), L.Sources.begin(),
                          L.Sources.end());
  return Result;
}

//===-- Clusters ---------------------------------------------------------===//

llvm::Expected<std::shared_ptr<const Device>>
FileParser::deviceRef(yaml::Node *N, llvm::StringRef Key) {
  if (llvm::isa<yaml::MappingNode>(N)) {
    auto D = parseDevice(N);
    if (!D)
      return D.takeError();
    return std::make_shared<const Device>(std::move(*D));
  }
  llvm::SmallString<64> Storage;
  auto Ref = scalar(N, Key, "a100-sxm4-80gb", Storage);
  if (!Ref)
    return Ref.takeError();
  const std::string RefName = Ref->trim().str();
  auto Src = Ctx.resolve(RefName, From, EntryKind::Device);
  if (!Src)
    return errorAt(N, llvm::toString(Src.takeError()));
  if (auto It = Ctx.Devices.find(Src->Key); It != Ctx.Devices.end())
    return It->second;
  FileParser Sub(*Src, Ctx);
  auto P = Sub.parse(
      EntryKind::Device,
      llvm::formatv("the reference at {0}:{1}", From.DisplayName,
                    SM.getLineAndColumn(N->getSourceRange().Start).first)
          .str());
  if (!P)
    return P.takeError();
  Ctx.Devices[Src->Key] = P->Dev;
  return P->Dev;
}

llvm::Expected<Link> FileParser::linkRef(yaml::Node *N, llvm::StringRef Key) {
  if (llvm::isa<yaml::MappingNode>(N))
    return parseLink(N, /*AllowBase=*/Key != "base");
  llvm::SmallString<64> Storage;
  auto Ref = scalar(N, Key, "nvlink3", Storage);
  if (!Ref)
    return Ref.takeError();
  auto Src = Ctx.resolve(Ref->trim(), From, EntryKind::Link);
  if (!Src)
    return errorAt(N, llvm::toString(Src.takeError()));
  FileParser Sub(*Src, Ctx);
  auto P = Sub.parse(
      EntryKind::Link,
      llvm::formatv("the reference at {0}:{1}", From.DisplayName,
                    SM.getLineAndColumn(N->getSourceRange().Start).first)
          .str());
  if (!P)
    return P.takeError();
  return std::move(*P->TheLink);
}

llvm::Expected<NodeGroup> FileParser::parseGroup(yaml::Node *N) {
  static const KeySpec Keys[] = {
      {"name", false, "dgx"},
      {"count", false, "64"},
      {"device", false, "a100-sxm4-80gb"},
      {"devices_per_node", false, "8"},
      {"devices", false, "[{device: orin-gpu, count: 1}]"},
      {"intra_node_link", false, "nvswitch"},
      {"inter_node_link", false, "infiniband-hdr"},
      {"nics_per_node", false, "8"},
  };
  NodeGroup G;
  llvm::StringMap<llvm::SMLoc> Given;
  llvm::Optional<unsigned> PerNode;
  llvm::Error E = walkMapping(
      N, "node group", Keys,
      [&](llvm::StringRef Key, llvm::SMLoc KeyLoc,
          yaml::Node *V) -> llvm::Error {
        Given[Key] = KeyLoc;
        if (Key == "name") {
          auto S = text(V, Key, "dgx");
          if (!S)
            return S.takeError();
          G.Name = std::move(*S);
        } else if (Key == "count" || Key == "devices_per_node" ||
                   Key == "nics_per_node") {
          auto C = count(V, Key, /*AllowZero=*/false);
          if (!C)
            return C.takeError();
          if (Key == "count")
            G.Count = *C;
          else if (Key == "nics_per_node")
            G.NicsPerNode = *C;
          else
            PerNode = *C;
        } else if (Key == "device") {
          if (Given.count("devices"))
            return errorAt(KeyLoc, "give either 'device' (with "
                                   "'devices_per_node') or 'devices', not "
                                   "both");
          auto D = deviceRef(V, Key);
          if (!D)
            return D.takeError();
          G.Devices.push_back({std::move(*D), 1});
        } else if (Key == "devices") {
          if (Given.count("device"))
            return errorAt(KeyLoc, "give either 'device' (with "
                                   "'devices_per_node') or 'devices', not "
                                   "both");
          if (llvm::Error E = expectSequence(V, Key, Keys[4].Example))
            return E;
          static const KeySpec ItemKeys[] = {
              {"device", true, "orin-gpu"},
              {"count", false, "2"},
          };
          if (llvm::Error E = forEachItem(V, [&](yaml::Node *Item) {
                NodeDevice ND;
                return walkMapping(Item, "node device", ItemKeys,
                                   [&](llvm::StringRef IKey, llvm::SMLoc,
                                       yaml::Node *IV) -> llvm::Error {
                                     if (IKey == "count") {
                                       auto C =
                                           count(IV, IKey, /*AllowZero=*/false);
                                       if (!C)
                                         return C.takeError();
                                       ND.Count = *C;
                                       if (ND.Dev)
                                         G.Devices.back().Count = *C;
                                       return llvm::Error::success();
                                     }
                                     auto D = deviceRef(IV, IKey);
                                     if (!D)
                                       return D.takeError();
                                     ND.Dev = std::move(*D);
                                     G.Devices.push_back(ND);
                                     return llvm::Error::success();
                                   });
              }))
            return E;
          if (Diag)
            return diagError();
          if (G.Devices.empty())
            return errorAt(V, "'devices' is empty; list at least one "
                              "'{device: NAME, count: N}'");
        } else {
          auto L = linkRef(V, Key);
          if (!L)
            return L.takeError();
          (Key == "intra_node_link" ? G.IntraNode : G.InterNode) =
              std::move(*L);
        }
        return llvm::Error::success();
      });
  if (E)
    return E;
  if (G.Devices.empty())
    return errorAt(N, "node group names no device; add 'device: NAME' (with "
                      "'devices_per_node: N') or a 'devices' list");
  if (PerNode) {
    if (!Given.count("device"))
      return errorAt(Given["devices_per_node"],
                     "'devices_per_node' goes with 'device'; with a "
                     "'devices' list give each entry a 'count'");
    G.Devices.front().Count = *PerNode;
  }
  if (G.devicesPerNode() > 1 && !G.IntraNode)
    return errorAt(N, llvm::formatv("a node holds {0} devices but no "
                                    "'intra_node_link' joins them; add e.g. "
                                    "'intra_node_link: nvswitch'",
                                    G.devicesPerNode()));
  if (G.InterNode && !G.NicsPerNode)
    return errorAt(Given["inter_node_link"],
                   "'inter_node_link' needs 'nics_per_node', the number of "
                   "ports each node has on it; add e.g. 'nics_per_node: 8'");
  if (!G.InterNode && G.NicsPerNode)
    return errorAt(Given["nics_per_node"],
                   "'nics_per_node' without 'inter_node_link'; add the link "
                   "or remove the count");
  return G;
}

llvm::Expected<Cluster> FileParser::parseCluster(yaml::Node *N) {
  static const KeySpec Keys[] = {
      {"name", true, "dgx-a100"},
      {"description", false, "..."},
      {"nodes", true, "[{count: 1, device: a100-sxm4-80gb, ...}]"},
      {"sources", false, "[{url: https://..., gives: topology}]"},
  };
  Cluster C;
  llvm::SMLoc NodesLoc;
  llvm::Error E = walkMapping(
      N, "cluster", Keys,
      [&](llvm::StringRef Key, llvm::SMLoc KeyLoc,
          yaml::Node *V) -> llvm::Error {
        if (Key == "name") {
          auto S = identifier(V, Key);
          if (!S)
            return S.takeError();
          C.Name = std::move(*S);
        } else if (Key == "description") {
          auto S = text(V, Key, "...");
          if (!S)
            return S.takeError();
          C.Description = std::move(*S);
        } else if (Key == "sources") {
          return parseSources(V, C.Sources);
        } else {
          NodesLoc = KeyLoc;
          if (llvm::Error E = expectSequence(V, Key, Keys[2].Example))
            return E;
          if (llvm::Error E =
                  forEachItem(V, [&](yaml::Node *Item) -> llvm::Error {
                    auto G = parseGroup(Item);
                    if (!G)
                      return G.takeError();
                    C.Groups.push_back(std::move(*G));
                    return llvm::Error::success();
                  }))
            return E;
          if (Diag)
            return diagError();
          if (C.Groups.empty())
            return errorAt(KeyLoc, "'nodes' is empty; a cluster has at least "
                                   "one node group");
        }
        return llvm::Error::success();
      });
  if (E)
    return E;
  // Devices in different nodes talk over the inter-node link.
  if (C.numNodes() > 1)
    for (const NodeGroup &G : C.Groups)
      if (!G.InterNode)
        return errorAt(NodesLoc,
                       llvm::formatv("the cluster has {0} nodes but a node "
                                     "group has no 'inter_node_link'; add "
                                     "e.g. 'inter_node_link: infiniband-hdr' "
                                     "and 'nics_per_node'",
                                     C.numNodes()));
  return C;
}

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
