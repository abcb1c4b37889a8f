//===- Einsum.cpp - Einsum equations: parsing and output shapes -----------===//
#include "ir/Einsum.h"

#include <array>
#include <string>

namespace perfc::ir {

static bool isLetter(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z');
}

/// Parses one term ("bij", "...ij", "b...j"); false on anything else.
static bool parseTerm(llvm::StringRef Text, EinsumTerm &T) {
  while (!Text.empty()) {
    if (Text.consume_front("...")) {
      if (T.EllipsisAt >= 0)
        return false;
      T.EllipsisAt = static_cast<int>(T.Letters.size());
      continue;
    }
    if (!isLetter(Text.front()))
      return false;
    T.Letters.push_back(static_cast<unsigned char>(Text.front()));
    Text = Text.drop_front();
  }
  return true;
}

llvm::Optional<EinsumEquation> parseEinsum(llvm::StringRef Text) {
  std::string Equation;
  for (char C : Text)
    if (C != ' ')
      Equation += C;
  EinsumEquation E;
  auto [Lhs, Rhs] = llvm::StringRef(Equation).split("->");
  E.ExplicitOutput = llvm::StringRef(Equation).contains("->");
  llvm::SmallVector<llvm::StringRef, 3> Terms;
  Lhs.split(Terms, ',');
  for (llvm::StringRef Term : Terms) {
    E.Inputs.emplace_back();
    if (!parseTerm(Term, E.Inputs.back()))
      return llvm::None;
  }
  if (E.ExplicitOutput && !parseTerm(Rhs, E.Output))
    return llvm::None;
  return E;
}

llvm::SmallVector<unsigned, 8> einsumTermIds(const EinsumTerm &T,
                                             unsigned EllipsisRank) {
  llvm::SmallVector<unsigned, 8> Ids;
  for (unsigned I = 0; I <= T.Letters.size(); ++I) {
    if (static_cast<int>(I) == T.EllipsisAt)
      for (unsigned J = 0; J < EllipsisRank; ++J)
        Ids.push_back(EinsumEllipsisBase + (EllipsisRank - 1 - J));
    if (I < T.Letters.size())
      Ids.push_back(T.Letters[I]);
  }
  return Ids;
}

llvm::Optional<llvm::SmallVector<int64_t, 8>>
einsumOutputDims(const EinsumEquation &E,
                 llvm::ArrayRef<llvm::SmallVector<int64_t, 8>> InputDims) {
  if (InputDims.size() != E.Inputs.size())
    return llvm::None;
  constexpr int64_t Unseen = -2;
  std::array<int64_t, EinsumNumIds> Size;
  Size.fill(Unseen);
  std::array<unsigned, EinsumNumIds> Uses{};
  unsigned MaxEllipsis = 0;
  for (unsigned I = 0; I < E.Inputs.size(); ++I) {
    const EinsumTerm &T = E.Inputs[I];
    const auto &Dims = InputDims[I];
    const bool Fits = T.EllipsisAt >= 0 ? Dims.size() >= T.Letters.size()
                                        : Dims.size() == T.Letters.size();
    if (!Fits)
      return llvm::None;
    const unsigned Ell = Dims.size() - T.Letters.size();
    MaxEllipsis = std::max(MaxEllipsis, Ell);
    const llvm::SmallVector<unsigned, 8> Ids = einsumTermIds(T, Ell);
    for (unsigned D = 0; D < Ids.size(); ++D) {
      int64_t &S = Size[Ids[D]];
      const int64_t New = Dims[D];
      ++Uses[Ids[D]];
      if (S == Unseen || S == 1)
        S = New;
      else if (New >= 0 && New != 1 && S >= 0 && S != New)
        return llvm::None;
      else if (S < 0 && New > 1)
        S = New;
    }
  }
  llvm::SmallVector<unsigned, 8> OutIds;
  if (E.ExplicitOutput) {
    OutIds = einsumTermIds(E.Output, MaxEllipsis);
    for (unsigned Id : OutIds)
      if (Size[Id] == Unseen)
        return llvm::None; // An output label no operand names.
  } else {
    for (unsigned K = MaxEllipsis; K-- > 0;)
      OutIds.push_back(EinsumEllipsisBase + K);
    for (unsigned Id = 0; Id < EinsumEllipsisBase; ++Id)
      if (Uses[Id] == 1)
        OutIds.push_back(Id);
  }
  llvm::SmallVector<int64_t, 8> Out;
  for (unsigned Id : OutIds)
    Out.push_back(Size[Id]);
  return Out;
}

} // namespace perfc::ir
