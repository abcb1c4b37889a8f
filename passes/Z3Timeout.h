//===- Z3Timeout.h - A time limit as Z3's timeout parameter -----*- C++ -*-===//
#ifndef PERFC_PASSES_Z3TIMEOUT_H
#define PERFC_PASSES_Z3TIMEOUT_H

#include <algorithm>
#include <cmath>
#include <limits>

namespace perfc {

/// Z3's "timeout" parameter (milliseconds, an unsigned) for a time limit in
/// seconds: at least 1 ms; a limit past what an unsigned holds (49 days),
/// or not a number, is the largest (a plain cast of those is undefined).
inline unsigned z3TimeoutMs(double Seconds) {
  constexpr unsigned Max = std::numeric_limits<unsigned>::max();
  const double Ms = std::ceil(Seconds * 1000);
  if (!(Ms < double(Max)))
    return Max;
  return unsigned(std::max(1.0, Ms));
}

} // namespace perfc

#endif // PERFC_PASSES_Z3TIMEOUT_H
