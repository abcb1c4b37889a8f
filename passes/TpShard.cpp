//===- TpShard.cpp - One tensor-parallel rank's share of an op ------------===//
#include "passes/TpShard.h"

namespace perfc {

double tpShare(const BlockInfo &Blocks, unsigned Node, unsigned Tp,
               bool SequenceParallel) {
  if (Tp == 1)
    return 1;
  if (Blocks.Tp[Node] != TpRole::Replicated)
    return 1.0 / Tp;
  if (SequenceParallel && Blocks.inBlock(Node))
    return 1.0 / Tp;
  return 1;
}

OpWork shardWork(const OpWork &W, TpRole Role, unsigned Tp, double Share,
                 double BytesScale) {
  OpWork S = W;
  S.Macs *= Share;
  S.Flops *= Share;
  const double Bytes = BytesScale * Share;
  // Bytes that are no tensor (a dropout mask) follow the share, not the
  // training type.
  S.SideBytesRead *= Share;
  S.SideBytesWritten *= Share;
  S.BytesRead = (W.BytesRead - W.SideBytesRead) * Bytes + S.SideBytesRead;
  S.BytesWritten =
      (W.BytesWritten - W.SideBytesWritten) * Bytes + S.SideBytesWritten;
  S.LayoutBytes *= Bytes;
  if (Tp > 1 && S.Gemm.valid()) {
    switch (Role) {
    case TpRole::Column:
    case TpRole::Vocab:
      S.Gemm.N /= Tp;
      break;
    case TpRole::Row:
      S.Gemm.K /= Tp;
      break;
    case TpRole::Sharded:
      S.Gemm.Batch /= Tp;
      break;
    case TpRole::Replicated:
      if (Share < 1)
        S.Gemm.M /= Tp;
      break;
    }
  }
  return S;
}

} // namespace perfc
