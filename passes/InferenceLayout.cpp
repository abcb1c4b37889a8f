//===- InferenceLayout.cpp - The devices and analysis of a split ----------===//
#include "passes/InferenceLayout.h"

namespace perfc {

llvm::Error placeSplit(PredictOptions &O, const hw::Cluster &C, SplitDegrees D,
                       cost::CommProtocol Protocol, SplitOptionNames Names) {
  const auto GroupOf =
      [&](unsigned N, llvm::StringRef Name,
          llvm::Optional<cost::CommGroup> &Into) -> llvm::Error {
    auto Group = tensorParallelGroup(C, N, Name);
    if (!Group)
      return Group.takeError();
    Group->Protocol = Protocol;
    Into = std::move(*Group);
    return llvm::Error::success();
  };
  if (D.Tp > 1)
    if (llvm::Error E = GroupOf(D.Tp, Names.Tp, O.TensorParallel))
      return E;
  if (D.Ep > 1)
    if (llvm::Error E = GroupOf(D.Ep, Names.Ep, O.ExpertParallel))
      return E;
  if (D.Pp > 1) {
    auto Pipe = pipelineStages(C, D.Pp, D.Tp);
    if (!Pipe)
      return Pipe.takeError();
    O.PipelineParallel = std::move(*Pipe);
  }
  return llvm::Error::success();
}

llvm::Expected<llvm::Optional<InferenceSplit>> analyzeSplit(const ir::Graph &G,
                                                            SplitDegrees D) {
  if (D.whole())
    return llvm::None;
  // One analysis: the split's check makes it, the stages' check reads it.
  auto S = D.Tp > 1 ? analyzeTensorParallel(G, D.Tp)
           : D.Ep > 1
               ? analyzeExpertParallel(G, D.Ep)
               : llvm::Expected<InferenceSplit>(analyzeInferenceSplit(G));
  if (!S)
    return S.takeError();
  if (llvm::Error E = checkPipelineParallel(G, *S, D.Pp))
    return std::move(E);
  return llvm::Optional<InferenceSplit>(std::move(*S));
}

} // namespace perfc
