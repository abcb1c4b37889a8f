//===- NcclTuning.h - NCCL's own cost model of its protocols ----*- C++ -*-===//
//
// NCCL moves data with one of three protocols and picks, per call, the
// algorithm and protocol its own model predicts fastest (ncclTopoTuneModel
// and ncclTopoGetAlgoTime in src/graph/tuning.cc,
// https://github.com/NVIDIA/nccl/blob/01afd20a77b5804e0ecf1042509dd9d20ebf9e93/src/graph/tuning.cc):
//
//   time = baseLat[algorithm][protocol]
//        + steps x hwLat[link class][algorithm][protocol]
//        + bytes / (algorithm bandwidth x protocol's share of it)
//
//  * LL (low latency): 8-byte stores carrying 4 bytes of data and a flag, so
//    the receiver polls without a fence: the shortest hops, a quarter of
//    the bandwidth (a third for reduce-scatter, all-gather and broadcast
//    inside a node) on rings, 1/3.8 on trees.
//  * LL128: 128-byte lines with 8 bytes of flag (120/128 of the data rate;
//    NCCL uses 0.92), enabled by default only over NVLink.
//  * Simple: plain copies with a fence per chunk: the whole bandwidth, the
//    longest hops; a tree's Simple hop is the latency of a 256 KB chunk.
//
// The tables below are NCCL's (microseconds there). hwLat has three link
// classes: NVLink (nvlink, nvswitch), PCI (pcie, and SoC shared memory,
// which NCCL does not know), network (infiniband, ethernet). A hw::Link's
// own latency is its class's ring LL hop (the YAML files quote exactly that
// entry), so the other entries are scaled from it by the table's ratios: a
// link with the table's LL latency gets NCCL's figures, a link described
// slower or faster scales all its protocols alike.
//
// NVLS (NVLink SHARP, NCCL 2.17 and later; entries from
// https://github.com/NVIDIA/nccl/blob/b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2/src/graph/tuning.cc,
// as the older tables have none): on NVSwitch gen 3 with Hopper GPUs the
// switch reduces (multimem.ld_reduce) and multicasts (multimem.st), so an
// all-reduce inside a node costs one NVLink hop of 23 us (hwLat NVLink NVLS
// Simple; no base) plus the bytes at 5/6 of the bus bandwidth (NCCL's "ratio"
// from bus to algorithm bandwidth for NVLS), Simple protocol only. Across
// nodes NCCL runs NVLS only with CollNet (SHARP in the network switches) or
// as NVLS_TREE; neither is modelled.
//
// Not modelled: NCCL's per-channel cap of LL128 bandwidth
// (ll128MaxBwPerCh x channels), its tree bandwidth caps in absolute GB/s
// (80-130), the tree correction factors for medium sizes, and thread
// counts; the link's measured efficiency stands for the channels.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_COSTMODELS_NCCLTUNING_H
#define PERFC_COSTMODELS_NCCLTUNING_H

#include "costmodels/Collectives.h"

namespace perfc::cost::nccl {

/// NCCL's two algorithms for collectives (CollNet is not modelled; NVLS has
/// its own entry points below).
enum class Algo : uint8_t { Ring, Tree };

/// baseLat: the fixed cost of a call with algorithm A and protocol P
/// (P one of LL, LL128, Simple).
double baseSeconds(Algo A, CommProtocol P);

/// hwLat scaled to L: the latency of one step of algorithm A over L with
/// protocol P. `IntraOfMultiNode`, for the hops inside a node of a group
/// that spans several, applies NCCL's 1.8x on LL.
double hopSeconds(const hw::Link &L, Algo A, CommProtocol P,
                  bool IntraOfMultiNode = false);

/// The share of the bus bandwidth that algorithm A keeps under protocol P
/// for collective C in a group spanning Nodes nodes. For Tree it includes
/// NCCL's 0.9 for the tree itself.
double bandwidthShare(Algo A, CommProtocol P, Collective C, unsigned Nodes);

/// Whether NCCL enables LL128 by default for a group over these links
/// (either may be null): only when every link it uses is NVLink or
/// NVSwitch (tuning.cc: intra path NVLink, inter path within a PCIe switch).
bool ll128Enabled(const hw::Link *Intra, const hw::Link *Inter);

/// ncclTopoGetAlgoTime's "plateau effect of ring": a multi-node Simple ring
/// all-reduce of at least Ranks / 16 x 64 KiB pays 1.9 times its latency.
double ringPlateauFactor(CommProtocol P, Collective C, unsigned Nodes,
                         unsigned Ranks, double Bytes);

/// NVLS's latency of one all-reduce over L (a switch): hwLat's 23 us,
/// scaled as hopSeconds scales (L's latency over the NVLink ring LL hop).
double nvlsSeconds(const hw::Link &L);

/// NVLS's algorithm bandwidth as a share of the bus bandwidth: 5/6.
constexpr double NvlsBandwidthShare = 5.0 / 6.0;

} // namespace perfc::cost::nccl

#endif // PERFC_COSTMODELS_NCCLTUNING_H
