//===- ApiImpl.h - The private halves of the API's handles ------*- C++ -*-===//
//
// What perfc/perfc.h's pimpl handles hold. Only api/ includes this.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_API_APIIMPL_H
#define PERFC_API_APIIMPL_H

#include "perfc/perfc.h"

#include "frontend/OnnxImport.h"
#include "hwdb/Cluster.h"
#include "ir/Graph.h"
#include "ir/Warning.h"
#include "passes/Report.h"

#include "llvm/Support/Error.h"

namespace perfc::api {

struct Hardware::Impl {
  std::string Name; ///< As given.
  hw::Cluster Cluster;
};

struct Model::Impl {
  ir::Graph Graph;
  /// The report's model section, less what predict() fills.
  ModelInfo Info;
  std::vector<Warning> Warnings;
  int64_t Batch = 1;
  /// Where an ONNX model came from (a path, or bytes shared with the import
  /// cache) and how it was imported, so that plan() can import it again at
  /// other micro-batch sizes. Neither for a built model.
  std::string SourcePath;
  std::shared_ptr<const std::string> SourceBytes;
  ImportOptions SourceOptions;
};

/// An ONNX model imported again with its first dimension Batch, as it was
/// read otherwise (plan()'s micro-batches, maxBatch's batches). Not for a
/// built model (no source).
llvm::Expected<frontend::ImportedModel> importAtBatch(const Model::Impl &MI,
                                                      int64_t Batch);

/// MI's model as imported again at Batch (importAtBatch): its source kept.
Model modelAtBatch(const Model::Impl &MI, frontend::ImportedModel IM,
                   int64_t Batch);

struct Plan::Impl {
  Report R; ///< With Plan, Strategy and Train set.
};

/// The API's training options as the passes' (micro-batch as given);
/// throws Error on a bad name.
perfc::TrainOptions trainOptions(const TrainOptions &T, int64_t MicroBatch);
/// The protocol a commProtocol string names; throws perfc::api::Error
/// listing the choices when it names none.
cost::CommProtocol commProtocol(const std::string &Name);

/// The passes' training report as the API's summary.
TrainSummary summarize(const TrainReport &T);

/// The report writer's JSON on one line without spaces.
std::string compactJson(const std::string &S);

/// The report's warnings as lines ("node 'X': message").
std::vector<std::string> warningLines(const std::vector<Warning> &W);

struct Prediction::Impl {
  Report R;
  /// What it was made from: toJson() predicts again with the explanations
  /// that predict() leaves out (see makePrediction).
  bool Explained = false;
  Model M;
  std::optional<Hardware> Hw;
  PredictOptions Options;
  Impl(Model M) : M(std::move(M)) {}
};

/// predict(), with or without NodeTime::Explain strings (the JSON's
/// formulas; formatting them takes most of a prediction's time). ForStep:
/// the report becomes a training step's (plan()), whose memory is the
/// step's, as with Options.train: no inference memory, no warning for it.
std::shared_ptr<Prediction::Impl> makePrediction(const Model &M,
                                                 const Hardware *Hw,
                                                 const PredictOptions &Options,
                                                 bool Explain,
                                                 bool ForStep = false);

/// Throws Error with E's message.
[[noreturn]] void throwError(llvm::Error E);
[[noreturn]] void throwError(const std::string &Message);

/// Fills Info's inputs, outputs and the batch from the graph.
void finishModel(Model::Impl &M);

} // namespace perfc::api

#endif // PERFC_API_APIIMPL_H
