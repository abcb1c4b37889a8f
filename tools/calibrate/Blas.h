//===- Blas.h - OpenBLAS, loaded when calibration needs it ------*- C++ -*-===//
//
// Calibration measures GEMM with OpenBLAS (Debian's libopenblas-dev,
// pthread variant) so that the measured rates are those of an optimized
// library. The library is opened with dlopen on first use rather than
// linked: linking would start OpenBLAS's threads in every perfc process.
//
// Before opening it, OPENBLAS_CORETYPE is set in this process's
// environment: by default, on a CPU with AVX-512 (F, BW, DQ, VL), to
// SkylakeX, whatever the environment said. OpenBLAS 0.3.21 (Debian 12) does
// not know Zen 4/5 and falls back to its AVX2 Haswell kernels, at about
// half of what its AVX-512 kernels reach, and an inherited
// OPENBLAS_CORETYPE=Haswell would do the same; calibration is meant to
// measure what an optimized runtime (ONNX Runtime's MLAS, which picks its
// kernels from CPUID) reaches. OPENBLAS_NUM_THREADS is set to the thread
// count unless already set.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_CALIBRATE_BLAS_H
#define PERFC_TOOLS_CALIBRATE_BLAS_H

#include "llvm/Support/Error.h"

#include <string>

namespace perfc::calibrate {

struct Blas {
  /// Row-major C = A x B (+ 0 x C): M x K times K x N.
  void (*sgemm)(int M, int N, int K, const float *A, const float *B,
                float *C) = nullptr;
  /// Row-major y = A x: A is M x N.
  void (*sgemv)(int M, int N, const float *A, const float *X,
                float *Y) = nullptr;
  void (*setThreads)(int) = nullptr;
  std::string Path;     ///< The file that was opened.
  std::string CoreName; ///< The kernel set OpenBLAS chose ("SkylakeX").
  std::string Config;   ///< openblas_get_config().
  /// OPENBLAS_CORETYPE as inherited ("" where unset) and as used.
  std::string InheritedCoreType, CoreType;
};

/// Opens OpenBLAS once per process and sets its thread count. CoreType:
/// "" picks as described above, "env" leaves the environment as it is,
/// anything else is set as OPENBLAS_CORETYPE. Only the first call's
/// CoreType counts.
llvm::Expected<const Blas &> loadBlas(unsigned Threads,
                                      const std::string &CoreType = "");

} // namespace perfc::calibrate

#endif // PERFC_TOOLS_CALIBRATE_BLAS_H
