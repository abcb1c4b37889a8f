//===- Builder.cpp - perfc::api::ModelBuilder: graphs without ONNX --------===//
//
// Builds the IR directly, with the ONNX ops and attributes the importer
// would produce (opset 17), inferring each output's shape as ONNX does.
//
//===----------------------------------------------------------------------===//
#include "api/ApiImpl.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <numeric>

namespace perfc::api {

using ir::Shape;

struct ModelBuilder::Impl {
  std::string Name;
  ir::DType Type = ir::DType::F32;
  std::unique_ptr<ir::Graph> G;
  std::vector<ir::Value *> Tensors;
  std::vector<ir::Value *> Outputs;
  unsigned Counter = 0;

  ir::Value *get(Tensor T) const {
    if (T.Id >= Tensors.size())
      throwError("ModelBuilder '" + Name + "': unknown tensor");
    return Tensors[T.Id];
  }
  /// Sizes, names and operand lists live on the stack: a NAS loop builds
  /// thousands of models a second, and heap traffic was a third of it.
  using Dims = llvm::SmallVector<int64_t, 6>;
  Dims dims(Tensor T) const {
    auto S = get(T)->shape().sizes();
    return Dims(S.begin(), S.end());
  }
  Tensor add(ir::Value *V) {
    Tensors.push_back(V);
    return Tensor{static_cast<uint32_t>(Tensors.size() - 1)};
  }
  ir::Value *value(llvm::StringRef ValueName, llvm::ArrayRef<int64_t> Sizes,
                   ir::ValueKind K) {
    auto V = G->addValue(ValueName, Type, Shape(Sizes), K);
    if (!V)
      throwError(V.takeError());
    return *V;
  }
  /// "Base.Suffix" (llvm::Twine's general printing costs more here than
  /// the rest of adding the value).
  static llvm::SmallString<64> join(llvm::StringRef Base,
                                    llvm::StringRef Suffix) {
    llvm::SmallString<64> S(Base);
    S.push_back('.');
    S.append(Suffix);
    return S;
  }
  ir::Value *weight(llvm::StringRef Base, llvm::StringRef Suffix,
                    llvm::ArrayRef<int64_t> Sizes) {
    return value(join(Base, Suffix), Sizes, ir::ValueKind::Initializer);
  }
  ir::Value *scalar(llvm::StringRef ValueName, double X) {
    ir::Value *V = value(ValueName, {}, ir::ValueKind::Initializer);
    ir::ConstData D;
    D.Floats.push_back(X);
    V->setData(std::move(D));
    return V;
  }
  /// "Op_N", N counting the builder's nodes.
  llvm::SmallString<32> fresh(llvm::StringRef Op) {
    llvm::SmallString<32> S(Op);
    S.push_back('_');
    S.append(llvm::utostr(Counter++));
    return S;
  }
  /// Adds node Op (named Base) with one output of shape Out.
  Tensor node(llvm::StringRef Base, llvm::StringRef Op,
              llvm::ArrayRef<ir::Value *> Ins, llvm::ArrayRef<int64_t> Out,
              std::vector<ir::Attr> Attrs = {}) {
    for (int64_t D : Out)
      if (D <= 0)
        throwError("ModelBuilder '" + Name + "': " + Op.str() + " '" +
                   Base.str() + "' would have an empty output " +
                   Shape(Out).str() + "; check its sizes");
    ir::Value *O = value(join(Base, "out"), Out, ir::ValueKind::Activation);
    auto N = G->addNode(Base, Op, "", Ins, {O});
    if (!N)
      throwError(N.takeError());
    for (ir::Attr &A : Attrs)
      (*N)->addAttr(std::move(A));
    return add(O);
  }
  [[noreturn]] void fail(const std::string &Op, const std::string &What) const {
    throwError("ModelBuilder '" + Name + "': " + Op + ": " + What);
  }
  Dims nchw(const std::string &Op, Tensor X) const {
    Dims D = dims(X);
    if (D.size() != 4)
      fail(Op, "expects an [N, C, H, W] input, not " + Shape(D).str());
    return D;
  }
  Dims broadcast(const std::string &Op, Tensor A, Tensor B) const {
    Dims X = dims(A), Y = dims(B);
    size_t R = std::max(X.size(), Y.size());
    Dims Out(R);
    for (size_t I = 0; I < R; ++I) {
      int64_t U = I + X.size() >= R ? X[I + X.size() - R] : 1;
      int64_t V = I + Y.size() >= R ? Y[I + Y.size() - R] : 1;
      if (U != V && U != 1 && V != 1)
        fail(Op, "shapes " + Shape(X).str() + " and " + Shape(Y).str() +
                     " do not broadcast");
      Out[I] = U == 1 ? V : U;
    }
    return Out;
  }
  Tensor unary(llvm::StringRef Op, Tensor X) {
    ir::Value *V = get(X);
    return node(fresh(Op), Op, {V}, dims(X));
  }
  Tensor pool(const std::string &Op, Tensor X, int64_t K, int64_t S,
              int64_t P) {
    Dims D = nchw(Op, X);
    if (S == 0)
      S = K;
    if (K <= 0 || S <= 0 || P < 0)
      fail(Op, "kernel and stride must be positive, padding not negative");
    const int64_t Out[] = {D[0], D[1], (D[2] + 2 * P - K) / S + 1,
                           (D[3] + 2 * P - K) / S + 1};
    return node(fresh(Op), Op, {get(X)}, Out,
                {ir::Attr("kernel_shape", std::vector<int64_t>{K, K}),
                 ir::Attr("strides", std::vector<int64_t>{S, S}),
                 ir::Attr("pads", std::vector<int64_t>{P, P, P, P})});
  }
};

ModelBuilder::ModelBuilder(std::string Name, std::string DType)
    : P(std::make_unique<Impl>()) {
  P->Name = std::move(Name);
  if (DType == "float32" || DType == "float")
    DType = "fp32";
  else if (DType == "float16" || DType == "half")
    DType = "fp16";
  else if (DType == "bfloat16")
    DType = "bf16";
  auto T = ir::parseDType(DType);
  if (!T)
    throwError("ModelBuilder '" + P->Name + "': unknown dtype '" + DType +
               "': use fp32, fp16, bf16, ...");
  P->Type = *T;
  P->G = std::make_unique<ir::Graph>(P->Name);
  // Room for a small CNN's values and nodes: the name table grows without
  // rehashing until then.
  P->G->reserve(256, 128);
}

ModelBuilder::~ModelBuilder() = default;
ModelBuilder::ModelBuilder(ModelBuilder &&) noexcept = default;
ModelBuilder &ModelBuilder::operator=(ModelBuilder &&) noexcept = default;

static ModelBuilder::Impl &live(const std::unique_ptr<ModelBuilder::Impl> &P) {
  if (!P || !P->G)
    throwError("ModelBuilder: used after build()");
  return *P;
}

ModelBuilder::Tensor ModelBuilder::input(const std::string &Name,
                                         const std::vector<int64_t> &Shape) {
  Impl &I = live(P);
  for (int64_t D : Shape)
    if (D <= 0)
      I.fail("input '" + Name + "'", "dimensions must be positive");
  return I.add(I.value(Name, Shape, ir::ValueKind::Input));
}

ModelBuilder::Tensor ModelBuilder::conv(Tensor X, int64_t M, int64_t K,
                                        int64_t S, int64_t Pad, int64_t Groups,
                                        bool Bias, int64_t Dil) {
  Impl &I = live(P);
  const Impl::Dims D = I.nchw("conv", X);
  if (M <= 0 || K <= 0 || S <= 0 || Groups <= 0 || Dil <= 0)
    I.fail("conv", "channels, kernel, stride, groups and dilation must be "
                   "positive");
  if (D[1] % Groups || M % Groups)
    I.fail("conv", "groups (" + std::to_string(Groups) +
                       ") must divide the input channels (" +
                       std::to_string(D[1]) + ") and output channels (" +
                       std::to_string(M) + ")");
  if (Pad < 0)
    Pad = (K - 1) / 2 * Dil;
  int64_t Span = Dil * (K - 1) + 1;
  const int64_t Out[] = {D[0], M, (D[2] + 2 * Pad - Span) / S + 1,
                         (D[3] + 2 * Pad - Span) / S + 1};
  const auto Base = I.fresh("Conv");
  llvm::SmallVector<ir::Value *, 3> Ins = {
      I.get(X), I.weight(Base, "weight", {M, D[1] / Groups, K, K})};
  if (Bias)
    Ins.push_back(I.weight(Base, "bias", {M}));
  return I.node(Base, "Conv", Ins, Out,
                {ir::Attr("kernel_shape", std::vector<int64_t>{K, K}),
                 ir::Attr("strides", std::vector<int64_t>{S, S}),
                 ir::Attr("pads", std::vector<int64_t>{Pad, Pad, Pad, Pad}),
                 ir::Attr("dilations", std::vector<int64_t>{Dil, Dil}),
                 ir::Attr("group", Groups)});
}

ModelBuilder::Tensor ModelBuilder::depthwiseConv(Tensor X, int64_t K, int64_t S,
                                                 int64_t Pad) {
  int64_t C = live(P).nchw("depthwiseConv", X)[1];
  return conv(X, C, K, S, Pad, C, /*Bias=*/false);
}

ModelBuilder::Tensor ModelBuilder::gemm(Tensor X, int64_t M, bool Bias) {
  Impl &I = live(P);
  const Impl::Dims D = I.dims(X);
  if (D.size() != 2)
    I.fail("gemm", "expects an [N, K] input, not " + Shape(D).str() +
                       " (flatten it first)");
  if (M <= 0)
    I.fail("gemm", "output features must be positive");
  const auto Base = I.fresh("Gemm");
  llvm::SmallVector<ir::Value *, 3> Ins = {I.get(X),
                                           I.weight(Base, "weight", {D[1], M})};
  if (Bias)
    Ins.push_back(I.weight(Base, "bias", {M}));
  return I.node(Base, "Gemm", Ins, {D[0], M});
}

ModelBuilder::Tensor ModelBuilder::matmul(Tensor X, int64_t M) {
  Impl &I = live(P);
  const Impl::Dims D = I.dims(X);
  if (D.empty() || M <= 0)
    I.fail("matmul", "expects a tensor of rank >= 1 and positive features");
  const auto Base = I.fresh("MatMul");
  Impl::Dims Out = D;
  Out.back() = M;
  return I.node(Base, "MatMul",
                {I.get(X), I.weight(Base, "weight", {D.back(), M})}, Out);
}

ModelBuilder::Tensor ModelBuilder::matmul(Tensor A, Tensor B) {
  Impl &I = live(P);
  const Impl::Dims X = I.dims(A), Y = I.dims(B);
  if (X.size() < 2 || Y.size() < 2 || X.back() != Y[Y.size() - 2])
    I.fail("matmul", "shapes " + Shape(X).str() + " and " + Shape(Y).str() +
                         " do not multiply");
  Impl::Dims BX(X.begin(), X.end() - 2), BY(Y.begin(), Y.end() - 2);
  // Broadcast the batch dimensions.
  size_t R = std::max(BX.size(), BY.size());
  Impl::Dims Out(R);
  for (size_t J = 0; J < R; ++J) {
    int64_t U = J + BX.size() >= R ? BX[J + BX.size() - R] : 1;
    int64_t V = J + BY.size() >= R ? BY[J + BY.size() - R] : 1;
    if (U != V && U != 1 && V != 1)
      I.fail("matmul", "batch dimensions of " + Shape(X).str() + " and " +
                           Shape(Y).str() + " do not broadcast");
    Out[J] = U == 1 ? V : U;
  }
  Out.push_back(X[X.size() - 2]);
  Out.push_back(Y.back());
  return I.node(I.fresh("MatMul"), "MatMul", {I.get(A), I.get(B)}, Out);
}

ModelBuilder::Tensor ModelBuilder::batchNorm(Tensor X) {
  Impl &I = live(P);
  const Impl::Dims D = I.dims(X);
  if (D.size() < 2)
    I.fail("batchNorm", "expects an [N, C, ...] input");
  const auto Base = I.fresh("BatchNormalization");
  return I.node(Base, "BatchNormalization",
                {I.get(X), I.weight(Base, "scale", {D[1]}),
                 I.weight(Base, "bias", {D[1]}), I.weight(Base, "mean", {D[1]}),
                 I.weight(Base, "var", {D[1]})},
                D, {ir::Attr("epsilon", 1e-5)});
}

ModelBuilder::Tensor ModelBuilder::layerNorm(Tensor X) {
  Impl &I = live(P);
  const Impl::Dims D = I.dims(X);
  if (D.empty())
    I.fail("layerNorm", "expects a tensor of rank >= 1");
  const auto Base = I.fresh("LayerNormalization");
  return I.node(Base, "LayerNormalization",
                {I.get(X), I.weight(Base, "scale", {D.back()}),
                 I.weight(Base, "bias", {D.back()})},
                D, {ir::Attr("axis", int64_t(-1)), ir::Attr("epsilon", 1e-5)});
}

ModelBuilder::Tensor ModelBuilder::add(Tensor A, Tensor B) {
  Impl &I = live(P);
  return I.node(I.fresh("Add"), "Add", {I.get(A), I.get(B)},
                I.broadcast("add", A, B));
}

ModelBuilder::Tensor ModelBuilder::mul(Tensor A, Tensor B) {
  Impl &I = live(P);
  return I.node(I.fresh("Mul"), "Mul", {I.get(A), I.get(B)},
                I.broadcast("mul", A, B));
}

ModelBuilder::Tensor ModelBuilder::relu(Tensor X) {
  return live(P).unary("Relu", X);
}
ModelBuilder::Tensor ModelBuilder::sigmoid(Tensor X) {
  return live(P).unary("Sigmoid", X);
}
ModelBuilder::Tensor ModelBuilder::tanh(Tensor X) {
  return live(P).unary("Tanh", X);
}
ModelBuilder::Tensor ModelBuilder::hardSwish(Tensor X) {
  return live(P).unary("HardSwish", X);
}

ModelBuilder::Tensor ModelBuilder::relu6(Tensor X) {
  Impl &I = live(P);
  const auto Base = I.fresh("Clip");
  return I.node(Base, "Clip",
                {I.get(X), I.scalar(Impl::join(Base, "min"), 0),
                 I.scalar(Impl::join(Base, "max"), 6)},
                I.dims(X));
}

ModelBuilder::Tensor ModelBuilder::maxPool(Tensor X, int64_t K, int64_t S,
                                           int64_t Pad) {
  return live(P).pool("MaxPool", X, K, S, Pad);
}
ModelBuilder::Tensor ModelBuilder::avgPool(Tensor X, int64_t K, int64_t S,
                                           int64_t Pad) {
  return live(P).pool("AveragePool", X, K, S, Pad);
}

ModelBuilder::Tensor ModelBuilder::globalAvgPool(Tensor X) {
  Impl &I = live(P);
  const Impl::Dims D = I.nchw("globalAvgPool", X);
  return I.node(I.fresh("GlobalAveragePool"), "GlobalAveragePool", {I.get(X)},
                {D[0], D[1], 1, 1});
}

ModelBuilder::Tensor ModelBuilder::flatten(Tensor X) {
  Impl &I = live(P);
  const Impl::Dims D = I.dims(X);
  if (D.empty())
    I.fail("flatten", "expects a tensor of rank >= 1");
  int64_t Rest = std::accumulate(D.begin() + 1, D.end(), int64_t(1),
                                 std::multiplies<int64_t>());
  return I.node(I.fresh("Flatten"), "Flatten", {I.get(X)}, {D[0], Rest},
                {ir::Attr("axis", int64_t(1))});
}

ModelBuilder::Tensor ModelBuilder::softmax(Tensor X, int64_t Axis) {
  Impl &I = live(P);
  return I.node(I.fresh("Softmax"), "Softmax", {I.get(X)}, I.dims(X),
                {ir::Attr("axis", Axis)});
}

ModelBuilder::Tensor ModelBuilder::concat(const std::vector<Tensor> &Xs,
                                          int64_t Axis) {
  Impl &I = live(P);
  if (Xs.empty())
    I.fail("concat", "needs at least one tensor");
  Impl::Dims Out = I.dims(Xs[0]);
  int64_t R = Out.size();
  int64_t A = Axis < 0 ? Axis + R : Axis;
  if (A < 0 || A >= R)
    I.fail("concat", "axis " + std::to_string(Axis) + " out of range");
  llvm::SmallVector<ir::Value *, 8> Ins = {I.get(Xs[0])};
  for (size_t J = 1; J < Xs.size(); ++J) {
    const Impl::Dims D = I.dims(Xs[J]);
    if (int64_t(D.size()) != R)
      I.fail("concat", "inputs of different ranks");
    for (int64_t K = 0; K < R; ++K)
      if (K != A && D[K] != Out[K])
        I.fail("concat", "shapes " + Shape(Out).str() + " and " +
                             Shape(D).str() + " differ off the axis");
    Out[A] += D[A];
    Ins.push_back(I.get(Xs[J]));
  }
  return I.node(I.fresh("Concat"), "Concat", Ins, Out,
                {ir::Attr("axis", Axis)});
}

void ModelBuilder::output(Tensor X) {
  Impl &I = live(P);
  I.Outputs.push_back(I.get(X));
}

std::vector<int64_t> ModelBuilder::shape(Tensor X) const {
  const Impl::Dims D = live(P).dims(X);
  return {D.begin(), D.end()};
}

Model ModelBuilder::build() {
  Impl &I = live(P);
  if (I.G->numNodes() == 0)
    throwError("ModelBuilder '" + I.Name + "': the model has no ops");
  if (I.Outputs.empty())
    I.Outputs.push_back(I.Tensors.back());
  for (ir::Value *V : I.Outputs)
    I.G->markOutput(V);
  I.G->setOpsetVersion(17);
  if (llvm::Error E = I.G->sortTopologically())
    throwError(std::move(E));
  if (llvm::Error E = I.G->verify())
    throwError(std::move(E));
  auto M = std::make_shared<Model::Impl>();
  M->Graph = std::move(*I.G);
  M->Info.Name = I.Name;
  M->Info.Path = I.Name;
  M->Info.GraphName = I.Name;
  M->Info.Producer = std::string("perfc ModelBuilder ") + version();
  M->Info.IrVersion = 8;
  M->Info.Opset = 17;
  finishModel(*M);
  I.G.reset();
  return Model(std::move(M));
}

} // namespace perfc::api
