//===- Print.h - Human-readable hardware descriptions -----------*- C++ -*-===//
//
// What `perfc hw show NAME` prints: every figure with its unit, the
// efficiencies the cost models will apply, and the sources.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_HWDB_PRINT_H
#define PERFC_HWDB_PRINT_H

#include "hwdb/Cluster.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace perfc::hw {

void printDevice(const Device &D, llvm::raw_ostream &OS);
void printLink(const Link &L, llvm::raw_ostream &OS);
/// Prints the topology, then each distinct device once.
void printCluster(const Cluster &C, llvm::raw_ostream &OS);

/// One line of key figures, as listBundled gives them.
std::string summarize(const Device &D);
std::string summarize(const Link &L);
std::string summarize(const Cluster &C);

} // namespace perfc::hw

#endif // PERFC_HWDB_PRINT_H
