//===- MixtureOfExpertsTest.cpp - Mixtures of experts ---------------------===//
//
// perfc zoo --experts writes each layer's MLP as a mixture of experts under
// balanced routing (tools/modelgen/TransformerGen.h): k times a dense MLP's
// arithmetic per token, E times its weights. Training finds the experts'
// MatMuls as a tensor-parallel pair, and expert parallelism (--ep) shards
// them.
//
//===----------------------------------------------------------------------===//
#include "TrainingHelpers.h"

#include "costmodels/Collectives.h"
#include "hwdb/Loader.h"
#include "passes/Backward.h"
#include "passes/Blocks.h"
#include "passes/MixedTypes.h"
#include "passes/Predict.h"
#include "passes/TrainStep.h"
#include "passes/WorkPass.h"
#include "tools/modelgen/TransformerGen.h"

#include <doctest/doctest.h>

using namespace perfc;
using namespace perfc::test;
using modelgen::Family;

namespace {

modelgen::TransformerSpec moeSpec(Family F, int64_t Experts, int64_t TopK,
                                  int64_t Batch = 2) {
  modelgen::TransformerSpec S = transformerSpec(F, 2, 64, 4, 16, 128);
  S.Ffn = 96;
  S.Experts = Experts;
  S.TopK = TopK;
  S.Batch = Batch;
  return S;
}

frontend::ImportedModel generated(const modelgen::TransformerSpec &S) {
  return importZoo(zooBytes(S), {}, "moe.onnx");
}

const ir::Node *nodeNamed(const ir::Graph &G, llvm::StringRef Name) {
  for (const auto &N : G.nodes())
    if (N->name() == Name)
      return N;
  return nullptr;
}

/// MACs of the nodes whose names contain Part.
double macsOf(const Report &R, llvm::StringRef Part) {
  double Sum = 0;
  for (const NodeReport &N : R.Nodes)
    if (llvm::StringRef(N.Name).contains(Part))
      Sum += N.Work.Macs;
  return Sum;
}

/// Parameters of the model's expert nodes (BlockInfo::Expert) and all.
std::pair<double, double> expertAndAllParams(const ir::Graph &G) {
  const GraphWork W = computeWork(G);
  const BlockInfo Blocks = analyzeBlocks(G, W);
  double Expert = 0, All = 0;
  for (const auto &N : G.nodes()) {
    All += W.Nodes[N->index()].Params;
    if (Blocks.Expert[N->index()])
      Expert += W.Nodes[N->index()].Params;
  }
  return {Expert, All};
}

TrainReport train(const ir::Graph &G, const hw::Cluster &C, TrainOptions O) {
  auto R = predictTraining(G, C, O);
  REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
  return std::move(*R);
}

std::string trainError(const ir::Graph &G, const hw::Cluster &C,
                       const TrainOptions &O) {
  auto R = predictTraining(G, C, O);
  if (R) {
    FAIL_CHECK("a bad strategy was accepted");
    return "";
  }
  return llvm::toString(R.takeError());
}

std::string specError(const modelgen::TransformerSpec &S) {
  auto R = modelgen::writeTransformerOnnx(S);
  if (R) {
    FAIL_CHECK("a bad spec was accepted");
    return "";
  }
  return llvm::toString(R.takeError());
}

} // namespace

TEST_SUITE("moe") {

  TEST_CASE("zoo --experts: E copies of the MLP's weights, k times its "
            "arithmetic per token") {
    for (Family F : {Family::Llama, Family::Gpt}) {
      const int64_t E = 8, K = 2, B = 2, S = 16, H = 64, Ffn = 96;
      const modelgen::TransformerSpec Moe = moeSpec(F, E, K, B);
      modelgen::TransformerSpec Dense = Moe;
      Dense.Experts = Dense.TopK = 0;
      const frontend::ImportedModel M = generated(Moe);
      const frontend::ImportedModel D = generated(Dense);
      const Report Rm = predictWork(M.Graph), Rd = predictWork(D.Graph);
      CHECK(Rm.Warnings.empty());
      for (const auto &V : M.Graph.values())
        CHECK_MESSAGE(V->shape().isStatic(), V->name().str());
      // The router [H, E] and E - 1 more MLPs per layer (gpt's biases
      // [E, 1, out] too).
      const double Mlp =
          F == Family::Llama ? 3 * H * Ffn : 2 * H * Ffn + Ffn + H;
      CHECK(Rm.Total.Params - Rd.Total.Params ==
            doctest::Approx(2 * (H * E + (E - 1) * Mlp)));
      CHECK(Rm.Total.Params ==
            modelgen::parameterCount(*modelgen::resolve(Moe)));
      // The experts' products: k times the dense MLP's, one per token.
      const double Tokens = B * S;
      const double Products = F == Family::Llama ? 3 : 2;
      CHECK(macsOf(Rm, "/moe/experts/") ==
            doctest::Approx(2 * K * Tokens * H * Ffn * Products));
      CHECK(macsOf(Rm, "/moe/experts/") ==
            doctest::Approx(K * macsOf(Rd, "/mlp/")));
      CHECK(macsOf(Rm, "/moe/router/") == doctest::Approx(2 * Tokens * H * E));
      // Each expert's rows: T*k/E.
      const ir::Value *Rows =
          M.Graph.lookup("/layers.0/moe/dispatch/Reshape_output_0");
      REQUIRE(Rows);
      CHECK(Rows->shape() == ir::Shape({E, int64_t(Tokens) * K / E, H}));
      const ir::Value *Out =
          M.Graph.lookup("/layers.1/moe/combine/ReduceSum_output_0");
      REQUIRE(Out);
      CHECK(Out->shape() == ir::Shape({B, S, H}));
    }
  }

  TEST_CASE("zoo --experts: top-1 routing has no expand, the name says E "
            "and k") {
    const modelgen::TransformerSpec S = moeSpec(Family::Gpt, 4, 1);
    const frontend::ImportedModel M = generated(S);
    CHECK_FALSE(nodeNamed(M.Graph, "/layers.0/moe/dispatch/Expand"));
    CHECK(nodeNamed(M.Graph, "/layers.0/moe/dispatch/Reshape"));
    CHECK(modelgen::resolve(S)->Name == "gpt_L2_H64_A4_F96_E4k1_S16_V128");
    // The default k is 2.
    modelgen::TransformerSpec D = S;
    D.TopK = 0;
    CHECK(modelgen::resolve(D)->TopK == 2);
  }

  TEST_CASE("zoo --experts: bad mixtures are one-line errors naming the "
            "flag") {
    modelgen::TransformerSpec S = moeSpec(Family::Llama, 1, 0);
    CHECK(specError(S).find("--experts 1: a mixture needs at least 2") !=
          std::string::npos);
    S = moeSpec(Family::Llama, 4, 5);
    CHECK(specError(S).find("--top-k 5 is more than --experts 4") !=
          std::string::npos);
    S = moeSpec(Family::Llama, 0, 2);
    CHECK(specError(S).find("--top-k 2 needs --experts") != std::string::npos);
    // A symbolic batch: 16 x 2 rows a sequence do not split over 3 experts.
    S = moeSpec(Family::Llama, 3, 2);
    S.Batch = llvm::None;
    CHECK(specError(S).find("--experts 3 at --seq 16 x --top-k 2 needs "
                            "--batch") != std::string::npos);
    // ... nor does one token reach all 8.
    S = moeSpec(Family::Llama, 8, 2);
    S.Batch = llvm::None;
    S.Seq = 1;
    CHECK(specError(S).find("needs --batch") != std::string::npos);
    S = moeSpec(Family::Bert, 4, 2);
    CHECK(specError(S).find("--experts is for gpt and llama") !=
          std::string::npos);
  }

  TEST_CASE("zoo --experts: few tokens reach few experts, padded to equal "
            "rows, and every expert stays resident") {
    // E (1 - (1 - k/E)^T): k at one token, E for a training batch.
    CHECK(modelgen::expectedActiveExperts(8, 2, 1) == doctest::Approx(2));
    CHECK(modelgen::expectedActiveExperts(8, 2, 3) == doctest::Approx(4.625));
    const auto Routing = [](int64_t Batch, int64_t Seq) {
      modelgen::TransformerSpec S = moeSpec(Family::Llama, 8, 2, Batch);
      S.Seq = Seq;
      S.Past = Seq == 1 ? 15 : 0;
      return modelgen::expertRouting(*modelgen::resolve(S));
    };
    const auto Is = [](modelgen::ExpertRouting R, int64_t A, int64_t Rows,
                       int64_t Pad) {
      return R.Active == A && R.Rows == Rows && R.Padding == Pad;
    };
    CHECK(Is(Routing(1, 1), 2, 1, 0));  // decoding one sequence
    CHECK(Is(Routing(3, 1), 5, 2, 4));  // 4.625 -> 5 experts, 6 rows
    CHECK(Is(Routing(16, 1), 8, 4, 0)); // 7.92 -> all 8
    CHECK(Is(Routing(2, 16), 8, 8, 0)); // a training batch
    CHECK(Is(Routing(1, 3), 5, 2, 4));  // tokens are tokens

    const int64_t H = 64, Ffn = 96, E = 8;
    const double ExpertBytes = 3.0 * H * Ffn * 4; // gate, up, down in fp32
    for (int64_t Batch : {1, 3}) {
      CAPTURE(Batch);
      modelgen::TransformerSpec S = moeSpec(Family::Llama, E, 2, Batch);
      S.Seq = 1;
      S.Past = 15;
      const frontend::ImportedModel M = generated(S);
      const modelgen::ExpertRouting R =
          modelgen::expertRouting(*modelgen::resolve(S));
      for (const auto &V : M.Graph.values())
        CHECK_MESSAGE(V->shape().isStatic(), V->name().str());
      const ir::Value *Rows =
          M.Graph.lookup("/layers.0/moe/dispatch/Reshape_output_0");
      REQUIRE(Rows);
      CHECK(Rows->shape() == ir::Shape({R.Active, R.Rows, H}));
      CHECK(bool(nodeNamed(M.Graph, "/layers.0/moe/dispatch/Pad")) ==
            (R.Padding > 0));
      if (R.Padding > 0) {
        const ir::Value *Kept =
            M.Graph.lookup("/layers.0/moe/combine/Slice_output_0");
        REQUIRE(Kept);
        CHECK(Kept->shape() == ir::Shape({Batch * 2, H}));
      }
      // The products run the padded rows and read the reached experts'
      // weights; the stacks' parameters are all E experts'.
      const Report Work = predictWork(M.Graph);
      CHECK(Work.Total.Params ==
            modelgen::parameterCount(*modelgen::resolve(S)));
      CHECK(macsOf(Work, "/layers.0/moe/experts/") ==
            doctest::Approx(double(R.Active * R.Rows) * 3 * H * Ffn));
      // The experts' slices move nothing: the products read the weights
      // where they lie.
      for (const NodeReport &N : Work.Nodes)
        if (llvm::StringRef(N.Name).endswith("/Slice") &&
            llvm::StringRef(N.Name).contains("/moe/experts/")) {
          CAPTURE(N.Name);
          CHECK(N.Work.IsView);
          CHECK(N.Work.BytesRead + N.Work.BytesWritten == 0);
        }
      auto C = hw::loadHardware("dgx-a100");
      REQUIRE(bool(C));
      PredictOptions O;
      O.Device = &C->primaryDevice();
      const Report Timed = predict(M.Graph, O);
      REQUIRE(Timed.Memory);
      // Memory holds every expert: as the same model at a training batch,
      // whose experts are all reached (up to the Pad's and Slices' few
      // index constants).
      modelgen::TransformerSpec All = S;
      All.Batch = 16;
      const Report Full = predict(generated(All).Graph, O);
      REQUIRE(Full.Memory);
      CHECK(Timed.Memory->Usage.WeightsBytes ==
            doctest::Approx(Full.Memory->Usage.WeightsBytes).epsilon(1e-4));
      // The kernels read R.Active experts' weights a layer, not E: the
      // step moves (E - A) experts' weights per layer less than at 16.
      REQUIRE(Timed.Kernels);
      REQUIRE(Full.Kernels);
      CHECK(Full.Kernels->KernelBytes - Timed.Kernels->KernelBytes >
            2 * (E - R.Active) * ExpertBytes);
      // A tensor-parallel pair as before: the slices are the parameter.
      const GraphWork W = computeWork(M.Graph);
      const BlockInfo Blocks = analyzeBlocks(M.Graph, W);
      const ir::Node *Gate =
          nodeNamed(M.Graph, "/layers.0/moe/experts/gate/MatMul");
      const ir::Node *Down =
          nodeNamed(M.Graph, "/layers.0/moe/experts/down/MatMul");
      REQUIRE(Gate);
      REQUIRE(Down);
      CHECK(Blocks.Tp[Gate->index()] == TpRole::Column);
      CHECK(Blocks.Tp[Down->index()] == TpRole::Row);
    }
    // A symbolic batch whose every batch reaches all experts keeps one
    // layout, without slices.
    modelgen::TransformerSpec S = moeSpec(Family::Gpt, 8, 2);
    S.Batch = llvm::None;
    const frontend::ImportedModel M = generated(S);
    CHECK_FALSE(nodeNamed(M.Graph, "/layers.0/moe/experts/fc1/Slice"));
    CHECK_FALSE(nodeNamed(M.Graph, "/layers.0/moe/dispatch/Pad"));
  }

  TEST_CASE("zoo --moe-ffn, --shared-ffn, --moe-every, --dense-layers: "
            "DeepSeek-MoE's and Megatron's layouts") {
    modelgen::TransformerSpec S = moeSpec(Family::Llama, 8, 2);
    S.Layers = 4;
    S.MoeFfn = 32;
    S.SharedFfn = 48;
    S.DenseLayers = 1;
    S.MoeEvery = 2;
    const frontend::ImportedModel M = generated(S);
    // Layers 0 (dense: the first), 1 and 3 (dense: odd) keep /mlp/; layer 2
    // is the one mixture.
    for (int I : {0, 1, 3})
      CHECK(nodeNamed(M.Graph,
                      "/layers." + std::to_string(I) + "/mlp/gate/MatMul"));
    CHECK(nodeNamed(M.Graph, "/layers.2/moe/experts/gate/MatMul"));
    CHECK(nodeNamed(M.Graph, "/layers.2/moe/shared/down/MatMul"));
    CHECK_FALSE(nodeNamed(M.Graph, "/layers.1/moe/router/MatMul"));
    const Report R = predictWork(M.Graph);
    CHECK(R.Total.Params == modelgen::parameterCount(*modelgen::resolve(S)));
    // Per token: k experts of width 32 and the shared 48, as MACs.
    const double H = 64, Tokens = 2 * 16;
    CHECK(macsOf(R, "/layers.2/moe/experts/") ==
          doctest::Approx(Tokens * 2 * 3 * H * 32));
    CHECK(macsOf(R, "/layers.2/moe/shared/") ==
          doctest::Approx(Tokens * 3 * H * 48));
    CHECK(macsOf(R, "/layers.1/mlp/") == doctest::Approx(Tokens * 3 * H * 96));
    CHECK(modelgen::resolve(S)->Name ==
          "llama_L4_H64_A4_F96_E8k2f32s48every2d1_S16_V128");
    // The shared experts are a tensor-parallel pair of their own; the
    // router reading the same input still runs whole.
    const GraphWork W = computeWork(M.Graph);
    const BlockInfo Blocks = analyzeBlocks(M.Graph, W);
    const auto Role = [&](llvm::StringRef Name) {
      const ir::Node *N = nodeNamed(M.Graph, Name);
      REQUIRE(N);
      return Blocks.Tp[N->index()];
    };
    CHECK(Role("/layers.2/moe/shared/gate/MatMul") == TpRole::Column);
    CHECK(Role("/layers.2/moe/shared/down/MatMul") == TpRole::Row);
    CHECK(Role("/layers.2/moe/router/MatMul") == TpRole::Replicated);
    CHECK(Role("/layers.2/moe/experts/down/MatMul") == TpRole::Row);
    CHECK(Blocks.ExpertCounts == std::vector<int64_t>{8});
    // Errors name the flag.
    modelgen::TransformerSpec Bad = moeSpec(Family::Llama, 0, 0);
    Bad.SharedFfn = 16;
    CHECK(specError(Bad).find("--shared-ffn 16 shapes a mixture of experts: "
                              "add --experts") != std::string::npos);
    Bad = moeSpec(Family::Llama, 4, 2);
    Bad.DenseLayers = 2;
    CHECK(specError(Bad).find("leave no layer of 2 a mixture of experts") !=
          std::string::npos);
  }

  TEST_CASE("the experts are a tensor-parallel pair, the router runs whole") {
    const frontend::ImportedModel M = generated(moeSpec(Family::Llama, 8, 2));
    const GraphWork W = computeWork(M.Graph);
    const BlockInfo Blocks = analyzeBlocks(M.Graph, W);
    REQUIRE(Blocks.NumBlocks == 2);
    const auto Role = [&](llvm::StringRef Name) {
      const ir::Node *N = nodeNamed(M.Graph, Name);
      REQUIRE(N);
      return Blocks.Tp[N->index()];
    };
    CHECK(Role("/layers.0/moe/experts/gate/MatMul") == TpRole::Column);
    CHECK(Role("/layers.0/moe/experts/up/MatMul") == TpRole::Column);
    CHECK(Role("/layers.0/moe/experts/Mul") == TpRole::Sharded);
    CHECK(Role("/layers.0/moe/experts/down/MatMul") == TpRole::Row);
    CHECK(Role("/layers.0/moe/router/MatMul") == TpRole::Replicated);
    CHECK(Role("/layers.0/moe/combine/Mul") == TpRole::Replicated);
    // Backward: a data and a weight gradient per expert product; the
    // router's gradient flows back through the routing weights.
    const BackwardInfo Back = computeBackward(M.Graph, W);
    const ir::Node *Down =
        nodeNamed(M.Graph, "/layers.1/moe/experts/down/MatMul");
    const ir::Node *Router = nodeNamed(M.Graph, "/layers.1/moe/router/MatMul");
    REQUIRE(Down);
    REQUIRE(Router);
    CHECK(Back.Work[Down->index()].Macs ==
          doctest::Approx(2 * W.Nodes[Down->index()].Macs));
    CHECK(Back.NeedsGrad[Router->index()]);
  }

  TEST_CASE("--ep: each rank holds E / ep experts, the same work, four "
            "all-to-alls per mixture and micro-batch") {
    const int64_t E = 8, K = 2, B = 2, S = 16, H = 64;
    const frontend::ImportedModel M =
        generated(moeSpec(Family::Llama, E, K, B));
    auto C = hw::loadHardware("dgx-h100");
    REQUIRE(bool(C));
    const auto [ExpertParams, AllParams] = expertAndAllParams(M.Graph);
    CHECK(ExpertParams == doctest::Approx(2.0 * E * 3 * H * 96));
    TrainOptions O;
    O.Dp = 8;
    O.MicroBatch = B;
    O.DType = ir::DType::BF16;
    O.Zero = 1;
    const TrainReport Whole = train(M.Graph, *C, O);
    CHECK(Whole.EpCommSeconds == 0);
    CHECK(Whole.Stages[0].ExpertParams == 0);
    for (unsigned Ep : {2u, 4u, 8u}) {
      CAPTURE(Ep);
      O.Ep = Ep;
      const TrainReport R = train(M.Graph, *C, O);
      const StageReport &St = R.Stages[0];
      CHECK(St.ExpertParams == doctest::Approx(ExpertParams / Ep));
      CHECK(St.Params ==
            doctest::Approx(AllParams - ExpertParams * (1 - 1.0 / Ep)));
      // bf16 weights; Adam's 12 bytes sharded over dp for the dense
      // parameters and over the dp / ep replicas of each expert: 1 / dp of
      // all parameters either way.
      CHECK(St.WeightsBytes == doctest::Approx(2 * St.Params));
      CHECK(St.OptimizerBytes == doctest::Approx(12 * AllParams / 8));
      // Two mixtures, each a dispatch and a combine of T*k rows of H
      // each way: the two layers' 8 all-to-alls per micro-batch.
      auto G = cost::groupOf(*C, Ep, 1);
      REQUIRE(bool(G));
      const double Bytes = double(B * S * K * H) * 2;
      const double One =
          cost::collectiveSeconds(cost::Collective::AllToAll, Bytes, *G);
      CHECK(St.EpCommSeconds == doctest::Approx(8 * One));
      CHECK(St.EpForwardSeconds == doctest::Approx(4 * One));
      CHECK(R.EpCommSeconds == doctest::Approx(St.EpCommSeconds));
      CHECK(R.ExposedCommSeconds >= R.EpCommSeconds);
      CHECK(St.microBatchSeconds() ==
            doctest::Approx(St.ForwardSeconds + St.BackwardSeconds +
                            St.EpCommSeconds));
      // The experts' gradients: reduced over the dp / ep ranks holding
      // them, not at all once ep spans the data-parallel group.
      // (At this size each exchange is latency: two groups' buckets cost
      // more than one group's, so only ep 8 is cheaper.)
      if (Ep == 8) {
        CHECK(R.DpExpertCommSeconds == 0);
        CHECK(R.DpCommSeconds < Whole.DpCommSeconds);
      } else {
        CHECK(R.DpExpertCommSeconds > 0);
        CHECK(R.DpCommSeconds > R.DpExpertCommSeconds);
      }
    }
    // Megatron-Core's overlapped gather: the dense and the experts'
    // buckets each during the next forward, the step waiting for the later.
    O.Ep = 4;
    const TrainReport After = train(M.Graph, *C, O);
    O.OverlapParamGather = true;
    const TrainReport During = train(M.Graph, *C, O);
    CHECK(During.DpExposedSeconds < After.DpExposedSeconds);
    CHECK(During.DpGatherExposedSeconds < After.DpGatherExposedSeconds);
    CHECK(During.DpExpertCommSeconds > 0);
    O.OverlapParamGather = false;
    // Full recomputation runs the forward's all-to-alls again.
    const TrainReport None = train(M.Graph, *C, O);
    O.Recomp = Recompute::Full;
    const TrainReport Full = train(M.Graph, *C, O);
    CHECK(Full.EpCommSeconds == doctest::Approx(1.5 * None.EpCommSeconds));
  }

  TEST_CASE("--ep errors name the constraint") {
    const frontend::ImportedModel M = generated(moeSpec(Family::Llama, 8, 2));
    auto C = hw::loadHardware("dgx-h100");
    REQUIRE(bool(C));
    TrainOptions O;
    O.Dp = 4;
    O.MicroBatch = 2;
    O.Ep = 3;
    CHECK(trainError(M.Graph, *C, O) ==
          "--ep 3 does not divide dp 4 x cp 1 = 4: expert parallelism splits "
          "the experts over ranks of a data-parallel group (Megatron-Core's "
          "expert-model-parallel size); use an ep that divides 4");
    O.Dp = 4;
    O.Tp = 2;
    O.Ep = 4;
    CHECK(trainError(M.Graph, *C, O) ==
          "--ep 4 with --tp 2 needs --sp: Megatron-Core's token dispatcher "
          "splits the tokens over the tensor ranks by sequence parallelism");
    O.Tp = 1;
    O.Dp = 8;
    O.Ep = 8;
    O.Zero = 3;
    CHECK(trainError(M.Graph, *C, O)
              .find("--ep 8 with --zero 3 is not "
                    "modelled") != std::string::npos);
    // Six experts do not split over four ranks.
    modelgen::TransformerSpec Six = moeSpec(Family::Gpt, 6, 3);
    const frontend::ImportedModel M6 = generated(Six);
    TrainOptions O6;
    O6.Dp = 4;
    O6.Ep = 4;
    O6.MicroBatch = 2;
    CHECK(trainError(M6.Graph, *C, O6) ==
          "--ep 4: a mixture of 6 experts does not split over 4 ranks; use an "
          "ep that divides 6");
    // A dense model has nothing to split.
    modelgen::TransformerSpec Dense = moeSpec(Family::Gpt, 0, 0);
    const frontend::ImportedModel D = generated(Dense);
    CHECK(trainError(D.Graph, *C, O6)
              .find("--ep 4: the model has no "
                    "mixture of experts") != std::string::npos);
  }

  TEST_CASE("--overlap-moe-expert-parallel-comm: each micro-batch's "
            "all-to-alls hidden up to its compute, the first forward's and "
            "last backward's exposed, one more micro-batch held") {
    const frontend::ImportedModel M =
        generated(moeSpec(Family::Llama, 16, 2, 2));
    auto C = hw::loadHardware("dgx-h100-superpod");
    REQUIRE(bool(C));
    TrainOptions O;
    O.Dp = 16; // ep 16 spans two nodes: all-to-alls over InfiniBand
    O.Ep = 16;
    O.MicroBatch = 2;
    O.GlobalBatch = 2 * 16 * 6; // 6 micro-batches per rank
    O.DType = ir::DType::BF16;
    O.Zero = 1;
    const TrainReport Serial = train(M.Graph, *C, O);
    O.OverlapMoeExpertParallelComm = true;
    const TrainReport Paired = train(M.Graph, *C, O);
    const StageReport &S = Serial.Stages[0], &P = Paired.Stages[0];
    const double Compute =
        S.ForwardSeconds + S.BackwardSeconds + S.RecomputeSeconds;
    const double All = S.EpCommSeconds;
    REQUIRE(All > 0);
    // Per micro-batch: min(all-to-alls, compute) hidden, the rest exposed.
    CHECK(P.EpOverlappedSeconds == doctest::Approx(std::min(All, Compute)));
    CHECK(P.EpCommSeconds == doctest::Approx(All - std::min(All, Compute)));
    CHECK(P.microBatchSeconds() ==
          doctest::Approx(S.microBatchSeconds() - P.EpOverlappedSeconds));
    // Per step: 6 micro-batches, of which one's all-to-alls (the first
    // forward's and the last backward's) have no partner.
    CHECK(Paired.EpOverlappedSeconds ==
          doctest::Approx(5 * P.EpOverlappedSeconds));
    CHECK(Paired.EpCommSeconds ==
          doctest::Approx(6 * P.EpCommSeconds + P.EpOverlappedSeconds));
    CHECK(Paired.EpCommSeconds + Paired.EpOverlappedSeconds ==
          doctest::Approx(Serial.EpCommSeconds));
    CHECK(Paired.StepSeconds ==
          doctest::Approx(Serial.StepSeconds - 5 * P.EpOverlappedSeconds));
    CHECK(Paired.CommSeconds == doctest::Approx(Serial.CommSeconds));
    // The timeline draws the unpaired all-to-alls too: it ends with the
    // step.
    TrainOptions Traced = O;
    Traced.Timeline = true;
    const TrainReport T = train(M.Graph, *C, Traced);
    CHECK(T.Trace.End == doctest::Approx(Paired.StepSeconds));
    CHECK(llvm::any_of(T.Trace.Events, [](const TimelineEvent &E) {
      return llvm::StringRef(E.Name).startswith(
          "expert all-to-alls without a partner");
    }));
    // Combined 1F1B holds one more micro-batch's activations.
    CHECK(P.InFlight == S.InFlight + 1);
    CHECK(P.ActivationsBytes > S.ActivationsBytes);

    // Megatron-Core's rules, each a one-line error.
    TrainOptions Bad = O;
    Bad.Recomp = Recompute::Full;
    CHECK(trainError(M.Graph, *C, Bad)
              .find("which full recomputation does not allow") !=
          std::string::npos);
    Bad = O;
    Bad.DType = ir::DType::F32;
    CHECK(trainError(M.Graph, *C, Bad).find("runs in mixed precision only") !=
          std::string::npos);
    Bad = O;
    Bad.Dp = 8;
    Bad.Ep = 8;
    Bad.Pp = 2;
    Bad.GlobalBatch = 2 * 8 * 4;
    CHECK(trainError(M.Graph, *C, Bad) ==
          "--overlap-moe-expert-parallel-comm with --pp 2 needs the "
          "interleaved schedule (Megatron-Core's combined 1F1B): add --vp of "
          "at least 2");
    Bad = O;
    Bad.Ep = 1;
    CHECK(trainError(M.Graph, *C, Bad).find("add --ep N (N of at least 2)") !=
          std::string::npos);
  }

  TEST_CASE("--moe-capacity: the experts' tokens scaled, the model FLOPs "
            "not") {
    const frontend::ImportedModel M = generated(moeSpec(Family::Llama, 8, 2));
    auto C = hw::loadHardware("dgx-h100");
    REQUIRE(bool(C));
    TrainOptions O;
    O.Dp = 8;
    O.Ep = 4;
    O.MicroBatch = 2;
    O.DType = ir::DType::BF16;
    const TrainReport One = train(M.Graph, *C, O);
    O.ExpertCapacity = 2;
    const TrainReport Two = train(M.Graph, *C, O);
    CHECK(Two.ModelFlops == doctest::Approx(One.ModelFlops));
    CHECK(Two.ComputeSeconds > One.ComputeSeconds);
    CHECK(Two.StepSeconds > One.StepSeconds);
    // The all-to-alls carry twice the rows: 8 a step (one micro-batch).
    auto G = cost::groupOf(*C, 4, 1);
    REQUIRE(bool(G));
    const double Rows = double(2 * 16 * 2 * 64) * 2; // T*k rows of H, bf16
    for (const auto &[R, F] : {std::make_pair(&One, 1.0), {&Two, 2.0}})
      CHECK(R->EpCommSeconds ==
            doctest::Approx(8 * cost::collectiveSeconds(
                                    cost::Collective::AllToAll, F * Rows, *G)));
    // The tensors the experts keep for backward (their inputs and the
    // products' outputs) double; everything else is as before.
    const GraphWork W = computeWork(M.Graph);
    const BlockInfo Blocks = analyzeBlocks(M.Graph, W);
    const BackwardInfo Back = computeBackward(M.Graph, W);
    double ExpertKept = 0;
    for (const SavedTensor &T : Back.Saved) {
      const ir::Node *P = T.Value->producer();
      if (Blocks.Expert[T.Node] || (P && Blocks.Expert[P->index()]))
        ExpertKept += T.bytes() / 2; // fp32 graph, bf16 training
    }
    CHECK(ExpertKept > 0);
    CHECK(Two.Stages[0].ActivationsBytes - One.Stages[0].ActivationsBytes ==
          doctest::Approx(ExpertKept));
    CHECK(Two.Stages[0].WeightsBytes == One.Stages[0].WeightsBytes);
    // Errors: a capacity that is no share, a model without experts.
    O.ExpertCapacity = 0;
    CHECK(trainError(M.Graph, *C, O)
              .find("--moe-capacity 0: give the "
                    "experts' tokens over their "
                    "balanced share") != std::string::npos);
    const frontend::ImportedModel D = generated(moeSpec(Family::Gpt, 0, 0));
    TrainOptions Dense;
    Dense.MicroBatch = 2;
    Dense.ExpertCapacity = 1.25;
    CHECK(trainError(D.Graph, *C, Dense)
              .find("--moe-capacity 1.25: the model has no mixture of "
                    "experts") != std::string::npos);
  }

  TEST_CASE("--ep on mixed GPU types is refused, not mispriced") {
    const frontend::ImportedModel M = generated(moeSpec(Family::Llama, 8, 2));
    auto C = hw::loadHardware(std::string(PERFC_SOURCE_DIR) +
                              "/tests/data/hwdb/mixed-a100-v100.yaml");
    REQUIRE(bool(C));
    const TrainingAnalysis A(M.Graph);
    TrainOptions O;
    O.Dp = 2;
    O.Pp = 2;
    O.Ep = 2;
    O.MicroBatch = 2;
    auto Mixed = predictMixed(A, *C, O, {"a100-sxm4-80gb", "v100-sxm2-32gb"});
    REQUIRE_FALSE(bool(Mixed));
    CHECK(llvm::toString(Mixed.takeError()) ==
          "mixed GPU types: expert parallelism (--ep) is not modelled; use "
          "--ep 1");
    O.Pp = 1;
    O.DataSplit = {{"a100-sxm4-80gb", 1, 1}, {"v100-sxm2-32gb", 1, 1}};
    auto Split = predictDataSplit(A, *C, O);
    REQUIRE_FALSE(bool(Split));
    CHECK(llvm::toString(Split.takeError()) ==
          "an uneven data split: expert parallelism (--ep) is not modelled; "
          "use --ep 1");
  }

  TEST_CASE("--ep with --tp: tensor ranks send 1 / tp of the tokens, "
            "experts stay a tensor-parallel pair") {
    const frontend::ImportedModel M = generated(moeSpec(Family::Gpt, 8, 2));
    auto C = hw::loadHardware("dgx-h100");
    REQUIRE(bool(C));
    TrainOptions O;
    O.Dp = 4;
    O.Tp = 2;
    O.Ep = 4;
    O.SequenceParallel = true;
    O.MicroBatch = 2;
    const TrainReport R = train(M.Graph, *C, O);
    auto G = cost::groupOf(*C, 4, 2);
    REQUIRE(bool(G));
    // [E, T*k/E, H] rows of fp32, a tensor rank's half.
    const double Bytes = double(2 * 16 * 2 * 64) * 4 / 2;
    CHECK(R.Stages[0].EpCommSeconds ==
          doctest::Approx(8 * cost::collectiveSeconds(
                                  cost::Collective::AllToAll, Bytes, *G)));
    CHECK(R.TpCommSeconds > 0);
  }
}

TEST_SUITE("expert-parallel inference") {

  /// One decoding step of 4 sequences after 15 tokens: 8 routed rows reach
  /// 5 of the 8 experts (2 rows each, 2 padded).
  frontend::ImportedModel decodeStep(int64_t Batch = 4) {
    modelgen::TransformerSpec S = moeSpec(Family::Llama, 8, 2, Batch);
    S.Seq = 1;
    S.Past = 15;
    return generated(S);
  }

  Report serve(const ir::Graph &G, const hw::Cluster &C, unsigned Ep) {
    PredictOptions O;
    O.Device = &C.primaryDevice();
    if (Ep > 1) {
      llvm::Error E = checkExpertParallel(G, Ep);
      REQUIRE_MESSAGE(!E, llvm::toString(std::move(E)));
      auto Group = tensorParallelGroup(C, Ep, "--ep");
      REQUIRE_MESSAGE(bool(Group), llvm::toString(Group.takeError()));
      O.ExpertParallel = *Group;
    }
    return predict(G, O);
  }

  TEST_CASE("--ep serves a mixture: attention on 1/ep of the batch with "
            "all its weights, 1/ep of the experts, an all-to-all each way "
            "per mixture") {
    const frontend::ImportedModel M = decodeStep();
    auto C = hw::loadHardware("dgx-h100");
    REQUIRE(bool(C));
    const Report One = serve(M.Graph, *C, 1);
    const Report Two = serve(M.Graph, *C, 2);
    REQUIRE(Two.ExpertParallel);
    CHECK_FALSE(One.ExpertParallel);
    const ExpertParallelReport &EP = *Two.ExpertParallel;
    CHECK(EP.Degree == 2);
    // Per layer: the dispatched rows [5, 2, 64] (read by gate and up) and
    // the experts' output [5, 2, 64], fp32; each rank sends half.
    CHECK(EP.AllToAlls == 4);
    CHECK(EP.AllToAllBytes == doctest::Approx(2 * 2 * 5 * 2 * 64 * 4.0 / 2));
    CHECK(EP.CommSeconds > 0);
    CHECK(*Two.LatencySeconds ==
          doctest::Approx(EP.KernelSeconds + EP.CommSeconds));
    // Memory: the experts' weights halve, the dense ones stay whole; the
    // key/value cache (and every activation) halves.
    const auto [ExpertParams, AllParams] = expertAndAllParams(M.Graph);
    REQUIRE(ExpertParams > 0);
    REQUIRE(One.Memory);
    REQUIRE(Two.Memory);
    CHECK(Two.Memory->Usage.WeightsBytes ==
          doctest::Approx(One.Memory->Usage.WeightsBytes - ExpertParams * 4 / 2)
              .epsilon(0.01));
    CHECK(Two.Memory->Usage.InputsBytes ==
          doctest::Approx(One.Memory->Usage.InputsBytes / 2).epsilon(0.01));
    // The largest batch is a multiple of ep (each rank serves 1/ep of it):
    // a rank's bytes past its weights, per sample of the whole batch.
    REQUIRE(Two.Memory->MaxBatch);
    const InferenceMemoryReport &TwoMem = *Two.Memory;
    const double PerSample =
        (TwoMem.Usage.PeakBytes - TwoMem.Usage.WeightsBytes) / 4;
    CHECK(TwoMem.BytesPerSample == doctest::Approx(PerSample));
    const uint64_t Estimate = uint64_t(
        (TwoMem.CapacityBytes - TwoMem.Usage.WeightsBytes) / PerSample);
    CHECK(*TwoMem.MaxBatch == Estimate / 2 * 2);
    // The experts' products: half the experts a step reaches on a rank.
    const ir::Node *Gate =
        nodeNamed(M.Graph, "/layers.0/moe/experts/gate/MatMul");
    REQUIRE(Gate);
    const GraphWork W = computeWork(M.Graph);
    CHECK(W.Nodes[Gate->index()].Gemm.Batch == 5);
    const BlockInfo B = analyzeBlocks(M.Graph, W);
    CHECK(B.Expert[Gate->index()]); // a slice of the stack is still experts
  }

  TEST_CASE("--ep needs experts it divides and a batch it splits") {
    auto C = hw::loadHardware("dgx-h100");
    REQUIRE(bool(C));
    const frontend::ImportedModel M = decodeStep();
    const auto Error = [](llvm::Error E) {
      return E ? llvm::toString(std::move(E)) : std::string();
    };
    CHECK(Error(checkExpertParallel(M.Graph, 1)).empty());
    CHECK(Error(checkExpertParallel(M.Graph, 3))
              .find("--ep 3 does not divide the 8 experts of a mixture") !=
          std::string::npos);
    CHECK(Error(checkExpertParallel(M.Graph, 8))
              .find("--ep 8 splits the batch over its ranks (data-parallel "
                    "attention), but input 'input_ids' has a batch of 4") !=
          std::string::npos);
    modelgen::TransformerSpec Dense = moeSpec(Family::Llama, 8, 2, 4);
    Dense.Experts = 0;
    Dense.TopK = 0;
    CHECK(Error(checkExpertParallel(generated(Dense).Graph, 2))
              .find("--ep 2: the model has no mixture of experts") !=
          std::string::npos);
  }
}
