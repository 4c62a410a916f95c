#!/usr/bin/env python3
"""Runs one configuration of a fused op through the `tandem` module and validates it against
numpy, as Iris's per-op example_run scripts do. With no --op, every registered op in turn.

  PYTHONPATH=build/python python3 python/examples/example_run.py --op allgather_gemm --num_ranks 4
"""
import argparse
import sys

import tandem
from problems import check, make_problem, shape_for


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", help="a registered op (default: all)")
    p.add_argument("--num_ranks", type=int, default=2)
    p.add_argument("-m", type=int, default=512)
    p.add_argument("-n", type=int, default=512)
    p.add_argument("-k", type=int, default=512)
    p.add_argument("--soc", default="Ascend910B1")
    p.add_argument("--async_op", action="store_true")
    args = p.parse_args()
    ctx = tandem.Context(num_ranks=args.num_ranks, soc=args.soc)
    ops = [args.op] if args.op else ctx.ops.names()
    for op in ops:
        info = ctx.ops.info(op)
        # Every op in turn: a variant that runs only its own grid's shapes gets its smallest one.
        m, n, k = (args.m, args.n, args.k) if args.op else shape_for(op, info["variant"], args.m, args.n, args.k)
        A, B, C, bias, expected = make_problem(ctx, op, m, n, k)
        ws = getattr(ctx.ops, op)(C, A, B, bias=bias, async_op=args.async_op, config={"all_views": True})
        ctx.barrier()
        r = ws.results
        if info["own_math"]:
            # An op with its own math (moe_ffn: A is its tokens, its routes and experts' weights are
            # its own) has no numpy reference here: the module checks it against the op's golden.
            if r["verification"] == "failed":
                raise AssertionError(f"{op}: {r['verification_report']}")
            print(f"{op} ({r['variant']}) M={m} N={n} K={k} x{args.num_ranks}: fused {r['pipelined_us']:.2f} us; "
                  f"its own golden: {r['verification']}")
            continue
        check(C, expected, info["out_dtypes"][0])
        print(f"{op} ({r['variant']}) M={m} N={n} K={k} x{args.num_ranks} on {ctx.profile}: "
              f"fused {r['pipelined_us']:.2f} us, collective then matmul {r['seq_comm_us'] + r['seq_compute_us']:.2f} us, "
              f"matmul alone {r['compute_only_us']:.2f} us: validated")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except tandem.Error as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
