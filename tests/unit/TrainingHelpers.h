//===- TrainingHelpers.h - Shared by the training tests ---------*- C++ -*-===//
//
// Models and small checks the training tests (TrainingBackwardTest,
// TrainingBlocksTest, TrainingStepTest, PipelineTest, ActivationMemoryTest)
// build on.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TESTS_UNIT_TRAININGHELPERS_H
#define PERFC_TESTS_UNIT_TRAININGHELPERS_H

#include "TestGraphs.h"
#include "ZooModels.h"

#include "frontend/OnnxImport.h"
#include "passes/Backward.h"
#include "tools/modelgen/TransformerGen.h"

#include <string>
#include <utility>
#include <vector>

namespace perfc::test {

inline double savedBytes(const BackwardInfo &B) {
  double Sum = 0;
  for (const SavedTensor &S : B.Saved)
    Sum += S.bytes();
  return Sum;
}

inline bool isSaved(const BackwardInfo &B, const ir::Value *V) {
  return llvm::any_of(B.Saved,
                      [&](const SavedTensor &S) { return S.Value == V; });
}

/// A GPT from perfc zoo's generator, imported: layers x hidden (heads) at a
/// static batch and sequence, vocabulary 128 unless given.
inline frontend::ImportedModel
generatedGpt(int64_t Layers, int64_t Hidden, int64_t Heads, int64_t Seq,
             int64_t Batch, double Dropout = 0, int64_t Vocab = 128,
             modelgen::FloatType Type = modelgen::FloatType::F32) {
  modelgen::TransformerSpec Spec =
      transformerSpec(modelgen::Family::Gpt, Layers, Hidden, Heads, Seq, Vocab);
  Spec.Batch = Batch;
  Spec.Dropout = Dropout;
  Spec.Type = Type;
  return importZoo(zooBytes(Spec), {}, "gpt.onnx");
}

/// A Llama from perfc zoo's generator (RMSNorm, SwiGLU, rotary embeddings,
/// KvHeads key/value heads), imported at batch 1.
inline frontend::ImportedModel generatedLlama(int64_t Layers, int64_t Hidden,
                                              int64_t Heads, int64_t KvHeads,
                                              int64_t Seq, int64_t Vocab) {
  modelgen::TransformerSpec Spec = transformerSpec(
      modelgen::Family::Llama, Layers, Hidden, Heads, Seq, Vocab);
  Spec.KvHeads = KvHeads;
  Spec.Batch = 1;
  return importZoo(zooBytes(Spec), {}, "llama.onnx");
}

/// Two identical MLP blocks named like PyTorch exports them:
/// x -> [fc1 MatMul -> Relu -> fc2 MatMul -> residual Add] x 2.
struct TwoBlocks {
  GraphBuilder B;
  std::vector<ir::Node *> Fc1, Fc2, Relu, Res;

  ir::Node *add(const std::string &Name, llvm::StringRef Op,
                std::initializer_list<ir::Value *> Ins,
                std::initializer_list<int64_t> Dims) {
    ir::Value *Out = B.tensor(Name + ":0", Dims);
    return expectOk(B.G.addNode(Name, Op, "", Ins, {Out}));
  }

  TwoBlocks(int64_t Rows = 64, int64_t H = 32) {
    ir::Value *X = B.input("x", {Rows, H});
    for (int L = 0; L < 2; ++L) {
      const std::string P = "/layers." + std::to_string(L) + "/";
      ir::Node *A = add(P + "fc1/MatMul", "MatMul",
                        {X, B.weight(P + "w1", {H, 4 * H})}, {Rows, 4 * H});
      ir::Node *R = add(P + "act/Relu", "Relu", {B.out(A)}, {Rows, 4 * H});
      ir::Node *C = add(P + "fc2/MatMul", "MatMul",
                        {B.out(R), B.weight(P + "w2", {4 * H, H})}, {Rows, H});
      ir::Node *S = add(P + "Add", "Add", {B.out(C), X}, {Rows, H});
      Fc1.push_back(A);
      Relu.push_back(R);
      Fc2.push_back(C);
      Res.push_back(S);
      X = B.out(S);
    }
    B.G.markOutput(X);
  }
};

/// x [N, Cin, H, H] -> 3x3 Conv (no padding) to Cout channels ->
/// BatchNormalization: the pair that inference folds and training cannot.
inline std::pair<ir::Node *, ir::Node *> convBatchNorm(GraphBuilder &B,
                                                       int64_t N, int64_t Cin,
                                                       int64_t Cout,
                                                       int64_t H) {
  ir::Value *X = B.input("x", {N, Cin, H, H});
  ir::Node *Conv = B.node("Conv", {X, B.weight("w", {Cout, Cin, 3, 3})},
                          {N, Cout, H - 2, H - 2});
  ir::Node *Bn =
      B.node("BatchNormalization",
             {B.out(Conv), B.weight("s", {Cout}), B.weight("b", {Cout}),
              B.weight("m", {Cout}), B.weight("v", {Cout})},
             {N, Cout, H - 2, H - 2});
  return {Conv, Bn};
}

/// Round numbers for elementwise passes over the parameters (optimizers,
/// gradient accumulation): every such pass is memory-bound, 0.8 of
/// 1000 GB/s plus a 5 us launch.
inline const char *const MemoryBoundGpu = R"(device:
  name: ogpu
  kind: gpu
  compute:
    vector: {fp32: 10 TFLOPS, fp16: 20 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
  launch_overhead: 5 us
  efficiency:
    default: {compute: 0.5, memory: 0.8}
)";

} // namespace perfc::test

#endif // PERFC_TESTS_UNIT_TRAININGHELPERS_H
