"""How benchmark results record the perfc commands they ran and the plans
those printed (shared by tools/bench/nemo_h100_fp8.py and moe_training.py)."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stable(arg, tmp):
    """One argument of a perfc command as the results record it: the
    temporary model as its file name, repository paths relative, so that
    the same run writes the same bytes."""
    if arg.startswith(tmp):
        return os.path.basename(arg)
    return os.path.relpath(arg, ROOT) if arg.startswith(ROOT) else arg


def recompute_label(p):
    """A plan's recomputation as the results print it, with its modules
    where they are not the attention core alone (--recompute-modules), and
    full recomputation's blocks where not every one alone
    (--recompute-method, --recompute-num-layers)."""
    modules = p.get("recompute_modules", ["core_attn"])
    if p["recompute"] == "selective" and modules != ["core_attn"]:
        return "selective (%s)" % ", ".join(modules)
    method = p.get("recompute_method", "uniform")
    layers = p.get("recompute_num_layers", 1)
    if p["recompute"] == "full" and (method, layers) != ("uniform", 1):
        return "full (%s method, %s%d block%s)" % (
            method, "groups of " if method == "uniform" else "", layers,
            "" if layers == 1 else "s")
    return p["recompute"]
