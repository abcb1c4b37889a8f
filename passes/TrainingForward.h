//===- TrainingForward.h - A training step's forward pass -------*- C++ -*-===//
//
// What a training step's forward pass runs, shared by the step
// (passes/TrainStep.cpp) and the per-node report of --train
// (passes/Predict.cpp, PredictOptions::Training), so that the rows a user
// reads add up to the step's forward time:
//  * the work: BatchNormalization computes its batch's mean and variance
//    before it can normalise, a reduction pass over its input and then the
//    normalising pass, so it reads the input twice (cuDNN's batch-norm
//    forward training kernel; Jung et al. 2019, "Restructuring Batch
//    Normalization to Accelerate CNN Training", count the same two passes);
//  * the kernels: a fused kernel writes what backward keeps of what it
//    computes inside, besides what other kernels read; attention stays unfused
//    (Megatron-LM's kernels, the runs the model is checked against, write the
//    scores, which backward keeps anyway) unless the step runs FlashAttention;
//    BatchNormalization, which normalises with the batch's statistics, cannot
//    fold into the convolution before it (passes/Fusion.h);
//  * Dropout's mask: a training-mode Dropout keeps which elements it
//    dropped, one byte each, written forward and read by its backward
//    (PyTorch's fused_dropout writes a kByte mask that masked_scale reads
//    back: aten/src/ATen/native/cuda/Dropout.cu), whether or not the graph
//    names the mask as the op's second output.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_TRAININGFORWARD_H
#define PERFC_PASSES_TRAININGFORWARD_H

#include "passes/Backward.h"
#include "passes/Fusion.h"
#include "passes/WorkPass.h"

namespace perfc {

/// The kernel plan's options for a training step's forward pass: every op
/// its own kernel when Unfused (an eager framework), attention as one kernel
/// when FlashAttention.
FusionOptions trainingFusion(bool Unfused, bool FlashAttention);

/// Bytes of the mask a training-mode Dropout keeps for its backward.
double droppedMaskBytes(const ir::Node &Dropout);

/// The forward work of a training step over G (see the header comment).
GraphWork trainingWork(const ir::Graph &G);

/// The kernels of a training step's forward pass over G with Work (from
/// trainingWork) and Back (its backward): trainingFusion's plan, in which
/// a fused kernel also writes the tensors backward keeps (a GELU's input
/// inside a GEMM's epilogue is written, as the memory pass counts it kept).
KernelPlan trainingKernels(const ir::Graph &G, const GraphWork &Work,
                           const BackwardInfo &Back, bool Unfused,
                           bool FlashAttention);

} // namespace perfc

#endif // PERFC_PASSES_TRAININGFORWARD_H
