//===- api_speed.cpp - Predictions per second through perfc/perfc.h -------===//
//
//   api_speed ZOO_DIR [SECONDS]
//
// On one thread: a ~50-op CNN made with the builder (predict only, and
// build + predict), resnet50 from ONNX bytes (import + predict with the
// import cache, predict only, and an uncached import), each run for
// SECONDS (default 2). Prints one line per loop: name, rate, target.
//
//===----------------------------------------------------------------------===//
#include "perfc/perfc.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
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

double rate(double Seconds, const std::function<void()> &F) {
  F(); // warm
  long N = 0;
  auto Start = Clock::now();
  double Elapsed = 0;
  do {
    for (int I = 0; I < 16; ++I)
      F();
    N += 16;
    Elapsed = std::chrono::duration<double>(Clock::now() - Start).count();
  } while (Elapsed < Seconds);
  return N / Elapsed;
}

void report(const char *Name, double R, double Target) {
  if (Target > 0)
    std::printf("%-34s %10.0f /s  (target %.0f /s: %s, x%.2f)\n", Name, R,
                Target, R >= Target ? "met" : "MISSED", R / Target);
  else
    std::printf("%-34s %10.0f /s\n", Name, R);
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    std::fprintf(stderr, "usage: api_speed ZOO_DIR [SECONDS]\n");
    return 2;
  }
  double Seconds = Argc > 2 ? std::atof(Argv[2]) : 2.0;
  api::Hardware Hw = api::Hardware::load("a100-sxm4-80gb");
  api::Model M = cnn();
  std::printf("cnn50: %u ops; resnet50 from %s/resnet50.onnx; hw %s\n",
              M.numNodes(), Argv[1], Hw.name().c_str());
  volatile double Sink = 0;
  report("cnn50 predict",
         rate(Seconds, [&] { Sink = *api::predict(M, Hw).latencySeconds(); }),
         20000);
  report(
      "cnn50 build + predict",
      rate(Seconds, [&] { Sink = *api::predict(cnn(), Hw).latencySeconds(); }),
      0);

  std::ifstream In(std::string(Argv[1]) + "/resnet50.onnx", std::ios::binary);
  std::stringstream SS;
  SS << In.rdbuf();
  const std::string Bytes = SS.str();
  report("resnet50 bytes -> predict",
         rate(Seconds,
              [&] {
                api::Model R = api::Model::fromOnnxBytes(Bytes, {}, "resnet50");
                Sink = *api::predict(R, Hw).latencySeconds();
              }),
         2000);
  api::Model R = api::Model::fromOnnxBytes(Bytes, {}, "resnet50");
  report("resnet50 predict (model loaded)",
         rate(Seconds, [&] { Sink = *api::predict(R, Hw).latencySeconds(); }),
         0);
  // A new batch each time: the cache misses, the whole import runs.
  int64_t Batch = 1;
  report("resnet50 bytes -> predict, uncached",
         rate(Seconds,
              [&] {
                api::ImportOptions O;
                O.batch = 1 + (Batch++ % 1000);
                api::Model U = api::Model::fromOnnxBytes(Bytes, O, "resnet50");
                Sink = *api::predict(U, Hw).latencySeconds();
              }),
         0);
  report("cnn50 predict + toJson",
         rate(Seconds,
              [&] { Sink = api::toJson(api::predict(M, Hw), true).size(); }),
         0);
  return 0;
}
