#!/usr/bin/python3
"""Ranking fidelity: does perfc order NAS candidates as ONNX Runtime does?

    /usr/bin/python3 tools/bench/nas_ranking.py [--build build] [--hw FILE.yaml]
        [--variants 40] [--seed 0] [--rounds 5] [--runs 20] [--threads 2]
        [--work /tmp/perfc-nas-bench] [--ort-dir DIR] [--skip-measure]
        [--no-profile-round] [--quiet 15] [--max-wait 240] [--priority -10]
        [--merge]

Issue 6: at least 30 CNN variants of the NAS example's search space
(tools/examples/nas_space.py, the space of tools/examples/nas_random_search.py),
exported to ONNX, measured with ONNX Runtime on this CPU and predicted by
perfc with the calibrated description of this machine; Kendall's tau-b
between predicted and measured latency >= 0.85, with the tau of plain FLOP
counts beside it.

Steps:
  1. Variants (deterministic, --seed): a pool of 2000 samples of the
     example's sampler; 28 of them picked at evenly spaced log-MACs between
     the pool's 1st and 99th percentiles (the range a search sees), plus
     near neighbours: one stage's kernel, expansion, width or depth moved to
     an adjacent choice (mutate(); what an evolutionary NAS step ranks),
     2 each of 6 of the picked ones, 3 of every kind.
  2. ONNX: every variant built through nas_space.build() with an ONNX
     builder (the same code that makes the example's perfc IR), opset 13,
     written by this script's few lines of protobuf (no onnx or numpy
     module needed), with real weights: deterministic random values
     (random.Random(seed).randbytes), He-scaled, BatchNorm statistics near
     1 (see OnnxBuilder: no denormals). Nodes are named nNNN_<kind>
     (conv3x3, conv1x1, dw3, dw5, dw7, add, gemm, ...) so that perfc's and
     ORT's per-node times map back to the kind of op.
  3. Measurement: tools/bench/ort_measure.mjs (ONNX Runtime, batch 1,
     --threads intra-op threads, 1 inter-op, sequential, graph
     optimizations "all"; onnxruntime-node installed into --ort-dir with
     `npm install --ignore-scripts onnxruntime-node` if missing, as
     ort_accuracy.py does): 5 warm-up runs, then the median of --runs runs (at
     least 10), all variants --rounds times over in a different shuffled order per round; per variant the round with the
     lowest median counts (other work only ever slows a run down). Before
     each round the script waits (up to --max-wait s) for the CPUs to be
     idle (other processes under --quiet percent busy over 2 s), and it
     records per round the CPU time other processes took while it
     measured (/proc/stat busy time less the measuring process's own), and
     the load average. Then --profile-rounds profiling rounds (ORT's
     profiler, 10 runs, not counted in the timing; per variant the fastest
     profile kept): measured kernel time per op kind.
  4. Prediction: the perfc Python module of --build (BUILD/python),
     Model.from_onnx(file, batch=1) and predict_json (the CLI's JSON, as
     `perfc FILE --hw HW --batch 1 --format json`); totals.latency_s is the
     prediction. --hw defaults to tools/bench/results/calibrated_<cpu>.yaml
     (read as it is: rerun the script after a new calibration).
  5. Kendall's tau-b (ties counted as in scipy.stats.kendalltau) of
     predicted vs measured latency, and of FLOPs vs measured; Spearman's rho
     and the MAPE for information; the discordant pairs (measured gap,
     predicted gap) and, per op kind, perfc's predicted time against ORT's
     profiled kernel time summed over the variants. Output:
     tools/bench/results/nas_ranking.md and nas_ranking.json (every run of
     every round).

The machine has 2 cores shared with other sessions' compilers: a round
measured while they run is slower and noisier. With --priority -10 (root;
start the script under `setsid`, so that its scheduler autogroup holds only
itself and its node child) the measurements run ahead of other sessions;
the value set is recorded in the results.

--merge keeps the rounds of the earlier nas_ranking.json and adds new ones
(per variant the best round of all counts): more rounds as the machine
allows. --skip-measure reuses the measurements of an earlier nas_ranking.json
(the same variants) and only predicts again: the way to re-score after a
new calibration without measuring.
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import random
import re
import statistics
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(HERE, "results")
sys.path.insert(0, os.path.join(ROOT, "tools", "examples"))

import nas_space  # noqa: E402
import ort_common  # noqa: E402
from ort_common import cpu_tag, machine, node_job  # noqa: E402

POOL = 2000
STRATIFIED = 28
MUTANT_BASES = 6
MUTANTS_PER_BASE = 2
TARGET_TAU = 0.85
INPUTS = [{"name": "image", "dtype": "float32", "shape": [1, 3, 224, 224]}]


def log(msg):
    print(f"nas_ranking: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# ONNX without the onnx package: the few protobuf messages a CNN needs
# --------------------------------------------------------------------------
# Written by hand so that the benchmark runs with a bare python3 (no numpy,
# onnx or protobuf modules); perfc's frontend and ONNX Runtime both parse
# and check the files. Field numbers are those of onnx/onnx.proto.

def _varint(v):
    if v < 0:
        v += 1 << 64  # int64 two's complement, as protobuf encodes it
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def pb_int(field, v):
    return _key(field, 0) + _varint(v)


def pb_bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return _key(field, 2) + _varint(len(data)) + data


def pb_ints(field, vs):  # proto2 repeated int64: unpacked
    return b"".join(pb_int(field, v) for v in vs)


ONNX_FLOAT = 1
ATTR_INT, ATTR_INTS = 2, 7


def pb_attr(name, v):
    if isinstance(v, int):
        return pb_bytes(1, name) + pb_int(20, ATTR_INT) + pb_int(3, v)
    return pb_bytes(1, name) + pb_int(20, ATTR_INTS) + pb_ints(8, v)


def pb_node(op, ins, outs, name, attrs):
    return (b"".join(pb_bytes(1, i) for i in ins) + b"".join(pb_bytes(2, o) for o in outs)
            + pb_bytes(3, name) + pb_bytes(4, op)
            + b"".join(pb_bytes(5, pb_attr(k, v)) for k, v in sorted(attrs.items())))


def pb_tensor(name, dims, raw):
    return pb_ints(1, dims) + pb_int(2, ONNX_FLOAT) + pb_bytes(8, name) + pb_bytes(9, raw)


def pb_value_info(name, shape):
    dims = b"".join(pb_bytes(1, pb_int(1, d)) for d in shape)
    tensor_type = pb_int(1, ONNX_FLOAT) + pb_bytes(2, dims)
    return pb_bytes(1, name) + pb_bytes(2, pb_bytes(1, tensor_type))


def pb_model(graph_name, nodes, inits, inputs, outputs, doc, opset=13, ir_version=8):
    graph = (b"".join(pb_bytes(1, n) for n in nodes) + pb_bytes(2, graph_name)
             + b"".join(pb_bytes(5, t) for t in inits)
             + b"".join(pb_bytes(11, v) for v in inputs)
             + b"".join(pb_bytes(12, v) for v in outputs))
    return (pb_int(1, ir_version) + pb_bytes(2, "perfc tools/bench/nas_ranking.py")
            + pb_bytes(6, doc) + pb_bytes(7, graph)
            + pb_bytes(8, pb_bytes(1, "") + pb_int(2, opset)))


def random_floats(rng, n, exponent, signed=True):
    """n float32 values, |v| uniform in [2^exponent, 2^(exponent+1)).

    Random mantissas and signs from rng.randbytes (deterministic per seed,
    C speed: no numpy needed), a fixed exponent: no zeros, no denormals.
    """
    e = exponent + 127
    assert 1 <= e <= 254
    # float32 little-endian: byte 3 is sign and exponent's top 7 bits, byte
    # 2 the exponent's low bit and the mantissa's top 7 bits.
    buf = bytearray(rng.randbytes(4 * n))
    hi = bytes(((b & 0x80) if signed else 0) | (e >> 1) for b in range(256))
    lo = bytes((b & 0x7F) | ((e & 1) << 7) for b in range(256))
    buf[3::4] = bytes(buf[3::4]).translate(hi)
    buf[2::4] = bytes(buf[2::4]).translate(lo)
    return bytes(buf)


def he_exponent(fan_in, gain=2.0):
    """Exponent whose values' RMS (1.53 * 2^e) is at least He's std."""
    return math.ceil(math.log2(math.sqrt(gain / fan_in) / 1.53))


class OnnxBuilder:
    """Builds the ONNX file of nas_space.build(); shapes, MACs, params.

    Methods are those of perfc.ModelBuilder that nas_space uses. With
    weights=False only shapes and counts are kept (to size a pool of
    candidates quickly) and build() returns None.

    Weights: conv and gemm weights of random sign and mantissa with RMS at
    or just above He's sqrt(2 / fan_in); BatchNorm scale and var in [1, 2),
    mean and bias in +-[1/16, 1/8). With these, activations do not decay
    through 20-60 layers (ReLU6 caps them at 6): no denormal operands, whose
    arithmetic is many times slower on x86 and would time the weights, not
    the network. tools/zoo/fill_weights.py's normal(0, 0.02) would.
    """

    def __init__(self, name, seed=0, weights=True):
        self.name, self.weights = name, weights
        self.rng = random.Random(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.shapes = {}
        self.macs = self.params = 0
        self.kinds = {}  # node name -> {kind, out_hw, cin, cout, macs}
        self.count = 0

    def _name(self, kind):
        self.count += 1
        return f"n{self.count:03d}_{kind}"

    def _init(self, name, dims, exponent=None, signed=True, value=None, param=True):
        n = 1
        for d in dims:
            n *= d
        if param:
            self.params += n
        if self.weights:
            raw = (struct.pack("<f", value) if value is not None
                   else random_floats(self.rng, n, exponent, signed))
            self.inits.append(pb_tensor(name, dims, raw))
        return name

    def _node(self, op, ins, kind, shape, info=None, **attrs):
        name = self._name(kind)
        out = name + ".out"
        self.nodes.append(pb_node(op, ins, [out], name, attrs))
        self.shapes[out] = shape
        info = dict(info or {})
        if kind in ("bn", "clip", "add"):
            # The conv this node can fuse into (through BN/Clip; for an Add
            # the projection branch, its second input): runtimes name the
            # fused kernel after the last node it absorbed.
            for x in reversed(ins[:2] if kind == "add" else ins[:1]):
                src = self.kinds.get(x[:-4]) if x.endswith(".out") else None
                if src and ("macs" in src or "conv" in src):
                    info["conv"] = x[:-4] if "macs" in src else src["conv"]
                    break
        self.kinds[name] = {"kind": kind, "name": name,
                            "out_hw": shape[2] if len(shape) == 4 else 1, **info}
        return out

    def input(self, name, shape):
        self.inputs.append(pb_value_info(name, shape))
        self.shapes[name] = list(shape)
        return name

    def conv(self, x, m, k, stride=1, pad=-1, groups=1, bias=True):
        n, c, h, w = self.shapes[x]
        if pad < 0:
            pad = (k - 1) // 2
        oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        kind = f"dw{k}" if groups == c == m and groups > 1 else f"conv{k}x{k}"
        base = f"n{self.count + 1:03d}_{kind}"
        fan_in = (c // groups) * k * k
        ins = [x, self._init(base + ".weight", [m, c // groups, k, k], he_exponent(fan_in))]
        if bias:
            ins.append(self._init(base + ".bias", [m], -7))
        macs = n * m * oh * ow * (c // groups) * k * k
        self.macs += macs
        return self._node("Conv", ins, kind, [n, m, oh, ow],
                          {"cin": c, "cout": m, "macs": macs},
                          kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4,
                          dilations=[1, 1], group=groups)

    def depthwise_conv(self, x, k, stride=1, pad=-1):
        c = self.shapes[x][1]
        return self.conv(x, c, k, stride, pad, groups=c, bias=False)

    def batch_norm(self, x):
        c = self.shapes[x][1]
        base = f"n{self.count + 1:03d}_bn"
        ins = [x, self._init(base + ".scale", [c], 0, signed=False),
               self._init(base + ".bias", [c], -4),
               # Running statistics are buffers, not parameters.
               self._init(base + ".mean", [c], -4, param=False),
               self._init(base + ".var", [c], 0, signed=False, param=False)]
        return self._node("BatchNormalization", ins, "bn", self.shapes[x])

    def relu6(self, x):
        base = f"n{self.count + 1:03d}_clip"
        lo = self._init(base + ".min", [], value=0.0, param=False)
        hi = self._init(base + ".max", [], value=6.0, param=False)
        return self._node("Clip", [x, lo, hi], "clip", self.shapes[x])

    def add(self, a, b):
        return self._node("Add", [a, b], "add", self.shapes[a])

    def global_avg_pool(self, x):
        n, c = self.shapes[x][:2]
        return self._node("GlobalAveragePool", [x], "pool", [n, c, 1, 1])

    def flatten(self, x):
        s = self.shapes[x]
        return self._node("Flatten", [x], "flatten", [s[0], s[1] * s[2] * s[3]], axis=1)

    def gemm(self, x, m, bias=True):
        n, k = self.shapes[x]
        base = f"n{self.count + 1:03d}_gemm"
        ins = [x, self._init(base + ".weight", [m, k], he_exponent(k, 1.0))]
        if bias:
            ins.append(self._init(base + ".bias", [m], -7))
        self.macs += n * m * k
        return self._node("Gemm", ins, "gemm", [n, m], {"cin": k, "cout": m, "macs": n * m * k},
                          transB=1)

    def output(self, x):
        self.outputs.append(pb_value_info(x, self.shapes[x]))

    def build(self, doc=""):
        if not self.weights:
            return None
        return pb_model(self.name, self.nodes, self.inits, self.inputs, self.outputs, doc)


def counts(arch):
    b = OnnxBuilder("count", weights=False)
    nas_space.build(arch, b)
    return b.macs, b.params


# --------------------------------------------------------------------------
# 1. Variants
# --------------------------------------------------------------------------

def arch_str(arch):
    return " ".join(f"{d}x{w}k{k}e{e}" for d, w, k, e in arch)


def variants(seed, n_total):
    """Deterministic: stratified picks of a pool plus near neighbours."""
    rng = random.Random(seed)
    pool, seen = [], set()
    while len(pool) < POOL:
        a = nas_space.sample(rng)
        if tuple(a) not in seen:
            seen.add(tuple(a))
            pool.append((counts(a)[0], a))
    pool.sort(key=lambda p: p[0])
    lo = math.log(pool[len(pool) // 100][0])
    hi = math.log(pool[len(pool) * 99 // 100][0])
    n_mut = min(MUTANT_BASES * MUTANTS_PER_BASE, max(0, n_total - 2))
    n_strat = n_total - n_mut
    picked, used = [], set()
    for i in range(n_strat):
        t = lo + (hi - lo) * i / max(1, n_strat - 1)
        j = min((j for j in range(len(pool)) if j not in used),
                key=lambda j: abs(math.log(pool[j][0]) - t))
        used.add(j)
        picked.append(pool[j][1])
    picked.sort(key=lambda a: counts(a)[0])
    out = [{"id": f"v{i:02d}", "arch": a, "origin": "sampled"} for i, a in enumerate(picked)]
    mrng = random.Random(seed + 1)
    bases = [round(i * (n_strat - 1) / max(1, MUTANT_BASES - 1) * 0.9 + n_strat * 0.05)
             for i in range(MUTANT_BASES)]
    have = {tuple(v["arch"]) for v in out}
    kind_i = 0
    while len(out) < n_total:
        base = out[bases[(len(out) - n_strat) // MUTANTS_PER_BASE % len(bases)]]
        kind = nas_space.MUTATIONS[kind_i % len(nas_space.MUTATIONS)]
        a = nas_space.mutate(base["arch"], mrng, kind)
        if tuple(a) in have:
            continue
        kind_i += 1
        have.add(tuple(a))
        out.append({"id": f"v{len(out):02d}", "arch": a, "origin": f"{base['id']} {kind}"})
    for v in out:
        v["macs"], v["params"] = counts(v["arch"])
        v["config"] = arch_str(v["arch"])
    return out


def export(v, work, seed):
    path = os.path.join(work, "models", f"{v['id']}.onnx")
    b = OnnxBuilder(f"nas_{v['id']}", seed=seed)
    nas_space.build(v["arch"], b)
    v["node_kinds"] = b.kinds
    data = b.build(doc=f"nas_space arch {v['arch']}")
    # Rewrite only on change: the same bytes every run, fewer disk writes.
    if not (os.path.exists(path) and open(path, "rb").read() == data):
        with open(path, "wb") as f:
            f.write(data)
    return path


# --------------------------------------------------------------------------
# 3. Measurement
# --------------------------------------------------------------------------
# The machine, onnxruntime-node and the node job are ort_accuracy.py's, from
# ort_common.py (no onnx or numpy imports).

def write_probe(path):
    with open(path, "wb") as f:
        f.write(pb_model("probe", [pb_node("Add", ["x", "x"], ["y"], "add0", {})], [],
                         [pb_value_info("x", [1, 16])], [pb_value_info("y", [1, 16])], ""))


def ensure_ort(ort_dir, work):
    return ort_common.ensure_ort(ort_dir, work, write_probe, "nas_ranking")


def summarize_profile(trace_path):
    """ort_common's per-node summary, cut to what this report uses (and
    nas_ranking.json keeps per variant)."""
    p = ort_common.summarize_profile(trace_path)
    if p is None:
        return None
    return {"model_run_median_us": p["model_run_median_us"],
            "kernels_sum_median_us": p["kernels_sum_median_us"],
            "nodes_executed": p["nodes_executed"],
            "nodes": [{"node": n["node"], "op": n["op"], "median_us": n["median_us"]}
                      for n in p["nodes"]]}


def set_priority(nice):
    """Nice value of this process and of its autogroup (what weighs against
    other sessions when the kernel groups tasks by session); returns what
    was set, or why not."""
    done = {}
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
        done["process_nice"] = nice
    except OSError as e:
        done["process_nice"] = f"not set: {e.strerror}"
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
        with open("/proc/self/autogroup") as f:
            done["autogroup"] = f.read().strip()
    except OSError as e:
        done["autogroup"] = f"not set: {e.strerror}"
    log(f"priority: {done}")
    return done


def cpu_times():
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    idle = vals[3] + vals[4]
    return sum(vals) - idle, sum(vals)  # busy, total (clock ticks)


def others_busy(seconds=2.0):
    """Share of all CPUs busy over `seconds` while this script sleeps."""
    b0, t0 = cpu_times()
    time.sleep(seconds)
    b1, t1 = cpu_times()
    return (b1 - b0) / max(1, t1 - t0)


def wait_quiet(args):
    start = time.time()
    while True:
        busy = others_busy()
        if busy * 100 < args.quiet or time.time() - start > args.max_wait:
            return busy, time.time() - start


def measure(vs, args, work, ort_dir, first=0):
    tick = os.sysconf("SC_CLK_TCK")
    rounds = []
    for rnd in range(first, first + args.rounds):
        order = list(vs)
        random.Random(args.seed * 1000 + rnd).shuffle(order)
        busy, waited = wait_quiet(args)
        log(f"round {rnd + 1}/{first + args.rounds}: others {busy * 100:.0f}% busy "
            f"(waited {waited:.0f} s), load {os.getloadavg()[0]:.2f}")
        job = {"ort_dir": ort_dir, "intra_op_threads": args.threads, "inter_op_threads": 1,
               "models": [{"name": v["id"], "path": v["path"], "inputs": INPUTS,
                           "warmup": 5, "runs": args.runs, "max_seconds": args.max_seconds}
                          for v in order]}
        b0, t0 = cpu_times()
        c0 = os.times()
        wall0 = time.time()
        try:
            out = node_job(job, work, f"nas{rnd}")
        except RuntimeError as e:
            log(f"round {rnd + 1} skipped: {e}")
            continue
        wall = time.time() - wall0
        c1 = os.times()
        b1, t1 = cpu_times()
        own = (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)
        other_cpu_s = max(0.0, (b1 - b0) / tick - own)
        rounds.append({"round": rnd, "order": [v["id"] for v in order],
                       "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
                       "runs": args.runs, "priority": args.priority,
                       "others_busy_before": busy, "waited_s": waited, "wall_s": wall,
                       "own_cpu_s": own, "other_cpu_s": other_cpu_s,
                       "other_cpus_busy": other_cpu_s / wall if wall else None,
                       "loadavg_after": os.getloadavg()[0],
                       "onnxruntime_version": out.get("onnxruntime_version"),
                       "models": {k: r["timing"] for k, r in out["models"].items()}})
        log(f"round {rnd + 1}: {wall:.0f} s; other processes used {other_cpu_s:.1f} CPU-s")
    return rounds


def profile_round(vs, args, work, ort_dir, prev_profs=None):
    """ORT's profiler on every variant: kernel time per node (median of 10).

    --profile-rounds times over; per variant the profile with the fastest
    model run counts (with --merge, also against the earlier one).
    """
    pdir = os.path.join(work, "profiles")
    os.makedirs(pdir, exist_ok=True)
    profs = dict(prev_profs or {})
    meta = []
    for rnd in range(args.profile_rounds):
        busy, waited = wait_quiet(args)
        log(f"profiling round {rnd + 1}/{args.profile_rounds}: others {busy * 100:.0f}% busy "
            f"(waited {waited:.0f} s)")
        job = {"ort_dir": ort_dir, "intra_op_threads": args.threads, "inter_op_threads": 1,
               "models": [{"name": v["id"], "path": v["path"], "inputs": INPUTS, "warmup": 2,
                           "runs": 10, "max_seconds": 2,
                           "profile_prefix": os.path.join(pdir, f"{v['id']}_r{rnd}"),
                           "profile_runs": 10}
                          for v in vs]}
        b0, _ = cpu_times()
        c0, wall0 = os.times(), time.time()
        try:
            out = node_job(job, work, f"nasprof{rnd}")
        except RuntimeError as e:
            log(f"profiling round skipped: {e}")
            continue
        c1, (b1, _) = os.times(), cpu_times()
        own = (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)
        meta.append({"others_busy_before": busy, "waited_s": waited,
                     "wall_s": time.time() - wall0,
                     "other_cpu_s": max(0.0, (b1 - b0) / os.sysconf("SC_CLK_TCK") - own),
                     "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")})
        for v in vs:
            r = out["models"].get(v["id"], {})
            if r.get("profile_path"):
                p = summarize_profile(r["profile_path"])
                old = profs.get(v["id"])
                if p and (old is None or p["model_run_median_us"] < old["model_run_median_us"]):
                    profs[v["id"]] = p
    return profs, meta


# --------------------------------------------------------------------------
# 4. Prediction
# --------------------------------------------------------------------------

def node_kind(name, kinds, op=None):
    """The node of a perfc or ORT node name (nNNN_kind...), else None.

    ORT names a fused conv kernel after its output tensor, that of the last
    node it absorbed (BatchNorm, Clip, Add): with op Conv/FusedConv such a
    name maps to the conv it fused.
    """
    m = re.search(r"n\d{3}_[a-z0-9x]+", name or "")
    k = kinds.get(m.group(0)) if m else None
    if k and "conv" in k and op and "Conv" in op:
        return kinds[k["conv"]]
    return k


def predict(vs, hw_path, perfc):
    hw = perfc.load_hw(hw_path)
    for v in vs:
        model = perfc.Model.from_onnx(v["path"], batch=1)
        j = json.loads(perfc.predict_json(model, hw))
        t = j["totals"]
        v["pred_s"] = t["latency_s"]
        v["flops"] = t["flops"]
        v["perfc_params"] = t["params"]
        v["kernels"] = t["kernels"]
        by = {}
        for n in j["nodes"]:
            if not n.get("latency_s"):
                continue
            k = node_kind(n["name"], v["node_kinds"])
            key = k["kind"] if k else n["op"]
            d = by.setdefault(key, {"s": 0.0, "overhead_s": 0.0, "kernels": 0})
            d["s"] += n["latency_s"]
            d["overhead_s"] += n.get("overhead_s", 0.0)
            d["kernels"] += 1
        v["pred_by_kind"] = by
        v["pred_bound_s"] = t.get("time_by_bound_s")


# --------------------------------------------------------------------------
# 5. Statistics
# --------------------------------------------------------------------------

def sign(x):
    return (x > 0) - (x < 0)


def kendall_tau_b(x, y):
    """Kendall's tau-b: (C - D) / sqrt((n0 - n1)(n0 - n2)), ties as scipy."""
    n = len(x)
    c = d = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            a, b = sign(x[i] - x[j]), sign(y[i] - y[j])
            if a == 0 and b == 0:
                continue
            if a == 0:
                tx += 1
            elif b == 0:
                ty += 1
            elif a == b:
                c += 1
            else:
                d += 1
    den = math.sqrt((c + d + tx) * (c + d + ty))
    return (c - d) / den if den else float("nan")


def ranks(x):
    order = sorted(range(len(x)), key=lambda i: x[i])
    r = [0.0] * len(x)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def pearson(x, y):
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sx = math.sqrt(sum((a - mx) ** 2 for a in x))
    sy = math.sqrt(sum((b - my) ** 2 for b in y))
    return sxy / (sx * sy) if sx and sy else float("nan")


def spearman(x, y):
    return pearson(ranks(x), ranks(y))


def discordant(vs, key):
    out = []
    for i in range(len(vs)):
        for j in range(i + 1, len(vs)):
            a, b = vs[i], vs[j]
            if sign(a[key] - b[key]) * sign(a["meas_ms"] - b["meas_ms"]) < 0:
                fast, slow = (a, b) if a["meas_ms"] < b["meas_ms"] else (b, a)
                out.append({"faster": fast["id"], "slower": slow["id"],
                            "measured_gap_pct": 100 * (slow["meas_ms"] / fast["meas_ms"] - 1),
                            "predicted_gap_pct": 100 * (slow[key] / fast[key] - 1)})
    return sorted(out, key=lambda p: -p["measured_gap_pct"])


def features(v):
    """Per variant: shares of MACs by op kind, spatial size and the like."""
    ks = v["node_kinds"]
    macs = sum(k.get("macs", 0) for k in ks.values()) or 1
    f = {}
    for name in ("dw", "conv1x1", "conv3x3", "gemm"):
        f[f"macs_share_{name}"] = sum(k.get("macs", 0) for k in ks.values()
                                      if k["kind"].startswith(name)) / macs
    f["macs_share_hw<=14"] = sum(k.get("macs", 0) for k in ks.values()
                                 if k["out_hw"] <= 14) / macs
    f["dw_macs_share_k7"] = sum(k.get("macs", 0) for k in ks.values()
                                if k["kind"] == "dw7") / macs
    f["convs"] = sum(1 for k in ks.values() if k["kind"].startswith(("dw", "conv")))
    f["mean_cout_1x1"] = statistics.fmean([k["cout"] for k in ks.values()
                                           if k["kind"] == "conv1x1"])
    f["gmacs"] = v["macs"] / 1e9
    return f


def kind_table(vs, profs):
    """Per op kind: ORT profiled kernel ms vs perfc predicted ms, summed."""
    tab = {}
    for v in vs:
        p = profs.get(v["id"])
        if not p:
            continue
        for n in p["nodes"]:
            k = node_kind(n["node"], v["node_kinds"], n["op"])
            key = k["kind"] if k else f"(ORT {n['op']})"
            tab.setdefault(key, {"measured_ms": 0.0, "predicted_ms": 0.0, "ort_nodes": 0,
                                 "perfc_kernels": 0})
            tab[key]["measured_ms"] += n["median_us"] / 1e3
            tab[key]["ort_nodes"] += 1
        for key, d in v["pred_by_kind"].items():
            tab.setdefault(key, {"measured_ms": 0.0, "predicted_ms": 0.0, "ort_nodes": 0,
                                 "perfc_kernels": 0})
            tab[key]["predicted_ms"] += d["s"] * 1e3
            tab[key]["perfc_kernels"] += d["kernels"]
        between = p["model_run_median_us"] - p["kernels_sum_median_us"]
        d = tab.setdefault("(ORT between kernels)", {"measured_ms": 0.0, "predicted_ms": 0.0,
                                                     "ort_nodes": 0, "perfc_kernels": 0})
        d["measured_ms"] += between / 1e3
    return dict(sorted(tab.items(), key=lambda kv: -kv[1]["measured_ms"]))


def kind_by_spatial(vs, profs):
    """Per (conv kind, output size): predicted / profiled kernel time."""
    tab = {}
    for v in vs:
        p = profs.get(v["id"])
        if not p:
            continue
        for n in p["nodes"]:
            k = node_kind(n["node"], v["node_kinds"], n["op"])
            if not k or "macs" not in k:
                continue
            d = tab.setdefault(f"{k['kind']}@{k['out_hw']}", {"measured_ms": 0.0,
                                                             "predicted_ms": 0.0, "macs": 0})
            d["measured_ms"] += n["median_us"] / 1e3
        for name, k in v["node_kinds"].items():
            if "macs" in k and k.get("pred_s") is not None:
                d = tab.setdefault(f"{k['kind']}@{k['out_hw']}", {"measured_ms": 0.0,
                                                                 "predicted_ms": 0.0, "macs": 0})
                d["predicted_ms"] += k["pred_s"] * 1e3
                d["macs"] += k["macs"]
    return dict(sorted(tab.items()))


def profiler_overhead_us(vs, profs):
    """ORT's profiled run less the unprofiled best median, per executed node
    (median over the variants): what profiling adds to each kernel."""
    per = [(p["model_run_median_us"] - 1e3 * v["meas_ms"]) / p["nodes_executed"]
           for v in vs for p in [profs.get(v["id"])] if p and p["nodes_executed"]]
    return statistics.median(per) if per else 0.0


SIZE_BUCKETS = (2e6, 8e6, 32e6, 128e6)  # FLOPs per conv


def size_table(vs, profs, overhead_us):
    """Per conv kind and FLOPs of the node: ORT's profiled kernel time (and
    that less the profiler's overhead per node, a lower bound: the overhead
    is only known per run) against perfc's, summed."""
    tab = {}
    for v in vs:
        p = profs.get(v["id"])
        if not p:
            continue
        for n in p["nodes"]:
            k = node_kind(n["node"], v["node_kinds"], n["op"])
            if not k or "macs" not in k or k.get("pred_s") is None:
                continue
            flops = 2 * k["macs"]
            b = sum(1 for t in SIZE_BUCKETS if flops >= t)
            lo = f"{SIZE_BUCKETS[b - 1] / 1e6:g}" if b else "0"
            hi = f"{SIZE_BUCKETS[b] / 1e6:g}" if b < len(SIZE_BUCKETS) else "inf"
            kind = "dw" if k["kind"].startswith("dw") else k["kind"]
            d = tab.setdefault(f"{kind} {lo}-{hi} MFLOP", {
                "nodes": 0, "measured_ms": 0.0, "measured_less_overhead_ms": 0.0,
                "predicted_ms": 0.0, "flops": 0})
            d["nodes"] += 1
            d["measured_ms"] += n["median_us"] / 1e3
            d["measured_less_overhead_ms"] += max(0.0, n["median_us"] - overhead_us) / 1e3
            d["predicted_ms"] += k["pred_s"] * 1e3
            d["flops"] += flops
    return dict(sorted(tab.items(), key=lambda kv: (kv[0].split()[0],
                                                   float(kv[0].split()[1].split("-")[0]))))


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------

def perfc_version(perfc):
    v = getattr(perfc, "__version__", None) or getattr(perfc, "version", None)
    return v() if callable(v) else v


def listify(x):
    return x if isinstance(x, list) else [x]


def gflops(macs, ms):
    return 2 * macs / (ms / 1e3) / 1e9 if ms else float("nan")


def findings(res):
    """What the numbers say, in sentences computed from them (so that a
    rerun after a new calibration does not leave stale prose)."""
    s = res["summary"]
    out = []
    if s["tau_perfc_vs_flops"] > 0.98:
        out.append(f"perfc orders these variants almost exactly as FLOPs do (tau-b "
                   f"{s['tau_perfc_vs_flops']:.3f} between them), so it cannot rank better "
                   "than FLOPs here: the description gives every convolution nearly the "
                   "same FLOP rate and the per-kernel overhead is too small to matter.")
    ks = res.get("by_kind_spatial") or {}
    groups = {}
    for k, d in ks.items():
        kind = k.split("@")[0]
        kind = "depthwise" if kind.startswith("dw") else kind
        g = groups.setdefault(kind, {"macs": 0, "meas": 0.0, "pred": 0.0})
        g["macs"] += d["macs"]
        g["meas"] += d["measured_ms"]
        g["pred"] += d["predicted_ms"]
    if groups and all(g["meas"] for g in groups.values()):
        parts = [f"{k} {gflops(g['macs'], g['meas']):.0f} (perfc {gflops(g['macs'], g['pred']):.0f})"
                 for k, g in sorted(groups.items(), key=lambda kv: -kv[1]["meas"])]
        out.append("Effective GFLOP/s per conv kind, ORT's profiled kernels over all "
                   "variants (perfc's prediction in brackets): " + "; ".join(parts) + ".")
        sized = [(k, d) for k, d in ks.items() if d["measured_ms"] > 1 and d["macs"]]
        if sized:
            lo = min(sized, key=lambda kd: kd[1]["predicted_ms"] / kd[1]["measured_ms"])
            hi = max(sized, key=lambda kd: kd[1]["predicted_ms"] / kd[1]["measured_ms"])
            out.append(f"perfc / ORT kernel time per kind and size ranges from "
                       f"{lo[1]['predicted_ms'] / lo[1]['measured_ms']:.2f} ({lo[0]}) to "
                       f"{hi[1]['predicted_ms'] / hi[1]['measured_ms']:.2f} ({hi[0]}); a ranking "
                       "error comes from this spread, not from the overall scale.")
    dw = {}
    for k, d in ks.items():
        kind, size = k.split("@")
        if kind.startswith("dw") and d["measured_ms"]:
            kk = int(kind[2:])
            g = dw.setdefault(kk, {"elems": 0.0, "meas": 0.0, "pred": 0.0})
            g["elems"] += d["macs"] / (kk * kk)  # output elements
            g["meas"] += d["measured_ms"]
            g["pred"] += d["predicted_ms"]
    if len(dw) > 1:
        parts = [f"k={k}: {1e6 * g['meas'] / g['elems']:.2f} ns (perfc "
                 f"{1e6 * g['pred'] / g['elems']:.2f})" for k, g in sorted(dw.items())]
        ks_sorted = sorted(dw)
        lo, hi = dw[ks_sorted[0]], dw[ks_sorted[-1]]
        grow_meas = (hi['meas'] / hi['elems']) / (lo['meas'] / lo['elems'])
        grow_pred = (hi['pred'] / hi['elems']) / (lo['pred'] / lo['elems'])
        # Within 20 % the growths are called alike: the profile's own
        # overhead per node is of that order for the small kernels.
        if grow_pred > 1.2 * grow_meas:
            verdict = "changes ORT's time less than perfc predicts"
        elif grow_meas > 1.2 * grow_pred:
            verdict = "changes ORT's time more than perfc predicts"
        else:
            verdict = "changes ORT's time about as perfc predicts (within 20 %)"
        out.append("Depthwise convolutions, time per output element (ORT's profiled "
                   "kernels; perfc's prediction in brackets): " + "; ".join(parts)
                   + f". From k={ks_sorted[0]} to k={ks_sorted[-1]} ORT's cost per element "
                   f"grows {grow_meas:.1f}x and perfc's {grow_pred:.1f}x "
                   f"(the FLOPs {ks_sorted[-1] ** 2 / ks_sorted[0] ** 2:.1f}x): a kernel-size "
                   f"move in a NAS step {verdict}.")
    if res.get("profiler_overhead_us_per_node"):
        out.append(f"ORT's profiler adds about {res['profiler_overhead_us_per_node']:.0f} us "
                   "per node (profiled runs against the unprofiled best medians): the "
                   "profiled times above include it, which inflates the small kernels most; "
                   "the table by node size shows ORT's time with and without it.")
    small = [v for v in res["variants"] if v["meas_ms"] < 2.0]
    if small:
        errs = sorted(100 * (v["pred_ms"] / v["meas_ms"] - 1) for v in small)
        rest = [100 * (v["pred_ms"] / v["meas_ms"] - 1) for v in res["variants"]
                if v["meas_ms"] >= 2.0]
        def dw_share(group):
            tot = sum(d["s"] for v in group for d in v["pred_by_kind"].values())
            dw = sum(d["s"] for v in group for k, d in v["pred_by_kind"].items()
                     if k.startswith("dw"))
            return 100 * dw / tot if tot else float("nan")

        big = [v for v in res["variants"] if v["meas_ms"] >= 2.0]
        # Which depthwise kernel sizes perfc over- or under-predicts (per
        # output element, against ORT's profile, beyond 10 %): computed, so
        # that the sentence follows the calibration.
        off = [(k, g["pred"] / g["meas"]) for k, g in sorted(dw.items())
               if g["meas"] and abs(g["pred"] / g["meas"] - 1) > 0.1]
        why = ("; perfc / ORT per depthwise output: "
               + ", ".join(f"{k}x{k} {r:.2f}" for k, r in off)
               if off else "; perfc's depthwise time per output is within 10 % of ORT's "
               "for every kernel size")
        out.append(f"The {len(small)} variants measured under 2 ms are predicted "
                   f"{errs[0]:+.0f} to {errs[-1]:+.0f} % (the others "
                   f"{min(rest):+.0f} to {max(rest):+.0f} %). perfc gives depthwise "
                   f"convolutions {dw_share(small):.0f} % of their predicted time (the others "
                   f"{dw_share(big):.0f} %){why}. Their many small convolutions' ORT time "
                   "the profile cannot resolve (its overhead per node is of the same size).")
    bk = res.get("by_kind") or {}
    between = bk.get("(ORT between kernels)")
    if between:
        kern = sum(d["measured_ms"] for k, d in bk.items() if not k.startswith("(ORT between"))
        out.append(f"ORT's time outside kernels (dispatch, thread-pool wake-ups, the "
                   f"profiler): {between['measured_ms']:.1f} ms over all variants, "
                   f"{100 * between['measured_ms'] / max(1e-9, kern + between['measured_ms']):.0f} % "
                   "of their run time.")
    corr = sorted(s["residual_correlations"].items(), key=lambda kv: -abs(kv[1]))[:3]
    out.append("The per-variant error log(pred / meas) correlates most with "
               + ", ".join(f"{k} (rho {r:+.2f})" for k, r in corr) + ".")
    return out


def fmt_pct1(x):
    return f"{x:+.1f} %"


def fmt_pct(x):
    return f"{x:+.0f} %"


def write_report(res, path_md):
    vs = res["variants"]
    s = res["summary"]
    L = []
    gaps = [(v["noise_pct"] or 0.0, v["id"]) for v in vs]
    out_gap, out_id = max(gaps)
    L.append("# NAS ranking fidelity: perfc vs ONNX Runtime on this CPU (issue 6)\n")
    L.append("Generated by `tools/bench/nas_ranking.py` (rerun: "
             f"`{res['command']}`). {len(vs)} CNN variants of the NAS example's search "
             "space (tools/examples/nas_space.py: 28 sampled at evenly spaced log-MACs "
             "plus 12 near neighbours, one stage's kernel/expansion/width/depth moved one "
             "step), exported to ONNX with random weights, measured with ONNX Runtime "
             f"{res['onnxruntime_version']} (batch 1, {res['settings']['threads']} intra-op "
             "threads, median of "
             f"{'/'.join(str(x) for x in listify(res['settings']['runs']))} runs after 5 "
             "warm-up runs, best of "
             f"{res['settings']['rounds']} rounds) on {res['machine']['cpu']} "
             f"({res['machine']['logical_cpus']} logical CPUs), predicted by perfc "
             f"{res.get('perfc_version') or ''} with `{res['hw']}` (sha256 "
             f"{res.get('hw_sha256_16')}..., predicted {res['predicted']}).\n")
    L.append("| | Kendall tau-b vs measured | Spearman rho | MAPE |")
    L.append("|---|---|---|---|")
    L.append(f"| perfc predicted latency | **{s['tau_perfc']:.3f}** | {s['rho_perfc']:.3f} | "
             f"{s['mape_perfc_pct']:.1f} % |")
    L.append(f"| FLOPs | {s['tau_flops']:.3f} | {s['rho_flops']:.3f} | - |")
    L.append(f"| perfc, near-neighbour pairs only ({s['neighbour_pairs']} pairs) | "
             f"{s['tau_perfc_neighbours']:.3f} | | |")
    L.append(f"| FLOPs, near-neighbour pairs only | {s['tau_flops_neighbours']:.3f} | | |")
    L.append(f"| perfc vs the fastest single run | {s['tau_perfc_min_run']:.3f} | | |")
    L.append(f"| FLOPs vs the fastest single run | {s['tau_flops_min_run']:.3f} | | |")
    L.append(f"| perfc vs the median round (not the best) | {s['tau_perfc_median_round']:.3f} | | |")
    L.append(f"| FLOPs vs the median round | {s['tau_flops_median_round']:.3f} | | |\n")
    L.append(f"Kendall tau-b of perfc's prediction against FLOPs: {s['tau_perfc_vs_flops']:.3f} "
             "(1 would mean perfc orders these networks exactly as FLOPs do). "
             f"The best round can be a lucky outlier ({out_id}'s best median is "
             f"{out_gap:.0f} % below its next best): the median-round rows check that "
             "the figures do not hinge on it. "
             "Near-neighbour pairs: the share of the 12 (variant, the variant it was "
             "mutated from) pairs ordered right minus the share ordered wrong.\n")
    L.append(f"Target tau >= {TARGET_TAU}: **{'met' if s['tau_perfc'] >= TARGET_TAU else 'not met'}**. "
             f"Measured latency spans {s['measured_min_ms']:.2f} to {s['measured_max_ms']:.2f} ms "
             f"({s['measured_ratio']:.1f}x). Noise: the median over variants of "
             f"(second-best round / best round - 1) is {s['noise_pct']:.1f} %; "
             f"{s['discordant_perfc']} discordant pairs for perfc "
             f"({s['discordant_perfc_over_noise']} with a measured gap over 2x the noise, "
             f"{s['discordant_perfc_over_10pct']} over 10 %), {s['discordant_flops']} for FLOPs.\n")
    L.append("## Variants\n")
    L.append("Config per stage: depth x width, kernel k, expansion e. Origin: sampled, or "
             "the variant it is a near neighbour of and what moved.\n")
    L.append("| id | config | origin | MFLOPs | Mparams | measured ms | predicted ms | error |")
    L.append("|---|---|---|---|---|---|---|---|")
    for v in sorted(vs, key=lambda v: v["meas_ms"]):
        L.append(f"| {v['id']} | {v['config']} | {v['origin']} | {v['flops'] / 1e6:.0f} | "
                 f"{v['perfc_params'] / 1e6:.2f} | {v['meas_ms']:.2f} | "
                 f"{v['pred_ms']:.2f} | {fmt_pct(100 * (v['pred_ms'] / v['meas_ms'] - 1))} |")
    L.append("")
    L.append("## Near neighbours\n")
    L.append("Each mutated variant against the variant it came from: the change in "
             "measured latency, in perfc's prediction and in FLOPs (a sign that differs "
             "from the measured one orders the pair wrong).\n")
    L.append("| variant | from | move | measured | perfc | FLOPs |")
    L.append("|---|---|---|---|---|---|")
    by_id = {v["id"]: v for v in vs}
    for v in vs:
        if v["origin"] == "sampled":
            continue
        base, move = v["origin"].split()
        b = by_id[base]
        L.append(f"| {v['id']} | {base} | {move} | "
                 f"{fmt_pct1(100 * (v['meas_ms'] / b['meas_ms'] - 1))} | "
                 f"{fmt_pct1(100 * (v['pred_ms'] / b['pred_ms'] - 1))} | "
                 f"{fmt_pct1(100 * (v['flops'] / b['flops'] - 1))} |")
    L.append("")
    L.append("## Why the order differs\n")
    L.append("Residual log(predicted / measured) per variant against properties of the "
             "variant (Spearman rho over the variants; a strong rho names what perfc "
             "mis-weights). The stem (conv3x3) and the classifier (gemm) are the same in "
             "every variant, so their shares are large exactly when the network is small:\n")
    L.append("| property | rho with log(pred/meas) |")
    L.append("|---|---|")
    for k, r in s["residual_correlations"].items():
        L.append(f"| {k} | {r:+.2f} |")
    L.append("")
    if res.get("by_kind"):
        L.append("Per op kind, summed over all variants: ORT's profiled kernel time "
                 "(profiling round, median of 10 runs per node) against perfc's predicted "
                 "kernel time (BatchNorm and Clip fuse into the convs on both sides; "
                 "ORT's NCHWc reorders have no perfc counterpart):\n")
        L.append("| op kind | ORT nodes | ORT ms | perfc kernels | perfc ms | perfc / ORT |")
        L.append("|---|---|---|---|---|---|")
        for k, d in res["by_kind"].items():
            ratio = d["predicted_ms"] / d["measured_ms"] if d["measured_ms"] else float("nan")
            L.append(f"| {k} | {d['ort_nodes']} | {d['measured_ms']:.1f} | "
                     f"{d['perfc_kernels']} | {d['predicted_ms']:.1f} | {ratio:.2f} |")
        L.append("")
    if res.get("by_kind_spatial"):
        L.append("Convolutions by kind and output size (HxW), summed over all variants:\n")
        L.append("| kind@size | GMACs | ORT ms | perfc ms | perfc / ORT | ORT GFLOP/s "
                 "| perfc GFLOP/s |")
        L.append("|---|---|---|---|---|---|---|")
        for k, d in res["by_kind_spatial"].items():
            ratio = d["predicted_ms"] / d["measured_ms"] if d["measured_ms"] else float("nan")
            L.append(f"| {k} | {d['macs'] / 1e9:.2f} | {d['measured_ms']:.1f} | "
                     f"{d['predicted_ms']:.1f} | {ratio:.2f} | {gflops(d['macs'], d['measured_ms']):.0f} "
                     f"| {gflops(d['macs'], d['predicted_ms']):.0f} |")
        L.append("")
    if res.get("by_node_size"):
        L.append(f"Convolutions by FLOPs of the node, summed over all variants: ORT's "
                 f"profiled kernel time, and that less the profiler's overhead (estimated "
                 f"{res['profiler_overhead_us_per_node']:.0f} us per node from profiled runs "
                 "against the unprofiled best medians; a lower bound, as part of the "
                 "overhead falls between kernels), against perfc's:\n")
        L.append("| kind, node size | nodes | ORT ms | ORT ms less overhead | perfc ms "
                 "| perfc / ORT | perfc / (ORT less overhead) |")
        L.append("|---|---|---|---|---|---|---|")
        for k, d in res["by_node_size"].items():
            m, m2 = d["measured_ms"], d["measured_less_overhead_ms"]
            L.append(f"| {k} | {d['nodes']} | {m:.1f} | {m2:.1f} | {d['predicted_ms']:.1f} | "
                     f"{d['predicted_ms'] / m if m else float('nan'):.2f} | "
                     f"{d['predicted_ms'] / m2 if m2 > 0.05 else float('nan'):.2f} |")
        L.append("")
    L.append("Discordant pairs with the largest measured gap (perfc):\n")
    L.append("| faster | slower | measured gap | perfc predicted gap |")
    L.append("|---|---|---|---|")
    for p in res["discordant_perfc"][:15]:
        L.append(f"| {p['faster']} | {p['slower']} | {fmt_pct(p['measured_gap_pct'])} | "
                 f"{fmt_pct(p['predicted_gap_pct'])} |")
    L.append("")
    L.append("## Findings\n")
    for f in findings(res):
        L.append(f"- {f}")
    L.append("")
    if res.get("analysis"):
        L.append("## Notes\n")
        L.append(res["analysis"] + "\n")
    L.append("## Measurement conditions\n")
    L.append("Per round: the share of the CPUs other processes used in the 2 s before it, "
             "the CPU time they took while it ran (on 2 CPUs; the measurement wants both), "
             "the runs per variant, this script's nice value (autogroup) and how many "
             "variants had their best median in that round.\n")
    best_in = {}
    for v in vs:
        meds = v["round_medians_ms"]
        best_in[meds.index(min(meds))] = best_in.get(meds.index(min(meds)), 0) + 1
    L.append("| round | date | others busy before | other CPU-s during | wall s | load after "
             "| runs | nice | best for |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(res["rounds"]):
        L.append(f"| {r['round'] + 1} | {r.get('date', '')} | "
                 f"{100 * r['others_busy_before']:.0f} % | "
                 f"{r['other_cpu_s']:.1f} | {r['wall_s']:.0f} | {r['loadavg_after']:.2f} | "
                 f"{r.get('runs', '')} | {r.get('priority', '')} | {best_in.get(i, 0)} |")
    L.append("")
    with open(path_md, "w") as f:
        f.write("\n".join(L))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build dir whose python/ holds the perfc module")
    ap.add_argument("--hw", help="device description (default: "
                    "tools/bench/results/calibrated_<cpu>.yaml)")
    ap.add_argument("--variants", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--max-seconds", type=float, default=4.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quiet", type=float, default=15.0,
                    help="percent of all CPUs others may use before a round starts")
    ap.add_argument("--max-wait", type=float, default=240.0,
                    help="seconds to wait for a quiet machine per round")
    ap.add_argument("--priority", type=int, default=0,
                    help="nice value of this script's scheduler autogroup while it "
                    "measures (negative: ahead of other sessions' compilers; needs root; "
                    "run under setsid so that the group holds only this script)")
    ap.add_argument("--work", default="/tmp/perfc-nas-bench")
    ap.add_argument("--ort-dir", help="where node_modules/onnxruntime-node is "
                    "(default WORK/ort)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rounds of the earlier nas_ranking.json (same variants "
                    "and threads) and add new ones: per variant the best of all counts")
    ap.add_argument("--skip-measure", action="store_true",
                    help="reuse the measurements in the earlier nas_ranking.json")
    ap.add_argument("--no-profile-round", action="store_true")
    ap.add_argument("--profile-rounds", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(RESULTS, "nas_ranking"))
    args = ap.parse_args(argv)

    sys.path.insert(0, os.path.join(os.path.abspath(args.build), "python"))
    import perfc

    tag = cpu_tag()
    hw = args.hw or os.path.join(RESULTS, f"calibrated_{tag}.yaml")
    if not os.path.exists(hw):
        sys.exit(f"nas_ranking: {hw}: no such device description; run "
                 "tools/bench/ort_accuracy.py (it calibrates) or pass --hw FILE.yaml")
    work = os.path.abspath(args.work)
    os.makedirs(os.path.join(work, "models"), exist_ok=True)

    priority = set_priority(args.priority) if args.priority else None
    vs = variants(args.seed, args.variants)
    for v in vs:
        v["path"] = export(v, work, args.seed)
    log(f"{len(vs)} variants exported to {work}/models")

    prev = None
    if args.skip_measure or args.merge:
        with open(args.out + ".json") as f:
            prev = json.load(f)
        if [p["config"] for p in prev["variants"]] != [v["config"] for v in vs]:
            sys.exit("nas_ranking: the variants differ from the earlier results; measure again")
        if args.merge and prev["settings"]["threads"] != args.threads:
            sys.exit("nas_ranking: --merge: the earlier results used "
                     f"{prev['settings']['threads']} threads")
    if args.skip_measure:
        rounds, profs, prof_meta = prev["rounds"], prev.get("_profiles", {}), prev.get(
            "profile_round")
        ort_version = prev["onnxruntime_version"]
        mach = prev["machine"]
    else:
        # Its own copy by default: another script reinstalling a shared one
        # mid-run makes a round fail.
        ort_dir = os.path.abspath(args.ort_dir or os.path.join(work, "ort"))
        ort_version = ensure_ort(ort_dir, work)
        mach = machine()
        old = prev["rounds"] if prev else []
        rounds = measure(vs, args, work, ort_dir, first=len(old))
        if not rounds:
            sys.exit("nas_ranking: no round measured")
        rounds = old + rounds
        prev_profs = prev.get("_profiles", {}) if prev else {}
        prev_meta = (prev.get("profile_round") or []) if prev else []
        if isinstance(prev_meta, dict):
            prev_meta = [prev_meta]
        if args.no_profile_round:
            profs, prof_meta = prev_profs, prev_meta
        else:
            profs, new_meta = profile_round(vs, args, work, ort_dir, prev_profs)
            prof_meta = prev_meta + new_meta

    for v in vs:
        meds = sorted(r["models"][v["id"]]["median_ms"] for r in rounds
                      if v["id"] in r["models"])
        v["meas_ms"] = meds[0]
        v["round_medians_ms"] = [r["models"][v["id"]]["median_ms"] for r in rounds
                                 if v["id"] in r["models"]]
        v["noise_pct"] = 100 * (meds[1] / meds[0] - 1) if len(meds) > 1 else None
        # The fastest single run of any round: a check that the ranking does
        # not hinge on which runs other work slowed down.
        v["min_ms"] = min(r["models"][v["id"]]["min_ms"] for r in rounds
                          if v["id"] in r["models"])

    predict(vs, hw, perfc)
    # Per-node predictions for the size table: map perfc's kernels back.
    for v in vs:
        model = perfc.Model.from_onnx(v["path"], batch=1)
        j = json.loads(perfc.predict_json(model, perfc.load_hw(hw)))
        for n in j["nodes"]:
            k = node_kind(n["name"], v["node_kinds"])
            if k is not None and n.get("latency_s"):
                k["pred_s"] = k.get("pred_s", 0.0) + n["latency_s"]

    meas = [v["meas_ms"] for v in vs]
    pred = [v["pred_s"] for v in vs]
    flops = [v["flops"] for v in vs]
    for v in vs:
        v["pred_ms"] = v["pred_s"] * 1e3
    noise = statistics.median(v["noise_pct"] for v in vs if v["noise_pct"] is not None) \
        if len(rounds) > 1 else 0.0
    dis_p = discordant(vs, "pred_ms")
    dis_f = discordant(vs, "flops")
    neighbour = [(v, next(b for b in vs if b["id"] == v["origin"].split()[0]))
                 for v in vs if v["origin"] != "sampled"]

    def pair_tau(key):
        s = sum(sign(a[key] - b[key]) * sign(a["meas_ms"] - b["meas_ms"]) for a, b in neighbour)
        return s / len(neighbour) if neighbour else float("nan")

    resid = [math.log(v["pred_ms"] / v["meas_ms"]) for v in vs]
    feats = [features(v) for v in vs]
    corr = {k: spearman([f[k] for f in feats], resid) for k in feats[0]}
    summary = {
        "variants": len(vs),
        "tau_perfc": kendall_tau_b(pred, meas),
        "tau_flops": kendall_tau_b(flops, meas),
        "tau_perfc_vs_flops": kendall_tau_b(pred, flops),
        "tau_perfc_min_run": kendall_tau_b(pred, [v["min_ms"] for v in vs]),
        "tau_perfc_median_round": kendall_tau_b(
            pred, [statistics.median(v["round_medians_ms"]) for v in vs]),
        "tau_flops_median_round": kendall_tau_b(
            flops, [statistics.median(v["round_medians_ms"]) for v in vs]),
        "tau_flops_min_run": kendall_tau_b(flops, [v["min_ms"] for v in vs]),
        "rho_perfc": spearman(pred, meas),
        "rho_flops": spearman(flops, meas),
        "mape_perfc_pct": 100 * statistics.fmean(abs(p * 1e3 / m - 1) for p, m in zip(pred, meas)),
        "neighbour_pairs": len(neighbour),
        "tau_perfc_neighbours": pair_tau("pred_ms"),
        "tau_flops_neighbours": pair_tau("flops"),
        "measured_min_ms": min(meas), "measured_max_ms": max(meas),
        "measured_ratio": max(meas) / min(meas),
        "noise_pct": noise,
        "discordant_perfc": len(dis_p),
        "discordant_perfc_over_noise": sum(1 for p in dis_p
                                           if p["measured_gap_pct"] > 2 * noise),
        "discordant_perfc_over_10pct": sum(1 for p in dis_p if p["measured_gap_pct"] > 10),
        "discordant_flops": len(dis_f),
        "residual_correlations": corr,
        "target_tau": TARGET_TAU,
    }
    by_kind = kind_table(vs, profs) if profs else None
    by_ks = kind_by_spatial(vs, profs) if profs else None
    overhead = profiler_overhead_us(vs, profs) if profs else None
    by_size = size_table(vs, profs, overhead) if profs else None
    analysis = prev.get("analysis") if prev else None
    if not prev and os.path.exists(args.out + ".json"):
        # Hand-written analysis survives reruns until replaced.
        try:
            with open(args.out + ".json") as f:
                analysis = json.load(f).get("analysis")
        except (OSError, ValueError):
            pass
    with open(hw, "rb") as f:
        hw_sha = hashlib.sha256(f.read()).hexdigest()[:16]
    cmd = "/usr/bin/python3 tools/bench/nas_ranking.py --build " + os.path.relpath(
        os.path.abspath(args.build), ROOT)
    res = {
        "command": cmd,
        "machine": mach,
        "onnxruntime_version": ort_version,
        "hw": os.path.relpath(os.path.abspath(hw), ROOT),
        "hw_sha256_16": hw_sha,
        "perfc_version": perfc_version(perfc),
        "predicted": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
        "settings": prev["settings"] if args.skip_measure else {
            "batch": 1, "threads": args.threads, "inter_op_threads": 1,
            "runs": sorted({r.get("runs", args.runs) for r in rounds}),
            "warmup": 5, "rounds": len(rounds), "max_seconds": args.max_seconds,
            "seed": args.seed, "graph_optimization_level": "all",
            "priority": sorted({str(r.get("priority")) for r in rounds}),
            "priority_set": priority},
        "summary": summary,
        "analysis": analysis,
        "variants": [{k: v[k] for k in ("id", "config", "arch", "origin", "macs", "flops",
                                        "params", "perfc_params", "kernels", "meas_ms",
                                        "pred_ms", "min_ms", "round_medians_ms", "noise_pct",
                                        "pred_by_kind", "pred_bound_s")}
                     | {"features": f, "measured_by_kind_ms": _measured_by_kind(v, profs)}
                     for v, f in zip(vs, feats)],
        "discordant_perfc": dis_p,
        "discordant_flops": dis_f,
        "by_kind": by_kind,
        "by_kind_spatial": by_ks,
        "profiler_overhead_us_per_node": overhead,
        "by_node_size": by_size,
        "profile_round": prof_meta,
        "rounds": rounds,
        # Per node only what the tables need (the traces stay in WORK/profiles).
    "_profiles": {k: {"model_run_median_us": p["model_run_median_us"],
                      "kernels_sum_median_us": p["kernels_sum_median_us"],
                      "nodes_executed": p["nodes_executed"],
                      "nodes": [{kk: n[kk] for kk in ("node", "op", "median_us")}
                                for n in p["nodes"]]}
                  for k, p in profs.items()},
    }
    for r in rounds:  # 0.1 us is far below the noise; keeps the file small
        for t in r["models"].values():
            t["times_ms"] = [round(x, 4) for x in t["times_ms"]]
    text = json.dumps(res, indent=1)
    # Arrays of numbers (every run's time) on one line each.
    text = re.sub(r"\[\s+([-0-9.e+,\s]+?)\s+\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]",
                  text)
    with open(args.out + ".json", "w") as f:
        f.write(text + "\n")
    write_report(res, args.out + ".md")
    print(f"{len(vs)} variants, measured {min(meas):.2f}..{max(meas):.2f} ms "
          f"({max(meas) / min(meas):.1f}x); Kendall tau-b perfc {summary['tau_perfc']:.3f} "
          f"(target {TARGET_TAU}), FLOPs {summary['tau_flops']:.3f}; Spearman perfc "
          f"{summary['rho_perfc']:.3f}, FLOPs {summary['rho_flops']:.3f}; MAPE "
          f"{summary['mape_perfc_pct']:.1f} %; near-neighbour pairs: perfc "
          f"{summary['tau_perfc_neighbours']:.2f}, FLOPs {summary['tau_flops_neighbours']:.2f}")
    print(f"wrote {args.out}.md and .json")


def _measured_by_kind(v, profs):
    p = profs.get(v["id"])
    if not p:
        return None
    out = {}
    for n in p["nodes"]:
        k = node_kind(n["node"], v["node_kinds"], n["op"])
        key = k["kind"] if k else f"(ORT {n['op']})"
        out[key] = out.get(key, 0.0) + n["median_us"] / 1e3
    out["(between kernels)"] = (p["model_run_median_us"] - p["kernels_sum_median_us"]) / 1e3
    return out


if __name__ == "__main__":
    main()
