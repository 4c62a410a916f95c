#!/usr/bin/python3
"""Iris's all-gather + GEMM benchmark driver, on Tandem.

Maps the usage of Iris's benchmark/examples/benchmark_all_gather_gemm_{pull,push}.py onto the
simulator: --num_ranks is Tandem's -n, -v/--validate runs every shape of the dataset functionally
and checks the result against the OpenBLAS golden, -b/--benchmark runs every shape timing-only
and writes one results JSON per shape (and variant) into the results folder.

  scripts/iris_all_gather_matmul.py --num_ranks 8 -v
  scripts/iris_all_gather_matmul.py --num_ranks 8 -b --variant all --results results/

The dataset is a JSON list of shapes {"m": M, "n": N, "k": K} with K the whole product's K (as
Iris's B is K x N); scripts/datasets/all_gather_matmul.json is the default. Standard library only.
"""
import argparse
import json
import os
import sys

from iris_driver import DEFAULT_BINARY, HERE, require_binary, run_tandem, timing_line, verdict_line

VARIANTS = ("pull", "push", "staged")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--num_ranks", "-n", type=int, default=8, help="ranks (Tandem's -n)")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("-v", "--validate", action="store_true", help="verify every shape (functional runs)")
    mode.add_argument("-b", "--benchmark", action="store_true", help="time every shape, one results JSON each")
    p.add_argument("--variant", default="pull", choices=VARIANTS + ("all",), help="pull (default), push, staged or all")
    p.add_argument("--dataset", default=os.path.join(HERE, "datasets", "all_gather_matmul.json"))
    p.add_argument("--results", default="results", help="results folder for -b (created)")
    p.add_argument("--binary", default=DEFAULT_BINARY)
    p.add_argument("extra", nargs="*", help="more tandem flags after --, e.g. -- --dtype bf16 --bias n")
    return p.parse_args(argv)


def load_dataset(path):
    with open(path) as f:
        shapes = json.load(f)
    if not isinstance(shapes, list) or not shapes:
        raise SystemExit(f"{path}: expected a non-empty JSON list of {{\"m\", \"n\", \"k\"}} shapes")
    for i, s in enumerate(shapes):
        if not all(isinstance(s.get(key), int) and s[key] > 0 for key in ("m", "n", "k")):
            raise SystemExit(f"{path}: shape {i} needs positive integers m, n, k: {s}")
    return shapes


def run_one(args, variant, shape, json_path, timing_only):
    cmd = [args.binary, "--op", "all_gather_matmul", "--variant", variant, "-n", str(args.num_ranks),
           "--gm", str(shape["m"]), "--gn", str(shape["n"]), "--gk", str(shape["k"]), "--json", json_path, "--quiet"]
    if timing_only:
        cmd.append("--timing-only")
    results, error = run_tandem(cmd + args.extra, json_path)
    return results, (error if results is None else None)


def main(argv):
    args = parse_args(argv)
    require_binary(args.binary)
    shapes = load_dataset(args.dataset)
    variants = VARIANTS if args.variant == "all" else (args.variant,)
    out_dir = args.results if args.benchmark else os.path.join(args.results, "validate")
    os.makedirs(out_dir, exist_ok=True)
    failures = 0
    for shape in shapes:
        for variant in variants:
            name = f"all_gather_matmul_{variant}_n{args.num_ranks}_m{shape['m']}_n{shape['n']}_k{shape['k']}.json"
            path = os.path.join(out_dir, name)
            results, error = run_one(args, variant, shape, path, timing_only=args.benchmark)
            label = f"{variant:6s} M={shape['m']} N={shape['n']} K={shape['k']} ranks={args.num_ranks}"
            if results is None:
                failures += 1
                print(f"ERROR  {label}: {error}")
                continue
            if args.validate:
                line, ok = verdict_line(label, results)
                failures += 0 if ok else 1
                print(line)
            else:
                print(timing_line(label, results, path,
                                  ("sequential", f"sequential {results['sequential_us']:.1f} us"),
                                  ("speedup", f"speedup {results['speedup']:.2f}x"),
                                  ("moved", f"{results['comm_bytes_per_rank'] / 2**20:.1f} MiB moved per rank")))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
