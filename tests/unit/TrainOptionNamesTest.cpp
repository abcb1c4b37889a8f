//===- TrainOptionNamesTest.cpp - Training options by name ----------------===//
#include "passes/TrainOptionNames.h"

#include <doctest/doctest.h>

using namespace perfc;

TEST_CASE("training option names: every name parses, and prints back") {
  TrainOptions O;
  REQUIRE_FALSE(static_cast<bool>(
      parseTrainChoices({"selective", "fp8", "adamw", "even"}, "--", O)));
  CHECK(O.Recomp == Recompute::Selective);
  CHECK(O.DType == ir::DType::F8E4M3);
  CHECK(O.Optimizer == OptimizerKind::Adam);
  CHECK(O.Split == Partition::Even);
  CHECK(std::string(name(O.Split)) == "even");
  CHECK(*trainDTypeNamed("bf16") == ir::DType::BF16);
  CHECK(*scheduleNamed("gpipe") == PipelineSchedule::GPipe);
  CHECK(std::string(name(PipelineSchedule::OneFOneB)) == "1f1b");
  // Only the names a user types: int8 is no training precision, fp8e4m3
  // (what reports print) only plan files take.
  CHECK_FALSE(trainDTypeNamed("int8"));
  CHECK_FALSE(trainDTypeNamed("fp8e4m3"));

  cost::Compression C;
  REQUIRE_FALSE(static_cast<bool>(parseGradCompression("topk:0.25", "x", C)));
  CHECK(C.Kind == cost::CompressionKind::TopK);
  CHECK(C.Ratio == 0.25);
  CHECK(gradCompressionName(C) == "topk:0.250000");
  REQUIRE_FALSE(static_cast<bool>(parseGradCompression("fp16", "x", C)));
  CHECK(gradCompressionName(C) == "fp16");

  // Protocols in any case, as NCCL_PROTO reads them; printed as NCCL spells
  // them.
  CHECK(*commProtocolNamed("ll128") == cost::CommProtocol::LL128);
  CHECK(*commProtocolNamed("Simple") == cost::CommProtocol::Simple);
  CHECK(*commProtocolNamed("LL") == cost::CommProtocol::LL);
  CHECK(*commProtocolNamed("alpha-beta") == cost::CommProtocol::AlphaBeta);
  CHECK(*commProtocolNamed("auto") == cost::CommProtocol::Auto);
  CHECK_FALSE(commProtocolNamed("ring"));
  CHECK(std::string(cost::name(*commProtocolNamed("simple"))) == "Simple");
}

TEST_CASE("training option names: one wording for an unknown name") {
  TrainOptions O;
  // The first unknown one fails, named as the caller's user writes it.
  CHECK(llvm::toString(
            parseTrainChoices({"none", "int4", "lamb", "even"}, "--", O)) ==
        "unknown --dtype 'int4': use fp32, tf32, fp16, bf16 or fp8");
  CHECK(llvm::toString(
            parseTrainChoices({"some", "fp16", "adam", "even"}, "", O)) ==
        "unknown recompute 'some': use none, selective or full");
  CHECK(llvm::toString(
            parseTrainChoices({"none", "fp16", "adam", "odd"}, "--", O)) ==
        "unknown --partition 'odd': use balanced or even");
  cost::Compression C;
  CHECK(llvm::toString(parseGradCompression("zip", "--grad-compression", C)) ==
        "unknown --grad-compression 'zip': use none, fp16 or topk:R");
  for (const char *Bad : {"topk:0", "topk:2", "topk:x", "topk:"})
    CHECK(llvm::toString(parseGradCompression(Bad, "grad compression", C)) ==
          "grad compression topk:R: R must be a share in (0, 1], e.g. "
          "topk:0.01");
  CHECK(C.Kind == cost::CompressionKind::None);
}
