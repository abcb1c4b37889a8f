//===- OpClass.cpp - What kind of work dominates an op --------------------===//
#include "ir/OpClass.h"

namespace perfc {

llvm::StringRef name(OpClass C) {
  switch (C) {
  case OpClass::Gemm:
    return "gemm";
  case OpClass::Conv:
    return "conv";
  case OpClass::Elementwise:
    return "elementwise";
  case OpClass::Reduction:
    return "reduction";
  case OpClass::Normalization:
    return "normalization";
  case OpClass::DataMovement:
    return "data_movement";
  case OpClass::Recurrent:
    return "recurrent";
  case OpClass::Control:
    return "control";
  case OpClass::Other:
    return "other";
  }
  return "other";
}

} // namespace perfc
