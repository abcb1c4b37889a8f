#!/usr/bin/python3
"""Export the perfc model zoo (weight-stripped ONNX files + manifest.json).

Usage:
    /usr/bin/python3 tools/zoo/export_zoo.py --out tests/data/zoo [--only NAME,...]
    /usr/bin/python3 tools/zoo/export_zoo.py --set heldout --out tools/bench/data/heldout

Needs Debian's python3-torch (1.13), python3-torchvision (0.14), python3-onnx
(1.12) and python3-numpy, i.e. run it with /usr/bin/python3.

For every model:
  1. build it (torch.manual_seed(0), weights=None), model.eval();
  2. perturb every floating parameter and buffer with small, distinct,
     deterministic noise (otherwise the exporter de-duplicates equal
     tensors, e.g. all-ones BN weights, into Identity nodes);
  3. count torch parameters, BN channels, and MACs with forward hooks
     (batch 1);
  4. torch.onnx.export with training=PRESERVE (BatchNormalization stays a
     separate node, not folded into Conv), do_constant_folding=True, dynamic
     "batch" axis (and "seq" for the transformers).  Opset: the lowest of
     13..17 at which the export succeeds and onnx shape inference resolves
     every node output (dynamic seq preferred at equal opset); if none does,
     the opset-13 export is kept.  (onnx 1.12 uses propagated shape values
     only in Reshape-14, so gpt2_small/bert_base end up at 14; vit_b_16 and
     swin_t resolve at no opset with onnx alone and stay at 13.)
  5. drop torch's value_info, strip weights (strip_weights.strip_model),
     write NAME.onnx;
  6. bind batch=1 (seq=traced) and check that onnx shape inference
     (strict_mode=False, data_prop=True) gives every node output a fully
     known shape; also resolve shapes by concrete folding (shape_fold.py)
     and count MACs of Conv/MatMul/Gemm from the resolved graph;
  7. write manifest.json (merged with existing entries when --only is used).
"""

import argparse
import io
import json
import math
import os
import sys
import time
import traceback
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from onnx import TensorProto, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from strip_weights import strip_model, save_proto, check_stripped, weights_location_for  # noqa: E402
from shape_fold import fold_shapes  # noqa: E402

OPSET = 13
FALLBACK_OPSETS = (14, 15, 16, 17)  # see step 4 of the module docstring
TRACE_BATCH = 2  # traced batch size; != 1 so that nothing specialises on batch 1

# torchvision 0.14's weight enums carry no FLOPs metadata ("_ops"/GFLOPS came
# in 0.15), so these are the figures from the torchvision documentation
# ("GFLOPS", which are really multiply-accumulates).
PUBLISHED_MACS = {
    "resnet18": 1.81e9,
    "resnet50": 4.09e9,
    "mobilenet_v2": 0.30e9,
    "vgg16": 15.47e9,
    "densenet121": 2.83e9,
    "efficientnet_b0": 0.39e9,
    "inception_v3": 5.71e9,
    "vit_b_16": 17.56e9,
    "convnext_tiny": 4.46e9,
    "swin_t": 4.49e9,
}


# --------------------------------------------------------------------------
# Hand-written transformers (no HF transformers available).
# --------------------------------------------------------------------------
class SelfAttention(nn.Module):
    """Multi-head self attention with separate or fused q/k/v projections.

    The two attention matmuls (Q @ K^T and P @ V) are counted by a forward
    hook on this module; the projections are nn.Linear children."""

    def __init__(self, hidden, heads, fused_qkv):
        super().__init__()
        self.hidden, self.heads, self.head_dim = hidden, heads, hidden // heads
        self.fused_qkv = fused_qkv
        if fused_qkv:  # GPT-2 style "c_attn"
            self.qkv = nn.Linear(hidden, 3 * hidden)
        else:  # BERT style
            self.query = nn.Linear(hidden, hidden)
            self.key = nn.Linear(hidden, hidden)
            self.value = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def _split(self, x):  # [b, t, d] -> [b, h, t, dh]
        b, t = x.shape[0], x.shape[1]
        return x.reshape(b, t, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, mask_bias):
        if self.fused_qkv:
            q, k, v = self.qkv(x).split(self.hidden, dim=2)
        else:
            q, k, v = self.query(x), self.key(x), self.value(x)
        q, k, v = self._split(q), self._split(k), self._split(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_dim))
        if mask_bias is not None:
            scores = scores + mask_bias
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v)  # [b, h, t, dh]
        b, t = x.shape[0], x.shape[1]
        ctx = ctx.transpose(1, 2).reshape(b, t, self.hidden)
        return self.out(ctx)


class GPT2Block(nn.Module):
    """Pre-LN block: x + attn(ln_1(x)); x + mlp(ln_2(x))."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-5)
        self.attn = SelfAttention(hidden, heads, fused_qkv=True)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-5)
        self.fc = nn.Linear(hidden, ffn)
        self.proj = nn.Linear(ffn, hidden)

    def forward(self, x, mask_bias):
        x = x + self.attn(self.ln_1(x), mask_bias)
        h = F.gelu(self.fc(self.ln_2(x)), approximate="tanh")  # GPT-2 "gelu_new"
        return x + self.proj(h)


class TiedLMHead(nn.Module):
    """logits = h @ wte^T, computed as (wte @ h^T)^T.

    Written this way so that the exported MatMul consumes the *same*
    initializer as the token-embedding Gather; h @ wte.t() would make the
    exporter constant-fold a second, transposed 38.6M-element copy of wte."""

    def forward(self, h, weight):
        return torch.matmul(weight, h.transpose(1, 2)).transpose(1, 2)


class GPT2Small(nn.Module):
    def __init__(self, vocab=50257, positions=1024, hidden=768, layers=12, heads=12, ffn=3072):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(positions, hidden)
        self.h = nn.ModuleList([GPT2Block(hidden, heads, ffn) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)
        self.lm_head = TiedLMHead()  # tied to wte: no parameters of its own
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, input_ids):
        # position ids 0..t-1 as cumsum(ones_like(ids)) - 1 rather than
        # arange(t): ONNX shape inference cannot size a Range whose limit
        # comes from Shape(), but it does propagate ConstantOfShape/CumSum.
        pos = torch.cumsum(torch.ones_like(input_ids), dim=1) - 1  # [b, t]
        x = self.wte(input_ids) + self.wpe(pos)
        # causal mask as an additive bias [b, 1, t, t]: finfo.min where key > query
        causal = (pos.unsqueeze(1) > pos.unsqueeze(2)).unsqueeze(1)
        mask_bias = causal.to(x.dtype) * torch.finfo(x.dtype).min
        for blk in self.h:
            x = blk(x, mask_bias)
        x = self.ln_f(x)
        return self.lm_head(x, self.wte.weight)


class BertLayer(nn.Module):
    """Post-LN block: LN(x + attn(x)); LN(x + ffn(x))."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attention = SelfAttention(hidden, heads, fused_qkv=False)
        self.attention_ln = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, ffn)
        self.output = nn.Linear(ffn, hidden)
        self.output_ln = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x):
        x = self.attention_ln(x + self.attention(x, None))
        h = F.gelu(self.intermediate(x))  # exact (erf) GELU, as in BERT
        return self.output_ln(x + self.output(h))


class BertBase(nn.Module):
    def __init__(self, vocab=30522, positions=512, type_vocab=2, hidden=768, layers=12, heads=12, ffn=3072):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(positions, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
        self.embeddings_ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(hidden, heads, ffn) for _ in range(layers)])
        self.pooler = nn.Linear(hidden, hidden)  # tanh(W h[:,0] + b)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, input_ids):
        # position ids 0..t-1 (see GPT2Small.forward for why not arange)
        pos = torch.cumsum(torch.ones_like(input_ids), dim=1) - 1
        # token_type_ids are implicitly all zero.  Computed from input_ids so
        # the exporter cannot constant-fold the [2,768] table into one row.
        token_type_ids = torch.zeros_like(input_ids)
        x = (
            self.word_embeddings(input_ids)
            + self.position_embeddings(pos)
            + self.token_type_embeddings(token_type_ids)
        )
        x = self.embeddings_ln(x)
        for layer in self.layers:
            x = layer(x)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


# --------------------------------------------------------------------------
# Model table
# --------------------------------------------------------------------------
def _tv(name, **kw):
    def build():
        return getattr(torchvision.models, name)(weights=None, **kw)

    return build


MODELS = {
    "resnet18": dict(build=_tv("resnet18"), kind="vision", hw=224),
    "resnet50": dict(build=_tv("resnet50"), kind="vision", hw=224),
    "mobilenet_v2": dict(build=_tv("mobilenet_v2"), kind="vision", hw=224),
    "vgg16": dict(build=_tv("vgg16"), kind="vision", hw=224),
    "densenet121": dict(build=_tv("densenet121"), kind="vision", hw=224),
    "efficientnet_b0": dict(build=_tv("efficientnet_b0"), kind="vision", hw=224),
    # aux_logits=False: the aux head is unused in eval, would not appear in
    # the ONNX graph, and would make the torch parameter count disagree.
    "inception_v3": dict(build=_tv("inception_v3", aux_logits=False, init_weights=True), kind="vision", hw=299),
    "vit_b_16": dict(build=_tv("vit_b_16"), kind="vision", hw=224),
    "convnext_tiny": dict(build=_tv("convnext_tiny"), kind="vision", hw=224),
    "swin_t": dict(build=_tv("swin_t"), kind="vision", hw=224),
    "gpt2_small": dict(build=GPT2Small, kind="lm", seq=1024, vocab=50257),
    "bert_base": dict(build=BertBase, kind="lm", seq=128, vocab=30522),
}

# Held out: never used while perfc's cost model was developed; they check
# the CPU accuracy benchmark on models it was not shaped on
# (tools/bench/ort_accuracy.py --set heldout). Written with --set heldout
# to tools/bench/data/heldout.
HELDOUT_MODELS = {
    "googlenet": dict(build=_tv("googlenet", aux_logits=False, init_weights=True), kind="vision", hw=224),
    "shufflenet_v2_x1_0": dict(build=_tv("shufflenet_v2_x1_0"), kind="vision", hw=224),
    "mnasnet1_0": dict(build=_tv("mnasnet1_0"), kind="vision", hw=224),
    "mobilenet_v3_large": dict(build=_tv("mobilenet_v3_large"), kind="vision", hw=224),
    "regnet_y_400mf": dict(build=_tv("regnet_y_400mf"), kind="vision", hw=224),
    "squeezenet1_0": dict(build=_tv("squeezenet1_0"), kind="vision", hw=224),
    "efficientnet_v2_s": dict(build=_tv("efficientnet_v2_s"), kind="vision", hw=224),
    "resnext50_32x4d": dict(build=_tv("resnext50_32x4d"), kind="vision", hw=224),
    "alexnet": dict(build=_tv("alexnet"), kind="vision", hw=224),
    "maxvit_t": dict(build=_tv("maxvit_t"), kind="vision", hw=224),
}
# The second held-out set, made when the first was spent (2026-12-05: its
# ORT profiles shaped the CPU convolution paths). Chosen before any of them
# was measured or predicted: other sizes of the zoo's and the first set's
# families plus a wide ResNet. Written with --set heldout2 to
# tools/bench/data/heldout2.
HELDOUT2_MODELS = {
    "densenet169": dict(build=_tv("densenet169"), kind="vision", hw=224),
    "wide_resnet50_2": dict(build=_tv("wide_resnet50_2"), kind="vision", hw=224),
    "resnet101": dict(build=_tv("resnet101"), kind="vision", hw=224),
    "mobilenet_v3_small": dict(build=_tv("mobilenet_v3_small"), kind="vision", hw=224),
    "regnet_x_800mf": dict(build=_tv("regnet_x_800mf"), kind="vision", hw=224),
    "shufflenet_v2_x0_5": dict(build=_tv("shufflenet_v2_x0_5"), kind="vision", hw=224),
    "efficientnet_b1": dict(build=_tv("efficientnet_b1"), kind="vision", hw=240),
    "mnasnet0_5": dict(build=_tv("mnasnet0_5"), kind="vision", hw=224),
    "vit_b_32": dict(build=_tv("vit_b_32"), kind="vision", hw=224),
    "convnext_small": dict(build=_tv("convnext_small"), kind="vision", hw=224),
}
SETS = {"zoo": MODELS, "heldout": HELDOUT_MODELS, "heldout2": HELDOUT2_MODELS}

NOTES = {
    "inception_v3": "built with aux_logits=False, transform_input=False; torchvision's published "
    "num_params (27161264) includes the AuxLogits head (3326696 params) that is unused in eval",
    "gpt2_small": "GPT-2 small: 12 layers, hidden 768, 12 heads, FFN 3072, vocab 50257, learned positions "
    "1024, pre-LN, GELU tanh approximation, causal mask as additive bias (finfo.min), fused qkv; "
    "LM head tied to wte (counted once in params, one initializer in ONNX); output logits [batch, seq, 50257]",
    "bert_base": "BERT base encoder: 12 layers, hidden 768, 12 heads, FFN 3072, vocab 30522, 512 positions, "
    "2 token types (token_type_ids implicitly all 0), post-LN, exact erf GELU, no attention mask input; "
    "includes the pooler (dense+tanh on token 0); no MLM head; outputs last_hidden_state and pooler_output",
    "swin_t": "relative-position-bias tables are constant-folded by the exporter into per-block "
    "[1,heads,49,49] tensors, so ONNX initializer elements exceed the torch parameter count",
}


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------
def perturb_(model, seed=0):
    """Add small distinct deterministic noise to every float param/buffer."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.is_floating_point():
                continue
            noise = torch.randn(t.shape, generator=g, dtype=t.dtype) * 1e-3
            if name.endswith("running_var"):
                noise = noise.abs()
            t.add_(noise)


def count_params(model):
    return sum(p.numel() for p in model.parameters())  # parameters() de-duplicates tied params


def bn_stats(model):
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    return len(bns), sum(m.num_features for m in bns)


def hook_macs(model, inputs):
    """MACs of Conv/Linear modules plus attention matmuls, via forward hooks."""
    from torchvision.models.swin_transformer import ShiftedWindowAttention

    acc = {"conv": 0, "linear": 0, "attention_matmul": 0, "lm_head_matmul": 0}
    handles = []

    def conv_hook(m, inp, out):
        acc["conv"] += out.numel() * (m.in_channels // m.groups) * int(np.prod(m.kernel_size))

    def linear_hook(m, inp, out):
        acc["linear"] += out.numel() * m.in_features

    def mha_hook(m, inp, out):
        # torch.nn.MultiheadAttention (batch_first, kdim == vdim == embed_dim);
        # in_proj/out_proj are applied functionally, so their Linear hooks
        # would never fire: count them here.
        # torchvision calls it with keyword arguments, which torch 1.13 forward
        # hooks do not see, so take the sizes from the output [n, L, e] and
        # assume self-attention (key length S == L), as in ViT.
        assert m.batch_first and m._qkv_same_embed_dim
        n, L, e = out[0].shape
        s = L
        acc["linear"] += n * L * e * e + 2 * n * s * e * e + n * L * e * e  # q, k+v, out proj
        acc["attention_matmul"] += 2 * n * L * s * e  # QK^T and PV

    def swin_hook(m, inp, out):
        # torchvision ShiftedWindowAttention: qkv/proj applied functionally on
        # the zero-padded window partition.
        x = inp[0]
        b, h, w, c = x.shape
        wh, ww = m.window_size
        ph = h + (wh - h % wh) % wh
        pw = w + (ww - w % ww) % ww
        tokens = b * ph * pw
        n = wh * ww
        acc["linear"] += tokens * c * 3 * c + tokens * c * c
        acc["attention_matmul"] += 2 * tokens * n * c

    def selfattn_hook(m, inp, out):
        x = inp[0]
        b, t, d = x.shape
        acc["attention_matmul"] += 2 * b * t * t * d

    def lmhead_hook(m, inp, out):
        h, w = inp
        acc["lm_head_matmul"] += h.shape[0] * h.shape[1] * h.shape[2] * w.shape[0]

    skip = set()
    for m in model.modules():
        if isinstance(m, (nn.MultiheadAttention, ShiftedWindowAttention)):
            skip.update(id(c) for c in m.modules() if c is not m)
    for m in model.modules():
        if id(m) in skip:
            continue
        if isinstance(m, nn.MultiheadAttention):
            handles.append(m.register_forward_hook(mha_hook))
        elif isinstance(m, ShiftedWindowAttention):
            handles.append(m.register_forward_hook(swin_hook))
        elif isinstance(m, SelfAttention):
            handles.append(m.register_forward_hook(selfattn_hook))
        elif isinstance(m, TiedLMHead):
            handles.append(m.register_forward_hook(lmhead_hook))
        elif isinstance(m, nn.Conv2d):
            handles.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, nn.Linear):
            handles.append(m.register_forward_hook(linear_hook))
        elif isinstance(m, (nn.Conv1d, nn.Conv3d, nn.ConvTranspose2d, nn.Bilinear)):
            raise RuntimeError(f"unhandled module type {type(m).__name__}")
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        for hd in handles:
            hd.remove()
    acc["total"] = sum(acc.values())
    return acc


def dims_of(vi):
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim]


def bind_dims(model, bindings):
    """Return a copy with symbolic input/output dims replaced by values."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    for vi in list(m.graph.input) + list(m.graph.output):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in bindings:
                d.dim_value = bindings[d.dim_param]
    return m


def infer(model):
    return shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)


def shape_map(model):
    sm = {}
    for vi in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        sm[vi.name] = dims_of(vi)
    for t in model.graph.initializer:
        sm[t.name] = list(t.dims)
    for n in model.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    sm[n.output[0]] = list(a.t.dims)
    return sm


def unresolved_outputs(inferred):
    """Node outputs whose shape is not fully known (all dims with dim_value)."""
    sm = shape_map(inferred)

    def known(v):
        s = sm.get(v)
        return s is not None and all(isinstance(d, int) for d in s)

    bad = []
    for n in inferred.graph.node:
        for o in n.output:
            if o and not known(o):
                # root: every input is fully known, so this node itself is where inference stops
                root = all(known(i) for i in n.input if i)
                bad.append({"value": o, "op": n.op_type, "shape": sm.get(o), "root": root})
    return bad


def graph_macs(inferred):
    """MACs of Conv / Gemm / MatMul from the inferred graph (batch 1).

    Conv: prod(Y) * prod(W.dims[1:]);  MatMul: prod(Y) * A.dims[-1];
    Gemm: prod(Y) * K.  Nodes with unknown shapes are counted in "unknown"."""
    sm = shape_map(inferred)
    out = {"Conv": 0, "Gemm": 0, "MatMul": 0}
    unknown = 0

    def known(*xs):
        return all(x is not None and all(isinstance(d, int) for d in x) for x in xs)

    def prod(x):
        return int(np.prod(x, dtype=np.int64)) if x else 1

    for n in inferred.graph.node:
        if n.op_type not in out:
            continue
        y, a, b = sm.get(n.output[0]), sm.get(n.input[0]), sm.get(n.input[1])
        if not known(y, a, b):
            unknown += 1
            continue
        if n.op_type == "Conv":
            out["Conv"] += prod(y) * prod(b[1:])
        elif n.op_type == "MatMul":
            out["MatMul"] += prod(y) * a[-1]
        else:
            trans_a = next((at.i for at in n.attribute if at.name == "transA"), 0)
            out["Gemm"] += prod(y) * (a[0] if trans_a else a[1])
    out["total"] = sum(out.values())
    out["unknown_nodes"] = unknown
    return out


def initializer_stats(model):
    g = model.graph
    bn_stat_names = set()
    for n in g.node:
        if n.op_type == "BatchNormalization":
            bn_stat_names.update(n.input[3:5])
    float_types = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    tot = bn = 0
    for t in g.initializer:
        if t.data_type in float_types:
            n = int(np.prod(t.dims, dtype=np.int64))
            tot += n
            if t.name in bn_stat_names:
                bn += n
    return {
        "initializers": len(g.initializer),
        "float_initializer_elems": tot,
        "bn_running_stat_elems": bn,
        "float_initializer_elems_excl_bn_stats": tot - bn,
    }


def op_counts(model):
    c = {}
    for n in model.graph.node:
        c[n.op_type] = c.get(n.op_type, 0) + 1
    return dict(sorted(c.items()))


def export_onnx(model, args, input_names, output_names, dynamic_axes, opset):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            args,
            buf,
            opset_version=opset,
            training=torch.onnx.TrainingMode.PRESERVE,
            do_constant_folding=True,
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
        )
    return onnx.load_from_string(buf.getvalue())


# --------------------------------------------------------------------------
# Per-model driver
# --------------------------------------------------------------------------
def export_one(name, out_dir, log, models=MODELS):
    spec = models[name]
    t0 = time.time()
    torch.manual_seed(0)
    model = spec["build"]()
    model.eval()
    perturb_(model, seed=0)

    params = count_params(model)
    bn_layers, bn_channels = bn_stats(model)

    if spec["kind"] == "vision":
        hw = spec["hw"]
        macs_in = (torch.randn(1, 3, hw, hw),)
        trace_in = (torch.randn(TRACE_BATCH, 3, hw, hw),)
        input_names, output_names = ["input"], ["logits"]
        traced = {"batch": TRACE_BATCH}
        attempts = [({"input": {0: "batch"}, "logits": {0: "batch"}}, {"batch": 1}, False)]
        in_shapes = lambda dyn_seq: [  # noqa: E731
            {"name": "input", "dtype": "float32", "shape": ["batch", 3, hw, hw]}
        ]
    else:
        seq, vocab = spec["seq"], spec["vocab"]
        g = torch.Generator().manual_seed(0)
        macs_in = (torch.randint(0, vocab, (1, seq), generator=g),)
        trace_in = (torch.randint(0, vocab, (TRACE_BATCH, seq), generator=g),)
        input_names = ["input_ids"]
        output_names = ["logits"] if name == "gpt2_small" else ["last_hidden_state", "pooler_output"]
        traced = {"batch": TRACE_BATCH, "seq": seq}

        def axes(dyn_seq):
            d = {"input_ids": {0: "batch", 1: "seq"} if dyn_seq else {0: "batch"}}
            for o in output_names:
                d[o] = ({0: "batch", 1: "seq"} if dyn_seq else {0: "batch"}) if o != "pooler_output" else {0: "batch"}
            return d

        attempts = [
            (axes(True), {"batch": 1, "seq": seq}, True),
            (axes(False), {"batch": 1}, False),
        ]
        in_shapes = lambda dyn_seq: [  # noqa: E731
            {"name": "input_ids", "dtype": "int64", "shape": ["batch", "seq" if dyn_seq else seq]}
        ]

    hm = hook_macs(model, macs_in)
    log(f"[{name}] params={params} bn_channels={bn_channels} hook_macs={hm['total']:.4e}")

    fname = name + ".onnx"
    path = os.path.join(out_dir, fname)
    # Selection rule: the lowest opset >= 13 at which the export succeeds and
    # onnx shape inference (batch bound to 1, seq to the traced value) gives
    # every node output a fully known shape; at a given opset a dynamic "seq"
    # is preferred over a fixed one.  If nothing resolves fully, the candidate
    # with the fewest unresolved outputs (earliest on ties) is kept.
    result = None
    fallback = None
    tried = []
    for opset in (OPSET,) + FALLBACK_OPSETS:
        for dynamic_axes, bindings, dyn_seq in attempts:
            try:
                proto = export_onnx(model, trace_in, input_names, output_names, dynamic_axes, opset)
            except Exception as e:  # noqa: BLE001
                msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                tried.append({"opset": opset, "dynamic_seq": dyn_seq, "export_error": msg[:500]})
                log(f"[{name}] export failed at opset {opset} (dynamic_seq={dyn_seq}): {msg[:300]}")
                continue
            del proto.graph.value_info[:]  # torch's own annotations; perfc must infer shapes itself
            inits = initializer_stats(proto)  # (same numbers before and after stripping)
            strip_stats = strip_model(proto, weights_location_for(path))
            inferred = infer(bind_dims(proto, bindings))
            bad = unresolved_outputs(inferred)
            cand = dict(
                proto=proto,
                opset=opset,
                dyn_seq=dyn_seq,
                bindings=bindings,
                bad=bad,
                inits=inits,
                strip=strip_stats,
                gm=graph_macs(inferred),
            )
            if not bad:
                result = cand
                break
            roots = [b for b in bad if b["root"]]
            root_ops = sorted({b["op"] for b in roots})
            log(
                f"[{name}] opset {opset} dynamic_seq={dyn_seq}: {len(bad)} node outputs not fully "
                f"inferred; {len(roots)} root causes (ops {root_ops}), e.g. {roots[:2]}"
            )
            tried.append(
                {"opset": opset, "dynamic_seq": dyn_seq, "unresolved_outputs": len(bad),
                 "root_unresolved": len(roots), "root_ops": root_ops, "root_examples": roots[:3]}
            )
            if fallback is None:  # nothing resolves: keep the first (lowest-opset) successful export
                fallback = cand
        if result is not None:
            break
    if result is None:
        if fallback is None:
            raise RuntimeError(f"{name}: all export attempts failed: {tried}")
        result = fallback
        log(f"[{name}] WARNING: no export resolves all shapes; keeping opset {result['opset']}")
        tried = [t for t in tried if not (t.get("opset") == result["opset"] and t.get("dynamic_seq") == result["dyn_seq"]
                                          and "unresolved_outputs" in t)]

    proto = result["proto"]
    save_proto(proto, path)
    ok, chk = check_stripped(path)
    reloaded = onnx.load(path, load_external_data=False)
    assert len(reloaded.graph.node) == len(proto.graph.node)

    # Concrete shape folding (shape_fold.py): resolves what onnx's limited
    # data propagation cannot (ViT, Swin) and gives the graph-side MAC count.
    folded, fstats = fold_shapes(bind_dims(proto, result["bindings"]))
    fbad = unresolved_outputs(folded)
    gm = graph_macs(folded)
    bad = result["bad"]
    roots = [b for b in bad if b["root"]]
    shape_info = {
        "onnx_unresolved_outputs": len(bad),
        "onnx_root_unresolved_ops": sorted({b["op"] for b in roots}),
        "onnx_root_unresolved": len(roots),
        "onnx_root_examples": [{k: b[k] for k in ("value", "op", "shape")} for b in roots[:8]],
        "fold_unresolved_outputs": len(fbad),
        "fold_unresolved_examples": [{k: b[k] for k in ("value", "op", "shape")} for b in fbad[:8]],
        "folded_nodes": sum(fstats["folded_ops"].values()),
        "folded_ops": fstats["folded_ops"],
        "nodes_after_fold": len(folded.graph.node),
    }

    entry = {
        "file": fname,
        "weights_location": weights_location_for(path),
        "opset": result["opset"],
        "inputs": in_shapes(result["dyn_seq"]),
        "outputs": [
            {"name": vi.name, "shape": dims_of(vi)} for vi in proto.graph.output
        ],
        "traced": traced,
        "bound_for_checks": result["bindings"],
        "dynamic_seq": result["dyn_seq"] if spec["kind"] == "lm" else None,
        "num_nodes": len(proto.graph.node),
        "op_counts": op_counts(proto),
        "params": params,
        "torchvision_num_params": (
            torchvision.models.get_model_weights(name).DEFAULT.meta["num_params"] if spec["kind"] == "vision" else None
        ),
        "bn_layers": bn_layers,
        "bn_channels": bn_channels,
        "published_macs": PUBLISHED_MACS.get(name),
        "hook_macs": hm["total"],
        "hook_macs_breakdown": {k: v for k, v in hm.items() if k != "total"},
        "graph_macs_py": gm["total"] if not gm["unknown_nodes"] else None,
        "graph_macs_py_breakdown": {k: v for k, v in gm.items() if k not in ("total", "unknown_nodes")},
        "onnx_initializers": result["inits"],
        "stripped": result["strip"],
        "file_bytes": os.path.getsize(path),
        "checker": chk,
        "shape_inference": shape_info,
        "rejected_attempts": tried,
        "notes": NOTES.get(name, ""),
    }
    log(
        f"[{name}] opset={entry['opset']} nodes={entry['num_nodes']} file={entry['file_bytes']}B "
        f"dyn_seq={entry['dynamic_seq']} onnx_unresolved={len(bad)} after_fold={len(fbad)} "
        f"graph_macs={gm['total']} (unknown nodes {gm['unknown_nodes']}) hook_macs={hm['total']} "
        f"init_excl_bn={result['inits']['float_initializer_elems_excl_bn_stats']} "
        f"checker={chk} ({time.time() - t0:.1f}s)"
    )
    return entry


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output directory, e.g. tests/data/zoo")
    ap.add_argument("--set", choices=sorted(SETS), default="zoo",
                    help="zoo (tests/data/zoo) or heldout (tools/bench/data/heldout)")
    ap.add_argument("--only", default="", help="comma-separated subset of the set's models")
    args = ap.parse_args(argv)

    models = SETS[args.set]
    names = [n for n in args.only.split(",") if n] or list(models)
    for n in names:
        if n not in models:
            sys.exit(f"unknown model {n!r}; choose from {', '.join(models)}")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    def log(msg):
        print(msg, flush=True)

    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = {"models": {}}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)

    failed = []
    for n in names:
        try:
            manifest["models"][n] = export_one(n, args.out, log, models)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            failed.append(n)

    manifest["generator"] = {
        "command": "/usr/bin/python3 tools/zoo/export_zoo.py --out tests/data/zoo"
        if args.set == "zoo" else
        "/usr/bin/python3 tools/zoo/export_zoo.py --set heldout --out tools/bench/data/heldout",
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "onnx": onnx.__version__,
        "numpy": np.__version__,
        "conventions": {
            "params": "sum(p.numel() for p in model.parameters()) of the exported torch module "
            "(tied parameters counted once); BN running_mean/running_var are buffers, not params",
            "bn_channels": "sum of num_features over BatchNorm layers (each has 4 per-channel tensors in ONNX: "
            "scale, B (params) and mean, var (running stats))",
            "hook_macs": "multiply-accumulates at batch 1 (seq = traced seq) of Conv2d and Linear modules "
            "(incl. the functional in/out projections of MultiheadAttention and Swin window attention), "
            "attention matmuls Q@K^T and P@V, and the tied GPT-2 LM-head matmul; no elementwise ops",
            "graph_macs_py": "same quantity computed from the stripped ONNX graph (Conv: prod(Y)*prod(W.dims[1:]), "
            "MatMul: prod(Y)*A.dims[-1], Gemm: prod(Y)*K) after binding batch=1 (and seq) and resolving shapes "
            "with onnx shape inference plus concrete folding of shape subgraphs (tools/zoo/shape_fold.py)",
            "shape_inference": "onnx_*: onnx.shape_inference.infer_shapes(strict_mode=False, data_prop=True) alone, "
            "with batch=1 (seq=traced) bound; a 'root' is an unresolved node output whose inputs are all known. "
            "fold_*: after shape_fold.fold_shapes",
            "published_macs": "torchvision docs 'GFLOPS' (really MACs); torchvision 0.14 has no FLOPs metadata",
            "stripping": "initializers/Constant values with >1024 elements, or float with >16 elements, "
            "have their data removed and point at '<stem>.weights' (absent) as external data",
        },
    }
    manifest["models"] = dict(sorted(manifest["models"].items(), key=lambda kv: list(models).index(kv[0])))
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    if failed:
        log(f"FAILED: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
