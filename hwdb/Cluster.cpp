//===- Cluster.cpp - Links and clusters of devices ------------------------===//
#include "hwdb/Cluster.h"

#include <cassert>
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

const Device &Cluster::primaryDevice() const {
  assert(!Groups.empty() && !Groups.front().Devices.empty() &&
         "a loaded cluster always has a device");
  return *Groups.front().Devices.front().Dev;
}
