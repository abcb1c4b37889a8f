//===- DeviceParser.cpp - Parse device descriptions -----------------------===//
//
// FileParser's device parts: compute units and their peaks, memory levels,
// efficiencies (with their curves), supported classes and types, and the
// sources that links and clusters cite too.
//
//===----------------------------------------------------------------------===//
#include "hwdb/FileParser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/YAMLParser.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace yaml = llvm::yaml;

namespace perfc::hw::detail {

llvm::Expected<Device> FileParser::parseDevice(yaml::Node *N) {
  Device D;
  llvm::SMLoc MemoryLoc, AlignLoc;
  static const KeySpec Keys[] = {
      {"name", true, "a100-sxm4-80gb"},
      {"kind", true, "gpu"},
      {"vendor", false, "NVIDIA"},
      {"description", false, "NVIDIA A100 SXM4 80GB"},
      {"cores", false, "108"},
      {"clock", false, "1410 MHz"},
      {"simd_width", false, "512 bits"},
      {"fma_units", false, "2"},
      {"gemm_tile", false, "[128, 128]"},
      {"compute", true, "{vector: {fp32: 19.5 TFLOPS}}"},
      {"memory", true,
       "[{name: HBM2e, capacity: 80 GB, bandwidth: 2039 GB/s}]"},
      {"launch_overhead", true, "5 us"},
      {"efficiency", true, "{default: {compute: 0.5, memory: 0.8}}"},
      {"winograd_tile", false, "2"},
      {"conv_channel_block", false, "16"},
      {"conv_channel_align", false, "4"},
      {"conv_activations", false, "[Relu, Clip, Sigmoid]"},
      {"matrix_conv_layout", false, "nhwc"},
      {"supports", false, "{op_classes: [conv, gemm], dtypes: [int8, fp16]}"},
      {"sources", false, "[{url: https://..., gives: peak FLOPS}]"},
  };
  llvm::Error E = walkMapping(
      N, "device", Keys,
      [&](llvm::StringRef Key, llvm::SMLoc, yaml::Node *V) -> llvm::Error {
        if (Key == "name") {
          auto S = identifier(V, Key);
          if (!S)
            return S.takeError();
          D.Name = std::move(*S);
        } else if (Key == "kind") {
          auto S = text(V, Key, "gpu");
          if (!S)
            return S.takeError();
          const llvm::StringRef Kinds[] = {"gpu", "cpu", "npu", "dsp"};
          const auto *It = llvm::find(Kinds, *S);
          if (It == std::end(Kinds))
            return errorAt(V, llvm::formatv("unknown device kind '{0}'; {1}"
                                            "use one of gpu, cpu, npu, dsp",
                                            *S, didYouMean(*S, Kinds)));
          D.Kind = static_cast<DeviceKind>(It - std::begin(Kinds));
        } else if (Key == "vendor" || Key == "description") {
          auto S = text(V, Key, Key == "vendor" ? "NVIDIA" : "...");
          if (!S)
            return S.takeError();
          (Key == "vendor" ? D.Vendor : D.Description) = std::move(*S);
        } else if (Key == "cores" || Key == "fma_units") {
          auto C = count(V, Key, /*AllowZero=*/false);
          if (!C)
            return C.takeError();
          (Key == "cores" ? D.Cores : D.FmaUnits) = *C;
        } else if (Key == "clock") {
          auto M = quantity(V, Key, Quantity::Frequency);
          if (!M)
            return M.takeError();
          D.ClockHz = M->Value;
        } else if (Key == "simd_width") {
          auto M = quantity(V, Key, Quantity::Bits);
          if (!M)
            return M.takeError();
          D.SimdWidthBits = static_cast<unsigned>(std::min(M->Value, 1e6));
        } else if (Key == "gemm_tile") {
          auto *Seq = llvm::dyn_cast<yaml::SequenceNode>(V);
          llvm::SmallVector<unsigned, 2> Dims;
          if (Seq)
            for (yaml::Node &Item : *Seq) {
              auto C = count(&Item, Key, /*AllowZero=*/false);
              if (!C)
                return C.takeError();
              Dims.push_back(*C);
            }
          if (Dims.size() != 2)
            return errorAt(V, "'gemm_tile' must be a list of two positive "
                              "counts, rows and columns, e.g. [128, 128]");
          D.GemmTileM = Dims[0];
          D.GemmTileN = Dims[1];
        } else if (Key == "compute") {
          return parseCompute(V, D);
        } else if (Key == "memory") {
          MemoryLoc = V->getSourceRange().Start;
          return parseMemory(V, D);
        } else if (Key == "launch_overhead") {
          auto M = quantity(V, Key, Quantity::Time);
          if (!M)
            return M.takeError();
          D.LaunchOverheadSeconds = M->Value;
        } else if (Key == "winograd_tile") {
          auto C = count(V, Key, /*AllowZero=*/false);
          if (!C)
            return C.takeError();
          if (*C > 6)
            return errorAt(V, "'winograd_tile' is the output tile m of "
                              "F(m x m, 3x3), 1 to 6 (larger tiles lose "
                              "accuracy; libraries use 2 or 4)");
          D.WinogradTile = *C;
        } else if (Key == "conv_channel_block" || Key == "conv_channel_align") {
          auto C = count(V, Key, /*AllowZero=*/false);
          if (!C)
            return C.takeError();
          if (*C > 1024)
            return errorAt(
                V, llvm::formatv("'{0}' is a channel count of the CPU "
                                 "runtime's direct convolution kernels (a "
                                 "block is the vector width in floats: 8 "
                                 "for AVX2, 16 for AVX-512); at most 1024",
                                 Key));
          if (Key == "conv_channel_align")
            AlignLoc = V->getSourceRange().Start;
          (Key == "conv_channel_block" ? D.ConvChannelBlock
                                       : D.ConvChannelAlign) = *C;
        } else if (Key == "conv_activations") {
          return parseConvActivations(V, D);
        } else if (Key == "matrix_conv_layout") {
          auto S = text(V, Key, "nhwc");
          if (!S)
            return S.takeError();
          auto L = parseConvLayout(*S);
          if (!L)
            return errorAt(V, llvm::formatv("unknown layout '{0}' for "
                                            "'matrix_conv_layout'; use nchw, "
                                            "nhwc or native",
                                            *S));
          D.MatrixConvLayout = *L;
        } else if (Key == "efficiency") {
          return parseEfficiency(V, D);
        } else if (Key == "supports") {
          return parseSupports(V, D);
        } else if (Key == "sources") {
          return parseSources(V, D.Sources);
        }
        return llvm::Error::success();
      });
  if (E)
    return E;
  if (D.ConvChannelAlign > 0 &&
      (D.ConvChannelBlock == 0 || D.ConvChannelAlign > D.ConvChannelBlock))
    return errorAt(
        AlignLoc,
        llvm::formatv("'conv_channel_align' ({0}) pads channel "
                      "counts to whole blocks, so it needs "
                      "'conv_channel_block' and must not exceed "
                      "it{1}",
                      D.ConvChannelAlign,
                      D.ConvChannelBlock
                          ? llvm::formatv(" ({0})", D.ConvChannelBlock).str()
                          : std::string("; add e.g. "
                                        "'conv_channel_block: 16'")));
  if (D.mainMemory().BandwidthBytesPerSecond <= 0)
    return errorAt(MemoryLoc,
                   llvm::formatv("main memory '{0}' (the first memory level) "
                                 "has no bandwidth; add e.g. 'bandwidth: 2039 "
                                 "GB/s' (caches may omit it, main memory may "
                                 "not)",
                                 D.mainMemory().Name));
  return D;
}

namespace {

/// DType keys of `compute`; "fp8" stands for both fp8 encodings, which
/// every current accelerator runs at the same rate.
llvm::SmallVector<ir::DType, 2> parseDTypeKey(llvm::StringRef Key) {
  if (Key == "fp8")
    return {ir::DType::F8E4M3, ir::DType::F8E5M2};
  if (auto T = ir::parseDType(Key))
    if (*T != ir::DType::Bool && *T != ir::DType::String &&
        *T != ir::DType::C64 && *T != ir::DType::C128)
      return {*T};
  return {};
}

const llvm::StringRef DTypeKeys[] = {
    "fp64", "fp32",  "tf32",  "fp16",   "bf16",  "fp8",    "fp8e4m3", "fp8e5m2",
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",   "uint64"};

} // namespace

llvm::Error FileParser::parseCompute(yaml::Node *N, Device &D) {
  static const KeySpec Units[] = {
      {"tensor", false, "{fp16: 312 TFLOPS}"},
      {"matrix", false, "{bf16: 1307 TFLOPS}"},
      {"vector", false, "{fp32: 19.5 TFLOPS}"},
      {"simd", false, "{fp32: 2.1 TFLOPS}"},
  };
  if (llvm::Error E = walkMapping(
          N, "compute", Units,
          [&](llvm::StringRef UnitName, llvm::SMLoc UnitLoc,
              yaml::Node *V) -> llvm::Error {
            ComputeUnit U;
            U.Kind =
                static_cast<UnitKind>(llvm::find_if(Units,
                                                    [&](const KeySpec &S) {
                                                      return S.Name == UnitName;
                                                    }) -
                                      std::begin(Units));
            auto *M = llvm::dyn_cast<yaml::MappingNode>(V);
            if (!M)
              return errorAt(V, llvm::formatv("compute unit '{0}' must map "
                                              "element types to peaks, not "
                                              "be {1}; write e.g. '{0}: "
                                              "{{fp16: 312 TFLOPS}'",
                                              UnitName, describe(V)));
            for (yaml::KeyValueNode &KV : *M) {
              yaml::Node *K = KV.getKey();
              if (Diag || !K)
                return Diag ? diagError()
                            : errorAt(M, "invalid YAML: an entry without a "
                                         "key; write 'key: value'");
              llvm::SmallString<16> KeyStorage;
              auto Key = scalar(K, "element type", "fp16", KeyStorage);
              if (!Key)
                return Key.takeError();
              const auto Types = parseDTypeKey(*Key);
              if (Types.empty()) {
                if (*Key == "int4" || *Key == "uint4")
                  return errorAt(
                      K, llvm::formatv("'{0}' cannot be expressed: perfc's "
                                       "IR has no 4-bit types yet; leave "
                                       "this peak out",
                                       *Key));
                return errorAt(K, llvm::formatv("unknown element type '{0}' in "
                                                "compute unit '{1}'; {2}use "
                                                "one of {3}",
                                                *Key, UnitName,
                                                didYouMean(*Key, DTypeKeys),
                                                joined(DTypeKeys)));
              }
              for (ir::DType T : Types)
                if (U.peak(T))
                  return errorAt(
                      K, llvm::formatv("duplicate element type '{0}' in "
                                       "compute unit '{1}' ('fp8' covers "
                                       "fp8e4m3 and fp8e5m2); keep only one",
                                       ir::name(T), UnitName));
              yaml::Node *PV = KV.getValue();
              if (Diag)
                return diagError();
              if (!PV || llvm::isa<yaml::NullNode>(PV))
                return errorAt(K, llvm::formatv("'{0}' has no value; write "
                                                "e.g. '{0}: 312 TFLOPS'",
                                                *Key));
              auto Peak = quantity(PV, *Key, Quantity::Throughput);
              if (!Peak)
                return Peak.takeError();
              // An integer peak in FLOPS (or a float one in OPS) is most
              // often a line copied from the wrong row of a datasheet.
              const bool IntType = ir::isInteger(Types.front());
              if (Peak->CountsOps != IntType)
                return errorAt(
                    PV,
                    llvm::formatv("{0} peak is given in {1}; {0} throughput is "
                                  "counted in {2}, e.g. '{0}: {3}'",
                                  *Key, IntType ? "FLOPS" : "OPS",
                                  IntType ? "operations (OPS, TOPS)"
                                          : "floating-point operations (FLOPS)",
                                  IntType ? "624 TOPS" : "312 TFLOPS"));
              for (ir::DType T : Types)
                U.Peaks.emplace_back(T, Peak->Value);
            }
            if (Diag)
              return diagError();
            if (U.Peaks.empty())
              return errorAt(UnitLoc, llvm::formatv("compute unit '{0}' lists "
                                                    "no element types; add "
                                                    "e.g. 'fp32: 19.5 TFLOPS'",
                                                    UnitName));
            D.Units.push_back(std::move(U));
            return llvm::Error::success();
          }))
    return E;
  if (D.Units.empty())
    return errorAt(N, "'compute' lists no units; add e.g. 'vector: {fp32: "
                      "19.5 TFLOPS}'");
  return llvm::Error::success();
}

llvm::Error FileParser::parseMemory(yaml::Node *N, Device &D) {
  if (llvm::Error E = expectSequence(
          N, "memory",
          "[{name: HBM2e, capacity: 80 GB, bandwidth: 2039 GB/s}]"))
    return E;
  static const KeySpec Keys[] = {
      {"name", true, "HBM2e"},
      {"capacity", true, "80 GB"},
      {"bandwidth", false, "2039 GB/s"},
  };
  if (llvm::Error E = forEachItem(N, [&](yaml::Node *Item) -> llvm::Error {
        MemoryLevel L;
        if (llvm::Error E = walkMapping(
                Item, "memory level", Keys,
                [&](llvm::StringRef Key, llvm::SMLoc,
                    yaml::Node *V) -> llvm::Error {
                  if (Key == "name") {
                    auto S = text(V, Key, "HBM2e");
                    if (!S)
                      return S.takeError();
                    L.Name = std::move(*S);
                    return llvm::Error::success();
                  }
                  const bool Cap = Key == "capacity";
                  auto M = quantity(
                      V, Key, Cap ? Quantity::Capacity : Quantity::Bandwidth);
                  if (!M)
                    return M.takeError();
                  (Cap ? L.CapacityBytes : L.BandwidthBytesPerSecond) =
                      M->Value;
                  return llvm::Error::success();
                }))
          return E;
        D.Memory.push_back(std::move(L));
        return llvm::Error::success();
      }))
    return E;
  if (Diag)
    return diagError();
  if (D.Memory.empty())
    return errorAt(N, "'memory' is empty; list main memory first, e.g. "
                      "'- {name: HBM2e, capacity: 80 GB, bandwidth: 2039 "
                      "GB/s}'");
  return llvm::Error::success();
}

llvm::Expected<EfficiencyCurve>
FileParser::parseCurve(yaml::Node *N, llvm::StringRef Key, Quantity Q) {
  EfficiencyCurve C;
  if (!llvm::isa<yaml::SequenceNode>(N)) {
    auto F = fraction(N, Key);
    if (!F)
      return F.takeError();
    C.Constant = *F;
    return C;
  }
  const llvm::StringRef Example = Q == Quantity::Work
                                      ? "[[1 GFLOP, 0.3], [1 TFLOP, 0.8]]"
                                      : "[[1 MB, 0.3], [1 GB, 0.85]]";
  if (llvm::Error E = forEachItem(N, [&](yaml::Node *Item) -> llvm::Error {
        auto *Pair = llvm::dyn_cast<yaml::SequenceNode>(Item);
        if (!Pair)
          return errorAt(Item, llvm::formatv("a point of the '{0}' curve must "
                                             "be a pair [size, efficiency], "
                                             "not {1}; write e.g. '{0}: {2}'",
                                             Key, describe(Item), Example));
        llvm::SmallVector<yaml::Node *, 2> Parts;
        for (yaml::Node &Part : *Pair) {
          if (Parts.size() == 2)
            return errorAt(&Part, llvm::formatv("a point of the '{0}' curve "
                                                "has more than two values; "
                                                "write [size, efficiency]",
                                                Key));
          // Each part is read as it is reached: iterating on would skip it.
          if (Parts.empty()) {
            auto Size = quantity(&Part, Key, Q);
            if (!Size)
              return Size.takeError();
            if (!C.Points.empty() && Size->Value <= C.Points.back().first)
              return errorAt(&Part, llvm::formatv("the points of the '{0}' "
                                                  "curve must grow in size; "
                                                  "sort them ascending",
                                                  Key));
            C.Points.emplace_back(Size->Value, 0);
          } else {
            auto F = fraction(&Part, Key);
            if (!F)
              return F.takeError();
            C.Points.back().second = *F;
          }
          Parts.push_back(&Part);
        }
        if (Diag)
          return diagError();
        if (Parts.size() != 2)
          return errorAt(Item, llvm::formatv("a point of the '{0}' curve "
                                             "needs two values; write "
                                             "[size, efficiency]",
                                             Key));
        return llvm::Error::success();
      }))
    return E;
  if (Diag)
    return diagError();
  if (C.Points.size() < 2)
    return errorAt(N, llvm::formatv("the '{0}' curve needs at least two "
                                    "points, or use a single fraction; "
                                    "write e.g. '{0}: {1}'",
                                    Key, Example));
  C.Constant = C.Points.back().second;
  return C;
}

llvm::Error FileParser::parseEfficiency(yaml::Node *N, Device &D) {
  llvm::SmallVector<KeySpec, NumOpClasses + 1> Keys;
  Keys.push_back({"default", true, "{compute: 0.5, memory: 0.8}"});
  for (size_t I = 0; I < NumOpClasses; ++I)
    Keys.push_back(
        {opClassKey(static_cast<OpClass>(I)), false, "{compute: 0.75}"});
  // Not a class: a kind of conv that CPU runtimes run with other kernels.
  Keys.push_back({"depthwise_conv", false, "{compute: 0.1}"});
  // Nor this: GEMMs fused with a softmax (FlashAttention).
  Keys.push_back({"fused_attention", false, "{compute: 0.35}"});
  struct Entry {
    llvm::Optional<EfficiencyCurve> Compute, Memory, VectorCompute;
    double SecondsPerOutput = 0;
    double SecondsPerStridedElement = 0;
  };
  Entry Default;
  llvm::Optional<Entry> Depthwise, Attention;
  std::array<llvm::Optional<Entry>, NumOpClasses> Classes;
  static const KeySpec DefaultKeys[] = {
      {"compute", false, "0.75"},
      {"memory", false, "0.85"},
  };
  // An op class may give its kernels on the vector units (CUDA cores
  // beside tensor cores) their own compute efficiency.
  static const KeySpec EntryKeys[] = {
      {"compute", false, "0.75"},
      {"memory", false, "0.85"},
      {"vector_compute", false, "0.9"},
  };
  // Data movement may give the time per element of a transpose the runtime
  // copies one element at a time.
  static const KeySpec DataMovementKeys[] = {
      {"compute", false, "0.75"},
      {"memory", false, "0.85"},
      {"vector_compute", false, "0.9"},
      {"time_per_strided_element", false, "4 ns"},
  };
  // Depthwise convolutions also take a time per output element.
  static const KeySpec DepthwiseKeys[] = {
      {"compute", false, "0.75"},
      {"memory", false, "0.85"},
      {"time_per_output", false, "0.45 ns"},
  };
  if (llvm::Error E = walkMapping(
          N, "efficiency", Keys,
          [&](llvm::StringRef Class, llvm::SMLoc ClassLoc,
              yaml::Node *V) -> llvm::Error {
            Entry En;
            const std::string What =
                llvm::formatv("efficiency '{0}'", Class).str();
            const llvm::ArrayRef<KeySpec> Allowed =
                Class == "depthwise_conv" ? llvm::makeArrayRef(DepthwiseKeys)
                : Class == "default"      ? llvm::makeArrayRef(DefaultKeys)
                : Class == "data_movement"
                    ? llvm::makeArrayRef(DataMovementKeys)
                    : llvm::makeArrayRef(EntryKeys);
            if (llvm::Error E = walkMapping(
                    V, What, Allowed,
                    [&](llvm::StringRef Key, llvm::SMLoc,
                        yaml::Node *EV) -> llvm::Error {
                      if (Key == "time_per_output" ||
                          Key == "time_per_strided_element") {
                        auto M = quantity(EV, Key, Quantity::Time);
                        if (!M)
                          return M.takeError();
                        // Zero would silently drop the term; a negative
                        // or infinite time is no time.
                        const bool PerOutput = Key == "time_per_output";
                        if (!(M->Value > 0) || !std::isfinite(M->Value))
                          return errorAt(
                              EV, llvm::formatv(
                                      "'{0}' must be a positive time per "
                                      "{1} element; write e.g. '{0}: {2}', "
                                      "or leave the key out",
                                      Key, PerOutput ? "output" : "copied",
                                      PerOutput ? "0.45 ns" : "4 ns"));
                        (PerOutput ? En.SecondsPerOutput
                                   : En.SecondsPerStridedElement) = M->Value;
                        return llvm::Error::success();
                      }
                      const bool IsMemory = Key == "memory";
                      auto C = parseCurve(EV, Key,
                                          IsMemory ? Quantity::Capacity
                                                   : Quantity::Work);
                      if (!C)
                        return C.takeError();
                      (Key == "compute" ? En.Compute
                       : IsMemory       ? En.Memory
                                        : En.VectorCompute) = std::move(*C);
                      return llvm::Error::success();
                    }))
              return E;
            if (Class == "default") {
              if (!En.Compute || !En.Memory)
                return errorAt(
                    ClassLoc, llvm::formatv("efficiency 'default' needs both "
                                            "'compute' and 'memory'; add "
                                            "'{0}: 0.8'",
                                            En.Compute ? "memory" : "compute"));
              Default = std::move(En);
            } else if (Class == "depthwise_conv") {
              Depthwise = std::move(En);
            } else if (Class == "fused_attention") {
              Attention = std::move(En);
            } else {
              Classes[static_cast<size_t>(*parseOpClassKey(Class))] =
                  std::move(En);
            }
            return llvm::Error::success();
          }))
    return E;
  for (size_t I = 0; I < NumOpClasses; ++I) {
    ClassEfficiency &CE = D.Efficiencies[I];
    const Entry *En = Classes[I] ? &*Classes[I] : nullptr;
    CE.Explicit = En != nullptr;
    CE.Compute = En && En->Compute ? *En->Compute : *Default.Compute;
    CE.Memory = En && En->Memory ? *En->Memory : *Default.Memory;
    if (En)
      CE.VectorCompute = En->VectorCompute;
  }
  if (const auto &Moves = Classes[static_cast<size_t>(OpClass::DataMovement)])
    D.StridedCopySecondsPerElement = Moves->SecondsPerStridedElement;
  // An entry beside a class (depthwise_conv beside conv, fused_attention
  // beside gemm): the sides it gives, the class's where it leaves one out;
  // the vector units' curve from Vector where the entry has none.
  auto Apart = [](const Entry &En, const ClassEfficiency &Base,
                  const llvm::Optional<EfficiencyCurve> &Vector) {
    ClassEfficiency E;
    E.Explicit = true;
    E.Compute = En.Compute ? *En.Compute : Base.Compute;
    E.Memory = En.Memory ? *En.Memory : Base.Memory;
    E.VectorCompute = En.VectorCompute ? En.VectorCompute : Vector;
    return E;
  };
  if (Depthwise) {
    // depthwise_conv takes no vector_compute, and inherits none.
    D.DepthwiseConv =
        Apart(*Depthwise, D.efficiency(OpClass::Conv), llvm::None);
    D.DepthwiseSecondsPerOutput = Depthwise->SecondsPerOutput;
  }
  if (Attention) {
    const ClassEfficiency &Gemm = D.efficiency(OpClass::Gemm);
    D.FusedAttention = Apart(*Attention, Gemm, Gemm.VectorCompute);
  }
  return llvm::Error::success();
}

llvm::Error FileParser::parseConvActivations(yaml::Node *N, Device &D) {
  // ONNX's elementwise activations: a kernel could apply any of them in
  // its registers; a name outside them is a typo.
  static const llvm::StringRef Known[] = {
      "Relu",     "LeakyRelu",   "PRelu",     "Tanh", "Sigmoid",
      "Clip",     "HardSigmoid", "HardSwish", "Elu",  "Selu",
      "Softplus", "Softsign",    "Gelu",      "Mish", "ThresholdedRelu"};
  const char *Example = "[Relu, LeakyRelu, Tanh, Sigmoid, Clip, HardSigmoid]";
  if (llvm::Error E = expectSequence(N, "conv_activations", Example))
    return E;
  if (llvm::Error E = forEachItem(N, [&](yaml::Node *Item) -> llvm::Error {
        llvm::SmallString<16> Storage;
        auto S = scalar(Item, "conv_activations", "Relu", Storage);
        if (!S)
          return S.takeError();
        if (!llvm::is_contained(Known, *S))
          return errorAt(
              Item, llvm::formatv("unknown activation '{0}' in "
                                  "'conv_activations'; {1}use ONNX op "
                                  "types: {2}",
                                  *S, didYouMean(*S, Known), joined(Known)));
        D.ConvActivations.push_back(S->str());
        return llvm::Error::success();
      }))
    return E;
  if (Diag)
    return diagError();
  return llvm::Error::success();
}

llvm::Error FileParser::parseSupports(yaml::Node *N, Device &D) {
  static const KeySpec Keys[] = {
      {"op_classes", false, "[conv, gemm]"},
      {"dtypes", false, "[int8, fp16]"},
  };
  return walkMapping(
      N, "supports", Keys,
      [&](llvm::StringRef Key, llvm::SMLoc, yaml::Node *V) -> llvm::Error {
        const bool Classes = Key == "op_classes";
        if (llvm::Error E =
                expectSequence(V, Key, Keys[Classes ? 0 : 1].Example))
          return E;
        std::vector<llvm::StringRef> ClassNames;
        for (size_t I = 0; I < NumOpClasses; ++I)
          ClassNames.push_back(opClassKey(static_cast<OpClass>(I)));
        if (llvm::Error E =
                forEachItem(V, [&](yaml::Node *Item) -> llvm::Error {
                  llvm::SmallString<16> Storage;
                  auto S =
                      scalar(Item, Key, Classes ? "gemm" : "int8", Storage);
                  if (!S)
                    return S.takeError();
                  if (Classes) {
                    auto C = parseOpClassKey(*S);
                    if (!C)
                      return errorAt(
                          Item, llvm::formatv("unknown op class '{0}'; {1}use "
                                              "one of {2}",
                                              *S, didYouMean(*S, ClassNames),
                                              joined(ClassNames)));
                    D.Supports.OpClasses.push_back(*C);
                    return llvm::Error::success();
                  }
                  const auto Types = parseDTypeKey(*S);
                  if (Types.empty())
                    return errorAt(Item,
                                   llvm::formatv("unknown element type "
                                                 "'{0}'; {1}use one of {2}",
                                                 *S, didYouMean(*S, DTypeKeys),
                                                 joined(DTypeKeys)));
                  D.Supports.DTypes.append(Types.begin(), Types.end());
                  return llvm::Error::success();
                }))
          return E;
        if (Diag)
          return diagError();
        if ((Classes ? D.Supports.OpClasses.size()
                     : D.Supports.DTypes.size()) == 0)
          return errorAt(V, llvm::formatv("'{0}' is empty; list what the "
                                          "device runs or leave the key out",
                                          Key));
        return llvm::Error::success();
      });
}

llvm::Error FileParser::parseSources(yaml::Node *N, std::vector<Source> &Out) {
  if (llvm::Error E = expectSequence(N, "sources",
                                     "[{url: https://..., gives: peak FLOPS}]"))
    return E;
  static const KeySpec Keys[] = {
      {"url", false, "https://www.nvidia.com/..."},
      {"document", false, "NVIDIA A100 Tensor Core GPU Architecture, p. 36"},
      {"gives", true, "peak FLOPS per dtype"},
  };
  if (llvm::Error E = forEachItem(N, [&](yaml::Node *Item) -> llvm::Error {
        Source S;
        if (llvm::Error E =
                walkMapping(Item, "source", Keys,
                            [&](llvm::StringRef Key, llvm::SMLoc,
                                yaml::Node *V) -> llvm::Error {
                              auto T = text(V, Key, Keys[0].Example);
                              if (!T)
                                return T.takeError();
                              (Key == "url"        ? S.Url
                               : Key == "document" ? S.Document
                                                   : S.Gives) = std::move(*T);
                              return llvm::Error::success();
                            }))
          return E;
        if (S.Url.empty() == S.Document.empty())
          return errorAt(Item, "a source needs exactly one of 'url' or "
                               "'document'; name where the figures come from");
        Out.push_back(std::move(S));
        return llvm::Error::success();
      }))
    return E;
  if (Diag)
    return diagError();
  return llvm::Error::success();
}

} // namespace perfc::hw::detail
