"""The Python module `tandem` against numpy: every registered op sync and async, with and
without bias where the op takes one, a workspace reused across calls with different data, and
bad calls raising tandem.Error with the simulator's message (run by ctest: see tests/CMakeLists.txt)."""
import numpy as np
import pytest

import tandem

RANKS = 2


def ag_problem(ctx, m, k, n, seed):
    """allgather_gemm: A split by rows (M/ranks x K per rank), B (K x N) on every rank, C = A x B."""
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


def test_every_registered_op_is_an_attribute(ctx):
    names = ctx.ops.names()
    assert "allgather_gemm" in names
    for name in names:
        assert callable(getattr(ctx.ops, name))
    with pytest.raises(AttributeError, match="registered"):
        ctx.ops.no_such_op


@pytest.mark.parametrize("async_op", [False, True])
def test_allgather_gemm_matches_numpy(ctx, async_op):
    A, B, C, expected = ag_problem(ctx, 256, 256, 256, seed=1)
    ws = ctx.ops.allgather_gemm(C, A, B, async_op=async_op)
    if async_op:
        assert ws.results["complete"] is False
        ctx.barrier()
    out = C.numpy()
    assert out.shape == (RANKS, 256, 256)
    for r in range(RANKS):
        np.testing.assert_array_equal(out[r], expected)
    res = ws.results
    assert res["complete"] and res["pipelined_us"] > 0 and len(res["per_rank_us"]) == RANKS


def test_workspace_reuse_with_different_data(ctx):
    ws = None
    times = []
    for seed in range(3):
        A, B, C, expected = ag_problem(ctx, 256, 256, 256, seed=seed)
        ws = ctx.ops.allgather_gemm(C, A, B, workspace=ws)
        for r in range(RANKS):
            np.testing.assert_array_equal(C.numpy()[r], expected)
        times.append(ws.results["pipelined_us"])
    assert ws.calls == 3
    assert times[0] == times[1] == times[2]


def test_two_async_ops_overlap(ctx):
    A1, B1, C1, e1 = ag_problem(ctx, 512, 512, 512, seed=7)
    A2, B2, C2, e2 = ag_problem(ctx, 512, 512, 512, seed=8)
    w1 = ctx.ops.allgather_gemm(C1, A1, B1, async_op=True)
    w2 = ctx.ops.allgather_gemm(C2, A2, B2, async_op=True)
    ctx.synchronize()
    r1, r2 = w1.results, w2.results
    elapsed = max(r1["end_us"], r2["end_us"]) - min(r1["start_us"], r2["start_us"])
    assert r1["pipelined_us"] + r2["pipelined_us"] > elapsed
    assert r2["start_us"] < r1["end_us"]


def test_two_async_ops_outputs(ctx):
    A1, B1, C1, e1 = ag_problem(ctx, 512, 512, 512, seed=7)
    A2, B2, C2, e2 = ag_problem(ctx, 512, 512, 512, seed=8)
    ctx.ops.allgather_gemm(C1, A1, B1, async_op=True)
    ctx.ops.allgather_gemm(C2, A2, B2, async_op=True)
    ctx.synchronize()
    for r in range(RANKS):
        np.testing.assert_array_equal(C1.numpy()[r], e1)
        np.testing.assert_array_equal(C2.numpy()[r], e2)


def test_all_views_and_config(ctx):
    A, B, C, expected = ag_problem(ctx, 256, 256, 256, seed=2)
    ws = ctx.ops.allgather_gemm(C, A, B, config={"all_views": True, "chunk_tiles": 1, "comm_sms": 8})
    res = ws.results
    assert res["knobs"]["chunk_tiles"] == 1
    assert res["compute_only_us"] <= res["pipelined_us"] <= res["seq_comm_us"] + res["seq_compute_us"]
    np.testing.assert_array_equal(C.numpy()[0], expected)


def test_bias_refused_with_the_simulators_message(ctx):
    # allgather_gemm takes no bias (its variant says so); the call is refused, not crashed.
    A, B, C, _ = ag_problem(ctx, 256, 256, 256, seed=0)
    bias = ctx.zeros(1, 256, "fp16")
    with pytest.raises(tandem.Error, match="bias"):
        ctx.ops.allgather_gemm(C, A, B, bias=bias)


def test_bad_calls_raise(ctx):
    A, B, C, _ = ag_problem(ctx, 256, 256, 256, seed=0)
    ws = ctx.ops.allgather_gemm(C, A, B)
    wide = ctx.zeros(256, 512, np.float32)
    # A wrong output is blamed on the output (not on B, which the simulator would name).
    with pytest.raises(ValueError, match="output_tensor is 256 x 512 per rank: allgather_gemm with A 128 x 256 and B "
                                         "256 x 256 per rank writes 256 x 256 per rank"):
        ctx.ops.allgather_gemm(wide, A, B)
    with pytest.raises(TypeError, match="A is bf16: allgather_gemm streaming takes fp16 inputs"):
        ctx.ops.allgather_gemm(C, ctx.zeros(128, 256, "bf16"), B)
    with pytest.raises(tandem.Error, match="A is fp16 and B is bf16"):  # both taken, but not together
        ctx.ops.matmul_all_gather(C, A, ctx.zeros(256, 256, "bf16"))
    A2 = ctx.zeros(128, 512, "fp16")
    B2 = ctx.zeros(512, 256, "fp16")
    with pytest.raises(tandem.Error, match="workspace was made for another shape"):
        ctx.ops.allgather_gemm(C, A2, B2, workspace=ws)
    # A refused parameter is named by its Python keyword (the parameter schema's), not a flag.
    with pytest.raises(tandem.Error, match=r"^allgather_gemm: m=200: M must be a multiple of n\*base-m = 256"):
        ctx.ops.allgather_gemm(ctx.zeros(200, 256, np.float32), ctx.zeros(100, 256, "fp16"), B)
    with pytest.raises(tandem.Error, match=r"base_m=100: base-m must be a positive multiple .*nearest valid: 96$"):
        ctx.ops.allgather_gemm(C, A, B, config={"block_size_m": 100})
    with pytest.raises(tandem.Error, match=r"chunk_tiles=0: .*nearest valid: 1$"):
        ctx.ops.allgather_gemm(C, A, B, config={"chunk_tiles": 0})
    with pytest.raises(tandem.Error, match=r"config\['k'\]: .*read off the call's tensors"):
        ctx.ops.allgather_gemm(C, A, B, config={"k": 256})
    with pytest.raises(tandem.Error, match="fp16 tensor takes numpy float16"):
        A.copy_(np.zeros((RANKS, 128, 256), dtype=np.float32))
    with pytest.raises(tandem.Error, match="expected"):
        ctx.tensor(np.zeros((RANKS, 2, 2), dtype=np.float16)).copy_(np.zeros((RANKS, 3, 2), dtype=np.float16))
    with pytest.raises(TypeError, match=r"config\['variant'\] = 3.5: must be a string"):
        ctx.ops.allgather_gemm(C, A, B, config={"variant": 3.5})
    # The context is still usable.
    ctx.ops.allgather_gemm(C, A, B, workspace=ws)


def test_timing_only_context_gives_the_same_times():
    times = []
    for functional in (True, False):
        ctx = tandem.Context(num_ranks=RANKS, functional=functional)
        A = ctx.zeros(128, 512, "fp16")
        B = ctx.zeros(512, 256, "fp16")
        C = ctx.zeros(256, 256, "fp32")
        times.append(ctx.ops.allgather_gemm(C, A, B).results["pipelined_us"])
    assert times[0] == times[1]


def test_numpy_arrays_where_tensors_are(ctx):
    """A 3-D array is one matrix per rank, a 2-D one the same on every rank; a numpy output is
    written in place (2-D where every rank gets the same result)."""
    rng = np.random.default_rng(11)
    m, k, n = 256, 256, 256
    a = rng.integers(-1, 2, size=(RANKS, m, k)).astype(np.float16)   # matmul_all_reduce: each rank its own A
    b = rng.integers(-1, 2, size=(k, n)).astype(np.float16)          # and the same B everywhere
    expected = sum(a[r].astype(np.float32) @ b.astype(np.float32) for r in range(RANKS))
    out3 = np.zeros((RANKS, m, n), dtype=np.float32)
    ws = ctx.ops.matmul_all_reduce(out3, a, b)
    assert ws.results["pipelined_us"] > 0
    for r in range(RANKS):
        np.testing.assert_array_equal(out3[r], expected)
    out2 = np.zeros((m, n), dtype=np.float32)
    ctx.ops.run("matmul_all_reduce", out2, a, b)
    np.testing.assert_array_equal(out2, expected)
    # Tensors and arrays mix; zeros((rows, cols)) takes Iris's shape tuple.
    out_t = ctx.zeros((m, n), dtype=np.float32)
    ctx.ops.matmul_all_reduce(out_t, ctx.tensor(a), b)
    np.testing.assert_array_equal(out_t.numpy()[1], expected)


def test_numpy_bias_1d_and_async_numpy_output(ctx):
    rng = np.random.default_rng(12)
    m, k_local, n = 256, 256, 256  # M == N: a length-M bias is per row (Iris's rule)
    a = rng.integers(-1, 2, size=(RANKS, m, k_local)).astype(np.float16)  # all_gather_matmul: K split
    b = rng.integers(-1, 2, size=(RANKS * k_local, n)).astype(np.float16)
    bias = rng.integers(-2, 3, size=m).astype(np.float16)
    expected = np.concatenate(list(a), axis=1).astype(np.float32) @ b.astype(np.float32) + bias[:, None]
    out = np.zeros((RANKS, m, n), dtype=np.float32)
    ctx.ops.all_gather_matmul(out, a, b, bias=bias, async_op=True)
    assert not out.any()  # written when the call completes
    ctx.barrier()
    for r in range(RANKS):
        np.testing.assert_array_equal(out[r], expected)


def test_fused_config_and_gpu_only_keys_in_the_all_ranks_api(ctx):
    A, B, C, expected = ag_problem(ctx, 256, 256, 256, seed=3)
    with pytest.warns(UserWarning, match="block_size_k describe a GPU kernel"):
        ctx.ops.allgather_gemm(C, A, B, config={"block_size_k": 32, "block_size_m": 64})
    np.testing.assert_array_equal(C.numpy()[0], expected)
    ws = ctx.ops.allgather_gemm(C, A, B, config=tandem.FusedConfig(block_size_m=64, num_sms=4))
    assert ws.results["pipelined_us"] > 0
    np.testing.assert_array_equal(C.numpy()[1], expected)


def test_timing_only_context_takes_numpy_arrays():
    ctx = tandem.Context(num_ranks=RANKS, functional=False)
    out = np.full((RANKS, 256, 256), 5.0, dtype=np.float32)
    ws = ctx.ops.allgather_gemm(out, np.zeros((128, 256), np.float16), np.zeros((256, 256), np.float16))
    assert ws.results["pipelined_us"] > 0 and (out == 5.0).all()  # no data computed: the output is left alone
