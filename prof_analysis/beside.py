#!/usr/bin/python3
"""What the other streams do beside one stream's kernel and after it (a fused op's overlap).

A pipelined view runs a compute kernel and a communication kernel on two streams. Whether the
communication hides depends on two things this tool separates, per rank: what the other streams'
blocks do while the kernel of the named stream (default `compute`) runs, and what is left of them
after its last block ends (the exposed tail). For every other stream it prints

* the split point: the named stream's first block start and last block end;
* the tail: the other stream's last block end less that split point, and that block's work after it
  (instruction counts and busy time per kind);
* beside and after the split, per instruction kind on its data pipes (a remote one, with a
  `peer` argument, apart from a local one): count, mean / min / max duration, and the bytes moved
  per microsecond of the pipe's busy time, so that a transfer slowed beside the kernel shows up
  as a longer mean than after it;
* its scalar's time beside the kernel, blocked in TWAIT (stalled waits), in TTEST polls and in
  pipe barriers, as a share of its blocks x the kernel's span.

A slice belongs to "beside" when it starts before the split point, to "after" otherwise.

    /usr/bin/python3 prof_analysis/beside.py TRACE [--stream compute] [--rank R] [--json OUT]
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict

import tandem_trace as tt

SCALAR_KINDS = ("TWAIT stalled", "TTEST", "PIPE_BARRIER", "DSB")


def kernel_span(trace, rank, stream):
    """(first block start, last block end) in ps of `stream`'s blocks on `rank`, or None."""
    blocks = [s for s in trace.slices_where(rank=rank, kind="blocks") if s.stream == stream]
    if not blocks:
        return None
    return min(s.ts for s in blocks), max(s.end for s in blocks)


def _kind(s):
    return f"{s.track.pipe} {s.name}" + (" remote" if "peer" in s.args else "")


def _stats(slices):
    durs = [s.dur for s in slices]
    moved = sum(s.args.get("bytes", 0) for s in slices if isinstance(s.args.get("bytes"), int))
    busy = sum(durs)
    return {
        "count": len(durs),
        "mean_us": tt.us(statistics.mean(durs)),
        "min_us": tt.us(min(durs)),
        "max_us": tt.us(max(durs)),
        "busy_us": tt.us(busy),
        "bytes": moved,
        # bytes per us of busy time = MB/s; GiB/s reads better beside the profile's rates
        "gib_s": (moved / (busy / tt.PS_PER_US)) * 1e6 / 2**30 if busy and moved else None,
    }


def stream_part(trace, rank, stream, split_ps, span_ps):
    """The report of one other stream on one rank: tail, per-kind stats beside / after, scalar."""
    blocks = sorted((s for s in trace.slices_where(rank=rank, kind="blocks") if s.stream == stream),
                    key=lambda s: (s.end, s.block))
    if not blocks:
        return None
    parts = {"beside": defaultdict(list), "after": defaultdict(list)}
    last = blocks[-1]
    last_after = defaultdict(list)
    scalar = defaultdict(int)
    for s in trace.slices_where(rank=rank, kind="pipe"):
        if s.stream != stream:
            continue
        if s.track.pipe == "SCALAR":
            key = "TWAIT stalled" if s.name == "TWAIT" and s.stalled else s.name
            if key in SCALAR_KINDS:
                lo, hi = max(s.ts, span_ps[0]), min(s.end, split_ps)
                scalar[key] += max(0, hi - lo)
        else:
            parts["beside" if s.ts < split_ps else "after"][_kind(s)].append(s)
        if s.block == last.block and s.ts >= split_ps and s.track.pipe != "SCALAR":
            last_after[_kind(s)].append(s)
    denom = len(blocks) * (split_ps - span_ps[0])
    ends = [b.end for b in blocks]
    return {
        "stream": stream,
        "blocks": len(blocks),
        "first_end_us": tt.us(ends[0] - trace.view_start_ps),
        "median_end_us": tt.us(statistics.median(ends) - trace.view_start_ps),
        "last_block": last.block,
        "last_end_us": tt.us(last.end - trace.view_start_ps),
        "tail_us": tt.us(last.end - split_ps),
        "last_block_after": {k: {"count": len(v), "busy_us": tt.us(sum(s.dur for s in v))}
                             for k, v in sorted(last_after.items())},
        "beside": {k: _stats(v) for k, v in sorted(parts["beside"].items())},
        "after": {k: _stats(v) for k, v in sorted(parts["after"].items())},
        "scalar_share_beside": {k: (scalar[k] / denom if denom > 0 else 0.0) for k in SCALAR_KINDS},
    }


def analyze(trace, stream="compute", ranks=None):
    out = {"trace": trace.path, "stream": stream, "ranks": []}
    for r in (ranks if ranks is not None else trace.ranks):
        span = kernel_span(trace, r, stream)
        if span is None:
            raise tt.TraceError(f"{trace.path}: rank {r} has no block of stream '{stream}' (--stream names the "
                                f"kernel to split at; streams here: {', '.join(streams_of(trace, r)) or 'none'})")
        others = [st for st in streams_of(trace, r) if st != stream]
        out["ranks"].append({
            "rank": r,
            "split_start_us": tt.us(span[0] - trace.view_start_ps),
            "split_end_us": tt.us(span[1] - trace.view_start_ps),
            "streams": [p for p in (stream_part(trace, r, st, span[1], span) for st in others) if p],
        })
    return out


def streams_of(trace, rank):
    return sorted({s.stream for s in trace.slices_where(rank=rank, kind="blocks") if s.stream})


def _kind_lines(title, d):
    lines = [f"    {title}:"]
    for k, v in d.items():
        rate = f", {v['gib_s']:.2f} GiB/s of busy time" if v["gib_s"] else ""
        lines.append(f"      {k:28s} {v['count']:5d} x mean {v['mean_us']:.3f} us [{v['min_us']:.3f}, "
                     f"{v['max_us']:.3f}], busy {v['busy_us']:.1f} us{rate}")
    return lines


def format_text(a):
    lines = [f"{a['trace']}: the other streams beside stream '{a['stream']}' and after its last block "
             f"(times from the view start)"]
    for rk in a["ranks"]:
        lines.append(f"rank {rk['rank']}: '{a['stream']}' blocks {rk['split_start_us']:.3f} .. "
                     f"{rk['split_end_us']:.3f} us")
        for p in rk["streams"]:
            lines.append(f"  stream '{p['stream']}' ({p['blocks']} blocks): ends {p['first_end_us']:.3f} .. "
                         f"{p['last_end_us']:.3f} us (median {p['median_end_us']:.3f}); tail {p['tail_us']:.3f} us "
                         f"after the split, last block {p['last_block']}")
            if p["last_block_after"]:
                lines.append("    its last block after the split: " + ", ".join(
                    f"{v['count']} {k} ({v['busy_us']:.1f} us)" for k, v in p["last_block_after"].items()))
            lines += _kind_lines("beside (started before the split)", p["beside"])
            lines += _kind_lines("after", p["after"])
            lines.append("    scalar beside, share of blocks x span: " + ", ".join(
                f"{k} {100 * v:.1f}%" for k, v in p["scalar_share_beside"].items()))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(
        prog="beside.py",
        description="What the other streams of a pipelined view do beside one stream's kernel and after its "
                    "last block: the exposed tail, per instruction kind the durations beside and after, and "
                    "the scalar's waits beside it.")
    ap.add_argument("trace", metavar="TRACE", help="trace JSON written with --trace")
    ap.add_argument("--stream", default="compute", help="the stream whose kernel splits the time (default compute)")
    ap.add_argument("--rank", metavar="LIST", help="ranks to report, e.g. 0,3 (default: every rank in the trace)")
    ap.add_argument("--json", metavar="OUT", help="also write the numbers as JSON to OUT")
    a = ap.parse_args()
    trace = tt.load_trace(a.trace)
    ranks = tt.parse_rank_list(a.rank, "--rank") if a.rank else None
    if ranks is not None:
        missing = [r for r in ranks if r not in trace.ranks]
        if missing:
            raise tt.TraceError(f"--rank {a.rank}: rank {missing[0]} is not in {a.trace} (it has {trace.ranks})")
    out = analyze(trace, a.stream, ranks)
    print(format_text(out))
    if a.json:
        tt.write_atomic(a.json, lambda f: json.dump(out, f, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(tt.run_main("beside.py", main))
