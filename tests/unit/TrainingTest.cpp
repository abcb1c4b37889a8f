//===- TrainingTest.cpp - Backward work, saved tensors, training steps ----===//
#include "TestGraphs.h"
#include "ZooModels.h"

#include "costmodels/Collectives.h"
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "hwdb/Units.h"
#include "passes/Backward.h"
#include "passes/Blocks.h"
#include "passes/LoadTimeConstants.h"
#include "passes/Predict.h"
#include "passes/Schedule.h"
#include "passes/TrainStep.h"
#include "passes/TrainingForward.h"
#include "passes/WorkPass.h"
#include "tools/modelgen/TransformerGen.h"

#include "llvm/Support/FormatVariadic.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace perfc;
using namespace perfc::test;

namespace {

double savedBytes(const BackwardInfo &B) {
  double Sum = 0;
  for (const SavedTensor &S : B.Saved)
    Sum += S.bytes();
  return Sum;
}

bool isSaved(const BackwardInfo &B, const ir::Value *V) {
  return llvm::any_of(B.Saved,
                      [&](const SavedTensor &S) { return S.Value == V; });
}

/// A GPT from perfc zoo's generator, imported: layers x hidden (heads) at a
/// static batch and sequence, vocabulary 128 unless given.
frontend::ImportedModel
generatedGpt(int64_t Layers, int64_t Hidden, int64_t Heads, int64_t Seq,
             int64_t Batch, double Dropout = 0, int64_t Vocab = 128,
             modelgen::FloatType Type = modelgen::FloatType::F32) {
  modelgen::TransformerSpec Spec =
      transformerSpec(modelgen::Family::Gpt, Layers, Hidden, Heads, Seq, Vocab);
  Spec.Batch = Batch;
  Spec.Dropout = Dropout;
  Spec.Type = Type;
  return importZoo(zooBytes(Spec), {}, "gpt.onnx");
}

/// Two identical MLP blocks named like PyTorch exports them:
/// x -> [fc1 MatMul -> Relu -> fc2 MatMul -> residual Add] x 2.
struct TwoBlocks {
  GraphBuilder B;
  std::vector<ir::Node *> Fc1, Fc2, Relu, Res;

  ir::Node *add(const std::string &Name, llvm::StringRef Op,
                std::initializer_list<ir::Value *> Ins,
                std::initializer_list<int64_t> Dims) {
    ir::Value *Out = B.tensor(Name + ":0", Dims);
    return expectOk(B.G.addNode(Name, Op, "", Ins, {Out}));
  }

  TwoBlocks(int64_t Rows = 64, int64_t H = 32) {
    ir::Value *X = B.input("x", {Rows, H});
    for (int L = 0; L < 2; ++L) {
      const std::string P = "/layers." + std::to_string(L) + "/";
      ir::Node *A = add(P + "fc1/MatMul", "MatMul",
                        {X, B.weight(P + "w1", {H, 4 * H})}, {Rows, 4 * H});
      ir::Node *R = add(P + "act/Relu", "Relu", {B.out(A)}, {Rows, 4 * H});
      ir::Node *C = add(P + "fc2/MatMul", "MatMul",
                        {B.out(R), B.weight(P + "w2", {4 * H, H})}, {Rows, H});
      ir::Node *S = add(P + "Add", "Add", {B.out(C), X}, {Rows, H});
      Fc1.push_back(A);
      Relu.push_back(R);
      Fc2.push_back(C);
      Res.push_back(S);
      X = B.out(S);
    }
    B.G.markOutput(X);
  }
};

/// x [N, Cin, H, H] -> 3x3 Conv (no padding) to Cout channels ->
/// BatchNormalization: the pair that inference folds and training cannot.
std::pair<ir::Node *, ir::Node *> convBatchNorm(GraphBuilder &B, int64_t N,
                                                int64_t Cin, int64_t Cout,
                                                int64_t H) {
  ir::Value *X = B.input("x", {N, Cin, H, H});
  ir::Node *Conv = B.node("Conv", {X, B.weight("w", {Cout, Cin, 3, 3})},
                          {N, Cout, H - 2, H - 2});
  ir::Node *Bn =
      B.node("BatchNormalization",
             {B.out(Conv), B.weight("s", {Cout}), B.weight("b", {Cout}),
              B.weight("m", {Cout}), B.weight("v", {Cout})},
             {N, Cout, H - 2, H - 2});
  return {Conv, Bn};
}

/// Round numbers for elementwise passes over the parameters (optimizers,
/// gradient accumulation): every such pass is memory-bound, 0.8 of
/// 1000 GB/s plus a 5 us launch.
const char *const MemoryBoundGpu = R"(device:
  name: ogpu
  kind: gpu
  compute:
    vector: {fp32: 10 TFLOPS, fp16: 20 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
  launch_overhead: 5 us
  efficiency:
    default: {compute: 0.5, memory: 0.8}
)";

} // namespace

TEST_SUITE("training") {

  TEST_CASE("backward of a product: one product per operand needing a "
            "gradient") {
    TwoBlocks T;
    GraphWork W = computeWork(T.B.G);
    BackwardInfo Back = computeBackward(T.B.G, W);
    // The first MatMul reads the graph input: weight gradient only.
    const unsigned First = T.Fc1[0]->index();
    CHECK(Back.Work[First].Macs == doctest::Approx(W.Nodes[First].Macs));
    // Later products need data and weight gradients.
    const unsigned Later = T.Fc1[1]->index();
    CHECK(Back.Work[Later].Macs == doctest::Approx(2 * W.Nodes[Later].Macs));
    CHECK(Back.Work[Later].Flops == doctest::Approx(4 * W.Nodes[Later].Macs));
  }

  TEST_CASE("training BatchNormalization: its own kernel with batch "
            "statistics, the ReLU fused into it, --no-fusion splits them") {
    GraphBuilder B;
    const auto [Conv, Bn] = convBatchNorm(B, 8, 4, 16, 16);
    ir::Node *Relu = B.node("Relu", {B.out(Bn)}, {8, 16, 14, 14});
    B.G.markOutput(B.out(Relu));
    const double Y = 8 * 16 * 14 * 14 * 4.0; // fp32 bytes of each output
    const double P = 4 * 16 * 4.0;           // BN's four per-channel inputs
    TrainingAnalysis A(B.G);
    // Inference folds BN and ReLU into the conv; training cannot.
    REQUIRE(A.Plan.Kernels.size() == 2);
    const Kernel &K = A.Plan.Kernels[A.Plan.KernelOf[Bn->index()]];
    CHECK(K.Head == Bn->index());
    CHECK(A.Plan.KernelOf[Relu->index()] == A.Plan.KernelOf[Bn->index()]);
    // Forward: the conv output read twice (statistics, then normalise),
    // the ReLU output written.
    CHECK(K.Work.BytesRead == doctest::Approx(2 * Y + P));
    CHECK(K.Work.BytesWritten == doctest::Approx(Y));
    // Backward: x and dy read twice, dx written; the two trainable
    // per-channel vectors (scale, bias) read and their gradients written
    // (the running mean and variance are not parameters).
    const OpWork &BnBack = A.Back.Work[Bn->index()];
    CHECK(BnBack.BytesRead == doctest::Approx(4 * Y + 2 * 16 * 4.0));
    CHECK(BnBack.BytesWritten == doctest::Approx(Y + 2 * 16 * 4.0));
    // Eager: three kernels, slower than the fused BN + ReLU.
    TrainingAnalysis Eager(B.G, /*Unfused=*/true);
    CHECK(Eager.Plan.Kernels.size() == 3);
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE(bool(C));
    TrainOptions O;
    O.MicroBatch = 8;
    auto Fused = predictTraining(A, *C, O);
    REQUIRE(bool(Fused));
    O.Unfused = true;
    auto Split = predictTraining(B.G, *C, O);
    REQUIRE(bool(Split));
    CHECK(Split->ComputeSeconds > Fused->ComputeSeconds);
  }

  TEST_CASE("the per-node report of a training step adds up to the step's "
            "forward, its kernels' backwards to the step's backward") {
    // PredictOptions::Training prices each kernel as the step does: batch
    // norm with its statistics, attention unfused or as FlashAttention
    // (causal: half the products), no cache reuse over the schedule, the
    // layout transposes in the storage type.
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE(bool(C));
    const auto Check = [&](const ir::Graph &G, TrainOptions O,
                           hw::ConvLayout Layout) {
      O.Layout = Layout;
      auto Step = predictTraining(G, *C, O);
      REQUIRE(bool(Step));
      REQUIRE(Step->Stages.size() == 1);
      PredictOptions P;
      P.Device = &C->primaryDevice();
      P.Training = true;
      P.Memory = false;
      P.Fusion.Fuse = !O.Unfused;
      P.Fusion.FlashAttention = O.FlashAttention;
      P.Time.Layout = Layout;
      if (O.DType != ir::DType::F32) {
        P.Time.ComputeType = O.DType;
        if (ir::byteSize(O.DType) < 4)
          P.StorageType = O.DType;
      }
      const Report R = predict(G, P);
      REQUIRE(R.LatencySeconds);
      CHECK(*R.LatencySeconds ==
            doctest::Approx(Step->Stages[0].ForwardSeconds).epsilon(1e-12));
      // With Explain, each kernel's backward; they add up to the step's.
      O.Explain = true;
      auto Explained = predictTraining(G, *C, O);
      REQUIRE(bool(Explained));
      REQUIRE(Explained->NodeBackwards.size() == G.numNodes());
      double Backward = 0;
      for (size_t I = 0; I < G.numNodes(); ++I) {
        const double B = Explained->NodeBackwards[I].Seconds;
        Backward += B;
        // Each backward says what it is made of.
        CHECK((B > 0) == !Explained->NodeBackwards[I].Explain.empty());
      }
      CHECK(Backward ==
            doctest::Approx(Step->Stages[0].BackwardSeconds).epsilon(1e-12));
      CHECK(Step->NodeBackwards.empty()); // only with Explain
      return *R.LatencySeconds;
    };
    // A convolution with training batch norm, in FP16 with NCHW
    // activations (cuDNN's transposes around tensor-core convolutions).
    GraphBuilder B;
    B.G.markOutput(B.out(convBatchNorm(B, 32, 64, 64, 28).second));
    TrainOptions O;
    O.MicroBatch = 32;
    O.DType = ir::DType::F16;
    Check(B.G, O, hw::ConvLayout::Nchw);
    O.Unfused = true;
    Check(B.G, O, hw::ConvLayout::Native);
    // A GPT (causal attention), unfused, fused and as FlashAttention.
    const frontend::ImportedModel Gpt = generatedGpt(2, 256, 4, 512, 4);
    TrainOptions T;
    T.MicroBatch = 4;
    T.DType = ir::DType::BF16;
    const double Fused = Check(Gpt.Graph, T, hw::ConvLayout::Native);
    T.FlashAttention = true;
    CHECK(Check(Gpt.Graph, T, hw::ConvLayout::Native) < Fused);
    T.Unfused = true;
    CHECK(Check(Gpt.Graph, T, hw::ConvLayout::Native) > Fused);
  }

  TEST_CASE("FlashAttention inference skips the blocks above a causal "
            "diagonal, BERT's attention keeps its products") {
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE(bool(C));
    const auto AttentionFlops = [&](const ir::Graph &G, bool Flash) {
      FusionOptions F;
      F.FlashAttention = Flash;
      const KernelPlan Plan = planKernels(G, computeWork(G), F);
      double Flops = 0, Full = 0;
      for (const Kernel &K : Plan.Kernels)
        if (K.Attention) {
          Flops += kernelWork(K, Flash).Flops;
          Full += K.Work.Flops;
        }
      REQUIRE(Full > 0);
      return Flops / Full;
    };
    const frontend::ImportedModel Gpt = generatedGpt(2, 256, 4, 512, 2);
    CHECK(AttentionFlops(Gpt.Graph, true) == doctest::Approx(0.5));
    CHECK(AttentionFlops(Gpt.Graph, false) == doctest::Approx(1.0));
    modelgen::TransformerSpec Bert =
        transformerSpec(modelgen::Family::Bert, 2, 256, 4, 512, 128);
    Bert.Batch = 2;
    const frontend::ImportedModel B = importZoo(zooBytes(Bert));
    CHECK(AttentionFlops(B.Graph, true) == doctest::Approx(1.0));
    TwoBlocks Mlp;
    llvm::Error NoAttention = checkFlashAttention(Mlp.B.G);
    CHECK(llvm::toString(std::move(NoAttention)).find("no attention") !=
          std::string::npos);
    llvm::Error Ok = checkFlashAttention(Gpt.Graph);
    CHECK_FALSE(bool(Ok));
    llvm::consumeError(std::move(Ok));
    PredictOptions P;
    P.Device = &C->primaryDevice();
    const Report Full = predict(Gpt.Graph, P);
    P.Fusion.FlashAttention = true;
    const Report Flash = predict(Gpt.Graph, P);
    CHECK(*Flash.LatencySeconds < *Full.LatencySeconds);
  }

  TEST_CASE("load-time constants: weights, shapes and what they compute") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {2, 8});
    ir::Value *W = B.weight("w", {8, 8});
    // A reshape target built from the input's shape is known before the
    // model runs; so is a weight cast, however long the chain of such ops
    // (a walk of producers used to stop after 16).
    ir::Value *Shape = B.out(B.node("Shape", {X}, {2}, ir::DType::I64));
    ir::Value *Target = B.out(B.node("Concat", {Shape}, {2}, ir::DType::I64));
    ir::Value *Cast = W;
    for (int I = 0; I < 20; ++I)
      Cast = B.out(B.node("Cast", {Cast}, {8, 8}));
    ir::Value *Y = B.out(B.node("MatMul", {X, Cast}, {2, 8}));
    ir::Value *Z = B.out(B.node("Reshape", {Y, Target}, {2, 8}));
    const LoadTimeConstants C(B.G);
    CHECK(C.contains(W));
    CHECK(C.contains(Shape));
    CHECK(C.contains(Target));
    CHECK(C.contains(Cast));
    CHECK_FALSE(C.contains(X));
    CHECK_FALSE(C.contains(Y));
    CHECK_FALSE(C.contains(Z));
  }

  TEST_CASE("saved tensors: product inputs and a ReLU's input, each once") {
    TwoBlocks T(64, 32);
    GraphWork W = computeWork(T.B.G);
    BackwardInfo Back = computeBackward(T.B.G, W);
    // Per block: fc1's input [64,32], the ReLU's input [64,128], fc2's
    // input [64,128]; the residual Add keeps nothing. fp32.
    CHECK(isSaved(Back, T.B.out(T.Fc1[0])));
    CHECK(isSaved(Back, T.B.out(T.Relu[0])));
    CHECK_FALSE(isSaved(Back, T.B.out(T.Fc2[0])));
    CHECK(savedBytes(Back) ==
          doctest::Approx(2 * (64 * 32 + 64 * 128 + 64 * 128) * 4.0));
  }

  TEST_CASE("a decomposed GELU keeps only its input") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {8, 16});
    ir::Node *Mm = B.node("MatMul", {X, B.weight("w", {16, 16})}, {8, 16});
    ir::Node *Bias = B.node("Add", {B.out(Mm), B.weight("b", {16})}, {8, 16});
    ir::Value *Sqrt2 = B.weight("sqrt2", {1});
    ir::Value *One = B.weight("one", {1});
    ir::Value *Half = B.weight("half", {1});
    ir::Node *Div = B.node("Div", {B.out(Bias), Sqrt2}, {8, 16});
    ir::Node *Erf = B.node("Erf", {B.out(Div)}, {8, 16});
    ir::Node *Add = B.node("Add", {B.out(Erf), One}, {8, 16});
    ir::Node *Mul = B.node("Mul", {B.out(Bias), B.out(Add)}, {8, 16});
    ir::Node *Out = B.node("Mul", {B.out(Mul), Half}, {8, 16});
    B.G.markOutput(B.out(Out));
    BackwardInfo Back = computeBackward(B.G, computeWork(B.G));
    // The MatMul keeps x; the GELU chain keeps the MatMul's output (the
    // bias add is linear), not erf's or the Mul's operands.
    CHECK(isSaved(Back, X));
    CHECK(isSaved(Back, B.out(Mm)));
    CHECK(Back.Saved.size() == 2);
  }

  TEST_CASE("a QDQ graph trains with straight-through gradients (QAT)") {
    // MatMul -> QuantizeLinear (int8) -> DequantizeLinear -> MatMul: the
    // second product's data gradient flows back through the fake
    // quantisation to the first, as quantisation-aware training runs it.
    GraphBuilder B;
    ir::Value *X = B.input("x", {4, 8});
    ir::Node *Mm = B.node("MatMul", {X, B.weight("w1", {8, 8})}, {4, 8});
    ir::Node *Q =
        B.node("QuantizeLinear",
               {B.out(Mm), B.weight("s", {}), B.weight("z", {}, ir::DType::I8)},
               {4, 8}, ir::DType::I8);
    ir::Node *Dq = B.node(
        "DequantizeLinear",
        {B.out(Q), B.weight("s2", {}), B.weight("z2", {}, ir::DType::I8)},
        {4, 8});
    ir::Node *Mm2 =
        B.node("MatMul", {B.out(Dq), B.weight("w2", {8, 8})}, {4, 8});
    B.G.markOutput(B.out(Mm2));
    BackwardInfo Back = computeBackward(B.G, computeWork(B.G));
    CHECK(Back.NeedsGrad[Q->index()]);
    CHECK(Back.NeedsGrad[Dq->index()]);
    // Data and weight gradients of the second product, the weight's of the
    // first (x is an input).
    CHECK(Back.Work[Mm2->index()].Macs == 2 * 4 * 8 * 8);
    CHECK(Back.Work[Mm->index()].Macs == 4 * 8 * 8);
  }

  TEST_CASE("Softmax keeps its output, Dropout a one-byte mask") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {4, 8});
    ir::Node *Mm = B.node("MatMul", {X, B.weight("w", {8, 8})}, {4, 8});
    ir::Node *Sm = B.node("Softmax", {B.out(Mm)}, {4, 8});
    ir::Node *Dr = B.node("Dropout", {B.out(Sm)}, {4, 8});
    B.G.markOutput(B.out(Dr));
    BackwardInfo Back = computeBackward(B.G, computeWork(B.G));
    CHECK(isSaved(Back, B.out(Sm)));
    // x (128 B) + softmax output (128 B) + mask (32 elements, 1 B each).
    CHECK(savedBytes(Back) == doctest::Approx(128 + 128 + 32));
  }

  TEST_CASE("a training-mode Dropout writes its mask forward and its "
            "backward reads it") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {4, 8});
    ir::Node *Mm = B.node("MatMul", {X, B.weight("w", {8, 8})}, {4, 8});
    ir::Node *Dr = B.node(
        "Dropout", {B.out(Mm), B.weight("ratio", {}), B.constInts("on", {1})},
        {4, 8});
    B.G.markOutput(B.out(Dr));
    // Inference: the output written (128 B), no mask.
    CHECK(computeWork(B.G).Nodes[Dr->index()].BytesWritten == 128);
    // Training: the 32 elements' 1-byte mask besides.
    const GraphWork Forward = trainingWork(B.G);
    const OpWork &F = Forward.Nodes[Dr->index()];
    CHECK(F.BytesWritten == 128 + 32);
    CHECK(F.SideBytesWritten == 32);
    CHECK(Forward.Total.BytesWritten ==
          computeWork(B.G).Total.BytesWritten + 32);
    // Backward reads dy (128 B) and the mask (32 B), writes dx (128 B).
    const BackwardInfo Back = computeBackward(B.G, Forward);
    REQUIRE(Back.NeedsGrad[Dr->index()]);
    const OpWork &D = Back.Work[Dr->index()];
    CHECK(D.BytesRead == 128 + 32);
    CHECK(D.BytesWritten == 128);
  }

  TEST_CASE("FlashAttention's kernel keeps no dropout mask, the hidden "
            "dropouts' kernels do") {
    const frontend::ImportedModel M = generatedGpt(1, 64, 4, 32, 2, 0.1);
    const ir::Graph &G = M.Graph;
    const KernelPlan Inference =
        planKernels(G, computeWork(G), trainingFusion(false, true));
    const KernelPlan Training =
        planKernels(G, trainingWork(G), trainingFusion(false, true));
    REQUIRE(Inference.Kernels.size() == Training.Kernels.size());
    unsigned Attention = 0, Masked = 0;
    for (size_t I = 0; I < Training.Kernels.size(); ++I) {
      const Kernel &T = Training.Kernels[I];
      const double Extra =
          T.Work.BytesWritten - Inference.Kernels[I].Work.BytesWritten;
      if (T.Attention) {
        ++Attention;
        CHECK(Extra == 0);
      } else if (G.nodes()[T.Head]->opType() == "Dropout" ||
                 llvm::any_of(T.Members, [&](unsigned N) {
                   return G.nodes()[N]->opType() == "Dropout";
                 })) {
        ++Masked;
        // One byte per element of the 2 x 32 x 64 hidden state.
        CHECK(Extra == 2 * 32 * 64);
      }
    }
    CHECK(Attention == 1);
    CHECK(Masked >= 2);
  }

  TEST_CASE("blocks from names, column/row pairs, a row output is reduced") {
    TwoBlocks T(16, 8);
    BlockInfo Info = analyzeBlocks(T.B.G, computeWork(T.B.G));
    REQUIRE(Info.NumBlocks == 2);
    CHECK(Info.BlockNames[1] == "/layers.1");
    CHECK(Info.UnitOf[T.Fc1[1]->index()] == 2);
    CHECK(Info.HasTensorParallelPattern);
    CHECK(Info.Tp[T.Fc1[0]->index()] == TpRole::Column);
    CHECK(Info.Tp[T.Relu[0]->index()] == TpRole::Sharded);
    CHECK(Info.Tp[T.Fc2[0]->index()] == TpRole::Row);
    CHECK(Info.Tp[T.Res[0]->index()] == TpRole::Replicated);
    REQUIRE(Info.ForwardReduced[1].size() == 1);
    CHECK(Info.ForwardReduced[1][0] == T.B.out(T.Fc2[0]));
    REQUIRE(Info.BackwardReduced[1].size() == 1);
    CHECK(Info.BackwardReduced[1][0] == T.B.G.inputs()[0]);
  }

  TEST_CASE("without block names, blocks are cut where one activation "
            "crosses, a stretch without weights joining the block before") {
    // An input projection, two residual MLP layers with names that number
    // nothing, reading a mask computed from the inputs alone (every stage
    // gets it from the data loader), and a trailing Relu.
    GraphBuilder B;
    ir::Value *Mask = B.input("mask", {8, 16});
    ir::Node *Scaled = B.node("Mul", {Mask, Mask}, {8, 16});
    ir::Node *In = B.node(
        "MatMul", {B.input("x", {8, 4}), B.weight("w", {4, 16})}, {8, 16});
    ir::Value *X = B.out(In);
    std::vector<ir::Node *> Adds, Fc1s;
    for (int L = 0; L < 2; ++L) {
      ir::Node *Fc1 =
          B.node("MatMul", {X, B.weight("w1_" + std::to_string(L), {16, 64})},
                 {8, 64});
      ir::Node *Fc2 = B.node("MatMul",
                             {B.out(B.node("Relu", {B.out(Fc1)}, {8, 64})),
                              B.weight("w2_" + std::to_string(L), {64, 16})},
                             {8, 16});
      ir::Node *Masked = B.node("Mul", {B.out(Fc2), B.out(Scaled)}, {8, 16});
      ir::Node *Add = B.node("Add", {B.out(Masked), X}, {8, 16});
      Fc1s.push_back(Fc1);
      Adds.push_back(Add);
      X = B.out(Add);
    }
    ir::Node *Tail = B.node("Relu", {X}, {8, 16});
    B.G.markOutput(B.out(Tail));
    const BlockInfo Info = analyzeBlocks(B.G, computeWork(B.G));
    REQUIRE(Info.NumBlocks == 3);
    CHECK(Info.UnitOf[Scaled->index()] == 1); // no weights: joins the next
    CHECK(Info.UnitOf[In->index()] == 1);
    CHECK(Info.BlockNames[0] == Scaled->name().str());
    CHECK(Info.UnitOf[Fc1s[0]->index()] == 2);
    CHECK(Info.UnitOf[Adds[0]->index()] == 2);
    CHECK(Info.UnitOf[Fc1s[1]->index()] == 3);
    CHECK(Info.UnitOf[Adds[1]->index()] == 3);
    CHECK(Info.UnitOf[Tail->index()] == 3); // no weights: joins layer 2
    CHECK(Info.BlockNames[2] == Fc1s[1]->name().str());
    CHECK(Info.HasTensorParallelPattern); // the pairs are found per block

    // One layer, one block: no structure to cut.
    GraphBuilder One;
    ir::Node *Mm = One.node(
        "MatMul", {One.input("x", {4, 4}), One.weight("w", {4, 4})}, {4, 4});
    ir::Node *Act = One.node("Relu", {One.out(Mm)}, {4, 4});
    One.G.markOutput(One.out(Act));
    CHECK(analyzeBlocks(One.G, computeWork(One.G)).NumBlocks == 0);
  }

  TEST_CASE("a transformer whose node names number nothing trains as its "
            "named twin") {
    const std::string Named =
        zooBytes(transformerSpec(modelgen::Family::Gpt, 4, 256, 8, 64, 1000));
    const frontend::ImportedModel A = importZoo(Named);
    const frontend::ImportedModel B = importZoo(withAnonymousNodes(Named));
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainingAnalysis TA(A.Graph), TB(B.Graph);
    TrainOptions O;
    O.Tp = 4;
    O.Dp = 2;
    O.SequenceParallel = true;
    O.Recomp = Recompute::Selective;
    O.DType = ir::DType::BF16;
    auto RA = predictTraining(TA, *Dgx, O);
    auto RB = predictTraining(TB, *Dgx, O);
    REQUIRE_MESSAGE(bool(RA), llvm::toString(RA.takeError()));
    REQUIRE_MESSAGE(bool(RB), llvm::toString(RB.takeError()));
    // The same shards, exchanges and weights; the embedding's all-reduce
    // and the attention cores are found without names.
    CHECK(RB->StepSeconds == doctest::Approx(RA->StepSeconds));
    CHECK(RB->TpCommSeconds == doctest::Approx(RA->TpCommSeconds));
    CHECK(RB->DpCommSeconds == doctest::Approx(RA->DpCommSeconds));
    CHECK(RB->Stages[0].WeightsBytes ==
          doctest::Approx(RA->Stages[0].WeightsBytes));
    // Within a few percent: sequence parallelism splits what blocks keep,
    // and the embeddings and head are in blocks here, not the prologue and
    // epilogue.
    CHECK(RB->Stages[0].ActivationsBytes ==
          doctest::Approx(RA->Stages[0].ActivationsBytes).epsilon(0.05));
    // Two stages: the tied head's transposed embedding is not an
    // activation crossing between them.
    O.Pp = 2;
    O.Dp = 1;
    O.MicroBatch = 1;
    O.GlobalBatch = 8;
    auto PA = predictTraining(TA, *Dgx, O);
    auto PB = predictTraining(TB, *Dgx, O);
    REQUIRE_MESSAGE(bool(PA), llvm::toString(PA.takeError()));
    REQUIRE_MESSAGE(bool(PB), llvm::toString(PB.takeError()));
    CHECK(PB->P2pSeconds == doctest::Approx(PA->P2pSeconds));
    CHECK(PB->StepSeconds == doctest::Approx(PA->StepSeconds).epsilon(0.05));
  }

  TEST_CASE("DenseNet and Inception, whose names number no layers, split "
            "between their dense blocks and modules") {
    const std::string Zoo = std::string(PERFC_SOURCE_DIR) + "/tests/data/zoo/";
    for (const char *Name : {"densenet121", "inception_v3"}) {
      CAPTURE(Name);
      auto M = frontend::importOnnxFile(Zoo + Name + ".onnx", {});
      REQUIRE_MESSAGE(bool(M), llvm::toString(M.takeError()));
      const BlockInfo Info = analyzeBlocks(M->Graph, computeWork(M->Graph));
      // DenseNet: the stem, 4 dense blocks, 3 transitions, the classifier;
      // Inception: 5 stem convolutions, 11 modules, the classifier.
      CHECK(Info.NumBlocks == (Name[0] == 'd' ? 9u : 17u));
      // A module (dense block, Inception module) is never cut.
      llvm::StringMap<unsigned> UnitOfModule;
      for (const auto &N : M->Graph.nodes()) {
        llvm::StringRef Module = N->name().ltrim('/').split('/').first;
        if (Module == "features") // DenseNet: /features/denseblock1/...
          Module = N->name().ltrim('/').split('/').second.split('/').first;
        if (!Module.startswith("denseblock") && !Module.startswith("Mixed_"))
          continue;
        auto [It, New] =
            UnitOfModule.try_emplace(Module, Info.UnitOf[N->index()]);
        CHECK_MESSAGE(It->second == Info.UnitOf[N->index()], N->name().str());
      }
      CHECK(UnitOfModule.size() >= 4);
    }
  }

  TEST_CASE("model states: 16 bytes per parameter under mixed-precision "
            "Adam, 18 with fp32 gradients, sharded by ZeRO") {
    TwoBlocks T(64, 32);
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    TrainOptions O;
    O.DType = ir::DType::BF16;
    auto R = predictTraining(T.B.G, *C, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    const double Params = 2 * (32 * 128 * 2);
    const StageReport &S = R->peak();
    CHECK(S.Params == doctest::Approx(Params));
    // 2 bf16 weights + 2 bf16 gradients + 12 fp32 master, momentum, variance.
    CHECK(S.WeightsBytes + S.GradientsBytes + S.OptimizerBytes ==
          doctest::Approx(16 * Params));
    CHECK(R->Fits);
    CHECK(R->StepSeconds > 0);
    O.Fp32Gradients = true;
    auto R18 = predictTraining(T.B.G, *C, O);
    REQUIRE(bool(R18));
    const StageReport &S18 = R18->peak();
    CHECK(S18.WeightsBytes + S18.GradientsBytes + S18.OptimizerBytes ==
          doctest::Approx(18 * Params));
    // ZeRO 1 on 8 ranks: the 12 optimizer bytes over 8 (the distributed
    // optimizer's 6 + 12/dp with fp32 gradients... here 4 + 12/8).
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    O.Fp32Gradients = false;
    O.Dp = 8;
    O.Zero = 1;
    auto Z = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_MESSAGE(bool(Z), llvm::toString(Z.takeError()));
    const StageReport &SZ = Z->peak();
    CHECK(SZ.WeightsBytes + SZ.GradientsBytes + SZ.OptimizerBytes ==
          doctest::Approx((4 + 12.0 / 8) * Params));
  }

  TEST_CASE("a per-tensor optimizer: each kernel over every tensor, a "
            "launch per tensor") {
    // BertAdam's loop (optimization.py): 12 kernels, 17 tensor reads and 12
    // writes per parameter tensor, counted by hand from its step().
    unsigned Kernels = 0, Reads = 0, Writes = 0;
    for (const OptimizerKernel &K :
         perTensorOptimizerKernels(OptimizerKind::Adam)) {
      ++Kernels;
      Reads += K.Reads;
      Writes += K.Writes;
    }
    CHECK(Kernels == 12);
    CHECK(Reads == 17);
    CHECK(Writes == 12);
    CHECK(perTensorOptimizerKernels(OptimizerKind::Momentum).size() == 4);
    CHECK(perTensorOptimizerKernels(OptimizerKind::Sgd).size() == 2);
    auto C = hw::loadHardwareFromString(MemoryBoundGpu, "pass-test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    TwoBlocks T(64, 32);
    TrainOptions O;
    O.PerTensorOptimizer = true;
    auto R = predictTraining(T.B.G, *C, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    const double Params = 2 * (32 * 128 * 2); // 4 tensors
    CHECK(R->peak().ParamTensors == 4);
    // 29 fp32 passes / (1000 GB/s x 0.8) + 12 kernels x 4 tensors x 5 us.
    CHECK(R->OptimizerSeconds ==
          doctest::Approx(Params * 4 * 29 / 0.8e12 + 12 * 4 * 5e-6));
  }

  TEST_CASE("eager gradient accumulation: a pass per micro-batch after the "
            "first") {
    auto C = hw::loadHardwareFromString(MemoryBoundGpu, "pass-test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    TwoBlocks T(64, 32);
    const double Params = 2 * (32 * 128 * 2); // 4 tensors
    TrainOptions O;
    O.Unfused = true;
    O.MicroBatch = 1;
    O.GlobalBatch = 4;
    auto R = predictTraining(T.B.G, *C, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    REQUIRE(R->MicroBatches == 4);
    // FP32, PyTorch's AccumulateGrad: 3 passes of 12 bytes a parameter,
    // one kernel per tensor.
    const double Fp32Pass = Params * 12 / 0.8e12 + 4 * 5e-6;
    CHECK(R->GradAccumSeconds == doctest::Approx(3 * Fp32Pass));
    const StageReport &S = R->peak();
    CHECK(R->StepSeconds ==
          doctest::Approx(4 * S.microBatchSeconds() + R->GradAccumSeconds +
                          R->OptimizerSeconds));
    CHECK(R->ComputeSeconds ==
          doctest::Approx(4 * (S.ForwardSeconds + S.BackwardSeconds) +
                          R->GradAccumSeconds));
    // Mixed precision, apex O2: fp16 in, fp32 master gradients, one
    // multi-tensor kernel: 10 bytes a parameter.
    O.DType = ir::DType::F16;
    auto H = predictTraining(T.B.G, *C, O);
    REQUIRE_MESSAGE(bool(H), llvm::toString(H.takeError()));
    CHECK(H->GradAccumSeconds ==
          doctest::Approx(3 * (Params * 10 / 0.8e12 + 5e-6)));
    // One micro-batch, or fused training code: no pass.
    O.GlobalBatch = 1;
    auto One = predictTraining(T.B.G, *C, O);
    REQUIRE(bool(One));
    CHECK(One->GradAccumSeconds == 0);
    O.GlobalBatch = 4;
    O.Unfused = false;
    auto Fused = predictTraining(T.B.G, *C, O);
    REQUIRE(bool(Fused));
    CHECK(Fused->GradAccumSeconds == 0);
  }

  TEST_CASE("strategy errors name the constraint") {
    TwoBlocks T;
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE(bool(C));
    TrainOptions O;
    O.Dp = 2;
    auto R = predictTraining(T.B.G, *C, O);
    REQUIRE_FALSE(bool(R));
    CHECK(llvm::toString(R.takeError()) ==
          "dp 2 x tp 1 x pp 1 = 2 devices, but cluster 'a100-sxm4-80gb' has "
          "1");
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    O.Dp = 2;
    O.MicroBatch = 3;
    O.GlobalBatch = 8;
    auto R2 = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_FALSE(bool(R2));
    CHECK(llvm::toString(R2.takeError()) ==
          "--global-batch 8 is not a multiple of --micro-batch 3 x dp 2");
    // A negative global batch made every time of the step negative.
    O.GlobalBatch = -6;
    auto R3 = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_FALSE(bool(R3));
    CHECK(llvm::toString(R3.takeError()) ==
          "--global-batch -6: give a positive number of samples per step");
  }

  TEST_CASE("tensor parallelism keeps whole heads, columns and rows") {
    // Megatron-LM refuses a degree that splits a head, a key/value group, a
    // column or a row block (or, with --sp, a sequence position); perfc
    // once priced 4 heads on 3 ranks as 4/3 heads each.
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    auto errorOfGraph = [&](const ir::Graph &G, unsigned Tp, bool Sp) {
      TrainingAnalysis A(G);
      TrainOptions O;
      O.Tp = Tp;
      O.SequenceParallel = Sp;
      auto R = predictTraining(A, *Dgx, O);
      return R ? std::string() : llvm::toString(R.takeError());
    };
    auto errorOf = [&](const frontend::ImportedModel &M, unsigned Tp, bool Sp) {
      return errorOfGraph(M.Graph, Tp, Sp);
    };
    // 4 heads: the packed QKV GEMM's 192 columns divide by 3, the heads not.
    const frontend::ImportedModel Gpt = generatedGpt(2, 64, 4, 16, 1);
    CHECK(errorOf(Gpt, 3, false) ==
          "--tp 3 does not divide the 4 heads of node "
          "'/layers.0/attn/q_heads/Reshape' (each tensor-parallel rank holds "
          "whole heads, columns and rows, as in Megatron-LM); use a --tp that "
          "divides 4");
    CHECK(llvm::StringRef(errorOf(Gpt, 8, false))
              .startswith("--tp 8 does not divide the 4 heads"));
    CHECK(errorOf(Gpt, 4, false).empty());
    CHECK(errorOf(Gpt, 2, true).empty());
    // Sequence parallelism splits the 6 positions too.
    const frontend::ImportedModel Short = generatedGpt(2, 64, 4, 6, 1);
    CHECK(errorOf(Short, 4, false).empty());
    CHECK(errorOf(Short, 4, true) ==
          "--tp 4 does not divide the 6 sequence positions (--sp) of node "
          "'/layers.0/attn/out/MatMul' (each tensor-parallel rank holds "
          "whole heads, columns and rows, as in Megatron-LM); use a --tp "
          "that divides 2");
    // Megatron-LM's own layout, [s, b, h], as NeMo exports it: the
    // sequence is the first axis; a micro-batch of 1 is not the sequence.
    for (const auto &[SeqFirst, S] :
         {std::pair(true, 8), std::pair(false, 8), std::pair(true, 6),
          std::pair(false, 6)}) {
      CAPTURE(SeqFirst);
      CAPTURE(S);
      GraphBuilder B;
      auto act = [&](const std::string &Name, int64_t H) {
        return SeqFirst ? B.tensor(Name, {S, 1, H}) : B.tensor(Name, {1, S, H});
      };
      ir::Value *X =
          SeqFirst ? B.input("x", {S, 1, 16}) : B.input("x", {1, S, 16});
      for (int L = 0; L < 2; ++L) {
        const std::string P = "/layers." + std::to_string(L) + "/";
        ir::Value *H1 = act(P + "h1", 64);
        expectOk(B.G.addNode(P + "fc1/MatMul", "MatMul", "",
                             {X, B.weight(P + "w1", {16, 64})}, {H1}));
        ir::Value *A = act(P + "a", 64);
        expectOk(B.G.addNode(P + "act/Relu", "Relu", "", {H1}, {A}));
        ir::Value *H2 = act(P + "h2", 16);
        expectOk(B.G.addNode(P + "fc2/MatMul", "MatMul", "",
                             {A, B.weight(P + "w2", {64, 16})}, {H2}));
        ir::Value *Y = act(P + "y", 16);
        expectOk(B.G.addNode(P + "Add", "Add", "", {H2, X}, {Y}));
        X = Y;
      }
      B.G.markOutput(X);
      CHECK(errorOfGraph(B.G, 4, false).empty());
      if (S == 8) {
        CHECK(errorOfGraph(B.G, 4, true).empty());
        CHECK(errorOfGraph(B.G, 8, true).empty());
      } else {
        CHECK(llvm::StringRef(errorOfGraph(B.G, 4, true))
                  .startswith("--tp 4 does not divide the 6 sequence "
                              "positions (--sp) of node "
                              "'/layers.0/fc2/MatMul'"));
      }
    }
    // Grouped-query attention: 8 query heads in 2 key/value groups.
    modelgen::TransformerSpec Spec =
        transformerSpec(modelgen::Family::Llama, 2, 64, 8, 16, 128);
    Spec.KvHeads = 2;
    Spec.Batch = 1;
    const frontend::ImportedModel Llama =
        importZoo(zooBytes(Spec), {}, "llama.onnx");
    CHECK(errorOf(Llama, 2, false).empty());
    CHECK(llvm::StringRef(errorOf(Llama, 4, false))
              .startswith("--tp 4 does not divide the 2 heads of node "
                          "'/layers.0/attn/k_heads/Reshape'"));
  }

  TEST_CASE("options that change nothing for the model are refused") {
    // TwoBlocks has no attention core (its products each read a weight),
    // so FlashAttention and selective recomputation would leave the step
    // as it is while the report said they were on; --sp without --tp too.
    TwoBlocks T;
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions Flash;
    Flash.FlashAttention = true;
    auto F = predictTraining(T.B.G, *Dgx, Flash);
    REQUIRE_FALSE(bool(F));
    CHECK(llvm::StringRef(llvm::toString(F.takeError()))
              .startswith("--flash-attention: the model has no attention "
                          "core"));
    TrainOptions Sel;
    Sel.Recomp = Recompute::Selective;
    auto S = predictTraining(T.B.G, *Dgx, Sel);
    REQUIRE_FALSE(bool(S));
    CHECK(llvm::StringRef(llvm::toString(S.takeError()))
              .endswith("use --recompute none or full"));
    TrainOptions Sp;
    Sp.SequenceParallel = true;
    auto P = predictTraining(T.B.G, *Dgx, Sp);
    REQUIRE_FALSE(bool(P));
    CHECK(llvm::toString(P.takeError()) ==
          "--sp (sequence parallelism) needs --tp of at least 2");
    // A GPT has one: both run.
    const frontend::ImportedModel Gpt = generatedGpt(2, 64, 4, 16, 1);
    CHECK(bool(predictTraining(Gpt.Graph, *Dgx, Flash)));
    CHECK(bool(predictTraining(Gpt.Graph, *Dgx, Sel)));
  }

  TEST_CASE("ZeRO 2 and 3 exchange every micro-batch's gradients, ZeRO 1 "
            "once a step") {
    // ZeRO 1 keeps whole gradients: one reduce-scatter (RS) and one
    // all-gather (AG) a step. ZeRO 2 keeps a shard: M x RS + AG. ZeRO 3
    // also gathers parameters for every forward and backward: M x (RS + 2
    // AG). Stage 2 once cost what stage 1 did at any M.
    const frontend::ImportedModel Gpt = generatedGpt(2, 64, 4, 16, 1);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainingAnalysis A(Gpt.Graph);
    auto comm = [&](unsigned Zero, int64_t M) {
      TrainOptions O;
      O.Dp = 8;
      O.Zero = Zero;
      O.GlobalBatch = 8 * M;
      auto R = predictTraining(A, *Dgx, O);
      REQUIRE(bool(R));
      REQUIRE(R->MicroBatches == M);
      return R->DpCommSeconds;
    };
    CHECK(comm(2, 1) == doctest::Approx(comm(1, 1)));
    const double Rs = comm(2, 2) - comm(1, 2);
    CHECK(Rs > 0);
    CHECK(comm(2, 4) - comm(1, 4) == doctest::Approx(3 * Rs));
    CHECK(comm(1, 4) == doctest::Approx(comm(1, 1)));
    CHECK(comm(3, 4) == doctest::Approx(4 * comm(3, 1)));
    // ZeRO 3's working set: the largest unit's parameters gathered, and the
    // next unit's prefetched (2 units whole, less the shard held).
    TrainOptions Z2, Z3;
    Z2.Dp = Z3.Dp = 8;
    Z2.Zero = 2;
    Z3.Zero = 3;
    auto R2 = predictTraining(A, *Dgx, Z2), R3 = predictTraining(A, *Dgx, Z3);
    REQUIRE(bool(R2));
    REQUIRE(bool(R3));
    const std::vector<UnitCost> *Units = A.cachedUnits(*Dgx, Z3);
    REQUIRE(Units);
    double Largest = 0;
    for (const UnitCost &U : *Units)
      Largest = std::max(Largest, U.Params);
    CHECK(R3->Stages[0].WorkspaceBytes - R2->Stages[0].WorkspaceBytes ==
          doctest::Approx(2 * Largest * 4 * (1 - 1.0 / 8)));
  }

  TEST_CASE("--explain gives each exchange with its count and formula") {
    // 2 layers, tp 2: the last stage's block exchanges 2 activations
    // forward and 2 backward, the vocabulary-parallel head 1, each
    // [1, 16, 64] fp32 = 4,096 bytes; the lines add up to the stage's tp time.
    const frontend::ImportedModel Gpt = generatedGpt(2, 64, 4, 16, 1);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainingAnalysis A(Gpt.Graph);
    TrainOptions O;
    O.Tp = O.Pp = O.Dp = 2;
    O.GlobalBatch = 4;
    auto Plain = predictTraining(A, *Dgx, O);
    REQUIRE(bool(Plain));
    CHECK(Plain->CommExplain.empty());
    O.Explain = true;
    auto R = predictTraining(A, *Dgx, O);
    REQUIRE(bool(R));
    CHECK(R->StepSeconds == Plain->StepSeconds);
    REQUIRE(R->CommExplain.size() == 3);
    CHECK(llvm::StringRef(R->CommExplain[0])
              .startswith("tp 2, stage 1, per micro-batch: 5 x all-reduce of "
                          "4.096 KB"));
    CHECK(R->CommExplain[0].find("ring all-reduce, 2 ranks on 1 node") !=
          std::string::npos);
    auto Tp = cost::groupOf(*Dgx, 2, 1);
    REQUIRE(bool(Tp));
    CHECK(5 * cost::collectiveSeconds(cost::Collective::AllReduce, 4096, *Tp) ==
          doctest::Approx(R->Stages[1].TpCommSeconds));
    CHECK(llvm::StringRef(R->CommExplain[1])
              .startswith("p2p: 2 x 2 micro-batches x vp 1 = 4 messages of "
                          "2.048 KB"));
    CHECK(llvm::StringRef(R->CommExplain[2])
              .startswith("dp 2: 1 bucket (up to 25 MiB each); the largest: "
                          "ring all-reduce"));
    // Memory: the peak stage's parts with their factors, adding up.
    CHECK(Plain->MemoryExplain.empty());
    const StageReport &P = R->peak();
    const std::string &Mem = R->MemoryExplain;
    CHECK(llvm::StringRef(Mem).startswith(
        llvm::formatv("memory (stage {0}): weights {1} parameters x 4 B = ",
                      P.Stage, int64_t(P.Params))
            .str()));
    CHECK(Mem.find("optimizer " + std::to_string(int64_t(P.Params)) +
                   " parameters x 8 B (Adam moments 8) = ") !=
          std::string::npos);
    CHECK(Mem.find(llvm::formatv("activations {0} in flight (1F1B: pp - "
                                 "stage) x ",
                                 P.InFlight)
                       .str()) != std::string::npos);
    CHECK(llvm::StringRef(Mem).endswith("total " +
                                        hw::formatDataBytes(P.peakBytes())));
  }

  TEST_CASE("interleaved 1F1B runs micro-batches in groups of pp") {
    // Megatron-LM refuses a micro-batch count that pp does not divide
    // under the interleaved schedule (pipeline_parallel/schedules.py).
    const frontend::ImportedModel Gpt = generatedGpt(4, 64, 4, 16, 1);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Pp = 2;
    O.Vp = 2;
    O.GlobalBatch = 6;
    CHECK(bool(predictTraining(Gpt.Graph, *Dgx, O)));
    O.GlobalBatch = 5;
    auto R = predictTraining(Gpt.Graph, *Dgx, O);
    REQUIRE_FALSE(bool(R));
    CHECK(llvm::toString(R.takeError()) ==
          "--vp 2: the interleaved schedule runs micro-batches in groups of "
          "pp 2, but a step has 5 per data-parallel rank (global batch 5 / "
          "(micro-batch 1 x dp 1)); give a global batch that makes it a "
          "multiple of 2");
    O.Vp = 1; // plain 1F1B takes any count
    CHECK(bool(predictTraining(Gpt.Graph, *Dgx, O)));
  }

  TEST_CASE("pipeline: the 1F1B bubble is (pp - 1) / vp micro-batch times") {
    TwoBlocks T;
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Pp = 2;
    O.GlobalBatch = 8;
    O.Split = Partition::Even;
    auto R = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    CHECK(R->MicroBatches == 8);
    double Slowest = 0;
    for (const StageReport &S : R->Stages)
      Slowest = std::max(Slowest, S.microBatchSeconds());
    CHECK(R->BubbleSeconds == doctest::Approx(Slowest));
    // Stage 0 keeps pp = 2 micro-batches in flight, stage 1 one.
    CHECK(R->Stages[0].InFlight == 2);
    CHECK(R->Stages[1].InFlight == 1);
  }

  TEST_CASE("1F1B simulation: equal stages take (m + p - 1)(f + b)") {
    std::vector<StageTimes> Four(4, StageTimes{1.0, 2.0});
    Timeline T = simulateOneFOneB(Four, 8, 0.0);
    CHECK(T.End == doctest::Approx((8 + 4 - 1) * 3.0));
    CHECK(T.Events.size() == 4 * 8 * 2);
    // One stage: no bubble.
    Timeline One = simulateOneFOneB({StageTimes{1.0, 2.0}}, 5, 0.0);
    CHECK(One.End == doctest::Approx(15.0));
    // Transfers add to the fill and drain: 2 (p - 1) of them on the
    // critical path with a single micro-batch.
    Timeline Xfer = simulateOneFOneB(Four, 1, 0.5);
    CHECK(Xfer.End == doctest::Approx(4 * 3.0 + 2 * 3 * 0.5));
    // GPipe: the same bubble on equal stages.
    CHECK(simulateGPipe(Four, 8, 0.0).End == doctest::Approx(11 * 3.0));
  }

  TEST_CASE("interleaved 1F1B simulation: the bubble shrinks by the "
            "chunks per stage") {
    // 4 stages of 3 equal chunks (a stage's micro-batch: forward 1,
    // backward 2): Megatron-LM's (m + (p - 1) / v)(f + b), every chunk
    // pass run once, whatever the micro-batch count (m = p runs all
    // forwards first).
    const ChunkTimes Chunks(4, std::vector<StageTimes>(3, {1.0 / 3, 2.0 / 3}));
    for (unsigned M : {4u, 8u, 12u}) {
      const Timeline T =
          simulateOneFOneB(Chunks, M, std::vector<double>(3, 0.0));
      CHECK(T.End == doctest::Approx((M + 3.0 / 3) * 3.0));
      CHECK(T.Events.size() == 4 * 3 * M * 2);
    }
    // One chunk per stage is plain 1F1B.
    const ChunkTimes One(4, std::vector<StageTimes>(1, {1.0, 2.0}));
    CHECK(simulateOneFOneB(One, 8, std::vector<double>(3, 0.0)).End ==
          doctest::Approx((8 + 3) * 3.0));
    // A transfer per hop, the wrap from the last stage to the first
    // included: one micro-batch crosses 4 x 3 - 1 hops forward and back.
    const Timeline X = simulateOneFOneB(Chunks, 4, std::vector<double>(3, 0.1));
    CHECK(X.End > (4 + 1) * 3.0);
    const Timeline Single =
        simulateOneFOneB(ChunkTimes(2, std::vector<StageTimes>(2, {1.0, 2.0})),
                         2, std::vector<double>(1, 0.5));
    CHECK(Single.Events.size() == 2 * 2 * 2 * 2);
  }

  TEST_CASE("the trace of an interleaved step runs every chunk pass and "
            "ends with the step") {
    const frontend::ImportedModel Gpt = generatedGpt(4, 256, 4, 128, 2);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Pp = 2;
    O.Vp = 2;
    O.MicroBatch = 2;
    O.GlobalBatch = 2 * 4;
    O.Timeline = true;
    auto R = predictTraining(Gpt.Graph, *Dgx, O);
    REQUIRE(bool(R));
    size_t Passes = 0, Chunk1 = 0;
    for (const TimelineEvent &E : R->Trace.Events)
      if (E.Category == "forward" || E.Category == "backward") {
        ++Passes;
        Chunk1 += E.Name.find("(chunk 1)") != std::string::npos;
      }
    CHECK(Passes == 2 * 2 * 4 * 2);
    CHECK(Chunk1 == Passes / 2);
    // The closed form (Megatron-LM's (m + (p - 1) / v) stage times, every
    // transfer in full) and the simulated schedule of the chunks' own times
    // agree closely (drawn without the interleaving, the trace's bubble was
    // p - 1 stage times, not (p - 1) / v).
    CHECK(R->Trace.End == doctest::Approx(R->StepSeconds).epsilon(0.02));
  }

  TEST_CASE("GPipe keeps every micro-batch in flight, 1F1B pp - s") {
    TwoBlocks T;
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Pp = 2;
    O.GlobalBatch = 8;
    O.Split = Partition::Even;
    O.Schedule = PipelineSchedule::GPipe;
    auto G = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_MESSAGE(bool(G), llvm::toString(G.takeError()));
    CHECK(G->Stages[0].InFlight == 8);
    CHECK(G->Stages[1].InFlight == 8);
    O.Schedule = PipelineSchedule::OneFOneB;
    auto F = predictTraining(T.B.G, *Dgx, O);
    REQUIRE(bool(F));
    CHECK(F->Stages[0].ActivationsBytes * 4 ==
          doctest::Approx(G->Stages[0].ActivationsBytes));
    CHECK(F->StepSeconds == doctest::Approx(G->StepSeconds));
  }

  TEST_CASE("a generated GPT layer keeps Korthikanti's 34sbh + 5as^2b") {
    // Korthikanti et al. 2022, eq. 1: a GPT layer with dropout keeps
    // 34*s*b*h + 5*a*s^2*b bytes in 16-bit types: 16 sbh + 2 as^2b elements
    // of tensors and 2 sbh + as^2b one-byte dropout masks.
    const frontend::ImportedModel M = generatedGpt(2, 64, 4, 16, 1, 0.1);
    GraphWork W = computeWork(M.Graph);
    BackwardInfo Back = computeBackward(M.Graph, W);
    BlockInfo Blocks = analyzeBlocks(M.Graph, W);
    REQUIRE(Blocks.NumBlocks == 2);
    const double S = 16, B = 1, H = 64, A = 4;
    double Tensors = 0, Masks = 0;
    for (const SavedTensor &T : Back.Saved) {
      if (Blocks.UnitOf[T.Node] != 2) // the second layer: no embedding
        continue;
      (T.Mask ? Masks : Tensors) += double(T.Value->numElements());
    }
    CHECK(Tensors == doctest::Approx(16 * S * B * H + 2 * A * S * S * B));
    CHECK(Masks == doctest::Approx(2 * S * B * H + A * S * S * B));
    // Tensor parallelism: two row GEMMs reduced in forward, two column
    // groups (qkv, fc1) in backward; the attention core has six ops.
    CHECK(Blocks.ForwardReduced[2].size() == 2);
    CHECK(Blocks.BackwardReduced[2].size() == 2);
    unsigned Core = 0;
    for (const auto &N : M.Graph.nodes())
      Core +=
          Blocks.UnitOf[N->index()] == 2 && Blocks.AttentionCore[N->index()];
    CHECK(Core == 6);
  }

  TEST_CASE("FlashAttention: Korthikanti's 34sbh, a kernel each way, the "
            "scores recomputed in backward") {
    // The causal GPT of the test above at a longer sequence: FlashAttention
    // keeps what selective recomputation keeps (no s^2 tensors) plus one
    // fp32 log-sum-exp per row of scores, and recomputes nothing outside
    // its backward kernel.
    const frontend::ImportedModel M = generatedGpt(2, 256, 4, 512, 2, 0.1);
    auto C = hw::loadHardware("a100-sxm4-80gb");
    REQUIRE(bool(C));
    TrainOptions O;
    O.MicroBatch = 2;
    O.DType = ir::DType::BF16;
    O.Recomp = Recompute::Selective;
    auto Selective = predictTraining(M.Graph, *C, O);
    O.Recomp = Recompute::None;
    auto Eager = predictTraining(M.Graph, *C, O);
    O.FlashAttention = true;
    auto Flash = predictTraining(M.Graph, *C, O);
    O.Recomp = Recompute::Selective;
    auto FlashSelective = predictTraining(M.Graph, *C, O);
    REQUIRE(bool(Selective));
    REQUIRE(bool(Eager));
    REQUIRE(bool(Flash));
    REQUIRE(bool(FlashSelective));
    const double B = 2, A = 4, S = 512, L = 2;
    const double LogSumExp = 4 * B * A * S * L;
    CHECK(Flash->peak().ActivationsBytes ==
          doctest::Approx(Selective->peak().ActivationsBytes + LogSumExp));
    CHECK(Flash->peak().ActivationsBytes < Eager->peak().ActivationsBytes);
    CHECK(Selective->peak().RecomputeSeconds > 0);
    CHECK(FlashSelective->peak().RecomputeSeconds == 0);
    CHECK(FlashSelective->StepSeconds == doctest::Approx(Flash->StepSeconds));
    // One kernel holds each layer's whole core.
    TrainingAnalysis An(M.Graph, false, true);
    unsigned Cores = 0, Causal = 0;
    for (const Kernel &K : An.Plan.Kernels) {
      unsigned Products = 0;
      for (unsigned N : K.Members)
        Products += An.Blocks.AttentionCore[N] && An.Work.Nodes[N].Macs > 0;
      Cores += Products == 2;
      // GPT's triangular mask is a load-time constant: causal.
      Causal += K.Attention && K.Causal;
    }
    CHECK(Cores == 2);
    CHECK(Causal == 2);
    // Model FLOPs are counted as Megatron-LM counts them, attention or not.
    CHECK(Flash->ModelFlops == doctest::Approx(Eager->ModelFlops));
    CHECK(Flash->StepSeconds < Eager->StepSeconds);
  }

  TEST_CASE("a 16-bit graph trains with the bytes of its fp32 twin") {
    // Storage moves to the training type from the graph's own: an fp16
    // export trained in fp16 is not halved again.
    auto Predict = [](modelgen::FloatType T) {
      const frontend::ImportedModel M =
          generatedGpt(2, 64, 4, 64, 4, 0, 128, T);
      auto C = hw::loadHardwareFromString(MemoryBoundGpu, "pass-test.yaml");
      REQUIRE(bool(C));
      TrainOptions O;
      O.MicroBatch = 4;
      O.DType = ir::DType::F16;
      auto R = predictTraining(M.Graph, *C, O);
      REQUIRE(bool(R));
      return std::make_pair(R->peak().ActivationsBytes, R->StepSeconds);
    };
    const auto F32 = Predict(modelgen::FloatType::F32);
    const auto F16 = Predict(modelgen::FloatType::F16);
    CHECK(F16.first == doctest::Approx(F32.first));
    CHECK(F16.second == doctest::Approx(F32.second).epsilon(1e-3));
  }

  TEST_CASE("GPT training FLOPs: 72 B s l h^2 (1 + s/6h + V/12lh)") {
    // Narayanan et al. 2021 count the products only: a layer's forward is
    // 24 B s h^2 + 4 B s^2 h, backward twice that, the LM head 6 B s h V.
    const frontend::ImportedModel M = generatedGpt(3, 64, 4, 32, 2, 0, 256);
    GraphWork W = computeWork(M.Graph);
    BackwardInfo Back = computeBackward(M.Graph, W);
    double Products = 0;
    for (const auto &N : M.Graph.nodes())
      if (W.Nodes[N->index()].Class == OpClass::Gemm)
        Products += 2 * W.Nodes[N->index()].Macs + Back.Work[N->index()].Flops;
    const double B = 2, S = 32, L = 3, H = 64, V = 256;
    CHECK(Products == doctest::Approx(72 * B * S * L * H * H *
                                      (1 + S / (6 * H) + V / (12 * L * H))));
  }

  TEST_CASE("the 1F1B bubble: (p - 1) / (m + p - 1) of the pipeline on "
            "equal stages, the faster stages' fill and drain otherwise") {
    // Equal stages: the schedule's bubble fraction, which the step's
    // closed form m T + (p - 1) T / vp reproduces.
    for (unsigned M : {1u, 6u, 16u}) {
      const Timeline Equal =
          simulateOneFOneB(std::vector<StageTimes>(4, {1.0, 2.0}), M, 0.0);
      CHECK((Equal.End - M * 3.0) / Equal.End ==
            doctest::Approx(3.0 / (M + 4 - 1)));
    }
    // The step: the first block computes no gradient for the graph's
    // input, so stage 0 is the faster; it fills and drains while the
    // slower stage sets the pace (Alpa's sum of the stages plus (m - 1)
    // times the slowest), as the simulated schedule has it when the slower
    // stage is the last.
    TwoBlocks T;
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    TrainOptions O;
    O.Pp = 2;
    O.GlobalBatch = 6;
    O.Split = Partition::Even;
    O.Optimizer = OptimizerKind::Sgd;
    auto R = predictTraining(T.B.G, *Dgx, O);
    REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
    REQUIRE(R->Stages.size() == 2);
    const double T0 = R->Stages[0].microBatchSeconds(),
                 T1 = R->Stages[1].microBatchSeconds();
    REQUIRE(T0 < T1);
    CHECK(R->BubbleSeconds == doctest::Approx(T0));
    const double Pipeline = R->StepSeconds - R->P2pSeconds -
                            R->OptimizerSeconds - R->DpExposedSeconds;
    CHECK(Pipeline == doctest::Approx(6 * T1 + T0));
    const Timeline Sim = simulateOneFOneB(
        {StageTimes{R->Stages[0].ForwardSeconds, R->Stages[0].BackwardSeconds},
         StageTimes{R->Stages[1].ForwardSeconds, R->Stages[1].BackwardSeconds}},
        6, 0.0);
    CHECK(Sim.End == doctest::Approx(Pipeline));
  }

  TEST_CASE("a pipeline sends what crosses its own cuts, not the largest "
            "tensor between any two blocks") {
    // Three blocks narrowing from 256 to 16 columns, as a CNN's late cuts
    // carry less than its early ones.
    GraphBuilder B;
    ir::Value *X = B.input("x", {4, 64});
    const int64_t Widths[] = {256, 16, 16};
    int64_t In = 64;
    for (int L = 0; L < 3; ++L) {
      const std::string P = "/layers." + std::to_string(L) + "/";
      ir::Value *Y = B.tensor(P + "y", {4, Widths[L]});
      expectOk(B.G.addNode(P + "fc/MatMul", "MatMul", "",
                           {X, B.weight(P + "w", {In, Widths[L]})}, {Y}));
      X = Y;
      In = Widths[L];
    }
    B.G.markOutput(X);
    auto Dgx = hw::loadHardware("dgx-a100");
    REQUIRE(bool(Dgx));
    const hw::Link &NvSwitch = *Dgx->Groups.front().IntraNode;
    auto p2pWith = [&](std::vector<unsigned> Split) {
      TrainOptions O;
      O.Pp = 2;
      O.ChunkBlocks = std::move(Split);
      O.Optimizer = OptimizerKind::Sgd;
      auto R = predictTraining(B.G, *Dgx, O);
      REQUIRE_MESSAGE(bool(R), llvm::toString(R.takeError()));
      return R->P2pSeconds;
    };
    // One micro-batch: its activation forward and its gradient backward.
    CHECK(p2pWith({1, 2}) ==
          doctest::Approx(2 * cost::p2pSeconds(4 * 256 * 4, NvSwitch)));
    CHECK(p2pWith({2, 1}) ==
          doctest::Approx(2 * cost::p2pSeconds(4 * 16 * 4, NvSwitch)));
  }

  TEST_CASE("the input pipeline bounds a step only when it is the slower") {
    auto Report = [](unsigned Devices, double Step) {
      TrainReport R;
      R.Devices = Devices;
      R.GlobalBatch = 2048;
      R.StepSeconds = Step;
      R.SamplesPerSecond = 2048 / Step;
      R.ModelFlops = 1e15;
      return R;
    };
    TrainOptions O;
    O.Dp = 8;
    // No rate: untouched.
    TrainReport R = Report(8, 0.1);
    applyInputRate(R, O, 8);
    CHECK(R.StepSeconds == 0.1);
    CHECK(R.InputSeconds == 0);
    CHECK_FALSE(R.InputBound);
    // One node loads all 2048 samples: 2048 / 16000 = 0.128 s > 0.1 s.
    O.InputSamplesPerSecond = 16000;
    applyInputRate(R, O, 8);
    CHECK(R.InputBound);
    CHECK(R.InputSeconds == doctest::Approx(0.128));
    CHECK(R.StepSeconds == doctest::Approx(0.128));
    CHECK(R.SamplesPerSecond == doctest::Approx(16000));
    CHECK(R.TflopsPerDevice == doctest::Approx(1e15 / 0.128 / 8 / 1e12));
    // Two nodes of 8 share the batch: 0.064 s, hidden under a 0.1 s step.
    O.Dp = 16;
    R = Report(16, 0.1);
    applyInputRate(R, O, 8);
    CHECK_FALSE(R.InputBound);
    CHECK(R.InputSeconds == doctest::Approx(0.064));
    CHECK(R.StepSeconds == 0.1);
    // Tensor parallelism over both nodes, one replica: its first stage's
    // node loads everything.
    O.Dp = 1;
    R = Report(16, 0.1);
    applyInputRate(R, O, 8);
    CHECK(R.InputSeconds == doctest::Approx(0.128));
    CHECK(R.InputBound);
  }
}
