//===- NameHash.h - Hash maps keyed by tensor and node names ----*- C++ -*-===//
//
// Importing a model looks every tensor name up several times (edges,
// initializers, inferred types, the graph's own table), and
// llvm::hash_value spends about a hundred instructions on a name of a few
// tens of bytes. NameInfo hashes eight bytes at a time. Maps keyed with it
// are only looked up, never iterated to produce output, so the order their
// hash gives them is not observable.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_IR_NAMEHASH_H
#define PERFC_IR_NAMEHASH_H

#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstring>

namespace perfc::ir {

struct NameInfo {
  static llvm::StringRef getEmptyKey() {
    return llvm::DenseMapInfo<llvm::StringRef>::getEmptyKey();
  }
  static llvm::StringRef getTombstoneKey() {
    return llvm::DenseMapInfo<llvm::StringRef>::getTombstoneKey();
  }
  static unsigned getHashValue(llvm::StringRef S) {
    // Multiply-xorshift rounds (the constants of splitmix64) over 8-byte
    // words; the last word overlaps the one before rather than being
    // padded, so that no byte is read twice from nowhere.
    const char *P = S.data();
    size_t N = S.size();
    uint64_t H = 0x9e3779b97f4a7c15ULL ^ N;
    auto Mix = [&H](uint64_t W) {
      H = (H ^ W) * 0xbf58476d1ce4e5b9ULL;
      H ^= H >> 31;
    };
    if (N >= 8) {
      for (; N > 8; P += 8, N -= 8) {
        uint64_t W;
        std::memcpy(&W, P, 8);
        Mix(W);
      }
      uint64_t W;
      std::memcpy(&W, S.data() + S.size() - 8, 8);
      Mix(W);
    } else {
      uint64_t W = 0;
      for (size_t I = 0; I < N; ++I)
        W |= uint64_t(static_cast<unsigned char>(P[I])) << (8 * I);
      Mix(W);
    }
    H *= 0x94d049bb133111ebULL;
    return static_cast<unsigned>(H ^ (H >> 32));
  }
  static bool isEqual(llvm::StringRef L, llvm::StringRef R) {
    return llvm::DenseMapInfo<llvm::StringRef>::isEqual(L, R);
  }
};

} // namespace perfc::ir

#endif // PERFC_IR_NAMEHASH_H
