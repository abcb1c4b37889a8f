//===- OpWorkTest.cpp - Unit tests of the op work formulas ----------------===//
//
// Single-node graphs with hand-computed expectations, and sweeps over every
// registered op for coverage and robustness.
//
//===----------------------------------------------------------------------===//
#include "TestGraphs.h"

#include "ir/Graph.h"
#include "passes/OpRegistry.h"
#include "passes/WorkPass.h"

#include <cmath>
#include <iterator>
#include <string>
#include <vector>

using namespace perfc;
using namespace perfc::test;

static OpWork workOf(const ir::Node *N) {
  return computeNodeWork(*N, defaultOpRegistry().lookup(N->opType()));
}

static void setInt(ir::Node *N, llvm::StringRef Name, int64_t V) {
  N->addAttr(ir::Attr(Name.str(), V));
}
static void setInts(ir::Node *N, llvm::StringRef Name, std::vector<int64_t> V) {
  N->addAttr(ir::Attr(Name.str(), std::move(V)));
}
static void setString(ir::Node *N, llvm::StringRef Name, std::string V) {
  N->addAttr(ir::Attr(Name.str(), std::move(V)));
}

//===----------------------------------------------------------------------===//
// Registry coverage
//===----------------------------------------------------------------------===//

// The default-domain op types of ONNX 1.12 (opset <= 17) but If, Loop and
// Scan, which OpRegistry.cpp registers itself.
static const char *const StandardOps[] = {
    "Abs",
    "Acos",
    "Acosh",
    "Add",
    "And",
    "ArgMax",
    "ArgMin",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "AveragePool",
    "BatchNormalization",
    "Bernoulli",
    "BitShift",
    "BlackmanWindow",
    "Cast",
    "CastLike",
    "Ceil",
    "Celu",
    "Clip",
    "Compress",
    "Concat",
    "ConcatFromSequence",
    "Constant",
    "ConstantOfShape",
    "Conv",
    "ConvInteger",
    "ConvTranspose",
    "Cos",
    "Cosh",
    "CumSum",
    "DFT",
    "DepthToSpace",
    "DequantizeLinear",
    "Det",
    "Div",
    "Dropout",
    "DynamicQuantizeLinear",
    "Einsum",
    "Elu",
    "Equal",
    "Erf",
    "Exp",
    "Expand",
    "EyeLike",
    "Flatten",
    "Floor",
    "GRU",
    "Gather",
    "GatherElements",
    "GatherND",
    "Gemm",
    "GlobalAveragePool",
    "GlobalLpPool",
    "GlobalMaxPool",
    "Greater",
    "GreaterOrEqual",
    "GridSample",
    "HammingWindow",
    "HannWindow",
    "HardSigmoid",
    "HardSwish",
    "Hardmax",
    "Identity",
    "InstanceNormalization",
    "IsInf",
    "IsNaN",
    "LRN",
    "LSTM",
    "LayerNormalization",
    "LeakyRelu",
    "Less",
    "LessOrEqual",
    "Log",
    "LogSoftmax",
    "LpNormalization",
    "LpPool",
    "MatMul",
    "MatMulInteger",
    "Max",
    "MaxPool",
    "MaxRoiPool",
    "MaxUnpool",
    "Mean",
    "MeanVarianceNormalization",
    "MelWeightMatrix",
    "Min",
    "Mod",
    "Mul",
    "Multinomial",
    "Neg",
    "NegativeLogLikelihoodLoss",
    "NonMaxSuppression",
    "NonZero",
    "Not",
    "OneHot",
    "Optional",
    "OptionalGetElement",
    "OptionalHasElement",
    "Or",
    "PRelu",
    "Pad",
    "Pow",
    "QLinearConv",
    "QLinearMatMul",
    "QuantizeLinear",
    "RNN",
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "Range",
    "Reciprocal",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
    "Relu",
    "Reshape",
    "Resize",
    "ReverseSequence",
    "RoiAlign",
    "Round",
    "STFT",
    "Scatter",
    "ScatterElements",
    "ScatterND",
    "Selu",
    "SequenceAt",
    "SequenceConstruct",
    "SequenceEmpty",
    "SequenceErase",
    "SequenceInsert",
    "SequenceLength",
    "SequenceMap",
    "Shape",
    "Shrink",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Size",
    "Slice",
    "Softmax",
    "SoftmaxCrossEntropyLoss",
    "Softplus",
    "Softsign",
    "SpaceToDepth",
    "Split",
    "SplitToSequence",
    "Sqrt",
    "Squeeze",
    "StringNormalizer",
    "Sub",
    "Sum",
    "Tan",
    "Tanh",
    "TfIdfVectorizer",
    "ThresholdedRelu",
    "Tile",
    "TopK",
    "Transpose",
    "Trilu",
    "Unique",
    "Unsqueeze",
    "Upsample",
    "Where",
    "Xor",
};

TEST_CASE("every standard op type has a registry entry") {
  CHECK(std::size(StandardOps) == 175);
  const OpRegistry &R = defaultOpRegistry();
  for (const char *Op : StandardOps) {
    INFO(Op);
    CHECK(R.lookup(Op) != nullptr);
  }
  // Nothing else (a misspelt name would show up here): the 175, the
  // three control-flow ops and the 11 com.microsoft ops (ContribOps.cpp).
  CHECK(R.size() == 189);
  size_t Contrib = 0;
  for (const auto &Entry : R.entries())
    Contrib += Entry.getKey().startswith("com.microsoft:");
  CHECK(Contrib == 11);
  for (const char *Op : {"If", "Loop", "Scan"})
    CHECK(R.lookup(Op)->Class == OpClass::Control);
}

TEST_CASE("op families register disjoint op types") {
  // The default registry keeps the last entry for a name registered twice;
  // separate registries show a duplicate as a size mismatch.
  size_t Total = 0;
  for (void (*Register)(OpRegistry &) :
       {&registerElementwiseOps, &registerMatMulOps, &registerConvOps,
        &registerNormalizationOps, &registerReductionOps,
        &registerDataMovementOps, &registerRecurrentOps, &registerMiscOps}) {
    OpRegistry Family;
    Register(Family);
    Total += Family.size();
  }
  CHECK(Total == 175);
}

/// A node of op type Op with NumIn inputs and NumOut outputs of shape S.
static ir::Node *uniformNode(GraphBuilder &B, llvm::StringRef Op,
                             const ir::Shape &S, unsigned NumIn,
                             unsigned NumOut) {
  std::vector<ir::Value *> Ins, Outs;
  for (unsigned I = 0; I < NumIn; ++I)
    Ins.push_back(
        expectOk(B.G.addValue(Op.str() + "_in" + std::to_string(I),
                              ir::DType::F32, S, ir::ValueKind::Input)));
  for (unsigned I = 0; I < NumOut; ++I)
    Outs.push_back(
        expectOk(B.G.addValue(Op.str() + "_out" + std::to_string(I),
                              ir::DType::F32, S, ir::ValueKind::Activation)));
  return expectOk(B.G.addNode(Op.str() + "_node", Op, "", Ins, Outs));
}

TEST_CASE("unknown shapes cost nothing and crash nothing") {
  ir::Shape Symbolic;
  Symbolic.push_back(ir::Dim::symbolic("batch"));
  Symbolic.push_back(ir::Dim::known(3));
  Symbolic.push_back(ir::Dim{});
  Symbolic.push_back(ir::Dim::known(8));
  for (const ir::Shape &S : {ir::Shape::unranked(), Symbolic}) {
    GraphBuilder B;
    for (const auto &Entry : defaultOpRegistry().entries()) {
      ir::Node *N = uniformNode(B, Entry.getKey(), S, 9, 3);
      OpWork W = workOf(N);
      INFO(Entry.getKey().str() << " on " << S.str());
      CHECK(W.Macs == 0);
      CHECK(W.Flops == 0);
      CHECK(W.BytesRead == 0);
      CHECK(W.BytesWritten == 0);
    }
  }
}

TEST_CASE("odd but known shapes give finite counts and formulas") {
  // Scalars, empty tensors, and a plain 4-D shape, with no attributes: every
  // formula must survive them, and whoever reports arithmetic explains it.
  for (const ir::Shape &S :
       {ir::Shape::scalar(), ir::Shape({0}), ir::Shape({2, 3, 4, 5})}) {
    for (const auto &Entry : defaultOpRegistry().entries()) {
      for (unsigned NumIn : {1u, 3u, 9u}) {
        GraphBuilder Local;
        ir::Node *N = uniformNode(Local, Entry.getKey(), S, NumIn, 2);
        OpWork W = workOf(N);
        INFO(Entry.getKey().str()
             << " on " << S.str() << " with " << NumIn << " inputs");
        CHECK(std::isfinite(W.Macs));
        CHECK(std::isfinite(W.Flops));
        CHECK(W.Macs >= 0);
        CHECK(W.Flops >= 0);
        CHECK(W.BytesRead >= 0);
        CHECK(W.BytesWritten >= 0);
        if (W.Flops > 0)
          CHECK_FALSE(W.Formula.empty());
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

TEST_CASE("Conv: ResNet-50's first layer") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {1, 3, 224, 224});
  ir::Value *W = B.weight("w", {64, 3, 7, 7});
  ir::Value *Bias = B.weight("b", {64});
  ir::Node *N = B.node("Conv", {X, W, Bias}, {1, 64, 112, 112});
  setInts(N, "kernel_shape", {7, 7});
  setInts(N, "strides", {2, 2});
  setInts(N, "pads", {3, 3, 3, 3});
  OpWork Work = workOf(N);
  CHECK(Work.Class == OpClass::Conv);
  CHECK(Work.Macs == 118013952.0); // 1*64*112*112 * 3*7*7
  CHECK(Work.Flops == 2 * 118013952.0 + 64 * 112 * 112);
  CHECK(Work.BytesRead == 4.0 * (3 * 224 * 224 + 64 * 3 * 49 + 64));
  CHECK(Work.BytesWritten == 4.0 * 64 * 112 * 112);
  CHECK(Work.Formula.find("bias") != std::string::npos);
}

TEST_CASE("Conv: groups, dilation and no bias") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {2, 32, 56, 56});
  ir::Value *W = B.weight("w", {64, 8, 3, 3});
  ir::Node *N = B.node("Conv", {X, W}, {2, 64, 56, 56});
  setInt(N, "group", 4);
  setInts(N, "dilations", {2, 2});
  setInts(N, "pads", {2, 2, 2, 2});
  OpWork Work = workOf(N);
  CHECK(Work.Macs == 2.0 * 64 * 56 * 56 * 8 * 9);
  CHECK(Work.Flops == 2 * Work.Macs);
}

TEST_CASE("Conv: depthwise") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {1, 32, 112, 112});
  ir::Value *W = B.weight("w", {32, 1, 3, 3});
  ir::Node *N = B.node("Conv", {X, W}, {1, 32, 112, 112});
  setInt(N, "group", 32);
  CHECK(workOf(N).Macs == 32.0 * 112 * 112 * 9);
}

TEST_CASE("Conv: without a weight shape the attributes give the kernel") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {1, 16, 8, 8});
  ir::Value *W = expectOk(
      B.G.addValue("w", ir::DType::F32, ir::Shape(), ir::ValueKind::Input));
  ir::Node *N = B.node("Conv", {X, W}, {1, 32, 8, 8});
  setInt(N, "group", 2);
  setInts(N, "kernel_shape", {3, 3});
  CHECK(workOf(N).Macs == 32.0 * 64 * 8 * 9);
}

TEST_CASE("Conv: the Winograd shape and the bytes a layout change moves") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {2, 16, 8, 8});
  ir::Value *W3 = B.weight("w3", {16, 16, 3, 3});
  ir::Value *W1 = B.weight("w1", {16, 16, 1, 1});
  ir::Value *Wg = B.weight("wg", {16, 8, 3, 3});
  // 3x3, stride 1 (default and explicit), one group: Winograd's shape.
  ir::Node *Plain = B.node("Conv", {X, W3}, {2, 16, 8, 8});
  ir::Node *Unit = B.node("Conv", {X, W3}, {2, 16, 8, 8});
  setInts(Unit, "strides", {1, 1});
  setInts(Unit, "dilations", {1, 1});
  // Not: stride 2, dilation 2, 1x1 kernel, two groups.
  ir::Node *Strided = B.node("Conv", {X, W3}, {2, 16, 4, 4});
  setInts(Strided, "strides", {2, 2});
  ir::Node *Dilated = B.node("Conv", {X, W3}, {2, 16, 8, 8});
  setInts(Dilated, "dilations", {2, 2});
  ir::Node *Pointwise = B.node("Conv", {X, W1}, {2, 16, 8, 8});
  ir::Node *Grouped = B.node("Conv", {X, Wg}, {2, 16, 8, 8});
  setInt(Grouped, "group", 2);
  CHECK(workOf(Plain).Winograd3x3);
  CHECK(workOf(Unit).Winograd3x3);
  CHECK_FALSE(workOf(Strided).Winograd3x3);
  CHECK_FALSE(workOf(Dilated).Winograd3x3);
  CHECK_FALSE(workOf(Pointwise).Winograd3x3);
  CHECK_FALSE(workOf(Grouped).Winograd3x3);
  // Input and output activations, fp32: (2*16*8*8 + 2*16*8*8) x 4 B; the
  // weights are not transposed per call by the framework's layout.
  CHECK(workOf(Plain).LayoutBytes == 4.0 * (2048 + 2048));
  CHECK(workOf(Strided).LayoutBytes == 4.0 * (2048 + 512));
}

TEST_CASE("ConvTranspose: each input pixel scatters a kernel") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {1, 64, 14, 14});
  ir::Value *W = B.weight("w", {64, 32, 4, 4});
  ir::Value *Bias = B.weight("b", {32});
  ir::Node *N = B.node("ConvTranspose", {X, W, Bias}, {1, 32, 28, 28});
  setInts(N, "strides", {2, 2});
  setInts(N, "pads", {1, 1, 1, 1});
  OpWork Work = workOf(N);
  // N*Cin*Hin*Win*(Cout/group)*kh*kw, equal to the direct-convolution view
  // Cout*Hout*Wout*Cin*kh*kw/(stride^2).
  CHECK(Work.Macs == 1.0 * 64 * 14 * 14 * 32 * 16);
  CHECK(Work.Macs == 32.0 * 28 * 28 * 64 * 16 / 4);
  CHECK(Work.Flops == 2 * Work.Macs + 32 * 28 * 28);
}

TEST_CASE("ConvInteger and QLinearConv have Conv's MACs") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {1, 16, 10, 10}, ir::DType::U8);
  ir::Value *W = B.weight("w", {8, 16, 3, 3}, ir::DType::I8);
  ir::Value *Scale = B.weight("s", {1});
  ir::Value *Zp = B.weight("zp", {1}, ir::DType::U8);
  ir::Value *Bias = B.weight("b", {8}, ir::DType::I32);
  ir::Node *CI = B.node("ConvInteger", {X, W}, {1, 8, 8, 8}, ir::DType::I32);
  ir::Node *QL =
      B.node("QLinearConv", {X, Scale, Zp, W, Scale, Zp, Scale, Zp, Bias},
             {1, 8, 8, 8}, ir::DType::U8);
  double Macs = 8.0 * 8 * 8 * 16 * 9;
  CHECK(workOf(CI).Macs == Macs);
  CHECK(workOf(CI).Type == ir::DType::U8);
  CHECK(workOf(QL).Macs == Macs);
  // Bias add and requantisation per output element.
  CHECK(workOf(QL).Flops == 2 * Macs + 4 * 8 * 8 * 8);
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

TEST_CASE("Gemm: transB, bias, alpha") {
  GraphBuilder B;
  ir::Value *A = B.input("a", {8, 512});
  ir::Value *W = B.weight("w", {1000, 512});
  ir::Value *C = B.weight("c", {1000});
  ir::Node *N = B.node("Gemm", {A, W, C}, {8, 1000});
  setInt(N, "transB", 1);
  OpWork Work = workOf(N);
  CHECK(Work.Class == OpClass::Gemm);
  CHECK(Work.Macs == 8.0 * 512 * 1000);
  CHECK(Work.Flops == 2 * Work.Macs + 8 * 1000);

  // transA, alpha != 1 (one scale per output), no C.
  ir::Value *At = B.input("at", {512, 8});
  ir::Value *Wn = B.weight("wn", {512, 1000});
  ir::Node *Scaled = B.node("Gemm", {At, Wn}, {8, 1000});
  setInt(Scaled, "transA", 1);
  Scaled->addAttr(ir::Attr("alpha", 0.5));
  OpWork S = workOf(Scaled);
  CHECK(S.Macs == 8.0 * 512 * 1000);
  CHECK(S.Flops == 2 * S.Macs + 8 * 1000);
  CHECK(S.Formula == "2*M*K*N + M*N (alpha)");
}

TEST_CASE("MatMul: batch broadcasting and 1-D operands") {
  GraphBuilder B;
  ir::Value *A = B.input("a", {2, 1, 8, 16});
  ir::Value *W = B.input("w", {3, 16, 32});
  CHECK(workOf(B.node("MatMul", {A, W}, {2, 3, 8, 32})).Macs ==
        2.0 * 3 * 8 * 16 * 32);
  ir::Value *V = B.input("v", {16});
  ir::Value *M = B.input("m", {4, 16, 32});
  ir::Node *VecMat = B.node("MatMul", {V, M}, {4, 32});
  CHECK(workOf(VecMat).Macs == 4.0 * 16 * 32);
  CHECK(workOf(VecMat).Flops == 2 * 4.0 * 16 * 32);
  ir::Value *L = B.input("l", {4, 8, 16});
  CHECK(workOf(B.node("MatMul", {L, V}, {4, 8})).Macs == 4.0 * 8 * 16);
  CHECK(workOf(B.node("MatMul", {V, V}, {})).Macs == 16.0);
}

TEST_CASE("MatMul: a weight's product folds the batch into its rows") {
  // [64, 1, 4096] x [4096, 32000] (a decoding step's LM head at batch 64)
  // runs as one [64, 4096] x [4096, 32000] GEMM, not 64 of one row; a
  // batched right operand keeps its batch.
  GraphBuilder B;
  ir::Value *X = B.input("x", {64, 1, 4096});
  const OpWork Head = workOf(
      B.node("MatMul", {X, B.weight("w", {4096, 32000})}, {64, 1, 32000}));
  CHECK(Head.Gemm.Batch == 1);
  CHECK(Head.Gemm.M == 64);
  CHECK(Head.Gemm.N == 32000);
  CHECK(Head.Gemm.K == 4096);
  CHECK(Head.Macs == 64.0 * 4096 * 32000);
  const OpWork Batched =
      workOf(B.node("MatMul", {X, B.input("y", {64, 4096, 8})}, {64, 1, 8}));
  CHECK(Batched.Gemm.Batch == 64);
  CHECK(Batched.Gemm.M == 1);
  // The quantized product folds the same way.
  ir::Value *Xq = B.input("xq", {8, 16, 32}, ir::DType::U8);
  ir::Value *Scale = B.weight("s", {}),
            *Zero = B.weight("z", {}, ir::DType::U8);
  const OpWork Q =
      workOf(B.node("QLinearMatMul",
                    {Xq, Scale, Zero, B.weight("wq", {32, 4}, ir::DType::U8),
                     Scale, Zero, Scale, Zero},
                    {8, 16, 4}, ir::DType::U8));
  CHECK(Q.Gemm.Batch == 1);
  CHECK(Q.Gemm.M == 8 * 16);
}

TEST_CASE("MatMul: batched attention scores") {
  GraphBuilder B;
  ir::Value *Q = B.input("q", {12, 128, 64});
  ir::Value *K = B.input("k", {12, 64, 128});
  OpWork W = workOf(B.node("MatMul", {Q, K}, {12, 128, 128}));
  CHECK(W.Macs == 12.0 * 128 * 64 * 128);
  CHECK(W.Class == OpClass::Gemm);
  ir::Value *QI = B.input("qi", {12, 128, 64}, ir::DType::I8);
  ir::Value *KI = B.input("ki", {12, 64, 128}, ir::DType::I8);
  CHECK(
      workOf(B.node("MatMulInteger", {QI, KI}, {12, 128, 128}, ir::DType::I32))
          .Macs == W.Macs);
}

static ir::Node *einsum(GraphBuilder &B, llvm::StringRef Equation,
                        std::initializer_list<ir::Value *> Ins,
                        std::initializer_list<int64_t> OutDims) {
  ir::Node *N = B.node("Einsum", Ins, OutDims);
  setString(N, "equation", Equation.str());
  return N;
}

TEST_CASE("Einsum: batched products") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {4, 8, 16});
  ir::Value *Y = B.input("y", {4, 16, 32});
  ir::Value *Z16 = B.input("z16", {16, 32});
  OpWork W = workOf(einsum(B, "bij,bjk->bik", {X, Y}, {4, 8, 32}));
  CHECK(W.Macs == 4.0 * 8 * 16 * 32);
  CHECK(W.Flops == 2 * W.Macs);
  CHECK(W.Formula == "2*b*i*j*k");

  ir::Value *Q = B.input("q", {2, 12, 128, 64});
  ir::Value *K = B.input("k", {2, 12, 128, 64});
  CHECK(workOf(einsum(B, "bhqd,bhkd->bhqk", {Q, K}, {2, 12, 128, 128})).Macs ==
        2.0 * 12 * 128 * 128 * 64);
  // Ellipsis and implicit output give the same product.
  CHECK(workOf(einsum(B, "...ij,...jk", {X, Y}, {4, 8, 32})).Macs ==
        4.0 * 8 * 16 * 32);
  CHECK(workOf(einsum(B, "b i j , b j k -> b i k", {X, Y}, {4, 8, 32})).Macs ==
        4.0 * 8 * 16 * 32);
  // A symbolic batch costs nothing rather than a guess.
  ir::Shape Dynamic({0, 8, 16});
  Dynamic[0] = ir::Dim::symbolic("batch");
  ir::Value *D = expectOk(
      B.G.addValue("d", ir::DType::F32, Dynamic, ir::ValueKind::Input));
  CHECK(workOf(einsum(B, "bij,bjk->bik", {D, Y}, {4, 8, 32})).Macs ==
        4.0 * 8 * 16 * 32);
  CHECK(workOf(einsum(B, "bij,jk->bik", {D, Z16}, {4, 8, 32})).Macs == 0);
}

TEST_CASE("Einsum: two-operand contractions are batched GEMMs") {
  GraphBuilder B;
  ir::Value *Q = B.input("q", {2, 12, 128, 64});
  ir::Value *K = B.input("k", {2, 12, 96, 64});
  // Batch: labels of both operands and the output; M, N: of one operand
  // and the output; K: of both operands only.
  GemmDims D =
      workOf(einsum(B, "bhqd,bhkd->bhqk", {Q, K}, {2, 12, 128, 96})).Gemm;
  CHECK(D.Batch == 24);
  CHECK(D.M == 128);
  CHECK(D.N == 96);
  CHECK(D.K == 64);
  // Weight on the right, output permuted: M = b*i, N = k.
  ir::Value *X = B.input("x", {4, 8, 16});
  ir::Value *W = B.weight("w", {16, 32});
  D = workOf(einsum(B, "bij,jk->kbi", {X, W}, {32, 4, 8})).Gemm;
  CHECK(D.Batch == 1);
  CHECK(D.M == 32);
  CHECK(D.N == 32);
  CHECK(D.K == 16);
  // A label summed within one operand is no GEMM: no dims.
  ir::Value *Y = B.input("y", {8, 16});
  CHECK_FALSE(workOf(einsum(B, "bij,ij->i", {X, Y}, {8})).Gemm.valid());
  // Outer products and single operands keep no GEMM dims either.
  ir::Value *U = B.input("u", {3});
  ir::Value *V = B.input("v", {4});
  CHECK_FALSE(workOf(einsum(B, "i,j->ij", {U, V}, {3, 4})).Gemm.valid());
  CHECK_FALSE(workOf(einsum(B, "bij->bji", {X}, {4, 16, 8})).Gemm.valid());
}

TEST_CASE("Einsum: one operand, no contraction, chains, bad equations") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {2, 3});
  ir::Value *Y = B.input("y", {3, 4});
  ir::Value *Z = B.input("z", {4, 5});
  CHECK(workOf(einsum(B, "ij->ji", {X}, {3, 2})).Flops == 0);
  CHECK(workOf(einsum(B, "ij->i", {X}, {2})).Flops == 6);
  ir::Value *Sq = B.input("sq", {3, 3});
  CHECK(workOf(einsum(B, "ii", {Sq}, {})).Flops == 9); // Trace.
  ir::Value *U = B.input("u", {3});
  ir::Value *V = B.input("v", {4});
  OpWork Outer = workOf(einsum(B, "i,j->ij", {U, V}, {3, 4}));
  CHECK(Outer.Macs == 0);
  CHECK(Outer.Flops == 12);
  // Pairwise from the left: (ij,jk -> ik) then (ik,kl -> il).
  OpWork Chain = workOf(einsum(B, "ij,jk,kl->il", {X, Y, Z}, {2, 5}));
  CHECK(Chain.Macs == 2.0 * 3 * 4 + 2.0 * 4 * 5);
  CHECK(workOf(einsum(B, "ij,jk->ik", {X}, {2, 4})).Flops == 0);
  CHECK(workOf(einsum(B, "ij;jk->ik", {X, Y}, {2, 4})).Flops == 0);
  CHECK(workOf(einsum(B, "ijk,jk->ik", {X, Y}, {2, 4})).Flops == 0);
}

//===----------------------------------------------------------------------===//
// Recurrent
//===----------------------------------------------------------------------===//

TEST_CASE("LSTM: products and gate math") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {10, 4, 32});
  ir::Value *W = B.weight("w", {1, 256, 32});
  ir::Value *R = B.weight("r", {1, 256, 64});
  ir::Value *Bias = B.weight("b", {1, 512});
  ir::Node *N = B.node("LSTM", {X, W, R, Bias}, {10, 1, 4, 64});
  setInt(N, "hidden_size", 64);
  OpWork Work = workOf(N);
  CHECK(Work.Class == OpClass::Recurrent);
  double Macs = 10.0 * 4 * 1 * 4 * (32 + 64) * 64;
  CHECK(Work.Macs == Macs);
  CHECK(Work.Flops == 2 * Macs + 10.0 * 4 * 64 * 48);
}

TEST_CASE("GRU: bidirectional, batch-first, hidden size from R") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {2, 5, 8});
  ir::Value *W = B.weight("w", {2, 48, 8});
  ir::Value *R = B.weight("r", {2, 48, 16});
  ir::Node *N = B.node("GRU", {X, W, R}, {2, 5, 2, 16});
  setInt(N, "layout", 1);
  setString(N, "direction", "bidirectional");
  double Macs = 5.0 * 2 * 2 * 3 * (8 + 16) * 16;
  CHECK(workOf(N).Macs == Macs);
  CHECK(workOf(N).Flops == 2 * Macs + 5.0 * 2 * 2 * 16 * 33);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_CASE("elementwise: transcendental and broadcasting binary ops") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {2, 3, 4});
  OpWork Exp = workOf(B.node("Exp", {X}, {2, 3, 4}));
  CHECK(Exp.Class == OpClass::Elementwise);
  CHECK(Exp.Flops == 4 * 24);
  CHECK(Exp.Formula == "4*out_elems");
  CHECK(workOf(B.node("Sigmoid", {X}, {2, 3, 4})).Flops == 6 * 24);
  CHECK(workOf(B.node("Clip", {X}, {2, 3, 4})).Flops == 2 * 24);

  ir::Value *A = B.input("a", {8, 1, 16});
  ir::Value *C = B.input("c", {4, 1});
  OpWork Add = workOf(B.node("Add", {A, C}, {8, 4, 16}));
  CHECK(Add.Flops == 8 * 4 * 16);
  CHECK(Add.BytesRead == 4.0 * (8 * 16 + 4)); // The broadcast operand once.
  CHECK(Add.BytesWritten == 4.0 * 8 * 4 * 16);
  // An input used twice is read once.
  CHECK(workOf(B.node("Mul", {X, X}, {2, 3, 4})).BytesRead == 4.0 * 24);
  // Comparisons compute in their inputs' type, write bools.
  OpWork Less = workOf(B.node("Less", {X, X}, {2, 3, 4}, ir::DType::Bool));
  CHECK(Less.Flops == 24);
  CHECK(Less.BytesWritten == 24);
}

TEST_CASE("elementwise: variadic ops") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {10});
  ir::Value *Y = B.input("y", {10});
  ir::Value *Z = B.input("z", {1});
  CHECK(workOf(B.node("Sum", {X, Y, Z}, {10})).Flops == 20);
  CHECK(workOf(B.node("Max", {X, Y}, {10})).Flops == 10);
  CHECK(workOf(B.node("Min", {X}, {10})).Flops == 0);
  CHECK(workOf(B.node("Mean", {X, Y, Z}, {10})).Flops == 30);
}

//===----------------------------------------------------------------------===//
// Reductions and pooling
//===----------------------------------------------------------------------===//

TEST_CASE("reductions: softmax and reduce ops") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {2, 10});
  OpWork Softmax = workOf(B.node("Softmax", {X}, {2, 10}));
  CHECK(Softmax.Class == OpClass::Reduction);
  CHECK(Softmax.Flops == 8 * 20);
  CHECK(workOf(B.node("ReduceMean", {X}, {2, 1})).Flops == 20 + 2);
  CHECK(workOf(B.node("ReduceL2", {X}, {2, 1})).Flops == 2 * 20 + 4 * 2);
  CHECK(workOf(B.node("ArgMax", {X}, {2, 1}, ir::DType::I64)).Flops == 20);
}

TEST_CASE("pooling: windows and global pools") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {1, 64, 112, 112});
  ir::Node *Max = B.node("MaxPool", {X}, {1, 64, 56, 56});
  setInts(Max, "kernel_shape", {3, 3});
  setInts(Max, "strides", {2, 2});
  OpWork W = workOf(Max);
  CHECK(W.Class == OpClass::Reduction);
  CHECK(W.Flops == 64.0 * 56 * 56 * 9);
  ir::Node *Avg = B.node("AveragePool", {X}, {1, 64, 56, 56});
  setInts(Avg, "kernel_shape", {2, 2});
  CHECK(workOf(Avg).Flops == 64.0 * 56 * 56 * (4 + 1));
  // kernel_shape is required: without it there is nothing to count.
  CHECK(workOf(B.node("MaxPool", {X}, {1, 64, 56, 56})).Flops == 0);

  ir::Value *F = B.input("f", {1, 2048, 7, 7});
  OpWork Gap = workOf(B.node("GlobalAveragePool", {F}, {1, 2048, 1, 1}));
  CHECK(Gap.Flops == 2048.0 * 49 + 2048);
  CHECK(Gap.BytesRead == 4.0 * 2048 * 49);
  CHECK(workOf(B.node("GlobalMaxPool", {F}, {1, 2048, 1, 1})).Flops ==
        2048.0 * 49);
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

TEST_CASE("BatchNormalization: flops, and statistics are not parameters") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {1, 3, 224, 224});
  ir::Value *W = B.weight("w", {64, 3, 7, 7});
  ir::Node *Conv = B.node("Conv", {X, W}, {1, 64, 112, 112});
  ir::Value *Scale = B.weight("scale", {64});
  ir::Value *Bias = B.weight("bias", {64});
  ir::Value *Mean = B.weight("mean", {64});
  ir::Value *Var = B.weight("var", {64});
  ir::Node *BN = B.node("BatchNormalization",
                        {GraphBuilder::out(Conv), Scale, Bias, Mean, Var},
                        {1, 64, 112, 112});
  OpWork BNWork = workOf(BN);
  CHECK(BNWork.Class == OpClass::Normalization);
  CHECK(BNWork.Flops == 2.0 * 64 * 112 * 112);

  GraphWork G = computeWork(B.G);
  CHECK(G.Warnings.empty());
  CHECK(G.Nodes[Conv->index()].Params == 64 * 3 * 7 * 7);
  CHECK(G.Nodes[BN->index()].Params == 64 + 64);
  CHECK(G.Total.Params == 64 * 3 * 7 * 7 + 64 + 64);
  CHECK(G.Total.Macs == 118013952.0);
}

TEST_CASE("BatchNormalization: training mode computes batch statistics") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {8, 16, 4, 4});
  ir::Value *P = B.weight("p", {16});
  ir::Node *BN = B.node("BatchNormalization", {X, P, P, P, P}, {8, 16, 4, 4});
  setInt(BN, "training_mode", 1);
  CHECK(workOf(BN).Flops == 6.0 * 8 * 16 * 16);
}

TEST_CASE("LayerNormalization and LRN") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {4, 128, 768});
  ir::Value *G = B.weight("g", {768});
  CHECK(workOf(B.node("LayerNormalization", {X, G, G}, {4, 128, 768})).Flops ==
        8.0 * 4 * 128 * 768);
  CHECK(workOf(B.node("LayerNormalization", {X, G}, {4, 128, 768})).Flops ==
        7.0 * 4 * 128 * 768);
  ir::Value *F = B.input("f", {1, 96, 55, 55});
  ir::Node *Lrn = B.node("LRN", {F}, {1, 96, 55, 55});
  setInt(Lrn, "size", 5);
  CHECK(workOf(Lrn).Flops == (2.0 * 5 + 12) * 96 * 55 * 55);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST_CASE("views move no bytes, Shape reads none") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {4, 8});
  ir::Value *ShapeIn = B.constInts("shape", {32});
  OpWork Reshape = workOf(B.node("Reshape", {X, ShapeIn}, {32}));
  CHECK(Reshape.IsView);
  CHECK(Reshape.Class == OpClass::DataMovement);
  CHECK(Reshape.BytesRead == 0);
  CHECK(Reshape.BytesWritten == 0);
  CHECK(Reshape.Flops == 0);
  CHECK(workOf(B.node("Dropout", {X}, {4, 8})).IsView);
  OpWork Shape = workOf(B.node("Shape", {X}, {2}, ir::DType::I64));
  CHECK(Shape.IsView);
  CHECK(Shape.BytesRead == 0);
  CHECK(Shape.BytesWritten == 16);
  OpWork Transpose = workOf(B.node("Transpose", {X}, {8, 4}));
  CHECK_FALSE(Transpose.IsView);
  CHECK(Transpose.BytesRead == 128);
  CHECK(Transpose.BytesWritten == 128);
}

TEST_CASE("Dropout in training mode is not a view") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {4, 8});
  ir::Value *Ratio = B.weight("ratio", {});
  ir::Value *Training = B.constInts("training", {1});
  OpWork W = workOf(B.node("Dropout", {X, Ratio, Training}, {4, 8}));
  CHECK_FALSE(W.IsView);
  CHECK(W.Flops == 10 * 32);
  CHECK(W.BytesWritten == 128);
}

TEST_CASE("Gather and Slice read only what they select") {
  GraphBuilder B;
  ir::Value *Table = B.weight("table", {1000, 512});
  ir::Value *Ids = B.input("ids", {8}, ir::DType::I64);
  OpWork Gather = workOf(B.node("Gather", {Table, Ids}, {8, 512}));
  CHECK(Gather.BytesRead == 8.0 * 8 + 8.0 * 512 * 4);
  CHECK(Gather.BytesWritten == 8.0 * 512 * 4);

  ir::Value *X = B.input("x", {10, 100});
  ir::Value *Starts = B.constInts("starts", {25});
  ir::Value *Ends = B.constInts("ends", {75});
  ir::Value *Axes = B.constInts("axes", {1});
  OpWork Slice =
      workOf(B.node("Slice", {X, Starts, Ends, Axes, nullptr}, {10, 50}));
  CHECK(Slice.BytesRead == 10.0 * 50 * 4 + 3 * 8);
  CHECK(Slice.BytesWritten == 10.0 * 50 * 4);
}

TEST_CASE("write-only ops read nothing") {
  GraphBuilder B;
  ir::Value *ShapeIn = B.constInts("shape", {4, 8});
  OpWork W = workOf(B.node("ConstantOfShape", {ShapeIn}, {4, 8}));
  CHECK(W.BytesRead == 0);
  CHECK(W.BytesWritten == 128);
  ir::Node *Rand = B.node("RandomUniform", {}, {4, 8});
  CHECK(workOf(Rand).BytesRead == 0);
  CHECK(workOf(Rand).Flops == 8 * 32);
}

TEST_CASE("Resize: interpolation taps by mode") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {1, 3, 32, 32});
  ir::Value *Scales = B.weight("scales", {4});
  ir::Node *Nearest = B.node("Resize", {X, nullptr, Scales}, {1, 3, 64, 64});
  CHECK(workOf(Nearest).Flops == 0);
  ir::Node *Linear = B.node("Resize", {X, nullptr, Scales}, {1, 3, 64, 64});
  setString(Linear, "mode", "linear");
  CHECK(workOf(Linear).Flops == 2.0 * 4 * 3 * 64 * 64);
  ir::Node *Cubic = B.node("Resize", {X, nullptr, Scales}, {1, 3, 64, 32});
  setString(Cubic, "mode", "cubic");
  CHECK(workOf(Cubic).Flops == 2.0 * 4 * 3 * 64 * 32); // One axis resized.
}

//===----------------------------------------------------------------------===//
// Miscellaneous
//===----------------------------------------------------------------------===//

TEST_CASE("TopK, Det and DFT") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {4, 1024});
  ir::Value *K = B.constInts("k", {8});
  ir::Node *TopK = B.node("TopK", {X, K}, {4, 8});
  CHECK(workOf(TopK).Flops == 4.0 * 1024 * 3);

  ir::Value *M = B.input("m", {5, 6, 6});
  OpWork Det = workOf(B.node("Det", {M}, {5}));
  CHECK(Det.Macs == doctest::Approx(5.0 * 216 / 3));
  CHECK(Det.Flops == doctest::Approx(2 * 5.0 * 216 / 3));

  ir::Value *Signal = B.input("signal", {2, 1024, 2});
  OpWork Dft = workOf(B.node("DFT", {Signal}, {2, 1024, 2}));
  CHECK(Dft.Flops == 2 * 5.0 * 1024 * 10);

  // STFT without a constant frame length: L from the one-sided bins.
  ir::Value *Audio = B.input("audio", {1, 128, 1});
  ir::Value *Step = B.input("step", {}, ir::DType::I64);
  ir::Value *Length = B.input("length", {}, ir::DType::I64);
  OpWork Stft =
      workOf(B.node("STFT", {Audio, Step, nullptr, Length}, {1, 15, 9, 2}));
  CHECK(Stft.Flops == 15 * 5.0 * 16 * 4);
  ir::Value *Window = B.input("window", {16});
  OpWork Windowed =
      workOf(B.node("STFT", {Audio, Step, Window}, {1, 15, 9, 2}));
  CHECK(Windowed.Flops == 15 * (5.0 * 16 * 4 + 16));
}

TEST_CASE("parameter roles: quantized weights count, scales do not") {
  GraphBuilder B;
  ir::Value *X = B.input("x", {1, 3, 8, 8});
  ir::Value *Scales = B.weight("scales", {4});
  B.node("Resize", {X, nullptr, Scales}, {1, 3, 16, 16});
  ir::Value *Q = B.input("q", {1, 3, 8, 8}, ir::DType::U8);
  ir::Value *XScale = B.weight("x_scale", {1});
  ir::Value *XZp = B.weight("x_zp", {1}, ir::DType::U8);
  ir::Value *W = B.weight("w", {4, 3, 3, 3}, ir::DType::I8);
  ir::Value *WScale = B.weight("w_scale", {4});
  ir::Value *WZp = B.weight("w_zp", {4}, ir::DType::I8);
  ir::Value *Bias = B.weight("bias", {4}, ir::DType::I32);
  B.node("QLinearConv", {Q, XScale, XZp, W, WScale, WZp, XScale, XZp, Bias},
         {1, 4, 6, 6}, ir::DType::U8);
  GraphWork Work = computeWork(B.G);
  CHECK(Work.Total.Params == 4 * 3 * 3 * 3 + 4);
}

TEST_CASE("Transpose: elements copied one at a time, as ONNX Runtime "
          "decides") {
  // Moves the innermost axis and more than one axis (MaxViT's window
  // partition): every element; a permutation that keeps the last axis
  // (Swin's), moves a single axis (NCHW -> NHWC) or only reorders axes of
  // length 1 (a reshape) copies runs or 2-D tiles: none. Without perm the
  // axes are reversed.
  struct Case {
    std::vector<int64_t> Dims, Perm;
    double Strided;
  };
  const Case Cases[] = {
      {{1, 64, 8, 7, 8, 7}, {0, 2, 4, 3, 5, 1}, 200704},
      {{1, 8, 8, 7, 7, 64}, {0, 5, 1, 3, 2, 4}, 200704},
      {{1, 8, 7, 8, 7, 96}, {0, 1, 3, 2, 4, 5}, 0},
      {{1, 64, 56, 56}, {0, 2, 3, 1}, 0},
      {{1, 56, 56, 64}, {0, 3, 1, 2}, 0},
      {{1, 1, 1024, 4096}, {2, 0, 3, 1}, 0},
      {{2, 3, 4}, {}, 24},
      {{4, 8}, {1, 0}, 0},
      // The last axis stays but has one element: runs of one.
      {{2, 3, 4, 5, 1}, {0, 3, 2, 1, 4}, 120},
  };
  for (const Case &C : Cases) {
    CAPTURE(C.Perm.size());
    GraphBuilder B;
    ir::Value *X = B.input("x", {});
    X->setShape(ir::Shape(C.Dims));
    std::vector<int64_t> Out = C.Dims;
    const std::vector<int64_t> Perm =
        C.Perm.empty() ? std::vector<int64_t>{2, 1, 0} : C.Perm;
    for (size_t I = 0; I < Perm.size(); ++I)
      Out[I] = C.Dims[Perm[I]];
    ir::Node *N = B.node("Transpose", {X}, {});
    N->output(0)->setShape(ir::Shape(Out));
    if (!C.Perm.empty())
      setInts(N, "perm", C.Perm);
    const OpWork W = workOf(N);
    CHECK(W.StridedElements == C.Strided);
    CHECK(W.BytesRead == doctest::Approx(X->bytes()));
  }
}
