"""Checks what a `perfc zoo` model computes, not only its shapes.

Fills the weights of a small generated model with random values, runs it
through a small numpy ONNX interpreter (the ops the generator emits), and
compares the outputs with an independent numpy reference of the
architecture: GPT-2/Megatron GPT, BERT, and Llama as Hugging Face writes it
(rotate_half rotary, repeat_kv for grouped-query attention; GPT with
--kv-heads repeats its K key/value heads the same way).

  perfc zoo llama --layers 2 --hidden 128 --heads 8 --kv-heads 2 --seq 16 \
      --vocab 97 -o /tmp/l.onnx
  /usr/bin/python3 tools/modelgen/check_numerics.py /tmp/l.onnx llama 2 128 8 2 97

A model written with --past P (one decoding step after P cached tokens) is
checked against the reference run on all P+S tokens: the step is fed the
reference's keys and values of the first P as past.{i}.key/value and must
give its logits of the last S and its keys and values of all P+S.

Arguments: FILE FAMILY LAYERS HIDDEN HEADS KV_HEADS VOCAB. Needs numpy and
onnx (Debian's python3-numpy, python3-onnx); fp32 models only."""
import math, sys
import numpy as np
import onnx
from onnx import numpy_helper

def load(path):
    return onnx.load(path, load_external_data=False)

def fill(m, seed=0):
    rng = np.random.default_rng(seed)
    W = {}
    for t in m.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            dims = tuple(t.dims)
            a = rng.normal(0, 0.02 if len(dims) > 1 else 0.1, dims)
            if t.name.endswith('ln1.weight') or t.name.endswith('ln2.weight') or 'ln.weight' in t.name or 'final_norm.weight' in t.name:
                a = 1 + a
            W[t.name] = a.astype(np.float32)
        else:
            W[t.name] = numpy_helper.to_array(t)
    return W

def attrs(n):
    d = {}
    for a in n.attribute:
        d[a.name] = onnx.helper.get_attribute_value(a)
    return d

erf = np.vectorize(math.erf)
def run(m, W, ids, feeds={}):
    env = dict(W); env.update(feeds); env['input_ids'] = ids
    for n in m.graph.node:
        i = [env[x] if x else None for x in n.input]; a = attrs(n); op = n.op_type
        if op == 'Range': o = np.arange(i[0], i[1], i[2]).astype(i[0].dtype)
        elif op == 'Gather':
            o = np.take(i[0], i[1], axis=a.get('axis', 0))
        elif op == 'Add': o = i[0] + i[1]
        elif op == 'Sub': o = i[0] - i[1]
        elif op == 'Mul': o = i[0] * i[1]
        elif op == 'Div': o = i[0] / i[1]
        elif op == 'Pow': o = np.power(i[0], i[1])
        elif op == 'Shape': o = np.array(i[0].shape, np.int64)
        elif op == 'ConstantOfShape':
            v = numpy_helper.to_array(a['value']); o = np.full(tuple(i[0]), v[0], v.dtype)
        elif op == 'LayerNormalization':
            x = i[0]; mu = x.mean(-1, keepdims=True); var = ((x - mu) ** 2).mean(-1, keepdims=True)
            o = (x - mu) / np.sqrt(var + a['epsilon']) * i[1] + i[2]
        elif op == 'Unsqueeze': o = np.expand_dims(i[0], tuple(i[1]))
        elif op == 'Greater': o = i[0] > i[1]
        elif op == 'Where': o = np.where(i[0], i[1], i[2])
        elif op == 'Cast': o = i[0].astype({1: np.float32, 10: np.float16, 7: np.int64}[a['to']])
        elif op == 'Exp': o = np.exp(i[0])
        elif op == 'Cos': o = np.cos(i[0])
        elif op == 'Sin': o = np.sin(i[0])
        elif op == 'Concat': o = np.concatenate(i, axis=a['axis'])
        elif op == 'MatMul': o = np.matmul(i[0], i[1])
        elif op == 'Split': o = np.split(i[0], np.cumsum(i[1])[:-1], axis=a['axis'])
        elif op == 'Reshape':
            o = i[0].reshape([i[0].shape[k] if v == 0 else v for k, v in enumerate(i[1])])
        elif op == 'Transpose': o = np.transpose(i[0], a['perm'])
        elif op == 'Softmax':
            x = i[0] - i[0].max(-1, keepdims=True); e = np.exp(x); o = e / e.sum(-1, keepdims=True)
        elif op == 'Erf': o = erf(i[0]).astype(i[0].dtype)
        elif op == 'Tanh': o = np.tanh(i[0])
        elif op == 'ReduceMean': o = i[0].mean(axis=tuple(a['axes']), keepdims=bool(a.get('keepdims', 1)))
        elif op == 'Sqrt': o = np.sqrt(i[0])
        elif op == 'Reciprocal': o = 1 / i[0]
        elif op == 'Slice':
            sl = [slice(None)] * i[0].ndim
            for s, e, ax in zip(i[1], i[2], i[3]): sl[ax] = slice(s, e)
            o = i[0][tuple(sl)]
        elif op == 'Neg': o = -i[0]
        elif op == 'Expand': o = i[0] * np.ones(tuple(i[1]), i[0].dtype)
        elif op == 'Sigmoid': o = 1 / (1 + np.exp(-i[0]))
        elif op == 'Gemm': o = i[0] @ i[1] + i[2]
        else: raise SystemExit('op ' + op)
        if not isinstance(o, list): o = [o]
        for name, v in zip(n.output, o): env[name] = np.asarray(v)
    return [env[o.name] for o in m.graph.output]

def ln(x, w, b, eps): mu = x.mean(-1, keepdims=True); v = ((x-mu)**2).mean(-1, keepdims=True); return (x-mu)/np.sqrt(v+eps)*w+b
def softmax(x): e = np.exp(x - x.max(-1, keepdims=True)); return e / e.sum(-1, keepdims=True)

def ref(fam, W, ids, L, H, A, K, cache=None):
    """The outputs on ids; appends each layer's k and v [B, K, S, d] (after
    rotary, before repeat_kv) to cache if given."""
    if cache is None: cache = []
    W = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in W.items()}
    B, S = ids.shape; d = H // A
    def heads(x, n): return x.reshape(B, S, n, d).transpose(0, 2, 1, 3)
    causal = np.triu(np.ones((S, S), bool), 1)
    if fam == 'llama':
        x = W['embed.tok.weight'][ids]
        inv = 1.0 / (10000 ** (np.arange(0, d, 2) / d)); fr = np.outer(np.arange(S), inv)
        emb = np.concatenate([fr, fr], -1); cos, sin = np.cos(emb), np.sin(emb)
        def rot(x): return np.concatenate([-x[..., d//2:], x[..., :d//2]], -1)
        def rms(x, w): return x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-5) * w
        for l in range(L):
            p = f'layers.{l}.'
            h = rms(x, W[p+'ln1.weight'])
            q = heads(h @ W[p+'attn.q.weight'], A); k = heads(h @ W[p+'attn.k.weight'], K); v = heads(h @ W[p+'attn.v.weight'], K)
            q = q*cos + rot(q)*sin; k = k*cos + rot(k)*sin
            cache += [k, v]
            k = np.repeat(k, A//K, axis=1); v = np.repeat(v, A//K, axis=1)
            s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d); s = np.where(causal, -np.inf, s)
            o = (softmax(s) @ v).transpose(0, 2, 1, 3).reshape(B, S, H)
            x = x + o @ W[p+'attn.out.weight']
            h = rms(x, W[p+'ln2.weight'])
            g = h @ W[p+'mlp.gate.weight']; g = g / (1 + np.exp(-g))
            x = x + (g * (h @ W[p+'mlp.up.weight'])) @ W[p+'mlp.down.weight']
        x = rms(x, W['final_norm.weight'])
        head = W['lm_head.weight'] if 'lm_head.weight' in W else W['embed.tok.weight'].T
        return [x @ head]
    bert = fam == 'bert'; eps = 1e-12 if bert else 1e-5
    x = W['embed.tok.weight'][ids] + W['embed.pos.weight'][:S]
    if bert: x = ln(x + W['embed.type.weight'][0], W['embed.ln.weight'], W['embed.ln.bias'], eps)
    def attn(h, p):
        qkv = h @ W[p+'attn.qkv.weight'] + W[p+'attn.qkv.bias']
        kw = K * d  # q, then K key and K value heads (K = A: multi-head)
        q, k, v = heads(qkv[..., :H], A), heads(qkv[..., H:H+kw], K), heads(qkv[..., H+kw:], K)
        cache.extend([k, v])
        k = np.repeat(k, A//K, axis=1); v = np.repeat(v, A//K, axis=1)
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
        if not bert: s = np.where(causal, -np.inf, s)
        o = (softmax(s) @ v).transpose(0, 2, 1, 3).reshape(B, S, H)
        return o @ W[p+'attn.out.weight'] + W[p+'attn.out.bias']
    def mlp(h, p):
        u = h @ W[p+'mlp.fc1.weight'] + W[p+'mlp.fc1.bias']
        if bert: u = 0.5*u*(1+erf(u/math.sqrt(2)))
        else: u = 0.5*u*(1+np.tanh(math.sqrt(2/math.pi)*(u+0.044715*u**3)))
        return u @ W[p+'mlp.fc2.weight'] + W[p+'mlp.fc2.bias']
    for l in range(L):
        p = f'layers.{l}.'
        if bert:
            x = ln(x + attn(x, p), W[p+'ln1.weight'], W[p+'ln1.bias'], eps)
            x = ln(x + mlp(x, p), W[p+'ln2.weight'], W[p+'ln2.bias'], eps)
        else:
            x = x + attn(ln(x, W[p+'ln1.weight'], W[p+'ln1.bias'], eps), p)
            x = x + mlp(ln(x, W[p+'ln2.weight'], W[p+'ln2.bias'], eps), p)
    if bert:
        return [x, np.tanh(x[:, 0] @ W['pooler.dense.weight'] + W['pooler.dense.bias'])]
    x = ln(x, W['final_norm.weight'], W['final_norm.bias'], eps)
    head = W['lm_head.weight'] if 'lm_head.weight' in W else W['embed.tok.weight'].T
    return [x @ head]

if __name__ == '__main__':
    path, fam, L, H, A, K, V = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:8])
    m = load(path); W = fill(m)
    S = m.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    # past.0.key [batch, K, P, d] follows input_ids in a decoding step.
    P = m.graph.input[1].type.tensor_type.shape.dim[2].dim_value if len(m.graph.input) > 1 else 0
    ids = np.random.default_rng(1).integers(0, V, (2, P + S)).astype(np.int64)
    cache = []; want = ref(fam, W, ids, L, H, A, K, cache)
    feeds = {}
    if P:
        want = [want[0][:, P:]] + cache
        for l in range(L):
            feeds[f'past.{l}.key'] = cache[2*l][:, :, :P].astype(np.float32)
            feeds[f'past.{l}.value'] = cache[2*l+1][:, :, :P].astype(np.float32)
    got = run(m, W, ids[:, P:], feeds)
    assert len(got) == len(want), 'outputs'
    for g, w in zip(got, want):
        err = np.abs(g - w).max() / (np.abs(w).max() + 1e-30)
        print(path, g.shape, 'max rel err %.2e' % err)
        assert g.shape == w.shape and err < 1e-4, 'MISMATCH'
    print('ok')
