#!/usr/bin/python3
"""The stage profile of one rank of a Tandem trace, like the published MegaMoE one.

For an op whose kernels name their stages and the item each piece of work belongs to
(moe_ffn: stages front, dispatch, gmm1, swiglu, gmm2, combine, unpermute; items: the local
experts), this prints, for one rank of the pipelined view:

  * each (stage, item)'s window: the envelope over the cores that worked on it, from its first
    data-pipe instruction's start to its last one's end, in us since the rank's earliest block
    start (the published profile's 0), with the number of cores;
  * each stage's whole window (stages without items, as front and unpermute, only that);
  * how much of the kernel the compute stages cover (the published "communication hidden
    behind compute for 77.4% of its 3708 us"), the exposed stretches (no compute stage at work),
    and the share of the communication stages' time that runs beside compute.

With -o it draws the windows (one row per item, one colour per stage) as a PNG, and with
--json it writes everything as JSON. Times are the trace's integer picoseconds, printed in us.

Example:
    build/tandem --op moe_ffn --variant expert_major -n 8 --gm 128 --gk 7168 --gn 4096 \\
        --timing-only --trace /tmp/x/trace.json --trace-ranks 0
    /usr/bin/python3 prof_analysis/stage_profile.py /tmp/x/trace.json -o /tmp/x/stages.png
"""
import argparse
import json
import sys
from collections import defaultdict

import tandem_trace as tt
from tandem_trace import TraceError, us

DATA_PIPES = ("CUBE", "MTE1", "MTE2", "MTE3", "FIXP", "VECTOR")
DEFAULT_COMPUTE = "gmm1,gmm2"
DEFAULT_COMM = "front,dispatch,combine,unpermute"


def stage_order(trace):
    """Stage names in the op's order as the trace's stage tracks give it (their tids follow the
    op's stage ids); profile() puts stages without a track after them, by their start."""
    tracks = sorted((tr.tid, tr.name[len("stage "):]) for tr in trace.tracks.values() if tr.kind == "stage")
    names = []
    for _, n in tracks:
        if n not in names:
            names.append(n)
    return names


def profile(trace, rank, compute, comm):
    """The stage profile of `rank` (a dict: see the module docstring; times in ps)."""
    if rank not in trace.ranks:
        raise TraceError(f"--rank {rank}: not in the trace (it has ranks {','.join(map(str, trace.ranks)) or 'none'})")
    blocks = [s for s in trace.slices if s.rank == rank and s.track.kind == "blocks"]
    if not blocks:
        raise TraceError(f"rank {rank}: the trace has no block slices (BLOCKS tracks)")
    t0 = min(s.ts for s in blocks)
    t1 = max(s.end for s in blocks)
    windows = {}  # (stage, item or None) -> [start, end, cores]
    for s in trace.slices:
        if s.rank != rank or s.track.kind != "pipe" or s.track.pipe not in DATA_PIPES:
            continue
        stage = s.args.get("stage")
        if not isinstance(stage, str):
            continue
        item = s.args.get("item")
        item = item if isinstance(item, int) and not isinstance(item, bool) else None
        for key in ((stage, None), (stage, item)) if item is not None else ((stage, None),):
            w = windows.get(key)
            if w is None:
                windows[key] = [s.ts, s.end, {(s.track.core_type, s.track.core)}]
            else:
                w[0] = min(w[0], s.ts)
                w[1] = max(w[1], s.end)
                w[2].add((s.track.core_type, s.track.core))
    if not windows:
        raise TraceError(f"rank {rank}: no instruction names a stage (args.stage): the op's kernels do not name "
                         "stages, or the trace was limited to a window without them")
    names = [n for n in stage_order(trace) if (n, None) in windows]
    names += sorted({st for st, _ in windows if st not in names}, key=lambda st: (windows[(st, None)][0], st))
    # Stages of the lists that this run does not have (moe_combine has no GMM) are left out.
    compute = [n for n in compute if n in names]
    comm = [n for n in comm if n in names]
    items = sorted({it for _, it in windows if it is not None})

    def spans(stages):
        # Per stage, its items' windows (or its whole window when it has none).
        out = []
        for st in stages:
            own = [(w[0], w[1]) for (s2, it), w in windows.items() if s2 == st and it is not None]
            out += own if own else [tuple(windows[(st, None)][:2])]
        return tt.merge_intervals([(max(a, t0), min(b, t1)) for a, b in out if b > a])

    busy = spans(compute)
    talk = spans(comm)
    span = t1 - t0
    covered = tt.overlap_ps(busy, t0, t1) if busy else 0
    exposed = tt.subtract_intervals([(t0, t1)], busy)
    comm_ps = sum(b - a for a, b in talk)
    comm_hidden = sum(tt.overlap_ps(busy, a, b) for a, b in talk)
    return {
        "rank": rank,
        "start_ps": t0,
        "end_ps": t1,
        "stages": names,
        "items": items,
        "windows": windows,
        "compute_stages": compute,
        "comm_stages": comm,
        "compute_cover_ps": covered,
        "exposed": exposed,
        "comm_ps": comm_ps,
        "comm_hidden_ps": comm_hidden,
        "span_ps": span,
    }


def window_text(p, key):
    w = p["windows"].get(key)
    if w is None:
        return "-"
    return f"{us(w[0] - p['start_ps']):.0f}-{us(w[1] - p['start_ps']):.0f}"


def print_profile(p, item_name, out=sys.stdout):
    t0 = p["start_ps"]
    print(f"rank {p['rank']}: kernel {us(p['span_ps']):.1f} us (0 = the earliest block start, windows in us: "
          f"the envelope over the cores of each stage and {item_name})", file=out)
    with_items = [st for st in p["stages"] if any((st, it) in p["windows"] for it in p["items"])]
    for st in p["stages"]:
        w = p["windows"][(st, None)]
        print(f"  {st:<10} {us(w[0] - t0):9.1f} - {us(w[1] - t0):9.1f} us on {len(w[2])} cores", file=out)
    if with_items:
        cols = [item_name] + with_items
        rows = [[str(it)] + [window_text(p, (st, it)) for st in with_items] for it in p["items"]]
        widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
        print("  " + "  ".join(c.rjust(widths[i]) for i, c in enumerate(cols)), file=out)
        for r in rows:
            print("  " + "  ".join(v.rjust(widths[i]) for i, v in enumerate(r)), file=out)
    span = p["span_ps"]
    share = 100.0 * p["compute_cover_ps"] / span if span else 0.0
    stretches = ", ".join(f"{us(a - t0):.1f}-{us(b - t0):.1f}" for a, b in p["exposed"]) or "none"
    print(f"  compute ({'+'.join(p['compute_stages']) or 'none'}) at work for {share:.1f}% of the kernel's {us(span):.1f} us; "
          f"exposed (no compute stage at work): {stretches} us", file=out)
    if p["comm_ps"]:
        hid = 100.0 * p["comm_hidden_ps"] / p["comm_ps"]
        print(f"  communication ({'+'.join(p['comm_stages'])}) busy {us(p['comm_ps']):.1f} us of windows, "
              f"{hid:.1f}% of it beside compute", file=out)


def to_json(p, item_name):
    t0 = p["start_ps"]

    def win(key):
        w = p["windows"][key]
        return {"start_us": us(w[0] - t0), "end_us": us(w[1] - t0), "cores": len(w[2])}

    return {
        "rank": p["rank"],
        "kernel_us": us(p["span_ps"]),
        "item_name": item_name,
        "stages": {st: win((st, None)) for st in p["stages"]},
        "items": {str(it): {st: win((st, it)) for st in p["stages"] if (st, it) in p["windows"]} for it in p["items"]},
        "compute_stages": p["compute_stages"],
        "comm_stages": p["comm_stages"],
        "compute_cover_pct": 100.0 * p["compute_cover_ps"] / p["span_ps"] if p["span_ps"] else 0.0,
        "exposed_us": [[us(a - t0), us(b - t0)] for a, b in p["exposed"]],
        "comm_busy_us": us(p["comm_ps"]),
        "comm_beside_compute_pct": 100.0 * p["comm_hidden_ps"] / p["comm_ps"] if p["comm_ps"] else 0.0,
    }


def draw(p, path, item_name, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t0 = p["start_ps"]
    stages = p["stages"]
    colours = plt.get_cmap("tab10")
    colour = {st: colours(i % 10) for i, st in enumerate(stages)}
    # One row per item, plus a row for each stage without items (above them).
    whole = [st for st in stages if not any((st, it) in p["windows"] for it in p["items"])]
    rows = [(f"{st}", st, None) for st in whole] + [(f"{item_name} {it}", None, it) for it in p["items"]]
    fig_h = max(2.5, 0.28 * len(rows) + 1.6)
    fig, ax = plt.subplots(figsize=(11, fig_h))
    for y, (label, st_only, it) in enumerate(rows):
        for st in stages:
            key = (st, None) if it is None else (st, it)
            if (st_only is not None and st != st_only) or key not in p["windows"]:
                continue
            w = p["windows"][key]
            ax.barh(y, us(w[1] - w[0]), left=us(w[0] - t0), height=0.7, color=colour[st], alpha=0.85,
                    edgecolor="none")
    for a, b in p["exposed"]:
        ax.axvspan(us(a - t0), us(b - t0), color="0.85", zorder=0)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, us(p["span_ps"]))
    ax.set_xlabel("us since the rank's earliest block start")
    share = 100.0 * p["compute_cover_ps"] / p["span_ps"] if p["span_ps"] else 0.0
    ax.set_title(f"{title}\nrank {p['rank']}: compute ({'+'.join(p['compute_stages'])}) at work for {share:.1f}% "
                 f"of {us(p['span_ps']):.0f} us; grey: exposed", fontsize=9)
    handles = [matplotlib.patches.Patch(color=colour[st], label=st) for st in stages]
    ax.legend(handles=handles, fontsize=7, loc="lower right", ncol=min(len(stages), 7))
    fig.tight_layout()
    tt.write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=110), binary=True)
    plt.close(fig)


def stage_list(text, flag):
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise TraceError(f"{flag}: empty stage list")
    return names


def main():
    ap = argparse.ArgumentParser(
        prog="stage_profile.py",
        description="Per stage and per item (expert) of one rank of a Tandem trace: the window over its cores, "
                    "and how much of the kernel the compute stages cover (the published MegaMoE stage profile).",
        epilog="Example: stage_profile.py /tmp/x/trace.json --rank 0 -o /tmp/x/stages.png")
    ap.add_argument("trace", metavar="TRACE", help="trace JSON written with --trace (an op that names stages: moe_ffn)")
    ap.add_argument("--rank", type=int, default=0, help="the rank to profile (default 0)")
    ap.add_argument("--compute-stages", default=DEFAULT_COMPUTE, metavar="LIST",
                    help=f"stages that count as compute (default {DEFAULT_COMPUTE})")
    ap.add_argument("--comm-stages", default=DEFAULT_COMM, metavar="LIST",
                    help=f"stages that count as communication (default {DEFAULT_COMM})")
    ap.add_argument("--item-name", default="expert", help="what an item is, for the table (default expert)")
    ap.add_argument("-o", "--output", metavar="PNG", help="draw the windows into this PNG")
    ap.add_argument("--json", metavar="FILE", help="write the profile as JSON")
    a = ap.parse_args()
    if a.output and not a.output.lower().endswith(".png"):
        ap.error("-o must name a .png file")
    compute = stage_list(a.compute_stages, "--compute-stages")
    comm = stage_list(a.comm_stages, "--comm-stages")
    trace = tt.load_trace(a.trace)
    p = profile(trace, a.rank, compute, comm)
    for flag, given, default, kept in (("--compute-stages", compute, DEFAULT_COMPUTE, p["compute_stages"]),
                                       ("--comm-stages", comm, DEFAULT_COMM, p["comm_stages"])):
        if not kept and ",".join(given) != default:
            raise TraceError(f"{flag}: none of {','.join(given)} is a stage of this trace (it has {','.join(p['stages'])})")
    print_profile(p, a.item_name)
    if a.json:
        doc = to_json(p, a.item_name)
        tt.write_atomic(a.json, lambda f: json.dump(doc, f, indent=1))
    if a.output:
        draw(p, a.output, a.item_name, trace.shape_text())
        print(f"wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(tt.run_main("stage_profile.py", main))
