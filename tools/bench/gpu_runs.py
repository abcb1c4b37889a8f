"""The runs tools/bench/gpu_measure.py makes on a GPU, shared with
tools/bench/gpu_compare.py (which predicts them, before any measurement
too: --predict-only). No imports beyond the standard library."""

ZOO_ORDER = ["resnet50", "mobilenet_v2", "bert_base", "efficientnet_b0", "resnet18", "densenet121",
             "vgg16", "inception_v3", "convnext_tiny", "vit_b_16", "swin_t", "gpt2_small"]
SEQ = {"bert_base": 128, "gpt2_small": 1024}  # the zoo's transformers at their exported length
BATCHES = [1, 64]
PRECISIONS = ["fp16", "fp32", "tf32"]
MODES = ["eager", "graph"]
# (model, batch, precision): ResNet-50 with SGD momentum, BERT-base with AdamW.
TRAIN_RUNS = [("resnet50", 256, "amp"), ("resnet50", 256, "tf32"),
              ("bert_base", 64, "amp"), ("bert_base", 64, "tf32")]
GEMM_SIZES = [256, 512, 1024, 2048, 4096, 8192, 16384]
# BERT-base / BERT-large shapes (tokens x in -> out) at the batches measured.
GEMM_SHAPES = [(128, 768, 768), (128, 768, 3072), (8192, 768, 3072), (8192, 3072, 768),
               (6912, 1024, 4096), (6912, 4096, 1024), (6912, 1024, 1024),
               # A decoding step's products (Llama-3-8B's MLP at batch 1 to
               # 64): whether 16-bit skinny GEMMs stream their weights near
               # the memory roofline, where H100/H200's FP8-measured curve
               # prices them compute-bound (gpu_edge_plausibility item 16).
               (1, 4096, 14336), (8, 4096, 14336), (32, 4096, 14336), (64, 4096, 14336),
               (8, 14336, 4096)]
COPY_MB = [0.25, 1, 4, 16, 32, 64, 256, 1024, 4096]
# Memory-bound kernels of eager BERT-large training (micro-batch 64 x seq
# 128), forward and backward, in each storage type: whether fp16 kernels
# reach the share of bandwidth fp32 ones do (issue 4's AMP-vs-TF32 question).
# (name, rows, columns): hidden [8192, 1024], FFN [8192, 4096], attention
# scores [64 x 16 x 128, 128].
MEMBOUND_OPS = ["add", "gelu", "dropout", "softmax", "layer_norm"]
MEMBOUND_SHAPES = {"hidden": (8192, 1024), "ffn": (8192, 4096), "scores": (131072, 128)}
MEMBOUND_DTYPES = ["fp32", "fp16"]
# Fused causal attention (torch's scaled_dot_product_attention, BF16: the
# FlashAttention or cuDNN kernel PyTorch picks), forward and backward:
# (batch, heads, sequence, head dim). The share of the tensor-core peak it
# reaches is what perfc's FlashAttention kernels should be priced at; they
# take the GEMM curve today (tools/bench/results/nemo_h100_fp8.md).
ATTENTION_SHAPES = [(4, 16, 2048, 128), (1, 32, 8192, 128), (1, 32, 16384, 128), (8, 16, 1024, 64)]


def attention_key(batch, heads, seq, head_dim):
    return "bf16_causal_b%d_h%d_s%d_d%d" % (batch, heads, seq, head_dim)


def membound_key(op, shape, dtype, direction):
    return "%s_%s_%s_%s" % (op, shape, dtype, direction)


def zoo_key(model, batch, precision, mode):
    return "%s_b%d_%s_%s" % (model, batch, precision, mode)


def train_key(model, batch, precision):
    return "%s_b%d_%s" % (model, batch, precision)
