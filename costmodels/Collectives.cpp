//===- Collectives.cpp - Time of collective communication -----------------===//
//
// The formulas and their sources are in Collectives.h.
//
//===----------------------------------------------------------------------===//
#include "costmodels/Collectives.h"
#include "costmodels/NcclTuning.h"

#include "hwdb/Units.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace perfc;
using namespace perfc::cost;

const char *perfc::cost::name(Collective C) {
  switch (C) {
  case Collective::AllReduce:
    return "all-reduce";
  case Collective::ReduceScatter:
    return "reduce-scatter";
  case Collective::AllGather:
    return "all-gather";
  case Collective::AllToAll:
    return "all-to-all";
  case Collective::Broadcast:
    return "broadcast";
  case Collective::PointToPoint:
    return "point-to-point";
  }
  return "all-reduce";
}

const char *perfc::cost::name(CommAlgorithm A) {
  switch (A) {
  case CommAlgorithm::Auto:
    return "auto";
  case CommAlgorithm::Ring:
    return "ring";
  case CommAlgorithm::Tree:
    return "tree";
  case CommAlgorithm::Hierarchical:
    return "hierarchical";
  case CommAlgorithm::Direct:
    return "direct";
  case CommAlgorithm::Nvls:
    return "nvls";
  }
  return "auto";
}

const char *perfc::cost::name(CommProtocol P) {
  switch (P) {
  case CommProtocol::Auto:
    return "auto";
  case CommProtocol::LL:
    return "LL";
  case CommProtocol::LL128:
    return "LL128";
  case CommProtocol::Simple:
    return "Simple";
  case CommProtocol::AlphaBeta:
    return "alpha-beta";
  }
  return "auto";
}

const char *perfc::cost::name(ParallelDim D) {
  switch (D) {
  case ParallelDim::Tensor:
    return "tensor";
  case ParallelDim::Data:
    return "data";
  case ParallelDim::Pipeline:
    return "pipeline";
  }
  return "tensor";
}

unsigned CommGroup::nodes() const {
  const unsigned N = std::max(Size, 1u);
  const unsigned K = std::min(std::max(RanksPerNode, 1u), N);
  return (N + K - 1) / K;
}

//===----------------------------------------------------------------------===//
// Placement
//===----------------------------------------------------------------------===//

namespace {

llvm::Error fail(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

bool sameLink(const llvm::Optional<hw::Link> &A,
              const llvm::Optional<hw::Link> &B) {
  if (!A || !B)
    return !A && !B;
  return A->Name == B->Name && A->Kind == B->Kind &&
         A->BandwidthBytesPerSecond == B->BandwidthBytesPerSecond &&
         A->LatencySeconds == B->LatencySeconds &&
         A->Efficiency == B->Efficiency &&
         A->SwitchReduction == B->SwitchReduction;
}

bool sameNodes(const hw::NodeGroup &A, const hw::NodeGroup &B) {
  return A.devicesPerNode() == B.devicesPerNode() &&
         sameLink(A.IntraNode, B.IntraNode) &&
         sameLink(A.InterNode, B.InterNode) && A.NicsPerNode == B.NicsPerNode;
}

/// "1 rank", "16 ranks".
std::string ranks(uint64_t N) {
  return llvm::formatv("{0} rank{1}", N, N == 1 ? "" : "s").str();
}

std::string groupLabel(const hw::NodeGroup &G, size_t Index) {
  if (!G.Name.empty())
    return "'" + G.Name + "'";
  return llvm::formatv("#{0}", Index + 1).str();
}

} // namespace

llvm::Expected<CommGroup> perfc::cost::groupOf(const hw::Cluster &C,
                                               unsigned Size, unsigned Stride) {
  if (Size == 0)
    return fail("a group of 0 ranks; a communication group needs at least 1 "
                "rank");
  if (Stride == 0)
    return fail(llvm::formatv("a group of {0} with stride 0; the stride "
                              "between ranks must be at least 1",
                              ranks(Size)));
  const uint64_t Span = uint64_t(Size) * Stride;
  const unsigned Devices = C.numDevices();
  if (Span > Devices)
    return fail(llvm::formatv("a group of {0} with stride {1} needs {2} "
                              "devices; cluster '{3}' has {4}",
                              ranks(Size), Stride, Span, C.Name, Devices));

  // The node groups that ranks [0, Span) fall in must be alike.
  const hw::NodeGroup *First = nullptr;
  size_t FirstIndex = 0;
  uint64_t Start = 0;
  for (size_t I = 0; I < C.Groups.size() && Start < Span; ++I) {
    const hw::NodeGroup &NG = C.Groups[I];
    if (!First) {
      First = &NG;
      FirstIndex = I;
    } else if (!sameNodes(*First, NG)) {
      return fail(llvm::formatv(
          "a group of {0} ranks with stride {1} spans node groups {2} and {3} "
          "of cluster '{4}', which differ in devices per node, links or NICs; "
          "the collective models need one kind of node (use a smaller group "
          "or a cluster of identical nodes)",
          Size, Stride, groupLabel(*First, FirstIndex), groupLabel(NG, I),
          C.Name));
    }
    Start += uint64_t(NG.Count) * NG.devicesPerNode();
  }
  if (!First)
    return fail(llvm::formatv("cluster '{0}' has no devices", C.Name));

  const unsigned D = std::max(First->devicesPerNode(), 1u);
  unsigned K = 1; // ranks of the group per node
  uint64_t M = 1; // nodes
  if (uint64_t(Size - 1) * Stride < D) {
    K = Size; // all in node 0
  } else if (Stride >= D) {
    M = Size; // consecutive ranks at least a node apart
  } else if (D % Stride == 0 && Span % D == 0) {
    K = D / Stride;
    M = Span / D;
  } else {
    return fail(llvm::formatv(
        "a group of {0} ranks with stride {1} does not put the same number of "
        "ranks on every node of cluster '{2}' ({3} devices per node); the "
        "collective models need a stride that divides {3} or is a multiple of "
        "it, and a group that fills the nodes it spans (size x stride a "
        "multiple of {3})",
        Size, Stride, C.Name, D));
  }

  CommGroup G;
  G.Size = Size;
  G.RanksPerNode = K;
  if (K > 1) {
    if (!First->IntraNode)
      return fail(llvm::formatv("cluster '{0}' has no intra-node link for "
                                "the {1} ranks a group puts on one node",
                                C.Name, K));
    G.Intra = &*First->IntraNode;
  }
  if (M > 1) {
    if (!First->InterNode)
      return fail(llvm::formatv("a group of {0} ranks with stride {1} spans "
                                "{2} nodes, but cluster '{3}' has no "
                                "inter-node link",
                                Size, Stride, M, C.Name));
    G.Inter = &*First->InterNode;
    // The node's ports, shared by the D / K groups with ranks on it.
    const double S = double(std::max(First->NicsPerNode, 1u)) * K / D;
    G.NicsPerNode = std::max(1u, static_cast<unsigned>(std::floor(S)));
    G.InterShare = std::min(1.0, S);
  }
  return G;
}

unsigned ParallelLayout::size(ParallelDim D) const {
  switch (D) {
  case ParallelDim::Tensor:
    return Tensor;
  case ParallelDim::Data:
    return Data;
  case ParallelDim::Pipeline:
    return Pipeline;
  }
  return 1;
}

uint64_t ParallelLayout::strideOf(ParallelDim D) const {
  uint64_t S = 1;
  for (ParallelDim O : Order) {
    if (O == D)
      break;
    S *= size(O);
  }
  return S;
}

uint64_t ParallelLayout::ranks() const {
  return uint64_t(Tensor) * Data * Pipeline;
}

llvm::Expected<CommGroup> perfc::cost::groupOf(const hw::Cluster &C,
                                               const ParallelLayout &L,
                                               ParallelDim D) {
  for (ParallelDim Want :
       {ParallelDim::Tensor, ParallelDim::Data, ParallelDim::Pipeline})
    if (std::count(L.Order.begin(), L.Order.end(), Want) != 1)
      return fail(llvm::formatv("the rank order must name the {0} dimension "
                                "exactly once",
                                name(Want)));
  if (L.Tensor == 0 || L.Data == 0 || L.Pipeline == 0)
    return fail(llvm::formatv("parallel sizes must be at least 1; got tensor "
                              "{0}, data {1}, pipeline {2}",
                              L.Tensor, L.Data, L.Pipeline));
  if (L.ranks() > C.numDevices())
    return fail(llvm::formatv("tensor {0} x data {1} x pipeline {2} needs {3} "
                              "devices; cluster '{4}' has {5}",
                              L.Tensor, L.Data, L.Pipeline, L.ranks(), C.Name,
                              C.numDevices()));
  // ranks() fits in unsigned, so does every stride.
  return groupOf(C, L.size(D), static_cast<unsigned>(L.strideOf(D)));
}

//===----------------------------------------------------------------------===//
// Times
//===----------------------------------------------------------------------===//

namespace {

constexpr double Inf = std::numeric_limits<double>::infinity();

std::string fmt(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.4g", V);
  return Buf;
}
std::string secs(double S) { return hw::formatQuantity(S, hw::Quantity::Time); }
std::string bytes(double B) { return hw::formatDataBytes(B); }
std::string rate(double B) {
  return hw::formatQuantity(B, hw::Quantity::Bandwidth);
}

double linkBw(const hw::Link &L) {
  return L.BandwidthBytesPerSecond * L.Efficiency;
}

/// ceil(log2(X)) for X >= 1: the rounds of a binary tree over X members.
unsigned ceilLog2(unsigned X) {
  unsigned R = 0;
  for (uint64_t V = 1; V < X; V *= 2)
    ++R;
  return R;
}

/// A group with its links resolved and the derived bandwidths.
struct Fabric {
  unsigned N = 1, K = 1, M = 1;
  const hw::Link *Intra = nullptr;
  const hw::Link *Inter = nullptr;
  unsigned Ports = 1; ///< P = min(NicsPerNode, K)
  double Share = 1;
  std::string Missing; ///< why the group cannot communicate; empty if it can

  explicit Fabric(const CommGroup &G) {
    N = std::max(G.Size, 1u);
    K = std::min(std::max(G.RanksPerNode, 1u), N);
    M = G.nodes();
    Intra = G.Intra;
    Inter = G.Inter;
    Ports = std::max(1u, std::min(G.NicsPerNode, K));
    Share = G.InterShare > 0 && G.InterShare <= 1 ? G.InterShare : 1.0;
    if (K > 1 && !Intra)
      Missing = llvm::formatv("the group has {0} ranks per node but no "
                              "intra-node link",
                              K)
                    .str();
    else if (M > 1 && !Inter)
      Missing = llvm::formatv("the group spans {0} nodes but has no "
                              "inter-node link",
                              M)
                    .str();
  }

  double intraBw() const { return linkBw(*Intra); }
  double intraAlpha() const { return K > 1 ? Intra->LatencySeconds : 0; }
  /// bw_node: what one node sends to the others.
  double nodeBw() const { return Ports * linkBw(*Inter) * Share; }
  double interAlpha() const { return M > 1 ? Inter->LatencySeconds : 0; }

  double ringBw() const {
    if (M == 1)
      return intraBw();
    if (K == 1)
      return nodeBw();
    return std::min(intraBw(), nodeBw());
  }
  double ringAlpha() const { return M > 1 ? interAlpha() : intraAlpha(); }

  std::string intraNote() const {
    return llvm::formatv("intra {0} x {1} ({2})",
                         rate(Intra->BandwidthBytesPerSecond),
                         fmt(Intra->Efficiency), Intra->Name)
        .str();
  }
  std::string nodeNote() const {
    std::string S = llvm::formatv("inter {0} port{1} x {2} x {3}", Ports,
                                  Ports == 1 ? "" : "s",
                                  rate(Inter->BandwidthBytesPerSecond),
                                  fmt(Inter->Efficiency))
                        .str();
    if (Share < 1)
      S += " x share " + fmt(Share);
    return S + " (" + Inter->Name + ")";
  }
  /// How bw_ring was found.
  std::string ringNote() const {
    if (M == 1)
      return "bw = " + intraNote();
    if (K == 1)
      return "bw = " + nodeNote();
    return "bw = min(" + intraNote() + ", " + nodeNote() + ")";
  }
  std::string placement() const {
    if (M == 1)
      return llvm::formatv("{0} ranks on 1 node", N).str();
    return llvm::formatv("{0} ranks ({1} nodes x {2})", N, M, K).str();
  }
};

CommTime makeTime(CommAlgorithm A, double Latency, double Bandwidth,
                  std::string Explain,
                  CommProtocol P = CommProtocol::AlphaBeta) {
  CommTime T;
  T.LatencySeconds = Latency;
  T.BandwidthSeconds = Bandwidth;
  T.Seconds = Latency + Bandwidth;
  T.Algorithm = A;
  T.Protocol = P;
  T.Explain = std::move(Explain);
  return T;
}

/// "<factor> x <bytes> / <bw>"
std::string betaTerm(double Factor, double B, double Bw) {
  return fmt(Factor) + " x " + bytes(B) + " / " + rate(Bw);
}
/// "<steps> x <alpha>"
std::string alphaTerm(double Steps, double Alpha) {
  return fmt(Steps) + " x " + secs(Alpha);
}

/// Ring all-reduce (Phases 2), reduce-scatter and all-gather (Phases 1).
CommTime ring(Collective C, double B, const Fabric &F, unsigned Phases,
              bool Explain) {
  const double N = F.N;
  const double Factor = Phases * (N - 1) / N;
  const double Steps = Phases * (N - 1);
  const double Bw = F.ringBw();
  const double Beta = Factor * B / Bw;
  const double Alpha = Steps * F.ringAlpha();
  const char *Formula = Phases == 2 ? "2(n-1)/n x B / bw + 2(n-1) x alpha"
                                    : "(n-1)/n x B / bw + (n-1) x alpha";
  return makeTime(
      CommAlgorithm::Ring, Alpha, Beta,
      Explain
          ? llvm::formatv("ring {0}, {1}: {2} = {3} + {4} = {5}; {6}", name(C),
                          F.placement(), Formula, betaTerm(Factor, B, Bw),
                          alphaTerm(Steps, F.ringAlpha()), secs(Alpha + Beta),
                          F.ringNote())
                .str()
          : std::string());
}

CommTime treeAllReduce(double B, const Fabric &F, bool Explain) {
  const double Bw = F.ringBw();
  const double Beta = 2 * B / Bw;
  const unsigned InterLevels = ceilLog2(F.M), IntraLevels = ceilLog2(F.K);
  const double Alpha =
      2 * (InterLevels * F.interAlpha() + IntraLevels * F.intraAlpha());
  if (!Explain)
    return makeTime(CommAlgorithm::Tree, Alpha, Beta, {});
  std::string Lat;
  if (F.M == 1)
    Lat = alphaTerm(2 * IntraLevels, F.intraAlpha());
  else if (F.K == 1)
    Lat = alphaTerm(2 * InterLevels, F.interAlpha());
  else
    Lat = alphaTerm(2 * InterLevels, F.interAlpha()) + " + " +
          alphaTerm(2 * IntraLevels, F.intraAlpha());
  return makeTime(
      CommAlgorithm::Tree, Alpha, Beta,
      llvm::formatv("tree all-reduce, {0}: 2 x B / bw + 2 x (ceil(log2 "
                    "m) x alpha_inter + ceil(log2 k) x alpha_intra) = {1} + "
                    "{2} = {3}; {4}",
                    F.placement(), betaTerm(2, B, Bw), Lat, secs(Alpha + Beta),
                    F.ringNote())
          .str());
}

/// Two-level all-reduce (Phases 2) or reduce-scatter / all-gather (1).
CommTime hierarchical(Collective C, double B, const Fabric &F, unsigned Phases,
                      bool Explain) {
  if (F.K == 1 || F.M == 1) {
    // One level: the same sends as the ring.
    CommTime T = ring(C, B, F, Phases, Explain);
    T.Algorithm = CommAlgorithm::Hierarchical;
    if (Explain)
      T.Explain = "hierarchical = " + T.Explain + " (one level)";
    return T;
  }
  const double K = F.K, M = F.M;
  const double IntraFactor = Phases * (K - 1) / K;
  const double InterFactor = Phases * (M - 1) / M;
  const double IntraBeta = IntraFactor * B / F.intraBw();
  const double InterBeta = InterFactor * B / F.nodeBw();
  const double IntraAlpha = Phases * (K - 1) * F.intraAlpha();
  const double InterAlpha = Phases * (M - 1) * F.interAlpha();
  const double Beta = IntraBeta + InterBeta, Alpha = IntraAlpha + InterAlpha;
  if (!Explain)
    return makeTime(CommAlgorithm::Hierarchical, Alpha, Beta, {});
  const char *Formula =
      Phases == 2 ? "2(k-1)/k x B / bw_intra + 2(k-1) x alpha_intra + "
                    "2(m-1)/m x B / bw_node + 2(m-1) x alpha_inter"
                  : "(k-1)/k x B / bw_intra + (k-1) x alpha_intra + "
                    "(m-1)/m x B / bw_node + (m-1) x alpha_inter";
  return makeTime(
      CommAlgorithm::Hierarchical, Alpha, Beta,
      llvm::formatv("hierarchical {0}, {1}: {2} = {3} + {4} + {5} + {6} = "
                    "{7}; bw_intra = {8}, bw_node = {9}",
                    name(C), F.placement(), Formula,
                    betaTerm(IntraFactor, B, F.intraBw()),
                    alphaTerm(Phases * (K - 1), F.intraAlpha()),
                    betaTerm(InterFactor, B, F.nodeBw()),
                    alphaTerm(Phases * (M - 1), F.interAlpha()),
                    secs(Alpha + Beta), F.intraNote(), F.nodeNote())
          .str());
}

CommTime allToAll(double B, const Fabric &F, bool Explain) {
  const double N = F.N, K = F.K;
  if (F.M == 1 || F.K == 1) {
    const double Bw = F.ringBw();
    const double Alpha = (N - 1) * F.ringAlpha();
    const double Beta = (N - 1) / N * B / Bw;
    if (!Explain)
      return makeTime(CommAlgorithm::Direct, Alpha, Beta, {});
    return makeTime(CommAlgorithm::Direct, Alpha, Beta,
                    llvm::formatv("direct all-to-all, {0}: (n-1)/n x B / bw + "
                                  "(n-1) x alpha = {1} + {2} = {3}; {4}",
                                  F.placement(), betaTerm((N - 1) / N, B, Bw),
                                  alphaTerm(N - 1, F.ringAlpha()),
                                  secs(Alpha + Beta), F.ringNote())
                        .str());
  }
  const double IntraBeta = (K - 1) / N * B / F.intraBw();
  const double InterBeta = K * (N - K) / N * B / F.nodeBw();
  const double Beta = std::max(IntraBeta, InterBeta);
  const double Alpha = (K - 1) * F.intraAlpha() + (N - K) * F.interAlpha();
  if (!Explain)
    return makeTime(CommAlgorithm::Direct, Alpha, Beta, {});
  return makeTime(
      CommAlgorithm::Direct, Alpha, Beta,
      llvm::formatv("direct all-to-all, {0}: max((k-1)/n x B / bw_intra, "
                    "k(n-k)/n x B / bw_node) + (k-1) x alpha_intra + (n-k) x "
                    "alpha_inter = max({1}, {2}) + {3} + {4} = {5}; bw_intra "
                    "= {6}, bw_node = {7}",
                    F.placement(), betaTerm((K - 1) / N, B, F.intraBw()),
                    betaTerm(K * (N - K) / N, B, F.nodeBw()),
                    alphaTerm(K - 1, F.intraAlpha()),
                    alphaTerm(N - K, F.interAlpha()), secs(Alpha + Beta),
                    F.intraNote(), F.nodeNote())
          .str());
}

/// In-switch all-reduce, one node: each rank's buffer is read once by the
/// switch, which returns the reduced 1/n share (multimem.ld_reduce), and
/// each rank's reduced share is written once and multicast to all
/// (multimem.st): B + B/n each way per rank, two hops.
CommTime nvlsAllReduce(double B, const Fabric &F, bool Explain) {
  const double N = F.N;
  const double Factor = (N + 1) / N;
  const double Beta = Factor * B / F.intraBw();
  const double Alpha = 2 * F.intraAlpha();
  if (!Explain)
    return makeTime(CommAlgorithm::Nvls, Alpha, Beta, {});
  return makeTime(
      CommAlgorithm::Nvls, Alpha, Beta,
      llvm::formatv("in-switch (NVLS) all-reduce, {0}: (n+1)/n x B / bw + 2 "
                    "x alpha = {1} + {2} = {3}; bw = {4}",
                    F.placement(), betaTerm(Factor, B, F.intraBw()),
                    alphaTerm(2, F.intraAlpha()), secs(Alpha + Beta),
                    F.intraNote())
          .str());
}

CommTime broadcast(double B, const Fabric &F, bool Explain) {
  const double Bw = F.ringBw();
  const double Beta = B / Bw;
  const double IntraHops = double(F.M) * (F.K - 1), InterHops = F.M - 1.0;
  const double Alpha = IntraHops * F.intraAlpha() + InterHops * F.interAlpha();
  if (!Explain)
    return makeTime(CommAlgorithm::Ring, Alpha, Beta, {});
  std::string Lat;
  if (F.M == 1)
    Lat = alphaTerm(IntraHops, F.intraAlpha());
  else if (F.K == 1)
    Lat = alphaTerm(InterHops, F.interAlpha());
  else
    Lat = alphaTerm(IntraHops, F.intraAlpha()) + " + " +
          alphaTerm(InterHops, F.interAlpha());
  return makeTime(CommAlgorithm::Ring, Alpha, Beta,
                  llvm::formatv("ring broadcast (pipelined), {0}: B / bw + "
                                "m(k-1) x alpha_intra + (m-1) x alpha_inter "
                                "= {1} + {2} = {3}; {4}",
                                F.placement(), betaTerm(1, B, Bw), Lat,
                                secs(Alpha + Beta), F.ringNote())
                      .str());
}

//===--- Under NCCL's protocols (NcclTuning.h) ----------------------------===//

/// floor(log2(X)) for X >= 1, as NCCL's log2i.
unsigned floorLog2(unsigned X) {
  unsigned R = 0;
  while (X >>= 1)
    ++R;
  return R;
}

/// NCCL's latency of one call with algorithm A and protocol P whose steps
/// cross IntraHops links inside nodes and InterHops between them: base +
/// hops x each link's hop latency under P.
struct NcclLatency {
  double Base = 0, IntraHops = 0, HopIntra = 0, InterHops = 0, HopInter = 0;

  NcclLatency(const Fabric &F, nccl::Algo A, CommProtocol P, double Intra,
              double Inter)
      : Base(nccl::baseSeconds(A, P)), IntraHops(Intra), InterHops(Inter) {
    if (IntraHops > 0)
      HopIntra = nccl::hopSeconds(*F.Intra, A, P, F.M > 1);
    if (InterHops > 0)
      HopInter = nccl::hopSeconds(*F.Inter, A, P);
  }
  double seconds() const {
    return Base + IntraHops * HopIntra + InterHops * HopInter;
  }
  /// "<base> + <n> x <hop>[ + <n> x <hop>]", leaving out hops never taken.
  std::string terms() const {
    std::string S = secs(Base);
    if (IntraHops > 0)
      S += " + " + alphaTerm(IntraHops, HopIntra);
    if (InterHops > 0)
      S += " + " + alphaTerm(InterHops, HopInter);
    return S;
  }
};

/// "<factor> x <bytes> / (<bw> x <share>)"
std::string sharedBetaTerm(double Factor, double B, double Bw, double Share) {
  return fmt(Factor) + " x " + bytes(B) + " / (" + rate(Bw) + " x " +
         fmt(Share) + ")";
}

/// Ring all-reduce (Phases 2), reduce-scatter and all-gather (Phases 1).
CommTime ncclRing(Collective C, double B, const Fabric &F, unsigned Phases,
                  CommProtocol P, bool Explain) {
  const double N = F.N;
  const double Factor = Phases * (N - 1) / N;
  const double InterSteps = Phases * (F.M - 1.0);
  const double IntraSteps = Phases * (N - 1) - InterSteps;
  const double Share = nccl::bandwidthShare(nccl::Algo::Ring, P, C, F.M);
  const double Beta = Factor * B / (F.ringBw() * Share);
  const NcclLatency Lat(F, nccl::Algo::Ring, P, IntraSteps, InterSteps);
  const double Plateau = nccl::ringPlateauFactor(P, C, F.M, F.N, B);
  const double Alpha = Plateau * Lat.seconds();
  if (!Explain)
    return makeTime(CommAlgorithm::Ring, Alpha, Beta, {}, P);
  const char *Formula =
      F.M == 1 ? (Phases == 2 ? "base + 2(n-1) x hop + 2(n-1)/n x B / (bw x "
                                "share)"
                              : "base + (n-1) x hop + (n-1)/n x B / (bw x "
                                "share)")
               : (Phases == 2 ? "base + 2(n-m) x hop_intra + 2(m-1) x "
                                "hop_inter + 2(n-1)/n x B / (bw x share)"
                              : "base + (n-m) x hop_intra + (m-1) x "
                                "hop_inter + (n-1)/n x B / (bw x share)");
  std::string Terms = Lat.terms();
  if (Plateau != 1)
    Terms = fmt(Plateau) + " x (" + Terms + ")";
  return makeTime(
      CommAlgorithm::Ring, Alpha, Beta,
      llvm::formatv("ring {0}, {1}, NCCL {2}: {3} = {4} + {5} = {6}; {7}{8}",
                    name(C), F.placement(), name(P), Formula, Terms,
                    sharedBetaTerm(Factor, B, F.ringBw(), Share),
                    secs(Alpha + Beta), F.ringNote(),
                    Plateau != 1 ? "; latency x 1.9, NCCL's ring plateau "
                                   "across nodes"
                                 : "")
          .str(),
      P);
}

CommTime ncclTree(double B, const Fabric &F, CommProtocol P, bool Explain) {
  const double Share =
      nccl::bandwidthShare(nccl::Algo::Tree, P, Collective::AllReduce, F.M);
  const double Beta = 2 * B / (F.ringBw() * Share);
  // A chain inside each node, a binary tree across nodes, up and down.
  const NcclLatency Lat(F, nccl::Algo::Tree, P, 2.0 * (F.K - 1),
                        2.0 * floorLog2(F.M));
  const double Alpha = Lat.seconds();
  if (!Explain)
    return makeTime(CommAlgorithm::Tree, Alpha, Beta, {}, P);
  return makeTime(
      CommAlgorithm::Tree, Alpha, Beta,
      llvm::formatv("tree all-reduce, {0}, NCCL {1}: base + 2 x ((k-1) x "
                    "hop_intra + floor(log2 m) x hop_inter) + 2 x B / (bw x "
                    "share) = {2} + {3} = {4}; {5}",
                    F.placement(), name(P), Lat.terms(),
                    sharedBetaTerm(2, B, F.ringBw(), Share), secs(Alpha + Beta),
                    F.ringNote())
          .str(),
      P);
}

/// Two levels, each phase one NCCL call: Phases intra-node rings over k
/// ranks (reduce-scatter, and all-gather for an all-reduce) and one ring of
/// collective C over the m nodes.
CommTime ncclHierarchical(Collective C, double B, const Fabric &F,
                          unsigned Phases, CommProtocol P, bool Explain) {
  if (F.K == 1 || F.M == 1) {
    CommTime T = ncclRing(C, B, F, Phases, P, Explain);
    T.Algorithm = CommAlgorithm::Hierarchical;
    if (Explain)
      T.Explain = "hierarchical = " + T.Explain + " (one level)";
    return T;
  }
  const double K = F.K, M = F.M;
  const double Base = nccl::baseSeconds(nccl::Algo::Ring, P);
  // The intra-node calls run on one node each: no multi-node LL penalty.
  const double IntraShare = nccl::bandwidthShare(
      nccl::Algo::Ring, P, Collective::ReduceScatter, /*Nodes=*/1);
  const double InterShare = nccl::bandwidthShare(nccl::Algo::Ring, P, C, F.M);
  const double HopIntra = nccl::hopSeconds(*F.Intra, nccl::Algo::Ring, P);
  const double HopInter = nccl::hopSeconds(*F.Inter, nccl::Algo::Ring, P);
  const double Plateau = nccl::ringPlateauFactor(P, C, F.M, F.M, B / K);
  const double IntraFactor = Phases * (K - 1) / K;
  const double InterFactor = Phases * (M - 1) / M;
  const double IntraBeta = IntraFactor * B / (F.intraBw() * IntraShare);
  const double InterBeta = InterFactor * B / (F.nodeBw() * InterShare);
  const double IntraAlpha = Phases * Base + Phases * (K - 1) * HopIntra;
  const double InterAlpha = Plateau * (Base + Phases * (M - 1) * HopInter);
  const double Beta = IntraBeta + InterBeta, Alpha = IntraAlpha + InterAlpha;
  if (!Explain)
    return makeTime(CommAlgorithm::Hierarchical, Alpha, Beta, {}, P);
  std::string Inter =
      secs(Base) + " + " + alphaTerm(Phases * (M - 1), HopInter);
  if (Plateau != 1)
    Inter = fmt(Plateau) + " x (" + Inter + ")";
  return makeTime(
      CommAlgorithm::Hierarchical, Alpha, Beta,
      llvm::formatv(
          "hierarchical {0}, {1}, NCCL {2}, {3} intra-node call{4} and one "
          "across nodes: {5} x base + {6} x hop_intra + {7} + {8} + {9} = "
          "{10}; bw_intra = {11}, bw_node = {12}",
          name(C), F.placement(), name(P), Phases, Phases == 1 ? "" : "s",
          Phases, alphaTerm(Phases * (K - 1), HopIntra), Inter,
          sharedBetaTerm(IntraFactor, B, F.intraBw(), IntraShare),
          sharedBetaTerm(InterFactor, B, F.nodeBw(), InterShare),
          secs(Alpha + Beta), F.intraNote(), F.nodeNote())
          .str(),
      P);
}

/// NCCL's NVLS all-reduce inside one node (NcclTuning.h): Simple only.
CommTime ncclNvls(double B, const Fabric &F, bool Explain) {
  const double Share = nccl::NvlsBandwidthShare;
  const double Beta = B / (F.intraBw() * Share);
  const double Alpha = nccl::nvlsSeconds(*F.Intra);
  if (!Explain)
    return makeTime(CommAlgorithm::Nvls, Alpha, Beta, {}, CommProtocol::Simple);
  return makeTime(
      CommAlgorithm::Nvls, Alpha, Beta,
      llvm::formatv("NVLS all-reduce (the switch reduces), {0}, NCCL Simple: "
                    "hop_nvls + B / (bw x 5/6) = {1} + {2} = {3}; bw = {4}",
                    F.placement(), secs(Alpha),
                    sharedBetaTerm(1, B, F.intraBw(), Share),
                    secs(Alpha + Beta), F.intraNote())
          .str(),
      CommProtocol::Simple);
}

CommTime ncclBroadcast(double B, const Fabric &F, CommProtocol P,
                       bool Explain) {
  const double Share =
      nccl::bandwidthShare(nccl::Algo::Ring, P, Collective::Broadcast, F.M);
  const double Beta = B / (F.ringBw() * Share);
  const NcclLatency Lat(F, nccl::Algo::Ring, P, double(F.M) * (F.K - 1),
                        F.M - 1.0);
  const double Alpha = Lat.seconds();
  if (!Explain)
    return makeTime(CommAlgorithm::Ring, Alpha, Beta, {}, P);
  return makeTime(
      CommAlgorithm::Ring, Alpha, Beta,
      llvm::formatv("ring broadcast (pipelined), {0}, NCCL {1}: base + "
                    "m(k-1) x hop_intra + (m-1) x hop_inter + B / (bw x "
                    "share) = {2} + {3} = {4}; {5}",
                    F.placement(), name(P), Lat.terms(),
                    sharedBetaTerm(1, B, F.ringBw(), Share), secs(Alpha + Beta),
                    F.ringNote())
          .str(),
      P);
}

/// One message over one link (p2pTime, p2pSeconds).
CommTime linkTime(double Bytes, const hw::Link &L, bool Explain) {
  const double B = Bytes > 0 ? Bytes : 0;
  const double Beta = B / linkBw(L), Alpha = B > 0 ? L.LatencySeconds : 0;
  if (!Explain)
    return makeTime(CommAlgorithm::Direct, Alpha, Beta, {});
  return makeTime(CommAlgorithm::Direct, Alpha, Beta,
                  llvm::formatv("B / bw + alpha = {0} / ({1} x {2}) + {3} = "
                                "{4} ({5})",
                                bytes(B), rate(L.BandwidthBytesPerSecond),
                                fmt(L.Efficiency), secs(Alpha),
                                secs(Alpha + Beta), L.Name)
                      .str());
}

CommTime pointToPoint(double B, const Fabric &F, bool Explain) {
  if (F.M == 1) {
    CommTime T = linkTime(B, *F.Intra, Explain);
    if (Explain)
      T.Explain = "direct point-to-point inside a node: " + T.Explain;
    return T;
  }
  // One message goes over one port of the node.
  const double Bw = linkBw(*F.Inter) * F.Share;
  const double Beta = B / Bw, Alpha = F.Inter->LatencySeconds;
  if (!Explain)
    return makeTime(CommAlgorithm::Direct, Alpha, Beta, {});
  std::string Share = F.Share < 1 ? " x share " + fmt(F.Share) : "";
  return makeTime(
      CommAlgorithm::Direct, Alpha, Beta,
      llvm::formatv("direct point-to-point across nodes: B / bw + alpha = {0} "
                    "/ ({1} x {2}{3}) + {4} = {5} ({6})",
                    bytes(B), rate(F.Inter->BandwidthBytesPerSecond),
                    fmt(F.Inter->Efficiency), Share, secs(Alpha),
                    secs(Alpha + Beta), F.Inter->Name)
          .str());
}

/// Whether an all-reduce of the group can reduce in its switch under
/// protocol P (the group's, Auto for NCCL's choice): one node over an
/// NVSwitch with switch_reduction, and not LL or LL128, which NVLS lacks.
bool nvlsAvailable(const Fabric &F, CommProtocol P) {
  return F.M == 1 && F.K > 1 && F.Intra && F.Intra->SwitchReduction &&
         P != CommProtocol::LL && P != CommProtocol::LL128;
}

/// The algorithms collective C has under protocol P, the first being its
/// default.
llvm::SmallVector<CommAlgorithm, 3> algorithmsOf(Collective C, const Fabric &F,
                                                 CommProtocol P) {
  const bool TwoLevel = F.K > 1 && F.M > 1;
  switch (C) {
  case Collective::AllReduce:
    if (TwoLevel)
      return {CommAlgorithm::Ring, CommAlgorithm::Tree,
              CommAlgorithm::Hierarchical};
    if (nvlsAvailable(F, P))
      return {CommAlgorithm::Ring, CommAlgorithm::Tree, CommAlgorithm::Nvls};
    return {CommAlgorithm::Ring, CommAlgorithm::Tree};
  case Collective::ReduceScatter:
  case Collective::AllGather:
    if (TwoLevel)
      return {CommAlgorithm::Ring, CommAlgorithm::Hierarchical};
    return {CommAlgorithm::Ring};
  case Collective::Broadcast:
    return {CommAlgorithm::Ring};
  case Collective::AllToAll:
  case Collective::PointToPoint:
    return {CommAlgorithm::Direct};
  }
  return {CommAlgorithm::Ring};
}

/// The time of C with algorithm A, which C has, under NCCL protocol P.
CommTime ncclTimeWith(Collective C, double B, const Fabric &F, CommAlgorithm A,
                      CommProtocol P, bool Explain) {
  switch (C) {
  case Collective::AllReduce:
    if (A == CommAlgorithm::Tree)
      return ncclTree(B, F, P, Explain);
    if (A == CommAlgorithm::Nvls)
      return ncclNvls(B, F, Explain);
    if (A == CommAlgorithm::Hierarchical)
      return ncclHierarchical(C, B, F, 2, P, Explain);
    return ncclRing(C, B, F, 2, P, Explain);
  case Collective::ReduceScatter:
  case Collective::AllGather:
    if (A == CommAlgorithm::Hierarchical)
      return ncclHierarchical(C, B, F, 1, P, Explain);
    return ncclRing(C, B, F, 1, P, Explain);
  case Collective::Broadcast:
    return ncclBroadcast(B, F, P, Explain);
  case Collective::AllToAll:
  case Collective::PointToPoint:
    break;
  }
  return ncclRing(C, B, F, 2, P, Explain);
}

/// The time of C with algorithm A, which C has, in the alpha-beta forms.
CommTime alphaBetaTimeWith(Collective C, double B, const Fabric &F,
                           CommAlgorithm A, bool Explain) {
  switch (C) {
  case Collective::AllReduce:
    if (A == CommAlgorithm::Tree)
      return treeAllReduce(B, F, Explain);
    if (A == CommAlgorithm::Nvls)
      return nvlsAllReduce(B, F, Explain);
    if (A == CommAlgorithm::Hierarchical)
      return hierarchical(C, B, F, 2, Explain);
    return ring(C, B, F, 2, Explain);
  case Collective::ReduceScatter:
  case Collective::AllGather:
    if (A == CommAlgorithm::Hierarchical)
      return hierarchical(C, B, F, 1, Explain);
    return ring(C, B, F, 1, Explain);
  case Collective::AllToAll:
    return allToAll(B, F, Explain);
  case Collective::Broadcast:
    return broadcast(B, F, Explain);
  case Collective::PointToPoint:
    return pointToPoint(B, F, Explain);
  }
  return ring(C, B, F, 2, Explain);
}

bool runsOnNccl(Collective C) {
  return C != Collective::AllToAll && C != Collective::PointToPoint;
}

/// A SoC's processors share memory through their runtime (QNN, TensorRT's
/// DLA path), not through NCCL: their groups keep the alpha-beta forms
/// unless a protocol is asked for.
bool overSharedMemory(const Fabric &F) {
  const auto Shared = [](const hw::Link *L) {
    return L && L->Kind == hw::LinkKind::SharedMemory;
  };
  return (F.K > 1 && Shared(F.Intra)) || (F.M > 1 && Shared(F.Inter));
}

/// The protocol C is priced with: AlphaBeta where NCCL does not run it.
CommProtocol protocolFor(Collective C, const Fabric &F, CommProtocol P) {
  if (!runsOnNccl(C) || (P == CommProtocol::Auto && overSharedMemory(F)))
    return CommProtocol::AlphaBeta;
  return P;
}

/// The time of C with algorithm A, which C has, under protocol P; Auto picks
/// the fastest protocol NCCL enables for the group.
CommTime timeWith(Collective C, double B, const Fabric &F, CommAlgorithm A,
                  CommProtocol P, bool Explain) {
  const CommProtocol Priced = protocolFor(C, F, P);
  if (Priced == CommProtocol::AlphaBeta)
    return alphaBetaTimeWith(C, B, F, A, Explain);
  if (Priced != CommProtocol::Auto)
    return ncclTimeWith(C, B, F, A, Priced, Explain);
  if (A == CommAlgorithm::Nvls) // Simple is its only protocol
    return ncclTimeWith(C, B, F, A, CommProtocol::Simple, Explain);
  llvm::SmallVector<CommProtocol, 3> Protocols = {CommProtocol::LL};
  if (nccl::ll128Enabled(F.K > 1 ? F.Intra : nullptr,
                         F.M > 1 ? F.Inter : nullptr))
    Protocols.push_back(CommProtocol::LL128);
  Protocols.push_back(CommProtocol::Simple);
  llvm::SmallVector<CommTime, 3> Times;
  size_t Best = 0;
  for (CommProtocol Try : Protocols) {
    Times.push_back(ncclTimeWith(C, B, F, A, Try, Explain));
    if (Times.back().Seconds < Times[Best].Seconds)
      Best = Times.size() - 1;
  }
  CommTime T = Times[Best];
  if (Explain) {
    std::string Others;
    for (size_t I = 0; I < Times.size(); ++I)
      if (I != Best)
        Others += llvm::formatv("{0}{1} {2}", Others.empty() ? "" : ", ",
                                name(Times[I].Protocol), secs(Times[I].Seconds))
                      .str();
    T.Explain += "; NCCL's model chose " + std::string(name(T.Protocol)) +
                 " over " + Others;
  }
  return T;
}

/// "ring", or "ring/LL" under an NCCL protocol.
std::string algorithmLabel(const CommTime &T) {
  std::string S = name(T.Algorithm);
  if (T.Protocol != CommProtocol::AlphaBeta)
    S += std::string("/") + name(T.Protocol);
  return S;
}

/// collectiveTime, or with Explain false collectiveSeconds.
CommTime collective(Collective C, double Bytes, const CommGroup &G,
                    CommAlgorithm A, CommProtocol Asked, bool Explain) {
  const Fabric F(G);
  const CommProtocol P = Asked == CommProtocol::Auto ? G.Protocol : Asked;
  const llvm::SmallVector<CommAlgorithm, 3> Algs =
      algorithmsOf(C, F, protocolFor(C, F, P));
  const bool Has = std::find(Algs.begin(), Algs.end(), A) != Algs.end();
  // Hierarchical on a one-level group is priced (it equals the ring) even
  // though Auto does not list it.
  const bool OneLevelHier =
      A == CommAlgorithm::Hierarchical &&
      (C == Collective::AllReduce || C == Collective::ReduceScatter ||
       C == Collective::AllGather);
  const CommAlgorithm Chosen =
      A == CommAlgorithm::Auto || (!Has && !OneLevelHier) ? Algs.front() : A;

  // The protocol a result reports when nothing was priced.
  const CommProtocol Priced = protocolFor(C, F, P);
  const CommProtocol Reported =
      Priced == CommProtocol::Auto ? CommProtocol::Simple : Priced;
  if (F.N <= 1 || !(Bytes > 0)) {
    CommTime T;
    T.Algorithm = Chosen;
    T.Protocol = Reported;
    if (Explain)
      T.Explain = F.N <= 1 ? "0 s (a group of 1 rank communicates nothing)"
                           : "0 s (no bytes to send)";
    return T;
  }
  if (!F.Missing.empty()) {
    CommTime T;
    T.Seconds = T.BandwidthSeconds = Inf;
    T.Algorithm = Chosen;
    T.Protocol = Reported;
    if (Explain)
      T.Explain = llvm::formatv("inf ({0} cannot run: {1}; give the group "
                                "its links)",
                                name(C), F.Missing)
                      .str();
    return T;
  }

  if (A != CommAlgorithm::Auto) {
    CommTime T = timeWith(C, Bytes, F, Chosen, P, Explain);
    if (Explain && Chosen != A)
      T.Explain +=
          A == CommAlgorithm::Nvls && C == Collective::AllReduce
              ? llvm::formatv(" (nvls needs a group on one node over an "
                              "NVSwitch with switch_reduction, and a protocol "
                              "other than LL and LL128; {0} used)",
                              name(Chosen))
                    .str()
              : llvm::formatv(" ({0} {1} does not exist; {2} used)", name(A),
                              name(C), name(Chosen))
                    .str();
    return T;
  }
  llvm::SmallVector<CommTime, 3> Times;
  size_t Best = 0;
  for (CommAlgorithm Try : Algs) {
    Times.push_back(timeWith(C, Bytes, F, Try, P, Explain));
    if (Times.back().Seconds < Times[Best].Seconds)
      Best = Times.size() - 1;
  }
  CommTime T = Times[Best];
  if (Explain && Times.size() > 1) {
    std::string Others;
    for (size_t I = 0; I < Times.size(); ++I)
      if (I != Best)
        Others +=
            llvm::formatv("{0}{1} {2}", Others.empty() ? "" : ", ",
                          algorithmLabel(Times[I]), secs(Times[I].Seconds))
                .str();
    T.Explain += "; auto chose " + algorithmLabel(T) + " over " + Others;
  }
  return T;
}

} // namespace

CommTime perfc::cost::p2pTime(double Bytes, const hw::Link &L) {
  return linkTime(Bytes, L, /*Explain=*/true);
}

double perfc::cost::p2pSeconds(double Bytes, const hw::Link &L) {
  return linkTime(Bytes, L, /*Explain=*/false).Seconds;
}

CommTime perfc::cost::collectiveTime(Collective C, double Bytes,
                                     const CommGroup &G, CommAlgorithm A,
                                     CommProtocol P) {
  return collective(C, Bytes, G, A, P, /*Explain=*/true);
}

double perfc::cost::collectiveSeconds(Collective C, double Bytes,
                                      const CommGroup &G, CommAlgorithm A,
                                      CommProtocol P) {
  return collective(C, Bytes, G, A, P, /*Explain=*/false).Seconds;
}

double perfc::cost::busBandwidth(Collective C, double Bytes, unsigned Ranks,
                                 double Seconds) {
  if (!(Seconds > 0))
    return 0;
  const double N = std::max(Ranks, 1u);
  double Factor = 1;
  switch (C) {
  case Collective::AllReduce:
    Factor = 2 * (N - 1) / N;
    break;
  case Collective::ReduceScatter:
  case Collective::AllGather:
  case Collective::AllToAll:
    Factor = (N - 1) / N;
    break;
  case Collective::Broadcast:
  case Collective::PointToPoint:
    Factor = 1;
    break;
  }
  return Bytes / Seconds * Factor;
}
