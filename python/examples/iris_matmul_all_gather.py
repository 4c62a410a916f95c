#!/usr/bin/python3
"""Iris's example 30 (matmul_all_gather through iris.ops), ported to tandem.iris: only the imports
(tandem.iris for iris), the launcher (iris.spawn for torch.multiprocessing.spawn, no process group)
and numpy for torch differ from an Iris program.

Every rank seeds the same and draws the whole A and B; each rank passes its row block of A
(M_local x K) and gets all of A @ B, the ranks' row blocks gathered.

  PYTHONPATH=build/python /usr/bin/python3 python/examples/iris_matmul_all_gather.py --num_ranks 2
"""
import argparse

import numpy as np

import tandem.iris as iris
from tandem.iris.ops import FusedConfig

DTYPES = {"fp16": np.float16, "fp32": np.float32}


def parse_args():
    parser = argparse.ArgumentParser(description="matmul_all_gather through iris.ops (Iris's example 30)")
    parser.add_argument("-m", type=int, default=1024, help="rows of the whole A and of the output")
    parser.add_argument("-n", type=int, default=512, help="columns of B and of the output")
    parser.add_argument("-k", type=int, default=512, help="columns of A, rows of B")
    parser.add_argument("--datatype", default="fp16", choices=DTYPES)
    parser.add_argument("--heap_size", type=int, default=1 << 33)
    parser.add_argument("--num_ranks", type=int, default=2)
    return vars(parser.parse_args())


def _worker(local_rank, world_size, init_url, args):
    ctx = iris.iris(heap_size=args["heap_size"])
    rank = ctx.get_rank()
    world_size = ctx.get_num_ranks()
    dtype = DTYPES[args["datatype"]]
    M, N, K = args["m"], args["n"], args["k"]
    M_local = M // world_size

    np.random.seed(42)
    A = ctx.randn((M, K), dtype=dtype)
    B = ctx.randn((K, N), dtype=dtype)
    A_local = ctx.zeros((M_local, K), dtype=dtype)
    A_local[:] = A[rank * M_local:(rank + 1) * M_local]
    C = ctx.zeros((M_local * world_size, N), dtype=dtype)

    ctx.info(f"matmul_all_gather: M={M} N={N} K={K} {args['datatype']} on {world_size} ranks")
    workspace = ctx.ops.matmul_all_gather(C, A_local, B, config=FusedConfig())
    ctx.barrier()

    expected = A[:M_local * world_size].astype(np.float32) @ B.astype(np.float32)
    max_diff = float(np.abs(C.astype(np.float32) - expected).max())
    if not np.allclose(C.astype(np.float32), expected, atol=1.0):
        ctx.error(f"Validation failed: max difference {max_diff:.4f}")
        raise RuntimeError(f"rank {rank}: the output differs from the reference (max difference {max_diff:.4f})")
    if rank == 0:
        r = workspace.results
        ctx.info(f"Validation passed (max difference {max_diff:.4f}); simulated: fused {r['pipelined_us']:.2f} us, "
                 f"sequential {r['sequential_us']:.2f} us")


def main():
    args = parse_args()
    num_ranks = args["num_ranks"]
    init_url = "tcp://127.0.0.1:29500"
    iris.spawn(fn=_worker, args=(num_ranks, init_url, args), nprocs=num_ranks, join=True)


if __name__ == "__main__":
    main()
