"""Iris's matmul_all_gather ops example (its example 30, as read here: see docs/IRIS.md), per
rank, as Iris users write it, on a simulated Ascend cluster: the import is tandem.iris, the
tensors numpy arrays, the ranks threads of spawn().

  PYTHONPATH=build/python /usr/bin/python3 python/examples/iris_matmul_all_gather.py --num_ranks 2
"""
import argparse

import numpy as np

import tandem.iris as iris


def run(rank, args):
    ctx = iris.iris(args.heap_size)
    world = ctx.get_num_ranks()
    m_local = args.m // world
    # Each rank its rows of A (M_local x K), the same B (K x N) on every rank; every rank gets
    # the whole M x N product, the ranks' row blocks gathered.
    a = np.random.default_rng(1 + rank).integers(-1, 2, size=(m_local, args.k)).astype(np.float16)
    b = np.random.default_rng(0).integers(-1, 2, size=(args.k, args.n)).astype(np.float16)
    output = ctx.zeros((m_local * world, args.n), dtype=np.float16)
    ws = ctx.ops.matmul_all_gather(output, a, b)
    ctx.barrier()
    return a, b, output, ws


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num_ranks", type=int, default=2)
    p.add_argument("-m", type=int, default=512, help="M, the rows of the whole output (M_local = M / num_ranks)")
    p.add_argument("-k", type=int, default=256)
    p.add_argument("-n", type=int, default=256)
    p.add_argument("--heap_size", type=int, default=1 << 30)
    args = p.parse_args()
    if args.m % args.num_ranks != 0:  # as Iris's tests, which skip matmul_all_gather then
        raise SystemExit(f"-m {args.m}: M must be a multiple of --num_ranks {args.num_ranks}")
    per_rank = iris.spawn(run, args.num_ranks, args=(args,))
    a_full = np.concatenate([a for a, _, _, _ in per_rank]).astype(np.float32)
    expected = a_full @ per_rank[0][1].astype(np.float32)
    for rank, (_, _, output, ws) in enumerate(per_rank):
        if not np.array_equal(output.astype(np.float32), expected):
            raise SystemExit(f"rank {rank}: the output differs from numpy's")
    ws = per_rank[0][3]
    print(f"matmul_all_gather M={args.m} K={args.k} N={args.n} on {args.num_ranks} ranks: outputs match numpy; "
          f"simulated {ws.results['pipelined_us']:.2f} us (rank 0)")


if __name__ == "__main__":
    main()
