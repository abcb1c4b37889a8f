//===- ContribSchemas.cpp - Shapes of ONNX Runtime's contrib ops ----------===//
//
// Each inference function follows the op's definition in ONNX Runtime
// (onnxruntime/core/graph/contrib_ops/bert_defs.cc for the attention,
// normalisation and GELU ops, contrib_defs.cc for FusedMatMul; inputs,
// outputs and attributes as docs/ContribOperators.md lists them). Where
// ONNX Runtime infers less than the definition fixes (the `present` state
// of Attention without `past`, the statistics outputs of
// SkipLayerNormalization), the shape the definition documents is written,
// so that every output the node names has one.
//
//===----------------------------------------------------------------------===//
#include "frontend/ContribSchemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstdint>
#include <string>
#include <vector>

namespace perfc::frontend {

namespace {

using onnx::InferenceContext;
using Dim = onnx::TensorShapeProto::Dimension;
using ShapeProto = onnx::TensorShapeProto;
using TP = onnx::TensorProto;

/// Input I's shape, or null when the input is absent, untyped or unranked.
const ShapeProto *shapeOf(InferenceContext &Ctx, size_t I) {
  if (I >= Ctx.getNumInputs())
    return nullptr;
  const onnx::TypeProto *T = Ctx.getInputType(I);
  if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape())
    return nullptr;
  return &T->tensor_type().shape();
}

bool hasInput(InferenceContext &Ctx, size_t I) {
  return I < Ctx.getNumInputs() && Ctx.getInputType(I) != nullptr;
}

/// Fails unless required input I (named What) is there.
void requireInput(InferenceContext &Ctx, size_t I, const char *What) {
  if (!hasInput(Ctx, I))
    fail_shape_inference("input ", I, " (", What,
                         ") is required but missing or untyped");
}

/// The shape of required input I, checked to have Rank dims (any rank when
/// Rank < 0); null when its shape is unknown.
const ShapeProto *rankedInput(InferenceContext &Ctx, size_t I, const char *What,
                              int Rank) {
  requireInput(Ctx, I, What);
  const ShapeProto *S = shapeOf(Ctx, I);
  if (S && Rank >= 0 && S->dim_size() != Rank)
    fail_shape_inference("input ", I, " (", What, ") shall have ", Rank,
                         " dimensions, not ", S->dim_size());
  return S;
}

bool hasOutput(InferenceContext &Ctx, size_t I) {
  return I < Ctx.getNumOutputs();
}

void setOutput(InferenceContext &Ctx, size_t I, int32_t Elem,
               const std::vector<Dim> &Dims) {
  if (!hasOutput(Ctx, I))
    return;
  onnx::updateOutputElemType(Ctx, I, Elem);
  ShapeProto S;
  for (const Dim &D : Dims)
    *S.add_dim() = D;
  onnx::updateOutputShape(Ctx, I, S);
}

int32_t elemOf(InferenceContext &Ctx, size_t I) {
  const onnx::TypeProto *T =
      I < Ctx.getNumInputs() ? Ctx.getInputType(I) : nullptr;
  return T && T->has_tensor_type() ? T->tensor_type().elem_type()
                                   : int32_t(TP::UNDEFINED);
}

Dim known(int64_t V) {
  Dim D;
  D.set_dim_value(V);
  return D;
}

int64_t valueOr(const Dim &D, int64_t Default) {
  return D.has_dim_value() ? D.dim_value() : Default;
}

/// A * B, unknown when either is or the product overflows.
Dim mulDims(const Dim &A, const Dim &B) {
  int64_t P = 0;
  if (!A.has_dim_value() || !B.has_dim_value() ||
      __builtin_mul_overflow(A.dim_value(), B.dim_value(), &P))
    return Dim();
  return known(P);
}

/// A + B, unknown when either is or the sum overflows.
Dim addDims(const Dim &A, const Dim &B) {
  int64_t S = 0;
  if (!A.has_dim_value() || !B.has_dim_value() ||
      __builtin_add_overflow(A.dim_value(), B.dim_value(), &S))
    return Dim();
  return known(S);
}

/// A / B for a positive B, unknown when A is.
Dim divDim(const Dim &A, int64_t B) {
  return A.has_dim_value() ? known(A.dim_value() / B) : Dim();
}

std::vector<Dim> dimsOf(const ShapeProto &S) {
  return std::vector<Dim>(S.dim().begin(), S.dim().end());
}

int64_t positiveAttr(InferenceContext &Ctx, const char *Name) {
  const onnx::AttributeProto *A = Ctx.getAttribute(Name);
  if (!A || !A->has_i() || A->i() <= 0)
    fail_shape_inference("attribute ", Name,
                         " is required and must be positive");
  return A->i();
}

//===----------------------------------------------------------------------===//
// Attention and MultiHeadAttention
//===----------------------------------------------------------------------===//

/// Attention: input [B, S, H_in], weights [H_in, H + H + H_v], optional
/// bias, mask_index, past [2, B, heads, P, d], ... -> output [B, S, H_v],
/// present [2, B, heads, P + S, d].
void inferAttention(InferenceContext &Ctx) {
  const int64_t Heads = positiveAttr(Ctx, "num_heads");
  const ShapeProto *In = rankedInput(Ctx, 0, "input", 3);
  const ShapeProto *W = rankedInput(Ctx, 1, "weights", 2);
  const int32_t Elem = elemOf(Ctx, 0);
  if (!In || !W)
    return;
  if (In->dim(2).has_dim_value() && W->dim(0).has_dim_value() &&
      In->dim(2).dim_value() != W->dim(0).dim_value())
    fail_shape_inference("the input's hidden size ", In->dim(2).dim_value(),
                         " differs from the weights' first dimension ",
                         W->dim(0).dim_value());
  int64_t Q = -1, V = -1;
  std::vector<int64_t> Sizes;
  onnx::getRepeatedAttribute(Ctx, "qkv_hidden_sizes", Sizes);
  if (!Sizes.empty()) {
    if (Sizes.size() != 3 || Sizes[0] <= 0 || Sizes[1] != Sizes[0] ||
        Sizes[2] <= 0)
      fail_shape_inference("qkv_hidden_sizes shall be 3 positive sizes, the "
                           "first two equal");
    if (W->dim(1).has_dim_value() &&
        W->dim(1).dim_value() != Sizes[0] + Sizes[1] + Sizes[2])
      fail_shape_inference("qkv_hidden_sizes do not add up to the weights' "
                           "second dimension ",
                           W->dim(1).dim_value());
    Q = Sizes[0];
    V = Sizes[2];
  } else if (W->dim(1).has_dim_value()) {
    if (W->dim(1).dim_value() % 3 != 0)
      fail_shape_inference("the weights' second dimension ",
                           W->dim(1).dim_value(),
                           " is not 3 * hidden size; give qkv_hidden_sizes");
    Q = V = W->dim(1).dim_value() / 3;
  }
  if ((Q > 0 && Q % Heads != 0) || (V > 0 && V % Heads != 0))
    fail_shape_inference("the hidden sizes are not multiples of num_heads ",
                         Heads);
  setOutput(Ctx, 0, Elem, {In->dim(0), In->dim(1), V > 0 ? known(V) : Dim()});
  // present: [2, B, heads, P + S, head_size]; ONNX Runtime requires equal
  // hidden sizes for Q, K and V when there is state.
  if (!hasOutput(Ctx, 1))
    return;
  Dim Total = In->dim(1);
  if (hasInput(Ctx, 4)) {
    const ShapeProto *Past = rankedInput(Ctx, 4, "past", 5);
    Total = Past ? addDims(Past->dim(3), In->dim(1)) : Dim();
  }
  setOutput(Ctx, 1, Elem,
            {known(2), In->dim(0), known(Heads), Total,
             V > 0 ? known(V / Heads) : Dim()});
}

/// MultiHeadAttention: query [B, S, D] with key [B, L, D] and value
/// [B, L, D_v] (or both [B, heads, L, d]), key packed as [B, L, heads, 2, d],
/// or query packed as [B, S, heads, 3, d] -> output [B, S, D_v]; present_key
/// and present_value [B, heads, P + L, d].
void inferMultiHeadAttention(InferenceContext &Ctx) {
  const int64_t Heads = positiveAttr(Ctx, "num_heads");
  const ShapeProto *Q = rankedInput(Ctx, 0, "query", -1);
  const int32_t Elem = elemOf(Ctx, 0);
  if (!Q)
    return;
  if (Q->dim_size() != 3 && Q->dim_size() != 5)
    fail_shape_inference("input 0 (query) shall have 3 or 5 dimensions, not ",
                         Q->dim_size());
  const ShapeProto *K = shapeOf(Ctx, 1), *V = shapeOf(Ctx, 2);
  Dim OutHidden, KvLen, HeadSize;
  if (Q->dim_size() == 5) { // Packed QKV.
    OutHidden = mulDims(Q->dim(2), Q->dim(4));
    KvLen = Q->dim(1);
    HeadSize = Q->dim(4);
  } else if (K && K->dim_size() == 5) { // Packed KV.
    if (hasInput(Ctx, 2))
      fail_shape_inference("a packed key [B, L, heads, 2, d] takes no value");
    OutHidden = mulDims(K->dim(2), K->dim(4));
    KvLen = K->dim(1);
    HeadSize = K->dim(4);
  } else {
    requireInput(Ctx, 1, "key");
    requireInput(Ctx, 2, "value");
    if (!K || !V)
      return;
    if ((K->dim_size() != 3 && K->dim_size() != 4) ||
        V->dim_size() != K->dim_size())
      fail_shape_inference("key and value shall both have 3 or 4 "
                           "dimensions, not ",
                           K->dim_size(), " and ", V->dim_size());
    if (V->dim_size() == 3) {
      OutHidden = V->dim(2);
      KvLen = V->dim(1);
      HeadSize = divDim(V->dim(2), Heads);
    } else {
      OutHidden = mulDims(V->dim(1), V->dim(3));
      KvLen = V->dim(2);
      HeadSize = V->dim(3);
    }
  }
  setOutput(Ctx, 0, Elem, {Q->dim(0), Q->dim(1), OutHidden});
  if (!hasOutput(Ctx, 1))
    return;
  Dim Total = KvLen;
  if (hasInput(Ctx, 6)) {
    const ShapeProto *Past = rankedInput(Ctx, 6, "past_key", 4);
    Total = Past ? addDims(Past->dim(2), KvLen) : Dim();
  }
  const std::vector<Dim> Present = {Q->dim(0), known(Heads), Total, HeadSize};
  setOutput(Ctx, 1, Elem, Present);
  setOutput(Ctx, 2, Elem, Present);
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

/// SkipLayerNormalization and SkipSimplifiedLayerNormalization: input and
/// skip [..., H], gamma [H], ... -> output and input_skip_bias_sum as input;
/// mean and inv_std_var [..., 1] in float.
void inferSkipLayerNorm(InferenceContext &Ctx) {
  const ShapeProto *In = rankedInput(Ctx, 0, "input", -1);
  requireInput(Ctx, 1, "skip");
  const ShapeProto *Gamma = rankedInput(Ctx, 2, "gamma", 1);
  const int32_t Elem = elemOf(Ctx, 0);
  if (!In)
    return;
  if (In->dim_size() != 2 && In->dim_size() != 3)
    fail_shape_inference("input 0 (input) shall have 2 or 3 dimensions, not ",
                         In->dim_size());
  const Dim &Hidden = In->dim(In->dim_size() - 1);
  if (Gamma && Gamma->dim(0).has_dim_value() && Hidden.has_dim_value() &&
      Gamma->dim(0).dim_value() != Hidden.dim_value())
    fail_shape_inference("gamma has ", Gamma->dim(0).dim_value(),
                         " elements but the hidden size is ",
                         Hidden.dim_value());
  const std::vector<Dim> Dims = dimsOf(*In);
  setOutput(Ctx, 0, Elem, Dims);
  std::vector<Dim> Stat = Dims;
  Stat.back() = known(1);
  setOutput(Ctx, 1, TP::FLOAT, Stat);
  setOutput(Ctx, 2, TP::FLOAT, Stat);
  setOutput(Ctx, 3, Elem, Dims);
}

/// EmbedLayerNormalization: input_ids [B, S], segment_ids, word, position
/// and segment embeddings [*, H], gamma, beta, mask, position_ids ->
/// output [B, S, H] (the embeddings' type), mask_index [B] int32,
/// embedding_sum [B, S, H].
void inferEmbedLayerNorm(InferenceContext &Ctx) {
  const ShapeProto *Ids = rankedInput(Ctx, 0, "input_ids", 2);
  const ShapeProto *Word = rankedInput(Ctx, 2, "word_embedding", 2);
  rankedInput(Ctx, 3, "position_embedding", 2);
  if (hasInput(Ctx, 4) && shapeOf(Ctx, 4) && shapeOf(Ctx, 4)->dim_size() != 2)
    fail_shape_inference("input 4 (segment_embedding) shall have 2 "
                         "dimensions");
  requireInput(Ctx, 5, "gamma");
  requireInput(Ctx, 6, "beta");
  const int32_t Elem = elemOf(Ctx, 2);
  if (!Ids || !Word)
    return;
  setOutput(Ctx, 0, Elem, {Ids->dim(0), Ids->dim(1), Word->dim(1)});
  setOutput(Ctx, 1, TP::INT32, {Ids->dim(0)});
  setOutput(Ctx, 2, Elem, {Ids->dim(0), Ids->dim(1), Word->dim(1)});
}

//===----------------------------------------------------------------------===//
// Elementwise ops and FusedMatMul
//===----------------------------------------------------------------------===//

/// BiasGelu, FastGelu, Gelu, QuickGelu, BiasAdd: the first input's shape.
template <unsigned Required> void inferLikeFirst(InferenceContext &Ctx) {
  static const char *const Names[] = {"X", "bias", "skip"};
  for (unsigned I = 0; I < Required; ++I)
    requireInput(Ctx, I, Names[I]);
  const ShapeProto *X = shapeOf(Ctx, 0);
  if (!X) {
    onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
    return;
  }
  if (Required > 1 && X->dim_size() == 0)
    fail_shape_inference("input 0 shall have at least one dimension");
  setOutput(Ctx, 0, elemOf(Ctx, 0), dimsOf(*X));
}

/// An operand of FusedMatMul as its product sees it: transBatch moves the
/// first dimension behind the other batch dimensions, trans swaps the last
/// two (contrib_defs.cc, FusedMatMul).
std::vector<Dim> fusedOperand(const ShapeProto &S, bool TransBatch,
                              bool Trans) {
  std::vector<Dim> D = dimsOf(S);
  if (D.size() < 2)
    return D; // numpy promotes a vector; no transpose applies.
  if (TransBatch && D.size() > 2) {
    Dim First = D.front();
    D.erase(D.begin());
    D.insert(D.end() - 1, First);
  }
  if (Trans)
    std::swap(D[D.size() - 1], D[D.size() - 2]);
  return D;
}

/// numpy's broadcast of two batch dims; fails on a conflict.
Dim broadcast(const Dim &A, const Dim &B) {
  const int64_t VA = valueOr(A, -1), VB = valueOr(B, -1);
  if (VA == 1)
    return B;
  if (VB == 1)
    return A;
  if (VA > 0 && VB > 0 && VA != VB)
    fail_shape_inference("batch dimensions ", VA, " and ", VB,
                         " do not broadcast");
  return VA >= 0 ? A : B;
}

void inferFusedMatMul(InferenceContext &Ctx) {
  requireInput(Ctx, 0, "A");
  requireInput(Ctx, 1, "B");
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  const ShapeProto *SA = shapeOf(Ctx, 0), *SB = shapeOf(Ctx, 1);
  if (!SA || !SB)
    return;
  if (SA->dim_size() == 0 || SB->dim_size() == 0)
    fail_shape_inference("FusedMatMul operands shall not be scalars");
  auto Flag = [&Ctx](const char *Name) {
    return onnx::getAttribute(Ctx, Name, 0) != 0;
  };
  std::vector<Dim> A = fusedOperand(*SA, Flag("transBatchA"), Flag("transA"));
  std::vector<Dim> B = fusedOperand(*SB, Flag("transBatchB"), Flag("transB"));
  const bool VecA = A.size() == 1, VecB = B.size() == 1;
  if (VecA)
    A.insert(A.begin(), known(1));
  if (VecB)
    B.push_back(known(1));
  const Dim &KA = A[A.size() - 1], &KB = B[B.size() - 2];
  if (KA.has_dim_value() && KB.has_dim_value() &&
      KA.dim_value() != KB.dim_value())
    fail_shape_inference("the inner dimensions ", KA.dim_value(), " and ",
                         KB.dim_value(), " differ");
  const size_t BatchA = A.size() - 2, BatchB = B.size() - 2;
  const size_t Batch = std::max(BatchA, BatchB);
  std::vector<Dim> Out(Batch);
  for (size_t I = 0; I < Batch; ++I) {
    // I counts from the innermost batch dimension outwards.
    Dim DA = I < BatchA ? A[BatchA - 1 - I] : known(1);
    Dim DB = I < BatchB ? B[BatchB - 1 - I] : known(1);
    Out[Batch - 1 - I] = broadcast(DA, DB);
  }
  if (!VecA)
    Out.push_back(A[A.size() - 2]);
  if (!VecB)
    Out.push_back(B[B.size() - 1]);
  ShapeProto S;
  for (const Dim &D : Out)
    *S.add_dim() = D;
  onnx::updateOutputShape(Ctx, 0, S);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

struct ContribOp {
  const char *Name;
  int MinInputs, MinOutputs;
  onnx::InferenceFunction Fn;
};

/// A schema with generic inputs and outputs: the inference function checks
/// what the definition requires, with messages that name the input.
onnx::OpSchema makeSchema(const ContribOp &Op) {
  onnx::OpSchema S(Op.Name, "perfc frontend/ContribSchemas.cpp", 0);
  S.SetDomain(ContribDomain).SinceVersion(1);
  S.Input(0, "inputs", "The op's inputs", "T", onnx::OpSchema::Variadic,
          /*is_homogeneous=*/false, Op.MinInputs);
  S.Output(0, "outputs", "The op's outputs", "T", onnx::OpSchema::Variadic,
           /*is_homogeneous=*/false, Op.MinOutputs);
  S.TypeConstraint("T", onnx::OpSchema::all_tensor_types(), "Any tensor");
  S.TypeAndShapeInferenceFunction(Op.Fn);
  return S;
}

const ContribOp &ops(size_t I) {
  static const ContribOp Ops[] = {
      {"Attention", 2, 1, inferAttention},
      {"MultiHeadAttention", 1, 1, inferMultiHeadAttention},
      {"SkipLayerNormalization", 3, 1, inferSkipLayerNorm},
      {"SkipSimplifiedLayerNormalization", 3, 1, inferSkipLayerNorm},
      {"EmbedLayerNormalization", 7, 2, inferEmbedLayerNorm},
      {"BiasGelu", 2, 1, inferLikeFirst<2>},
      {"FastGelu", 1, 1, inferLikeFirst<1>},
      {"Gelu", 1, 1, inferLikeFirst<1>},
      {"QuickGelu", 1, 1, inferLikeFirst<1>},
      {"BiasAdd", 3, 1, inferLikeFirst<3>},
      {"FusedMatMul", 2, 1, inferFusedMatMul},
  };
  return Ops[I];
}
constexpr size_t NumOps = 11;

} // namespace

void installContribSchemas() {
  static const bool Done = [] {
    auto &Range = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    if (!Range.Map().count(ContribDomain))
      Range.AddDomainToVersion(ContribDomain, 1, 1);
    for (size_t I = 0; I < NumOps; ++I) {
      // Another library in the process (ONNX Runtime) may have registered
      // the real schema: keep it.
      if (onnx::OpSchemaRegistry::Schema(ops(I).Name, 1, ContribDomain))
        continue;
      onnx::RegisterSchema(makeSchema(ops(I)));
    }
    return true;
  }();
  (void)Done;
}

bool hasContribSchema(llvm::StringRef Domain, llvm::StringRef OpType) {
  if (Domain != ContribDomain)
    return false;
  for (size_t I = 0; I < NumOps; ++I)
    if (OpType == ops(I).Name)
      return true;
  return false;
}

} // namespace perfc::frontend
