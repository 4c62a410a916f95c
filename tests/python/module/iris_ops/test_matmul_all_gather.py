"""Iris's tests/ops/test_matmul_all_gather.py, ported (conftest.py says what changed)."""
import pytest

import tandem.iris as iris
from tandem.iris.ops import FusedConfig
from tandem.iris.ops.matmul_all_gather import matmul_all_gather

from conftest import dtype_of


@pytest.mark.parametrize("dtype_name", ["float16", "float32", "bfloat16"])
@pytest.mark.parametrize("M, N, K", [(128, 64, 32), (256, 128, 64), (200, 90, 70)])
@pytest.mark.parametrize("world_size", [2, 4])
def test_matmul_all_gather(xp, dtype_name, M, N, K, world_size):
    dtype = dtype_of(xp, dtype_name)
    if M % world_size != 0:
        pytest.skip("M must be divisible by world_size")

    def body(rank):
        shmem = iris.iris(2**33)
        rank = shmem.get_rank()
        world = shmem.get_num_ranks()
        M_local = M // world
        xp.manual_seed(42)
        A = xp.randn(M, K, dtype=dtype)
        B = xp.randn(K, N, dtype=dtype)
        A_local = shmem.zeros((M_local, K), dtype=dtype)
        A_local[:] = A[rank * M_local:(rank + 1) * M_local]
        output = shmem.zeros((M, N), dtype=dtype)
        shmem.barrier()
        matmul_all_gather(shmem, output, A_local, B, config=FusedConfig())
        shmem.barrier()
        assert xp.allclose(output, xp.matmul(A, B), atol=0.5, rtol=0.01)

    iris.spawn(body, world_size)


@pytest.mark.parametrize("bias_len", ["M", "N"])
def test_matmul_all_gather_with_bias(xp, bias_len):
    M, N, K = 128, 96, 64

    def body(rank):
        shmem = iris.iris(2**33)
        world = shmem.get_num_ranks()
        M_local = M // world
        xp.manual_seed(42)
        A, B = xp.randn(M, K, dtype=xp.float16), xp.randn(K, N, dtype=xp.float16)
        bias = xp.randn(M if bias_len == "M" else N, dtype=xp.float16)
        output = shmem.zeros((M, N), dtype=xp.float16)
        shmem.ops.matmul_all_gather(output, A[rank * M_local:(rank + 1) * M_local], B, bias=bias)
        expected = xp.matmul(A, B) + (xp.f64(bias)[:, None] if bias_len == "M" else xp.f64(bias)[None, :])
        assert xp.allclose(output, expected, atol=0.5, rtol=0.01)

    iris.spawn(body, 2)
