//===- ReportJson.cpp - Report as JSON ------------------------------------===//
#include "tools/ReportWriters.h"

#include "passes/TrainOptionNames.h"
#include "perfc/Version.h"
#include "support/JsonText.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>

namespace perfc {
namespace {

/// Counts are integers in JSON while a double holds them exactly (below
/// 2^53); larger ones (training FLOPs of big models) are plain numbers.
llvm::json::Value count(double V) {
  if (V >= 0 && V < 9007199254740992.0 && std::floor(V) == V)
    return static_cast<int64_t>(V);
  return V;
}

void writeWork(llvm::json::OStream &J, const OpWork &W) {
  J.attribute("params", static_cast<int64_t>(W.Params));
  J.attribute("flops", count(W.Flops));
  J.attribute("macs", count(W.Macs));
  J.attribute("bytes", count(W.bytes()));
  J.attribute("bytes_read", count(W.BytesRead));
  J.attribute("bytes_written", count(W.BytesWritten));
}

void writeTensors(llvm::json::OStream &J, llvm::StringRef Key,
                  const std::vector<TensorInfo> &Tensors) {
  J.attributeArray(Key, [&] {
    for (const TensorInfo &T : Tensors)
      J.object([&] {
        J.attribute("name", jsonText(T.Name));
        J.attribute("dtype", T.DType);
        J.attribute("shape", jsonText(T.Shape));
      });
  });
}

/// A strategy's parallel degrees and micro-batch size.
void writeParallelism(llvm::json::OStream &J, const TrainOptions &O) {
  J.attribute("dp", int64_t(O.Dp));
  J.attribute("tp", int64_t(O.Tp));
  J.attribute("cp", int64_t(O.Cp));
  J.attribute("cp_comm", name(O.CpComm));
  J.attribute("ep", int64_t(O.Ep));
  J.attribute("pp", int64_t(O.Pp));
  J.attribute("vp", int64_t(O.Vp));
  J.attribute("sp", O.SequenceParallel);
  J.attribute("tp_comm_overlap", O.TpCommOverlap);
  J.attribute("overlap_param_gather", O.OverlapParamGather);
  J.attribute("overlap_moe_expert_parallel_comm",
              O.OverlapMoeExpertParallelComm);
  J.attribute("micro_batch", O.MicroBatch);
}

/// A strategy's memory savers.
void writeMemorySavers(llvm::json::OStream &J, const TrainOptions &O) {
  J.attribute("recompute", name(O.Recomp));
  if (O.Recomp == Recompute::Selective)
    J.attributeArray("recompute_modules", [&] {
      for (const std::string &M : recomputeModuleNames(O.RecomputeModules))
        J.value(M);
    });
  if (O.Recomp == Recompute::Full) {
    J.attribute("recompute_method", name(O.Method));
    J.attribute("recompute_num_layers", int64_t(O.RecomputeNumLayers));
  }
  J.attribute("zero", int64_t(O.Zero));
}

/// What the planner chooses: degrees, micro-batch and memory savers.
void writeChoice(llvm::json::OStream &J, const TrainOptions &O) {
  writeParallelism(J, O);
  writeMemorySavers(J, O);
}

/// An uneven data split across GPU types: each type's replicas and share
/// of the batch; with T (a prediction of it), each type's own step and
/// memory.
void writeDataSplit(llvm::json::OStream &J, const TrainOptions &O,
                    const TrainReport *T) {
  if (O.DataSplit.empty())
    return;
  J.attributeArray("data_split", [&] {
    for (size_t I = 0; I < O.DataSplit.size(); ++I)
      J.object([&] {
        const DataShare &D = O.DataSplit[I];
        const int64_t Batch = int64_t(D.MicroBatches) * O.MicroBatch;
        J.attribute("device", jsonText(D.Device));
        J.attribute("replicas", int64_t(D.Replicas));
        J.attribute("devices", int64_t(D.Replicas) * O.Tp);
        J.attribute("micro_batches", int64_t(D.MicroBatches));
        J.attribute("batch_per_replica", Batch);
        J.attribute("samples", Batch * D.Replicas);
        if (T && I < T->DataSplit.size()) {
          const DataShareReport &P = T->DataSplit[I];
          J.attribute("step_time_s", P.StepSeconds);
          J.attribute("compute_s", P.ComputeSeconds);
          J.attribute("memory_bytes", P.PeakBytes);
          J.attribute("capacity_bytes", P.CapacityBytes);
        }
      });
  });
}

/// plan (the chosen strategy, its stages and placement, the search),
/// plans (--top) and pareto (--pareto).
void writePlan(llvm::json::OStream &J, const Report::PlanInfo &P,
               bool Timings) {
  const PlanResult &Res = P.Result;
  const TrainOptions &O = Res.Options;
  const TrainReport &T = Res.Report;
  J.attributeObject("plan", [&] {
    writeChoice(J, O);
    J.attribute("dtype", ir::name(O.DType));
    J.attribute("optimizer", name(O.Optimizer));
    J.attribute("partition", name(O.Split));
    J.attribute("flash_attention", O.FlashAttention);
    J.attribute("moe_capacity", O.ExpertCapacity);
    J.attribute("global_batch", T.GlobalBatch);
    J.attribute("devices", int64_t(T.Devices));
    J.attributeObject("model", [&] {
      J.attribute("name", jsonText(P.ModelName));
      J.attribute("file_stem", jsonText(P.ModelFileStem));
      J.attribute("nodes", int64_t(P.ModelNodes));
      J.attribute("params", count(P.ModelParams));
    });
    // Stage s holds ranks [s tp cp dp, (s + 1) tp cp dp) in Megatron's
    // order (tensor ranks adjacent, inside a node; context, then data ranks
    // next).
    const unsigned PerStage = O.Tp * O.Cp * O.Dp;
    const unsigned L = T.Stages.empty() ? 0 : [&] {
      unsigned Blocks = 0;
      for (const StageReport &S : T.Stages)
        Blocks += S.Blocks;
      return Blocks;
    }();
    J.attributeArray("stages", [&] {
      for (const StageReport &S : T.Stages)
        J.object([&] {
          J.attribute("stage", int64_t(S.Stage));
          J.attribute("devices", int64_t(PerStage));
          // The GPU type it runs on (mixed clusters: each stage one type).
          J.attribute("device", jsonText(S.Device));
          // Units are prologue 0, blocks 1..L, epilogue L + 1.
          J.attributeArray("layers", [&] {
            for (auto [First, Last] : S.Chunks) {
              const unsigned A = std::max(First, 1u) - 1;
              const unsigned B = std::min(Last, std::max(L, 1u)) - 1;
              J.value(llvm::json::Array{int64_t(A), int64_t(B)});
            }
          });
          J.attribute("blocks", int64_t(S.Blocks));
          J.attribute("memory_bytes", S.peakBytes());
          // Busy time in a step: its micro-batches, forward and backward.
          J.attribute("time_s", S.microBatchSeconds() * T.MicroBatches);
          J.attribute("micro_batch_s", S.microBatchSeconds());
        });
    });
    J.attributeArray("placement", [&] {
      for (const StageReport &S : T.Stages)
        J.object([&] {
          const uint64_t First = uint64_t(S.Stage) * PerStage;
          const uint64_t Last = First + PerStage - 1;
          J.attribute("stage", int64_t(S.Stage));
          J.attribute("ranks",
                      llvm::json::Array{int64_t(First), int64_t(Last)});
          J.attribute("nodes",
                      llvm::json::Array{int64_t(First / P.DevicesPerNode),
                                        int64_t(Last / P.DevicesPerNode)});
        });
    });
    writeDataSplit(J, O, &T);
    J.attributeObject("predicted", [&] {
      J.attribute("step_time_s", T.StepSeconds);
      J.attribute("peak_bytes", T.peak().peakBytes());
      J.attribute("samples_per_s", T.SamplesPerSecond);
    });
    J.attribute("optimal", Res.Optimal);
    J.attributeObject("search", [&] {
      J.attribute("planner", name(Res.Planner));
      J.attribute("framework", name(Res.TargetFramework));
      J.attribute("space", int64_t(Res.Space));
      J.attribute("candidates", int64_t(Res.Candidates));
      J.attribute("feasible", int64_t(Res.Feasible));
      if (Res.Planner == PlannerKind::Z3)
        J.attribute("solver_candidates", int64_t(Res.SolverInput));
      if (Timings) {
        J.attribute("evaluate_s", Res.EvaluateSeconds);
        J.attribute("solve_s", Res.SolveSeconds);
        J.attribute("candidates_per_s",
                    Res.EvaluateSeconds > 0
                        ? Res.Candidates / Res.EvaluateSeconds
                        : 0.0);
      }
      J.attribute("timed_out", Res.TimedOut);
      if (P.TimeLimitSeconds > 0)
        J.attribute("time_limit_s", P.TimeLimitSeconds);
    });
  });
  auto List = [&](llvm::StringRef Key, const std::vector<PlanCandidate> &Ps) {
    J.attributeArray(Key, [&] {
      for (const PlanCandidate &C : Ps)
        J.object([&] {
          writeChoice(J, C.Options);
          // Mixed GPU types: each stage's device and layer count.
          if (!C.StageDevices.empty()) {
            J.attributeArray("stage_devices", [&] {
              for (const std::string &D : C.StageDevices)
                J.value(jsonText(D));
            });
            J.attributeArray("stage_blocks", [&] {
              for (unsigned B : C.Options.ChunkBlocks)
                J.value(int64_t(B));
            });
          }
          writeDataSplit(J, C.Options, nullptr);
          J.attribute("step_time_s", C.StepSeconds);
          J.attribute("peak_bytes", C.PeakBytes);
        });
    });
  };
  if (Res.Top.size() > 1)
    List("plans", Res.Top);
  if (!Res.Pareto.empty())
    List("pareto", Res.Pareto);
}

} // namespace

void writeReportJson(const Report &R, llvm::raw_ostream &OS) {
  llvm::json::OStream J(OS, 2);
  J.object([&] {
    J.attribute("schema_version", ReportSchemaVersion);
    J.attribute("perfc_version", PERFC_VERSION_STRING);
    J.attributeObject("model", [&] {
      const ModelInfo &M = R.Model;
      J.attribute("name", jsonText(M.Name));
      J.attribute("path", jsonText(M.Path));
      J.attribute("graph_name", jsonText(M.GraphName));
      J.attribute("producer", jsonText(M.Producer));
      J.attribute("ir_version", M.IrVersion);
      J.attribute("opset", M.Opset);
      J.attribute("nodes", static_cast<int64_t>(R.Nodes.size()));
      J.attribute("file_bytes", static_cast<int64_t>(M.FileBytes));
      J.attribute("weight_bytes_skipped",
                  static_cast<int64_t>(M.WeightBytesSkipped));
      writeTensors(J, "inputs", M.Inputs);
      writeTensors(J, "outputs", M.Outputs);
      J.attributeObject("bindings", [&] {
        for (const auto &[Name, Value] : M.Bindings)
          J.attribute(jsonText(Name), Value);
      });
    });
    if (R.Hardware)
      J.attributeObject("hardware", [&] {
        J.attribute("name", jsonText(R.Hardware->Name));
        J.attribute("device", jsonText(R.Hardware->Device));
        J.attribute("source", jsonText(R.Hardware->Source));
        if (!R.Hardware->ComputeType.empty())
          J.attribute("compute_type", R.Hardware->ComputeType);
        if (R.Hardware->LaunchOverheadSeconds)
          J.attribute("launch_overhead_s", *R.Hardware->LaunchOverheadSeconds);
        if (R.Hardware->MemoryReserveBytes)
          J.attribute("memory_reserve_bytes",
                      count(*R.Hardware->MemoryReserveBytes));
        if (!R.Hardware->StorageType.empty())
          J.attribute("storage_type", R.Hardware->StorageType);
        if (!R.Hardware->ConvLayout.empty())
          J.attribute("conv_layout", R.Hardware->ConvLayout);
        if (R.Hardware->FlashAttention)
          J.attribute("flash_attention", true);
      });
    J.attributeObject("totals", [&] {
      writeWork(J, R.Total);
      if (R.LatencySeconds)
        J.attribute("latency_s", *R.LatencySeconds);
      if (R.Kernels) {
        const KernelSummary &K = *R.Kernels;
        J.attribute("kernels", int64_t(K.Kernels));
        J.attribute("fused_nodes", int64_t(K.Fused));
        J.attribute("view_nodes", int64_t(K.Views));
        J.attribute("folded_nodes", int64_t(K.Folded));
        J.attribute("kernel_bytes", count(K.KernelBytes));
        J.attributeObject("time_by_bound_s", [&] {
          J.attribute("compute", K.ComputeBoundSeconds);
          J.attribute("memory", K.MemoryBoundSeconds);
          J.attribute("overhead", K.OverheadBoundSeconds);
        });
      }
    });
    if (R.Memory) {
      const InferenceMemoryReport &M = *R.Memory;
      J.attributeObject("memory", [&] {
        J.attribute("peak_bytes", count(M.Usage.PeakBytes));
        J.attribute("weights_bytes", count(M.Usage.WeightsBytes));
        J.attribute("activations_bytes", count(M.Usage.ActivationsBytes));
        J.attribute("inputs_bytes", count(M.Usage.InputsBytes));
        J.attribute("capacity_bytes", count(M.CapacityBytes));
        J.attribute("fits", M.Fits);
        J.attribute("device", jsonText(M.Device));
        J.attribute("peak_at", jsonText(M.PeakAt));
        J.attribute("complete", M.Usage.Complete);
        if (M.MaxBatch) {
          J.attribute("max_batch", int64_t(*M.MaxBatch));
          J.attribute("bytes_per_sample", count(M.BytesPerSample));
        }
        if (!M.Explain.empty())
          J.attribute("explain", jsonText(M.Explain));
        if (R.TensorParallel || R.ExpertParallel || R.PipelineParallel)
          J.attribute("per_rank", true);
        if (R.PipelineParallel)
          J.attribute("stage", int64_t(R.PipelineParallel->FullestStage + 1));
      });
    }
    if (R.BatchSearch) {
      const BatchSearchReport &S = *R.BatchSearch;
      J.attributeObject("batch_search", [&] {
        J.attribute("batch", S.Batch);
        J.attribute("from_batch", S.FromBatch);
        J.attribute("estimate", int64_t(S.Estimate));
        J.attribute("limit", S.Limit);
        if (S.MaxLatencySeconds)
          J.attribute("max_latency_s", *S.MaxLatencySeconds);
        J.attributeArray("tried", [&] {
          for (const BatchProbe &P : S.Tried)
            J.object([&] {
              J.attribute("batch", P.Batch);
              J.attribute("fits", P.Fits);
              J.attribute("latency_s", P.LatencySeconds);
              if (P.MeetsLatency)
                J.attribute("meets_latency", *P.MeetsLatency);
            });
        });
      });
    }
    if (R.PipelineParallel) {
      const PipelineParallelReport &PP = *R.PipelineParallel;
      J.attributeObject("pipeline_parallel", [&] {
        J.attribute("degree", int64_t(PP.Degree));
        J.attribute("in_flight_batches", int64_t(PP.inFlight()));
        J.attribute("latency_s", PP.LatencySeconds);
        J.attribute("interval_s", PP.IntervalSeconds);
        J.attribute("samples_per_s", PP.samplesPerSecond());
        J.attributeArray("stages", [&] {
          for (const PipelineStageReport &St : PP.Stages)
            J.object([&] {
              J.attribute("first_block", int64_t(St.FirstBlock));
              J.attribute("last_block", int64_t(St.LastBlock));
              J.attribute("first_block_name", jsonText(St.FirstBlockName));
              J.attribute("last_block_name", jsonText(St.LastBlockName));
              J.attribute("kernels", int64_t(St.Kernels));
              J.attribute("kernels_s", St.KernelSeconds);
              J.attribute("send_bytes", count(St.SendBytes));
              J.attribute("send_s", St.SendSeconds);
              if (!St.SendLink.empty())
                J.attribute("send_link", jsonText(St.SendLink));
              J.attribute("time_s", St.seconds());
              if (R.Memory) {
                const InferenceMemory &U = St.Memory.Usage;
                J.attribute("peak_bytes", count(U.PeakBytes));
                J.attribute("weights_bytes", count(U.WeightsBytes));
                J.attribute("activations_bytes", count(U.ActivationsBytes));
                J.attribute("in_flight_inputs_bytes",
                            count(St.InFlightInputsBytes));
                J.attribute("received_bytes", count(St.ReceivedBytes));
                J.attribute("peak_at", jsonText(St.Memory.PeakAt));
                J.attribute("fits", St.Memory.Fits);
              }
            });
        });
        if (!PP.Explain.empty())
          J.attribute("explain", jsonText(PP.Explain));
      });
    }
    if (R.TensorParallel) {
      const TensorParallelReport &TP = *R.TensorParallel;
      J.attributeObject("tensor_parallel", [&] {
        J.attribute("degree", int64_t(TP.Degree));
        J.attribute("link", jsonText(TP.Link));
        J.attribute("all_reduces", int64_t(TP.AllReduces));
        J.attribute("all_reduce_bytes", count(TP.AllReduceBytes));
        J.attribute("all_gathers", int64_t(TP.AllGathers));
        J.attribute("all_gather_bytes", count(TP.AllGatherBytes));
        J.attribute("kernels_s", TP.KernelSeconds);
        J.attribute("comm_s", TP.CommSeconds);
        if (!TP.Explain.empty())
          J.attribute("explain", jsonText(TP.Explain));
      });
    }
    if (R.ExpertParallel) {
      const ExpertParallelReport &EP = *R.ExpertParallel;
      J.attributeObject("expert_parallel", [&] {
        J.attribute("degree", int64_t(EP.Degree));
        J.attribute("link", jsonText(EP.Link));
        J.attribute("all_to_alls", int64_t(EP.AllToAlls));
        J.attribute("all_to_all_bytes", count(EP.AllToAllBytes));
        J.attribute("kernels_s", EP.KernelSeconds);
        J.attribute("comm_s", EP.CommSeconds);
        if (!EP.Explain.empty())
          J.attribute("explain", jsonText(EP.Explain));
      });
    }
    if (R.Serving) {
      const ServingPlan &P = *R.Serving;
      // Per layout: its step and what it serves, per device too.
      const auto Layout = [&](const ServingCandidate &C) {
        J.attribute("split", name(C.Split));
        J.attribute("devices", int64_t(C.Devices));
        J.attribute("pp", int64_t(C.Stages));
      };
      J.attributeObject("serving_plan", [&] {
        J.attribute("objective", name(P.Objective));
        if (P.MaxLatencySeconds)
          J.attribute("max_latency_s", *P.MaxLatencySeconds);
        J.attribute("samples", count(P.Samples));
        J.attribute("max_devices", int64_t(P.MaxDevices));
        J.attribute("max_pipeline_devices", int64_t(P.MaxPipelineDevices));
        if (const ServingCandidate *C = P.chosen())
          J.attributeObject("chosen", [&] { Layout(*C); });
        J.attributeArray("candidates", [&] {
          for (const ServingCandidate &C : P.Candidates)
            J.object([&] {
              Layout(C);
              J.attribute("latency_s", C.LatencySeconds);
              J.attribute("interval_s", C.IntervalSeconds);
              J.attribute("samples", count(C.Samples));
              if (P.AtMaxBatch)
                J.attribute("at_max_batch", C.AtMaxBatch);
              const double Rate = C.samplesPerSecond();
              J.attribute("samples_per_s", Rate);
              J.attribute("samples_per_s_per_device", Rate / C.Devices);
              J.attribute("peak_bytes", C.PeakBytes);
              J.attribute("capacity_bytes", C.CapacityBytes);
              J.attribute("fits", C.Fits);
              if (C.MaxBatch)
                J.attribute("max_batch", int64_t(*C.MaxBatch));
            });
        });
        J.attributeArray("skipped", [&] {
          for (const std::string &Why : P.Skipped)
            J.value(jsonText(Why));
        });
        J.attribute("at_max_batch", P.AtMaxBatch);
        if (P.AtMaxBatch)
          J.attributeArray("not_served", [&] {
            for (const std::string &Why : P.NotServed)
              J.value(jsonText(Why));
          });
      });
    }
    if (R.Train && R.Strategy) {
      const TrainOptions &O = *R.Strategy;
      const TrainReport &T = *R.Train;
      J.attributeObject("strategy", [&] {
        writeParallelism(J, O);
        J.attribute("global_batch", T.GlobalBatch);
        J.attribute("micro_batches", T.MicroBatches);
        writeMemorySavers(J, O);
        J.attribute("dtype", ir::name(O.DType));
        J.attribute("optimizer", name(O.Optimizer));
        J.attribute("grad_compression", gradCompressionName(O.GradCompression));
        J.attribute("comm_protocol", cost::name(O.Protocol));
        J.attribute("schedule", name(O.Schedule));
        J.attribute("partition", name(O.Split));
        J.attribute("flash_attention", O.FlashAttention);
        J.attribute("moe_capacity", O.ExpertCapacity);
        J.attribute("devices", int64_t(T.Devices));
        J.attribute("blocks", int64_t(T.ModelBlocks));
        J.attribute("blocks_from",
                    T.BlocksFromStructure ? "structure" : "names");
        writeDataSplit(J, O, &T);
      });
      J.attributeObject("step", [&] {
        J.attribute("time_s", T.StepSeconds);
        J.attribute("compute_s", T.ComputeSeconds);
        J.attribute("comm_s", T.CommSeconds);
        J.attribute("exposed_comm_s", T.ExposedCommSeconds);
        J.attribute("bubble_s", T.BubbleSeconds);
        J.attribute("optimizer_s", T.OptimizerSeconds);
        J.attribute("grad_accum_s", T.GradAccumSeconds);
        J.attribute("tp_comm_s", T.TpCommSeconds);
        J.attribute("tp_overlapped_s", T.TpOverlappedSeconds);
        J.attribute("cp_comm_s", T.CpCommSeconds);
        J.attribute("cp_overlapped_s", T.CpOverlappedSeconds);
        J.attribute("ep_comm_s", T.EpCommSeconds);
        J.attribute("ep_overlapped_s", T.EpOverlappedSeconds);
        J.attribute("p2p_s", T.P2pSeconds);
        J.attribute("dp_comm_s", T.DpCommSeconds);
        J.attribute("dp_exposed_s", T.DpExposedSeconds);
        if (std::string Dp = explainDataParallel(T, *R.Strategy); !Dp.empty())
          J.attribute("dp_explain", Dp);
        if (!T.CommExplain.empty())
          J.attributeArray("comm_explain", [&] {
            for (const std::string &Line : T.CommExplain)
              J.value(Line);
          });
        if (R.Strategy->InputSamplesPerSecond > 0) {
          J.attribute("input_s", T.InputSeconds);
          J.attribute("input_bound", T.InputBound);
          J.attribute("input_wait_s", T.InputWaitSeconds);
        }
        J.attribute("samples_per_s", T.SamplesPerSecond);
        J.attribute("model_flops", T.ModelFlops);
        J.attribute("tflops_per_device", T.TflopsPerDevice);
      });
      const StageReport &P = T.peak();
      J.attributeObject("memory", [&] {
        J.attribute("peak_bytes", P.peakBytes());
        J.attribute("weights_bytes", P.WeightsBytes);
        J.attribute("gradients_bytes", P.GradientsBytes);
        J.attribute("optimizer_bytes", P.OptimizerBytes);
        J.attribute("activations_bytes", P.ActivationsBytes);
        J.attribute("workspace_bytes", P.WorkspaceBytes);
        if (!T.MemoryExplain.empty())
          J.attribute("explain", T.MemoryExplain);
        J.attribute("capacity_bytes", T.CapacityBytes);
        J.attribute("fits", T.Fits);
        J.attribute("stage", int64_t(P.Stage));
        J.attribute("device", jsonText(T.Device));
      });
      J.attributeArray("stages", [&] {
        for (const StageReport &S : T.Stages)
          J.object([&] {
            J.attribute("stage", int64_t(S.Stage));
            J.attribute("device", jsonText(S.Device));
            J.attributeArray("chunks", [&] {
              for (auto [First, Last] : S.Chunks)
                J.value(llvm::json::Array{int64_t(First), int64_t(Last)});
            });
            J.attribute("blocks", int64_t(S.Blocks));
            if (R.Strategy && R.Strategy->Recomp == Recompute::Full)
              J.attribute("recomputed_blocks", int64_t(S.RecomputedBlocks));
            J.attribute("params", S.Params);
            J.attribute("expert_params", S.ExpertParams);
            J.attribute("forward_s", S.ForwardSeconds);
            J.attribute("backward_s", S.BackwardSeconds);
            J.attribute("recompute_s", S.RecomputeSeconds);
            J.attribute("tp_comm_s", S.TpCommSeconds);
            J.attribute("tp_overlapped_s", S.TpOverlappedSeconds);
            J.attribute("cp_comm_s", S.CpCommSeconds);
            J.attribute("cp_overlapped_s", S.CpOverlappedSeconds);
            J.attribute("ep_comm_s", S.EpCommSeconds);
            J.attribute("ep_overlapped_s", S.EpOverlappedSeconds);
            J.attribute("micro_batch_s", S.microBatchSeconds());
            J.attribute("in_flight", int64_t(S.InFlight));
            J.attribute("peak_bytes", S.peakBytes());
            J.attribute("weights_bytes", S.WeightsBytes);
            J.attribute("gradients_bytes", S.GradientsBytes);
            J.attribute("optimizer_bytes", S.OptimizerBytes);
            J.attribute("activations_bytes", S.ActivationsBytes);
          });
      });
    }
    if (R.Plan)
      writePlan(J, *R.Plan, R.Timings);
    if (R.Placement) {
      const PlacementReport &P = *R.Placement;
      // +infinity (a processor that cannot run the whole model) as null.
      auto Secs = [](double V) -> llvm::json::Value {
        return std::isfinite(V) ? llvm::json::Value(V) : nullptr;
      };
      J.attributeObject("placement", [&] {
        J.attributeArray("devices", [&] {
          for (unsigned I = 0; I < P.Devices.size(); ++I)
            J.object([&] {
              J.attribute("name", jsonText(P.Devices[I]));
              J.attribute("kernels", int64_t(P.KernelsPerDevice[I]));
              J.attribute("time_s", P.SecondsPerDevice[I]);
            });
        });
        J.attributeArray("assignment", [&] {
          // Not a structured binding: clang 14 (the fuzzers' compiler) does
          // not let a lambda capture one in C++17.
          for (const auto &NodeDevice : P.Assignment)
            J.object([&] {
              J.attribute("node", jsonText(NodeDevice.first));
              J.attribute("device", jsonText(NodeDevice.second));
            });
        });
        J.attribute("latency_s", P.LatencySeconds);
        J.attributeArray("single_device", [&] {
          for (unsigned I = 0; I < P.Devices.size(); ++I)
            J.object([&] {
              J.attribute("device", jsonText(P.Devices[I]));
              J.attribute("latency_s", Secs(P.SingleDeviceSeconds[I]));
            });
        });
        J.attribute("transfers_s", P.TransferSeconds);
        J.attribute("transfers", int64_t(P.Transfers));
        J.attribute("transfer_bytes", P.TransferBytes);
        J.attribute("optimal", P.Optimal);
        J.attribute("method", P.Method);
        if (R.Timings)
          J.attribute("solve_s", P.SolveSeconds);
      });
    }
    J.attributeArray("nodes", [&] {
      for (size_t I = 0; I < R.Nodes.size(); ++I)
        J.object([&] {
          const NodeReport &N = R.Nodes[I];
          J.attribute("name", jsonText(N.Name));
          J.attribute("op", jsonText(N.Op));
          J.attribute("class", name(N.Work.Class));
          J.attribute("dtype", ir::name(N.Work.Type));
          J.attribute("output_shape", jsonText(N.OutputShape));
          writeWork(J, N.Work);
          J.attribute("formula", jsonText(N.Work.Formula));
          if (N.Time) {
            J.attribute("latency_s", N.Time->Seconds);
            J.attribute("bound", N.Time->Bound);
            J.attribute("compute_s", N.Time->ComputeSeconds);
            J.attribute("memory_s", N.Time->MemorySeconds);
            J.attribute("overhead_s", N.Time->OverheadSeconds);
            if (N.Time->LayoutSeconds > 0)
              J.attribute("layout_s", N.Time->LayoutSeconds);
            if (N.Time->Im2colSeconds > 0)
              J.attribute("im2col_s", N.Time->Im2colSeconds);
            if (N.Time->Reorders > 0) {
              J.attribute("reorder_s", N.Time->ReorderSeconds);
              J.attribute("reorders", int64_t(N.Time->Reorders));
            }
            if (N.Time->Fp8CastSeconds > 0)
              J.attribute("fp8_cast_s", N.Time->Fp8CastSeconds);
            if (N.Time->WinogradReduction > 1)
              J.attribute("winograd_reduction", N.Time->WinogradReduction);
            if (N.Time->TpCommSeconds > 0)
              J.attribute("tp_comm_s", N.Time->TpCommSeconds);
            if (R.PipelineParallel && I < R.PipelineParallel->NodeStage.size())
              J.attribute("stage",
                          int64_t(R.PipelineParallel->NodeStage[I] + 1));
            // A training step's backward per kernel, where the step
            // gives one.
            if (const auto *B = R.nodeBackward(I);
                B && N.Time->Exec == "kernel") {
              J.attribute("backward_s", B->Seconds);
              if (!B->Explain.empty())
                J.attribute("backward_explain", jsonText(B->Explain));
              if (B->RecomputeSeconds > 0) {
                J.attribute("recompute_s", B->RecomputeSeconds);
                J.attribute("recompute_explain", jsonText(B->RecomputeExplain));
              }
            }
            J.attribute("exec", N.Time->Exec);
            if (!N.Time->FusedInto.empty())
              J.attribute("fused_into", jsonText(N.Time->FusedInto));
            if (N.Time->Exec == "kernel") {
              J.attribute("unit", N.Time->Unit);
              J.attribute("compute_type", N.Time->ComputeType);
              J.attribute("peak_flops", N.Time->PeakFlops);
              J.attribute("compute_efficiency", N.Time->ComputeEfficiency);
              J.attribute("bandwidth_bytes_per_s", N.Time->Bandwidth);
              J.attribute("memory_level",
                          jsonText(N.Time->MemoryLevel.empty()
                                       ? llvm::StringRef("main")
                                       : llvm::StringRef(N.Time->MemoryLevel)));
              J.attribute("memory_efficiency", N.Time->MemoryEfficiency);
            }
            J.attribute("explain", jsonText(N.Time->Explain));
          }
          if (!N.Device.empty())
            J.attribute("device", jsonText(N.Device));
        });
    });
    J.attributeArray("warnings", [&] {
      for (const Warning &W : R.Warnings)
        J.object([&] {
          J.attribute("node", jsonText(W.Node));
          J.attribute("message", jsonText(W.Message));
        });
    });
  });
  OS << "\n";
}

} // namespace perfc
