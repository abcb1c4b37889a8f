//===- ElementwiseOps.cpp - Work formulas ----------------------------------------===//
#include "passes/OpRegistry.h"

namespace perfc {

void registerElementwiseOps(OpRegistry &R) {}

} // namespace perfc
