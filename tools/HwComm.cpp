//===- HwComm.cpp - perfc hw comm: the collective model as a table --------===//
#include "tools/HwComm.h"

#include "costmodels/Collectives.h"
#include "hwdb/Loader.h"
#include "passes/TrainOptionNames.h"

#include "llvm/ADT/Optional.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <fmt/format.h>

#include <algorithm>

using namespace perfc;

namespace {

llvm::Error fail(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

constexpr cost::Collective AllCollectives[] = {
    cost::Collective::AllReduce, cost::Collective::ReduceScatter,
    cost::Collective::AllGather, cost::Collective::AllToAll,
    cost::Collective::Broadcast, cost::Collective::PointToPoint};
constexpr cost::CommAlgorithm AllAlgorithms[] = {
    cost::CommAlgorithm::Auto,   cost::CommAlgorithm::Ring,
    cost::CommAlgorithm::Tree,   cost::CommAlgorithm::Hierarchical,
    cost::CommAlgorithm::Direct, cost::CommAlgorithm::Nvls};

/// The value of Values whose name is S; None if none is.
template <typename T, size_t N>
llvm::Optional<T> named(const T (&Values)[N], llvm::StringRef S) {
  for (T V : Values)
    if (S == cost::name(V))
      return V;
  return llvm::None;
}

/// "a, b or c" of the names of Values.
template <typename T, size_t N> std::string choices(const T (&Values)[N]) {
  std::string S;
  for (size_t I = 0; I < N; ++I)
    S += std::string(I == 0       ? ""
                     : I + 1 == N ? " or "
                                  : ", ") +
         cost::name(Values[I]);
  return S;
}

/// nccl-tests' default sweep, -b 8 -e 8G -f 2.
std::vector<uint64_t> defaultSweep() {
  std::vector<uint64_t> Sizes;
  for (uint64_t B = 8; B <= (uint64_t(8) << 30); B *= 2)
    Sizes.push_back(B);
  return Sizes;
}

std::string linksOf(const cost::CommGroup &G) {
  std::string S;
  if (G.Intra)
    S = G.Intra->Name;
  if (G.Inter)
    S += (S.empty() ? "" : " and ") + G.Inter->Name;
  return S.empty() ? "no link" : S;
}

} // namespace

llvm::Expected<uint64_t> perfc::cli::parseCommSize(llvm::StringRef S) {
  const auto Bad = [&] {
    return fail("--bytes '" + S +
                "': give a whole number of bytes from 1 to 1P, with an "
                "optional K, M, G, T or P (binary: 1K = 1024, as nccl-tests "
                "reads sizes)");
  };
  llvm::StringRef Digits = S;
  unsigned Shift = 0;
  if (!Digits.empty())
    switch (Digits.back()) {
    case 'K':
    case 'k':
      Shift = 10;
      break;
    case 'M':
    case 'm':
      Shift = 20;
      break;
    case 'G':
    case 'g':
      Shift = 30;
      break;
    case 'T':
    case 't':
      Shift = 40;
      break;
    case 'P':
    case 'p':
      Shift = 50;
      break;
    default:
      break;
    }
  if (Shift)
    Digits = Digits.drop_back();
  uint64_t N = 0;
  if (Digits.empty() || Digits.getAsInteger(10, N) || N == 0 ||
      N > (uint64_t(1) << (50 - Shift)))
    return Bad();
  return N << Shift;
}

llvm::Error perfc::cli::printHwComm(const HwCommRequest &R,
                                    llvm::raw_ostream &OS) {
  const llvm::Optional<cost::Collective> Kind =
      named(AllCollectives, R.Collective);
  if (!Kind)
    return unknownName("--collective", R.Collective, choices(AllCollectives));
  const llvm::Optional<cost::CommAlgorithm> Algorithm =
      named(AllAlgorithms, R.Algorithm);
  if (!Algorithm)
    return unknownName("--algorithm", R.Algorithm, choices(AllAlgorithms));
  const llvm::Optional<cost::CommProtocol> Protocol =
      commProtocolNamed(R.Protocol);
  if (!Protocol)
    return unknownName("--comm-protocol", R.Protocol, CommProtocolChoices);
  std::vector<uint64_t> Sizes;
  for (const std::string &S : R.Sizes) {
    auto B = parseCommSize(S);
    if (!B)
      return B.takeError();
    Sizes.push_back(*B);
  }
  if (Sizes.empty())
    Sizes = defaultSweep();

  auto C = hw::loadHardware(R.Cluster);
  if (!C)
    return C.takeError();
  // By default every rank the stride reaches.
  const unsigned Ranks =
      R.Ranks ? R.Ranks
              : std::max(1u, C->numDevices() / std::max(R.Stride, 1u));
  auto G = cost::groupOf(*C, Ranks, R.Stride);
  if (!G)
    return fail("hw comm: " + llvm::toString(G.takeError()));

  struct Row {
    uint64_t Bytes;
    cost::CommTime T;
    double AlgBw, BusBw;
  };
  std::vector<Row> Rows;
  for (uint64_t B : Sizes) {
    cost::CommTime T =
        cost::collectiveTime(*Kind, double(B), *G, *Algorithm, *Protocol);
    const double AlgBw = T.Seconds > 0 ? double(B) / T.Seconds : 0;
    const double BusBw =
        cost::busBandwidth(*Kind, double(B), G->Size, T.Seconds);
    Rows.push_back({B, std::move(T), AlgBw, BusBw});
  }

  if (R.Json) {
    llvm::json::OStream J(OS, 2);
    J.object([&] {
      J.attribute("cluster", C->Name);
      J.attribute("collective", cost::name(*Kind));
      J.attribute("ranks", int64_t(G->Size));
      J.attribute("stride", int64_t(R.Stride));
      J.attribute("nodes", int64_t(G->nodes()));
      J.attribute("ranks_per_node", int64_t(G->RanksPerNode));
      J.attribute("links", linksOf(*G));
      J.attribute("algorithm", cost::name(*Algorithm));
      J.attribute("comm_protocol", cost::name(*Protocol));
      J.attributeArray("rows", [&] {
        for (const Row &Rw : Rows)
          J.object([&] {
            J.attribute("bytes", int64_t(Rw.Bytes));
            J.attribute("time_s", Rw.T.Seconds);
            J.attribute("latency_s", Rw.T.LatencySeconds);
            J.attribute("bandwidth_s", Rw.T.BandwidthSeconds);
            J.attribute("algbw_bytes_per_s", Rw.AlgBw);
            J.attribute("busbw_bytes_per_s", Rw.BusBw);
            J.attribute("algorithm", cost::name(Rw.T.Algorithm));
            J.attribute("protocol", cost::name(Rw.T.Protocol));
            if (R.Explain)
              J.attribute("explain", Rw.T.Explain);
          });
      });
    });
    OS << "\n";
    return llvm::Error::success();
  }

  OS << llvm::formatv("{0} over {1} rank{2} ({3} node{4} x {5}) of '{6}', "
                      "{7}; algorithm {8}, protocol {9}\n",
                      cost::name(*Kind), G->Size, G->Size == 1 ? "" : "s",
                      G->nodes(), G->nodes() == 1 ? "" : "s", G->RanksPerNode,
                      C->Name, linksOf(*G), cost::name(*Algorithm),
                      cost::name(*Protocol));
  OS << fmt::format("{:>14} {:>12} {:>11} {:>11}  {}\n", "size (B)",
                    "time (us)", "algbw GB/s", "busbw GB/s", "algorithm");
  for (const Row &Rw : Rows) {
    std::string Alg = cost::name(Rw.T.Algorithm);
    if (Rw.T.Protocol != cost::CommProtocol::AlphaBeta)
      Alg += std::string("/") + cost::name(Rw.T.Protocol);
    OS << fmt::format("{:>14} {:>12.2f} {:>11.2f} {:>11.2f}  {}\n", Rw.Bytes,
                      Rw.T.Seconds * 1e6, Rw.AlgBw / 1e9, Rw.BusBw / 1e9, Alg);
    if (R.Explain)
      OS << "    " << Rw.T.Explain << "\n";
  }
  return llvm::Error::success();
}
