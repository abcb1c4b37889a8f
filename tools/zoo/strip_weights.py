#!/usr/bin/python3
"""Strip the weight data out of an ONNX model, leaving a small graph-only file.

Usage:  /usr/bin/python3 tools/zoo/strip_weights.py IN.onnx OUT.onnx

Every tensor that is
  * a graph initializer, or
  * the ``value`` attribute of a ``Constant`` node
(in the main graph and, recursively, in any subgraph) is stripped when it has
more than 1024 elements, or when it is a floating-point tensor (float32,
float16, bfloat16, float64) with more than 16 elements.

A stripped tensor keeps its name, dims and data_type; its payload fields
(raw_data, float_data, int32_data, int64_data, double_data, uint64_data,
string_data) are cleared and it is marked ``data_location = EXTERNAL`` with
external_data entries

    location = "<OUT stem>.weights"   (a file that is NOT written)
    offset   = "0"
    length   = <numel * itemsize>

Small integer tensors (shape constants, axes, ...) keep their data because
shape inference needs them.

Such a file loads with ``onnx.load(path, load_external_data=False)``.
``tools/zoo/fill_weights.py`` is the inverse (deterministic random data).

The module is also imported by export_zoo.py (``strip_model``).
"""

import argparse
import os
import sys
import tempfile

import onnx
from onnx import TensorProto

FLOAT_TYPES = {
    TensorProto.FLOAT,
    TensorProto.FLOAT16,
    TensorProto.BFLOAT16,
    TensorProto.DOUBLE,
}

# bytes per element (STRING is never stripped: it has no fixed size)
ITEMSIZE = {
    TensorProto.FLOAT: 4,
    TensorProto.UINT8: 1,
    TensorProto.INT8: 1,
    TensorProto.UINT16: 2,
    TensorProto.INT16: 2,
    TensorProto.INT32: 4,
    TensorProto.INT64: 8,
    TensorProto.BOOL: 1,
    TensorProto.FLOAT16: 2,
    TensorProto.DOUBLE: 8,
    TensorProto.UINT32: 4,
    TensorProto.UINT64: 8,
    TensorProto.COMPLEX64: 8,
    TensorProto.COMPLEX128: 16,
    TensorProto.BFLOAT16: 2,
}

MAX_ELEMS_ANY = 1024
MAX_ELEMS_FLOAT = 16

_PAYLOAD_FIELDS = (
    "raw_data",
    "float_data",
    "int32_data",
    "int64_data",
    "double_data",
    "uint64_data",
    "string_data",
)


def numel(t):
    n = 1
    for d in t.dims:
        n *= d
    return n


def should_strip(t):
    if t.data_type not in ITEMSIZE:
        return False
    if t.data_location == TensorProto.EXTERNAL:
        return False  # already external
    n = numel(t)
    return n > MAX_ELEMS_ANY or (t.data_type in FLOAT_TYPES and n > MAX_ELEMS_FLOAT)


def iter_graph_tensors(graph):
    """Yield (kind, tensor) for initializers and Constant values, recursively."""
    for t in graph.initializer:
        yield "initializer", t
    for node in graph.node:
        for attr in node.attribute:
            if node.op_type == "Constant" and attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR:
                yield "constant", attr.t
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from iter_graph_tensors(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from iter_graph_tensors(g)


def strip_tensor(t, location):
    nbytes = numel(t) * ITEMSIZE[t.data_type]
    for f in _PAYLOAD_FIELDS:
        t.ClearField(f)
    del t.external_data[:]
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(nbytes))):
        e = t.external_data.add()
        e.key = k
        e.value = v
    return nbytes


def strip_model(model, location):
    """Strip ``model`` (a ModelProto) in place. Returns a stats dict."""
    stats = {"stripped_tensors": 0, "stripped_bytes": 0, "stripped_elems": 0, "kept_tensors": 0}
    for _kind, t in iter_graph_tensors(model.graph):
        if should_strip(t):
            stats["stripped_bytes"] += strip_tensor(t, location)
            stats["stripped_tensors"] += 1
            stats["stripped_elems"] += numel(t)
        else:
            stats["kept_tensors"] += 1
    return stats


def weights_location_for(out_path):
    stem = os.path.splitext(os.path.basename(out_path))[0]
    return stem + ".weights"


def save_proto(model, path):
    # Write the bytes ourselves: onnx.save would try to (re)write external data.
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def check_stripped(path):
    """Load ``path`` without external data and run the checker on the proto.

    onnx.checker (1.12) insists that an external-data file exists, resolved
    relative to the *current directory* when given a proto.  The weights file
    is deliberately absent, so a failure naming it is expected; in that case
    the check is repeated from a temporary directory holding an empty
    placeholder of that name, which validates everything else.

    Returns (ok, message)."""
    m = onnx.load(path, load_external_data=False)
    try:
        onnx.checker.check_model(m)  # proto object, NOT the path
        return True, "ok"
    except Exception as e:  # noqa: BLE001
        first = str(e).strip().splitlines()[0]
    location = weights_location_for(path)
    if "doesn't exist or is not accessible" not in first or location not in first:
        return False, first
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        open(os.path.join(tmp, location), "wb").close()
        os.chdir(tmp)
        try:
            onnx.checker.check_model(m)
            return True, (
                "ok with an empty placeholder '%s' in the cwd (plain check fails only because "
                "the external data file is absent)" % location
            )
        except Exception as e:  # noqa: BLE001
            return False, str(e).strip().splitlines()[0]
        finally:
            os.chdir(cwd)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inp", metavar="IN")
    ap.add_argument("out", metavar="OUT")
    args = ap.parse_args(argv)
    m = onnx.load(args.inp, load_external_data=True)
    stats = strip_model(m, weights_location_for(args.out))
    save_proto(m, args.out)
    ok, msg = check_stripped(args.out)
    print(
        f"{args.out}: stripped {stats['stripped_tensors']} tensors "
        f"({stats['stripped_bytes']} bytes), kept {stats['kept_tensors']}, "
        f"file {os.path.getsize(args.out)} bytes, checker: {msg}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
