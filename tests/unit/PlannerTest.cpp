//===- PlannerTest.cpp - The Z3 planner against the exhaustive one --------===//
#include "passes/Planner.h"
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "tools/modelgen/TransformerGen.h"

#include "llvm/Support/FormatVariadic.h"

#include <doctest/doctest.h>

#include <map>
#include <memory>

using namespace perfc;

namespace {

/// A generated GPT (realistic widths, few layers) imported once per
/// micro-batch size, with one TrainingAnalysis each.
struct Model {
  std::string Bytes;
  std::map<int64_t, std::unique_ptr<frontend::ImportedModel>> Graphs;
  std::map<int64_t, std::unique_ptr<TrainingAnalysis>> Analyses;

  Model(int64_t Layers, int64_t Hidden, int64_t Heads, int64_t Seq) {
    modelgen::TransformerSpec S;
    S.Fam = modelgen::Family::Gpt;
    S.Layers = Layers;
    S.Hidden = Hidden;
    S.Heads = Heads;
    S.Seq = Seq;
    S.Vocab = 51200;
    S.Dropout = 0.1;
    auto R = modelgen::resolve(S);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    auto B = modelgen::writeTransformerOnnx(*R);
    REQUIRE_MESSAGE(bool(B), llvm::toString(B.takeError()));
    Bytes = std::move(*B);
  }

  llvm::Expected<const TrainingAnalysis *> at(int64_t Mb) {
    auto &A = Analyses[Mb];
    if (!A) {
      frontend::ImportOptions O;
      O.Batch = Mb;
      auto M = frontend::importOnnxBytes(Bytes, "gpt.onnx", O);
      if (!M)
        return M.takeError();
      Graphs[Mb] = std::make_unique<frontend::ImportedModel>(std::move(*M));
      A = std::make_unique<TrainingAnalysis>(Graphs[Mb]->Graph);
    }
    return A.get();
  }
};

hw::Cluster cluster(llvm::StringRef Name) {
  auto C = hw::loadHardware(Name);
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return std::move(*C);
}

/// Selene's layout with Nodes nodes of the given device.
hw::Cluster selene(unsigned Nodes, llvm::StringRef Device = "") {
  hw::Cluster C = cluster("selene-a100-80gb");
  C.Groups.front().Count = Nodes;
  C.Name = llvm::formatv("selene-{0}", Nodes).str();
  if (!Device.empty()) {
    hw::Cluster D = cluster(Device);
    C.Groups.front().Devices.front().Dev = D.Groups.front().Devices.front().Dev;
    C.Name += "-" + Device.str();
  }
  return C;
}

PlanRequest request(Model &M, const hw::Cluster &C, int64_t Global,
                    unsigned Devices = 0) {
  PlanRequest R;
  R.Analysis = [&M](int64_t Mb) { return M.at(Mb); };
  R.Cluster = &C;
  R.GlobalBatch = Global;
  R.Devices = Devices;
  R.Base.DType = ir::DType::BF16;
  return R;
}

std::string planError(const PlanRequest &R) {
  auto P = planTraining(R);
  REQUIRE_FALSE(bool(P));
  return llvm::toString(P.takeError());
}

} // namespace

TEST_SUITE("planner") {

  TEST_CASE("Z3's plan has the exhaustive optimum's step time: 36 cases") {
    // Widths of GPT-3 125M, 1.3B, 13B, 175B and a 1T model, with few layers
    // so that the whole matrix runs in seconds.
    Model Small(4, 768, 12, 1024), Xl(4, 2048, 16, 2048),
        Big(8, 5120, 40, 2048), Huge(8, 12288, 96, 2048),
        Tera(4, 25600, 160, 2048);
    const hw::Cluster Dgx = cluster("dgx-a100");
    const hw::Cluster S64 = selene(64), S512 = selene(512);
    const hw::Cluster S40 = selene(16, "a100-sxm4-40gb");
    struct Case {
      Model *M;
      const hw::Cluster *C;
      unsigned Devices;
      int64_t Global;
    };
    const std::vector<Case> Cases = {
        {&Small, &Dgx, 8, 64},       {&Small, &Dgx, 8, 512},
        {&Small, &Dgx, 4, 32},       {&Small, &S64, 64, 512},
        {&Small, &S64, 256, 1024},   {&Small, &S40, 16, 256},
        {&Xl, &Dgx, 8, 64},          {&Xl, &Dgx, 8, 512},
        {&Xl, &S64, 32, 512},        {&Xl, &S64, 128, 1536},
        {&Xl, &S40, 64, 512},        {&Xl, &S40, 8, 128},
        {&Big, &Dgx, 8, 32},         {&Big, &Dgx, 8, 256},
        {&Big, &S64, 64, 512},       {&Big, &S64, 512, 1536},
        {&Big, &S40, 16, 64},        {&Big, &S40, 128, 1024},
        {&Huge, &Dgx, 8, 16},        {&Huge, &Dgx, 8, 64},
        {&Huge, &S64, 64, 512},      {&Huge, &S64, 256, 1536},
        {&Huge, &S512, 1024, 1536},  {&Huge, &S512, 4096, 2048},
        {&Huge, &S40, 32, 256},      {&Huge, &S40, 64, 1024},
        {&Huge, &S40, 16, 64},       {&Tera, &Dgx, 8, 16},
        {&Tera, &S64, 64, 256},      {&Tera, &S64, 512, 2048},
        {&Tera, &S512, 2048, 2048},  {&Tera, &S512, 4096, 4096},
        {&Tera, &S40, 128, 512},     {&Tera, &S40, 64, 256},
        {&Small, &S512, 4096, 4096}, {&Big, &S512, 2048, 1024},
    };
    REQUIRE(Cases.size() >= 30);
    unsigned Solved = 0, Tight = 0, Loose = 0, Nowhere = 0;
    for (const Case &K : Cases) {
      CAPTURE(K.C->Name);
      CAPTURE(K.Devices);
      CAPTURE(K.Global);
      PlanRequest R = request(*K.M, *K.C, K.Global, K.Devices);
      R.Planner = PlannerKind::Exhaustive;
      auto Ex = planTraining(R);
      if (!Ex) {
        // Only "fits nowhere" is an acceptable failure, and Z3 must agree.
        const std::string E = llvm::toString(Ex.takeError());
        CHECK(E.find("no strategy fits") != std::string::npos);
        R.Planner = PlannerKind::Z3;
        CHECK(planError(R) == E);
        ++Nowhere;
        continue;
      }
      R.Planner = PlannerKind::Z3;
      auto Z = planTraining(R);
      REQUIRE_MESSAGE(bool(Z), llvm::toString(Z.takeError()));
      CHECK(Z->Optimal);
      CHECK(Ex->Optimal);
      CHECK(Z->Candidates == Ex->Candidates);
      CHECK(Z->Report.StepSeconds == Ex->Report.StepSeconds);
      CHECK(Z->Report.peak().peakBytes() == Ex->Report.peak().peakBytes());
      CHECK(Z->Report.Fits);
      CHECK(Z->Report.Devices == K.Devices);
      // Tight: some candidates do not fit; loose: all do.
      if (Z->Feasible < Z->Candidates)
        ++Tight;
      else
        ++Loose;
      ++Solved;
    }
    MESSAGE(llvm::formatv("{0} solved ({1} memory-tight, {2} loose), {3} fit "
                          "nowhere",
                          Solved, Tight, Loose, Nowhere)
                .str());
    CHECK(Solved >= 30);
    CHECK(Tight >= 10);
    CHECK(Loose >= 3);
  }

  TEST_CASE("pinned choices are kept; top K and the Pareto front") {
    Model Xl(4, 2048, 16, 2048);
    const hw::Cluster C = selene(8);
    PlanRequest R = request(Xl, C, 256);
    R.Fixed.Tp = 2;
    R.Fixed.Recomp = Recompute::Selective;
    R.TopK = 5;
    R.Pareto = true;
    auto P = planTraining(R);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    CHECK(P->Options.Tp == 2);
    CHECK(P->Options.Recomp == Recompute::Selective);
    CHECK(P->Options.Dp * P->Options.Tp * P->Options.Pp == 64);
    REQUIRE(P->Top.size() == 5);
    for (size_t I = 1; I < P->Top.size(); ++I)
      CHECK(P->Top[I - 1].TimeNs <= P->Top[I].TimeNs);
    CHECK(P->Top[0].StepSeconds == P->Report.StepSeconds);
    REQUIRE(!P->Pareto.empty());
    CHECK(P->Pareto.front().TimeNs == P->Top.front().TimeNs);
    for (size_t I = 1; I < P->Pareto.size(); ++I) {
      CHECK(P->Pareto[I - 1].TimeNs <= P->Pareto[I].TimeNs);
      CHECK(P->Pareto[I - 1].Bytes > P->Pareto[I].Bytes);
    }
  }

  TEST_CASE("a time limit returns the best found, not proven") {
    Model Small(4, 768, 12, 1024);
    const hw::Cluster C = selene(8);
    PlanRequest R = request(Small, C, 512);
    R.TimeLimitSeconds = 1e-9;
    auto P = planTraining(R);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    CHECK_FALSE(P->Optimal);
    CHECK(P->TimedOut);
    CHECK(P->Candidates < P->Space);
  }

  TEST_CASE("errors name the constraint that fails") {
    Model Small(4, 768, 12, 1024), Huge(8, 12288, 96, 2048);
    const hw::Cluster Dgx = cluster("dgx-a100");
    CHECK(planError(request(Small, Dgx, 64, 16)) ==
          "--devices 16: cluster 'dgx-a100' has 8 devices");
    PlanRequest Tp3 = request(Small, Dgx, 64);
    Tp3.Fixed.Tp = 3;
    CHECK(planError(Tp3) ==
          "--tp 3: tensor parallelism must be a power of two dividing the 8 "
          "devices of a node of 'dgx-a100' (or --allow-cross-node-tp)");
    PlanRequest Pp = request(Small, Dgx, 64);
    Pp.Fixed.Pp = 8;
    CHECK(planError(Pp) == "--pp 8: the model has 4 blocks, and a pipeline "
                           "stage needs at least one");
    const std::string Nowhere = planError(request(Huge, Dgx, 64, 1));
    CHECK(Nowhere.rfind("no strategy fits in 80 GiB per device: the smallest "
                        "needs ",
                        0) == 0);
    CHECK(Nowhere.find("(dp 1, tp 1, pp 1") != std::string::npos);
    PlanRequest Odd = request(Small, Dgx, 7);
    Odd.Fixed.Dp = 8;
    CHECK(planError(Odd).rfind("no strategy satisfies the constraints", 0) ==
          0);
  }
}
