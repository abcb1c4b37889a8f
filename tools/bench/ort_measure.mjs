// ort_measure.mjs: time ONNX models with ONNX Runtime (onnxruntime-node) on
// this CPU. Driven by tools/bench/ort_accuracy.py, which writes the job file.
//
//   node tools/bench/ort_measure.mjs JOB.json OUT.json
//
// JOB.json:
//   { "ort_dir": "DIR holding node_modules/onnxruntime-node",
//     "intra_op_threads": 2, "inter_op_threads": 1,
//     "models": [{ "name", "path",
//                  "inputs": [{"name", "dtype": "float32"|"int64", "shape": [..]}],
//                  "warmup": 5, "runs": 30, "max_seconds": 20,
//                  "optimized_path": "FILE or null",   // ORT's optimized graph
//                  "profile_prefix": "PREFIX or null", // ORT's profiler trace
//                  "profile_runs": 10 }] }
//
// Per model, three sessions, each with graph optimizations "all" (ORT's
// default), sequential execution, the given intra-/inter-op threads:
//  1. timing: `warmup` runs, then `runs` timed runs (fewer if max_seconds
//     passes first, never fewer than 10): every run's wall time of
//     session.run() in ms, and the median, p10, p90, mean and min;
//  2. (optional) the same options plus optimizedModelFilePath: ORT writes
//     the graph it runs, after fusions and layout changes;
//  3. (optional) the same plus enableProfiling: one warm-up run, then
//     profile_runs runs; ORT writes a Chrome-trace JSON with every node's
//     kernel time (PREFIX_<date>.json); the file name is reported.
// Inputs are deterministic pseudo-random data (floats in [-1, 1), int64
// token ids in [0, 1000)).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';

const [jobPath, outPath] = process.argv.slice(2);
if (!jobPath || !outPath) {
  console.error('usage: node ort_measure.mjs JOB.json OUT.json');
  process.exit(2);
}
const job = JSON.parse(fs.readFileSync(jobPath, 'utf8'));
const require = createRequire(path.join(path.resolve(job.ort_dir), 'index.js'));
const ort = require('onnxruntime-node');

function rng(seed) {
  // xorshift32: the same inputs on every run and machine.
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

function makeFeeds(inputs) {
  const feeds = {};
  const r = rng(12345);
  for (const inp of inputs) {
    const n = inp.shape.reduce((a, b) => a * b, 1);
    if (inp.dtype === 'float32') {
      const data = new Float32Array(n);
      for (let i = 0; i < n; i++) data[i] = r() * 2 - 1;
      feeds[inp.name] = new ort.Tensor('float32', data, inp.shape);
    } else if (inp.dtype === 'int64') {
      const data = new BigInt64Array(n);
      for (let i = 0; i < n; i++) data[i] = BigInt(Math.floor(r() * 1000));
      feeds[inp.name] = new ort.Tensor('int64', data, inp.shape);
    } else {
      throw new Error(`input ${inp.name}: unsupported dtype ${inp.dtype}`);
    }
  }
  return feeds;
}

function options(extra) {
  return {
    executionProviders: ['cpu'],
    intraOpNumThreads: job.intra_op_threads ?? 2,
    interOpNumThreads: job.inter_op_threads ?? 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    ...extra,
  };
}

function quantile(sorted, q) {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos), hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function loadavg() {
  return os.loadavg()[0];
}

async function timeModel(m) {
  const feeds = makeFeeds(m.inputs);
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(m.path, options({}));
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const load0 = loadavg();
  for (let i = 0; i < (m.warmup ?? 5); i++) await session.run(feeds);
  const times = [];
  const start = process.hrtime.bigint();
  // At least 10 runs; `runs` of them unless max_seconds passes first.
  const target = Math.max(10, m.runs ?? 30);
  const maxSeconds = m.max_seconds ?? 20;
  for (;;) {
    const a = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - a) / 1e6);
    const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    if (times.length >= 10 && (times.length >= target || elapsed > maxSeconds)) break;
  }
  const sorted = [...times].sort((x, y) => x - y);
  await session.release?.();
  return {
    session_create_ms: createMs,
    warmup: m.warmup ?? 5,
    runs: times.length,
    median_ms: quantile(sorted, 0.5),
    p10_ms: quantile(sorted, 0.1),
    p90_ms: quantile(sorted, 0.9),
    mean_ms: times.reduce((a, b) => a + b, 0) / times.length,
    min_ms: sorted[0],
    times_ms: times,
    loadavg_before: load0,
    loadavg_after: loadavg(),
  };
}

async function optimizedGraph(m) {
  const session = await ort.InferenceSession.create(
    m.path, options({ optimizedModelFilePath: m.optimized_path }));
  await session.release?.();
  return fs.existsSync(m.optimized_path) ? m.optimized_path : null;
}

async function profile(m) {
  const feeds = makeFeeds(m.inputs);
  const dir = path.dirname(m.profile_prefix);
  const base = path.basename(m.profile_prefix);
  const before = new Set(fs.readdirSync(dir));
  const session = await ort.InferenceSession.create(
    m.path, options({ enableProfiling: true, profileFilePrefix: m.profile_prefix }));
  await session.run(feeds); // warm-up, inside the trace (the parser skips it)
  for (let i = 0; i < (m.profile_runs ?? 10); i++) await session.run(feeds);
  session.endProfiling();
  await session.release?.();
  const made = fs.readdirSync(dir).filter(
    (f) => f.startsWith(base) && f.endsWith('.json') && !before.has(f));
  // ORT writes the trace relative to the working directory when the prefix
  // has no directory; look there too.
  if (made.length === 0) {
    const here = fs.readdirSync('.').filter((f) => f.startsWith(base) && f.endsWith('.json'));
    return here.length ? path.resolve(here.sort().at(-1)) : null;
  }
  return path.join(dir, made.sort().at(-1));
}

const results = {
  onnxruntime_version: ort.env?.versions?.node ?? ort.env?.versions?.common ?? null,
  node_version: process.version,
  intra_op_threads: job.intra_op_threads ?? 2,
  inter_op_threads: job.inter_op_threads ?? 1,
  graph_optimization_level: 'all',
  models: {},
};
for (const m of job.models) {
  process.stderr.write(`ort_measure: ${m.name} ...`);
  const r = { inputs: m.inputs };
  r.timing = await timeModel(m);
  process.stderr.write(` median ${r.timing.median_ms.toFixed(2)} ms over ${r.timing.runs} runs`);
  if (m.optimized_path) r.optimized_path = await optimizedGraph(m);
  if (m.profile_prefix) {
    r.profile_path = await profile(m);
    r.profile_runs = m.profile_runs ?? 10;
    process.stderr.write(', profiled');
  }
  process.stderr.write('\n');
  results.models[m.name] = r;
  // Write as we go: a crash later keeps what was measured.
  fs.writeFileSync(outPath, JSON.stringify(results, null, 1));
}
fs.writeFileSync(outPath, JSON.stringify(results, null, 1));
