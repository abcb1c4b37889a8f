//===- Saturating.h - Doubles as int64 without undefined casts --*- C++ -*-===//
//
// The planner and placement hand times (ns) and sizes (bytes) to Z3 as
// integers. A model absurd enough (a trillion-parameter model on a CPU)
// gives values past what an int64 holds, where llround and a plain cast
// are unspecified or undefined; these clamp instead, so such a candidate
// compares as the largest rather than as garbage.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_SATURATING_H
#define PERFC_PASSES_SATURATING_H

#include <cmath>
#include <cstdint>
#include <limits>

namespace perfc {

/// Value rounded to the nearest int64, clamped to the int64 range; not a
/// number is the largest (a time or size that cannot be known must never
/// win a minimisation).
inline int64_t roundSaturated(double Value) {
  // 2^63 is exact as a double; every double below it converts safely.
  constexpr double Limit = 9223372036854775808.0;
  const double R = std::round(Value);
  if (!(R < Limit))
    return std::numeric_limits<int64_t>::max();
  if (R < -Limit)
    return std::numeric_limits<int64_t>::min();
  return int64_t(R);
}

/// Value rounded down, clamped the same way.
inline int64_t floorSaturated(double Value) {
  return roundSaturated(std::floor(Value));
}

} // namespace perfc

#endif // PERFC_PASSES_SATURATING_H
