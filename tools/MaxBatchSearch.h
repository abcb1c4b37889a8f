//===- MaxBatchSearch.h - perfc --max-batch ---------------------*- C++ -*-===//
//
// Predicts an inference at the largest batch whose run fits: the model
// imported again at each batch tried (--batch's rebinding), split as the
// command line says, and predicted whole (passes/MaxBatch.h searches).
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_MAXBATCHSEARCH_H
#define PERFC_TOOLS_MAXBATCHSEARCH_H

#include "frontend/OnnxImport.h"
#include "passes/Predict.h"
#include "passes/Report.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace perfc {

/// The splits the command line asked for (1: none).
struct SplitDegrees {
  unsigned Tp = 1, Ep = 1, Pp = 1;
};

/// The report at the largest batch that fits, with the model and split
/// analysis it was predicted from (Options.Split points at the latter).
struct MaxBatchRun {
  std::unique_ptr<frontend::ImportedModel> Model;
  std::unique_ptr<InferenceSplit> Split;
  Report R;
};

/// Given, the report at the model's own batch FromBatch (its memory's
/// MaxBatch is the estimate), Options and Degrees as it was predicted
/// with, Import as the model was read. The result's R.BatchSearch lists the
/// batches tried. Errors, one line naming ModelPath: no estimate (no batch
/// dimension, unknown capacity, an incomplete peak), not one sample fits, a
/// batch the model cannot be imported or split at.
llvm::Expected<MaxBatchRun>
predictAtMaxBatch(const std::string &ModelPath,
                  const frontend::ImportOptions &Import,
                  const PredictOptions &Options, SplitDegrees Degrees,
                  const Report &Given, int64_t FromBatch);

} // namespace perfc

#endif // PERFC_TOOLS_MAXBATCHSEARCH_H
