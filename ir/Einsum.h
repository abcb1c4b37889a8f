//===- Einsum.h - Einsum equations: parsing and output shapes ---*- C++ -*-===//
//
// An einsum equation ("bij,bjk->bik", "...ij,...jk", "ii") names every
// dimension of its operands by a letter; "..." stands for the dimensions a
// term does not name, broadcast across operands as numpy does. The frontend
// infers output shapes from it (ONNX 1.12's inference gives only the rank)
// and the cost of an Einsum node follows from the size of each label.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_IR_EINSUM_H
#define PERFC_IR_EINSUM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace perfc::ir {

/// Letters are label ids below EinsumEllipsisBase (their ASCII codes); the
/// dimensions an ellipsis stands for get ids EinsumEllipsisBase + k, k
/// counting from the innermost, so that broadcasting aligns them across
/// operands.
constexpr unsigned EinsumEllipsisBase = 128;
constexpr unsigned EinsumNumIds = 256;

struct EinsumTerm {
  llvm::SmallVector<unsigned, 8> Letters;
  int EllipsisAt = -1; ///< Index in Letters the "..." precedes; -1: none.
};

struct EinsumEquation {
  llvm::SmallVector<EinsumTerm, 3> Inputs;
  EinsumTerm Output;
  bool ExplicitOutput = false;
};

/// Parses an equation (spaces anywhere, as numpy accepts them); None when
/// a term holds anything but letters and one "...".
llvm::Optional<EinsumEquation> parseEinsum(llvm::StringRef Text);

/// The label id of every dimension of a term whose ellipsis covers
/// EllipsisRank dimensions.
llvm::SmallVector<unsigned, 8> einsumTermIds(const EinsumTerm &T,
                                             unsigned EllipsisRank);

/// Dims of the output from the operands' dims (-1: unknown): each label
/// takes its size broadcast over every operand that names it (1 gives way
/// to any size); an implicit output is the ellipsis dimensions, then the
/// letters used once in ASCII order. None when the operand count or a rank
/// does not fit the equation, or two sizes of a label conflict.
llvm::Optional<llvm::SmallVector<int64_t, 8>>
einsumOutputDims(const EinsumEquation &E,
                 llvm::ArrayRef<llvm::SmallVector<int64_t, 8>> InputDims);

} // namespace perfc::ir

#endif // PERFC_IR_EINSUM_H
