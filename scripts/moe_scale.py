#!/usr/bin/python3
"""The MoE layer and its all-to-all at growing expert parallelism on the A3 profile, as Markdown tables.

    moe_scale.py alone [--ep 8,16,...] [--m 128] [--ops moe_dispatch,moe_combine:push]
                                                      the MoE all-to-all alone (K 7168, top-8);
                                                      an op alone runs each of its variants
    moe_scale.py layer [--ep 32,64,...] [--m 16,128] [--variants baseline,expert_major]
                                                      moe_ffn's replicas (K 7168, N 4096, top-8)

Every run is timing-only on -v Ascend910_9392 (16 dies per node, nodes on CloudMatrix384's second
tier), 16 experts per rank, the published round-robin router; each prints its results JSON to a
scratch file, read back here. `alone` prints each op's kernel time as the profiler counts task
durations (slowest rank) with its two stages' spans, beside the published A3 figures of
sim/calibration/alltoall_alone_Ascend910_9392.csv at the same EP and tokens. `layer` prints the
kernel timer of the slowest rank (its last core's end less its first core's start, what the
published MegaMoE host times) with every stage's span (rank 0) and the bytes a rank receives.
The docs quote both (docs/figures.toml: moe-alone-*, moe-scale-*).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILE = "Ascend910_9392"
DIES_PER_NODE = 16  # the profile's interconnect.ranks_per_node: only to print a run's node count
MEASURED = os.path.join(ROOT, "sim", "calibration", f"alltoall_alone_{PROFILE}.csv")
# Each op alone: its variants and the two stages its table shows.
ALONE_OPS = (("moe_dispatch", ("pull", "push"), ("front", "dispatch")), ("moe_combine", ("push",), ("combine", "unpermute")))
LAYER_STAGES = ("front", "dispatch", "gmm1", "swiglu", "gmm2", "combine", "unpermute")


def ints(text):
    try:
        return [int(v) for v in text.split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers") from None


def run_tandem(tandem, args, costs=None):
    """One timing-only run; its results JSON as a dict. Exits 2 naming the command if it fails.
    With `costs` (a file open for appending), the run's host cost goes there too: its CPU seconds
    and peak RSS as /usr/bin/time counts them (host figures, which no run repeats)."""
    with tempfile.TemporaryDirectory(prefix="tandem_moe_scale_") as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [tandem, *args, "-v", PROFILE, "--timing-only", "--quiet", "--json", out]
        timed = ["/usr/bin/time", "-f", "%U %S %M %e", "-o", os.path.join(tmp, "cost"), *cmd] if costs else cmd
        proc = subprocess.run(timed, cwd=ROOT, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"moe_scale.py: `{' '.join(cmd)}` exited {proc.returncode}:\n{proc.stderr.strip()}")
        if costs:
            with open(os.path.join(tmp, "cost"), encoding="utf-8") as f:
                user_s, sys_s, rss_kib, wall_s = f.read().split()[-4:]
            costs.write(f"{' '.join(args)}: {float(user_s) + float(sys_s):.1f} CPU s, "
                        f"peak RSS {int(rss_kib) / 1024:.0f} MiB, {float(wall_s):.0f} s wall\n")
            costs.flush()
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def pipelined_launch(result):
    """The pipelined view's one launch (both ops and both replicas are one launch there)."""
    launches = [k for k in result["kernels"] if k["view"] == "pipelined"]
    if len(launches) != 1:
        sys.exit(f"moe_scale.py: {result['op']} at {result['ranks']} ranks has {len(launches)} pipelined launches, not 1")
    return launches[0]


def kernel_timer_max_rank_us(launch):
    """The kernel timer as the published MegaMoE host reads it: per rank, its last core's end less
    its first core's start; the slowest rank."""
    return max(r["end_us"] - r["start_us"] for r in launch["per_rank"])


def stage_spans(launch):
    return {s["stage"]: s["span_us"] for s in launch["stages"]}


def measured_rows():
    """{(op, ep, tokens): [(value, unit, source)]} from the calibration file (its '#' lines are notes)."""
    rows = {}
    with open(MEASURED, encoding="utf-8") as f:
        for r in csv.DictReader(ln for ln in f if not ln.startswith("#")):
            key = (r["op"], int(r["ep"]), int(r["tokens_per_rank"]))
            rows.setdefault(key, []).append((float(r["value"]), r["unit"], r["source"]))
    return rows


def describe_measured(entries, tandem_us, payload_bytes):
    """'116 us (CM384 Table 7; 0.71x)': each published figure and Tandem against it (a time's
    ratio is Tandem / measured; a rate's, Tandem's bytes over its time / the measured rate)."""
    out = []
    for value, unit, source in entries:
        if unit == "us":
            out.append(f"{value:g} us ({source}; {tandem_us / value:.2f}x)")
        else:
            rate = payload_bytes / tandem_us / 1e3
            out.append(f"{value:g} GB/s ({source}; {rate / value:.2f}x)")
    return ", ".join(out) if out else ""


def alone(args):
    measured = measured_rows()
    stages_of = {op: stages for op, _, stages in ALONE_OPS}
    configs = [(op, v, ep, m) for op, v in args.ops for m in args.m for ep in args.ep]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda c: run_tandem(args.tandem, ["--op", c[0], "--variant", c[1], "-n", str(c[2]),
                                                                   "--gm", str(c[3]), "--gk", "7168"], args.costs), configs))
    print("| op | variant | EP | tokens per rank | Tandem kernel (stages) | payload per rank | published (Tandem / published) |")
    print("|---|---|---|---|---|---|---|")
    for (op, variant, ep, m), r in zip(configs, results):
        launch = pipelined_launch(r)
        kernel_us = launch["kernel_us_max"]
        spans = stage_spans(launch)
        stages = ", ".join(f"{s} {spans[s]:.1f}" for s in stages_of[op])
        payload = r["comm_payload_bytes"]
        published = describe_measured(measured.get((op, ep, m), []), kernel_us, payload)
        print(f"| {op} | {variant} | {ep} | {m} | {kernel_us:.1f} us ({stages}) | {payload / 1e6:.2f} MB | {published} |")


def alone_ops(text):
    """--ops as [(op, variant)]: `op` is each of its variants, `op:variant` that one."""
    variants_of = {op: variants for op, variants, _ in ALONE_OPS}
    out = []
    for item in (o for o in text.split(",") if o):
        op, _, variant = item.partition(":")
        if op not in variants_of:
            raise argparse.ArgumentTypeError(f"'{op}' is not one of {', '.join(variants_of)}")
        if variant and variant not in variants_of[op]:
            raise argparse.ArgumentTypeError(f"{op} has no variant '{variant}' (its variants: {', '.join(variants_of[op])})")
        out += [(op, v) for v in ([variant] if variant else variants_of[op])]
    return out


def layer(args):
    configs = [(v, m, ep) for m in args.m for v in args.variants for ep in args.ep]
    head = " / ".join(LAYER_STAGES)
    print(f"| variant | M | EP (nodes) | kernel, slowest rank | stage spans, rank 0: {head} (us) | bounding stage "
          "| dispatch / combine bytes in, rank 0 |")
    print("|---|---|---|---|---|---|---|", flush=True)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = pool.map(lambda c: run_tandem(args.tandem, ["--op", "moe_ffn", "--variant", c[0], "-n", str(c[2]),
                                                              "--gm", str(c[1]), "--gk", "7168", "--gn", "4096"],
                                                args.costs), configs)
        for (variant, m, ep), r in zip(configs, results):
            print(layer_row(variant, m, ep, r), flush=True)


def layer_row(variant, m, ep, r):
    launch = pipelined_launch(r)
    spans = stage_spans(launch)
    cells = " / ".join(f"{spans[s]:.1f}" if s in spans else "-" for s in LAYER_STAGES)
    nodes = -(-ep // DIES_PER_NODE)
    d_in = r["moe_dispatch_bytes_in_per_rank"][0] / 1e6
    c_in = r["moe_combine_bytes_in_per_rank"][0] / 1e6
    return (f"| {variant} | {m} | {ep} ({nodes}) | {kernel_timer_max_rank_us(launch):.1f} us | {cells} | "
            f"{r['pipelined_stages']['bounding_stage']} | {d_in:.2f} / {c_in:.2f} MB |")


def main():
    ap = argparse.ArgumentParser(prog="moe_scale.py", description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("alone", "layer"))
    ap.add_argument("--tandem", default="build/tandem", help="the tandem binary (default build/tandem)")
    ap.add_argument("--ep", type=ints, help="EP degrees (alone: 8,16; layer: 32,64,128)")
    ap.add_argument("--m", type=ints, help="tokens per rank (alone: 128; layer: 16,128)")
    ap.add_argument("--ops", type=alone_ops, default="moe_dispatch,moe_combine",
                    help="alone: the ops, each as op (every variant) or op:variant")
    ap.add_argument("--variants", default="baseline,expert_major", help="layer: moe_ffn variants")
    ap.add_argument("--costs", type=argparse.FileType("a"), help="append each run's CPU s and peak RSS to this file")
    ap.add_argument("--jobs", type=int, default=1, help="runs at once (default 1: the large ones need the memory)")
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(ROOT, args.tandem)) and not os.path.isfile(args.tandem):
        ap.error(f"--tandem: no binary at {args.tandem} (build it: cmake --build build --target tandem)")
    args.variants = [v for v in args.variants.split(",") if v]
    if args.what == "alone":
        args.ep = args.ep or [8, 16]
        args.m = args.m or [128]
        alone(args)
    else:
        args.ep = args.ep or [32, 64, 128]
        args.m = args.m or [16, 128]
        layer(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
