#!/usr/bin/python3
"""Iris's example 28 (matmul_all_reduce through iris.ops), ported to tandem.iris: only the imports
(tandem.iris for iris), the launcher (iris.spawn for torch.multiprocessing.spawn, no process group)
and numpy for torch differ from an Iris program.

Every rank seeds the same (torch.manual_seed(42) there, np.random.seed(42) here), so every rank
has the same A and B and the all-reduced output is world_size x A @ B.

  PYTHONPATH=build/python /usr/bin/python3 python/examples/iris_matmul_all_reduce.py --num_ranks 2
"""
import argparse

import numpy as np

import tandem.iris as iris
from tandem.iris.ops import FusedConfig

DTYPES = {"fp16": np.float16, "fp32": np.float32}


def parse_args():
    parser = argparse.ArgumentParser(description="matmul_all_reduce through iris.ops (Iris's example 28)")
    parser.add_argument("-m", type=int, default=1024, help="rows of A and of the output")
    parser.add_argument("-n", type=int, default=1024, help="columns of B and of the output")
    parser.add_argument("-k", type=int, default=512, help="columns of A, rows of B")
    parser.add_argument("--datatype", default="fp16", choices=DTYPES, help="A, B and the output's dtype")
    parser.add_argument("--variant", default="two_shot", help="FusedConfig.all_reduce_variant: atomic, ring, one_shot, "
                                                              "two_shot")
    parser.add_argument("--block_size_m", type=int, default=None)
    parser.add_argument("--block_size_n", type=int, default=None)
    parser.add_argument("--heap_size", type=int, default=1 << 33)
    parser.add_argument("--num_ranks", type=int, default=2)
    return vars(parser.parse_args())


def _worker(local_rank, world_size, init_url, args):
    ctx = iris.iris(heap_size=args["heap_size"])
    rank = ctx.get_rank()
    world_size = ctx.get_num_ranks()
    dtype = DTYPES[args["datatype"]]
    M, N, K = args["m"], args["n"], args["k"]

    np.random.seed(42)
    A = ctx.randn((M, K), dtype=dtype)
    B = ctx.randn((K, N), dtype=dtype)
    C = ctx.zeros((M, N), dtype=dtype)

    blocks = {f: args[f] for f in ("block_size_m", "block_size_n") if args[f] is not None}
    config = FusedConfig(all_reduce_variant=args["variant"], **blocks)
    ctx.info(f"matmul_all_reduce: M={M} N={N} K={K} {args['datatype']} {args['variant']} on {world_size} ranks")
    workspace = ctx.ops.matmul_all_reduce(C, A, B, config=config)
    ctx.barrier()

    expected = world_size * (A.astype(np.float32) @ B.astype(np.float32))
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
