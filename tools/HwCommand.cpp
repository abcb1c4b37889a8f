//===- HwCommand.cpp - perfc hw list | perfc hw show NAME -----------------===//
#include "hwdb/Loader.h"
#include "hwdb/Print.h"
#include "tools/CliCommon.h"
#include "tools/Commands.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

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
  cl::list<std::string> Args(cl::Positional, cl::desc("list | show NAME"),
                             cl::cat(Category));
  cl::opt<std::string> Format(
      "format",
      cl::desc("table (default); json with 'list'; yaml with 'show NAME': "
               "the bundled file as is, to start a description of your own"),
      cl::value_desc("table|json|yaml"), cl::init("table"), cl::cat(Category));
  cl::HideUnrelatedOptions(Category);
  if (!parseOptions(Argc, Argv,
                    "perfc hw: the hardware database\n\n"
                    "  perfc hw list [--format json]   bundled devices, links "
                    "and clusters\n"
                    "  perfc hw show NAME [--format yaml]\n"
                    "                                  one of them, or a YAML "
                    "file, with its sources\n"))
    return 1;
  if (Args.empty())
    return fail("hw: expected 'list' or 'show NAME' (see 'perfc hw --help')");
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
              "': use 'list' or 'show NAME'");
}
