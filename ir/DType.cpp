//===- DType.cpp - Tensor element types -----------------------------------===//
#include "ir/DType.h"

#include "llvm/ADT/StringSwitch.h"

namespace perfc::ir {

unsigned bitWidth(DType T) {
  switch (T) {
  case DType::Undefined:
  case DType::String:
    return 0;
  case DType::Bool:
  case DType::I8:
  case DType::U8:
  case DType::F8E4M3:
  case DType::F8E5M2:
    return 8;
  case DType::I16:
  case DType::U16:
  case DType::F16:
  case DType::BF16:
    return 16;
  case DType::I32:
  case DType::U32:
  case DType::F32:
  case DType::TF32:
    return 32;
  case DType::I64:
  case DType::U64:
  case DType::F64:
  case DType::C64:
    return 64;
  case DType::C128:
    return 128;
  }
  return 0;
}

unsigned byteSize(DType T) {
  if (T == DType::String)
    return 8;
  return bitWidth(T) / 8;
}

bool isFloatingPoint(DType T) {
  switch (T) {
  case DType::F8E4M3:
  case DType::F8E5M2:
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::TF32:
  case DType::F64:
  case DType::C64:
  case DType::C128:
    return true;
  default:
    return false;
  }
}

bool isInteger(DType T) {
  switch (T) {
  case DType::I8:
  case DType::U8:
  case DType::I16:
  case DType::U16:
  case DType::I32:
  case DType::U32:
  case DType::I64:
  case DType::U64:
    return true;
  default:
    return false;
  }
}

llvm::StringRef name(DType T) {
  switch (T) {
  case DType::Undefined:
    return "undefined";
  case DType::Bool:
    return "bool";
  case DType::I8:
    return "int8";
  case DType::U8:
    return "uint8";
  case DType::I16:
    return "int16";
  case DType::U16:
    return "uint16";
  case DType::I32:
    return "int32";
  case DType::U32:
    return "uint32";
  case DType::I64:
    return "int64";
  case DType::U64:
    return "uint64";
  case DType::F8E4M3:
    return "fp8e4m3";
  case DType::F8E5M2:
    return "fp8e5m2";
  case DType::F16:
    return "fp16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "fp32";
  case DType::TF32:
    return "tf32";
  case DType::F64:
    return "fp64";
  case DType::C64:
    return "complex64";
  case DType::C128:
    return "complex128";
  case DType::String:
    return "string";
  }
  return "undefined";
}

llvm::Optional<DType> parseDType(llvm::StringRef Name) {
  auto T = llvm::StringSwitch<DType>(Name)
               .Case("bool", DType::Bool)
               .Case("int8", DType::I8)
               .Case("uint8", DType::U8)
               .Case("int16", DType::I16)
               .Case("uint16", DType::U16)
               .Case("int32", DType::I32)
               .Case("uint32", DType::U32)
               .Case("int64", DType::I64)
               .Case("uint64", DType::U64)
               .Cases("fp8", "fp8e4m3", DType::F8E4M3)
               .Case("fp8e5m2", DType::F8E5M2)
               .Case("fp16", DType::F16)
               .Case("bf16", DType::BF16)
               .Case("fp32", DType::F32)
               .Case("tf32", DType::TF32)
               .Case("fp64", DType::F64)
               .Case("complex64", DType::C64)
               .Case("complex128", DType::C128)
               .Case("string", DType::String)
               .Default(DType::Undefined);
  if (T == DType::Undefined)
    return llvm::None;
  return T;
}

} // namespace perfc::ir
