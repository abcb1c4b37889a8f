//===- ActivationMemoryTest.cpp - Saved activations, closed forms ---------===//
#include "TrainingHelpers.h"

#include "costmodels/Collectives.h"
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "hwdb/Units.h"
#include "passes/Backward.h"
#include "passes/Blocks.h"
#include "passes/LoadTimeConstants.h"
#include "passes/Schedule.h"
#include "passes/TrainStep.h"
#include "passes/WorkPass.h"
#include "tools/modelgen/TransformerGen.h"

#include <doctest/doctest.h>

using namespace perfc;
using namespace perfc::test;

TEST_SUITE("training") {

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

  TEST_CASE("long sequences: FlashAttention's scores and the causal mask "
            "are no workspace, kept input or pipeline message") {
    // 4096 tokens, 4 heads: a layer's scores are 4 x 4096^2 elements (134
    // MB in BF16), the fp32 causal mask 67 MB; the residual stream 4096 x
    // 256 (4 MB in fp32 units, 2 MB in BF16).
    const frontend::ImportedModel M = generatedGpt(2, 256, 4, 4096, 1);
    auto C = hw::loadHardware("dgx-a100");
    REQUIRE(bool(C));
    const double Scores = 4.0 * 4096 * 4096 * 2, Mask = 4096.0 * 4096 * 4;
    const double Stream = 4096.0 * 256;
    TrainOptions O;
    O.DType = ir::DType::BF16;
    auto Eager = predictTraining(M.Graph, *C, O);
    REQUIRE(bool(Eager));
    CHECK(Eager->peak().WorkspaceBytes >= Scores);
    O.FlashAttention = true;
    auto Flash = predictTraining(M.Graph, *C, O);
    REQUIRE(bool(Flash));
    CHECK(Flash->peak().WorkspaceBytes < Mask);
    // Full recomputation keeps each block's input, never the mask.
    O.Recomp = Recompute::Full;
    auto Full = predictTraining(M.Graph, *C, O);
    REQUIRE(bool(Full));
    CHECK(Full->peak().ActivationsBytes < Mask);
    // Stages send the residual stream, not the mask.
    const TrainingAnalysis A(M.Graph, false, true);
    for (double Cut : A.CutBytes)
      CHECK(Cut < Mask / 4);
    CHECK(*std::max_element(A.CutBytes.begin(), A.CutBytes.end()) >=
          4 * Stream);
  }
}
