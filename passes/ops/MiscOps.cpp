//===- MiscOps.cpp - Work formulas ----------------------------------------===//
#include "passes/OpRegistry.h"

namespace perfc {

void registerMiscOps(OpRegistry &R) {}

} // namespace perfc
