#!/usr/bin/python3
"""Chart of a Tandem sweep: TFLOPS per rank and overlap efficiency against shape.

    sweep_chart.py RESULTS.json -o chart.png

RESULTS.json is what `--sweep` (a JSON array of result objects, docs/RESULTS.md) or `--json` (one
object) writes. The runs are sorted by ranks, then M, K, N, and labelled `n=<ranks> MxKxN`
(with the comm mode or tile/block counts appended when they are what tells two runs apart).
Top panel: tflops_per_rank (pipelined TFLOPS per rank); bottom panel: overlap_eff_pct. Bars
are coloured by rank count.
"""
import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches as mpatches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

import tandem_trace as tt  # noqa: E402
from tandem_trace import TraceError  # noqa: E402

REQUIRED = ("ranks", "m", "k", "n", "tflops_per_rank", "overlap_eff_pct")
DISAMBIGUATE = ("comm_mode", "base_m", "base_n", "chunk_tiles", "compute_blocks", "comm_blocks", "soc", "data_mode")
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf"]


def load_entries(path):
    doc = tt.load_json_file(path, "results JSON")
    if isinstance(doc, dict):
        entries = [doc]
    elif isinstance(doc, list):
        entries = doc
    else:
        raise TraceError(f"{path}: not a Tandem results JSON (expected an object or an array of objects)")
    if not entries:
        raise TraceError(f"{path}: the results array is empty")
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise TraceError(f"{path}: entry {i} is not a results object")
        missing = [k for k in REQUIRED if k not in e]
        if missing:
            raise TraceError(f"{path}: entry {i} is not a Tandem result (missing {', '.join(missing)})")
        bad = [k for k in REQUIRED if not tt._is_number(e[k])]
        if bad:
            raise TraceError(f"{path}: entry {i}: {', '.join(bad)} must be numbers")
    return entries


def sort_key(e):
    return (e["ranks"], e["m"], e["k"], e["n"]) + tuple(str(e.get(k, "")) for k in DISAMBIGUATE)


def labels_for(entries):
    """`n=4 4096x4096x4096`, plus whichever other keys differ between runs of the same shape."""
    base = [f"n={e['ranks']} {e['m']}x{e['k']}x{e['n']}" for e in entries]
    extra_keys = []
    for key in DISAMBIGUATE:
        groups = {}
        for b, e in zip(base, entries):
            groups.setdefault(b, set()).add(str(e.get(key, "")))
        if any(len(v) > 1 for v in groups.values()):
            extra_keys.append(key)
    out = []
    for b, e in zip(base, entries):
        bits = []
        for key in extra_keys:
            v = e.get(key, "?")
            bits.append(str(v) if key in ("comm_mode", "soc", "data_mode") else f"{key}={v}")
        out.append(b + (" " + " ".join(bits) if bits else ""))
    return out


def draw(entries, out, title=None):
    entries = sorted(entries, key=sort_key)
    labels = labels_for(entries)
    rank_values = sorted({e["ranks"] for e in entries})
    colour = {r: COLOURS[i % len(COLOURS)] for i, r in enumerate(rank_values)}
    n = len(entries)
    xs = list(range(n))
    width = min(max(8.0, 0.42 * n + 3.0), 60.0)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(width, 7.5), dpi=110, sharex=True)
    cols = [colour[e["ranks"]] for e in entries]
    tfl = [float(e["tflops_per_rank"]) for e in entries]
    eff = [float(e["overlap_eff_pct"]) for e in entries]
    ax1.bar(xs, tfl, color=cols, width=0.7)
    ax2.bar(xs, eff, color=cols, width=0.7)
    ax1.set_ylabel("TFLOPS per rank\n(pipelined, tflops_per_rank)")
    ax2.set_ylabel("overlap efficiency (%)\n(overlap_eff_pct)")
    ax2.set_ylim(0, max(100.0, max(eff) * 1.08 if eff else 100.0))
    ax1.set_ylim(0, max(tfl) * 1.15 if max(tfl) > 0 else 1.0)
    if n <= 40:
        for x, v in zip(xs, tfl):
            ax1.text(x, v, f"{v:.1f}", ha="center", va="bottom", fontsize=7)
        for x, v in zip(xs, eff):
            ax2.text(x, v, f"{v:.0f}%", ha="center", va="bottom", fontsize=7)
    ax2.axhline(100.0, color="#666666", linewidth=0.6, linestyle=":")
    # separators between rank groups
    for i in range(1, n):
        if entries[i]["ranks"] != entries[i - 1]["ranks"]:
            for ax in (ax1, ax2):
                ax.axvline(i - 0.5, color="#999999", linewidth=0.7, linestyle="--")
    for ax in (ax1, ax2):
        ax.grid(axis="y", color="#e0e0e0", linewidth=0.5)
        ax.set_axisbelow(True)
    ax2.set_xticks(xs)
    ax2.set_xticklabels(labels, rotation=45 if n > 4 else 0, ha="right" if n > 4 else "center", fontsize=8)
    ax2.set_xlabel("shape (ranks, M x K x N), sorted by ranks then M, K, N")
    ax1.legend(handles=[mpatches.Patch(color=colour[r], label=f"n={r} ranks") for r in rank_values],
               fontsize=8, loc="upper left", ncol=min(len(rank_values), 6))
    if title is None:
        socs = sorted({str(e.get("soc", "?")) for e in entries})
        modes = sorted({str(e.get("data_mode", "?")) for e in entries})
        title = (f"Tandem AllGather+GEMM sweep: {', '.join(socs)}, {n} run{'s' if n != 1 else ''} "
                 f"({', '.join(modes)})")
    ax1.set_title(title, fontsize=11)
    fig.tight_layout()
    tt.write_atomic(out, lambda f: fig.savefig(f, format="png", dpi=110), binary=True)
    plt.close(fig)
    return labels


def main():
    ap = argparse.ArgumentParser(
        prog="sweep_chart.py",
        description="Plot TFLOPS per rank and overlap efficiency against shape for Tandem results "
                    "(a sweep's JSON array of SPEC result objects, or one object).",
        epilog="Example: sweep_chart.py out/sweep.json -o out/sweep.png")
    ap.add_argument("results", metavar="RESULTS.json", help="results JSON: an array of result objects or one object")
    ap.add_argument("-o", "--output", required=True, metavar="PNG", help="output PNG file")
    ap.add_argument("--title", help="replace the chart title")
    a = ap.parse_args()
    if not a.output.lower().endswith(".png"):
        ap.error("-o must name a .png file")
    entries = load_entries(a.results)
    labels = draw(entries, a.output, a.title)
    print(f"sweep_chart.py: wrote {a.output} ({len(labels)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(tt.run_main("sweep_chart.py", main))
