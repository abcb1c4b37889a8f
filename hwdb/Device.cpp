//===- Device.cpp - One processor: peaks, memories, efficiencies ----------===//
#include "hwdb/Device.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace perfc;
using namespace perfc::hw;

// A new OpClass needs a YAML key below; this fails the build until it has.
static_assert(NumOpClasses == 9, "update opClassKey for the new OpClass");

llvm::StringRef perfc::hw::name(DeviceKind K) {
  switch (K) {
  case DeviceKind::Gpu:
    return "gpu";
  case DeviceKind::Cpu:
    return "cpu";
  case DeviceKind::Npu:
    return "npu";
  case DeviceKind::Dsp:
    return "dsp";
  }
  return "gpu";
}

const char *perfc::hw::name(UnitKind K) {
  switch (K) {
  case UnitKind::Tensor:
    return "tensor";
  case UnitKind::Matrix:
    return "matrix";
  case UnitKind::Vector:
    return "vector";
  case UnitKind::Simd:
    return "simd";
  }
  return "vector";
}

const char *perfc::hw::name(ConvLayout L) {
  switch (L) {
  case ConvLayout::Native:
    return "native";
  case ConvLayout::Nchw:
    return "nchw";
  case ConvLayout::Nhwc:
    return "nhwc";
  }
  return "native";
}

llvm::Optional<ConvLayout> perfc::hw::parseConvLayout(llvm::StringRef S) {
  for (ConvLayout L : {ConvLayout::Native, ConvLayout::Nchw, ConvLayout::Nhwc})
    if (S == name(L))
      return L;
  return llvm::None;
}

bool perfc::hw::isMatrixUnit(UnitKind K) {
  return K == UnitKind::Tensor || K == UnitKind::Matrix;
}

// The YAML keys are the classes' own names (ir/OpClass.h).
llvm::StringRef perfc::hw::opClassKey(OpClass C) { return name(C); }

llvm::Optional<OpClass> perfc::hw::parseOpClassKey(llvm::StringRef Key) {
  for (size_t I = 0; I < NumOpClasses; ++I) {
    const auto C = static_cast<OpClass>(I);
    if (opClassKey(C) == Key)
      return C;
  }
  return llvm::None;
}

llvm::Optional<double> ComputeUnit::peak(ir::DType T) const {
  for (const auto &[Type, Peak] : Peaks)
    if (Type == T)
      return Peak;
  return llvm::None;
}

double EfficiencyCurve::at(double Size) const {
  if (Points.empty())
    return Constant;
  if (!(Size > Points.front().first))
    return Points.front().second;
  if (Size >= Points.back().first)
    return Points.back().second;
  // Points are ascending in size (the loader checks), so the first point
  // above Size closes the segment that holds it.
  const auto Hi =
      llvm::find_if(Points, [&](const std::pair<double, double> &P) {
        return P.first > Size;
      });
  const auto Lo = std::prev(Hi);
  const double F = (std::log(Size) - std::log(Lo->first)) /
                   (std::log(Hi->first) - std::log(Lo->first));
  return Lo->second + F * (Hi->second - Lo->second);
}

const ComputeUnit *Device::unit(UnitKind K) const {
  for (const ComputeUnit &U : Units)
    if (U.Kind == K)
      return &U;
  return nullptr;
}

bool Device::supports(OpClass C, ir::DType T) const {
  if (!Supports.OpClasses.empty() && !llvm::is_contained(Supports.OpClasses, C))
    return false;
  if (!Supports.DTypes.empty() && !llvm::is_contained(Supports.DTypes, T))
    return false;
  return true;
}
