//===- WeightStripper.cpp - ONNX wire bytes without the weights -----------===//
//
// Field numbers are those of onnx/onnx.proto (ONNX 1.12); each message kind
// that can hold a tensor or a graph has a filter, every other field is
// copied verbatim. Messages are addressed by (offset, length) in a
// ByteSource, so the same code reads memory or a file without loading the
// parts it skips.
//
//===----------------------------------------------------------------------===//
#include "frontend/WeightStripper.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/Errno.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <vector>

#include <unistd.h>

namespace perfc::frontend {
namespace {

enum WireType : uint8_t {
  Varint = 0,
  Fixed64 = 1,
  LengthDelimited = 2,
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
                   Uint64Data = 11, ExternalData = 13, DataLocation = 14;
constexpr uint64_t LocationExternal = 1;
} // namespace tensor
namespace sparse {
constexpr uint32_t Values = 1, Indices = 2;
}

/// TensorProto fields that hold the elements.
bool isDataField(uint32_t Number) {
  switch (Number) {
  case tensor::FloatData:
  case tensor::Int32Data:
  case tensor::StringData:
  case tensor::Int64Data:
  case tensor::RawData:
  case tensor::DoubleData:
  case tensor::Uint64Data:
    return true;
  default:
    return false;
  }
}

/// ONNX TensorProto.DataType values that are integers (shape constants).
bool isIntegerDataType(uint64_t T) {
  switch (T) {
  case 2:  // UINT8
  case 3:  // INT8
  case 4:  // UINT16
  case 5:  // INT16
  case 6:  // INT32
  case 7:  // INT64
  case 9:  // BOOL
  case 12: // UINT32
  case 13: // UINT64
    return true;
  default:
    return false;
  }
}

llvm::Error wireError(uint64_t At, const llvm::Twine &Msg) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "malformed protobuf at byte " + llvm::Twine(At) + ": " + Msg +
          " (is the file truncated or not an ONNX model?)");
}

/// Random access to the bytes of a serialized model.
class ByteSource {
public:
  /// In-memory bytes.
  explicit ByteSource(llvm::StringRef Memory)
      : Memory(Memory), Size(Memory.size()) {}
  /// An open file, read through a window with pread.
  ByteSource(int FD, uint64_t Size) : FD(FD), Size(Size) {}

  uint64_t size() const { return Size; }

  /// The bytes, when they are in memory; null for a file.
  const uint8_t *memory() const {
    return FD < 0 ? reinterpret_cast<const uint8_t *>(Memory.data()) : nullptr;
  }

  /// The byte at Offset (< size()).
  llvm::Expected<uint8_t> byteAt(uint64_t Offset) {
    if (FD < 0)
      return static_cast<uint8_t>(Memory[Offset]);
    if (Offset < WindowStart || Offset >= WindowStart + Window.size())
      if (auto E = fill(Offset))
        return std::move(E);
    return static_cast<uint8_t>(Window[Offset - WindowStart]);
  }

  /// Appends Length bytes at Offset to Out.
  llvm::Error append(uint64_t Offset, uint64_t Length, std::string &Out) {
    if (FD < 0) {
      Out.append(Memory.data() + Offset, Length);
      return llvm::Error::success();
    }
    size_t Old = Out.size();
    Out.resize(Old + Length);
    return readAt(Offset, &Out[Old], Length);
  }

private:
  static constexpr size_t WindowSize = 64 * 1024;

  llvm::Error fill(uint64_t Offset) {
    size_t Length =
        static_cast<size_t>(std::min<uint64_t>(WindowSize, Size - Offset));
    Window.resize(Length);
    WindowStart = Offset;
    return readAt(Offset, Window.data(), Length);
  }

  llvm::Error readAt(uint64_t Offset, char *Out, uint64_t Length) {
    while (Length > 0) {
      ssize_t N = ::pread(FD, Out, Length, static_cast<off_t>(Offset));
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "read failed at byte " + llvm::Twine(Offset) + ": " +
                (N < 0 ? llvm::sys::StrError(errno)
                       : std::string("unexpected end of file")));
      Out += N;
      Offset += static_cast<uint64_t>(N);
      Length -= static_cast<uint64_t>(N);
    }
    return llvm::Error::success();
  }

  llvm::StringRef Memory;
  int FD = -1;
  uint64_t Size = 0;
  std::string Window;
  uint64_t WindowStart = 0;
};

/// A span of the source: a message's contents.
struct Span {
  uint64_t Offset = 0;
  uint64_t Length = 0;
};

/// One field as it sits in the input.
struct Field {
  uint32_t Number = 0;
  WireType Type = Varint;
  uint64_t Int = 0; ///< Varint value.
  Span Payload;     ///< Length-delimited contents.
  Span Raw;         ///< The whole field, key included.
};

/// Reads the fields of one message.
class Reader {
public:
  Reader(ByteSource &Source, Span Message)
      : Source(Source), Mem(Source.memory()), Pos(Message.Offset),
        End(Message.Offset + Message.Length) {}

  bool atEnd() const { return Pos >= End; }

  llvm::Error next(Field &F) {
    if (nextShort(F))
      return llvm::Error::success();
    return nextAny(F);
  }

  /// The usual field in memory, a one-byte key and a short number or
  /// length, read inline (a model has thousands of them: names, ints);
  /// false leaves everything else, errors included, to nextAny.
  bool nextShort(Field &F) {
    if (!Mem || End - Pos < 2)
      return false;
    const uint8_t Key = Mem[Pos];
    if (Key >= 0x80 || Key < 8)
      return false;
    // The number or length: one byte, or two (dims of 128 and more, and
    // messages of 128 bytes and more).
    uint64_t V = Mem[Pos + 1];
    uint64_t Size = 2;
    if (V >= 0x80) {
      if (End - Pos < 3 || Mem[Pos + 2] >= 0x80)
        return false;
      V = (V & 0x7f) | uint64_t(Mem[Pos + 2]) << 7;
      Size = 3;
    }
    F.Number = Key >> 3;
    if ((Key & 7) == Varint) {
      F.Type = Varint;
      F.Int = V;
      F.Raw = {Pos, Size};
      Pos += Size;
      return true;
    }
    if ((Key & 7) != LengthDelimited || V > End - Pos - Size)
      return false;
    F.Type = LengthDelimited;
    F.Payload = {Pos + Size, V};
    F.Raw = {Pos, Size + V};
    Pos += Size + V;
    return true;
  }

  /// Any field, with the checks that name what is wrong.
  LLVM_ATTRIBUTE_NOINLINE llvm::Error nextAny(Field &F) {
    uint64_t Start = Pos;
    uint64_t Key = 0;
    if (Mem && Pos < End && Mem[Pos] < 0x80)
      Key = Mem[Pos++]; // The usual one-byte key, without a call.
    else if (auto E = readVarint(Key))
      return E;
    F.Number = static_cast<uint32_t>(Key >> 3);
    F.Type = static_cast<WireType>(Key & 7);
    if (F.Number == 0)
      return wireError(Start, "field number 0");
    switch (F.Type) {
    case Varint:
      if (Mem && Pos < End && Mem[Pos] < 0x80)
        F.Int = Mem[Pos++]; // Most numbers in a model are one byte.
      else if (auto E = readVarint(F.Int))
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
      if (Mem && Pos < End && Mem[Pos] < 0x80)
        Len = Mem[Pos++];
      else if (auto E = readVarint(Len))
        return E;
      if (Len > End - Pos)
        return wireError(Start, "a field of " + llvm::Twine(Len) +
                                    " bytes runs past the end of the data");
      F.Payload = {Pos, Len};
      Pos += Len;
      break;
    }
    default:
      // Groups are deprecated and never used by onnx.proto.
      return wireError(Start, "wire type " + llvm::Twine(unsigned(F.Type)) +
                                  " is not valid here");
    }
    F.Raw = {Start, Pos - Start};
    return llvm::Error::success();
  }

  /// Reads a bare varint (an element of a packed repeated field).
  llvm::Error readVarint(uint64_t &V) {
    V = 0;
    uint64_t Start = Pos;
    if (Mem) {
      // In memory: no window to check, and most numbers are one byte.
      for (unsigned Shift = 0; Shift < 64; Shift += 7) {
        if (Pos >= End)
          return wireError(Start, "the data ends inside a number");
        uint8_t B = Mem[Pos++];
        V |= uint64_t(B & 0x7f) << Shift;
        if (!(B & 0x80))
          return llvm::Error::success();
      }
      return wireError(Start, "a number longer than 10 bytes");
    }
    for (unsigned Shift = 0; Shift < 64; Shift += 7) {
      if (Pos >= End)
        return wireError(Start, "the data ends inside a number");
      auto B = Source.byteAt(Pos++);
      if (!B)
        return B.takeError();
      V |= uint64_t(*B & 0x7f) << Shift;
      if (!(*B & 0x80))
        return llvm::Error::success();
    }
    return wireError(Start, "a number longer than 10 bytes");
  }

private:
  llvm::Error skip(uint64_t N) {
    if (N > End - Pos)
      return wireError(Pos, "the data ends inside a field");
    Pos += N;
    return llvm::Error::success();
  }

  ByteSource &Source;
  const uint8_t *Mem;
  uint64_t Pos;
  uint64_t End;
};

void appendVarint(std::string &Out, uint64_t V) {
  while (V >= 0x80) {
    Out.push_back(static_cast<char>((V & 0x7f) | 0x80));
    V >>= 7;
  }
  Out.push_back(static_cast<char>(V));
}

class Stripper {
public:
  Stripper(ByteSource &Source, const StripLimits &Limits)
      : Source(Source), Limits(Limits) {}

  llvm::Expected<StrippedModel> run() {
    StrippedModel Result;
    if (Source.memory()) {
      // Models made for perfc (and most models in a search loop) come
      // without weights: a first walk that writes nothing finds out, and
      // then the bytes are the result as they are. Any error, and any
      // change to make, goes to the copying walk, which says it the usual
      // way.
      Scanning = true;
      llvm::Error E = filterModel({0, Source.size()}, Result.Bytes);
      Scanning = false;
      if (!E && !Changed) {
        Result.Bytes.assign(reinterpret_cast<const char *>(Source.memory()),
                            Source.size());
        Result.Nodes = Nodes;
        return Result;
      }
      // After a clean scan, the copying walk copies every message without
      // a change in it as it is (ChangesAt), and counts no nodes itself.
      ScanClean = !E;
      llvm::consumeError(std::move(E));
      if (!ScanClean)
        Nodes = 0;
      Dropped = 0;
      Depth = 0;
      Level = 0;
      Result.Bytes.reserve(Source.size());
    }
    if (auto E = filterModel({0, Source.size()}, Result.Bytes))
      return std::move(E);
    Result.DroppedBytes = Dropped;
    Result.Nodes = Nodes;
    return Result;
  }

private:
  using FilterFn = llvm::Error (Stripper::*)(Span, std::string &);
  struct FieldFilter {
    uint32_t Number;
    FilterFn Fn;
  };

  /// Copies a message, sending the listed length-delimited fields through
  /// their filters and dropping the fields in Drop.
  llvm::Error copyMessage(Span Msg, std::string &Out,
                          std::initializer_list<FieldFilter> Filters,
                          std::initializer_list<uint32_t> Drop = {}) {
    // Field numbers with a filter or to drop, as bits: most fields of a
    // model have neither, and are passed over with one test.
    uint32_t Special = 0;
    for (const FieldFilter &Filter : Filters)
      Special |= bit(Filter.Number);
    for (uint32_t N : Drop)
      Special |= bit(N);
    Reader R(Source, Msg);
    Field F;
    // Fields copied as they are, side by side: appended in one piece.
    Span Run{Msg.Offset, 0};
    auto Flush = [&]() -> llvm::Error {
      if (!Run.Length)
        return llvm::Error::success();
      return Source.append(Run.Offset, Run.Length, Out);
    };
    while (!R.atEnd()) {
      if (auto E = R.next(F))
        return E;
      FilterFn Fn = nullptr;
      if (Special & bit(F.Number)) {
        if (std::find(Drop.begin(), Drop.end(), F.Number) != Drop.end()) {
          Dropped += F.Raw.Length;
          markChanged(F.Raw.Offset);
          if (auto E = Flush())
            return E;
          Run = {F.Raw.Offset + F.Raw.Length, 0};
          continue;
        }
        for (const FieldFilter &Filter : Filters)
          if (Filter.Number == F.Number && F.Type == LengthDelimited)
            Fn = Filter.Fn;
      }
      if (!Fn || (ScanClean && !changedWithin(F.Payload))) {
        Run.Length += F.Raw.Length;
        continue;
      }
      if (!Scanning)
        if (auto E = Flush())
          return E;
      Run = {F.Raw.Offset + F.Raw.Length, 0};
      // One buffer per nesting level, reused: a model has thousands of
      // nodes and attributes, each filtered into a buffer of its own.
      if (Level == Scratch.size())
        Scratch.emplace_back();
      std::string &Sub = Scratch[Level];
      Sub.clear();
      if (!Scanning)
        Sub.reserve(F.Payload.Length);
      ++Level;
      llvm::Error E = (this->*Fn)(F.Payload, Sub);
      --Level;
      if (E)
        return E;
      if (Scanning)
        continue;
      appendVarint(Out, (uint64_t(F.Number) << 3) | LengthDelimited);
      appendVarint(Out, Sub.size());
      Out += Sub;
    }
    return Scanning ? llvm::Error::success() : Flush();
  }

  /// The bit of field number N in a mask of the numbers below 32 (every
  /// number with a filter is); 0 for the rest.
  static uint32_t bit(uint32_t N) { return N < 32 ? uint32_t(1) << N : 0; }

  llvm::Error filterModel(Span Msg, std::string &Out) {
    // Training-info graphs describe how to train, which perfc derives itself.
    return copyMessage(Msg, Out, {{model::Graph, &Stripper::filterGraph}},
                       {model::TrainingInfo});
  }

  llvm::Error filterGraph(Span Msg, std::string &Out) {
    if (++Depth > Limits.MaxDepth)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "subgraphs nested more than " + llvm::Twine(Limits.MaxDepth) +
              " deep at byte " + llvm::Twine(Msg.Offset));
    llvm::Error E =
        copyMessage(Msg, Out,
                    {{graph::Node, &Stripper::filterNode},
                     {graph::Initializer, &Stripper::filterTensor},
                     {graph::SparseInitializer, &Stripper::filterSparse}});
    --Depth;
    return E;
  }

  llvm::Error filterNode(Span Msg, std::string &Out) {
    // After a clean scan, Nodes holds the scan's count already.
    if (!ScanClean && ++Nodes > Limits.MaxNodes)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "the model has more than " + llvm::Twine(Limits.MaxNodes) +
              " nodes, perfc's limit (raise it with --max-nodes)");
    return copyMessage(Msg, Out,
                       {{node::Attribute, &Stripper::filterAttribute}});
  }

  llvm::Error filterAttribute(Span Msg, std::string &Out) {
    return copyMessage(Msg, Out,
                       {{attribute::T, &Stripper::filterTensor},
                        {attribute::Tensors, &Stripper::filterTensor},
                        {attribute::G, &Stripper::filterGraph},
                        {attribute::Graphs, &Stripper::filterGraph},
                        {attribute::SparseTensor, &Stripper::filterSparse},
                        {attribute::SparseTensors, &Stripper::filterSparse}});
  }

  llvm::Error filterSparse(Span Msg, std::string &Out) {
    return copyMessage(Msg, Out,
                       {{sparse::Values, &Stripper::filterTensor},
                        {sparse::Indices, &Stripper::filterTensor}});
  }

  /// What stripping a tensor keeps: its fields other than the data and
  /// external_data, as runs of the input.
  struct StripPlan {
    llvm::SmallVector<Span, 3> Pieces;
    uint64_t DataBytes = 0; ///< The data fields left out.
    bool External = false;  ///< data_location is EXTERNAL already.
  };

  llvm::Error filterTensor(Span Msg, std::string &Out) {
    // After a clean scan, the copying walk comes here only for the tensors
    // the scan found to strip, and follows the scan's plan.
    if (ScanClean) {
      auto It =
          std::lower_bound(ChangesAt.begin(), ChangesAt.end(), Msg.Offset);
      return writeStripped(Plans[It - ChangesAt.begin()], Out);
    }
    // One pass: element count and type decide whether the data stays, and
    // the fields a stripped copy keeps are noted on the way.
    Reader R(Source, Msg);
    Field F;
    uint64_t Elements = 1, DataType = 0;
    bool HasData = false, HasExternalData = false;
    StripPlan Plan;
    Span Run{Msg.Offset, 0};
    auto MulDim = [&Elements](uint64_t D) {
      // Saturate: an absurd dim only needs to read as "large" here; the
      // importer rejects it with a proper message.
      if (D != 0 && Elements > UINT64_MAX / D)
        Elements = UINT64_MAX;
      else
        Elements *= D;
    };
    while (!R.atEnd()) {
      if (auto E = R.next(F))
        return E;
      // Where the weights were (external_data: location, offset, length
      // strings, three per tensor in a file saved with external data): no
      // part of perfc reads them, and parsing them cost a quarter of the
      // protobuf parse of a stripped CNN. Not counted as dropped data.
      const bool Data = isDataField(F.Number);
      if (Data || F.Number == tensor::ExternalData) {
        if (Data)
          Plan.DataBytes += F.Raw.Length;
        if (Run.Length)
          Plan.Pieces.push_back(Run);
        Run = {F.Raw.Offset + F.Raw.Length, 0};
      } else {
        Run.Length += F.Raw.Length;
      }
      if (F.Number == tensor::Dims && F.Type == Varint) {
        MulDim(F.Int);
      } else if (F.Number == tensor::Dims && F.Type == LengthDelimited) {
        Reader Packed(Source, F.Payload);
        while (!Packed.atEnd()) {
          uint64_t D = 0;
          if (auto E = Packed.readVarint(D))
            return E;
          MulDim(D);
        }
      } else if (F.Number == tensor::DataType && F.Type == Varint) {
        DataType = F.Int;
      } else if (F.Number == tensor::DataLocation && F.Type == Varint) {
        Plan.External = F.Int == tensor::LocationExternal;
      } else if (F.Number == tensor::ExternalData) {
        HasExternalData = true;
      } else {
        HasData |= Data;
      }
    }
    if (Run.Length)
      Plan.Pieces.push_back(Run);
    bool Keep =
        Elements <= Limits.KeptAnyElements ||
        (isIntegerDataType(DataType) && Elements <= Limits.KeptIntElements);
    if (Keep)
      return Scanning ? llvm::Error::success()
                      : Source.append(Msg.Offset, Msg.Length, Out);
    if (Scanning) {
      if (!Plan.External || HasData || HasExternalData) {
        markChanged(Msg.Offset);
        Plans.back() = std::move(Plan);
      }
      return llvm::Error::success();
    }
    return writeStripped(Plan, Out);
  }

  /// Writes a tensor without its data, marked as stored externally.
  llvm::Error writeStripped(const StripPlan &Plan, std::string &Out) {
    for (const Span &P : Plan.Pieces)
      if (auto E = Source.append(P.Offset, P.Length, Out))
        return E;
    Dropped += Plan.DataBytes;
    if (!Plan.External) {
      appendVarint(Out, (uint64_t(tensor::DataLocation) << 3) | Varint);
      appendVarint(Out, tensor::LocationExternal);
    }
    return llvm::Error::success();
  }

  ByteSource &Source;
  const StripLimits &Limits;
  uint64_t Dropped = 0;
  uint64_t Nodes = 0;
  unsigned Depth = 0;
  /// Filter buffers by nesting level (a deque: references stay valid).
  std::deque<std::string> Scratch;
  size_t Level = 0;
  /// The scan found a change at Offset (the start of a tensor to strip or
  /// of a field to drop); offsets come in increasing order.
  void markChanged(uint64_t Offset) {
    Changed = true;
    if (Scanning) {
      ChangesAt.push_back(Offset);
      Plans.emplace_back();
    }
  }

  /// Whether the scan found a change inside S.
  bool changedWithin(Span S) const {
    auto It = std::lower_bound(ChangesAt.begin(), ChangesAt.end(), S.Offset);
    return It != ChangesAt.end() && *It < S.Offset + S.Length;
  }

  /// The first walk over memory: nothing written, Changed says whether
  /// the copy would differ from the input.
  bool Scanning = false;
  bool Changed = false;
  /// The scan ran to the end without an error: ChangesAt is complete.
  bool ScanClean = false;
  std::vector<uint64_t> ChangesAt;
  /// For each change, the plan of the tensor to strip (empty for a field
  /// to drop).
  std::vector<StripPlan> Plans;
};

} // namespace

llvm::Expected<StrippedModel> stripWeights(llvm::StringRef Wire,
                                           const StripLimits &Limits) {
  ByteSource Source(Wire);
  return Stripper(Source, Limits).run();
}

llvm::Expected<StrippedModel> stripWeightsFromFile(int FD, uint64_t Size,
                                                   const StripLimits &Limits) {
  ByteSource Source(FD, Size);
  return Stripper(Source, Limits).run();
}

} // namespace perfc::frontend
