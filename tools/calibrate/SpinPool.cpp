//===- SpinPool.cpp - A fork/join pool with spinning workers --------------===//
#include "tools/calibrate/SpinPool.h"

#include <chrono>

using namespace perfc::calibrate;

namespace {
/// How long an idle worker spins before it blocks: long enough for
/// back-to-back dispatches, short against a BLAS call that follows.
constexpr auto SpinTime = std::chrono::microseconds(200);
/// Spinning threads yield their CPU now and then: where other work leaves
/// the pool fewer CPUs than threads, the thread they wait for may be
/// waiting for that very CPU (without yielding, every dispatch would cost
/// a whole SpinTime).
constexpr unsigned YieldEvery = 256;
} // namespace

SpinPool::SpinPool(unsigned Threads) : Size(Threads ? Threads : 1) {
  for (unsigned I = 1; I < Size; ++I)
    Workers.emplace_back([this, I] { worker(I); });
}

SpinPool::~SpinPool() {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Stop.store(true, std::memory_order_release);
  }
  Wake.notify_all();
  for (std::thread &T : Workers)
    T.join();
}

void SpinPool::run(llvm::function_ref<void(unsigned)> Fn) {
  if (Size == 1) {
    Fn(0);
    return;
  }
  Task = Fn;
  Pending.store(Size - 1, std::memory_order_relaxed);
  {
    // Under the mutex, so that a worker about to block either sees the new
    // generation or is counted in Sleepers (no lost wake-up).
    std::lock_guard<std::mutex> Lock(Mutex);
    Generation.fetch_add(1, std::memory_order_release);
  }
  if (Sleepers.load(std::memory_order_acquire))
    Wake.notify_all();
  Fn(0);
  for (unsigned Spins = 1; Pending.load(std::memory_order_acquire); ++Spins)
    if (Spins % YieldEvery)
      spinPause();
    else
      std::this_thread::yield();
}

void SpinPool::parallelFor(
    size_t N, llvm::function_ref<void(size_t, size_t, unsigned)> Fn) {
  run([&](unsigned I) {
    size_t Begin = N * I / Size, End = N * (I + 1) / Size;
    Fn(Begin, End, I);
  });
}

void SpinPool::worker(unsigned Index) {
  uint64_t Seen = 0;
  for (;;) {
    auto Start = std::chrono::steady_clock::now();
    unsigned Spins = 0;
    uint64_t G;
    while ((G = Generation.load(std::memory_order_acquire)) == Seen &&
           !Stop.load(std::memory_order_acquire)) {
      if (++Spins % YieldEvery == 0)
        std::this_thread::yield();
      else
        spinPause();
      if (Spins % 64 == 0 &&
          std::chrono::steady_clock::now() - Start > SpinTime) {
        std::unique_lock<std::mutex> Lock(Mutex);
        Sleepers.fetch_add(1, std::memory_order_acq_rel);
        Wake.wait(Lock, [&] {
          return Generation.load(std::memory_order_acquire) != Seen ||
                 Stop.load(std::memory_order_acquire);
        });
        Sleepers.fetch_sub(1, std::memory_order_acq_rel);
        Start = std::chrono::steady_clock::now();
      }
    }
    if (Stop.load(std::memory_order_acquire))
      return;
    Seen = G;
    Task(Index);
    Pending.fetch_sub(1, std::memory_order_acq_rel);
  }
}
