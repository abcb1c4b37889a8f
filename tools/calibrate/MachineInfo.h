//===- MachineInfo.h - What the machine says about itself -------*- C++ -*-===//
//
// Internal to tools/calibrate. The figures calibration reads rather than
// measures: host, date, CPU model and vendor, the CPUs this process may run
// on, memory and cache sizes (sysconf, then sysfs), the load average and the
// SIMD width (CPUID).
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_CALIBRATE_MACHINEINFO_H
#define PERFC_TOOLS_CALIBRATE_MACHINEINFO_H

#include "tools/calibrate/Calibrate.h"

namespace perfc::calibrate::detail {

/// Fills M's Host, Date, CpuModel, Vendor, LogicalCpus, MemoryBytes,
/// cache sizes (L2BytesPerCore, L3Bytes, L3ReportedBytes), LoadAverage,
/// SimdWidthBits and Isa.
void describeMachine(Measurements &M);

/// True where two of the CPUs this process may run on are SMT siblings
/// (or where the topology cannot be read).
bool sharesCores();

} // namespace perfc::calibrate::detail

#endif // PERFC_TOOLS_CALIBRATE_MACHINEINFO_H
