//===- FoldOps.cpp - The ONNX ops the shape folder evaluates -------------===//
#include "frontend/FoldOps.h"

#include "frontend/FoldElementwise.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

namespace perfc::frontend::fold {
namespace {

class Evaluator {
public:
  explicit Evaluator(int64_t Opset) : Opset(Opset) {}

  /// Computes every output of N, or returns false.
  bool eval(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const std::string &Op = N.op_type();
    auto Arg = [&](size_t I) -> const Tensor * {
      return I < In.size() ? In[I] : nullptr;
    };
    // Every op reads its first input.
    if (!Arg(0) && Op != "Sum" && Op != "Min" && Op != "Max")
      return false;

    if (Op == "Identity") {
      Out.push_back(*In[0]);
      return true;
    }
    if (Op == "Cast") {
      const auto *A = findAttr(N, "to");
      if (!A || !A->has_i())
        return false; // Opset 1 names the type with a string.
      Tensor T;
      if (!castTo(*In[0], static_cast<int32_t>(A->i()), T))
        return false;
      Out.push_back(std::move(T));
      return true;
    }
    if (Op == "CastLike") {
      Tensor T;
      if (!Arg(1) || !castTo(*In[0], In[1]->Type, T))
        return false;
      Out.push_back(std::move(T));
      return true;
    }
    if (Op == "Shape")
      return shape(N, In[0]->Shape, Out);
    if (Op == "Size") {
      auto Count =
          countElements(In[0]->Shape, std::numeric_limits<int64_t>::max());
      if (!Count)
        return false;
      Tensor T = makeTensor(TP::INT64, {});
      T.Ints.push_back(*Count);
      Out.push_back(std::move(T));
      return true;
    }
    if (Op == "Gather")
      return gather(N, *In[0], Arg(1), Out);
    if (Op == "Slice")
      return slice(N, In, Out);
    if (Op == "Concat")
      return concat(N, In, Out);
    if (Op == "Unsqueeze")
      return unsqueeze(N, In, Out);
    if (Op == "Squeeze")
      return squeeze(N, In, Out);
    if (Op == "Reshape")
      return reshape(N, In, Out);
    if (Op == "Flatten")
      return flatten(N, *In[0], Out);
    if (Op == "Transpose")
      return transpose(N, *In[0], Out);
    if (Op == "Expand")
      return expand(*In[0], Arg(1), Out);
    if (Op == "Tile")
      return tile(*In[0], Arg(1), Out);
    if (Op == "ConstantOfShape")
      return constantOfShape(N, *In[0], Out);
    if (Op == "Range")
      return range(In, Out);
    if (Op == "Split")
      return split(N, In, Out);
    if (Op == "NonZero")
      return nonZero(*In[0], Out);
    if (Op == "Where")
      return where(In, Out);
    if (Op == "Clip")
      return clip(N, In, Out);
    if (Op == "ReduceSum" || Op == "ReduceProd" || Op == "ReduceMin" ||
        Op == "ReduceMax")
      return reduce(N, In, Out);

    static const struct {
      const char *Name;
      UnOp Op;
    } Unary[] = {{"Neg", UnOp::Neg},   {"Abs", UnOp::Abs},
                 {"Sign", UnOp::Sign}, {"Floor", UnOp::Floor},
                 {"Ceil", UnOp::Ceil}, {"Round", UnOp::Round},
                 {"Sqrt", UnOp::Sqrt}, {"Reciprocal", UnOp::Reciprocal},
                 {"Not", UnOp::Not}};
    for (const auto &U : Unary)
      if (Op == U.Name)
        return unary(U.Op, *In[0], Out);

    static const struct {
      const char *Name;
      BinOp Op;
    } Binary[] = {
        {"Add", BinOp::Add},         {"Sub", BinOp::Sub},
        {"Mul", BinOp::Mul},         {"Div", BinOp::Div},
        {"Pow", BinOp::Pow},         {"Equal", BinOp::Equal},
        {"Less", BinOp::Less},       {"LessOrEqual", BinOp::LessEq},
        {"Greater", BinOp::Greater}, {"GreaterOrEqual", BinOp::GreaterEq},
        {"And", BinOp::And},         {"Or", BinOp::Or},
        {"Xor", BinOp::Xor}};
    for (const auto &B : Binary)
      if (Op == B.Name) {
        // Before opset 7, Add & co. broadcast only with an attribute:
        // those semantics are not worth the code.
        if (Opset < 7 || In.size() != 2 || !Arg(1))
          return false;
        Tensor T;
        if (!binary(B.Op, *In[0], *In[1], T))
          return false;
        Out.push_back(std::move(T));
        return true;
      }
    if (Op == "Mod") {
      Tensor T;
      BinOp M = attrInt(N, "fmod", 0) ? BinOp::FMod : BinOp::Mod;
      if (!Arg(1) || !binary(M, *In[0], *In[1], T))
        return false;
      Out.push_back(std::move(T));
      return true;
    }
    if (Opset >= 8) {
      if (Op == "Sum")
        return variadic(BinOp::Add, In, Out);
      if (Op == "Min")
        return variadic(BinOp::Min, In, Out);
      if (Op == "Max")
        return variadic(BinOp::Max, In, Out);
    }
    return false;
  }

  /// Shape, reading only the dims of its input.
  bool shape(const onnx::NodeProto &N, llvm::ArrayRef<int64_t> S,
             Outputs &Out) const {
    int64_t R = static_cast<int64_t>(S.size());
    auto Clamp = [R](int64_t V) {
      if (V < 0)
        V += R;
      return std::min(std::max(V, int64_t(0)), R);
    };
    int64_t Start = Clamp(attrInt(N, "start", 0));
    int64_t End = Clamp(attrInt(N, "end", R));
    Tensor T = makeTensor(TP::INT64, {std::max(End - Start, int64_t(0))});
    for (int64_t I = Start; I < End; ++I)
      T.Ints.push_back(S[I]);
    Out.push_back(std::move(T));
    return true;
  }

private:
  bool gather(const onnx::NodeProto &N, const Tensor &Data,
              const Tensor *Indices, Outputs &Out) const {
    if (!Indices || !isIndexType(Indices->Type) || Data.rank() == 0)
      return false;
    auto Axis = normAxis(attrInt(N, "axis", 0), Data.rank());
    if (!Axis)
      return false;
    int64_t D = Data.Shape[*Axis];
    Dims Shape(Data.Shape.begin(), Data.Shape.begin() + *Axis);
    Shape.append(Indices->Shape.begin(), Indices->Shape.end());
    Shape.append(Data.Shape.begin() + *Axis + 1, Data.Shape.end());
    auto Count = countElements(Shape);
    if (!Count)
      return false;
    auto Outer = productOf(Data.Shape, 0, *Axis);
    auto Inner = productOf(Data.Shape, *Axis + 1, Data.rank());
    if (!Outer || !Inner)
      return false;
    std::vector<size_t> Index;
    Index.reserve(static_cast<size_t>(*Count));
    // An empty result needs no index; Outer may then be huge.
    for (int64_t O = 0; *Count > 0 && O < *Outer; ++O)
      for (int64_t J : Indices->Ints) {
        if (J < -D || J >= D)
          return false;
        if (J < 0)
          J += D;
        for (int64_t I = 0; I < *Inner; ++I)
          Index.push_back(static_cast<size_t>((O * D + J) * *Inner + I));
      }
    Out.push_back(take(Data, Index, std::move(Shape)));
    return true;
  }

  bool slice(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const Tensor &Data = *In[0];
    int64_t R = Data.rank();
    llvm::Optional<std::vector<int64_t>> Starts, Ends, Axes, Steps;
    if (Opset < 10) {
      Starts = attrInts(N, "starts");
      Ends = attrInts(N, "ends");
      Axes = attrInts(N, "axes");
    } else {
      auto Opt = [&](size_t I) -> const Tensor * {
        return I < In.size() ? In[I] : nullptr;
      };
      if (!Opt(1) || !Opt(2))
        return false;
      Starts = intList(Opt(1));
      Ends = intList(Opt(2));
      if (Opt(3) && !(Axes = intList(Opt(3))))
        return false;
      if (Opt(4) && !(Steps = intList(Opt(4))))
        return false;
    }
    if (!Starts || !Ends || Starts->size() != Ends->size())
      return false;
    size_t K = Starts->size();
    if (!Axes) {
      Axes.emplace();
      for (size_t I = 0; I < K; ++I)
        Axes->push_back(static_cast<int64_t>(I));
    }
    if (!Steps)
      Steps.emplace(K, 1);
    if (Axes->size() != K || Steps->size() != K)
      return false;
    Dims Start(R, 0), Step(R, 1), Shape(Data.Shape);
    std::vector<bool> Seen(R, false);
    for (size_t I = 0; I < K; ++I) {
      auto A = normAxis((*Axes)[I], R);
      if (!A || Seen[*A] || (*Steps)[I] == 0)
        return false;
      Seen[*A] = true;
      int64_t D = Data.Shape[*A], S = (*Steps)[I];
      int64_t B = (*Starts)[I], E = (*Ends)[I];
      if (B < 0)
        B += D;
      if (E < 0)
        E += D;
      // Counts written as 1 + (span - 1) / step, which cannot overflow for
      // the huge steps exporters use to mean "all".
      int64_t Count = 0;
      if (S > 0) {
        B = std::min(std::max(B, int64_t(0)), D);
        E = std::min(std::max(E, int64_t(0)), D);
        if (E > B)
          Count = 1 + (E - B - 1) / S;
      } else {
        B = std::min(std::max(B, int64_t(0)), D - 1);
        E = std::min(std::max(E, int64_t(-1)), D - 1);
        if (B > E)
          Count = S == std::numeric_limits<int64_t>::min()
                      ? 1
                      : 1 + (B - E - 1) / -S;
      }
      Start[*A] = B;
      Step[*A] = S;
      Shape[*A] = Count;
    }
    auto Total = countElements(Shape);
    if (!Total)
      return false;
    if (*Total == 0) {
      Out.push_back(take(Data, {}, std::move(Shape)));
      return true;
    }
    auto Stride = stridesOf(Data.Shape);
    if (!Stride)
      return false;
    std::vector<size_t> Index;
    Index.reserve(static_cast<size_t>(*Total));
    Dims Pos(R, 0);
    for (int64_t Idx = 0; Idx < *Total; ++Idx) {
      int64_t Off = 0;
      for (int64_t D = 0; D < R; ++D)
        Off += (Start[D] + Pos[D] * Step[D]) * (*Stride)[D];
      Index.push_back(static_cast<size_t>(Off));
      for (int64_t D = R; D-- > 0;) {
        if (++Pos[D] < Shape[D])
          break;
        Pos[D] = 0;
      }
    }
    Out.push_back(take(Data, Index, std::move(Shape)));
    return true;
  }

  bool concat(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    if (In.empty() || llvm::is_contained(In, nullptr))
      return false;
    const Tensor &First = *In[0];
    int64_t R = First.rank();
    const auto *AxisAttr = findAttr(N, "axis");
    if (R == 0 || (!AxisAttr && Opset >= 4))
      return false;
    auto Axis = normAxis(AxisAttr ? AxisAttr->i() : 1, R);
    if (!Axis)
      return false;
    Dims Shape(First.Shape);
    Shape[*Axis] = 0;
    for (const Tensor *T : In) {
      if (T->Type != First.Type || T->rank() != R)
        return false;
      for (int64_t D = 0; D < R; ++D)
        if (D != *Axis && T->Shape[D] != First.Shape[D])
          return false;
      if (__builtin_add_overflow(Shape[*Axis], T->Shape[*Axis], &Shape[*Axis]))
        return false;
    }
    auto Count = countElements(Shape);
    auto Outer = productOf(Shape, 0, *Axis);
    auto Inner = productOf(Shape, *Axis + 1, R);
    if (!Count || !Outer || !Inner)
      return false;
    Tensor T = makeTensor(First.Type, std::move(Shape));
    // An empty result needs no copy; Outer may then be huge.
    for (int64_t O = 0; *Count > 0 && O < *Outer; ++O)
      for (const Tensor *X : In) {
        size_t Block = static_cast<size_t>(X->Shape[*Axis] * *Inner);
        size_t Begin = static_cast<size_t>(O) * Block;
        if (T.isReal())
          T.Reals.insert(T.Reals.end(), X->Reals.begin() + Begin,
                         X->Reals.begin() + Begin + Block);
        else
          T.Ints.insert(T.Ints.end(), X->Ints.begin() + Begin,
                        X->Ints.begin() + Begin + Block);
      }
    Out.push_back(std::move(T));
    return true;
  }

  /// The axes of Squeeze/Unsqueeze/ReduceSum: an attribute, or from
  /// FromOpset on, the second input.
  llvm::Optional<std::vector<int64_t>> axesOf(const onnx::NodeProto &N,
                                              Inputs In, int64_t FromOpset,
                                              bool &Present) const {
    Present = false;
    if (Opset < FromOpset) {
      auto A = attrInts(N, "axes");
      Present = A.hasValue();
      return A ? A : std::vector<int64_t>();
    }
    const Tensor *T = In.size() > 1 ? In[1] : nullptr;
    if (!T)
      return std::vector<int64_t>();
    Present = true;
    return intList(T);
  }

  bool unsqueeze(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    bool Present;
    auto Axes = axesOf(N, In, 13, Present);
    if (!Axes || !Present)
      return false;
    int64_t R = In[0]->rank() + static_cast<int64_t>(Axes->size());
    auto Sorted = normAxes(*Axes, R);
    if (!Sorted)
      return false;
    Dims Shape;
    auto Src = In[0]->Shape.begin();
    for (int64_t D = 0; D < R; ++D)
      Shape.push_back(llvm::is_contained(*Sorted, D) ? 1 : *Src++);
    Out.push_back(reshaped(*In[0], std::move(Shape)));
    return true;
  }

  bool squeeze(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    bool Present;
    auto Axes = axesOf(N, In, 13, Present);
    if (!Axes)
      return false;
    const Tensor &X = *In[0];
    if (!Present || Axes->empty()) {
      Axes->clear();
      for (int64_t D = 0; D < X.rank(); ++D)
        if (X.Shape[D] == 1)
          Axes->push_back(D);
    }
    auto Sorted = normAxes(*Axes, X.rank());
    if (!Sorted)
      return false;
    Dims Shape;
    for (int64_t D = 0; D < X.rank(); ++D) {
      if (!llvm::is_contained(*Sorted, D))
        Shape.push_back(X.Shape[D]);
      else if (X.Shape[D] != 1)
        return false;
    }
    Out.push_back(reshaped(X, std::move(Shape)));
    return true;
  }

  bool reshape(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const Tensor &X = *In[0];
    llvm::Optional<std::vector<int64_t>> Target =
        Opset < 5 ? attrInts(N, "shape")
                  : intList(In.size() > 1 ? In[1] : nullptr);
    if (!Target || (Opset >= 5 && In[1]->rank() != 1))
      return false;
    bool AllowZero = Opset >= 14 && attrInt(N, "allowzero", 0) != 0;
    Dims Shape;
    int64_t Infer = -1, Known = 1;
    for (size_t I = 0; I < Target->size(); ++I) {
      int64_t D = (*Target)[I];
      if (D == 0 && !AllowZero) {
        if (static_cast<int64_t>(I) >= X.rank())
          return false;
        D = X.Shape[I];
      }
      if (D == -1) {
        if (Infer >= 0)
          return false;
        Infer = static_cast<int64_t>(I);
      } else if (D < 0) {
        return false;
      } else {
        if (D != 0 && Known > MaxFoldedElements / D)
          return false;
        Known *= D;
      }
      Shape.push_back(D);
    }
    int64_t Total = static_cast<int64_t>(X.size());
    if (Infer >= 0) {
      if (Known == 0 || Total % Known != 0)
        return false;
      Shape[Infer] = Total / Known;
    } else if (Known != Total) {
      return false;
    }
    Out.push_back(reshaped(X, std::move(Shape)));
    return true;
  }

  bool flatten(const onnx::NodeProto &N, const Tensor &X, Outputs &Out) const {
    int64_t R = X.rank(), Axis = attrInt(N, "axis", 1);
    if (Axis < -R || Axis > R)
      return false;
    if (Axis < 0)
      Axis += R;
    auto A = productOf(X.Shape, 0, Axis);
    auto B = productOf(X.Shape, Axis, R);
    if (!A || !B)
      return false;
    Out.push_back(reshaped(X, {*A, *B}));
    return true;
  }

  bool transpose(const onnx::NodeProto &N, const Tensor &X,
                 Outputs &Out) const {
    int64_t R = X.rank();
    std::vector<int64_t> Perm;
    if (auto P = attrInts(N, "perm"); P && !P->empty())
      Perm = *P;
    else
      for (int64_t D = R; D-- > 0;)
        Perm.push_back(D);
    if (static_cast<int64_t>(Perm.size()) != R)
      return false;
    std::vector<int64_t> Check = Perm;
    llvm::sort(Check);
    for (int64_t D = 0; D < R; ++D)
      if (Check[D] != D)
        return false;
    Dims Shape, PermStride;
    for (int64_t P : Perm)
      Shape.push_back(X.Shape[P]);
    size_t N0 = X.size();
    if (N0 == 0) {
      Out.push_back(reshaped(X, std::move(Shape)));
      return true;
    }
    auto Stride = stridesOf(X.Shape);
    if (!Stride)
      return false;
    for (int64_t P : Perm)
      PermStride.push_back((*Stride)[P]);
    std::vector<size_t> Index;
    Index.reserve(N0);
    Dims Pos(R, 0);
    for (size_t K = 0; K < N0; ++K) {
      int64_t Off = 0;
      for (int64_t D = 0; D < R; ++D)
        Off += Pos[D] * PermStride[D];
      Index.push_back(static_cast<size_t>(Off));
      for (int64_t D = R; D-- > 0;) {
        if (++Pos[D] < Shape[D])
          break;
        Pos[D] = 0;
      }
    }
    Out.push_back(take(X, Index, std::move(Shape)));
    return true;
  }

  bool expand(const Tensor &X, const Tensor *ShapeT, Outputs &Out) const {
    auto Target = intList(ShapeT);
    if (!Target || ShapeT->rank() != 1)
      return false;
    Dims Shape;
    if (!broadcastShapes(X.Shape, *Target, Shape))
      return false;
    auto Count = countElements(Shape);
    if (!Count)
      return false;
    auto Index = broadcastIndex(X.Shape, Shape, static_cast<size_t>(*Count));
    Out.push_back(take(X, Index, std::move(Shape)));
    return true;
  }

  bool tile(const Tensor &X, const Tensor *RepeatsT, Outputs &Out) const {
    auto Repeats = intList(RepeatsT);
    if (Opset < 6 || !Repeats || RepeatsT->rank() != 1 ||
        static_cast<int64_t>(Repeats->size()) != X.rank())
      return false;
    Dims Shape;
    for (int64_t D = 0; D < X.rank(); ++D) {
      int64_t Rep = (*Repeats)[D];
      if (Rep < 0 || (Rep != 0 && X.Shape[D] > MaxFoldedElements / Rep))
        return false;
      Shape.push_back(X.Shape[D] * Rep);
    }
    auto Count = countElements(Shape);
    if (!Count)
      return false;
    if (*Count == 0) {
      Out.push_back(take(X, {}, std::move(Shape)));
      return true;
    }
    auto Stride = stridesOf(X.Shape);
    if (!Stride)
      return false;
    std::vector<size_t> Index;
    Index.reserve(static_cast<size_t>(*Count));
    Dims Pos(X.rank(), 0);
    for (int64_t K = 0; K < *Count; ++K) {
      int64_t Off = 0;
      for (int64_t D = 0; D < X.rank(); ++D)
        Off += (Pos[D] % X.Shape[D]) * (*Stride)[D];
      Index.push_back(static_cast<size_t>(Off));
      for (int64_t D = X.rank(); D-- > 0;) {
        if (++Pos[D] < Shape[D])
          break;
        Pos[D] = 0;
      }
    }
    Out.push_back(take(X, Index, std::move(Shape)));
    return true;
  }

  bool constantOfShape(const onnx::NodeProto &N, const Tensor &ShapeT,
                       Outputs &Out) const {
    auto Target = intList(&ShapeT);
    if (!Target || ShapeT.rank() != 1)
      return false;
    Dims Shape(Target->begin(), Target->end());
    auto Count = countElements(Shape);
    if (!Count)
      return false;
    Tensor Fill = makeTensor(TP::FLOAT, {});
    Fill.Reals.push_back(0.0);
    if (const auto *A = findAttr(N, "value")) {
      auto V = fromProto(A->t());
      if (!V || V->size() != 1)
        return false;
      Fill = std::move(*V);
    }
    Tensor T = makeTensor(Fill.Type, std::move(Shape));
    if (T.isReal())
      T.Reals.assign(static_cast<size_t>(*Count), Fill.Reals[0]);
    else
      T.Ints.assign(static_cast<size_t>(*Count), Fill.Ints[0]);
    Out.push_back(std::move(T));
    return true;
  }

  bool range(Inputs In, Outputs &Out) const {
    if (In.size() != 3 || llvm::is_contained(In, nullptr))
      return false;
    const Tensor &Start = *In[0], &Limit = *In[1], &Delta = *In[2];
    int32_t Type = Start.Type;
    if (Type == TP::BOOL || Limit.Type != Type || Delta.Type != Type ||
        Start.size() != 1 || Limit.size() != 1 || Delta.size() != 1 ||
        Start.rank() > 1 || Limit.rank() > 1 || Delta.rank() > 1)
      return false;
    Tensor T = makeTensor(Type, {0});
    if (Start.isReal()) {
      double S = Start.Reals[0], D = Delta.Reals[0];
      if (D == 0.0)
        return false;
      double N = std::ceil(fitReal(Type, Limit.Reals[0] - S) / D);
      if (!std::isfinite(N) || N > static_cast<double>(MaxFoldedElements))
        return false;
      int64_t Count = N > 0 ? static_cast<int64_t>(N) : 0;
      // Accumulated in the element type, as ONNX Runtime's kernel does.
      double V = S;
      for (int64_t I = 0; I < Count; ++I) {
        T.Reals.push_back(V);
        V = fitReal(Type, V + D);
      }
      T.Shape[0] = Count;
    } else {
      __int128 S = Start.Ints[0], L = Limit.Ints[0], D = Delta.Ints[0];
      if (D == 0)
        return false;
      __int128 Diff = L - S, Count = 0;
      if ((Diff > 0 && D > 0) || (Diff < 0 && D < 0))
        Count = (Diff + D + (D > 0 ? -1 : 1)) / D;
      if (Count > MaxFoldedElements)
        return false;
      for (__int128 I = 0; I < Count; ++I)
        pushInt(T, static_cast<int64_t>(S + I * D));
      T.Shape[0] = static_cast<int64_t>(Count);
    }
    Out.push_back(std::move(T));
    return true;
  }

  bool split(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const Tensor &X = *In[0];
    if (X.rank() == 0 || N.output_size() == 0)
      return false;
    auto Axis = normAxis(attrInt(N, "axis", 0), X.rank());
    if (!Axis)
      return false;
    int64_t D = X.Shape[*Axis], Parts = N.output_size();
    std::vector<int64_t> Sizes;
    if (Opset < 13) {
      if (auto S = attrInts(N, "split"))
        Sizes = *S;
      else if (Opset < 2 && In.size() > 1 && In[1])
        return false; // Split-1 could take the sizes as an input.
    } else if (In.size() > 1 && In[1]) {
      auto S = intList(In[1]);
      if (!S)
        return false;
      Sizes = *S;
    }
    if (Sizes.empty()) {
      if (D % Parts != 0)
        return false;
      Sizes.assign(static_cast<size_t>(Parts), D / Parts);
    }
    if (static_cast<int64_t>(Sizes.size()) != Parts)
      return false;
    int64_t Sum = 0;
    for (int64_t S : Sizes) {
      if (S < 0 || S > D || __builtin_add_overflow(Sum, S, &Sum))
        return false;
    }
    if (Sum != D)
      return false;
    auto Outer = productOf(X.Shape, 0, *Axis);
    auto Inner = productOf(X.Shape, *Axis + 1, X.rank());
    if (!Outer || !Inner)
      return false;
    int64_t Offset = 0;
    for (int64_t S : Sizes) {
      Dims Shape(X.Shape);
      Shape[*Axis] = S;
      std::vector<size_t> Index;
      // A non-empty X holds Outer * D * Inner <= MaxFoldedElements
      // elements, so these products fit; an empty X has empty parts, and
      // Outer may then be huge.
      for (int64_t O = 0; X.size() > 0 && O < *Outer; ++O)
        for (int64_t J = 0; J < S * *Inner; ++J)
          Index.push_back(static_cast<size_t>((O * D + Offset) * *Inner + J));
      Out.push_back(take(X, Index, std::move(Shape)));
      Offset += S;
    }
    return true;
  }

  bool nonZero(const Tensor &X, Outputs &Out) const {
    int64_t R = X.rank();
    if (R == 0)
      return false; // numpy deprecates it; runtimes disagree.
    std::vector<size_t> Hits;
    for (size_t I = 0, E = X.size(); I < E; ++I)
      if (X.isReal() ? X.Reals[I] != 0.0 : X.Ints[I] != 0)
        Hits.push_back(I);
    int64_t NNZ = static_cast<int64_t>(Hits.size());
    if (!countElements({R, NNZ}))
      return false;
    Tensor T = makeTensor(TP::INT64, {R, NNZ});
    if (Hits.empty()) {
      Out.push_back(std::move(T));
      return true;
    }
    auto Stride = stridesOf(X.Shape);
    if (!Stride)
      return false;
    for (int64_t D = 0; D < R; ++D)
      for (size_t H : Hits)
        T.Ints.push_back((static_cast<int64_t>(H) / (*Stride)[D]) % X.Shape[D]);
    Out.push_back(std::move(T));
    return true;
  }

  bool where(Inputs In, Outputs &Out) const {
    if (In.size() != 3 || llvm::is_contained(In, nullptr))
      return false;
    const Tensor &C = *In[0], &X = *In[1], &Y = *In[2];
    if (C.Type != TP::BOOL || X.Type != Y.Type)
      return false;
    Dims CX, Shape;
    if (!broadcastShapes(C.Shape, X.Shape, CX) ||
        !broadcastShapes(CX, Y.Shape, Shape))
      return false;
    auto Count = countElements(Shape);
    if (!Count)
      return false;
    size_t N = static_cast<size_t>(*Count);
    auto IC = broadcastIndex(C.Shape, Shape, N);
    auto IX = broadcastIndex(X.Shape, Shape, N);
    auto IY = broadcastIndex(Y.Shape, Shape, N);
    Tensor T = makeTensor(X.Type, std::move(Shape));
    for (size_t K = 0; K < N; ++K) {
      bool Pick = C.Ints[IC[K]] != 0;
      if (T.isReal())
        T.Reals.push_back(Pick ? X.Reals[IX[K]] : Y.Reals[IY[K]]);
      else
        T.Ints.push_back(Pick ? X.Ints[IX[K]] : Y.Ints[IY[K]]);
    }
    Out.push_back(std::move(T));
    return true;
  }

  bool clip(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const Tensor &X = *In[0];
    if (X.Type == TP::BOOL)
      return false;
    double Lo = -std::numeric_limits<double>::infinity();
    double Hi = std::numeric_limits<double>::infinity();
    int64_t LoI = std::numeric_limits<int64_t>::min();
    int64_t HiI = std::numeric_limits<int64_t>::max();
    if (Opset < 11) {
      if (!X.isReal())
        return false;
      Lo = attrFloat(N, "min").getValueOr(-FLT_MAX);
      Hi = attrFloat(N, "max").getValueOr(FLT_MAX);
    } else {
      for (size_t I : {size_t(1), size_t(2)}) {
        const Tensor *B = I < In.size() ? In[I] : nullptr;
        if (!B)
          continue;
        if (B->Type != X.Type || B->size() != 1)
          return false;
        if (X.isReal())
          (I == 1 ? Lo : Hi) = B->Reals[0];
        else
          (I == 1 ? LoI : HiI) = B->Ints[0];
      }
    }
    Tensor T = makeTensor(X.Type, X.Shape);
    for (size_t I = 0, E = X.size(); I < E; ++I) {
      // Max after min, as the kernels do when the bounds cross.
      if (X.isReal())
        pushReal(T, std::min(std::max(X.Reals[I], Lo), Hi));
      else
        pushInt(T, std::min(std::max(X.Ints[I], LoI), HiI));
    }
    Out.push_back(std::move(T));
    return true;
  }

  bool reduce(const onnx::NodeProto &N, Inputs In, Outputs &Out) const {
    const std::string &Op = N.op_type();
    const Tensor &X = *In[0];
    if (X.Type == TP::BOOL)
      return false;
    bool Present;
    auto Axes = axesOf(N, In, Op == "ReduceSum" ? 13 : 18, Present);
    if (!Axes)
      return false;
    bool KeepDims = attrInt(N, "keepdims", 1) != 0;
    if (Axes->empty()) {
      if (attrInt(N, "noop_with_empty_axes", 0) != 0) {
        Out.push_back(X);
        return true;
      }
      for (int64_t D = 0; D < X.rank(); ++D)
        Axes->push_back(D);
    }
    auto Sorted = normAxes(*Axes, X.rank());
    if (!Sorted)
      return false;
    Dims Shape, Kept; // Kept: output shape with reduced dims as 1.
    bool Empty = X.size() == 0;
    for (int64_t D = 0; D < X.rank(); ++D) {
      bool Reduced = llvm::is_contained(*Sorted, D);
      Kept.push_back(Reduced ? 1 : X.Shape[D]);
      if (!Reduced || KeepDims)
        Shape.push_back(Reduced ? 1 : X.Shape[D]);
    }
    auto Count = countElements(Kept);
    if (!Count)
      return false;
    bool IsMinMax = Op == "ReduceMin" || Op == "ReduceMax";
    if (Empty && IsMinMax && *Count > 0)
      return false; // The min of nothing.
    // Each output element accumulates the inputs that map to it.
    size_t NOut = static_cast<size_t>(*Count);
    std::vector<int64_t> AccI(NOut, Op == "ReduceProd" ? 1 : 0);
    std::vector<double> AccR(NOut, Op == "ReduceProd" ? 1.0 : 0.0);
    std::vector<bool> Seen(NOut, false);
    // Only the loop over X's elements reads the strides: an empty X may
    // have strides that overflow.
    auto OutStride = stridesOf(Kept);
    if (!OutStride && !Empty)
      return false;
    Dims Pos(X.rank(), 0);
    for (size_t K = 0, E = X.size(); K < E; ++K) {
      int64_t O = 0;
      for (int64_t D = 0; D < X.rank(); ++D)
        O += (Kept[D] == 1 ? 0 : Pos[D]) * (*OutStride)[D];
      size_t Slot = static_cast<size_t>(O);
      if (X.isReal()) {
        double V = X.Reals[K], &A = AccR[Slot];
        if (Op == "ReduceSum")
          A = fitReal(X.Type, A + V);
        else if (Op == "ReduceProd")
          A = fitReal(X.Type, A * V);
        else if (!Seen[Slot] || std::isnan(V))
          A = V;
        else if (!std::isnan(A))
          A = Op == "ReduceMin" ? std::min(A, V) : std::max(A, V);
      } else {
        int64_t V = X.Ints[K], &A = AccI[Slot];
        if (Op == "ReduceSum")
          A = fitInt(X.Type, *intBinary(BinOp::Add, A, V));
        else if (Op == "ReduceProd")
          A = fitInt(X.Type, *intBinary(BinOp::Mul, A, V));
        else if (!Seen[Slot])
          A = V;
        else
          A = Op == "ReduceMin" ? std::min(A, V) : std::max(A, V);
      }
      Seen[Slot] = true;
      for (int64_t D = X.rank(); D-- > 0;) {
        if (++Pos[D] < X.Shape[D])
          break;
        Pos[D] = 0;
      }
    }
    Tensor T = makeTensor(X.Type, std::move(Shape));
    if (T.isReal())
      T.Reals = std::move(AccR);
    else
      T.Ints = std::move(AccI);
    Out.push_back(std::move(T));
    return true;
  }

  int64_t Opset;
};

} // namespace

bool evaluate(int64_t Opset, const onnx::NodeProto &N, Inputs In,
              Outputs &Out) {
  const Evaluator E(Opset);
  Out.clear();
  if (!E.eval(N, In, Out) || Out.size() != static_cast<size_t>(N.output_size()))
    return false;
  for (const Tensor &T : Out) {
    auto Count = countElements(T.Shape);
    if (!isSupportedType(T.Type) || !Count ||
        static_cast<size_t>(*Count) != T.size())
      return false;
  }
  return true;
}

} // namespace perfc::frontend::fold
