"""Iris's FusedConfig, FusedWorkspace and module layout, ported (conftest.py says what changed):
every import form of Iris's, FusedConfig's defaults and checks, one workspace type on every rank,
its reuse, and the ops namespace."""
import importlib

import numpy as np
import pytest

import tandem.iris as iris
import tandem.iris.ops as ops


@pytest.mark.parametrize("module, name", [
    ("tandem.iris.ops", "FusedConfig"),
    ("tandem.iris.ops.config", "FusedConfig"),
    ("tandem.iris.ops", "FusedWorkspace"),
    ("tandem.iris.ops.workspace", "FusedWorkspace"),
    ("tandem.iris.ops.matmul_all_reduce", "matmul_all_reduce"),
    ("tandem.iris.ops.all_gather_matmul", "all_gather_matmul"),
    ("tandem.iris.ops.matmul_all_gather", "matmul_all_gather"),
    ("tandem.iris.ops.matmul_reduce_scatter", "matmul_reduce_scatter"),
    ("tandem.iris.ops.matmul_all_reduce", "matmul_all_reduce_preamble"),
    ("tandem.iris.ops", "matmul_reduce_scatter"),
])
def test_iris_import_forms(module, name):
    assert callable(getattr(importlib.import_module(module), name))
    assert ops.FusedConfig is iris.FusedConfig and ops.config.FusedConfig is ops.FusedConfig


def test_fused_config_defaults_are_iris_s():
    c = ops.FusedConfig()
    assert (c.block_size_m, c.block_size_n, c.block_size_k, c.group_size_m) == (256, 64, 64, 1)
    assert (c.num_sms, c.num_xcds, c.chunk_size, c.allow_tf32) == (None, 1, 1, True)
    assert (c.all_reduce_variant, c.all_reduce_num_rings, c.reduce_num_sms, c.ksplit) == ("two_shot", 1, 64, False)
    c.validate()
    c.validate(world_size=2)


@pytest.mark.parametrize("field, value", [("block_size_m", 0), ("block_size_n", -64), ("block_size_k", 0),
                                          ("group_size_m", 0), ("num_sms", 0), ("all_reduce_variant", "fast"),
                                          ("all_reduce_num_rings", 0)])
def test_fused_config_validate_refuses(field, value):
    with pytest.raises(ValueError, match=f"FusedConfig.{field}"):
        ops.FusedConfig(**{field: value}).validate()


def test_ring_needs_block_size_n_divisible_by_the_world():
    with pytest.raises(ValueError, match="block_size_n"):
        ops.FusedConfig(all_reduce_variant="ring", block_size_n=48).validate(world_size=5)


def test_async_calls_give_every_rank_the_same_workspace_type():
    """Iris's loop `ws = op(..., workspace=ws, async_op=True)` on every rank, whatever the order
    the ranks arrive in."""
    def body(rank):
        ctx = iris.iris()
        out = ctx.zeros((64, 64), dtype=np.float16)
        ws = None
        kinds = []
        for i in range(3):
            ws = ctx.ops.matmul_all_reduce(out, ctx.ones((64, 32), dtype=np.float16), ctx.ones((32, 64), dtype=np.float16),
                                           workspace=ws, async_op=True)
            kinds.append(type(ws))
            assert ws.operation == "matmul_all_reduce" and ws.world_size == 3 and ws.shape == (64, 64, 32)
        ctx.barrier()
        assert ws.results["pipelined_us"] > 0 and ws.results["sequential_us"] > 0
        return kinds, ws

    per_rank = iris.spawn(body, 3)
    assert {k for kinds, _ in per_rank for k in kinds} == {ops.FusedWorkspace}


def test_a_matching_workspace_is_reused_and_another_replaced():
    def body(rank):
        ctx = iris.iris()
        a, b = ctx.ones((64, 32), dtype=np.float16), ctx.ones((32, 64), dtype=np.float16)
        out = ctx.zeros((64, 64), dtype=np.float16)
        ws = ops.matmul_all_reduce_preamble(ctx, out, a, b)
        assert isinstance(ws, ops.FusedWorkspace) and ws.matches("matmul_all_reduce", (64, 64, 32), np.float16, 2,
                                                                    "two_shot")
        again = ctx.ops.matmul_all_reduce(out, a, b, workspace=ws)
        assert again is ws
        other = ctx.ops.matmul_all_reduce(ctx.zeros((32, 64), dtype=np.float16), a[:32], b, workspace=ws)
        assert other is not ws and other.shape == (32, 64, 32)  # re-made, as Iris re-allocates
        assert np.all(out == 64)

    iris.spawn(body, 2)


def test_ctx_info_get_device_and_the_ops_namespace(capfd):
    def body(rank):
        ctx = iris.iris(1 << 30)
        ctx.info(f"rank {rank} here")
        assert str(ctx.get_device()) == "cpu"
        assert set(dir(ctx.ops)) >= {"matmul_all_reduce", "all_gather_matmul", "matmul_all_gather",
                                     "matmul_reduce_scatter"}
        return ctx.get_rank(), ctx.get_num_ranks(), ctx.cur_rank, ctx.num_ranks

    assert iris.spawn(body, 2) == [(0, 2, 0, 2), (1, 2, 1, 2)]
    err = capfd.readouterr().err
    assert "[Iris] [0/2] rank 0 here" in err and "[Iris] [1/2] rank 1 here" in err


def test_randn_follows_the_global_seed_per_rank(xp):
    def body(rank, same):
        ctx = iris.iris()
        xp.manual_seed(42 if same else 42 + rank)
        return xp.f64(ctx.randn((4, 8), dtype=xp.float32)), xp.f64(ctx.rand(3, dtype=xp.float32))

    same = iris.spawn(body, 3, args=(True,))
    assert all(np.array_equal(same[0][0], r[0]) and np.array_equal(same[0][1], r[1]) for r in same)
    differ = iris.spawn(body, 3, args=(False,))
    assert not np.array_equal(differ[0][0], differ[1][0])
    assert np.array_equal(differ[0][0], same[0][0])  # rank 0's seed is 42 both times


def test_a_tile_larger_than_the_shape_runs_as_iris_masks_it():
    """FusedConfig(block_size_m=512) at M = 256: Iris masks the tile's rows past M; here the
    operands are padded to the tile."""
    def body(rank):
        ctx = iris.iris()
        out = ctx.zeros((256, 64), dtype=np.float16)
        ws = ctx.ops.matmul_all_reduce(out, ctx.ones((256, 32), dtype=np.float16), ctx.ones((32, 64), dtype=np.float16),
                                       config=ops.FusedConfig(block_size_m=512))
        assert np.all(out == 64)
        return ws.results["base_m"]

    assert iris.spawn(body, 2) == [512, 512]


def test_the_warning_names_only_fields_that_are_ignored():
    def body(rank):
        ctx = iris.iris()
        a, b = ctx.ones((64, 32), dtype=np.float16), ctx.ones((32, 64), dtype=np.float16)
        if rank == 0:
            with pytest.warns(UserWarning, match=r"field\(s\) block_size_k, num_xcds describe a GPU kernel"):
                ctx.ops.matmul_all_reduce(ctx.zeros((64, 64), dtype=np.float16), a, b,
                                          config=ops.FusedConfig(block_size_k=32, num_xcds=8, block_size_m=64))
        else:
            ctx.ops.matmul_all_reduce(ctx.zeros((64, 64), dtype=np.float16), a, b,
                                      config=ops.FusedConfig(block_size_k=32, num_xcds=8, block_size_m=64))
        # group_size_m numbers the tiles a rank owns in the full-size reduce-scatter: used, not named.
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ws = ctx.ops.matmul_reduce_scatter(ctx.zeros((64, 64), dtype=np.float32), a, b,
                                               config=ops.FusedConfig(group_size_m=2, block_size_m=32, block_size_n=32))
        assert ws.ignored == []

    iris.spawn(body, 2)


def test_the_variant_of_every_op_and_the_sequential_time():
    def body(rank):
        ctx = iris.iris()
        a = ctx.ones((128, 64), dtype=np.float16)
        b = ctx.ones((128, 128), dtype=np.float16)
        times = {}
        for variant in ("pull", "push", "staged"):
            ws = ctx.ops.all_gather_matmul(ctx.zeros((128, 128), dtype=np.float16), a, b,
                                           config=ops.FusedConfig(variant=variant))
            times[variant] = (ws.variant, ws.results["pipelined_us"], ws.results["sequential_us"])
        with pytest.raises(ValueError, match="FusedConfig.variant = 'fast': all_gather_matmul has the variants pull, "
                                             "push, staged"):
            ctx.ops.all_gather_matmul(ctx.zeros((128, 128), dtype=np.float16), a, b,
                                      config=ops.FusedConfig(variant="fast"))
        return times

    times = iris.spawn(body, 2)[0]
    assert [v for v, _, _ in times.values()] == ["pull", "push", "staged"]
    assert all(fused > 0 and seq > 0 for _, fused, seq in times.values())


def test_a_preamble_with_or_without_the_output():
    def body(rank):
        ctx = iris.iris()
        a, b = ctx.ones((64, 32), dtype=np.float16), ctx.ones((32, 96), dtype=np.float16)
        ws = ops.matmul_reduce_scatter_preamble(ctx, a, b)  # Iris's (ctx, A, B, config)
        assert ws.matches("matmul_reduce_scatter", (64, 96, 32), np.float16, 2, "tile_owner")
        out = ctx.zeros((64, 48), dtype=np.float16)
        assert ctx.ops.matmul_reduce_scatter(out, a, b, workspace=ws) is ws
        ws2 = ops.all_gather_matmul_preamble(ctx, ctx.zeros((64, 96), dtype=np.float16), a, ctx.ones((64, 96), dtype=np.float16),
                                             ops.FusedConfig(variant="push"))
        assert ws2.variant == "push" and ws2.shape == (64, 96, 64)
        assert np.all(out == 64)

    iris.spawn(body, 2)
