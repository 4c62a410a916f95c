"""tandem.iris: Iris's per-rank programs (spawn, iris(), ctx.ops.<op>, FusedConfig) on the
simulated cluster; Iris's shapes (padded to tiles inside), bias, async calls, and the errors a
rank gets when the ranks do not meet."""
import time

import numpy as np
import pytest

import tandem
import tandem.iris as iris


def ints(rng, shape, dtype=np.float16):
    """Small integers: every product and sum below is exact in fp16 and fp32."""
    return rng.integers(-1, 2, size=shape).astype(dtype)


def test_spawn_runs_every_rank_and_returns_their_values():
    def fn(rank, offset):
        ctx = iris.iris(1 << 20)
        assert iris.iris() is ctx  # one handle per rank
        ctx.barrier()
        return (ctx.get_rank(), ctx.get_num_ranks(), offset)

    assert iris.spawn(fn, 3, args=(7,)) == [(0, 3, 7), (1, 3, 7), (2, 3, 7)]


def test_iris_outside_spawn_says_how_to_use_it():
    with pytest.raises(RuntimeError, match="spawn"):
        iris.iris()


def test_all_gather_matmul_iris_example_defaults():
    # Iris's example 29: world 2, M 512, K_local 128, N 256 (K_local is not a whole 256-wide tile).
    w, m, k_local, n = 2, 512, 128, 256
    rng = np.random.default_rng(1)
    shards = [ints(rng, (m, k_local)) for _ in range(w)]
    b = ints(rng, (w * k_local, n))
    expected = np.concatenate(shards, axis=1).astype(np.float32) @ b.astype(np.float32)

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=np.float16)
        ws = ctx.ops.all_gather_matmul(out, A_sharded=shards[rank], B=b)
        assert ws.operation == "all_gather_matmul" and ws.shape == (m, n, w * k_local) and ws.world_size == w
        assert ws.results["pipelined_us"] > 0
        return out

    for out in iris.spawn(fn, w):
        np.testing.assert_array_equal(out.astype(np.float32), expected)


def test_matmul_reduce_scatter_four_ranks_64_tiles():
    # Iris's reduce-scatter test shape at world 4: N 128, 64 x 64 tiles; rank r gets columns
    # [r*N/4, (r+1)*N/4) of the sum.
    w, m, k, n = 4, 96, 80, 128
    rng = np.random.default_rng(2)
    a = [ints(rng, (m, k)) for _ in range(w)]
    b = [ints(rng, (k, n)) for _ in range(w)]
    total = sum(a[r].astype(np.float32) @ b[r].astype(np.float32) for r in range(w))
    cfg = iris.FusedConfig(block_size_m=64, block_size_n=64, block_size_k=32)

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n // w), dtype=np.float16)
        if rank == 0:
            with pytest.warns(UserWarning, match="block_size_k describe a GPU kernel"):
                ws = ctx.ops.matmul_reduce_scatter(out, a[rank], b[rank], config=cfg)
        else:
            ws = ctx.ops.matmul_reduce_scatter(out, a[rank], b[rank], config=cfg)
        assert ws.ignored == ["block_size_k"]  # no Ascend counterpart: accepted, listed
        return out

    for r, out in enumerate(iris.spawn(fn, w)):
        np.testing.assert_array_equal(out.astype(np.float32), total[:, r * n // w:(r + 1) * n // w])


def test_matmul_all_gather_odd_shape_and_row_bias():
    w, m_local, k, n = 2, 100, 70, 90
    rng = np.random.default_rng(3)
    a = [ints(rng, (m_local, k)) for _ in range(w)]
    b = ints(rng, (k, n))
    bias = ints(rng, (m_local * w,))  # length M: one value per row
    expected = np.concatenate(a).astype(np.float32) @ b.astype(np.float32) + bias.astype(np.float32)[:, None]

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m_local * w, n), dtype=np.float32)
        iris.ops.matmul_all_gather(ctx, out, a[rank], b, bias=bias)  # the module function
        return out

    for out in iris.spawn(fn, w):
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("variant", ["atomic", "one_shot", "two_shot", "ring"])
def test_matmul_all_reduce_variants_and_column_bias(variant):
    w, m, k, n = 2, 100, 50, 72
    rng = np.random.default_rng(4)
    a = [ints(rng, (m, k)) for _ in range(w)]
    b = [ints(rng, (k, n)) for _ in range(w)]
    bias = ints(rng, (n,))  # length N: one value per column
    expected = sum(a[r].astype(np.float32) @ b[r].astype(np.float32) for r in range(w)) + bias.astype(np.float32)

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=np.float32)
        ws = ctx.ops.matmul_all_reduce(out, a[rank], b[rank], bias=bias,
                                       config={"all_reduce_variant": variant, "block_size_n": 32})
        assert ws.variant == variant
        return out

    for out in iris.spawn(fn, w):
        np.testing.assert_array_equal(out, expected)


def test_async_calls_complete_at_the_barrier():
    w, m, k, n = 2, 64, 32, 48
    rng = np.random.default_rng(5)
    a = [ints(rng, (m, k)) for _ in range(w)]
    b = [ints(rng, (k, n)) for _ in range(w)]
    expected = sum(a[r].astype(np.float32) @ b[r].astype(np.float32) for r in range(w))

    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=np.float32)
        ws = ctx.ops.matmul_all_reduce(out, a[rank], b[rank], async_op=True)
        ctx.barrier()
        assert ws.results["pipelined_us"] > 0
        return out

    for out in iris.spawn(fn, w):
        np.testing.assert_array_equal(out, expected)


def test_timing_only_world_gives_times():
    def fn(rank):
        ctx = iris.iris()
        out = ctx.zeros((256, 128), dtype=np.float16)
        return ctx.ops.matmul_all_reduce(out, ctx.ones((256, 512)), ctx.ones((512, 128))).results["pipelined_us"]

    times = iris.spawn(fn, 2, functional=False)
    assert times[0] == times[1] > 0


@pytest.mark.parametrize("field,value", [("block_size_m", -64), ("block_size_m", 0), ("block_size_n", 100),
                                         ("block_size_k", 0), ("num_sms", 0), ("gemm_sms", -1), ("comm_sms", 2.5),
                                         ("all_reduce_variant", "fast"), ("chunk_size", True)])
def test_bad_fused_config_is_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=f"FusedConfig.{field}"):
        iris.FusedConfig(**{field: value}).validate()


def test_unknown_config_key_and_wrong_shapes_are_refused_in_iris_words():
    def fn(rank):
        ctx = iris.iris()
        a, b = ctx.ones((64, 32)), ctx.ones((32, 16))
        with pytest.raises(ValueError, match="FusedConfig has no field 'blk_m'"):
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), a, b, config={"blk_m": 64})
        with pytest.raises(ValueError, match="output_tensor is 64 x 32 on rank .*writes 64 x 16"):
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 32)), a, b)
        with pytest.raises(ValueError, match="B has 32 rows .*K = world_size x K_local = 2 x 32 = 64"):
            ctx.ops.all_gather_matmul(ctx.zeros((64, 16)), a, b)
        with pytest.raises(TypeError, match="A is float64 on rank .*float16, float32 or int8"):
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), np.ones((64, 32)), b)
        with pytest.raises(TypeError, match="A_sharded: a tensor"):
            ctx.ops.all_gather_matmul(ctx.zeros((64, 16)), [[1.0]], b)

    iris.spawn(fn, 2)


def test_ranks_with_different_shapes_all_get_the_error():
    def fn(rank):
        ctx = iris.iris()
        m = 64 if rank == 0 else 32
        with pytest.raises(ValueError, match="output_tensor is .* on rank 1 but .* on rank 0"):
            ctx.ops.matmul_all_reduce(ctx.zeros((m, 16)), ctx.ones((m, 32)), ctx.ones((32, 16)))

    iris.spawn(fn, 2)


def test_a_rank_that_does_not_call_is_named_not_waited_for():
    def fn(rank):
        ctx = iris.iris()
        if rank == 1:
            return  # never calls
        with pytest.raises(iris.RanksDidNotMeet, match="rank 1 returned without calling it"):
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)))

    start = time.monotonic()
    iris.spawn(fn, 2)
    assert time.monotonic() - start < 30  # named at once, not after the timeout


def test_a_late_rank_times_out_naming_the_missing_ranks():
    def fn(rank):
        ctx = iris.iris()
        if rank == 2:
            time.sleep(1.0)
        with pytest.raises(iris.RanksDidNotMeet, match=r"called by rank\(s\) 0, 1 but not by rank\(s\) 2 within 0.3 s"):
            ctx.barrier()

    iris.spawn(fn, 3, timeout_s=0.3)


def test_a_rank_error_is_raised_by_spawn():
    def fn(rank):
        if rank == 1:
            raise KeyError("boom")
        iris.iris().barrier()

    with pytest.raises(KeyError, match="boom"):
        iris.spawn(fn, 2)


def test_tandem_errors_reach_every_rank():
    def fn(rank):
        ctx = iris.iris()
        with pytest.raises(ValueError, match="spinlock"):
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)),
                                      config=iris.FusedConfig(all_reduce_variant="spinlock"))

    iris.spawn(fn, 2)
    assert issubclass(iris.Error, RuntimeError) and iris.Error is tandem.Error


@pytest.mark.parametrize("script,args", [
    # Iris's ops examples 28 to 31 as ported (docs/IRIS.md), on small shapes that are not tile multiples.
    ("iris_matmul_all_reduce.py", ["--num_ranks", "2", "-m", "96", "-k", "40", "-n", "72", "--variant", "atomic"]),
    ("iris_matmul_all_reduce.py", ["--num_ranks", "3", "-m", "64", "-k", "32", "-n", "48", "--datatype", "fp32"]),
    ("iris_all_gather_matmul.py", ["--num_ranks", "2", "-m", "96", "--k_local", "40", "-n", "64"]),
    ("iris_all_gather_matmul.py", ["--num_ranks", "2", "-m", "64", "--k_local", "64", "-n", "64", "--variant", "push"]),
    ("iris_matmul_all_gather.py", ["--num_ranks", "2", "-m", "100", "-k", "40", "-n", "72"]),
    ("iris_matmul_all_gather.py", ["--num_ranks", "4", "-m", "64", "-k", "32", "-n", "32"]),
    ("iris_matmul_reduce_scatter.py", ["--num_ranks", "2", "-m", "64", "-k", "48", "-n", "96"]),
    ("iris_matmul_reduce_scatter.py", ["--num_ranks", "3", "-m", "70", "-k", "32", "-n", "100", "--full_output"]),
])
def test_the_iris_example_scripts_run(script, args):
    import os
    import subprocess
    import sys
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "python", "examples", script)
    done = subprocess.run([sys.executable, path] + args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "[Iris] [0/" in done.stderr and "Validation passed" in done.stderr, done.stderr


def test_sms_fields_set_the_block_counts():
    w, m, k, n = 2, 1024, 512, 1024

    def fn(rank, cfg):
        ctx = iris.iris()
        out = ctx.zeros((m, n), dtype=np.float16)
        return ctx.ops.matmul_all_reduce(out, ctx.ones((m, k)), ctx.ones((k, n)), config=cfg).results

    default = iris.spawn(fn, w, args=(None,), functional=False)[0]
    fewer = iris.spawn(fn, w, args=(iris.FusedConfig(gemm_sms=2, comm_sms=2),), functional=False)[0]
    same = iris.spawn(fn, w, args=(iris.FusedConfig(num_sms=2, comm_sms=2),), functional=False)[0]
    assert fewer["pipelined_us"] > 1.5 * default["pipelined_us"]  # 2 AI cores instead of every one
    assert same["pipelined_us"] == fewer["pipelined_us"]        # num_sms and gemm_sms: one meaning


def iris_owned_tiles(m, n, w, block_m, block_n, group_m=1):
    """Iris's tile path of matmul_reduce_scatter, written out from its rule for the test: the
    (M, N) output in block_m x block_n tiles, tile ids walked as Triton's grouped matmul tutorial
    walks them (pid_m, pid_n from the id with GROUP_SIZE_M); rank r owns the contiguous ids
    [r * (T // W), (r + 1) * (T // W)), the last rank also the remainder."""
    num_pid_m, num_pid_n = -(-m // block_m), -(-n // block_n)
    total = num_pid_m * num_pid_n
    per = total // w
    owner = np.zeros((m, n), dtype=int)
    for pid in range(total):
        num_pid_in_group = group_m * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * group_m
        group_size_m = min(num_pid_m - first_pid_m, group_m)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        r = min(pid // per, w - 1) if per else w - 1
        owner[pid_m * block_m:(pid_m + 1) * block_m, pid_n * block_n:(pid_n + 1) * block_n] = r
    return owner


@pytest.mark.parametrize("w,m,k,n,config", [
    (4, 96, 80, 128, {"block_size_m": 64, "block_size_n": 64}),  # 2 x 2 tiles: one per rank
    (3, 300, 40, 200, None),                                     # Iris's default 256 x 64 tiles: 8, 2 + 2 + 4
    (2, 100, 48, 90, {"block_size_m": 32, "block_size_n": 32}),  # N not a multiple of the world; 12 + 12 tiles
    (4, 50, 16, 30, {"block_size_m": 64, "block_size_n": 64}),   # one tile: ranks 0-2 own none, rank 3 all
    (3, 200, 32, 96, {"block_size_m": 32, "block_size_n": 32, "group_size_m": 3}),  # 7 x 3 tiles in groups of
                                                                                    # 3 rows (the last of 1)
    (2, 128, 32, 96, {"block_size_m": 32, "block_size_n": 32, "group_size_m": 2}),  # 4 x 3: a rank owns a group
])
def test_matmul_reduce_scatter_full_size_output_is_written_on_the_owned_tiles(w, m, k, n, config):
    rng = np.random.default_rng(6)
    a = [ints(rng, (m, k)) for _ in range(w)]
    b = [ints(rng, (k, n)) for _ in range(w)]
    bias = ints(rng, (n,))
    total = sum(a[r].astype(np.float32) @ b[r].astype(np.float32) for r in range(w)) + bias.astype(np.float32)
    cfg = iris.FusedConfig(**(config or {}))
    owner = iris_owned_tiles(m, n, w, cfg.block_size_m, cfg.block_size_n, cfg.group_size_m)

    def fn(rank):
        ctx = iris.iris()
        out = np.full((m, n), -7.0, dtype=np.float32)  # what the rank's output held before
        ws = ctx.ops.matmul_reduce_scatter(out, a[rank], b[rank], bias=bias, config=config)
        assert ws.shape == (m, n, k)
        assert "group_size_m" not in ws.ignored  # it numbers the tiles of this form
        return out

    for r, out in enumerate(iris.spawn(fn, w)):
        mine = owner == r
        np.testing.assert_array_equal(out[mine], total[mine])
        assert (out[~mine] == -7.0).all()  # the tiles other ranks own are left as they were


def test_matmul_reduce_scatter_output_of_neither_form_names_both():
    def fn(rank):
        ctx = iris.iris()
        with pytest.raises(ValueError, match=r"output_tensor is 64 x 30 on rank .* writes 64 x 16 \(or 64 x 32, the "
                                             "full-size tile-owner form\\)"):
            ctx.ops.matmul_reduce_scatter(ctx.zeros((64, 30)), ctx.ones((64, 32)), ctx.ones((32, 32)))
        with pytest.raises(ValueError, match="writes either M x N = 64 x 31 .* multiple of world_size = 2"):
            ctx.ops.matmul_reduce_scatter(ctx.zeros((64, 15)), ctx.ones((64, 32)), ctx.ones((32, 31)))

    iris.spawn(fn, 2)


def _two_calls(rank):
    """An Iris program of two op calls (the second async) and a barrier between them."""
    ctx = iris.iris()
    rng = np.random.default_rng(rank)
    out = ctx.zeros((64, 48), dtype=np.float16)
    first = ctx.ops.all_gather_matmul(out, ints(rng, (64, 32)), ints(np.random.default_rng(9), (64, 48)))
    ctx.barrier()
    second = ctx.ops.matmul_all_reduce(out, ints(rng, (64, 32)), ints(rng, (32, 48)), async_op=True)
    ctx.barrier()
    return first, second


def test_spawn_traces_each_op_call_unchanged(tmp_path):
    import json
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "prof_analysis"))
    try:
        import report
        import tandem_trace
    finally:
        sys.path.pop(0)
    plain = iris.spawn(_two_calls, 2)
    traced = iris.spawn(_two_calls, 2, trace=tmp_path / "traces", trace_ranks=[1])
    files = sorted(p.name for p in (tmp_path / "traces").iterdir())
    assert files == ["000_all_gather_matmul.json", "001_matmul_all_reduce.json"]  # barriers are not op calls
    for call, name in enumerate(files):
        ws = traced[0][call]
        assert ws.trace == str(tmp_path / "traces" / name) and traced[1][call].trace == ws.trace
        assert ws.results["pipelined_us"] == plain[0][call].results["pipelined_us"]  # tracing changes no time
        t = json.loads((tmp_path / "traces" / name).read_text())
        assert t["otherData"]["op"] == ws.operation
        assert t["otherData"]["view_end_us"] - t["otherData"]["view_start_us"] == pytest.approx(
            ws.results["pipelined_us"], abs=1e-6)
        assert {e["pid"] for e in t["traceEvents"] if e["ph"] == "X"} == {1}
        assert report.analyze(tandem_trace.load_trace(str(tmp_path / "traces" / name)))["warnings"] == []
    assert plain[0][0].trace is None


@pytest.mark.parametrize("kwargs, error, words", [
    ({"trace": "a_file"}, ValueError, "spawn: trace = 'a_file' is a file: give a directory"),
    ({"trace": 3}, TypeError, "spawn: trace = 3: a directory"),
    ({"trace_ranks": [0]}, ValueError, "spawn: trace_ranks = [0] without trace"),
    ({"trace": "d", "trace_ranks": "0,2"}, ValueError, "spawn: trace_ranks = '0,2': rank 2 does not exist (2 ranks)"),
    ({"trace": "d", "trace_ranks": [True]}, TypeError, "spawn: trace_ranks = [True]: ranks, as a list"),
])
def test_spawn_refuses_a_bad_trace_request_before_any_rank_runs(tmp_path, monkeypatch, kwargs, error, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("")
    ran = []
    with pytest.raises(error) as info:
        iris.spawn(lambda rank: ran.append(rank), 2, **kwargs)
    assert words in str(info.value)
    assert ran == [] and not (tmp_path / "d").exists()  # nothing made for a request refused
