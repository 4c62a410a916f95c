"""Iris's all_gather_matmul example, per rank, as Iris users write it, on a simulated Ascend
cluster: the import is tandem.iris, the tensors numpy arrays, the ranks threads of spawn().

  PYTHONPATH=build/python /usr/bin/python3 python/examples/iris_all_gather_matmul.py --num_ranks 2
"""
import argparse

import numpy as np

import tandem.iris as iris


def run(rank, args):
    ctx = iris.iris(args.heap_size)
    world = ctx.get_num_ranks()
    k = args.k_local * world
    rng = np.random.default_rng(0)  # the same B on every rank, each rank its own A shard
    b = rng.integers(-1, 2, size=(k, args.n)).astype(np.float16)
    a_sharded = np.random.default_rng(1 + rank).integers(-1, 2, size=(args.m, args.k_local)).astype(np.float16)
    output = ctx.zeros((args.m, args.n), dtype=np.float16)
    config = iris.FusedConfig(block_size_m=args.block_size_m) if args.block_size_m else None
    ws = ctx.ops.all_gather_matmul(output, a_sharded, b, config=config)
    ctx.barrier()
    return a_sharded, b, output, ws


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num_ranks", type=int, default=2)
    p.add_argument("-m", type=int, default=512)
    p.add_argument("--k_local", type=int, default=128)
    p.add_argument("-n", type=int, default=256)
    p.add_argument("--block_size_m", type=int, default=0, help="the output tile's rows (default: fitted)")
    p.add_argument("--heap_size", type=int, default=1 << 30)
    args = p.parse_args()
    per_rank = iris.spawn(run, args.num_ranks, args=(args,))
    a_full = np.concatenate([a for a, _, _, _ in per_rank], axis=1).astype(np.float32)
    expected = a_full @ per_rank[0][1].astype(np.float32)
    for rank, (_, _, output, ws) in enumerate(per_rank):
        if not np.array_equal(output.astype(np.float32), expected):
            raise SystemExit(f"rank {rank}: the output differs from numpy's")
    ws = per_rank[0][3]
    print(f"all_gather_matmul M={args.m} K={a_full.shape[1]} N={args.n} on {args.num_ranks} ranks: outputs match "
          f"numpy; simulated {ws.results['pipelined_us']:.2f} us (rank 0)")


if __name__ == "__main__":
    main()
