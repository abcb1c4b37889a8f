//===- StressTool.cpp - Inputs and checks for the robustness tests --------===//
//
// A small helper for tests/cli/CliTests.cmake, in C++ so that the tests need
// neither Python nor ONNX's Python package at run time:
//
//   perfc_stress big-model OUT NODES
//       Writes an ONNX model of NODES Relu nodes, straight as protobuf wire
//       bytes (8 bytes a node), for the node-limit test.
//   perfc_stress bitflip PERFC MODEL COUNT [SEED]
//       Runs PERFC on COUNT deterministic variants of MODEL, each with 1 to
//       8 flipped bits. Every run must exit 0 (stderr: warnings only) or 1
//       with exactly one line "perfc: error: ..." on stderr; never a signal,
//       never a hang (60 s). Failing variants are kept in the current
//       directory as bitflip-fail-SEED-I.onnx.
//   perfc_stress max-rss MB COMMAND [ARGS...]
//       Runs COMMAND, passes its exit status through, and fails (exit 3) if
//       the peak resident memory of it and the processes it waited for went
//       over MB megabytes.
//
//===----------------------------------------------------------------------===//
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

//===-- Protobuf wire bytes -----------------------------------------------===//

void varint(std::string &Out, uint64_t V) {
  while (V >= 0x80) {
    Out.push_back(static_cast<char>((V & 0x7f) | 0x80));
    V >>= 7;
  }
  Out.push_back(static_cast<char>(V));
}

void key(std::string &Out, unsigned Field, unsigned WireType) {
  varint(Out, (uint64_t(Field) << 3) | WireType);
}

void bytesField(std::string &Out, unsigned Field, const std::string &Bytes) {
  key(Out, Field, 2);
  varint(Out, Bytes.size());
  Out += Bytes;
}

/// ModelProto { ir_version: 8, opset_import { version: 13 }, graph {
/// node { op_type: "Relu" } x NODES, name: "big" } }, streamed: the graph
/// is never held in memory.
int bigModel(const char *Path, uint64_t Nodes) {
  std::string Node;
  bytesField(Node, 4, "Relu"); // NodeProto.op_type
  std::string NodeField;
  bytesField(NodeField, 1, Node); // GraphProto.node
  std::string Tail;
  bytesField(Tail, 2, "big"); // GraphProto.name

  std::string Head;
  key(Head, 1, 0); // ModelProto.ir_version
  varint(Head, 8);
  std::string Opset;
  key(Opset, 2, 0); // OperatorSetIdProto.version
  varint(Opset, 13);
  bytesField(Head, 8, Opset); // ModelProto.opset_import
  key(Head, 7, 2);            // ModelProto.graph
  varint(Head, Nodes * NodeField.size() + Tail.size());

  std::FILE *F = std::fopen(Path, "wb");
  if (!F) {
    std::perror(Path);
    return 1;
  }
  std::string Chunk;
  for (int I = 0; I < 65536; ++I)
    Chunk += NodeField;
  const uint64_t PerChunk = 65536;
  bool Ok = std::fwrite(Head.data(), 1, Head.size(), F) == Head.size();
  for (uint64_t Done = 0; Ok && Done < Nodes;) {
    uint64_t N = Nodes - Done < PerChunk ? Nodes - Done : PerChunk;
    size_t Bytes = N * NodeField.size();
    Ok = std::fwrite(Chunk.data(), 1, Bytes, F) == Bytes;
    Done += N;
  }
  Ok = Ok && std::fwrite(Tail.data(), 1, Tail.size(), F) == Tail.size();
  Ok = std::fclose(F) == 0 && Ok;
  if (!Ok) {
    std::perror(Path);
    return 1;
  }
  return 0;
}

//===-- Running a command -------------------------------------------------===//

struct RunResult {
  int Status = 0;     ///< As from waitpid.
  long MaxRssKiB = 0; ///< ru_maxrss of the child and what it waited for.
  std::string Stderr; ///< When captured.
};

bool runCommand(const std::vector<std::string> &Argv, bool CaptureStderr,
                unsigned TimeoutSeconds, RunResult &R) {
  char ErrPath[] = "/tmp/perfc_stress_XXXXXX";
  int ErrFD = -1;
  if (CaptureStderr) {
    ErrFD = ::mkstemp(ErrPath);
    if (ErrFD < 0) {
      std::perror("mkstemp");
      return false;
    }
  }
  pid_t Pid = ::fork();
  if (Pid < 0) {
    std::perror("fork");
    return false;
  }
  if (Pid == 0) {
    if (CaptureStderr) {
      int Null = ::open("/dev/null", O_WRONLY);
      ::dup2(Null, 1);
      ::dup2(ErrFD, 2);
    }
    if (TimeoutSeconds)
      ::alarm(TimeoutSeconds); // Kept across exec: a hang dies of SIGALRM.
    std::vector<char *> Args;
    for (const std::string &A : Argv)
      Args.push_back(const_cast<char *>(A.c_str()));
    Args.push_back(nullptr);
    ::execvp(Args[0], Args.data());
    std::perror(Args[0]);
    ::_exit(127);
  }
  struct rusage Usage;
  std::memset(&Usage, 0, sizeof Usage);
  while (::wait4(Pid, &R.Status, 0, &Usage) < 0) {
    if (errno != EINTR) {
      std::perror("wait4");
      return false;
    }
  }
  R.MaxRssKiB = Usage.ru_maxrss;
  if (CaptureStderr) {
    std::ifstream In(ErrPath, std::ios::binary);
    R.Stderr.assign(std::istreambuf_iterator<char>(In),
                    std::istreambuf_iterator<char>());
    ::close(ErrFD);
    ::unlink(ErrPath);
  }
  return true;
}

int maxRss(long LimitMiB, const std::vector<std::string> &Argv) {
  RunResult R;
  if (!runCommand(Argv, /*CaptureStderr=*/false, 0, R))
    return 2;
  long MiB = (R.MaxRssKiB + 1023) / 1024;
  std::printf("max-rss: peak resident memory %ld MiB (limit %ld MiB)\n", MiB,
              LimitMiB);
  if (MiB > LimitMiB) {
    std::printf("max-rss: FAIL: over the limit\n");
    return 3;
  }
  if (WIFSIGNALED(R.Status))
    return 128 + WTERMSIG(R.Status);
  return WEXITSTATUS(R.Status);
}

//===-- Bit flips ---------------------------------------------------------===//

uint64_t splitmix64(uint64_t &State) {
  uint64_t Z = (State += 0x9e3779b97f4a7c15ULL);
  Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebULL;
  return Z ^ (Z >> 31);
}

/// Why a run's outcome breaks the contract, or "" when it keeps it.
std::string judge(const RunResult &R) {
  if (WIFSIGNALED(R.Status))
    return std::string("killed by signal ") +
           std::to_string(WTERMSIG(R.Status)) +
           (WTERMSIG(R.Status) == SIGALRM ? " (a hang: over 60 s)" : "");
  int Code = WEXITSTATUS(R.Status);
  std::vector<std::string> Lines;
  size_t Start = 0;
  while (Start < R.Stderr.size()) {
    size_t End = R.Stderr.find('\n', Start);
    if (End == std::string::npos)
      End = R.Stderr.size();
    Lines.push_back(R.Stderr.substr(Start, End - Start));
    Start = End + 1;
  }
  if (Code == 0) {
    for (const std::string &L : Lines)
      if (L.rfind("perfc: warning: ", 0) != 0)
        return "exit 0 with a stderr line that is not a warning: " + L;
    return "";
  }
  if (Code != 1)
    return "exit code " + std::to_string(Code) + ", expected 0 or 1";
  if (Lines.size() != 1)
    return "exit 1 with " + std::to_string(Lines.size()) +
           " stderr lines, expected exactly one";
  if (Lines[0].rfind("perfc: error: ", 0) != 0)
    return "the error line does not start with 'perfc: error: '";
  return "";
}

int bitflip(const std::string &Perfc, const std::string &Model, unsigned Count,
            uint64_t Seed) {
  std::ifstream In(Model, std::ios::binary);
  std::string Original((std::istreambuf_iterator<char>(In)),
                       std::istreambuf_iterator<char>());
  if (!In.good() && !In.eof()) {
    std::perror(Model.c_str());
    return 2;
  }
  if (Original.empty()) {
    std::fprintf(stderr, "bitflip: %s is empty or unreadable\n", Model.c_str());
    return 2;
  }
  char Dir[] = "/tmp/perfc_bitflip_XXXXXX";
  if (!::mkdtemp(Dir)) {
    std::perror("mkdtemp");
    return 2;
  }
  const std::string Path = std::string(Dir) + "/variant.onnx";
  unsigned Ok = 0, Errors = 0, Failures = 0;
  for (unsigned I = 0; I < Count; ++I) {
    uint64_t State = Seed * 1000003 + I;
    std::string Bytes = Original;
    unsigned Flips = 1 + splitmix64(State) % 8;
    for (unsigned F = 0; F < Flips; ++F) {
      uint64_t Bit = splitmix64(State) % (uint64_t(Bytes.size()) * 8);
      Bytes[Bit / 8] = static_cast<char>(Bytes[Bit / 8] ^ (1 << (Bit % 8)));
    }
    {
      std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
      Out.write(Bytes.data(), static_cast<std::streamsize>(Bytes.size()));
      if (!Out) {
        std::perror(Path.c_str());
        return 2;
      }
    }
    RunResult R;
    if (!runCommand({Perfc, Path, "--format", "json"}, true, 60, R))
      return 2;
    std::string Why = judge(R);
    if (Why.empty()) {
      (WIFEXITED(R.Status) && WEXITSTATUS(R.Status) == 0 ? Ok : Errors) += 1;
      continue;
    }
    ++Failures;
    std::string Kept = "bitflip-fail-" + std::to_string(Seed) + "-" +
                       std::to_string(I) + ".onnx";
    std::ofstream(Kept, std::ios::binary)
        .write(Bytes.data(), static_cast<std::streamsize>(Bytes.size()));
    std::printf("FAIL: variant %u (%u flipped bits, kept as %s): %s\n", I,
                Flips, Kept.c_str(), Why.c_str());
    if (!R.Stderr.empty())
      std::printf("--- stderr:\n%s\n", R.Stderr.c_str());
  }
  ::unlink(Path.c_str());
  ::rmdir(Dir);
  std::printf("bitflip: %u variants of %s: %u succeeded, %u gave one error "
              "line, %u broke the contract\n",
              Count, Model.c_str(), Ok, Errors, Failures);
  return Failures ? 1 : 0;
}

int usage() {
  std::fprintf(stderr, "usage: perfc_stress big-model OUT NODES\n"
                       "       perfc_stress bitflip PERFC MODEL COUNT [SEED]\n"
                       "       perfc_stress max-rss MB COMMAND [ARGS...]\n");
  return 2;
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 2)
    return usage();
  const std::string Cmd = Argv[1];
  if (Cmd == "big-model" && Argc == 4)
    return bigModel(Argv[2], std::strtoull(Argv[3], nullptr, 10));
  if (Cmd == "bitflip" && (Argc == 5 || Argc == 6))
    return bitflip(Argv[2], Argv[3],
                   static_cast<unsigned>(std::strtoul(Argv[4], nullptr, 10)),
                   Argc == 6 ? std::strtoull(Argv[5], nullptr, 10) : 1);
  if (Cmd == "max-rss" && Argc >= 4)
    return maxRss(std::strtol(Argv[2], nullptr, 10),
                  std::vector<std::string>(Argv + 3, Argv + Argc));
  return usage();
}
