//===- OpRegistry.cpp - Work formulas keyed by op type --------------------===//
#include "passes/OpRegistry.h"

namespace perfc {

static OpRegistry buildDefaultRegistry() {
  OpRegistry R;
  registerElementwiseOps(R);
  registerMatMulOps(R);
  registerConvOps(R);
  registerNormalizationOps(R);
  registerReductionOps(R);
  registerDataMovementOps(R);
  registerRecurrentOps(R);
  registerMiscOps(R);
  registerContribOps(R);
  // If, Loop and Scan are costed by WorkPass from their bodies.
  R.add("If", OpClass::Control);
  R.add("Loop", OpClass::Control);
  R.add("Scan", OpClass::Control);
  return R;
}

const OpRegistry &defaultOpRegistry() {
  // Initialised once (thread-safe since C++11) and never modified.
  static const OpRegistry Registry = buildDefaultRegistry();
  return Registry;
}

} // namespace perfc
