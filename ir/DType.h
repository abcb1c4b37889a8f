//===- DType.h - Tensor element types ---------------------------*- C++ -*-===//
//
// Element types of IR tensors. The IR keeps its own enumeration so that it
// knows nothing of ONNX; the frontend maps ONNX's TensorProto types onto it.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_IR_DTYPE_H
#define PERFC_IR_DTYPE_H

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace perfc::ir {

enum class DType : uint8_t {
  Undefined,
  Bool,
  I8,
  U8,
  I16,
  U16,
  I32,
  U32,
  I64,
  U64,
  F8E4M3,
  F8E5M2,
  F16,
  BF16,
  F32,
  TF32, ///< A compute type only; storage is F32.
  F64,
  C64,
  C128,
  String,
};

/// Size of one element in bits; 0 for Undefined and String (strings have no
/// fixed size: perfc counts them as pointers, see byteSize).
unsigned bitWidth(DType T);

/// Bytes one element occupies in memory. Strings count as 8 bytes (a
/// pointer), which is what a runtime moves when it copies a string tensor.
unsigned byteSize(DType T);

bool isFloatingPoint(DType T);
bool isInteger(DType T);
/// The 8-bit floating-point types (E4M3, E5M2).
inline bool isFloat8(DType T) {
  return T == DType::F8E4M3 || T == DType::F8E5M2;
}

/// Lower-case name as used on the command line and in JSON ("fp32", "int8").
llvm::StringRef name(DType T);

/// Parses the names `name` prints; None for anything else.
llvm::Optional<DType> parseDType(llvm::StringRef Name);

} // namespace perfc::ir

#endif // PERFC_IR_DTYPE_H
