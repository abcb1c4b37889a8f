//===- WeightStripper.cpp - ONNX wire bytes without the weights -----------===//
//
// Field numbers are those of onnx/onnx.proto (ONNX 1.12); each message kind
// that can hold a tensor or a graph has a filter, every other field is
// copied verbatim.
//
//===----------------------------------------------------------------------===//
#include "frontend/WeightStripper.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>

namespace perfc::frontend {
namespace {

enum WireType : uint8_t {
  Varint = 0,
  Fixed64 = 1,
  LengthDelimited = 2,
  StartGroup = 3,
  EndGroup = 4,
  Fixed32 = 5,
};

// onnx.proto field numbers.
namespace model {
constexpr uint32_t Graph = 7, TrainingInfo = 20;
}
namespace graph {
constexpr uint32_t Node = 1, Initializer = 5, SparseInitializer = 15;
}
namespace node {
constexpr uint32_t Attribute = 5;
}
namespace attribute {
constexpr uint32_t T = 5, G = 6, Tensors = 10, Graphs = 11, SparseTensor = 22,
                   SparseTensors = 23;
}
namespace tensor {
constexpr uint32_t Dims = 1, DataType = 2, FloatData = 4, Int32Data = 5,
                   StringData = 6, Int64Data = 7, RawData = 9, DoubleData = 10,
                   Uint64Data = 11, DataLocation = 14;
constexpr uint64_t LocationExternal = 1;
} // namespace tensor
namespace sparse {
constexpr uint32_t Values = 1, Indices = 2;
}

/// ONNX TensorProto.DataType values that are integers (shape constants).
bool isIntegerDataType(uint64_t T) {
  switch (T) {
  case 2: // UINT8
  case 3: // INT8
  case 4: // UINT16
  case 5: // INT16
  case 6: // INT32
  case 7: // INT64
  case 9: // BOOL
  case 12: // UINT32
  case 13: // UINT64
    return true;
  default:
    return false;
  }
}

/// One field as it sits in the input.
struct Field {
  uint32_t Number = 0;
  WireType Type = Varint;
  uint64_t Int = 0;          ///< Varint value.
  llvm::StringRef Payload;   ///< Length-delimited contents.
  llvm::StringRef Raw;       ///< The whole field, key included.
};

class Reader {
public:
  Reader(llvm::StringRef Data, uint64_t BaseOffset)
      : Data(Data), Base(BaseOffset) {}

  bool atEnd() const { return Pos >= Data.size(); }

  llvm::Error next(Field &F) {
    size_t Start = Pos;
    uint64_t Key = 0;
    if (auto E = readVarint(Key))
      return E;
    F.Number = static_cast<uint32_t>(Key >> 3);
    F.Type = static_cast<WireType>(Key & 7);
    if (F.Number == 0)
      return error(Start, "field number 0");
    switch (F.Type) {
    case Varint:
      if (auto E = readVarint(F.Int))
        return E;
      break;
    case Fixed64:
      if (auto E = skip(8))
        return E;
      break;
    case Fixed32:
      if (auto E = skip(4))
        return E;
      break;
    case LengthDelimited: {
      uint64_t Len = 0;
      if (auto E = readVarint(Len))
        return E;
      if (Len > Data.size() - Pos)
        return error(Start, "a field of " + llvm::Twine(Len) +
                                " bytes runs past the end of the data");
      F.Payload = Data.substr(Pos, Len);
      Pos += Len;
      break;
    }
    default:
      // Groups are deprecated and never used by onnx.proto.
      return error(Start, "wire type " + llvm::Twine(unsigned(F.Type)) +
                              " is not valid here");
    }
    F.Raw = Data.slice(Start, Pos);
    return llvm::Error::success();
  }

  uint64_t offsetOf(llvm::StringRef Sub) const {
    return Base + static_cast<uint64_t>(Sub.data() - Data.data());
  }

  llvm::Error error(size_t At, const llvm::Twine &Msg) const {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "malformed protobuf at byte " + llvm::Twine(Base + At) + ": " + Msg +
            " (is the file truncated or not an ONNX model?)");
  }

  /// Reads a bare varint (an element of a packed repeated field).
  llvm::Error readVarint(uint64_t &V) {
    V = 0;
    size_t Start = Pos;
    for (unsigned Shift = 0; Shift < 64; Shift += 7) {
      if (Pos >= Data.size())
        return error(Start, "the data ends inside a number");
      uint8_t B = static_cast<uint8_t>(Data[Pos++]);
      V |= uint64_t(B & 0x7f) << Shift;
      if (!(B & 0x80))
        return llvm::Error::success();
    }
    return error(Start, "a number longer than 10 bytes");
  }

private:
  llvm::Error skip(size_t N) {
    if (N > Data.size() - Pos)
      return error(Pos, "the data ends inside a field");
    Pos += N;
    return llvm::Error::success();
  }

  llvm::StringRef Data;
  uint64_t Base;
  size_t Pos = 0;
};

void appendVarint(std::string &Out, uint64_t V) {
  while (V >= 0x80) {
    Out.push_back(static_cast<char>((V & 0x7f) | 0x80));
    V >>= 7;
  }
  Out.push_back(static_cast<char>(V));
}

void appendLengthDelimited(std::string &Out, uint32_t Number,
                           llvm::StringRef Payload) {
  appendVarint(Out, (uint64_t(Number) << 3) | LengthDelimited);
  appendVarint(Out, Payload.size());
  Out.append(Payload.data(), Payload.size());
}

class Stripper {
public:
  Stripper(llvm::StringRef Whole, const StripLimits &Limits)
      : Whole(Whole), Limits(Limits) {}

  llvm::Expected<StrippedModel> run() {
    StrippedModel Result;
    if (auto E = filterModel(Whole, Result.Bytes))
      return std::move(E);
    Result.DroppedBytes = Dropped;
    Result.Nodes = Nodes;
    return Result;
  }

private:
  using FilterFn = llvm::Error (Stripper::*)(llvm::StringRef, std::string &);

  /// Copies a message, sending the listed length-delimited fields through
  /// their filters and dropping the fields in Drop.
  template <size_t NF>
  llvm::Error copyMessage(llvm::StringRef Msg, std::string &Out,
                          const std::pair<uint32_t, FilterFn> (&Filters)[NF],
                          std::initializer_list<uint32_t> Drop = {}) {
    Reader R(Msg, offsetOf(Msg));
    Field F;
    while (!R.atEnd()) {
      if (auto E = R.next(F))
        return E;
      if (std::find(Drop.begin(), Drop.end(), F.Number) != Drop.end()) {
        Dropped += F.Raw.size();
        continue;
      }
      FilterFn Fn = nullptr;
      for (const auto &P : Filters)
        if (P.first == F.Number && F.Type == LengthDelimited)
          Fn = P.second;
      if (!Fn) {
        Out.append(F.Raw.data(), F.Raw.size());
        continue;
      }
      std::string Sub;
      if (auto E = (this->*Fn)(F.Payload, Sub))
        return E;
      appendLengthDelimited(Out, F.Number, Sub);
    }
    return llvm::Error::success();
  }

  llvm::Error filterModel(llvm::StringRef Msg, std::string &Out) {
    static const std::pair<uint32_t, FilterFn> Filters[] = {
        {model::Graph, &Stripper::filterGraph}};
    // Training-info graphs describe how to train, which perfc derives itself.
    return copyMessage(Msg, Out, Filters, {model::TrainingInfo});
  }

  llvm::Error filterGraph(llvm::StringRef Msg, std::string &Out) {
    if (++Depth > Limits.MaxDepth)
      return depthError(Msg);
    static const std::pair<uint32_t, FilterFn> Filters[] = {
        {graph::Node, &Stripper::filterNode},
        {graph::Initializer, &Stripper::filterTensor},
        {graph::SparseInitializer, &Stripper::filterSparse}};
    llvm::Error E = copyMessage(Msg, Out, Filters);
    --Depth;
    return E;
  }

  llvm::Error filterNode(llvm::StringRef Msg, std::string &Out) {
    if (++Nodes > Limits.MaxNodes)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "the model has more than " + llvm::Twine(Limits.MaxNodes) +
              " nodes, perfc's limit (raise it with --max-nodes)");
    static const std::pair<uint32_t, FilterFn> Filters[] = {
        {node::Attribute, &Stripper::filterAttribute}};
    return copyMessage(Msg, Out, Filters);
  }

  llvm::Error filterAttribute(llvm::StringRef Msg, std::string &Out) {
    static const std::pair<uint32_t, FilterFn> Filters[] = {
        {attribute::T, &Stripper::filterTensor},
        {attribute::Tensors, &Stripper::filterTensor},
        {attribute::G, &Stripper::filterGraph},
        {attribute::Graphs, &Stripper::filterGraph},
        {attribute::SparseTensor, &Stripper::filterSparse},
        {attribute::SparseTensors, &Stripper::filterSparse}};
    return copyMessage(Msg, Out, Filters);
  }

  llvm::Error filterSparse(llvm::StringRef Msg, std::string &Out) {
    static const std::pair<uint32_t, FilterFn> Filters[] = {
        {sparse::Values, &Stripper::filterTensor},
        {sparse::Indices, &Stripper::filterTensor}};
    return copyMessage(Msg, Out, Filters);
  }

  llvm::Error filterTensor(llvm::StringRef Msg, std::string &Out) {
    // First pass: element count and type decide whether the data stays.
    Reader R(Msg, offsetOf(Msg));
    Field F;
    uint64_t Elements = 1, DataType = 0;
    bool External = false;
    auto MulDim = [&Elements](uint64_t D) {
      // Saturate: an absurd dim only needs to say "large" here; the
      // importer rejects it with a proper message.
      if (D != 0 && Elements > UINT64_MAX / D)
        Elements = UINT64_MAX;
      else
        Elements *= D;
    };
    while (!R.atEnd()) {
      if (auto E = R.next(F))
        return E;
      if (F.Number == tensor::Dims && F.Type == Varint) {
        MulDim(F.Int);
      } else if (F.Number == tensor::Dims && F.Type == LengthDelimited) {
        Reader Packed(F.Payload, R.offsetOf(F.Payload));
        while (!Packed.atEnd()) {
          uint64_t D = 0;
          if (auto E = Packed.readVarint(D))
            return E;
          MulDim(D);
        }
      } else if (F.Number == tensor::DataType && F.Type == Varint) {
        DataType = F.Int;
      } else if (F.Number == tensor::DataLocation && F.Type == Varint) {
        External = F.Int == tensor::LocationExternal;
      }
    }
    bool Keep = Elements <= Limits.KeptAnyElements ||
                (isIntegerDataType(DataType) &&
                 Elements <= Limits.KeptIntElements);
    if (Keep) {
      Out.append(Msg.data(), Msg.size());
      return llvm::Error::success();
    }
    Reader Copy(Msg, offsetOf(Msg));
    while (!Copy.atEnd()) {
      if (auto E = Copy.next(F))
        return E;
      switch (F.Number) {
      case tensor::FloatData:
      case tensor::Int32Data:
      case tensor::StringData:
      case tensor::Int64Data:
      case tensor::RawData:
      case tensor::DoubleData:
      case tensor::Uint64Data:
        Dropped += F.Raw.size();
        continue;
      default:
        Out.append(F.Raw.data(), F.Raw.size());
      }
    }
    if (!External) {
      appendVarint(Out, (uint64_t(tensor::DataLocation) << 3) | Varint);
      appendVarint(Out, tensor::LocationExternal);
    }
    return llvm::Error::success();
  }

  llvm::Error depthError(llvm::StringRef Msg) const {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "subgraphs nested more than " + llvm::Twine(Limits.MaxDepth) +
            " deep at byte " + llvm::Twine(offsetOf(Msg)));
  }

  uint64_t offsetOf(llvm::StringRef Sub) const {
    return static_cast<uint64_t>(Sub.data() - Whole.data());
  }

  llvm::StringRef Whole;
  const StripLimits &Limits;
  uint64_t Dropped = 0;
  uint64_t Nodes = 0;
  unsigned Depth = 0;
};

} // namespace

llvm::Expected<StrippedModel> stripWeights(llvm::StringRef Wire,
                                           const StripLimits &Limits) {
  return Stripper(Wire, Limits).run();
}

} // namespace perfc::frontend
