//===- Fp8Recipe.h - FP8 training as Transformer Engine runs it -*- C++ -*-===//
//
// `--dtype fp8` trains as Megatron-LM and NeMo do with NVIDIA Transformer
// Engine (--fp8-format hybrid: E4M3 forward, E5M2 gradients; TE's FP8
// primer,
// https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/fp8_primer.html):
//
//  * the GEMMs of Linear layers (a MatMul or Gemm with a weight operand) in
//    the model's blocks run on FP8 operands at the FP8 peak and write BF16
//    (Megatron-LM's embedding and output layer are not Transformer Engine
//    modules and stay BF16);
//  * everything else computes and stores in BF16: activations, gradients,
//    attention (its products multiply two activations), normalisations,
//    the tensor- and pipeline-parallel exchanges, and the weights (BF16
//    copies of the fp32 master weights, so model states are those of BF16
//    mixed precision);
//  * each FP8 GEMM's activation operand is cast to FP8 in forward, and its
//    output gradient in backward, by a kernel that reads the BF16 tensor
//    and writes it in FP8 in both layouts (Hopper's FP8 GEMMs take K-major
//    operands only, so the data and the weight gradient each need one): 2
//    bytes read and 2 written per element, one launch.
//
// Not modelled: TE's fusion of some of those casts into the LayerNorm or
// activation before them (a launch and a 2-byte read fewer each); the casts
// of the weights (once per step with gradient accumulation: under 0.5% of
// the steps checked); FP8 copies of saved activations (kept in BF16, as
// without them); delayed scaling's amax reductions.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_FP8RECIPE_H
#define PERFC_PASSES_FP8RECIPE_H

#include "costmodels/OpWork.h"
#include "costmodels/Roofline.h"
#include "ir/DType.h"

namespace perfc {
namespace ir {
class Node;
}
namespace hw {
struct Device;
}
struct KernelPlan;

/// Whether training in TrainType follows the FP8 recipe above.
inline bool isFp8Recipe(ir::DType TrainType) { return ir::isFloat8(TrainType); }

/// The type training stores tensors in: BF16 under the FP8 recipe, else
/// TrainType.
inline ir::DType trainingStorageType(ir::DType TrainType) {
  return isFp8Recipe(TrainType) ? ir::DType::BF16 : TrainType;
}

/// Whether the kernel Head heads, with work W, is a Linear layer's GEMM
/// that the recipe runs in FP8: a MatMul or Gemm with a GEMM shape and an
/// operand known at load time (a weight, possibly through views).
bool isFp8Gemm(const ir::Node &Head, const OpWork &W, const KernelPlan &Plan);

/// A GEMM's work, bytes stored in BF16, with its operands read in FP8
/// instead (half the bytes read); it still writes BF16.
OpWork withFp8Operands(OpWork W);

/// The cast of Elements BF16 values to FP8 in both layouts: 2 bytes read,
/// 2 written per element (an elementwise kernel).
OpWork fp8CastWork(double Elements);

/// An FP8 GEMM's time and its cast's, the one rule the training step and
/// the per-node forward both price.
struct Fp8GemmTime {
  cost::OpTime Gemm, Cast;
  double seconds() const { return Gemm.Seconds + Cast.Seconds; }
};

/// W, a GEMM's work stored in BF16 (sharded as it runs), on FP8 operands
/// computing in Fp8, and the cast of its operand that is not a weight
/// (forward: the activation, Batch x M x K; backward: the output's
/// gradient, Batch x M x N) computing as T says; T's other settings serve
/// both.
Fp8GemmTime fp8GemmTime(const OpWork &W, bool Backward, ir::DType Fp8,
                        const hw::Device &D, const cost::TimeOptions &T);

} // namespace perfc

#endif // PERFC_PASSES_FP8RECIPE_H
