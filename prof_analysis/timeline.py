#!/usr/bin/python3
"""Timeline picture of a Tandem trace: one row per core, grouped by rank.

    timeline.py TRACE -o timeline.png [--ranks 0,1] [--max-cores N] [--window-us A:B]

Rows: for each rank (top to bottom), its AIC cores then its AIV cores, by core index. A row
shows when the core was busy: the union of the X events on its pipe tracks (CUBE, MTE1, MTE2,
MTE3, FIXP, VECTOR, SCALAR), coloured by the event's stream (compute / comm), and the TWAIT
stalls (SCALAR TWAITs whose cat contains `stall`) in hatched red on top. x is simulated time
in microseconds since the start of the pipelined view (otherData.view_start_us).

For big runs (8 ranks x 72 cores) the rows are thin and only the ranks (and the AIC/AIV
groups) are labelled; --max-cores keeps the first N AIC and the first N AIV cores of each
rank. Gaps shorter than --min-gap-px pixels inside a row are closed (they would not be
visible anyway); use --window-us to zoom in.
"""
import argparse
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches as mpatches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import tandem_trace as tt  # noqa: E402
from tandem_trace import CORE_TYPES, TraceError, us  # noqa: E402

STREAM_COLOURS = {"compute": "#1f77b4", "comm": "#2ca02c"}
OTHER_COLOURS = ["#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
STALL_FACE = (0.84, 0.15, 0.16, 0.45)
STALL_EDGE = "#d62728"
FIG_WIDTH_IN = 15.0
DPI = 110


def merge_intervals(starts, ends, min_gap=0):
    """Union of [start, end) intervals (numpy arrays, any order); gaps <= min_gap are closed.
    Returns two arrays (starts, ends) of disjoint, sorted intervals."""
    if len(starts) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.lexsort((ends, starts))
    s = np.asarray(starts, dtype=np.int64)[order]
    e = np.asarray(ends, dtype=np.int64)[order]
    run_end = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > run_end[:-1] + min_gap
    idx = np.flatnonzero(new)
    out_s = s[idx]
    last = np.append(idx[1:] - 1, len(s) - 1)
    out_e = run_end[last]
    return out_s, out_e


def collect(trace, ranks, max_cores, window_ps=None):
    """rows: [(rank, core_type, core)]; busy: {row: {stream: (starts, ends)}};
    stalls: {row: (starts, ends)}. Times in ps relative to the view start."""
    rows = []
    for r in ranks:
        cores = trace.cores(r)
        if max_cores is not None:
            kept = []
            for ct in CORE_TYPES:
                kept.extend([c for c in cores if c[0] == ct][:max_cores])
            cores = kept
        rows.extend((r, ct, c) for ct, c in cores)
    wanted = set(rows)
    v0 = trace.view_start_ps
    busy = defaultdict(lambda: defaultdict(lambda: ([], [])))
    stalls = defaultdict(lambda: ([], []))
    for s in trace.pipe_slices():
        key = (s.rank, s.track.core_type, s.track.core)
        if key not in wanted:
            continue
        a, b = s.ts - v0, s.end - v0
        if window_ps is not None:
            if b < window_ps[0] or a > window_ps[1]:
                continue
            a, b = max(a, window_ps[0]), min(b, window_ps[1])
        if s.name == "TWAIT" and s.track.pipe == "SCALAR" and s.stalled:
            lst = stalls[key]
        else:
            lst = busy[key][s.stream]
        lst[0].append(a)
        lst[1].append(b)
    return rows, busy, stalls


def stream_colour(stream, extra):
    if stream in STREAM_COLOURS:
        return STREAM_COLOURS[stream]
    if stream not in extra:
        extra[stream] = OTHER_COLOURS[len(extra) % len(OTHER_COLOURS)]
    return extra[stream]


def draw(trace, out, ranks, max_cores=None, window_us=None, min_gap_px=0.5, title=None):
    window_ps = None
    if window_us is not None:
        window_ps = (tt.us_to_ps(window_us[0]), tt.us_to_ps(window_us[1]))
    rows, busy, stalls = collect(trace, ranks, max_cores, window_ps)
    if not rows:
        raise TraceError(f"{trace.path}: no core tracks for rank(s) {','.join(map(str, ranks))}")

    x0 = 0 if window_ps is None else window_ps[0]
    x1 = trace.view_ps if window_ps is None else window_ps[1]
    if x1 <= x0:
        x1 = x0 + 1
    plot_px = FIG_WIDTH_IN * DPI * 0.85
    min_gap = int((x1 - x0) / plot_px * min_gap_px)

    # y positions: rows top to bottom, one blank row between ranks.
    nranks = len({r for r, _, _ in rows})
    total = len(rows) + (nranks - 1)
    detailed = len(rows) <= 48
    row_h_in = 0.24 if detailed else max(0.03, min(0.12, 30.0 / total))
    height = min(max(3.0, 1.9 + total * row_h_in), 120.0)
    fig, ax = plt.subplots(figsize=(FIG_WIDTH_IN, height), dpi=DPI)

    ypos = {}
    y = 0.0
    prev_rank = None
    rank_spans = {}
    group_spans = {}
    for row in rows:
        r, ct, _c = row
        if prev_rank is not None and r != prev_rank:
            y += 1.0
        ypos[row] = y
        lo, hi = rank_spans.get(r, (y, y))
        rank_spans[r] = (min(lo, y), max(hi, y))
        lo, hi = group_spans.get((r, ct), (y, y))
        group_spans[(r, ct)] = (min(lo, y), max(hi, y))
        prev_rank = r
        y += 1.0

    bar_h = 0.8
    extra_colours = {}
    streams_seen = set()
    scale = 1.0 / tt.PS_PER_US
    for row in rows:
        yy = ypos[row]
        for stream in sorted(busy.get(row, {})):
            a, b = busy[row][stream]
            s, e = merge_intervals(np.array(a), np.array(b), min_gap)
            if len(s) == 0:
                continue
            streams_seen.add(stream)
            ranges = np.column_stack(((s + 0) * scale, (e - s) * scale))
            ax.broken_barh(ranges, (yy - bar_h / 2, bar_h), facecolors=stream_colour(stream, extra_colours),
                           linewidth=0)
    any_stall = False
    for row in rows:
        if row not in stalls:
            continue
        a, b = stalls[row]
        s, e = merge_intervals(np.array(a), np.array(b), min_gap)
        if len(s) == 0:
            continue
        any_stall = True
        ranges = np.column_stack((s * scale, (e - s) * scale))
        ax.broken_barh(ranges, (ypos[row] - bar_h / 2, bar_h), facecolors=[STALL_FACE], edgecolors=STALL_EDGE,
                       hatch="////", linewidth=0.3 if detailed else 0.0)

    ax.set_ylim(y - 0.5, -0.5)  # first row at the top
    ax.set_xlim(x0 * scale, x1 * scale)
    ax.set_xlabel("simulated time (us) since the start of the pipelined view"
                  + (f" (view starts at {us(trace.view_start_ps):.3f} us)" if trace.view_start_ps else ""))
    if detailed:
        ax.set_yticks([ypos[row] for row in rows])
        ax.set_yticklabels([f"rank {r} {ct}{c}" for r, ct, c in rows], fontsize=7)
    else:
        ax.set_yticks([(lo + hi) / 2 for lo, hi in rank_spans.values()])
        ax.set_yticklabels([f"rank {r}" for r in rank_spans], fontsize=9)
        for (r, ct), (lo, hi) in group_spans.items():
            ax.text(1.002, 1.0 - ((lo + hi) / 2 + 0.5) / y, f"{ct} x{int(hi - lo + 1)}", transform=ax.transAxes,
                    fontsize=6, va="center", ha="left", color="#555555")
    for r, (lo, hi) in rank_spans.items():
        if lo > 0:
            ax.axhline(lo - 1.0, color="#999999", linewidth=0.6)
        for ct in CORE_TYPES:
            if (r, ct) in group_spans and ct != CORE_TYPES[0] and (r, CORE_TYPES[0]) in group_spans:
                ax.axhline(group_spans[(r, ct)][0] - 0.5, color="#cccccc", linewidth=0.4, linestyle=":")
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.5)
    ax.set_axisbelow(True)
    ax.tick_params(axis="y", length=0)

    handles = [mpatches.Patch(color=stream_colour(s, extra_colours), label=f"{s} stream busy")
               for s in sorted(streams_seen | {"compute", "comm"}, key=lambda s: (s not in STREAM_COLOURS, s))]
    handles.append(mpatches.Patch(facecolor=STALL_FACE, edgecolor=STALL_EDGE, hatch="////",
                                  label="TWAIT stall" + ("" if any_stall else " (none)")))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.06 if detailed else -0.02 - 0.6 / height),
              ncol=len(handles), fontsize=8, frameon=False)

    m = trace.meta
    if title is None:
        parts = [str(m.get("soc", "?"))]
        if "ranks" in m:
            parts.append(f"{m['ranks']} ranks")
        if all(k in m for k in ("m", "k", "n")):
            parts.append(f"M={m['m']} K={m['k']} N={m['n']}")
        if "comm_mode" in m:
            parts.append(str(m["comm_mode"]))
        if "profile_file" in m:
            parts.append(f"profile {m['profile_file']}")
        title = f"Tandem {m.get('view', '')} view: " + ", ".join(parts)
    shown_cores = len(rows)
    sub = (f"ranks {','.join(map(str, rank_spans))}; {shown_cores} cores (AIC then AIV per rank"
           + (f", at most {max_cores} of each type" if max_cores is not None else "")
           + "); busy = union of the core's pipe tracks; " + trace.describe_filter())
    ax.set_title(title + "\n" + sub, fontsize=10)
    fig.tight_layout()

    tt.write_atomic(out, lambda f: fig.savefig(f, format="png", dpi=DPI), binary=True)
    plt.close(fig)
    return {"rows": len(rows), "ranks": list(rank_spans), "stalls": any_stall}


def parse_window(text):
    try:
        a, b = text.split(":")
        a, b = float(a), float(b)
    except ValueError:
        raise TraceError(f"--window-us: expected A:B in us (e.g. 0:50), got {text!r}")
    if not (b > a >= 0):
        raise TraceError(f"--window-us: need 0 <= A < B, got {text!r}")
    return a, b


def main():
    ap = argparse.ArgumentParser(
        prog="timeline.py",
        description="Draw a PNG timeline of a Tandem trace: one row per core (grouped by rank, AIC then AIV), "
                    "busy intervals coloured by stream (compute / comm), TWAIT stalls hatched red.",
        epilog="Example: timeline.py /tmp/x/trace.json -o /tmp/x/timeline.png --ranks 0,1 --max-cores 8")
    ap.add_argument("trace", metavar="TRACE", help="trace JSON written by allgather_gemm --trace")
    ap.add_argument("-o", "--output", required=True, metavar="PNG", help="output PNG file")
    ap.add_argument("--ranks", metavar="LIST", help="ranks to draw, e.g. 0,1 or 0-3 (default: all in the trace)")
    ap.add_argument("--max-cores", type=int, metavar="N",
                    help="draw at most N AIC and N AIV cores per rank (the first by index)")
    ap.add_argument("--window-us", metavar="A:B",
                    help="draw only [A, B] us (since the start of the pipelined view)")
    ap.add_argument("--min-gap-px", type=float, default=0.5, metavar="P",
                    help="close gaps narrower than P pixels inside a row (default 0.5; 0 keeps every gap)")
    ap.add_argument("--title", help="replace the title's first line")
    a = ap.parse_args()
    if a.max_cores is not None and a.max_cores < 1:
        ap.error("--max-cores must be >= 1")
    if a.min_gap_px < 0:
        ap.error("--min-gap-px must be >= 0")
    if not a.output.lower().endswith(".png"):
        ap.error("-o must name a .png file")
    window = parse_window(a.window_us) if a.window_us else None
    trace = tt.load_trace(a.trace)
    present = trace.ranks
    if a.ranks:
        ranks = tt.parse_rank_list(a.ranks)
        missing = [r for r in ranks if r not in present]
        if missing:
            raise TraceError(f"--ranks: rank(s) {','.join(map(str, missing))} not in the trace "
                             f"(it has {','.join(map(str, present)) or 'none'})")
    else:
        ranks = present
    info = draw(trace, a.output, ranks, a.max_cores, window, a.min_gap_px, a.title)
    print(f"timeline.py: wrote {a.output} ({info['rows']} core rows, ranks {','.join(map(str, info['ranks']))})")
    return 0


if __name__ == "__main__":
    sys.exit(tt.run_main("timeline.py", main))
