#!/usr/bin/python3
"""Fidelity report: simulated vs measured AllGather+GEMM times on the calibration rows.

For every row of sim/calibration/allgather_gemm_<SoC>.csv it runs the host program in
timing-only mode and compares the measured pipelined time with rank 0's simulated one: the seed's
host program prints rank 0's own average (PrintRank0Results), so that is what was measured (see
sim/MODEL.md). The rank mean and the slowest rank (the results JSON's headline: when the op is
done for a user) are printed beside it. Prints the relative error per row and the mean absolute
error; exits 1 if any row is off by more than 10 percent.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT_PCT = 10.0   # the project's hard limit per row
AIM_PCT = 5.0      # what we aim for


def read_rows(path):
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines))


def simulate(binary, profile_args, row):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [binary, *profile_args, "-n", row["ranks"], "--gm", row["m"], "--gk", row["k"], "--gn", row["n"],
               "--timing-only", "--quiet", "--json", out]
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"fidelity: {' '.join(cmd)} failed: {done.stderr.strip()}")
        with open(out) as f:
            return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "allgather_gemm"))
    ap.add_argument("-v", "--soc-version", default="Ascend910B1")
    ap.add_argument("--profile", help="profile file to use instead of the SoC's shipped one")
    ap.add_argument("--rows", help="calibration CSV (default: sim/calibration/allgather_gemm_<SoC>.csv)")
    args = ap.parse_args()
    rows_path = args.rows or os.path.join(ROOT, "sim", "calibration", f"allgather_gemm_{args.soc_version}.csv")
    if not os.path.exists(rows_path):
        sys.exit(f"fidelity: no calibration rows for {args.soc_version} ({rows_path} does not exist)")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"fidelity: {args.binary} is not built: run ./run.sh fidelity")
    profile_args = ["--profile", args.profile] if args.profile else ["-v", args.soc_version]

    print(f"Fidelity of {args.profile or args.soc_version} on {os.path.relpath(rows_path, ROOT)}")
    print(f"{'ranks':>5} {'M':>6} {'K':>6} {'N':>6} | {'measured us':>11} {'rank 0 us':>10} {'error':>7} | "
          f"{'rank mean':>9} {'slowest':>8} {'bound by':>9}")
    errors = []
    for row in read_rows(rows_path):
        result = simulate(args.binary, profile_args, row)
        measured = float(row["measured_ms"]) * 1000.0
        per_rank = result.get("per_rank") or []
        if not per_rank:
            sys.exit(f"fidelity: the results JSON of row {row} has no per_rank[] entries")
        simulated = per_rank[0]["pipelined_us"]  # rank 0, as the seed prints
        err = (simulated - measured) / measured * 100.0
        errors.append(err)
        rank0 = per_rank[0]
        bound = "comm" if rank0["seq_comm_us"] > rank0["compute_only_us"] else "compute"  # rank 0's own views
        flag = "  <-- over 10%" if abs(err) > LIMIT_PCT else ("  (over 5%)" if abs(err) > AIM_PCT else "")
        print(f"{row['ranks']:>5} {row['m']:>6} {row['k']:>6} {row['n']:>6} | {measured:11.1f} {simulated:10.1f} "
              f"{err:+6.2f}% | {result['pipelined_rank_mean_us']:9.1f} {result['pipelined_us']:8.1f} {bound:>9}{flag}")
    mae = sum(abs(e) for e in errors) / len(errors)
    worst = max(abs(e) for e in errors)
    print(f"rank 0 vs measured: mean absolute error {mae:.2f}%, worst row {worst:.2f}% "
          f"(limit {LIMIT_PCT:.0f}%, aim {AIM_PCT:.0f}%)")
    return 1 if worst > LIMIT_PCT else 0


if __name__ == "__main__":
    sys.exit(main())
