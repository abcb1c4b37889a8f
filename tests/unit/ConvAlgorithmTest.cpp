//===- ConvAlgorithmTest.cpp - Winograd and layout costs, by hand ---------===//
#include "TestDevices.h"

#include "costmodels/Roofline.h"
#include "hwdb/Loader.h"

#include <doctest/doctest.h>

#include <string>

using namespace perfc;
using namespace perfc::test;
using namespace perfc::cost;

namespace {

/// Round numbers, as in RooflineTest, plus the two convolution-library keys.
std::string gpu(const char *Extra) {
  return std::string(R"(device:
  name: cgpu
  kind: gpu
  compute:
    tensor: {fp16: 100 TFLOPS, tf32: 50 TFLOPS}
    vector: {fp32: 10 TFLOPS, fp16: 20 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
  launch_overhead: 5 us
)") + Extra +
         R"(  efficiency:
    default: {compute: 0.5, memory: 0.8}
    data_movement: {compute: 0.5, memory: 0.5}
)";
}

hw::Device load(const std::string &Text) {
  return deviceFromYaml(Text, "conv-algorithm-test.yaml");
}

/// 1e9 MACs plus a 1e6-FLOP bias epilogue, 8 MB of activations in and out
/// (LayoutBytes), 12 MB read and written in all.
OpWork conv(ir::DType T, bool Winograd) {
  OpWork W;
  W.Class = OpClass::Conv;
  W.Type = T;
  W.Macs = 1e9;
  W.Flops = 2e9 + 1e6;
  W.BytesRead = 6e6;
  W.BytesWritten = 6e6;
  W.LayoutBytes = 8e6;
  W.Winograd3x3 = Winograd;
  return W;
}

} // namespace

TEST_SUITE("conv algorithms") {

  TEST_CASE("Winograd F(2x2,3x3) divides an fp32 conv's products by 2.25") {
    const hw::Device D = load(gpu("  winograd_tile: 2\n"));
    const OpTime T = opTime(conv(ir::DType::F32, true), D);
    CHECK(T.WinogradReduction == doctest::Approx(2.25)); // 9*4/16
    // (2e9 / 2.25 + 1e6) FLOP / (10 TFLOPS x 0.5) = 177.98 us; memory
    // 12 MB / (1000 GB/s x 0.8) = 15 us; + 5 us.
    CHECK(T.ComputeSeconds == doctest::Approx((2e9 / 2.25 + 1e6) / 5e12));
    CHECK(T.Seconds == doctest::Approx((2e9 / 2.25 + 1e6) / 5e12 + 5e-6));
    CHECK(explain(T).find("Winograd") != std::string::npos);
    // F(4x4,3x3): 9*16/36 = 4.
    const hw::Device D4 = load(gpu("  winograd_tile: 4\n"));
    CHECK(opTime(conv(ir::DType::F32, true), D4).WinogradReduction ==
          doctest::Approx(4.0));
  }

  TEST_CASE("no Winograd off its shape, off the vector units, or unsaid") {
    const hw::Device D = load(gpu("  winograd_tile: 2\n"));
    const double Direct = (2e9 + 1e6) / 5e12;
    // Not a 3x3 stride-1 convolution.
    CHECK(opTime(conv(ir::DType::F32, false), D).ComputeSeconds ==
          doctest::Approx(Direct));
    // A device that does not say its library runs Winograd.
    const hw::Device Plain = load(gpu(""));
    CHECK(opTime(conv(ir::DType::F32, true), Plain).WinogradReduction == 1);
    // Tensor cores (TF32): an implicit GEMM, all its FLOPs:
    // 2.001e9 / (50 TFLOPS x 0.5).
    TimeOptions Tf32;
    Tf32.ComputeType = ir::DType::TF32;
    const OpTime T = opTime(conv(ir::DType::F32, true), D, Tf32);
    CHECK(T.WinogradReduction == 1);
    CHECK(T.ComputeSeconds == doctest::Approx((2e9 + 1e6) / 25e12));
  }

  TEST_CASE("NCHW tensor-core convolutions pay two transposes") {
    const hw::Device D = load(gpu("  matrix_conv_layout: nhwc\n"));
    TimeOptions O;
    O.Layout = hw::ConvLayout::Nchw;
    const OpTime T = opTime(conv(ir::DType::F16, false), D, O);
    // Input and output read and written: 2 x 8 MB / (1000 GB/s x 0.5) =
    // 32 us, plus two launches of 5 us.
    CHECK(T.LayoutSeconds == doctest::Approx(32e-6 + 10e-6));
    // The conv itself: 2.001e9 / (100 TFLOPS x 0.5) = 40.02 us + 5 us.
    CHECK(T.Seconds == doctest::Approx(40.02e-6 + 5e-6 + 42e-6));
    CHECK(explain(T).find("transposing") != std::string::npos);
  }

  TEST_CASE("no transposes in the kernels' layout, unsaid, or off tensor "
            "cores") {
    const hw::Device D = load(gpu("  matrix_conv_layout: nhwc\n"));
    TimeOptions Nhwc, Native, Nchw;
    Nhwc.Layout = hw::ConvLayout::Nhwc;
    Nchw.Layout = hw::ConvLayout::Nchw;
    CHECK(opTime(conv(ir::DType::F16, false), D, Nhwc).LayoutSeconds == 0);
    CHECK(opTime(conv(ir::DType::F16, false), D, Native).LayoutSeconds == 0);
    // FP32 on CUDA cores: cuDNN has native NCHW kernels.
    CHECK(opTime(conv(ir::DType::F32, false), D, Nchw).LayoutSeconds == 0);
    // A device without a preferred layout.
    CHECK(opTime(conv(ir::DType::F16, false), load(gpu("")), Nchw)
              .LayoutSeconds == 0);
  }

  TEST_CASE("the library keys refuse bad values with the place and a fix") {
    auto Big = hw::loadHardwareFromString(gpu("  winograd_tile: 8\n"),
                                          "conv-algorithm-test.yaml");
    REQUIRE_FALSE(bool(Big));
    const std::string BigMsg = llvm::toString(Big.takeError());
    CHECK(BigMsg.find("conv-algorithm-test.yaml") != std::string::npos);
    CHECK(BigMsg.find("winograd_tile") != std::string::npos);
    auto Odd = hw::loadHardwareFromString(gpu("  matrix_conv_layout: hwcn\n"),
                                          "conv-algorithm-test.yaml");
    REQUIRE_FALSE(bool(Odd));
    const std::string OddMsg = llvm::toString(Odd.takeError());
    CHECK(OddMsg.find("nhwc") != std::string::npos);
    CHECK(OddMsg.find("hwcn") != std::string::npos);
  }
}
