//===- Schedule.h - Timelines of predicted execution ------------*- C++ -*-===//
//
// The order in which kernels and transfers run, for the Chrome/Perfetto
// trace (--trace) and as a check of the closed-form step times: inference
// is one stream of kernels; a pipeline-parallel training step is the 1F1B
// schedule of PipeDream-Flush / Megatron-LM (Narayanan et al. 2021):
// stage s runs pp - s - 1 warm-up forwards, then alternates one forward
// and one backward, then drains its backwards; interleaved (vp model
// chunks per stage), Megatron-LM's order of chunk passes. A forward waits
// for the previous stage's forward of the same micro-batch (plus the
// transfer), a backward for the next stage's backward.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_PASSES_SCHEDULE_H
#define PERFC_PASSES_SCHEDULE_H

#include <string>
#include <vector>

namespace perfc {

struct TimelineEvent {
  std::string Name;
  std::string Category; ///< "forward", "backward", "comm", "optimizer", ...
  unsigned Device = 0;  ///< Pipeline stage (or 0).
  unsigned Stream = 0;  ///< 0: compute, 1: communication.
  double Start = 0;     ///< Seconds from the step's start.
  double Duration = 0;
  int MicroBatch = -1;
};

struct Timeline {
  std::vector<TimelineEvent> Events;
  double End = 0; ///< When the last event finishes.
};

/// Per-stage (or per-chunk) times of one micro-batch.
struct StageTimes {
  double Forward = 0;  ///< Including its tensor-parallel communication.
  double Backward = 0; ///< Including recomputation and its communication.
};

/// Times of each stage's model chunks ([stage][chunk], every stage with
/// the same number of chunks): interleaved 1F1B with more than one.
using ChunkTimes = std::vector<std::vector<StageTimes>>;

/// 1F1B over Stages.size() stages and MicroBatches micro-batches; Transfer
/// is the time of one activation (or gradient) between neighbours.
Timeline simulateOneFOneB(const std::vector<StageTimes> &Stages,
                          unsigned MicroBatches, double Transfer);

/// 1F1B with Transfers[s] between stages s and s + 1 (Stages.size() - 1
/// entries: links differ where stages sit on different GPU types); without
/// Record only End is filled (a planner's step time, no events).
Timeline simulateOneFOneB(const std::vector<StageTimes> &Stages,
                          unsigned MicroBatches,
                          const std::vector<double> &Transfers,
                          bool Record = true);

/// 1F1B over the chunks of each stage: Megatron-LM's interleaved schedule
/// where they are more than one (MicroBatches a multiple of the stages),
/// chunk c of stage s being virtual stage c x stages + s; Transfers as
/// above, the last stage handing chunk c to the first stage's chunk c + 1
/// over the longest of them.
Timeline simulateOneFOneB(const ChunkTimes &Stages, unsigned MicroBatches,
                          const std::vector<double> &Transfers,
                          bool Record = true);

/// GPipe: every forward, then every backward, on each stage.
Timeline simulateGPipe(const std::vector<StageTimes> &Stages,
                       unsigned MicroBatches, double Transfer);

} // namespace perfc

#endif // PERFC_PASSES_SCHEDULE_H
