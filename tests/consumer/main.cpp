// Predicts a CNN made with the builder and a zoo model (argv[1], an ONNX
// file) through the installed perfc package; exits non-zero on any doubt.
#include <perfc/perfc.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace api = perfc::api;

int main(int Argc, char **Argv) {
  if (Argc != 2) {
    std::fprintf(stderr, "usage: consumer MODEL.onnx\n");
    return 2;
  }
  try {
    api::Hardware Hw = api::Hardware::load("a100-sxm4-80gb");

    api::ModelBuilder B("consumer_cnn");
    auto X = B.input("image", {8, 3, 224, 224});
    X = B.relu(B.batchNorm(B.conv(X, 32, 3, 2)));
    for (int64_t C : {64, 128, 256}) {
      auto Y = B.relu(B.batchNorm(B.conv(X, C, 3, 2)));
      X = B.relu(B.add(B.batchNorm(B.conv(Y, C, 3)), Y));
    }
    B.output(B.gemm(B.flatten(B.globalAvgPool(X)), 1000));
    api::Model Cnn = B.build();
    api::Prediction P = api::predict(Cnn, Hw);
    std::printf("builder cnn: %u nodes, %.3g GFLOP, %.4f ms\n", Cnn.numNodes(),
                P.flops() / 1e9, *P.latencySeconds() * 1e3);

    std::ifstream In(Argv[1], std::ios::binary);
    std::stringstream Bytes;
    Bytes << In.rdbuf();
    api::Model Zoo =
        api::Model::fromOnnxBytes(Bytes.str(), {4, {}, false}, "resnet50.onnx");
    // Concurrent predictions sharing the model and the hardware.
    std::string Json[2];
    std::thread T([&] { Json[0] = api::toJson(api::predict(Zoo, Hw)); });
    Json[1] = api::toJson(api::predict(Zoo, Hw));
    T.join();
    if (Json[0] != Json[1] ||
        Json[0].find("\"schema_version\"") == std::string::npos)
      return std::fprintf(stderr, "JSON differs between threads\n"), 1;
    api::Prediction Z = api::predict(Zoo, Hw);
    std::printf("%s: %u nodes, %.3g GFLOP, %.4f ms\n", Zoo.name().c_str(),
                Zoo.numNodes(), Z.flops() / 1e9, *Z.latencySeconds() * 1e3);
    try {
      api::Hardware::load("no-such-device");
      return std::fprintf(stderr, "no error for a bad name\n"), 1;
    } catch (const api::Error &E) {
      std::printf("error as expected: %s\n", E.what());
    }
    return P.flops() > 0 && Z.flops() > 0 ? 0 : 1;
  } catch (const api::Error &E) {
    std::fprintf(stderr, "perfc: %s\n", E.what());
    return 1;
  }
}
