//===- FusionTest.cpp - Kernel planning and the latency of kernels --------===//
#include "TestKernels.h"

#include "hwdb/Loader.h"
#include "passes/Fusion.h"
#include "passes/InferenceMemory.h"
#include "passes/Predict.h"
#include "passes/WorkPass.h"

#include <doctest/doctest.h>

using namespace perfc;
using namespace perfc::test;

namespace {

/// X [1, Rows, In] projected by a weight ("w" + Name) to Heads heads of 16
/// and split into them as exporters write it (Reshape, Transpose to
/// [1, Heads, Rows, 16]); Proj is the projection. Returns the Transpose.
ir::Node *projectHeads(GraphBuilder &B, ir::Value *X, const std::string &Name,
                       int64_t Heads, ir::Node *&Proj) {
  const int64_t Rows = X->shape()[1].Value, In = X->shape()[2].Value;
  Proj = B.node("MatMul", {X, B.weight("w" + Name, {In, Heads * 16})},
                {1, Rows, Heads * 16});
  ir::Node *R =
      B.node("Reshape",
             {B.out(Proj), B.constInts(Name + "shape", {1, Rows, Heads, 16})},
             {1, Rows, Heads, 16});
  ir::Node *T = B.node("Transpose", {B.out(R)}, {1, Heads, Rows, 16});
  T->addAttr(ir::Attr("perm", std::vector<int64_t>{0, 2, 1, 3}));
  return T;
}

/// 1 FLOP/ns, 1 byte/ns, 1 us per kernel: times below are hand sums.
const char *const UnitCpu = R"(device:
  name: unit-cpu
  kind: cpu
  compute:
    simd: {fp32: 1 GFLOPS}
  memory:
    - {name: DRAM, capacity: 1 GB, bandwidth: 1 GB/s}
  launch_overhead: 1 us
  efficiency:
    default: {compute: 1, memory: 1}
)";

} // namespace

TEST_SUITE("fusion") {

  TEST_CASE("Conv + BatchNormalization + Relu run as one kernel") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 3, 8, 8});
    ir::Node *Conv =
        B.node("Conv", {X, B.weight("w", {4, 3, 3, 3})}, {1, 4, 6, 6});
    ir::Node *Bn = B.node("BatchNormalization",
                          {B.out(Conv), B.weight("s", {4}), B.weight("b", {4}),
                           B.weight("m", {4}), B.weight("v", {4})},
                          {1, 4, 6, 6});
    ir::Node *Relu = B.node("Relu", {B.out(Bn)}, {1, 4, 6, 6});
    B.G.markOutput(B.out(Relu));
    KernelPlan P = planOf(B.G);
    REQUIRE(P.Kernels.size() == 1);
    CHECK(P.Kernels[0].Head == Conv->index());
    CHECK(P.Kernels[0].Members.size() == 3);
    CHECK(P.numFused() == 2);
    // Reads x and every weight once; writes only the Relu output.
    const double Read = (3 * 8 * 8 + 4 * 3 * 3 * 3 + 4 * 4) * 4;
    CHECK(P.Kernels[0].Work.BytesRead == doctest::Approx(Read));
    CHECK(P.Kernels[0].Work.BytesWritten == doctest::Approx(4 * 6 * 6 * 4));
    // Without fusion, three kernels.
    CHECK(planOf(B.G, /*Fuse=*/false).Kernels.size() == 3);
  }

  TEST_CASE("without FoldBatchNorm, BatchNormalization heads its own kernel "
            "and the ReLU joins it") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 3, 8, 8});
    ir::Node *Conv =
        B.node("Conv", {X, B.weight("w", {4, 3, 3, 3})}, {1, 4, 6, 6});
    ir::Node *Bn = B.node("BatchNormalization",
                          {B.out(Conv), B.weight("s", {4}), B.weight("b", {4}),
                           B.weight("m", {4}), B.weight("v", {4})},
                          {1, 4, 6, 6});
    ir::Node *Relu = B.node("Relu", {B.out(Bn)}, {1, 4, 6, 6});
    B.G.markOutput(B.out(Relu));
    FusionOptions O;
    O.FoldBatchNorm = false;
    KernelPlan P = planKernels(B.G, computeWork(B.G), O);
    REQUIRE(P.Kernels.size() == 2);
    CHECK(P.Kernels[0].Head == Conv->index());
    CHECK(P.Kernels[0].Members.size() == 1);
    CHECK(P.Kernels[1].Head == Bn->index());
    CHECK(P.KernelOf[Relu->index()] == 1);
    // The conv writes its output; the BN kernel reads it.
    CHECK(P.Kernels[0].Work.BytesWritten == doctest::Approx(4 * 6 * 6 * 4));
    CHECK(P.Kernels[1].Work.BytesRead ==
          doctest::Approx((4 * 6 * 6 + 4 * 4) * 4));
  }

  TEST_CASE("an intermediate read outside the kernel is still written") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {1024});
    ir::Node *Exp = B.node("Exp", {X}, {1024});
    ir::Node *Neg = B.node("Neg", {B.out(Exp)}, {1024});
    // A MatMul (never fused as a consumer) also reads Exp's output.
    ir::Node *Mm =
        B.node("MatMul", {B.out(Exp), B.weight("w", {1024, 2})}, {2});
    B.G.markOutput(B.out(Neg));
    B.G.markOutput(B.out(Mm));
    KernelPlan P = planOf(B.G);
    REQUIRE(P.Kernels.size() == 2);
    CHECK(P.Kernels[0].Members.size() == 2);
    CHECK(P.Kernels[0].Work.BytesRead == doctest::Approx(4096));
    CHECK(P.Kernels[0].Work.BytesWritten == doctest::Approx(2 * 4096));
  }

  TEST_CASE("a reduction does not join a GEMM but joins elementwise work") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {4, 8});
    ir::Node *Mm = B.node("MatMul", {X, B.weight("w", {8, 8})}, {4, 8});
    ir::Node *Add = B.node("Add", {B.out(Mm), B.weight("b", {8})}, {4, 8});
    ir::Node *Mean =
        B.node("ReduceMean", {B.out(Add), B.constInts("axes", {1})}, {4, 1});
    ir::Node *Sub = B.node("Sub", {B.out(Add), B.out(Mean)}, {4, 8});
    B.G.markOutput(B.out(Sub));
    KernelPlan P = planOf(B.G);
    REQUIRE(P.Kernels.size() == 2);
    CHECK(P.KernelOf[Add->index()] == P.KernelOf[Mm->index()]);
    CHECK(P.KernelOf[Mean->index()] != P.KernelOf[Mm->index()]);
    CHECK(P.KernelOf[Sub->index()] == P.KernelOf[Mean->index()]);
  }

  TEST_CASE("a training-mode Dropout heads a pointwise kernel, as "
            "Megatron-LM's bias_dropout_add") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {4, 8});
    ir::Node *Mm = B.node("MatMul", {X, B.weight("w", {8, 8})}, {4, 8});
    ir::Node *Bias = B.node("Add", {B.out(Mm), B.weight("b", {8})}, {4, 8});
    ir::Node *Drop = B.node(
        "Dropout", {B.out(Bias), B.weight("ratio", {}), B.constInts("on", {1})},
        {4, 8});
    ir::Node *Res = B.node("Add", {B.out(Drop), X}, {4, 8});
    B.G.markOutput(B.out(Res));
    const GraphWork W = computeWork(B.G);
    CHECK(W.Nodes[Drop->index()].Class == OpClass::Elementwise);
    KernelPlan P = planOf(B.G);
    REQUIRE(P.Kernels.size() == 2);
    // No GEMM epilogue draws the mask; the residual add joins the dropout.
    CHECK(P.KernelOf[Bias->index()] == P.KernelOf[Mm->index()]);
    CHECK(P.KernelOf[Drop->index()] != P.KernelOf[Mm->index()]);
    CHECK(P.KernelOf[Res->index()] == P.KernelOf[Drop->index()]);
  }

  TEST_CASE("shape arithmetic on static shapes is folded, views are free") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {2, 3, 4});
    ir::Node *Shape = B.node("Shape", {X}, {3}, ir::DType::I64);
    ir::Node *Gather = B.node("Gather", {B.out(Shape), B.constInts("i", {0})},
                              {1}, ir::DType::I64);
    ir::Node *Concat = B.node("Concat", {B.out(Gather), B.constInts("m", {-1})},
                              {2}, ir::DType::I64);
    Concat->addAttr(ir::Attr("axis", int64_t(0)));
    ir::Node *Reshape = B.node("Reshape", {X, B.out(Concat)}, {2, 12});
    ir::Node *Relu = B.node("Relu", {B.out(Reshape)}, {2, 12});
    B.G.markOutput(B.out(Relu));
    KernelPlan P = planOf(B.G);
    CHECK(P.Exec[Shape->index()] == NodeExec::Folded);
    CHECK(P.Exec[Gather->index()] == NodeExec::Folded);
    CHECK(P.Exec[Concat->index()] == NodeExec::Folded);
    CHECK(P.Exec[Reshape->index()] == NodeExec::View);
    REQUIRE(P.Kernels.size() == 1);
    CHECK(P.Kernels[0].Head == Relu->index());
  }

  TEST_CASE("a node never joins a kernel older than another it reads") {
    // a = Exp(x); m = MatMul(a, w) (new kernel); c = Add(a, m): joining
    // a's kernel would make it depend on m's, which depends on it.
    GraphBuilder B;
    ir::Value *X = B.input("x", {4, 4});
    ir::Node *Exp = B.node("Exp", {X}, {4, 4});
    ir::Node *Mm =
        B.node("MatMul", {B.out(Exp), B.weight("w", {4, 4})}, {4, 4});
    ir::Node *Add = B.node("Add", {B.out(Exp), B.out(Mm)}, {4, 4});
    B.G.markOutput(B.out(Add));
    KernelPlan P = planOf(B.G);
    CHECK(P.KernelOf[Add->index()] == P.KernelOf[Mm->index()]);
    CHECK(P.KernelOf[Add->index()] != P.KernelOf[Exp->index()]);
  }

  TEST_CASE("latency is the sum of kernel times, fused nodes point at their "
            "kernel") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {1000});
    ir::Node *Exp = B.node("Exp", {X}, {1000});
    ir::Node *Neg = B.node("Neg", {B.out(Exp)}, {1000});
    B.G.markOutput(B.out(Neg));
    auto C = hw::loadHardwareFromString(UnitCpu, "unit-cpu.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    PredictOptions O;
    O.Device = &C->primaryDevice();
    Report R = predict(B.G, O);
    REQUIRE(R.LatencySeconds);
    // One kernel: reads 4000 B and writes 4000 B at 1 GB/s = 8 us; its
    // FLOPs (Exp 4 + Neg 1 per element = 5000) take 5 us; + 1 us launch.
    CHECK(*R.LatencySeconds == doctest::Approx(9e-6));
    REQUIRE(R.Nodes[Neg->index()].Time);
    CHECK(R.Nodes[Neg->index()].Time->Exec == "fused");
    CHECK(R.Nodes[Neg->index()].Time->FusedInto == R.Nodes[Exp->index()].Name);
    CHECK(R.Nodes[Exp->index()].Time->Bound == "memory");
    REQUIRE(R.Kernels);
    CHECK(R.Kernels->Kernels == 1);
    CHECK(R.Kernels->Fused == 1);
    // The kernel moves x in and Neg's output out; the nodes' own bytes
    // count Exp's output twice more (written, then read by Neg).
    CHECK(R.Kernels->KernelBytes == doctest::Approx(8000));
    CHECK(R.Total.bytes() == 16000);
    // Unfused: two kernels of 4 us memory each (+1 us) = 10 us, moving
    // every node's bytes.
    O.Fusion.Fuse = false;
    const Report Unfused = predict(B.G, O);
    CHECK(*Unfused.LatencySeconds == doctest::Approx(10e-6));
    CHECK(Unfused.Kernels->KernelBytes == doctest::Approx(16000));
    // Stored in fp16, the kernels move half.
    O.Fusion.Fuse = true;
    O.StorageType = ir::DType::F16;
    CHECK(predict(B.G, O).Kernels->KernelBytes == doctest::Approx(4000));
  }

  TEST_CASE("attention runs as one kernel whose scores never reach memory") {
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 64, 32});
    ir::Node *Q = B.node("MatMul", {X, B.weight("wq", {32, 32})}, {1, 64, 32});
    ir::Node *K = B.node("MatMul", {X, B.weight("wk", {32, 32})}, {1, 64, 32});
    ir::Node *V = B.node("MatMul", {X, B.weight("wv", {32, 32})}, {1, 64, 32});
    ir::Node *Kt = B.node("Transpose", {B.out(K)}, {1, 32, 64});
    Kt->addAttr(ir::Attr("perm", std::vector<int64_t>{0, 2, 1}));
    ir::Node *S = B.node("MatMul", {B.out(Q), B.out(Kt)}, {1, 64, 64});
    ir::Node *Scale =
        B.node("Mul", {B.out(S), B.weight("c", {1})}, {1, 64, 64});
    ir::Node *P = B.node("Softmax", {B.out(Scale)}, {1, 64, 64});
    ir::Node *O = B.node("MatMul", {B.out(P), B.out(V)}, {1, 64, 32});
    B.G.markOutput(B.out(O));
    KernelPlan Fused = planOf(B.G);
    const int Attn = Fused.KernelOf[S->index()];
    CHECK(Fused.KernelOf[P->index()] == Attn);
    CHECK(Fused.KernelOf[O->index()] == Attn);
    CHECK(Fused.KernelOf[Scale->index()] == Attn);
    // Reads Q, K^T, V and the scale; writes O: no [64, 64] score matrix.
    const Kernel &K0 = Fused.Kernels[Attn];
    CHECK(K0.Work.BytesRead == doctest::Approx(3 * 64 * 32 * 4 + 4)); // + c
    CHECK(K0.Work.BytesWritten == doctest::Approx(64 * 32 * 4));
    // An attention kernel; no mask, so not causal.
    CHECK(K0.Attention);
    CHECK_FALSE(K0.Causal);
    // The K^T Transpose runs inside (the kernel reads K as it is), and the
    // Q, K, V projections of x run as one GEMM with N = 96.
    CHECK(Fused.KernelOf[Kt->index()] == Attn);
    const int Qkv = Fused.KernelOf[Q->index()];
    CHECK(Fused.KernelOf[K->index()] == Qkv);
    CHECK(Fused.KernelOf[V->index()] == Qkv);
    CHECK(Fused.Kernels.size() == 2);
    CHECK(Fused.Kernels[Qkv].Work.Gemm.N == 96);
    CHECK(Fused.Kernels[Qkv].Work.BytesRead ==
          doctest::Approx((64 * 32 + 3 * 32 * 32) * 4));
    CHECK(Fused.Kernels[Qkv].Work.BytesWritten ==
          doctest::Approx(3 * 64 * 32 * 4));
    FusionOptions NoAttention;
    NoAttention.FuseAttention = false;
    KernelPlan Unfused = planKernels(B.G, computeWork(B.G), NoAttention);
    CHECK(Unfused.KernelOf[P->index()] != Unfused.KernelOf[S->index()]);
    CHECK(Unfused.KernelOf[Kt->index()] != Unfused.KernelOf[S->index()]);
    CHECK(Unfused.Kernels.size() == 7);
  }

  TEST_CASE("the rotary embedding of q and k runs inside the attention "
            "kernel") {
    // Two heads of 16: each projection's output is split into heads
    // (Reshape, Transpose), and q and k are rotated: x*cos +
    // rotate_half(x)*sin with rotate_half(x) = Concat(-x[..., 8:],
    // x[..., :8]), as Llama exports and perfc zoo write it.
    const std::initializer_list<int64_t> Heads = {1, 2, 64, 16},
                                         Half = {1, 2, 64, 8};
    auto Rope = [&](GraphBuilder &B, ir::Value *X, const std::string &P) {
      ir::Node *C = B.node("Mul", {X, B.weight(P + "cos", {64, 16})}, Heads);
      ir::Node *Hi =
          B.node("Slice",
                 {X, B.constInts(P + "b8", {8}), B.constInts(P + "e16", {16}),
                  B.constInts(P + "ax", {3})},
                 Half);
      ir::Node *Lo =
          B.node("Slice",
                 {X, B.constInts(P + "b0", {0}), B.constInts(P + "e8", {8}),
                  B.constInts(P + "ax2", {3})},
                 Half);
      ir::Node *Neg = B.node("Neg", {B.out(Hi)}, Half);
      ir::Node *Cat = B.node("Concat", {B.out(Neg), B.out(Lo)}, Heads);
      Cat->addAttr(ir::Attr("axis", int64_t(3)));
      ir::Node *S =
          B.node("Mul", {B.out(Cat), B.weight(P + "sin", {64, 16})}, Heads);
      return B.node("Add", {B.out(C), B.out(S)}, Heads);
    };
    auto Build = [&](GraphBuilder &B, bool KeepRotatedQ) {
      ir::Value *X = B.input("x", {1, 64, 32});
      auto Project = [&](const std::string &Name, ir::Node *&Proj) {
        return B.out(projectHeads(B, X, Name, 2, Proj));
      };
      ir::Node *Q, *K, *V;
      ir::Node *Qr = Rope(B, Project("q", Q), "q");
      ir::Node *Kr = Rope(B, Project("k", K), "k");
      ir::Value *Vh = Project("v", V);
      ir::Node *Kt = B.node("Transpose", {B.out(Kr)}, {1, 2, 16, 64});
      Kt->addAttr(ir::Attr("perm", std::vector<int64_t>{0, 1, 3, 2}));
      ir::Node *S = B.node("MatMul", {B.out(Qr), B.out(Kt)}, {1, 2, 64, 64});
      ir::Node *P = B.node("Softmax", {B.out(S)}, {1, 2, 64, 64});
      ir::Node *O = B.node("MatMul", {B.out(P), Vh}, Heads);
      B.G.markOutput(B.out(O));
      if (KeepRotatedQ) // read outside the attention: it must be written
        B.G.markOutput(B.out(Qr));
      return std::make_tuple(S, Q, K);
    };
    GraphBuilder B;
    const auto [S, Q, K] = Build(B, false);
    const KernelPlan P = planOf(B.G);
    // One QKV GEMM and one attention kernel: the two products, Softmax,
    // the three head-split Transposes, K^T and both rotary embeddings (7
    // nodes each).
    REQUIRE(P.Kernels.size() == 2);
    const int Attn = P.KernelOf[S->index()];
    CHECK(P.Kernels[Attn].Attention);
    CHECK(P.Kernels[Attn].Members.size() == 7 + 2 * 7);
    CHECK(P.Kernels[P.KernelOf[Q->index()]].Work.Gemm.N == 96);
    CHECK(P.Kernels[Attn].Work.BytesWritten == doctest::Approx(64 * 32 * 4));

    // A rotated q that is also a graph output stays outside (the attention
    // would have to write it), and with it q's embedding and head split;
    // k's still join, and the K and V projections fuse without Q's.
    GraphBuilder B2;
    const auto [S2, Q2, K2] = Build(B2, true);
    const KernelPlan P2 = planOf(B2.G);
    const int Attn2 = P2.KernelOf[S2->index()];
    CHECK(P2.Kernels[Attn2].Members.size() == 6 + 7);
    CHECK(P2.KernelOf[Q2->index()] != P2.KernelOf[K2->index()]);
    CHECK(P2.Kernels[P2.KernelOf[K2->index()]].Work.Gemm.N == 64);
  }

  TEST_CASE("a key/value cache append writes the new rows in place") {
    // One decoding step of one token after 7 cached, two heads of 16 (as
    // perfc zoo --past writes it): q, k, v projections split into heads;
    // k and v appended to past_k, past_v (graph inputs) as present_k,
    // present_v (graph outputs), which the attention reads.
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 1, 32});
    auto Heads = [&](const std::string &Name, ir::Node *&Proj) {
      return projectHeads(B, X, Name, 2, Proj);
    };
    auto Append = [&](const std::string &Name, ir::Node *New) {
      ir::Node *C =
          B.node("Concat", {B.input("past_" + Name, {1, 2, 7, 16}), B.out(New)},
                 {1, 2, 8, 16});
      C->addAttr(ir::Attr("axis", int64_t(2)));
      B.G.markOutput(B.out(C));
      return C;
    };
    ir::Node *Q, *K, *V;
    ir::Node *Qh = Heads("q", Q), *Kh = Heads("k", K), *Vh = Heads("v", V);
    ir::Node *Kc = Append("k", Kh), *Vc = Append("v", Vh);
    ir::Node *Kt = B.node("Transpose", {B.out(Kc)}, {1, 2, 16, 8});
    Kt->addAttr(ir::Attr("perm", std::vector<int64_t>{0, 1, 3, 2}));
    ir::Node *S = B.node("MatMul", {B.out(Qh), B.out(Kt)}, {1, 2, 1, 8});
    ir::Node *P = B.node("Softmax", {B.out(S)}, {1, 2, 1, 8});
    ir::Node *O = B.node("MatMul", {B.out(P), B.out(Vc)}, {1, 2, 1, 16});
    B.G.markOutput(B.out(O));

    const KernelPlan F = planOf(B.G);
    // QKV GEMM, k append (with k's head split), v append, attention.
    REQUIRE(F.Kernels.size() == 4);
    const Kernel &KA = F.Kernels[F.KernelOf[Kc->index()]];
    CHECK(KA.AppendsTo == Kc->input(0));
    CHECK(F.KernelOf[Kh->index()] == F.KernelOf[Kc->index()]);
    // Reads the new row (2 heads x 16 fp32 = 128 B), writes it in place.
    CHECK(KA.Work.BytesRead == doctest::Approx(128));
    CHECK(KA.Work.BytesWritten == doctest::Approx(128));
    CHECK(KA.Reads.size() == 1);
    CHECK(KA.Writes.empty());
    // The attention reads both caches (8 rows: 1024 B each) and q.
    const Kernel &At = F.Kernels[F.KernelOf[S->index()]];
    CHECK(At.Attention);
    CHECK(At.Work.BytesRead == doctest::Approx(2 * 1024 + 128));
    CHECK(F.KernelOf[K->index()] == F.KernelOf[Q->index()]);
    CHECK(F.KernelOf[V->index()] == F.KernelOf[Q->index()]);
    CHECK(F.Kernels[F.KernelOf[Q->index()]].Work.Gemm.N == 96);
    // One buffer per cache: at the QKV GEMM, x (128 B), q, k, v (384 B)
    // and the two caches (896 B each, from the start) are alive.
    const InferenceMemory M = inferenceMemory(B.G, F);
    CHECK(M.SharedCaches == 2);
    CHECK(M.ActivationsBytes == doctest::Approx(128 + 384 + 2 * 896));

    // Eager (no fusion): torch.cat copies the whole cache.
    const KernelPlan E = planOf(B.G, false);
    const Kernel &KE = E.Kernels[E.KernelOf[Kc->index()]];
    CHECK_FALSE(KE.AppendsTo);
    CHECK(KE.Work.BytesRead == doctest::Approx(896 + 128));
    CHECK(KE.Work.BytesWritten == doctest::Approx(1024));
  }

  TEST_CASE("grouped-query attention reads each shared head where it is") {
    // Four query heads over two key/value heads: k and v expanded to four
    // (Unsqueeze, Expand, Reshape) inside the attention kernel; the three
    // projections are one GEMM.
    GraphBuilder B;
    ir::Value *X = B.input("x", {1, 8, 64});
    auto Expand = [&](const std::string &Name, ir::Node *Kv) {
      ir::Node *U =
          B.node("Unsqueeze", {B.out(Kv), B.constInts(Name + "ax", {2})},
                 {1, 2, 1, 8, 16});
      ir::Node *E = B.node(
          "Expand", {B.out(U), B.constInts(Name + "to", {1, 2, 2, 8, 16})},
          {1, 2, 2, 8, 16});
      return B.node("Reshape",
                    {B.out(E), B.constInts(Name + "merge", {1, 4, 8, 16})},
                    {1, 4, 8, 16});
    };
    ir::Node *Q, *K, *V;
    ir::Node *Qh = projectHeads(B, X, "q", 4, Q);
    ir::Node *Kx = Expand("k", projectHeads(B, X, "k", 2, K));
    ir::Node *Vx = Expand("v", projectHeads(B, X, "v", 2, V));
    ir::Node *Kt = B.node("Transpose", {B.out(Kx)}, {1, 4, 16, 8});
    Kt->addAttr(ir::Attr("perm", std::vector<int64_t>{0, 1, 3, 2}));
    ir::Node *S = B.node("MatMul", {B.out(Qh), B.out(Kt)}, {1, 4, 8, 8});
    ir::Node *P = B.node("Softmax", {B.out(S)}, {1, 4, 8, 8});
    ir::Node *O = B.node("MatMul", {B.out(P), B.out(Vx)}, {1, 4, 8, 16});
    B.G.markOutput(B.out(O));
    const KernelPlan F = planOf(B.G);
    REQUIRE(F.Kernels.size() == 2);
    const Kernel &At = F.Kernels[F.KernelOf[S->index()]];
    CHECK(At.Attention);
    // Reads q (4 heads), k and v (2 heads each) as the GEMM wrote them, and
    // the Expands' target shapes (5 int64 each).
    CHECK(At.Work.BytesRead ==
          doctest::Approx((4 + 2 + 2) * 8 * 16 * 4 + 2 * 5 * 8));
    CHECK(F.Kernels[F.KernelOf[Q->index()]].Work.Gemm.N == 64 + 32 + 32);
  }

  TEST_CASE("Einsum attention fuses, and only triangular constant masks are "
            "causal") {
    // softmax(einsum(q, k) + mask) . v, the mask made by MakeMask from
    // load-time constants; returns the attention kernel.
    auto Build = [](GraphBuilder &B, auto MakeMask) {
      // Activations (products of weights alone are not attention).
      auto Act = [&B](const char *Name) {
        return B.out(
            B.node("Relu", {B.input(Name, {1, 2, 64, 16})}, {1, 2, 64, 16}));
      };
      ir::Value *Q = Act("q"), *K = Act("k"), *V = Act("v");
      ir::Node *S = B.node("Einsum", {Q, K}, {1, 2, 64, 64});
      S->addAttr(ir::Attr("equation", std::string("bhqd,bhkd->bhqk")));
      ir::Node *Masked = B.node("Add", {B.out(S), MakeMask(B)}, {1, 2, 64, 64});
      ir::Node *P = B.node("Softmax", {B.out(Masked)}, {1, 2, 64, 64});
      ir::Node *O = B.node("Einsum", {B.out(P), V}, {1, 2, 64, 16});
      O->addAttr(ir::Attr("equation", std::string("bhqk,bhkd->bhqd")));
      B.G.markOutput(B.out(O));
      return std::make_pair(S, O);
    };
    auto AttentionOf = [](const ir::Graph &G, const ir::Node *S,
                          const ir::Node *O) {
      KernelPlan P = planOf(G);
      REQUIRE(P.KernelOf[S->index()] >= 0);
      CHECK(P.KernelOf[O->index()] == P.KernelOf[S->index()]);
      return P.Kernels[P.KernelOf[S->index()]];
    };
    std::vector<int64_t> Pos(64);
    for (int64_t I = 0; I < 64; ++I)
      Pos[I] = I;
    // GPT and Llama exports: an outer comparison of key and query positions.
    {
      GraphBuilder B;
      auto [S, O] = Build(B, [&](GraphBuilder &B) {
        ir::Value *P = B.constInts("pos", Pos);
        ir::Node *Row = B.node("Unsqueeze", {P, B.constInts("a1", {1})},
                               {64, 1}, ir::DType::I64);
        ir::Node *Col = B.node("Unsqueeze", {P, B.constInts("a0", {0})},
                               {1, 64}, ir::DType::I64);
        ir::Node *Future = B.node("Greater", {B.out(Col), B.out(Row)}, {64, 64},
                                  ir::DType::Bool);
        ir::Node *M = B.node(
            "Where",
            {B.out(Future), B.weight("lowest", {}), B.weight("zero", {})},
            {64, 64});
        return B.out(M);
      });
      const Kernel K = AttentionOf(B.G, S, O);
      CHECK(K.Attention);
      CHECK(K.Causal);
      // The kernel is priced as the batched GEMM of the scores.
      CHECK(K.Work.Gemm.Batch == 2);
      CHECK(K.Work.Gemm.K == 16);
    }
    // A boolean buffer (HF GPT-2's tril), applied through Where.
    {
      GraphBuilder B;
      auto [S, O] = Build(B, [](GraphBuilder &B) {
        ir::Node *M = B.node("Where",
                             {B.weight("tril", {64, 64}, ir::DType::Bool),
                              B.weight("zero", {}), B.weight("lowest", {})},
                             {64, 64});
        return B.out(M);
      });
      CHECK(AttentionOf(B.G, S, O).Causal);
    }
    // Swin's and MaxViT's relative position bias: a Gather from a trainable
    // table is a square constant too, but nothing is skipped.
    {
      GraphBuilder B;
      auto [S, O] = Build(B, [&](GraphBuilder &B) {
        std::vector<int64_t> Index(64 * 64);
        for (size_t I = 0; I < Index.size(); ++I)
          Index[I] = static_cast<int64_t>(I % 127);
        ir::Node *G =
            B.node("Gather",
                   {B.weight("table", {127, 2}), B.constInts("index", Index)},
                   {4096, 2});
        ir::Node *T = B.node("Transpose", {B.out(G)}, {2, 4096});
        T->addAttr(ir::Attr("perm", std::vector<int64_t>{1, 0}));
        ir::Node *R =
            B.node("Reshape", {B.out(T), B.constInts("shape", {1, 2, 64, 64})},
                   {1, 2, 64, 64});
        return B.out(R);
      });
      const Kernel K = AttentionOf(B.G, S, O);
      CHECK(K.Attention);
      CHECK_FALSE(K.Causal);
    }
  }
}
