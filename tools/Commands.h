//===- Commands.h - The perfc subcommands -----------------------*- C++ -*-===//
//
// perfc.cpp dispatches on the first argument: `perfc hw ...`,
// `perfc calibrate ...`, or else a model to predict. Each command parses its
// own options (LLVM cl options local to the command) and returns the exit
// status.
//
//===----------------------------------------------------------------------===//
#ifndef PERFC_TOOLS_COMMANDS_H
#define PERFC_TOOLS_COMMANDS_H

namespace perfc::cli {

/// perfc MODEL.onnx [--hw HW] ...: work and latency of one model.
int runPredict(int Argc, const char *const *Argv);

/// perfc hw list | perfc hw show NAME|FILE.
int runHw(int Argc, const char *const *Argv);

/// perfc zoo gpt|bert|llama --layers L ... -o FILE.onnx: a graph-only
/// transformer of any size.
int runZoo(int Argc, const char *const *Argv);

/// perfc calibrate --out FILE.yaml [--threads N]: measure this machine.
int runCalibrate(int Argc, const char *const *Argv);

/// perfc batch FILE.jsonl [--jobs N]: one prediction per line, as JSON lines.
int runBatch(int Argc, const char *const *Argv);

} // namespace perfc::cli

#endif // PERFC_TOOLS_COMMANDS_H
