//===- Blas.cpp - OpenBLAS, loaded when calibration needs it --------------===//
#include "tools/calibrate/Blas.h"

#include <cblas.h>

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <string>

using namespace perfc::calibrate;

namespace {

// Pointer types from cblas.h's declarations; the functions are never
// called directly (nothing links OpenBLAS).
using SgemmFn = decltype(&cblas_sgemm);
using SgemvFn = decltype(&cblas_sgemv);
using SetThreadsFn = decltype(&openblas_set_num_threads);
using NameFn = decltype(&openblas_get_corename);

SgemmFn Sgemm = nullptr;
SgemvFn Sgemv = nullptr;

void sgemmRowMajor(int M, int N, int K, const float *A, const float *B,
                   float *C) {
  Sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N,
        0.0f, C, N);
}

void sgemvRowMajor(int M, int N, const float *A, const float *X, float *Y) {
  Sgemv(CblasRowMajor, CblasNoTrans, M, N, 1.0f, A, N, X, 1, 0.0f, Y, 1);
}

bool hasAvx512() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

llvm::Error openBlas(Blas &B, unsigned Threads, const std::string &Core) {
  if (const char *E = getenv("OPENBLAS_CORETYPE"))
    B.InheritedCoreType = E;
  // Already in the process (linked by something else): its core type and
  // thread count are fixed; use it as it is.
  void *H = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
  if (!H) {
    if (Core.empty() && hasAvx512())
      setenv("OPENBLAS_CORETYPE", "SkylakeX", /*overwrite=*/1);
    else if (!Core.empty() && Core != "env")
      setenv("OPENBLAS_CORETYPE", Core.c_str(), 1);
    setenv("OPENBLAS_NUM_THREADS", std::to_string(Threads).c_str(), 0);
    const char *Candidates[] = {
#ifdef PERFC_OPENBLAS_LIBRARY
        PERFC_OPENBLAS_LIBRARY,
#endif
        "libopenblas.so.0", "libopenblas.so"};
    std::string Errors;
    for (const char *C : Candidates) {
      H = dlopen(C, RTLD_NOW | RTLD_LOCAL);
      if (H) {
        B.Path = C;
        break;
      }
      Errors += std::string("; ") + dlerror();
    }
    if (!H)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "cannot open OpenBLAS%s; install libopenblas-dev (Debian) or "
          "put libopenblas.so.0 on the library path",
          Errors.c_str());
  } else {
    B.Path = "libopenblas.so.0 (already loaded)";
  }
  if (const char *E = getenv("OPENBLAS_CORETYPE"))
    B.CoreType = E;
  Sgemm = reinterpret_cast<SgemmFn>(dlsym(H, "cblas_sgemm"));
  Sgemv = reinterpret_cast<SgemvFn>(dlsym(H, "cblas_sgemv"));
  B.setThreads =
      reinterpret_cast<SetThreadsFn>(dlsym(H, "openblas_set_num_threads"));
  auto CoreName = reinterpret_cast<NameFn>(dlsym(H, "openblas_get_corename"));
  auto Config = reinterpret_cast<NameFn>(dlsym(H, "openblas_get_config"));
  if (!Sgemm || !Sgemv || !B.setThreads)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "%s lacks cblas_sgemm, cblas_sgemv or openblas_set_num_threads; "
        "install Debian's libopenblas-dev",
        B.Path.c_str());
  if (CoreName)
    B.CoreName = CoreName();
  if (Config)
    B.Config = Config();
  B.sgemm = sgemmRowMajor;
  B.sgemv = sgemvRowMajor;
  return llvm::Error::success();
}

} // namespace

llvm::Expected<const Blas &>
perfc::calibrate::loadBlas(unsigned Threads, const std::string &CoreType) {
  static Blas B;
  static std::string Failure;
  static std::once_flag Once;
  std::call_once(Once, [&] {
    if (llvm::Error E = openBlas(B, Threads, CoreType))
      Failure = llvm::toString(std::move(E));
  });
  if (!Failure.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   Failure.c_str());
  B.setThreads(static_cast<int>(Threads));
  return B;
}
