"""fp32 inputs (Iris's default datatype) through both APIs: tandem.iris's per-rank ops and the
all-ranks tandem.Context, on 2 and 4 ranks, against numpy. The values are random fp32 (most of them
not representable in fp16), so a run that rounded its inputs to fp16 anywhere would fail the
tolerance by orders of magnitude; the simulated time of fp32 is that of a product costing twice
the cube cycles of fp16's (docs/IRIS.md "Datatypes")."""
import numpy as np
import pytest

import tandem
import tandem.iris as iris

F32 = np.float32


def fp32_values(rng, shape):
    return rng.standard_normal(shape).astype(F32)


def assert_fp32_close(got, expected, k):
    """Within fp32 rounding of a K-long dot product (and far below what fp16 inputs would give)."""
    tol = 2e-6 * np.sqrt(k) * (np.abs(expected).max() + 1.0)
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=0, atol=tol)


def fp16_error(a_list, b_list, expected):
    """The error the same product would show with its inputs rounded to fp16."""
    got = sum(a.astype(np.float16).astype(np.float64) @ b.astype(np.float16).astype(np.float64)
              for a, b in zip(a_list, b_list))
    return np.abs(got - expected).max()


# Shapes that are not tile multiples (the op runs on padded operands).
@pytest.mark.parametrize("w", [2, 4])
def test_iris_matmul_all_reduce_fp32(w):
    m, k, n = 100, 72, 90
    rng = np.random.default_rng(40 + w)
    a = [fp32_values(rng, (m, k)) for _ in range(w)]
    b = [fp32_values(rng, (k, n)) for _ in range(w)]
    expected = sum(x.astype(np.float64) @ y.astype(np.float64) for x, y in zip(a, b))

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=F32)
        ws = ctx.ops.matmul_all_reduce(out, a[rank], b[rank])
        assert ws.dtype == np.float32 and ws.results["pipelined_us"] > 0
        return out

    worst_fp16 = fp16_error(a, b, expected)
    for out in iris.spawn(fn, w):
        assert out.dtype == F32
        assert_fp32_close(out, expected, w * k)
        # far closer than the same product of fp16-rounded inputs: nothing was rounded to fp16
        assert np.abs(out - expected).max() < worst_fp16 / 50


@pytest.mark.parametrize("variant", ["atomic", "one_shot", "two_shot", "ring"])
def test_iris_matmul_all_reduce_fp32_every_variant_with_bias(variant):
    w, m, k, n = 2, 64, 40, 48
    rng = np.random.default_rng(50)
    a = [fp32_values(rng, (m, k)) for _ in range(w)]
    b = [fp32_values(rng, (k, n)) for _ in range(w)]
    bias = fp32_values(rng, (n,))
    expected = sum(x.astype(np.float64) @ y.astype(np.float64) for x, y in zip(a, b)) + bias

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=F32)
        ctx.ops.matmul_all_reduce(out, a[rank], b[rank], bias=bias, config={"all_reduce_variant": variant})
        return out

    for out in iris.spawn(fn, w):
        assert_fp32_close(out, expected, w * k)


@pytest.mark.parametrize("w", [2, 4])
def test_iris_matmul_all_gather_fp32(w):
    m_local, k, n = 40, 70, 90
    rng = np.random.default_rng(60 + w)
    a = [fp32_values(rng, (m_local, k)) for _ in range(w)]
    b = fp32_values(rng, (k, n))
    expected = np.concatenate(a).astype(np.float64) @ b.astype(np.float64)

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m_local * w, n), dtype=F32)
        ctx.ops.matmul_all_gather(out, a[rank], b)
        return out

    for out in iris.spawn(fn, w):
        assert_fp32_close(out, expected, k)


@pytest.mark.parametrize("w", [2, 4])
def test_iris_matmul_reduce_scatter_fp32_both_output_forms(w):
    m, k, n = 96, 80, 128
    rng = np.random.default_rng(70 + w)
    a = [fp32_values(rng, (m, k)) for _ in range(w)]
    b = [fp32_values(rng, (k, n)) for _ in range(w)]
    total = sum(x.astype(np.float64) @ y.astype(np.float64) for x, y in zip(a, b))

    def fn(rank):
        ctx = iris.iris()
        block = ctx.zeros((m, n // w), dtype=F32)
        ctx.ops.matmul_reduce_scatter(block, a[rank], b[rank], config={"block_size_m": 64, "block_size_n": 32})
        return block

    for r, out in enumerate(iris.spawn(fn, w)):
        assert_fp32_close(out, total[:, r * n // w:(r + 1) * n // w], w * k)


def test_iris_all_gather_matmul_fp32():
    w, m, k_local, n = 2, 100, 40, 72
    rng = np.random.default_rng(80)
    shards = [fp32_values(rng, (m, k_local)) for _ in range(w)]
    b = fp32_values(rng, (w * k_local, n))
    expected = np.concatenate(shards, axis=1).astype(np.float64) @ b.astype(np.float64)

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=F32)
        ctx.ops.all_gather_matmul(out, A_sharded=shards[rank], B=b)
        return out

    for out in iris.spawn(fn, w):
        assert_fp32_close(out, expected, w * k_local)


def test_iris_fp32_inputs_into_a_float16_output_are_rounded_once():
    w, m, k, n = 2, 32, 32, 32
    rng = np.random.default_rng(90)
    a = [fp32_values(rng, (m, k)) for _ in range(w)]
    b = [fp32_values(rng, (k, n)) for _ in range(w)]
    expected = sum(x.astype(np.float64) @ y.astype(np.float64) for x, y in zip(a, b))

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=np.float16)
        ctx.ops.matmul_all_reduce(out, a[rank], b[rank])
        return out

    for out in iris.spawn(fn, w):
        assert out.dtype == np.float16
        # the fp32 sum rounded once to fp16: within one fp16 unit in the last place
        np.testing.assert_allclose(out.astype(np.float64), expected, rtol=2.0 ** -10, atol=2.0 ** -14)


def test_iris_a_and_b_of_different_dtypes_are_refused_naming_b():
    def fn(rank):
        ctx = iris.iris()
        with pytest.raises(TypeError, match="B is float16 on rank .* but A is float32: A and B share one dtype"):
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 16), dtype=F32), ctx.ones((64, 32), dtype=F32), ctx.ones((32, 16), dtype=np.float16))

    iris.spawn(fn, 2)


@pytest.mark.parametrize("ranks", [2, 4])
def test_context_fp32_matmul_all_reduce_all_gather_reduce_scatter(ranks):
    ctx = tandem.Context(num_ranks=ranks)
    rng = np.random.default_rng(100 + ranks)
    m, k, n = 128 * ranks, 256, 256 * ranks
    for op in ("matmul_all_reduce", "matmul_all_gather", "matmul_reduce_scatter"):
        assert "fp32" in ctx.ops.info(op)["dtypes"], op
    # matmul_all_reduce: each rank its own A (M x K) and B (K x N); every rank the sum.
    a = fp32_values(rng, (ranks, m, k))
    b = fp32_values(rng, (ranks, k, n))
    total = sum(a[r].astype(np.float64) @ b[r].astype(np.float64) for r in range(ranks))
    out = np.zeros((m, n), F32)
    ws = ctx.ops.matmul_all_reduce(out, a, b)
    assert_fp32_close(out, total, ranks * k)
    assert ws.results["pipelined_us"] > 0
    # matmul_reduce_scatter: rank r gets column block r of the same sum.
    out_rs = np.zeros((ranks, m, n // ranks), F32)
    ctx.ops.matmul_reduce_scatter(out_rs, a, b)
    for r in range(ranks):
        assert_fp32_close(out_rs[r], total[:, r * n // ranks:(r + 1) * n // ranks], ranks * k)
    # matmul_all_gather: rank r's row block of A, B the same everywhere; every rank all of C.
    a_rows = fp32_values(rng, (ranks, m // ranks, k))
    b_all = fp32_values(rng, (k, n))
    out_ag = np.zeros((m, n), F32)
    ctx.ops.matmul_all_gather(out_ag, a_rows, b_all)
    assert_fp32_close(out_ag, a_rows.reshape(m, k).astype(np.float64) @ b_all.astype(np.float64), k)


def test_context_fp32_costs_more_simulated_time_than_fp16():
    """The same matmul_all_reduce, timing-only: the fp32 GEMM alone (compute-only view) takes
    longer than the fp16 one (twice the cube cycles per K and twice the bytes per element; the
    launch and synchronize, a good part of this view at this size, do not grow)."""
    ctx = tandem.Context(num_ranks=2, functional=False)
    m, k, n = 1536, 4096, 512  # 24 output tiles: one per AIC core, each a long K loop
    times = {}
    for dtype in (np.float16, F32):
        ws = ctx.ops.matmul_all_reduce(np.zeros((m, n), F32), np.zeros((2, m, k), dtype), np.zeros((2, k, n), dtype),
                                       config={"all_views": True})
        times[np.dtype(dtype).name] = ws.results["compute_only_us"]
    assert times["float32"] > 1.35 * times["float16"], times
