//===- RecurrentOps.cpp - Work formulas ----------------------------------------===//
#include "passes/OpRegistry.h"

namespace perfc {

void registerRecurrentOps(OpRegistry &R) {}

} // namespace perfc
