//===- PlanJsonTest.cpp - Reading plans (--strategy plan.json) ------------===//
#include "tools/PlanJson.h"

#include <doctest/doctest.h>

#include <string>

using namespace perfc;

namespace {

std::string planError(llvm::StringRef Text) {
  auto R = parsePlanJson(Text, "p.json", TrainOptions());
  if (R) {
    FAIL_CHECK("parsed where an error was expected: " << Text.str());
    return "";
  }
  return llvm::toString(R.takeError());
}

/// A valid plan object; the tests replace one field or append one.
const char *const Valid =
    R"({"dp": 2, "tp": 2, "pp": 2, "vp": 1, "sp": true, "micro_batch": 4,
        "recompute": "selective", "zero": 1})";

} // namespace

TEST_CASE("plan JSON: a plan perfc wrote round-trips to the strategy") {
  const std::string Path =
      PERFC_SOURCE_DIR "/tools/fuzz/seeds/plan_json/gpt_1b_tp2_pp4.json";
  TrainOptions Base;
  Base.Schedule = PipelineSchedule::GPipe; // not in a plan: kept
  Base.Fp32Gradients = true;
  auto R = readPlanJson(Path, Base);
  REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
  const TrainOptions &O = R->Options;
  CHECK(O.Dp == 8);
  CHECK(O.Tp == 2);
  CHECK(O.Pp == 4);
  CHECK(O.Vp == 2);
  CHECK(O.SequenceParallel);
  CHECK(O.MicroBatch == 2);
  CHECK(O.GlobalBatch == 512);
  CHECK(O.Zero == 2);
  CHECK(O.Recomp == Recompute::None);
  CHECK(O.DType == ir::DType::BF16);
  CHECK(O.Optimizer == OptimizerKind::Adam);
  CHECK(O.Split == Partition::Balanced);
  CHECK(O.Schedule == PipelineSchedule::GPipe);
  CHECK(O.Fp32Gradients);
  CHECK_FALSE(O.TpCommOverlap); // written before the key existed
  CHECK(R->Model.Name == "gpt_L24_H2048_A16_F8192_S2048_V50257");
  REQUIRE(R->Model.Nodes);
  CHECK(*R->Model.Nodes > 0);
  REQUIRE(R->Model.Params);
  CHECK(*R->Model.Params == doctest::Approx(1315723264.0));
}

TEST_CASE("plan JSON: the plan object alone, fp8 as perfc writes it") {
  auto R = parsePlanJson(
      R"({"dp": 1, "tp": 1, "pp": 1, "vp": 1, "sp": false, "micro_batch": 1,
          "recompute": "full", "zero": 0, "dtype": "fp8e4m3",
          "optimizer": "sgd", "partition": "even"})",
      "p.json", TrainOptions());
  REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
  CHECK(R->Options.DType == ir::DType::F8E4M3);
  CHECK(R->Options.Optimizer == OptimizerKind::Sgd);
  CHECK(R->Options.Split == Partition::Even);
  CHECK(R->Options.Recomp == Recompute::Full);
  CHECK(R->Options.GlobalBatch == 0); // absent: micro-batch x dp
  CHECK(R->Model.Name.empty());
  CHECK(!R->Model.Nodes);
  CHECK(!R->Model.Params);
  auto V = parsePlanJson(Valid, "p.json", TrainOptions());
  REQUIRE_MESSAGE(bool(V), llvm::toString(V.takeError()));
  CHECK(V->Options.Recomp == Recompute::Selective);
}

TEST_CASE("plan JSON: text that is not JSON names FILE:LINE:COL") {
  CHECK(planError("{\"plan\": {\"dp\": 2,\n \"tp\": [}}") ==
        "p.json:2:9: not JSON: Invalid JSON value");
  CHECK(planError("") == "p.json:1:1: not JSON: Unexpected EOF");
  CHECK(planError("[1, 2]") ==
        "p.json: expected a JSON object (a plan written by perfc --plan)");
  CHECK(planError("{}") == "p.json: no 'plan' object; write one with perfc "
                           "--train --plan --format json");
  CHECK(planError("{\"plan\": 3}") == "p.json: 'plan' is not an object");
  // Deep nesting is refused before the recursive parser sees it.
  const std::string Deep = "{\"a\":\n" + std::string(100, '[');
  CHECK(planError(Deep) == "p.json:2:64: brackets nest more than 64 levels "
                           "deep; this is not a plan perfc wrote");
  // Brackets inside strings do not count.
  const std::string InString =
      "{\"plan\": {\"x\": \"" + std::string(100, '[') + "\"}}";
  CHECK(planError(InString) ==
        "p.json: 'plan.dp' is missing or not an integer");
}

TEST_CASE("plan JSON: each field is checked and named by its JSON path") {
  auto With = [](llvm::StringRef Key, llvm::StringRef Value) {
    std::string S = Valid;
    const std::string Needle = "\"" + Key.str() + "\": ";
    const size_t At = S.find(Needle);
    REQUIRE(At != std::string::npos);
    const size_t End = S.find_first_of(",}", At);
    S.replace(At + Needle.size(), End - At - Needle.size(), Value.str());
    return "{\"plan\": " + S + "}";
  };
  CHECK(planError(With("dp", "0")) ==
        "p.json: 'plan.dp' is 0, below its minimum 1");
  CHECK(planError(With("tp", "1099511627784")) ==
        "p.json: 'plan.tp' is 1099511627784, above its maximum 1000000");
  CHECK(planError(With("vp", "2.5")) ==
        "p.json: 'plan.vp' is missing or not an integer");
  CHECK(planError(With("pp", "\"4\"")) ==
        "p.json: 'plan.pp' is missing or not an integer");
  CHECK(planError(With("zero", "4")) ==
        "p.json: 'plan.zero' is 4, above its maximum 3");
  CHECK(planError(With("micro_batch", "-1")) ==
        "p.json: 'plan.micro_batch' is -1, below its minimum 1");
  CHECK(planError(With("micro_batch", "9223372036854775807")) ==
        "p.json: 'plan.micro_batch' is 9223372036854775807, above its "
        "maximum 4611686018427387904");
  CHECK(planError(With("sp", "1")) ==
        "p.json: 'plan.sp' is missing or not true/false");
  // tp_comm_overlap is optional (plans written before it have none), but
  // must be true or false where given.
  CHECK(planError("{\"plan\": " +
                  std::string(Valid).replace(std::string(Valid).size() - 1, 1,
                                             ", \"tp_comm_overlap\": 1}") +
                  "}") == "p.json: 'plan.tp_comm_overlap' is not true/false");
  // cp likewise (plans written before it have none: no context split).
  auto WithCp = [](llvm::StringRef Value) {
    std::string S = Valid;
    return "{\"plan\": " +
           S.replace(S.size() - 1, 1, ", \"cp\": " + Value.str() + "}") + "}";
  };
  CHECK(planError(WithCp("0")) ==
        "p.json: 'plan.cp' is 0, below its minimum 1");
  CHECK(planError(WithCp("true")) ==
        "p.json: 'plan.cp' is missing or not an integer");
  // overlap_param_gather likewise: true or false where given.
  CHECK(planError("{\"plan\": " +
                  std::string(Valid).replace(std::string(Valid).size() - 1, 1,
                                             ", \"overlap_param_gather\": 0}") +
                  "}") ==
        "p.json: 'plan.overlap_param_gather' is not true/false");
  // cp_comm likewise: p2p or a2a where given.
  auto WithComm = [](llvm::StringRef Value) {
    std::string S = Valid;
    return "{\"plan\": " +
           S.replace(S.size() - 1, 1, ", \"cp_comm\": " + Value.str() + "}") +
           "}";
  };
  CHECK(planError(WithComm("2")) == "p.json: 'plan.cp_comm' is not a string");
  CHECK(planError(WithComm("\"ring\"")) ==
        "p.json: 'plan.cp_comm' is 'ring': use p2p or a2a");
  CHECK(planError(With("recompute", "\"some\"")) ==
        "p.json: 'plan.recompute' is 'some': use none, selective or full");
  // A control character from the file is escaped: the error stays one line.
  CHECK(planError(With("recompute", "\"a\\nb\"")) ==
        "p.json: 'plan.recompute' is 'a\\0Ab': use none, selective or full");
  const std::string Long(100, 'x');
  CHECK(planError(With("recompute", "\"" + Long + "\"")) ==
        "p.json: 'plan.recompute' is '" + Long.substr(0, 64) +
            "...': use none, selective or full");
  std::string Extra = Valid;
  Extra.pop_back();
  CHECK(planError("{\"plan\": " + Extra + ", \"dtype\": \"fp64\"}}") ==
        "p.json: 'plan.dtype' is 'fp64': use fp32, tf32, fp16, bf16 or fp8");
  CHECK(planError("{\"plan\": " + Extra + ", \"optimizer\": 1}}") ==
        "p.json: 'plan.optimizer' is not a string");
  CHECK(planError("{\"plan\": " + Extra + ", \"global_batch\": 0}}") ==
        "p.json: 'plan.global_batch' is 0, below its minimum 1");
  CHECK(planError("{\"plan\": " + Extra + ", \"model\": []}}") ==
        "p.json: 'plan.model' is not an object");
  CHECK(planError("{\"plan\": " + Extra + ", \"model\": {\"nodes\": -3}}}") ==
        "p.json: 'plan.model.nodes' is not a count of nodes");
  CHECK(planError("{\"plan\": " + Extra +
                  ", \"model\": {\"params\": \"many\"}}}") ==
        "p.json: 'plan.model.params' is not a count of parameters");
}

TEST_CASE("plan JSON: files that are not plans are not read") {
  auto Dir = readPlanJson(PERFC_SOURCE_DIR "/tools", TrainOptions());
  REQUIRE(!Dir);
  CHECK(llvm::toString(Dir.takeError()) == PERFC_SOURCE_DIR
        "/tools: cannot read the plan: it is a directory");
  auto Dev = readPlanJson("/dev/zero", TrainOptions());
  REQUIRE(!Dev);
  CHECK(llvm::toString(Dev.takeError()) ==
        "/dev/zero: cannot read the plan: it is not a regular file");
  auto Missing = readPlanJson("/nonexistent/p.json", TrainOptions());
  REQUIRE(!Missing);
  CHECK(llvm::StringRef(llvm::toString(Missing.takeError()))
            .startswith("/nonexistent/p.json: cannot read the plan: "));
}

TEST_CASE("plan JSON: a plan for another model is an error") {
  PlanModel M;
  CHECK(!checkPlanModel(M, "p.json", "any", 10, 5.0)); // nothing to check
  M.Name = "gpt";
  M.Nodes = 10;
  M.Params = 5.0;
  CHECK(!checkPlanModel(M, "p.json", "gpt", 10, 5.0));
  // Only the fingerprint counts: another file stem is the same model.
  M.FileStem = "gpt_a";
  CHECK(!checkPlanModel(M, "p.json", "gpt", 10, 5.0, "gpt_b"));
  M.FileStem.clear();
  for (auto [Name, Nodes, Params] :
       {std::make_tuple("bert", 10, 5.0), std::make_tuple("gpt", 11, 5.0),
        std::make_tuple("gpt", 10, 6.0)}) {
    llvm::Error E = checkPlanModel(M, "p.json", Name, Nodes, Params);
    REQUIRE(bool(E));
    CHECK(llvm::toString(std::move(E)) ==
          "p.json: the plan is for graph 'gpt' (10 nodes, 5 parameters), not "
          "graph '" +
              std::string(Name) + "' (" + std::to_string(Nodes) + " nodes, " +
              std::to_string(int(Params)) +
              " parameters); plan this model with --plan");
  }
  // Exporters name most graphs alike: the file stems tell the models apart.
  M.FileStem = "resnet18";
  llvm::Error Stems = checkPlanModel(M, "p.json", "gpt", 11, 5.0, "gpt2_small");
  REQUIRE(bool(Stems));
  CHECK(llvm::toString(std::move(Stems)) ==
        "p.json: the plan is for model 'resnet18' (graph 'gpt', 10 nodes, 5 "
        "parameters), not model 'gpt2_small' (graph 'gpt', 11 nodes, 5 "
        "parameters); plan this model with --plan");
  // Names from files are escaped.
  M.Name = "a\nb";
  M.FileStem = "s\tt";
  llvm::Error E = checkPlanModel(M, "p.json", "c\rd", 10, 5.0);
  REQUIRE(bool(E));
  CHECK(llvm::toString(std::move(E)) ==
        "p.json: the plan is for model 's\\09t' (graph 'a\\0Ab', 10 nodes, "
        "5 parameters), not graph 'c\\0Dd' (10 nodes, 5 parameters); plan "
        "this model with --plan");
}

TEST_CASE("plan JSON: a file stem that is not a string is an error") {
  auto R = parsePlanJson(
      R"({"dp": 1, "tp": 1, "pp": 1, "vp": 1, "sp": false, "micro_batch": 1,
          "recompute": "none", "zero": 0, "model": {"file_stem": 3}})",
      "p.json", TrainOptions());
  REQUIRE(!R);
  CHECK(llvm::StringRef(llvm::toString(R.takeError()))
            .contains("'plan.model.file_stem' is not a string"));
}

TEST_CASE("plan JSON: stages claiming huge degrees cost memory by the file") {
  // pp 1000 x vp 10^6 chunks claimed by a few KB: the stages are checked
  // one by one, never 10^9 ranges allocated up front.
  std::string Stages;
  for (int I = 0; I < 1000; ++I)
    Stages += I ? ", {}" : "{}";
  const std::string Text =
      R"({"plan": {"dp": 1, "tp": 1, "pp": 1000, "vp": 1000000, "sp": false,
          "micro_batch": 1, "recompute": "none", "zero": 0, "stages": [)" +
      Stages + "]}}";
  CHECK(planError(Text) ==
        "p.json: 'plan.stages[0].layers' is not an array of vp = 1000000 "
        "[first, last] layer ranges");
}

TEST_CASE("plan JSON: cp and cp_comm are read where given, 1 and the "
          "caller's exchange where not") {
  const std::string Path = PERFC_SOURCE_DIR
      "/tools/fuzz/seeds/plan_json/gpt_1b_tp2_pp4_overlap.json";
  auto Old = readPlanJson(Path, TrainOptions());
  REQUIRE_MESSAGE(bool(Old), llvm::toString(Old.takeError()));
  CHECK(Old->Options.Cp == 1);
  std::string Text = Valid;
  Text.replace(Text.size() - 1, 1, ", \"cp\": 2}");
  auto Cp = parsePlanJson("{\"plan\": " + Text + "}", "p.json", TrainOptions());
  REQUIRE_MESSAGE(bool(Cp), llvm::toString(Cp.takeError()));
  CHECK(Cp->Options.Cp == 2);
  CHECK(Cp->Options.CpComm == ContextExchange::Ring);
  // cp_comm where given; where not, what the command line gave.
  TrainOptions FromCli;
  FromCli.CpComm = ContextExchange::AllToAll;
  auto Kept = parsePlanJson("{\"plan\": " + Text + "}", "p.json", FromCli);
  REQUIRE_MESSAGE(bool(Kept), llvm::toString(Kept.takeError()));
  CHECK(Kept->Options.CpComm == ContextExchange::AllToAll);
  Text.replace(Text.size() - 1, 1, ", \"cp_comm\": \"p2p\"}");
  auto Given = parsePlanJson("{\"plan\": " + Text + "}", "p.json", FromCli);
  REQUIRE_MESSAGE(bool(Given), llvm::toString(Given.takeError()));
  CHECK(Given->Options.CpComm == ContextExchange::Ring);
}

TEST_CASE("plan JSON: tp_comm_overlap as perfc writes it") {
  const std::string Path = PERFC_SOURCE_DIR
      "/tools/fuzz/seeds/plan_json/gpt_1b_tp2_pp4_overlap.json";
  auto R = readPlanJson(Path, TrainOptions());
  REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
  CHECK(R->Options.TpCommOverlap);
  CHECK(R->Options.SequenceParallel);
}
