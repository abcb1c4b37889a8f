//===- MatMulShapes.h - Dimensions of a matrix product ---------*- C++ -*-===//
//
// MatMul's dimensions under numpy rules, shared with the ops that are a
// MatMul with transposes (ONNX Runtime's FusedMatMul).
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_OPS_MATMULSHAPES_H
#define PERFC_PASSES_OPS_MATMULSHAPES_H

#include "costmodels/OpWork.h"

namespace perfc {
namespace ir {
class Value;
}

/// Transposes applied to the operands before the product: Trans swaps the
/// last two dimensions, TransBatch moves the first one behind the other
/// batch dimensions (FusedMatMul's transA, transB, transBatchA,
/// transBatchB).
struct MatMulTransposes {
  bool TransA = false, TransB = false;
  bool TransBatchA = false, TransBatchB = false;
};

/// The batched GEMM A x B is: batch = the broadcast batch dimensions, M, N,
/// K; MACs = Batch * M * N * K. Where B has no batch dimensions (a weight)
/// and A is not transposed, A's batch is rows of one GEMM (Batch 1), as
/// runtimes run it. Unknown sizes read as 0.
GemmDims matMulGemmDims(const ir::Value *A, const ir::Value *B,
                        const MatMulTransposes &T);

} // namespace perfc

#endif // PERFC_PASSES_OPS_MATMULSHAPES_H
