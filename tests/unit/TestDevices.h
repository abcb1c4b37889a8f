//===- TestDevices.h - Hardware descriptions written in tests --*- C++ -*-===//
#ifndef PERFC_TESTS_TESTDEVICES_H
#define PERFC_TESTS_TESTDEVICES_H

#include "hwdb/Loader.h"

#include <doctest/doctest.h>

namespace perfc::test {

/// The cluster a test's YAML describes (Name stands for the file in
/// messages); fails the test case where it does not load.
inline hw::Cluster clusterFromYaml(llvm::StringRef Text, llvm::StringRef Name) {
  auto C = hw::loadHardwareFromString(Text, Name);
  REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
  return std::move(*C);
}

/// Its primary device: a one-device description's device.
inline hw::Device deviceFromYaml(llvm::StringRef Text, llvm::StringRef Name) {
  return clusterFromYaml(Text, Name).primaryDevice();
}

} // namespace perfc::test

#endif // PERFC_TESTS_TESTDEVICES_H
