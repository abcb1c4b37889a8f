//===- NormalizationOps.cpp - Work formulas ----------------------------------------===//
#include "passes/OpRegistry.h"

namespace perfc {

void registerNormalizationOps(OpRegistry &R) {}

} // namespace perfc
