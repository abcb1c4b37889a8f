//===- GraphBuilder.h - ONNX nodes, initializers, value infos -*- C++ -*-===//
//
// Internal to perfc_modelgen. The builder appends nodes and initializers to
// a GraphProto in call order, so the order of the calls is the order of the
// serialized graph: the generator's output is deterministic because of it.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_MODELGEN_GRAPHBUILDER_H
#define PERFC_TOOLS_MODELGEN_GRAPHBUILDER_H

#include "tools/modelgen/TransformerGen.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

namespace perfc::modelgen::detail {

/// A one-line error (the callers name the flag or the file).
llvm::Error error(const llvm::Twine &Msg);

/// The ONNX TensorProto data type of T.
int32_t onnxType(FloatType T);

/// Bytes per element of T.
uint64_t byteSize(FloatType T);

/// Channels per attention head.
inline int64_t headDim(const TransformerSpec &S) { return S.Hidden / S.Heads; }

/// A KV cache tensor of layer I: Kind "past" (graph input) or "present"
/// (graph output), What "key" or "value": "past.{I}.key".
inline std::string cacheName(llvm::StringRef Kind, int64_t I,
                             llvm::StringRef What) {
  return (Kind + "." + llvm::Twine(I) + "." + What).str();
}

/// Makes V a tensor of ElemType shaped [batch, Rest...]: a static Batch or
/// the symbolic dimension "batch".
void setTensorType(onnx::ValueInfoProto &V, int32_t ElemType,
                   const llvm::Optional<int64_t> &Batch,
                   llvm::ArrayRef<int64_t> Rest);

/// Builds the graph: nodes named as documented in TransformerGen.h, outputs
/// named "<node>_output_<k>", constants shared by value.
class GraphBuilder {
public:
  GraphBuilder(const TransformerSpec &Spec, onnx::GraphProto &G)
      : Spec(Spec), G(G), Type(Spec.Type) {}

  onnx::NodeProto &add(llvm::StringRef Op, const std::string &Name,
                       llvm::ArrayRef<std::string> Inputs,
                       unsigned NumOutputs = 1);

  /// A one-output node; returns its output.
  std::string node(llvm::StringRef Op, const std::string &Name,
                   llvm::ArrayRef<std::string> Inputs) {
    return add(Op, Name, Inputs).output(0);
  }

  static void attr(onnx::NodeProto &N, llvm::StringRef Name, int64_t V);
  static void attr(onnx::NodeProto &N, llvm::StringRef Name, float V);
  static void attr(onnx::NodeProto &N, llvm::StringRef Name,
                   llvm::ArrayRef<int64_t> Vs);

  /// A weight: dims and type, data "stored" in the absent weights file.
  std::string weight(const std::string &Name, llvm::ArrayRef<int64_t> Dims);

  /// An int64 constant with its data (a vector, or a scalar when Scalar).
  std::string ints(llvm::ArrayRef<int64_t> Values, bool Scalar = false);
  std::string intScalar(int64_t V) { return ints({V}, /*Scalar=*/true); }

  /// A scalar of the model's floating-point type (FloatType::F32 for Fp32).
  std::string scalar(double V, bool Fp32 = false);

  /// The most negative finite value of the model's type (the mask's
  /// "minus infinity", as torch's finfo.min).
  std::string lowest();

  /// The bool scalar `true` (Dropout's training_mode), made on first use.
  std::string boolTrue();

  /// Renames a node output (and its uses) to a graph output's name.
  void rename(const std::string &From, const std::string &To);

  uint64_t params() const { return Params; }
  FloatType type() const { return Type; }

private:
  std::string floatScalar(const llvm::APFloat &F, FloatType T);

  const TransformerSpec &Spec;
  onnx::GraphProto &G;
  FloatType Type;
  llvm::StringSet<> Made;
  uint64_t Params = 0;
};

} // namespace perfc::modelgen::detail

#endif // PERFC_TOOLS_MODELGEN_GRAPHBUILDER_H
