//===- InferenceMemoryTest.cpp - Peak memory of one inference run ---------===//
#include "TestDevices.h"
#include "TestKernels.h"
#include "TestTrace.h"
#include "ZooModels.h"

#include "hwdb/Loader.h"
#include "passes/Fusion.h"
#include "passes/InferenceMemory.h"
#include "passes/MaxBatch.h"
#include "passes/Predict.h"
#include "passes/WorkPass.h"

#include <doctest/doctest.h>

#include <string>

using namespace perfc;
using namespace perfc::test;

namespace {

/// A GPU with 1 MB of memory, so that the residual block below (1.2 MB at
/// its peak) does not fit.
const char *const SmallGpu = R"(device:
  name: small-gpu
  kind: gpu
  compute:
    vector: {fp32: 10 TFLOPS}
  memory:
    - {name: HBM, capacity: 1 MB, bandwidth: 1000 GB/s}
  launch_overhead: 1 us
  efficiency:
    default: {compute: 1, memory: 1}
)";

hw::Device load(const char *Text) {
  return deviceFromYaml(Text, "inference-memory-test.yaml");
}

// 100,000 fp32 elements: 400 KB.
constexpr int64_t N = 100000;
constexpr double Kb400 = 400000;

} // namespace

TEST_SUITE("inference memory") {

  TEST_CASE("FlashAttention never reads a causal mask: no resident bytes, no "
            "traffic") {
    // A GPT at 1024 tokens: its causal mask, folded at load, is 1024^2
    // fp32 elements (4 MB); FlashAttention masks from indices instead.
    modelgen::TransformerSpec Spec =
        transformerSpec(modelgen::Family::Gpt, 2, 64, 4, 1024, 128);
    Spec.Batch = 1;
    const frontend::ImportedModel M = importZoo(zooBytes(Spec), {}, "g.onnx");
    const GraphWork W = computeWork(M.Graph);
    FusionOptions Fused;
    const KernelPlan Plain = planKernels(M.Graph, W, Fused);
    Fused.FlashAttention = true;
    const KernelPlan Flash = planKernels(M.Graph, W, Fused);
    const double Mask = 1024.0 * 1024 * 4;
    const InferenceMemory P = inferenceMemory(M.Graph, Plain);
    const InferenceMemory F = inferenceMemory(M.Graph, Flash);
    CHECK(P.WeightsBytes - F.WeightsBytes == doctest::Approx(Mask));
    double PlainRead = 0, FlashRead = 0;
    unsigned Causal = 0;
    for (const Kernel &K : Plain.Kernels)
      PlainRead += K.Attention ? K.Work.BytesRead : 0;
    for (const Kernel &K : Flash.Kernels) {
      FlashRead += K.Attention ? K.Work.BytesRead : 0;
      Causal += K.Attention && K.Causal;
    }
    REQUIRE(Causal == 2);
    CHECK(PlainRead - FlashRead == doctest::Approx(2 * Mask));
  }

  TEST_CASE("a chain holds one kernel's input and output at a time") {
    // x -> a -> b -> c, one kernel each: x dies after the first kernel, a
    // after the second; two 400 KB tensors are alive at every kernel, and
    // the first kernel (x and a) is where the peak is first reached.
    GraphBuilder B;
    ir::Node *A = B.node("Relu", {B.input("x", {N})}, {N});
    ir::Node *Bn = B.node("Relu", {B.out(A)}, {N});
    ir::Node *C = B.node("Relu", {B.out(Bn)}, {N});
    B.G.markOutput(B.out(C));
    const InferenceMemory M = inferenceMemory(B.G, planOf(B.G, false));
    CHECK(M.WeightsBytes == 0);
    CHECK(M.ActivationsBytes == doctest::Approx(2 * Kb400));
    CHECK(M.PeakBytes == doctest::Approx(2 * Kb400));
    CHECK(M.PeakKernel == 0);
    CHECK(M.LiveTensors == 2);
    CHECK(M.InputsBytes == doctest::Approx(Kb400)); // x, until kernel 0
    CHECK(M.Complete);
  }

  TEST_CASE("a residual is alive across its branch") {
    // Kernel 2 (c = Relu(b)) holds a (read again by the Add), b and c:
    // 1.2 MB; kernels 0 and 1 hold two tensors; kernel 3 holds a, c, e.
    GraphBuilder B;
    residualBlock(B, N);
    const InferenceMemory M = inferenceMemory(B.G, planOf(B.G, false));
    CHECK(M.ActivationsBytes == doctest::Approx(3 * Kb400));
    CHECK(M.PeakKernel == 2);
    REQUIRE(M.LiveBytes.size() == 4);
    CHECK(M.LiveBytes[0] == doctest::Approx(2 * Kb400)); // x, a
    CHECK(M.LiveBytes[1] == doctest::Approx(2 * Kb400)); // a, b
    CHECK(M.LiveBytes[3] == doctest::Approx(3 * Kb400)); // a, c, e
    CHECK(M.LiveTensors == 3);
    CHECK(M.InputsBytes == 0);
    // Fused into one kernel (x in, e out), the intermediates never reach
    // memory.
    const InferenceMemory F = inferenceMemory(B.G, planOf(B.G, true));
    CHECK(F.ActivationsBytes == doctest::Approx(2 * Kb400));
    CHECK(F.LiveTensors == 2);
  }

  TEST_CASE("weights are resident, and the storage type scales floating-point "
            "tensors") {
    // y = x . W, W [256 x 256] fp32 = 262,144 B; x and y 1 KB each.
    GraphBuilder B;
    ir::Node *Mm =
        B.node("MatMul", {B.input("x", {1, 256}), B.weight("w", {256, 256})},
               {1, 256});
    ir::Node *R = B.node("Relu", {B.out(Mm)}, {1, 256});
    B.G.markOutput(B.out(R));
    const KernelPlan P = planOf(B.G, false);
    const InferenceMemory M = inferenceMemory(B.G, P);
    CHECK(M.WeightsBytes == doctest::Approx(262144));
    CHECK(M.WeightTensors == 1);
    CHECK(M.ActivationsBytes == doctest::Approx(2048));
    CHECK(M.PeakBytes == doctest::Approx(262144 + 2048));
    const InferenceMemory H = inferenceMemory(B.G, P, ir::DType::F16);
    CHECK(H.WeightsBytes == doctest::Approx(131072));
    CHECK(H.PeakBytes == doctest::Approx(131072 + 1024));
  }

  TEST_CASE("a gather holds its whole table, not the rows it reads") {
    // Embedding [1000 x 64] fp32 (256,000 B); 4 ids (int64) gather 4 rows.
    GraphBuilder B;
    ir::Node *G = B.node(
        "Gather",
        {B.weight("table", {1000, 64}), B.input("ids", {4}, ir::DType::I64)},
        {4, 64});
    B.G.markOutput(B.out(G));
    const InferenceMemory M = inferenceMemory(B.G, planOf(B.G, false));
    CHECK(M.WeightsBytes == doctest::Approx(256000));
    CHECK(M.ActivationsBytes == doctest::Approx(4 * 8 + 4 * 64 * 4));
  }

  TEST_CASE("predict reports the peak against the device and warns when it "
            "does not fit") {
    GraphBuilder B;
    residualBlock(B, N);
    const hw::Device D = load(SmallGpu);
    PredictOptions O;
    O.Device = &D;
    O.Fusion.Fuse = false;
    const Report R = predict(B.G, O);
    REQUIRE(R.Memory);
    CHECK(R.Memory->Usage.PeakBytes == doctest::Approx(3 * Kb400));
    CHECK(R.Memory->CapacityBytes == doctest::Approx(1e6));
    CHECK_FALSE(R.Memory->Fits);
    CHECK(R.Memory->Device == "small-gpu");
    CHECK(R.Memory->PeakAt == B.G.nodes()[2]->name().str());
    CHECK(R.Memory->Explain.find("peak 1.2 MB = weights 0 B") !=
          std::string::npos);
    REQUIRE(R.Warnings.size() == 1);
    CHECK(R.Warnings[0].Message.find("needs 1.2 MB at its peak") !=
          std::string::npos);
    CHECK(R.Warnings[0].Message.find("small-gpu has 1 MB") !=
          std::string::npos);
    // The trace carries the live bytes as a counter from each kernel's
    // start.
    std::vector<double> Counter;
    for (const llvm::json::Value &E : traceEvents(R))
      if (E.getAsObject()->getString("ph") == llvm::StringRef("C"))
        Counter.push_back(
            *E.getAsObject()->getObject("args")->getNumber("bytes"));
    CHECK(Counter ==
          std::vector<double>{2 * Kb400, 2 * Kb400, 3 * Kb400, 3 * Kb400});
    // A training step's forward pass leaves memory to the step.
    O.Memory = false;
    const Report T = predict(B.G, O);
    CHECK_FALSE(T.Memory);
    CHECK(T.Warnings.empty());
  }

  TEST_CASE("the largest batch that fits: the bytes past the weights grow "
            "with the batch") {
    // A decoding step after 15 tokens, 2 layers of width 64 (fp32).
    auto Decoder = [](int64_t Batch) {
      modelgen::TransformerSpec S =
          transformerSpec(modelgen::Family::Llama, 2, 64, 4, 1, 500);
      S.Past = 15;
      S.Batch = Batch;
      return importZoo(zooBytes(S));
    };
    auto Run = [](const ir::Graph &G, const hw::Device &D) {
      PredictOptions O;
      O.Device = &D;
      return predict(G, O);
    };
    const frontend::ImportedModel Two = Decoder(2);
    hw::Device D = load(SmallGpu);
    const Report Probe = Run(Two.Graph, D);
    REQUIRE(Probe.Memory);
    const InferenceMemory &U = Probe.Memory->Usage;
    const double PerSample = (U.PeakBytes - U.WeightsBytes) / 2;
    CHECK(Probe.Memory->BytesPerSample == doctest::Approx(PerSample));
    // Room for 10.5 samples beside the weights: 10 fit, 11 do not.
    D.Memory[0].CapacityBytes = U.WeightsBytes + 10.5 * PerSample;
    const Report R = Run(Two.Graph, D);
    REQUIRE(R.Memory);
    REQUIRE(R.Memory->MaxBatch);
    CHECK(*R.Memory->MaxBatch == 10);
    CHECK(R.Memory->Fits);
    const Report Ten = Run(Decoder(10).Graph, D);
    const Report Eleven = Run(Decoder(11).Graph, D);
    REQUIRE(Ten.Memory);
    REQUIRE(Eleven.Memory);
    CHECK(Ten.Memory->Fits);
    CHECK_FALSE(Eleven.Memory->Fits);
    REQUIRE(Eleven.Warnings.size() == 1);
    CHECK(Eleven.Warnings[0].Message.find("use a smaller batch (at most 10) "
                                          "or sequence") != std::string::npos);
    // The estimate is the same from any batch: the bytes are linear in it.
    CHECK(*Ten.Memory->MaxBatch == 10);
    CHECK(*Eleven.Memory->MaxBatch == 10);
    // Weights alone over the capacity: none fits; no capacity: no figure.
    D.Memory[0].CapacityBytes = U.WeightsBytes / 2;
    CHECK(*Run(Two.Graph, D).Memory->MaxBatch == 0);
    InferenceMemoryReport Unknown = *R.Memory;
    Unknown.CapacityBytes = 0;
    setMaxBatch(Unknown, 2, 1);
    CHECK_FALSE(Unknown.MaxBatch);
    // A peak that is a lower bound gives none; a multiple rounds down.
    InferenceMemoryReport Partial = *R.Memory;
    Partial.Usage.Complete = false;
    setMaxBatch(Partial, 2, 1);
    CHECK_FALSE(Partial.MaxBatch);
    InferenceMemoryReport ByFour = *R.Memory;
    setMaxBatch(ByFour, 2, 4);
    CHECK(*ByFour.MaxBatch == 8);
    // How it follows, under --explain.
    PredictOptions O;
    O.Device = &D;
    O.Explain = true;
    D.Memory[0].CapacityBytes = U.WeightsBytes + 10.5 * PerSample;
    CHECK(predict(Two.Graph, O)
              .Memory->Explain.find("; max batch 10 = "
                                    "floor((capacity") != std::string::npos);
  }

  TEST_CASE("--max-batch's search: from the estimate, up or down to the "
            "largest batch that fits") {
    // Bytes affine in the batch: Fits(b) when b <= True.
    // Each batch that fits is larger than every one before it that fit
    // (--max-batch keeps the last run that fits as the result).
    auto Search = [](int64_t Estimate, int64_t True, unsigned Multiple,
                     int64_t Limit, std::vector<BatchProbe> &Tried) {
      auto Found = largestFittingBatch(
          Estimate, Multiple, Limit, llvm::None,
          [True](int64_t B) -> llvm::Expected<BatchProbe> {
            BatchProbe P;
            P.Fits = B <= True;
            return P;
          },
          Tried);
      int64_t LastFit = 0;
      for (const BatchProbe &P : Tried)
        if (P.Fits) {
          CHECK(P.Batch > LastFit);
          LastFit = P.Batch;
        }
      if (Found && *Found)
        CHECK(**Found == LastFit);
      return Found;
    };
    std::vector<BatchProbe> Tried;
    // Exact (linear bytes): two predictions.
    auto Exact = Search(67, 67, 1, 268, Tried);
    REQUIRE(bool(Exact));
    CHECK(**Exact == 67);
    REQUIRE(Tried.size() == 2);
    CHECK((Tried[0].Batch == 67 && Tried[0].Fits));
    CHECK((Tried[1].Batch == 68 && !Tried[1].Fits));
    // A lower bound (bytes that do not grow): up by doubling steps, then
    // bisection.
    Tried.clear();
    auto Up = Search(100, 137, 1, 400, Tried);
    REQUIRE(bool(Up));
    CHECK(**Up == 137);
    CHECK(Tried.size() <= 12); // 6 steps up, 6 bisections
    // Too high (an estimate from a batch that does not fit): down.
    Tried.clear();
    auto Down = Search(100, 41, 1, 400, Tried);
    REQUIRE(bool(Down));
    CHECK(**Down == 41);
    // Multiples of ep, and the limit.
    Tried.clear();
    auto ByFour = Search(30, 30, 4, 120, Tried);
    REQUIRE(bool(ByFour));
    CHECK(**ByFour == 28);
    for (const BatchProbe &P : Tried)
      CHECK(P.Batch % 4 == 0);
    Tried.clear();
    auto Capped = Search(10, 1000, 1, 40, Tried);
    REQUIRE(bool(Capped));
    CHECK(**Capped == 40);
    // Nothing fits; a prediction that fails.
    Tried.clear();
    auto None = Search(8, 3, 4, 32, Tried);
    REQUIRE(bool(None));
    CHECK_FALSE(*None);
    CHECK(Tried.back().Batch == 4);
    CHECK(describeProbe(Tried.back()) == "4 does not fit");
    // A latency bound binds before the memory: each batch takes 1 ms a
    // sample; 67 fit, 40 meet a bound of 40.5 ms.
    Tried.clear();
    auto Bound = largestFittingBatch(
        67, 1, 268, 40.5e-3,
        [](int64_t B) -> llvm::Expected<BatchProbe> {
          BatchProbe P;
          P.Fits = B <= 67;
          P.LatencySeconds = B * 1e-3;
          P.MeetsLatency = P.LatencySeconds <= 40.5e-3;
          return P;
        },
        Tried);
    REQUIRE(bool(Bound));
    CHECK(**Bound == 40);
    CHECK(describeProbe(Tried.front()) == "67 takes 67 ms");
    int64_t LastAdmitted = 0;
    for (const BatchProbe &P : Tried)
      if (P.admitted()) {
        CHECK(P.Batch > LastAdmitted);
        LastAdmitted = P.Batch;
      }
    CHECK(LastAdmitted == 40);
    // Down 67 -> 33, then 40 where the line through their times meets
    // the bound, and 41 above it.
    REQUIRE(Tried.size() == 4);
    CHECK(Tried[2].Batch == 40);
    CHECK(Tried[3].Batch == 41);
    Tried.clear();
    auto Failing = largestFittingBatch(
        5, 1, 20, llvm::None,
        [](int64_t B) -> llvm::Expected<BatchProbe> {
          if (B > 5)
            return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                           "bad import");
          BatchProbe P;
          P.Fits = true;
          return P;
        },
        Tried);
    REQUIRE_FALSE(bool(Failing));
    CHECK(llvm::toString(Failing.takeError()) == "bad import");
  }
}
