//===- perfc.cpp - The perfc command-line tool ----------------------------===//
//
// A thin shell: parses options, calls the library, prints the Report.
// Every failure is one line on stderr, "perfc: error: ...", and exit 1.
//
//===----------------------------------------------------------------------===//
#include "frontend/OnnxImport.h"
#include "passes/Predict.h"
#include "perfc/Version.h"
#include "tools/ReportWriters.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace perfc;
namespace cl = llvm::cl;

namespace {

int fail(const llvm::Twine &Msg) {
  llvm::WithColor::error(llvm::errs(), "perfc") << Msg << "\n";
  return 1;
}

int fail(llvm::Error E) { return fail(llvm::toString(std::move(E))); }

/// Prints at most a few warnings on stderr; the JSON has them all.
void printWarnings(llvm::StringRef File, const std::vector<Warning> &Ws) {
  constexpr size_t Shown = 5;
  for (size_t I = 0; I < Ws.size() && I < Shown; ++I) {
    auto &OS = llvm::WithColor::warning(llvm::errs(), "perfc");
    OS << File << ": ";
    if (!Ws[I].Node.empty())
      OS << "node '" << Ws[I].Node << "': ";
    OS << Ws[I].Message << "\n";
  }
  if (Ws.size() > Shown)
    llvm::WithColor::warning(llvm::errs(), "perfc")
        << File << ": " << (Ws.size() - Shown)
        << " more warnings (see the JSON output)\n";
}

llvm::Expected<std::vector<std::pair<std::string, int64_t>>>
parseDims(const std::vector<std::string> &Specs) {
  std::vector<std::pair<std::string, int64_t>> Dims;
  for (const std::string &Spec : Specs) {
    auto [Name, Value] = llvm::StringRef(Spec).split('=');
    int64_t V = 0;
    if (Name.empty() || Value.getAsInteger(10, V) || V <= 0)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--dim '" + Spec + "': expected NAME=VALUE with a positive integer");
    Dims.emplace_back(Name.str(), V);
  }
  return Dims;
}

std::vector<TensorInfo> describe(llvm::ArrayRef<ir::Value *> Values) {
  std::vector<TensorInfo> Out;
  for (const ir::Value *V : Values)
    Out.push_back(
        {V->name().str(), ir::name(V->type()).str(), V->shape().str()});
  return Out;
}

} // namespace

int main(int Argc, char **Argv) {
  llvm::InitLLVM X(Argc, Argv);

  // Options are locals: LLVM's cl registers them on construction, and the
  // tool keeps no global state.
  cl::OptionCategory Category("perfc options");
  cl::opt<std::string> ModelPath(cl::Positional, cl::desc("<model.onnx>"),
                                 cl::cat(Category));
  cl::opt<std::string> Hw("hw",
                          cl::desc("Hardware: a YAML file or a bundled name "
                                   "(see 'perfc hw list')"),
                          cl::value_desc("HW"), cl::cat(Category));
  cl::opt<int64_t> Batch(
      "batch", cl::desc("Set the first dimension of every model input"),
      cl::value_desc("N"), cl::cat(Category));
  cl::list<std::string> DimSpecs(
      "dim", cl::desc("Bind a symbolic dimension (repeatable)"),
      cl::value_desc("NAME=VALUE"), cl::cat(Category));
  // A plain string, checked below: cl's enum parser prints its own
  // two-line error straight to errs().
  cl::opt<std::string> OutFormat(
      "format",
      cl::desc("Output format: table (for people) or json (schema "
               "in README)"),
      cl::init("table"), cl::value_desc("table|json"), cl::cat(Category));
  cl::opt<std::string> OutputPath("o", cl::desc("Write the output to FILE"),
                                  cl::value_desc("FILE"), cl::cat(Category));
  cl::opt<unsigned> MaxOps("ops", cl::desc("Ops listed in the table (0: all)"),
                           cl::init(15), cl::value_desc("N"),
                           cl::cat(Category));
  cl::opt<bool> Explain("explain",
                        cl::desc("Show the formula behind each number"),
                        cl::cat(Category));
  cl::opt<bool> AllowUnknownShapes(
      "allow-unknown-shapes",
      cl::desc("Cost dimensions that depend on run-time values as 0 (with a "
               "warning) instead of failing"),
      cl::cat(Category));
  cl::opt<uint64_t> MaxNodes(
      "max-nodes", cl::desc("Refuse models with more nodes than this"),
      cl::init(2'000'000), cl::value_desc("N"), cl::cat(Category));

  cl::SetVersionPrinter([](llvm::raw_ostream &OS) {
    OS << "perfc " << PERFC_VERSION_STRING << " (ONNX opsets "
       << frontend::MinSupportedOpset << "-" << frontend::maxSupportedOpset()
       << ")\n";
  });
  cl::HideUnrelatedOptions(Category);
  std::string ParseErrors;
  llvm::raw_string_ostream ParseErrorStream(ParseErrors);
  if (!cl::ParseCommandLineOptions(
          Argc, Argv,
          "perfc: predicts what a deep-learning model costs on given "
          "hardware\n\n  perfc MODEL.onnx [--hw HW] [--batch N] "
          "[--dim NAME=VALUE] [--format table|json] [-o FILE]\n",
          &ParseErrorStream)) {
    ParseErrorStream.flush();
    llvm::StringRef Msg = llvm::StringRef(ParseErrors).trim();
    Msg.consume_front("perfc: ");
    return fail(Msg.split('\n').first + " (see 'perfc --help')");
  }

  if (OutFormat != "table" && OutFormat != "json")
    return fail("unknown --format '" + OutFormat + "': use 'table' or 'json'");

  if (ModelPath.empty())
    return fail("no model given: usage 'perfc MODEL.onnx [--hw HW]' (see "
                "'perfc --help')");

  frontend::ImportOptions Import;
  if (Batch.getNumOccurrences())
    Import.Batch = Batch;
  auto Dims = parseDims(DimSpecs);
  if (!Dims)
    return fail(Dims.takeError());
  Import.Dims = std::move(*Dims);
  Import.MaxNodes = MaxNodes;
  Import.AllowUnknownShapes = AllowUnknownShapes;

  auto Model = frontend::importOnnxFile(ModelPath, Import);
  if (!Model)
    return fail(Model.takeError());

  Report R = predictWork(Model->Graph);
  R.Model.Name = Model->Name;
  R.Model.Path = ModelPath;
  R.Model.GraphName = Model->GraphName;
  R.Model.Producer = Model->Producer;
  R.Model.IrVersion = Model->IrVersion;
  R.Model.Opset = Model->Opset;
  R.Model.FileBytes = Model->FileBytes;
  R.Model.WeightBytesSkipped = Model->WeightBytesSkipped;
  R.Model.Inputs = describe(Model->Graph.inputs());
  R.Model.Outputs = describe(Model->Graph.outputs());
  R.Model.Bindings = Model->Bindings;
  R.Warnings.insert(R.Warnings.begin(), Model->Warnings.begin(),
                    Model->Warnings.end());

  std::unique_ptr<llvm::ToolOutputFile> OutFile;
  llvm::raw_ostream *OS = &llvm::outs();
  if (!OutputPath.empty()) {
    std::error_code EC;
    OutFile = std::make_unique<llvm::ToolOutputFile>(OutputPath, EC,
                                                     llvm::sys::fs::OF_None);
    if (EC)
      return fail(OutputPath + ": cannot write: " + EC.message());
    OS = &OutFile->os();
  }
  if (OutFormat == "json") {
    writeReportJson(R, *OS);
  } else {
    TableOptions T;
    T.MaxOps = MaxOps;
    T.Explain = Explain;
    writeReportTable(R, T, *OS);
  }
  printWarnings(ModelPath, R.Warnings);
  if (OutFile) {
    OutFile->keep();
    OutFile->os().close();
    if (OutFile->os().has_error()) {
      OutFile->os().clear_error();
      return fail(OutputPath + ": write failed");
    }
  }
  return 0;
}
