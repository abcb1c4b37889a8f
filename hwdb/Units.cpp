//===- Units.cpp - Quantities with explicit units -------------------------===//
#include "hwdb/Units.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>

using namespace perfc;
using namespace perfc::hw;

namespace {

struct UnitDef {
  const char *Name;
  double Scale;
  bool Ops; ///< Integer operations rather than FLOPs (throughput, work).
};

constexpr double K = 1e3, M = 1e6, G = 1e9, T = 1e12, P = 1e15;
constexpr double Ki = 1024.0, Mi = Ki * 1024, Gi = Mi * 1024, Ti = Gi * 1024;

// Units are matched case-sensitively: "GB/s" is bytes and "Gb/s" is bits.
const UnitDef ThroughputUnits[] = {
    {"FLOPS", 1, false},   {"kFLOPS", K, false},  {"KFLOPS", K, false},
    {"MFLOPS", M, false},  {"GFLOPS", G, false},  {"TFLOPS", T, false},
    {"PFLOPS", P, false},  {"FLOP/s", 1, false},  {"kFLOP/s", K, false},
    {"MFLOP/s", M, false}, {"GFLOP/s", G, false}, {"TFLOP/s", T, false},
    {"PFLOP/s", P, false}, {"OPS", 1, true},      {"kOPS", K, true},
    {"KOPS", K, true},     {"MOPS", M, true},     {"GOPS", G, true},
    {"TOPS", T, true},     {"POPS", P, true},     {"OP/s", 1, true},
    {"kOP/s", K, true},    {"MOP/s", M, true},    {"GOP/s", G, true},
    {"TOP/s", T, true},    {"POP/s", P, true},
};
const UnitDef WorkUnits[] = {
    {"FLOP", 1, false},  {"kFLOP", K, false}, {"KFLOP", K, false},
    {"MFLOP", M, false}, {"GFLOP", G, false}, {"TFLOP", T, false},
    {"PFLOP", P, false}, {"OP", 1, true},     {"kOP", K, true},
    {"KOP", K, true},    {"MOP", M, true},    {"GOP", G, true},
    {"TOP", T, true},    {"POP", P, true},
};
const UnitDef BandwidthUnits[] = {
    {"B/s", 1, false},        {"kB/s", K, false},
    {"KB/s", K, false},       {"MB/s", M, false},
    {"GB/s", G, false},       {"TB/s", T, false},
    {"KiB/s", Ki, false},     {"MiB/s", Mi, false},
    {"GiB/s", Gi, false},     {"TiB/s", Ti, false},
    {"b/s", 1.0 / 8, false},  {"bit/s", 1.0 / 8, false},
    {"kb/s", K / 8, false},   {"Kb/s", K / 8, false},
    {"kbit/s", K / 8, false}, {"Mb/s", M / 8, false},
    {"Mbit/s", M / 8, false}, {"Gb/s", G / 8, false},
    {"Gbit/s", G / 8, false}, {"Tb/s", T / 8, false},
    {"Tbit/s", T / 8, false},
};
const UnitDef CapacityUnits[] = {
    {"B", 1, false},    {"kB", K, false},   {"KB", K, false},
    {"MB", M, false},   {"GB", G, false},   {"TB", T, false},
    {"KiB", Ki, false}, {"MiB", Mi, false}, {"GiB", Gi, false},
    {"TiB", Ti, false},
};
const UnitDef TimeUnits[] = {
    {"s", 1, false},     {"ms", 1e-3, false},        {"us", 1e-6, false},
    {"ns", 1e-9, false}, {"\xC2\xB5s", 1e-6, false}, // "µs"
};
const UnitDef FrequencyUnits[] = {
    {"Hz", 1, false},
    {"kHz", K, false},
    {"MHz", M, false},
    {"GHz", G, false},
};
const UnitDef BitsUnits[] = {{"bit", 1, false}, {"bits", 1, false}};

llvm::ArrayRef<UnitDef> unitsOf(Quantity Q) {
  switch (Q) {
  case Quantity::Throughput:
    return ThroughputUnits;
  case Quantity::Work:
    return WorkUnits;
  case Quantity::Bandwidth:
    return BandwidthUnits;
  case Quantity::Capacity:
    return CapacityUnits;
  case Quantity::Time:
    return TimeUnits;
  case Quantity::Frequency:
    return FrequencyUnits;
  case Quantity::Bits:
    return BitsUnits;
  }
  return {};
}

/// A unit that is typical for Q, used in "write e.g. '2039 GB/s'" hints.
llvm::StringRef exampleUnit(Quantity Q) {
  switch (Q) {
  case Quantity::Throughput:
    return "TFLOPS";
  case Quantity::Work:
    return "GFLOP";
  case Quantity::Bandwidth:
    return "GB/s";
  case Quantity::Capacity:
    return "GB";
  case Quantity::Time:
    return "us";
  case Quantity::Frequency:
    return "MHz";
  case Quantity::Bits:
    return "bits";
  }
  return "";
}

llvm::StringRef unitList(Quantity Q) {
  switch (Q) {
  case Quantity::Throughput:
    return "FLOPS/GFLOPS/TFLOPS/PFLOPS for floating point, OPS/GOPS/TOPS "
           "for integers";
  case Quantity::Work:
    return "FLOP/MFLOP/GFLOP/TFLOP or OP/GOP/TOP";
  case Quantity::Bandwidth:
    return "B/s, KB/s, MB/s, GB/s, TB/s, GiB/s for bytes or Mb/s, Gb/s, "
           "Tb/s for bits";
  case Quantity::Capacity:
    return "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB "
           "(powers of 1024)";
  case Quantity::Time:
    return "s, ms, us, ns";
  case Quantity::Frequency:
    return "Hz, kHz, MHz, GHz";
  case Quantity::Bits:
    return "bits";
  }
  return "";
}

llvm::Error fail(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// Splits "  2039 GB/s " into "2039" and "GB/s". The number is a plain
/// decimal with an optional sign, fraction and exponent; the sign is kept so
/// that "-5 GB/s" is reported as negative rather than as not-a-number.
bool splitNumber(llvm::StringRef Text, llvm::StringRef &Number,
                 llvm::StringRef &Rest) {
  const llvm::StringRef S = Text.trim();
  size_t I = 0;
  const auto digitsFrom = [&](size_t From) {
    size_t J = From;
    while (J < S.size() && llvm::isDigit(S[J]))
      ++J;
    return J;
  };
  if (I < S.size() && (S[I] == '+' || S[I] == '-'))
    ++I;
  size_t J = digitsFrom(I);
  bool HasDigits = J > I;
  if (J < S.size() && S[J] == '.') {
    const size_t F = digitsFrom(J + 1);
    HasDigits |= F > J + 1;
    J = F;
  }
  if (!HasDigits)
    return false;
  if (J < S.size() && (S[J] == 'e' || S[J] == 'E')) {
    size_t E = J + 1;
    if (E < S.size() && (S[E] == '+' || S[E] == '-'))
      ++E;
    const size_t EEnd = digitsFrom(E);
    if (EEnd > E)
      J = EEnd;
  }
  Number = S.take_front(J);
  Rest = S.drop_front(J).ltrim();
  return true;
}

/// Converts a lexed number, rejecting overflow (1e400) and underflow.
llvm::Expected<double> toDouble(llvm::StringRef Number,
                                llvm::StringRef Original) {
  double V = 0;
  // AllowInexact: 0.1 is not exactly representable and that is fine; what
  // getAsDouble still rejects is overflow and underflow.
  if (Number.getAsDouble(V, /*AllowInexact=*/true) || !std::isfinite(V))
    return fail(llvm::formatv("number '{0}' in '{1}' is out of range; use a "
                              "value a double can hold",
                              Number, Original));
  return V;
}

const UnitDef *findUnit(llvm::ArrayRef<UnitDef> Units, llvm::StringRef Name) {
  for (const UnitDef &U : Units)
    if (Name == U.Name)
      return &U;
  return nullptr;
}

std::string suggestUnit(Quantity Q, llvm::StringRef Unit) {
  // Compare case-insensitively so that "tflops" finds "TFLOPS"; the match
  // itself stays case-sensitive.
  const std::string Lower = Unit.lower();
  const char *Best = nullptr;
  unsigned BestDist = 3;
  for (const UnitDef &U : unitsOf(Q)) {
    const unsigned D = llvm::StringRef(Lower).edit_distance(
        llvm::StringRef(U.Name).lower(), true, BestDist);
    if (D < BestDist) {
      BestDist = D;
      Best = U.Name;
    }
  }
  if (!Best)
    return "";
  return llvm::formatv("did you mean '{0}'? (units are case-sensitive: GB is "
                       "bytes, Gb is bits) ",
                       Best)
      .str();
}

} // namespace

llvm::StringRef perfc::hw::name(Quantity Q) {
  switch (Q) {
  case Quantity::Throughput:
    return "throughput";
  case Quantity::Work:
    return "work";
  case Quantity::Bandwidth:
    return "bandwidth";
  case Quantity::Capacity:
    return "capacity";
  case Quantity::Time:
    return "time";
  case Quantity::Frequency:
    return "frequency";
  case Quantity::Bits:
    return "width";
  }
  return "quantity";
}

llvm::Expected<Measure> perfc::hw::parseQuantity(llvm::StringRef Text,
                                                 Quantity Q, bool AllowZero) {
  llvm::StringRef Number, Unit;
  if (!splitNumber(Text, Number, Unit))
    return fail(llvm::formatv("expected a {0} such as '2 {1}', got '{2}'; "
                              "write a number followed by a unit ({3})",
                              name(Q), exampleUnit(Q), Text.trim(),
                              unitList(Q)));
  double Bare = -1;
  if (Unit.empty() && AllowZero && llvm::to_float(Number, Bare) && Bare == 0)
    return Measure{0, Unit, false};
  if (Unit.empty())
    return fail(llvm::formatv("{0} '{1}' has no unit; write e.g. '{1} {2}' "
                              "(units: {3})",
                              name(Q), Number, exampleUnit(Q), unitList(Q)));
  const UnitDef *U = findUnit(unitsOf(Q), Unit);
  if (!U) {
    // Name the quantity the unit does belong to: "GB" where a bandwidth is
    // expected is a common slip for "GB/s".
    for (Quantity Other :
         {Quantity::Throughput, Quantity::Work, Quantity::Bandwidth,
          Quantity::Capacity, Quantity::Time, Quantity::Frequency}) {
      if (Other != Q && findUnit(unitsOf(Other), Unit))
        return fail(llvm::formatv(
            "'{0}' is a unit of {1}, but a {2} is expected here; use one of "
            "{3}",
            Unit, name(Other), name(Q), unitList(Q)));
    }
    if (Q == Quantity::Capacity && Unit.size() <= 2 && Unit.endswith("b"))
      return fail(llvm::formatv("capacity '{0}' is in bits; give capacities "
                                "in bytes: GB (1e9) or GiB (2^30)",
                                Text.trim()));
    return fail(llvm::formatv("unknown {0} unit '{1}'; {2}use one of {3}",
                              name(Q), Unit, suggestUnit(Q, Unit),
                              unitList(Q)));
  }
  auto V = toDouble(Number, Text.trim());
  if (!V)
    return V.takeError();
  if (*V < 0)
    return fail(llvm::formatv(
        "negative {0} '{1}'; a {0} must be {2}", name(Q), Text.trim(),
        Q == Quantity::Time || AllowZero ? "zero or more"
                                         : "greater than zero"));
  if (*V == 0 && Q != Quantity::Time && !AllowZero)
    return fail(llvm::formatv("{0} '{1}' is zero; a {0} must be greater than "
                              "zero",
                              name(Q), Text.trim()));
  const double Scaled = *V * U->Scale;
  if (!std::isfinite(Scaled))
    return fail(llvm::formatv("{0} '{1}' is out of range; use a realistic "
                              "value",
                              name(Q), Text.trim()));
  return Measure{Scaled, Unit, U->Ops};
}

llvm::Expected<double> perfc::hw::parseFraction(llvm::StringRef Text) {
  const llvm::StringRef S = Text.trim();
  llvm::StringRef Number, Rest;
  if (!splitNumber(S, Number, Rest))
    return fail(llvm::formatv("expected a fraction such as 0.75, got '{0}'; "
                              "efficiencies are plain numbers in (0, 1]",
                              S));
  if (Rest == "%")
    return fail(llvm::formatv("'{0}' is a percentage; write efficiencies as "
                              "fractions, e.g. 0.75 for 75%",
                              S));
  if (!Rest.empty())
    return fail(llvm::formatv("unexpected '{0}' after the number in '{1}'; "
                              "efficiencies are plain numbers in (0, 1]",
                              Rest, S));
  auto V = toDouble(Number, S);
  if (!V)
    return V.takeError();
  if (*V <= 0 || *V > 1)
    return fail(llvm::formatv("efficiency {0} is out of range; an efficiency "
                              "is a fraction of peak in (0, 1]",
                              S));
  return *V;
}

llvm::Expected<unsigned> perfc::hw::parseCount(llvm::StringRef Text,
                                               bool AllowZero) {
  // Counts beyond this are typos, and keeping them small means products of
  // counts (nodes x devices) cannot overflow.
  constexpr unsigned MaxCount = 1000000;
  const llvm::StringRef S = Text.trim();
  if (S.startswith("-"))
    return fail(llvm::formatv("negative count '{0}'; a count must be {1}", S,
                              AllowZero ? "zero or more" : "at least 1"));
  if (S.empty() || !llvm::all_of(S, llvm::isDigit))
    return fail(llvm::formatv("expected a whole number, got '{0}'; write a "
                              "plain count such as 8",
                              S));
  unsigned long long V = 0;
  // All digits: the only way to fail is a number beyond 64 bits.
  const bool TooLong = S.getAsInteger(10, V);
  if (V == 0 && !TooLong && !AllowZero)
    return fail("count is zero; it must be at least 1");
  if (TooLong || V > MaxCount)
    return fail(llvm::formatv("count {0} is implausibly large; the limit is "
                              "{1}",
                              S, MaxCount));
  return static_cast<unsigned>(V);
}

namespace {

std::string formatNumber(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.4g", V);
  return Buf;
}

/// Picks the largest prefix that keeps the mantissa at 1 or more.
std::string withPrefix(
    double V,
    llvm::ArrayRef<std::pair<double, const char *>> Prefixes /* ascending */) {
  size_t Pick = 0;
  for (size_t I = 0; I < Prefixes.size(); ++I)
    if (std::fabs(V) >= Prefixes[I].first * 0.99995)
      Pick = I;
  return formatNumber(V / Prefixes[Pick].first) + " " + Prefixes[Pick].second;
}

} // namespace

std::string perfc::hw::formatQuantity(double V, Quantity Q, bool Ops) {
  if (!std::isfinite(V))
    return V > 0 ? "inf" : "nan";
  switch (Q) {
  case Quantity::Throughput:
    return Ops ? withPrefix(V, {{1, "OPS"},
                                {K, "KOPS"},
                                {M, "MOPS"},
                                {G, "GOPS"},
                                {T, "TOPS"},
                                {P, "POPS"}})
               : withPrefix(V, {{1, "FLOPS"},
                                {K, "KFLOPS"},
                                {M, "MFLOPS"},
                                {G, "GFLOPS"},
                                {T, "TFLOPS"},
                                {P, "PFLOPS"}});
  case Quantity::Work:
    return Ops ? withPrefix(V, {{1, "OP"},
                                {K, "KOP"},
                                {M, "MOP"},
                                {G, "GOP"},
                                {T, "TOP"},
                                {P, "POP"}})
               : withPrefix(V, {{1, "FLOP"},
                                {K, "KFLOP"},
                                {M, "MFLOP"},
                                {G, "GFLOP"},
                                {T, "TFLOP"},
                                {P, "PFLOP"}});
  case Quantity::Bandwidth:
    return withPrefix(
        V, {{1, "B/s"}, {K, "KB/s"}, {M, "MB/s"}, {G, "GB/s"}, {T, "TB/s"}});
  case Quantity::Capacity: {
    // Caches are sized in powers of two and print best that way.
    const bool Binary =
        V >= Ki && std::fmod(V, Ki) == 0 && std::fmod(V, K) != 0;
    if (Binary)
      return withPrefix(
          V, {{1, "B"}, {Ki, "KiB"}, {Mi, "MiB"}, {Gi, "GiB"}, {Ti, "TiB"}});
    return withPrefix(V,
                      {{1, "B"}, {K, "KB"}, {M, "MB"}, {G, "GB"}, {T, "TB"}});
  }
  case Quantity::Time:
    if (V == 0)
      return "0 s";
    return withPrefix(
        V, {{1e-12, "ps"}, {1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1, "s"}});
  case Quantity::Frequency:
    return withPrefix(V, {{1, "Hz"}, {K, "kHz"}, {M, "MHz"}, {G, "GHz"}});
  case Quantity::Bits:
    return formatNumber(V) + " bits";
  }
  return formatNumber(V);
}

std::string perfc::hw::formatDataBytes(double Bytes) {
  if (!std::isfinite(Bytes))
    return Bytes > 0 ? "inf" : "nan";
  return withPrefix(Bytes,
                    {{1, "B"}, {K, "KB"}, {M, "MB"}, {G, "GB"}, {T, "TB"}});
}
