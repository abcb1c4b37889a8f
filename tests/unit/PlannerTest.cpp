//===- PlannerTest.cpp - The Z3 planner against the exhaustive one --------===//
#include "passes/Planner.h"
#include "passes/Saturating.h"
#include "passes/Z3Timeout.h"

#include "ZooModels.h"

#include "hwdb/Loader.h"

#include "llvm/Support/FormatVariadic.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

using namespace perfc;

namespace {

/// A generated GPT (realistic widths, few layers) imported once per
/// micro-batch size, with one TrainingAnalysis each.
struct Model {
  std::string Bytes;
  std::map<int64_t, std::unique_ptr<frontend::ImportedModel>> Graphs;
  std::map<int64_t, std::unique_ptr<TrainingAnalysis>> Analyses;

  /// Whether the analyses run attention as FlashAttention.
  bool Flash = false;

  Model(int64_t Layers, int64_t Hidden, int64_t Heads, int64_t Seq,
        bool Flash = false)
      : Flash(Flash) {
    modelgen::TransformerSpec S = test::transformerSpec(
        modelgen::Family::Gpt, Layers, Hidden, Heads, Seq, 51200);
    S.Dropout = 0.1;
    Bytes = test::zooBytes(S);
  }
  /// Any generated transformer (a mixture of experts, say).
  explicit Model(const modelgen::TransformerSpec &S)
      : Bytes(test::zooBytes(S)) {}

  llvm::Expected<const TrainingAnalysis *> at(int64_t Mb) {
    auto &A = Analyses[Mb];
    if (!A) {
      frontend::ImportOptions O;
      O.Batch = Mb;
      auto M = frontend::importOnnxBytes(Bytes, "gpt.onnx", O);
      if (!M)
        return M.takeError();
      Graphs[Mb] = std::make_unique<frontend::ImportedModel>(std::move(*M));
      A = std::make_unique<TrainingAnalysis>(Graphs[Mb]->Graph, false, Flash);
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

/// The cluster with its (first) device's memory set to Bytes.
hw::Cluster withCapacity(const hw::Cluster &C, double Bytes) {
  hw::Cluster D = C;
  auto Dev =
      std::make_shared<hw::Device>(*C.Groups.front().Devices.front().Dev);
  Dev->Memory.front().CapacityBytes = Bytes;
  D.Groups.front().Devices.front().Dev = Dev;
  D.Name = llvm::formatv("{0}-{1}B", C.Name, int64_t(Bytes)).str();
  return D;
}

hw::Cluster mixedCluster() {
  auto C = hw::loadHardware(std::string(PERFC_SOURCE_DIR) +
                            "/tests/data/hwdb/mixed-a100-v100.yaml");
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return std::move(*C);
}

/// Node group G of a cluster alone, named after its device type (a name of
/// its own: unit costs are cached by cluster name).
hw::Cluster onlyGroup(const hw::Cluster &C, size_t G) {
  hw::Cluster One = C;
  One.Groups = {C.Groups[G]};
  One.Name = "only-" + One.primaryDevice().Name;
  return One;
}

/// Every split of L blocks into P stages of at least one, in order.
void compositions(unsigned L, unsigned P, std::vector<unsigned> &Cur,
                  std::vector<std::vector<unsigned>> &Out) {
  if (P == 1) {
    Cur.push_back(L);
    Out.push_back(Cur);
    Cur.pop_back();
    return;
  }
  for (unsigned First = 1; First + (P - 1) <= L; ++First) {
    Cur.push_back(First);
    compositions(L - First, P - 1, Cur, Out);
    Cur.pop_back();
  }
}

std::vector<std::vector<unsigned>> compositions(unsigned L, unsigned P) {
  std::vector<unsigned> Cur;
  std::vector<std::vector<unsigned>> Out;
  compositions(L, P, Cur, Out);
  return Out;
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

  TEST_CASE("micro-batches grow past 8 while a larger one is faster") {
    // A narrow model on one node: its kernels are small, so larger
    // micro-batches amortise launches and fill the GPU, as data-parallel
    // CNN and BERT training runs 32-256 samples per GPU.
    Model M(2, 256, 4, 128);
    const hw::Cluster C = cluster("dgx-a100");
    PlanRequest R = request(M, C, 1024);
    auto P = planTraining(R);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    const int64_t Mb = P->Options.MicroBatch;
    CHECK(Mb > 8);
    // Growth stops at the first size that beats no smaller one.
    CHECK(M.Analyses.rbegin()->first == 2 * Mb);
    PlanRequest Eight = R;
    Eight.Fixed.MicroBatch = 8;
    auto P8 = planTraining(Eight);
    REQUIRE(bool(P8));
    CHECK(P8->Report.StepSeconds > P->Report.StepSeconds);
    CHECK(P8->Options.MicroBatch == 8); // a pinned size is not grown
    // A size the model cannot be imported at ends the growth, not the plan.
    PlanRequest Capped = R;
    Capped.Analysis =
        [&M](int64_t Size) -> llvm::Expected<const TrainingAnalysis *> {
      if (Size > 16)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "the dimensions overflow");
      return M.at(Size);
    };
    auto P16 = planTraining(Capped);
    REQUIRE_MESSAGE(bool(P16), llvm::toString(P16.takeError()));
    CHECK(P16->Options.MicroBatch == 16);
    R.Planner = PlannerKind::Exhaustive;
    auto Ex = planTraining(R);
    REQUIRE(bool(Ex));
    CHECK(Ex->Report.StepSeconds == doctest::Approx(P->Report.StepSeconds));

    // A wide model: growth stops one doubling past its best size (or at
    // 8 when its best is smaller).
    Model Big(4, 4096, 32, 2048);
    const hw::Cluster Selene = selene(4);
    PlanRequest RB = request(Big, Selene, 256);
    auto PB = planTraining(RB);
    REQUIRE_MESSAGE(bool(PB), llvm::toString(PB.takeError()));
    CHECK(Big.Analyses.rbegin()->first ==
          std::max<int64_t>(8, 2 * PB->Options.MicroBatch));
    CHECK(PB->Options.MicroBatch < Mb);
  }

  TEST_CASE("pinned choices are kept, top K and the Pareto front") {
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

  TEST_CASE("recomputation: the norms beside the core, or the pinned "
            "modules") {
    Model Xl(4, 2048, 16, 2048);
    const hw::Cluster C = selene(8);
    const BlockModuleSet Core = bit(BlockModule::CoreAttention),
                         Norms = Core | bit(BlockModule::Norm);
    // Searched: none, the core, the core and the norms (a GPT has no
    // experts or latent attention), full; every one on some candidate.
    PlanRequest R = request(Xl, C, 256);
    R.TopK = 100000;
    auto P = planTraining(R);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    std::set<std::pair<Recompute, BlockModuleSet>> Seen;
    for (const PlanCandidate &Cand : P->Top)
      Seen.insert(
          {Cand.Options.Recomp, Cand.Options.Recomp == Recompute::Selective
                                    ? Cand.Options.RecomputeModules
                                    : BlockModuleSet(0)});
    CHECK(Seen == std::set<std::pair<Recompute, BlockModuleSet>>{
                      {Recompute::None, 0},
                      {Recompute::Selective, Core},
                      {Recompute::Selective, Norms},
                      {Recompute::Full, 0}});
    // The norms cost a little time for a little memory: on the same
    // strategy, slower and smaller than the core alone.
    TrainOptions O = P->Options;
    O.Recomp = Recompute::Selective;
    O.RecomputeModules = Core;
    auto A = predictTraining(*Xl.at(O.MicroBatch).get(), C, O);
    O.RecomputeModules = Norms;
    auto B = predictTraining(*Xl.at(O.MicroBatch).get(), C, O);
    REQUIRE(bool(A));
    REQUIRE(bool(B));
    CHECK(B->StepSeconds > A->StepSeconds);
    CHECK(B->peak().peakBytes() < A->peak().peakBytes());
    // Pinned: selective with the modules given, in every candidate.
    PlanRequest Pinned = request(Xl, C, 256);
    Pinned.Fixed.Recomp = Recompute::Selective;
    Pinned.Base.RecomputeModules = Norms;
    Pinned.TopK = 20;
    auto Q = planTraining(Pinned);
    REQUIRE_MESSAGE(bool(Q), llvm::toString(Q.takeError()));
    for (const PlanCandidate &Cand : Q->Top)
      CHECK(Cand.Options.RecomputeModules == Norms);
    CHECK(Q->Options.RecomputeModules == Norms);
  }

  TEST_CASE("recomputation: the fewest blocks full recomputation reruns "
            "that fit (Megatron's block method)") {
    Model Xl(8, 2048, 16, 2048);
    const hw::Cluster C = selene(1);
    PlanRequest R = request(Xl, C, 64);
    R.Fixed.Dp = 8;
    R.Fixed.Tp = 1;
    R.Fixed.Pp = 1;
    R.Fixed.MicroBatch = 1;
    R.Fixed.Zero = 1;
    const TrainingAnalysis &A = *Xl.at(1).get();
    TrainOptions O;
    O.Dp = 8;
    O.MicroBatch = 1;
    O.GlobalBatch = 64;
    O.Zero = 1;
    O.DType = ir::DType::BF16;
    auto Peak = [&](const TrainOptions &With, const hw::Cluster &On) {
      auto T = predictTraining(A, On, With);
      REQUIRE_MESSAGE(bool(T), llvm::toString(T.takeError()));
      return std::make_pair(T->peak().peakBytes(), T->StepSeconds);
    };
    TrainOptions Full = O;
    Full.Recomp = Recompute::Full;
    TrainOptions Light = O;
    Light.Recomp = Recompute::Selective;
    Light.RecomputeModules =
        bit(BlockModule::CoreAttention) | bit(BlockModule::Norm);
    const auto [FullPeak, FullSeconds] = Peak(Full, C);
    const auto [LightPeak, LightSeconds] = Peak(Light, C);
    REQUIRE(FullPeak < LightPeak);
    // Room for full recomputation and more, not for the selective kinds:
    // the block method's fewest blocks that fit.
    const hw::Cluster Tight = withCapacity(C, LightPeak - 1);
    R.Cluster = &Tight;
    auto P = planTraining(R);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    const TrainOptions &Q = P->Options;
    REQUIRE(Q.Recomp == Recompute::Full);
    CHECK(Q.Method == RecomputeMethod::Block);
    CHECK(Q.RecomputeNumLayers >= 1);
    CHECK(Q.RecomputeNumLayers < 8);
    CHECK(P->Report.Fits);
    CHECK(P->Report.StepSeconds < FullSeconds);
    CHECK(P->Report.Stages[0].RecomputedBlocks == Q.RecomputeNumLayers);
    // One block fewer does not fit.
    if (Q.RecomputeNumLayers > 1) {
      TrainOptions Fewer = Q;
      Fewer.ChunkBlocks.clear();
      --Fewer.RecomputeNumLayers;
      auto T = predictTraining(A, Tight, Fewer);
      REQUIRE(bool(T));
      CHECK_FALSE(T->Fits);
    }
    // Pinned full recomputation stays every block alone.
    R.Fixed.Recomp = Recompute::Full;
    auto Pinned = planTraining(R);
    REQUIRE_MESSAGE(bool(Pinned), llvm::toString(Pinned.takeError()));
    CHECK(Pinned->Options.Method == RecomputeMethod::Uniform);
    CHECK(Pinned->Options.RecomputeNumLayers == 1);
    CHECK(Pinned->Report.StepSeconds == doctest::Approx(FullSeconds));
  }

  TEST_CASE("context parallelism: searched with FlashAttention, or pinned") {
    const hw::Cluster C = selene(1);
    Model Flash(2, 1024, 16, 4096, /*Flash=*/true);
    PlanRequest R = request(Flash, C, 8);
    R.Base.FlashAttention = true;
    R.TopK = 100000;
    auto Z3 = planTraining(R);
    REQUIRE_MESSAGE(bool(Z3), llvm::toString(Z3.takeError()));
    CHECK(llvm::any_of(
        Z3->Top, [](const PlanCandidate &P) { return P.Options.Cp > 1; }));
    for (const PlanCandidate &P : Z3->Top)
      CHECK(uint64_t(P.Options.Dp) * P.Options.Tp * P.Options.Cp *
                P.Options.Pp ==
            8);
    // Both exchanges, FlashAttention running either; pinned, one.
    for (ContextExchange E : {ContextExchange::Ring, ContextExchange::AllToAll})
      CHECK(llvm::any_of(Z3->Top, [&](const PlanCandidate &P) {
        return P.Options.Cp > 1 && P.Options.CpComm == E;
      }));
    PlanRequest Ring = R;
    Ring.Fixed.CpComm = ContextExchange::Ring;
    auto Rings = planTraining(Ring);
    REQUIRE_MESSAGE(bool(Rings), llvm::toString(Rings.takeError()));
    CHECK(llvm::all_of(Rings->Top, [](const PlanCandidate &P) {
      return P.Options.Cp == 1 || P.Options.CpComm == ContextExchange::Ring;
    }));
    CHECK(Rings->Top.size() < Z3->Top.size());
    R.Planner = PlannerKind::Exhaustive;
    R.TopK = 1;
    auto Ex = planTraining(R);
    REQUIRE_MESSAGE(bool(Ex), llvm::toString(Ex.takeError()));
    CHECK(Ex->Report.StepSeconds == doctest::Approx(Z3->Report.StepSeconds));
    R.Fixed.Cp = 4;
    auto Pinned = planTraining(R);
    REQUIRE_MESSAGE(bool(Pinned), llvm::toString(Pinned.takeError()));
    CHECK(Pinned->Options.Cp == 4);
    CHECK(Pinned->Options.Dp * Pinned->Options.Tp * Pinned->Options.Pp == 2);
    // Without FlashAttention no candidate splits sequences, and a pinned
    // degree says what to add.
    Model Plain(2, 1024, 16, 4096);
    PlanRequest Q = request(Plain, C, 8);
    Q.TopK = 100000;
    auto P = planTraining(Q);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    CHECK(llvm::none_of(
        P->Top, [](const PlanCandidate &X) { return X.Options.Cp > 1; }));
    Q.Fixed.Cp = 2;
    auto Refused = planTraining(Q);
    REQUIRE_FALSE(bool(Refused));
    CHECK(llvm::toString(Refused.takeError()) ==
          "--cp 2: context parallelism runs ring attention in "
          "FlashAttention-style kernels (Transformer Engine's); add "
          "--flash-attention, or exchange heads instead with --cp-comm a2a");
    // The all-to-all needs no FlashAttention: searched then, in degrees
    // that divide the 16 heads, and the same optimum either way.
    Q.Fixed.Cp.reset();
    Q.Base.CpComm = ContextExchange::AllToAll;
    auto Heads = planTraining(Q);
    REQUIRE_MESSAGE(bool(Heads), llvm::toString(Heads.takeError()));
    CHECK(llvm::any_of(
        Heads->Top, [](const PlanCandidate &X) { return X.Options.Cp > 1; }));
    for (const PlanCandidate &X : Heads->Top)
      CHECK(X.Options.CpComm == ContextExchange::AllToAll);
    Q.Planner = PlannerKind::Exhaustive;
    Q.TopK = 1;
    auto HeadsEx = planTraining(Q);
    REQUIRE_MESSAGE(bool(HeadsEx), llvm::toString(HeadsEx.takeError()));
    CHECK(HeadsEx->Report.StepSeconds ==
          doctest::Approx(Heads->Report.StepSeconds));
    Q.Fixed.Cp = 4;
    auto HeadsPinned = planTraining(Q);
    REQUIRE_MESSAGE(bool(HeadsPinned), llvm::toString(HeadsPinned.takeError()));
    CHECK(HeadsPinned->Options.Cp == 4);
    CHECK(HeadsPinned->Report.CpCommSeconds > 0);
    CHECK(HeadsPinned->Report.CpOverlappedSeconds == 0);
  }

  TEST_CASE("expert parallelism: searched for mixtures of experts, or "
            "pinned") {
    const hw::Cluster C = cluster("dgx-h100");
    modelgen::TransformerSpec S =
        test::transformerSpec(modelgen::Family::Llama, 2, 512, 8, 256, 32000);
    S.Experts = 8;
    S.TopK = 2;
    Model Moe(S);
    PlanRequest R = request(Moe, C, 16);
    R.TopK = 100000;
    auto Z3 = planTraining(R);
    REQUIRE_MESSAGE(bool(Z3), llvm::toString(Z3.takeError()));
    for (unsigned Ep : {1u, 2u, 4u, 8u})
      CHECK_MESSAGE(llvm::any_of(Z3->Top,
                                 [&](const PlanCandidate &P) {
                                   return P.Options.Ep == Ep;
                                 }),
                    Ep);
    for (const PlanCandidate &P : Z3->Top) {
      const TrainOptions &O = P.Options;
      CHECK((O.Dp * O.Cp) % O.Ep == 0);
      CHECK((O.Ep == 1 || O.Zero != 3));
      CHECK((O.Ep == 1 || O.Tp == 1 || O.SequenceParallel));
    }
    R.Planner = PlannerKind::Exhaustive;
    R.TopK = 1;
    auto Ex = planTraining(R);
    REQUIRE_MESSAGE(bool(Ex), llvm::toString(Ex.takeError()));
    CHECK(Ex->Report.StepSeconds == doctest::Approx(Z3->Report.StepSeconds));
    R.Fixed.Ep = 4;
    auto Pinned = planTraining(R);
    REQUIRE_MESSAGE(bool(Pinned), llvm::toString(Pinned.takeError()));
    CHECK(Pinned->Options.Ep == 4);
    CHECK(Pinned->Report.EpCommSeconds > 0);
    R.Fixed.Ep = 3;
    CHECK(planError(R) == "--ep 3: a mixture of 8 experts does not split "
                          "over 3 ranks; use an ep that divides 8");
    // A pinned degree need not be a power of two: six experts over three
    // of six devices.
    modelgen::TransformerSpec Six = S;
    Six.Experts = 6;
    Six.TopK = 1;
    Six.Seq = 48;
    Model Moe6(Six);
    PlanRequest R6 = request(Moe6, C, 12, /*Devices=*/6);
    R6.Fixed.Ep = 3;
    auto Three = planTraining(R6);
    REQUIRE_MESSAGE(bool(Three), llvm::toString(Three.takeError()));
    CHECK(Three->Options.Ep == 3);
    CHECK((Three->Options.Dp * Three->Options.Cp) % 3 == 0);
    // A dense model: no candidate splits experts, and a pinned degree is
    // refused.
    Model Dense(2, 512, 8, 256);
    PlanRequest D = request(Dense, C, 16);
    D.TopK = 100000;
    auto P = planTraining(D);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    CHECK(llvm::all_of(
        P->Top, [](const PlanCandidate &X) { return X.Options.Ep == 1; }));
    D.Fixed.Ep = 2;
    CHECK(planError(D) ==
          "--ep 2: the model has no mixture of experts; use --ep 1");
  }

  TEST_CASE("--framework: only strategies the framework runs") {
    // On 64 GPUs the unrestricted plan pairs pipeline stages or ZeRO 2/3
    // with choices one of the frameworks refuses; each restricted plan
    // keeps to its framework's rules over the whole search (the top 20
    // too), and is no faster than the unrestricted one.
    Model Xl(8, 4096, 32, 2048);
    const hw::Cluster C = selene(8);
    PlanRequest Any = request(Xl, C, 512);
    Any.TopK = 20;
    auto Best = planTraining(Any);
    REQUIRE_MESSAGE(bool(Best), llvm::toString(Best.takeError()));
    CHECK(Best->TargetFramework == Framework::Any);
    bool SomeRefused = false; // else the restriction would show nothing
    for (const PlanCandidate &Top : Best->Top)
      for (Framework F :
           {Framework::Megatron, Framework::DeepSpeed, Framework::Fsdp})
        SomeRefused |= frameworkRefusal(F, Top.Options) != nullptr;
    CHECK(SomeRefused);
    for (Framework F :
         {Framework::Megatron, Framework::DeepSpeed, Framework::Fsdp}) {
      CAPTURE(name(F));
      PlanRequest R = Any;
      R.TargetFramework = F;
      auto P = planTraining(R);
      REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
      CHECK(P->TargetFramework == F);
      CHECK(P->Space < Best->Space);
      CHECK(P->Report.StepSeconds >= Best->Report.StepSeconds);
      CHECK(frameworkRefusal(F, P->Options) == nullptr);
      for (const PlanCandidate &Top : P->Top)
        CHECK(frameworkRefusal(F, Top.Options) == nullptr);
    }
    // The rules themselves.
    TrainOptions O;
    O.Pp = 2;
    O.Zero = 2;
    CHECK(frameworkRefusal(Framework::DeepSpeed, O) != nullptr);
    CHECK(frameworkRefusal(Framework::Megatron, O) != nullptr);
    CHECK(frameworkRefusal(Framework::Fsdp, O) == nullptr);
    CHECK(frameworkRefusal(Framework::Any, O) == nullptr);
    O.Zero = 1;
    CHECK(frameworkRefusal(Framework::DeepSpeed, O) == nullptr);
    CHECK(frameworkRefusal(Framework::Megatron, O) == nullptr);
    CHECK(frameworkRefusal(Framework::Fsdp, O) != nullptr);
    O.Vp = 2;
    CHECK(frameworkRefusal(Framework::DeepSpeed, O) != nullptr);
    O.Pp = 1;
    O.Vp = 1;
    O.Zero = 3;
    CHECK(frameworkRefusal(Framework::DeepSpeed, O) == nullptr);
    CHECK(llvm::toString(checkFramework(Framework::Megatron, O)) ==
          "--framework megatron does not run pp 1, vp 1, ZeRO 3: Megatron-LM's "
          "distributed optimizer shards optimizer states only: --zero 0 or 1 "
          "(or --framework any)");
    // Context parallelism: Megatron-Core runs the ring and the all-to-all,
    // DeepSpeed only Ulysses' all-to-all (its default).
    O.Zero = 1;
    O.Cp = 2;
    CHECK(frameworkRefusal(Framework::Megatron, O) == nullptr);
    CHECK(llvm::toString(checkFramework(Framework::DeepSpeed, O)) ==
          "--framework deepspeed does not run pp 1, vp 1, cp 2, ZeRO 1: "
          "DeepSpeed splits sequences with Ulysses' all-to-all of heads, not "
          "a ring of keys and values: --cp-comm a2a (or --framework any)");
    O.CpComm = ContextExchange::AllToAll;
    CHECK(frameworkRefusal(Framework::DeepSpeed, O) == nullptr);
    CHECK(frameworkRefusal(Framework::Megatron, O) == nullptr);
    CHECK(defaultContextExchange(Framework::DeepSpeed) ==
          ContextExchange::AllToAll);
    CHECK(defaultContextExchange(Framework::Megatron) == ContextExchange::Ring);
    CHECK(defaultContextExchange(Framework::Any) == ContextExchange::Ring);
    CHECK(frameworkNamed("deepspeed") == Framework::DeepSpeed);
    CHECK_FALSE(frameworkNamed("pytorch"));
    // DeepSpeed all-gathers ZeRO 1/2 parameters in its optimizer step.
    TrainOptions Gather;
    Gather.Zero = 1;
    Gather.OverlapParamGather = true;
    CHECK(frameworkRefusal(Framework::DeepSpeed, Gather) != nullptr);
    CHECK(frameworkRefusal(Framework::Megatron, Gather) == nullptr);
    PlanRequest Overlapped = Any;
    Overlapped.TargetFramework = Framework::DeepSpeed;
    Overlapped.Base.OverlapParamGather = true;
    CHECK(planError(Overlapped).find("drop --overlap-param-gather") !=
          std::string::npos);
    // Elsewhere the planner keeps it where ZeRO 1 or 2 shards the
    // optimizer, and only there.
    Overlapped.TargetFramework = Framework::Any;
    Overlapped.TopK = 100000;
    auto Kept = planTraining(Overlapped);
    REQUIRE_MESSAGE(bool(Kept), llvm::toString(Kept.takeError()));
    CHECK(llvm::any_of(Kept->Top, [](const PlanCandidate &P) {
      return P.Options.OverlapParamGather;
    }));
    for (const PlanCandidate &P : Kept->Top)
      CHECK(P.Options.OverlapParamGather ==
            (P.Options.Zero == 1 || P.Options.Zero == 2));
    // A pinned choice the framework refuses fails before the search.
    PlanRequest Pinned = Any;
    Pinned.TargetFramework = Framework::Fsdp;
    Pinned.Fixed.Zero = 1;
    CHECK(planError(Pinned).rfind("--framework fsdp does not run", 0) == 0);
  }

  TEST_CASE("candidates are priced without explanations") {
    // The CLI asks for the report's explanations in its base options; the
    // thousands of candidates must not format them (a 175B plan took 3.3x
    // the instructions when they did).
    Model Small(4, 768, 12, 1024);
    const hw::Cluster C = selene(2);
    PlanRequest R = request(Small, C, 64);
    R.Base.Explain = true;
    auto P = planTraining(R);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    CHECK_FALSE(P->Options.Explain);
    CHECK(P->Report.CommExplain.empty());
    CHECK(P->Report.MemoryExplain.empty());
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

  TEST_CASE("splitStages: the least slowest stage within every capacity") {
    // Synthetic units on two device types (the second 2.5x slower), the
    // first stages keeping more micro-batches in flight; against every
    // split, with memory as the header defines it.
    uint64_t Seed = 12345;
    auto Rand = [&] {
      Seed = Seed * 6364136223846793005ull + 1442695040888963407ull;
      return double(Seed >> 33) / double(1ull << 31);
    };
    unsigned Checked = 0, Infeasible = 0;
    for (unsigned Trial = 0; Trial < 90; ++Trial) {
      const unsigned L = 3 + Trial % 6, P = 2 + Trial % 3;
      if (L < P)
        continue;
      std::vector<UnitCost> Fast(L + 2), Slow(L + 2);
      for (unsigned U = 0; U < L + 2; ++U) {
        UnitCost C;
        C.Forward = 1 + Rand();
        C.Backward = 2 * C.Forward;
        C.Params = (U == 0 || U == L + 1 ? 5 : 1) * (1 + Rand());
        C.Saved = 1 + Rand();
        C.InputBytes = 0.1 * C.Saved;
        C.Largest = 0.5 * Rand();
        Fast[U] = C;
        C.Forward *= 2.5;
        C.Backward *= 2.5;
        Slow[U] = C;
      }
      const Recompute Rc = Trial % 4 == 3 ? Recompute::Full : Recompute::None;
      const StageMemory Mem{2.0, Rc};
      std::vector<StageSpec> Specs;
      for (unsigned S = 0; S < P; ++S)
        Specs.push_back(
            {S < (P + 1) / 2 ? &Fast : &Slow,
             (S < (P + 1) / 2 ? 1.0 : 0.6) * (8 + 30 * Rand()) * L / P, P - S});
      auto Got = splitStages(Specs, L, Mem);
      double BestTime = std::numeric_limits<double>::infinity();
      for (const std::vector<unsigned> &Sizes : compositions(L, P)) {
        unsigned First = 1;
        double Worst = 0;
        bool Fits = true;
        for (unsigned S = 0; S < P; ++S) {
          const unsigned Lo = S == 0 ? 0 : First;
          const unsigned Hi = S + 1 == P ? L + 1 : First + Sizes[S] - 1;
          First += Sizes[S];
          double T = 0, Params = 0, Saved = 0, Inputs = 0, MaxSaved = 0,
                 Largest = 0;
          for (unsigned U = Lo; U <= Hi; ++U) {
            const UnitCost &C = (*Specs[S].Units)[U];
            T += C.total();
            Params += C.Params;
            Saved += C.Saved;
            Inputs += C.InputBytes;
            MaxSaved = std::max(MaxSaved, C.Saved);
            Largest = std::max(Largest, C.Largest);
          }
          const double Act = Rc == Recompute::Full
                                 ? Specs[S].InFlight * Inputs + MaxSaved
                                 : Specs[S].InFlight * Saved;
          Fits &= Mem.BytesPerParam * Params + Act + Largest <=
                  Specs[S].CapacityBytes;
          Worst = std::max(Worst, T);
        }
        if (Fits)
          BestTime = std::min(BestTime, Worst);
      }
      CAPTURE(Trial);
      if (!std::isfinite(BestTime)) {
        CHECK_FALSE(Got);
        ++Infeasible;
        continue;
      }
      REQUIRE(Got);
      REQUIRE(Got->size() == P);
      unsigned Sum = 0;
      for (unsigned B : *Got) {
        CHECK(B >= 1);
        Sum += B;
      }
      CHECK(Sum == L);
      // Its split's slowest stage is the brute-force optimum.
      unsigned First = 1;
      double Worst = 0;
      for (unsigned S = 0; S < P; ++S) {
        const unsigned Lo = S == 0 ? 0 : First;
        const unsigned Hi = S + 1 == P ? L + 1 : First + (*Got)[S] - 1;
        First += (*Got)[S];
        double T = 0;
        for (unsigned U = Lo; U <= Hi; ++U)
          T += (*Specs[S].Units)[U].total();
        Worst = std::max(Worst, T);
      }
      CHECK(Worst == doctest::Approx(BestTime).epsilon(1e-12));
      ++Checked;
    }
    MESSAGE(
        llvm::formatv("{0} splits checked, {1} infeasible", Checked, Infeasible)
            .str());
    CHECK(Checked >= 30);
    CHECK(Infeasible >= 3);
  }

  TEST_CASE("memory-tight: blocks move off the overflowing stage") {
    // Pinned dp 1, tp 1, pp 4, no recomputation: the time-balanced split
    // overflows the first stage (embeddings, four micro-batches in flight
    // under 1F1B). With the capacity halfway between that split's peak and
    // the least peak of any split, the planner must move blocks so that
    // every stage fits, at the least step time of any split that fits.
    Model M(8, 2048, 16, 2048);
    const hw::Cluster Dgx = cluster("dgx-a100");
    TrainOptions O;
    O.DType = ir::DType::BF16;
    O.Pp = 4;
    O.MicroBatch = 1;
    O.GlobalBatch = 16;
    auto A = M.at(1);
    REQUIRE(bool(A));
    auto Balanced = predictTraining(**A, Dgx, O);
    REQUIRE_MESSAGE(bool(Balanced), llvm::toString(Balanced.takeError()));
    const double BalancedPeak = Balanced->peak().peakBytes();
    double LeastPeak = BalancedPeak;
    for (const std::vector<unsigned> &Sizes : compositions(8, 4)) {
      TrainOptions X = O;
      X.ChunkBlocks = Sizes;
      auto T = predictTraining(**A, Dgx, X);
      REQUIRE(bool(T));
      LeastPeak = std::min(LeastPeak, T->peak().peakBytes());
    }
    REQUIRE(LeastPeak < 0.97 * BalancedPeak);
    const double Capacity = (LeastPeak + BalancedPeak) / 2;
    const hw::Cluster Tight = withCapacity(Dgx, Capacity);
    // The fastest split that fits, by brute force.
    double BestFitting = std::numeric_limits<double>::infinity();
    for (const std::vector<unsigned> &Sizes : compositions(8, 4)) {
      TrainOptions X = O;
      X.ChunkBlocks = Sizes;
      auto T = predictTraining(**A, Tight, X);
      REQUIRE(bool(T));
      if (T->Fits)
        BestFitting = std::min(BestFitting, T->StepSeconds);
    }
    auto Before = predictTraining(**A, Tight, O);
    REQUIRE(bool(Before));
    CHECK_FALSE(Before->Fits);
    for (PlannerKind K : {PlannerKind::Z3, PlannerKind::Exhaustive}) {
      PlanRequest R = request(M, Tight, 16, 4);
      R.Planner = K;
      R.Fixed.Dp = 1;
      R.Fixed.Tp = 1;
      R.Fixed.Pp = 4;
      R.Fixed.MicroBatch = 1;
      R.Fixed.Recomp = Recompute::None;
      R.Fixed.Zero = 0;
      auto P = planTraining(R);
      REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
      CHECK(P->Report.Fits);
      CHECK(P->Report.peak().peakBytes() <= Capacity);
      REQUIRE(P->Options.ChunkBlocks.size() == 4);
      // Blocks moved off the first stage.
      CHECK(P->Report.Stages.front().Blocks < Balanced->Stages.front().Blocks);
      CHECK(P->Report.StepSeconds <= BestFitting * 1.01);
      CHECK(P->Report.StepSeconds >= BestFitting);
    }
  }

  TEST_CASE("mixed GPU types: faster GPUs take more layers") {
    Model M(12, 2048, 16, 2048);
    const hw::Cluster Mixed = mixedCluster();
    REQUIRE(isMixedCluster(Mixed));
    PlanRequest R = request(M, Mixed, 64);
    R.Base.DType = ir::DType::F16; // V100 has no bf16
    // A pipeline over both types (pp 1 is the uneven data split's family).
    R.Fixed.Pp = 4;
    auto P = planTraining(R);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    const TrainOptions &O = P->Options;
    CAPTURE(O.Dp);
    CAPTURE(O.Tp);
    CAPTURE(O.Pp);
    CHECK(P->Optimal);
    CHECK(P->Report.Fits);
    REQUIRE(P->StageDevices.size() == O.Pp);
    REQUIRE(P->Report.Stages.size() == O.Pp);
    // Both types used; every A100 stage holds more layers than any V100's.
    unsigned FastLeast = UINT32_MAX, SlowMost = 0;
    for (unsigned S = 0; S < O.Pp; ++S) {
      const StageReport &St = P->Report.Stages[S];
      CHECK(St.Device == P->StageDevices[S]);
      const double Cap = St.Device == "a100-sxm4-80gb" ? 80.0 * (1ull << 30)
                                                       : 32.0 * (1ull << 30);
      CHECK(St.peakBytes() <= Cap);
      if (St.Device == "a100-sxm4-80gb")
        FastLeast = std::min(FastLeast, St.Blocks);
      else
        SlowMost = std::max(SlowMost, St.Blocks);
    }
    REQUIRE(FastLeast != UINT32_MAX);
    REQUIRE(SlowMost > 0);
    CHECK(FastLeast > SlowMost);
    CHECK(O.Dp * O.Tp * O.Pp == 32);
    auto A = M.at(O.MicroBatch);
    REQUIRE(bool(A));
    // An even split of the same strategy is slower.
    if (12 % O.Pp == 0) {
      TrainOptions Even = O;
      Even.ChunkBlocks.assign(O.Pp, 12 / O.Pp);
      auto E = predictMixed(**A, Mixed, Even, P->StageDevices);
      REQUIRE(bool(E));
      CHECK(P->Report.StepSeconds < E->StepSeconds);
    }
    // The best plan over both types (any family) beats the best plan on
    // either type alone (planned on that node group by itself), priced the
    // same way.
    PlanRequest Free = R;
    Free.Fixed.Pp = llvm::None;
    auto Overall = planTraining(Free);
    REQUIRE_MESSAGE(bool(Overall), llvm::toString(Overall.takeError()));
    CHECK(Overall->Report.StepSeconds <= P->Report.StepSeconds);
    for (size_t G = 0; G < Mixed.Groups.size(); ++G) {
      const hw::Cluster One = onlyGroup(Mixed, G);
      const std::string Type = One.primaryDevice().Name;
      CAPTURE(Type);
      PlanRequest Q = request(M, One, 64);
      Q.Base.DType = ir::DType::F16;
      auto Best = planTraining(Q);
      REQUIRE_MESSAGE(bool(Best), llvm::toString(Best.takeError()));
      TrainOptions X = Best->Options;
      X.ChunkBlocks.clear();
      auto Alone = predictMixed(**M.at(X.MicroBatch), Mixed, X,
                                std::vector<std::string>(X.Pp, Type));
      REQUIRE_MESSAGE(bool(Alone), llvm::toString(Alone.takeError()));
      CHECK(Alone->Fits);
      CHECK(Overall->Report.StepSeconds < Alone->StepSeconds);
      CHECK(Overall->Report.StepSeconds < Best->Report.StepSeconds);
    }
  }

  TEST_CASE("uneven data split: more micro-batches on the faster type") {
    // 8 fast replicas (1 s per micro-batch) and 8 at 2.5 s, 64 micro-batches.
    const auto Time = [](unsigned G, unsigned K) {
      return K * (G == 0 ? 1.0 : 2.5);
    };
    auto S = splitData({8, 8}, 64, Time);
    REQUIRE(S);
    CHECK(*S == std::vector<unsigned>{6, 2});
    const double Step = std::max(Time(0, 6), Time(1, 2));
    CHECK(Step < std::max(Time(0, 4), Time(1, 4))); // even shares: 10 s
    CHECK(Step < Time(0, 64 / 8));                  // fast type alone: 8 s
    // Exact sums: 3 + 3 replicas cannot take 7; too few micro-batches.
    CHECK(!splitData({3, 3}, 7, Time));
    CHECK(!splitData({8, 8}, 15, Time));
    CHECK(!splitData({8, 0}, 64, Time));
    // Against enumeration on small cases with uneven replica counts.
    const auto Slow = [](unsigned G, unsigned K) {
      return K * (1.0 + 0.7 * G) + (K > 3 ? 0.5 * G : 0.0);
    };
    for (unsigned R0 = 1; R0 <= 4; ++R0)
      for (unsigned R1 = 1; R1 <= 3; ++R1)
        for (unsigned R2 = 1; R2 <= 2; ++R2)
          for (unsigned M = 1; M <= 30; ++M) {
            double Best = std::numeric_limits<double>::infinity();
            for (unsigned A = 1; A * R0 <= M; ++A)
              for (unsigned B = 1; A * R0 + B * R1 <= M; ++B) {
                const unsigned Rest = M - A * R0 - B * R1;
                if (Rest == 0 || Rest % R2)
                  continue;
                Best = std::min(Best, std::max({Slow(0, A), Slow(1, B),
                                                Slow(2, Rest / R2)}));
              }
            auto Got = splitData({R0, R1, R2}, M, Slow);
            REQUIRE(bool(Got) == std::isfinite(Best));
            if (!Got)
              continue;
            CHECK((*Got)[0] * R0 + (*Got)[1] * R1 + (*Got)[2] * R2 == M);
            CHECK(std::max({Slow(0, (*Got)[0]), Slow(1, (*Got)[1]),
                            Slow(2, (*Got)[2])}) == Best);
          }
  }

  TEST_CASE("uneven data split: planned over both types, the best split") {
    // A model one GPU holds: whole replicas on every device beat a pipeline
    // across types (no bubble, no transfers between types).
    Model M(4, 768, 12, 1024);
    const hw::Cluster Mixed = mixedCluster();
    PlanRequest R = request(M, Mixed, 256);
    R.Base.DType = ir::DType::F16;
    auto P = planTraining(R);
    REQUIRE_MESSAGE(bool(P), llvm::toString(P.takeError()));
    const TrainOptions &O = P->Options;
    CHECK(P->Optimal);
    REQUIRE(O.DataSplit.size() == 2);
    CHECK(O.Pp == 1);
    CHECK(P->StageDevices.empty());
    unsigned Replicas = 0;
    int64_t Samples = 0;
    unsigned FastMicro = 0, SlowMicro = 0;
    for (const DataShare &D : O.DataSplit) {
      Replicas += D.Replicas;
      Samples += int64_t(D.Replicas) * D.MicroBatches * O.MicroBatch;
      CHECK(D.Replicas * O.Tp == 16); // every device of the type
      (D.Device == "a100-sxm4-80gb" ? FastMicro : SlowMicro) = D.MicroBatches;
    }
    CHECK(Replicas == O.Dp);
    CHECK(Samples == 256);
    CHECK(FastMicro > SlowMicro);
    // The report: the slowest type's step; each type's own.
    REQUIRE(P->Report.DataSplit.size() == 2);
    CHECK(P->Report.StepSeconds ==
          std::max(P->Report.DataSplit[0].StepSeconds,
                   P->Report.DataSplit[1].StepSeconds));
    CHECK(P->Report.GlobalBatch == 256);
    CHECK(P->Report.Devices == 32);
    // The chosen counts are the best whole split of this strategy
    // (enumerated, each predicted): balanceDataSplit's affine step model
    // is exact at pp 1.
    auto A = M.at(O.MicroBatch);
    REQUIRE(bool(A));
    const unsigned Micro = 256 / O.MicroBatch;
    const unsigned Fast = O.DataSplit[0].Replicas,
                   Slow = O.DataSplit[1].Replicas;
    double Best = std::numeric_limits<double>::infinity();
    unsigned Tried = 0;
    for (unsigned K0 = 1; K0 * Fast < Micro; ++K0) {
      if ((Micro - K0 * Fast) % Slow)
        continue;
      TrainOptions X = O;
      X.DataSplit[0].MicroBatches = K0;
      X.DataSplit[1].MicroBatches = (Micro - K0 * Fast) / Slow;
      auto T = predictDataSplit(**A, Mixed, X);
      REQUIRE_MESSAGE(bool(T), llvm::toString(T.takeError()));
      Best = std::min(Best, T->StepSeconds);
      ++Tried;
    }
    CHECK(Tried >= 2);
    CHECK(P->Report.StepSeconds == doctest::Approx(Best).epsilon(1e-12));
    // Faster than the best pipeline over both types and than either type
    // alone.
    PlanRequest Pipe = R;
    Pipe.Fixed.Pp = 2;
    auto Q = planTraining(Pipe);
    REQUIRE_MESSAGE(bool(Q), llvm::toString(Q.takeError()));
    CHECK(P->Report.StepSeconds < Q->Report.StepSeconds);
    for (size_t G = 0; G < Mixed.Groups.size(); ++G) {
      const hw::Cluster One = onlyGroup(Mixed, G);
      PlanRequest Alone = request(M, One, 256);
      Alone.Base.DType = ir::DType::F16;
      auto B = planTraining(Alone);
      REQUIRE_MESSAGE(bool(B), llvm::toString(B.takeError()));
      CHECK(P->Report.StepSeconds < B->Report.StepSeconds);
    }
    // Z3 and the exhaustive loop agree.
    R.Planner = PlannerKind::Exhaustive;
    auto E = planTraining(R);
    REQUIRE(bool(E));
    CHECK(E->Report.StepSeconds == P->Report.StepSeconds);
  }

  TEST_CASE("uneven data split: one type's share as predictTraining has it") {
    Model M(4, 768, 12, 1024);
    const hw::Cluster Mixed = mixedCluster();
    const hw::Cluster V100 = onlyGroup(Mixed, 1);
    auto A = M.at(2);
    REQUIRE(bool(A));
    TrainOptions O;
    O.DType = ir::DType::F16;
    O.Dp = 16;
    O.MicroBatch = 2;
    O.GlobalBatch = 16 * 3 * 2;
    auto Ref = predictTraining(**A, V100, O);
    REQUIRE(bool(Ref));
    TrainOptions S = O;
    S.DataSplit = {{"v100-sxm2-32gb", 16, 3}};
    auto Got = predictDataSplit(**A, Mixed, S);
    REQUIRE_MESSAGE(bool(Got), llvm::toString(Got.takeError()));
    CHECK(Got->StepSeconds == Ref->StepSeconds);
    CHECK(Got->peak().peakBytes() == Ref->peak().peakBytes());
    CHECK(Got->GlobalBatch == Ref->GlobalBatch);
    CHECK(Got->ModelFlops == doctest::Approx(Ref->ModelFlops));
    // Errors name the constraint.
    auto Err = [&](TrainOptions X) {
      auto T = predictDataSplit(**A, Mixed, X);
      return T ? std::string() : llvm::toString(T.takeError());
    };
    TrainOptions X = S;
    X.Dp = 20;
    CHECK(Err(X) == "data split: its replicas sum to 16, but dp is 20");
    X = S;
    X.GlobalBatch = 64;
    CHECK(Err(X) == "data split: replicas x micro-batches x micro-batch size "
                    "sum to 96 samples, but the global batch is 64");
    X = S;
    X.DataSplit[0].Replicas = 17;
    X.Dp = 17;
    X.GlobalBatch = 17 * 3 * 2;
    CHECK(Err(X) == "data split: 17 replicas of tp 1 on 'v100-sxm2-32gb' need "
                    "17 devices, but cluster 'mixed-a100-v100' has 16");
    X = S;
    X.DataSplit[0].Device = "h100";
    CHECK(Err(X) == "data split: cluster 'mixed-a100-v100' has no device "
                    "'h100'");
    X = S;
    X.Pp = 2;
    CHECK(Err(X) == "an uneven data split runs whole replicas on each type: "
                    "it needs pp 1 and vp 1, not pp 2 vp 1");
    auto Plain = predictTraining(**A, Mixed, S);
    REQUIRE_FALSE(bool(Plain));
    CHECK(llvm::toString(Plain.takeError()) ==
          "an uneven data split is predicted per GPU type (predictDataSplit), "
          "not as one strategy");
    // Too few micro-batches for every replica.
    X = S;
    X.DataSplit = {{"a100-sxm4-80gb", 16, 0}, {"v100-sxm2-32gb", 16, 0}};
    X.Dp = 32;
    X.GlobalBatch = 40;
    llvm::Error B = balanceDataSplit(**A, Mixed, X);
    REQUIRE(bool(B));
    CHECK(llvm::toString(std::move(B)) ==
          "data split: global batch 40 in micro-batches of 2 cannot give each "
          "of 32 replicas at least one micro-batch");
  }

  TEST_CASE("mixed GPU types: one type alone as predictTraining has it") {
    // predictMixed with every stage on one type: the same stages (times,
    // memory) as predictTraining on that type; the step differs only in
    // the transfers the simulated 1F1B overlaps.
    Model M(8, 2048, 16, 2048);
    const hw::Cluster Mixed = mixedCluster();
    const hw::Cluster V100 = onlyGroup(Mixed, 1);
    TrainOptions O;
    O.DType = ir::DType::F16;
    O.Dp = 4;
    O.Tp = 2;
    O.Pp = 2;
    O.MicroBatch = 1;
    O.GlobalBatch = 32;
    O.ChunkBlocks = {5, 3};
    auto A = M.at(1);
    REQUIRE(bool(A));
    auto Ref = predictTraining(**A, V100, O);
    REQUIRE(bool(Ref));
    auto Got =
        predictMixed(**A, Mixed, O, {"v100-sxm2-32gb", "v100-sxm2-32gb"});
    REQUIRE_MESSAGE(bool(Got), llvm::toString(Got.takeError()));
    for (unsigned S = 0; S < 2; ++S) {
      CHECK(Got->Stages[S].Blocks == Ref->Stages[S].Blocks);
      CHECK(Got->Stages[S].peakBytes() == Ref->Stages[S].peakBytes());
      CHECK(Got->Stages[S].microBatchSeconds() ==
            Ref->Stages[S].microBatchSeconds());
    }
    // The closed form charges (pp - 1) x the slowest stage for the bubble
    // and every transfer; the schedule at least the slowest stage's
    // micro-batches.
    CHECK(Got->StepSeconds <= Ref->StepSeconds);
    CHECK(Got->StepSeconds >=
          Ref->MicroBatches * Ref->Stages[0].microBatchSeconds() +
              Ref->OptimizerSeconds + Ref->DpExposedSeconds);
    // The data-parallel figures its explanation names are the type's.
    CHECK(Got->DpWireBytes > 0);
    CHECK(Got->DpWireBytes == doctest::Approx(Ref->DpWireBytes));
    CHECK(Got->DpCommSeconds == doctest::Approx(Ref->DpCommSeconds));
  }

  TEST_CASE("mixed GPU types: Z3's plan has the exhaustive optimum's time") {
    Model Small(4, 768, 12, 1024), Xl(6, 2048, 16, 2048);
    hw::Cluster Full = mixedCluster();
    // One node of each type too.
    hw::Cluster Two = Full;
    for (hw::NodeGroup &G : Two.Groups)
      G.Count = 1;
    Two.Name = "mixed-2";
    struct Case {
      Model *M;
      const hw::Cluster *C;
      int64_t Global;
    };
    const std::vector<Case> Cases = {
        {&Small, &Two, 16}, {&Small, &Full, 64}, {&Xl, &Two, 32},
        {&Xl, &Two, 128},   {&Xl, &Full, 64},    {&Small, &Full, 256},
    };
    unsigned BothTypes = 0;
    for (const Case &K : Cases) {
      CAPTURE(K.C->Name);
      CAPTURE(K.Global);
      PlanRequest R = request(*K.M, *K.C, K.Global);
      R.Base.DType = ir::DType::F16;
      R.Planner = PlannerKind::Exhaustive;
      auto Ex = planTraining(R);
      REQUIRE_MESSAGE(bool(Ex), llvm::toString(Ex.takeError()));
      R.Planner = PlannerKind::Z3;
      auto Z = planTraining(R);
      REQUIRE_MESSAGE(bool(Z), llvm::toString(Z.takeError()));
      CHECK(Z->Optimal);
      CHECK(Ex->Optimal);
      CHECK(Z->Candidates == Ex->Candidates);
      CHECK(Z->Report.StepSeconds == Ex->Report.StepSeconds);
      CHECK(Z->Report.peak().peakBytes() == Ex->Report.peak().peakBytes());
      CHECK(Z->Report.Fits);
      if (std::set<std::string>(Z->StageDevices.begin(), Z->StageDevices.end())
                  .size() > 1 ||
          Z->Options.DataSplit.size() > 1)
        ++BothTypes;
    }
    CHECK(BothTypes >= 3);
  }

  TEST_CASE("mixed GPU types: errors name the constraint") {
    Model Small(4, 768, 12, 1024), Huge(8, 12288, 96, 2048);
    const hw::Cluster Mixed = mixedCluster();
    PlanRequest Vp = request(Small, Mixed, 64);
    Vp.Fixed.Vp = 2;
    CHECK(planError(Vp) == "--vp 2: interleaving is not modelled on mixed "
                           "GPU types (cluster 'mixed-a100-v100'); use --vp 1");
    PlanRequest Many = request(Small, Mixed, 64, 64);
    CHECK(planError(Many) ==
          "--devices 64: cluster 'mixed-a100-v100' has 32 devices");
    PlanRequest Nowhere = request(Huge, Mixed, 64);
    Nowhere.Base.DType = ir::DType::F16;
    Nowhere.Fixed.Tp = 1;
    Nowhere.Fixed.Pp = 1;
    Nowhere.Fixed.Zero = 0;
    const std::string E = planError(Nowhere);
    CHECK(E.rfind("no strategy fits in the memory of its stages' devices: "
                  "the smallest needs ",
                  0) == 0);
    CHECK(E.find("stages ") != std::string::npos);
    auto A = Small.at(1);
    REQUIRE(bool(A));
    TrainOptions O;
    O.Pp = 2;
    O.Dp = 16;
    O.GlobalBatch = 64;
    auto Over =
        predictMixed(**A, Mixed, O, {"v100-sxm2-32gb", "v100-sxm2-32gb"});
    REQUIRE_FALSE(bool(Over));
    CHECK(llvm::toString(Over.takeError()) ==
          "the plan puts 2 stages of dp 16 x tp 1 on 'v100-sxm2-32gb', 32 "
          "devices, but cluster 'mixed-a100-v100' has 16");
  }

  TEST_CASE("Z3's timeout in milliseconds: rounded up, at least 1, a limit "
            "past an unsigned's range or not a number is the largest") {
    constexpr unsigned Max = std::numeric_limits<unsigned>::max();
    CHECK(z3TimeoutMs(2.5) == 2500);
    CHECK(z3TimeoutMs(0.0001) == 1);
    CHECK(z3TimeoutMs(0) == 1);
    CHECK(z3TimeoutMs(4.0e6) == 4000000000u);
    CHECK(z3TimeoutMs(1e308) == Max);
    CHECK(z3TimeoutMs(std::numeric_limits<double>::infinity()) == Max);
    CHECK(z3TimeoutMs(std::nan("")) == Max);
  }

  TEST_CASE("Times and sizes handed to Z3 as int64: rounded, clamped past "
            "the int64 range, not a number is the largest") {
    constexpr int64_t Max = std::numeric_limits<int64_t>::max();
    constexpr int64_t Min = std::numeric_limits<int64_t>::min();
    CHECK(roundSaturated(2.5) == 3);
    CHECK(roundSaturated(-2.5) == -3);
    CHECK(roundSaturated(1.23456789e9) == 1234567890);
    CHECK(roundSaturated(9.0e18) == 9000000000000000000);
    CHECK(roundSaturated(9.3e18) == Max);
    CHECK(roundSaturated(1e300) == Max);
    CHECK(roundSaturated(-1e300) == Min);
    CHECK(roundSaturated(std::numeric_limits<double>::infinity()) == Max);
    CHECK(roundSaturated(std::nan("")) == Max);
    CHECK(floorSaturated(2.9) == 2);
    CHECK(floorSaturated(1e19) == Max);
  }
}
