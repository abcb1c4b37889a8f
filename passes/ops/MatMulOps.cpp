//===- MatMulOps.cpp - Work of matrix products ----------------------------===//
//
// MatMul, Gemm, Einsum and their integer and quantised forms. They report
// MACs and Flops = 2 * MACs plus their elementwise epilogue.
//
// | Op            | MACs                             | epilogue flops        |
// |---------------|----------------------------------|-----------------------|
// | MatMul        | prod(broadcast batch) * M*K*N    | -                     |
// | MatMulInteger | as MatMul (zero points folded)   | -                     |
// | QLinearMatMul | as MatMul                        | 3/out elem (requant.) |
// | Gemm          | M*K*N (transA/transB honoured)   | M*N bias add if C;    |
// |               |                                  | M*N if alpha != 1;    |
// |               |                                  | elems(C) if beta != 1 |
// | Einsum        | 2 operands with a summed label:  | -                     |
// |               | product of all label sizes       |                       |
//
// 1-D MatMul operands are promoted as numpy does ([K] is [1, K] on the left
// and [K, 1] on the right). Zero points of the integer forms are folded by
// runtimes into row and column sums (O(M*K + K*N), negligible), so they add
// nothing. Requantising an output takes a multiply by the combined scale, an
// add of the zero point and a saturating convert: 3 flops.
//
// Einsum with one operand is a transpose, a diagonal or a sum: it costs one
// add per input element when some label is summed away, nothing otherwise.
// Two operands without a summed label are an elementwise or outer product:
// one multiply per element of the joint index space, no MACs. More than two
// operands are contracted pairwise, left to right, each pair costed as a
// two-operand einsum over the labels of both; an optimising runtime may pick
// a cheaper order, so this is an upper bound.
//
//===----------------------------------------------------------------------===//
#include "passes/OpRegistry.h"
#include "passes/ops/MatMulShapes.h"
#include "passes/ops/OpCounts.h"

#include "ir/Einsum.h"
#include "ir/Graph.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <array>
#include <string>

namespace perfc {

/// Size of a dimension after numpy broadcasting of A and B. An unknown size
/// (0) paired with a known one takes the known one: broadcasting requires
/// the unknown to be 1 or equal to it.
static int64_t broadcastDim(int64_t A, int64_t B) {
  if (A == 1)
    return B;
  if (B == 1)
    return A;
  return std::max(A, B);
}

namespace {
struct MatMulDims {
  double Batch = 0, M = 0, K = 0, N = 0;
  /// The part of Batch over which B is broadcast (its size-1 or missing
  /// batch dimensions): those products share one right-hand matrix.
  double SharedB = 1;
  /// A's innermost batch dimension where B is broadcast over it, else 1.
  double InnerShared = 1;
  double macs() const { return Batch * M * K * N; }
};
} // namespace

/// An operand's sizes (0 when unknown) as the product sees them: TransBatch
/// moves the first dimension behind the other batch dimensions and Trans
/// swaps the last two, as FusedMatMul's attributes do (ONNX Runtime,
/// onnxruntime/core/graph/contrib_ops/contrib_defs.cc). A vector is left
/// alone: numpy promotes it, no transpose applies.
static llvm::SmallVector<int64_t, 6> operandSizes(const ir::Shape &S,
                                                  bool TransBatch, bool Trans) {
  llvm::SmallVector<int64_t, 6> D;
  for (unsigned I = 0; I < S.rank(); ++I)
    D.push_back(S.size(static_cast<int>(I)));
  if (D.size() < 2)
    return D;
  if (TransBatch && D.size() > 2) {
    int64_t First = D.front();
    D.erase(D.begin());
    D.insert(D.end() - 1, First);
  }
  if (Trans)
    std::swap(D[D.size() - 1], D[D.size() - 2]);
  return D;
}

/// Dimensions of A x B under numpy matmul rules, after the transposes;
/// zeros when unknown.
static MatMulDims matMulDims(const ir::Value *A, const ir::Value *B,
                             const MatMulTransposes &T = {}) {
  MatMulDims D;
  if (!A || !B || !A->shape().isRanked() || !B->shape().isRanked())
    return D;
  const llvm::SmallVector<int64_t, 6> SA =
      operandSizes(A->shape(), T.TransBatchA, T.TransA);
  const llvm::SmallVector<int64_t, 6> SB =
      operandSizes(B->shape(), T.TransBatchB, T.TransB);
  if (SA.empty() || SB.empty())
    return D;
  const size_t RA = SA.size(), RB = SB.size();
  D.M = RA == 1 ? 1 : SA[RA - 2];
  D.K = SA[RA - 1];
  D.N = RB == 1 ? 1 : SB[RB - 1];
  if (D.K == 0)
    D.K = RB == 1 ? SB[0] : SB[RB - 2];
  // Batch dimensions: all but the last two, aligned from the right.
  size_t BatchA = RA > 2 ? RA - 2 : 0;
  size_t BatchB = RB > 2 ? RB - 2 : 0;
  size_t Rank = std::max(BatchA, BatchB);
  D.Batch = 1;
  for (size_t I = 0; I < Rank; ++I) {
    // I counts from the innermost batch dimension outwards.
    int64_t DA = I < BatchA ? SA[BatchA - 1 - I] : 1;
    int64_t DB = I < BatchB ? SB[BatchB - 1 - I] : 1;
    D.Batch *= static_cast<double>(broadcastDim(DA, DB));
    if (DB == 1) {
      D.SharedB *= static_cast<double>(DA);
      if (I == 0)
        D.InnerShared = static_cast<double>(DA);
    }
  }
  return D;
}

static GemmDims gemmDims(const MatMulDims &D) {
  return {D.Batch, D.M, D.N, D.K};
}

/// The GEMM a runtime runs for A x B: the products that share B's matrix
/// (all of them where B has no batch dimensions, a weight) are rows of one
/// product ([b, s, h] x [h, n] is a [b*s, h] x [h, n] GEMM: ONNX Runtime's
/// MatMul helper, cuBLAS callers, torch.matmul all fold them), not b
/// products of s rows. So are the heads of a query that share one key
/// ([b, A, s, d] x [b, 1, d, t]: FlashMLA and FlashInfer's decoding
/// kernels take a group's heads as the rows of one tile).
static GemmDims runtimeGemm(const MatMulDims &D, const ir::Value *B) {
  GemmDims G = gemmDims(D);
  if (G.Batch > 1 && D.SharedB > 1) {
    G.M *= D.SharedB;
    G.Batch /= D.SharedB;
    // Not a weight's (whose rows are tokens): the innermost batch axis of
    // an attention product holds the heads.
    if (B && B->shape().isRanked() && B->shape().rank() > 2)
      G.FoldedHeads = D.InnerShared;
  }
  return G;
}

static void matMulWork(const ir::Node &N, OpWork &W) {
  const MatMulDims D = matMulDims(N.input(0), N.input(1));
  W.Macs = D.macs();
  W.Gemm = runtimeGemm(D, N.input(1));
  W.Flops = 2 * W.Macs;
  W.Formula = "2*batch*M*K*N";
}

GemmDims matMulGemmDims(const ir::Value *A, const ir::Value *B,
                        const MatMulTransposes &T) {
  const MatMulDims D = matMulDims(A, B, T);
  // A's batch folds into its rows only where they are contiguous.
  return T.TransA || T.TransBatchA ? gemmDims(D) : runtimeGemm(D, B);
}

static void qLinearMatMulWork(const ir::Node &N, OpWork &W) {
  // Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, ...
  const MatMulDims D = matMulDims(N.input(0), N.input(3));
  W.Macs = D.macs();
  W.Gemm = runtimeGemm(D, N.input(3));
  W.Flops = 2 * W.Macs + RequantizeFlops * elems(N.output(0));
  W.Formula = "2*batch*M*K*N + 3*out_elems (requantize)";
}

static void gemmWork(const ir::Node &N, OpWork &W) {
  const ir::Value *A = N.input(0), *B = N.input(1), *C = N.input(2);
  if (!A || !B)
    return;
  bool TransA = N.getInt("transA", 0) != 0;
  bool TransB = N.getInt("transB", 0) != 0;
  const ir::Shape &SA = A->shape(), &SB = B->shape();
  // size() reads unranked or too-short shapes as 0, so bad ranks cost 0.
  double M = SA.size(TransA ? -1 : -2);
  double K = SA.size(TransA ? -2 : -1);
  double Nn = SB.size(TransB ? -2 : -1);
  if (K == 0)
    K = SB.size(TransB ? -1 : -2);
  W.Macs = M * K * Nn;
  W.Gemm = {1, M, Nn, K};
  W.Flops = 2 * W.Macs;
  W.Formula = "2*M*K*N";
  if (N.getFloat("alpha", 1.0) != 1.0) {
    W.Flops += M * Nn;
    W.Formula += " + M*N (alpha)";
  }
  if (!C)
    return;
  W.Flops += M * Nn;
  W.Formula += " + M*N (bias)";
  if (N.getFloat("beta", 1.0) != 1.0) {
    W.Flops += elems(C);
    W.Formula += " + elems(C) (beta)";
  }
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

constexpr unsigned NumIds = ir::EinsumNumIds;
constexpr unsigned EllipsisBase = ir::EinsumEllipsisBase;
using LabelSet = std::array<bool, NumIds>;

namespace {
/// An einsum bound to its operands' shapes: the label sets of each operand
/// and of the output, and every label's size (0 when unknown).
struct BoundEinsum {
  llvm::SmallVector<LabelSet, 3> Inputs;
  LabelSet Output{};
  std::array<int64_t, NumIds> Size{};
};
} // namespace

static bool bindEinsum(const ir::EinsumEquation &Spec, const ir::Node &N,
                       BoundEinsum &B) {
  if (Spec.Inputs.size() != N.numInputs())
    return false;
  unsigned MaxEll = 0;
  std::array<unsigned, NumIds> Uses{};
  for (unsigned I = 0; I < Spec.Inputs.size(); ++I) {
    const ir::EinsumTerm &T = Spec.Inputs[I];
    const ir::Value *V = N.input(I);
    if (!V || !V->shape().isRanked())
      return false;
    const ir::Shape &S = V->shape();
    bool FitsRank = T.EllipsisAt >= 0 ? S.rank() >= T.Letters.size()
                                      : S.rank() == T.Letters.size();
    if (!FitsRank)
      return false;
    unsigned Ell = S.rank() - T.Letters.size();
    MaxEll = std::max(MaxEll, Ell);
    llvm::SmallVector<unsigned, 8> Ids = ir::einsumTermIds(T, Ell);
    LabelSet Set{};
    for (unsigned D = 0; D < Ids.size(); ++D) {
      unsigned Id = Ids[D];
      int64_t Dim = S.size(D);
      B.Size[Id] = Set[Id] || Uses[Id] ? broadcastDim(B.Size[Id], Dim) : Dim;
      Set[Id] = true;
      ++Uses[Id];
    }
    B.Inputs.push_back(Set);
  }
  if (Spec.ExplicitOutput) {
    for (unsigned Id : ir::einsumTermIds(Spec.Output, MaxEll))
      B.Output[Id] = true;
    return true;
  }
  // Implicit output: the letters used once, and every ellipsis dimension.
  for (unsigned Id = 0; Id < NumIds; ++Id)
    B.Output[Id] = Id >= EllipsisBase ? Uses[Id] > 0 : Uses[Id] == 1;
  return true;
}

/// "b*i*j*k": the labels of a set, ellipsis dimensions as "...".
static std::string labelProduct(const LabelSet &Set) {
  std::string S;
  bool Ellipsis = false;
  for (unsigned Id = 0; Id < NumIds; ++Id) {
    if (!Set[Id])
      continue;
    if (Id >= EllipsisBase) {
      Ellipsis = true;
      continue;
    }
    S += (S.empty() ? "" : "*") + std::string(1, static_cast<char>(Id));
  }
  if (Ellipsis)
    S = S.empty() ? "..." : "...*" + S;
  return S.empty() ? "1" : S;
}

static double setProduct(const LabelSet &Set, const BoundEinsum &B) {
  double P = 1;
  for (unsigned Id = 0; Id < NumIds; ++Id)
    if (Set[Id])
      P *= static_cast<double>(B.Size[Id]);
  return P;
}

/// One operand: a sum over the labels it drops, or a pure permutation.
static void einsumUnaryWork(const ir::Node &N, const BoundEinsum &B,
                            OpWork &W) {
  for (unsigned Id = 0; Id < NumIds; ++Id)
    if (B.Inputs[0][Id] && !B.Output[Id]) {
      W.Flops = elems(N.input(0));
      W.Formula = "in_elems (sum)";
      return;
    }
}

/// Two or more operands, contracted pairwise from the left.
static void einsumPairwiseWork(const BoundEinsum &B, OpWork &W) {
  LabelSet Current = B.Inputs[0];
  double Multiplies = 0;
  std::string Formula;
  for (unsigned K = 1; K < B.Inputs.size(); ++K) {
    // Labels still needed after this pair: later operands and the output.
    LabelSet Needed = B.Output;
    for (unsigned L = K + 1; L < B.Inputs.size(); ++L)
      for (unsigned Id = 0; Id < NumIds; ++Id)
        Needed[Id] = Needed[Id] || B.Inputs[L][Id];
    LabelSet Pair{};
    bool Contracts = false;
    for (unsigned Id = 0; Id < NumIds; ++Id) {
      Pair[Id] = Current[Id] || B.Inputs[K][Id];
      Contracts = Contracts || (Pair[Id] && !Needed[Id]);
      Current[Id] = Pair[Id] && Needed[Id];
    }
    double Cost = setProduct(Pair, B);
    (Contracts ? W.Macs : Multiplies) += Cost;
    Formula += (Formula.empty() ? "" : " + ") +
               std::string(Contracts ? "2*" : "") + labelProduct(Pair);
  }
  W.Flops = 2 * W.Macs + Multiplies;
  W.Formula = Formula;
}

/// A two-operand contraction as the batched GEMM a runtime lowers it to
/// (ONNX Runtime's Einsum and torch.einsum permute the operands and call a
/// batched matrix multiply): labels of both operands and the output are the
/// batch, those of one operand and the output M or N, those of both
/// operands and not the output K. Labels summed within one operand leave
/// the dims invalid (the roofline then skips tile quantisation).
static GemmDims einsumGemmDims(const BoundEinsum &B) {
  GemmDims D{1, 1, 1, 1};
  for (unsigned Id = 0; Id < NumIds; ++Id) {
    const bool InA = B.Inputs[0][Id], InB = B.Inputs[1][Id];
    if (!InA && !InB)
      continue;
    const double Size = static_cast<double>(B.Size[Id]);
    if (InA && InB)
      (B.Output[Id] ? D.Batch : D.K) *= Size;
    else if (!B.Output[Id])
      return GemmDims();
    else
      (InA ? D.M : D.N) *= Size;
  }
  return D;
}

static void einsumWork(const ir::Node &N, OpWork &W) {
  BoundEinsum B;
  // A malformed equation or unknown ranks cost nothing rather than a guess.
  const llvm::Optional<ir::EinsumEquation> Spec =
      ir::parseEinsum(N.getString("equation"));
  if (!Spec || !bindEinsum(*Spec, N, B))
    return;
  if (B.Inputs.size() == 1)
    einsumUnaryWork(N, B, W);
  else
    einsumPairwiseWork(B, W);
  if (B.Inputs.size() == 2 && W.Macs > 0)
    W.Gemm = einsumGemmDims(B);
}

void registerMatMulOps(OpRegistry &R) {
  R.add("MatMul", OpClass::Gemm, &matMulWork);
  // Either operand may be the constant (weight) one.
  R.add("MatMulInteger", OpClass::Gemm, &matMulWork,
        {inputBits({0, 1}), inputBits({2, 3})});
  R.add("QLinearMatMul", OpClass::Gemm, &qLinearMatMulWork,
        {inputBits({0, 3}), inputBits({1, 2, 4, 5, 6, 7})});
  R.add("Gemm", OpClass::Gemm, &gemmWork);
  R.add("Einsum", OpClass::Gemm, &einsumWork);
}

} // namespace perfc
