//===- SpinPool.h - A fork/join pool with spinning workers ------*- C++ -*-===//
//
// The thread pool calibration measures with: the caller is thread 0 and
// N-1 workers run the same task with their own index. Between tasks the
// workers spin for a short while (as ONNX Runtime's intra-op pool does), so
// back-to-back dispatches cost what a runtime's per-op fork/join costs, then
// block on a condition variable so that an idle pool does not steal the
// cores from the BLAS library's own threads.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_CALIBRATE_SPINPOOL_H
#define PERFC_TOOLS_CALIBRATE_SPINPOOL_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace perfc::calibrate {

class SpinPool {
public:
  /// A pool of Threads threads in all (the caller included); at least 1.
  explicit SpinPool(unsigned Threads);
  ~SpinPool();
  SpinPool(const SpinPool &) = delete;
  SpinPool &operator=(const SpinPool &) = delete;

  unsigned size() const { return Size; }

  /// Runs Fn(Index) on every thread, Index in [0, size()), the caller
  /// being 0; returns when all have finished.
  void run(llvm::function_ref<void(unsigned)> Fn);

  /// Splits [0, N) into size() contiguous chunks, Fn(Begin, End, Index).
  void parallelFor(size_t N,
                   llvm::function_ref<void(size_t, size_t, unsigned)> Fn);

private:
  void worker(unsigned Index);

  unsigned Size;
  std::vector<std::thread> Workers;
  llvm::function_ref<void(unsigned)> Task;
  std::atomic<uint64_t> Generation{0};
  std::atomic<unsigned> Pending{0};
  std::atomic<unsigned> Sleepers{0};
  std::atomic<bool> Stop{false};
  std::mutex Mutex;
  std::condition_variable Wake;
};

/// One pause of a spin loop (x86 PAUSE where available).
inline void spinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

} // namespace perfc::calibrate

#endif // PERFC_TOOLS_CALIBRATE_SPINPOOL_H
