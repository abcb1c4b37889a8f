//===- RooflineTest.cpp - Roofline time of one op, against hand sums ------===//
#include "costmodels/Roofline.h"
#include "hwdb/Loader.h"

#include "llvm/Support/FormatVariadic.h"

#include <doctest/doctest.h>

#include <cstring>

#include <cmath>
#include <string>

using namespace perfc;
using namespace perfc::cost;

namespace {

/// Round numbers so that every expected time below is a short hand sum.
const char *const TestGpu = R"(device:
  name: rgpu
  kind: gpu
  compute:
    tensor: {fp16: 100 TFLOPS, bf16: 100 TFLOPS, tf32: 50 TFLOPS}
    vector: {fp32: 10 TFLOPS, fp16: 20 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
  launch_overhead: 5 us
  efficiency:
    default: {compute: 0.5, memory: 0.8}
    gemm: {compute: 0.8, memory: 0.9}
)";

const char *const TestNpu = R"(device:
  name: rnpu
  kind: npu
  compute:
    matrix: {int8: 10 TOPS, fp16: 5 TFLOPS}
  memory:
    - {name: LPDDR, capacity: 8 GB, bandwidth: 100 GB/s}
  launch_overhead: 1 us
  efficiency:
    default: {compute: 0.5, memory: 0.5}
  supports: {op_classes: [conv, gemm], dtypes: [int8, fp16]}
)";

hw::Device load(const char *Text) {
  auto C = hw::loadHardwareFromString(Text, "roofline-test.yaml");
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return C->primaryDevice();
}

OpWork gemm(double M, double N, double K, ir::DType T) {
  OpWork W;
  W.Class = OpClass::Gemm;
  W.Type = T;
  W.Macs = M * N * K;
  W.Flops = 2 * W.Macs;
  const double Elem = ir::byteSize(T);
  W.BytesRead = (M * K + K * N) * Elem;
  W.BytesWritten = M * N * Elem;
  return W;
}

OpWork elementwise(double Elements, ir::DType T) {
  OpWork W;
  W.Class = OpClass::Elementwise;
  W.Type = T;
  W.Flops = Elements; // one add per output
  W.BytesRead = 2 * Elements * ir::byteSize(T);
  W.BytesWritten = Elements * ir::byteSize(T);
  return W;
}

} // namespace

TEST_SUITE("roofline") {

  TEST_CASE("a large fp16 GEMM is compute-bound on the tensor unit") {
    const hw::Device D = load(TestGpu);
    const OpWork W = gemm(4096, 4096, 4096, ir::DType::F16);
    const OpTime T = opTime(W, D);
    // 2 x 4096^3 FLOP / (100 TFLOPS x 0.8); 3 x 4096^2 x 2 B / (1000 GB/s x
    // 0.9).
    const double Compute = 2 * std::pow(4096.0, 3) / (100e12 * 0.8);
    const double Memory = 3 * 4096.0 * 4096 * 2 / (1000e9 * 0.9);
    CHECK(T.ComputeSeconds == doctest::Approx(Compute));
    CHECK(T.MemorySeconds == doctest::Approx(Memory));
    CHECK(T.OverheadSeconds == doctest::Approx(5e-6));
    CHECK(T.Seconds == doctest::Approx(Compute + 5e-6));
    CHECK(T.Seconds == doctest::Approx(1.722866e-3));
    CHECK(T.Bound == Bound::Compute);
    CHECK(std::string(T.Unit) == "tensor");
    CHECK(T.PeakFlops == 100e12);
    CHECK(T.ComputeEfficiency == 0.8);
    CHECK(T.MemoryEfficiency == 0.9);
    CHECK_FALSE(T.Fallback);
    CHECK(std::string(name(T.Bound)) == "compute");
  }

  TEST_CASE("an fp32 elementwise add is memory-bound on the vector unit") {
    const hw::Device D = load(TestGpu);
    const OpTime T = opTime(elementwise(1e6, ir::DType::F32), D);
    // 1e6 FLOP / (10 TFLOPS x 0.5) = 0.2 us; 12 MB / (1000 GB/s x 0.8) = 15 us.
    CHECK(T.ComputeSeconds == doctest::Approx(0.2e-6));
    CHECK(T.MemorySeconds == doctest::Approx(15e-6));
    CHECK(T.Seconds == doctest::Approx(20e-6));
    CHECK(T.Bound == Bound::Memory);
    CHECK(std::string(T.Unit) == "vector");
    CHECK(std::string(name(T.Bound)) == "memory");
  }

  TEST_CASE("a tiny op is overhead-bound") {
    const hw::Device D = load(TestGpu);
    const OpTime T = opTime(elementwise(100, ir::DType::F32), D);
    // 1.2 KB / 800 GB/s = 1.5 ns, far below the 5 us launch.
    CHECK(T.MemorySeconds == doctest::Approx(1.5e-9));
    CHECK(T.Seconds == doctest::Approx(5e-6 + 1.5e-9));
    CHECK(T.Bound == Bound::Overhead);
    CHECK(std::string(name(T.Bound)) == "overhead");
  }

  TEST_CASE("an op whose bytes fit a cache with a bandwidth runs from it") {
    // The test GPU with a 4 MB L2 at 4000 GB/s, and a 1 MB L1 without a
    // bandwidth (never chosen).
    std::string Text = TestGpu;
    const std::string Hbm =
        "    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}\n";
    Text.replace(Text.find(Hbm), Hbm.size(),
                 Hbm +
                     "    - {name: L2, capacity: 4 MB, bandwidth: 4000 GB/s}\n"
                     "    - {name: L1, capacity: 1 MB}\n");
    const hw::Device D = load(Text.c_str());
    // 1e5 fp32 adds: 1.2 MB fit the 4 MB L2 (not the 1 MB L1, which has no
    // bandwidth): 1.2 MB / (4000 GB/s x 0.8) = 0.375 us, not the HBM's
    // 1.2 MB / (1000 GB/s x 0.8) = 1.5 us.
    const OpTime Small = opTime(elementwise(1e5, ir::DType::F32), D);
    CHECK(Small.Bandwidth == 4000e9);
    CHECK(Small.MemoryLevel == "L2");
    CHECK(Small.MemorySeconds == doctest::Approx(0.375e-6));
    CHECK(Small.Seconds == doctest::Approx(5e-6 + 0.375e-6));
    CHECK(explain(Small).find("(4 TB/s L2 x 0.8)") != std::string::npos);
    // 1e6 adds: 12 MB exceed the L2 and stream from HBM, as without it:
    // 12 MB / (1000 GB/s x 0.8) = 15 us.
    const OpTime Large = opTime(elementwise(1e6, ir::DType::F32), D);
    CHECK(Large.Bandwidth == 1000e9);
    CHECK(Large.MemoryLevel.empty());
    CHECK(Large.MemorySeconds == doctest::Approx(15e-6));
    // A working set of exactly the capacity fits; one byte more does not.
    OpWork Edge = elementwise(1, ir::DType::F32);
    Edge.BytesRead = 4e6;
    Edge.BytesWritten = 0;
    CHECK(opTime(Edge, D).MemoryLevel == "L2");
    Edge.BytesRead = 4e6 + 1;
    CHECK(opTime(Edge, D).MemoryLevel.empty());
  }

  TEST_CASE("shares of the bytes per level: the slowest crossing sets the "
            "memory term") {
    std::string Text = TestGpu;
    const std::string Hbm =
        "    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}\n";
    Text.replace(
        Text.find(Hbm), Hbm.size(),
        Hbm + "    - {name: L2, capacity: 4 MB, bandwidth: 4000 GB/s}\n");
    const hw::Device D = load(Text.c_str());
    // 1e5 fp32 adds, 1.2 MB, half served by HBM: max(0.6 MB / (1000 GB/s x
    // 0.8), 1.2 MB / (4000 GB/s x 0.8)) = max(0.75, 0.375) us.
    const double Half[] = {0.5, 0.5};
    TimeOptions O;
    O.LevelShare = Half;
    const OpTime T = opTime(elementwise(1e5, ir::DType::F32), D, O);
    CHECK(T.MemorySeconds == doctest::Approx(0.75e-6));
    CHECK(T.LevelBytes == doctest::Approx(0.6e6));
    CHECK(T.Bandwidth == 1000e9);
    CHECK(T.MemoryLevel.empty());
    CHECK(explain(T).find("600 KB / (1 TB/s x 0.8)") != std::string::npos);
    // A tenth from HBM: the L2 crossing (all 1.2 MB) is the slower.
    const double Tenth[] = {0.1, 0.9};
    O.LevelShare = Tenth;
    const OpTime L = opTime(elementwise(1e5, ir::DType::F32), D, O);
    CHECK(L.MemorySeconds == doctest::Approx(0.375e-6));
    CHECK(L.MemoryLevel == "L2");
    // Shares that do not match the levels are ignored: the per-op rule.
    const double One[] = {1.0};
    O.LevelShare = One;
    CHECK(opTime(elementwise(1e5, ir::DType::F32), D, O).MemoryLevel == "L2");
  }

  TEST_CASE("a cache without a bandwidth leaves every byte at main memory") {
    std::string Text = TestGpu;
    const std::string Hbm =
        "    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}\n";
    Text.replace(Text.find(Hbm), Hbm.size(),
                 Hbm + "    - {name: L2, capacity: 40 MB}\n");
    const hw::Device D = load(Text.c_str());
    const OpTime T = opTime(elementwise(1e5, ir::DType::F32), D);
    CHECK(T.Bandwidth == 1000e9);
    CHECK(T.MemoryLevel.empty());
    CHECK(T.MemorySeconds == doctest::Approx(1.5e-6));
    CHECK(explain(T).find("(1 TB/s x 0.8)") != std::string::npos);
  }

  TEST_CASE("a dtype override runs an fp32 GEMM on tensor cores") {
    const hw::Device D = load(TestGpu);
    const OpWork W = gemm(4096, 4096, 4096, ir::DType::F32);
    const double Flops = 2 * std::pow(4096.0, 3);

    // Without the override: no fp32 tensor peak, so the vector unit.
    const OpTime Plain = opTime(W, D);
    CHECK(std::string(Plain.Unit) == "vector");
    CHECK(Plain.ComputeType == ir::DType::F32);
    CHECK(Plain.ComputeSeconds == doctest::Approx(Flops / (10e12 * 0.8)));

    TimeOptions Fp16;
    Fp16.ComputeType = ir::DType::F16;
    const OpTime Half = opTime(W, D, Fp16);
    CHECK(std::string(Half.Unit) == "tensor");
    CHECK(Half.ComputeType == ir::DType::F16);
    CHECK(Half.ComputeSeconds == doctest::Approx(Flops / (100e12 * 0.8)));
    // Only the arithmetic changes: the bytes are the fp32 ones.
    CHECK(Half.Bytes == W.bytes());

    TimeOptions Tf32;
    Tf32.ComputeType = ir::DType::TF32;
    const OpTime Tf = opTime(W, D, Tf32);
    CHECK(std::string(Tf.Unit) == "tensor");
    CHECK(Tf.ComputeSeconds == doctest::Approx(Flops / (50e12 * 0.8)));

    // Elementwise ops under a TF32 override compute in fp32 (TF32 is a
    // matrix-unit mode), and integer ops ignore the override.
    const OpTime Add = opTime(elementwise(1e6, ir::DType::F32), D, Tf32);
    CHECK(std::string(Add.Unit) == "vector");
    CHECK(Add.ComputeType == ir::DType::F32);
    CHECK_FALSE(Add.Fallback);
    const OpTime IntAdd = opTime(elementwise(1e6, ir::DType::I64), D, Fp16);
    CHECK(IntAdd.RequestedType == ir::DType::I64);
  }

  TEST_CASE("a dtype no unit supports falls back to fp32 and says so") {
    const hw::Device D = load(TestGpu);
    const OpWork W = gemm(1024, 1024, 1024, ir::DType::F64);
    const OpTime T = opTime(W, D);
    CHECK(T.Fallback);
    CHECK(T.RequestedType == ir::DType::F64);
    CHECK(T.ComputeType == ir::DType::F32);
    CHECK(std::string(T.Unit) == "vector");
    CHECK(T.PeakFlops == 10e12);
    CHECK(T.ComputeSeconds ==
          doctest::Approx(2 * std::pow(1024.0, 3) / (10e12 * 0.8)));
    CHECK(explain(T).find("fallback: no unit computes fp64") !=
          std::string::npos);
  }

  TEST_CASE("an NPU refuses what its supports list excludes") {
    const hw::Device D = load(TestNpu);
    // int8 conv runs on the matrix unit.
    OpWork Conv = gemm(256, 256, 256, ir::DType::I8);
    Conv.Class = OpClass::Conv;
    const OpTime Ok = opTime(Conv, D);
    CHECK_FALSE(Ok.Unsupported);
    CHECK(std::string(Ok.Unit) == "matrix");
    CHECK(Ok.ComputeSeconds ==
          doctest::Approx(2 * std::pow(256.0, 3) / (10e12 * 0.5)));
    // fp32 is outside the list, and so are recurrent ops.
    Conv.Type = ir::DType::F32;
    const OpTime Fp32 = opTime(Conv, D);
    CHECK(Fp32.Unsupported);
    CHECK(std::isinf(Fp32.Seconds));
    CHECK(explain(Fp32).find("unsupported") != std::string::npos);
    // ... unless the override brings it into the list.
    TimeOptions Fp16;
    Fp16.ComputeType = ir::DType::F16;
    CHECK_FALSE(opTime(Conv, D, Fp16).Unsupported);
    OpWork Rnn = gemm(64, 64, 64, ir::DType::I8);
    Rnn.Class = OpClass::Recurrent;
    CHECK(opTime(Rnn, D).Unsupported);
  }

  TEST_CASE("views cost nothing") {
    const hw::Device D = load(TestGpu);
    OpWork W;
    W.Class = OpClass::DataMovement;
    W.IsView = true;
    W.BytesRead = 1e9;
    const OpTime T = opTime(W, D);
    CHECK(T.Seconds == 0);
    CHECK(T.OverheadSeconds == 0);
    CHECK(explain(T).find("view") != std::string::npos);
  }

  TEST_CASE("size-dependent efficiency curves apply to the op's FLOPs") {
    std::string Text = TestGpu;
    Text.replace(Text.find("gemm: {compute: 0.8,"), 20,
                 "gemm: {compute: [[1 GFLOP, 0.2], [1 TFLOP, 0.8]],");
    const hw::Device D = load(Text.c_str());
    // 2 x 2^30 FLOP, a little above 1 GFLOP: interpolated in log(FLOP).
    const OpWork Small = gemm(1024, 1024, 1024, ir::DType::F16);
    const double Eff = 0.2 + 0.6 * std::log(Small.Flops / 1e9) / std::log(1e3);
    CHECK(opTime(Small, D).ComputeEfficiency == doctest::Approx(Eff));
    const OpWork Large = gemm(16384, 16384, 16384, ir::DType::F16);
    CHECK(opTime(Large, D).ComputeEfficiency == doctest::Approx(0.8));
  }

  TEST_CASE("fused attention kernels use fused_attention where given") {
    std::string Text = TestGpu;
    Text += "    fused_attention: {compute: 0.4}\n";
    const hw::Device D = load(Text.c_str());
    REQUIRE(D.FusedAttention.hasValue());
    OpWork W = gemm(4096, 4096, 4096, ir::DType::F16);
    const double Flops = W.Flops;
    // A GEMM keeps gemm's 0.8.
    CHECK(opTime(W, D).ComputeEfficiency == doctest::Approx(0.8));
    // An attention kernel of the same work: 0.4 of the 100 TFLOPS; the
    // memory side was left out, gemm's 0.9.
    W.FusedAttention = true;
    const OpTime T = opTime(W, D);
    CHECK(T.ComputeEfficiency == doctest::Approx(0.4));
    CHECK(T.MemoryEfficiency == doctest::Approx(0.9));
    CHECK(T.Seconds == doctest::Approx(Flops / (100e12 * 0.4) + 5e-6));
    // Without the entry it is a GEMM.
    CHECK(opTime(W, load(TestGpu)).ComputeEfficiency == doctest::Approx(0.8));
  }

  TEST_CASE("depthwise convolutions use depthwise_conv where given") {
    const char *const Cpu = R"(device:
  name: rcpu
  kind: cpu
  compute:
    simd: {fp32: 100 GFLOPS}
  memory:
    - {name: DRAM, capacity: 16 GB, bandwidth: 100 GB/s}
  launch_overhead: 0 us
  efficiency:
    default: {compute: 0.5, memory: 0.8}
    conv: {compute: 0.8, memory: 1}
    depthwise_conv: {compute: 0.2}
)";
    const hw::Device D = load(Cpu);
    REQUIRE(D.DepthwiseConv.hasValue());
    OpWork W;
    W.Class = OpClass::Conv;
    W.Flops = 1e9;
    W.BytesRead = 1e3;
    // 3x3 depthwise over 64 channels: 64 groups of one output channel.
    W.Gemm = {64, 3136, 1, 9};
    OpTime T = opTime(W, D);
    CHECK(T.ComputeEfficiency == doctest::Approx(0.2));
    CHECK(T.Seconds == doctest::Approx(1e9 / (100e9 * 0.2)));
    // The memory side was left out: conv's.
    CHECK(T.MemoryEfficiency == doctest::Approx(1));
    // A dense (and a grouped, 4 channels per group) conv keeps conv's.
    W.Gemm = {1, 3136, 64, 576};
    CHECK(opTime(W, D).ComputeEfficiency == doctest::Approx(0.8));
    W.Gemm = {16, 3136, 4, 36};
    CHECK(opTime(W, D).ComputeEfficiency == doctest::Approx(0.8));
    // Without depthwise_conv a depthwise conv is a conv.
    std::string NoDw = Cpu;
    NoDw.erase(NoDw.find("    depthwise_conv"));
    W.Gemm = {64, 3136, 1, 9};
    CHECK(opTime(W, load(NoDw.c_str())).ComputeEfficiency ==
          doctest::Approx(0.8));
  }

  TEST_CASE("a transpose copied one element at a time: a time per element") {
    const char *const Cpu = R"(device:
  name: rcpu
  kind: cpu
  compute:
    simd: {fp32: 100 GFLOPS}
  memory:
    - {name: DRAM, capacity: 16 GB, bandwidth: 100 GB/s}
  launch_overhead: 0 us
  efficiency:
    default: {compute: 0.5, memory: 0.8}
    data_movement: {memory: 0.5, time_per_strided_element: 4 ns}
)";
    OpWork W;
    W.Class = OpClass::DataMovement;
    W.BytesRead = W.BytesWritten = 4e6; // 1e6 floats
    // Runs or 2-D tiles: 8 MB / (100 GB/s x 0.5) = 160 us.
    CHECK(opTime(W, load(Cpu)).Seconds == doctest::Approx(160e-6));
    // One element at a time: 1e6 x 4 ns = 4 ms, above the bytes' term.
    W.StridedElements = 1e6;
    const OpTime T = opTime(W, load(Cpu));
    CHECK(T.Seconds == doctest::Approx(4e-3));
    CHECK(T.PerOutputBound);
    CHECK(explain(T).find("1000000 elements copied one at a time x 4 ns") !=
          std::string::npos);
    CHECK(explain(T).find("bound by the element-at-a-time copy") !=
          std::string::npos);
    // A device without the figure prices the bytes alone.
    std::string NoFloor = Cpu;
    NoFloor.replace(NoFloor.find(", time_per_strided_element: 4 ns"),
                    std::strlen(", time_per_strided_element: 4 ns"), "");
    CHECK(opTime(W, load(NoFloor.c_str())).Seconds == doctest::Approx(160e-6));
  }

  TEST_CASE("CPUs run a GEMM's elementwise epilogue as a pass of its own") {
    const char *const Cpu = R"(device:
  name: rcpu
  kind: cpu
  compute:
    simd: {fp32: 100 GFLOPS}
  memory:
    - {name: DRAM, capacity: 16 GB, bandwidth: 100 GB/s}
  launch_overhead: 1 us
  efficiency:
    default: {compute: 0.5, memory: 0.5}
    gemm: {compute: 0.5, memory: 1}
    elementwise: {compute: 0.1, memory: 0.5}
)";
    OpWork W = gemm(1000, 1000, 1000, ir::DType::F32);
    W.Flops += 1e8; // a GELU chain of 100 FLOP per output element
    const OpTime T = opTime(W, load(Cpu));
    // Products: 2 GFLOP / (100 GFLOPS x 0.5) = 40 ms; epilogue: max(0.1
    // GFLOP / (100 GFLOPS x 0.1), 8 MB / (100 GB/s x 0.5)) = 10 ms.
    CHECK(T.EpilogueSeconds == doctest::Approx(10e-3));
    CHECK(T.ComputeSeconds == doctest::Approx(50e-3));
    CHECK(T.Seconds == doctest::Approx(50e-3 + 1e-6));
    CHECK(explain(T).find("epilogue") != std::string::npos);
    // A GPU keeps the epilogue in the GEMM's registers.
    CHECK(opTime(W, load(TestGpu)).EpilogueSeconds == 0);
    // Convolutions keep theirs on CPUs too (MLAS activations, folded BN).
    W.Class = OpClass::Conv;
    CHECK(opTime(W, load(Cpu)).EpilogueSeconds == 0);
  }

  TEST_CASE("depthwise time per output element is a floor beside FLOPs") {
    const char *const Cpu = R"(device:
  name: rcpu
  kind: cpu
  compute:
    simd: {fp32: 100 GFLOPS}
  memory:
    - {name: DRAM, capacity: 16 GB, bandwidth: 100 GB/s}
  launch_overhead: 1 us
  efficiency:
    default: {compute: 0.5, memory: 1}
    depthwise_conv: {compute: 0.5, time_per_output: 0.5 ns}
)";
    const hw::Device D = load(Cpu);
    REQUIRE(D.DepthwiseSecondsPerOutput == doctest::Approx(0.5e-9));
    // 64 channels of 56x56 outputs: 200704 output elements.
    OpWork W;
    W.Class = OpClass::Conv;
    W.BytesRead = 1e3;
    // 3x3: 18 FLOP per output take 0.36 ns at 50 GFLOP/s, under the
    // 0.5 ns per output: 200704 x 0.5 ns = 100.352 us, plus 1 us.
    W.Gemm = {64, 3136, 1, 9};
    W.Flops = 2 * 9 * 200704.0;
    OpTime T = opTime(W, D);
    CHECK(T.Outputs == doctest::Approx(200704));
    CHECK(T.PerOutputBound);
    CHECK(T.Bound == Bound::Compute);
    CHECK(T.ComputeSeconds == doctest::Approx(100.352e-6));
    CHECK(T.Seconds == doctest::Approx(101.352e-6));
    const std::string Text = explain(T);
    CHECK(Text.find("200704 outputs x 500 ps") != std::string::npos);
    CHECK(Text.find("compute-bound by the per-output term") !=
          std::string::npos);
    // 7x7: 98 FLOP per output take 1.96 ns: the FLOP term,
    // 200704 x 98 / 50 GFLOP/s = 393.38 us.
    W.Gemm = {64, 3136, 1, 49};
    W.Flops = 2 * 49 * 200704.0;
    T = opTime(W, D);
    CHECK_FALSE(T.PerOutputBound);
    CHECK(T.ComputeSeconds == doctest::Approx(393.37984e-6));
    CHECK(explain(T).find("(compute-bound;") != std::string::npos);
    // A dense conv has no per-output term.
    W.Gemm = {1, 3136, 64, 576};
    T = opTime(W, D);
    CHECK(T.Outputs == 0);
    CHECK_FALSE(T.PerOutputBound);
    CHECK(explain(T).find("outputs x") == std::string::npos);
  }

  TEST_CASE("explain plugs the numbers into the formula") {
    const hw::Device D = load(TestGpu);
    const OpTime T = opTime(elementwise(1e6, ir::DType::F32), D);
    CHECK(explain(T) == "max(1 MFLOP / (10 TFLOPS x 0.5), 12 MB / (1 TB/s x "
                        "0.8)) + 5 us = 20 us (memory-bound; vector fp32)");
    const OpTime G = opTime(gemm(4096, 4096, 4096, ir::DType::F16), D);
    CHECK(explain(G).rfind("max(137.4 GFLOP / (100 TFLOPS x 0.8), ", 0) == 0);
  }

  TEST_CASE("bundled devices price a GEMM sensibly") {
    auto A100 = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE(A100);
    const OpWork W = gemm(8192, 8192, 8192, ir::DType::F16);
    const OpTime T = opTime(W, A100->primaryDevice());
    CHECK(T.Bound == Bound::Compute);
    CHECK(std::string(T.Unit) == "tensor");
    // 1.1 TFLOP at 0.81 of 312 TFLOPS: about 4.35 ms (cuBLASLt: 253.7 TFLOPS).
    CHECK(W.Flops / T.Seconds == doctest::Approx(253e12).epsilon(0.02));

    auto Cpu = hw::loadHardware("zen5-2vcpu");
    REQUIRE(Cpu);
    const OpTime C = opTime(W, Cpu->primaryDevice());
    CHECK(std::string(C.Unit) == "simd");
    CHECK(C.Fallback); // no fp16 arithmetic on Zen 5: priced at fp32
  }

  TEST_CASE("tile and wave quantisation, computed by hand") {
    // 108 SMs, 128x128 tiles, M = N = K = 1024. 128x128 tiles without
    // split-K: 64 blocks in one wave of 108 (0.593). Split-K 8 (K slices of
    // 128): 512 blocks in 5 waves = 512/540 = 0.948, the best choice
    // (smaller tiles lose more operand reuse than they gain).
    GemmDims G{1, 1024, 1024, 1024};
    std::string Note;
    CHECK(quantization(G, 108, 128, 128, &Note) ==
          doctest::Approx(512.0 / 540));
    CAPTURE(Note);
    CHECK(Note.find("128x128 tiles, split-K 8") == 0);
    // A GEMM filling whole waves exactly loses nothing.
    CHECK(quantization({1, 128 * 108, 128, 128}, 108, 128, 128) ==
          doctest::Approx(1));
    // With a wave or more of output tiles, K is not split: M = 1280,
    // N = 1536 is 10 x 12 = 120 tiles of 128x128 in 2 waves (120/216 =
    // 0.556); smaller tiles lose more reuse; splitting K would fill the
    // waves better (2 slices: 240 blocks in 3 waves, 0.741) but cuBLAS
    // splits only products too small to fill the SMs once.
    Note.clear();
    CHECK(quantization({1, 1280, 1536, 4096}, 108, 128, 128, &Note) ==
          doctest::Approx(120.0 / 216));
    CAPTURE(Note);
    CHECK(Note.find("128x128 tiles, split-K 1") == 0);
    // Without tile data or SMs nothing is modelled.
    CHECK(quantization(G, 0, 128, 128) == 1);
    CHECK(quantization(G, 108, 0, 0) == 1);
  }

  /// A GPU with fp16 tensor units at 100 and vector units at 20 TFLOPS.
  hw::Device tensorAndVectorGpu(unsigned Cores, const char *Bandwidth,
                                double ComputeEfficiency) {
    return load(llvm::formatv(R"(device:
  name: qgpu
  kind: gpu
  cores: {0}
  gemm_tile: [128, 128]
  compute:
    tensor: {{fp16: 100 TFLOPS}
    vector: {{fp16: 20 TFLOPS}
  memory:
    - {{name: HBM, capacity: 16 GB, bandwidth: {1}}
  launch_overhead: 0 us
  efficiency:
    default: {{compute: {2}, memory: 1}
)",
                              Cores, Bandwidth, ComputeEfficiency)
                    .str()
                    .c_str());
  }

  TEST_CASE("a GEMV on a GPU runs on the vector units, not padded tiles") {
    hw::Device D = tensorAndVectorGpu(100, "1000 GB/s", 1);
    OpWork W = gemm(1, 4096, 4096, ir::DType::F16);
    W.Gemm = {1, 1, 4096, 4096};
    OpTime T = opTime(W, D);
    CHECK(std::string(T.Unit) == "vector");
    CHECK(T.Quantization == 1);
    // Memory-bound: the 4096 x 4096 fp16 weights and two vectors at
    // 1000 GB/s.
    CHECK(T.Seconds == doctest::Approx((4096.0 * 4096 + 2 * 4096) * 2 / 1e12));
    // A big square GEMM stays on the tensor unit with quantisation applied.
    OpWork Big = gemm(8192, 8192, 8192, ir::DType::F16);
    Big.Gemm = {1, 8192, 8192, 8192};
    OpTime TB = opTime(Big, D);
    CHECK(std::string(TB.Unit) == "tensor");
    CHECK(TB.Quantization > 0.95);
    CHECK(TB.ComputeEfficiency == doctest::Approx(TB.Quantization));
  }

  TEST_CASE("an FP8 GEMV falls back to the vector units' FP16, its bytes "
            "FP8") {
    // FP8 is a tensor-core type only: a one-row product over an FP8 cache
    // (a decoding step's attention) would fill 1 of 128 tile rows; the
    // CUDA-core kernel converts on load and computes in FP16.
    hw::Device D = load(R"(device:
  name: fp8gpu
  kind: gpu
  cores: 100
  gemm_tile: [128, 128]
  compute:
    tensor: {fp16: 100 TFLOPS, fp8: 200 TFLOPS}
    vector: {fp16: 20 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
  launch_overhead: 0 us
  efficiency:
    default: {compute: 1, memory: 1}
)");
    OpWork W = gemm(1, 4096, 4096, ir::DType::F8E4M3);
    W.Gemm = {1, 1, 4096, 4096};
    OpTime T = opTime(W, D);
    CHECK(std::string(T.Unit) == "vector");
    CHECK(T.ComputeType == ir::DType::F16);
    CHECK(T.RequestedType == ir::DType::F8E4M3);
    CHECK_FALSE(T.Fallback);
    CHECK(T.Bound == Bound::Memory);
    // The 4096 x 4096 FP8 weights and two vectors at 1000 GB/s.
    CHECK(T.Seconds == doctest::Approx((4096.0 * 4096 + 2 * 4096) / 1e12));
    CHECK(explain(T).find("fp8e4m3 converted on load and computed in fp16") !=
          std::string::npos);
    // A large FP8 GEMM keeps the tensor unit's FP8.
    OpWork Big = gemm(8192, 8192, 8192, ir::DType::F8E4M3);
    Big.Gemm = {1, 8192, 8192, 8192};
    OpTime TB = opTime(Big, D);
    CHECK(std::string(TB.Unit) == "tensor");
    CHECK(TB.ComputeType == ir::DType::F8E4M3);
  }

  TEST_CASE("matrix units run products only: a narrow elementwise op or "
            "reduction widens on the vector unit") {
    // Tensor cores compute FP8 and INT8, the vector unit FP16 and FP32: an
    // FP8 add and an INT8 sum compute in FP16 on the vector unit, at that
    // unit's peak, and a BF16 one in FP32; the bytes stay as they are.
    const hw::Device D = load(R"(device:
  name: narrowgpu
  kind: gpu
  compute:
    tensor: {fp16: 100 TFLOPS, fp8: 200 TFLOPS, int8: 200 TOPS}
    vector: {fp32: 10 TFLOPS, fp16: 20 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
  launch_overhead: 0 us
  efficiency:
    default: {compute: 1, memory: 1}
)");
    const OpTime F8 = opTime(elementwise(1e6, ir::DType::F8E4M3), D);
    CHECK(std::string(F8.Unit) == "vector");
    CHECK(F8.ComputeType == ir::DType::F16);
    CHECK(F8.RequestedType == ir::DType::F8E4M3);
    CHECK_FALSE(F8.Fallback);
    CHECK(F8.ComputeSeconds == doctest::Approx(1e6 / 20e12));
    CHECK(F8.MemorySeconds == doctest::Approx(3e6 / 1e12));
    CHECK(explain(F8).find("fp8e4m3 loaded and stored, computed in fp16 on "
                           "the vector units") != std::string::npos);

    OpWork Sum = elementwise(1e6, ir::DType::I8);
    Sum.Class = OpClass::Reduction;
    const OpTime I8 = opTime(Sum, D);
    CHECK(std::string(I8.Unit) == "vector");
    CHECK(I8.ComputeType == ir::DType::F16);
    CHECK_FALSE(I8.Fallback);
    CHECK(I8.ComputeSeconds == doctest::Approx(1e6 / 20e12));
    const OpTime Bf = opTime(elementwise(1e6, ir::DType::BF16), D);
    CHECK(std::string(Bf.Unit) == "vector");
    CHECK(Bf.ComputeType == ir::DType::F32);
    CHECK_FALSE(Bf.Fallback);
    CHECK(Bf.ComputeSeconds == doctest::Approx(1e6 / 10e12));

    // Products keep the tensor cores' FP8 and INT8.
    const OpTime G = opTime(gemm(4096, 4096, 4096, ir::DType::I8), D);
    CHECK(std::string(G.Unit) == "tensor");
    CHECK(G.ComputeType == ir::DType::I8);

    // A device with matrix units only (an NPU) runs everything there.
    const hw::Device MatrixOnly = load(R"(device:
  name: matrixnpu
  kind: npu
  compute:
    matrix: {int8: 10 TOPS}
  memory:
    - {name: LPDDR, capacity: 8 GB, bandwidth: 100 GB/s}
  launch_overhead: 1 us
  efficiency:
    default: {compute: 0.5, memory: 0.5}
)");
    const OpTime Npu = opTime(elementwise(1e6, ir::DType::I8), MatrixOnly);
    CHECK(std::string(Npu.Unit) == "matrix");
    CHECK(Npu.ComputeType == ir::DType::I8);
  }

  TEST_CASE("the vector units are taken only where they are faster, at the "
            "same size efficiency") {
    // Tensor 100, vector 20 TFLOPS, a GEMM efficiency of 0.25: a GEMM whose
    // tiles are a third padding runs at 100 x 0.25 x 0.67 on the tensor
    // unit, faster than 20 x 0.25 on the vector unit (comparing the vector
    // peak with the tensor unit's efficient rate would take the slower).
    hw::Device D = tensorAndVectorGpu(1, "1000 TB/s", 0.25);
    // M = 96 of a 128-row tile on one SM: 3/4 of the tile is useful.
    OpWork W = gemm(96, 128, 128, ir::DType::F16);
    W.Gemm = {1, 96, 128, 128};
    OpTime T = opTime(W, D);
    CHECK(std::string(T.Unit) == "tensor");
    CHECK(T.Quantization == doctest::Approx(0.75));
    CHECK(T.ComputeSeconds ==
          doctest::Approx(W.Flops / (100e12 * 0.25 * 0.75)));
    CHECK(T.ComputeSeconds < W.Flops / (20e12 * 0.25));
  }

  TEST_CASE("vector_compute prices a class's kernels on the vector units") {
    // Tensor 100 TFLOPS at 0.5, vector 20 TFLOPS at 0.9 for GEMMs (as a
    // V100's CUDA-core SGEMM reaches a larger share of its peak than its
    // tensor-core HGEMM); elementwise ops keep their class's compute.
    hw::Device D = load(R"(device:
  name: vgpu
  kind: gpu
  compute:
    tensor: {fp16: 100 TFLOPS}
    vector: {fp32: 10 TFLOPS, fp16: 20 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 TB/s}
  launch_overhead: 0 us
  efficiency:
    default: {compute: 0.4, memory: 1}
    gemm: {compute: 0.5, vector_compute: 0.9}
)");
    REQUIRE(D.efficiency(OpClass::Gemm).VectorCompute.hasValue());
    CHECK_FALSE(D.efficiency(OpClass::Elementwise).VectorCompute.hasValue());
    // fp32 has no tensor rate: the vector units at 0.9.
    OpWork F32 = gemm(4096, 4096, 4096, ir::DType::F32);
    OpTime T = opTime(F32, D);
    CHECK(std::string(T.Unit) == "vector");
    CHECK(T.ComputeEfficiency == doctest::Approx(0.9));
    CHECK(T.ComputeSeconds == doctest::Approx(F32.Flops / (10e12 * 0.9)));
    // fp16 on the tensor unit at 0.5 (no tile given: no quantisation).
    OpTime H = opTime(gemm(4096, 4096, 4096, ir::DType::F16), D);
    CHECK(std::string(H.Unit) == "tensor");
    CHECK(H.ComputeEfficiency == doctest::Approx(0.5));
    // An elementwise fp32 op: the default's 0.4.
    OpWork E = elementwise(1e9, ir::DType::F32);
    CHECK(opTime(E, D).ComputeEfficiency == doctest::Approx(0.4));
  }

  TEST_CASE("the CUDA-core fallback compares each unit at its own "
            "efficiency") {
    // 8 SMs of 128 x 128 tiles; an fp16 GEMM M = 16 wastes 7/8 of each
    // tile: tensor 100 x 0.5 x 1/8 = 6.25 against vector 20 x 0.9 = 18
    // TFLOPS, so the vector units run it at their 0.9. Without
    // vector_compute (0.5 both) it would be 6.25 against 10: vector too,
    // at 0.5.
    const char *Yaml = R"(device:
  name: fgpu
  kind: gpu
  cores: 8
  gemm_tile: [128, 128]
  compute:
    tensor: {fp16: 100 TFLOPS}
    vector: {fp16: 20 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 TB/s}
  launch_overhead: 0 us
  efficiency:
    default: {compute: 0.5, memory: 1}
    gemm: {compute: 0.5, vector_compute: 0.9}
)";
    hw::Device D = load(Yaml);
    OpWork W = gemm(16, 1024, 4096, ir::DType::F16);
    W.Gemm = {1, 16, 1024, 4096};
    OpTime T = opTime(W, D);
    CHECK(std::string(T.Unit) == "vector");
    CHECK(T.ComputeEfficiency == doctest::Approx(0.9));
    CHECK(T.ComputeSeconds == doctest::Approx(W.Flops / (20e12 * 0.9)));
    // A vector_compute below the tensor unit's padded rate keeps it there:
    // 20 x 0.2 = 4 < 6.25.
    std::string Low = Yaml;
    Low.replace(Low.find("vector_compute: 0.9"), 19, "vector_compute: 0.2");
    OpTime TL = opTime(W, load(Low.c_str()));
    CHECK(std::string(TL.Unit) == "tensor");
    CHECK(TL.ComputeEfficiency == doctest::Approx(0.5 * TL.Quantization));
  }
} // TEST_SUITE
