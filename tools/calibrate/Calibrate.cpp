//===- Calibrate.cpp - Measure this machine as an hwdb device -------------===//
//
// The public entry points. MachineInfo.cpp reads what the machine says about
// itself, Measure.cpp times it, CalibrateYaml.cpp writes the description.
//
//===----------------------------------------------------------------------===//
#include "tools/calibrate/Calibrate.h"

#include "hwdb/Loader.h"
#include "tools/calibrate/Measure.h"

#include <string>
#include <utility>

using namespace perfc;
using namespace perfc::calibrate;

llvm::Expected<Measurements>
perfc::calibrate::measure(const CalibrateOptions &O) {
  if (O.Threads == 0 || O.Threads > 1024)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--threads %u: expected 1 to 1024",
                                   O.Threads);
  Measurements M;
  if (llvm::Error E = detail::runMeasurements(O, M))
    return std::move(E);
  return M;
}

llvm::Expected<std::string>
perfc::calibrate::calibrate(const CalibrateOptions &O, Measurements *Out) {
  auto M = measure(O);
  if (!M)
    return M.takeError();
  std::string Yaml = toYaml(*M, O);
  if (auto C = hw::loadHardwareFromString(Yaml, "<calibrated>"); !C)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "internal error: the calibrated description does not load: %s",
        llvm::toString(C.takeError()).c_str());
  if (Out)
    *Out = std::move(*M);
  return Yaml;
}
