"""Bad calls, as Python users make them, across both APIs (tandem.Context's all-ranks ctx.ops and
tandem.iris's per-rank ctx.ops): each is refused with ONE line naming the argument at fault, as a
tandem.Error, ValueError or TypeError; never a pybind cast message or a list of signatures."""
import gc
import warnings

import numpy as np
import pytest

import tandem
import tandem.iris as iris

F16, F32 = np.float16, np.float32


def all_ranks_calls():
    """(what is wrong, the argument the message must name, the call) on a 2-rank tandem.Context."""
    ctx = tandem.Context(num_ranks=2)
    A, B, C = ctx.zeros(128, 256, "fp16"), ctx.zeros(256, 256, "fp16"), ctx.zeros(256, 256, "fp32")
    A_cols = ctx.zeros(256, 128, "fp16")  # all_gather_matmul's shard: K split by columns
    return [
        ("num_ranks a string", "num_ranks", lambda: tandem.Context(num_ranks="2")),
        ("functional not a bool", "functional", lambda: tandem.Context(num_ranks=2, functional="no")),
        ("a keyword Context does not take", "ranks", lambda: tandem.Context(ranks=2)),
        ("zeros with a text size", "zeros", lambda: ctx.zeros("a", 3)),
        ("an unknown dtype", "dtype", lambda: ctx.zeros(3, 4, dtype="fp64")),
        ("an int16 numpy dtype", "dtype", lambda: ctx.zeros(3, 4, dtype=np.int16)),
        ("an int8 tensor's bias", "bias",
         lambda: ctx.ops.matmul_all_reduce(C, ctx.zeros(256, 256, "int8"), ctx.zeros(256, 256, "int8"),
                                           bias=np.ones(256, np.int8))),
        ("tensor() of a list", "array", lambda: ctx.tensor([1, 2])),
        ("tensor() of 3 matrices on 2 ranks", "array", lambda: ctx.tensor(np.zeros((3, 2, 2), F16))),
        ("copy_ of a list", "array", lambda: A.copy_([1])),
        ("output a list", "output_tensor", lambda: ctx.ops.allgather_gemm([[0]], A, B)),
        ("output float64", "output_tensor", lambda: ctx.ops.allgather_gemm(np.zeros((2, 256, 256)), A, B)),
        ("output the wrong shape", "output_tensor", lambda: ctx.ops.allgather_gemm(ctx.zeros(256, 512, "fp32"), A, B)),
        ("a 2-D output where each rank has its own result", "output_tensor",
         lambda: ctx.ops.matmul_reduce_scatter(np.zeros((256, 128), F32), ctx.zeros(256, 256), ctx.zeros(256, 256))),
        ("A a string", "A", lambda: ctx.ops.allgather_gemm(C, "x", B)),
        ("A float64", "A", lambda: ctx.ops.allgather_gemm(C, np.zeros((128, 256)), B)),
        ("A fp32 where the op takes fp16 only", "A",
         lambda: ctx.ops.allgather_gemm(C, ctx.zeros(128, 256, "fp32"), B)),
        ("B with the wrong K", "B", lambda: ctx.ops.allgather_gemm(C, A, ctx.zeros(128, 256))),
        ("bias a list", "bias", lambda: ctx.ops.all_gather_matmul(C, A_cols, B, bias=[1.0])),
        ("bias of neither length", "bias",
         lambda: ctx.ops.all_gather_matmul(C, A_cols, B, bias=np.ones(7, F16))),
        ("bias for an op that takes none", "bias", lambda: ctx.ops.allgather_gemm(C, A, B, bias=np.ones(256, F16))),
        ("async_op a string", "async_op", lambda: ctx.ops.allgather_gemm(C, A, B, async_op="yes")),
        ("sanitize an int", "sanitize", lambda: ctx.ops.allgather_gemm(C, A, B, sanitize=1)),
        ("config a list", "config", lambda: ctx.ops.allgather_gemm(C, A, B, config=[1])),
        ("a negative tile", "block_size_m", lambda: ctx.ops.allgather_gemm(C, A, B, config={"block_size_m": -64})),
        ("a zero tile", "base_m", lambda: ctx.ops.allgather_gemm(C, A, B, config={"base_m": 0})),
        ("a tile off the fractal", "base_m", lambda: ctx.ops.allgather_gemm(C, A, B, config={"block_size_m": 100})),
        ("block_size_k zero", "block_size_k", lambda: ctx.ops.allgather_gemm(C, A, B, config={"block_size_k": 0})),
        ("a text tile", "block_size_m", lambda: ctx.ops.allgather_gemm(C, A, B, config={"block_size_m": "a"})),
        ("a FusedConfig off the fractal", "block_size_n",
         lambda: ctx.ops.allgather_gemm(C, A, B, config=tandem.FusedConfig(block_size_n=100))),
        ("a knob no variant has", "nope_knob", lambda: ctx.ops.allgather_gemm(C, A, B, config={"nope_knob": 1})),
        ("workspace an int", "workspace", lambda: ctx.ops.allgather_gemm(C, A, B, workspace=3)),
        ("an op name that is not a string", "op", lambda: ctx.ops.run(3, C, A, B)),
        ("a keyword the op does not take", "blk", lambda: ctx.ops.allgather_gemm(C, A, B, blk=1)),
        ("num_ranks beyond a C int", "num_ranks", lambda: tandem.Context(num_ranks=2**40)),
        ("host_threads beyond a C int", "host_threads", lambda: tandem.Context(num_ranks=2, host_threads=2**40)),
        ("host_threads beyond the limit", "host_threads", lambda: tandem.Context(num_ranks=2, host_threads=2000)),
        ("zeros beyond a C int", "zeros", lambda: ctx.zeros(2**31, 1, "fp32")),
        ("zeros with dtype None", "dtype", lambda: ctx.zeros(4, 4, None)),
        ("a tile beyond a C int", "base_m", lambda: ctx.ops.allgather_gemm(C, A, B, config={"base_m": 2**40})),
        ("a knob beyond a C int", "chunk_tiles", lambda: ctx.ops.allgather_gemm(C, A, B, config={"chunk_tiles": 2**63})),
        ("timing_only in a call's config", "functional=False",
         lambda: ctx.ops.allgather_gemm(C, A, B, config={"timing_only": True})),
        ("a parameter and its alias both", "gemm_sms",
         lambda: ctx.ops.allgather_gemm(C, A, B, config={"gemm_sms": 4, "compute_blocks": 8})),
        ("a router word and its exponent both", "zipf_s_pct",
         lambda: tandem.Context(num_ranks=2, functional=False).ops.moe_ffn(
             np.zeros((16, 256), F16), np.ones((2, 16, 256), F16), np.zeros((256, 256), F16),
             config={"routing": "zipf:1", "zipf_s_pct": 500, "topk": 2, "experts_per_rank": 2})),
        ("numpy() of a timing-only tensor", "numpy()",
         lambda: tandem.Context(num_ranks=2, functional=False).zeros(2, 2).numpy()),
        ("copy_() into a timing-only tensor", "copy_()",
         lambda: tandem.Context(num_ranks=2, functional=False).zeros(2, 2).copy_(np.zeros((2, 2), F16))),
        ("an output that gives the wrong M", "output_tensor",
         lambda: ctx.ops.allgather_gemm(ctx.zeros(128, 256, "fp32"), A, B)),
    ]


IRIS_CALLS = [
    # (what is wrong, the argument the message must name, the call on this rank's handle)
    ("a shape of text", "shape", lambda ctx: ctx.zeros("a")),
    ("an int64 dtype", "dtype", lambda ctx: ctx.zeros((2, 2), dtype=np.int64)),
    ("heap_size a string", "heap_size", lambda ctx: iris.iris("big")),
    ("output a list", "output_tensor", lambda ctx: ctx.ops.matmul_all_reduce([[0]], ctx.ones((64, 32)), ctx.ones((32, 16)))),
    ("output int32", "output_tensor",
     lambda ctx: ctx.ops.matmul_all_reduce(np.zeros((64, 16), np.int32), ctx.ones((64, 32)), ctx.ones((32, 16)))),
    ("output read-only", "output_tensor",
     lambda ctx: ctx.ops.matmul_all_reduce(np.broadcast_to(ctx.zeros((64, 16)), (64, 16)), ctx.ones((64, 32)),
                                           ctx.ones((32, 16)))),
    ("output the wrong shape", "output_tensor",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 32)), ctx.ones((64, 32)), ctx.ones((32, 16)))),
    ("A float64", "A", lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), np.ones((64, 32)), ctx.ones((32, 16)))),
    ("A float32 and B float16", "B",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32), dtype=F32), ctx.ones((32, 16), dtype=F16))),
    ("A_sharded a list", "A_sharded",
     lambda ctx: ctx.ops.all_gather_matmul(ctx.zeros((64, 16)), [[1.0]], ctx.ones((64, 16)))),
    ("B 1-D", "B", lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), np.ones(32, F16))),
    ("B with the wrong K", "B",
     lambda ctx: ctx.ops.all_gather_matmul(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)))),
    ("bias 2-D", "bias",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)),
                                           bias=np.ones((1, 16), F16))),
    ("bias int32", "bias",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)),
                                           bias=np.ones(16, np.int32))),
    ("async_op a string", "async_op",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)), async_op="yes")),
    ("config a list", "config",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)), config=[64])),
    ("block_size_k zero", "block_size_k",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)),
                                           config={"block_size_k": 0})),
    ("block_size_m negative", "block_size_m",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)),
                                           config=iris.FusedConfig(block_size_m=-64))),
    ("allow_tf32 a string", "allow_tf32",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)),
                                           config={"allow_tf32": "no"})),
    ("a FusedConfig field Iris does not have", "blk_m",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)),
                                           config={"blk_m": 64})),
    ("workspace an int", "workspace",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)), workspace=3)),
    ("the module function without the handle", "handle",
     lambda ctx: iris.ops.matmul_all_reduce(None, ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)))),
    ("a tile the cube's L0C cannot hold", "FusedConfig.block_size_n = 1024",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)),
                                           config=iris.FusedConfig(block_size_n=1024))),
    ("a variant Tandem has no replica of", "all_reduce_variant",
     lambda ctx: ctx.ops.matmul_all_reduce(ctx.zeros((64, 16)), ctx.ones((64, 32)), ctx.ones((32, 16)),
                                           config={"all_reduce_variant": "spinlock"})),
]


def assert_one_line_naming(what, argument, error):
    message = str(error)
    assert isinstance(error, (tandem.Error, ValueError, TypeError)), f"{what}: {type(error).__name__}: {message}"
    assert "\n" not in message, f"{what}: more than one line: {message!r}"
    for pybind in ("pybind", "C++ type", "incompatible function arguments", "Invoked with"):
        assert pybind not in message, f"{what}: a pybind message: {message!r}"
    assert argument in message, f"{what}: does not name {argument}: {message!r}"


def run_all(calls):
    """Each call's exception (None if it did not raise)."""
    errors = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the GPU-only fields' warning is tested elsewhere
        for _, _, call in calls:
            try:
                call()
                errors.append(None)
            except Exception as e:  # noqa: BLE001 (what each raises is what is checked)
                errors.append(e)
    return errors


def test_at_least_twenty_bad_calls_of_each_api():
    assert len(all_ranks_calls()) >= 20 and len(IRIS_CALLS) >= 20


def test_bad_all_ranks_calls_are_one_line_naming_the_argument():
    calls = all_ranks_calls()
    for (what, argument, _), error in zip(calls, run_all(calls)):
        assert error is not None, f"{what}: accepted"
        assert_one_line_naming(what, argument, error)


def test_bad_iris_calls_are_one_line_naming_the_argument():
    def fn(rank):
        ctx = iris.iris()
        return run_all([(what, argument, lambda call=call: call(ctx)) for what, argument, call in IRIS_CALLS])

    for errors in iris.spawn(fn, 2):  # each rank gets its own error, the same on every rank
        for (what, argument, _), error in zip(IRIS_CALLS, errors):
            assert error is not None, f"{what}: accepted"
            assert_one_line_naming(what, argument, error)


@pytest.mark.parametrize("value", [-64, 0])
def test_a_tile_of_zero_or_less_is_refused_not_replaced(value):
    ctx = tandem.Context(num_ranks=2, functional=False)
    A, B, C = ctx.zeros(128, 256, "fp16"), ctx.zeros(256, 256, "fp16"), ctx.zeros(256, 256, "fp32")
    with pytest.raises(ValueError, match=rf"config\['block_size_n'\] = {value}: must be a positive integer"):
        ctx.ops.allgather_gemm(C, A, B, config={"block_size_n": value})


def test_warmup_runs_takes_zero_and_is_refused_outside_its_range():
    # The schema's range (0..100) decides, not the rule for sizes: warmup_runs=0 is the default
    # said out loud, and gives the same figures as leaving it out.
    ctx = tandem.Context(num_ranks=2, functional=False)
    A, B, C = ctx.zeros(128, 256, "fp16"), ctx.zeros(256, 256, "fp16"), ctx.zeros(256, 256, "fp32")
    default = ctx.ops.allgather_gemm(C, A, B).results
    zero = ctx.ops.allgather_gemm(C, A, B, config={"warmup_runs": 0}).results
    assert zero["pipelined_us"] == default["pipelined_us"]
    with pytest.raises(ValueError, match=r"config\['warmup_runs'\] = -1: must be an integer of at least 0"):
        ctx.ops.allgather_gemm(C, A, B, config={"warmup_runs": -1})
    with pytest.raises(tandem.Error, match=r"warmup_runs.*101"):
        ctx.ops.allgather_gemm(C, A, B, config={"warmup_runs": 101})
    params = {p["name"]: p for p in tandem._core.parameters()}
    assert (params["warmup_runs"]["min"], params["warmup_runs"]["max"]) == (0, 100)


def test_bad_spawn_arguments_name_the_argument():
    def fn(rank):
        return rank

    calls = [("fn not callable", "fn", lambda: iris.spawn(3, 2)),
             ("nprocs a bool", "nprocs", lambda: iris.spawn(fn, True)),
             ("nprocs past the ranks a context has", "nprocs", lambda: iris.spawn(fn, 100000)),
             ("args an int", "args", lambda: iris.spawn(fn, 2, 5)),
             ("timeout_s negative", "timeout_s", lambda: iris.spawn(fn, 2, timeout_s=-1)),
             ("timeout_s NaN", "timeout_s", lambda: iris.spawn(fn, 2, timeout_s=float("nan"))),
             ("timeout_s a string", "timeout_s", lambda: iris.spawn(fn, 2, timeout_s="1")),
             ("an unknown SoC", "Ascend999", lambda: iris.spawn(fn, 2, soc="Ascend999"))]
    for (what, argument, _), error in zip(calls, run_all(calls)):
        assert error is not None, f"{what}: accepted"
        assert_one_line_naming(what, argument, error)
    assert iris.spawn(fn, 2, (), timeout_s=5) == [0, 1]


def test_a_context_dropped_with_an_async_call_pending_writes_its_output():
    ctx = tandem.Context(num_ranks=2)
    A, B = np.ones((2, 128, 256), F16), np.ones((256, 256), F16)
    out = np.zeros((2, 256, 256), F32)
    ws = ctx.ops.allgather_gemm(out, A, B, async_op=True)
    del ctx
    gc.collect()  # the pending write-back refers to the context: a cycle, collected here
    assert ws.results["complete"]
    assert np.all(out == 256.0)
