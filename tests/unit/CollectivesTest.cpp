//===- CollectivesTest.cpp - Collectives and gradient overlap, by hand ----===//
#include "TestDevices.h"

#include "costmodels/Collectives.h"
#include "costmodels/Overlap.h"
#include "hwdb/Loader.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

using namespace perfc;
using namespace perfc::test;
using namespace perfc::cost;

namespace {

/// Round numbers so that every expected time below is a short hand sum:
/// 4 nodes x 8 devices, 100 GB/s and 1 us inside a node, 10 GB/s and 5 us
/// per NIC across nodes, 8 NICs per node, efficiencies 1.
const char *const TestCluster = R"(cluster:
  name: testnet
  nodes:
    - count: 4
      device: t4
      devices_per_node: 8
      intra_node_link: {name: fastlink, kind: nvswitch, bandwidth: 100 GB/s, latency: 1 us, efficiency: 1}
      inter_node_link: {name: slownet, kind: infiniband, bandwidth: 10 GB/s, latency: 5 us, efficiency: 1}
      nics_per_node: 8
)";

/// The same nodes with one NIC each, 2 nodes.
const char *const OneNicCluster = R"(cluster:
  name: onenic
  nodes:
    - count: 2
      device: t4
      devices_per_node: 8
      intra_node_link: {name: fastlink, kind: nvswitch, bandwidth: 100 GB/s, latency: 1 us, efficiency: 1}
      inter_node_link: {name: slownet, kind: infiniband, bandwidth: 10 GB/s, latency: 5 us, efficiency: 1}
      nics_per_node: 1
)";

hw::Cluster load(const char *Text) {
  return clusterFromYaml(Text, "collectives-test.yaml");
}

hw::Cluster bundled(const char *Name) {
  auto C = hw::loadHardware(Name);
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return std::move(*C);
}

CommGroup group(const hw::Cluster &C, unsigned Size, unsigned Stride) {
  auto G = groupOf(C, Size, Stride);
  REQUIRE_MESSAGE(bool(G), llvm::toString(G.takeError()));
  return *G;
}

std::string errorOf(llvm::Expected<CommGroup> G) {
  if (G) {
    FAIL("expected an error");
    return "";
  }
  return llvm::toString(G.takeError());
}

doctest::Approx near(double V) { return doctest::Approx(V).epsilon(1e-9); }

/// The alpha-beta forms of Collectives.h, without NCCL's protocols.
CommTime textbook(Collective K, double Bytes, const CommGroup &G,
                  CommAlgorithm A = CommAlgorithm::Auto) {
  return collectiveTime(K, Bytes, G, A, CommProtocol::AlphaBeta);
}

constexpr double GB = 1e9;
constexpr double MiB = 1024.0 * 1024.0;
constexpr double us = 1e-6, ms = 1e-3;

} // namespace

TEST_SUITE("collectives.placement") {

  TEST_CASE("groupOf on dgx-a100: one node of 8, errors beyond it") {
    const hw::Cluster C = bundled("dgx-a100");
    const CommGroup Tp = group(C, 8, 1);
    CHECK(Tp.Size == 8);
    CHECK(Tp.RanksPerNode == 8);
    CHECK(Tp.nodes() == 1);
    REQUIRE(Tp.Intra);
    CHECK(Tp.Intra->Name == "nvswitch-gen2");
    CHECK(Tp.Inter == nullptr); // the group fits in the node

    const CommGroup Half = group(C, 4, 2); // ranks 0 2 4 6
    CHECK(Half.RanksPerNode == 4);
    CHECK(Half.Inter == nullptr);

    const CommGroup One = group(C, 1, 1);
    CHECK(One.RanksPerNode == 1);
    CHECK(One.Intra == nullptr);
    CHECK(One.Inter == nullptr);

    CHECK(errorOf(groupOf(C, 16, 8)) ==
          "a group of 16 ranks with stride 8 needs 128 devices; cluster "
          "'dgx-a100' has 8");
    CHECK(errorOf(groupOf(C, 2, 8)) ==
          "a group of 2 ranks with stride 8 needs 16 devices; cluster "
          "'dgx-a100' has 8");
    CHECK(errorOf(groupOf(C, 1, 16)) ==
          "a group of 1 rank with stride 16 needs 16 devices; cluster "
          "'dgx-a100' has 8");
    CHECK(errorOf(groupOf(C, 0, 1)) ==
          "a group of 0 ranks; a communication group needs at least 1 rank");
    CHECK(errorOf(groupOf(C, 4, 0)) ==
          "a group of 4 ranks with stride 0; the stride between ranks must be "
          "at least 1");
  }

  TEST_CASE("groupOf on selene-a100-80gb: tensor, data and pipeline groups") {
    const hw::Cluster C = bundled("selene-a100-80gb");
    REQUIRE(C.numDevices() == 512);

    // Tensor parallel 8: one node over NVSwitch.
    const CommGroup Tp = group(C, 8, 1);
    CHECK(Tp.RanksPerNode == 8);
    CHECK(Tp.Inter == nullptr);

    // Data parallel 64 at stride 8: one rank on each of 64 nodes; the 8
    // groups of a node share its 8 HDR ports, one each.
    const CommGroup Dp = group(C, 64, 8);
    CHECK(Dp.RanksPerNode == 1);
    CHECK(Dp.nodes() == 64);
    CHECK(Dp.Intra == nullptr);
    REQUIRE(Dp.Inter);
    CHECK(Dp.Inter->Name == "infiniband-hdr");
    CHECK(Dp.NicsPerNode == 1);
    CHECK(Dp.InterShare == 1.0);

    // 16 consecutive ranks: 2 whole nodes, all 8 ports of each.
    const CommGroup Two = group(C, 16, 1);
    CHECK(Two.RanksPerNode == 8);
    CHECK(Two.nodes() == 2);
    CHECK(Two.Intra->Name == "nvswitch-gen2");
    CHECK(Two.Inter->Name == "infiniband-hdr");
    CHECK(Two.NicsPerNode == 8);

    // Stride 2 (tensor parallel 2): 4 ranks on each of 8 nodes, 4 ports
    // each (8 ports x 4 ranks / 8 devices).
    const CommGroup S2 = group(C, 32, 2);
    CHECK(S2.RanksPerNode == 4);
    CHECK(S2.nodes() == 8);
    CHECK(S2.NicsPerNode == 4);
    CHECK(S2.InterShare == 1.0);

    // A stride that does not divide 8 is fine inside a node ...
    CHECK(group(C, 3, 3).RanksPerNode == 3); // ranks 0 3 6
    // ... but not across nodes: ranks 0 3 6 | 9.
    CHECK(errorOf(groupOf(C, 4, 3)) ==
          "a group of 4 ranks with stride 3 does not put the same number of "
          "ranks on every node of cluster 'selene-a100-80gb' (8 devices per "
          "node); the collective models need a stride that divides 8 or is a "
          "multiple of it, and a group that fills the nodes it spans (size x "
          "stride a multiple of 8)");
    // 12 consecutive ranks: 8 on one node, 4 on the next.
    CHECK(llvm::StringRef(errorOf(groupOf(C, 12, 1)))
              .startswith("a group of 12 ranks with stride 1 does not put the "
                          "same number of ranks on every node"));
    CHECK(errorOf(groupOf(C, 1024, 1)) ==
          "a group of 1024 ranks with stride 1 needs 1024 devices; cluster "
          "'selene-a100-80gb' has 512");
  }

  TEST_CASE("ParallelLayout: Megatron's order and a caller's order") {
    const hw::Cluster C = bundled("selene-a100-80gb");
    ParallelLayout L;
    L.Tensor = 8;
    L.Data = 16;
    L.Pipeline = 4; // 512 ranks
    // Megatron: tensor fastest, then data, then pipeline.
    CHECK(L.strideOf(ParallelDim::Tensor) == 1);
    CHECK(L.strideOf(ParallelDim::Data) == 8);
    CHECK(L.strideOf(ParallelDim::Pipeline) == 128);
    auto Tp = groupOf(C, L, ParallelDim::Tensor);
    REQUIRE(Tp);
    CHECK(Tp->RanksPerNode == 8);
    auto Dp = groupOf(C, L, ParallelDim::Data);
    REQUIRE(Dp);
    CHECK(Dp->Size == 16);
    CHECK(Dp->RanksPerNode == 1);
    CHECK(Dp->nodes() == 16);
    auto Pp = groupOf(C, L, ParallelDim::Pipeline);
    REQUIRE(Pp);
    CHECK(Pp->Size == 4);
    CHECK(Pp->nodes() == 4);

    // Tensor, then pipeline, then data: data-parallel stride tp x pp.
    L.Order = {ParallelDim::Tensor, ParallelDim::Pipeline, ParallelDim::Data};
    CHECK(L.strideOf(ParallelDim::Data) == 32);
    CHECK(L.strideOf(ParallelDim::Pipeline) == 8);

    L.Order = {ParallelDim::Tensor, ParallelDim::Tensor, ParallelDim::Data};
    CHECK(errorOf(groupOf(C, L, ParallelDim::Data)) ==
          "the rank order must name the tensor dimension exactly once");
    L.Order = {ParallelDim::Tensor, ParallelDim::Data, ParallelDim::Pipeline};
    L.Data = 32;
    CHECK(errorOf(groupOf(C, L, ParallelDim::Data)) ==
          "tensor 8 x data 32 x pipeline 4 needs 1024 devices; cluster "
          "'selene-a100-80gb' has 512");
  }

  TEST_CASE("groupOf shares a node's NICs among the groups on it") {
    const hw::Cluster C = load(OneNicCluster);
    // Stride 8: 8 groups with a rank on each node, 1 NIC: 1/8 each.
    const CommGroup Dp = group(C, 2, 8);
    CHECK(Dp.RanksPerNode == 1);
    CHECK(Dp.NicsPerNode == 1);
    CHECK(Dp.InterShare == near(0.125));
    // All 16 ranks: one group, the NIC to itself.
    const CommGroup All = group(C, 16, 1);
    CHECK(All.NicsPerNode == 1);
    CHECK(All.InterShare == 1.0);
  }

} // TEST_SUITE

// The textbook alpha-beta forms (CommProtocol::AlphaBeta): the closed forms
// of Collectives.h, and of issue 4 for the ring all-reduce.
TEST_SUITE("collectives.time") {

  TEST_CASE("ring and tree all-reduce inside a node") {
    const hw::Cluster C = load(TestCluster);
    const CommGroup G = group(C, 8, 1); // n = 8 over fastlink

    // Ring: 2(n-1)/n x B / bw + 2(n-1) alpha
    //     = 1.75 x 1 GB / 100 GB/s + 14 x 1 us = 17.5 ms + 14 us.
    const CommTime R =
        textbook(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Ring);
    CHECK(R.Algorithm == CommAlgorithm::Ring);
    CHECK(R.BandwidthSeconds == near(17.5 * ms));
    CHECK(R.LatencySeconds == near(14 * us));
    CHECK(R.Seconds == near(17.514 * ms));
    CHECK(R.Explain ==
          "ring all-reduce, 8 ranks on 1 node: 2(n-1)/n x B / bw + 2(n-1) x "
          "alpha = 1.75 x 1 GB / 100 GB/s + 14 x 1 us = 17.51 ms; bw = intra "
          "100 GB/s x 1 (fastlink)");

    // Tree: 2 x B / bw + 2 log2(n) alpha = 20 ms + 6 us.
    const CommTime T =
        textbook(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Tree);
    CHECK(T.Algorithm == CommAlgorithm::Tree);
    CHECK(T.BandwidthSeconds == near(20 * ms));
    CHECK(T.LatencySeconds == near(6 * us));

    // Auto: the ring for 1 GB ...
    const CommTime A = textbook(Collective::AllReduce, 1 * GB, G);
    CHECK(A.Algorithm == CommAlgorithm::Ring);
    CHECK(A.Seconds == near(R.Seconds));
    CHECK(A.Explain.find("auto chose ring over tree 20.01 ms") !=
          std::string::npos);
    // ... the tree for 1 KB: ring 17.5 ns + 14 us, tree 20 ns + 6 us.
    const CommTime Small = textbook(Collective::AllReduce, 1e3, G);
    CHECK(Small.Algorithm == CommAlgorithm::Tree);
    CHECK(Small.Seconds == near(6.02 * us));
  }

  TEST_CASE("all-reduce across 2 nodes: ring, tree, hierarchical") {
    const hw::Cluster C = load(TestCluster);
    const CommGroup G = group(C, 16, 1); // n 16, k 8, m 2, 8 NICs
    REQUIRE(G.NicsPerNode == 8);
    // bw_node = 8 x 10 GB/s = 80 GB/s; bw_ring = min(100, 80) = 80 GB/s.

    // Ring: 1.875 x 1 GB / 80 GB/s + 30 x 5 us = 23.4375 ms + 150 us.
    const CommTime R =
        textbook(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Ring);
    CHECK(R.BandwidthSeconds == near(23.4375 * ms));
    CHECK(R.LatencySeconds == near(150 * us));
    // Nodes' share of the bus bandwidth: 2(n-1)/n x B / t = 80 GB/s without
    // the latency.
    CHECK(busBandwidth(Collective::AllReduce, 1 * GB, 16, R.BandwidthSeconds) ==
          near(80 * GB));

    // Tree: 2 x 1 GB / 80 GB/s + 2 x (1 x 5 us + 3 x 1 us) = 25 ms + 16 us.
    const CommTime T =
        textbook(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Tree);
    CHECK(T.BandwidthSeconds == near(25 * ms));
    CHECK(T.LatencySeconds == near(16 * us));

    // Hierarchical: 2 x 7/8 x 1 GB / 100 GB/s + 14 x 1 us
    //             + 2 x 1/2 x 1 GB / 80 GB/s + 2 x 5 us
    //             = 17.5 ms + 14 us + 12.5 ms + 10 us = 30 ms + 24 us.
    const CommTime H =
        textbook(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Hierarchical);
    CHECK(H.Algorithm == CommAlgorithm::Hierarchical);
    CHECK(H.BandwidthSeconds == near(30 * ms));
    CHECK(H.LatencySeconds == near(24 * us));

    // Auto picks the minimum: the ring for 1 GB, the tree for 1 KB (ring
    // 150 us, hierarchical 24 us, tree 16 us of latency).
    const CommTime A = textbook(Collective::AllReduce, 1 * GB, G);
    CHECK(A.Algorithm == CommAlgorithm::Ring);
    CHECK(A.Seconds == near(std::min({R.Seconds, T.Seconds, H.Seconds})));
    CHECK(textbook(Collective::AllReduce, 1e3, G).Algorithm ==
          CommAlgorithm::Tree);
  }

  TEST_CASE("hierarchical wins when the nodes have one NIC") {
    const hw::Cluster C = load(TestCluster);
    CommGroup G = group(C, 16, 1);
    G.NicsPerNode = 1; // bw_node = 10 GB/s
    // Ring: 1.875 x 1 GB / 10 GB/s + 150 us = 187.5 ms + 150 us.
    // Tree: 2 x 1 GB / 10 GB/s + 16 us = 200 ms + 16 us.
    // Hierarchical: 17.5 ms + 14 us + 1 x 1 GB / 10 GB/s + 10 us
    //             = 117.5 ms + 24 us.
    const CommTime A = textbook(Collective::AllReduce, 1 * GB, G);
    CHECK(A.Algorithm == CommAlgorithm::Hierarchical);
    CHECK(A.Seconds == near(117.524 * ms));
    CHECK(textbook(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Ring)
              .Seconds == near(187.65 * ms));
    CHECK(textbook(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Tree)
              .Seconds == near(200.016 * ms));
  }

  TEST_CASE("data-parallel ring over one rank per node") {
    const hw::Cluster C = load(TestCluster);
    const CommGroup G = group(C, 4, 8); // n 4, k 1, m 4, 1 NIC each
    // Ring: 2 x 3/4 x 1 GB / 10 GB/s + 6 x 5 us = 150 ms + 30 us.
    const CommTime R = textbook(Collective::AllReduce, 1 * GB, G);
    CHECK(R.Algorithm == CommAlgorithm::Ring);
    CHECK(R.Seconds == near(150.03 * ms));
    // Tree: 2 x 1 GB / 10 GB/s + 2 x 2 x 5 us = 200 ms + 20 us.
    CHECK(textbook(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Tree)
              .Seconds == near(200.02 * ms));
    // Hierarchical on a one-level group is the ring.
    CHECK(
        textbook(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Hierarchical)
            .Seconds == near(R.Seconds));
  }

  TEST_CASE("NICs shared by 8 groups give each an eighth") {
    const hw::Cluster C = load(OneNicCluster);
    const CommGroup G = group(C, 2, 8); // share 1/8 of one 10 GB/s NIC
    // Ring: 2 x 1/2 x 1 GB / 1.25 GB/s + 2 x 5 us = 800 ms + 10 us.
    CHECK(textbook(Collective::AllReduce, 1 * GB, G).Seconds ==
          near(800.01 * ms));
  }

  TEST_CASE("reduce-scatter and all-gather") {
    const hw::Cluster C = load(TestCluster);
    const CommGroup Node = group(C, 8, 1);
    // (n-1)/n x B / bw + (n-1) alpha = 8.75 ms + 7 us.
    for (Collective K : {Collective::ReduceScatter, Collective::AllGather}) {
      CAPTURE(name(K));
      const CommTime T = textbook(K, 1 * GB, Node);
      CHECK(T.Algorithm == CommAlgorithm::Ring);
      CHECK(T.Seconds == near(8.757 * ms));
    }
    const CommGroup Two = group(C, 16, 1);
    // Ring: 15/16 x 1 GB / 80 GB/s + 15 x 5 us = 11.71875 ms + 75 us.
    // Hierarchical: 7/8 x 1 GB / 100 GB/s + 7 x 1 us + 1/2 x 1 GB / 80 GB/s
    //             + 1 x 5 us = 8.75 ms + 6.25 ms + 12 us = 15.012 ms.
    const CommTime R = textbook(Collective::ReduceScatter, 1 * GB, Two);
    CHECK(R.Algorithm == CommAlgorithm::Ring);
    CHECK(R.Seconds == near(11.79375 * ms));
    CHECK(textbook(Collective::AllGather, 1 * GB, Two,
                   CommAlgorithm::Hierarchical)
              .Seconds == near(15.012 * ms));
    // No tree reduce-scatter: the ring, said so.
    const CommTime T =
        textbook(Collective::ReduceScatter, 1 * GB, Two, CommAlgorithm::Tree);
    CHECK(T.Algorithm == CommAlgorithm::Ring);
    CHECK(T.Seconds == near(R.Seconds));
    CHECK(T.Explain.find("tree reduce-scatter does not exist; ring used") !=
          std::string::npos);
  }

  TEST_CASE("all-to-all") {
    const hw::Cluster C = load(TestCluster);
    // One node: 7/8 x 1 GB / 100 GB/s + 7 x 1 us = 8.75 ms + 7 us.
    const CommTime One = textbook(Collective::AllToAll, 1 * GB, group(C, 8, 1));
    CHECK(One.Algorithm == CommAlgorithm::Direct);
    CHECK(One.Seconds == near(8.757 * ms));
    // Two nodes of 8: each rank sends 7/16 GB inside its node and 8/16 GB
    // out of it; a node sends 8 x 0.5 GB = 4 GB over 80 GB/s = 50 ms, more
    // than 7/16 GB / 100 GB/s = 4.375 ms; latency 7 x 1 us + 8 x 5 us.
    const CommTime Two =
        textbook(Collective::AllToAll, 1 * GB, group(C, 16, 1));
    CHECK(Two.BandwidthSeconds == near(50 * ms));
    CHECK(Two.LatencySeconds == near(47 * us));
  }

  TEST_CASE("broadcast and point-to-point") {
    const hw::Cluster C = load(TestCluster);
    // Pipelined ring broadcast: B / bw + (n-1) alpha = 10 ms + 7 us.
    CHECK(textbook(Collective::Broadcast, 1 * GB, group(C, 8, 1)).Seconds ==
          near(10.007 * ms));
    // Two nodes: 1 GB / 80 GB/s + 2 x 7 x 1 us + 1 x 5 us = 12.5 ms + 19 us.
    CHECK(textbook(Collective::Broadcast, 1 * GB, group(C, 16, 1)).Seconds ==
          near(12.519 * ms));

    // Inside a node: 1 GB / 100 GB/s + 1 us; across: 1 GB / 10 GB/s + 5 us.
    const CommTime In =
        textbook(Collective::PointToPoint, 1 * GB, group(C, 2, 1));
    CHECK(In.Algorithm == CommAlgorithm::Direct);
    CHECK(In.Seconds == near(10.001 * ms));
    const CommGroup Across = group(C, 2, 8);
    CHECK(textbook(Collective::PointToPoint, 1 * GB, Across).Seconds ==
          near(100.005 * ms));
    const CommTime P = p2pTime(1 * GB, *Across.Inter);
    CHECK(P.Seconds == near(100.005 * ms));
    CHECK(P.Explain ==
          "B / bw + alpha = 1 GB / (10 GB/s x 1) + 5 us = 100 ms (slownet)");
  }

  TEST_CASE("groups of one rank and empty buffers cost nothing") {
    const hw::Cluster C = load(TestCluster);
    for (Collective K : {Collective::AllReduce, Collective::ReduceScatter,
                         Collective::AllGather, Collective::AllToAll,
                         Collective::Broadcast, Collective::PointToPoint}) {
      CAPTURE(name(K));
      CHECK(collectiveTime(K, 1 * GB, group(C, 1, 1)).Seconds == 0);
      CHECK(collectiveTime(K, 0, group(C, 8, 1)).Seconds == 0);
      CHECK(collectiveTime(K, 1 * GB, CommGroup()).Seconds == 0);
    }
  }

  TEST_CASE("the time-only entry points give the explained times") {
    // collectiveSeconds and p2pSeconds skip the formatting only: every
    // collective, algorithm and protocol, on one node, across nodes (ring,
    // tree, hierarchical), with shared NICs, without links and with nothing to
    // send gives the same seconds as collectiveTime.
    const hw::Cluster C = load(TestCluster), OneNic = load(OneNicCluster);
    CommGroup Missing;
    Missing.Size = 8;
    Missing.RanksPerNode = 8;
    const CommGroup Groups[] = {group(C, 8, 1), group(C, 32, 1),
                                group(C, 4, 8), group(OneNic, 16, 1),
                                group(C, 1, 1), Missing};
    for (const CommGroup &G : Groups)
      for (Collective K : {Collective::AllReduce, Collective::ReduceScatter,
                           Collective::AllGather, Collective::AllToAll,
                           Collective::Broadcast, Collective::PointToPoint})
        for (CommAlgorithm A :
             {CommAlgorithm::Auto, CommAlgorithm::Ring, CommAlgorithm::Tree,
              CommAlgorithm::Hierarchical, CommAlgorithm::Direct})
          for (CommProtocol P :
               {CommProtocol::Auto, CommProtocol::LL, CommProtocol::LL128,
                CommProtocol::Simple, CommProtocol::AlphaBeta})
            for (double Bytes : {0.0, 1e3, 1e6, 1 * GB}) {
              CAPTURE(G.Size);
              CAPTURE(G.RanksPerNode);
              CAPTURE(name(K));
              CAPTURE(name(A));
              CAPTURE(name(P));
              CAPTURE(Bytes);
              const CommTime T = collectiveTime(K, Bytes, G, A, P);
              CHECK(!T.Explain.empty());
              CHECK(T.Protocol != CommProtocol::Auto);
              const double S = collectiveSeconds(K, Bytes, G, A, P);
              CHECK(
                  (S == T.Seconds || (std::isinf(S) && std::isinf(T.Seconds))));
            }
    const hw::Link &Fast = *C.Groups.front().IntraNode;
    CHECK(p2pSeconds(1 * GB, Fast) == p2pTime(1 * GB, Fast).Seconds);
    CHECK(p2pSeconds(1 * GB, Fast) == near(10 * ms + 1 * us));
  }

  TEST_CASE("a group without its links costs infinity") {
    CommGroup G;
    G.Size = 8;
    G.RanksPerNode = 8;
    const CommTime T = collectiveTime(Collective::AllReduce, 1 * GB, G);
    CHECK(std::isinf(T.Seconds));
    CHECK(T.Explain == "inf (all-reduce cannot run: the group has 8 ranks per "
                       "node but no intra-node link; give the group its "
                       "links)");
    G.RanksPerNode = 1; // 8 nodes, no Inter
    CHECK(std::isinf(collectiveTime(Collective::AllGather, 1 * GB, G).Seconds));
  }

  TEST_CASE("names") {
    CHECK(std::string(name(Collective::AllReduce)) == "all-reduce");
    CHECK(std::string(name(Collective::PointToPoint)) == "point-to-point");
    CHECK(std::string(name(CommAlgorithm::Hierarchical)) == "hierarchical");
    CHECK(std::string(name(CommAlgorithm::Auto)) == "auto");
    CHECK(std::string(name(CompressionKind::TopK)) == "top-k");
    CHECK(std::string(name(ParallelDim::Pipeline)) == "pipeline");
  }

} // TEST_SUITE

TEST_SUITE("collectives.overlap") {

  // Two ranks in one node: a ring all-reduce of b >= 100 MB takes, with
  // NCCL's Simple protocol, 2 x 1/2 x b / 100 GB/s + 8.4 us + 2 x 3.4/0.47
  // x 1 us = b / 100 GB/s + Lat (LL128 would lose 8% of the bandwidth, the
  // tree half of it, LL three quarters).
  CommGroup pair() {
    static const hw::Cluster C = load(TestCluster);
    return group(C, 2, 1);
  }
  const double Lat = 8.4 * us + 2 * (3.4 / 0.47) * us; // 22.87 us

  TEST_CASE("communication hidden behind backward is not exposed") {
    // Backward order: 10 ms + 100 MB, 10 ms + 100 MB, 10 ms without
    // parameters. Buckets of 100 MB close at 10 ms and 20 ms; each
    // all-reduce takes 1 ms + Lat, ending at 11 and 21 ms + Lat, before
    // backward ends at 30 ms.
    const LayerBackward Layers[] = {
        {10 * ms, 100e6}, {10 * ms, 100e6}, {10 * ms, 0}};
    const OverlapTime O = overlapGradientAllReduce(Layers, 100e6, pair());
    REQUIRE(O.Buckets.size() == 2);
    CHECK(O.Buckets[0].EndSeconds == near(11 * ms + Lat));
    CHECK(O.Buckets[1].StartSeconds == near(20 * ms));
    CHECK(O.Buckets[1].EndSeconds == near(21 * ms + Lat));
    CHECK(O.ComputeSeconds == near(30 * ms));
    CHECK(O.CommSeconds == near(2 * ms + 2 * Lat));
    CHECK(O.ExposedSeconds == 0);
  }

  TEST_CASE("ZeRO's buckets are reduce-scattered, each priced as one") {
    // The same buckets as an all-reduce, each exchanged by the collective
    // given: on a pair a reduce-scatter moves half an all-reduce's bytes.
    const LayerBackward Layers[] = {
        {10 * ms, 100e6}, {10 * ms, 100e6}, {10 * ms, 100e6}};
    const OverlapTime Ar = overlapGradientAllReduce(Layers, 100e6, pair());
    const OverlapTime Rs =
        overlapGradientExchange(Layers, 100e6, pair(), Compression(),
                                CommAlgorithm::Auto, Collective::ReduceScatter);
    REQUIRE(Rs.Buckets.size() == 3);
    const double One =
        collectiveTime(Collective::ReduceScatter, 100e6, pair()).Seconds;
    CHECK(Rs.CommSeconds == near(3 * One));
    CHECK(Rs.CommSeconds < Ar.CommSeconds);
    CHECK(Rs.Buckets[2].EndSeconds == near(30 * ms + One));
    CHECK(Rs.ExposedSeconds == near(One));
    CHECK(explain(Rs, 100e6, Compression(), Collective::ReduceScatter)
              .find("reduce-scatter") != std::string::npos);
  }

  TEST_CASE("a last big bucket is exposed by its own time") {
    // 10 ms + 100 MB, then 10 ms + 1 GB: the second bucket closes when
    // backward ends (20 ms) and takes 10 ms + Lat, all of it exposed.
    const LayerBackward Layers[] = {{10 * ms, 100e6}, {10 * ms, 1e9}};
    const OverlapTime O = overlapGradientAllReduce(Layers, 100e6, pair());
    REQUIRE(O.Buckets.size() == 2);
    const double Last = O.Buckets[1].EndSeconds - O.Buckets[1].StartSeconds;
    CHECK(Last == near(10 * ms + Lat));
    CHECK(O.ExposedSeconds == near(Last));
    CHECK(O.CommSeconds == near(11 * ms + 2 * Lat));
  }

  TEST_CASE("all-reduces queue on one stream") {
    // 3 x (1 ms + 1 GB), buckets of 1 GB: ready at 1, 2, 3 ms; each takes
    // 10 ms + Lat, back to back from 1 ms: ends at 31 ms + 3 Lat; backward
    // ends at 3 ms, so 28 ms + 3 Lat are exposed.
    const LayerBackward Layers[] = {
        {1 * ms, 1e9}, {1 * ms, 1e9}, {1 * ms, 1e9}};
    const OverlapTime O = overlapGradientAllReduce(Layers, 1e9, pair());
    REQUIRE(O.Buckets.size() == 3);
    CHECK(O.Buckets[1].ReadySeconds == near(2 * ms));
    CHECK(O.Buckets[1].StartSeconds == near(11 * ms + Lat));
    CHECK(O.Buckets[2].EndSeconds == near(31 * ms + 3 * Lat));
    CHECK(O.ExposedSeconds == near(28 * ms + 3 * Lat));
    CHECK(O.CommSeconds == near(30 * ms + 3 * Lat));
  }

  TEST_CASE("buckets fill to DDP's 25 MiB") {
    // Five layers of 10 MiB: 30 MiB closes the first bucket (layers 0-2),
    // the last two layers make a 20 MiB bucket closed at the end.
    std::vector<LayerBackward> Layers(5, LayerBackward{1 * ms, 10 * MiB});
    const OverlapTime O =
        overlapGradientAllReduce(Layers, DdpBucketBytes, pair());
    REQUIRE(O.Buckets.size() == 2);
    CHECK(O.Buckets[0].FirstLayer == 0);
    CHECK(O.Buckets[0].LastLayer == 2);
    CHECK(O.Buckets[0].Bytes == 30 * MiB);
    CHECK(O.Buckets[0].ReadySeconds == near(3 * ms));
    CHECK(O.Buckets[1].FirstLayer == 3);
    CHECK(O.Buckets[1].LastLayer == 4);
    CHECK(O.Buckets[1].Bytes == 20 * MiB);
    CHECK(O.Buckets[1].ReadySeconds == near(5 * ms));
    // One rank: nothing to all-reduce.
    const OverlapTime Alone =
        overlapGradientAllReduce(Layers, DdpBucketBytes, CommGroup());
    CHECK(Alone.CommSeconds == 0);
    CHECK(Alone.ExposedSeconds == 0);
  }

  TEST_CASE("compression") {
    Compression Fp16;
    Fp16.Kind = CompressionKind::Fp16;
    CHECK(compressedBytes(1e9, Fp16) == near(5e8));
    Fp16.ElementBytes = 2; // already 16-bit
    CHECK(compressedBytes(1e9, Fp16) == near(1e9));

    // Top-1%: 0.01 x 1 GB of fp32 values + as many int32 indices = 20 MB.
    Compression Top;
    Top.Kind = CompressionKind::TopK;
    Top.Ratio = 0.01;
    CHECK(compressedBytes(1e9, Top) == near(2e7));
    Top.ElementBytes = 2; // fp16 values, int32 indices: 0.01 x 1 GB x 3
    CHECK(compressedBytes(1e9, Top) == near(3e7));
    CHECK(compressedBytes(1e9, Compression()) == 1e9);

    // fp16 halves the bandwidth term of an all-reduce ...
    const hw::Cluster C = load(TestCluster);
    const CommGroup G = group(C, 16, 1);
    Fp16.ElementBytes = 4;
    const CommTime Full =
        collectiveTime(Collective::AllReduce, 1e9, G, CommAlgorithm::Ring);
    const CommTime Half =
        collectiveTime(Collective::AllReduce, compressedBytes(1e9, Fp16), G,
                       CommAlgorithm::Ring);
    CHECK(Half.BandwidthSeconds == near(Full.BandwidthSeconds / 2));
    CHECK(Half.LatencySeconds == near(Full.LatencySeconds));

    // ... and of the exposed last bucket: 5 ms + Lat instead of 10 ms + Lat.
    const LayerBackward Layers[] = {{10 * ms, 100e6}, {10 * ms, 1e9}};
    const OverlapTime O = overlapGradientAllReduce(Layers, 100e6, pair(), Fp16);
    CHECK(O.Buckets[1].WireBytes == near(5e8));
    CHECK(O.ExposedSeconds == near(5 * ms + Lat));
  }

  TEST_CASE("the parameters' all-gather waits only where the forward "
            "outruns it") {
    // Forward order: a layer without parameters, then three of 100 MB,
    // each its own bucket. The first gather starts as the optimizer ends;
    // each bucket's forward waits for its own and dispatches the next.
    const double G =
        collectiveTime(Collective::AllGather, 100e6, pair()).Seconds;
    REQUIRE(G > 0.4 * ms);
    REQUIRE(G < 0.6 * ms);
    // Forward 1 ms a layer, longer than a gather: only the first waits,
    // less the leading layer's 0.1 ms that runs meanwhile.
    const LayerBackward Slow[] = {
        {0.1 * ms, 0}, {1 * ms, 100e6}, {1 * ms, 100e6}, {1 * ms, 100e6}};
    const OverlapTime S = overlapParameterGather(Slow, 100e6, pair());
    REQUIRE(S.Buckets.size() == 3);
    CHECK(S.CommSeconds == near(3 * G));
    CHECK(S.ExposedSeconds == near(G - 0.1 * ms));
    CHECK(S.ComputeSeconds == near(3.1 * ms));
    // The second gather is asked for when the first bucket's forward
    // starts (at G), not before.
    CHECK(S.Buckets[1].ReadySeconds == near(G));
    CHECK(S.Buckets[1].StartSeconds == near(G));
    // Forward 0.1 ms a layer, shorter than a gather: each later bucket
    // waits G - 0.1 ms too (its gather starts as the previous bucket's
    // forward does).
    const LayerBackward Fast[] = {
        {0.1 * ms, 100e6}, {0.1 * ms, 100e6}, {0.1 * ms, 100e6}};
    const OverlapTime F = overlapParameterGather(Fast, 100e6, pair());
    CHECK(F.ExposedSeconds == near(G + 2 * (G - 0.1 * ms)));
    // One bucket for all: its whole gather before any forward.
    const OverlapTime One = overlapParameterGather(Fast, 1e9, pair());
    REQUIRE(One.Buckets.size() == 1);
    CHECK(One.ExposedSeconds ==
          near(collectiveTime(Collective::AllGather, 300e6, pair()).Seconds));
  }

} // TEST_SUITE

TEST_SUITE("collectives.published") {

  // nccl-tests all_reduce_perf bus bandwidth for large messages: ~230 GB/s
  // on one DGX A100 (8 GPUs over NVSwitch; 231.6 GB/s on ND A100 v4, the
  // figure nvswitch-gen2's efficiency comes from), and ~180-190 GB/s across
  // DGX A100 nodes with 8 HDR ports each. Tolerances are generous: these are
  // sanity checks of the bundled links, not a calibration.
  TEST_CASE("bundled links against NCCL bus bandwidth on DGX A100") {
    const double B = 8.0 * 1024 * MiB; // 8 GiB, the end of a typical sweep
    const hw::Cluster Dgx = bundled("dgx-a100");
    const CommGroup Node = group(Dgx, 8, 1);
    const CommTime T = collectiveTime(Collective::AllReduce, B, Node);
    // 300 GB/s x 0.77 = 231 GB/s; the latency (NCCL Simple: 8.4 us + 14 x
    // 3.4 us) is noise here.
    const double Bus = busBandwidth(Collective::AllReduce, B, 8, T.Seconds);
    CHECK(Bus > 200 * GB);
    CHECK(Bus < 260 * GB);
    CHECK(Bus == doctest::Approx(231 * GB).epsilon(0.01));

    const hw::Cluster Selene = bundled("selene-a100-80gb");
    for (unsigned Nodes : {2u, 8u, 64u}) {
      CAPTURE(Nodes);
      const CommGroup G = group(Selene, 8 * Nodes, 1);
      const CommTime X = collectiveTime(Collective::AllReduce, B, G);
      // 8 GiB goes by the ring with NCCL's Simple protocol at every scale:
      // the tree keeps 0.9 of the bandwidth.
      CHECK(X.Algorithm == CommAlgorithm::Ring);
      CHECK(X.Protocol == CommProtocol::Simple);
      // 1 GB at 64 nodes goes by the tree: the ring's 896 steps x 3.4 us
      // inside nodes and 126 x 9.6 us across (x 1.9 for its plateau) cost
      // more than the tree's 11% of bandwidth. NCCL too switches to trees
      // at scale.
      CHECK(collectiveTime(Collective::AllReduce, 1 * GB, G).Algorithm ==
            (Nodes < 64 ? CommAlgorithm::Ring : CommAlgorithm::Tree));
      // min(231, 8 x 25 GB/s x 0.9 = 180) GB/s, less the latency.
      const double Bus =
          busBandwidth(Collective::AllReduce, B, 8 * Nodes, X.Seconds);
      CHECK(Bus > 160 * GB);
      CHECK(Bus < 200 * GB);
    }
  }

  TEST_CASE("two bucket sequences on one stream: in ready order, each as "
            "long as alone") {
    // Dense buckets ready at 1 and 2 ms lasting 1 ms each; an expert bucket
    // ready at 1.5 ms lasting 2 ms; the backward ends at 2 ms.
    const auto Bucket = [](double Ready, double Seconds) {
      BucketTime B;
      B.ReadySeconds = Ready;
      B.StartSeconds = Ready;
      B.EndSeconds = Ready + Seconds;
      return B;
    };
    const double ms = 1e-3;
    const BucketTime Dense[] = {Bucket(1 * ms, 1 * ms), Bucket(2 * ms, 1 * ms)};
    const BucketTime Experts[] = {Bucket(1.5 * ms, 2 * ms)};
    // 1-2 dense, 2-4 experts, 4-5 dense: 3 ms after the backward.
    CHECK(sharedStreamExposed(Dense, Experts, 2 * ms) ==
          doctest::Approx(3 * ms));
    // Alone the dense buckets end at 3 ms: 1 ms exposed.
    CHECK(sharedStreamExposed(Dense, {}, 2 * ms) == doctest::Approx(1 * ms));
    // Nothing outlasts a long backward.
    CHECK(sharedStreamExposed(Dense, Experts, 10 * ms) == 0);
    CHECK(sharedStreamExposed({}, {}, 1 * ms) == 0);
  }

} // TEST_SUITE
