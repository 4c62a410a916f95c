#!/usr/bin/python3
"""Per kernel launch and per core, the way msprof's op summary lists a kernel: a CSV from a trace.

    kernel_csv.py TRACE [-o OUT.csv] [--results RESULTS.json]

One row per (rank, launch of the pipelined view, core that ran a block of it), in rank, launch
and core order:
  rank, launch, stream, kernel, core_type, core, blocks   what ran where (blocks: its blocks on
                                                          that core, more than one in waves)
  kernel_us, start_us, end_us                             the launch's device time on the rank
  aic_cube_ratio .. aiv_mte3_ratio                        busy / kernel time of each pipe of the
                                                          core (msprof's PipeUtilization; blank
                                                          for the other core type's pipes)
  bound_pipe                                              the core's busiest pipe (its highest ratio)
  gm_read_bytes, gm_write_bytes                           bytes its TLOADs read, its TSTOREs wrote
  remote_read_bytes, remote_write_bytes                   the part of those on another rank's GM
  l2_hit_pct                                              the launch's local GM reads served by the
                                                          L2, in % (the results' kernels entry
                                                          `l2_hit_pct`, for the rank it reports;
                                                          blank where the results do not give it)
SCALAR is not in the trace (a TWAIT slice holds its waiting), so it has no column. A trace limited
to a time window is refused (a launch's slices may be cut); one limited to some ranks gives rows
for those.
"""
import argparse
import csv
import io
import sys
from collections import defaultdict

import report
import tandem_trace as tt
from tandem_trace import TraceError, us

PIPES = {"AIC": ("CUBE", "MTE1", "MTE2", "FIXP"), "AIV": ("VECTOR", "MTE2", "MTE3")}
COLUMN = {("AIC", "CUBE"): "aic_cube_ratio", ("AIC", "MTE1"): "aic_mte1_ratio", ("AIC", "MTE2"): "aic_mte2_ratio",
          ("AIC", "FIXP"): "aic_fixp_ratio", ("AIV", "VECTOR"): "aiv_vec_ratio", ("AIV", "MTE2"): "aiv_mte2_ratio",
          ("AIV", "MTE3"): "aiv_mte3_ratio"}
HEADER = ["rank", "launch", "stream", "kernel", "core_type", "core", "blocks", "kernel_us", "start_us", "end_us",
          *COLUMN.values(), "bound_pipe", "gm_read_bytes", "gm_write_bytes", "remote_read_bytes",
          "remote_write_bytes", "l2_hit_pct"]
READS = {"TLOAD"}
WRITES = {"TSTORE", "TSTORE_ATOMIC_ADD", "TSTORE_FP"}


def rows(trace, results=None):
    """The CSV's rows (dicts keyed by HEADER)."""
    if trace.window_ps() is not None:
        raise TraceError(f"{trace.path}: the trace keeps only a time window (--trace-window-us): a launch's slices "
                         "may be cut; trace the whole view")
    entries = trace.meta.get("kernels")
    if not isinstance(entries, list):
        raise TraceError(f"{trace.path}: otherData has no kernels (a trace of an older Tandem)")
    hit_pct = {}
    for e in (results or {}).get("kernels", []):
        if isinstance(e, dict) and e.get("view") == trace.view and tt._is_number(e.get("l2_hit_pct")):
            hit_pct[(e.get("rank"), e.get("launch"))] = e["l2_hit_pct"]
    blocks = defaultdict(list)  # (rank, stream) -> [(ts, end, core type, core)]
    work = defaultdict(list)    # (rank, stream, core type, core) -> [slice] on its data pipes
    for s in trace.slices:
        if s.track.kind == "blocks":
            blocks[(s.rank, s.stream)].append((s.ts, s.end, s.track.core_type, s.track.core))
        elif s.track.kind == "pipe" and s.track.pipe != "SCALAR":
            work[(s.rank, s.stream, s.track.core_type, s.track.core)].append(s)
    present = set(trace.ranks)
    out = []
    for e in entries:
        if not isinstance(e, dict) or e.get("view") != trace.view:
            continue
        stream = e.get("stream")
        for pr in e.get("per_rank", []):
            r = pr.get("rank")
            if r not in present or not tt._is_number(pr.get("start_us")) or not tt._is_number(pr.get("end_us")):
                continue
            a, b = tt.us_to_ps(pr["start_us"]), tt.us_to_ps(pr["end_us"])
            ran = defaultdict(int)
            for ts, end, ct, core in blocks.get((r, stream), []):
                if ts >= a and end <= b:
                    ran[(ct, core)] += 1
            for (ct, core), n in sorted(ran.items(), key=lambda kv: (tt.CORE_TYPES.index(kv[0][0]), kv[0][1])):
                out.append(core_row(e, pr, r, stream, ct, core, n, work.get((r, stream, ct, core), []), a, b,
                                    hit_pct.get((r, e.get("launch")))))
    out.sort(key=lambda row: (row["rank"], row["launch"], tt.CORE_TYPES.index(row["core_type"]), row["core"]))
    return out


def core_row(entry, per_rank, rank, stream, ct, core, nblocks, slices, a, b, hit):
    """One core's row of one launch: its pipes' busy over [a, b), its bytes, its busiest pipe."""
    busy = defaultdict(int)
    read = write = remote_read = remote_write = 0
    for s in slices:
        if not a <= s.ts < b:
            continue
        busy[s.track.pipe] += s.dur
        nbytes = s.args.get("bytes", 0) if tt._is_int(s.args.get("bytes")) else 0
        remote = tt._is_int(s.args.get("peer")) and s.args["peer"] != rank
        if s.name in READS:
            read += nbytes
            remote_read += nbytes if remote else 0
        elif s.name in WRITES:
            write += nbytes
            remote_write += nbytes if remote else 0
    span = b - a
    row = {"rank": rank, "launch": entry.get("launch"), "stream": stream,
           "kernel": per_rank.get("kernel", entry.get("kernel")), "core_type": ct, "core": core, "blocks": nblocks,
           "kernel_us": f"{us(span):.6f}", "start_us": f"{us(a):.6f}", "end_us": f"{us(b):.6f}",
           "gm_read_bytes": read, "gm_write_bytes": write, "remote_read_bytes": remote_read,
           "remote_write_bytes": remote_write, "l2_hit_pct": "" if hit is None else f"{hit:.2f}"}
    best, best_ratio = "", -1.0
    for (t, pipe), col in COLUMN.items():
        if t != ct:
            row[col] = ""
            continue
        ratio = busy[pipe] / span if span > 0 else 0.0
        row[col] = f"{ratio:.6f}"
        if ratio > best_ratio:
            best, best_ratio = pipe, ratio
    row["bound_pipe"] = best if best_ratio > 0 else ""
    return row


def to_csv(table):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=HEADER, lineterminator="\n")
    w.writeheader()
    w.writerows(table)
    return buf.getvalue()


def main():
    ap = argparse.ArgumentParser(prog="kernel_csv.py", description=__doc__.split("\n")[0],
                                 epilog="Example: kernel_csv.py out/trace.json --results out/results.json -o kernels.csv")
    ap.add_argument("trace", metavar="TRACE", help="trace JSON written by --trace")
    ap.add_argument("--results", metavar="RESULTS.json", help="results JSON of the same run (--json): its L2 hit rates")
    ap.add_argument("-o", "--output", metavar="OUT.csv", help="write the CSV here (default: stdout)")
    a = ap.parse_args()
    trace = tt.load_trace(a.trace)
    results = report.load_results(a.results, trace, []) if a.results else None
    text = to_csv(rows(trace, results))
    if a.output:
        tt.write_atomic(a.output, lambda f: f.write(text))
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(tt.run_main("kernel_csv.py", main))
