//===- FuzzCli.cpp - Fuzz the --dim and --batch values --------------------===//
//
// The input is a command line: words separated by NUL or newline bytes.
// The --dim values go through parseDimSpecs (tools/CliParse.h) and --batch
// through the integer parsing LLVM's cl::opt<int64_t> does; what parses is
// then bound on a small attention-like model whose inputs have symbolic
// dimensions (batch, seq), imported and costed, so that absurd values reach
// the frontend's size checks and the work formulas.
//
//===----------------------------------------------------------------------===//
#include "frontend/OnnxImport.h"
#include "passes/Predict.h"
#include "tools/CliParse.h"
#include "tools/fuzz/FuzzCheck.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

//===-- A protobuf wire writer, enough for a small ModelProto -------------===//

void varint(std::string &Out, uint64_t V) {
  while (V >= 0x80) {
    Out.push_back(static_cast<char>((V & 0x7f) | 0x80));
    V >>= 7;
  }
  Out.push_back(static_cast<char>(V));
}
void intField(std::string &Out, unsigned Field, uint64_t V) {
  varint(Out, uint64_t(Field) << 3);
  varint(Out, V);
}
void bytesField(std::string &Out, unsigned Field, llvm::StringRef Bytes) {
  varint(Out, (uint64_t(Field) << 3) | 2);
  varint(Out, Bytes.size());
  Out.append(Bytes.data(), Bytes.size());
}

/// ValueInfoProto of a float tensor; a dim is a size or a symbol; no dims:
/// no shape.
std::string valueInfo(llvm::StringRef Name,
                      const std::vector<std::string> &Dims) {
  std::string Shape;
  for (const std::string &D : Dims) {
    std::string Dim;
    int64_t V = 0;
    if (!llvm::StringRef(D).getAsInteger(10, V))
      intField(Dim, 1, static_cast<uint64_t>(V)); // dim_value
    else
      bytesField(Dim, 2, D); // dim_param
    bytesField(Shape, 1, Dim);
  }
  std::string Tensor;
  intField(Tensor, 1, 1); // elem_type FLOAT
  if (!Dims.empty())
    bytesField(Tensor, 2, Shape);
  std::string Type;
  bytesField(Type, 1, Tensor);
  std::string VI;
  bytesField(VI, 1, Name);
  bytesField(VI, 2, Type);
  return VI;
}

std::string node(llvm::StringRef Op, std::vector<llvm::StringRef> Inputs,
                 llvm::StringRef Output, const std::string &Attr = "") {
  std::string N;
  for (llvm::StringRef In : Inputs)
    bytesField(N, 1, In);
  bytesField(N, 2, Output);
  bytesField(N, 3, ("make_" + Output).str());
  bytesField(N, 4, Op);
  if (!Attr.empty())
    bytesField(N, 5, Attr);
  return N;
}

/// x[batch, seq, 64] -> MatMul(x, w[64, 64]) -> h; Transpose(x) ->
/// xt[batch, 64, seq]; MatMul(h, xt) -> s[batch, seq, seq]; Softmax(s) -> y.
std::string makeModel() {
  std::string Perm;
  bytesField(Perm, 1, "perm");
  for (uint64_t P : {0, 2, 1})
    intField(Perm, 8, P);
  intField(Perm, 20, 7); // INTS
  std::string W;
  intField(W, 1, 64);
  intField(W, 1, 64);
  intField(W, 2, 1); // FLOAT; no data: the stripper marks it external
  bytesField(W, 8, "w");
  std::string G;
  bytesField(G, 1, node("MatMul", {"x", "w"}, "h"));
  bytesField(G, 1, node("Transpose", {"x"}, "xt", Perm));
  bytesField(G, 1, node("MatMul", {"h", "xt"}, "s"));
  bytesField(G, 1, node("Softmax", {"s"}, "y"));
  bytesField(G, 2, "fuzz_cli");
  bytesField(G, 5, W);
  bytesField(G, 11, valueInfo("x", {"batch", "seq", "64"}));
  bytesField(G, 12, valueInfo("y", {}));
  std::string Opset;
  intField(Opset, 2, 13);
  std::string M;
  intField(M, 1, 8); // ir_version
  bytesField(M, 7, G);
  bytesField(M, 8, Opset);
  return M;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static const std::string Model = makeModel();

  std::vector<std::string> Words;
  llvm::StringRef Rest(reinterpret_cast<const char *>(Data), Size);
  while (!Rest.empty()) {
    size_t At = Rest.find_first_of(llvm::StringRef("\0\n", 2));
    Words.push_back(Rest.substr(0, At).str());
    Rest = At == llvm::StringRef::npos ? "" : Rest.substr(At + 1);
  }

  // The option syntax LLVM's cl accepts: -x V, --x V, -x=V, --x=V.
  std::vector<std::string> DimSpecs;
  llvm::Optional<std::string> BatchText;
  for (size_t I = 0; I < Words.size(); ++I) {
    llvm::StringRef W = Words[I];
    if (!W.consume_front("-"))
      continue;
    W.consume_front("-");
    auto [Name, Value] = W.split('=');
    bool Inline = W.contains('=');
    if (Name != "dim" && Name != "batch")
      continue;
    std::string V;
    if (Inline)
      V = Value.str();
    else if (I + 1 < Words.size())
      V = Words[++I];
    else
      continue;
    if (Name == "dim")
      DimSpecs.push_back(V);
    else
      BatchText = V;
  }

  perfc::frontend::ImportOptions Options;
  auto Dims = perfc::parseDimSpecs(DimSpecs);
  if (!Dims) {
    // A flag's error names the flag, not a file.
    perfc::fuzz::checkError(Dims.takeError(), "--dim", "parseDimSpecs");
    return 0;
  }
  for (const auto &[Name, Value] : *Dims)
    if (Name.empty() || Value <= 0)
      std::abort(); // parseDimSpecs promises neither.
  Options.Dims = std::move(*Dims);
  if (BatchText) {
    // cl::parser<int64_t>: getAsInteger with radix 0 (0x.., 0.., decimal).
    int64_t B = 0;
    if (llvm::StringRef(*BatchText).getAsInteger(0, B))
      return 0;
    Options.Batch = B;
  }
  auto M = perfc::frontend::importOnnxBytes(Model, "fuzz_cli.onnx", Options);
  if (!M) {
    perfc::fuzz::checkError(M.takeError(), "fuzz_cli.onnx", "importOnnxBytes");
    return 0;
  }
  perfc::Report R = perfc::predictWork(M->Graph);
  (void)R;
  return 0;
}
