//===- RecurrentOps.cpp - Work of RNN, GRU and LSTM -----------------------===//
//
// Each direction runs, per time step and batch row, one product of the input
// with W and one of the previous hidden state with R:
//
//   MACs = seq_len * batch * num_directions * gates * (input + hidden) * hidden
//
// with gates = 1 (RNN), 3 (GRU), 4 (LSTM). Flops = 2 * MACs plus the gate
// math per hidden unit and step, counted with the elementwise costs of
// ElementwiseOps.cpp (sigmoid 6, tanh 7) and a fused multiply-add as 2:
//
// | Op   | gate flops per hidden unit per step                              |
// |------|------------------------------------------------------------------|
// | RNN  | 10: sum of the two products (1), Wb + Rb (2), tanh (7)           |
// | GRU  | 33: z, r: sums (2), biases (4), sigmoids (12); candidate: R      |
// |      |     bias (1), reset multiply (1), sum (1), W bias (1), tanh (7); |
// |      |     h = (1 - z)*h~ + z*h_prev (4)                                |
// | LSTM | 48: sums (4), biases (8), sigmoids i f o (18), tanh g (7),       |
// |      |     c = f*c + i*g (3), h = o*tanh(c) (8); +6 with peepholes      |
//
// The default activations are assumed (custom ones change little), biases
// are counted even when B is absent (an upper bound of 2-8 flops), and
// sequence_lens is ignored: every sequence runs the full seq_len.
//
//===----------------------------------------------------------------------===//
#include "passes/OpRegistry.h"

#include "ir/Graph.h"

#include <string>

namespace perfc {

namespace {
struct CellKind {
  const char *Op;
  unsigned Gates;
  unsigned GateFlops; ///< Per hidden unit and step.
};
} // namespace

static constexpr CellKind Cells[] = {
    {"RNN", 1, 10},
    {"GRU", 3, 33},
    {"LSTM", 4, 48},
};

/// Extra flops of LSTM peepholes per hidden unit and step (3 FMAs).
static constexpr unsigned PeepholeFlops = 6;

static const CellKind *cellKind(llvm::StringRef Op) {
  for (const CellKind &C : Cells)
    if (Op == C.Op)
      return &C;
  return nullptr;
}

namespace {
/// Sizes of a recurrent op; 0 when unknown.
struct RecurrentDims {
  double SeqLen = 0, Batch = 0, Input = 0, Hidden = 0, Directions = 0;
};
} // namespace

static RecurrentDims recurrentDims(const ir::Node &N, unsigned Gates) {
  RecurrentDims D;
  const ir::Value *X = N.input(0), *Wt = N.input(1), *Rt = N.input(2);
  if (X) {
    // X is [seq, batch, input], or [batch, seq, input] with layout = 1.
    bool BatchFirst = N.getInt("layout", 0) == 1;
    D.SeqLen = X->shape().size(BatchFirst ? 1 : 0);
    D.Batch = X->shape().size(BatchFirst ? 0 : 1);
    D.Input = X->shape().size(2);
  }
  // W is [directions, gates*hidden, input], R [directions, gates*hidden,
  // hidden].
  if (D.Input == 0 && Wt)
    D.Input = Wt->shape().size(2);
  D.Hidden = static_cast<double>(N.getInt("hidden_size", 0));
  if (D.Hidden <= 0 && Rt)
    D.Hidden = Rt->shape().size(2);
  if (D.Hidden <= 0 && Wt)
    D.Hidden = static_cast<double>(Wt->shape().size(1) / Gates);
  D.Directions = N.getString("direction", "forward") == "bidirectional" ? 2 : 1;
  return D;
}

static void recurrentWork(const ir::Node &N, OpWork &W) {
  const CellKind *Cell = cellKind(N.opType());
  if (!Cell)
    return;
  RecurrentDims D = recurrentDims(N, Cell->Gates);
  double Steps = D.SeqLen * D.Batch * D.Directions;
  W.Macs = Steps * Cell->Gates * (D.Input + D.Hidden) * D.Hidden;
  unsigned GateFlops = Cell->GateFlops;
  // LSTM's optional input 7 holds the peephole weights.
  if (N.opType() == "LSTM" && N.input(7))
    GateFlops += PeepholeFlops;
  W.Flops = 2 * W.Macs + Steps * D.Hidden * GateFlops;
  W.Formula = "2*seq*batch*dirs*" + std::to_string(Cell->Gates) +
              "*(input+hidden)*hidden + " + std::to_string(GateFlops) +
              "*seq*batch*dirs*hidden";
}

void registerRecurrentOps(OpRegistry &R) {
  for (const CellKind &C : Cells)
    R.add(C.Op, OpClass::Recurrent, &recurrentWork);
}

} // namespace perfc
