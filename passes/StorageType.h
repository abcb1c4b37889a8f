//===- StorageType.h - Bytes under a deployment's storage type --*- C++ -*-===//
//
// `--storage-type T` prices a model as deployed engines store it (TensorRT
// INT8, NPU runtimes in FP16): every floating-point tensor takes T's element
// size, integer tensors (indices, shapes) keep theirs. The rule lives here so
// that a kernel's work, a tensor the cache replay follows and a tensor a
// placement moves between processors all scale alike.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_STORAGETYPE_H
#define PERFC_PASSES_STORAGETYPE_H

#include "costmodels/OpWork.h"
#include "ir/DType.h"

#include "llvm/ADT/Optional.h"

namespace perfc {

/// Bytes of a tensor of element type Type, Bytes as the model stores it,
/// when floating-point tensors are stored in Storage (none: as the model).
inline double storedBytes(double Bytes, ir::DType Type,
                          llvm::Optional<ir::DType> Storage) {
  if (!Storage || !ir::isFloatingPoint(Type))
    return Bytes;
  return Bytes * ir::byteSize(*Storage) / ir::byteSize(Type);
}

/// W with its floating-point tensors stored in Storage. The whole traffic
/// of a floating-point op scales (a convolution's layout transposes too),
/// integer side inputs (indices, shapes) included: they are small; bytes
/// that are no tensor (OpWork::SideBytesRead, SideBytesWritten) do not.
inline OpWork storedWork(const OpWork &W, llvm::Optional<ir::DType> Storage) {
  if (!Storage || !ir::isFloatingPoint(W.Type))
    return W;
  OpWork S = W;
  S.BytesRead = storedBytes(W.BytesRead - W.SideBytesRead, W.Type, Storage) +
                W.SideBytesRead;
  S.BytesWritten =
      storedBytes(W.BytesWritten - W.SideBytesWritten, W.Type, Storage) +
      W.SideBytesWritten;
  S.LayoutBytes = storedBytes(W.LayoutBytes, W.Type, Storage);
  return S;
}

} // namespace perfc

#endif // PERFC_PASSES_STORAGETYPE_H
