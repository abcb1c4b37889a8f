//===- ModelStates.h - Model states and the passes over them ----*- C++ -*-===//
//
// What a training step keeps per parameter and the elementwise passes it
// makes over those states, apart from the graph's kernels:
//  * the model states' bytes per parameter: the training copy of the
//    weights, the gradients (in the training type, or fp32 as Megatron-LM's
//    main_grad keeps them), the optimizer's moments (momentum 4, Adam 8)
//    and, under mixed precision, fp32 master weights (4): 16 bytes under
//    mixed-precision Adam, 18 with fp32 gradients (Rajbhandari et al.,
//    ZeRO, SC 2020, section 3.1);
//  * the optimizer step: one fused elementwise pass over a device's shard
//    of them (apex FusedAdam, Megatron-LM's and DeepSpeed's optimizers), or
//    a loop of kernels per parameter tensor (perTensorOptimizerKernels);
//  * an eager framework's gradient accumulation pass.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_MODELSTATES_H
#define PERFC_PASSES_MODELSTATES_H

#include "hwdb/Device.h"
#include "ir/DType.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace perfc {

enum class OptimizerKind : uint8_t { Sgd, Momentum, Adam };
const char *name(OptimizerKind O);

/// Training in a 16- or 8-bit floating-point type: fp32 master weights
/// beside the training copy (TF32 trains fp32 tensors).
bool isMixedPrecision(ir::DType TrainType);

/// Bytes each parameter keeps in each model state.
struct ModelStateBytes {
  double Weights = 4;   ///< The copy forward and backward read.
  double Gradients = 4; ///< As the backward writes and the optimizer reads.
  /// The optimizer's moments, plus the fp32 master weights when Mixed.
  double Optimizer = 0;
  bool Mixed = false;
  double total() const { return Weights + Gradients + Optimizer; }
};

ModelStateBytes modelStateBytes(OptimizerKind O, ir::DType TrainType,
                                bool Fp32Gradients);

/// One elementwise kernel of an optimizer written as a loop over parameter
/// tensors: how many fp32 tensors of the parameter's size it reads and
/// writes.
struct OptimizerKernel {
  unsigned Reads = 0, Writes = 0;
};
/// The kernels such an optimizer launches for each parameter tensor:
///  * adam: BertAdam.step (NVIDIA DeepLearningExamples, PyTorch BERT
///    optimization.py): m.mul_, m.add_(g), v.mul_, v.addcmul_(g, g),
///    v.sqrt(), + eps, m / (...), wd * p, update += (...), lr * update,
///    negation, p.add_: 12 kernels, 17 reads, 12 writes;
///  * momentum: torch.optim.SGD's loop with weight decay: d_p.add(p),
///    buf.mul_, buf.add_(d_p), p.add_: 4 kernels;
///  * sgd: d_p.add(p), p.add_: 2 kernels.
llvm::ArrayRef<OptimizerKernel> perTensorOptimizerKernels(OptimizerKind O);

/// The optimizer step over Shard parameters in Tensors tensors on Dev: one
/// fused pass that reads the gradients, the master (or only) weights and
/// the moments and writes the weights (both copies when mixed) and the
/// moments, 12 FLOPs a parameter for Adam and 3 otherwise; or, PerTensor,
/// each of perTensorOptimizerKernels(O) as a pass over the shard with a
/// launch per tensor.
double optimizerStepSeconds(double Shard, double Tensors,
                            const ModelStateBytes &S, OptimizerKind O,
                            bool PerTensor, const hw::Device &Dev);

/// One pass of gradient accumulation as an eager framework runs it: a
/// micro-batch's gradients added to the kept ones, reading both and
/// writing the sum, at elementwise efficiency. FP32/TF32 (Type 4 bytes):
/// PyTorch's AccumulateGrad, `grad += new` in place, one kernel per
/// parameter tensor, 12 bytes a parameter; mixed precision: apex amp O2's
/// multi_tensor_axpby of the 16-bit gradients into the fp32 master
/// gradients, one multi-tensor kernel, 10 bytes a parameter with fp16.
/// Fused training code (Megatron-LM's gradient-accumulation fusion)
/// accumulates inside the weight-gradient GEMM and has no such pass.
double gradientAccumulationPassSeconds(double Params, double Tensors,
                                       ir::DType Type, const hw::Device &Dev);

} // namespace perfc

#endif // PERFC_PASSES_MODELSTATES_H
