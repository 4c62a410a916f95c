#!/usr/bin/python3
"""Timeline picture of a Tandem trace: one row per core, grouped by rank.

    timeline.py TRACE -o timeline.png [--ranks 0,1] [--max-cores N] [--window-us A:B]

Rows: for each rank (top to bottom), its AIC cores then its AIV cores, by core index (in a trace
of several API calls, a lane's cores after the first lane's: `rank 0 AIC3 lane 2`). A row
shows when the core was busy: the union of the X events on its pipe tracks (CUBE, MTE1, MTE2,
MTE3, FIXP, VECTOR, SCALAR) except stalled TWAITs, coloured by the event's stream (compute /
comm): solid where a data pipe is busy, a lighter shade where only the SCALAR unit is (TTEST
polls, notifies, barriers); and the TWAIT stalls (SCALAR TWAITs whose cat contains `stall`)
in hatched red where nothing else on the core is busy (the scalar unit runs ahead of the pipe
queues, so a TWAIT can start while earlier work still drains; that part is drawn as busy). x is simulated time
in microseconds since the start of the pipelined view (otherData.view_start_us).

For big runs (8 ranks x 72 cores) the rows are thin and only the ranks (and the AIC/AIV
groups) are labelled; --max-cores keeps the first N AIC and the first N AIV cores of each
rank (and lane), and --active-only leaves out cores without pipe events. Gaps narrower than
--min-gap-px pixels inside a row are closed (they would not be visible anyway); use
--window-us to zoom in.
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


def row_of(rank, core_type, core, lane):
    """A core's row: (rank, core_type, core) for lane 1, (rank, core_type, core, lane) for the
    tracks of lane n > 1 of a trace of several API calls."""
    return (rank, core_type, core) if lane in (None, 1) else (rank, core_type, core, lane)


def row_lane(row):
    return row[3] if len(row) > 3 else 1


def row_label(row):
    return f"rank {row[0]} {row[1]}{row[2]}" + (f" lane {row[3]}" if len(row) > 3 else "")


def collect(trace, ranks, max_cores, window_ps=None, active_only=False):
    """rows: [(rank, core_type, core)], (rank, core_type, core, lane) for lane n > 1; busy: {row: {(stream, "data" | "scalar"): (starts,
    ends)}} ("data": CUBE/MTE*/FIXP/VECTOR, "scalar": SCALAR events other than stalled
    TWAITs); stalls: {row: (starts, ends)}. Times in ps relative to the view start."""
    rows = []
    active = None
    if active_only:
        active = {row_of(s.rank, s.track.core_type, s.track.core, s.track.lane) for s in trace.pipe_slices()}
    for r in ranks:
        cores = [row_of(r, ct, c, lane) for ct, lane, c in trace.core_lanes(r)]
        if active is not None:
            cores = [c for c in cores if c in active]
        if max_cores is not None:
            kept = []
            for ct in CORE_TYPES:
                for lane in sorted({row_lane(c) for c in cores if c[1] == ct}):
                    kept.extend([c for c in cores if c[1] == ct and row_lane(c) == lane][:max_cores])
            cores = kept
        rows.extend(cores)
    wanted = set(rows)
    v0 = trace.view_start_ps
    busy = defaultdict(lambda: defaultdict(lambda: ([], [])))
    stalls = defaultdict(lambda: ([], []))
    for s in trace.pipe_slices():
        key = row_of(s.rank, s.track.core_type, s.track.core, s.track.lane)
        if key not in wanted:
            continue
        a, b = s.ts - v0, s.end - v0
        if window_ps is not None:
            if b < window_ps[0] or a > window_ps[1]:
                continue
            a, b = max(a, window_ps[0]), min(b, window_ps[1])
        if s.track.pipe == "SCALAR":
            lst = stalls[key] if (s.name == "TWAIT" and s.stalled) else busy[key][(s.stream, "scalar")]
        else:
            lst = busy[key][(s.stream, "data")]
        lst[0].append(a)
        lst[1].append(b)
    return rows, busy, stalls


def row_layers(busy_row, stall_row, min_gap=0):
    """What to draw on one row, as {"data": {stream: [(a, b)]}, "scalar": {stream: [(a, b)]},
    "stall": [(a, b)]}: data-pipe busy per stream; scalar-only busy (no data pipe busy at the
    time: TTEST polls, notifies, barriers); TWAIT stalls while nothing else on the core is busy
    (the scalar unit runs ahead of the pipe queues, so a TWAIT can start while earlier work
    still drains). Gaps <= min_gap are closed first."""
    def merged(ab, gap):
        a, b = ab
        s, e = merge_intervals(np.array(a, dtype=np.int64), np.array(b, dtype=np.int64), gap)
        return list(zip(s.tolist(), e.tolist()))

    out = {"data": {}, "scalar": {}, "stall": []}
    data_all = []
    for (stream, kind), ab in busy_row.items():
        if kind == "data":
            iv = merged(ab, min_gap)
            out["data"][stream] = iv
            data_all.extend(iv)
    data_all = tt.merge_intervals(data_all)
    scalar_all = []
    for (stream, kind), ab in busy_row.items():
        if kind == "scalar":
            iv = tt.subtract_intervals(merged(ab, min_gap), data_all)
            if iv:
                out["scalar"][stream] = iv
                scalar_all.extend(iv)
    if stall_row is not None:
        busy_all = tt.merge_intervals(data_all + scalar_all)
        out["stall"] = [(a, b) for a, b in tt.subtract_intervals(merged(stall_row, 0), busy_all) if b > a]
    return out


def lighter(colour, amount=0.55):
    r, g, b = matplotlib.colors.to_rgb(colour)
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)


def stream_colour(stream, extra):
    if stream in STREAM_COLOURS:
        return STREAM_COLOURS[stream]
    if stream not in extra:
        extra[stream] = OTHER_COLOURS[len(extra) % len(OTHER_COLOURS)]
    return extra[stream]


def draw(trace, out, ranks, max_cores=None, window_us=None, min_gap_px=0.5, title=None, active_only=False):
    window_ps = None
    if window_us is not None:
        window_ps = (tt.us_to_ps(window_us[0]), tt.us_to_ps(window_us[1]))
    rows, busy, stalls = collect(trace, ranks, max_cores, window_ps, active_only)
    if not rows:
        what = f"rank(s) {','.join(map(str, ranks))}" if ranks else "any rank"
        raise TraceError(f"{trace.path}: nothing to draw: no core tracks for {what}"
                         + (" with pipe events" if active_only else ""))

    x0 = 0 if window_ps is None else window_ps[0]
    x1 = trace.view_ps if window_ps is None else window_ps[1]
    if x1 <= x0:
        x1 = x0 + 1
    plot_px = FIG_WIDTH_IN * DPI * 0.85
    min_gap = int((x1 - x0) / plot_px * min_gap_px)

    # y positions: rows top to bottom, one blank row between ranks.
    nranks = len({row[0] for row in rows})
    total = len(rows) + (nranks - 1)
    detailed = len(rows) <= 48
    row_h_in = 0.24 if detailed else max(0.03, min(0.12, 22.0 / total))
    height = min(max(3.0, 2.3 + total * row_h_in), 120.0)
    fig, ax = plt.subplots(figsize=(FIG_WIDTH_IN, height), dpi=DPI)

    ypos = {}
    y = 0.0
    prev_rank = None
    rank_spans = {}
    group_spans = {}
    for row in rows:
        r, ct = row[0], row[1]
        if prev_rank is not None and r != prev_rank:
            y += 1.0
        ypos[row] = y
        lo, hi = rank_spans.get(r, (y, y))
        rank_spans[r] = (min(lo, y), max(hi, y))
        group = (r, ct, row_lane(row))
        lo, hi = group_spans.get(group, (y, y))
        group_spans[group] = (min(lo, y), max(hi, y))
        prev_rank = r
        y += 1.0

    bar_h = 0.8
    extra_colours = {}
    seen = set()                        # (stream, "data" | "scalar")
    any_stall = False
    scale = 1.0 / tt.PS_PER_US

    def bars(iv, y, **kw):
        arr = np.array(iv, dtype=np.int64)
        ranges = np.column_stack((arr[:, 0] * scale, (arr[:, 1] - arr[:, 0]) * scale))
        ax.broken_barh(ranges, (y - bar_h / 2, bar_h), **kw)

    for row in rows:
        layers = row_layers(busy.get(row, {}), stalls.get(row), min_gap)
        yy = ypos[row]
        for kind in ("data", "scalar"):
            for stream, iv in sorted(layers[kind].items()):
                if not iv:
                    continue
                seen.add((stream, kind))
                colour = stream_colour(stream, extra_colours)
                bars(iv, yy, facecolors=colour if kind == "data" else lighter(colour), linewidth=0)
        if layers["stall"]:
            any_stall = True
            bars(layers["stall"], yy, facecolors=[STALL_FACE], edgecolors=STALL_EDGE, hatch="////",
                 linewidth=0.3 if detailed else 0.0)

    ax.set_ylim(y - 0.5, -0.5)  # first row at the top
    ax.set_xlim(x0 * scale, x1 * scale)
    ax.set_xlabel("simulated time (us) since the start of the pipelined view"
                  + (f" (view starts at {us(trace.view_start_ps):.3f} us)" if trace.view_start_ps else ""))
    if detailed:
        ax.set_yticks([ypos[row] for row in rows])
        ax.set_yticklabels([row_label(row) for row in rows], fontsize=7)
    else:
        ax.set_yticks([(lo + hi) / 2 for lo, hi in rank_spans.values()])
        ax.set_yticklabels([f"rank {r}" for r in rank_spans], fontsize=9)
        for (r, ct, lane), (lo, hi) in group_spans.items():
            name = ct if lane == 1 else f"{ct} lane {lane}"
            ax.text(1.002, 1.0 - ((lo + hi) / 2 + 0.5) / y, f"{name} x{int(hi - lo + 1)}", transform=ax.transAxes,
                    fontsize=6, va="center", ha="left", color="#555555")
    for r, (lo, hi) in rank_spans.items():
        if lo > 0:
            ax.axhline(lo - 1.0, color="#999999", linewidth=0.6)
    # a dotted line above each group of a rank but its first (AIV after AIC, a lane after the last)
    for (r, ct, lane), (lo, hi) in group_spans.items():
        if lo > rank_spans[r][0]:
            ax.axhline(lo - 0.5, color="#cccccc", linewidth=0.4, linestyle=":")
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.5)
    ax.set_axisbelow(True)
    ax.tick_params(axis="y", length=0)

    streams = sorted({st for st, _ in seen} | {"compute", "comm"}, key=lambda st: (st not in STREAM_COLOURS, st))
    handles = []
    for st in streams:
        colour = stream_colour(st, extra_colours)
        handles.append(mpatches.Patch(color=colour, label=f"{st}: data pipes busy"))
        handles.append(mpatches.Patch(color=lighter(colour), label=f"{st}: scalar only (TTEST polls, notifies)"))
    handles.append(mpatches.Patch(facecolor=STALL_FACE, edgecolor=STALL_EDGE, hatch="////",
                                  label="TWAIT stall, core otherwise idle" + ("" if any_stall else " (none)")))
    # Stream names of a trace of several API calls are long ("matmul_all_reduce[2] compute"):
    # fewer columns, so that the legend stays inside the figure.
    longest = max(len(h.get_label()) for h in handles)
    ncol = max(1, min(len(handles), 5, int(FIG_WIDTH_IN * DPI * 0.95 / (longest * 5.6 + 30))))
    legend_in = 0.35 + 0.18 * ((len(handles) + ncol - 1) // ncol)
    m = trace.meta
    if title is None:
        parts = [str(m.get("soc", "?"))] + trace.shape_parts()
        if "comm_mode" in m:
            parts.append(str(m["comm_mode"]))
        if "profile_file" in m:
            parts.append(f"profile {m['profile_file']}")
        title = f"Tandem {m.get('view', '')} view: " + ", ".join(parts)
    shown_cores = len(rows)
    sub = (f"ranks {','.join(map(str, rank_spans))}; {shown_cores} {'active ' if active_only else ''}cores "
           "(AIC then AIV per rank"
           + (f", at most {max_cores} of each type and lane" if max_cores is not None else "")
           + "); solid: data pipes busy, light: scalar only, hatched red: TWAIT stall with the core otherwise idle; "
           + trace.describe_filter())
    ax.set_title(title + "\n" + sub, fontsize=10)
    fig.tight_layout(rect=(0, legend_in / height, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8, frameon=False)

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
    ap.add_argument("--active-only", action="store_true",
                    help="leave out cores without any pipe event (idle blocks); default: every core with a track")
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
    info = draw(trace, a.output, ranks, a.max_cores, window, a.min_gap_px, a.title, a.active_only)
    print(f"timeline.py: wrote {a.output} ({info['rows']} core rows, ranks {','.join(map(str, info['ranks']))})")
    return 0


if __name__ == "__main__":
    sys.exit(tt.run_main("timeline.py", main))
