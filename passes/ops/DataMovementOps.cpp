//===- DataMovementOps.cpp - Work formulas ----------------------------------------===//
#include "passes/OpRegistry.h"

namespace perfc {

void registerDataMovementOps(OpRegistry &R) {}

} // namespace perfc
