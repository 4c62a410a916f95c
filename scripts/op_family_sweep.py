#!/usr/bin/python3
"""Every registered op and variant on a few shapes: which variant wins where, and where fusion loses.

    op_family_sweep.py [--tandem build/tandem] [--ranks 8] [--shapes 2048x2048x2048,...]
                       [--out out/family] [--jobs 2] [--soc Ascend910B1]

It reads the ops and variants from `tandem --list-ops --json`, writes one sweep row per op x variant x
shape (timing-only; the flags mean what they mean for each op: --gk is each rank's K for the
ops whose K is split, see --list-ops), runs `tandem --sweep` (its progress on stderr), and writes:

  OUT.csv, OUT.json   the sweep's own results (docs/RESULTS.md objects, one per row that ran)
  OUT.md              per op and shape: each variant's pipelined time, its speedup over the
                      op's sequential baseline (the collective kernel and the GEMM kernel one after
                      the other), the best variant; refused rows with the op's one-line reason
  OUT.png             the speedups as bars, one panel per op, a line at 1.0 (below it fusion loses)

Exit code: 0 if the sweep ran (refused rows are part of the answer), else the sweep's code.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BAD_ROW = re.compile(r"^sweep .* line (\d+): (.*)$")


SPLIT_WORDS = {"replicated": "the same on every rank", "rows": "split by rows", "cols": "split by columns"}


def contract_note(first, v):
    """"" when variant v computes what its op's first variant computes (inputs, output dtype, what
    each rank ends with, as each runs by default); else how it differs ("fp16 out, B the same on
    every rank"): another problem, which the table does not rank beside the others."""
    diff = []
    if v["out_dtypes"][0] != first["out_dtypes"][0]:
        diff.append(f"{v['out_dtypes'][0]} out")
    for key, name in (("a", "A"), ("b", "B")):
        if v["sharding"][key] != first["sharding"][key]:
            diff.append(f"{name} {SPLIT_WORDS[v['sharding'][key]]}")
    if (v["sharding"]["out"], v["sharding"]["k_per_rank"]) != (first["sharding"]["out"], first["sharding"]["k_per_rank"]):
        diff.append("another output")
    return ", ".join(diff)


def list_variants(tandem):
    """[(op, variant, contract note)] in --list-ops order (`--list-ops --json`: the registry as data)."""
    out = subprocess.run([tandem, "--list-ops", "--json", "/dev/stdout"], check=True, capture_output=True,
                         text=True).stdout
    pairs = [(op["name"], v["name"], contract_note(op["variants"][0], v))
             for op in json.loads(out)["ops"] for v in op["variants"]]
    if not pairs:
        raise SystemExit(f"{tandem} --list-ops printed no op with a variant")
    return pairs


def parse_shapes(text):
    shapes = []
    for s in text.split(","):
        parts = s.lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise SystemExit(f"--shapes: '{s}' is not MxKxN (positive integers)")
        shapes.append(tuple(int(p) for p in parts))
    return shapes


def shape_label(m, k, n):
    return f"{m}x{k}x{n}"


def write_rows(path, ranks, shapes, pairs, soc):
    """One row per (shape, op, variant); returns {sweep line: (shape, op, variant, contract note)}."""
    rows = {}
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ranks", "m", "k", "n", "op", "variant", "profile"])
        line = 1
        for shape in shapes:
            for op, variant, note in pairs:
                line += 1
                w.writerow([ranks, *shape, op, variant, soc])
                rows[line] = (shape, op, variant, note)
    return rows


def run_sweep(tandem, rows_csv, prefix, jobs):
    """Runs the sweep; its progress line goes on to stderr as it comes (a family of shapes takes
    minutes), its refused rows are collected: {sweep line: the op's reason}."""
    cmd = [tandem, "--sweep", rows_csv, "--sweep-out", prefix, "--jobs", str(jobs)]  # not --quiet: its progress
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, bufsize=1)
    refused = {}
    tty = sys.stderr.isatty()
    for line in proc.stderr:  # the sweep ends each progress update with a newline off a terminal
        line = line.rstrip("\n").split("\r")[-1]
        m = BAD_ROW.match(line)
        if m:
            refused[int(m.group(1))] = m.group(2)
        elif line.startswith("sweep:") and "done" in line:
            print(("\r" if tty else "") + line, end="" if tty else "\n", file=sys.stderr, flush=True)
        elif line.strip():
            print(line, file=sys.stderr)
    if tty:
        print(file=sys.stderr)
    if proc.wait() not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return refused


def collect(prefix, rows, refused):
    """{(shape, op): [(variant, result or None, reason, contract note)]} in row order."""
    with open(prefix + ".json") as f:
        results = {r["sweep_line"]: r for r in json.load(f)}
    table = {}
    for line, (shape, op, variant, note) in sorted(rows.items()):
        r = results.get(line)
        reason = refused.get(line, "" if r else "did not run")
        table.setdefault((shape, op), []).append((variant, r, reason, note))
    return table


def baseline_us(r):
    return r["seq_comm_us"] + r["seq_compute_us"]


def markdown(table, ranks, soc):
    lines = [f"{ranks} ranks, {soc}, timing-only. Speedup = the op's sequential baseline "
             "(collective kernel and GEMM kernel one after the other) / the variant's pipelined time; "
             "below 1.00 the fused kernel loses to the baseline. `best` is the fastest of the variants that "
             "compute what the op's first variant computes; a variant that computes another problem says how.", "",
             "| op | M x K x N | variant | pipelined us | baseline us | speedup | |",
             "|---|---|---|---|---|---|---|"]
    for (shape, op), entries in table.items():
        ran = [(v, r) for v, r, _, note in entries if r and not note]
        best = max(ran, key=lambda vr: baseline_us(vr[1]) / vr[1]["pipelined_us"])[0] if ran else None
        for variant, r, reason, note in entries:
            if r:
                s = baseline_us(r) / r["pipelined_us"]
                marks = ["best"] if variant == best else (["fusion loses"] if s < 1.0 else [])
                if note:
                    marks.append(f"another problem: {note}")
                lines.append(f"| {op} | {shape_label(*shape)} | {variant} | {r['pipelined_us']:.1f} | "
                             f"{baseline_us(r):.1f} | {s:.2f}x | {'; '.join(marks)} |")
            else:
                lines.append(f"| {op} | {shape_label(*shape)} | {variant} | refused | | | {reason} |")
    return "\n".join(lines) + "\n"


def chart(table, path, ranks):
    ops = list(dict.fromkeys(op for _, op in table))
    shapes = list(dict.fromkeys(shape for shape, _ in table))
    fig, axes = plt.subplots(len(ops), 1, figsize=(10, 2.6 * len(ops)), squeeze=False)
    for ax, op in zip(axes[:, 0], ops):
        variants = list(dict.fromkeys(v for (s, o), es in table.items() if o == op for v, _, _, _ in es))
        width = 0.8 / max(1, len(variants))
        for i, v in enumerate(variants):
            xs, ys = [], []
            for j, shape in enumerate(shapes):
                for variant, r, _, _ in table.get((shape, op), []):
                    if variant == v and r:
                        xs.append(j + (i - (len(variants) - 1) / 2) * width)
                        ys.append(baseline_us(r) / r["pipelined_us"])
            ax.bar(xs, ys, width, label=v)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(shapes)))
        ax.set_xticklabels([shape_label(*s) for s in shapes])
        ax.set_ylabel("speedup")
        ax.set_title(f"{op} ({ranks} ranks): speedup over the sequential baseline", fontsize=9)
        ax.legend(fontsize=7, loc="upper left", ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tandem", default="build/tandem")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--shapes", default="2048x2048x2048,4096x4096x4096,8192x8192x8192")
    ap.add_argument("--out", default="out/family")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--soc", default="Ascend910B1")
    args = ap.parse_args()
    if not os.access(args.tandem, os.X_OK):
        raise SystemExit(f"--tandem {args.tandem}: not an executable (build first: cmake --build build)")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    pairs = list_variants(args.tandem)
    rows_csv = args.out + ".rows.csv"
    rows = write_rows(rows_csv, args.ranks, parse_shapes(args.shapes), pairs, args.soc)
    refused = run_sweep(args.tandem, rows_csv, args.out, args.jobs)
    table = collect(args.out, rows, refused)
    md = markdown(table, args.ranks, args.soc)
    with open(args.out + ".md", "w") as f:
        f.write(md)
    chart(table, args.out + ".png", args.ranks)
    print(md)
    print(f"wrote {args.out}.md, {args.out}.png, {args.out}.csv, {args.out}.json")


if __name__ == "__main__":
    main()
