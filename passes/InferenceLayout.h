//===- InferenceLayout.h - The devices and analysis of a split --*- C++ -*-===//
//
// One inference split over a cluster (--tp, --ep, --pp; the library's
// tensorParallel, expertParallel, pipelineParallel): the groups and stages
// its devices form (placeSplit) and the analysis of the graph that admits
// it, which predict then reuses (analyzeSplit). The CLI, the library and
// --max-batch's search (which imports the model again at each batch) each
// set a split up this way.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_INFERENCELAYOUT_H
#define PERFC_PASSES_INFERENCELAYOUT_H

#include "passes/Predict.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace perfc {

/// The degrees of one inference split (1: none). Tp and Ep are not both
/// above 1 (expert-parallel inference runs attention whole on each rank);
/// Pp with Ep is not modelled.
struct SplitDegrees {
  unsigned Tp = 1, Ep = 1, Pp = 1;
  bool whole() const { return Tp <= 1 && Ep <= 1 && Pp <= 1; }
};

/// How errors name the degrees: the CLI's flags, or the library's fields.
struct SplitOptionNames {
  llvm::StringRef Tp = "--tp", Ep = "--ep";
};

/// Sets O.TensorParallel, O.ExpertParallel and O.PipelineParallel for D on
/// C (tensorParallelGroup, pipelineStages), the groups exchanging with
/// Protocol. Errors: the cluster's (too few devices, several kinds, no
/// link), naming the option.
llvm::Error placeSplit(PredictOptions &O, const hw::Cluster &C, SplitDegrees D,
                       cost::CommProtocol Protocol,
                       SplitOptionNames Names = SplitOptionNames());

/// The analysis predict reuses for D (PredictOptions::Split), after the
/// checks that admit it: analyzeTensorParallel or analyzeExpertParallel,
/// else analyzeInferenceSplit where D has stages, then
/// checkPipelineParallel. None for a whole model. Errors: the model's (no
/// pattern to split, sizes D does not divide, too few blocks).
llvm::Expected<llvm::Optional<InferenceSplit>> analyzeSplit(const ir::Graph &G,
                                                            SplitDegrees D);

} // namespace perfc

#endif // PERFC_PASSES_INFERENCELAYOUT_H
