#!/usr/bin/python3
"""Iris's example 31 (matmul_reduce_scatter through iris.ops), ported to tandem.iris: only the
imports (tandem.iris for iris), the launcher (iris.spawn for torch.multiprocessing.spawn, no process
group) and numpy for torch differ from an Iris program.

Every rank seeds the same, so every rank has the same A and B and the reduced sum is
world_size x A @ B; rank r gets its column block (M x N / world_size), or with --full_output the
tiles it owns of a full-size (M, N) output (Iris's tile path).

  PYTHONPATH=build/python /usr/bin/python3 python/examples/iris_matmul_reduce_scatter.py --num_ranks 2
"""
import argparse

import numpy as np

import tandem.iris as iris
from tandem.iris.ops import FusedConfig

DTYPES = {"fp16": np.float16, "fp32": np.float32}


def parse_args():
    parser = argparse.ArgumentParser(description="matmul_reduce_scatter through iris.ops (Iris's example 31)")
    parser.add_argument("-m", type=int, default=1024, help="rows of A and of the output")
    parser.add_argument("-n", type=int, default=1024, help="columns of B (the output: N / world_size of them)")
    parser.add_argument("-k", type=int, default=512, help="columns of A, rows of B")
    parser.add_argument("--datatype", default="fp16", choices=DTYPES)
    parser.add_argument("--full_output", action="store_true", help="a full-size (M, N) output (Iris's tile path)")
    parser.add_argument("--heap_size", type=int, default=1 << 33)
    parser.add_argument("--num_ranks", type=int, default=2)
    return vars(parser.parse_args())


def _worker(local_rank, world_size, init_url, args):
    ctx = iris.iris(heap_size=args["heap_size"])
    rank = ctx.get_rank()
    world_size = ctx.get_num_ranks()
    dtype = DTYPES[args["datatype"]]
    M, N, K = args["m"], args["n"], args["k"]
    N_local = N // world_size

    np.random.seed(42)
    A = ctx.randn((M, K), dtype=dtype)
    B = ctx.randn((K, N), dtype=dtype)
    C = ctx.zeros((M, N) if args["full_output"] else (M, N_local), dtype=dtype)

    config = FusedConfig()
    ctx.info(f"matmul_reduce_scatter: M={M} N={N} K={K} {args['datatype']} on {world_size} ranks")
    workspace = ctx.ops.matmul_reduce_scatter(C, A, B, config=config)
    ctx.barrier()

    expected = world_size * (A.astype(np.float32) @ B.astype(np.float32))
    if args["full_output"]:
        # The tiles this rank owns: a contiguous run of T // world of the T block_size_m x
        # block_size_n tiles, row-major (the last rank also the remainder).
        tiles_n = -(-N // config.block_size_n)
        total = -(-M // config.block_size_m) * tiles_n
        per = total // world_size
        mine = np.zeros((M, N), dtype=bool)
        for t in range(rank * per, (rank + 1) * per if rank < world_size - 1 else total):
            i, j = divmod(t, tiles_n)
            mine[i * config.block_size_m:(i + 1) * config.block_size_m, j * config.block_size_n:(j + 1) * config.block_size_n] = True
        got, want = C.astype(np.float32)[mine], expected[mine]
    else:
        got, want = C.astype(np.float32), expected[:, rank * N_local:(rank + 1) * N_local]
    max_diff = float(np.abs(got - want).max()) if got.size else 0.0
    if not np.allclose(got, want, atol=1.0):
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
