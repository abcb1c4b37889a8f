//===- FuzzPlanJson.cpp - Fuzz the plan reader and the training model ----===//
//
// Text is a plan file (`perfc MODEL --train --strategy plan.json`): it goes
// through parsePlanJson (tools/PlanJson.h) and, when it parses, through the
// model-fingerprint check and a training prediction of a two-layer GPT on
// a cluster of 1000 eight-GPU nodes, so that absurd degrees, micro-batches
// and global batches reach the arithmetic of passes/TrainStep.cpp (a plan
// with a data split: predictDataSplit's, passes/MixedTypes.cpp). Every
// error must be one line; the reader's must name the file.
//
//===----------------------------------------------------------------------===//
#include "frontend/OnnxImport.h"
#include "hwdb/Loader.h"
#include "passes/Planner.h"
#include "passes/TrainStep.h"
#include "tools/PlanJson.h"
#include "tools/fuzz/FuzzCheck.h"
#include "tools/modelgen/TransformerGen.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace {

struct Fixture {
  std::unique_ptr<perfc::frontend::ImportedModel> Model;
  std::unique_ptr<perfc::TrainingAnalysis> Analysis;
  std::unique_ptr<perfc::hw::Cluster> Cluster;
};

/// Built once; a failure here is a defect of the fixture, not a finding.
const Fixture &fixture() {
  static const Fixture F = [] {
    Fixture F;
    perfc::modelgen::TransformerSpec Spec;
    Spec.Fam = perfc::modelgen::Family::Gpt;
    Spec.Layers = 2;
    Spec.Hidden = 64;
    Spec.Heads = 4;
    Spec.Seq = 32;
    Spec.Vocab = 128;
    Spec.Batch = 1;
    auto Bytes = perfc::modelgen::writeTransformerOnnx(Spec);
    if (!Bytes) {
      llvm::errs() << llvm::toString(Bytes.takeError()) << "\n";
      std::abort();
    }
    auto M = perfc::frontend::importOnnxBytes(*Bytes, "gpt_tiny.onnx", {});
    if (!M) {
      llvm::errs() << llvm::toString(M.takeError()) << "\n";
      std::abort();
    }
    F.Model = std::make_unique<perfc::frontend::ImportedModel>(std::move(*M));
    F.Analysis = std::make_unique<perfc::TrainingAnalysis>(F.Model->Graph);
    auto C = perfc::hw::loadHardwareFromString(
        "cluster:\n"
        "  name: fuzz-8000\n"
        "  nodes:\n"
        "    - name: dgx-a100\n"
        "      count: 1000\n"
        "      device: a100-sxm4-80gb\n"
        "      devices_per_node: 8\n"
        "      intra_node_link: nvswitch-gen2\n"
        "      inter_node_link: infiniband-hdr\n"
        "      nics_per_node: 8\n",
        "fuzz-cluster.yaml");
    if (!C) {
      llvm::errs() << llvm::toString(C.takeError()) << "\n";
      std::abort();
    }
    F.Cluster = std::make_unique<perfc::hw::Cluster>(std::move(*C));
    return F;
  }();
  return F;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  const Fixture &F = fixture();
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  perfc::TrainOptions Base;
  auto Plan = perfc::parsePlanJson(Text, "fuzz-plan.json", Base);
  if (!Plan) {
    perfc::fuzz::checkError(Plan.takeError(), "fuzz-plan.json",
                            "parsePlanJson");
    return 0;
  }
  if (llvm::Error E = perfc::checkPlanModel(Plan->Model, "fuzz-plan.json",
                                            F.Model->GraphName,
                                            F.Model->Graph.nodes().size(), 1e6))
    perfc::fuzz::checkError(std::move(E), "fuzz-plan.json", "checkPlanModel");
  const bool Split = !Plan->Options.DataSplit.empty();
  auto T = Split
               ? perfc::predictDataSplit(*F.Analysis, *F.Cluster, Plan->Options)
               : perfc::predictTraining(*F.Analysis, *F.Cluster, Plan->Options);
  if (!T)
    perfc::fuzz::checkError(T.takeError(), "",
                            Split ? "predictDataSplit" : "predictTraining");
  return 0;
}
