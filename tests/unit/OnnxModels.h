//===- OnnxModels.h - ONNX models built in C++ for tests -------*- C++ -*-===//
//
// Tests make their ONNX inputs with the protobuf classes directly, so they
// need neither Python nor files beyond what they write to a temp folder.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TESTS_ONNXMODELS_H
#define PERFC_TESTS_ONNXMODELS_H

#include <onnx/onnx_pb.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace perfc::test {

/// A dimension given as a size or, when Symbol is set, by name.
struct TestDim {
  int64_t Size = -1;
  const char *Symbol = nullptr;
  TestDim(int64_t S) : Size(S) {}
  TestDim(const char *Sym) : Symbol(Sym) {}
};

inline onnx::ModelProto makeModel(int64_t Opset = 13) {
  onnx::ModelProto M;
  M.set_ir_version(8);
  M.set_producer_name("perfc-tests");
  auto *Imp = M.add_opset_import();
  Imp->set_domain("");
  Imp->set_version(Opset);
  M.mutable_graph()->set_name("g");
  return M;
}

inline void setType(onnx::ValueInfoProto &V,
                    std::initializer_list<TestDim> Dims,
                    int32_t ElemType = onnx::TensorProto::FLOAT) {
  auto *T = V.mutable_type()->mutable_tensor_type();
  T->set_elem_type(ElemType);
  auto *S = T->mutable_shape();
  for (const TestDim &D : Dims) {
    auto *Dim = S->add_dim();
    if (D.Symbol)
      Dim->set_dim_param(D.Symbol);
    else
      Dim->set_dim_value(D.Size);
  }
}

inline void addInput(onnx::ModelProto &M, const std::string &Name,
                     std::initializer_list<TestDim> Dims,
                     int32_t ElemType = onnx::TensorProto::FLOAT) {
  auto *V = M.mutable_graph()->add_input();
  V->set_name(Name);
  setType(*V, Dims, ElemType);
}

inline void addOutput(onnx::ModelProto &M, const std::string &Name,
                      int32_t ElemType = onnx::TensorProto::FLOAT) {
  auto *V = M.mutable_graph()->add_output();
  V->set_name(Name);
  V->mutable_type()->mutable_tensor_type()->set_elem_type(ElemType);
}

/// A float initializer whose data is embedded (raw_data), as in a model
/// saved with its weights.
inline onnx::TensorProto &addWeight(onnx::ModelProto &M,
                                    const std::string &Name,
                                    std::vector<int64_t> Dims) {
  auto *T = M.mutable_graph()->add_initializer();
  T->set_name(Name);
  T->set_data_type(onnx::TensorProto::FLOAT);
  int64_t N = 1;
  for (int64_t D : Dims) {
    T->add_dims(D);
    N *= D;
  }
  T->set_raw_data(std::string(static_cast<size_t>(N) * 4, '\x01'));
  return *T;
}

inline void addInts(onnx::ModelProto &M, const std::string &Name,
                    std::vector<int64_t> Values) {
  auto *T = M.mutable_graph()->add_initializer();
  T->set_name(Name);
  T->set_data_type(onnx::TensorProto::INT64);
  T->add_dims(static_cast<int64_t>(Values.size()));
  for (int64_t V : Values)
    T->add_int64_data(V);
}

inline onnx::NodeProto &addNode(onnx::ModelProto &M, const std::string &Op,
                                std::vector<std::string> Inputs,
                                std::vector<std::string> Outputs,
                                const std::string &Name = "") {
  auto *N = M.mutable_graph()->add_node();
  N->set_op_type(Op);
  N->set_name(Name.empty() ? Op + "_" + Outputs.front() : Name);
  for (auto &I : Inputs)
    N->add_input(I);
  for (auto &O : Outputs)
    N->add_output(O);
  return *N;
}

inline void addIntsAttr(onnx::NodeProto &N, const std::string &Name,
                        std::vector<int64_t> Values) {
  auto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INTS);
  for (int64_t V : Values)
    A->add_ints(V);
}

inline void addIntAttr(onnx::NodeProto &N, const std::string &Name,
                       int64_t Value) {
  auto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(Value);
}

/// x[batch,3,8,8] -> Conv(w[4,3,3,3], pads 1) -> Relu -> y.
inline onnx::ModelProto convReluModel() {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {"batch", 3, 8, 8});
  addWeight(M, "w", {4, 3, 3, 3});
  auto &Conv = addNode(M, "Conv", {"x", "w"}, {"c"}, "conv");
  addIntsAttr(Conv, "pads", {1, 1, 1, 1});
  addIntsAttr(Conv, "kernel_shape", {3, 3});
  addNode(M, "Relu", {"c"}, {"y"}, "relu");
  addOutput(M, "y");
  return M;
}

inline std::string serialize(const onnx::ModelProto &M) {
  std::string S;
  M.SerializeToString(&S);
  return S;
}

} // namespace perfc::test

#endif // PERFC_TESTS_ONNXMODELS_H
