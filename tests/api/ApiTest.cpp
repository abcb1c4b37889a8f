//===- ApiTest.cpp - include/perfc/perfc.h
//---------------------------------===//
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "perfc/perfc.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace api = perfc::api;

namespace {

std::string zoo(const std::string &Name) {
  return std::string(PERFC_SOURCE_DIR) + "/tests/data/zoo/" + Name;
}

std::string readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  std::stringstream S;
  S << In.rdbuf();
  return S.str();
}

/// A ResNet-like CNN of about 50 ops.
api::Model cnn(int64_t Batch = 1, int64_t Width = 32) {
  api::ModelBuilder B("cnn");
  auto X = B.input("image", {Batch, 3, 224, 224});
  X = B.relu(B.batchNorm(B.conv(X, Width, 3, 2)));
  X = B.maxPool(X, 3, 2, 1);
  for (int Stage = 0; Stage < 4; ++Stage) {
    int64_t C = Width << Stage;
    auto Y = B.relu(B.batchNorm(B.conv(X, C, 3, Stage ? 2 : 1)));
    Y = B.batchNorm(B.conv(Y, C, 3));
    auto S = B.batchNorm(B.conv(X, C, 1, Stage ? 2 : 1, 0));
    X = B.relu(B.add(Y, S));
  }
  B.output(B.softmax(B.gemm(B.flatten(B.globalAvgPool(X)), 1000)));
  return B.build();
}

} // namespace

TEST_CASE("builder: shapes, work and latency") {
  api::ModelBuilder B("t");
  auto X = B.input("x", {2, 3, 32, 32});
  auto C = B.conv(X, 8, 3, 2);
  CHECK(B.shape(C) == std::vector<int64_t>{2, 8, 16, 16});
  CHECK(B.shape(B.maxPool(C, 2)) == std::vector<int64_t>{2, 8, 8, 8});
  CHECK(B.shape(B.depthwiseConv(C, 5)) == std::vector<int64_t>{2, 8, 16, 16});
  auto F = B.flatten(B.globalAvgPool(B.relu6(C)));
  CHECK(B.shape(F) == std::vector<int64_t>{2, 8});
  CHECK(B.shape(B.concat({C, C})) == std::vector<int64_t>{2, 16, 16, 16});
  auto G = B.gemm(F, 4);
  B.output(G);
  api::Model M = B.build();
  CHECK(M.batch() == 2);
  api::Prediction P = api::predict(M, nullptr);
  // Conv: 2 x 8 x 16 x 16 outputs of 27 MACs.
  CHECK(P.ops()[0].macs == 2 * 8 * 16 * 16 * 27);
  CHECK(!P.latencySeconds());
  api::Hardware Hw = api::Hardware::load("a100-sxm4-80gb");
  api::Prediction T = api::predict(M, Hw);
  REQUIRE(T.latencySeconds());
  CHECK(*T.latencySeconds() > 0);
  CHECK(T.ops().size() == M.numNodes());
  // predict() leaves the rows' names out of its report (the fast path);
  // ops() describes them from the graph, as the JSON names them.
  CHECK(T.ops()[0].op == "Conv");
  CHECK(T.ops()[0].outputShape == "[2, 8, 16, 16]");
  CHECK(!T.ops()[0].name.empty());
  CHECK(api::toJson(T).find("\"name\": \"" + T.ops()[0].name + "\"") !=
        std::string::npos);
  // A device that cannot run a node: the error still names it.
  api::Hardware Dla = api::Hardware::load("jetson-agx-orin-dla");
  const std::string NodeNamed = "node '" + T.ops()[0].name + "'";
  CHECK_THROWS_WITH_AS(api::predict(M, Dla),
                       doctest::Contains(NodeNamed.c_str()), api::Error);
}

TEST_CASE("builder: errors") {
  api::ModelBuilder B("bad");
  auto X = B.input("x", {1, 3, 8, 8});
  CHECK_THROWS_WITH_AS(B.conv(X, 8, 3, 1, -1, 2), doctest::Contains("groups"),
                       api::Error);
  CHECK_THROWS_AS(B.gemm(X, 4), api::Error);
  CHECK_THROWS_AS(B.conv(X, 8, 11, 1, 0), api::Error); // empty output
  auto Y = B.input("y", {1, 4, 8, 8});
  CHECK_THROWS_WITH_AS(B.add(X, Y), doctest::Contains("do not broadcast"),
                       api::Error);
  B.relu(X);
  B.build();
  CHECK_THROWS_WITH_AS(B.relu(X), doctest::Contains("after build"), api::Error);
}

TEST_CASE("ONNX from a file and from bytes give the CLI's report") {
  api::Hardware Hw = api::Hardware::load("a100-sxm4-80gb");
  api::ImportOptions O;
  O.batch = 4;
  api::Model F = api::Model::fromOnnxFile(zoo("resnet50.onnx"), O);
  std::string Bytes = readFile(zoo("resnet50.onnx"));
  api::Model B = api::Model::fromOnnxBytes(Bytes, O, zoo("resnet50.onnx"));
  CHECK(F.name() == "resnet50");
  CHECK(F.batch() == 4);
  std::string JF = api::toJson(api::predict(F, Hw));
  CHECK(JF == api::toJson(api::predict(B, Hw)));
  CHECK(JF.find("\"path\": \"" + zoo("resnet50.onnx") + "\"") !=
        std::string::npos);
  std::string C = api::toJson(api::predict(F, Hw), true);
  CHECK(C.find('\n') == std::string::npos);
  CHECK(C.find("\"schema_version\":1") != std::string::npos);
  // The bytes cache returns the same model for the same bytes and options,
  // and a new one for other options.
  api::Model B2 = api::Model::fromOnnxBytes(Bytes, O, zoo("resnet50.onnx"));
  CHECK(&B2.impl() == &B.impl());
  O.batch = 8;
  api::Model B8 = api::Model::fromOnnxBytes(Bytes, O, zoo("resnet50.onnx"));
  CHECK(&B8.impl() != &B.impl());
  CHECK(B8.batch() == 8);
  // An inference run's peak memory, as the JSON's "memory": the 267
  // initializers (102,440,608 bytes in fp32) and, at batch 4, layer1's
  // downsampling convolution's input (802,816 x 4) and two 3,211,264 x 4
  // outputs alive together.
  auto Mem = api::predict(F, Hw).memory();
  REQUIRE(Mem);
  CHECK(Mem->weightsBytes == 102440608);
  CHECK(Mem->activationsBytes == 4 * (802816 + 2 * 3211264));
  CHECK(Mem->peakBytes == Mem->weightsBytes + Mem->activationsBytes);
  CHECK(Mem->fits);
  CHECK(Mem->capacityBytes == 80.0 * (1ull << 30));
  CHECK(Mem->peakAt == "/layer1/layer1.0/downsample/downsample.0/Conv");
  CHECK(JF.find("\"peak_bytes\": " + std::to_string(int64_t(Mem->peakBytes))) !=
        std::string::npos);
  CHECK_FALSE(api::predict(F, nullptr).memory()); // no device, no memory
}

TEST_CASE("maxBatch: the prediction at the largest batch that fits") {
  // ResNet-18 from bytes on a 16 GiB T4: the search imports the bytes again
  // at each batch; the prediction is the found batch's, the model handle
  // the caller holds keeps its own.
  api::Hardware T4 = api::Hardware::load("t4");
  const std::string Bytes = readFile(zoo("resnet18.onnx"));
  api::Model M = api::Model::fromOnnxBytes(Bytes, {}, "resnet18.onnx");
  api::PredictOptions O;
  O.maxBatch = true;
  api::Prediction P = api::predict(M, T4, O);
  auto Search = P.batchSearch();
  REQUIRE(Search);
  CHECK(Search->fromBatch == 1);
  CHECK(Search->batch > 1000);
  CHECK_FALSE(Search->maxLatencySeconds);
  REQUIRE(!Search->tried.empty());
  // The last batch admitted is the result; the one above it does not fit.
  int64_t Admitted = 0;
  bool AboveRefused = false;
  for (const api::BatchSearchSummary::Probe &T : Search->tried) {
    CHECK_FALSE(T.meetsLatency);
    if (T.fits)
      Admitted = T.batch;
    AboveRefused |= !T.fits && T.batch == Search->batch + 1;
  }
  CHECK(Admitted == Search->batch);
  CHECK(AboveRefused);
  REQUIRE(P.memory());
  CHECK(P.memory()->fits);
  CHECK(P.ops().front().outputShape.rfind(
            "[" + std::to_string(Search->batch) + ",", 0) == 0);
  CHECK(M.batch() == 1);
  const std::string J = api::toJson(P);
  CHECK(J.find("\"batch_search\"") != std::string::npos);
  CHECK(J.find("\"batch\": " + std::to_string(Search->batch)) !=
        std::string::npos);
  // A bound of half that batch's latency admits a smaller batch.
  O.maxBatchLatencySeconds = *P.latencySeconds() / 2;
  api::Prediction Fast = api::predict(M, T4, O);
  REQUIRE(Fast.batchSearch());
  CHECK(Fast.batchSearch()->batch < Search->batch);
  CHECK(*Fast.latencySeconds() <= *O.maxBatchLatencySeconds);
  CHECK(Fast.batchSearch()->tried.front().meetsLatency.has_value());
  // Refusals: no hardware, a built model, a bound without the search.
  O.maxBatchLatencySeconds.reset();
  CHECK_THROWS_WITH_AS(api::predict(M, nullptr, O),
                       doctest::Contains("maxBatch needs hardware"),
                       api::Error);
  api::ModelBuilder B("tiny");
  B.output(B.relu(B.input("x", {1, 8})));
  CHECK_THROWS_WITH_AS(api::predict(B.build(), T4, O),
                       doctest::Contains("made with ModelBuilder has one "
                                         "batch"),
                       api::Error);
  api::PredictOptions Bound;
  Bound.maxBatchLatencySeconds = 0.01;
  CHECK_THROWS_WITH_AS(api::predict(M, T4, Bound),
                       doctest::Contains("set maxBatch"), api::Error);
}

TEST_CASE("errors are perfc::api::Error with the CLI's message") {
  CHECK_THROWS_WITH_AS(api::Hardware::load("no-such-device"),
                       doctest::Contains("no-such-device"), api::Error);
  CHECK_THROWS_WITH_AS(api::Model::fromOnnxFile("/nonexistent.onnx"),
                       "/nonexistent.onnx: cannot read the file: No such "
                       "file or directory",
                       api::Error);
  CHECK_THROWS_AS(api::Model::fromOnnxBytes("garbage"), api::Error);
  CHECK_THROWS_WITH_AS(api::Model::fromOnnxFile(zoo("gpt2_small.onnx")),
                       doctest::Contains("bind it with --dim seq=VALUE"),
                       api::Error);
  api::PredictOptions P;
  P.computeType = "fp7";
  CHECK_THROWS_WITH_AS(api::predict(cnn(), nullptr, P),
                       doctest::Contains("unknown compute type"), api::Error);
  P.computeType.clear();
  P.train = api::TrainOptions();
  CHECK_THROWS_WITH_AS(api::predict(cnn(), nullptr, P),
                       doctest::Contains("needs hardware"), api::Error);
}

TEST_CASE("hardware from YAML text") {
  CHECK_THROWS_AS(api::Hardware::fromYaml("device: [", "mine.yaml"),
                  api::Error);
  CHECK(api::Hardware::bundled().size() > 10);
  api::Hardware Hw = api::Hardware::load("jetson-agx-orin-gpu");
  CHECK(Hw.device() == "jetson-agx-orin-gpu");
  CHECK(Hw.devices() == 1);
}

TEST_CASE("training step through the API") {
  api::Hardware Hw = api::Hardware::load("a100-sxm4-80gb");
  api::ImportOptions O;
  O.batch = 2;
  O.dims = {{"seq", 128}};
  api::Model M = api::Model::fromOnnxFile(zoo("gpt2_small.onnx"), O);
  api::PredictOptions P;
  P.train = api::TrainOptions();
  P.train->recompute = "full";
  api::Prediction R = api::predict(M, Hw, P);
  REQUIRE(R.train());
  CHECK(R.train()->stepSeconds > 0);
  CHECK(R.train()->globalBatch == 2);
  CHECK(R.train()->peakBytes > 0);
  CHECK(R.train()->blocks == 12); // GPT-2 small's layers, by name
  CHECK_FALSE(R.train()->blocksFromStructure);
  CHECK(api::toJson(R).find("\"recompute\": \"full\"") != std::string::npos);
  CHECK_FALSE(R.train()->inputBound);
  // A loader of one sample per second: the step is its 2 s.
  P.train->inputRate = 1;
  api::Prediction Slow = api::predict(M, Hw, P);
  CHECK(Slow.train()->inputBound);
  CHECK(Slow.train()->stepSeconds == doctest::Approx(2));
  CHECK(Slow.train()->inputSeconds == doctest::Approx(2));
  CHECK(Slow.train()->inputWaitSeconds ==
        doctest::Approx(2 - R.train()->stepSeconds));
  P.train->inputRate = -1;
  CHECK_THROWS_WITH_AS(api::predict(M, Hw, P), doctest::Contains("input rate"),
                       api::Error);
  P.train->inputRate = 0;
  // Another runtime's launch cost on a copy of the devices: faster, and the
  // shared handle keeps its own.
  P.launchOverheadSeconds = 0;
  CHECK(api::predict(M, Hw, P).train()->stepSeconds < R.train()->stepSeconds);
  CHECK(api::toJson(api::predict(M, Hw, P)).find("\"launch_overhead_s\": 0") !=
        std::string::npos);
  P.launchOverheadSeconds.reset();
  CHECK(api::predict(M, Hw, P).train()->stepSeconds ==
        doctest::Approx(R.train()->stepSeconds));
  P.launchOverheadSeconds = -1;
  CHECK_THROWS_WITH_AS(api::predict(M, Hw, P),
                       doctest::Contains("launchOverheadSeconds"), api::Error);
  P.launchOverheadSeconds.reset();
  P.train->dp = 4096;
  CHECK_THROWS_WITH_AS(api::predict(M, Hw, P), doctest::Contains("devices"),
                       api::Error);
  P.train->dp = 1;
  // The collectives' protocol, as --comm-protocol.
  P.train->commProtocol = "bogus";
  CHECK_THROWS_WITH_AS(api::predict(M, Hw, P),
                       "unknown comm protocol 'bogus': use auto, LL, LL128, "
                       "Simple or alpha-beta",
                       api::Error);
  P.train->commProtocol = "alpha-beta";
  // An inference's protocol is checked with or without tensorParallel.
  api::PredictOptions Inference;
  Inference.commProtocol = "simplex";
  CHECK_THROWS_WITH_AS(api::predict(M, Hw, Inference),
                       doctest::Contains("unknown comm protocol 'simplex'"),
                       api::Error);
  CHECK(api::toJson(api::predict(M, Hw, P))
            .find("\"comm_protocol\": \"alpha-beta\"") != std::string::npos);
}

TEST_CASE("storage type and conv layout, as the CLI's flags") {
  const api::Hardware T4 = api::Hardware::load("t4");
  const api::Model M = api::Model::fromOnnxFile(zoo("resnet50.onnx"));
  api::PredictOptions P;
  P.computeType = "int8";
  const double Plain = *api::predict(M, T4, P).latencySeconds();
  P.storageType = "int8";
  P.convLayout = "nchw";
  const api::Prediction Small = api::predict(M, T4, P);
  CHECK(*Small.latencySeconds() < Plain);
  const std::string J = api::toJson(Small);
  CHECK(J.find("\"storage_type\": \"int8\"") != std::string::npos);
  CHECK(J.find("\"conv_layout\": \"nchw\"") != std::string::npos);
  P.storageType = "int9";
  CHECK_THROWS_WITH_AS(api::predict(M, T4, P),
                       doctest::Contains("unknown storage type 'int9'"),
                       api::Error);
  P.storageType = "";
  P.convLayout = "nwhc";
  CHECK_THROWS_WITH_AS(api::predict(M, T4, P),
                       doctest::Contains("unknown conv layout 'nwhc'"),
                       api::Error);
}

TEST_CASE("placement on a SoC, as --place") {
  const api::Hardware Orin = api::Hardware::load("jetson-agx-orin");
  const api::Model M = api::Model::fromOnnxFile(zoo("resnet50.onnx"));
  api::PredictOptions P;
  P.computeType = "fp16";
  P.place = true;
  const api::Prediction R = api::predict(M, Orin, P);
  REQUIRE(R.placement());
  const api::PlacementSummary S = *R.placement();
  CHECK(*R.latencySeconds() == S.latencySeconds);
  REQUIRE(S.processors.size() == 3); // CPU, GPU, the two DLAs as one
  unsigned Kernels = 0;
  double Best = INFINITY;
  for (const auto &D : S.processors) {
    Kernels += D.kernels;
    REQUIRE(D.aloneSeconds);
    Best = std::min(Best, *D.aloneSeconds);
  }
  CHECK(Kernels > 0);
  CHECK(S.latencySeconds <= Best * (1 + 1e-12));
  // The JSON is the CLI's, placement included.
  const std::string J = api::toJson(R);
  CHECK(J.find("\"placement\": {") != std::string::npos);
  CHECK(J.find("\"assignment\": [") != std::string::npos);
  CHECK_FALSE(api::predict(M, Orin, api::PredictOptions()).placement());
  // Refused: one kind of processor; with training.
  CHECK_THROWS_WITH_AS(api::predict(M, api::Hardware::load("t4"), P),
                       doctest::Contains("one kind of processor"), api::Error);
  P.train = api::TrainOptions();
  CHECK_THROWS_WITH_AS(api::predict(M, Orin, P),
                       doctest::Contains("place places inference kernels"),
                       api::Error);
}

TEST_CASE("training on mixed GPU types without a plan is refused") {
  api::Hardware Hw = api::Hardware::load(
      std::string(PERFC_SOURCE_DIR) + "/tests/data/hwdb/mixed-a100-v100.yaml");
  api::ImportOptions O;
  O.batch = 2;
  O.dims = {{"seq", 128}};
  api::Model M = api::Model::fromOnnxFile(zoo("gpt2_small.onnx"), O);
  api::PredictOptions P;
  CHECK(*api::predict(M, Hw, P).latencySeconds() > 0); // inference: first type
  P.train = api::TrainOptions();
  CHECK_THROWS_WITH_AS(api::predict(M, Hw, P),
                       doctest::Contains("mixes GPU types"), api::Error);
}

TEST_CASE("concurrent predictions share one Hardware and one Model") {
  api::Hardware Hw = api::Hardware::load("a100-sxm4-80gb");
  api::Model M = cnn(8);
  api::Model Z = api::Model::fromOnnxFile(zoo("resnet18.onnx"));
  api::PredictOptions Train;
  Train.train = api::TrainOptions();
  const std::string Ref[3] = {api::toJson(api::predict(M, Hw)),
                              api::toJson(api::predict(Z, Hw)),
                              api::toJson(api::predict(Z, Hw, Train))};
  std::vector<std::thread> Threads;
  std::vector<int> Bad(8, 0);
  for (int T = 0; T < 8; ++T)
    Threads.emplace_back([&, T] {
      for (int I = 0; I < 20; ++I) {
        int K = (T + I) % 3;
        std::string J = api::toJson(K == 0   ? api::predict(M, Hw)
                                    : K == 1 ? api::predict(Z, Hw)
                                             : api::predict(Z, Hw, Train));
        Bad[T] += J != Ref[K];
      }
    });
  for (auto &T : Threads)
    T.join();
  for (int B : Bad)
    CHECK(B == 0);
}

namespace {

/// The JSON's "plan" object up to its search statistics (which hold times).
std::string planPart(const std::string &Json) {
  size_t Begin = Json.find("\"plan\": {");
  size_t End = Json.find("\"search\": {", Begin);
  REQUIRE(Begin != std::string::npos);
  REQUIRE(End != std::string::npos);
  return Json.substr(Begin, End - Begin);
}

} // namespace

TEST_CASE("plan: the CLI's planner through the API") {
  api::Hardware Hw = api::Hardware::load("dgx-a100");
  api::ImportOptions IO;
  IO.dims = {{"seq", 1024}};
  api::Model M = api::Model::fromOnnxFile(zoo("gpt2_small.onnx"), IO);
  api::PlanOptions O;
  O.globalBatch = 64;
  O.dtype = "bf16";
  api::Plan P = api::plan(M, Hw, O);
  CHECK(P.optimal());
  api::TrainOptions S = P.strategy();
  CHECK(S.dp * S.tp * S.pp == Hw.devices());
  CHECK(S.globalBatch == 64);
  CHECK(S.dtype == "bf16");
  CHECK(64 % (P.microBatch() * S.dp) == 0);
  api::TrainSummary T = P.train();
  CHECK(T.fits);
  CHECK(T.stepSeconds > 0);
  CHECK(T.devices == Hw.devices());
  std::string J = api::toJson(P);
  CHECK(J.find("\"schema_version\": 1") != std::string::npos);
  CHECK(J.find("\"optimal\": true") != std::string::npos);
  CHECK(J.find("\"predicted\": {") != std::string::npos);
  CHECK(api::toJson(P, true).find('\n') == std::string::npos);

  // The strategy, predicted on its own at the plan's micro-batch, is the
  // step the plan predicted (as `perfc --strategy plan.json`).
  IO.batch = P.microBatch();
  api::Model AtMb = api::Model::fromOnnxFile(zoo("gpt2_small.onnx"), IO);
  api::PredictOptions PO;
  PO.train = S;
  api::Prediction R = api::predict(AtMb, Hw, PO);
  REQUIRE(R.train());
  CHECK(R.train()->stepSeconds == doctest::Approx(T.stepSeconds));
  CHECK(R.train()->peakBytes == doctest::Approx(T.peakBytes));

  // The exhaustive loop finds the same plan; from bytes too.
  O.planner = "exhaustive";
  api::Model FromBytes = api::Model::fromOnnxBytes(
      readFile(zoo("gpt2_small.onnx")), {{}, {{"seq", 1024}}, false},
      zoo("gpt2_small.onnx"));
  CHECK(planPart(api::toJson(api::plan(FromBytes, Hw, O))) == planPart(J));

  // Top K and the Pareto front, as --top and --pareto.
  O.top = 3;
  O.pareto = true;
  std::string J3 = api::toJson(api::plan(M, Hw, O));
  CHECK(J3.find("\"plans\": [") != std::string::npos);
  CHECK(J3.find("\"pareto\": [") != std::string::npos);

  // A pinned choice is kept.
  O = api::PlanOptions();
  O.globalBatch = 64;
  O.tp = 2;
  CHECK(api::plan(M, Hw, O).strategy().tp == 2);
}

TEST_CASE("plan: a built model plans at its own batch") {
  api::Hardware Hw = api::Hardware::load("dgx-a100");
  api::Model M = cnn(4);
  api::PlanOptions O;
  O.globalBatch = 256;
  api::Plan P = api::plan(M, Hw, O);
  CHECK(P.microBatch() == 4);
  // Its node names number nothing: stem, 4 stages and head by structure.
  CHECK(P.train().blocks == 6);
  CHECK(P.train().blocksFromStructure);
  CHECK(P.train().globalBatch == 256);
  O.microBatch = 8;
  CHECK_THROWS_WITH_AS(api::plan(M, Hw, O),
                       doctest::Contains("has one batch (4)"), api::Error);
}

TEST_CASE("plan: an uneven data split over mixed GPU types") {
  api::Hardware Hw = api::Hardware::load(
      std::string(PERFC_SOURCE_DIR) + "/tests/data/hwdb/mixed-a100-v100.yaml");
  api::Model M = cnn(4);
  api::PlanOptions O;
  O.globalBatch = 256;
  O.dtype = "fp16";
  // The CNN's blocks (from structure) also allow a pipeline across the
  // types: pp 1 keeps the choice among data splits.
  O.pp = 1;
  api::Plan P = api::plan(M, Hw, O);
  const std::vector<api::DataShare> Split = P.dataSplit();
  REQUIRE(Split.size() == 2);
  int64_t Samples = 0;
  for (const api::DataShare &D : Split) {
    CHECK(D.batchPerReplica == int64_t(D.microBatches) * P.microBatch());
    Samples += D.replicas * D.batchPerReplica;
  }
  CHECK(Samples == 256);
  CHECK(P.train().globalBatch == 256);
  CHECK(P.strategy().pp == 1);
  CHECK(api::toJson(P).find("\"data_split\": [") != std::string::npos);
}

TEST_CASE("plan: errors") {
  api::Hardware Hw = api::Hardware::load("dgx-a100");
  api::Model M = cnn(1);
  api::PlanOptions O;
  CHECK_THROWS_WITH_AS(api::plan(M, Hw, O),
                       doctest::Contains("needs globalBatch"), api::Error);
  O.globalBatch = 8;
  O.planner = "greedy";
  CHECK_THROWS_WITH_AS(api::plan(M, Hw, O),
                       doctest::Contains("unknown planner 'greedy'"),
                       api::Error);
  O.planner = "z3";
  O.dp = 3; // 8 devices: no dp x tp x pp with dp 3.
  CHECK_THROWS_AS(api::plan(M, Hw, O), api::Error);
  O.dp.reset();
  O.dtype = "fp12";
  CHECK_THROWS_WITH_AS(api::plan(M, Hw, O), doctest::Contains("fp12"),
                       api::Error);
}
