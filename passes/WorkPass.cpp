//===- WorkPass.cpp - Per-op work over a whole graph ----------------------===//
#include "passes/WorkPass.h"

#include "ir/Graph.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace perfc {

/// The type an op computes in: that of its first numeric input (a Cast or a
/// quantize op computes in its source type), else of its first output.
static ir::DType computeType(const ir::Node &N) {
  for (const ir::Value *In : N.inputs())
    if (In && (isFloatingPoint(In->type()) || isInteger(In->type())))
      return In->type();
  for (const ir::Value *Out : N.outputs())
    if (Out && Out->type() != ir::DType::Undefined)
      return Out->type();
  return ir::DType::F32;
}

OpWork computeNodeWork(const ir::Node &N, const OpInfo *Info) {
  OpWork W;
  if (Info)
    W.Class = Info->Class;
  W.Type = computeType(N);
  llvm::SmallPtrSet<const ir::Value *, 4> Seen;
  for (const ir::Value *In : N.inputs())
    if (In && Seen.insert(In).second)
      W.BytesRead += static_cast<double>(In->bytes());
  for (const ir::Value *Out : N.outputs())
    if (Out)
      W.BytesWritten += static_cast<double>(Out->bytes());
  if (Info && Info->Fn)
    Info->Fn(N, W);
  return W;
}

/// Whether constant input I of a node is a parameter (see WorkPass.h).
static bool isParameter(const ir::Value &V, const OpInfo *Info, unsigned I) {
  if (V.kind() != ir::ValueKind::Initializer)
    return false;
  uint32_t Bit = I < 32 ? 1u << I : 0;
  if (Info && (Info->Roles.NotParameters & Bit))
    return false;
  if (Info && (Info->Roles.Weights & Bit))
    return true;
  return isFloatingPoint(V.type()) && V.numElements() >= 2;
}

/// Larger of two works, by arithmetic first, then by bytes.
static const OpWork &costlier(const OpWork &A, const OpWork &B) {
  if (A.Flops != B.Flops)
    return A.Flops > B.Flops ? A : B;
  return A.bytes() >= B.bytes() ? A : B;
}

/// W repeated Times times. Trip counts come from the file (up to 2^63 per
/// Loop, nested up to 32 deep), so the products may pass the range of a
/// double. They saturate at 1e300 rather than become inf, which JSON cannot
/// carry; the cap leaves room to sum two million such nodes without inf.
/// Saturated tells the caller to warn.
static OpWork scaled(OpWork W, double Times, bool &Saturated) {
  for (double *X : {&W.Macs, &W.Flops, &W.BytesRead, &W.BytesWritten}) {
    *X *= Times;
    if (!(*X <= 1e300)) {
      *X = 1e300;
      Saturated = true;
    }
  }
  return W;
}

/// Work of If/Loop/Scan from their bodies (see the header for the rules).
static OpWork controlFlowWork(const ir::Node &N, const OpRegistry &Registry,
                              std::vector<Warning> &Warnings) {
  OpWork W;
  W.Class = OpClass::Control;
  bool Saturated = false;
  std::vector<OpWork> Bodies;
  for (const auto &Sub : N.subgraphs()) {
    GraphWork SubWork = computeWork(*Sub, Registry);
    for (Warning &Wn : SubWork.Warnings)
      Warnings.push_back(std::move(Wn));
    Bodies.push_back(SubWork.Total);
  }
  if (Bodies.empty())
    return W;
  llvm::StringRef Op = N.opType();
  if (Op == "If") {
    const OpWork *Max = &Bodies.front();
    for (const OpWork &B : Bodies)
      Max = &costlier(*Max, B);
    W += *Max;
    W.Formula = "max(then_branch, else_branch)";
  } else if (Op == "Loop") {
    const ir::Value *M = N.input(0);
    double Trips = 1;
    if (M && M->data() && !M->data()->Ints.empty() && M->data()->Ints[0] >= 0) {
      Trips = static_cast<double>(M->data()->Ints[0]);
      W.Formula = "body * trip_count";
    } else {
      Warnings.push_back(
          {N.name().str(),
           "Loop trip count is not a constant: body costed once"});
      W.Formula = "body * 1 (trip count unknown)";
    }
    W += scaled(Bodies.front(), Trips, Saturated);
  } else { // Scan
    int64_t Axis = 0;
    std::vector<int64_t> Axes = N.getInts("scan_input_axes");
    if (!Axes.empty())
      Axis = Axes.front();
    int64_t NumScan = N.getInt("num_scan_inputs", 1);
    // Scan inputs are the last num_scan_inputs inputs (opset 9+).
    const ir::Value *First =
        N.numInputs() >= NumScan ? N.input(N.numInputs() - NumScan) : nullptr;
    double Trips = 1;
    if (First && First->shape().isRanked()) {
      int64_t Len = First->shape().size(static_cast<int>(Axis));
      if (Len > 0)
        Trips = static_cast<double>(Len);
    }
    W += scaled(Bodies.front(), Trips, Saturated);
    W.Formula = "body * scan_length";
  }
  if (Saturated)
    Warnings.push_back({N.name().str(),
                        "the work of its body times the trip count passes "
                        "the range perfc counts in: saturated at 1e300"});
  W.Params = 0;
  return W;
}

GraphWork computeWork(const ir::Graph &G, const OpRegistry &Registry) {
  GraphWork Result;
  Result.Nodes.resize(G.numNodes());
  llvm::DenseSet<const ir::Value *> CountedParams;
  bool Saturated = false;
  for (const auto &NodePtr : G.nodes()) {
    const ir::Node &N = *NodePtr;
    OpWork &W = Result.Nodes[N.index()];
    const OpInfo *Info = Registry.lookup(N.domain(), N.opType());
    if (!N.domain().empty() && !Info) {
      Result.Warnings.push_back(
          {N.name().str(), "op '" + N.domain().str() + ":" + N.opType().str() +
                               "' is outside the standard op set: costed as "
                               "zero"});
      W.Class = OpClass::Other;
      continue;
    }
    if (!Info)
      Result.Warnings.push_back(
          {N.name().str(), "no work formula for op '" + N.opType().str() +
                               "': only its bytes are counted"});
    if (Info && Info->Class == OpClass::Control && !N.subgraphs().empty())
      W = controlFlowWork(N, Registry, Result.Warnings);
    else
      W = computeNodeWork(N, Info);
    for (unsigned I = 0; I < N.numInputs(); ++I) {
      const ir::Value *In = N.input(I);
      if (!In || !isParameter(*In, Info, I) || CountedParams.contains(In))
        continue;
      CountedParams.insert(In);
      ++W.ParamTensors;
      // The frontend and Graph::verify bound the initializers' total, so
      // this cannot wrap for a graph that passed them; a graph built
      // otherwise gets a count saturated at MaxTensorSize and a warning,
      // never a wrapped one. Total + W stays within MaxTensorSize.
      const uint64_t Room = ir::MaxTensorSize - Result.Total.Params - W.Params;
      const uint64_t Count = In->numElements();
      if (Count > Room) {
        if (!Saturated)
          Result.Warnings.push_back(
              {N.name().str(), "the parameter count passes 2^62 at '" +
                                   In->name().str() +
                                   "': the total is saturated at 2^62"});
        Saturated = true;
        W.Params += Room;
      } else {
        W.Params += Count;
      }
    }
    Result.Total += W;
  }
  return Result;
}

} // namespace perfc
