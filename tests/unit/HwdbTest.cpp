//===- HwdbTest.cpp - Hardware descriptions: units, loader, bundled -------===//
#include "hwdb/Loader.h"
#include "hwdb/Print.h"
#include "hwdb/Units.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

using namespace perfc;
using namespace perfc::hw;

namespace {

/// A minimal valid device; tests edit single lines of it.
const char *const ValidDevice = R"(device:
  name: test-gpu
  kind: gpu
  compute:
    tensor: {fp16: 100 TFLOPS}
    vector: {fp32: 10 TFLOPS}
  memory:
    - {name: HBM, capacity: 16 GB, bandwidth: 1000 GB/s}
  launch_overhead: 5 us
  efficiency:
    default: {compute: 0.5, memory: 0.8}
)";

std::string replaced(llvm::StringRef From, llvm::StringRef To) {
  std::string S = ValidDevice;
  const size_t At = S.find(From.str());
  REQUIRE(At != std::string::npos);
  S.replace(At, From.size(), To.str());
  return S;
}

/// The error message of loading Text, which must fail.
std::string errorOf(llvm::StringRef Text) {
  auto C = loadHardwareFromString(Text, "test.yaml");
  if (C) {
    FAIL("expected an error for:\n" << Text.str());
    return "";
  }
  const std::string Msg = llvm::toString(C.takeError());
  // Every error is one line.
  CHECK(Msg.find('\n') == std::string::npos);
  return Msg;
}

bool startsWith(const std::string &S, llvm::StringRef Prefix) {
  return llvm::StringRef(S).startswith(Prefix);
}

/// Checks that a message starts with Prefix and shows it in full if not.
#define CHECK_STARTS(Message, Prefix)                                          \
  do {                                                                         \
    const std::string Actual = (Message);                                      \
    CHECK_MESSAGE(startsWith(Actual, Prefix), "actual: " << Actual);           \
  } while (false)

double quantity(llvm::StringRef Text, Quantity Q) {
  auto M = parseQuantity(Text, Q);
  REQUIRE_MESSAGE(bool(M), Text.str());
  return M->Value;
}

std::string quantityError(llvm::StringRef Text, Quantity Q) {
  auto M = parseQuantity(Text, Q);
  if (M) {
    FAIL("expected an error for " << Text.str());
    return "";
  }
  return llvm::toString(M.takeError());
}

std::string testDataDir() {
  // PERFC_SOURCE_DIR, not __FILE__: compiler caches and relative builds
  // make __FILE__ relative to the build directory.
  llvm::SmallString<256> Dir(PERFC_SOURCE_DIR);
  llvm::sys::path::append(Dir, "tests", "data", "hwdb");
  return std::string(Dir);
}

} // namespace

TEST_SUITE("hwdb.units") {

  TEST_CASE("throughput, bandwidth, capacity and time parse in base units") {
    CHECK(quantity("312 TFLOPS", Quantity::Throughput) ==
          doctest::Approx(312e12));
    CHECK(quantity("19.5 TFLOPS", Quantity::Throughput) ==
          doctest::Approx(19.5e12));
    CHECK(quantity("1.2 GFLOPS", Quantity::Throughput) ==
          doctest::Approx(1.2e9));
    auto Tops = parseQuantity("624 TOPS", Quantity::Throughput);
    REQUIRE(Tops);
    CHECK(Tops->Value == doctest::Approx(624e12));
    CHECK(Tops->CountsOps);
    CHECK_FALSE(parseQuantity("312 TFLOPS", Quantity::Throughput)->CountsOps);

    CHECK(quantity("2039 GB/s", Quantity::Bandwidth) ==
          doctest::Approx(2039e9));
    CHECK(quantity("600 GB/s", Quantity::Bandwidth) == doctest::Approx(600e9));
    CHECK(quantity("10 GiB/s", Quantity::Bandwidth) ==
          doctest::Approx(10.0 * (1ull << 30)));

    CHECK(quantity("80 GB", Quantity::Capacity) == doctest::Approx(80e9));
    CHECK(quantity("80 GiB", Quantity::Capacity) ==
          doctest::Approx(80.0 * (1ull << 30)));
    CHECK(quantity("40 MB", Quantity::Capacity) == doctest::Approx(40e6));
    CHECK(quantity("512 KiB", Quantity::Capacity) == doctest::Approx(524288));

    CHECK(quantity("5 us", Quantity::Time) == doctest::Approx(5e-6));
    CHECK(quantity("1.5 ns", Quantity::Time) == doctest::Approx(1.5e-9));
    CHECK(quantity("2 ms", Quantity::Time) == doctest::Approx(2e-3));
    CHECK(quantity("0.000005 s", Quantity::Time) == doctest::Approx(5e-6));
    CHECK(quantity("0 s", Quantity::Time) == 0);
    CHECK(quantity("1410 MHz", Quantity::Frequency) == doctest::Approx(1.41e9));
    CHECK(quantity("512 bits", Quantity::Bits) == 512);
    CHECK(quantity("1e3 GB/s", Quantity::Bandwidth) == doctest::Approx(1e12));
  }

  TEST_CASE("bits are not bytes: Gb/s is divided by 8") {
    CHECK(quantity("200 Gb/s", Quantity::Bandwidth) == doctest::Approx(25e9));
    CHECK(quantity("400 Gbit/s", Quantity::Bandwidth) == doctest::Approx(50e9));
    CHECK(quantity("200 Gb/s", Quantity::Bandwidth) * 8 ==
          doctest::Approx(quantity("200 GB/s", Quantity::Bandwidth)));
    // Capacities in bits are refused rather than guessed.
    CHECK(quantityError("16 Gb", Quantity::Capacity).find("bits") !=
          std::string::npos);
  }

  TEST_CASE("GiB is 2^30 and GB is 1e9") {
    const double GiB = quantity("1 GiB", Quantity::Capacity);
    const double GB = quantity("1 GB", Quantity::Capacity);
    CHECK(GiB == 1073741824.0);
    CHECK(GB == 1e9);
  }

  TEST_CASE("units are strict") {
    CHECK(quantityError("2039", Quantity::Bandwidth).find("has no unit") !=
          std::string::npos);
    CHECK(quantityError("2039 GHz", Quantity::Bandwidth)
              .find("'GHz' is a unit of frequency") != std::string::npos);
    CHECK(quantityError("80 GB", Quantity::Bandwidth)
              .find("'GB' is a unit of capacity") != std::string::npos);
    CHECK(quantityError("312 tflops", Quantity::Throughput)
              .find("did you mean 'TFLOPS'") != std::string::npos);
    CHECK(quantityError("-5 GB/s", Quantity::Bandwidth).find("negative") !=
          std::string::npos);
    CHECK(quantityError("0 GB/s", Quantity::Bandwidth).find("zero") !=
          std::string::npos);
    CHECK(
        quantityError("1e400 GB/s", Quantity::Bandwidth).find("out of range") !=
        std::string::npos);
    CHECK(quantityError("1e300 PFLOPS", Quantity::Throughput)
              .find("out of range") != std::string::npos);
    CHECK(quantityError("fast", Quantity::Bandwidth).find("expected a") !=
          std::string::npos);
    CHECK(quantityError("nan GB/s", Quantity::Bandwidth).find("expected a") !=
          std::string::npos);
    CHECK(quantityError("-1 us", Quantity::Time).find("negative") !=
          std::string::npos);
  }

  TEST_CASE("AllowZero takes zero, with its unit or bare, and nothing else") {
    for (const char *Zero : {"0", "0 GiB", "0.0 GB"}) {
      CAPTURE(Zero);
      auto M = parseQuantity(Zero, Quantity::Capacity, /*AllowZero=*/true);
      REQUIRE_MESSAGE(bool(M), llvm::toString(M.takeError()));
      CHECK(M->Value == 0);
    }
    CHECK(quantityError("0 GiB", Quantity::Capacity).find("is zero") !=
          std::string::npos);
    CHECK(quantityError("0", Quantity::Capacity).find("has no unit") !=
          std::string::npos);
    auto Wrong = parseQuantity("0 TFLOPS", Quantity::Capacity, true);
    REQUIRE_FALSE(bool(Wrong));
    CHECK(llvm::toString(Wrong.takeError())
              .find("'TFLOPS' is a unit of throughput") != std::string::npos);
    auto Negative = parseQuantity("-1 GB", Quantity::Capacity, true);
    REQUIRE_FALSE(bool(Negative));
    CHECK(llvm::toString(Negative.takeError()) ==
          "negative capacity '-1 GB'; a capacity must be zero or more");
    CHECK(parseQuantity("2 GiB", Quantity::Capacity, true)->Value ==
          2.0 * (1u << 30));
  }

  TEST_CASE("fractions and counts") {
    CHECK(*parseFraction("0.75") == 0.75);
    CHECK(*parseFraction("1") == 1.0);
    CHECK(llvm::toString(parseFraction("75%").takeError()).find("percentage") !=
          std::string::npos);
    CHECK(llvm::toString(parseFraction("1.2").takeError()).find("(0, 1]") !=
          std::string::npos);
    CHECK(llvm::toString(parseFraction("0").takeError()).find("(0, 1]") !=
          std::string::npos);
    CHECK(*parseCount("8", false) == 8);
    CHECK(llvm::toString(parseCount("0", false).takeError()).find("zero") !=
          std::string::npos);
    CHECK(llvm::toString(parseCount("8.5", false).takeError())
              .find("whole number") != std::string::npos);
    CHECK(llvm::toString(parseCount("99999999999", false).takeError())
              .find("implausibly large") != std::string::npos);
  }

  TEST_CASE("formatting picks a readable prefix") {
    CHECK(formatQuantity(2.039e12, Quantity::Bandwidth) == "2.039 TB/s");
    CHECK(formatQuantity(312e12, Quantity::Throughput) == "312 TFLOPS");
    CHECK(formatQuantity(624e12, Quantity::Throughput, true) == "624 TOPS");
    CHECK(formatQuantity(5e-6, Quantity::Time) == "5 us");
    CHECK(formatQuantity(524288, Quantity::Capacity) == "512 KiB");
    CHECK(formatQuantity(40e6, Quantity::Capacity) == "40 MB");
    CHECK(formatQuantity(3.7e9, Quantity::Work) == "3.7 GFLOP");
  }

} // TEST_SUITE

TEST_SUITE("hwdb.loader") {

  TEST_CASE("a minimal device loads as 1 node x 1 device") {
    auto C = loadHardwareFromString(ValidDevice, "test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    CHECK(C->Name == "test-gpu");
    CHECK(C->numNodes() == 1);
    CHECK(C->numDevices() == 1);
    const Device &D = C->primaryDevice();
    CHECK(D.Kind == DeviceKind::Gpu);
    REQUIRE(D.unit(UnitKind::Tensor));
    CHECK(*D.unit(UnitKind::Tensor)->peak(ir::DType::F16) == 100e12);
    CHECK(D.mainMemory().BandwidthBytesPerSecond == 1000e9);
    CHECK(D.LaunchOverheadSeconds == doctest::Approx(5e-6));
    // Classes not listed inherit `default`.
    CHECK(D.efficiency(OpClass::Gemm).Compute.at(1e9) == 0.5);
    CHECK_FALSE(D.efficiency(OpClass::Gemm).Explicit);
  }

  // One test per kind of validation error, each with its exact location.

  TEST_CASE("error: unknown key, with the closest known key suggested") {
    const std::string Msg =
        errorOf(replaced("bandwidth: 1000", "bandwith: 1000"));
    CHECK_STARTS(Msg, "test.yaml:8:36: unknown key 'bandwith' in memory "
                      "level; did you mean 'bandwidth'?");
  }

  TEST_CASE("error: missing required field") {
    const std::string Msg = errorOf(replaced("  launch_overhead: 5 us\n", ""));
    CHECK_STARTS(Msg, "test.yaml:2:3: device is missing the required key "
                      "'launch_overhead'; add e.g. 'launch_overhead: 5 us'");
  }

  TEST_CASE("error: missing unit") {
    const std::string Msg =
        errorOf(replaced("launch_overhead: 5 us", "launch_overhead: 5"));
    CHECK_STARTS(Msg, "test.yaml:9:20: 'launch_overhead': time '5' has no "
                      "unit; write e.g. '5 us'");
  }

  TEST_CASE("error: wrong unit") {
    const std::string Msg =
        errorOf(replaced("bandwidth: 1000 GB/s", "bandwidth: 1000 GHz"));
    CHECK_STARTS(Msg, "test.yaml:8:47: 'bandwidth': 'GHz' is a unit of "
                      "frequency, but a bandwidth is expected here");
  }

  TEST_CASE("error: wrong unit kind for an integer peak") {
    const std::string Msg =
        errorOf(replaced("fp16: 100 TFLOPS", "int8: 200 TFLOPS"));
    CHECK_STARTS(Msg, "test.yaml:5:20: int8 peak is given in FLOPS");
  }

  TEST_CASE("error: negative bandwidth") {
    const std::string Msg =
        errorOf(replaced("bandwidth: 1000 GB/s", "bandwidth: -1000 GB/s"));
    CHECK_STARTS(Msg, "test.yaml:8:47: 'bandwidth': negative bandwidth "
                      "'-1000 GB/s'; a bandwidth must be greater than zero");
  }

  TEST_CASE("error: zero capacity") {
    const std::string Msg =
        errorOf(replaced("capacity: 16 GB", "capacity: 0 GB"));
    CHECK_STARTS(Msg, "test.yaml:8:29: 'capacity': capacity '0 GB' is zero");
  }

  TEST_CASE("error: efficiency out of range") {
    const std::string Msg =
        errorOf(replaced("{compute: 0.5,", "{compute: 1.5,"));
    CHECK_STARTS(Msg, "test.yaml:11:24: 'compute': efficiency 1.5 is out of "
                      "range; an efficiency is a fraction of peak in (0, 1]");
  }

  TEST_CASE("error: wrong type (a list where a value is expected)") {
    const std::string Msg =
        errorOf(replaced("launch_overhead: 5 us", "launch_overhead: [5 us]"));
    CHECK_STARTS(Msg, "test.yaml:9:20: 'launch_overhead' must be a single "
                      "value, not a list");
  }

  TEST_CASE("error: duplicate key") {
    const std::string Msg =
        errorOf(replaced("  kind: gpu\n", "  kind: gpu\n  kind: cpu\n"));
    CHECK_STARTS(Msg, "test.yaml:4:3: duplicate key 'kind' in device (first "
                      "at line 3); keep only one");
  }

  TEST_CASE("error: unknown device reference") {
    const char *Text = R"(cluster:
  name: c
  nodes:
    - count: 1
      device: a100-sxm4-80g
)";
    const std::string Msg = errorOf(Text);
    CHECK_STARTS(Msg, "test.yaml:5:15: unknown device 'a100-sxm4-80g'; did "
                      "you mean 'a100-sxm4-80gb'?");
  }

  TEST_CASE("error: unknown link reference and a link where a device goes") {
    const char *BadLink = R"(cluster:
  name: c
  nodes:
    - device: t4
      devices_per_node: 2
      intra_node_link: nvlink5
)";
    CHECK_STARTS(errorOf(BadLink), "test.yaml:6:24: unknown link 'nvlink5'; "
                                   "did you mean 'nvlink2'?");
    const char *WrongKind = R"(cluster:
  name: c
  nodes:
    - device: nvlink3
)";
    CHECK_STARTS(errorOf(WrongKind), "test.yaml:4:15: 'nvlink3' is a bundled "
                                     "link, not a device");
  }

  TEST_CASE("error: zero devices") {
    const char *Text = R"(cluster:
  name: c
  nodes:
    - device: t4
      devices_per_node: 0
)";
    CHECK_STARTS(errorOf(Text), "test.yaml:5:25: 'devices_per_node': count "
                                "is zero; it must be at least 1");
  }

  TEST_CASE("error: several devices without an intra-node link") {
    const char *Text = R"(cluster:
  name: c
  nodes:
    - device: t4
      devices_per_node: 4
)";
    CHECK_STARTS(errorOf(Text), "test.yaml:4:7: a node holds 4 devices but "
                                "no 'intra_node_link' joins them");
  }

  TEST_CASE("error: empty file") {
    CHECK_STARTS(errorOf(""), "test.yaml:1:1: file is empty");
    CHECK_STARTS(errorOf("# only a comment\n\n"), "test.yaml:1:1: file is "
                                                  "empty");
  }

  TEST_CASE("error: garbage bytes") {
    const std::string Binary("\x7f"
                             "ELF\x02\x01\x01\x00\x00\x00",
                             10);
    CHECK_STARTS(errorOf(Binary), "test.yaml:1:8: file contains a NUL byte");
    CHECK_STARTS(errorOf("name: \xff\xfe\n"), "test.yaml:1:7: file is not "
                                              "valid UTF-8 text");
    CHECK_STARTS(errorOf("device:\n  name: \"abc\n"),
                 "test.yaml:2:13: invalid YAML: Expected quote at end of "
                 "scalar; fix the syntax here");
  }

  TEST_CASE("error: the file is not a mapping, or names two things") {
    CHECK_STARTS(errorOf("- a\n- b\n"), "test.yaml:1:1: the file holds a "
                                        "list");
    CHECK_STARTS(errorOf("devices: {}\n"), "test.yaml:1:1: unknown key "
                                           "'devices' in the top level; did "
                                           "you mean 'device'?");
    const std::string Two = std::string(ValidDevice) + "link: nvlink3\n";
    CHECK_STARTS(errorOf(Two), "test.yaml:12:1: 'link' follows 'device'");
    const std::string Docs = std::string(ValidDevice) + "---\n" + ValidDevice;
    CHECK_STARTS(errorOf(Docs), "test.yaml:13:1: a second YAML document");
  }

  TEST_CASE("error: aliases, empty values and unknown element types") {
    CHECK(errorOf(replaced("launch_overhead: 5 us", "launch_overhead: *x"))
              .find("alias") != std::string::npos);
    CHECK_STARTS(errorOf(replaced("launch_overhead: 5 us", "launch_overhead:")),
                 "test.yaml:9:3: 'launch_overhead' has no value");
    CHECK_STARTS(errorOf(replaced("fp16: 100 TFLOPS", "fp61: 100 TFLOPS")),
                 "test.yaml:5:14: unknown element type 'fp61' in compute "
                 "unit 'tensor'; did you mean 'fp64'?");
    CHECK(errorOf(replaced("fp16: 100 TFLOPS", "int4: 100 TOPS"))
              .find("no 4-bit types") != std::string::npos);
    CHECK_STARTS(errorOf(replaced("fp16: 100 TFLOPS",
                                  "fp8: 1 TFLOPS, fp8e4m3: 1 TFLOPS")),
                 "test.yaml:5:29: duplicate element type 'fp8e4m3'");
  }

  TEST_CASE("efficiency curves: points must grow, values in range") {
    const std::string Ok =
        replaced("default: {compute: 0.5, memory: 0.8}",
                 "default: {compute: 0.5, memory: 0.8}\n"
                 "    gemm: {compute: [[1 GFLOP, 0.2], [1 TFLOP, 0.8]]}");
    auto C = loadHardwareFromString(Ok, "test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    const EfficiencyCurve &Curve =
        C->primaryDevice().efficiency(OpClass::Gemm).Compute;
    CHECK(Curve.at(1e8) == doctest::Approx(0.2));
    CHECK(Curve.at(1e9) == doctest::Approx(0.2));
    CHECK(Curve.at(std::sqrt(1e9 * 1e12)) == doctest::Approx(0.5));
    CHECK(Curve.at(1e12) == doctest::Approx(0.8));
    CHECK(Curve.at(1e15) == doctest::Approx(0.8));
    // The memory side of gemm inherits default.
    CHECK(C->primaryDevice().efficiency(OpClass::Gemm).Memory.at(1) == 0.8);

    const std::string Unsorted =
        replaced("default: {compute: 0.5, memory: 0.8}",
                 "default: {compute: 0.5, memory: 0.8}\n"
                 "    gemm: {compute: [[1 TFLOP, 0.8], [1 GFLOP, 0.2]]}");
    CHECK_STARTS(errorOf(Unsorted), "test.yaml:12:39: the points of the "
                                    "'compute' curve must grow in size");
  }

  TEST_CASE("vector_compute: an op class's own curve on the vector units") {
    auto With = [](llvm::StringRef Entry) {
      return replaced(
          "default: {compute: 0.5, memory: 0.8}",
          ("default: {compute: 0.5, memory: 0.8}\n    " + Entry).str());
    };
    auto C = loadHardwareFromString(
        With("gemm: {compute: 0.6, vector_compute: [[1 GFLOP, 0.7], "
             "[1 TFLOP, 0.9]]}"),
        "test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    const ClassEfficiency &G = C->primaryDevice().efficiency(OpClass::Gemm);
    REQUIRE(G.VectorCompute.hasValue());
    CHECK(G.compute(/*OnMatrixUnit=*/true).at(1e12) == doctest::Approx(0.6));
    CHECK(G.compute(/*OnMatrixUnit=*/false).at(1e12) == doctest::Approx(0.9));
    // Unset: the class's compute on both.
    const ClassEfficiency &Conv = C->primaryDevice().efficiency(OpClass::Conv);
    CHECK_FALSE(Conv.VectorCompute.hasValue());
    CHECK(Conv.compute(false).at(1e9) == doctest::Approx(0.5));
    // Only op classes take it: `default` names its two sides.
    auto InDefault = loadHardwareFromString(
        replaced("default: {compute: 0.5, memory: 0.8}",
                 "default: {compute: 0.5, memory: 0.8, vector_compute: 0.9}"),
        "test.yaml");
    REQUIRE_FALSE(bool(InDefault));
    CHECK_STARTS(llvm::toString(InDefault.takeError()),
                 "test.yaml:11:42: unknown key 'vector_compute' in "
                 "efficiency 'default'; the known keys are compute, memory");
  }

  TEST_CASE("CPU convolution keys: channel block, alignment, activations") {
    auto With = [](llvm::StringRef Lines) {
      return replaced("  launch_overhead: 5 us\n",
                      (Lines + "  launch_overhead: 5 us\n").str());
    };
    auto C = loadHardwareFromString(
        With("  conv_channel_block: 16\n  conv_channel_align: 4\n"
             "  conv_activations: [Relu, Clip, Sigmoid]\n"),
        "test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    const Device &D = C->primaryDevice();
    CHECK(D.ConvChannelBlock == 16);
    CHECK(D.ConvChannelAlign == 4);
    REQUIRE(D.ConvActivations.size() == 3);
    CHECK(D.ConvActivations[1] == "Clip");
    auto Plain = loadHardwareFromString(ValidDevice, "test.yaml");
    REQUIRE(bool(Plain));
    CHECK(Plain->primaryDevice().ConvChannelBlock == 0);
    CHECK(Plain->primaryDevice().ConvActivations.empty());

    CHECK_STARTS(errorOf(With("  conv_channel_block: 2048\n")),
                 "test.yaml:9:23: 'conv_channel_block' is a channel count");
    CHECK_STARTS(errorOf(With("  conv_channel_block: 0\n")),
                 "test.yaml:9:23: ");
    CHECK_STARTS(errorOf(With("  conv_channel_align: 4\n")),
                 "test.yaml:9:23: 'conv_channel_align' (4) pads channel "
                 "counts to whole blocks, so it needs 'conv_channel_block'");
    CHECK_STARTS(
        errorOf(With("  conv_channel_block: 8\n  conv_channel_align: 16\n")),
        "test.yaml:10:23: 'conv_channel_align' (16) pads channel counts to "
        "whole blocks, so it needs 'conv_channel_block' and must not exceed "
        "it (8)");
    CHECK_STARTS(errorOf(With("  conv_activations: [Relu, Sigmod]\n")),
                 "test.yaml:9:28: unknown activation 'Sigmod' in "
                 "'conv_activations'; did you mean 'Sigmoid'?");
    CHECK_STARTS(errorOf(With("  conv_activations: Relu\n")),
                 "test.yaml:9:21: ");
  }

  TEST_CASE("depthwise_conv: time_per_output is a positive time") {
    auto With = [](llvm::StringRef Entry) {
      return replaced(
          "default: {compute: 0.5, memory: 0.8}",
          ("default: {compute: 0.5, memory: 0.8}\n    " + Entry).str());
    };
    auto C = loadHardwareFromString(
        With("depthwise_conv: {compute: 0.2, time_per_output: 0.45 ns}"),
        "test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    const Device &D = C->primaryDevice();
    CHECK(D.DepthwiseSecondsPerOutput == doctest::Approx(0.45e-9));
    REQUIRE(D.DepthwiseConv.hasValue());
    CHECK(D.DepthwiseConv->Compute.at(1e6) == doctest::Approx(0.2));
    // Without the key (or the entry) there is no per-output term.
    auto NoKey = loadHardwareFromString(With("depthwise_conv: {compute: 0.2}"),
                                        "test.yaml");
    REQUIRE_MESSAGE(bool(NoKey), llvm::toString(NoKey.takeError()));
    CHECK(NoKey->primaryDevice().DepthwiseSecondsPerOutput == 0);
    auto Plain = loadHardwareFromString(ValidDevice, "test.yaml");
    REQUIRE(bool(Plain));
    CHECK(Plain->primaryDevice().DepthwiseSecondsPerOutput == 0);

    CHECK_STARTS(
        errorOf(With("depthwise_conv: {compute: 0.2, time_per_output: 0 ns}")),
        "test.yaml:12:53: 'time_per_output' must be a positive time per "
        "output element; write e.g. 'time_per_output: 0.45 ns'");
    CHECK_STARTS(
        errorOf(With("depthwise_conv: {compute: 0.2, time_per_output: -1 ns}")),
        "test.yaml:12:53: 'time_per_output': ");
    CHECK_STARTS(errorOf(With("depthwise_conv: {time_per_output: 1 GB/s}")),
                 "test.yaml:12:39: 'time_per_output': ");
    CHECK_STARTS(errorOf(With("depthwise_conv: {time_per_output: 0.45}")),
                 "test.yaml:12:39: 'time_per_output': ");
    CHECK_STARTS(errorOf(With("depthwise_conv: {time_per_output: [1 ns]}")),
                 "test.yaml:12:39: 'time_per_output' must be a single value");
    // Only depthwise convolutions have the term.
    CHECK_STARTS(errorOf(With("conv: {time_per_output: 1 ns}")),
                 "test.yaml:12:12: unknown key 'time_per_output' in "
                 "efficiency 'conv'");
  }

  TEST_CASE("fused_attention: its own entry, gemm's sides where left out") {
    auto With = [](llvm::StringRef Entry) {
      return replaced(
          "default: {compute: 0.5, memory: 0.8}",
          ("default: {compute: 0.5, memory: 0.8}\n    " + Entry).str());
    };
    auto C = loadHardwareFromString(
        With("fused_attention: {compute: [[1 GFLOP, 0.2], [1 TFLOP, 0.4]]}"),
        "test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    const Device &D = C->primaryDevice();
    REQUIRE(D.FusedAttention.hasValue());
    CHECK(D.FusedAttention->Compute.at(1e12) == doctest::Approx(0.4));
    CHECK(D.FusedAttention->Memory.at(1e6) ==
          doctest::Approx(D.efficiency(OpClass::Gemm).Memory.at(1e6)));
    auto Plain = loadHardwareFromString(ValidDevice, "test.yaml");
    REQUIRE(bool(Plain));
    CHECK_FALSE(Plain->primaryDevice().FusedAttention.hasValue());
    CHECK_STARTS(errorOf(With("fused_attention: {time_per_output: 1 ns}")),
                 "test.yaml:12:23: unknown key 'time_per_output' in "
                 "efficiency 'fused_attention'");
    CHECK_STARTS(errorOf(With("fused_attention: {compute: 1.5}")),
                 "test.yaml:12:32: ");
    // `hw show` lines its value up with the classes' (the longest key).
    std::string Shown;
    llvm::raw_string_ostream OS(Shown);
    printDevice(D, OS);
    CHECK(OS.str().find("\n    gemm            ") != std::string::npos);
    CHECK(OS.str().find("\n    fused_attention [1 GFLOP: 0.2, 1 TFLOP: "
                        "0.4] / ") != std::string::npos);
  }

  TEST_CASE("data_movement: time_per_strided_element is a positive time") {
    auto With = [](llvm::StringRef Entry) {
      return replaced(
          "default: {compute: 0.5, memory: 0.8}",
          ("default: {compute: 0.5, memory: 0.8}\n    " + Entry).str());
    };
    auto C = loadHardwareFromString(
        With("data_movement: {memory: 0.3, time_per_strided_element: 4 ns}"),
        "test.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    const Device &D = C->primaryDevice();
    CHECK(D.StridedCopySecondsPerElement == doctest::Approx(4e-9));
    CHECK(D.efficiency(OpClass::DataMovement).Memory.at(1e6) ==
          doctest::Approx(0.3));
    auto Plain = loadHardwareFromString(ValidDevice, "test.yaml");
    REQUIRE(bool(Plain));
    CHECK(Plain->primaryDevice().StridedCopySecondsPerElement == 0);
    CHECK_STARTS(
        errorOf(With("data_movement: {time_per_strided_element: 0 ns}")),
        "test.yaml:12:47: 'time_per_strided_element' must be a positive time "
        "per copied element; write e.g. 'time_per_strided_element: 4 ns'");
    CHECK_STARTS(errorOf(With("data_movement: {time_per_strided_element: 4}")),
                 "test.yaml:12:47: 'time_per_strided_element': ");
    // Only data movement has the term.
    CHECK_STARTS(errorOf(With("gemm: {time_per_strided_element: 1 ns}")),
                 "test.yaml:12:12: unknown key 'time_per_strided_element' in "
                 "efficiency 'gemm'");
  }

  TEST_CASE("the loader never crashes on hostile input") {
    // Deep nesting: the walk stops at the first wrong node instead of
    // skipping (and recursing through) it.
    CHECK(errorOf("device: " + std::string(100000, '[')).size() > 0);
    CHECK(errorOf("device:\n  name: " + std::string(100000, '{')).size() > 0);
    std::string Deep = "device:\n";
    for (int I = 1; I < 3000; ++I)
      Deep += std::string(I + 2, ' ') + "a:\n";
    CHECK(errorOf(Deep).size() > 0);
    CHECK(errorOf("device: {name: x, kind: gpu, launch_overhead: 1e400 s}")
              .find("out of range") != std::string::npos);
    // A multi-line scalar is quoted with its line break escaped.
    CHECK_STARTS(errorOf("device:\n  name: x\n   kind: gpu\n"),
                 "test.yaml:2:9: name 'x\\n   kind' contains '\\n'");

    // Mutations of a valid file: every prefix, and random byte edits.
    const std::string Valid = ValidDevice;
    for (size_t N = 0; N < Valid.size(); ++N)
      (void)!loadHardwareFromString(Valid.substr(0, N), "t.yaml");
    std::mt19937 Rng(42);
    const std::string Alphabet = "{}[]:,-#&*!|>'\"%@` \n\tax0.5";
    for (int I = 0; I < 3000; ++I) {
      std::string S = Valid;
      const int Edits = 1 + Rng() % 4;
      for (int E = 0; E < Edits; ++E)
        S[Rng() % S.size()] = Alphabet[Rng() % Alphabet.size()];
      auto C = loadHardwareFromString(S, "t.yaml");
      if (!C)
        CHECK(llvm::toString(C.takeError()).rfind("t.yaml:", 0) == 0);
    }
  }

  TEST_CASE("error: a figure of the wrong type shows an example of its kind") {
    CHECK_STARTS(errorOf(replaced("launch_overhead: 5 us",
                                  "launch_overhead: {value: 5 us}")),
                 "test.yaml:9:20: 'launch_overhead' must be a single value, "
                 "not a mapping; write e.g. 'launch_overhead: 5 us'");
    CHECK_STARTS(errorOf(replaced("capacity: 16 GB", "capacity: [16 GB]")),
                 "test.yaml:8:29: 'capacity' must be a single value, not a "
                 "list; write e.g. 'capacity: 80 GB'");
  }

  TEST_CASE("files that are not regular files are refused, not read") {
    // /dev/zero never ends: reading it whole would exhaust memory.
    auto Dev = loadHardware("/dev/zero");
    REQUIRE_FALSE(bool(Dev));
    CHECK(llvm::toString(Dev.takeError()) ==
          "/dev/zero: cannot read the file: it is not a regular file; check "
          "the path");
    auto Link = loadLink("/dev/zero");
    REQUIRE_FALSE(bool(Link));
    CHECK_STARTS(llvm::toString(Link.takeError()),
                 "/dev/zero: cannot read the file: it is not a regular file");
    const char *Ref = R"(cluster:
  name: c
  nodes:
    - device: /dev/zero
)";
    CHECK_STARTS(errorOf(Ref), "test.yaml:4:15: cannot read '/dev/zero': it "
                               "is not a regular file");
    auto Dir = loadHardware(testDataDir());
    REQUIRE_FALSE(bool(Dir));
    CHECK(llvm::toString(Dir.takeError())
              .find("cannot read the file: it is "
                    "a directory") != std::string::npos);
  }

  TEST_CASE("links load from text too") {
    const char *Text = R"(link:
  name: my-link
  kind: pcie
  bandwidth: 32 GB/s
  latency: 1 us
  efficiency: 0.8
)";
    auto L = loadLinkFromString(Text, "link.yaml");
    REQUIRE_MESSAGE(bool(L), llvm::toString(L.takeError()));
    CHECK(L->Name == "my-link");
    CHECK(L->BandwidthBytesPerSecond == doctest::Approx(32e9));
    auto NotLink = loadLinkFromString(ValidDevice, "dev.yaml");
    REQUIRE_FALSE(bool(NotLink));
    CHECK(llvm::toString(NotLink.takeError()) ==
          "dev.yaml describes a device, not a link; load it with "
          "loadHardware");
  }

  TEST_CASE("switch_reduction: only on a switch, true or false") {
    const char *Text = R"(link:
  name: my-switch
  kind: nvswitch
  bandwidth: 450 GB/s
  latency: 0.47 us
  efficiency: 0.8
  switch_reduction: true
)";
    auto L = loadLinkFromString(Text, "link.yaml");
    REQUIRE_MESSAGE(bool(L), llvm::toString(L.takeError()));
    CHECK(L->SwitchReduction);
    auto Plain = loadLink("nvswitch-gen2");
    REQUIRE_MESSAGE(bool(Plain), llvm::toString(Plain.takeError()));
    CHECK_FALSE(Plain->SwitchReduction);
    auto Gen3 = loadLink("nvswitch");
    REQUIRE_MESSAGE(bool(Gen3), llvm::toString(Gen3.takeError()));
    CHECK(Gen3->SwitchReduction);

    const std::string OnNvLink = std::string(Text).replace(
        std::string(Text).find("kind: nvswitch"), 14, "kind: nvlink  ");
    auto E1 = loadLinkFromString(OnNvLink, "link.yaml");
    REQUIRE_FALSE(bool(E1));
    CHECK(llvm::toString(E1.takeError()) ==
          "link.yaml:7:21: 'switch_reduction: true' needs an NVSwitch (kind: "
          "nvswitch), not a link of kind 'nvlink'; remove the key");

    const std::string Yes = std::string(Text).replace(
        std::string(Text).find("switch_reduction: true"), 22,
        "switch_reduction: yes");
    auto E2 = loadLinkFromString(Yes, "link.yaml");
    REQUIRE_FALSE(bool(E2));
    CHECK(llvm::toString(E2.takeError()) ==
          "link.yaml:7:21: 'switch_reduction': expected true or false, got "
          "'yes'");

    // A link built on the bundled gen-3 switch keeps its reduction, which a
    // change of kind must give up explicitly.
    const char *Derived = R"(cluster:
  name: c
  nodes:
    - device: h100-sxm5-80gb
      devices_per_node: 8
      intra_node_link: {base: nvswitch, kind: nvlink}
)";
    CHECK_STARTS(errorOf(Derived),
                 "test.yaml:6:24: 'switch_reduction: true' (from the base) "
                 "needs an NVSwitch (kind: nvswitch), not a link of kind "
                 "'nvlink'; add 'switch_reduction: false'");
    auto Ok = loadHardwareFromString(
        std::string(Derived).replace(std::string(Derived).find("nvlink}"), 7,
                                     "nvlink, switch_reduction: false}"),
        "test.yaml");
    REQUIRE_MESSAGE(bool(Ok), llvm::toString(Ok.takeError()));
    CHECK_FALSE(Ok->Groups[0].IntraNode->SwitchReduction);
  }

  TEST_CASE("files: relative references and errors in referenced files") {
    const std::string Dir = testDataDir();
    auto C = loadHardware(Dir + "/my-cluster.yaml");
    REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
    CHECK(C->Name == "my-cluster");
    CHECK(C->numNodes() == 2);
    CHECK(C->numDevices() == 8);
    CHECK(C->primaryDevice().Name == "my-gpu");
    REQUIRE(C->Groups[0].InterNode);
    CHECK(C->Groups[0].InterNode->BandwidthBytesPerSecond ==
          doctest::Approx(12.5e9));

    auto Bad = loadHardware(Dir + "/bad-cluster.yaml");
    REQUIRE_FALSE(bool(Bad));
    const std::string Msg = llvm::toString(Bad.takeError());
    CHECK(Msg.find("bad-gpu.yaml:9:20: 'launch_overhead': time '5' has no "
                   "unit") != std::string::npos);

    auto Missing = loadHardware(Dir + "/no-such-file.yaml");
    REQUIRE_FALSE(bool(Missing));
    CHECK(llvm::toString(Missing.takeError()).find("cannot read the file") !=
          std::string::npos);
    auto Unknown = loadHardware("a100");
    REQUIRE_FALSE(bool(Unknown));
    CHECK(llvm::toString(Unknown.takeError())
              .find("unknown hardware 'a100'; did you mean one of "
                    "'a100-sxm4-40gb', 'a100-sxm4-80gb'?") !=
          std::string::npos);
  }

} // TEST_SUITE

TEST_SUITE("hwdb.bundled") {

  TEST_CASE("every bundled description loads, with sources") {
    const std::vector<BundledEntry> Entries = listBundled();
    CHECK(Entries.size() >= 40);
    llvm::StringSet<> Names;
    for (const BundledEntry &E : Entries) {
      CAPTURE(E.Path);
      CHECK_MESSAGE(E.Loads, E.Summary);
      CHECK(Names.insert(E.Name).second); // names are unique across kinds
      if (E.Kind == EntryKind::Link) {
        auto L = loadLink(E.Name);
        REQUIRE_MESSAGE(bool(L), llvm::toString(L.takeError()));
        CHECK_FALSE(L->Sources.empty());
        continue;
      }
      auto C = loadHardware(E.Name);
      REQUIRE_MESSAGE(bool(C), llvm::toString(C.takeError()));
      CHECK(C->Name == E.Name);
      if (E.Kind == EntryKind::Device)
        CHECK_FALSE(C->primaryDevice().Sources.empty());
      else
        CHECK_FALSE(C->Sources.empty());
      // Printing touches every field.
      std::string Out;
      llvm::raw_string_ostream OS(Out);
      printCluster(*C, OS);
      CHECK(OS.str().find(E.Name) != std::string::npos);
    }
    for (const char *Name : {"v100-sxm2-32gb",
                             "a100-sxm4-40gb",
                             "a100-sxm4-80gb",
                             "h100-sxm5-80gb",
                             "h200-sxm-141gb",
                             "l4",
                             "t4",
                             "mi300x",
                             "b200",
                             "gb200",
                             "xeon-platinum-8480",
                             "epyc-9654",
                             "zen5-2vcpu",
                             "raspberry-pi-5",
                             "jetson-agx-orin",
                             "jetson-agx-xavier",
                             "snapdragon-8-gen-2",
                             "nvlink2",
                             "nvlink3",
                             "nvlink4",
                             "nvswitch",
                             "nvswitch-gen4",
                             "pcie3-x16",
                             "pcie4-x16",
                             "pcie5-x16",
                             "infiniband-hdr",
                             "infiniband-ndr",
                             "ethernet-100g",
                             "ethernet-200g",
                             "ethernet-400g",
                             "soc-shared-memory",
                             "dgx-a100",
                             "selene-a100-80gb",
                             "dgx-h100",
                             "dgx-b200",
                             "gb200-nvl72"})
      CHECK_MESSAGE(Names.count(Name), Name);
  }

  TEST_CASE("bundled figures agree with the datasheets") {
    auto A100 = loadHardware("a100-sxm4-80gb");
    REQUIRE(A100);
    const Device &D = A100->primaryDevice();
    CHECK(*D.unit(UnitKind::Tensor)->peak(ir::DType::F16) == 312e12);
    CHECK(*D.unit(UnitKind::Tensor)->peak(ir::DType::TF32) == 156e12);
    CHECK(*D.unit(UnitKind::Vector)->peak(ir::DType::F32) == 19.5e12);
    CHECK(D.mainMemory().BandwidthBytesPerSecond == 2039e9);
    CHECK(D.mainMemory().CapacityBytes == 80.0 * (1ull << 30));

    auto H100 = loadHardware("h100-sxm5-80gb");
    REQUIRE(H100);
    const ComputeUnit *TC = H100->primaryDevice().unit(UnitKind::Tensor);
    CHECK(*TC->peak(ir::DType::F8E4M3) == doctest::Approx(1978.9e12));
    CHECK(*TC->peak(ir::DType::F8E5M2) == doctest::Approx(1978.9e12));

    auto Hdr = loadLink("infiniband-hdr");
    REQUIRE(Hdr);
    CHECK(Hdr->BandwidthBytesPerSecond == doctest::Approx(25e9));
    CHECK(Hdr->Kind == LinkKind::InfiniBand);

    auto Dgx = loadHardware("dgx-a100");
    REQUIRE(Dgx);
    CHECK(Dgx->numDevices() == 8);
    CHECK(Dgx->Groups[0].IntraNode->BandwidthBytesPerSecond == 300e9);
    CHECK(Dgx->Groups[0].NicsPerNode == 8);
    auto Selene = loadHardware("selene-a100-80gb");
    REQUIRE(Selene);
    CHECK(Selene->numNodes() == 64);
    CHECK(Selene->numDevices() == 512);
    // The device is loaded once and shared by reference.
    CHECK(Selene->Groups[0].Devices[0].Dev->Name == "a100-sxm4-80gb");

    // Blackwell: DGX B200's eight GPUs (1,440 GB, 64 TB/s, FP8 72 PFLOPS
    // with sparsity) and GB200 NVL72's one NVLink domain of 72.
    auto B200 = loadHardware("dgx-b200");
    REQUIRE(B200);
    const Device &B = B200->primaryDevice();
    CHECK(B200->numDevices() == 8);
    CHECK(8 * 2 * *B.unit(UnitKind::Tensor)->peak(ir::DType::F8E4M3) ==
          doctest::Approx(72e15));
    CHECK(8 * B.mainMemory().CapacityBytes == doctest::Approx(1440e9));
    CHECK(8 * B.mainMemory().BandwidthBytesPerSecond == doctest::Approx(64e12));
    CHECK(B200->Groups[0].IntraNode->BandwidthBytesPerSecond == 900e9);
    CHECK(B200->Groups[0].IntraNode->SwitchReduction);
    auto Nvl72 = loadHardware("gb200-nvl72");
    REQUIRE(Nvl72);
    CHECK(Nvl72->numNodes() == 1);
    CHECK(Nvl72->numDevices() == 72);
    CHECK(72 * 2 *
              *Nvl72->primaryDevice()
                   .unit(UnitKind::Tensor)
                   ->peak(ir::DType::F8E4M3) ==
          doctest::Approx(720e15));
  }

  TEST_CASE("SoCs are one node of heterogeneous processors on shared memory") {
    auto Orin = loadHardware("jetson-agx-orin");
    REQUIRE_MESSAGE(bool(Orin), llvm::toString(Orin.takeError()));
    CHECK(Orin->numNodes() == 1);
    CHECK(Orin->numDevices() == 4);
    const NodeGroup &G = Orin->Groups[0];
    REQUIRE(G.Devices.size() == 3);
    CHECK(G.Devices[0].Dev->Kind == DeviceKind::Cpu);
    CHECK(G.Devices[1].Dev->Kind == DeviceKind::Gpu);
    CHECK(G.Devices[2].Dev->Kind == DeviceKind::Npu);
    CHECK(G.Devices[2].Count == 2);
    REQUIRE(G.IntraNode);
    CHECK(G.IntraNode->Kind == LinkKind::SharedMemory);
    CHECK(G.IntraNode->Name == "orin-lpddr5");
    CHECK(G.IntraNode->BandwidthBytesPerSecond == doctest::Approx(204.8e9));
    // Fields the override leaves alone come from the base link.
    CHECK(G.IntraNode->LatencySeconds == doctest::Approx(10e-6));
    // The DLA runs only some op classes and types.
    const Device &Dla = *G.Devices[2].Dev;
    CHECK(Dla.supports(OpClass::Conv, ir::DType::I8));
    CHECK_FALSE(Dla.supports(OpClass::Conv, ir::DType::F32));
    CHECK_FALSE(Dla.supports(OpClass::Recurrent, ir::DType::F16));
  }

  TEST_CASE("errors in bundled files would name the bundled path") {
    // Bundled names resolve without the source tree; their messages use
    // hwdb/<kind>/<name>.yaml. A reference from a user file to a bundled name
    // with the wrong kind is reported at the reference.
    auto E = loadLink("a100-sxm4-80gb");
    REQUIRE_FALSE(bool(E));
    CHECK(llvm::toString(E.takeError()) ==
          "hwdb/devices/a100-sxm4-80gb.yaml describes a device, not a link; "
          "load it with loadHardware");
    auto L = loadHardware("nvlink3");
    REQUIRE_FALSE(bool(L));
    CHECK_STARTS(llvm::toString(L.takeError()),
                 "hwdb/links/nvlink3.yaml describes a link");
  }

  TEST_CASE("reserveMemory takes the runtime's share from every device's "
            "memory, on copies") {
    auto Orin = loadHardware("jetson-agx-orin");
    REQUIRE_MESSAGE(bool(Orin), llvm::toString(Orin.takeError()));
    const Cluster Before = *Orin;
    Cluster C = *Orin;
    constexpr double GiB = 1u << 30;
    REQUIRE(llvm::errorToBool(reserveMemory(C, 2 * GiB, "reserve")) == false);
    for (size_t G = 0; G < C.Groups.size(); ++G)
      for (size_t D = 0; D < C.Groups[G].Devices.size(); ++D) {
        const Device &Was = *Before.Groups[G].Devices[D].Dev;
        const Device &Now = *C.Groups[G].Devices[D].Dev;
        CAPTURE(Now.Name);
        CHECK(Now.mainMemory().CapacityBytes ==
              Was.mainMemory().CapacityBytes - 2 * GiB);
        // The shared description is untouched.
        CHECK(Orin->Groups[G].Devices[D].Dev->mainMemory().CapacityBytes ==
              Was.mainMemory().CapacityBytes);
      }
    // Too much, or not a size: an error naming the device, C unchanged.
    Cluster Kept = C;
    const std::string TooMuch = llvm::toString(reserveMemory(Kept, 1e15, "R"));
    CHECK(TooMuch.find("R leaves nothing of jetson-agx-orin-") == 0);
    CHECK(TooMuch.find(": reserve less than that") != std::string::npos);
    CHECK(llvm::toString(reserveMemory(Kept, -1, "R")) ==
          "R must be a size of 0 or more");
    CHECK(llvm::toString(reserveMemory(Kept, NAN, "R")) ==
          "R must be a size of 0 or more");
    CHECK(Kept.primaryDevice().mainMemory().CapacityBytes ==
          C.primaryDevice().mainMemory().CapacityBytes);
  }

} // TEST_SUITE
