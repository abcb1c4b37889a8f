//===- CacheReuseTest.cpp - Which memory level serves each kernel ---------===//
#include "TestDevices.h"
#include "TestKernels.h"

#include "hwdb/Loader.h"
#include "passes/CacheReuse.h"
#include "passes/Fusion.h"
#include "passes/Predict.h"
#include "passes/WorkPass.h"

#include <doctest/doctest.h>

#include <cstring>

using namespace perfc;
using namespace perfc::test;

namespace {

/// HBM at 1000 GB/s and a 700 KB L2 at 4000 GB/s, efficiency 1: levels are
/// Memory[0] (HBM) and Memory[1] (L2).
const char *const CachedGpu = R"(device:
  name: cached-gpu
  kind: gpu
  compute:
    vector: {fp32: 10 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
    - {name: L2, capacity: 700 KB, bandwidth: 4000 GB/s}
  launch_overhead: 1 us
  efficiency:
    default: {compute: 1, memory: 1}
)";

hw::Device load(const char *Text) {
  return deviceFromYaml(Text, "cache-reuse-test.yaml");
}

// 100,000 fp32 elements: 400 KB.
constexpr int64_t N = 100000;

} // namespace

TEST_SUITE("cache reuse") {

  TEST_CASE("a chain reads each input from the L2 its producer wrote") {
    GraphBuilder B;
    ir::Node *A = B.node("Relu", {B.input("x", {N})}, {N});
    ir::Node *Bn = B.node("Relu", {B.out(A)}, {N});
    ir::Node *C = B.node("Relu", {B.out(Bn)}, {N});
    B.G.markOutput(B.out(C));
    const hw::Device D = load(CachedGpu);
    const KernelPlan P = planOf(B.G, false);
    REQUIRE(P.Kernels.size() == 3);
    const std::vector<LevelShares> S = cacheResidency(B.G, P, D);
    REQUIRE(S.size() == 3);
    // Kernel 0 reads the graph input from HBM and writes a, read next at
    // stack distance 400 KB (x died): L2. Half of its bytes each way.
    CHECK(S[0][0] == doctest::Approx(0.5));
    CHECK(S[0][1] == doctest::Approx(0.5));
    // Kernel 1: a from L2, b to L2.
    CHECK(S[1][0] == doctest::Approx(0));
    CHECK(S[1][1] == doctest::Approx(1));
    // Kernel 2 writes the graph's output to HBM.
    CHECK(S[2][0] == doctest::Approx(0.5));
    CHECK(S[2][1] == doctest::Approx(0.5));
  }

  TEST_CASE("a residual evicted by the branch comes from main memory, and "
            "its writer writes it back") {
    // At the Add, a's stack distance is a + c = 800 KB > 700 KB (b died
    // after its reader), c's is 400 KB.
    GraphBuilder B;
    const ir::Node *E = residualBlock(B, N);
    const ir::Node *Bn = B.G.nodes()[1];
    const hw::Device D = load(CachedGpu);
    const KernelPlan P = planOf(B.G, false);
    REQUIRE(P.Kernels.size() == 4);
    const std::vector<LevelShares> S = cacheResidency(B.G, P, D);
    // Kernel 0: x from HBM, and a written back to HBM (its second reader
    // finds it there).
    CHECK(S[0][0] == doctest::Approx(1));
    // Kernel 3 reads a (HBM) and c (L2), writes e (HBM): 800 of 1200 KB.
    CHECK(S[3][0] == doctest::Approx(2.0 / 3));
    CHECK(S[3][1] == doctest::Approx(1.0 / 3));
    // Priced: max(800 KB / 1000 GB/s, 1200 KB / 4000 GB/s) = 0.8 us, where
    // the per-op rule (1.2 MB do not fit 700 KB) gives 1.2 us.
    PredictOptions O;
    O.Device = &D;
    O.Explain = true;
    O.Fusion.Fuse = false;
    const Report R = predict(B.G, O);
    const NodeTime &T = *R.Nodes[E->index()].Time;
    CHECK(T.MemorySeconds == doctest::Approx(0.8e-6));
    CHECK(T.MemoryLevel.empty());
    CHECK(T.Explain.find("cache reuse over the schedule: of its 1.2 MB, HBM "
                         "66.7%, L2 33.3%") != std::string::npos);
    // Kernel 1 reads a from L2 and writes b to L2: 800 KB / 4000 GB/s.
    CHECK(R.Nodes[Bn->index()].Time->MemorySeconds == doctest::Approx(0.2e-6));
    CHECK(R.Nodes[Bn->index()].Time->MemoryLevel == "L2");
  }

  TEST_CASE("weights stay in the cache from run to run when they fit") {
    // y = x . W with W [256 x 256] fp32 (256 KB), then Relu(y): in the
    // steady state W was last read by the previous run's GEMM, and only
    // the 1 KB y, now dead, was used since: W comes from L2.
    GraphBuilder B;
    ir::Node *Mm =
        B.node("MatMul", {B.input("x", {1, 256}), B.weight("w", {256, 256})},
               {1, 256});
    ir::Node *R = B.node("Relu", {B.out(Mm)}, {1, 256});
    B.G.markOutput(B.out(R));
    const hw::Device D = load(CachedGpu);
    const KernelPlan P = planOf(B.G, false);
    const std::vector<LevelShares> S = cacheResidency(B.G, P, D);
    REQUIRE(S.size() == 2);
    // Reads: x (1 KB, HBM) and W (256 KB, L2); writes y (1 KB, L2).
    const double X = 1024, W = 256 * 1024, Y = 1024;
    CHECK(S[0][0] == doctest::Approx(X / (X + W + Y)));
    CHECK(S[0][1] == doctest::Approx((W + Y) / (X + W + Y)));
    // A weight larger than the cache streams from HBM every run.
    GraphBuilder Big;
    ir::Node *BigMm = Big.node(
        "MatMul", {Big.input("x", {1, 512}), Big.weight("w", {512, 512})},
        {1, 512});
    Big.G.markOutput(Big.out(BigMm));
    const std::vector<LevelShares> SB =
        cacheResidency(Big.G, planOf(Big.G, false), D);
    REQUIRE(SB.size() == 1);
    CHECK(SB[0][0] == doctest::Approx(1));
  }

  TEST_CASE("storage in a narrower type shrinks the stack distances") {
    // The residual case in fp16: a + c = 400 KB fit the 700 KB L2.
    GraphBuilder B;
    residualBlock(B, N);
    const std::vector<LevelShares> S = cacheResidency(
        B.G, planOf(B.G, false), load(CachedGpu), ir::DType::F16);
    REQUIRE(S.size() == 4);
    CHECK(S[3][0] == doctest::Approx(1.0 / 3)); // only e goes to HBM
    CHECK(S[0][0] == doctest::Approx(0.5));     // x in, a stays in L2
  }

  TEST_CASE("a device without a cache bandwidth gets no shares") {
    std::string Text = CachedGpu;
    Text.replace(Text.find("capacity: 700 KB, bandwidth: 4000 GB/s"),
                 std::strlen("capacity: 700 KB, bandwidth: 4000 GB/s"),
                 "capacity: 700 KB");
    GraphBuilder B;
    ir::Node *A = B.node("Relu", {B.input("x", {N})}, {N});
    B.G.markOutput(B.out(A));
    CHECK(cacheResidency(B.G, planOf(B.G, false), load(Text.c_str())).empty());
  }
}
