#!/usr/bin/env python3
"""Benchmarks a fused op over a JSON dataset of shapes, as Iris's benchmark scripts do: the fused
op (pipelined), and the "collective then matmul" baseline (the op's sequential view: its
collective kernel, then the GEMM kernel), on the simulated clock. Writes one results JSON per
shape into --output_dir.

  PYTHONPATH=build/python python3 python/examples/benchmark.py --op allgather_gemm --num_ranks 8 -v -b \\
      --dataset python/examples/dataset.json --output_dir out/api_bench
"""
import argparse
import json
import os
import sys

import tandem
from problems import check, make_problem


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", default="allgather_gemm")
    p.add_argument("--num_ranks", type=int, default=2)
    p.add_argument("-v", "--validate", action="store_true", help="check every output against numpy")
    p.add_argument("-b", "--benchmark", action="store_true", help="report simulated times (fused and baseline)")
    p.add_argument("--dataset", default=os.path.join(os.path.dirname(__file__), "dataset.json"))
    p.add_argument("--output_dir", default="out/api_bench")
    p.add_argument("--soc", default="Ascend910B1")
    p.add_argument("--config", default="{}", help="JSON dict: variant, base_m, base_n, knobs, ...")
    args = p.parse_args()
    if not (args.validate or args.benchmark):
        p.error("give -v/--validate and/or -b/--benchmark")
    shapes = json.load(open(args.dataset))
    config = json.loads(args.config)
    os.makedirs(args.output_dir, exist_ok=True)
    # Validation needs data; timing alone runs in timing-only mode (same times, no data).
    ctx = tandem.Context(num_ranks=args.num_ranks, soc=args.soc, functional=args.validate)
    info = ctx.ops.info(args.op)
    for shape in shapes:
        m, n, k = shape["m"], shape["n"], shape["k"]
        A, B, C, bias, expected = make_problem(ctx, args.op, m, n, k, seed=m + n + k) if args.validate else \
            _empty_problem(ctx, info, m, n, k)
        ws = getattr(ctx.ops, args.op)(C, A, B, bias=bias, config=dict(config, all_views=args.benchmark))
        r = dict(ws.results, m=m, n=n, k=k, num_ranks=args.num_ranks, soc=ctx.profile)
        if args.validate:
            r["max_abs_error"] = check(C, expected, info["out_dtypes"][0])
            r["validated"] = True
        if args.benchmark:
            r["baseline_us"] = r["seq_comm_us"] + r["seq_compute_us"]
            r["speedup_vs_baseline"] = r["baseline_us"] / r["pipelined_us"]
        name = f"{args.op}_m{m}_n{n}_k{k}_r{args.num_ranks}.json"
        with open(os.path.join(args.output_dir, name), "w") as f:
            json.dump(r, f, indent=2)
        line = f"{args.op} M={m} N={n} K={k} x{args.num_ranks}:"
        if args.benchmark:
            line += f" fused {r['pipelined_us']:.2f} us, collective then matmul {r['baseline_us']:.2f} us" \
                    f" ({r['speedup_vs_baseline']:.2f}x)"
        if args.validate:
            line += " validated"
        print(line)
    return 0


def _empty_problem(ctx, info, m, n, k):
    from problems import shard_shapes
    _, a, b, out = shard_shapes(info, ctx.num_ranks, m, n, k)
    dt = info["dtypes"][0]
    return ctx.zeros(*a, dt), ctx.zeros(*b, dt), ctx.zeros(*out, info["out_dtypes"][0]), None, None


if __name__ == "__main__":
    try:
        sys.exit(main())
    except tandem.Error as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
