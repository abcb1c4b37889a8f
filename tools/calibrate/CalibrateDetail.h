//===- CalibrateDetail.h - Helpers the calibration files share -*- C++ -*-===//
//
// Internal to tools/calibrate. Calibrate.cpp holds the public entry points;
// MachineInfo.cpp describes the machine, Measure.cpp times it, and
// CalibrateYaml.cpp writes the description. What more than one of them uses
// is here.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_CALIBRATE_CALIBRATEDETAIL_H
#define PERFC_TOOLS_CALIBRATE_CALIBRATEDETAIL_H

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace perfc::calibrate::detail {

inline constexpr double KiB = 1024.0, MiB = 1024.0 * 1024.0;

/// V with Decimals digits after the point, for progress lines and comments.
inline std::string fx(double V, int Decimals) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%.*f", Decimals, V);
  return Buf;
}

/// An efficiency within (0, 1], as the hwdb schema requires; 0.01 where the
/// figure is not a positive number.
inline double clampEff(double E) {
  if (!std::isfinite(E) || E <= 0)
    return 0.01;
  return std::min(1.0, std::max(0.01, E));
}

} // namespace perfc::calibrate::detail

#endif // PERFC_TOOLS_CALIBRATE_CALIBRATEDETAIL_H
