//===- MachineInfo.cpp - What the machine says about itself ---------------===//
#include "tools/calibrate/MachineInfo.h"

#include "tools/calibrate/CalibrateDetail.h"
#include "tools/calibrate/Kernels.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <sched.h>
#include <string>
#include <unistd.h>

using namespace perfc::calibrate;
using namespace perfc::calibrate::detail;

namespace {

std::string readFileText(const char *Path) {
  auto B = llvm::MemoryBuffer::getFileAsStream(Path);
  return B ? (*B)->getBuffer().str() : std::string();
}

std::string cpuinfoField(const std::string &Info, llvm::StringRef Key) {
  llvm::SmallVector<llvm::StringRef, 64> Lines;
  llvm::StringRef(Info).split(Lines, '\n');
  for (llvm::StringRef L : Lines) {
    auto [K, V] = L.split(':');
    if (K.trim() == Key)
      return V.trim().str();
  }
  return "";
}

double cacheBytes(int SysconfName, const char *SysPath) {
  long V = sysconf(SysconfName);
  if (V > 0)
    return double(V);
  std::string S = llvm::StringRef(readFileText(SysPath)).trim().str();
  if (S.empty())
    return 0;
  double Mul = 1;
  if (S.back() == 'K')
    Mul = KiB;
  else if (S.back() == 'M')
    Mul = MiB;
  if (Mul != 1)
    S.pop_back();
  unsigned long long N = 0;
  if (llvm::StringRef(S).getAsInteger(10, N))
    return 0;
  return double(N) * Mul;
}

} // namespace

void perfc::calibrate::detail::describeMachine(Measurements &M) {
  char Host[256] = {};
  if (gethostname(Host, sizeof(Host) - 1) != 0 || !Host[0])
    std::strcpy(Host, "localhost");
  M.Host = Host;
  std::time_t T = std::time(nullptr);
  char Date[64];
  std::strftime(Date, sizeof(Date), "%Y-%m-%d %H:%M UTC", std::gmtime(&T));
  M.Date = Date;

  std::string Info = readFileText("/proc/cpuinfo");
  M.CpuModel = cpuinfoField(Info, "model name");
  std::string Family = cpuinfoField(Info, "cpu family"),
              Model = cpuinfoField(Info, "model");
  if (!Family.empty())
    M.CpuModel += " (family " + Family + ", model " + Model + ")";
  std::string VendorId = cpuinfoField(Info, "vendor_id");
  M.Vendor = VendorId == "AuthenticAMD"   ? "AMD"
             : VendorId == "GenuineIntel" ? "Intel"
                                          : VendorId;
  if (M.CpuModel.empty())
    M.CpuModel = "unknown CPU";

  cpu_set_t Set;
  CPU_ZERO(&Set);
  M.LogicalCpus = sched_getaffinity(0, sizeof(Set), &Set) == 0
                      ? unsigned(CPU_COUNT(&Set))
                      : unsigned(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  M.MemoryBytes =
      double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  M.L2BytesPerCore = cacheBytes(
      _SC_LEVEL2_CACHE_SIZE, "/sys/devices/system/cpu/cpu0/cache/index2/size");
  M.L3Bytes = cacheBytes(_SC_LEVEL3_CACHE_SIZE,
                         "/sys/devices/system/cpu/cpu0/cache/index3/size");
  // Some hypervisors report the whole socket's L3 (hundreds of MiB); a core
  // reaches its own complex's share, at most 96 MiB on parts made so far.
  if (M.L3Bytes > 128 * MiB) {
    M.L3ReportedBytes = M.L3Bytes;
    M.L3Bytes = 32 * MiB;
  }
  double Load = 0;
  if (std::sscanf(readFileText("/proc/loadavg").c_str(), "%lf", &Load) == 1)
    M.LoadAverage = Load;
  SimdInfo S = detectSimd();
  M.SimdWidthBits = S.WidthBits;
  M.Isa = S.Isa;
}

bool perfc::calibrate::detail::sharesCores() {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  if (sched_getaffinity(0, sizeof(Set), &Set) != 0)
    return true;
  for (int Cpu = 0; Cpu < CPU_SETSIZE; ++Cpu) {
    if (!CPU_ISSET(Cpu, &Set))
      continue;
    const std::string Path = "/sys/devices/system/cpu/cpu" +
                             std::to_string(Cpu) +
                             "/topology/thread_siblings_list";
    const std::string List =
        llvm::StringRef(readFileText(Path.c_str())).trim().str();
    if (List.empty())
      return true;
    // "3" alone: no sibling; "3,67" or "2-3": siblings, shared if allowed.
    for (llvm::StringRef Part : llvm::split(List, ','))
      for (llvm::StringRef Num : llvm::split(Part, '-')) {
        unsigned Other = 0;
        if (Num.trim().getAsInteger(10, Other))
          return true;
        if (int(Other) != Cpu && Other < CPU_SETSIZE && CPU_ISSET(Other, &Set))
          return true;
      }
  }
  return false;
}
