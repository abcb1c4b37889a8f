//===- Measure.h - The measurements calibration makes -----------*- C++ -*-===//
//
// Internal to tools/calibrate. Peaks, clock, memory and cache bandwidths,
// vector kernels, dispatch overhead, convolutions and GEMMs, as Calibrate.h
// describes them.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_CALIBRATE_MEASURE_H
#define PERFC_TOOLS_CALIBRATE_MEASURE_H

#include "tools/calibrate/Calibrate.h"

#include "llvm/Support/Error.h"

namespace perfc::calibrate::detail {

/// Describes the machine and runs every measurement into M; O.Threads must
/// already be checked. Fails where OpenBLAS cannot be loaded.
llvm::Error runMeasurements(const CalibrateOptions &O, Measurements &M);

} // namespace perfc::calibrate::detail

#endif // PERFC_TOOLS_CALIBRATE_MEASURE_H
