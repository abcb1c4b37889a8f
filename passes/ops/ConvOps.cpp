//===- ConvOps.cpp - Work formulas ----------------------------------------===//
#include "passes/OpRegistry.h"

namespace perfc {

void registerConvOps(OpRegistry &R) {}

} // namespace perfc
