#!/usr/bin/python3
"""Iris's example 29 (all_gather_matmul through iris.ops), ported to tandem.iris: only the imports
(tandem.iris for iris), the launcher (iris.spawn for torch.multiprocessing.spawn, no process group)
and numpy for torch differ from an Iris program.

Every rank seeds the same and draws the whole A and B; each rank passes its column shard of A
(M x K_local) and gets all of A @ B.

  PYTHONPATH=build/python /usr/bin/python3 python/examples/iris_all_gather_matmul.py --num_ranks 2
"""
import argparse

import numpy as np

import tandem.iris as iris
from tandem.iris.ops import FusedConfig

DTYPES = {"fp16": np.float16, "fp32": np.float32}


def parse_args():
    parser = argparse.ArgumentParser(description="all_gather_matmul through iris.ops (Iris's example 29)")
    parser.add_argument("-m", type=int, default=512, help="rows of A and of the output")
    parser.add_argument("-n", type=int, default=256, help="columns of B and of the output")
    parser.add_argument("--k_local", type=int, default=128, help="each rank's columns of A (K = world x K_local)")
    parser.add_argument("--datatype", default="fp16", choices=DTYPES)
    parser.add_argument("--variant", default=None, help="Tandem's FusedConfig.variant: pull (default), push, staged")
    parser.add_argument("--block_size_m", type=int, default=None)
    parser.add_argument("--heap_size", type=int, default=1 << 33)
    parser.add_argument("--num_ranks", type=int, default=2)
    return vars(parser.parse_args())


def _worker(local_rank, world_size, init_url, args):
    ctx = iris.iris(heap_size=args["heap_size"])
    rank = ctx.get_rank()
    world_size = ctx.get_num_ranks()
    dtype = DTYPES[args["datatype"]]
    M, N, K_local = args["m"], args["n"], args["k_local"]
    K = K_local * world_size

    np.random.seed(42)
    A = ctx.randn((M, K), dtype=dtype)
    B = ctx.randn((K, N), dtype=dtype)
    A_sharded = ctx.zeros((M, K_local), dtype=dtype)
    A_sharded[:] = A[:, rank * K_local:(rank + 1) * K_local]
    C = ctx.zeros((M, N), dtype=dtype)

    config = FusedConfig(variant=args["variant"])
    if args["block_size_m"] is not None:
        config.block_size_m = args["block_size_m"]
    ctx.info(f"all_gather_matmul: M={M} N={N} K={K} (K_local={K_local}) {args['datatype']} on {world_size} ranks")
    workspace = ctx.ops.all_gather_matmul(C, A_sharded, B, config=config)
    ctx.barrier()

    expected = A.astype(np.float32) @ B.astype(np.float32)
    max_diff = float(np.abs(C.astype(np.float32) - expected).max())
    if not np.allclose(C.astype(np.float32), expected, atol=1.0):
        ctx.error(f"Validation failed: max difference {max_diff:.4f}")
        raise RuntimeError(f"rank {rank}: the output differs from the reference (max difference {max_diff:.4f})")
    if rank == 0:
        r = workspace.results
        ctx.info(f"Validation passed (max difference {max_diff:.4f}); simulated {workspace.variant}: fused "
                 f"{r['pipelined_us']:.2f} us, sequential {r['sequential_us']:.2f} us")


def main():
    args = parse_args()
    num_ranks = args["num_ranks"]
    init_url = "tcp://127.0.0.1:29500"
    iris.spawn(fn=_worker, args=(num_ranks, init_url, args), nprocs=num_ranks, join=True)


if __name__ == "__main__":
    main()
