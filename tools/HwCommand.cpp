//===- HwCommand.cpp - perfc hw list | perfc hw show NAME -----------------===//
#include "hwdb/Loader.h"
#include "hwdb/Print.h"
#include "tools/CliCommon.h"
#include "tools/Commands.h"

#include "llvm/Support/CommandLine.h"
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
  cl::HideUnrelatedOptions(Category);
  if (!parseOptions(Argc, Argv,
                    "perfc hw: the hardware database\n\n"
                    "  perfc hw list          bundled devices, links and "
                    "clusters\n"
                    "  perfc hw show NAME     one of them, or a YAML file, "
                    "with its sources\n"))
    return 1;
  if (Args.empty())
    return fail("hw: expected 'list' or 'show NAME' (see 'perfc hw --help')");
  if (Args[0] == "list" && Args.size() == 1)
    return list(llvm::outs());
  if (Args[0] == "show" && Args.size() == 2)
    return show(Args[1], llvm::outs());
  if (Args[0] == "show")
    return fail("hw show: expected one NAME or FILE (see 'perfc hw list')");
  return fail("hw: unknown command '" + Args[0] +
              "': use 'list' or 'show NAME'");
}
