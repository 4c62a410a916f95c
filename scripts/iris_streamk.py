#!/usr/bin/python3
"""Iris's Stream-K + communication benchmark (stream-k/benchmark.py), on Tandem.

Maps the seed's flags onto build/tandem and writes the results JSON (Tandem's, plus the seed's
arguments under "iris_args") to --output_file:

  scripts/iris_streamk.py --num_ranks 4 --algorithm one_shot --validate --benchmark

  --algorithm all_reduce   matmul_all_reduce, variant atomic (each tile added into every rank)
  --algorithm one_shot     matmul_all_reduce, variant one_shot (every rank pulls every partial)
  --algorithm all_scatter  matmul_all_scatter, variant specialized (GEMM and scatter clusters)
  -m -n -k                 the global GEMM C (M x N) = A (M x K) x B (K x N). all_reduce and
                           one_shot split K over the ranks (B row-wise: --gk is K / ranks);
                           all_scatter splits N (B column-wise: --gn is N, each rank N / ranks)
  --BLK_M, --BLK_N         --base-m, --base-n (the output tile; Tandem's defaults when not given:
                           Iris's 256 x 256 fp32 accumulator does not fit a 910B's L0C)
  --BLK_K                  not mapped: the cube's K panel is base-n (the published Ascend K loop)
  --gemm_sms               the GEMM's blocks: --compute-blocks (all_reduce, one_shot), --gemm-blocks
                           (all_scatter)
  --total_sms              all_scatter: --total-blocks (the MIX kernel's clusters)
  --COMMUNICATION_TILE_M/N all_scatter: --comm-tile-m/-n
  --communication_block_size  not mapped (a Triton block size; the vector cores' unit is the
                           comm tile)
  --datatype               fp16 or bf16 (--dtype; Tandem's cube takes no fp32 or int8 inputs)
  --validate               a functional run, verified against the golden
  --benchmark              timing (without --validate: a timing-only run, any size)
  --schedule               stream_k (default: the seed's), hybrid or data_parallel
Flags after -- go to tandem unchanged. Standard library only.
"""
import argparse
import json
import os
import sys

from iris_driver import DEFAULT_BINARY, require_binary, run_tandem, timing_line, verdict_line

ALGORITHMS = {
    "all_reduce": ("matmul_all_reduce", "atomic"),
    "one_shot": ("matmul_all_reduce", "one_shot"),
    "all_scatter": ("matmul_all_scatter", "specialized"),
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-m", type=int, default=4864, help="rows of A and C (default: 4864)")
    p.add_argument("-n", type=int, default=4096, help="columns of B and C (default: 4096)")
    p.add_argument("-k", type=int, default=8256, help="the common dimension (default: 8256)")
    p.add_argument("--num_ranks", type=int, default=2, help="ranks (Tandem's -n; the seed's mpirun -np)")
    p.add_argument("--validate", action="store_true", help="functional run, verified")
    p.add_argument("--benchmark", action="store_true", help="report the times")
    p.add_argument("--debug", action="store_true", help="accepted; no effect")
    p.add_argument("--datatype", default="fp16", choices=("fp16", "fp32", "int8", "bf16"))
    p.add_argument("--algorithm", default="all_reduce", choices=tuple(ALGORITHMS))
    p.add_argument("--output_file", default="log.json")
    p.add_argument("--BLK_M", type=int)
    p.add_argument("--BLK_N", type=int)
    p.add_argument("--BLK_K", type=int)
    p.add_argument("--COMMUNICATION_TILE_M", type=int)
    p.add_argument("--COMMUNICATION_TILE_N", type=int)
    p.add_argument("--gemm_sms", type=int)
    p.add_argument("--total_sms", type=int)
    p.add_argument("--communication_block_size", type=int)
    p.add_argument("--schedule", default="stream_k", choices=("stream_k", "hybrid", "data_parallel"))
    p.add_argument("--binary", default=DEFAULT_BINARY)
    p.add_argument("extra", nargs="*", help="more tandem flags after --")
    return p.parse_args(argv)


def note(msg):
    print(f"iris_streamk: {msg}", file=sys.stderr)


def tandem_command(a):
    if a.datatype not in ("fp16", "bf16"):
        raise SystemExit(f"--datatype {a.datatype}: Tandem's cube takes fp16 or bf16 inputs; use --datatype fp16 or bf16")
    op, variant = ALGORITHMS[a.algorithm]
    cmd = [a.binary, "--op", op, "--variant", variant, "--schedule", a.schedule, "-n", str(a.num_ranks),
           "--gm", str(a.m), "--dtype", a.datatype, "--json", a.output_file, "--quiet"]
    if op == "matmul_all_reduce":
        if a.k % a.num_ranks != 0:
            raise SystemExit(f"-k {a.k}: {a.algorithm} splits K over the {a.num_ranks} ranks; K must be a multiple "
                             f"of them (nearest: {round(a.k / a.num_ranks) * a.num_ranks or a.num_ranks})")
        cmd += ["--gk", str(a.k // a.num_ranks), "--gn", str(a.n)]
        if a.gemm_sms is not None:
            cmd += ["--compute-blocks", str(a.gemm_sms)]
        for flag in ("total_sms", "COMMUNICATION_TILE_M", "COMMUNICATION_TILE_N"):
            if getattr(a, flag) is not None:
                note(f"--{flag} not mapped for --algorithm {a.algorithm} (its reduction has no such knob)")
    else:
        cmd += ["--gk", str(a.k), "--gn", str(a.n)]
        for flag, tandem_flag in (("gemm_sms", "--gemm-blocks"), ("total_sms", "--total-blocks"),
                                  ("COMMUNICATION_TILE_M", "--comm-tile-m"), ("COMMUNICATION_TILE_N", "--comm-tile-n")):
            if getattr(a, flag) is not None:
                cmd += [tandem_flag, str(getattr(a, flag))]
    if a.BLK_M is not None:
        cmd += ["--base-m", str(a.BLK_M)]
    if a.BLK_N is not None:
        cmd += ["--base-n", str(a.BLK_N)]
    if a.BLK_K is not None:
        note(f"--BLK_K {a.BLK_K} not mapped: the cube's K panel is base-n")
    if a.communication_block_size is not None:
        note("--communication_block_size not mapped: the vector cores move comm tiles")
    if not a.validate:
        cmd.append("--timing-only")
    return cmd + a.extra


def main(argv):
    a = parse_args(argv)
    require_binary(a.binary)
    if not (a.validate or a.benchmark):
        raise SystemExit("nothing to do: give --validate and/or --benchmark")
    results, error = run_tandem(tandem_command(a), a.output_file)
    if results is None:
        raise SystemExit(error)
    results["iris_args"] = {key: value for key, value in vars(a).items() if key not in ("binary", "extra")}
    tmp = a.output_file + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1)
    os.replace(tmp, a.output_file)
    label = f"{a.algorithm} ({results['op']} {results['variant']}, {results['schedule']}) M={a.m} N={a.n} K={a.k} ranks={a.num_ranks}"
    ok = True
    if a.validate:
        line, ok = verdict_line(label, results)
        print(line)
    if a.benchmark:
        print(timing_line(label, results, a.output_file,
                          ("compute-only", f"compute-only {results['compute_only_us']:.1f} us"),
                          ("sequential", f"sequential {results['sequential_us']:.1f} us")))
    return 0 if ok and error is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
