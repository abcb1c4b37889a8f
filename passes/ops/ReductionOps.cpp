//===- ReductionOps.cpp - Work formulas ----------------------------------------===//
#include "passes/OpRegistry.h"

namespace perfc {

void registerReductionOps(OpRegistry &R) {}

} // namespace perfc
