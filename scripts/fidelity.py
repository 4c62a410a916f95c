#!/usr/bin/python3
"""Fidelity report: simulated vs measured AllGather+GEMM times on the calibration rows.

For every row of sim/calibration/allgather_gemm_<SoC>.csv it runs the host program in
timing-only mode and compares the measured pipelined time with the simulated one (the mean over
ranks, see sim/MODEL.md; the slowest rank is shown too). Prints the relative error per row and
the mean absolute error; exits 1 if any row is off by more than 10 percent.
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
    print(f"{'ranks':>5} {'M':>6} {'K':>6} {'N':>6} | {'measured us':>11} {'simulated us':>12} {'error':>7} | "
          f"{'slowest rank':>12} {'bound by':>9}")
    errors = []
    for row in read_rows(rows_path):
        result = simulate(args.binary, profile_args, row)
        measured = float(row["measured_ms"]) * 1000.0
        simulated = result["pipelined_rank_mean_us"]
        err = (simulated - measured) / measured * 100.0
        errors.append(err)
        bound = "comm" if result["seq_comm_us"] > result["compute_only_us"] else "compute"
        flag = "  <-- over 10%" if abs(err) > LIMIT_PCT else ("  (over 5%)" if abs(err) > AIM_PCT else "")
        print(f"{row['ranks']:>5} {row['m']:>6} {row['k']:>6} {row['n']:>6} | {measured:11.1f} {simulated:12.1f} "
              f"{err:+6.2f}% | {result['pipelined_us']:12.1f} {bound:>9}{flag}")
    mae = sum(abs(e) for e in errors) / len(errors)
    worst = max(abs(e) for e in errors)
    print(f"mean absolute error {mae:.2f}%, worst row {worst:.2f}% (limit {LIMIT_PCT:.0f}%, aim {AIM_PCT:.0f}%)")
    return 1 if worst > LIMIT_PCT else 0


if __name__ == "__main__":
    sys.exit(main())
