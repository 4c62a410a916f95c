"""Iris's tests/ops/test_matmul_all_reduce.py, ported (conftest.py says what changed)."""
import pytest

import tandem.iris as iris
from tandem.iris.ops import FusedConfig
from tandem.iris.ops.matmul_all_reduce import matmul_all_reduce

from conftest import dtype_of

TOLERANCES = {"float16": (0.2, 0.01), "float32": (0.3, 0.01), "bfloat16": (2.5, 0.02)}  # Iris's (atol, rtol)
VARIANTS = ["atomic", "one_shot", "two_shot", "ring"]


def _inputs(xp, rank, M, N, K, dtype):
    xp.manual_seed(42 + rank)
    return xp.randn(M, K, dtype=dtype), xp.randn(K, N, dtype=dtype)


@pytest.mark.parametrize("dtype_name", ["float16", "float32", "bfloat16"])
@pytest.mark.parametrize("M, N, K", [(128, 64, 32), (256, 192, 96)])
@pytest.mark.parametrize("variant", VARIANTS)
def test_matmul_all_reduce(xp, dtype_name, M, N, K, variant):
    dtype = dtype_of(xp, dtype_name)
    atol, rtol = TOLERANCES[dtype_name]

    def body(rank):
        shmem = iris.iris(2**33)
        rank = shmem.get_rank()
        world_size = shmem.get_num_ranks()
        A_local, B_local = _inputs(xp, rank, M, N, K, dtype)
        expected = sum(xp.matmul(*_inputs(xp, r, M, N, K, dtype)) for r in range(world_size))  # dist.all_reduce
        A = shmem.zeros((M, K), dtype=dtype)
        B = shmem.zeros((K, N), dtype=dtype)
        A[:], B[:] = A_local, B_local
        output = shmem.zeros((M, N), dtype=dtype)
        shmem.barrier()
        config = FusedConfig(all_reduce_variant=variant)
        workspace = matmul_all_reduce(shmem, output, A, B, config=config)
        shmem.barrier()
        assert workspace.variant == variant
        assert xp.allclose(output, expected, atol=atol, rtol=rtol), f"rank {rank}"

    iris.spawn(body, 2)


@pytest.mark.parametrize("bias_len", ["M", "N"])
def test_matmul_all_reduce_with_bias(xp, bias_len):
    M, N, K = 128, 96, 64

    def body(rank):
        shmem = iris.iris(2**33)
        world_size = shmem.get_num_ranks()
        A, B = _inputs(xp, rank, M, N, K, xp.float16)
        xp.manual_seed(7)
        bias = xp.randn(M if bias_len == "M" else N, dtype=xp.float16)
        expected = sum(xp.matmul(*_inputs(xp, r, M, N, K, xp.float16)) for r in range(world_size))
        expected = expected + (xp.f64(bias)[:, None] if bias_len == "M" else xp.f64(bias)[None, :])
        output = shmem.zeros((M, N), dtype=xp.float16)
        shmem.ops.matmul_all_reduce(output, A, B, bias)  # the bias reaches the op (Iris's OpsNamespace drops it)
        assert xp.allclose(output, expected, atol=0.2, rtol=0.01)

    iris.spawn(body, 2)


@pytest.mark.parametrize("variant", VARIANTS)
def test_matmul_all_reduce_repeated_calls(xp, variant):
    """Back-to-back async calls reusing the workspace: each call's inputs are the ones it was given,
    though the rank writes A again before the other ranks have called."""
    M, N, K = 64, 64, 32

    def body(rank):
        shmem = iris.iris(2**33)
        world_size = shmem.get_num_ranks()
        A = shmem.zeros((M, K), dtype=xp.float16)
        B = shmem.ones((K, N), dtype=xp.float16)
        output = shmem.zeros((M, N), dtype=xp.float16)
        config = FusedConfig(all_reduce_variant=variant)
        workspace = None
        for i in range(3):
            A[:] = i + 1
            workspace = shmem.ops.matmul_all_reduce(output, A, B, config=config, workspace=workspace, async_op=True)
            A[:] = 100  # after the call: not this call's input
            shmem.barrier()
            assert type(workspace).__name__ == "IrisWorkspace"
            assert xp.allclose(output, xp.full((M, N), world_size * (i + 1) * K, xp.float32), atol=0, rtol=0), i

    iris.spawn(body, 2)


def test_matmul_all_reduce_on_one_rank(xp):
    M, N, K = 96, 64, 48

    def body(rank):
        shmem = iris.iris(2**33)
        A, B = _inputs(xp, rank, M, N, K, xp.float16)
        output = shmem.zeros((M, N), dtype=xp.float16)
        workspace = shmem.ops.matmul_all_reduce(output, A, B)
        assert workspace.world_size == 1
        assert xp.allclose(output, xp.matmul(A, B), atol=0.2, rtol=0.01)

    iris.spawn(body, 1)


def test_matmul_all_reduce_four_ranks(xp):
    M, N, K = 128, 128, 64

    def body(rank):
        shmem = iris.iris(2**33)
        world_size = shmem.get_num_ranks()
        A, B = _inputs(xp, rank, M, N, K, xp.float16)
        expected = sum(xp.matmul(*_inputs(xp, r, M, N, K, xp.float16)) for r in range(world_size))
        output = shmem.zeros((M, N), dtype=xp.float16)
        shmem.ops.matmul_all_reduce(output, A, B)
        assert xp.allclose(output, expected, atol=0.2, rtol=0.01)

    iris.spawn(body, 4)


@pytest.mark.parametrize("variant", ["one_shot", "two_shot"])
def test_matmul_all_reduce_fp16_sums(xp, variant):
    """What the fp16 reduction accumulates in: rank 0's partial is 2048, the 7 others' 1. one_shot
    and two_shot sum the W partials in fp32 and round once (2055 -> 2056). (atomic adds and the
    ring's hops add in fp16 one value at a time, so their result depends on the order the values
    meet: 2048 + 1 rounds to 2048.)"""
    expected = 2056
    M, N, K = 64, 128, 64

    def body(rank):
        shmem = iris.iris(2**33)
        A = shmem.ones((M, K), dtype=xp.float16)
        B = shmem.full((K, N), 32.0 if rank == 0 else 0.0, dtype=xp.float16)
        if rank:
            B[0] = 1
        output = shmem.zeros((M, N), dtype=xp.float16)
        shmem.ops.matmul_all_reduce(output, A, B, config=FusedConfig(all_reduce_variant=variant, block_size_n=64))
        assert (xp.f64(output) == expected).all(), xp.f64(output)[0, :4]

    iris.spawn(body, 8)
