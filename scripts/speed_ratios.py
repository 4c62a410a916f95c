#!/usr/bin/env python3
"""Timing-only speed and memory of a build against a baseline, as ratios, in one run.

    scripts/speed_ratios.py [--new build/tandem] [--base OTHER/tandem | --baseline FILE]
                            [--new-profile FILE] [--reps N] [--cases mesh64,ops64,mesh384]
                            [--record FILE]

Each case is `tandem ... --timing-only --quiet` under /usr/bin/time: CPU seconds (user + system,
all threads), wall seconds and peak RSS, the median of --reps runs (CPU and wall) and the largest
RSS. With --base, the baseline binary runs the same cases in the same call, the two alternating
run by run (on a shared machine the speed drifts within minutes, so only a paired call compares
CPU and wall). With --baseline, the figures stored in FILE (written by --record from a --base
call) stand for the baseline: memory compares across calls, times only roughly. With neither,
the figures stored in the repository for the reference build (the one before the shared chip
memory model, commit d0e0609: bench/reference_d0e0609.tsv, recorded on the 2-core development
machine) stand for it, and the new build runs on examples/profiles/FullMesh64.toml unless
--new-profile says otherwise: peak memory compares on any machine, CPU and wall only on one
like the one that recorded them.

--new-profile FILE runs the new build on that profile (the base on its own default): a build
from before servers and NICs were modelled simulated Ascend910B1 at 64 ranks as one full mesh,
which examples/profiles/FullMesh64.toml describes, so that the two simulate the same wiring.

Cases: mesh64 (AllGather+GEMM, 64 ranks of Ascend910B1, 16384x4096x4096), ops64 (every op and
variant the new binary lists, at 64 ranks, on the op's scale shape, `--list-ops --json`'s
scale_shape: what build/tests/scale_bench --ops-only runs), mesh384 (98304x4096x4096 on 384
ranks: minutes). Limits printed beside the ratios: 1.10 for the meshes, 1.25 for each op variant
(issue 60). A case the base cannot run (an op it lacks) is printed without ratios. Exit status 1
if a case is over its limit or the new build fails one.
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile

MESH64 = ["-v", "Ascend910B1", "-n", "64", "--gm", "16384", "--gk", "4096", "--gn", "4096"]
MESH384 = ["-v", "Ascend910B1", "-n", "384", "--gm", "98304", "--gk", "4096", "--gn", "4096"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The reference build's figures, stored (--record), and the wiring it simulated at 64 ranks.
STORED_REFERENCE = os.path.join(ROOT, "bench", "reference_d0e0609.tsv")
REFERENCE_WIRING = os.path.join(ROOT, "examples", "profiles", "FullMesh64.toml")


def list_variants(binary):
    """(op, variant, (m, k, n)) of every op and variant `binary` lists, at its scale shape."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ops.json")
        subprocess.run([binary, "--list-ops", "--json", path], stdout=subprocess.DEVNULL, check=True)
        with open(path) as f:
            ops = json.load(f)["ops"]
    variants = []
    for op in ops:
        shape = op["scale_shape"]
        if shape["ranks"] != 64:
            sys.exit(f"speed_ratios.py: op '{op['name']}' has a scale shape of {shape['ranks']} ranks, not 64")
        for v in op["variants"]:
            variants.append((op["name"], v["name"], (shape["m"], shape["k"], shape["n"])))
    return variants


def cases_for(names, binary):
    cases = []
    for name in names:
        if name == "mesh64":
            cases.append(("mesh64", MESH64, 1.10))
        elif name == "mesh384":
            cases.append(("mesh384", MESH384, 1.10))
        elif name == "ops64":
            for op, variant, (m, k, n) in list_variants(binary):
                args = ["-n", "64", "--op", op, "--variant", variant, "--gm", str(m), "--gk", str(k), "--gn", str(n)]
                cases.append((f"{op}/{variant}", args, 1.25))
        else:
            sys.exit(f"speed_ratios.py: unknown case '{name}' (mesh64, ops64, mesh384)")
    return cases


def run_once(binary, args):
    """(cpu_s, wall_s, rss_kib) of one run, or None if the binary refuses the case."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".time") as t:
        cmd = ["/usr/bin/time", "-o", t.name, "-f", "%e %U %S %M", binary, *args, "--timing-only", "--quiet"]
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            return None
        wall, user, sys_s, rss = t.read().split()[-4:]
        return float(user) + float(sys_s), float(wall), int(rss)


def summarize(runs):
    runs = [r for r in runs if r is not None]
    if not runs:
        return None
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), max(r[2] for r in runs))


def host_description():
    """The machine's CPU model and core count, for a recorded baseline's header."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def read_baseline(path):
    figures = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, cpu, wall, rss = line.split("\t")[:4]
            figures[name] = (float(cpu), float(wall), int(rss))
    return figures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", default="build/tandem", help="the build measured (default build/tandem)")
    ap.add_argument("--base", help="the baseline binary, run in the same call")
    ap.add_argument("--baseline", help="stored baseline figures (a file --record wrote)")
    ap.add_argument("--reps", type=int, default=3, help="runs per case and binary (default 3)")
    ap.add_argument("--cases", default="mesh64,ops64", help="mesh64, ops64, mesh384 (default mesh64,ops64)")
    ap.add_argument("--record", help="write the baseline's figures (--base) to this file")
    ap.add_argument("--new-profile", help="a profile file for the new build only (e.g. examples/profiles/FullMesh64.toml)")
    a = ap.parse_args()
    if a.base is not None and a.baseline is not None:
        sys.exit("speed_ratios.py: give one of --base BINARY or --baseline FILE, not both")
    if a.base is None and a.baseline is None:
        a.baseline = STORED_REFERENCE
        if a.new_profile is None:
            a.new_profile = REFERENCE_WIRING
        print(f"baseline: {os.path.relpath(STORED_REFERENCE)} (the reference build's figures, stored; the new "
              f"build on {os.path.relpath(a.new_profile)}): memory compares anywhere, CPU and wall only on a "
              f"machine like the one that recorded them")
    if a.baseline is not None and not os.path.isfile(a.baseline):
        sys.exit(f"speed_ratios.py: --baseline {a.baseline}: no such file")
    if a.record and not a.base:
        sys.exit("speed_ratios.py: --record writes the figures of --base BINARY; give it one")
    if a.reps < 1:
        sys.exit("speed_ratios.py: --reps must be at least 1")
    for b in [a.new] + ([a.base] if a.base else []):
        if not os.access(b, os.X_OK):
            sys.exit(f"speed_ratios.py: {b} is not an executable (build it first)")
    stored = read_baseline(a.baseline) if a.baseline else None
    cases = cases_for(a.cases.split(","), a.new)
    new_args = []
    if a.new_profile:
        if not os.path.isfile(a.new_profile):
            sys.exit(f"speed_ratios.py: --new-profile {a.new_profile}: no such file")
        new_args = ["--profile", a.new_profile]
    print(f"{'case':<40} {'CPU s new/base':>16} {'wall s new/base':>16} {'RSS MiB new/base':>18} "
          f"{'CPU':>6} {'wall':>6} {'RSS':>6}  limit")
    over = 0
    recorded = []
    for name, args, limit in cases:
        new_runs, base_runs = [], []
        for _ in range(a.reps):
            if a.base:
                base_runs.append(run_once(a.base, args))
            new_runs.append(run_once(a.new, new_args + args))
        new = summarize(new_runs)
        base = summarize(base_runs) if a.base else stored.get(name)
        if new is None:
            print(f"{name:<40} the new build failed this case")
            over += 1
            continue
        if base is None:
            print(f"{name:<40} {new[0]:>7.2f} / -     {new[1]:>7.2f} / -     {new[2] / 1024:>8.0f} / -        "
                  f"(no baseline)")
            continue
        recorded.append((name, base))
        ratios = [new[0] / base[0], new[1] / base[1], new[2] / base[2]]
        flag = "OVER" if ratios[0] > limit or ratios[2] > limit or (a.base and ratios[1] > limit) else "ok"
        over += flag == "OVER"
        print(f"{name:<40} {new[0]:>7.2f} / {base[0]:<7.2f} {new[1]:>7.2f} / {base[1]:<7.2f} "
              f"{new[2] / 1024:>8.0f} / {base[2] / 1024:<8.0f} {ratios[0]:>6.2f} {ratios[1]:>6.2f} {ratios[2]:>6.2f}  "
              f"{limit:.2f} {flag}")
    if a.record and a.base:
        with open(a.record, "w") as f:
            f.write(f"# baseline figures of {a.base}: case, CPU s, wall s, peak RSS KiB (medians of {a.reps})\n")
            f.write(f"# recorded {datetime.date.today().isoformat()} on {host_description()}\n")
            for name, (cpu, wall, rss) in recorded:
                f.write(f"{name}\t{cpu:.3f}\t{wall:.3f}\t{rss}\n")
    print(f"{len(cases) - over} passed, {over} failed")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
