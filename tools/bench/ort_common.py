"""What the ONNX Runtime benchmarks share: the machine's name and
description, onnxruntime-node (installed and checked), a measuring job run
through ort_measure.mjs, and ORT's profiler trace summed per node.

Used by ort_accuracy.py and nas_ranking.py. Plain python3: no onnx or
numpy import here, so that nas_ranking.py runs without them (the probe
model each script writes its own way).
"""
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MEASURE_JS = os.path.join(HERE, "ort_measure.mjs")


# --------------------------------------------------------------------------
# The machine
# --------------------------------------------------------------------------

def cpuinfo():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    k, v = line.split(":", 1)
                    info.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return info


def cpu_tag():
    """'amd-epyc-f26m2': the CPU, for result file names
    (calibrated_<cpu>.yaml, ort_<cpu>.json)."""
    info = cpuinfo()
    name = info.get("model name", platform.processor() or "cpu").lower()
    name = re.sub(r"\(r\)|\(tm\)|processor|cpu @.*|\d+-core", "", name)
    tag = re.sub(r"[^a-z0-9]+", "-", name).strip("-") or "cpu"
    if "cpu family" in info and "model" in info:
        tag += f"-f{info['cpu family']}m{info['model']}"
    return tag


def machine():
    info = cpuinfo()
    return {
        "cpu": info.get("model name"),
        "vendor": info.get("vendor_id"),
        "family": info.get("cpu family"),
        "model": info.get("model"),
        "logical_cpus": os.cpu_count(),
        "host": platform.node(),
        "kernel": platform.release(),
        "loadavg": os.getloadavg()[0],
        "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
    }


# --------------------------------------------------------------------------
# onnxruntime-node
# --------------------------------------------------------------------------

def node_job(job, work, tag, prefix=()):
    """Runs one ort_measure.mjs job (written to WORK/job_TAG.json) and
    returns its output; RuntimeError when node fails. prefix: a command to
    run node under (e.g. nice -n N)."""
    job_path = os.path.join(work, f"job_{tag}.json")
    out_path = os.path.join(work, f"out_{tag}.json")
    with open(job_path, "w") as f:
        json.dump(job, f, indent=1)
    if os.path.exists(out_path):
        os.remove(out_path)
    r = subprocess.run(list(prefix) + ["node", MEASURE_JS, job_path, out_path], cwd=work)
    if r.returncode != 0 or not os.path.exists(out_path):
        raise RuntimeError(f"node {MEASURE_JS} {job_path} failed ({r.returncode})")
    with open(out_path) as f:
        return json.load(f)


def ensure_ort(ort_dir, work, write_probe, who, prefix=()):
    """onnxruntime-node in ort_dir (npm install --ignore-scripts if missing:
    its install script fetches GPU files and fails offline; the CPU binding
    ships in the package), checked by running a one-node model:
    write_probe(path) writes one Add y = x + x over x of shape [1, 16].
    Returns ORT's version; exits, naming `who`, when it does not run."""
    pkg = os.path.join(ort_dir, "node_modules", "onnxruntime-node")
    if not os.path.exists(os.path.join(pkg, "package.json")):
        os.makedirs(ort_dir, exist_ok=True)
        if not os.path.exists(os.path.join(ort_dir, "package.json")):
            with open(os.path.join(ort_dir, "package.json"), "w") as f:
                json.dump({"name": "perfc-ort-bench", "private": True}, f)
        log(who, f"installing onnxruntime-node into {ort_dir} (npm install --ignore-scripts)")
        r = subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund",
                            "--prefix", ort_dir, "onnxruntime-node"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{who}: npm install failed:\n{r.stdout}\n{r.stderr}")
    probe = os.path.join(work, "probe_add.onnx")
    write_probe(probe)
    job = {"ort_dir": ort_dir, "intra_op_threads": 1, "inter_op_threads": 1,
           "models": [{"name": "probe", "path": probe, "warmup": 1, "runs": 10,
                       "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 16]}]}]}
    try:
        out = node_job(job, work, "probe", prefix)
    except RuntimeError as e:
        sys.exit(f"{who}: onnxruntime-node in {ort_dir} does not run: {e}")
    version = out.get("onnxruntime_version")
    log(who, f"onnxruntime-node {version} works ({pkg})")
    return version


def log(who, msg):
    print(f"{who}: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# ORT's profiler
# --------------------------------------------------------------------------

def summarize_profile(trace_path, skip_runs=1):
    """Per node: median kernel time (us) over the runs after skip_runs."""
    with open(trace_path) as f:
        events = json.load(f)
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                  if e.get("cat") == "Session" and e.get("name") == "model_run")
    kept = runs[skip_runs:]
    if not kept:
        return None

    def run_index(ts):
        for i, (a, b) in enumerate(kept):
            if a <= ts <= b:
                return i
        return None

    nodes = {}
    order = []
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        i = run_index(e["ts"])
        if i is None:
            continue
        name = e["name"][: -len("_kernel_time")]
        a = e.get("args", {})
        if name not in nodes:
            order.append(name)
            nodes[name] = {
                "node": name,
                "op": a.get("op_name"),
                "provider": a.get("provider"),
                "input_type_shape": a.get("input_type_shape"),
                "output_type_shape": a.get("output_type_shape"),
                "activation_size": a.get("activation_size"),
                "parameter_size": a.get("parameter_size"),
                "output_size": a.get("output_size"),
                "per_run_us": [0.0] * len(kept),
            }
        nodes[name]["per_run_us"][i] += e["dur"]
    out_nodes = []
    for name in order:
        n = nodes[name]
        per = n.pop("per_run_us")
        n["median_us"] = statistics.median(per)
        n["min_us"] = min(per)
        out_nodes.append(n)
    run_us = [b - a for a, b in kept]
    kernel_us = sum(n["median_us"] for n in out_nodes)
    by_op = {}
    for n in out_nodes:
        d = by_op.setdefault(n["op"], {"op": n["op"], "nodes": 0, "median_us": 0.0})
        d["nodes"] += 1
        d["median_us"] += n["median_us"]
    median_run = statistics.median(run_us)
    return {
        "trace": os.path.basename(trace_path),
        "runs": len(kept),
        "model_run_median_us": median_run,
        "kernels_sum_median_us": kernel_us,
        "nodes_executed": len(out_nodes),
        # Time in session.run() outside the kernels, per executed node: the
        # framework's dispatch (plus profiler overhead).
        "between_kernels_us_per_node": (median_run - kernel_us) / max(1, len(out_nodes)),
        "by_op": sorted(by_op.values(), key=lambda d: -d["median_us"]),
        "nodes": out_nodes,
    }
