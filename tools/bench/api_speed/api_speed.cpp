//===- api_speed.cpp - Predictions per second through perfc/perfc.h -------===//
//
//   api_speed ZOO_DIR [SECONDS]
//   api_speed ZOO_DIR --fresh-iterations N
//
// On one thread: a ~50-op CNN made with the builder (predict only, and
// build + predict), resnet50 from ONNX bytes (new bytes every time, the
// same bytes every time, and predict only on a loaded model), each run for
// SECONDS (default 2). Prints one line per loop: name, rate by the wall
// clock, rate by the process's CPU time (what one core does when the
// machine is shared), target.
//
// "fresh bytes" appends a different ModelProto.doc_string to the file's
// bytes each time (protobuf keeps the last value of a repeated scalar
// field): the model is the same, the bytes are new, so the import cache
// (Model::fromOnnxBytes) cannot hit and every iteration runs the whole
// import: weight stripping, protobuf parsing, checks, shape inference, IR.
//
// --fresh-iterations N runs only that loop, N times, for a fixed amount of
// work to count instructions on (valgrind --tool=callgrind);
// --build-iterations N likewise the builder's (cnn50 build + predict).
//
//===----------------------------------------------------------------------===//
#include "perfc/perfc.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <sstream>

namespace api = perfc::api;
using Clock = std::chrono::steady_clock;

namespace {

/// ResNet-like, 50 ops: a stem, four stages of a downsampling residual
/// block, a second residual block in the first stage, a classifier.
api::Model cnn() {
  api::ModelBuilder B("cnn50");
  auto X = B.input("image", {1, 3, 224, 224});
  X = B.relu(B.batchNorm(B.conv(X, 32, 3, 2)));
  X = B.maxPool(X, 3, 2, 1);
  for (int Stage = 0; Stage < 4; ++Stage) {
    int64_t C = 32 << Stage;
    auto Y = B.relu(B.batchNorm(B.conv(X, C, 3, Stage ? 2 : 1)));
    Y = B.batchNorm(B.conv(Y, C, 3));
    auto S = B.batchNorm(B.conv(X, C, 1, Stage ? 2 : 1, 0));
    X = B.relu(B.add(Y, S));
    if (Stage == 0) {
      Y = B.relu(B.batchNorm(B.conv(X, C, 3)));
      X = B.relu(B.add(B.batchNorm(B.conv(Y, C, 3)), X));
    }
  }
  B.output(B.gemm(B.flatten(B.globalAvgPool(X)), 1000));
  return B.build();
}

double cpuSeconds() {
  timespec T;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &T);
  return T.tv_sec + 1e-9 * T.tv_nsec;
}

struct Rate {
  double Wall, Cpu; ///< Iterations per second of wall and of CPU time.
};

Rate rate(double Seconds, const std::function<void()> &F) {
  F(); // warm
  long N = 0;
  auto Start = Clock::now();
  double CpuStart = cpuSeconds();
  double Elapsed = 0;
  do {
    for (int I = 0; I < 16; ++I)
      F();
    N += 16;
    Elapsed = std::chrono::duration<double>(Clock::now() - Start).count();
  } while (Elapsed < Seconds);
  return {N / Elapsed, N / (cpuSeconds() - CpuStart)};
}

void report(const char *Name, Rate R, double Target) {
  std::printf("%-36s %8.0f /s  cpu %8.0f /s", Name, R.Wall, R.Cpu);
  if (Target > 0)
    std::printf("  (target %.0f /s: %s, x%.2f)", Target,
                R.Cpu >= Target ? "met" : "MISSED", R.Cpu / Target);
  std::printf("\n");
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    std::fprintf(stderr, "usage: api_speed ZOO_DIR [SECONDS]\n");
    return 2;
  }
  api::Hardware Hw = api::Hardware::load("a100-sxm4-80gb");
  std::ifstream In(std::string(Argv[1]) + "/resnet50.onnx", std::ios::binary);
  std::stringstream SS;
  SS << In.rdbuf();
  const std::string Bytes = SS.str();
  volatile double Sink = 0;
  // New bytes each time (see the top of the file): the whole import runs.
  long Serial = 0;
  auto Fresh = [&] {
    std::string Doc = "candidate " + std::to_string(Serial++);
    std::string Fresh = Bytes;
    Fresh += char(0x32); // Field 6 (doc_string), length-delimited.
    Fresh += char(Doc.size());
    Fresh += Doc;
    api::Model R = api::Model::fromOnnxBytes(Fresh, {}, "resnet50");
    Sink = *api::predict(R, Hw).latencySeconds();
  };
  auto Build = [&] { Sink = *api::predict(cnn(), Hw).latencySeconds(); };
  // One loop N times, for callgrind (see the top of the file).
  if (Argc > 3) {
    const std::string Mode = Argv[2];
    const bool FreshLoop = Mode == "--fresh-iterations";
    if (FreshLoop || Mode == "--build-iterations") {
      const long N = std::atol(Argv[3]);
      for (long I = 0; I < N; ++I)
        FreshLoop ? Fresh() : Build();
      std::printf("%s: %ld iterations\n",
                  FreshLoop ? "resnet50 fresh bytes -> predict"
                            : "cnn50 build + predict",
                  N);
      return 0;
    }
  }
  double Seconds = Argc > 2 ? std::atof(Argv[2]) : 2.0;
  api::Model M = cnn();
  std::printf("cnn50: %u ops; resnet50 from %s/resnet50.onnx; hw %s\n",
              M.numNodes(), Argv[1], Hw.name().c_str());
  report("cnn50 predict",
         rate(Seconds, [&] { Sink = *api::predict(M, Hw).latencySeconds(); }),
         20000);
  report("cnn50 build + predict", rate(Seconds, Build),
         20000); // a NAS loop builds every candidate anew

  report("resnet50 fresh bytes -> predict", rate(Seconds, Fresh), 2000);
  report("resnet50 same bytes -> predict",
         rate(Seconds,
              [&] {
                api::Model R = api::Model::fromOnnxBytes(Bytes, {}, "resnet50");
                Sink = *api::predict(R, Hw).latencySeconds();
              }),
         0);
  api::Model R = api::Model::fromOnnxBytes(Bytes, {}, "resnet50");
  report("resnet50 predict (model loaded)",
         rate(Seconds, [&] { Sink = *api::predict(R, Hw).latencySeconds(); }),
         0);
  report("cnn50 predict + toJson",
         rate(Seconds,
              [&] { Sink = api::toJson(api::predict(M, Hw), true).size(); }),
         0);
  return 0;
}
