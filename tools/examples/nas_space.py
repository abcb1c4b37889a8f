"""The search space of tools/examples/nas_random_search.py, on its own.

A MobileNetV2-like network: a stride-2 3x3 stem, STAGES stages of inverted
residual blocks (1x1 expansion, kxk depthwise, 1x1 projection, a residual
add where shapes allow), a 1x1 head to 1280 channels, global pooling and a
1000-way classifier. Per stage: depth, width, kernel and expansion ratio.

`build(arch, b)` drives any builder with the methods of perfc.ModelBuilder
that it uses (input, conv, depthwise_conv, batch_norm, relu6, add,
global_avg_pool, flatten, gemm, output, build), so the example's in-process
IR and the ONNX files of tools/bench/nas_ranking.py are the same network.
This module imports nothing beyond the standard library.
"""

STAGES = 5  # stages after the stem, each halving resolution except the 2nd
DEPTHS = (1, 2, 3, 4)
WIDTHS = (16, 24, 32, 48, 64, 96, 128, 160)  # times (1 + stage // 2)
KERNELS = (3, 5, 7)
EXPANSIONS = (1, 3, 4, 6)
STEM_WIDTH = 32
HEAD_WIDTH = 1280
CLASSES = 1000


def sample(rng):
    """One architecture: per stage (depth, width, kernel, expansion)."""
    arch = []
    for stage in range(STAGES):
        arch.append((rng.choice(DEPTHS),
                     rng.choice(WIDTHS) * (1 + stage // 2),
                     rng.choice(KERNELS),
                     rng.choice(EXPANSIONS)))
    return arch


MUTATIONS = ("kernel", "expansion", "width", "depth")


def mutate(arch, rng, kind):
    """A near neighbour: one stage's `kind` moved to an adjacent choice.

    What an evolutionary or local NAS step does; the ranking of such pairs
    is what decides which candidate survives.
    """
    choices = {"depth": DEPTHS, "kernel": KERNELS, "expansion": EXPANSIONS}
    field = {"depth": 0, "width": 1, "kernel": 2, "expansion": 3}[kind]
    stage = rng.randrange(STAGES)
    out = [list(s) for s in arch]
    scale = 1 + stage // 2
    opts = [w * scale for w in WIDTHS] if kind == "width" else list(choices[kind])
    i = opts.index(out[stage][field])
    steps = [j for j in (i - 1, i + 1) if 0 <= j < len(opts)]
    out[stage][field] = opts[rng.choice(steps)]
    return [tuple(s) for s in out]


def build(arch, b, resolution=224):
    """The network of `arch` through builder `b`; returns b.build()."""
    x = b.input("image", [1, 3, resolution, resolution])
    x = b.relu6(b.batch_norm(b.conv(x, STEM_WIDTH, 3, stride=2)))
    channels = STEM_WIDTH
    for stage, (depth, width, kernel, expand) in enumerate(arch):
        for i in range(depth):
            stride = 2 if i == 0 and stage != 1 else 1
            y = x
            if expand > 1:
                y = b.relu6(b.batch_norm(b.conv(y, channels * expand, 1, pad=0)))
            y = b.relu6(b.batch_norm(b.depthwise_conv(y, kernel, stride=stride)))
            y = b.batch_norm(b.conv(y, width, 1, pad=0))
            x = b.add(x, y) if stride == 1 and width == channels else y
            channels = width
    x = b.relu6(b.batch_norm(b.conv(x, HEAD_WIDTH, 1, pad=0)))
    b.output(b.gemm(b.flatten(b.global_avg_pool(x)), CLASSES))
    return b.build()
