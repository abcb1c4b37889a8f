//===- TransformerGen.cpp - Graph-only ONNX transformers of any size ------===//
//
// The model around the layers, per family: embeddings, the mask and rotary
// tables, the layer stack, then the LM head (gpt, llama) or the pooler and
// task heads (bert); and the ModelProto and file they are written to.
// The graph-building helpers are in GraphBuilder, the layers in
// LayerBuilder, the spec's defaults and checks in TransformerSpec.cpp.
//
//===----------------------------------------------------------------------===//
#include "tools/modelgen/TransformerGen.h"
#include "tools/modelgen/GraphBuilder.h"
#include "tools/modelgen/LayerBuilder.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

using namespace perfc;
using namespace perfc::modelgen;
using namespace perfc::modelgen::detail;

namespace {

using TP = onnx::TensorProto;

constexpr int64_t OpsetVersion = 17;
constexpr int64_t IrVersion = 8;

/// Emits the model of one family, in the node order of the header's list.
class ModelWriter {
public:
  ModelWriter(const TransformerSpec &S, onnx::GraphProto &G)
      : S(S), B(S, G), Layers(S, B), H(S.Hidden) {}

  void run() {
    const std::string Ids = "input_ids";
    // The new tokens follow the cached ones.
    Pos = B.node(
        "Range", "/positions/Range",
        {B.intScalar(S.Past), B.intScalar(S.Past + S.Seq), B.intScalar(1)});
    std::string X = embed(Ids);
    if (S.Fam != Family::Bert)
      Layers.causalMask(Pos);
    if (S.Fam == Family::Llama)
      Layers.rotary(Pos);
    for (int64_t I = 0; I < S.Layers; ++I)
      X = Layers.layer(X, I);
    if (S.Fam == Family::Bert)
      bertHeads(X);
    else
      lmHead(X);
  }

  uint64_t params() const { return B.params(); }

private:
  std::string embed(const std::string &Ids) {
    TokEmbedding = B.weight("embed.tok.weight", {S.Vocab, H});
    std::string X = B.node("Gather", "/embed/tok/Gather", {TokEmbedding, Ids});
    if (S.Fam == Family::Llama)
      return X;
    std::string P =
        B.node("Gather", "/embed/pos/Gather",
               {B.weight("embed.pos.weight", {S.MaxPositions, H}), Pos});
    X = B.node("Add", "/embed/Add", {X, P});
    if (S.Fam == Family::Gpt)
      return X;
    // BERT: token type 0 everywhere, from a [2, H] table.
    std::string Shape = B.node("Shape", "/embed/type/Shape", {Ids});
    onnx::NodeProto &Zeros =
        B.add("ConstantOfShape", "/embed/type/ConstantOfShape", {Shape});
    onnx::AttributeProto &V = *Zeros.add_attribute();
    V.set_name("value");
    V.set_type(onnx::AttributeProto::TENSOR);
    V.mutable_t()->set_data_type(TP::INT64);
    V.mutable_t()->add_dims(1);
    V.mutable_t()->add_int64_data(0);
    std::string T =
        B.node("Gather", "/embed/type/Gather",
               {B.weight("embed.type.weight", {2, H}), Zeros.output(0)});
    X = B.node("Add", "/embed/Add_1", {X, T});
    return Layers.layerNorm(X, "/embed/ln", "embed.ln.");
  }

  /// BERT's outputs after the encoder's last layer Last: the pooler, then
  /// the task head of S.Head.
  void bertHeads(const std::string &Last) {
    B.rename(Last, "last_hidden_state");
    const std::string X = "last_hidden_state";
    onnx::NodeProto &G0 =
        B.add("Gather", "/pooler/Gather", {X, B.intScalar(0)});
    GraphBuilder::attr(G0, "axis", int64_t(1));
    std::string P =
        B.node("Gemm", "/pooler/Gemm",
               {G0.output(0), B.weight("pooler.dense.weight", {H, H}),
                B.weight("pooler.dense.bias", {H})});
    B.rename(B.node("Tanh", "/pooler/Tanh", {P}), "pooler_output");
    if (S.Head == BertHead::Pretraining) {
      // BertPreTrainingHeads (Devlin et al. 2019; NVIDIA's PyTorch BERT
      // scores every position, the loss ignores the unmasked ones).
      std::string Y = Layers.linear(X, "/mlm/dense", "mlm.dense.", H, H);
      Y = Layers.layerNorm(Layers.gelu(Y, "/mlm/gelu"), "/mlm/ln", "mlm.ln.");
      onnx::NodeProto &T =
          B.add("Transpose", "/mlm/decoder/Transpose", {TokEmbedding});
      GraphBuilder::attr(T, "perm", llvm::ArrayRef<int64_t>{1, 0});
      Y = B.node("MatMul", "/mlm/decoder/MatMul", {Y, T.output(0)});
      Y = B.node("Add", "/mlm/decoder/Add",
                 {B.weight("mlm.decoder.bias", {S.Vocab}), Y});
      onnx::NodeProto &L = B.add("LogSoftmax", "/mlm/LogSoftmax", {Y});
      GraphBuilder::attr(L, "axis", int64_t(-1));
      B.rename(L.output(0), "prediction_log_probs");
      B.rename(B.node("Gemm", "/nsp/Gemm",
                      {"pooler_output", B.weight("nsp.weight", {H, 2}),
                       B.weight("nsp.bias", {2})}),
               "seq_relationship_logits");
    } else if (S.Head == BertHead::Squad) {
      B.rename(Layers.linear(X, "/qa", "qa.", H, 2), "qa_logits");
    }
  }

  /// GPT's and Llama's final norm and LM head, tied or not, after the last
  /// layer Last.
  void lmHead(const std::string &Last) {
    std::string X = Layers.norm(Last, "/final_norm", "final_norm.");
    std::string Head;
    if (*S.TiedEmbeddings) {
      onnx::NodeProto &T =
          B.add("Transpose", "/lm_head/Transpose", {TokEmbedding});
      GraphBuilder::attr(T, "perm", llvm::ArrayRef<int64_t>{1, 0});
      Head = T.output(0);
    } else {
      Head = B.weight("lm_head.weight", {H, S.Vocab});
    }
    B.rename(B.node("MatMul", "/lm_head/MatMul", {X, Head}), "logits");
  }

  const TransformerSpec &S;
  GraphBuilder B;
  LayerBuilder Layers;
  const int64_t H;
  std::string Pos, TokEmbedding;
};

/// One of a layer's cache tensors [batch, Heads, positions, Width].
struct CacheTensor {
  const char *What;
  int64_t Heads, Width;
};

/// A layer's caches: keys and values of the kv heads, or latent attention's
/// latent and rotary key, one for all heads.
llvm::SmallVector<CacheTensor, 2> cacheTensors(const TransformerSpec &S) {
  if (isMla(S))
    return {{"latent", 1, S.KvLoraRank + S.QkRopeHeadDim}};
  return {{"key", S.KvHeads, headDim(S)}, {"value", S.KvHeads, headDim(S)}};
}

/// The graph inputs: the token ids, then with a cache each layer's past
/// keys and values (Hugging Face's order).
void addGraphInputs(const TransformerSpec &S, onnx::GraphProto &G) {
  setTensorType(*G.add_input(), TP::INT64, S.Batch, {S.Seq});
  G.mutable_input(0)->set_name("input_ids");
  if (S.Past == 0)
    return;
  for (int64_t I = 0; I < S.Layers; ++I)
    for (const CacheTensor &C : cacheTensors(S)) {
      onnx::ValueInfoProto &V = *G.add_input();
      V.set_name(cacheName("past", I, C.What));
      setTensorType(V, onnxType(S.Type), S.Batch, {C.Heads, S.Past, C.Width});
    }
}

/// The graph outputs of S's family and head, with their shapes (the caches
/// after logits, as the inputs).
void addGraphOutputs(const TransformerSpec &S, onnx::GraphProto &G) {
  const int32_t Elem = onnxType(S.Type);
  auto Output = [&](const std::string &Name, llvm::ArrayRef<int64_t> Rest) {
    onnx::ValueInfoProto &V = *G.add_output();
    V.set_name(Name);
    setTensorType(V, Elem, S.Batch, Rest);
  };
  if (S.Fam != Family::Bert) {
    Output("logits", {S.Seq, S.Vocab});
    if (S.Past > 0)
      for (int64_t I = 0; I < S.Layers; ++I)
        for (const CacheTensor &C : cacheTensors(S))
          Output(cacheName("present", I, C.What),
                 {C.Heads, S.Past + S.Seq, C.Width});
    return;
  }
  Output("last_hidden_state", {S.Seq, S.Hidden});
  Output("pooler_output", {S.Hidden});
  if (S.Head == BertHead::Pretraining) {
    Output("prediction_log_probs", {S.Seq, S.Vocab});
    Output("seq_relationship_logits", {2});
  } else if (S.Head == BertHead::Squad) {
    Output("qa_logits", {S.Seq, 2});
  }
}

} // namespace

llvm::Expected<std::string>
perfc::modelgen::writeTransformerOnnx(const TransformerSpec &Spec) {
  auto Resolved = resolve(Spec);
  if (!Resolved)
    return Resolved.takeError();
  const TransformerSpec &S = *Resolved;

  onnx::ModelProto M;
  M.set_ir_version(IrVersion);
  M.set_producer_name("perfc zoo");
  M.set_model_version(1);
  M.set_doc_string(
      "Graph-only " + name(S.Fam).str() +
      " transformer written by perfc zoo: " + std::to_string(S.Layers) +
      " layers, hidden " + std::to_string(S.Hidden) + ", " +
      std::to_string(S.Heads) + " heads (" + std::to_string(S.KvHeads) +
      " kv), ffn " + std::to_string(S.Ffn) + ", seq " + std::to_string(S.Seq) +
      (S.Past > 0
           ? ", one step after " + std::to_string(S.Past) + " cached tokens"
           : "") +
      ", vocab " + std::to_string(S.Vocab) + ", " + name(S.Type).str() +
      ". Weights have no data.");
  onnx::OperatorSetIdProto &Op = *M.add_opset_import();
  Op.set_domain("");
  Op.set_version(OpsetVersion);
  onnx::GraphProto &G = *M.mutable_graph();
  G.set_name(S.Name);

  addGraphInputs(S, G);
  ModelWriter W(S, G);
  W.run();
  addGraphOutputs(S, G);
  if (W.params() != parameterCount(S))
    return error("internal error: the graph holds " + llvm::Twine(W.params()) +
                 " parameters, the formula " + llvm::Twine(parameterCount(S)));

  std::string Bytes;
  if (!M.SerializeToString(&Bytes))
    return error("cannot serialize the model (over 2 GB of graph?)");
  return Bytes;
}

llvm::Error
perfc::modelgen::writeTransformerOnnxFile(const TransformerSpec &Spec,
                                          llvm::StringRef Path) {
  TransformerSpec S = Spec;
  if (S.WeightsFile.empty())
    S.WeightsFile = llvm::sys::path::stem(Path).str() + ".weights";
  auto Bytes = writeTransformerOnnx(S);
  if (!Bytes)
    return Bytes.takeError();
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC, llvm::sys::fs::OF_None);
  if (EC)
    return error(Path + ": cannot write: " + EC.message());
  OS << *Bytes;
  OS.close();
  if (OS.has_error()) {
    OS.clear_error();
    return error(Path + ": write failed");
  }
  return llvm::Error::success();
}
