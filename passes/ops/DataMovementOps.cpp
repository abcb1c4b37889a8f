//===- DataMovementOps.cpp - Work of views, copies and gathers ------------===//
//
// Data movement does no arithmetic (but for the few ops below); what differs
// between these ops is the bytes they move.
//
// | Ops                                       | bytes read      | written  |
// |-------------------------------------------|-----------------|----------|
// | Reshape Squeeze Unsqueeze Flatten         | 0 (view)        | 0        |
// | Identity Constant Optional                | 0 (view)        | 0        |
// | OptionalGetElement, Dropout (inference)   | 0 (view)        | 0        |
// | Shape Size OptionalHasElement             | 0 (metadata)    | output   |
// | Gather GatherElements GatherND            | indices + output| output   |
// | Slice                                     | output + starts,| output   |
// |                                           | ends, axes, steps|         |
// | Slice of an expert stack (slicesExperts)  | 0 (view)        | 0        |
// | ConstantOfShape EyeLike                   | 0 (write-only)  | output   |
// | everything else                           | every input     | outputs  |
//
// Views are marked IsView: runtimes alias them. A gather reads only the rows
// it selects, which are as many bytes as its output. A Transpose that is
// neither a reshape nor a single axis's move and whose trailing in-place
// axes hold one element has its elements counted in StridedElements
// (OpWork.h): runtimes without a general tiled transpose copy them one at a
// time.
//
// | Ops with arithmetic                      | Flops                      |
// |------------------------------------------|----------------------------|
// | Resize Upsample, mode nearest            | 0                          |
// | Resize Upsample, mode linear             | 2 * 2^r * out_elems        |
// | Resize, mode cubic                       | 2 * 4^r * out_elems        |
// | ScatterElements ScatterND, reduction set | elems(updates)             |
// | Range                                    | out_elems (one add each)   |
// | Dropout, training mode (not a view)      | 10 * in_elems              |
//
// Nearest resizing computes its source indices per axis, not per element.
// Interpolation reads 2 (linear) or 4 (cubic) taps along each of the r axes
// whose size changes (the spatial axes when the shapes are unknown), with a
// multiply and an add per tap. Training-mode Dropout draws a uniform sample
// (8, as in MiscOps.cpp), compares it (1) and scales the kept value (1).
//
//===----------------------------------------------------------------------===//
#include "passes/Blocks.h"
#include "passes/OpRegistry.h"
#include "passes/ops/OpCounts.h"

#include "ir/Graph.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace perfc {

/// Flops of one Dropout element in training mode (see the table above).
static constexpr double DropoutTrainingFlops = 10;

/// Reshape, Squeeze, Identity, ...: aliases of their input.
static void viewWork(const ir::Node &N, OpWork &W) {
  W.IsView = true;
  W.BytesRead = 0;
  W.BytesWritten = 0;
}

/// Shape, Size, OptionalHasElement: read metadata, write a small output.
static void metadataWork(const ir::Node &N, OpWork &W) {
  W.IsView = true;
  W.BytesRead = 0;
}

/// ConstantOfShape, EyeLike: the input gives only a shape.
static void writeOnlyWork(const ir::Node &N, OpWork &W) { W.BytesRead = 0; }

/// True when a constant boolean input is known to be set.
static bool isConstantTrue(const ir::Value *V) {
  if (!V || !V->data())
    return false;
  const ir::ConstData &D = *V->data();
  if (!D.Ints.empty())
    return D.Ints.front() != 0;
  return !D.Floats.empty() && D.Floats.front() != 0;
}

static void dropoutWork(const ir::Node &N, OpWork &W) {
  // Input 2 (opset 12+) switches training on; at inference it is Identity.
  if (!isConstantTrue(N.input(2))) {
    viewWork(N, W);
    return;
  }
  W.Flops = DropoutTrainingFlops * elems(N.input(0));
  // In training it is a pointwise op like any other: it streams at
  // elementwise rates and fuses with its neighbours where the framework
  // fuses pointwise chains (Megatron-LM's bias_dropout_add, XLA,
  // TorchInductor).
  W.Class = OpClass::Elementwise;
  W.Formula = "10*in_elems (random mask, compare, scale)";
}

/// Gather, GatherElements, GatherND: the indices, and only the gathered
/// elements of the data, which are as many as the output holds.
static void gatherWork(const ir::Node &N, OpWork &W) {
  W.BytesRead = bytesOf(N.input(1)) + bytesOf(N.output(0));
}

/// Slice reads the slice and its small starts/ends/axes/steps inputs.
/// Transpose: the defaults, and the elements of a permutation with neither
/// a contiguous run nor a 2-D structure (the cases ONNX Runtime's CPU
/// Transpose sends to DoTransposeEltWise: not IsTransposeReshape, not
/// IsTransposeMovingSingleAxis, and the trailing axes that stay in place
/// hold one element; onnxruntime/core/providers/cpu/tensor/transpose.cc).
static void transposeWork(const ir::Node &N, OpWork &W) {
  const ir::Value *X = N.input(0);
  if (!X || !X->shape().isStatic())
    return;
  const ir::Shape &S = X->shape();
  const unsigned Rank = S.rank();
  if (Rank < 3)
    return;
  llvm::SmallVector<int64_t, 8> Perm;
  if (const std::vector<int64_t> Given = N.getInts("perm"); !Given.empty()) {
    if (Given.size() != Rank)
      return;
    Perm.assign(Given.begin(), Given.end());
  } else {
    for (unsigned I = Rank; I-- > 0;)
      Perm.push_back(I);
  }
  for (int64_t P : Perm)
    if (P < 0 || P >= int64_t(Rank))
      return;
  // Axes of length > 1 in their input order: a reshape.
  int64_t Last = -1;
  bool Reshape = true;
  for (int64_t P : Perm) {
    if (S.size(P) == 1)
      continue;
    if (P < Last)
      Reshape = false;
    Last = P;
  }
  if (Reshape)
    return;
  // One axis moved, the others in order: a batched 2-D transpose.
  for (unsigned From = 0; From < Rank; ++From) {
    llvm::SmallVector<int64_t, 8> Rest;
    for (int64_t P : Perm)
      if (P != int64_t(From))
        Rest.push_back(P);
    if (std::is_sorted(Rest.begin(), Rest.end()))
      return;
  }
  // Trailing axes that stay in place are copied as runs of their product
  // (ORT's suffix block); a run of one element is a copy per element.
  int64_t Run = 1;
  for (unsigned I = Rank; I-- > 0 && Perm[I] == int64_t(I);)
    Run *= S.size(I);
  if (Run > 1)
    return;
  W.StridedElements = static_cast<double>(X->numElements());
}

static void sliceWork(const ir::Node &N, OpWork &W) {
  // The experts of a stack a step reaches (perfc zoo's stand-in for the
  // router's pick): the expert kernels read their weights where they lie.
  if (stackSliced(N))
    return viewWork(N, W);
  W.BytesRead = bytesOf(N.output(0));
  for (unsigned I = 1; I < N.numInputs(); ++I)
    W.BytesRead += bytesOf(N.input(I));
}

/// ScatterElements and ScatterND combine updates into data when asked to.
static void scatterWork(const ir::Node &N, OpWork &W) {
  std::string Reduction = N.getString("reduction", "none");
  if (Reduction == "none")
    return;
  W.Flops = elems(N.input(2));
  W.Formula = "elems(updates) (" + Reduction + ")";
}

/// Axes a Resize changes; the spatial axes (all but N and C) when unknown.
static unsigned resizedAxes(const ir::Value *X, const ir::Value *Y) {
  if (!X || !Y || !X->shape().isRanked())
    return 0;
  const ir::Shape &SX = X->shape(), &SY = Y->shape();
  if (!SY.isRanked() || SX.rank() != SY.rank() || !SX.isStatic() ||
      !SY.isStatic())
    return SX.rank() > 2 ? SX.rank() - 2 : SX.rank();
  unsigned R = 0;
  for (unsigned I = 0; I < SX.rank(); ++I)
    R += SX.size(I) != SY.size(I);
  return R;
}

static void resizeWork(const ir::Node &N, OpWork &W) {
  std::string Mode = N.getString("mode", "nearest");
  double TapsPerAxis = 0;
  if (Mode == "linear" || Mode == "bilinear")
    TapsPerAxis = 2;
  else if (Mode == "cubic")
    TapsPerAxis = 4;
  if (TapsPerAxis == 0)
    return; // Nearest: a copy with precomputed indices.
  unsigned R = resizedAxes(N.input(0), N.output(0));
  double Taps = std::pow(TapsPerAxis, static_cast<double>(R));
  W.Flops = 2 * Taps * elems(N.output(0));
  W.Formula = "2*" + std::to_string(static_cast<int>(TapsPerAxis)) + "^" +
              std::to_string(R) + "*out_elems (" + Mode + ")";
}

static void rangeWork(const ir::Node &N, OpWork &W) {
  W.Flops = elems(N.output(0));
  W.Formula = "out_elems";
}

void registerDataMovementOps(OpRegistry &R) {
  for (const char *Op :
       {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Constant",
        "Optional", "OptionalGetElement"})
    R.add(Op, OpClass::DataMovement, &viewWork);
  for (const char *Op : {"Shape", "Size", "OptionalHasElement"})
    R.add(Op, OpClass::DataMovement, &metadataWork);
  R.add("Dropout", OpClass::DataMovement, &dropoutWork);
  for (const char *Op : {"ConstantOfShape", "EyeLike"})
    R.add(Op, OpClass::DataMovement, &writeOnlyWork);
  for (const char *Op : {"Gather", "GatherElements", "GatherND"})
    R.add(Op, OpClass::DataMovement, &gatherWork);
  R.add("Slice", OpClass::DataMovement, &sliceWork);
  R.add("Transpose", OpClass::DataMovement, &transposeWork);
  for (const char *Op : {"ScatterElements", "ScatterND"})
    R.add(Op, OpClass::DataMovement, &scatterWork);
  // roi, scales and sizes are constants of the op, not parameters.
  R.add("Resize", OpClass::DataMovement, &resizeWork,
        {0, inputBits({1, 2, 3})});
  R.add("Upsample", OpClass::DataMovement, &resizeWork, {0, inputBits({1})});
  R.add("Range", OpClass::DataMovement, &rangeWork);
  // Copies: every input read once, every output written; the defaults.
  for (const char *Op : {"Concat", "Split", "Pad", "Tile", "Expand", "Scatter",
                         "DepthToSpace", "SpaceToDepth", "Compress", "OneHot",
                         "Trilu", "ReverseSequence", "MaxUnpool"})
    R.add(Op, OpClass::DataMovement);
}

} // namespace perfc
