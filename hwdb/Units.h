//===- Units.h - Quantities with explicit units -----------------*- C++ -*-===//
//
// Hardware descriptions give every figure with its unit ("312 TFLOPS",
// "2039 GB/s", "200 Gb/s", "40 MB", "5 us"): a bare number is ambiguous
// (GB or GiB? bits or bytes? per second or per clock?) and datasheets mix
// them freely, so the parser refuses to guess. Everything is stored in base
// SI units: FLOP/s (op/s for integers), FLOP, bytes/s, bytes, seconds, Hz,
// bits.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_HWDB_UNITS_H
#define PERFC_HWDB_UNITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace perfc::hw {

/// What a figure measures; selects the accepted units.
enum class Quantity : uint8_t {
  Throughput, ///< FLOPS / TFLOPS / TOPS / GFLOP/s ...; stored as FLOP/s.
  Work,       ///< FLOP / GFLOP / TOP ...; stored as FLOP (or ops).
  Bandwidth,  ///< B/s, GB/s, GiB/s, Gb/s (bits, divided by 8); bytes/s.
  Capacity,   ///< B, KB, MB, GB (1e9), KiB, MiB, GiB (2^30); bytes.
  Time,       ///< s, ms, us, ns; seconds.
  Frequency,  ///< Hz, kHz, MHz, GHz; Hz.
  Bits,       ///< bit, bits (vector widths).
};

/// "throughput", "bandwidth", ... for messages.
llvm::StringRef name(Quantity Q);

/// A parsed figure: its value in base units and the unit it was written in.
struct Measure {
  double Value = 0;
  llvm::StringRef Unit; ///< Points into the parsed text.
  /// For throughput and work: the unit counts integer operations (TOPS)
  /// rather than floating-point ones (TFLOPS).
  bool CountsOps = false;
};

/// Parses "<number> <unit>" strictly: the number is a plain decimal
/// (optionally with an exponent), the unit one of those Q accepts, compared
/// case-sensitively because GB and Gb differ by a factor of 8. Rejects
/// negative, non-finite and out-of-range values, and zero for everything but
/// Time unless AllowZero (which also takes a bare "0": zero in any unit).
/// The error message has the form "what is wrong; what to do" without a
/// location: the caller knows where the text came from.
llvm::Expected<Measure> parseQuantity(llvm::StringRef Text, Quantity Q,
                                      bool AllowZero = false);

/// Parses a plain fraction in (0, 1] ("0.75"); rejects percentages.
llvm::Expected<double> parseFraction(llvm::StringRef Text);

/// Parses a positive decimal count ("108"); zero only with AllowZero.
llvm::Expected<unsigned> parseCount(llvm::StringRef Text, bool AllowZero);

/// Formats a value in base units with an SI prefix and up to four
/// significant digits: formatQuantity(2.039e12, Bandwidth) == "2.039 TB/s".
/// Capacities that are exact multiples of 2^20 but not of 1e6 print in
/// binary units ("512 KiB"). Ops selects TOPS over TFLOPS.
std::string formatQuantity(double Value, Quantity Q, bool Ops = false);

/// Bytes of data a model moves or keeps (tensors, model states, messages),
/// always with SI prefixes ("52.69 MB"), as perfc's reports print them:
/// formatQuantity(Capacity) prints multiples of 2^10 in binary units, as
/// caches are sized, which would show one report's figure two ways.
std::string formatDataBytes(double Bytes);

} // namespace perfc::hw

#endif // PERFC_HWDB_UNITS_H
