//===- PipelineInference.h - Inference over pipeline stages --- -*- C++ -*-===//
//
// perfc --pp N without --train: the model's blocks split into N contiguous
// stages, each on its own devices (a tensor-parallel group with --tp), as
// vLLM (--pipeline-parallel-size), TensorRT-LLM and SGLang serve a model
// larger than a node: tensor parallelism inside a node, stages across
// nodes. The prologue (embeddings) goes with the first stage, the epilogue
// (final norm, output head) with the last; the split is the one whose
// slowest stage is fastest, the stages' sends included (blocks of equal
// cost split evenly, as vLLM splits layers). Each stage sends the
// activations crossing its cut to the next, each tensor-parallel rank 1/tp
// of them (Megatron-LM's scatter/gather, as the training step prices it),
// on its stream after its kernels.
//
// One batch (the graph's) passes through the stages in turn: its latency
// is the stages' kernels and sends summed. The pipeline holds N such
// batches in flight (vLLM's virtual engines), each stage working on one
// while the others work on the rest, so a batch completes a step every
// slowest-stage time (the interval), and each stage holds the inputs (the
// key/value caches) of all N batches beside its weights.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_PIPELINEINFERENCE_H
#define PERFC_PASSES_PIPELINEINFERENCE_H

#include "passes/Predict.h"

namespace perfc {

/// Splits the kernels of Plan (priced in R.Nodes by predict, with their
/// tensor-parallel exchanges) into O.PipelineParallel's stages, prices the
/// sends and, with O.Memory, each stage's memory (Shares: one
/// tensor-parallel rank's kernel shares, or empty). Sets R.PipelineParallel,
/// R.LatencySeconds and R.Memory (the fullest stage's, with a warning where
/// a stage does not fit).
void addPipelineStages(const ir::Graph &G, const KernelPlan &Plan,
                       const BlockInfo &Blocks, const PredictOptions &O,
                       llvm::ArrayRef<KernelShare> Shares, Report &R);

/// The stages' contiguous split of NumBlocks blocks (1-based, inclusive
/// [first, last] per stage) that minimises the slowest stage: UnitSeconds
/// has NumBlocks + 2 entries (prologue, blocks, epilogue), Send[S][J] is
/// what stage S pays to send the cut after block J (J < NumBlocks).
/// Stages <= NumBlocks. Exposed for the unit tests.
std::vector<std::pair<unsigned, unsigned>>
balancedStages(llvm::ArrayRef<double> UnitSeconds, unsigned Stages,
               const std::vector<std::vector<double>> &Send);

} // namespace perfc

#endif // PERFC_PASSES_PIPELINEINFERENCE_H
