"""int8 inputs (Iris's --datatype int8: int8 x int8 summed in int32) through both APIs, against
numpy's int64 products: tandem.iris's per-rank ops (shapes that are not tile multiples: it pads)
and the all-ranks tandem.Context. The values are random over all of int8 (-128..127), so a run
that lost a sign, saturated or rounded anywhere would not match exactly. The op's output is fp32
(the int32 sums, exact here: |sum| < 2^24); the caller's array may be float32, int32 (the sums)
or int8 (Iris's acc.to(int8): the sums wrapped to 8 bits, as numpy's astype wraps)."""
import numpy as np
import pytest

import tandem
import tandem.iris as iris

I8 = np.int8
OUT_DTYPES = [np.float32, np.int32, np.int8]


def int8_values(rng, shape):
    return rng.integers(-128, 128, size=shape, dtype=np.int64).astype(I8)


def as_output(total, dtype):
    """The int64 sums as the output array holds them (int8: wrapped, as Iris's cast)."""
    return total.astype(dtype)


def assert_exact(out, total):
    assert np.abs(total).max() < 2 ** 24  # the fp32 output holds every sum exactly
    np.testing.assert_array_equal(out, as_output(total, out.dtype))


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("w", [2, 4])
def test_iris_matmul_all_reduce_int8(w, out_dtype):
    m, k, n = 100, 72, 90  # no side a tile multiple
    rng = np.random.default_rng(10 + w)
    a = [int8_values(rng, (m, k)) for _ in range(w)]
    b = [int8_values(rng, (k, n)) for _ in range(w)]
    total = sum(x.astype(np.int64) @ y.astype(np.int64) for x, y in zip(a, b))

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=out_dtype)
        ws = ctx.ops.matmul_all_reduce(out, a[rank], b[rank])
        assert ws.dtype == "int8" and ws.results["pipelined_us"] > 0
        return out

    for out in iris.spawn(fn, w):
        assert out.dtype == out_dtype
        assert_exact(out, total)
    # the int8 cast wraps: this product's sums leave int8's range
    assert np.abs(total).max() > 127


@pytest.mark.parametrize("variant", ["atomic", "one_shot", "two_shot", "ring"])
def test_iris_matmul_all_reduce_int8_every_variant(variant):
    w, m, k, n = 2, 64, 40, 48
    rng = np.random.default_rng(20)
    a = [int8_values(rng, (m, k)) for _ in range(w)]
    b = [int8_values(rng, (k, n)) for _ in range(w)]
    total = sum(x.astype(np.int64) @ y.astype(np.int64) for x, y in zip(a, b))

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=np.int32)
        ctx.ops.matmul_all_reduce(out, a[rank], b[rank], config={"all_reduce_variant": variant})
        return out

    for out in iris.spawn(fn, w):
        assert_exact(out, total)


@pytest.mark.parametrize("w", [2, 4])
def test_iris_matmul_all_gather_and_reduce_scatter_int8(w):
    rng = np.random.default_rng(30 + w)
    m_local, k, n = 40, 70, 90
    a = [int8_values(rng, (m_local, k)) for _ in range(w)]
    b = int8_values(rng, (k, n))
    gathered = np.concatenate(a).astype(np.int64) @ b.astype(np.int64)
    m2, k2, n2 = 96, 80, 128
    a2 = [int8_values(rng, (m2, k2)) for _ in range(w)]
    b2 = [int8_values(rng, (k2, n2)) for _ in range(w)]
    summed = sum(x.astype(np.int64) @ y.astype(np.int64) for x, y in zip(a2, b2))

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m_local * w, n), dtype=np.float32)
        ctx.ops.matmul_all_gather(out, a[rank], b)
        block = ctx.zeros((m2, n2 // w), dtype=np.int8)
        ctx.ops.matmul_reduce_scatter(block, a2[rank], b2[rank], config={"block_size_m": 64, "block_size_n": 32})
        return out, block

    for r, (out, block) in enumerate(iris.spawn(fn, w)):
        assert_exact(out, gathered)
        assert_exact(block, summed[:, r * n2 // w:(r + 1) * n2 // w])


def test_iris_all_gather_matmul_int8():
    """K_local = 40 is padded to whole int8 K tiles (2 x base-n deep) on every shard."""
    w, m, k_local, n = 2, 100, 40, 72
    rng = np.random.default_rng(40)
    shards = [int8_values(rng, (m, k_local)) for _ in range(w)]
    b = int8_values(rng, (w * k_local, n))
    total = np.concatenate(shards, axis=1).astype(np.int64) @ b.astype(np.int64)

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=np.int32)
        ctx.ops.all_gather_matmul(out, A_sharded=shards[rank], B=b)
        return out

    for out in iris.spawn(fn, w):
        assert_exact(out, total)


def test_iris_int8_refusals_name_the_argument():
    def fn(rank):
        ctx = iris.iris()
        a, b = ctx.ones((64, 32), dtype=I8), ctx.ones((32, 16), dtype=I8)
        with pytest.raises(ValueError, match="bias: no bias with int8 inputs"):
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 16), dtype=np.float32), a, b, bias=ctx.ones(16, dtype=I8))
        with pytest.raises(TypeError, match="output_tensor is float16 on rank .*: int8 inputs give float32, int32 or int8"):
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 16), dtype=np.float16), a, b)
        with pytest.raises(TypeError, match="output_tensor is int32 on rank .*: an int32 or int8 output is for int8 inputs"):
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 16), dtype=np.int32), ctx.ones((64, 32)), ctx.ones((32, 16)))
        with pytest.raises(TypeError, match="B is float16 on rank .* but A is int8"):
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 16), dtype=np.float32), a, ctx.ones((32, 16), dtype=np.float16))

    iris.spawn(fn, 2)


@pytest.mark.parametrize("ranks", [2, 4])
def test_context_int8_ops(ranks):
    ctx = tandem.Context(num_ranks=ranks)
    rng = np.random.default_rng(50 + ranks)
    tile = {"base_m": 32, "base_n": 64}  # small tiles keep the shapes (and the test) small
    m, k, n = 32 * ranks, 96, 64 * ranks
    for op in ("matmul_all_reduce", "matmul_all_gather", "matmul_reduce_scatter", "all_gather_matmul",
               "matmul_all_scatter"):
        assert "int8" in ctx.ops.info(op)["dtypes"], op
    a = int8_values(rng, (ranks, m, k))
    b = int8_values(rng, (ranks, k, n))
    total = sum(a[r].astype(np.int64) @ b[r].astype(np.int64) for r in range(ranks))
    # A tandem.Tensor made from int8 data is int8 and gives it back.
    ta = ctx.tensor(a)
    assert ta.dtype == "int8"
    np.testing.assert_array_equal(ta.numpy(), a)
    out = np.zeros((m, n), np.float32)
    ws = ctx.ops.matmul_all_reduce(out, ta, b, config=tile)
    assert_exact(out, total)
    assert ws.results["pipelined_us"] > 0
    out_rs = np.zeros((ranks, m, n // ranks), np.int8)
    ctx.ops.matmul_reduce_scatter(out_rs, a, b, config=tile)
    for r in range(ranks):
        assert_exact(out_rs[r], total[:, r * n // ranks:(r + 1) * n // ranks])
    a_rows = int8_values(rng, (ranks, m // ranks, k))
    b_all = int8_values(rng, (k, n))
    out_ag = np.zeros((m, n), np.int32)
    ctx.ops.matmul_all_gather(out_ag, a_rows, b_all, config=tile)
    assert_exact(out_ag, a_rows.reshape(m, k).astype(np.int64) @ b_all.astype(np.int64))
    # all_gather_matmul: rank r holds column block r of A (shards of 128: one int8 K tile of 2 x 64).
    kk = 128 * ranks
    a_cols = int8_values(rng, (m, kk))
    b_k = int8_values(rng, (kk, n))
    shards = np.stack([a_cols[:, r * 128:(r + 1) * 128] for r in range(ranks)])
    out_agm = np.zeros((m, n), np.int32)
    ctx.ops.all_gather_matmul(out_agm, shards, b_k, config=tile)
    assert_exact(out_agm, a_cols.astype(np.int64) @ b_k.astype(np.int64))


def test_context_int8_gemm_tiled_and_matmul_all_scatter():
    ctx = tandem.Context(num_ranks=2)
    rng = np.random.default_rng(60)
    m, k, n = 200, 300, 512  # M and K padded; matmul_all_scatter needs N whole tiles per rank
    a = int8_values(rng, (2, m, k))
    b = int8_values(rng, (k, n))
    out = np.zeros((2, m, n), np.int32)
    ctx.ops.run("gemm", out, a, b, config={"variant": "tiled"})
    for r in range(2):
        assert_exact(out[r], a[r].astype(np.int64) @ b.astype(np.int64))
    # matmul_all_scatter: A the same everywhere, rank r column block r of B; every rank all of C.
    a1 = int8_values(rng, (m, k))
    b_cols = np.stack([b[:, r * n // 2:(r + 1) * n // 2] for r in range(2)])
    out_s = np.zeros((m, n), np.float32)
    ctx.ops.matmul_all_scatter(out_s, a1, b_cols)
    assert_exact(out_s, a1.astype(np.int64) @ b.astype(np.int64))


def test_context_int8_refusals_name_the_argument():
    ctx = tandem.Context(num_ranks=2)
    a = np.ones((2, 128, 256), I8)
    b = np.ones((2, 256, 256), I8)
    with pytest.raises(tandem.Error, match=r"bias=.*no bias with int8 inputs"):
        ctx.ops.matmul_all_reduce(np.zeros((128, 256), np.float32), a, b, bias=np.ones(256, I8))
    with pytest.raises(tandem.Error, match=r"out_dtype=.*fp16.*int8 inputs give an fp32 output"):
        ctx.ops.matmul_all_reduce(np.zeros((128, 256), np.float16), a, b)
    with pytest.raises(TypeError, match="output_tensor: a int32 array; an int32 or int8 output is for int8 inputs"):
        ctx.ops.matmul_all_reduce(np.zeros((128, 256), np.int32), a.astype(np.float16), b.astype(np.float16))
    with pytest.raises(ValueError, match="array: an int8 tensor takes integers in -128..127"):
        ctx.tensor(np.full((2, 4, 4), 200.0), dtype="int8")


def test_context_int8_costs_less_simulated_time_than_fp16():
    """The same GEMM, timing-only: int8's compute-only view is shorter than fp16's (half the cube
    cycles per K, half the bytes per element)."""
    ctx = tandem.Context(num_ranks=2, functional=False)
    m, k, n = 1536, 4096, 512
    times = {}
    for dtype in (np.float16, I8):
        ws = ctx.ops.matmul_all_reduce(np.zeros((m, n), np.float32), np.zeros((2, m, k), dtype),
                                       np.zeros((2, k, n), dtype), config={"all_views": True})
        times[np.dtype(dtype).name] = ws.results["compute_only_us"]
    assert times["int8"] < 0.8 * times["float16"], times
