//===- ReportJsonTest.cpp - JSON and trace output of arbitrary names -----===//
//
// Names reach the JSON writers from users as arbitrary bytes (ONNX's proto2
// strings, hardware files, paths, --dim names). The output must stay valid
// JSON, which is UTF-8: llvm::json asserts on anything else, so a bit-flipped
// model aborted `--format json` in a build with assertions.
//
//===----------------------------------------------------------------------===//
#include "tools/ReportWriters.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

using namespace perfc;

namespace {

/// "a", a byte that starts no UTF-8 sequence, "b"; and how JSON carries it.
const std::string Bad = "a\xff"
                        "b";
const std::string Repaired = "a\xEF\xBF\xBD"
                             "b"; // U+FFFD

Report reportWithBadNames() {
  Report R;
  R.Model.Name = Bad;
  R.Model.Path = Bad + ".onnx";
  R.Model.GraphName = Bad;
  R.Model.Producer = Bad;
  R.Model.Inputs.push_back({Bad, "f32", "[1, " + Bad + "]"});
  R.Model.Bindings.push_back({Bad, 4});
  HardwareInfo H;
  H.Name = Bad;
  H.Device = Bad;
  H.Source = Bad;
  R.Hardware = H;
  NodeReport N;
  N.Name = Bad;
  N.Op = Bad;
  N.OutputShape = "[" + Bad + "]";
  NodeTime T;
  T.Seconds = 1e-6;
  T.Bound = "compute";
  T.Exec = "kernel";
  T.MemoryLevel = Bad;
  T.Explain = "reads " + Bad;
  N.Time = T;
  R.Nodes.push_back(N);
  R.Warnings.push_back({Bad, "node " + Bad + " costs nothing"});
  return R;
}

/// What Write printed, parsed. llvm::json::parse rejects invalid UTF-8, so
/// this also checks that every bad byte was repaired.
llvm::json::Value
parsedOutput(llvm::function_ref<void(llvm::raw_ostream &)> Write) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  Write(OS);
  OS.flush();
  llvm::Expected<llvm::json::Value> Doc = llvm::json::parse(Text);
  REQUIRE_MESSAGE(bool(Doc), llvm::toString(Doc.takeError()));
  REQUIRE(Doc->getAsObject());
  return std::move(*Doc);
}

/// The string at Key of O, or "" (absent, or not a string).
std::string text(const llvm::json::Object *O, llvm::StringRef Key) {
  return O->getString(Key).getValueOr("").str();
}

} // namespace

TEST_CASE("JSON output repairs names that are not UTF-8") {
  const Report R = reportWithBadNames();
  const llvm::json::Value Doc =
      parsedOutput([&](llvm::raw_ostream &OS) { writeReportJson(R, OS); });
  const llvm::json::Object *Root = Doc.getAsObject();
  const llvm::json::Object *Model = Root->getObject("model");
  REQUIRE(Model);
  CHECK(text(Model, "name") == Repaired);
  const llvm::json::Object *Bindings = Model->getObject("bindings");
  REQUIRE(Bindings);
  CHECK(Bindings->getInteger(Repaired).getValueOr(0) == 4);
  const llvm::json::Array *Nodes = Root->getArray("nodes");
  REQUIRE(Nodes);
  REQUIRE(Nodes->size() == 1);
  const llvm::json::Object *Node = (*Nodes)[0].getAsObject();
  REQUIRE(Node);
  CHECK(text(Node, "name") == Repaired);
  CHECK(text(Node, "memory_level") == Repaired);
  const llvm::json::Array *Warnings = Root->getArray("warnings");
  REQUIRE(Warnings);
  CHECK(text((*Warnings)[0].getAsObject(), "node") == Repaired);
}

TEST_CASE("the Chrome trace repairs names that are not UTF-8") {
  const Report R = reportWithBadNames();
  const llvm::json::Value Doc =
      parsedOutput([&](llvm::raw_ostream &OS) { writeChromeTrace(R, OS); });
  const llvm::json::Array *Events = Doc.getAsObject()->getArray("traceEvents");
  REQUIRE(Events);
  bool Found = false;
  for (const llvm::json::Value &E : *Events)
    if (text(E.getAsObject(), "cat") == Repaired)
      Found = text(E.getAsObject(), "name") == Repaired;
  CHECK(Found);
}
