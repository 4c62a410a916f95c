"""Iris's tests/ops/test_all_gather_matmul.py, ported (conftest.py says what changed); Tandem's
variants (FusedConfig.variant, its extension) run the same cases."""
import pytest

import tandem.iris as iris
import tandem.iris.ops as ops
from tandem.iris.ops.all_gather_matmul import all_gather_matmul

from conftest import dtype_of

VARIANTS = [None, "push", "staged"]  # None: the default (pull)


def _full(xp, M, N, K, dtype):
    """The whole A and B, the same on every rank (one seed)."""
    xp.manual_seed(42)
    return xp.randn(M, K, dtype=dtype), xp.randn(K, N, dtype=dtype)


@pytest.mark.parametrize("dtype_name", ["float16", "float32", "bfloat16"])
@pytest.mark.parametrize("M, N, K_local", [(128, 64, 32), (256, 128, 64), (100, 72, 40)])
@pytest.mark.parametrize("variant", VARIANTS)
def test_all_gather_matmul(xp, dtype_name, M, N, K_local, variant):
    dtype = dtype_of(xp, dtype_name)

    def body(rank):
        shmem = iris.iris(2**33)
        rank = shmem.get_rank()
        world_size = shmem.get_num_ranks()
        K = K_local * world_size
        A, B = _full(xp, M, N, K, dtype)
        A_sharded = shmem.zeros((M, K_local), dtype=dtype)
        A_sharded[:] = A[:, rank * K_local:(rank + 1) * K_local]
        output = shmem.zeros((M, N), dtype=dtype)
        shmem.barrier()
        workspace = all_gather_matmul(shmem, output, A_sharded, B, config=ops.FusedConfig(variant=variant))
        shmem.barrier()
        assert workspace.variant == (variant or "pull")
        assert xp.allclose(output, xp.matmul(A, B), atol=1e-2 if dtype_name != "bfloat16" else 0.5, rtol=1e-2)

    iris.spawn(body, 2)


def test_all_gather_matmul_with_bias(xp):
    M, N, K_local = 128, 64, 64

    def body(rank):
        shmem = iris.iris(2**33)
        world_size = shmem.get_num_ranks()
        A, B = _full(xp, M, N, K_local * world_size, xp.float16)
        bias = shmem.randn(M, dtype=xp.float16)  # (M,): one value per row
        output = shmem.zeros((M, N), dtype=xp.float16)
        shmem.ops.all_gather_matmul(output, A_sharded=A[:, rank * K_local:(rank + 1) * K_local], B=B, bias=bias)
        assert xp.allclose(output, xp.matmul(A, B) + xp.f64(bias)[:, None], atol=1e-2, rtol=1e-2)

    iris.spawn(body, 2)


def test_all_gather_matmul_async_then_barrier(xp):
    M, N, K_local = 64, 64, 64

    def body(rank):
        shmem = iris.iris(2**33)
        world_size = shmem.get_num_ranks()
        A, B = _full(xp, M, N, K_local * world_size, xp.float16)
        A_sharded = A[:, rank * K_local:(rank + 1) * K_local].copy() if xp.name == "numpy" else \
            A[:, rank * K_local:(rank + 1) * K_local].clone()
        output = shmem.zeros((M, N), dtype=xp.float16)
        workspace = shmem.ops.all_gather_matmul(output, A_sharded, B, async_op=True)
        A_sharded[:] = 0  # after the call: not its input
        shmem.barrier()
        assert workspace.results["pipelined_us"] > 0
        assert xp.allclose(output, xp.matmul(A, B), atol=1e-2, rtol=1e-2)

    iris.spawn(body, 2)


def test_all_gather_matmul_four_ranks(xp):
    M, N, K_local = 96, 64, 48

    def body(rank):
        shmem = iris.iris(2**33)
        world_size = shmem.get_num_ranks()
        A, B = _full(xp, M, N, K_local * world_size, xp.float16)
        output = shmem.zeros((M, N), dtype=xp.float16)
        shmem.ops.all_gather_matmul(output, A[:, rank * K_local:(rank + 1) * K_local], B)
        assert xp.allclose(output, xp.matmul(A, B), atol=1e-2, rtol=1e-2)

    iris.spawn(body, 4)
