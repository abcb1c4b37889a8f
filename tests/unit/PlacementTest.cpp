//===- PlacementTest.cpp - Heterogeneous placement (CPU + NPU) ------------===//
#include "passes/Placement.h"
#include "TestGraphs.h"
#include "costmodels/Collectives.h"
#include "hwdb/Loader.h"
#include "passes/Predict.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace perfc;
using perfc::test::GraphBuilder;

namespace {

/// A CPU and an NPU that runs only int8 convolutions and matrix products,
/// over a 10 GB/s link with 1 us of latency.
const char *const SocYaml = R"(cluster:
  name: test-soc
  nodes:
    - name: soc
      devices:
        - device:
            name: tcpu
            kind: cpu
            compute:
              simd: {fp32: 100 GFLOPS, fp16: 200 GFLOPS}
            memory:
              - {name: DRAM, capacity: 8 GB, bandwidth: 50 GB/s}
            launch_overhead: 2 us
            efficiency:
              default: {compute: 0.5, memory: 0.5}
        - device:
            name: tnpu
            kind: npu
            compute:
              matrix: {int8: 10 TOPS}
            memory:
              - {name: DRAM, capacity: 8 GB, bandwidth: 50 GB/s}
            launch_overhead: 1 us
            efficiency:
              default: {compute: 0.5, memory: 0.5}
            supports: {op_classes: [conv, gemm], dtypes: [int8]}
      intra_node_link:
        name: tlink
        kind: shared_memory
        bandwidth: 10 GB/s
        latency: 1 us
        efficiency: 1.0
)";

hw::Cluster soc() {
  auto C = hw::loadHardwareFromString(SocYaml, "placement-test.yaml");
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return std::move(*C);
}

/// conv -> conv -> softmax -> conv on a [1, 16, 32, 32] fp32 tensor.
struct ConvSoftmaxConv {
  GraphBuilder B;
  ir::Node *C1, *C2, *Sm, *C3;
  ConvSoftmaxConv() {
    ir::Value *X = B.input("x", {1, 16, 32, 32});
    C1 = B.node("Conv", {X, B.weight("w1", {16, 16, 3, 3})}, {1, 16, 32, 32});
    C2 = B.node("Conv", {B.out(C1), B.weight("w2", {16, 16, 3, 3})},
                {1, 16, 32, 32});
    Sm = B.node("Softmax", {B.out(C2)}, {1, 16, 32, 32});
    C3 = B.node("Conv", {B.out(Sm), B.weight("w3", {16, 16, 3, 3})},
                {1, 16, 32, 32});
    B.G.markOutput(B.out(C3));
  }
};

PlacementOptions int8() {
  PlacementOptions O;
  O.Time.ComputeType = ir::DType::I8;
  return O;
}

/// A random problem: D devices, N kernels, some unsupported pairs (never
/// all of a kernel's), tensors from a kernel to 1-2 later ones.
PlacementProblem randomProblem(std::mt19937 &Rng, unsigned N, unsigned D,
                               bool Chain) {
  std::uniform_real_distribution<double> Time(1e-6, 1e-4), Coin(0, 1);
  PlacementProblem P;
  P.NumDevices = D;
  P.Seconds.assign(N, std::vector<double>(D));
  for (unsigned K = 0; K < N; ++K) {
    for (unsigned Dv = 0; Dv < D; ++Dv)
      P.Seconds[K][Dv] = Coin(Rng) < 0.2 ? INFINITY : Time(Rng);
    P.Seconds[K][Rng() % D] = Time(Rng);
  }
  for (unsigned K = 0; K + 1 < N; ++K) {
    PlacementProblem::Tensor T;
    T.Producer = K;
    T.Consumers.push_back(K + 1);
    if (!Chain && K + 2 < N && Coin(Rng) < 0.5)
      T.Consumers.push_back(K + 2 + Rng() % (N - K - 2));
    T.TransferSeconds = Time(Rng) / 2;
    P.Tensors.push_back(T);
  }
  return P;
}

} // namespace

TEST_SUITE("placement") {
  TEST_CASE("the NPU takes the convs, a Softmax falls back to the CPU") {
    ConvSoftmaxConv M;
    const hw::Cluster C = soc();
    auto R = placeGraph(M.B.G, C, int8());
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    REQUIRE(R->Devices.size() == 2);
    CHECK(R->Devices[0].Name == "tcpu");
    CHECK(R->Devices[1].Name == "tnpu");
    REQUIRE(R->Plan.Kernels.size() == 4);
    CHECK(R->NodeDevice[M.C1->index()] == 1);
    CHECK(R->NodeDevice[M.C2->index()] == 1);
    CHECK(R->NodeDevice[M.Sm->index()] == 0);
    CHECK(R->NodeDevice[M.C3->index()] == 1);
    CHECK(R->Optimal);
    CHECK(R->Method == "chain-dp");
    // By hand: conv2's output to the CPU, the softmax's back to the NPU,
    // each 16*32*32 fp32 = 65536 bytes at 10 GB/s plus 1 us.
    const double OneWay = 65536 / 10e9 + 1e-6;
    CHECK(R->Transfers == 2);
    CHECK(R->TransferBytes == 2 * 65536);
    CHECK(R->TransferSeconds == doctest::Approx(2 * OneWay));
    double Kernels = 0;
    for (const cost::OpTime &T : R->KernelTimes)
      Kernels += T.Seconds;
    CHECK(R->LatencySeconds == doctest::Approx(Kernels + 2 * OneWay));
    // The NPU runs int8; the CPU has no int8 peak and falls back to fp32.
    CHECK(R->KernelTimes[0].ComputeType == ir::DType::I8);
    CHECK(std::isinf(R->SingleDeviceSeconds[1])); // No softmax on the NPU.
    CHECK(R->LatencySeconds < R->SingleDeviceSeconds[0]);
    CHECK(R->KernelsPerDevice[0] == 1);
    CHECK(R->KernelsPerDevice[1] == 3);
  }

  TEST_CASE("an int8-only NPU gets nothing of an fp32 model") {
    ConvSoftmaxConv M;
    auto R = placeGraph(M.B.G, soc(), PlacementOptions());
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    CHECK(R->KernelsPerDevice[0] == 4);
    CHECK(R->TransferSeconds == 0);
    CHECK(R->LatencySeconds == doctest::Approx(R->SingleDeviceSeconds[0]));
  }

  TEST_CASE("an op no processor runs is an error naming the node") {
    // A CPU restricted to conv: nothing runs the softmax.
    std::string Yaml = SocYaml;
    Yaml.replace(Yaml.find("            launch_overhead: 2 us"), 0,
                 "            supports: {op_classes: [conv]}\n");
    auto C = hw::loadHardwareFromString(Yaml, "placement-test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    ConvSoftmaxConv M;
    auto R = placeGraph(M.B.G, *C, int8());
    REQUIRE(!R);
    const std::string Msg = llvm::toString(R.takeError());
    CHECK_MESSAGE(Msg.find("node '" + M.Sm->name().str() + "' (Softmax)") !=
                      std::string::npos,
                  Msg);
  }

  TEST_CASE("a residual branch: Z3 equals brute force, and a tensor read "
            "twice on one device moves once") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 16, 32, 32});
    ir::Node *C1 =
        B.node("Conv", {X, B.weight("w1", {16, 16, 3, 3})}, {1, 16, 32, 32});
    ir::Node *Sm = B.node("Softmax", {B.out(C1)}, {1, 16, 32, 32});
    ir::Node *C2 = B.node("Conv", {B.out(Sm), B.weight("w2", {16, 16, 3, 3})},
                          {1, 16, 32, 32});
    ir::Node *Sm2 = B.node("Softmax", {B.out(C1)}, {1, 16, 32, 32});
    ir::Node *Add = B.node("Add", {B.out(C2), B.out(Sm2)}, {1, 16, 32, 32});
    B.G.markOutput(B.out(Add));
    const hw::Cluster C = soc();
    PlacementOptions O = int8();
    O.Solver = PlacementSolver::Z3;
    auto Z = placeGraph(B.G, C, O);
    REQUIRE_MESSAGE(bool(Z), llvm::toString(Z.takeError()));
    O.Solver = PlacementSolver::BruteForce;
    auto Bf = placeGraph(B.G, C, O);
    REQUIRE_MESSAGE(bool(Bf), llvm::toString(Bf.takeError()));
    CHECK(Z->Optimal);
    CHECK(Z->Method == "z3");
    CHECK(Z->LatencySeconds == doctest::Approx(Bf->LatencySeconds));
    for (double S : Z->SingleDeviceSeconds)
      CHECK(Z->LatencySeconds <= S);
    (void)Add;
  }

  TEST_CASE("Z3 and the chain DP equal brute force on random problems") {
    std::mt19937 Rng(5);
    for (int I = 0; I < 40; ++I) {
      const bool Chain = I % 2 == 0;
      const unsigned N = 2 + Rng() % 9, D = 2 + Rng() % 2;
      if (std::pow(D, N) > 2e5)
        continue;
      PlacementProblem P = randomProblem(Rng, N, D, Chain);
      auto Bf = solvePlacement(P, PlacementSolver::BruteForce);
      REQUIRE(bool(Bf));
      auto Z = solvePlacement(P, PlacementSolver::Z3);
      REQUIRE(bool(Z));
      auto A = solvePlacement(P, PlacementSolver::Auto);
      REQUIRE(bool(A));
      auto H = solvePlacement(P, PlacementSolver::Heuristic);
      REQUIRE(bool(H));
      INFO("case " << I << ": " << N << " kernels, " << D << " devices");
      CHECK(Z->Optimal);
      // Z3 optimizes integer nanoseconds: within a nanosecond a term.
      CHECK(Z->Seconds == doctest::Approx(Bf->Seconds).epsilon(1e-6));
      CHECK(A->Seconds == doctest::Approx(Bf->Seconds).epsilon(1e-6));
      CHECK(A->Optimal);
      CHECK(H->Seconds >= Bf->Seconds * (1 - 1e-12));
      CHECK(!H->Optimal);
      for (unsigned Dv = 0; Dv < D; ++Dv)
        CHECK(Z->Seconds <= P.evaluate(std::vector<unsigned>(N, Dv)) + 1e-9);
    }
  }

  TEST_CASE("the whole model on one processor prices as --hw on it alone, "
            "caches included") {
    // The CPU gets a 100 KB L2 at 500 GB/s: the 64 KB activations between
    // kernels come from it (passes/CacheReuse.h), in both predictions.
    std::string Yaml = SocYaml;
    const std::string Dram =
        "              - {name: DRAM, capacity: 8 GB, bandwidth: 50 GB/s}\n";
    Yaml.replace(Yaml.find(Dram), Dram.size(),
                 Dram + "              - {name: L2, capacity: 100 KB, "
                        "bandwidth: 500 GB/s}\n");
    auto C = hw::loadHardwareFromString(Yaml, "placement-test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    ConvSoftmaxConv M;
    auto R = placeGraph(M.B.G, *C, PlacementOptions());
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    const hw::Device &Cpu = *C->Groups.front().Devices.front().Dev;
    REQUIRE(Cpu.Name == "tcpu");
    PredictOptions O;
    O.Device = &Cpu;
    const Report Alone = predict(M.B.G, O);
    CHECK(R->SingleDeviceSeconds[0] ==
          doctest::Approx(*Alone.LatencySeconds).epsilon(1e-12));
    // And the cache mattered: without the L2 the CPU is slower.
    const hw::Cluster Plain = soc();
    PredictOptions NoCache;
    NoCache.Device = Plain.Groups.front().Devices.front().Dev.get();
    CHECK(*Alone.LatencySeconds < *predict(M.B.G, NoCache).LatencySeconds);
  }

  TEST_CASE("a processor priced in another type than asked is named") {
    // An fp16 NPU given an fp32 model runs it in fp16 (TensorRT builds DLA
    // layers in fp16) while the CPU runs fp32: the comparison mixes types,
    // and a warning says so; with the type given, every processor runs it.
    std::string Yaml = SocYaml;
    const std::string Int8 = "matrix: {int8: 10 TOPS}";
    Yaml.replace(Yaml.find(Int8), Int8.size(), "matrix: {fp16: 5 TFLOPS}");
    const std::string Types = "dtypes: [int8]";
    Yaml.replace(Yaml.find(Types), Types.size(), "dtypes: [fp16]");
    auto C = hw::loadHardwareFromString(Yaml, "placement-test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    ConvSoftmaxConv M;
    auto R = placeGraph(M.B.G, *C, PlacementOptions());
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    REQUIRE(R->Warnings.size() == 1);
    CHECK(R->Warnings.front().Message ==
          "--place: the model asks for fp32, which tnpu runs in fp16 (3 "
          "kernels) and the other processors run as asked, so the placement "
          "compares types as well as processors; give --compute-type fp16 to "
          "price them all in one type");
    CHECK(R->KernelsPerDevice[1] > 0);
    for (unsigned K = 0; K < R->KernelTimes.size(); ++K)
      if (R->KernelDevice[K] == 1) {
        CHECK(R->KernelTimes[K].ComputeType == ir::DType::F16);
        CHECK(R->KernelTimes[K].RequestedType == ir::DType::F32);
        CHECK(llvm::StringRef(cost::explain(R->KernelTimes[K]))
                  .contains("fp32 asked, run in fp16"));
      }
    PlacementOptions Fp16;
    Fp16.Time.ComputeType = ir::DType::F16;
    auto Same = placeGraph(M.B.G, *C, Fp16);
    REQUIRE(bool(Same));
    CHECK(Same->Warnings.empty());
  }

  TEST_CASE("a one-device cluster is refused") {
    auto C = hw::loadHardware("t4");
    REQUIRE(bool(C));
    ConvSoftmaxConv M;
    auto R = placeGraph(M.B.G, *C, PlacementOptions());
    REQUIRE(!R);
    CHECK(llvm::toString(R.takeError()).find("one kind of processor") !=
          std::string::npos);
  }
}
