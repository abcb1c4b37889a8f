//===- Collectives.h - Time of collective communication ---------*- C++ -*-===//
//
// Alpha-beta models of NCCL-style collectives over hw::Link (Thakur,
// Rabenseifner, Gropp, "Optimization of Collective Communication Operations
// in MPICH", IJHPCA 19(1), 2005; NCCL's algorithms and nccl-tests' "bus
// bandwidth",
// https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):
//
//   time = (steps x alpha) + (bytes each rank moves / bw)
//
// where, for a link L, bw = L.BandwidthBytesPerSecond x L.Efficiency (per
// direction, per device; per port for NICs) and alpha = L.LatencySeconds.
// Notation below: n ranks in the group, k of them on each node, m = n / k
// nodes, B the buffer size per rank (see collectiveTime), P = min(NICs the
// group may use per node, k) NIC ports driven per node.
//
// Two bandwidths describe a group:
//  * bw_intra = bw(Intra): what one rank sends to any other rank of its node.
//    NVSwitch (LinkKind::NvSwitch) is a full crossbar, so this is the link's
//    per-GPU rate whatever the peer; for direct NVLink meshes and PCIe trees
//    it is an approximation (the model has no topology inside a node).
//  * bw_node = P x bw(Inter) x InterShare: what one node sends to the other
//    nodes. NCCL runs several rings (channels) whose node crossings go through
//    different NICs, so a node's crossing traffic spreads over its P ports.
//
// A ring that spans nodes moves per rank 2(n-1)/n x B over every hop; the k
// hops inside a node each carry it on their own link (bw_intra), the node's
// crossing hops share bw_node, so the ring's bus bandwidth is
// bw_ring = min(bw_intra, bw_node), and nccl-tests' busbw of a large
// all-reduce is this figure. (With one NIC per GPU, as DGX A100's eight HDR
// ports, bw_node = 8 x 25 GB/s x efficiency; this is the "inter-node
// bandwidth" that limits a flat ring, and for k = 1 it is one port per
// rank.) Every ring step waits for its slowest hop, so a step costs
// alpha_ring = alpha(Inter) once the ring crosses nodes, alpha(Intra)
// otherwise.
//
// Models (B/bw terms are BandwidthSeconds, alpha terms LatencySeconds):
//  * all-reduce, Ring: 2(n-1)/n x B / bw_ring + 2(n-1) x alpha_ring.
//  * all-reduce, Tree (NCCL's double binary tree, pipelined: each rank sends
//    and receives the whole buffer going up and again going down):
//    2 x B / bw_ring + 2 x (ceil(log2 m) x alpha(Inter) +
//    ceil(log2 k) x alpha(Intra)); for a one-level group the latency is
//    2 ceil(log2 n) alpha.
//  * all-reduce, Hierarchical (two levels): reduce-scatter inside each node,
//    all-reduce of each rank's B/k share across the m nodes (the k shares of
//    a node go out over its P ports, each rank's over its own NIC when
//    NICs >= k), all-gather inside each node:
//    2(k-1)/k x B / bw_intra + 2(k-1) x alpha(Intra)
//      + 2(m-1)/m x B / bw_node + 2(m-1) x alpha(Inter).
//    It degenerates to Ring for k = 1 or m = 1; it beats the flat ring when
//    bw_node is scarce, because only 2(m-1)/m x B crosses nodes instead of
//    2(n-1)/n x B.
//  * reduce-scatter and all-gather: half of the all-reduce, with Ring
//    ((n-1)/n x B / bw_ring + (n-1) x alpha_ring) or Hierarchical (one intra
//    and one inter phase). There is no tree form; Tree falls back to Ring.
//  * all-to-all (Direct, pairwise exchange): each rank sends (k-1)/n x B to
//    the ranks of its node and (n-k)/n x B to the others, over their links
//    at once: max((k-1)/n x B / bw_intra, k(n-k)/n x B / bw_node)
//    + (k-1) x alpha(Intra) + (n-k) x alpha(Inter); one node:
//    (n-1)/n x B / bw_intra + (n-1) x alpha(Intra).
//  * broadcast (Ring, pipelined in chunks, as NCCL implements it):
//    B / bw_ring + the latency of the chain, m(k-1) x alpha(Intra) +
//    (m-1) x alpha(Inter) ((n-1) alpha for a one-level group). Tree and
//    Hierarchical fall back to Ring.
//  * point-to-point (Direct): p2pTime over Intra when the group fits in one
//    node, else over one Inter port (bw x InterShare): B / bw + alpha.
//
// Those are the AlphaBeta forms (CommProtocol::AlphaBeta): the link's own
// latency per step. NCCL adds to each call a fixed cost and moves the bytes
// with one of three protocols, LL, LL128 and Simple, each with its own hop
// latency and share of the bandwidth, and picks the algorithm and protocol
// its own model predicts fastest (NcclTuning.h has the tables and source).
// Under a protocol P the collectives NCCL runs become
//
//   time = base(alg, P) + hops x hop(link, alg, P)
//        + (beta term above) / share(alg, P)
//
// with NCCL's hop counts: a ring all-reduce takes 2(n-m) steps inside nodes
// and 2(m-1) across (reduce-scatter and all-gather half of each); a tree
// 2 x ((k-1) x hop_intra + floor(log2 m) x hop_inter) (a chain inside each
// node); a broadcast m(k-1) and m-1; a hierarchical collective is one NCCL
// call per phase, so it pays a base per phase. A tree's bandwidth is 0.9 of
// bw_ring before its protocol's share. Small messages go LL (a base of
// 3.6 us and 0.47 us a hop on NVLink, at a quarter of the bandwidth), large
// ones Simple (8.4 us and 3.4 us a hop, the whole bandwidth). All-to-all
// and point-to-point are not NCCL collectives and stay AlphaBeta, as do
// groups over a SoC's shared memory (no NCCL there) under Auto.
//
// Auto picks the fastest algorithm that exists for the collective (ties go
// to Ring), and CommProtocol::Auto the fastest protocol for each. A group of
// one rank, or a buffer of no bytes, costs 0. A group that needs a link it does
// not have (k > 1 without Intra, m > 1 without Inter) costs +infinity, and the
// Explain string says which link is missing, so that such a plan never looks
// cheap.
//
// In-switch reduction (CommAlgorithm::Nvls): on a node whose NVSwitch
// reduces (hw::Link::SwitchReduction: NVSwitch gen 3 with Hopper GPUs,
// NVLink SHARP), an all-reduce of ranks on that node reads each rank's
// buffer once into the switch, which returns the reduced 1/n share, and
// multicasts each reduced share to all: (n+1)/n x B / bw_intra + 2 x
// alpha(Intra) in the alpha-beta form; NCCL prices it as one 23 us hop plus
// B / (bw_intra x 5/6), Simple only (NcclTuning.h). Auto offers it beside
// ring and tree for such groups, unless the protocol is pinned to LL or
// LL128. nccl-tests' bus bandwidth of such an all-reduce exceeds the link
// rate. Across nodes (NVLS with CollNet, NVLS_TREE) it is not modelled.
//
// Not modelled: NCCL's per-channel limits (NcclTuning.h), SHARP in network
// switches (CollNet), congestion and the fat tree's oversubscription, and the
// compute of reductions.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_COSTMODELS_COLLECTIVES_H
#define PERFC_COSTMODELS_COLLECTIVES_H

#include "hwdb/Cluster.h"

#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>

namespace perfc::cost {

enum class Collective : uint8_t {
  AllReduce,
  ReduceScatter,
  AllGather,
  AllToAll,
  Broadcast,
  PointToPoint,
};
/// "all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast",
/// "point-to-point".
const char *name(Collective C);

enum class CommAlgorithm : uint8_t {
  Auto,
  Ring,
  Tree,
  Hierarchical,
  /// Direct sends between pairs of ranks: all-to-all and point-to-point,
  /// which have no ring or tree form. Auto picks it for them.
  Direct,
  /// The switch reduces in the network (NVLink SHARP, NCCL's NVLS):
  /// all-reduce of a group on one node whose intra-node link has
  /// SwitchReduction.
  Nvls,
};
/// "auto", "ring", "tree", "hierarchical", "direct", "nvls".
const char *name(CommAlgorithm A);

/// How the collective library moves the bytes (NcclTuning.h).
enum class CommProtocol : uint8_t {
  /// What NCCL's tuner picks: the fastest of LL, LL128 (where NCCL enables
  /// it by default: NVLink only) and Simple.
  Auto,
  LL,
  LL128,
  Simple,
  /// The textbook alpha-beta forms: the link's latency per step and its
  /// bandwidth, no library overhead. The closed forms in this header; also
  /// what all-to-all and point-to-point always use.
  AlphaBeta,
};
/// "auto", "LL", "LL128", "Simple", "alpha-beta".
const char *name(CommProtocol P);

/// The ranks of one collective and how they are connected. The links are
/// borrowed from a hw::Cluster, which must outlive the group.
struct CommGroup {
  unsigned Size = 1; ///< ranks
  /// Ranks of the group that share a node (joined by Intra); should divide
  /// Size. 0 is read as 1, values above Size as Size.
  unsigned RanksPerNode = 1;
  const hw::Link *Intra = nullptr; ///< null when RanksPerNode == 1
  const hw::Link *Inter = nullptr; ///< null when the group fits in one node
  /// Inter ports per node the group may use (0 is read as 1); a node drives
  /// at most RanksPerNode of them, one per rank.
  unsigned NicsPerNode = 1;
  /// The protocol its collectives use when a caller asks for
  /// CommProtocol::Auto: Auto is NCCL's own choice per call; another value
  /// pins one, as NCCL_PROTO does (or the alpha-beta forms).
  CommProtocol Protocol = CommProtocol::Auto;
  /// Share of each of those ports the group has to itself, in (0, 1]: below
  /// 1 when more groups than ports communicate across a node at once (with
  /// one NIC per node, the 8 data-parallel groups of an 8-GPU node get 1/8
  /// each). Applies to Inter only: NVSwitch and NVLink give every GPU its own
  /// bandwidth. Values outside (0, 1] are read as 1.
  double InterShare = 1;

  /// Nodes the group spans: ceil(Size / RanksPerNode).
  unsigned nodes() const;
};

/// The placement of a group of Size ranks taken every Stride-th rank,
/// starting at rank 0, on a cluster whose ranks are numbered node-major:
/// rank r is device r % devicesPerNode of node r / devicesPerNode, nodes in
/// the order of the cluster's node groups. Tensor-parallel groups of
/// Megatron-LM are Stride 1; see ParallelLayout for the strides of the
/// other dimensions.
///
/// Every group of the same shape is assumed to communicate at the same time
/// (the data-, tensor- and pipeline-parallel groups of SPMD training do), so
/// the NICs of a node are shared among the devicesPerNode / RanksPerNode
/// groups with ranks on it: NicsPerNode = max(1, floor(s)) and InterShare =
/// min(1, s), where s = nics_per_node x RanksPerNode / devicesPerNode; with
/// a NIC per GPU (DGX A100) each rank has its own port. Callers that know
/// better may change the fields of the result.
///
/// Errors, each naming the constraint: Size or Stride 0; Size x Stride
/// beyond the cluster's devices; a placement that puts different numbers of
/// the group's ranks on different nodes (a stride that neither divides nor
/// is a multiple of devicesPerNode, or a group that fills nodes partly);
/// a group spanning node groups with different nodes or links, or spanning
/// nodes without an inter-node link.
llvm::Expected<CommGroup> groupOf(const hw::Cluster &C, unsigned Size,
                                  unsigned Stride);

/// The dimensions of 3D parallelism.
enum class ParallelDim : uint8_t { Tensor, Data, Pipeline };
/// "tensor", "data", "pipeline".
const char *name(ParallelDim D);

/// Sizes of the parallel dimensions and the order in which they number the
/// ranks, fastest-varying first. The default is Megatron-LM's: tensor, then
/// data, then pipeline (megatron/core/parallel_state.py, order
/// "tp-cp-ep-dp-pp" with context and expert parallelism 1), so tensor groups
/// are Stride 1, data-parallel groups Stride Tensor, pipeline groups Stride
/// Tensor x Data. Another order (e.g. {Tensor, Pipeline, Data}, which makes
/// data-parallel groups Stride Tensor x Pipeline) is given by Order.
struct ParallelLayout {
  unsigned Tensor = 1;
  unsigned Data = 1;
  unsigned Pipeline = 1;
  std::array<ParallelDim, 3> Order = {ParallelDim::Tensor, ParallelDim::Data,
                                      ParallelDim::Pipeline};

  unsigned size(ParallelDim D) const;
  /// Product of the sizes of the dimensions before D in Order.
  uint64_t strideOf(ParallelDim D) const;
  uint64_t ranks() const; ///< Tensor x Data x Pipeline
};

/// groupOf(C, L.size(D), L.strideOf(D)) after checking that Order names
/// each dimension once and that L.ranks() fits the cluster.
llvm::Expected<CommGroup> groupOf(const hw::Cluster &C, const ParallelLayout &L,
                                  ParallelDim D);

struct CommTime {
  double Seconds = 0;
  double LatencySeconds = 0;   ///< alpha terms
  double BandwidthSeconds = 0; ///< beta terms
  /// The algorithm priced (never Auto).
  CommAlgorithm Algorithm = CommAlgorithm::Ring;
  /// The protocol priced (never Auto).
  CommProtocol Protocol = CommProtocol::AlphaBeta;
  /// The formula with its numbers, like cost::explain(OpTime).
  std::string Explain;
};

/// Bytes: the size of the full buffer per rank (all-reduce: the gradient
/// size; all-gather: the gathered output; reduce-scatter: the input;
/// all-to-all: what each rank sends in total; broadcast: the buffer; p2p:
/// the message), as nccl-tests counts its "size". Non-positive (or NaN)
/// Bytes cost 0. An algorithm the collective does not have falls back to
/// the one it has (Explain says so); all-to-all and point-to-point ignore P.
CommTime collectiveTime(Collective C, double Bytes, const CommGroup &G,
                        CommAlgorithm A = CommAlgorithm::Auto,
                        CommProtocol P = CommProtocol::Auto);

/// One message over one link: Bytes / (bandwidth x efficiency) + latency.
CommTime p2pTime(double Bytes, const hw::Link &L);

/// collectiveTime(C, Bytes, G, A).Seconds and p2pTime(Bytes, L).Seconds
/// without the explanation, whose formatting costs far more than the
/// arithmetic: for the loops that price thousands of strategies (a plan of
/// GPT-3 175B spent half its instructions formatting explanations nobody
/// read).
double collectiveSeconds(Collective C, double Bytes, const CommGroup &G,
                         CommAlgorithm A = CommAlgorithm::Auto,
                         CommProtocol P = CommProtocol::Auto);
double p2pSeconds(double Bytes, const hw::Link &L);

/// nccl-tests' bus bandwidth of a time (PERFORMANCE.md): algbw = Bytes /
/// Seconds times 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter,
/// all-gather and all-to-all, 1 for broadcast and point-to-point; the
/// figure to compare with a link's bandwidth. 0 when Seconds is 0.
double busBandwidth(Collective C, double Bytes, unsigned Ranks, double Seconds);

} // namespace perfc::cost

#endif // PERFC_COSTMODELS_COLLECTIVES_H
