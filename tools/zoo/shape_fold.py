#!/usr/bin/python3
"""Concrete shape folding for weight-stripped ONNX models (diagnostic).

onnx 1.12's shape inference only propagates *values* of shape tensors through
a few ops (Shape, Gather, Concat, Slice, Unsqueeze, Add/Sub/Mul, Cast, ...)
and only Reshape-14 (not Reshape-5/13) consumes them.  Exporters emit shape
arithmetic with Div, Mod, Equal/Where, Range, ConstantOfShape, ScatterND, ...
(torchvision's ViT and Swin do), which leaves many shapes unknown even though
everything is computable once the symbolic input dims are bound.

``fold_shapes`` repeats until nothing changes:
  * run onnx shape inference (data_prop=True);
  * evaluate with numpy every node whose inputs all have known *values*
    (initializers/Constants that still carry data, or earlier folded results;
    Shape/Size only need the input's shape), if the result is small;
  * replace folded nodes by initializers holding their values.
This is what a value-propagating shape engine (e.g. perfc's) has to do to
resolve such graphs.  Compute nodes (Conv/MatMul/... on activations or
stripped weights) are never folded.

Usage: /usr/bin/python3 tools/zoo/shape_fold.py MODEL.onnx [batch=1 seq=128 ...]
"""

import sys

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference, helper, TensorProto

MAX_FOLD_ELEMS = 1 << 21


def _attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _onnx_div(a, b):
    if np.issubdtype(a.dtype, np.integer):
        q = np.abs(a) // np.abs(b)
        return (np.sign(a) * np.sign(b) * q).astype(a.dtype)  # truncation, like C
    return (a / b).astype(a.dtype)


def _reshape(x, shape, allowzero=0):
    shape = [int(s) for s in shape]
    if not allowzero:
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def _slice(x, starts, ends, axes=None, steps=None):
    axes = list(range(len(starts))) if axes is None else [int(a) % x.ndim for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    sl = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        sl[a] = slice(int(s), int(e), int(st))
    return x[tuple(sl)]


def _scatter_nd(data, indices, updates):
    out = data.copy()
    idx = indices.reshape(-1, indices.shape[-1])
    upd = updates.reshape((idx.shape[0],) + data.shape[indices.shape[-1]:])
    for i in range(idx.shape[0]):
        out[tuple(idx[i])] = upd[i]
    return out


def _eval(node, ins, in_shapes):
    op = node.op_type
    x = ins[0] if ins else None
    if op == "Shape":
        s = np.array(in_shapes[0], dtype=np.int64)
        start, end = _attr(node, "start", 0), _attr(node, "end", None)
        return [s[start:end]]
    if op == "Size":
        return [np.array(int(np.prod(in_shapes[0])), dtype=np.int64)]
    if op == "Identity":
        return [x]
    if op == "Gather":
        return [np.take(x, ins[1], axis=_attr(node, "axis", 0))]
    if op == "Unsqueeze":
        axes = ins[1] if len(ins) > 1 else _attr(node, "axes")
        r = x.ndim + len(axes)
        out = x
        for a in sorted(int(a) % r for a in axes):
            out = np.expand_dims(out, a)
        return [out]
    if op == "Squeeze":
        axes = ins[1] if len(ins) > 1 else _attr(node, "axes")
        if axes is None:
            return [np.squeeze(x)]
        return [np.squeeze(x, axis=tuple(int(a) % x.ndim for a in axes))]
    if op == "Concat":
        return [np.concatenate([np.atleast_1d(i) if i.ndim == 0 else i for i in ins], axis=_attr(node, "axis"))]
    if op == "Slice":
        return [_slice(x, *ins[1:])]
    if op == "Cast":
        to = _attr(node, "to")
        return [x.astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[to])]
    if op in ("Add", "Sub", "Mul", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or",
              "Max", "Min", "Pow"):
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Equal": np.equal, "Less": np.less,
             "Greater": np.greater, "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal,
             "And": np.logical_and, "Or": np.logical_or, "Max": np.maximum, "Min": np.minimum, "Pow": np.power}[op]
        r = f(ins[0], ins[1])
        if op in ("Add", "Sub", "Mul", "Max", "Min", "Pow"):
            r = r.astype(ins[0].dtype)
        return [r]
    if op == "Div":
        return [_onnx_div(ins[0], ins[1])]
    if op == "Mod":
        return [np.fmod(ins[0], ins[1]) if _attr(node, "fmod", 0) else np.mod(ins[0], ins[1])]
    if op == "Not":
        return [np.logical_not(x)]
    if op == "Neg":
        return [-x]
    if op in ("Floor", "Ceil", "Abs", "Sqrt", "Exp", "Log"):
        return [getattr(np, op.lower())(x).astype(x.dtype)]
    if op == "Where":
        return [np.where(ins[0], ins[1], ins[2])]
    if op == "Range":
        return [np.arange(ins[0], ins[1], ins[2]).astype(ins[0].dtype)]
    if op == "ConstantOfShape":
        v = _attr(node, "value")
        v = numpy_helper.to_array(v) if v is not None else np.zeros(1, np.float32)
        return [np.full([int(d) for d in x], v.reshape(-1)[0], dtype=v.dtype)]
    if op == "Expand":
        shape = np.broadcast_shapes(x.shape, tuple(int(d) for d in ins[1]))
        return [np.broadcast_to(x, shape).copy()]
    if op == "Tile":
        return [np.tile(x, [int(r) for r in ins[1]])]
    if op == "Reshape":
        return [_reshape(x, ins[1], _attr(node, "allowzero", 0))]
    if op == "Transpose":
        return [np.transpose(x, _attr(node, "perm"))]
    if op == "ScatterND":
        return [_scatter_nd(ins[0], ins[1], ins[2])]
    if op == "Flatten":
        a = _attr(node, "axis", 1) % max(x.ndim, 1)
        return [x.reshape(int(np.prod(x.shape[:a])), -1)]
    if op == "ReduceProd":
        return [np.prod(x, axis=None if _attr(node, "axes") is None else tuple(_attr(node, "axes")),
                        keepdims=bool(_attr(node, "keepdims", 1)))]
    return None


def _tensor_value(t):
    if t.data_location == TensorProto.EXTERNAL:
        return None
    return numpy_helper.to_array(t)


def _shapes(model):
    sm = {}
    for vi in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        tt = vi.type.tensor_type
        if tt.HasField("shape"):
            sm[vi.name] = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    for t in model.graph.initializer:
        sm[t.name] = list(t.dims)
    return sm


def fold_shapes(model, max_iters=50):
    """Fold computable subgraphs of ``model`` (inputs already bound).

    Returns (folded_inferred_model, stats) where stats has
    ``folded_ops`` (op type -> count), ``unsupported_ops`` (op types that
    had known inputs but no evaluator) and ``iterations``."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    folded_ops, unsupported = {}, {}
    it = 0
    for it in range(1, max_iters + 1):
        m = shape_inference.infer_shapes(m, check_type=False, strict_mode=False, data_prop=True)
        sm = _shapes(m)
        values = {}
        for t in m.graph.initializer:
            v = _tensor_value(t)
            if v is not None:
                values[t.name] = v
        keep, new_inits, changed = [], [], False
        for node in m.graph.node:
            if node.op_type == "Constant":
                a = node.attribute[0]
                if a.name == "value" and a.t.data_location != TensorProto.EXTERNAL:
                    values[node.output[0]] = numpy_helper.to_array(a.t)
                keep.append(node)
                continue
            ins = [i for i in node.input]
            if node.op_type in ("Shape", "Size"):
                s = sm.get(ins[0])
                ok = s is not None and all(d is not None for d in s)
                args, in_shapes = [], [s]
            else:
                ok = all((i == "") or (i in values) for i in ins) and len(ins) > 0
                args = [values[i] for i in ins if i] if ok else []
                in_shapes = []
            res = None
            if ok:
                try:
                    res = _eval(node, args, in_shapes)
                except Exception:  # noqa: BLE001
                    res = None
                if res is None:
                    unsupported[node.op_type] = unsupported.get(node.op_type, 0) + 1
            if res is not None and all(np.asarray(r).size <= MAX_FOLD_ELEMS for r in res):
                for name, r in zip(node.output, res):
                    r = np.asarray(r)
                    values[name] = r
                    new_inits.append(numpy_helper.from_array(r, name))
                folded_ops[node.op_type] = folded_ops.get(node.op_type, 0) + 1
                changed = True
            else:
                keep.append(node)
        if not changed:
            break
        del m.graph.node[:]
        m.graph.node.extend(keep)
        m.graph.initializer.extend(new_inits)
        del m.graph.value_info[:]
        # Constant nodes that nothing consumes any more are dropped at the end
    used = {i for n in m.graph.node for i in n.input} | {o.name for o in m.graph.output}
    live = [n for n in m.graph.node if n.op_type != "Constant" or n.output[0] in used]
    del m.graph.node[:]
    m.graph.node.extend(live)
    m = shape_inference.infer_shapes(m, check_type=False, strict_mode=False, data_prop=True)
    return m, {"folded_ops": dict(sorted(folded_ops.items())), "unsupported_ops": unsupported, "iterations": it}


def main(argv):
    import export_zoo as ez  # noqa: E402  (same directory)

    path, binds = argv[0], dict(kv.split("=") for kv in argv[1:])
    m = onnx.load(path, load_external_data=False)
    m = ez.bind_dims(m, {k: int(v) for k, v in binds.items()})
    plain = ez.unresolved_outputs(ez.infer(m))
    folded, stats = fold_shapes(m)
    bad = ez.unresolved_outputs(folded)
    print(f"onnx-only unresolved: {len(plain)}; after folding: {len(bad)} {bad[:5]}")
    print(f"nodes {len(m.graph.node)} -> {len(folded.graph.node)}; {stats}")
    print("graph MACs:", ez.graph_macs(folded))


if __name__ == "__main__":
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
    main(sys.argv[1:])
