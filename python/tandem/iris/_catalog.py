"""The ops tandem.iris offers, from their descriptions (ctx.ops.info), read once: every registered
op whose math is its sharding's GEMM (an op with its own math, such as a MoE layer, takes
arguments Iris's call does not have). Nothing here names an op."""
from __future__ import annotations

import functools

from tandem import _core


@functools.cache  # the registry is fixed for the process
def _ops():
    return _core.Context(num_ranks=1, functional=False).ops


@functools.cache
def names() -> tuple:
    ops = _ops()
    return tuple(n for n in ops.names() if not ops.info(n)["own_math"])


@functools.cache
def info(op: str, variant=None) -> dict:
    """ctx.ops.info(op, variant): the sharding, variants, dtypes, whether it takes a bias."""
    return dict(_ops().info(op, variant))


def a_name(op: str) -> str:
    """Iris's name of an op's first input: A_sharded where each rank holds a shard of A's K (the
    op gathers A along K), A otherwise."""
    d = info(op)
    return "A_sharded" if d["a_split"] == "cols" and not d["k_per_rank"] else "A"
