//===- ModelStates.cpp - Model states and the passes over them ------------===//
#include "passes/ModelStates.h"

#include "costmodels/OpWork.h"
#include "costmodels/Roofline.h"

#include <algorithm>

namespace perfc {

const char *name(OptimizerKind O) {
  switch (O) {
  case OptimizerKind::Sgd:
    return "sgd";
  case OptimizerKind::Momentum:
    return "momentum";
  case OptimizerKind::Adam:
    return "adam";
  }
  return "adam";
}

bool isMixedPrecision(ir::DType TrainType) {
  return TrainType == ir::DType::F16 || TrainType == ir::DType::BF16 ||
         ir::isFloat8(TrainType);
}

ModelStateBytes modelStateBytes(OptimizerKind O, ir::DType TrainType,
                                bool Fp32Gradients) {
  ModelStateBytes S;
  S.Mixed = isMixedPrecision(TrainType);
  S.Weights = S.Mixed ? ir::byteSize(TrainType) : 4;
  S.Gradients = S.Mixed && !Fp32Gradients ? S.Weights : 4;
  switch (O) {
  case OptimizerKind::Sgd:
    S.Optimizer = 0;
    break;
  case OptimizerKind::Momentum:
    S.Optimizer = 4;
    break;
  case OptimizerKind::Adam:
    S.Optimizer = 8;
    break;
  }
  if (S.Mixed)
    S.Optimizer += 4; // fp32 master weights
  return S;
}

llvm::ArrayRef<OptimizerKernel> perTensorOptimizerKernels(OptimizerKind O) {
  static const OptimizerKernel Adam[] = {{1, 1}, {2, 1}, {1, 1}, {2, 1},
                                         {1, 1}, {1, 1}, {2, 1}, {1, 1},
                                         {2, 1}, {1, 1}, {1, 1}, {2, 1}};
  static const OptimizerKernel Momentum[] = {{2, 1}, {1, 1}, {2, 1}, {2, 1}};
  static const OptimizerKernel Sgd[] = {{2, 1}, {2, 1}};
  switch (O) {
  case OptimizerKind::Sgd:
    return Sgd;
  case OptimizerKind::Momentum:
    return Momentum;
  case OptimizerKind::Adam:
    return Adam;
  }
  return Adam;
}

double optimizerStepSeconds(double Shard, double Tensors,
                            const ModelStateBytes &S, OptimizerKind O,
                            bool PerTensor, const hw::Device &Dev) {
  if (PerTensor) {
    // Each kernel is a pass over every tensor: its bytes over the whole
    // shard at elementwise efficiency, and a launch per tensor (the first
    // is in opTime's overhead).
    double Seconds = 0;
    for (const OptimizerKernel &K : perTensorOptimizerKernels(O)) {
      OpWork P;
      P.Class = OpClass::Elementwise;
      P.Type = ir::DType::F32;
      P.Flops = Shard;
      P.BytesRead = Shard * 4 * K.Reads;
      P.BytesWritten = Shard * 4 * K.Writes;
      Seconds += cost::opTime(P, Dev).Seconds +
                 (std::max(1.0, Tensors) - 1) * Dev.LaunchOverheadSeconds;
    }
    return Seconds;
  }
  // Reads the gradients, the fp32 weights (the master copy when mixed) and
  // the moments; writes the moments and the weights, both copies when
  // mixed.
  const double Moments = S.Optimizer - (S.Mixed ? 4 : 0);
  OpWork W;
  W.Class = OpClass::Elementwise;
  W.Type = ir::DType::F32;
  W.Flops = Shard * (O == OptimizerKind::Adam ? 12 : 3);
  W.BytesRead = Shard * (S.Gradients + (S.Mixed ? 4 : S.Weights) + Moments);
  W.BytesWritten = Shard * ((S.Mixed ? 4 + S.Weights : S.Weights) + Moments);
  return cost::opTime(W, Dev).Seconds;
}

double gradientAccumulationPassSeconds(double Params, double Tensors,
                                       ir::DType Type, const hw::Device &Dev) {
  const bool Mixed = isMixedPrecision(Type);
  OpWork W;
  W.Class = OpClass::Elementwise;
  W.Type = ir::DType::F32;
  W.Flops = Params;
  W.BytesRead = Params * ((Mixed ? ir::byteSize(Type) : 4) + 4);
  W.BytesWritten = Params * 4;
  double Seconds = cost::opTime(W, Dev).Seconds;
  if (!Mixed) // one kernel per tensor; opTime holds the first launch
    Seconds += (std::max(1.0, Tensors) - 1) * Dev.LaunchOverheadSeconds;
  return Seconds;
}

} // namespace perfc
