//===- HwCommand.cpp - perfc hw list | show NAME | comm CLUSTER -----------===//
#include "hwdb/Loader.h"
#include "hwdb/Print.h"
#include "tools/CliCommon.h"
#include "tools/Commands.h"
#include "tools/HwComm.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <memory>

using namespace perfc;
namespace cl = llvm::cl;

namespace {

int list(llvm::raw_ostream &OS) {
  for (hw::EntryKind Kind :
       {hw::EntryKind::Device, hw::EntryKind::Link, hw::EntryKind::Cluster}) {
    OS << hw::name(Kind) << "s:\n";
    for (const hw::BundledEntry &E : hw::listBundled())
      if (E.Kind == Kind)
        OS << fmt::format("  {:<36} {}\n", E.Name, E.Summary);
  }
  return 0;
}

/// {"devices": [{"name", "path", "summary"}], "links": [...],
/// "clusters": [...]}: the list for scripts.
int listJson(llvm::raw_ostream &OS) {
  const std::vector<hw::BundledEntry> Entries = hw::listBundled();
  llvm::json::OStream J(OS, 2);
  J.object([&] {
    for (hw::EntryKind Kind :
         {hw::EntryKind::Device, hw::EntryKind::Link, hw::EntryKind::Cluster})
      J.attributeArray((hw::name(Kind) + "s").str(), [&] {
        for (const hw::BundledEntry &E : Entries)
          if (E.Kind == Kind)
            J.object([&] {
              J.attribute("name", E.Name);
              J.attribute("path", E.Path);
              J.attribute("summary", E.Summary);
            });
      });
  });
  OS << "\n";
  return 0;
}

int show(llvm::StringRef Name, llvm::raw_ostream &OS) {
  // A link is named like a device; try the kinds a name can be.
  for (const hw::BundledEntry &E : hw::listBundled())
    if (E.Name == Name && E.Kind == hw::EntryKind::Link) {
      auto L = hw::loadLink(Name);
      if (!L)
        return cli::fail(L.takeError());
      hw::printLink(*L, OS);
      return 0;
    }
  auto C = hw::loadHardware(Name);
  if (!C)
    return cli::fail(C.takeError());
  // A device file loads as a one-device cluster of that name.
  if (C->numDevices() == 1 && C->Groups.size() == 1 &&
      C->Name == C->primaryDevice().Name)
    hw::printDevice(C->primaryDevice(), OS);
  else
    hw::printCluster(*C, OS);
  return 0;
}

} // namespace

int perfc::cli::runHw(int Argc, const char *const *Argv) {
  cl::OptionCategory Category("perfc hw options");
  cl::list<std::string> Args(cl::Positional,
                             cl::desc("list | show NAME | comm CLUSTER"),
                             cl::cat(Category));
  cl::opt<std::string> Collective(
      "collective",
      cl::desc("hw comm: all-reduce (default), reduce-scatter, all-gather, "
               "all-to-all, broadcast or point-to-point"),
      cl::init("all-reduce"), cl::cat(Category));
  cl::opt<unsigned> Ranks(
      "ranks",
      cl::desc("hw comm: ranks in the group (default: every device the "
               "stride reaches)"),
      cl::init(0), cl::value_desc("N"), cl::cat(Category));
  cl::opt<unsigned> Stride(
      "stride",
      cl::desc("hw comm: ranks apart, numbered node-major (default 1; a "
               "data-parallel group of tp 8 is stride 8)"),
      cl::init(1), cl::value_desc("S"), cl::cat(Category));
  cl::list<std::string> Bytes(
      "bytes",
      cl::desc("hw comm: sizes, e.g. 8,64K,1M,8G (default: 8 B to 8 GiB by "
               "2x, as nccl-tests -b 8 -e 8G -f 2)"),
      cl::CommaSeparated, cl::value_desc("SIZE,..."), cl::cat(Category));
  cl::opt<std::string> Algorithm(
      "algorithm",
      cl::desc("hw comm: auto (default), ring, tree, hierarchical, direct or "
               "nvls"),
      cl::init("auto"), cl::cat(Category));
  cl::opt<std::string> Protocol(
      "comm-protocol",
      cl::desc("hw comm: auto (NCCL's pick), LL, LL128, Simple or alpha-beta"),
      cl::init("auto"), cl::cat(Category));
  cl::opt<bool> Explain(
      "explain", cl::desc("hw comm: each size's formula with its numbers"),
      cl::cat(Category));
  cl::opt<std::string> Format(
      "format",
      cl::desc("table (default); json with 'list' or 'comm'; yaml with "
               "'show NAME': the bundled file as is, to start a description "
               "of your own"),
      cl::value_desc("table|json|yaml"), cl::init("table"), cl::cat(Category));
  cl::HideUnrelatedOptions(Category);
  if (!parseOptions(Argc, Argv,
                    "perfc hw: the hardware database\n\n"
                    "  perfc hw list [--format json]   bundled devices, links "
                    "and clusters\n"
                    "  perfc hw show NAME [--format yaml]\n"
                    "                                  one of them, or a YAML "
                    "file, with its sources\n"
                    "  perfc hw comm CLUSTER [--collective C] [--ranks N] "
                    "[--bytes SIZES] [--format json]\n"
                    "                                  a collective's "
                    "predicted time by size, as nccl-tests prints one\n"))
    return 1;
  if (Args.empty())
    return fail("hw: expected 'list', 'show NAME' or 'comm CLUSTER' (see "
                "'perfc hw --help')");
  const cl::Option *const CommOptions[] = {
      &Collective, &Ranks,    &Stride, std::addressof(Bytes),
      &Algorithm,  &Protocol, &Explain};
  if (Args[0] != "comm")
    for (const cl::Option *O : CommOptions)
      if (O->getNumOccurrences())
        return fail("--" + O->ArgStr +
                    " is an option of 'hw comm', not of "
                    "'hw " +
                    Args[0] + "'");
  if (Args[0] == "comm") {
    if (Args.size() != 2)
      return fail("hw comm: expected one CLUSTER (a bundled name or a YAML "
                  "file; see 'perfc hw list')");
    if (Format != "table" && Format != "json")
      return fail("hw comm: --format " + Format + ": use table or json");
    cli::HwCommRequest R;
    R.Cluster = Args[1];
    R.Collective = Collective;
    R.Ranks = Ranks;
    R.Stride = Stride;
    R.Sizes.assign(Bytes.begin(), Bytes.end());
    R.Algorithm = Algorithm;
    R.Protocol = Protocol;
    R.Json = Format == "json";
    R.Explain = Explain;
    if (llvm::Error E = cli::printHwComm(R, llvm::outs()))
      return fail(std::move(E));
    return 0;
  }
  const bool List = Args[0] == "list", Show = Args[0] == "show";
  if ((List || Show) && Format != "table" && Format != (List ? "json" : "yaml"))
    return fail(llvm::formatv("hw {0}: --format {1}: use table or {2}", Args[0],
                              Format, List ? "json" : "yaml"));
  if (List && Args.size() == 1)
    return Format == "json" ? listJson(llvm::outs()) : list(llvm::outs());
  if (Show && Args.size() == 2 && Format == "yaml") {
    auto Text = hw::bundledText(Args[1]);
    if (!Text)
      return fail(Text.takeError());
    llvm::outs() << *Text;
    return 0;
  }
  if (Show && Args.size() == 2)
    return show(Args[1], llvm::outs());
  if (Args[0] == "show")
    return fail("hw show: expected one NAME or FILE (see 'perfc hw list')");
  return fail("hw: unknown command '" + Args[0] +
              "': use 'list', 'show NAME' or 'comm CLUSTER'");
}
