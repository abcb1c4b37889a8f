//===- NcclTuning.cpp - NCCL's own cost model of its protocols ------------===//
//
// The tables and their source are in NcclTuning.h.
//
//===----------------------------------------------------------------------===//
#include "costmodels/NcclTuning.h"

using namespace perfc;
using namespace perfc::cost;
using namespace perfc::cost::nccl;

namespace {

constexpr double Us = 1e-6;

/// Index of a protocol in NCCL's tables; anything else reads as Simple.
unsigned protoIndex(CommProtocol P) {
  switch (P) {
  case CommProtocol::LL:
    return 0;
  case CommProtocol::LL128:
    return 1;
  default:
    return 2;
  }
}

unsigned algoIndex(Algo A) { return A == Algo::Tree ? 0 : 1; }

// baseLat [algorithm: Tree, Ring][protocol: LL, LL128, Simple], us.
constexpr double BaseLatUs[2][3] = {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}};

// hwLat [class: NVLink, PCI, network][algorithm: Tree, Ring][protocol], us.
constexpr double HwLatUs[3][2][3] = {
    {{.52, 1.2, 28}, {.47, 1.9, 3.4}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},
    {{5.0, 8.5, 50}, {2.7, 4.0, 9.6}},
};

// hwLat [NVLink][NVLS][Simple], us (the later table's; see the header).
constexpr double NvlsHopUs = 23;

unsigned linkClass(hw::LinkKind K) {
  switch (K) {
  case hw::LinkKind::NvLink:
  case hw::LinkKind::NvSwitch:
    return 0;
  case hw::LinkKind::InfiniBand:
  case hw::LinkKind::Ethernet:
    return 2;
  case hw::LinkKind::PCIe:
  case hw::LinkKind::SharedMemory:
    return 1;
  }
  return 1;
}

bool isNvLink(const hw::Link *L) {
  return L &&
         (L->Kind == hw::LinkKind::NvLink || L->Kind == hw::LinkKind::NvSwitch);
}

} // namespace

double perfc::cost::nccl::baseSeconds(Algo A, CommProtocol P) {
  return BaseLatUs[algoIndex(A)][protoIndex(P)] * Us;
}

double perfc::cost::nccl::hopSeconds(const hw::Link &L, Algo A, CommProtocol P,
                                     bool IntraOfMultiNode) {
  const unsigned Class = linkClass(L.Kind);
  const double RingLL = HwLatUs[Class][1][0];
  double Hop =
      L.LatencySeconds * HwLatUs[Class][algoIndex(A)][protoIndex(P)] / RingLL;
  if (IntraOfMultiNode && P == CommProtocol::LL)
    Hop *= 1.8;
  return Hop;
}

double perfc::cost::nccl::bandwidthShare(Algo A, CommProtocol P, Collective C,
                                         unsigned Nodes) {
  if (A == Algo::Tree) {
    switch (P) {
    case CommProtocol::LL:
      return 0.9 / 3.8;
    case CommProtocol::LL128:
      return 0.9 * (Nodes <= 1 ? 7.0 / 9.0 : 0.915);
    default:
      return 0.9;
    }
  }
  switch (P) {
  case CommProtocol::LL:
    return Nodes > 1 || C == Collective::AllReduce ? 1.0 / 4.0 : 1.0 / 3.0;
  case CommProtocol::LL128:
    return 0.92;
  default:
    return 1.0;
  }
}

bool perfc::cost::nccl::ll128Enabled(const hw::Link *Intra,
                                     const hw::Link *Inter) {
  if (!Intra && !Inter)
    return false;
  return (!Intra || isNvLink(Intra)) && (!Inter || isNvLink(Inter));
}

double perfc::cost::nccl::ringPlateauFactor(CommProtocol P, Collective C,
                                            unsigned Nodes, unsigned Ranks,
                                            double Bytes) {
  return P == CommProtocol::Simple && C == Collective::AllReduce && Nodes > 1 &&
                 Bytes >= Ranks / 16.0 * 65536
             ? 1.9
             : 1.0;
}

double perfc::cost::nccl::nvlsSeconds(const hw::Link &L) {
  const double RingLL = HwLatUs[linkClass(L.Kind)][1][0];
  return L.LatencySeconds * NvlsHopUs / RingLL;
}
