//===- CpuLayout.h - ONNX Runtime's NCHWc layout and its reorders -*- C++ -*-=//
//
// ONNX Runtime's CPU provider keeps the activations of blocked convolutions
// in MLAS's NCHWc layout (channels in blocks of the vector width,
// hw::Device::ConvChannelBlock) from one such convolution to the next, and
// converts at the edges: a ReorderInput before a blocked convolution whose
// input is a plain NCHW tensor, a ReorderOutput where a blocked tensor
// reaches an op with no NCHWc form (a broadcast Mul of squeeze-excite, a
// Reshape or Transpose of a channel shuffle, a graph output). Each is a
// kernel of its own that reads and writes the whole tensor: on
// squeeze-excite networks about a tenth of the run (ORT profiles of
// efficientnet_b0, regnet_y_400mf, mobilenet_v3_large).
//
// nchwcReorders decides, kernel by kernel in order, which run on blocked
// tensors (NCHWc transformer, onnxruntime/core/optimizer/
// nchwc_transformer.cc):
//  * a convolution the runtime blocks (cost::runsBlocked);
//  * pooling (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool) and
//    a BatchNormalization of its own (DenseNet's, before each convolution:
//    ORT runs it as a 1x1 depthwise NCHWc convolution) of a blocked 4-D
//    tensor, and a constant Pad of one that only pools or convolutions
//    read (ORT's pad fusion folds it into them);
//  * elementwise kernels (Add, Sum, Mul, Relu, Sigmoid, ... and their
//    fused chains) whose tensor inputs are all blocked and of the output's
//    shape (no broadcast);
//  * Concat along channels of blocked tensors whose channel counts are
//    whole blocks;
// and where a value crosses between a blocked and a plain kernel, the
// reorder (once per value, whatever the number of readers), priced as a
// data-movement kernel of the tensor's bytes read and written plus a
// dispatch. A blocked convolution with fewer input channels than a block
// reads NCHW directly (no reorder).
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_CPULAYOUT_H
#define PERFC_PASSES_CPULAYOUT_H

#include "passes/Fusion.h"

#include <vector>

namespace perfc {
namespace hw {
struct Device;
} // namespace hw

struct LayoutReorders {
  /// Per kernel (KernelPlan::Kernels order): whether it runs on NCHWc
  /// tensors, and the time and count of the reorders it waits for (of its
  /// inputs; for a kernel writing a graph output, also that output's).
  /// Empty where the device blocks nothing.
  std::vector<bool> Blocked;
  std::vector<double> Seconds;
  std::vector<unsigned> Count;
  double TotalSeconds = 0;
  unsigned Total = 0;
};

/// Empty (no kernel blocked, nothing reordered, no per-kernel vectors: the
/// prediction hot path on other devices allocates nothing) unless D is a
/// CPU with a conv_channel_block.
LayoutReorders nchwcReorders(const ir::Graph &G, const KernelPlan &Plan,
                             const hw::Device &D);

} // namespace perfc

#endif // PERFC_PASSES_CPULAYOUT_H
