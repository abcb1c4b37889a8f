//===- HwComm.h - perfc hw comm: the collective model as a table -*- C++
//-*-===//
//
// `perfc hw comm CLUSTER` prices one collective over a group of the
// cluster's ranks at a sweep of sizes, as nccl-tests' *_perf tools measure
// one (time, algorithm and bus bandwidth per size), with the algorithm and
// protocol the model picks: the collective model of training and --tp
// (costmodels/Collectives.h) on its own, to check against a measurement.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_HWCOMM_H
#define PERFC_TOOLS_HWCOMM_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace perfc::cli {

struct HwCommRequest {
  std::string Cluster;            ///< a bundled name or a YAML file
  std::string Collective;         ///< as cost::name(Collective) spells it
  unsigned Ranks = 0;             ///< 0: every device the stride reaches
  unsigned Stride = 1;            ///< ranks apart, node-major numbering
  std::vector<std::string> Sizes; ///< "8", "64K", "1M", "8G"; empty: sweep
  std::string Algorithm = "auto"; ///< as cost::name(CommAlgorithm)
  std::string Protocol = "auto";  ///< as --comm-protocol
  bool Json = false;
  bool Explain = false;
};

/// The bytes a size names: a whole number with an optional K, M or G
/// (binary: 1K = 1024, as nccl-tests reads -b and -e), from 1 B to 1 PiB.
llvm::Expected<uint64_t> parseCommSize(llvm::StringRef S);

/// Prints the table (or JSON) for R; an error names the bad option.
llvm::Error printHwComm(const HwCommRequest &R, llvm::raw_ostream &OS);

} // namespace perfc::cli

#endif // PERFC_TOOLS_HWCOMM_H
