//===- Cluster.h - Links and clusters of devices ----------------*- C++ -*-===//
//
// A Cluster is nodes x devices: a list of node groups, each group `Count`
// identical nodes holding one or more kinds of device, joined inside the
// node by one link and across nodes by another (with NicsPerNode ports).
// A DGX A100 is one group of 1 node x 8 A100 over NVSwitch; a SoC such as
// Jetson AGX Orin is one node of heterogeneous processors (CPU, GPU, 2 DLA)
// over a shared-memory link; a plain device file loads as 1 node x 1 device.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_HWDB_CLUSTER_H
#define PERFC_HWDB_CLUSTER_H

#include "hwdb/Device.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace perfc::hw {

enum class LinkKind : uint8_t {
  NvLink,
  NvSwitch,
  PCIe,
  InfiniBand,
  Ethernet,
  SharedMemory,
};
/// "nvlink", "nvswitch", "pcie", "infiniband", "ethernet", "shared_memory".
llvm::StringRef name(LinkKind K);

/// A connection between devices, as seen from one device: bandwidth is per
/// direction and per device (what one GPU can send while receiving as much),
/// the figure collective models need.
struct Link {
  std::string Name;
  LinkKind Kind = LinkKind::PCIe;
  std::string Description;
  double BandwidthBytesPerSecond = 0;
  /// One-way small-message latency, the alpha of alpha-beta models; for
  /// links NCCL drives, its ring LL hop (costmodels/NcclTuning.h scales the
  /// other protocols' hops from it).
  double LatencySeconds = 0;
  /// Share of the bandwidth that transfers reach.
  double Efficiency = 1.0;
  /// The switch reduces in the network (NVLink SHARP, NCCL's NVLS
  /// algorithm: NVSwitch gen 3 with Hopper GPUs): an all-reduce inside a
  /// node moves each byte to the switch and back once instead of a ring's
  /// 2(n-1)/n times. Only for LinkKind::NvSwitch.
  bool SwitchReduction = false;
  std::vector<Source> Sources;
};

/// Devices of one kind inside a node.
struct NodeDevice {
  /// Shared and immutable: copies of a Cluster share their devices.
  std::shared_ptr<const Device> Dev;
  unsigned Count = 1;
};

/// `Count` identical nodes.
struct NodeGroup {
  std::string Name; ///< Optional label.
  unsigned Count = 1;
  std::vector<NodeDevice> Devices;
  /// Joins the devices of one node; None when a node holds one device.
  llvm::Optional<Link> IntraNode;
  /// Joins nodes; None for a single node.
  llvm::Optional<Link> InterNode;
  /// Ports of InterNode per node (0 without InterNode).
  unsigned NicsPerNode = 0;

  unsigned devicesPerNode() const;
};

struct Cluster {
  std::string Name;
  std::string Description;
  std::vector<NodeGroup> Groups;
  std::vector<Source> Sources;

  unsigned numNodes() const;
  unsigned numDevices() const;
  /// The first device of the first group: the device a single-device
  /// prediction runs on. Clusters always hold at least one device.
  const Device &primaryDevice() const;
};

/// Replaces every device's launch_overhead with Seconds, on copies of the
/// shared devices: the same hardware under a runtime that launches kernels
/// differently (CUDA graphs replayed by the GPU, TensorRT's asynchronous
/// enqueue, an eager framework's per-op dispatch). Seconds must lie in
/// [0, 1): else an error naming What, and C is unchanged.
llvm::Error setLaunchOverhead(Cluster &C, double Seconds, llvm::StringRef What);

/// Takes Bytes from every device's main memory, on copies of the shared
/// devices: what the runtime keeps for itself (the CUDA context, NCCL's
/// buffers, the caching allocator's fragmentation), so that predictions
/// and plans fit what is left for tensors. Bytes must be finite, not
/// negative, and less than every device's memory that has a size: else an
/// error naming What and the device, and C is unchanged.
llvm::Error reserveMemory(Cluster &C, double Bytes, llvm::StringRef What);

} // namespace perfc::hw

#endif // PERFC_HWDB_CLUSTER_H
