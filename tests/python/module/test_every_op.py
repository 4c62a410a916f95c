"""Every registered op and variant through the Python module against numpy: sync and async, with
and without bias where the op takes one (the inputs and the reference come from the op's
sharding: python/examples/problems.py)."""
import os
import sys

import numpy as np
import pytest

import tandem

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "python", "examples"))
from problems import check, make_problem, shape_for  # noqa: E402

RANKS = 2
M, N, K = 256, 512, 512  # N and K: two ranks' shards of whole 256-wide tiles


def variants():
    ctx = tandem.Context(num_ranks=RANKS, functional=False)
    # An op with its own math (moe_ffn) is checked by its own golden in the C++ suite, not numpy's A x B.
    return [(op, v) for op in ctx.ops.names() if not ctx.ops.info(op)["own_math"] for v in ctx.ops.info(op)["variants"]]


def own_math_variants():
    ctx = tandem.Context(num_ranks=RANKS, functional=False)
    return [(op, v) for op in ctx.ops.names() if ctx.ops.info(op)["own_math"] for v in ctx.ops.info(op)["variants"]]


def biases():
    ctx = tandem.Context(num_ranks=RANKS, functional=False)
    return [(op, b) for op in ctx.ops.names() if ctx.ops.info(op)["takes_bias"] for b in ("m", "n")]


@pytest.fixture
def ctx():
    return tandem.Context(num_ranks=RANKS)


@pytest.mark.parametrize("op,variant", variants())
@pytest.mark.parametrize("async_op", [False, True])
def test_every_variant_matches_numpy(ctx, op, variant, async_op):
    out_dtype = ctx.ops.info(op, variant)["out_dtypes"][0]
    m, n, k = shape_for(op, variant, M, N, K)
    A, B, C, _, expected = make_problem(ctx, op, m, n, k, out_dtype=out_dtype, seed=3)
    ws = getattr(ctx.ops, op)(C, A, B, async_op=async_op, config={"variant": variant})
    if async_op:
        ctx.barrier()
    check(C, expected, out_dtype)
    assert ws.results["complete"] and ws.results["pipelined_us"] > 0


@pytest.mark.parametrize("op,bias", biases())
def test_bias_is_added_once(ctx, op, bias):
    A, B, C, bias_t, expected = make_problem(ctx, op, M, N, K, bias=bias, seed=4)
    getattr(ctx.ops, op)(C, A, B, bias=bias_t)
    check(C, expected, ctx.ops.info(op)["out_dtypes"][0])


def test_two_different_ops_overlap_and_stay_right(ctx):
    names = [op for op in ctx.ops.names() if op != "allgather_gemm"][:2]
    problems = [make_problem(ctx, op, M, N, K, seed=5 + i) for i, op in enumerate(names)]
    calls = [getattr(ctx.ops, op)(p[2], p[0], p[1], async_op=True) for op, p in zip(names, problems)]
    ctx.synchronize()
    for op, p in zip(names, problems):
        check(p[2], p[4], ctx.ops.info(op)["out_dtypes"][0])
    r1, r2 = calls[0].results, calls[1].results
    assert r2["start_us"] < r1["end_us"]


@pytest.mark.parametrize("bias", ["m", "n"])
def test_square_output_bias_per_row_or_per_column(ctx, bias):
    # M == N: the bias's shape says which (M x 1 per row, 1 x N per column).
    A, B, C, bias_t, expected = make_problem(ctx, "matmul_all_reduce", 256, 256, 256, bias=bias, seed=6)
    assert bias_t.shape == ((RANKS, 256, 1) if bias == "m" else (RANKS, 1, 256))
    ctx.ops.matmul_all_reduce(C, A, B, bias=bias_t)
    check(C, expected, "fp32")


def test_one_rank_runs_an_op_without_communication_and_iris_s_ops():
    ctx = tandem.Context(num_ranks=1)
    A, B, C, bias_t, expected = make_problem(ctx, "gemm", 200, 300, 100, bias="n", seed=7)
    ws = ctx.ops.gemm(C, A, B, bias=bias_t, config={"variant": "tiled"})
    check(C, expected, "fp32")
    assert ws.results["pipelined_us"] > 0
    with pytest.raises(tandem.Error, match="needs at least 2 ranks"):  # Ascend's published AllGather+GEMM
        A2, B2, C2, _, _ = make_problem(ctx, "allgather_gemm", 256, 256, 256)
        ctx.ops.allgather_gemm(C2, A2, B2)
    # Iris's fused ops run on one rank too, as Iris runs them on one GPU: the product (+ bias).
    A3, B3, C3, _, expected = make_problem(ctx, "matmul_all_reduce", 256, 256, 256)
    ctx.ops.matmul_all_reduce(C3, A3, B3)
    check(C3, expected, "fp32")


@pytest.mark.parametrize("op,variant", own_math_variants())
@pytest.mark.parametrize("async_op", [False, True])
def test_own_math_ops_verify_against_their_own_golden(ctx, op, variant, async_op):
    """An op with its own math (moe_ffn, moe_dispatch, moe_combine) reads the caller's A (its tokens) and is checked by the
    module against the op's golden of that A once the call completed (results['verification']),
    as the command line does; timing-only skips it."""
    # The output is shaped like A, except moe_dispatch's: a row per route its experts receive (with
    # topK 4 and 4 experts per rank on 2 ranks, the round-robin router sends each rank 32 x 4 rows),
    # K int8 values and the scale's 32 bytes.
    out_shape = (32 * 4, 256 + 32) if op == "moe_dispatch" else (32, 256)
    out_dtype = ctx.ops.info(op, variant)["out_dtypes"][0]
    out = ctx.zeros(out_shape, dtype=out_dtype)
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, size=(RANKS, 32, 256)).astype(np.float16)  # one x per rank
    b = np.zeros((256, 512), dtype=np.float16)
    config = {"variant": variant, "topk": 4, "experts_per_rank": 4, "compute_blocks": 4, "comm_blocks": 8}
    ws = getattr(ctx.ops, op)(out, a, b, async_op=async_op, config=config)
    if async_op:
        assert ws.results["verification"] == "skipped"  # not complete yet
        ctx.barrier()
    assert ws.results["complete"]
    assert ws.results["verification"] == "passed", ws.results.get("verification_report")
    assert np.abs(out.numpy().astype(np.float32)).max() > 0.01  # the tokens went through the experts
    # Zero tokens: every FFN gives 0 (no bias), so the output is 0: the op read A, not data of its own.
    zero = ctx.zeros(out_shape, dtype=out_dtype)
    ws = getattr(ctx.ops, op)(zero, np.zeros((32, 256), dtype=np.float16), b, config=config)
    assert ws.results["verification"] == "passed", ws.results.get("verification_report")
    assert not zero.numpy().any()
    timing = tandem.Context(num_ranks=RANKS, functional=False)
    ws = getattr(timing.ops, op)(timing.zeros(out_shape, dtype=out_dtype), a, b, config=config)
    assert ws.results["verification"] == "skipped"


def test_the_default_tile_is_fitted_to_the_shape_and_a_given_one_is_kept():
    """Where the config leaves base_m / base_n out and the default 128 x 256 tile does not divide
    the shape, the call runs with the largest multiple of 16 that does (at 4 ranks, N = 512 gives
    matmul_reduce_scatter 128 columns per rank); a tile the caller gives is never changed."""
    ctx4 = tandem.Context(num_ranks=4)
    A, B, C, _, expected = make_problem(ctx4, "matmul_reduce_scatter", 512, 512, 512, seed=8)
    ws = ctx4.ops.matmul_reduce_scatter(C, A, B)
    check(C, expected, ctx4.ops.info("matmul_reduce_scatter")["out_dtypes"][0])
    assert (ws.results["base_m"], ws.results["base_n"]) == (128, 128)
    with pytest.raises(tandem.Error, match="base-n"):
        ctx4.ops.matmul_reduce_scatter(C, A, B, config={"base_n": 256})
    A, B, C, _, _ = make_problem(ctx4, "matmul_reduce_scatter", 512, 1024, 512, seed=8)
    assert ctx4.ops.matmul_reduce_scatter(C, A, B).results["base_n"] == 256  # the default divides: kept
