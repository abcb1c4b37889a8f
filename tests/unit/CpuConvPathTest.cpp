//===- CpuConvPathTest.cpp - Blocked and generic CPU convolutions ---------===//
//
// ONNX Runtime's CPU convolutions: which run MLAS's blocked NCHWc kernels
// (cost::runsBlocked, the rule tools/bench/ort_nchwc_rule.py checks against
// ORT), the padding of their channels, the generic im2col + SGEMM path
// priced by hand, the epilogue a CPU convolution applies in its registers
// (hwdb conv_activations), and the counts the work pass gives them.
//
//===----------------------------------------------------------------------===//
#include "TestDevices.h"
#include "TestGraphs.h"

#include "costmodels/Roofline.h"
#include "hwdb/Loader.h"
#include "passes/CpuLayout.h"
#include "passes/Fusion.h"
#include "passes/Predict.h"
#include "passes/WorkPass.h"

#include <doctest/doctest.h>

#include <string>

using namespace perfc;
using namespace perfc::cost;
using namespace perfc::test;

namespace {

/// A conv's work as the work pass fills it: Groups groups of OutPerGroup
/// output channels and InPerGroup input channels, 3x3 over 28x28 outputs.
OpWork conv(double InPerGroup, double OutPerGroup, double Groups,
            bool Pointwise = false) {
  OpWork W;
  W.Class = OpClass::Conv;
  W.Type = ir::DType::F32;
  const double Kernel = Pointwise ? 1 : 9;
  W.Gemm = {Groups, 28 * 28, OutPerGroup, InPerGroup * Kernel};
  W.Macs = Groups * W.Gemm.M * W.Gemm.N * W.Gemm.K;
  W.Flops = 2 * W.Macs;
  W.ConvInPerGroup = InPerGroup;
  W.ConvPointwise = Pointwise;
  W.BytesRead = 4 * (Groups * InPerGroup * 28 * 28);
  W.BytesWritten = 4 * (Groups * OutPerGroup * 28 * 28);
  return W;
}

/// Round numbers: 1 TFLOPS, one 1 MiB cache at 100 GB/s, DRAM 10 GB/s.
std::string cpu(const char *Extra) {
  return std::string(R"(device:
  name: ccpu
  kind: cpu
  compute:
    simd: {fp32: 1 TFLOPS}
  memory:
    - {name: DRAM, capacity: 16 GB, bandwidth: 10 GB/s}
    - {name: L2, capacity: 1 MiB, bandwidth: 100 GB/s}
  launch_overhead: 1 us
)") + Extra +
         R"(  efficiency:
    default: {compute: 0.5, memory: 1}
    gemm: {compute: 0.25, memory: 1}
    conv: {compute: 0.8, memory: 1}
    data_movement: {compute: 0.5, memory: 0.2}
)";
}

hw::Device load(const std::string &Text) {
  return deviceFromYaml(Text, "cpu-conv-test.yaml");
}

} // namespace

TEST_SUITE("cpu convolution paths") {

  TEST_CASE("ONNX Runtime's NCHWc rule, block 16 and alignment 4") {
    // The cases of tools/bench/ort_nchwc_rule.py (ORT 1.31, AVX-512).
    // One group: input channels fewer than a block, or multiples of 4.
    CHECK(runsBlocked(conv(3, 32, 1), 16, 4));
    CHECK(runsBlocked(conv(12, 32, 1), 16, 4));
    CHECK(runsBlocked(conv(20, 32, 1), 16, 4));
    CHECK(runsBlocked(conv(36, 32, 1), 16, 4));
    CHECK_FALSE(runsBlocked(conv(22, 32, 1), 16, 4));
    CHECK_FALSE(runsBlocked(conv(58, 32, 1), 16, 4));
    // Output channels are padded, whatever they are.
    CHECK(runsBlocked(conv(32, 22, 1), 16, 4));
    // Depthwise: channels a multiple of 4.
    CHECK(runsBlocked(conv(1, 1, 72), 16, 4));
    CHECK(runsBlocked(conv(1, 1, 12), 16, 4));
    CHECK_FALSE(runsBlocked(conv(1, 1, 58), 16, 4));
    CHECK_FALSE(runsBlocked(conv(1, 1, 22), 16, 4));
    // Other groups: whole blocks per group (RegNet's 8 do not).
    CHECK(runsBlocked(conv(16, 16, 3), 16, 4));
    CHECK_FALSE(runsBlocked(conv(8, 8, 6), 16, 4));
    CHECK_FALSE(runsBlocked(conv(16, 8, 4), 16, 4));
    // Alignment 0 means the block: 20 channels are then not blocked.
    CHECK_FALSE(runsBlocked(conv(20, 32, 1), 16));
    // No block described, another op, or no channel count: blocked.
    CHECK(runsBlocked(conv(58, 32, 1), 0));
    OpWork Gemm = conv(58, 32, 1);
    Gemm.Class = OpClass::Gemm;
    CHECK(runsBlocked(Gemm, 16, 4));
    OpWork Unknown = conv(58, 32, 1);
    Unknown.ConvInPerGroup = 0;
    CHECK(runsBlocked(Unknown, 16, 4));
  }

  TEST_CASE("blocked convolutions compute whole channel blocks") {
    // 24 -> 72: 32 x 80 channels computed for 24 x 72.
    CHECK(channelPadding(conv(24, 72, 1), 16) ==
          doctest::Approx(32.0 / 24 * 80.0 / 72));
    // Fewer input channels than a block are read as they are.
    CHECK(channelPadding(conv(3, 24, 1), 16) == doctest::Approx(32.0 / 24));
    CHECK(channelPadding(conv(1, 1, 72), 16) == doctest::Approx(80.0 / 72));
    CHECK(channelPadding(conv(16, 16, 3), 16) == 1);
    CHECK(channelPadding(conv(64, 64, 1), 16) == 1);
    CHECK(channelPadding(conv(24, 72, 1), 0) == 1);

    const hw::Device D =
        load(cpu("  conv_channel_block: 16\n  conv_channel_align: 4\n"));
    const OpWork W = conv(24, 72, 1);
    const OpTime T = opTime(W, D);
    const double Padded = 2 * W.Macs * (32.0 / 24 * 80.0 / 72);
    CHECK_FALSE(T.GenericConv);
    CHECK(T.ChannelPadding == doctest::Approx(32.0 / 24 * 80.0 / 72));
    CHECK(T.ComputeSeconds == doctest::Approx(Padded / (1e12 * 0.8)));
    CHECK(explain(T).find("padded") != std::string::npos);
    // A GPU description says nothing of blocks: the real FLOPs.
    const hw::Device Plain = load(cpu(""));
    CHECK(opTime(W, Plain).ComputeSeconds ==
          doctest::Approx(W.Flops / (1e12 * 0.8)));
  }

  TEST_CASE("the generic path: a GEMM per group after an im2col copy") {
    const hw::Device D =
        load(cpu("  conv_channel_block: 16\n  conv_channel_align: 4\n"));
    // RegNet-like: 6 groups of 8 channels, 3x3 over 28x28.
    const OpWork W = conv(8, 8, 6);
    const OpTime T = opTime(W, D);
    CHECK(T.GenericConv);
    // GEMM efficiency (0.25), not conv's (0.8).
    CHECK(T.ComputeEfficiency == doctest::Approx(0.25));
    CHECK(T.ComputeSeconds == doctest::Approx(W.Flops / (1e12 * 0.25)));
    // One group's copy: K x M = 72 x 784 floats, written and read:
    // 451,584 bytes, held by the 1 MiB L2 (100 GB/s x 0.2); six groups.
    const double GroupBytes = 2.0 * 72 * 784 * 4;
    const double Im2col = 6 * GroupBytes / (100e9 * 0.2);
    CHECK(T.Im2colSeconds == doctest::Approx(Im2col));
    CHECK(T.Seconds ==
          doctest::Approx(std::max(T.ComputeSeconds, T.MemorySeconds) + 1e-6 +
                          Im2col));
    CHECK(explain(T).find("im2col") != std::string::npos);
    // A 1x1 stride-1 convolution multiplies its input in place: no copy.
    const OpTime Pointwise = opTime(conv(58, 58, 1, /*Pointwise=*/true), D);
    CHECK(Pointwise.GenericConv);
    CHECK(Pointwise.Im2colSeconds == 0);
    // Without conv_channel_block every convolution runs the direct kernels.
    const OpTime Direct = opTime(W, load(cpu("")));
    CHECK_FALSE(Direct.GenericConv);
    CHECK(Direct.ComputeEfficiency == doctest::Approx(0.8));
  }

  TEST_CASE("the work pass records channels per group and 1x1 products") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 48, 28, 28});
    ir::Node *Grouped =
        B.node("Conv", {X, B.weight("wg", {48, 8, 3, 3})}, {1, 48, 28, 28});
    Grouped->addAttr(ir::Attr("group", int64_t(6)));
    Grouped->addAttr(ir::Attr("pads", std::vector<int64_t>{1, 1, 1, 1}));
    ir::Node *Point =
        B.node("Conv", {X, B.weight("wp", {58, 48, 1, 1})}, {1, 58, 28, 28});
    ir::Node *Padded =
        B.node("Conv", {X, B.weight("wq", {58, 48, 1, 1})}, {1, 58, 30, 30});
    Padded->addAttr(ir::Attr("pads", std::vector<int64_t>{1, 1, 1, 1}));
    const GraphWork Work = computeWork(B.G);
    const OpWork &G = Work.Nodes[Grouped->index()];
    CHECK(G.ConvInPerGroup == 8);
    CHECK(G.Gemm.Batch == 6);
    CHECK(G.Gemm.N == 8);
    CHECK_FALSE(G.ConvPointwise);
    CHECK(Work.Nodes[Point->index()].ConvInPerGroup == 48);
    CHECK(Work.Nodes[Point->index()].ConvPointwise);
    CHECK_FALSE(Work.Nodes[Padded->index()].ConvPointwise);
  }

  TEST_CASE("a CPU convolution applies one listed activation, nothing after") {
    // Conv + BN + SiLU (Sigmoid, Mul), then Conv + BN + Relu + Add.
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 16, 8, 8});
    auto Bn = [&](ir::Value *In, const char *P) {
      return B.node("BatchNormalization",
                    {In, B.weight(std::string(P) + "s", {16}),
                     B.weight(std::string(P) + "b", {16}),
                     B.weight(std::string(P) + "m", {16}),
                     B.weight(std::string(P) + "v", {16})},
                    {1, 16, 8, 8});
    };
    ir::Node *C1 =
        B.node("Conv", {X, B.weight("w1", {16, 16, 1, 1})}, {1, 16, 8, 8});
    ir::Node *Bn1 = Bn(B.out(C1), "1");
    ir::Node *Sig = B.node("Sigmoid", {B.out(Bn1)}, {1, 16, 8, 8});
    ir::Node *Silu = B.node("Mul", {B.out(Bn1), B.out(Sig)}, {1, 16, 8, 8});
    ir::Node *C2 = B.node("Conv", {B.out(Silu), B.weight("w2", {16, 16, 1, 1})},
                          {1, 16, 8, 8});
    ir::Node *Bn2 = Bn(B.out(C2), "2");
    ir::Node *Relu = B.node("Relu", {B.out(Bn2)}, {1, 16, 8, 8});
    ir::Node *Res = B.node("Add", {B.out(Relu), X}, {1, 16, 8, 8});
    B.G.markOutput(B.out(Res));
    const GraphWork Work = computeWork(B.G);

    // Any elementwise chain fuses: two kernels, one per convolution.
    CHECK(planKernels(B.G, Work).Kernels.size() == 2);

    FusionOptions O;
    O.ConvActivations = {"Relu", "Sigmoid", "Clip"};
    const KernelPlan P = planKernels(B.G, Work, O);
    // Conv + BN; Sigmoid + Mul (BN's output has two readers, so the
    // Sigmoid cannot replace it: ONNX Runtime's QuickGelu); Conv + BN +
    // Relu; the residual Add after the activation.
    REQUIRE(P.Kernels.size() == 4);
    CHECK(P.KernelOf[Bn1->index()] == P.KernelOf[C1->index()]);
    CHECK(P.KernelOf[Sig->index()] != P.KernelOf[C1->index()]);
    CHECK(P.KernelOf[Silu->index()] == P.KernelOf[Sig->index()]);
    CHECK(P.KernelOf[Relu->index()] == P.KernelOf[C2->index()]);
    CHECK(P.KernelOf[Res->index()] != P.KernelOf[C2->index()]);
  }

  TEST_CASE("a residual Add before the activation and constant scales join") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 16, 8, 8});
    ir::Node *C =
        B.node("Conv", {X, B.weight("w", {16, 16, 1, 1})}, {1, 16, 8, 8});
    ir::Node *Scale =
        B.node("Mul", {B.out(C), B.weight("k", {16, 1, 1})}, {1, 16, 8, 8});
    ir::Node *Res = B.node("Add", {B.out(Scale), X}, {1, 16, 8, 8});
    ir::Node *Relu = B.node("Relu", {B.out(Res)}, {1, 16, 8, 8});
    // A Mul by a tensor computed at run time (squeeze-excite) does not.
    ir::Node *Gate = B.node("Mul", {B.out(Relu), X}, {1, 16, 8, 8});
    B.G.markOutput(B.out(Gate));
    FusionOptions O;
    O.ConvActivations = {"Relu"};
    const KernelPlan P = planKernels(B.G, computeWork(B.G), O);
    REQUIRE(P.Kernels.size() == 2);
    CHECK(P.Kernels[0].Members.size() == 4);
    CHECK(P.KernelOf[Gate->index()] == 1);
  }

  TEST_CASE("HardSwish written out joins a convolution that lists it") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 16, 8, 8});
    ir::Node *C =
        B.node("Conv", {X, B.weight("w", {16, 16, 1, 1})}, {1, 16, 8, 8});
    ir::Node *Gate = B.node("HardSigmoid", {B.out(C)}, {1, 16, 8, 8});
    ir::Node *Swish = B.node("Mul", {B.out(C), B.out(Gate)}, {1, 16, 8, 8});
    ir::Node *After = B.node("Relu", {B.out(Swish)}, {1, 16, 8, 8});
    B.G.markOutput(B.out(After));
    const GraphWork Work = computeWork(B.G);
    FusionOptions O;
    O.ConvActivations = {"Relu", "HardSigmoid", "HardSwish"};
    const KernelPlan P = planKernels(B.G, Work, O);
    // Conv + HardSigmoid + Mul (ORT's NCHWc Conv, activation HardSwish);
    // nothing after the activation: the Relu runs on its own.
    REQUIRE(P.Kernels.size() == 2);
    CHECK(P.KernelOf[Gate->index()] == P.KernelOf[C->index()]);
    CHECK(P.KernelOf[Swish->index()] == P.KernelOf[C->index()]);
    CHECK(P.KernelOf[After->index()] != P.KernelOf[C->index()]);
    // Without HardSwish listed, the pair runs as a kernel of its own.
    O.ConvActivations = {"Relu", "HardSigmoid"};
    const KernelPlan Q = planKernels(B.G, Work, O);
    CHECK(Q.KernelOf[Gate->index()] != Q.KernelOf[C->index()]);
    CHECK(Q.KernelOf[Swish->index()] == Q.KernelOf[Gate->index()]);
  }

  TEST_CASE("NCHWc reorders around a squeeze-excite block") {
    // x -> Conv (blocked) -> GlobalAveragePool -> Conv -> Relu -> Conv ->
    // Sigmoid -> Mul(first conv's output, gate: a broadcast) -> Conv -> y.
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 32, 8, 8});
    ir::Node *C1 =
        B.node("Conv", {X, B.weight("w1", {32, 32, 1, 1})}, {1, 32, 8, 8});
    ir::Node *Pool = B.node("GlobalAveragePool", {B.out(C1)}, {1, 32, 1, 1});
    ir::Node *C2 = B.node("Conv", {B.out(Pool), B.weight("w2", {8, 32, 1, 1})},
                          {1, 8, 1, 1});
    ir::Node *Relu = B.node("Relu", {B.out(C2)}, {1, 8, 1, 1});
    ir::Node *C3 = B.node("Conv", {B.out(Relu), B.weight("w3", {32, 8, 1, 1})},
                          {1, 32, 1, 1});
    ir::Node *Gate = B.node("Sigmoid", {B.out(C3)}, {1, 32, 1, 1});
    ir::Node *Scale = B.node("Mul", {B.out(C1), B.out(Gate)}, {1, 32, 8, 8});
    ir::Node *C4 = B.node(
        "Conv", {B.out(Scale), B.weight("w4", {32, 32, 1, 1})}, {1, 32, 8, 8});
    B.G.markOutput(B.out(C4));

    const hw::Device D =
        load(cpu("  conv_channel_block: 16\n  conv_channel_align: 4\n"
                 "  conv_activations: [Relu, Sigmoid]\n"));
    FusionOptions F;
    F.ConvActivations = D.ConvActivations;
    const KernelPlan Plan = planKernels(B.G, computeWork(B.G), F);
    const LayoutReorders L = nchwcReorders(B.G, Plan, D);
    auto kernel = [&](ir::Node *N) { return Plan.KernelOf[N->index()]; };
    // Convolutions and the pool blocked; the broadcast Mul is not.
    CHECK(L.Blocked[kernel(C1)]);
    CHECK(L.Blocked[kernel(Pool)]);
    CHECK(L.Blocked[kernel(C2)]);
    CHECK(L.Blocked[kernel(C3)]);
    CHECK_FALSE(L.Blocked[kernel(Scale)]);
    CHECK(L.Blocked[kernel(C4)]);
    // x in; the Mul's two inputs out; its output back in; y out.
    CHECK(L.Count[kernel(C1)] == 1);
    CHECK(L.Count[kernel(Scale)] == 2);
    CHECK(L.Count[kernel(C4)] == 2);
    CHECK(L.Total == 5);
    // Each a data-movement kernel of the tensor read and written.
    OpWork Move;
    Move.Class = OpClass::DataMovement;
    Move.BytesRead = Move.BytesWritten = 4 * 32 * 8 * 8;
    const double Big = opTime(Move, D).Seconds;
    Move.BytesRead = Move.BytesWritten = 4 * 32;
    const double Small = opTime(Move, D).Seconds;
    CHECK(L.Seconds[kernel(Scale)] == doctest::Approx(Big + Small));
    CHECK(L.TotalSeconds == doctest::Approx(4 * Big + Small));

    // predict() adds them to the kernels that wait for them.
    PredictOptions O;
    O.Device = &D;
    const Report R = predict(B.G, O);
    REQUIRE(R.Nodes[Scale->index()].Time.hasValue());
    CHECK(R.Nodes[Scale->index()].Time->Reorders == 2);
    CHECK(R.Nodes[Scale->index()].Time->ReorderSeconds ==
          doctest::Approx(Big + Small));
    // A device without conv_channel_block reorders nothing.
    const LayoutReorders None = nchwcReorders(B.G, Plan, load(cpu("")));
    CHECK(None.Total == 0);
    CHECK(None.Count.empty()); // nothing allocated off blocking CPUs
    (void)Relu;
  }

  TEST_CASE("DenseNet's standalone BatchNormalization, Pad + pool and Concat "
            "stay blocked") {
    // x -> Conv -> Concat(x', conv) -> BN -> Relu -> Pad -> AveragePool ->
    // Conv -> y: no reorder but for x in and y out.
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 32, 8, 8});
    ir::Node *C0 =
        B.node("Conv", {X, B.weight("w0", {32, 32, 1, 1})}, {1, 32, 8, 8});
    ir::Node *C1 = B.node("Conv", {B.out(C0), B.weight("w1", {16, 32, 1, 1})},
                          {1, 16, 8, 8});
    ir::Node *Cat = B.node("Concat", {B.out(C0), B.out(C1)}, {1, 48, 8, 8});
    Cat->addAttr(ir::Attr("axis", int64_t(1)));
    ir::Node *Bn = B.node("BatchNormalization",
                          {B.out(Cat), B.weight("s", {48}), B.weight("b", {48}),
                           B.weight("m", {48}), B.weight("v", {48})},
                          {1, 48, 8, 8});
    ir::Node *Relu = B.node("Relu", {B.out(Bn)}, {1, 48, 8, 8});
    ir::Node *Pad =
        B.node("Pad", {B.out(Relu), B.constInts("p", {0, 0, 1, 1, 0, 0, 1, 1})},
               {1, 48, 10, 10});
    ir::Node *Pool = B.node("AveragePool", {B.out(Pad)}, {1, 48, 5, 5});
    ir::Node *C2 = B.node("Conv", {B.out(Pool), B.weight("w2", {32, 48, 1, 1})},
                          {1, 32, 5, 5});
    B.G.markOutput(B.out(C2));
    const hw::Device D =
        load(cpu("  conv_channel_block: 16\n  conv_channel_align: 4\n"));
    const KernelPlan Plan = planKernels(B.G, computeWork(B.G));
    const LayoutReorders L = nchwcReorders(B.G, Plan, D);
    for (ir::Node *N : {C0, C1, Cat, Bn, Pad, Pool, C2})
      CHECK(L.Blocked[Plan.KernelOf[N->index()]]);
    CHECK(L.Total == 2); // x in, y out
    (void)Relu;
  }
}
