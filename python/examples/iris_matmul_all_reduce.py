"""Iris's matmul_all_reduce ops example (its example 28, as read here: see docs/IRIS.md), per
rank, as Iris users write it, on a simulated Ascend cluster: the import is tandem.iris, the
tensors numpy arrays, the ranks threads of spawn().

  PYTHONPATH=build/python /usr/bin/python3 python/examples/iris_matmul_all_reduce.py --num_ranks 2
"""
import argparse

import numpy as np

import tandem.iris as iris


def run(rank, args):
    ctx = iris.iris(args.heap_size)
    # Each rank its own A (M x K) and B (K x N); every rank gets the sum of the products.
    rng = np.random.default_rng(1 + rank)
    a = rng.integers(-1, 2, size=(args.m, args.k)).astype(np.float16)
    b = rng.integers(-1, 2, size=(args.k, args.n)).astype(np.float16)
    output = ctx.zeros((args.m, args.n), dtype=np.float16)
    config = iris.FusedConfig(all_reduce_variant=args.variant)
    ws = ctx.ops.matmul_all_reduce(output, a, b, config=config)
    ctx.barrier()
    return a, b, output, ws


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num_ranks", type=int, default=2)
    p.add_argument("-m", type=int, default=512)
    p.add_argument("-k", type=int, default=256)
    p.add_argument("-n", type=int, default=256)
    p.add_argument("--variant", default="two_shot", help="FusedConfig.all_reduce_variant (atomic, ring, one_shot, "
                                                         "two_shot)")
    p.add_argument("--heap_size", type=int, default=1 << 30)
    args = p.parse_args()
    per_rank = iris.spawn(run, args.num_ranks, args=(args,))
    expected = sum(a.astype(np.float32) @ b.astype(np.float32) for a, b, _, _ in per_rank)
    for rank, (_, _, output, ws) in enumerate(per_rank):
        if not np.array_equal(output.astype(np.float32), expected):
            raise SystemExit(f"rank {rank}: the output differs from numpy's")
    ws = per_rank[0][3]
    print(f"matmul_all_reduce M={args.m} K={args.k} N={args.n} ({ws.variant}) on {args.num_ranks} ranks: outputs "
          f"match numpy; simulated {ws.results['pipelined_us']:.2f} us (rank 0)")


if __name__ == "__main__":
    main()
