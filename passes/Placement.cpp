//===- Placement.cpp - Inference kernels on the processors of a SoC -------===//
#include "passes/Placement.h"

#include "passes/CacheReuse.h"
#include "passes/Predict.h"
#include "passes/Saturating.h"
#include "passes/StorageType.h"
#include "passes/Z3Timeout.h"

#include "costmodels/Collectives.h"
#include "hwdb/Cluster.h"
#include "ir/Graph.h"
#include "passes/WorkPass.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

using namespace perfc;

namespace {

constexpr double Inf = std::numeric_limits<double>::infinity();

llvm::Error error(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

double since(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
      .count();
}

int64_t toNs(double Seconds) { return roundSaturated(Seconds * 1e9); }

/// The chain DP: exact when every tensor goes from kernel i to i + 1.
std::vector<unsigned> chainDp(const PlacementProblem &P) {
  const unsigned N = P.numKernels(), D = P.NumDevices;
  std::vector<double> Into(N, 0); // Transfer seconds into kernel i.
  for (const PlacementProblem::Tensor &T : P.Tensors)
    Into[T.Consumers.front()] += T.TransferSeconds;
  std::vector<std::vector<double>> Best(N, std::vector<double>(D, Inf));
  std::vector<std::vector<unsigned>> From(N, std::vector<unsigned>(D, 0));
  for (unsigned K = 0; K < N; ++K)
    for (unsigned Dv = 0; Dv < D; ++Dv) {
      if (!std::isfinite(P.Seconds[K][Dv]))
        continue;
      double Prev = K == 0 ? 0 : Inf;
      for (unsigned E = 0; K > 0 && E < D; ++E) {
        const double C = Best[K - 1][E] + (E == Dv ? 0 : Into[K]);
        if (C < Prev) {
          Prev = C;
          From[K][Dv] = E;
        }
      }
      Best[K][Dv] = Prev + P.Seconds[K][Dv];
    }
  std::vector<unsigned> A(N, 0);
  if (N == 0)
    return A;
  A[N - 1] = std::min_element(Best[N - 1].begin(), Best[N - 1].end()) -
             Best[N - 1].begin();
  for (unsigned K = N - 1; K > 0; --K)
    A[K - 1] = From[K][A[K]];
  return A;
}

/// Local search from the best single device and the per-kernel minimum:
/// move one kernel, or a kernel with its successor, to another device while
/// that lowers the latency.
std::vector<unsigned> heuristic(const PlacementProblem &P) {
  const unsigned N = P.numKernels(), D = P.NumDevices;
  std::vector<std::vector<unsigned>> Starts;
  for (unsigned Dv = 0; Dv < D; ++Dv)
    Starts.emplace_back(N, Dv);
  std::vector<unsigned> Min(N, 0);
  for (unsigned K = 0; K < N; ++K)
    Min[K] = std::min_element(P.Seconds[K].begin(), P.Seconds[K].end()) -
             P.Seconds[K].begin();
  Starts.push_back(Min);
  std::vector<unsigned> Best;
  double BestCost = Inf;
  for (std::vector<unsigned> &A : Starts) {
    double Cost = P.evaluate(A);
    if (!std::isfinite(Cost) && A != Min)
      continue;
    for (bool Improved = true; Improved;) {
      Improved = false;
      for (unsigned K = 0; K < N; ++K)
        for (unsigned Span = 1; Span <= 2 && K + Span <= N; ++Span)
          for (unsigned Dv = 0; Dv < D; ++Dv) {
            std::vector<unsigned> B = A;
            for (unsigned I = K; I < K + Span; ++I)
              B[I] = Dv;
            const double C = P.evaluate(B);
            if (C < Cost - 1e-15) {
              A = std::move(B);
              Cost = C;
              Improved = true;
            }
          }
    }
    if (Cost < BestCost || Best.empty()) {
      BestCost = Cost;
      Best = A;
    }
  }
  return Best;
}

std::vector<unsigned> bruteForce(const PlacementProblem &P) {
  const unsigned N = P.numKernels(), D = P.NumDevices;
  std::vector<unsigned> A(N, 0), Best(N, 0);
  double BestCost = Inf;
  while (true) {
    const double C = P.evaluate(A);
    if (C < BestCost) {
      BestCost = C;
      Best = A;
    }
    unsigned I = 0;
    while (I < N && ++A[I] == D)
      A[I++] = 0;
    if (I == N)
      break;
  }
  return Best;
}

/// P without the (kernel, device) pairs no optimal placement uses: moving
/// kernel k from d to its fastest device e adds at most one transfer of
/// each tensor k reads or writes, so where Seconds[k][d] exceeds
/// Seconds[k][e] plus all those transfers, the move improves any placement
/// that uses d. Every kernel keeps its fastest device.
PlacementProblem pruned(const PlacementProblem &P) {
  PlacementProblem Q = P;
  std::vector<double> Slack(P.numKernels(), 0);
  for (const PlacementProblem::Tensor &T : P.Tensors) {
    Slack[T.Producer] += T.TransferSeconds;
    for (unsigned C : T.Consumers)
      Slack[C] += T.TransferSeconds;
  }
  for (unsigned K = 0; K < P.numKernels(); ++K) {
    const double Min =
        *std::min_element(Q.Seconds[K].begin(), Q.Seconds[K].end());
    for (double &V : Q.Seconds[K])
      if (V > Min + Slack[K] * (1 + 1e-9) + 1e-12)
        V = Inf;
  }
  return Q;
}

/// Z3 over 0-1 variables, as weighted MaxSAT (Z3's MaxRes, which proves
/// these problems much faster than minimizing a sum of if-then-else
/// integers): exactly one x[k][d] per kernel; y[t][d] whenever a consumer
/// of t is on d and its producer is not; soft constraints not-x[k][d] of
/// weight Seconds[k][d] - min_d Seconds[k][d] and not-y[t][d] of weight the
/// transfer, in integer nanoseconds. Returns the assignment and whether it
/// is proven optimal.
std::pair<std::vector<unsigned>, bool> solveZ3(const PlacementProblem &P,
                                               double TimeLimit) {
  const unsigned N = P.numKernels(), D = P.NumDevices;
  z3::context Ctx;
  z3::optimize Opt(Ctx);
  z3::params Params(Ctx);
  Params.set("timeout", z3TimeoutMs(TimeLimit));
  Opt.set(Params);
  auto Soft = [&](const z3::expr &Pay, int64_t W) {
    if (W > 0)
      Opt.add_soft(!Pay, std::to_string(W).c_str());
  };
  // x[k][d], absent (false) where d cannot run k.
  std::vector<std::vector<llvm::Optional<z3::expr>>> X(N);
  for (unsigned K = 0; K < N; ++K) {
    const int64_t Min =
        toNs(*std::min_element(P.Seconds[K].begin(), P.Seconds[K].end()));
    z3::expr_vector Row(Ctx);
    X[K].resize(D);
    for (unsigned Dv = 0; Dv < D; ++Dv) {
      if (!std::isfinite(P.Seconds[K][Dv]))
        continue;
      z3::expr B =
          Ctx.bool_const(llvm::formatv("x{0}_{1}", K, Dv).str().c_str());
      X[K][Dv] = B;
      Row.push_back(B);
      Soft(B, toNs(P.Seconds[K][Dv]) - Min);
    }
    std::vector<int> Ones(Row.size(), 1);
    Opt.add(z3::pbeq(Row, Ones.data(), 1));
  }
  for (unsigned T = 0; T < P.Tensors.size(); ++T) {
    const PlacementProblem::Tensor &Tn = P.Tensors[T];
    for (unsigned Dv = 0; Dv < D; ++Dv) {
      z3::expr_vector Needs(Ctx);
      for (unsigned C : Tn.Consumers)
        if (X[C][Dv])
          Needs.push_back(*X[C][Dv]);
      if (Needs.empty())
        continue;
      z3::expr Y =
          Ctx.bool_const(llvm::formatv("y{0}_{1}", T, Dv).str().c_str());
      z3::expr Any = z3::mk_or(Needs);
      if (X[Tn.Producer][Dv])
        Opt.add(z3::implies(Any && !*X[Tn.Producer][Dv], Y));
      else
        Opt.add(z3::implies(Any, Y));
      Soft(Y, toNs(Tn.TransferSeconds));
    }
  }
  const z3::check_result R = Opt.check();
  std::vector<unsigned> A;
  if (R == z3::unsat)
    return {A, false};
  // Out of time: Z3's best model so far, if it has one.
  llvm::Optional<z3::model> Got;
  try {
    Got = Opt.get_model();
  } catch (const z3::exception &) {
    return {A, false};
  }
  const z3::model &M = *Got;
  A.assign(N, 0);
  for (unsigned K = 0; K < N; ++K) {
    for (unsigned Dv = 0; Dv < D; ++Dv)
      if (X[K][Dv] && M.eval(*X[K][Dv], true).is_true())
        A[K] = Dv;
  }
  return {A, R == z3::sat};
}

/// The per-device compute type rule (Placement.h).
cost::OpTime timeOn(const OpWork &W, const hw::Device &D,
                    const cost::TimeOptions &O) {
  cost::OpTime T = cost::opTime(W, D, O);
  if (!T.Unsupported || !ir::isFloatingPoint(W.Type))
    return T;
  cost::OpTime Best = T;
  for (ir::DType Alt : D.Supports.DTypes) {
    if (!ir::isFloatingPoint(Alt))
      continue;
    cost::TimeOptions A = O;
    A.ComputeType = Alt;
    cost::OpTime AT = cost::opTime(W, D, A);
    if (!AT.Unsupported && (Best.Unsupported || AT.Seconds < Best.Seconds))
      Best = AT;
  }
  // The type asked for stays the request; ComputeType says what ran.
  Best.RequestedType = T.RequestedType;
  return Best;
}

/// A warning when some processor is priced in another floating type than
/// the one asked for (an fp16 NPU given an fp32 model) while another runs
/// the same kernel in the type asked: the choice between them then rests
/// on the types as much as on the processors.
llvm::Optional<Warning>
typeWarning(llvm::ArrayRef<PlacementDevice> Devices,
            const std::vector<std::vector<cost::OpTime>> &Times) {
  const unsigned D = Devices.size();
  std::vector<unsigned> Substituted(D, 0);
  std::vector<ir::DType> Type(D, ir::DType::F32);
  bool Unequal = false;
  ir::DType Asked = ir::DType::F32;
  for (const std::vector<cost::OpTime> &Kernel : Times) {
    bool Sub = false, AsAsked = false;
    for (unsigned Dv = 0; Dv < D; ++Dv) {
      const cost::OpTime &T = Kernel[Dv];
      if (T.Unsupported || T.IsView || !ir::isFloatingPoint(T.RequestedType))
        continue;
      if (T.ComputeType == T.RequestedType ||
          (T.RequestedType == ir::DType::TF32 &&
           T.ComputeType == ir::DType::F32)) {
        AsAsked = true;
        continue;
      }
      Sub = true;
      ++Substituted[Dv];
      Type[Dv] = T.ComputeType;
      Asked = T.RequestedType;
    }
    Unequal |= Sub && AsAsked;
  }
  if (!Unequal)
    return llvm::None;
  std::string Which;
  ir::DType Common = ir::DType::F32;
  for (unsigned Dv = 0; Dv < D; ++Dv)
    if (Substituted[Dv]) {
      Which += (Which.empty() ? "" : ", ") +
               llvm::formatv("{0} runs in {1} ({2} kernels)", Devices[Dv].Name,
                             ir::name(Type[Dv]), Substituted[Dv])
                   .str();
      Common = Type[Dv];
    }
  return Warning{
      "", llvm::formatv("--place: the model asks for {0}, which {1} and the "
                        "other processors run as asked, so the placement "
                        "compares types as well as processors; give "
                        "--compute-type {2} to price them all in one type",
                        ir::name(Asked), Which, ir::name(Common))
              .str()};
}

} // namespace

bool PlacementProblem::isChain() const {
  for (const Tensor &T : Tensors)
    if (T.Consumers.size() != 1 || T.Consumers.front() != T.Producer + 1)
      return false;
  return true;
}

double PlacementProblem::evaluate(const std::vector<unsigned> &Assign,
                                  double *Transfer) const {
  double Total = 0, Moved = 0;
  for (unsigned K = 0; K < Seconds.size(); ++K)
    Total += Seconds[K][Assign[K]];
  for (const Tensor &T : Tensors) {
    uint64_t Sent = 0; // Devices the tensor goes to (NumDevices <= 64).
    for (unsigned C : T.Consumers)
      if (Assign[C] != Assign[T.Producer] && !(Sent >> Assign[C] & 1)) {
        Sent |= uint64_t(1) << Assign[C];
        Moved += T.TransferSeconds;
      }
  }
  if (Transfer)
    *Transfer = Moved;
  return Total + Moved;
}

llvm::Expected<PlacementSolution>
perfc::solvePlacement(const PlacementProblem &P, PlacementSolver S,
                      double TimeLimitSeconds) {
  const auto T0 = std::chrono::steady_clock::now();
  if (P.NumDevices == 0 || P.NumDevices > 64)
    return error("placement: between 1 and 64 devices, not " +
                 llvm::Twine(P.NumDevices));
  for (unsigned K = 0; K < P.numKernels(); ++K)
    if (std::none_of(P.Seconds[K].begin(), P.Seconds[K].end(),
                     [](double V) { return std::isfinite(V); }))
      return error("placement: kernel " + llvm::Twine(K) +
                   " runs on no device");
  PlacementSolution Sol;
  if (S == PlacementSolver::BruteForce) {
    if (std::pow(double(P.NumDevices), double(P.numKernels())) > 2e7)
      return error("placement: too many assignments to enumerate");
    Sol.Assign = bruteForce(P);
    Sol.Optimal = true;
    Sol.Method = "brute-force";
  } else if (S == PlacementSolver::Auto && P.isChain()) {
    Sol.Assign = chainDp(P);
    Sol.Optimal = true;
    Sol.Method = "chain-dp";
  } else {
    Sol.Assign = heuristic(P);
    Sol.Method = "heuristic";
    if (S != PlacementSolver::Heuristic) {
      const double Left = TimeLimitSeconds - since(T0);
      const double H = P.evaluate(Sol.Assign);
      try {
        auto [A, Proven] = solveZ3(pruned(P), std::max(0.05, Left));
        // Z3 optimizes integer nanoseconds: the heuristic's placement may
        // be lower by rounding, and is then optimal too.
        if (!A.empty() && P.evaluate(A) <= H) {
          Sol.Assign = std::move(A);
          Sol.Method = Proven ? "z3" : "z3 (time limit)";
        } else if (!Proven) {
          Sol.Method = "heuristic (z3 time limit)";
        } else {
          Sol.Method = "z3";
        }
        Sol.Optimal = Proven;
      } catch (const z3::exception &E) {
        return error(llvm::Twine("placement: Z3 failed: ") + E.msg());
      }
    }
  }
  Sol.Seconds = P.evaluate(Sol.Assign, &Sol.TransferSeconds);
  Sol.SolveSeconds = since(T0);
  return Sol;
}

llvm::Expected<PlacementResult> perfc::placeGraph(const ir::Graph &G,
                                                  const hw::Cluster &C,
                                                  const PlacementOptions &O) {
  const hw::NodeGroup &Node = C.Groups.front();
  if (Node.Devices.size() < 2)
    return error("--place: cluster '" + C.Name +
                 "' holds one kind of processor per node; give a SoC or "
                 "mixed machine (e.g. snapdragon-8-gen-2, jetson-agx-orin)");
  if (!Node.IntraNode)
    return error("--place: cluster '" + C.Name +
                 "' has no link between the processors of a node");
  PlacementResult R;
  for (const hw::NodeDevice &ND : Node.Devices)
    R.Devices.push_back({ND.Dev->Name, ND.Dev.get(), ND.Count});
  const unsigned D = R.Devices.size();

  const GraphWork Work = computeWork(G);
  R.Plan = planKernels(G, Work, O.Fusion);
  const KernelPlan &Plan = R.Plan;
  const unsigned N = Plan.Kernels.size();

  PlacementProblem P;
  P.NumDevices = D;
  P.Seconds.assign(N, std::vector<double>(D, Inf));
  std::vector<std::vector<cost::OpTime>> Times(N);
  cost::TimeOptions TO = O.Time;
  // Each processor's caches as if it ran the whole plan (Predict.cpp does
  // the same for one device), so that a placement on one processor prices
  // what `--hw` on that processor alone does.
  std::vector<std::vector<LevelShares>> Residency;
  for (unsigned Dv = 0; Dv < D; ++Dv)
    Residency.push_back(
        cacheResidency(G, Plan, *R.Devices[Dv].Dev, O.StorageType));
  for (unsigned K = 0; K < N; ++K) {
    const Kernel &Kn = Plan.Kernels[K];
    const OpWork W =
        storedWork(kernelWork(Kn, O.Fusion.FlashAttention), O.StorageType);
    for (unsigned Dv = 0; Dv < D; ++Dv) {
      TO.LevelShare = Residency[Dv].empty()
                          ? llvm::ArrayRef<double>()
                          : llvm::ArrayRef<double>(Residency[Dv][K]);
      Times[K].push_back(timeOn(W, *R.Devices[Dv].Dev, TO));
      P.Seconds[K][Dv] = Times[K].back().Seconds;
    }
    if (std::none_of(P.Seconds[K].begin(), P.Seconds[K].end(),
                     [](double V) { return std::isfinite(V); })) {
      const ir::Node &H = *G.nodes()[Kn.Head];
      return error(llvm::formatv(
          "node '{0}' ({1}): no processor of '{2}' runs {3} {4} ops; "
          "try another --compute-type",
          H.name(), H.opType(), C.Name,
          ir::name(Times[K].front().RequestedType), name(Kn.Work.Class)));
    }
  }

  // Tensors between kernels: a member's input produced by another kernel,
  // looking through views; folded values and graph inputs are resident.
  llvm::DenseMap<const ir::Value *, unsigned> TensorOf;
  for (unsigned K = 0; K < N; ++K)
    for (unsigned M : Plan.Kernels[K].Members)
      for (const ir::Value *V : G.nodes()[M]->inputs()) {
        if (!V)
          continue;
        V = Plan.dataRoot(V);
        if (!V->producer() ||
            Plan.Exec[V->producer()->index()] != NodeExec::Kernel)
          continue;
        const int From = Plan.KernelOf[V->producer()->index()];
        if (From < 0 || unsigned(From) == K)
          continue;
        auto [It, New] = TensorOf.try_emplace(V, P.Tensors.size());
        if (New) {
          PlacementProblem::Tensor T;
          T.Producer = From;
          const double Bytes =
              storedBytes(V->bytes(), V->type(), O.StorageType);
          T.Bytes = Bytes;
          T.TransferSeconds = cost::p2pSeconds(Bytes, *Node.IntraNode);
          P.Tensors.push_back(std::move(T));
        }
        auto &Cs = P.Tensors[It->second].Consumers;
        if (!llvm::is_contained(Cs, K))
          Cs.push_back(K);
      }
  for (PlacementProblem::Tensor &T : P.Tensors)
    std::sort(T.Consumers.begin(), T.Consumers.end());
  R.Tensors = P.Tensors.size();

  for (unsigned Dv = 0; Dv < D; ++Dv)
    R.SingleDeviceSeconds.push_back(P.evaluate(std::vector<unsigned>(N, Dv)));
  if (llvm::Optional<Warning> W = typeWarning(R.Devices, Times))
    R.Warnings.push_back(std::move(*W));

  auto Sol = solvePlacement(P, O.Solver, O.TimeLimitSeconds);
  if (!Sol)
    return Sol.takeError();
  R.KernelDevice = Sol->Assign;
  R.LatencySeconds = Sol->Seconds;
  R.TransferSeconds = Sol->TransferSeconds;
  R.KernelSeconds = Sol->Seconds - Sol->TransferSeconds;
  R.Optimal = Sol->Optimal;
  R.SolveSeconds = Sol->SolveSeconds;
  R.Method = Sol->Method;
  R.KernelsPerDevice.assign(D, 0);
  R.SecondsPerDevice.assign(D, 0);
  R.NodeDevice.assign(G.numNodes(), -1);
  for (unsigned K = 0; K < N; ++K) {
    const unsigned Dv = R.KernelDevice[K];
    R.KernelTimes.push_back(Times[K][Dv]);
    ++R.KernelsPerDevice[Dv];
    R.SecondsPerDevice[Dv] += P.Seconds[K][Dv];
    for (unsigned M : Plan.Kernels[K].Members)
      R.NodeDevice[M] = Dv;
  }
  for (const PlacementProblem::Tensor &T : P.Tensors) {
    uint64_t Sent = 0;
    for (unsigned Cn : T.Consumers) {
      const unsigned To = R.KernelDevice[Cn];
      if (To != R.KernelDevice[T.Producer] && !(Sent >> To & 1)) {
        Sent |= uint64_t(1) << To;
        ++R.Transfers;
        R.TransferBytes += T.Bytes;
      }
    }
  }
  return R;
}

void perfc::applyPlacement(const PlacementResult &P, Report &R, bool Explain) {
  PlacementReport PR;
  for (const PlacementDevice &D : P.Devices)
    PR.Devices.push_back(D.Name);
  KernelSummary Summary = R.Kernels ? *R.Kernels : KernelSummary();
  Summary.ComputeBoundSeconds = Summary.MemoryBoundSeconds =
      Summary.OverheadBoundSeconds = 0;
  for (unsigned K = 0; K < P.Plan.Kernels.size(); ++K) {
    const Kernel &Kn = P.Plan.Kernels[K];
    const cost::OpTime &T = P.KernelTimes[K];
    const std::string &Dev = PR.Devices[P.KernelDevice[K]];
    PR.Assignment.emplace_back(R.Nodes[Kn.Head].Name, Dev);
    for (unsigned M : Kn.Members)
      R.Nodes[M].Device = Dev;
    R.Nodes[Kn.Head].Time = kernelTime(T, Kn, Explain, Dev);
    addBoundTime(Summary, T);
  }
  R.Kernels = Summary;
  R.LatencySeconds = P.LatencySeconds;
  PR.LatencySeconds = P.LatencySeconds;
  PR.TransferSeconds = P.TransferSeconds;
  PR.TransferBytes = P.TransferBytes;
  PR.Transfers = P.Transfers;
  PR.KernelsPerDevice = P.KernelsPerDevice;
  PR.SecondsPerDevice = P.SecondsPerDevice;
  PR.SingleDeviceSeconds = P.SingleDeviceSeconds;
  PR.Optimal = P.Optimal;
  PR.SolveSeconds = P.SolveSeconds;
  PR.Method = P.Method;
  R.Placement = std::move(PR);
  R.Warnings.insert(R.Warnings.end(), P.Warnings.begin(), P.Warnings.end());
}
