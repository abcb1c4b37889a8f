//===- NcclProtocolTest.cpp - Collectives under NCCL's protocols, by hand -===//
//
// Every expected time is NCCL's model (costmodels/NcclTuning.h) written out:
// base latency + hops x the link's latency scaled by NCCL's hwLat ratio +
// the alpha-beta bandwidth term over the protocol's share.
//
//===----------------------------------------------------------------------===//
#include "TestDevices.h"

#include "costmodels/Collectives.h"
#include "costmodels/NcclTuning.h"

#include <doctest/doctest.h>

#include <string>

using namespace perfc;
using namespace perfc::test;
using namespace perfc::cost;

namespace {

/// 2 nodes x 8 devices: 100 GB/s and 1 us (NVSwitch) inside a node, 8 ports
/// of 10 GB/s and 5 us (InfiniBand) across; efficiencies 1.
const char *const TwoNodes = R"(cluster:
  name: twonodes
  nodes:
    - count: 2
      device: t4
      devices_per_node: 8
      intra_node_link: {name: switch, kind: nvswitch, bandwidth: 100 GB/s, latency: 1 us, efficiency: 1}
      inter_node_link: {name: fabric, kind: infiniband, bandwidth: 10 GB/s, latency: 5 us, efficiency: 1}
      nics_per_node: 8
)";

CommGroup groupOn(const hw::Cluster &C, unsigned Size) {
  auto G = groupOf(C, Size, 1);
  REQUIRE_MESSAGE(bool(G), llvm::toString(G.takeError()));
  return *G;
}

doctest::Approx near(double V) { return doctest::Approx(V).epsilon(1e-9); }

constexpr double GB = 1e9, MB = 1e6, KB = 1e3;
constexpr double us = 1e-6, ms = 1e-3;

// NCCL's hwLat ratios to the ring LL hop (0.47 us on NVLink, 2.7 on the
// network), applied to the test links' 1 us and 5 us.
constexpr double NvRingLL128 = 1.9 / 0.47, NvRingSimple = 3.4 / 0.47;
constexpr double NvTreeLL = 0.52 / 0.47;
constexpr double NetRingSimple = 9.6 / 2.7, NetTreeLL = 5.0 / 2.7;

} // namespace

TEST_SUITE("collectives.nccl") {

  TEST_CASE("a ring all-reduce inside a node under each protocol") {
    const hw::Cluster C = clusterFromYaml(TwoNodes, "nccl-test.yaml");
    const CommGroup G = groupOn(C, 8);
    // 1 MB, 14 steps, 1.75 MB per rank over 100 GB/s:
    //   LL:     3.6 us + 14 x 1 us + 1.75 MB / 25 GB/s     = 87.6 us
    //   LL128: 10 us + 14 x 4.04 us + 1.75 MB / 92 GB/s    = 85.62 us
    //   Simple: 8.4 us + 14 x 7.23 us + 1.75 MB / 100 GB/s = 127.18 us
    const double LL = 3.6 * us + 14 * us + 1.75 * MB / (25 * GB);
    const double LL128 =
        10 * us + 14 * NvRingLL128 * us + 1.75 * MB / (92 * GB);
    const double Simple =
        8.4 * us + 14 * NvRingSimple * us + 1.75 * MB / (100 * GB);
    const auto ring = [&](double B, CommProtocol P) {
      return collectiveTime(Collective::AllReduce, B, G, CommAlgorithm::Ring,
                            P);
    };
    CHECK(ring(1 * MB, CommProtocol::LL).Seconds == near(LL));
    CHECK(ring(1 * MB, CommProtocol::LL128).Seconds == near(LL128));
    const CommTime S = ring(1 * MB, CommProtocol::Simple);
    CHECK(S.Seconds == near(Simple));
    CHECK(S.Protocol == CommProtocol::Simple);
    CHECK(S.LatencySeconds == near(8.4 * us + 14 * NvRingSimple * us));

    // NCCL's model picks the fastest: LL128 at 1 MB, LL for 1 KB, Simple
    // for 1 GB.
    const CommTime A = ring(1 * MB, CommProtocol::Auto);
    CHECK(A.Protocol == CommProtocol::LL128);
    CHECK(A.Seconds == near(LL128));
    CHECK(A.Explain ==
          "ring all-reduce, 8 ranks on 1 node, NCCL LL128: base + 2(n-1) x "
          "hop + 2(n-1)/n x B / (bw x share) = 10 us + 14 x 4.043 us + 1.75 "
          "x 1 MB / (100 GB/s x 0.92) = 85.62 us; bw = intra 100 GB/s x 1 "
          "(switch); NCCL's model chose LL128 over LL 87.6 us, Simple 127.2 "
          "us");
    CHECK(ring(1 * KB, CommProtocol::Auto).Protocol == CommProtocol::LL);
    CHECK(ring(1 * GB, CommProtocol::Auto).Protocol == CommProtocol::Simple);

    // The textbook form has none of it: 14 x 1 us + 17.5 us.
    CHECK(ring(1 * MB, CommProtocol::AlphaBeta).Seconds ==
          near(14 * us + 17.5 * us));
  }

  TEST_CASE("reduce-scatter, all-gather and broadcast keep a third on LL") {
    const hw::Cluster C = clusterFromYaml(TwoNodes, "nccl-test.yaml");
    const CommGroup G = groupOn(C, 8);
    // Inside a node LL keeps 1/3 of the bandwidth for them (1/4 for an
    // all-reduce): 3.6 us + 7 x 1 us + 7/8 x 1 KB / (100 GB/s / 3).
    for (Collective K : {Collective::ReduceScatter, Collective::AllGather}) {
      CAPTURE(name(K));
      CHECK(collectiveTime(K, 1 * KB, G, CommAlgorithm::Ring, CommProtocol::LL)
                .Seconds == near(10.6 * us + 0.875 * KB / (100 * GB / 3)));
    }
    // Broadcast: 3.6 us + 7 x 1 us + 1 KB / (100 GB/s / 3).
    CHECK(collectiveTime(Collective::Broadcast, 1 * KB, G, CommAlgorithm::Ring,
                         CommProtocol::LL)
              .Seconds == near(10.6 * us + 1 * KB / (100 * GB / 3)));
  }

  TEST_CASE("across nodes: LL hops x 1.8 inside nodes, no LL128, plateau") {
    const hw::Cluster C = clusterFromYaml(TwoNodes, "nccl-test.yaml");
    const CommGroup G = groupOn(C, 16); // k 8, m 2, bw_ring 80 GB/s
    // Ring LL, 1 KB: 2(n-m) = 28 steps inside nodes at 1.8 x 1 us, 2(m-1) =
    // 2 across at 5 us; a quarter of 80 GB/s.
    const CommTime LL = collectiveTime(Collective::AllReduce, 1 * KB, G,
                                       CommAlgorithm::Ring, CommProtocol::LL);
    CHECK(LL.LatencySeconds == near(3.6 * us + 28 * 1.8 * us + 2 * 5 * us));
    CHECK(LL.BandwidthSeconds == near(1.875 * KB / (20 * GB)));

    // Ring Simple, 1 GB: the plateau (at least 16/16 x 64 KiB) multiplies
    // the latency by 1.9.
    const CommTime S =
        collectiveTime(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Ring,
                       CommProtocol::Simple);
    CHECK(S.LatencySeconds == near(1.9 * (8.4 * us + 28 * NvRingSimple * us +
                                          2 * 5 * NetRingSimple * us)));
    CHECK(S.BandwidthSeconds == near(1.875 * GB / (80 * GB)));
    CHECK(S.Explain.find("latency x 1.9, NCCL's ring plateau") !=
          std::string::npos);

    // InfiniBand: NCCL does not enable LL128, so Auto weighs LL and Simple.
    const CommTime A =
        collectiveTime(Collective::AllReduce, 1 * MB, G, CommAlgorithm::Ring);
    CHECK(A.Explain.find("LL128") == std::string::npos);
    CHECK(A.Explain.find("NCCL's model chose") != std::string::npos);

    // Tree LL, 1 KB: 2 x (7 hops inside at 1.8 x 1.106 us + 1 across at
    // 5 x 5.0/2.7 us) after 4.4 us; 0.9 / 3.8 of 80 GB/s for 2 x B.
    const CommTime T = collectiveTime(Collective::AllReduce, 1 * KB, G,
                                      CommAlgorithm::Tree, CommProtocol::LL);
    CHECK(T.Algorithm == CommAlgorithm::Tree);
    CHECK(T.LatencySeconds ==
          near(4.4 * us + 2 * (7 * 1.8 * NvTreeLL * us + 5 * NetTreeLL * us)));
    CHECK(T.BandwidthSeconds == near(2 * KB / (80 * GB * 0.9 / 3.8)));
  }

  TEST_CASE("a hierarchical all-reduce pays a base per NCCL call") {
    const hw::Cluster C = clusterFromYaml(TwoNodes, "nccl-test.yaml");
    const CommGroup G = groupOn(C, 16);
    // Simple, 1 GB: reduce-scatter and all-gather inside the node (2 bases,
    // 2 x 7 hops), an all-reduce of the nodes (1 base, 2 hops, x 1.9 for the
    // plateau); bandwidth terms as the alpha-beta form.
    const CommTime H =
        collectiveTime(Collective::AllReduce, 1 * GB, G,
                       CommAlgorithm::Hierarchical, CommProtocol::Simple);
    CHECK(H.LatencySeconds ==
          near(2 * 8.4 * us + 14 * NvRingSimple * us +
               1.9 * (8.4 * us + 2 * 5 * NetRingSimple * us)));
    CHECK(H.BandwidthSeconds ==
          near(1.75 * GB / (100 * GB) + 1 * GB / (80 * GB)));
  }

  TEST_CASE("all-to-all and point-to-point are not NCCL collectives") {
    const hw::Cluster C = clusterFromYaml(TwoNodes, "nccl-test.yaml");
    const CommGroup G = groupOn(C, 8);
    for (Collective K : {Collective::AllToAll, Collective::PointToPoint}) {
      CAPTURE(name(K));
      const CommTime T = collectiveTime(K, 1 * MB, G);
      CHECK(T.Protocol == CommProtocol::AlphaBeta);
      CHECK(T.Seconds == near(collectiveTime(K, 1 * MB, G, CommAlgorithm::Auto,
                                             CommProtocol::AlphaBeta)
                                  .Seconds));
    }
  }

  TEST_CASE("a SoC's shared memory keeps the alpha-beta forms") {
    const hw::Cluster C = clusterFromYaml(R"(cluster:
  name: soc
  nodes:
    - count: 1
      device: t4
      devices_per_node: 2
      intra_node_link: {name: shared, kind: shared_memory, bandwidth: 50 GB/s, latency: 10 us, efficiency: 1}
)",
                                          "soc.yaml");
    const CommGroup G = groupOn(C, 2);
    // No NCCL on a SoC: 2 x 1/2 x 1 MB / 50 GB/s + 2 x 10 us.
    const CommTime T = collectiveTime(Collective::AllReduce, 1 * MB, G);
    CHECK(T.Protocol == CommProtocol::AlphaBeta);
    CHECK(T.Seconds == near(20 * us + 20 * us));
    CHECK(collectiveSeconds(Collective::AllReduce, 1 * MB, G) ==
          near(T.Seconds));
    // Asked for, a protocol is priced all the same.
    CHECK(collectiveTime(Collective::AllReduce, 1 * MB, G, CommAlgorithm::Ring,
                         CommProtocol::LL)
              .Protocol == CommProtocol::LL);
  }

  TEST_CASE("NVLS: the switch reduces an all-reduce inside one node") {
    // The TwoNodes fabric with a switch that reduces.
    std::string Text = TwoNodes;
    const std::string Latency = "latency: 1 us, efficiency: 1}";
    Text.replace(Text.find(Latency), Latency.size(),
                 "latency: 1 us, efficiency: 1, switch_reduction: true}");
    const hw::Cluster C = clusterFromYaml(Text, "nvls-test.yaml");
    const CommGroup G = groupOn(C, 8);
    // NCCL: 23 us x (1 us / 0.47 us) + B / (100 GB/s x 5/6).
    const double Hop = 23.0 / 0.47 * us;
    const CommTime N = collectiveTime(Collective::AllReduce, 1 * GB, G,
                                      CommAlgorithm::Nvls, CommProtocol::Auto);
    CHECK(N.Algorithm == CommAlgorithm::Nvls);
    CHECK(N.Protocol == CommProtocol::Simple);
    CHECK(N.Seconds == near(Hop + 1 * GB / (100 * GB * 5 / 6)));
    CHECK(N.LatencySeconds == near(Hop));
    // Auto takes it for large buffers (12 ms against the ring's 17.5 ms)
    // and keeps LL for small ones (1 KB: 17.6 us against 48.9 us).
    const CommTime Big = collectiveTime(Collective::AllReduce, 1 * GB, G);
    CHECK(Big.Algorithm == CommAlgorithm::Nvls);
    CHECK(Big.Seconds == near(N.Seconds));
    CHECK(Big.Explain.find("NVLS all-reduce (the switch reduces), 8 ranks on "
                           "1 node, NCCL Simple: hop_nvls + B / (bw x 5/6) = "
                           "48.94 us + 1 x 1 GB / (100 GB/s x 0.8333) = "
                           "12.05 ms") == 0);
    CHECK(collectiveTime(Collective::AllReduce, 1 * KB, G).Algorithm ==
          CommAlgorithm::Ring);

    // The alpha-beta form: (n+1)/n x B / bw + 2 alpha.
    const CommTime AB =
        collectiveTime(Collective::AllReduce, 1 * GB, G, CommAlgorithm::Auto,
                       CommProtocol::AlphaBeta);
    CHECK(AB.Algorithm == CommAlgorithm::Nvls);
    CHECK(AB.Seconds == near(9.0 / 8 * 1 * GB / (100 * GB) + 2 * us));

    // Not under LL or LL128 (NVLS has only Simple), not for reduce-scatter,
    // not across nodes, not without the switch's reduction.
    const CommTime LL = collectiveTime(Collective::AllReduce, 1 * GB, G,
                                       CommAlgorithm::Nvls, CommProtocol::LL);
    CHECK(LL.Algorithm == CommAlgorithm::Ring);
    CHECK(LL.Explain.find("(nvls needs a group on one node over an NVSwitch "
                          "with switch_reduction, and a protocol other than "
                          "LL and LL128; ring used)") != std::string::npos);
    CHECK(collectiveTime(Collective::ReduceScatter, 1 * GB, G).Algorithm ==
          CommAlgorithm::Ring);
    CHECK(collectiveTime(Collective::AllReduce, 1 * GB, groupOn(C, 16))
              .Algorithm != CommAlgorithm::Nvls);
    const hw::Cluster Plain = clusterFromYaml(TwoNodes, "nccl-test.yaml");
    CHECK(collectiveTime(Collective::AllReduce, 1 * GB, groupOn(Plain, 8))
              .Algorithm == CommAlgorithm::Ring);
    CHECK(collectiveSeconds(Collective::AllReduce, 1 * GB, G) ==
          near(N.Seconds));
    CHECK(std::string(name(CommAlgorithm::Nvls)) == "nvls");
  }

  TEST_CASE("NCCL's tables scale with the link's own latency") {
    hw::Link Pcie;
    Pcie.Kind = hw::LinkKind::PCIe;
    Pcie.LatencySeconds = 2 * us; // twice NCCL's 1 us for PCI
    CHECK(nccl::hopSeconds(Pcie, nccl::Algo::Ring, CommProtocol::LL) ==
          near(2 * us));
    CHECK(nccl::hopSeconds(Pcie, nccl::Algo::Ring, CommProtocol::Simple) ==
          near(2 * 5.7 * us));
    CHECK(nccl::hopSeconds(Pcie, nccl::Algo::Tree, CommProtocol::Simple) ==
          near(2 * 28 * us));
    CHECK(nccl::hopSeconds(Pcie, nccl::Algo::Ring, CommProtocol::LL,
                           /*IntraOfMultiNode=*/true) == near(3.6 * us));
    CHECK(nccl::baseSeconds(nccl::Algo::Ring, CommProtocol::LL128) ==
          near(10 * us));
    CHECK(nccl::baseSeconds(nccl::Algo::Tree, CommProtocol::Simple) == 0);
    hw::Link Switch = Pcie;
    Switch.Kind = hw::LinkKind::NvSwitch;
    Switch.LatencySeconds = 0.47 * us; // NCCL's own NVLink hop: its 23 us
    CHECK(nccl::nvlsSeconds(Switch) == near(23 * us));

    hw::Link NvLink = Pcie, Ib = Pcie;
    NvLink.Kind = hw::LinkKind::NvLink;
    Ib.Kind = hw::LinkKind::InfiniBand;
    CHECK(nccl::ll128Enabled(&NvLink, nullptr));
    CHECK(!nccl::ll128Enabled(&Pcie, nullptr));
    CHECK(!nccl::ll128Enabled(&NvLink, &Ib));
    CHECK(!nccl::ll128Enabled(nullptr, nullptr));

    CHECK(nccl::ringPlateauFactor(CommProtocol::Simple, Collective::AllReduce,
                                  2, 16, 65536) == 1.9);
    CHECK(nccl::ringPlateauFactor(CommProtocol::Simple, Collective::AllReduce,
                                  2, 16, 65535) == 1.0);
    CHECK(nccl::ringPlateauFactor(CommProtocol::Simple, Collective::AllReduce,
                                  1, 16, 1e9) == 1.0);
    CHECK(nccl::ringPlateauFactor(CommProtocol::LL, Collective::AllReduce, 2,
                                  16, 1e9) == 1.0);
    CHECK(std::string(name(CommProtocol::LL128)) == "LL128");
    CHECK(std::string(name(CommProtocol::AlphaBeta)) == "alpha-beta");
  }

} // TEST_SUITE
