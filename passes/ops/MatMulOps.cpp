//===- MatMulOps.cpp - Work formulas ----------------------------------------===//
#include "passes/OpRegistry.h"

namespace perfc {

void registerMatMulOps(OpRegistry &R) {}

} // namespace perfc
