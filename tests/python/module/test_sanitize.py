"""sanitize=True: a call checked by the simulator's sanitizer (docs/SANITIZER.md). A clean call
passes and computes what a plain one does; a synchronisation bug (allgather_gemm's test-only fault
flag_before_data: each chunk's flag raised before its data is sent) raises tandem.Error with the
count and the first violation, naming its class; an async call is checked at barrier()."""
import os
import re
import sys

import numpy as np
import pytest

import tandem

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "python", "examples"))
from problems import check, make_problem, shape_for  # noqa: E402

RANKS = 2
M, N, K = 256, 512, 512


def ag_problem(ctx, m, k, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, size=(ctx.num_ranks, m // ctx.num_ranks, k)).astype(np.float16)
    b = rng.integers(-1, 2, size=(k, n)).astype(np.float16)
    c = a.reshape(m, k).astype(np.float32) @ b.astype(np.float32)
    A = ctx.tensor(a)
    B = ctx.tensor(np.broadcast_to(b, (ctx.num_ranks, k, n)).copy())
    C = ctx.zeros(m, n, np.float32)
    return A, B, C, c


@pytest.fixture
def ctx():
    return tandem.Context(num_ranks=RANKS)


def variants():
    ctx = tandem.Context(num_ranks=RANKS, functional=False)
    # An op with its own math (moe_ffn) is checked by its own golden in the C++ suite, not numpy's A x B.
    return [(op, v) for op in ctx.ops.names() if not ctx.ops.info(op)["own_math"] for v in ctx.ops.info(op)["variants"]]


@pytest.mark.parametrize("op,variant", variants())
def test_every_variant_passes_sanitized_and_matches_numpy(ctx, op, variant):
    out_dtype = ctx.ops.info(op, variant)["out_dtypes"][0]
    m, n, k = shape_for(op, variant, M, N, K)
    A, B, C, _, expected = make_problem(ctx, op, m, n, k, out_dtype=out_dtype, seed=3)
    ws = getattr(ctx.ops, op)(C, A, B, config={"variant": variant}, sanitize=True)
    check(C, expected, out_dtype)
    # The workspace reused: sanitized again (through config), then plain, then sanitized.
    for config in ({"variant": variant, "sanitize": True}, {"variant": variant}):
        ws = getattr(ctx.ops, op)(C, A, B, config=config, workspace=ws)
    ws = getattr(ctx.ops, op)(C, A, B, config={"variant": variant}, workspace=ws, sanitize=True)
    check(C, expected, out_dtype)
    assert ws.calls == 4


def test_flag_before_data_raises_naming_the_class(ctx):
    A, B, C, _ = ag_problem(ctx, 256, 256, 256, seed=4)
    with pytest.raises(tandem.Error) as e:
        ctx.ops.allgather_gemm(C, A, B, config={"fault": "flag_before_data"}, sanitize=True)
    msg = str(e.value)
    assert msg.startswith("allgather_gemm: sanitize found ")
    assert "[unsynchronised read]" in msg
    # Both accesses: one rank's comm kernel storing into its peer's window, the peer's GEMM reading
    # it (which of the two ranks' conflicts comes first depends on the timing model).
    w = re.search(r"  write: rank (\d), stream 'comm#0', kernel 'RingCommStreamingKernel'", msg)
    r = re.search(r"  read: rank (\d), stream 'compute#0', kernel 'AllGatherGemmComputeStreamingKernel'", msg)
    assert w and r, msg
    assert {w.group(1), r.group(1)} == {"0", "1"}, msg
    # The context goes on: a clean sanitized call passes.
    ctx.ops.allgather_gemm(C, A, B, sanitize=True)


def test_an_async_call_is_checked_at_the_barrier(ctx):
    A, B, C, _ = ag_problem(ctx, 256, 256, 256, seed=5)
    ctx.ops.allgather_gemm(C, A, B, async_op=True, config={"fault": "flag_before_data"}, sanitize=True)
    with pytest.raises(tandem.Error, match=r"^barrier: sanitize found \d+ violations?, the first:\n\["):
        ctx.barrier()
