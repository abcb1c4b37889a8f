//===- Measure.cpp - The measurements calibration makes -------------------===//
#include "tools/calibrate/Measure.h"

#include "tools/calibrate/Blas.h"
#include "tools/calibrate/CalibrateDetail.h"
#include "tools/calibrate/Kernels.h"
#include "tools/calibrate/MachineInfo.h"
#include "tools/calibrate/SpinPool.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace perfc::calibrate;
using namespace perfc::calibrate::detail;

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Best and median time of one call of Fn, after one warm-up call: calls
/// until Budget seconds have passed and at least MinReps calls were made.
struct Timing {
  double Best = 0, Median = 0;
  /// The mean: what a chain of many calls costs per call, stalls included.
  double Mean = 0;
  /// The 10th percentile: the kernel's rate on a machine that other work
  /// slows down now and then.
  double Low = 0;
  size_t Reps = 0;
};

template <typename F>
Timing timeIt(F &&Fn, double Budget, size_t MinReps = 3,
              size_t MaxReps = 1000000) {
  Fn();
  std::vector<double> T;
  double Start = now();
  while (T.size() < MinReps || (now() - Start < Budget && T.size() < MaxReps)) {
    double T0 = now();
    Fn();
    T.push_back(now() - T0);
  }
  std::sort(T.begin(), T.end());
  // A clock tick of 0 would make a rate infinite.
  double Floor = 1e-9;
  double Sum = 0;
  for (double X : T)
    Sum += X;
  Timing R;
  R.Best = std::max(T.front(), Floor);
  R.Median = std::max(T[T.size() / 2], Floor);
  R.Mean = std::max(Sum / double(T.size()), Floor);
  R.Low = std::max(T[T.size() / 10], Floor);
  R.Reps = T.size();
  return R;
}

/// A float array that is not zero-initialised here (first touch happens in
/// parallel, by the threads that use it).
struct Buffer {
  std::unique_ptr<float[]> P;
  size_t N = 0;
  explicit Buffer(size_t N) : P(new float[N]), N(N) {}
  float *data() { return P.get(); }
};

class Calibrator {
public:
  Calibrator(const CalibrateOptions &O, Measurements &M)
      : O(O), M(M), Scale(O.Quick ? 0.04 : 1.0) {}

  llvm::Error run();

private:
  void log(const std::string &T) {
    if (O.Log)
      *O.Log << "calibrate: " << T << "\n";
  }
  double budget(double Seconds) const { return Seconds * Scale; }
  /// timeIt, combined with the same call of the earlier rounds (the calls
  /// happen in the same order every round): each time the fastest round's.
  template <typename F>
  Timing timed(F &&Fn, double Budget, size_t MinReps = 3,
               size_t MaxReps = 1000000) {
    Timing T = timeIt(std::forward<F>(Fn), Budget, MinReps, MaxReps);
    if (Call < Earlier->size()) {
      Timing &E = (*Earlier)[Call];
      E.Best = std::min(E.Best, T.Best);
      E.Median = std::min(E.Median, T.Median);
      E.Mean = std::min(E.Mean, T.Mean);
      E.Low = std::min(E.Low, T.Low);
      E.Reps += T.Reps;
      T = E;
    } else {
      Earlier->push_back(T);
    }
    ++Call;
    return T;
  }
  /// Starts a round of the phase whose timings Phase holds.
  void startRound(std::vector<Timing> &Phase) {
    Earlier = &Phase;
    Call = 0;
  }
  /// Empties what the spinning pool's measurements append to, before a
  /// round (the OpenBLAS phase clears its own, in run()).
  void clearKernels() {
    M.Conv.clear();
    M.DepthwiseConv.clear();
    M.DepthwisePerOutput.clear();
    M.Memory.clear();
    M.Vector.clear();
    M.ElementwiseMemory.clear();
    M.ReductionMemory.clear();
    M.NormalizationMemory.clear();
    M.DataMovementMemory.clear();
  }
  void note(const std::string &N) {
    M.Notes.push_back(N);
    log("note: " + N);
  }

  void peaks(SpinPool &Pool);
  void clock();
  void memory(SpinPool &Pool);
  void vectorKernels(SpinPool &Pool);
  void dispatch(SpinPool &Pool);
  void stridedCopy();
  void gemm(const Blas &B);
  void conv(SpinPool &Pool);

  const CalibrateOptions &O;
  Measurements &M;
  double Scale;
  /// Timings of the rounds so far, per phase (spinning pool, OpenBLAS).
  std::vector<Timing> PoolTimings, BlasTimings;
  std::vector<Timing> *Earlier = &PoolTimings;
  size_t Call = 0;
};

void Calibrator::peaks(SpinPool &Pool) {
  // Size one call to about 20 ms (5 ms quick) on one thread.
  double Flops = 0;
  uint64_t Iters = 1 << 16;
  for (;;) {
    double T0 = now();
    volatile double Sink = fmaLoopF32(Iters, &Flops);
    (void)Sink;
    double T = now() - T0;
    if (T > 0.002 || Iters > (1ull << 40)) {
      Iters = uint64_t(double(Iters) * (O.Quick ? 0.005 : 0.02) / T) + 1;
      break;
    }
    Iters *= 4;
  }
  unsigned Trials = O.Quick ? 3 : 7;
  auto best = [&](auto Loop, bool AllThreads) {
    double Best = 0;
    for (unsigned T = 0; T < Trials; ++T) {
      std::vector<double> PerThread(Pool.size());
      double T0 = now();
      if (AllThreads)
        Pool.run([&](unsigned I) {
          volatile double Sink = Loop(Iters, &PerThread[I]);
          (void)Sink;
        });
      else {
        volatile double Sink = Loop(Iters, &PerThread[0]);
        (void)Sink;
      }
      double Seconds = now() - T0;
      double Sum = 0;
      for (double F : PerThread)
        Sum += F;
      Best = std::max(Best, Sum / Seconds);
    }
    return Best;
  };
  M.PeakF32OneThread = best(fmaLoopF32, false);
  M.PeakF32 = best(fmaLoopF32, true);
  M.PeakF64 = best(fmaLoopF64, true);
  // Cores of their own (no SMT sibling among the CPUs we may run on): the
  // peak is the one-thread peak times the threads, a property of the
  // hardware; a lower all-thread reading is other work taking turns on
  // the CPUs (the one-thread loop, shorter, finds a free CPU more easily).
  const double Scaled = Pool.size() * M.PeakF32OneThread;
  if (Pool.size() > 1 && M.PeakF32 < 0.97 * Scaled && !sharesCores()) {
    note("the FMA peak on " + std::to_string(Pool.size()) + " threads read " +
         fx(M.PeakF32 / 1e9, 1) + " GFLOPS, below " +
         std::to_string(Pool.size()) + " x the one-thread peak; the CPUs " +
         "have no SMT siblings, so other work took turns: " +
         std::to_string(Pool.size()) + " x one-thread peak used");
    M.PeakF64 *= Scaled / M.PeakF32;
    M.PeakF32 = Scaled;
  } else if (Pool.size() > 1 &&
             M.PeakF32 < 0.75 * Pool.size() * M.PeakF32OneThread)
    note("the FMA peak on " + std::to_string(Pool.size()) +
         " threads is only " + fx(M.PeakF32 / M.PeakF32OneThread, 2) +
         " times that of one: other work shares the CPUs, or the threads "
         "share cores (SMT); figures are low");
  log("FMA peak fp32 " + fx(M.PeakF32 / 1e9, 1) + " GFLOPS on " +
      std::to_string(Pool.size()) + " threads (" +
      fx(M.PeakF32OneThread / 1e9, 1) + " on one), fp64 " +
      fx(M.PeakF64 / 1e9, 1) + " GFLOPS; " + M.Isa);
}

void Calibrator::clock() {
  if (!haveAddChain())
    return;
  uint64_t Iters = 100000;
  double Best = 0;
  for (int T = 0; T < (O.Quick ? 3 : 7); ++T) {
    double T0 = now();
    volatile uint64_t Sink = addChain(Iters);
    (void)Sink;
    double S = now() - T0;
    Best = std::max(Best, double(Iters) * 200 / S);
  }
  M.ClockHz = Best;
  // FMA pipes: FP32 FLOP per cycle per thread over 2 x lanes.
  double Lanes = M.SimdWidthBits / 32.0;
  double Pipes = M.PeakF32OneThread / (M.ClockHz * Lanes * 2);
  double Whole = std::round(Pipes);
  if (Whole >= 1 && Whole <= 4 && std::fabs(Pipes - Whole) < 0.08 * Whole &&
      detectSimd().Fma)
    M.FmaUnits = unsigned(Whole);
  log("clock " + fx(M.ClockHz / 1e9, 2) + " GHz, " + fx(Pipes, 2) +
      " FMA pipes per core");
}

void Calibrator::memory(SpinPool &Pool) {
  // Arrays well beyond the last-level cache.
  double Bytes = O.Quick ? std::max(64 * MiB, 2 * M.L3Bytes)
                         : std::max(128 * MiB, 4 * M.L3Bytes);
  size_t N = size_t(Bytes / sizeof(float));
  N -= N % 64;
  M.StreamArrayBytes = double(N) * sizeof(float);
  Buffer A(N), B(N), C(N);
  Pool.parallelFor(N, [&](size_t Lo, size_t Hi, unsigned) {
    for (size_t I = Lo; I < Hi; ++I) {
      A.data()[I] = 1.0f;
      B.data()[I] = 2.0f;
      C.data()[I] = 0.5f;
    }
  });

  // Each thread repeats its part Reps times per dispatch, so that
  // cache-resident sizes time the kernel, not the fork/join (priced
  // separately as launch_overhead).
  size_t Reps = 1;
  auto stream = [&](size_t Count, auto Body) {
    return [&, Count, Body] {
      Pool.parallelFor(Count, [&](size_t Lo, size_t Hi, unsigned) {
        for (size_t R = 0; R < Reps; ++R)
          Body(Lo, Hi - Lo);
      });
    };
  };
  auto copy = [&](size_t Lo, size_t Len) {
    copyKernel(C.data() + Lo, A.data() + Lo, Len);
  };
  auto triad = [&](size_t Lo, size_t Len) {
    triadKernel(A.data() + Lo, B.data() + Lo, C.data() + Lo, 3.0f, Len);
  };
  auto add = [&](size_t Lo, size_t Len) {
    addKernel(C.data() + Lo, A.data() + Lo, B.data() + Lo, Len);
  };
  auto sum = [&](size_t Lo, size_t Len) {
    volatile float Sink = sumKernel(A.data() + Lo, Len);
    (void)Sink;
  };
  auto transpose = [&](size_t Count) {
    // NCHW -> NHWC of 64 channels: Count floats.
    size_t Ch = 64, HW = Count / Ch;
    return [&, Ch, HW] {
      Pool.parallelFor(HW, [&](size_t Lo, size_t Hi, unsigned) {
        for (size_t R = 0; R < Reps; ++R)
          transposeKernel(C.data(), A.data(), Ch, HW, Lo, Hi);
      });
    };
  };
  auto layerNorm = [&](size_t Count) {
    size_t Cols = 768, Rows = Count / Cols;
    return [&, Cols, Rows] {
      Pool.parallelFor(Rows, [&](size_t Lo, size_t Hi, unsigned) {
        // Scale and bias: the first row of B and C.
        for (size_t R = 0; R < Reps; ++R)
          layerNormKernel(C.data() + Lo * Cols, A.data() + Lo * Cols, B.data(),
                          B.data() + Cols, Hi - Lo, Cols);
      });
    };
  };

  Timing Copy = timed(stream(N, copy), budget(0.8), 3);
  Timing Triad = timed(stream(N, triad), budget(0.8), 3);
  M.CopyBandwidth = 2.0 * N * sizeof(float) / Copy.Best;
  M.TriadBandwidth = 3.0 * N * sizeof(float) / Triad.Best;
  M.MainBandwidth = std::max(M.CopyBandwidth, M.TriadBandwidth);
  log("main memory: copy " + fx(M.CopyBandwidth / 1e9, 1) + " GB/s, triad " +
      fx(M.TriadBandwidth / 1e9, 1) + " GB/s over " +
      fx(M.StreamArrayBytes / MiB, 0) + " MiB arrays");

  // Working sets (bytes of all arrays of one op) from cache-resident to
  // main memory: half of the L2 of the threads, half of the L3, and the
  // big arrays.
  unsigned T = Pool.size();
  double L2Set = M.L2BytesPerCore > 0 ? 0.5 * M.L2BytesPerCore * T : 256 * KiB;
  std::vector<std::pair<const char *, double>> Sets = {{"L2", L2Set}};
  if (M.L3Bytes > 4 * L2Set)
    Sets.push_back({"L3", 0.5 * M.L3Bytes});
  Sets.push_back({"DRAM", 3.0 * M.StreamArrayBytes});

  // The roofline prices an op whose working set fits a cache that has a
  // bandwidth at that cache's bandwidth (costmodels/Roofline.h), so a rate
  // measured on a cache-resident set is written as a share of that level's
  // bandwidth (add's best rate over the set, the figure written for the
  // level), and one on a DRAM-sized set as a share of main memory's.
  double LevelBandwidth = M.MainBandwidth;
  auto record = [&](const std::string &What, double Work, const Timing &Tm,
                    bool Best = false) {
    KernelRate R;
    R.What = What;
    R.Work = Work;
    R.Seconds = (Best ? Tm.Best : Tm.Low) / double(Reps);
    R.Rate = Work / R.Seconds;
    R.Efficiency = clampEff(R.Rate / LevelBandwidth);
    M.Memory.push_back(R);
    return R;
  };
  for (auto &[Level, SetBytes] : Sets) {
    bool Dram = llvm::StringRef(Level) == "DRAM";
    Reps = std::max<size_t>(1, size_t(32 * MiB / SetBytes));
    // add: 3 arrays of n floats.
    size_t AddN = std::min(N, size_t(SetBytes / 12) / 64 * 64);
    std::string Where = std::string(" (") + Level + ")";
    double AddBytes = 12.0 * AddN;
    Timing TAdd = timed(stream(AddN, add), budget(Dram ? 0.6 : 0.3), 5);
    // Without a known L2 size no L2 level is written (see the YAML
    // writer), so the roofline would price that set at main memory.
    const bool Written =
        llvm::StringRef(Level) == "L3" ||
        (llvm::StringRef(Level) == "L2" && M.L2BytesPerCore > 0);
    LevelBandwidth =
        Written ? AddBytes * double(Reps) / TAdd.Best : M.MainBandwidth;
    if (llvm::StringRef(Level) == "L2" && Written)
      M.L2Bandwidth = LevelBandwidth;
    if (llvm::StringRef(Level) == "L3")
      M.L3Bandwidth = LevelBandwidth;
    KernelRate RAdd = record("add" + Where, AddBytes, TAdd);
    M.ElementwiseMemory.push_back({AddBytes, RAdd.Efficiency});

    // sum: reads n floats (the reduction's output is negligible).
    size_t SumN = std::min(N, size_t(SetBytes / 4) / 64 * 64);
    Timing TSum = timed(stream(SumN, sum), budget(Dram ? 0.4 : 0.2), 5);
    KernelRate RSum = record("sum" + Where, 4.0 * SumN, TSum);
    M.ReductionMemory.push_back({4.0 * SumN, RSum.Efficiency});

    // layer norm and transpose: read n, write n.
    size_t TwoN = std::min(N, size_t(SetBytes / 8) / 768 * 768);
    Timing TLn = timed(layerNorm(TwoN), budget(Dram ? 0.4 : 0.2), 5);
    KernelRate RLn = record("layernorm" + Where, 8.0 * TwoN, TLn);
    M.NormalizationMemory.push_back({8.0 * TwoN, RLn.Efficiency});
    Timing TTr = timed(transpose(TwoN), budget(Dram ? 0.4 : 0.2), 5);
    KernelRate RTr = record("transpose" + Where, 8.0 * TwoN, TTr);
    M.DataMovementMemory.push_back({8.0 * TwoN, RTr.Efficiency});
    log(std::string(Level) + " (" + fx(SetBytes / MiB, 1) + " MiB): add " +
        fx(RAdd.Rate / 1e9, 1) + ", sum " + fx(RSum.Rate / 1e9, 1) +
        ", layernorm " + fx(RLn.Rate / 1e9, 1) + ", transpose " +
        fx(RTr.Rate / 1e9, 1) + " GB/s");
  }
}

void Calibrator::vectorKernels(SpinPool &Pool) {
  // Cache-resident (L1/L2) data per thread: compute rates in perfc's FLOP
  // convention per element (passes/ops: Exp 4, ReduceSum 1,
  // LayerNormalization 8).
  unsigned T = Pool.size();
  size_t Per = 4096; // 16 KiB per array per thread
  std::vector<Buffer> X, Y;
  for (unsigned I = 0; I < T; ++I) {
    X.emplace_back(Per * 2);
    Y.emplace_back(Per * 2);
  }
  Pool.run([&](unsigned I) {
    for (size_t J = 0; J < Per * 2; ++J)
      X[I].data()[J] = float(J % 97) * 0.01f - 0.5f;
  });
  auto measureOne = [&](const char *What, double FlopsPerElem, size_t Elems,
                        auto Body) {
    // Enough calls per dispatch (milliseconds) that the fork/join is noise.
    size_t Inner = O.Quick ? 200 : 1000;
    Timing Tm = timed(
        [&] {
          Pool.run([&](unsigned I) {
            for (size_t K = 0; K < Inner; ++K)
              Body(I);
          });
        },
        budget(0.3), 5);
    KernelRate R;
    R.What = What;
    R.Work = FlopsPerElem * double(Elems) * T * Inner;
    R.Seconds = Tm.Low;
    R.Rate = R.Work / R.Seconds;
    R.Efficiency = clampEff(R.Rate / M.PeakF32);
    M.Vector.push_back(R);
    return R.Efficiency;
  };
  M.ElementwiseCompute =
      measureOne("exp (4 FLOP/element)", 4, Per,
                 [&](unsigned I) { expKernel(Y[I].data(), X[I].data(), Per); });
  M.ReductionCompute =
      measureOne("sum (1 FLOP/element)", 1, 2 * Per, [&](unsigned I) {
        volatile float S = sumKernel(X[I].data(), 2 * Per);
        (void)S;
      });
  size_t Cols = 768, Rows = Per / Cols;
  M.NormalizationCompute = measureOne(
      "layernorm 768 (8 FLOP/element)", 8, Rows * Cols, [&](unsigned I) {
        layerNormKernel(Y[I].data(), X[I].data(), X[I].data() + Per,
                        X[I].data() + Per + Cols, Rows, Cols);
      });
  log("in cache: exp " + fx(M.Vector[0].Rate / 1e9, 1) + ", sum " +
      fx(M.Vector[1].Rate / 1e9, 1) + ", layernorm " +
      fx(M.Vector[2].Rate / 1e9, 1) + " GFLOPS");
}

void Calibrator::dispatch(SpinPool &Pool) {
  // Back-to-back fork/joins, as a runtime runs one op after another; the
  // tiny kernel adds 64 floats on each thread.
  unsigned T = Pool.size();
  std::vector<Buffer> Bufs;
  for (unsigned I = 0; I < T; ++I) {
    Bufs.emplace_back(3 * 64);
    std::fill(Bufs[I].data(), Bufs[I].data() + 3 * 64, 1.0f);
  }
  // Each dispatch timed on its own (about a microsecond; the clock costs
  // tens of nanoseconds), so that the 10th percentile is a dispatch during
  // which no other work took a thread's CPU away.
  Timing Empty = timed([&] { Pool.run([](unsigned) {}); }, budget(0.3), 1000);
  Timing Tiny = timed(
      [&] {
        Pool.run([&](unsigned I) {
          float *P = Bufs[I].data();
          addKernel(P + 128, P, P + 64, 64);
        });
      },
      budget(0.3), 1000);
  M.ForkJoinSeconds = Empty.Low;
  M.DispatchSeconds = Tiny.Low;
  log("dispatch: fork/join " + fx(M.ForkJoinSeconds * 1e6, 2) +
      " us, with a tiny kernel " + fx(M.DispatchSeconds * 1e6, 2) +
      " us (mean " + fx(Tiny.Mean * 1e6, 2) + " us, median " +
      fx(Tiny.Median * 1e6, 2) + " us)");
}

void Calibrator::stridedCopy() {
  // A transpose the runtime copies one element at a time: a window
  // partition (MaxViT's), 200,704 floats, in L2 as the model's are; one
  // thread, as ONNX Runtime's generic Transpose runs.
  const size_t Dims[] = {1, 64, 8, 7, 8, 7}, Perm[] = {0, 2, 4, 3, 5, 1};
  const size_t N = 64 * 8 * 7 * 8 * 7;
  Buffer X(N), Y(N);
  std::fill(X.data(), X.data() + N, 1.0f);
  Timing Strided =
      timed([&] { stridedTransposeKernel(Y.data(), X.data(), Dims, Perm, 6); },
            budget(0.2), 5);
  M.StridedCopySecondsPerElement = Strided.Low / double(N);
}

void Calibrator::gemm(const Blas &B) {
  M.BlasPath = B.Path;
  M.BlasCore = B.CoreName;
  M.BlasConfig = B.Config;
  auto run = [&](const std::string &What, int Mm, int Nn, int Kk,
                 double Budget) {
    Buffer A(size_t(Mm) * Kk), Bm(size_t(Kk) * Nn), C(size_t(Mm) * Nn);
    for (size_t I = 0; I < A.N; ++I)
      A.data()[I] = float(I % 13) * 0.01f;
    for (size_t I = 0; I < Bm.N; ++I)
      Bm.data()[I] = float(I % 7) * 0.01f;
    Timing Tm = timed(
        [&] {
          if (Mm == 1)
            // Weights stored [out, in], as ONNX Gemm with transB.
            B.sgemv(Nn, Kk, Bm.data(), A.data(), C.data());
          else
            B.sgemm(Mm, Nn, Kk, A.data(), Bm.data(), C.data());
        },
        budget(Budget), 3);
    KernelRate R;
    R.What = What;
    R.Work = 2.0 * Mm * Nn * Kk;
    R.Seconds = Tm.Low;
    R.Rate = R.Work / R.Seconds;
    R.Efficiency = clampEff(R.Rate / M.PeakF32);
    return R;
  };
  std::vector<int> Sizes = {64, 128, 256, 512, 1024, 2048};
  if (O.Quick)
    Sizes = {64, 128, 256, 512};
  for (int S : Sizes) {
    KernelRate R = run("sgemm " + std::to_string(S) + "x" + std::to_string(S) +
                           "x" + std::to_string(S),
                       S, S, S, 0.5);
    M.Gemm.push_back(R);
    // Beyond 1024^3 the curve follows the shapes models have (below): a
    // 17 GFLOP square product is no batch-1 model's, while a language
    // model's head is (and runs at half the square product's rate).
    if (S <= 1024)
      M.GemmCompute.push_back({R.Work, R.Efficiency});
    log(R.What + ": " + fx(R.Rate / 1e9, 1) + " GFLOPS (" +
        fx(R.Efficiency, 2) + " of peak)");
  }
  struct Shape {
    const char *What;
    int Mm, Nn, Kk;
    bool InCurve; ///< A point of the gemm curve, beside the squares.
  };
  std::vector<Shape> Shapes = {
      {"sgemm 128x768x768 (BERT/GPT-2 projection, seq 128)", 128, 768, 768,
       true},
      {"sgemm 128x3072x768 (BERT/GPT-2 MLP up, seq 128)", 128, 3072, 768, true},
      {"sgemm 128x768x3072 (BERT/GPT-2 MLP down, seq 128)", 128, 768, 3072,
       true},
      {"sgemm 197x768x768 (ViT-B/16 projection)", 197, 768, 768, true},
      {"sgemm 128x128x64 (attention scores, one head)", 128, 128, 64, false},
      {"sgemv 1x1000x2048 (ResNet-50 classifier)", 1, 1000, 2048, false},
      {"sgemm 128x50257x768 (GPT-2 LM head, seq 128)", 128, 50257, 768, true},
  };
  if (O.Quick)
    Shapes.resize(2);
  for (const Shape &S : Shapes) {
    KernelRate R = run(S.What, S.Mm, S.Nn, S.Kk, 0.3);
    M.GemmShapes.push_back(R);
    if (S.InCurve)
      M.GemmCompute.push_back({R.Work, R.Efficiency});
    log(R.What + ": " + fx(R.Rate / 1e9, 1) + " GFLOPS (" +
        fx(R.Efficiency, 2) + ")");
  }
  // Recurrent ops run a small GEMM per time step: the 128^3 efficiency.
  M.RecurrentCompute =
      M.Gemm.size() > 1 ? M.Gemm[1].Efficiency : M.Gemm.front().Efficiency;

  // SGEMV over a matrix beyond the caches: GEMM's memory efficiency.
  int Dim = O.Quick ? 2048 : 4096;
  while (double(Dim) * Dim * 4 < 2 * M.L3Bytes && Dim < 16384)
    Dim *= 2;
  Buffer A(size_t(Dim) * Dim), X(Dim), Y(Dim);
  for (size_t I = 0; I < A.N; ++I)
    A.data()[I] = 0.001f;
  std::fill(X.data(), X.data() + Dim, 1.0f);
  Timing Tm = timed([&] { B.sgemv(Dim, Dim, A.data(), X.data(), Y.data()); },
                    budget(0.5), 3);
  M.Gemv.What = "sgemv " + std::to_string(Dim) + "x" + std::to_string(Dim);
  M.Gemv.Work = 4.0 * (double(Dim) * Dim + 2.0 * Dim);
  M.Gemv.Seconds = Tm.Low;
  M.Gemv.Rate = M.Gemv.Work / Tm.Low;
  M.Gemv.Efficiency = clampEff(M.Gemv.Rate / M.MainBandwidth);
  M.GemmMemory = M.Gemv.Efficiency;
  log(M.Gemv.What + ": " + fx(M.Gemv.Rate / 1e9, 1) + " GB/s (" +
      fx(M.Gemv.Efficiency, 2) + " of main memory)");

  // A tiny SGEMM: the library's own call overhead.
  Buffer Sa(256), Sb(256), Sc(256);
  std::fill(Sa.data(), Sa.data() + 256, 1.0f);
  std::fill(Sb.data(), Sb.data() + 256, 1.0f);
  size_t Batch = 200;
  Timing Small = timed(
      [&] {
        for (size_t K = 0; K < Batch; ++K)
          B.sgemm(16, 16, 16, Sa.data(), Sb.data(), Sc.data());
      },
      budget(0.2), 3);
  M.SmallGemmSeconds = Small.Low / Batch;
}

/// 64-byte aligned floats (as runtimes allocate tensors), zero-filled.
struct AlignedBuffer {
  struct Free {
    void operator()(float *P) const { std::free(P); }
  };
  std::unique_ptr<float, Free> P;
  size_t N = 0;
  explicit AlignedBuffer(size_t N)
      : P(static_cast<float *>(
            std::aligned_alloc(64, (N * sizeof(float) + 63) / 64 * 64))),
        N(N) {
    std::memset(P.get(), 0, N * sizeof(float));
  }
  float *data() { return P.get(); }
};

/// Sizes within 30% of each other share a point: the FLOPs of the group
/// over its time, as a network mixing those shapes weighs them.
Curve groupBySize(std::vector<KernelRate> Rates, double Peak) {
  llvm::sort(Rates, [](const KernelRate &A, const KernelRate &B) {
    return A.Work < B.Work;
  });
  Curve C;
  double First = 0, Work = 0, Seconds = 0, Count = 0;
  auto flush = [&] {
    if (Seconds > 0)
      C.push_back({Work / Count, clampEff(Work / Seconds / Peak)});
    Work = Seconds = Count = 0;
  };
  for (const KernelRate &R : Rates) {
    if (Seconds > 0 && R.Work > 1.3 * First)
      flush();
    if (Seconds == 0)
      First = R.Work;
    Work += R.Work;
    Seconds += R.Seconds;
    ++Count;
  }
  flush();
  return C;
}

void Calibrator::conv(SpinPool &Pool) {
  struct Shape {
    int Cin, H, Cout, K, Stride;
    bool Depthwise;
    const char *From;
  };
  // Batch 1, the shapes of the zoo's CNNs: ResNet's 3x3 and 1x1 stages, a
  // VGG-sized 3x3, MobileNet/EfficientNet pointwise (narrow, few FLOPs) and
  // depthwise 3x3/5x5, ConvNeXt's depthwise 7x7. Channel counts that are not
  // a multiple of the vector width are padded, as in the runtime, and the
  // FLOPs counted are the padded ones (the work the kernel does).
  std::vector<Shape> Shapes = {
      {64, 56, 64, 3, 1, false, "ResNet"},
      {128, 28, 128, 3, 1, false, "ResNet"},
      {256, 14, 256, 3, 1, false, "ResNet"},
      {512, 7, 512, 3, 1, false, "ResNet"},
      {128, 56, 128, 3, 2, false, "ResNet"},
      {256, 56, 256, 3, 1, false, "VGG"},
      {256, 56, 64, 1, 1, false, "ResNet"},
      {64, 56, 256, 1, 1, false, "ResNet"},
      {1024, 14, 256, 1, 1, false, "ResNet"},
      {512, 7, 2048, 1, 1, false, "ResNet"},
      {16, 112, 96, 1, 1, false, "MobileNet"},
      {144, 56, 24, 1, 1, false, "MobileNet"},
      {32, 112, 16, 1, 1, false, "MobileNet"},
      {160, 7, 960, 1, 1, false, "MobileNet"},
      {64, 14, 384, 1, 1, false, "MobileNet"},
      {32, 112, 32, 3, 1, true, "MobileNet"},
      {96, 112, 96, 3, 2, true, "MobileNet"},
      {144, 56, 144, 3, 1, true, "MobileNet"},
      {192, 28, 192, 3, 1, true, "MobileNet"},
      {576, 14, 576, 3, 1, true, "MobileNet"},
      {960, 7, 960, 3, 1, true, "MobileNet"},
      {240, 28, 240, 5, 1, true, "EfficientNet"},
      {96, 56, 96, 7, 1, true, "ConvNeXt"},
      {384, 14, 384, 7, 1, true, "ConvNeXt"},
      {768, 7, 768, 7, 1, true, "ConvNeXt"},
  };
  if (O.Quick)
    Shapes = {{64, 28, 64, 3, 1, false, "ResNet"},
              {256, 7, 256, 1, 1, false, "ResNet"},
              {96, 28, 96, 3, 1, true, "MobileNet"},
              {96, 14, 96, 7, 1, true, "ConvNeXt"}};
  const ConvKernelInfo Info = convKernelInfo();
  M.ConvLanes = Info.Lanes;
  M.OrtNchwcBlock = ortNchwcBlock();
  M.ConvKernel = std::string(Info.Isa) + ", " + std::to_string(Info.Lanes) +
                 "-channel blocks, " + std::to_string(Info.TileBlocks) + "x" +
                 std::to_string(Info.TilePixels) + " register tile";
  const int L = Info.Lanes;
  double DenseFlops = 0, DenseSeconds = 0, DwFlops = 0, DwSeconds = 0;
  std::vector<double> Dw3PerOutput;
  double Dw7Flops = 0, Dw7Seconds = 0;
  for (const Shape &S : Shapes) {
    const int Pad = S.K / 2;
    ConvGeometry G;
    G.CinBlocks = (S.Cin + L - 1) / L;
    G.CoutBlocks = (S.Cout + L - 1) / L;
    G.Hp = G.Wp = S.H + 2 * Pad;
    G.K = S.K;
    G.Stride = S.Stride;
    G.Pad = Pad;
    G.OH = G.OW = (S.H + 2 * Pad - S.K) / S.Stride + 1;
    const size_t Lanes = size_t(L);
    AlignedBuffer X(size_t(G.CinBlocks) * G.Hp * G.Wp * Lanes);
    AlignedBuffer W(S.Depthwise ? size_t(G.CoutBlocks) * S.K * S.K * Lanes
                                : size_t(G.CoutBlocks) * G.CinBlocks * S.K *
                                      S.K * Lanes * Lanes);
    AlignedBuffer Y(size_t(G.CoutBlocks) * G.OH * G.OW * Lanes);
    for (size_t I = 0; I < X.N; ++I)
      X.data()[I] = float(I % 11) * 0.01f;
    for (size_t I = 0; I < W.N; ++I)
      W.data()[I] = float(I % 5) * 0.01f;
    const size_t Items = convWorkItems(G, S.Depthwise);
    Timing Tm = timed(
        [&] {
          Pool.parallelFor(Items, [&](size_t Lo, size_t Hi, unsigned) {
            convNchwc(G, S.Depthwise, X.data(), W.data(), Y.data(), Lo, Hi);
          });
        },
        budget(S.Depthwise ? 0.15 : 0.25), 3);
    KernelRate R;
    R.What = std::string(S.Depthwise ? "depthwise " : "conv ") +
             std::to_string(S.K) + "x" + std::to_string(S.K) + "/" +
             std::to_string(S.Stride) + " " + std::to_string(S.Cin) +
             (S.Depthwise ? "" : "->" + std::to_string(S.Cout)) + " " +
             std::to_string(S.H) + "x" + std::to_string(S.H) + " (" + S.From +
             ")";
    // The work the kernel does: channels padded to whole blocks, as perfc
    // counts a blocked convolution's work on a description with
    // conv_channel_block (cost::opTime).
    const double CoutPadded = double(G.CoutBlocks) * L;
    const double CinPadded = double(G.CinBlocks) * L;
    R.Work = 2.0 * CoutPadded * double(G.OH) * G.OW * S.K * S.K *
             (S.Depthwise ? 1.0 : CinPadded);
    // The best call, as for the peak: a long call (the VGG shape, 10 ms)
    // is seldom left alone on a shared machine for 10% of the calls.
    R.Seconds = Tm.Best;
    R.Rate = R.Work / R.Seconds;
    R.Efficiency = clampEff(R.Rate / M.PeakF32);
    (S.Depthwise ? M.DepthwiseConv : M.Conv).push_back(R);
    if (S.Depthwise) {
      const double Outputs = CoutPadded * G.OH * G.OW;
      M.DepthwisePerOutput.push_back(R.Seconds / Outputs);
      if (S.K == 3)
        Dw3PerOutput.push_back(R.Seconds / Outputs);
      if (S.K == 7) {
        Dw7Flops += R.Work;
        Dw7Seconds += R.Seconds;
      }
    }
    (S.Depthwise ? DwFlops : DenseFlops) += R.Work;
    (S.Depthwise ? DwSeconds : DenseSeconds) += R.Seconds;
    log(R.What + ": " + fx(R.Rate / 1e9, 1) + " GFLOPS (" +
        fx(R.Efficiency, 2) + ")");
  }
  M.ConvCompute = clampEff(DenseFlops / DenseSeconds / M.PeakF32);
  M.DepthwiseConvCompute = clampEff(DwFlops / DwSeconds / M.PeakF32);
  M.ConvComputeCurve = groupBySize(M.Conv, M.PeakF32);
  // The two-term fit: the 3x3 shapes' median time per output is the floor,
  // the 7x7 shapes' rate the FLOP term (both kinds are in every shape
  // list, the quick one too).
  if (!Dw3PerOutput.empty()) {
    std::sort(Dw3PerOutput.begin(), Dw3PerOutput.end());
    M.DepthwiseSecondsPerOutput = Dw3PerOutput[Dw3PerOutput.size() / 2];
  }
  M.DepthwiseFlopCompute = Dw7Seconds > 0
                               ? clampEff(Dw7Flops / Dw7Seconds / M.PeakF32)
                               : M.DepthwiseConvCompute;
}

llvm::Error Calibrator::run() {
  double Start = now();
  describeMachine(M);
  M.Threads = O.Threads;
  if (M.LoadAverage > 0.5)
    note("load average " + fx(M.LoadAverage, 2) +
         " before measuring: the machine is busy, figures may be low");
  if (M.L3ReportedBytes > 0)
    note("CPUID reports " + fx(M.L3ReportedBytes / MiB, 0) +
         " MiB of L3 (a whole socket's, as some hypervisors report); "
         "32 MiB assumed reachable");
  log("measuring " + M.CpuModel + " on " + std::to_string(O.Threads) +
      " threads (" + std::to_string(M.LogicalCpus) + " CPUs available)" +
      (O.Quick ? ", quick" : ""));
  const unsigned Rounds = O.Rounds ? O.Rounds : (O.Quick ? 1 : 2);
  for (unsigned R = 0; R < Rounds; ++R) {
    // The spinning pool first; it is gone (its threads joined) before
    // OpenBLAS starts threads of its own.
    SpinPool Pool(O.Threads);
    if (R == 0) {
      // Already the best of several trials each, and steady.
      peaks(Pool);
      clock();
    } else {
      log("round " + std::to_string(R + 1) + " of " + std::to_string(Rounds));
    }
    clearKernels();
    startRound(PoolTimings);
    memory(Pool);
    vectorKernels(Pool);
    dispatch(Pool);
    stridedCopy();
    conv(Pool);
  }
  auto B = loadBlas(O.Threads, O.BlasCoreType);
  if (!B)
    return B.takeError();
  M.BlasInheritedCoreType = B->InheritedCoreType;
  if (!B->InheritedCoreType.empty() && B->InheritedCoreType != B->CoreType)
    note("OPENBLAS_CORETYPE=" + B->InheritedCoreType +
         " in the environment overridden by " + B->CoreType +
         " (the CPU's widest kernels); --blas-core env keeps it");
  log("OpenBLAS " + B->CoreName + " kernels (" + B->Path + ")");
  for (unsigned R = 0; R < Rounds; ++R) {
    M.Gemm.clear();
    M.GemmShapes.clear();
    M.GemmCompute.clear();
    startRound(BlasTimings);
    gemm(*B);
  }
  M.WallSeconds = now() - Start;
  log("done in " + fx(M.WallSeconds, 1) + " s");
  return llvm::Error::success();
}

} // namespace

llvm::Error perfc::calibrate::detail::runMeasurements(const CalibrateOptions &O,
                                                      Measurements &M) {
  Calibrator C(O, M);
  return C.run();
}
