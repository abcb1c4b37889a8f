//===- TrainingBackwardTest.cpp - Backward work and saved tensors ---------===//
#include "TrainingHelpers.h"

#include "costmodels/Collectives.h"
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "hwdb/Units.h"
#include "passes/Backward.h"
#include "passes/LoadTimeConstants.h"
#include "passes/Predict.h"
#include "passes/Schedule.h"
#include "passes/StorageType.h"
#include "passes/TpShard.h"
#include "passes/TrainStep.h"
#include "passes/TrainingForward.h"
#include "passes/WorkPass.h"
#include "tools/modelgen/TransformerGen.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace perfc;
using namespace perfc::test;

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

  TEST_CASE("a fused training kernel writes what backward keeps of what it "
            "computes") {
    // MatMul + bias + Tanh fuse; backward keeps Tanh's input (as the
    // product before the bias, which recomputes it), which only the kernel
    // itself reads.
    GraphBuilder B;
    ir::Value *X = B.input("x", {4, 8});
    ir::Node *Mm = B.node("MatMul", {X, B.weight("w", {8, 8})}, {4, 8});
    ir::Node *Bias = B.node("Add", {B.out(Mm), B.weight("b", {8})}, {4, 8});
    ir::Node *Act = B.node("Tanh", {B.out(Bias)}, {4, 8});
    ir::Node *Mm2 =
        B.node("MatMul", {B.out(Act), B.weight("w2", {8, 8})}, {4, 8});
    B.G.markOutput(B.out(Mm2));
    const GraphWork Work = trainingWork(B.G);
    const BackwardInfo Back = computeBackward(B.G, Work);
    REQUIRE(isSaved(Back, B.out(Mm)));
    const KernelPlan Plain =
        planKernels(B.G, Work, trainingFusion(false, false));
    const KernelPlan Kept = trainingKernels(B.G, Work, Back, false, false);
    const int K = Kept.KernelOf[Mm->index()];
    REQUIRE(K == Kept.KernelOf[Act->index()]);
    REQUIRE(Plain.KernelOf[Mm->index()] == K);
    // 32 fp32 elements, 128 bytes, more.
    CHECK(Kept.Kernels[K].Work.BytesWritten ==
          Plain.Kernels[K].Work.BytesWritten + 128);
  }

  TEST_CASE("an add that hands its gradient to one input unchanged has no "
            "backward kernel") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {4, 8});
    ir::Value *Mask = B.input("mask", {4, 8}); // a graph input: no gradient
    ir::Node *Mm = B.node("MatMul", {X, B.weight("w", {8, 8})}, {4, 8});
    // The attention mask's add: dy goes on to the scores as it is.
    ir::Node *Masked = B.node("Add", {B.out(Mm), Mask}, {4, 8});
    // A bias needs its own gradient (a reduction of dy): a kernel.
    ir::Node *Biased =
        B.node("Add", {B.out(Masked), B.weight("b", {8})}, {4, 8});
    // mask - y: y's gradient is -dy, a kernel.
    ir::Node *Neg = B.node("Sub", {Mask, B.out(Biased)}, {4, 8});
    // y - mask: dy as it is.
    ir::Node *Shift = B.node("Sub", {B.out(Neg), Mask}, {4, 8});
    // A broadcast parameter plus the mask: its gradient sums dy over rows.
    ir::Node *Row = B.node("Add", {B.weight("v", {8}), Mask}, {4, 8});
    ir::Node *Sum = B.node("Add", {B.out(Shift), B.out(Row)}, {4, 8});
    B.G.markOutput(B.out(Sum));
    const GraphWork W = computeWork(B.G);
    const BackwardInfo Back = computeBackward(B.G, W);
    CHECK(Back.Work[Masked->index()].IsView);
    CHECK(Back.Work[Shift->index()].IsView);
    CHECK_FALSE(Back.Work[Biased->index()].IsView);
    CHECK_FALSE(Back.Work[Neg->index()].IsView);
    CHECK_FALSE(Back.Work[Row->index()].IsView);
    CHECK_FALSE(Back.Work[Sum->index()].IsView); // both inputs need one
    CHECK(Back.Work[Neg->index()].bytes() > 0);
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
    // Trained or stored in 16 bits, the tensors halve and the mask does not.
    CHECK(storedWork(F, ir::DType::F16).BytesWritten == 64 + 32);
    CHECK(shardWork(D, TpRole::Replicated, 1, 1.0, 0.5).BytesRead == 64 + 32);
    // A tensor-parallel rank holding half of it keeps half of its mask.
    CHECK(shardWork(F, TpRole::Sharded, 2, 0.5, 0.5).BytesWritten == 32 + 16);
  }

  TEST_CASE("FlashAttention's kernel keeps no dropout mask, the hidden "
            "dropouts' kernels do") {
    const frontend::ImportedModel M = generatedGpt(1, 64, 4, 32, 2, 0.1);
    const ir::Graph &G = M.Graph;
    const KernelPlan Inference =
        planKernels(G, computeWork(G), trainingFusion(false, true));
    const GraphWork Work = trainingWork(G);
    // What backward keeps is written where a kernel computes it, but not
    // inside FlashAttention's kernel (its softmax output is recomputed).
    const KernelPlan Training =
        trainingKernels(G, Work, computeBackward(G, Work), false, true);
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

  TEST_CASE("projections fused beside each other run their backward as one "
            "GEMM of the joint width") {
    // A Llama block's q, k and v projections read one input; with
    // FlashAttention the kernel plan runs them as one GEMM (N = 1024 + 2 x
    // 256, grouped-query attention). Backward: two products of that GEMM,
    // on the tensor cores as the forward, not the k and v GEMMs' FLOPs as
    // an elementwise kernel on the vector units (which priced the block's
    // projections' backward 24x their forward).
    const frontend::ImportedModel Llama =
        generatedLlama(1, 1024, 16, 4, 4096, 128);
    const ir::Graph &G = Llama.Graph;
    auto C = hw::loadHardware("dgx-h100");
    REQUIRE(bool(C));
    const auto Backward = [&](bool Flash) {
      TrainOptions O;
      O.DType = ir::DType::BF16;
      O.FlashAttention = Flash;
      O.Explain = true;
      auto Step = predictTraining(G, *C, O);
      REQUIRE_MESSAGE(bool(Step), llvm::toString(Step.takeError()));
      return Step->NodeBackwards;
    };
    const unsigned Q = nodeIndex(G, "/layers.0/attn/q/MatMul");
    const unsigned K = nodeIndex(G, "/layers.0/attn/k/MatMul");
    const unsigned V = nodeIndex(G, "/layers.0/attn/v/MatMul");
    const auto Fused = Backward(true);
    INFO(Fused[Q].Explain);
    CHECK(llvm::StringRef(Fused[Q].Explain)
              .startswith("2 products of the forward's size, with the 2 "
                          "GEMMs fused beside it (N 1536) (the gradients of "
                          "its operands that need one), each "));
    CHECK(Fused[Q].Explain.find("fused members") == std::string::npos);
    CHECK(Fused[K].Seconds == 0);
    CHECK(Fused[V].Seconds == 0);
    // No dearer than the three GEMMs' backward apart (one launch per
    // product instead of three, a wider GEMM nearer its peak), and not far
    // below it.
    const auto Apart = Backward(false);
    const double Separate =
        Apart[Q].Seconds + Apart[K].Seconds + Apart[V].Seconds;
    CHECK(Fused[Q].Seconds < Separate);
    CHECK(Fused[Q].Seconds > 0.4 * Separate);
  }

  TEST_CASE("FP8 trains as Transformer Engine does: the blocks' GEMMs in FP8 "
            "with their casts, BF16 everywhere else") {
    const frontend::ImportedModel Llama =
        generatedLlama(2, 1024, 16, 4, 1024, 4096);
    const ir::Graph &G = Llama.Graph;
    auto C = hw::loadHardware("h100-sxm5-80gb");
    REQUIRE(bool(C));
    TrainOptions O;
    O.DType = ir::DType::F8E4M3;
    O.FlashAttention = true;
    O.Explain = true;
    auto Step = predictTraining(G, *C, O);
    REQUIRE_MESSAGE(bool(Step), llvm::toString(Step.takeError()));
    // Model states as BF16 mixed precision: BF16 weights and gradients,
    // Adam's moments and the fp32 master weights.
    CHECK(Step->modelStateBytesPerParam() == doctest::Approx(16));

    // The per-node forward, as the CLI asks for it, adds up to the step's.
    PredictOptions P;
    P.Device = &C->primaryDevice();
    P.Training = true;
    P.Memory = false;
    P.Fusion.FlashAttention = true;
    P.Fp8Recipe = true;
    P.StorageType = ir::DType::BF16;
    P.Time.ComputeType = ir::DType::BF16;
    const Report R = predict(G, P);
    REQUIRE(R.LatencySeconds);
    CHECK(*R.LatencySeconds ==
          doctest::Approx(Step->Stages[0].ForwardSeconds).epsilon(1e-12));

    // A block's GEMM: FP8, its activation cast to FP8 before it, its
    // output's gradient after it.
    // The report's rows are indexed as the graph's nodes.
    const unsigned UpIndex = nodeIndex(G, "/layers.0/mlp/up/MatMul");
    const NodeReport &Up = R.Nodes[UpIndex];
    REQUIRE(Up.Time);
    CHECK(Up.Time->ComputeType == "fp8e4m3");
    CHECK(Up.Time->Fp8CastSeconds > 0);
    CHECK(Up.Time->Explain.find("[FP8 recipe: plus the cast of its "
                                "activation operand") != std::string::npos);
    // Cast: 1024 x 1024 elements, 2 B read and 2 B written each.
    CHECK(Up.Time->Explain.find("4.194 MB / (") != std::string::npos);
    const std::string &UpBack = Step->NodeBackwards[UpIndex].Explain;
    CHECK(UpBack.find("tensor fp8e4m3") != std::string::npos);
    CHECK(UpBack.find("plus the FP8 cast of the output's gradient") !=
          std::string::npos);
    // The output layer is no Transformer Engine module: BF16, no cast.
    const NodeReport &Head = R.Nodes[nodeIndex(G, "/lm_head/MatMul")];
    REQUIRE(Head.Time);
    CHECK(Head.Time->ComputeType == "bf16");
    CHECK(Head.Time->Fp8CastSeconds == 0);
    // Normalisations and activations compute and store in BF16.
    for (const NodeReport &N : R.Nodes)
      if (N.Time && N.Time->Exec == "kernel" && N.Time->Fp8CastSeconds == 0)
        CHECK_MESSAGE(N.Time->ComputeType != "fp8e4m3", N.Name);

    // FP8 only speeds the GEMMs: faster than BF16, slower than storing
    // every tensor in FP8 as well would be.
    TrainOptions B = O;
    B.DType = ir::DType::BF16;
    auto Bf16 = predictTraining(G, *C, B);
    REQUIRE(bool(Bf16));
    CHECK(Step->StepSeconds < Bf16->StepSeconds);
    CHECK(Step->Stages[0].ActivationsBytes ==
          doctest::Approx(Bf16->Stages[0].ActivationsBytes));
  }
}
