//===- FileParser.cpp - The generic YAML walk and its diagnostics ---------===//
//
// FileParser's generic parts: the mapping walk with key specs and
// closest-key suggestions, single values (text, names, quantities,
// fractions, counts), error locations and the SourceMgr diagnostics, and the
// top level of a file, which dispatches to devices, links or clusters.
//
//===----------------------------------------------------------------------===//
#include "hwdb/FileParser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

#include <algorithm>
#include <memory>

namespace yaml = llvm::yaml;

namespace perfc::hw::detail {

namespace {

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

} // namespace

llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 oneLine(Msg.str()));
}

namespace {

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

} // namespace

std::string didYouMean(llvm::StringRef Word,
                       llvm::ArrayRef<llvm::StringRef> Candidates) {
  // A short name ("a100") is far in edit distance from the full ones
  // ("a100-sxm4-80gb") but is their prefix, and that says more than a
  // near miss does ("b200" is two edits from "a100").
  std::vector<std::string> Prefixed;
  for (llvm::StringRef C : Candidates)
    if (!Word.empty() && C.startswith(Word) && Prefixed.size() < 4)
      Prefixed.push_back(("'" + C + "'").str());
  if (Prefixed.size() == 1)
    return "did you mean " + Prefixed.front() + "? ";
  if (!Prefixed.empty())
    return "did you mean one of " +
           llvm::join(Prefixed.begin(), Prefixed.end(), ", ") + "? ";
  const llvm::StringRef Best = closest(Word, Candidates);
  if (!Best.empty())
    return llvm::formatv("did you mean '{0}'? ", Best).str();
  return "";
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

bool isPathLike(llvm::StringRef Ref) {
  return Ref.contains('/') || Ref.contains('\\') || Ref.endswith(".yaml") ||
         Ref.endswith(".yml");
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

namespace {

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

} // namespace

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

llvm::Expected<bool> FileParser::flag(yaml::Node *N, llvm::StringRef Key) {
  llvm::SmallString<8> Storage;
  auto S = scalar(N, Key, "true", Storage);
  if (!S)
    return S.takeError();
  if (*S == "true")
    return true;
  if (*S == "false")
    return false;
  return errorAt(
      N, llvm::formatv("'{0}': expected true or false, got '{1}'", Key, *S));
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

} // namespace perfc::hw::detail
