#!/usr/bin/python3
"""Give a weight-stripped ONNX model deterministic random weights again.

Usage:  /usr/bin/python3 tools/zoo/fill_weights.py IN.onnx OUT.onnx [--external]

This is the inverse of strip_weights.py, for benchmarks that need realistic,
full-size files (resnet50 ~100 MB, gpt2_small ~500 MB) without committing
weights.  Every tensor (initializer or Constant ``value``) whose
data_location is EXTERNAL gets fresh data with its own dtype and dims,
drawn from ``numpy.random.default_rng(seed)`` (seed 0 by default) in graph
order, so the output is byte-for-byte reproducible:

  * floating point:   normal(0, 0.02)
                      (except BatchNormalization ``var`` inputs:
                       uniform[0.5, 1.5) so that sqrt(var+eps) stays real)
  * integer / bool:   zeros (random integers could be out-of-range Gather
                       indices; the zoo models have no stripped int tensors
                       anyway)

Without --external the data is embedded as raw_data in OUT (the file must
stay below protobuf's 2 GiB limit).  With --external it is written via
onnx.external_data_helper to "<OUT stem>.weights" beside OUT (one file,
proper offsets/lengths); an existing file of that name is replaced.
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from strip_weights import iter_graph_tensors, numel  # noqa: E402

NP_DTYPE = {
    TensorProto.FLOAT: np.float32,
    TensorProto.UINT8: np.uint8,
    TensorProto.INT8: np.int8,
    TensorProto.UINT16: np.uint16,
    TensorProto.INT16: np.int16,
    TensorProto.INT32: np.int32,
    TensorProto.INT64: np.int64,
    TensorProto.BOOL: np.bool_,
    TensorProto.FLOAT16: np.float16,
    TensorProto.DOUBLE: np.float64,
    TensorProto.UINT32: np.uint32,
    TensorProto.UINT64: np.uint64,
}


def _bn_var_names(graph, acc=None):
    acc = set() if acc is None else acc
    for node in graph.node:
        if node.op_type == "BatchNormalization" and len(node.input) >= 5:
            acc.add(node.input[4])
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _bn_var_names(attr.g, acc)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    _bn_var_names(g, acc)
    return acc


def _random_bytes(rng, t, positive):
    n = numel(t)
    dt = t.data_type
    if dt in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16):
        if positive:
            a = rng.uniform(0.5, 1.5, size=n).astype(np.float32)
        else:
            a = rng.standard_normal(size=n, dtype=np.float32)
            a *= np.float32(0.02)
        if dt == TensorProto.FLOAT:
            return a.tobytes()
        if dt == TensorProto.FLOAT16:
            return a.astype("<f2").tobytes()
        if dt == TensorProto.DOUBLE:
            return a.astype("<f8").tobytes()
        # bfloat16: upper 16 bits of the float32 pattern
        return (a.view(np.uint32) >> 16).astype("<u2").tobytes()
    if dt in NP_DTYPE:
        return np.zeros(n, dtype=NP_DTYPE[dt]).tobytes()
    raise ValueError(f"cannot fill tensor {t.name!r} of data_type {dt}")


def fill_model(model, seed=0):
    """Fill all EXTERNAL tensors of ``model`` in place. Returns (count, bytes)."""
    rng = np.random.default_rng(seed)
    bn_vars = _bn_var_names(model.graph)
    count = nbytes = 0
    for _kind, t in iter_graph_tensors(model.graph):
        if t.data_location != TensorProto.EXTERNAL:
            continue
        data = _random_bytes(rng, t, positive=t.name in bn_vars)
        del t.external_data[:]
        t.data_location = TensorProto.DEFAULT
        t.raw_data = data
        count += 1
        nbytes += len(data)
    return count, nbytes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inp", metavar="IN")
    ap.add_argument("out", metavar="OUT")
    ap.add_argument("--external", action="store_true", help="write weights to '<OUT stem>.weights' beside OUT")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    m = onnx.load(args.inp, load_external_data=False)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    count, nbytes = fill_model(m, args.seed)
    if args.external:
        location = os.path.splitext(os.path.basename(args.out))[0] + ".weights"
        data_path = os.path.join(os.path.dirname(os.path.abspath(args.out)), location)
        if os.path.exists(data_path):
            os.remove(data_path)  # onnx appends to an existing file
        onnx.save_model(
            m,
            args.out,
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=location,
            size_threshold=1024,
            convert_attribute=True,
        )
        print(f"{args.out}: filled {count} tensors ({nbytes} bytes) -> {data_path}")
    else:
        if nbytes > 2**31 - 2**24:
            sys.exit("model too large to embed (>2 GiB protobuf limit); use --external")
        onnx.save_model(m, args.out)
        print(f"{args.out}: filled {count} tensors ({nbytes} bytes), file {os.path.getsize(args.out)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
