"""How benchmark results record the perfc commands they ran (shared by
tools/bench/nemo_h100_fp8.py and moe_training.py)."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stable(arg, tmp):
    """One argument of a perfc command as the results record it: the
    temporary model as its file name, repository paths relative, so that
    the same run writes the same bytes."""
    if arg.startswith(tmp):
        return os.path.basename(arg)
    return os.path.relpath(arg, ROOT) if arg.startswith(ROOT) else arg
