//===- Cluster.cpp - Links and clusters of devices ------------------------===//
#include "hwdb/Cluster.h"

#include "hwdb/Units.h"

#include <cassert>
#include <cmath>
#include <memory>

using namespace perfc;
using namespace perfc::hw;

llvm::StringRef perfc::hw::name(LinkKind K) {
  switch (K) {
  case LinkKind::NvLink:
    return "nvlink";
  case LinkKind::NvSwitch:
    return "nvswitch";
  case LinkKind::PCIe:
    return "pcie";
  case LinkKind::InfiniBand:
    return "infiniband";
  case LinkKind::Ethernet:
    return "ethernet";
  case LinkKind::SharedMemory:
    return "shared_memory";
  }
  return "pcie";
}

// Counts are bounded by the loader (parseCount: at most 1e6 each), but
// node x device products are summed in 64 bits and saturated anyway so that
// a hand-built Cluster cannot wrap around.
static unsigned saturate(uint64_t V) {
  return V > UINT32_MAX ? UINT32_MAX : static_cast<unsigned>(V);
}

unsigned NodeGroup::devicesPerNode() const {
  uint64_t N = 0;
  for (const NodeDevice &D : Devices)
    N += D.Count;
  return saturate(N);
}

unsigned Cluster::numNodes() const {
  uint64_t N = 0;
  for (const NodeGroup &G : Groups)
    N += G.Count;
  return saturate(N);
}

unsigned Cluster::numDevices() const {
  uint64_t N = 0;
  for (const NodeGroup &G : Groups)
    N += uint64_t(G.Count) * G.devicesPerNode();
  return saturate(N);
}

llvm::Error perfc::hw::setLaunchOverhead(Cluster &C, double Seconds,
                                         llvm::StringRef What) {
  if (!(Seconds >= 0 && Seconds < 1))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   What + " must be from 0 to 1 second");
  for (NodeGroup &G : C.Groups)
    for (NodeDevice &ND : G.Devices) {
      auto Copy = std::make_shared<Device>(*ND.Dev);
      Copy->LaunchOverheadSeconds = Seconds;
      ND.Dev = std::move(Copy);
    }
  return llvm::Error::success();
}

llvm::Error perfc::hw::reserveMemory(Cluster &C, double Bytes,
                                     llvm::StringRef What) {
  if (!(Bytes >= 0 && std::isfinite(Bytes)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   What + " must be a size of 0 or more");
  for (const NodeGroup &G : C.Groups)
    for (const NodeDevice &ND : G.Devices) {
      const double Have =
          ND.Dev->Memory.empty() ? 0 : ND.Dev->mainMemory().CapacityBytes;
      if (Have > 0 && Bytes >= Have)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            What + " leaves nothing of " + ND.Dev->Name + "'s " +
                formatQuantity(Have, Quantity::Capacity) +
                ": reserve less than that");
    }
  for (NodeGroup &G : C.Groups)
    for (NodeDevice &ND : G.Devices) {
      if (ND.Dev->Memory.empty() || ND.Dev->mainMemory().CapacityBytes <= 0)
        continue;
      auto Copy = std::make_shared<Device>(*ND.Dev);
      Copy->Memory.front().CapacityBytes -= Bytes;
      ND.Dev = std::move(Copy);
    }
  return llvm::Error::success();
}

const Device &Cluster::primaryDevice() const {
  assert(!Groups.empty() && !Groups.front().Devices.empty() &&
         "a loaded cluster always has a device");
  return *Groups.front().Devices.front().Dev;
}
