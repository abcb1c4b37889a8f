//===- TrainKernels.cpp - One rank's share of a kernel, timed -------------===//
#include "passes/Trainer.h"

#include "passes/TpShard.h"

#include <algorithm>

namespace perfc {
namespace trainstep {

double Trainer::byteScale(ir::DType Stored) const {
  const double From =
      ir::isFloatingPoint(Stored) ? double(ir::byteSize(Stored)) : 4.0;
  return ir::byteSize(trainingStorageType(O.DType)) / From;
}

double Trainer::elementBytes() const {
  return double(ir::byteSize(trainingStorageType(O.DType)));
}

double Trainer::tpScale(unsigned Node) const {
  return tpShare(Blocks, Node, O.Tp, O.SequenceParallel);
}

OpWork Trainer::shard(const OpWork &W, unsigned Node) const {
  OpWork S =
      shardWork(W, Blocks.Tp[Node], O.Tp, tpScale(Node), byteScale(W.Type));
  if (O.Cp > 1)
    shardContext(S, Node);
  if (Blocks.Expert[Node]) {
    if (O.ExpertCapacity != 1)
      scaleExpertTokens(S);
    if (O.Ep > 1)
      shardExperts(S);
  }
  return S;
}

void Trainer::scaleExpertTokens(OpWork &S) const {
  const double F = O.ExpertCapacity;
  const double Weight = weightBytes(S);
  S.Macs *= F;
  S.Flops *= F;
  S.BytesRead = (S.BytesRead - Weight) * F + Weight;
  S.BytesWritten *= F;
  S.SideBytesRead *= F;
  S.SideBytesWritten *= F;
  S.LayoutBytes *= F;
  if (S.Gemm.valid())
    S.Gemm.M *= F;
}

double Trainer::weightBytes(const OpWork &W) const {
  return W.Params > 0 && W.Gemm.valid()
             ? std::min(W.BytesRead,
                        W.Gemm.Batch * W.Gemm.K * W.Gemm.N * elementBytes())
             : 0;
}

void Trainer::shardExperts(OpWork &S) const {
  const double Ep = O.Ep;
  const double Weight = weightBytes(S);
  S.BytesRead -= Weight * (1 - 1 / Ep);
  S.Params /= Ep;
  if (S.Gemm.valid()) {
    S.Gemm.Batch /= Ep;
    S.Gemm.M *= Ep;
  }
}

void Trainer::shardContext(OpWork &S, unsigned Node) const {
  const double Cp = O.Cp;
  const double Weight = weightBytes(S);
  S.Macs /= Cp;
  S.Flops /= Cp;
  S.BytesRead = (S.BytesRead - Weight) / Cp + Weight;
  S.BytesWritten /= Cp;
  S.SideBytesRead /= Cp;
  S.SideBytesWritten /= Cp;
  S.LayoutBytes /= Cp;
  // The all-to-all gives an attention core's products all the tokens of
  // 1 / Cp of the heads: fewer products, not fewer rows.
  if (S.Gemm.valid() && O.CpComm == ContextExchange::AllToAll &&
      Blocks.AttentionCore[Node])
    S.Gemm.Batch /= Cp;
  else if (S.Gemm.valid())
    S.Gemm.M /= Cp;
}

cost::TimeOptions Trainer::timeOptions(ir::DType Type, bool Notes) const {
  cost::TimeOptions T;
  // The step reads times only; tiling notes would be formatted for every
  // GEMM of every strategy the planner tries.
  T.Notes = Notes;
  if (ir::isFloatingPoint(Type))
    T.ComputeType = trainingStorageType(O.DType);
  T.Layout = O.Layout;
  return T;
}

bool Trainer::fp8Gemm(const Kernel &K) const {
  return isFp8Recipe(O.DType) && !(A.FlashAttention && K.Attention) &&
         Blocks.inBlock(K.Head) &&
         isFp8Gemm(*G.nodes()[K.Head], Work.Nodes[K.Head], Plan);
}

Fp8GemmTime Trainer::fp8GemmTiming(const OpWork &W, bool Backward,
                                   bool Notes) const {
  return fp8GemmTime(W, Backward, O.DType, Dev, timeOptions(W.Type, Notes));
}

double Trainer::forwardSeconds(const Kernel &K) const {
  const OpWork W = shard(kernelWork(K, A.FlashAttention), K.Head);
  if (fp8Gemm(K))
    return fp8GemmTiming(W, /*Backward=*/false, false).seconds();
  return time(W) + ringMergeSeconds(K, W);
}

double Trainer::ringMergeSeconds(const Kernel &K, const OpWork &W) const {
  if (!(A.FlashAttention && K.Attention) || O.Cp == 1 ||
      O.CpComm != ContextExchange::Ring)
    return 0;
  OpWork Merge;
  Merge.Class = OpClass::Elementwise;
  Merge.Type = W.Type;
  Merge.BytesRead = 2 * W.BytesWritten;
  Merge.BytesWritten = W.BytesWritten;
  Merge.Flops = 4 * W.BytesWritten / elementBytes();
  return (O.Cp - 1) * time(Merge);
}

double Trainer::tpExchange(const ir::Value *V) const {
  const double Bytes = V->numElements() * elementBytes();
  if (!O.SequenceParallel)
    return allReduce(Bytes, TpGroup);
  return cost::collectiveSeconds(cost::Collective::ReduceScatter, Bytes,
                                 TpGroup) +
         cost::collectiveSeconds(cost::Collective::AllGather, Bytes, TpGroup);
}

double Trainer::valueBytes(const ir::Value *V, double Scale) const {
  const double Bytes = static_cast<double>(V->bytes());
  return (ir::isFloatingPoint(V->type()) ? Bytes * byteScale(V->type())
                                         : Bytes) *
         Scale;
}

OpWork Trainer::flashBackward(const OpWork &Fwd) {
  OpWork B = Fwd;
  B.Macs *= 2.5;
  B.Flops *= 2.5;
  B.BytesRead = Fwd.BytesRead + 2 * Fwd.BytesWritten;
  B.BytesWritten = Fwd.BytesRead;
  B.Formula = "FlashAttention backward: 2.5x the forward's FLOPs; reads "
              "Q, K, V, O, dO, writes dQ, dK, dV";
  return B;
}

bool Trainer::inFlashKernel(unsigned Node) const {
  if (!A.FlashAttention)
    return false;
  const int K = Plan.KernelOf[Node];
  return K >= 0 && Plan.Kernels[K].Attention;
}

double Trainer::logSumExpBytes(const Kernel &K) const {
  const ir::Value *Scores = softmaxInput(K);
  if (!Scores)
    return 0;
  const ir::Shape &Sh = Scores->shape();
  const int64_t Cols = Sh.rank() ? Sh[Sh.rank() - 1].Value : 1;
  return Cols > 0 ? 4.0 * double(Scores->numElements()) / double(Cols) : 0;
}

OpWork Trainer::horizontalGemm(const Kernel &K,
                               llvm::SmallVectorImpl<unsigned> &Joined) const {
  OpWork W = Work.Nodes[K.Head];
  const ir::Node &Head = *G.nodes()[K.Head];
  if (!W.Gemm.valid() || Head.numInputs() == 0 || !Head.input(0))
    return W;
  // Projections of one input: the same data read as the head's first
  // operand (an attention's two products never share theirs).
  const ir::Value *Shared = Plan.dataRoot(Head.input(0));
  for (unsigned M : K.Members) {
    const OpWork &Other = Work.Nodes[M];
    const ir::Node &N = *G.nodes()[M];
    if (M == K.Head || !Other.Gemm.valid() || Other.Macs <= 0 ||
        Other.Gemm.M != W.Gemm.M || Other.Gemm.K != W.Gemm.K ||
        Other.Gemm.Batch != W.Gemm.Batch || N.numInputs() == 0 || !N.input(0) ||
        Plan.dataRoot(N.input(0)) != Shared)
      continue;
    // What the other GEMM adds: its weight (a K x N share of its reads)
    // and its output; the shared input is read once.
    const double Input = Other.Gemm.Batch * Other.Gemm.M * Other.Gemm.K;
    const double Weight = Other.Gemm.K * Other.Gemm.N;
    W.BytesRead += Other.BytesRead * Weight / (Input + Weight);
    W.BytesWritten += Other.BytesWritten;
    W.Macs += Other.Macs;
    W.Flops += Other.Flops;
    W.Gemm.N += Other.Gemm.N;
    W.Params += Other.Params;
    Joined.push_back(M);
  }
  return W;
}

double Trainer::fusedByteRatio(const Kernel &K) const {
  double FusedBytes = 0;
  for (unsigned M : K.Members)
    FusedBytes += Work.Nodes[M].bytes();
  return FusedBytes > 0 ? K.Work.bytes() / FusedBytes : 1;
}

double Trainer::kernelBackward(const Kernel &K, std::string *Explain) const {
  // Tiling notes and explanations only where a caller reads them.
  const bool Notes = Explain != nullptr;
  const unsigned Head = K.Head;
  if (A.FlashAttention && K.Attention) {
    const OpWork Fwd = kernelWork(K, true);
    const OpWork W = shard(flashBackward(Fwd), Head);
    const cost::OpTime T = timing(W, Notes);
    if (Explain)
      *Explain = W.Formula + ": " + cost::explain(T);
    // The query gradient, accumulated over the ring's steps: the size of
    // the forward's output.
    return T.Seconds + ringMergeSeconds(K, shard(Fwd, Head));
  }
  double Seconds = 0;
  const double Ratio = fusedByteRatio(K);
  OpWork Rest;
  Rest.Class = OpClass::Elementwise;
  Rest.Type = K.Work.Type;
  bool HasRest = false;
  llvm::SmallVector<unsigned, 2> Joined;
  const OpWork Product = horizontalGemm(K, Joined);
  for (unsigned M : K.Members) {
    if (!Back.NeedsGrad[M] || llvm::is_contained(Joined, M))
      continue;
    const OpWork &B = Back.Work[M];
    if (B.IsView)
      continue;
    if (M == Head && B.Macs > 0) {
      const double Grads =
          Work.Nodes[M].Macs > 0 ? B.Macs / Work.Nodes[M].Macs : 0;
      const bool Fp8 = fp8Gemm(K);
      const Fp8GemmTime F8 =
          Fp8 ? fp8GemmTiming(shard(Product, M), /*Backward=*/true, Notes)
              : Fp8GemmTime{timing(shard(Product, M), Notes), {}};
      const cost::OpTime &T = F8.Gemm, &Cast = F8.Cast;
      Seconds += Grads * T.Seconds + Cast.Seconds;
      if (Explain)
        *Explain +=
            llvm::formatv("{0} product{1} of the forward's size{2} (the "
                          "gradients of its operands that need one), each {3}",
                          formatCount(Grads), Grads == 1 ? "" : "s",
                          Joined.empty()
                              ? std::string()
                              : llvm::formatv(", with the {0} GEMM{1} fused "
                                              "beside it (N {2})",
                                              Joined.size(),
                                              Joined.size() == 1 ? "" : "s",
                                              int64_t(Product.Gemm.N))
                                    .str(),
                          cost::explain(T))
                .str();
      if (Explain && Fp8)
        *Explain += "; plus the FP8 cast of the output's gradient (FP8 "
                    "recipe): " +
                    cost::explain(Cast);
      continue;
    }
    OpWork S = shard(B, M);
    Rest.Flops += S.Flops;
    Rest.BytesRead += S.BytesRead * Ratio;
    Rest.BytesWritten += S.BytesWritten * Ratio;
    if (M == Head)
      Rest.Class = B.Class;
    HasRest = true;
  }
  if (!HasRest)
    return Seconds;
  const cost::OpTime T = timing(Rest, Notes);
  if (Explain)
    *Explain += (Explain->empty() ? "" : "; plus ") +
                std::string("one kernel for the gradients of ") +
                (K.Members.size() > 1 ? "its fused members" : "the op") + ": " +
                cost::explain(T);
  return Seconds + T.Seconds;
}

double Trainer::keyValueElements(const ir::Value *V) {
  double Least = double(V->numElements());
  while (const ir::Node *P = V->producer()) {
    const llvm::StringRef Op = P->opType();
    if (!(Op == "Reshape" || Op == "Transpose" || Op == "Expand" ||
          Op == "Unsqueeze" || Op == "Squeeze" || Op == "Tile" ||
          Op == "Flatten" || Op == "Identity") ||
        P->numInputs() == 0 || !P->input(0))
      break;
    V = P->input(0);
    Least = std::min(Least, double(V->numElements()));
  }
  return Least;
}

} // namespace trainstep
} // namespace perfc
