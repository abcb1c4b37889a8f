//===- GraphBuilder.cpp - ONNX nodes, initializers, value infos -----------===//
#include "tools/modelgen/GraphBuilder.h"

#include "llvm/ADT/StringExtras.h"

using namespace perfc::modelgen;
using namespace perfc::modelgen::detail;

using TP = onnx::TensorProto;

llvm::Error detail::error(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

int32_t detail::onnxType(FloatType T) {
  switch (T) {
  case FloatType::F32:
    return TP::FLOAT;
  case FloatType::F16:
    return TP::FLOAT16;
  case FloatType::BF16:
    return TP::BFLOAT16;
  }
  return TP::FLOAT;
}

uint64_t detail::byteSize(FloatType T) { return T == FloatType::F32 ? 4 : 2; }

void detail::setTensorType(onnx::ValueInfoProto &V, int32_t ElemType,
                           const llvm::Optional<int64_t> &Batch,
                           llvm::ArrayRef<int64_t> Rest) {
  onnx::TypeProto::Tensor &T = *V.mutable_type()->mutable_tensor_type();
  T.set_elem_type(ElemType);
  onnx::TensorShapeProto &Shape = *T.mutable_shape();
  if (Batch)
    Shape.add_dim()->set_dim_value(*Batch);
  else
    Shape.add_dim()->set_dim_param("batch");
  for (int64_t D : Rest)
    Shape.add_dim()->set_dim_value(D);
}

onnx::NodeProto &GraphBuilder::add(llvm::StringRef Op, const std::string &Name,
                                   llvm::ArrayRef<std::string> Inputs,
                                   unsigned NumOutputs) {
  onnx::NodeProto &N = *G.add_node();
  N.set_op_type(Op.str());
  N.set_name(Name);
  for (const std::string &In : Inputs)
    N.add_input(In);
  for (unsigned I = 0; I < NumOutputs; ++I)
    N.add_output(Name + "_output_" + std::to_string(I));
  return N;
}

void GraphBuilder::attr(onnx::NodeProto &N, llvm::StringRef Name, int64_t V) {
  onnx::AttributeProto &A = *N.add_attribute();
  A.set_name(Name.str());
  A.set_type(onnx::AttributeProto::INT);
  A.set_i(V);
}

void GraphBuilder::attr(onnx::NodeProto &N, llvm::StringRef Name, float V) {
  onnx::AttributeProto &A = *N.add_attribute();
  A.set_name(Name.str());
  A.set_type(onnx::AttributeProto::FLOAT);
  A.set_f(V);
}

void GraphBuilder::attr(onnx::NodeProto &N, llvm::StringRef Name,
                        llvm::ArrayRef<int64_t> Vs) {
  onnx::AttributeProto &A = *N.add_attribute();
  A.set_name(Name.str());
  A.set_type(onnx::AttributeProto::INTS);
  for (int64_t V : Vs)
    A.add_ints(V);
}

std::string GraphBuilder::weight(const std::string &Name,
                                 llvm::ArrayRef<int64_t> Dims) {
  TP &T = *G.add_initializer();
  T.set_name(Name);
  T.set_data_type(onnxType(Type));
  uint64_t Elements = 1;
  for (int64_t D : Dims) {
    T.add_dims(D);
    Elements *= static_cast<uint64_t>(D);
  }
  T.set_data_location(TP::EXTERNAL);
  auto External = [&](const char *Key, const std::string &Value) {
    onnx::StringStringEntryProto &E = *T.add_external_data();
    E.set_key(Key);
    E.set_value(Value);
  };
  External("location", Spec.WeightsFile);
  External("offset", "0");
  External("length", std::to_string(Elements * byteSize(Type)));
  Params += Elements;
  return Name;
}

std::string GraphBuilder::ints(llvm::ArrayRef<int64_t> Values, bool Scalar) {
  std::string Name = Scalar ? "const.i64" : "const.i64x";
  for (int64_t V : Values)
    Name += "." + std::to_string(V);
  if (!Made.insert(Name).second)
    return Name;
  TP &T = *G.add_initializer();
  T.set_name(Name);
  T.set_data_type(TP::INT64);
  if (!Scalar)
    T.add_dims(static_cast<int64_t>(Values.size()));
  for (int64_t V : Values)
    T.add_int64_data(V);
  return Name;
}

std::string GraphBuilder::scalar(double V, bool Fp32) {
  FloatType T = Fp32 ? FloatType::F32 : Type;
  llvm::APFloat F(V);
  bool LosesInfo = false;
  F.convert(T == FloatType::F32   ? llvm::APFloat::IEEEsingle()
            : T == FloatType::F16 ? llvm::APFloat::IEEEhalf()
                                  : llvm::APFloat::BFloat(),
            llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
  return floatScalar(F, T);
}

std::string GraphBuilder::lowest() {
  const llvm::fltSemantics &Sem =
      Type == FloatType::F32   ? llvm::APFloat::IEEEsingle()
      : Type == FloatType::F16 ? llvm::APFloat::IEEEhalf()
                               : llvm::APFloat::BFloat();
  return floatScalar(llvm::APFloat::getLargest(Sem, /*Negative=*/true), Type);
}

std::string GraphBuilder::boolTrue() {
  const std::string Name = "const.bool.true";
  if (!Made.insert(Name).second)
    return Name;
  TP &T = *G.add_initializer();
  T.set_name(Name);
  T.set_data_type(TP::BOOL);
  T.add_int32_data(1);
  return Name;
}

void GraphBuilder::rename(const std::string &From, const std::string &To) {
  for (onnx::NodeProto &N : *G.mutable_node()) {
    for (std::string &Out : *N.mutable_output())
      if (Out == From)
        Out = To;
    for (std::string &In : *N.mutable_input())
      if (In == From)
        In = To;
  }
}

std::string GraphBuilder::floatScalar(const llvm::APFloat &F, FloatType T) {
  uint64_t Bits = F.bitcastToAPInt().getZExtValue();
  std::string Name =
      "const." + name(T).str() + "." + llvm::utohexstr(Bits, true);
  if (!Made.insert(Name).second)
    return Name;
  TP &P = *G.add_initializer();
  P.set_name(Name);
  P.set_data_type(onnxType(T));
  unsigned Bytes = static_cast<unsigned>(byteSize(T));
  std::string Raw(Bytes, '\0');
  for (unsigned I = 0; I < Bytes; ++I) // little-endian, as ONNX stores
    Raw[I] = static_cast<char>((Bits >> (8 * I)) & 0xff);
  P.set_raw_data(Raw);
  return Name;
}
