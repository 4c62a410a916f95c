"""Iris's tests/ops/test_matmul_reduce_scatter.py, ported (conftest.py says what changed): both
output forms (the column block (M, N / world_size), and the full-size (M, N) of Iris's tile path,
each rank writing the tiles it owns)."""
import numpy as np
import pytest

import tandem.iris as iris
from tandem.iris.ops.config import FusedConfig
from tandem.iris.ops.matmul_reduce_scatter import matmul_reduce_scatter

from conftest import dtype_of


def _inputs(xp, rank, M, N, K, dtype):
    xp.manual_seed(42 + rank)
    return xp.randn(M, K, dtype=dtype), xp.randn(K, N, dtype=dtype)


def _total(xp, world, M, N, K, dtype):
    return sum(xp.matmul(*_inputs(xp, r, M, N, K, dtype)) for r in range(world))


@pytest.mark.parametrize("dtype_name, atol, rtol", [("float16", 0.2, 0.01), ("float32", 0.1, 0.01)])
@pytest.mark.parametrize("M, N, K", [(128, 128, 64), (256, 256, 128), (96, 200, 72)])
@pytest.mark.parametrize("variant", [None, "atomic"])
def test_matmul_reduce_scatter(xp, dtype_name, atol, rtol, M, N, K, variant):
    dtype = dtype_of(xp, dtype_name)

    def body(rank):
        shmem = iris.iris(2**33)
        rank = shmem.get_rank()
        world_size = shmem.get_num_ranks()
        N_local = N // world_size
        A, B = _inputs(xp, rank, M, N, K, dtype)
        expected = _total(xp, world_size, M, N, K, dtype)[:, rank * N_local:(rank + 1) * N_local]
        output = shmem.zeros((M, N_local), dtype=dtype)
        shmem.barrier()
        matmul_reduce_scatter(shmem, output, A, B, config=FusedConfig(variant=variant))
        shmem.barrier()
        assert xp.allclose(output, expected, atol=atol, rtol=rtol), f"rank {rank}"

    iris.spawn(body, 2)


def _owned(M, N, world, rank, block_m, block_n):
    """Iris's tile path: tiles numbered row-major, rank r owns [r T/W, (r+1) T/W), the last also the rest."""
    tiles_n = -(-N // block_n)
    total = -(-M // block_m) * tiles_n
    per = total // world
    mine = np.zeros((M, N), dtype=bool)
    for t in range(rank * per, (rank + 1) * per if rank < world - 1 else total):
        i, j = divmod(t, tiles_n)
        mine[i * block_m:(i + 1) * block_m, j * block_n:(j + 1) * block_n] = True
    return mine


@pytest.mark.parametrize("M, N, K, block_m, block_n", [(256, 256, 64, 64, 64), (300, 200, 40, 256, 64),
                                                       (128, 96, 32, 32, 32)])
def test_matmul_reduce_scatter_full_size_output(xp, M, N, K, block_m, block_n):
    def body(rank):
        shmem = iris.iris(2**33)
        world_size = shmem.get_num_ranks()
        A, B = _inputs(xp, rank, M, N, K, xp.float32)
        expected = _total(xp, world_size, M, N, K, xp.float32)
        output = shmem.zeros((M, N), dtype=xp.float32)
        shmem.ops.matmul_reduce_scatter(output, A, B, config=FusedConfig(block_size_m=block_m, block_size_n=block_n))
        mine = _owned(M, N, world_size, rank, block_m, block_n)
        got = xp.f64(output)
        assert np.allclose(got[mine], expected[mine], atol=0.1, rtol=0.01)
        assert (got[~mine] == 0).all()  # the tiles other ranks own are left as they were

    iris.spawn(body, 3)


def test_matmul_reduce_scatter_fp16_sums(xp):
    """What the fp16 reduction accumulates in. Rank 0's partial is 2048 everywhere, the 7 others'
    1: their sum, 2055, is 2056 in fp16 when the partials are summed in fp32 and rounded once (Iris's
    tile path, the default variant). fp16 additions one at a time would lose every 1 added to 2048
    or more (2049 rounds to 2048)."""
    variant, expected = None, 2056
    M, N, K = 64, 128, 64

    def body(rank):
        shmem = iris.iris(2**33)
        world_size = shmem.get_num_ranks()
        A = shmem.ones((M, K), dtype=xp.float16)
        B = shmem.full((K, N), 32.0 if rank == 0 else 0.0, dtype=xp.float16)  # rank 0: 64 x 32 = 2048
        if rank:
            B[0] = 1  # the others: 1
        output = shmem.zeros((M, N // world_size), dtype=xp.float16)
        shmem.ops.matmul_reduce_scatter(output, A, B, config=FusedConfig(variant=variant))
        assert (xp.f64(output) == expected).all(), xp.f64(output)[0, :4]

    iris.spawn(body, 8)
