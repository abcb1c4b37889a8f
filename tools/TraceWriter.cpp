//===- TraceWriter.cpp - The predicted timeline as a Chrome trace ---------===//
//
// Chrome's Trace Event Format (JSON object form, "X" complete events in
// microseconds), which chrome://tracing and https://ui.perfetto.dev open.
// One process per device (pipeline stage), one thread per stream; for
// inference, a "memory" counter of the bytes the run holds, and under
// tensor parallelism one rank's exchanges on a communication track.
//
//===----------------------------------------------------------------------===//
#include "tools/ReportWriters.h"

#include "support/JsonText.h"

#include "llvm/Support/JSON.h"

namespace perfc {
namespace {

void metadata(llvm::json::OStream &J, const char *What, unsigned Pid,
              unsigned Tid, const std::string &Name) {
  J.object([&] {
    J.attribute("name", What);
    J.attribute("ph", "M");
    J.attribute("pid", int64_t(Pid));
    J.attribute("tid", int64_t(Tid));
    J.attributeObject("args", [&] { J.attribute("name", jsonText(Name)); });
  });
}

void event(llvm::json::OStream &J, const TimelineEvent &E) {
  J.object([&] {
    J.attribute("name", jsonText(E.Name));
    J.attribute("cat", jsonText(E.Category));
    J.attribute("ph", "X");
    J.attribute("pid", int64_t(E.Device));
    J.attribute("tid", int64_t(E.Stream));
    J.attribute("ts", E.Start * 1e6);
    J.attribute("dur", E.Duration * 1e6);
    if (E.MicroBatch >= 0)
      J.attributeObject(
          "args", [&] { J.attribute("micro_batch", int64_t(E.MicroBatch)); });
  });
}

/// Inference: the kernels in order on one stream; under tensor
/// parallelism each exchange after the kernel that writes its tensor
/// (Exchanges, drawn on a communication track: the same stream, so the
/// next kernel waits for it).
/// Under pipeline parallelism one batch's pass: each stage's kernels on
/// its own device, from when the stage before has sent its activations,
/// and its send after them.
Timeline kernelTimeline(const Report &R,
                        std::vector<TimelineEvent> &Exchanges) {
  Timeline T;
  const PipelineParallelReport *PP =
      R.PipelineParallel ? &*R.PipelineParallel : nullptr;
  const size_t Stages = PP ? PP->Stages.size() : 1;
  std::vector<double> Now(Stages, 0.0);
  for (size_t S = 1; S < Stages; ++S)
    Now[S] = Now[S - 1] + PP->Stages[S - 1].seconds();
  for (size_t I = 0; I < R.Nodes.size(); ++I) {
    const NodeReport &N = R.Nodes[I];
    if (!N.Time || N.Time->Exec != "kernel")
      continue;
    const unsigned D = PP && I < PP->NodeStage.size() ? PP->NodeStage[I] : 0;
    double &At = Now[D];
    T.Events.push_back({N.Name, N.Op, D, 0, At, N.Time->Seconds, -1});
    At += N.Time->Seconds;
    if (N.Time->TpCommSeconds > 0) {
      Exchanges.push_back({N.Name + " (exchange)", "tensor-parallel", D, 1, At,
                           N.Time->TpCommSeconds, -1});
      At += N.Time->TpCommSeconds;
    }
  }
  for (size_t S = 0; PP && S + 1 < Stages; ++S)
    Exchanges.push_back({"send to stage " + std::to_string(S + 2), "pipeline",
                         unsigned(S), 1, Now[S], PP->Stages[S].SendSeconds,
                         -1});
  T.End = PP ? PP->LatencySeconds : Now[0];
  return T;
}

} // namespace

void writeChromeTrace(const Report &R, llvm::raw_ostream &OS) {
  const bool Training = R.Train.hasValue();
  std::vector<TimelineEvent> Exchanges;
  const Timeline T = Training ? R.Train->Trace : kernelTimeline(R, Exchanges);
  const std::string Device =
      R.Hardware ? R.Hardware->Device : std::string("device");
  const PipelineParallelReport *PP =
      R.PipelineParallel ? &*R.PipelineParallel : nullptr;
  const unsigned Devices = Training ? R.Train->Stages.size()
                           : PP     ? PP->Stages.size()
                                    : 1;
  llvm::json::OStream J(OS, 1);
  J.object([&] {
    J.attribute("displayTimeUnit", "ms");
    J.attributeObject("otherData", [&] {
      J.attribute("model", jsonText(R.Model.Name));
      J.attribute("device", jsonText(Device));
      J.attribute("end_s", T.End);
    });
    J.attributeArray("traceEvents", [&] {
      for (unsigned D = 0; D < Devices; ++D) {
        // Stages as the table and JSON number them: a training step's
        // from 0 (as plan.stages), an inference pipeline's from 1.
        metadata(J, "process_name", D, 0,
                 Training || PP
                     ? "stage " + std::to_string(Training ? D : D + 1) + " (" +
                           Device + ")"
                     : Device);
        metadata(J, "thread_name", D, 0, "compute");
        if (Training || !Exchanges.empty())
          metadata(J, "thread_name", D, 1, "communication");
      }
      if (Training && R.Train->InputSeconds > 0)
        metadata(J, "thread_name", 0, 2, "host input");
      for (const TimelineEvent &E : T.Events)
        event(J, E);
      for (const TimelineEvent &E : Exchanges)
        event(J, E);
      // Inference: the memory one run holds (weights and live
      // activations) as a counter track, a value from each kernel's start;
      // under pipeline parallelism the fullest stage's, on its device.
      if (R.Memory && R.Memory->Usage.LiveBytes.size() == T.Events.size())
        for (size_t I = 0; I < T.Events.size(); ++I) {
          if (PP && T.Events[I].Device != PP->FullestStage)
            continue;
          J.object([&] {
            J.attribute("name", "memory");
            J.attribute("ph", "C");
            J.attribute("pid", int64_t(T.Events[I].Device));
            J.attribute("ts", T.Events[I].Start * 1e6);
            J.attributeObject("args", [&] {
              J.attribute("bytes", R.Memory->Usage.LiveBytes[I]);
            });
          });
        }
    });
  });
  OS << "\n";
}

} // namespace perfc
