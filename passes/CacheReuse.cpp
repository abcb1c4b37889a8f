//===- CacheReuse.cpp - Which memory level serves each kernel -------------===//
#include "passes/CacheReuse.h"

#include "hwdb/Device.h"
#include "ir/Graph.h"
#include "passes/Fusion.h"
#include "passes/StorageType.h"

#include <algorithm>
#include <memory>

namespace perfc {

namespace {

/// Sums over a prefix of access times (a Fenwick tree): the bytes of the
/// tensors whose latest use is at each time, so the bytes touched since a
/// time are one difference of two prefix sums.
class TimeSums {
public:
  explicit TimeSums(size_t N) : Tree(N + 1, 0.0) {}
  void add(size_t Time, double Bytes) {
    for (size_t I = Time + 1; I < Tree.size(); I += I & -I)
      Tree[I] += Bytes;
  }
  /// Sum over times [0, Time).
  double before(size_t Time) const {
    double S = 0;
    for (size_t I = Time; I > 0; I -= I & -I)
      S += Tree[I];
    return S;
  }

private:
  std::vector<double> Tree;
};

/// One tensor of the replay.
struct Slot {
  double Bytes = 0;
  bool Persistent = false;  ///< Weights and load-time constants.
  bool GraphOutput = false; ///< Returned: written to main memory.
  int LastReader = -1;      ///< Kernel index of its last read in a run.
  bool Present = false;     ///< In the stack.
  size_t LastUse = 0;       ///< Time of its latest use while present.
  unsigned OuterRead = 0;   ///< Outermost level a read found it in.
  bool Read = false;        ///< Some kernel read it.
};

class Replay {
public:
  Replay(const ir::Graph &G, const KernelPlan &Plan, const hw::Device &D,
         llvm::Optional<ir::DType> Storage, unsigned Innermost)
      : Plan(Plan), D(D), Storage(Storage), Innermost(Innermost),
        Negligible(D.Memory[Innermost].CapacityBytes / 4096),
        SlotOf(G.numValues(), NoSlot) {
    // Each kernel's reads, writes and the tensors that die after it, as
    // slot indices in three flat lists (offsets per kernel), so that the
    // replay looks nothing up.
    const size_t N = Plan.Kernels.size();
    size_t Reads = 0, Writes = 0;
    for (const Kernel &Ker : Plan.Kernels) {
      Reads += Ker.Reads.size();
      Writes += Ker.Writes.size();
    }
    Slots.reserve(Reads + Writes);
    ReadSlot.reserve(Reads);
    ReadBytes.reserve(Reads);
    WriteSlot.reserve(Writes);
    WriteBytes.reserve(Writes);
    ReadBegin.reserve(N + 1);
    WriteBegin.reserve(N + 1);
    for (size_t K = 0; K < N; ++K) {
      const Kernel &Ker = Plan.Kernels[K];
      ReadBegin.push_back(ReadSlot.size());
      for (const TensorUse &U : Ker.Reads) {
        const double B = bytes(U);
        if (!followed(U, B))
          continue;
        const unsigned I = slot(U, B);
        Slots[I].LastReader = static_cast<int>(K);
        ReadSlot.push_back(I);
        ReadBytes.push_back(B);
      }
      WriteBegin.push_back(WriteSlot.size());
      for (const TensorUse &U : Ker.Writes) {
        const double B = bytes(U);
        if (!followed(U, B))
          continue;
        WriteSlot.push_back(slot(U, B));
        WriteBytes.push_back(B);
      }
    }
    ReadBegin.push_back(ReadSlot.size());
    WriteBegin.push_back(WriteSlot.size());
    // A tensor dies after its last reader, or after its writer when
    // nothing reads it; weights and the run's outputs do not.
    std::vector<int> DiesAfter(Slots.size(), -1);
    for (size_t K = 0; K < N; ++K)
      for (size_t A = WriteBegin[K]; A < WriteBegin[K + 1]; ++A)
        DiesAfter[WriteSlot[A]] = static_cast<int>(K);
    for (size_t I = 0; I < Slots.size(); ++I) {
      const Slot &S = Slots[I];
      if (S.Persistent || S.GraphOutput)
        DiesAfter[I] = -1;
      else if (S.LastReader >= 0)
        DiesAfter[I] = S.LastReader;
    }
    std::vector<unsigned> Count(N + 1, 0);
    for (int K : DiesAfter)
      if (K >= 0)
        ++Count[K + 1];
    for (size_t K = 0; K < N; ++K)
      Count[K + 1] += Count[K];
    DeathBegin = Count;
    Deaths.resize(Count[N]);
    for (size_t I = 0; I < Slots.size(); ++I)
      if (DiesAfter[I] >= 0)
        Deaths[Count[DiesAfter[I]]++] = static_cast<unsigned>(I);
    Times = std::make_unique<TimeSums>(Slots.size() + ReadSlot.size() +
                                       WriteSlot.size());
  }

  std::vector<LevelShares> run() {
    const size_t Levels = D.Memory.size();
    ReadLevel.assign(ReadSlot.size(), 0);
    warmUp();
    replay();
    std::vector<LevelShares> Shares(Plan.Kernels.size());
    LevelShares Read(Levels), Write(Levels);
    for (size_t K = 0; K < Plan.Kernels.size(); ++K) {
      std::fill(Read.begin(), Read.end(), 0.0);
      std::fill(Write.begin(), Write.end(), 0.0);
      for (size_t A = ReadBegin[K]; A < ReadBegin[K + 1]; ++A)
        Read[ReadLevel[A]] += ReadBytes[A];
      for (size_t A = WriteBegin[K]; A < WriteBegin[K + 1]; ++A)
        Write[writeLevel(Slots[WriteSlot[A]])] += WriteBytes[A];
      const OpWork &W = Plan.Kernels[K].Work;
      Shares[K] = combine(Read, Write, W.BytesRead, W.BytesWritten);
    }
    return Shares;
  }

private:
  double bytes(const TensorUse &U) const {
    return storedBytes(U.Bytes, U.V->type(), Storage);
  }

  /// Whether the replay follows U, of B bytes as stored: big enough to
  /// matter, and a value of the planned graph (kernels read only those).
  bool followed(const TensorUse &U, double B) const {
    return B >= Negligible && U.V->index() < SlotOf.size();
  }

  /// U's slot, made on its first use (B: its bytes as stored).
  unsigned slot(const TensorUse &U, double B) {
    unsigned &I = SlotOf[U.V->index()];
    if (I == NoSlot) {
      I = static_cast<unsigned>(Slots.size());
      Slot S;
      S.Bytes = B;
      const ir::Node *P = U.V->producer();
      S.Persistent =
          U.V->isConstant() || (P && Plan.Exec[P->index()] == NodeExec::Folded);
      S.GraphOutput = U.V->isGraphOutput();
      Slots.push_back(S);
    }
    return I;
  }

  /// The level a tensor written now must reach: main memory for graph
  /// outputs, the outermost level a later read found it in, else (read
  /// from the innermost cache, or never read) the innermost cache.
  unsigned writeLevel(const Slot &S) const {
    if (S.GraphOutput)
      return 0;
    return S.Read ? S.OuterRead : Innermost;
  }

  /// The level serving a read at stack distance Distance: the innermost
  /// cache with a bandwidth that holds it, else main memory.
  unsigned levelAt(double Distance) const {
    for (size_t I = D.Memory.size(); I-- > 1;) {
      const hw::MemoryLevel &L = D.Memory[I];
      if (L.BandwidthBytesPerSecond > 0 && Distance <= L.CapacityBytes)
        return static_cast<unsigned>(I);
    }
    return 0;
  }

  void touch(Slot &S) {
    if (S.Present)
      Times->add(S.LastUse, -S.Bytes);
    else
      InStack += S.Bytes;
    S.LastUse = Now++;
    Times->add(S.LastUse, S.Bytes);
    S.Present = true;
  }

  void drop(Slot &S) {
    if (!S.Present)
      return;
    Times->add(S.LastUse, -S.Bytes);
    InStack -= S.Bytes;
    S.Present = false;
  }

  /// The stack as a run starts in the steady state: only what outlives a
  /// run (weights, load-time constants) is in it, in the order of its last
  /// read in the previous run, as replaying a run would leave it.
  void warmUp() {
    // Slots are numbered in the order of their first read, and a weight is
    // nearly always read by one kernel: sort only when that is not so.
    std::vector<std::pair<int, unsigned>> Order;
    Order.reserve(Slots.size());
    bool Sorted = true;
    for (size_t I = 0; I < Slots.size(); ++I)
      if (Slots[I].Persistent && Slots[I].LastReader >= 0) {
        Sorted = Sorted &&
                 (Order.empty() || Order.back().first <= Slots[I].LastReader);
        Order.push_back({Slots[I].LastReader, static_cast<unsigned>(I)});
      }
    if (!Sorted)
      std::sort(Order.begin(), Order.end());
    for (const auto &[Kernel, I] : Order)
      touch(Slots[I]);
  }

  void replay() {
    for (size_t K = 0; K < Plan.Kernels.size(); ++K) {
      // A kernel streams its inputs together: each one's distance is taken
      // as the kernel starts, before any of them moves to the top.
      for (size_t A = ReadBegin[K]; A < ReadBegin[K + 1]; ++A) {
        Slot &S = Slots[ReadSlot[A]];
        unsigned Level = 0;
        if (S.Present) // the bytes used since S's last use, S included
          Level = levelAt(InStack - Times->before(S.LastUse));
        ReadLevel[A] = Level;
        S.OuterRead = S.Read ? std::min(S.OuterRead, Level) : Level;
        S.Read = true;
      }
      for (size_t A = ReadBegin[K]; A < ReadBegin[K + 1]; ++A)
        touch(Slots[ReadSlot[A]]);
      for (size_t A = WriteBegin[K]; A < WriteBegin[K + 1]; ++A)
        touch(Slots[WriteSlot[A]]);
      for (size_t A = DeathBegin[K]; A < DeathBegin[K + 1]; ++A)
        drop(Slots[Deaths[A]]);
    }
  }

  static LevelShares combine(const LevelShares &Read, const LevelShares &Write,
                             double ReadBytes, double WriteBytes) {
    double ReadSum = 0, WriteSum = 0;
    for (double B : Read)
      ReadSum += B;
    for (double B : Write)
      WriteSum += B;
    const double R = ReadSum > 0 ? ReadBytes : 0;
    const double W = WriteSum > 0 ? WriteBytes : 0;
    if (!(R + W > 0))
      return {};
    LevelShares S(Read.size(), 0.0);
    for (size_t I = 0; I < S.size(); ++I)
      S[I] = ((R > 0 ? R * Read[I] / ReadSum : 0) +
              (W > 0 ? W * Write[I] / WriteSum : 0)) /
             (R + W);
    return S;
  }

  const KernelPlan &Plan;
  const hw::Device &D;
  const llvm::Optional<ir::DType> Storage;
  const unsigned Innermost; ///< Index of the innermost cache with a bandwidth.
  /// Tensors smaller than this (1/4096 of that cache: biases, batch-norm
  /// parameters) are not followed: they move a kernel's distances by too
  /// little to matter, their bytes take the shares of the kernel's others,
  /// and a ResNet-50 has 267 of them.
  const double Negligible;
  static constexpr unsigned NoSlot = ~0u;
  std::vector<unsigned> SlotOf; ///< By value index: its slot, or NoSlot.
  std::vector<Slot> Slots;
  std::vector<size_t> ReadBegin, WriteBegin;
  std::vector<unsigned> ReadSlot, WriteSlot, DeathBegin, Deaths;
  std::vector<double> ReadBytes, WriteBytes;
  std::vector<unsigned> ReadLevel; ///< Per read, the level that served it.
  std::unique_ptr<TimeSums> Times;
  size_t Now = 0;
  double InStack = 0; ///< Bytes of the tensors in the stack.
};

} // namespace

std::vector<LevelShares> cacheResidency(const ir::Graph &G,
                                        const KernelPlan &Plan,
                                        const hw::Device &D,
                                        llvm::Optional<ir::DType> Storage) {
  unsigned Innermost = 0;
  for (size_t I = D.Memory.size(); I-- > 1;)
    if (D.Memory[I].BandwidthBytesPerSecond > 0) {
      Innermost = static_cast<unsigned>(I);
      break;
    }
  if (Innermost == 0)
    return {};
  return Replay(G, Plan, D, Storage, Innermost).run();
}

} // namespace perfc
