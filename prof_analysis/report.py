#!/usr/bin/python3
"""Overlap report for a Tandem trace (and optionally the run's results JSON).

    report.py TRACE [--results RESULTS.json] [--json OUT] [--top N] [--strict]

Per rank and overall:
  * busy time per pipe: the sum of the X durations on the `<AIC|AIV><core> <PIPE>` tracks,
    summed over cores, and its share of (cores that have that pipe) x (view time), where the
    view time is otherData.view_end_us - view_start_us;
  * time blocked in TWAIT: X events named TWAIT on SCALAR tracks whose cat contains `stall`,
    summed per (rank, stream, block); the blocks that waited longest;
  * a critical-path sentence: how much of the compute stream's time (summed over its blocks)
    was spent waiting, on which source (from the `signal` arg: `summary[src=S]`,
    `flag[src=S][chunk=C]`) and in which phase, and the longest single wait;
  * with --results: overlap efficiency (docs/RESULTS.md: ((seq_comm + seq_compute) - pipelined) /
    min(seq_comm, seq_compute) * 100, floored at 0) and exposed communication
    (pipelined - compute_only), checked against the results JSON's own values.
The busy totals are compared with otherData.busy_us (the simulator's own counters): a warning
is printed when they differ by more than 1 ns (with --strict the exit status is then 3).

Per kernel launch of the view (otherData.kernels, entries with view "pipelined": rank, stream,
start_us, end_us), pipe utilisation as msprof's op summary gives it: on each core with a BLOCKS
slice of the launch's stream inside [start_us, end_us], busy = the sum of the X durations of
that stream on the core's pipe track inside the launch; ratio = busy / (end_us - start_us); the
mean over those cores and the min and max. AIC: CUBE, MTE1, MTE2, FIXP; AIV: MTE2, VECTOR,
MTE3. SCALAR is not derivable from the trace (set_flag and wait_flag have no slices, and a
TWAIT slice includes its waiting), so it is left out. The rank the results report (`rank`) is
compared with the simulator's own pipe_ratio (a warning past 1e-9).

Phases: a block is in phase 1 until its first TTEST/TWAIT on a signal of another source (a
signal whose name has `[src=S]` with S != the block's rank), in phase 2 from then on. Only the
signal names are used; nothing else about the kernel is assumed.
"""
import argparse
import json
import sys
from collections import defaultdict

import tandem_trace as tt
from tandem_trace import CORE_TYPES, PIPES, TraceError, us

BUSY_TOLERANCE_PS = 1000  # 1 ns
RESULT_KEYS_NEEDED = ("compute_only_us", "seq_comm_us", "seq_compute_us", "pipelined_us")
IDENTITY_KEYS = ("ranks", "m", "k", "n", "base_m", "base_n", "compute_blocks", "comm_blocks",
                 "comm_mode", "data_mode", "soc")


# ---- results JSON ------------------------------------------------------------------------------

def load_results(path, trace, warnings):
    """The results object for this trace: the file's object, or the entry of a JSON array (a
    sweep) whose identity keys (ranks, m, k, n, ...) match otherData."""
    doc = tt.load_json_file(path, "results JSON")
    if isinstance(doc, dict):
        entries = [doc]
    elif isinstance(doc, list) and doc:
        entries = doc
    else:
        raise TraceError(f"{path}: not a Tandem results JSON (expected an object or a non-empty array of objects)")
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise TraceError(f"{path}: not a Tandem results JSON (entry {i} is not an object)")

    def mismatches(e):
        return [k for k in IDENTITY_KEYS if k in e and k in trace.meta and e[k] != trace.meta[k]]

    if len(entries) == 1:
        chosen = entries[0]
        bad = mismatches(chosen)
        if bad:
            warnings.append(f"{path} does not describe this trace's run: "
                            + ", ".join(f"{k}={chosen[k]!r} vs trace {trace.meta[k]!r}" for k in bad))
    else:
        matching = [e for e in entries if not mismatches(e)]
        if not matching:
            ident = ", ".join(f"{k}={trace.meta[k]}" for k in ("ranks", "m", "k", "n") if k in trace.meta)
            raise TraceError(f"{path}: none of its {len(entries)} results matches the trace ({ident})")
        if len(matching) > 1:
            warnings.append(f"{path}: {len(matching)} results match the trace; using the first")
        chosen = matching[0]
    missing = [k for k in RESULT_KEYS_NEEDED if not tt._is_number(chosen.get(k))]
    if missing:
        raise TraceError(f"{path}: not a Tandem results JSON (missing or non-numeric: {', '.join(missing)})")
    return chosen


def overlap_metrics(res):
    """docs/RESULTS.md formulas, in the same order of operations as the host program."""
    seq_comm, seq_compute = float(res["seq_comm_us"]), float(res["seq_compute_us"])
    pipelined, compute_only = float(res["pipelined_us"]), float(res["compute_only_us"])
    sequential = seq_comm + seq_compute
    saved = sequential - pipelined
    shorter = min(seq_comm, seq_compute)
    eff = max(0.0, saved / shorter * 100.0) if shorter > 0 else 0.0
    return {
        "seq_comm_us": seq_comm,
        "seq_compute_us": seq_compute,
        "sequential_us": sequential,
        "pipelined_us": pipelined,
        "compute_only_us": compute_only,
        "overlap_eff_pct": eff,
        "exposed_comm_us": pipelined - compute_only,
        "results_overlap_eff_pct": res.get("overlap_eff_pct"),
        "results_exposed_comm_us": res.get("exposed_comm_us"),
        "comm_kind": res.get("comm_kind"),
    }


# ---- analysis -----------------------------------------------------------------------------------

def _pipe_label(core_type, pipe):
    return f"{core_type} {pipe}" if core_type else f"{pipe} (all cores)"


def _share(busy_ps, cores, view_ps):
    denom = cores * view_ps
    return busy_ps / denom * 100.0 if denom > 0 else 0.0


def _busy_rows(busy, cores, view_ps):
    """busy: {(ct, pipe): ps}; cores: {(ct, pipe): n}. Rows per (core type, pipe) in the
    Ascend order, then one combined row per pipe found on both core types."""
    rows = []
    for ct in CORE_TYPES:
        for pipe in PIPES:
            if (ct, pipe) in cores or (ct, pipe) in busy:
                b, n = busy.get((ct, pipe), 0), cores.get((ct, pipe), 0)
                rows.append({"core_type": ct, "pipe": pipe, "label": _pipe_label(ct, pipe),
                             "busy_us": us(b), "busy_ps": b, "cores": n, "share_pct": _share(b, n, view_ps)})
    for pipe in PIPES:
        types = [ct for ct in CORE_TYPES if (ct, pipe) in cores or (ct, pipe) in busy]
        if len(types) > 1:
            b = sum(busy.get((ct, pipe), 0) for ct in types)
            n = sum(cores.get((ct, pipe), 0) for ct in types)
            rows.append({"core_type": None, "pipe": pipe, "label": _pipe_label(None, pipe),
                         "busy_us": us(b), "busy_ps": b, "cores": n, "share_pct": _share(b, n, view_ps)})
    return rows


class _Pass:
    """What one pass over the trace's slices gathers (times in ps; busy and block times clipped
    to the window a limited trace kept, `busy_raw` not)."""

    def __init__(self, trace, window):
        self.window = window
        self.busy_raw = defaultdict(int)         # (rank, ct, pipe) -> ps, whole events (for otherData.busy_us)
        self.busy = defaultdict(int)             # (rank, ct, pipe) -> ps
        self.busy_stream = defaultdict(int)      # (rank, ct, pipe, stream) -> ps
        self.block_time = defaultdict(int)       # (rank, stream, block) -> ps, from BLOCKS tracks
        self.span = {}                           # (rank, stream, block) -> [first ts, last end]
        self.first_remote_check = {}             # (rank, stream, block) -> ts of first TTEST/TWAIT on another source
        self.last_end = {}                       # rank -> (end, stream, block)
        self.data_iv = defaultdict(list)         # (rank, ct, core) -> [(ts, end)] on its non-SCALAR pipes
        self.polls = {}                          # (rank, stream, block) -> [TTEST ps, polls]
        self.block_pipe_busy = defaultdict(lambda: defaultdict(int))  # (rank, stream, block) -> {pipe: ps}
        self.block_core = {}                     # (rank, stream, block) -> "AIC3": the core it ran on
        self.block_runs = defaultdict(list)      # rank -> [(core type, ts, end, stream)]: each block's execution
        for s in trace.slices:
            self._add(s)

    def clip(self, s):
        w = self.window
        return s.dur if w is None else max(0, min(s.end, w[1]) - max(s.ts, w[0]))

    def _add(self, s):
        track = s.track
        kind = track.kind
        if kind not in ("pipe", "blocks"):
            return
        rank, end = s.rank, s.ts + s.dur
        d = self.clip(s)
        scalar = kind == "pipe" and track.pipe == "SCALAR"
        if kind == "pipe":
            if not scalar and s.dur > 0:
                self.data_iv[(rank, track.core_type, track.core)].append((s.ts, end))
            self.busy_raw[(rank, track.core_type, track.pipe)] += s.dur
            self.busy[(rank, track.core_type, track.pipe)] += d
            self.busy_stream[(rank, track.core_type, track.pipe, s.stream)] += d
        b = s.block
        if b is None:
            return
        key = (rank, s.stream, b)
        if key not in self.block_core:
            self.block_core[key] = f"{track.core_type}{track.core}"
        if kind == "blocks":
            self.block_time[key] += d
            self.block_runs[rank].append((track.core_type, s.ts, end, key[1]))
        elif not scalar:
            self.block_pipe_busy[key][track.pipe] += d
        sp = self.span.get(key)
        if sp is None:
            self.span[key] = [s.ts, end]
        else:
            if s.ts < sp[0]:
                sp[0] = s.ts
            if end > sp[1]:
                sp[1] = end
        le = self.last_end.get(rank)
        if le is None or end > le[0]:
            self.last_end[rank] = (end, key[1], b)
        if scalar and s.name in ("TWAIT", "TTEST"):
            if s.name == "TTEST":  # a run of back-to-back polls is one slice ("polls": N)
                pl = self.polls.setdefault(key, [0, 0])
                pl[0] += d
                n = s.args.get("polls", 1)
                pl[1] += n if tt._is_int(n) else 1
            src = tt.signal_source(s.signal)
            if src is not None and src != rank:
                if key not in self.first_remote_check or s.ts < self.first_remote_check[key]:
                    self.first_remote_check[key] = s.ts

    def block_ps(self, key):
        if key in self.block_time:
            return self.block_time[key]
        sp = self.span.get(key)
        if not sp:
            return 0
        w = self.window
        return sp[1] - sp[0] if w is None else max(0, min(sp[1], w[1]) - max(sp[0], w[0]))


def _cores(trace, warnings):
    """Cores per (rank, core type, pipe): the chip's (otherData), else those with a track."""
    core_sets = defaultdict(set)
    pipes_of = defaultdict(set)
    for (pid, _), tr in trace.tracks.items():
        if tr.kind in ("pipe", "blocks"):
            core_sets[(pid, tr.core_type)].add(tr.core)
        if tr.kind == "pipe":
            pipes_of[(pid, tr.core_type)].add(tr.pipe)
    counts = trace.core_counts()
    cores = {}
    for (pid, ct), pipes in pipes_of.items():
        n = counts.get(ct) or len(core_sets[(pid, ct)])
        for p in pipes:
            cores[(pid, ct, p)] = n
    unknown_tracks = sorted({(s.rank, s.track.name) for s in trace.slices if s.track.kind == "other"})
    if unknown_tracks:
        names = ", ".join(f"rank {r} {n!r}" for r, n in unknown_tracks[:5])
        more = f" and {len(unknown_tracks) - 5} more" if len(unknown_tracks) > 5 else ""
        warnings.append(f"X events on {len(unknown_tracks)} tracks without a known name are not counted: {names}{more}")
    return cores, counts


def _stalls(trace, ix):
    """Stalls per (rank, stream, block). "idle" = the part of a stall during which none of the
    core's other (data) pipes is busy: the scalar unit runs ahead of the pipes' queues, so a
    TWAIT can start while earlier work still drains."""
    window = ix.window
    data_merged = {k: tt.merge_intervals(v) for k, v in ix.data_iv.items()}
    stall_blocks = {}
    for s in trace.stalls():
        key = (s.rank, s.stream, s.block)
        st = stall_blocks.get(key)
        if st is None:
            st = stall_blocks[key] = {"blocked_ps": 0, "idle_ps": 0, "stalls": 0, "longest": None,
                                      "by_source": defaultdict(int), "by_phase": defaultdict(int),
                                      "by_source_phase": defaultdict(int)}
        d = ix.clip(s)
        st["blocked_ps"] += d
        a0, b0 = (s.ts, s.end) if window is None else (max(s.ts, window[0]), min(s.end, window[1]))
        st["idle_ps"] += d - tt.overlap_ps(data_merged.get((s.rank, s.track.core_type, s.track.core), []), a0, b0)
        st["stalls"] += 1
        if st["longest"] is None or s.dur > st["longest"].dur:
            st["longest"] = s
        src = tt.signal_source(s.signal)
        frc = ix.first_remote_check.get(key)
        phase = 2 if frc is not None and s.ts >= frc else 1
        st["by_source"][src] += d
        st["by_phase"][phase] += d
        st["by_source_phase"][(src, phase)] += d
    return stall_blocks


def _block_entry(trace, ix, stall_blocks, key):
    rank, stream, block = key
    st = stall_blocks.get(key)
    bt = ix.block_ps(key)
    pl = ix.polls.get(key, [0, 0])
    e = {"rank": rank, "stream": stream, "block": block, "block_us": us(bt),
         "blocked_us": 0.0, "blocked_ps": 0, "blocked_pct_of_block": 0.0, "stalls": 0,
         "blocked_idle_us": 0.0, "blocked_idle_ps": 0,
         "ttest_us": us(pl[0]), "ttest_ps": pl[0], "ttests": pl[1],
         "longest_wait": None, "by_source_us": {}, "by_phase_us": {}}
    # When it ran and what kept its core busy: the spread of the blocks' ends is the
    # imbalance the last one pays for (one more row group, a later source, a slower share).
    sp = ix.span.get(key)
    e["core"] = ix.block_core.get(key)
    e["start_us"] = us(sp[0] - trace.view_start_ps) if sp else None
    e["end_us"] = us(sp[1] - trace.view_start_ps) if sp else None
    e["end_ps"] = sp[1] - trace.view_start_ps if sp else None
    e["busy_pct_of_block"] = {pipe: v / bt * 100.0 if bt > 0 else 0.0
                              for pipe, v in sorted(ix.block_pipe_busy.get(key, {}).items())}
    if st:
        e["blocked_idle_ps"] = st["idle_ps"]
        e["blocked_idle_us"] = us(st["idle_ps"])
        e["blocked_ps"] = st["blocked_ps"]
        e["blocked_us"] = us(st["blocked_ps"])
        e["blocked_pct_of_block"] = st["blocked_ps"] / bt * 100.0 if bt > 0 else 0.0
        e["stalls"] = st["stalls"]
        lw = st["longest"]
        e["longest_wait"] = {"us": us(lw.dur), "signal": lw.signal, "source": tt.signal_source(lw.signal),
                             "start_us": us(lw.ts - trace.view_start_ps), "address": lw.args.get("address")}
        e["by_source_us"] = {("unknown" if k is None else str(k)): us(v) for k, v in sorted(
            st["by_source"].items(), key=lambda kv: (kv[0] is None, kv[0] or 0))}
        e["by_phase_us"] = {str(k): us(v) for k, v in sorted(st["by_phase"].items())}
    return e


def _stream_totals(blocks, ix, rank):
    """A stream's blocks summed: block time, blocked (and its idle part), TTEST polls, ends."""
    bt = sum(ix.block_ps((rank, b["stream"], b["block"])) for b in blocks)
    blocked = sum(b["blocked_ps"] for b in blocks)
    idle = sum(b["blocked_idle_ps"] for b in blocks)
    ttest = sum(b["ttest_ps"] for b in blocks)
    return {"blocks": len(blocks), "block_us": us(bt), "blocked_us": us(blocked),
            "blocked_pct": blocked / bt * 100.0 if bt > 0 else 0.0,
            "stalls": sum(b["stalls"] for b in blocks),
            "blocked_idle_us": us(idle), "blocked_idle_pct": idle / bt * 100.0 if bt > 0 else 0.0,
            "ttest_us": us(ttest), "ttest_pct": ttest / bt * 100.0 if bt > 0 else 0.0,
            "ttests": sum(b["ttests"] for b in blocks),
            "ends": _ends(blocks), "_bt": bt, "_bl": blocked, "_idle": idle, "_tt": ttest}


def _rank_report(trace, ix, r, cores, counts, denom_ps, stall_blocks, memory_samples, top, window):
    rcores = {(ct, p): v for (rr, ct, p), v in cores.items() if rr == r}
    rbusy = {(ct, p): v for (rr, ct, p), v in ix.busy.items() if rr == r}
    rows = _busy_rows(rbusy, rcores, denom_ps)
    for row in rows:
        row["by_stream_us"] = {st: us(v) for (rr, ct, p, st), v in sorted(ix.busy_stream.items())
                               if rr == r and p == row["pipe"] and (row["core_type"] in (None, ct))}
    keys = sorted((k for k in set(ix.span) | set(ix.block_time) | set(stall_blocks) if k[0] == r),
                  key=lambda k: (k[1], k[2] if k[2] is not None else -1))
    blocks = [_block_entry(trace, ix, stall_blocks, k) for k in keys]
    stream_names = sorted({k[1] for k in keys})
    streams = {}
    for stream in stream_names:
        totals = _stream_totals([b for b in blocks if b["stream"] == stream], ix, r)
        streams[stream] = {k: v for k, v in totals.items() if not k.startswith("_")}
    cp = critical_path(trace, r, set(stream_names), stall_blocks, ix.block_ps, rows, ix.last_end.get(r), set(keys),
                       streams)
    top_blocks = sorted((b for b in blocks if b["blocked_ps"] > 0),
                        key=lambda b: (-b["blocked_ps"], b["stream"], b["block"]))[:top]
    return {"rank": r, "busy": rows, "streams": streams, "blocks": blocks,
            "top_blocks": top_blocks, "critical_path": cp,
            "memory": memory_use(memory_samples.get(r, []), window or (trace.view_start_ps, trace.view_end_ps)),
            "oversubscribed": oversubscribed_cores(ix.block_runs.get(r, []), counts, trace.view_start_ps)}


def _overall(rank_reports, cores, ix, denom_ps, top):
    """The same sums over every rank in the trace."""
    ocores = defaultdict(int)
    for (_r, ct, p), v in cores.items():
        ocores[(ct, p)] += v
    obusy = defaultdict(int)
    for (_r, ct, p), v in ix.busy.items():
        obusy[(ct, p)] += v
    ostreams = {}
    for rep in rank_reports:
        for stream in rep["streams"]:
            t = _stream_totals([b for b in rep["blocks"] if b["stream"] == stream], ix, rep["rank"])
            o = ostreams.setdefault(stream, {"blocks": 0, "stalls": 0, "ttests": 0, "_bt": 0, "_bl": 0, "_idle": 0,
                                             "_tt": 0})
            for k in o:
                o[k] += t[k]
    for o in ostreams.values():
        bt, bl, idle, tt_ps = o.pop("_bt"), o.pop("_bl"), o.pop("_idle"), o.pop("_tt")
        o["block_us"], o["blocked_us"] = us(bt), us(bl)
        o["blocked_pct"] = bl / bt * 100.0 if bt > 0 else 0.0
        o["blocked_idle_us"] = us(idle)
        o["blocked_idle_pct"] = idle / bt * 100.0 if bt > 0 else 0.0
        o["ttest_us"] = us(tt_ps)
        o["ttest_pct"] = tt_ps / bt * 100.0 if bt > 0 else 0.0
    all_blocks = [b for rep in rank_reports for b in rep["blocks"]]
    otop = sorted((b for b in all_blocks if b["blocked_ps"] > 0),
                  key=lambda b: (-b["blocked_ps"], b["rank"], b["stream"], b["block"]))[:top]
    worst = None
    for rep in rank_reports:
        cp = rep["critical_path"]
        if cp.get("waited_pct") is not None and (worst is None or cp["waited_pct"] > worst["waited_pct"]):
            worst = cp
    return {"ranks": len(rank_reports), "busy": _busy_rows(dict(obusy), dict(ocores), denom_ps),
            "streams": ostreams, "top_blocks": otop,
            "critical_path": worst["sentence"] if worst else None,
            "critical_rank": worst["rank"] if worst else None}


def _results_part(trace, results, results_path, overall, warnings):
    """Overlap efficiency and exposed communication from the results, checked against them."""
    view_ps = trace.view_ps
    om = overlap_metrics(results)
    om["results_file"] = results_path
    om["view_us"] = us(view_ps)
    ro, re_ = om["results_overlap_eff_pct"], om["results_exposed_comm_us"]
    if tt._is_number(ro) and abs(ro - om["overlap_eff_pct"]) > 1e-6 * max(1.0, abs(ro)):
        warnings.append(f"overlap efficiency from the SPEC formula ({om['overlap_eff_pct']:.6f}%) differs from "
                        f"the results JSON's overlap_eff_pct ({ro:.6f}%)")
    if tt._is_number(re_) and abs(re_ - om["exposed_comm_us"]) > 1e-6 * max(1.0, abs(re_)):
        warnings.append(f"exposed communication pipelined - compute_only ({om['exposed_comm_us']:.6f} us) differs "
                        f"from the results JSON's exposed_comm_us ({re_:.6f} us)")
    if not trace.is_filtered and abs(om["pipelined_us"] - us(view_ps)) > 0.001:
        warnings.append(f"the trace's view lasts {us(view_ps):.6f} us but the results' pipelined_us is "
                        f"{om['pipelined_us']:.6f} us")
    cts = results.get("compute_twait_stall_us")
    if tt._is_number(cts) and not trace.is_filtered:
        comp = overall["streams"].get("compute")
        om["results_compute_twait_stall_us"] = float(cts)
        om["trace_compute_stall_us"] = comp["blocked_us"] if comp else 0.0
        om["trace_compute_stalls"] = comp["stalls"] if comp else 0
    return om


def analyze(trace, results=None, results_path=None, top=5):
    """All the report's numbers as a JSON-ready dict (times in us; *_ps fields exact)."""
    warnings = []
    view_ps = trace.view_ps
    if trace.view_from_events:
        warnings.append("otherData has no view_start_us/view_end_us: using the span of the events as the view")
    window = trace.window_ps()
    # The time the shares are of: the view, or the time window a limited trace kept (events are
    # then clipped to the window for busy and blocked times).
    denom_ps = (window[1] - window[0]) if window else view_ps
    if denom_ps <= 0:
        warnings.append("the view has no duration: shares are reported as 0")
    cores, counts = _cores(trace, warnings)
    ix = _Pass(trace, window)
    stall_blocks = _stalls(trace, ix)
    memory_samples = defaultdict(list)  # by rank: the chip memory counter's (ts, values)
    for c in trace.counters:
        if c.name == "memory GiB/s":
            memory_samples[c.pid].append((c.ts, c.values))
    rank_reports = [_rank_report(trace, ix, r, cores, counts, denom_ps, stall_blocks, memory_samples, top, window)
                    for r in trace.ranks]
    overall = _overall(rank_reports, cores, ix, denom_ps, top)
    busy_check = check_busy(trace, ix.busy_raw, warnings)
    kernel_use = kernel_pipe_use(trace, warnings)
    stages = stage_report(trace, results, warnings)
    results_part = _results_part(trace, results, results_path, overall, warnings) if results is not None else None
    meta = {k: trace.meta.get(k) for k in ("soc", "ranks", "m", "k", "n", "base_m", "base_n", "compute_blocks",
                                            "comm_blocks", "comm_mode", "data_mode", "profile_file", "view",
                                            "filter") if k in trace.meta}
    return {
        "trace": trace.path,
        "meta": meta,
        "filtered": trace.is_filtered,
        "filter_text": trace.describe_filter(),
        "view_start_us": us(trace.view_start_ps),
        "view_end_us": us(trace.view_end_ps),
        "view_us": us(view_ps),
        "window_us": [us(window[0] - trace.view_start_ps), us(window[1] - trace.view_start_ps)] if window else None,
        "share_time_us": us(denom_ps),
        "core_counts_from": "otherData" if counts else "tracks",
        "share_definition": ("busy / (cores of that type x view time), view time = view_end_us - view_start_us"
                             if not window else
                             "busy / (cores of that type x window time); events clipped to the window"),
        "phase_definition": "phase 1 until a block's first TTEST/TWAIT on another source's signal ([src=S], "
                            "S != its rank), phase 2 from then on",
        "ranks": rank_reports,
        "across_ranks": across_ranks(rank_reports, results, denom_ps),
        "overall": overall,
        "busy_check": busy_check,
        "stages": stages, "kernels": kernel_use,
        "results": results_part,
        "warnings": warnings,
    }


# ---- across ranks --------------------------------------------------------------------------------

OUTLIER_POINTS = 2.0         # a share (%) this far from the median rank's stands out
OUTLIER_VIEW_SHARE = 0.01    # a time this share of the view (or window) from the median rank's stands out
OUTLIER_RESULTS_SHARE = 0.01  # a rank's pipelined time this share from the median rank's stands out


def _spread(values):
    """{rank: x} -> mean, min and max with their ranks (the lowest rank of equals), median."""
    ranks = sorted(values, key=lambda r: (values[r], r))
    xs = [values[r] for r in ranks]
    n = len(xs)
    median = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    low = ranks[0]
    high = max(ranks, key=lambda r: (values[r], -r))
    return {"mean": sum(xs) / n, "min": xs[0], "min_rank": low, "max": values[high], "max_rank": high,
            "median": median, "by_rank": {str(r): values[r] for r in sorted(values)}}


def _stand_out(spread, limit):
    """The ranks whose value is more than `limit` from the median, farthest first."""
    by = {int(r): v for r, v in spread["by_rank"].items()}
    far = [r for r, v in by.items() if abs(v - spread["median"]) > limit]
    return sorted(far, key=lambda r: (-abs(by[r] - spread["median"]), r))


def across_ranks(rank_reports, results, denom_ps):
    """Each figure of the per-rank reports over the ranks the trace holds (mean, min, max and
    who), and the ranks that stand out from the median rank (outliers, each with what and by how
    much); from the results (every rank of the run, also those the trace left out) the pipelined
    time per rank the same way."""
    out = {"ranks": [rep["rank"] for rep in rank_reports], "busy": {}, "streams": {}, "memory": {},
           "outliers": [], "results": None}
    if not rank_reports:
        return out
    view_us = us(denom_ps)

    def outlier(rank, what, value, median, unit):
        out["outliers"].append({"rank": rank, "what": what, "value": value, "median": median, "unit": unit})

    labels = [row["label"] for row in rank_reports[0]["busy"] if row["core_type"]]
    for label in labels:
        values = {rep["rank"]: row["share_pct"] for rep in rank_reports for row in rep["busy"] if row["label"] == label}
        if len(values) == len(rank_reports):
            sp = out["busy"][label] = _spread(values)
            for r in _stand_out(sp, OUTLIER_POINTS):
                outlier(r, f"{label} busy", sp["by_rank"][str(r)], sp["median"], "%")
    streams = sorted({st for rep in rank_reports for st in rep["streams"]})
    for stream in streams:
        per = {}
        for key, what, unit, limit in (("blocked_pct", "blocked in TWAIT", "%", OUTLIER_POINTS),
                                       ("ttest_pct", "TTEST polls", "%", OUTLIER_POINTS),
                                       ("last_end_us", "last block ends", "us", OUTLIER_VIEW_SHARE * view_us)):
            values = {}
            for rep in rank_reports:
                st = rep["streams"].get(stream)
                if st is None:
                    continue
                v = (st["ends"] or {}).get("last_us") if key == "last_end_us" else st[key]
                if v is not None:
                    values[rep["rank"]] = v
            if not values:
                continue
            sp = per[key] = _spread(values)
            for r in _stand_out(sp, limit):
                outlier(r, f"{stream}: {what}", sp["by_rank"][str(r)], sp["median"], unit)
        out["streams"][stream] = per
    for key in ("L2", "HBM"):
        values = {rep["rank"]: rep["memory"][key]["mean_gib_s"] for rep in rank_reports if rep.get("memory")}
        if values:
            out["memory"][key] = _spread(values)
    if results is not None and isinstance(results.get("per_rank"), list):
        values = {i: float(t["pipelined_us"]) for i, t in enumerate(results["per_rank"])
                  if isinstance(t, dict) and tt._is_number(t.get("pipelined_us"))}
        if values:
            sp = _spread(values)
            far = _stand_out(sp, OUTLIER_RESULTS_SHARE * sp["median"])
            out["results"] = {"pipelined_us": sp, "outliers": far}
    return out


def _spread_text(sp, unit="", fmt="{:.1f}"):
    f = (fmt + unit).format
    return f"{f(sp['mean'])} [{f(sp['min'])} (rank {sp['min_rank']}), {f(sp['max'])} (rank {sp['max_rank']})]"


def _across_lines(a):
    x = a["across_ranks"]
    n = len(x["ranks"])
    time_name = "window" if a["window_us"] else "view"
    L = [f"across the {n} rank{'' if n == 1 else 's'} in the trace ({', '.join(map(str, x['ranks']))}): "
         "mean [min (rank), max (rank)]"]
    if x["busy"]:
        L.append(f"  busy per pipe, share of its cores x {time_name} time:")
        width = max(len(label) for label in x["busy"])
        L.extend(f"    {label:<{width}}  {_spread_text(sp, '%')}" for label, sp in x["busy"].items())
    for stream, per in x["streams"].items():
        parts = []
        if "blocked_pct" in per:
            parts.append(f"blocked in TWAIT {_spread_text(per['blocked_pct'], '%')}")
        if "ttest_pct" in per:
            parts.append(f"TTEST polls {_spread_text(per['ttest_pct'], '%')} of its blocks' time")
        if "last_end_us" in per:
            parts.append(f"last block ends {_spread_text(per['last_end_us'], ' us', '{:.3f}')}")
        L.append(f"  {stream}: " + "; ".join(parts))
    if x["memory"]:
        L.append("  chip memory, mean over the " + time_name + ": "
                 + "; ".join(f"{k} {_spread_text(sp, ' GiB/s')}" for k, sp in x["memory"].items()))
    if x["outliers"]:
        by_rank = defaultdict(list)
        for o in x["outliers"]:
            fmt = "{:.3f}" if o["unit"] == "us" else "{:.1f}"
            unit = " us" if o["unit"] == "us" else "%"
            diff = o["value"] - o["median"]
            by_rank[o["rank"]].append(f"{o['what']} {fmt.format(o['value'])}{unit} ({diff:+.{3 if o['unit'] == 'us' else 1}f}"
                                      f"{' us' if o['unit'] == 'us' else ' points'} from the median rank)")
        L.append(f"  ranks that stand out (more than {OUTLIER_POINTS:g} points or {OUTLIER_VIEW_SHARE * 100:g}% of the "
                 f"{time_name} from the median rank):")
        L.extend(f"    rank {r}: " + "; ".join(items) for r, items in sorted(by_rank.items()))
    elif n > 1:
        L.append(f"  no rank stands out (every figure within {OUTLIER_POINTS:g} points or {OUTLIER_VIEW_SHARE * 100:g}% "
                 f"of the {time_name} of the median rank's)")
    res = x["results"]
    if res:
        sp = res["pipelined_us"]
        far = res["outliers"]
        who = ("; stand out (more than 1% from the median): "
               + ", ".join(f"rank {r} {sp['by_rank'][str(r)]:.3f} us" for r in far)) if far else "; none more than 1% from the median"
        L.append(f"  from the results, every rank of the run: pipelined {_spread_text(sp, ' us', '{:.3f}')}{who}")
    return L


def _ends(blocks, last=3):
    """When a stream's blocks end (us from the view start): first, median, last, and the blocks
    that end last, latest first."""
    timed = sorted((b for b in blocks if b["end_ps"] is not None), key=lambda b: (b["end_ps"], b["block"]))
    if not timed:
        return None
    n = len(timed)
    mid = timed[n // 2]["end_ps"] if n % 2 else (timed[n // 2 - 1]["end_ps"] + timed[n // 2]["end_ps"]) // 2
    return {"first_us": timed[0]["end_us"], "median_us": us(mid), "last_us": timed[-1]["end_us"],
            "last_blocks": [b["block"] for b in reversed(timed[-last:])]}


def oversubscribed_cores(runs, counts, view_start_ps):
    """When more blocks of one core type ran at once than the chip has cores of it: possible only
    when kernels of two streams overlap beyond the chip (two calls of the API with async_op): the
    simulator gives each stream cores of its own (docs/API.md, "Known limits"), where a chip would
    make the later blocks wait for free cores. `runs`: a rank's block executions (core type, start
    ps, end ps, stream) from its BLOCKS tracks; `counts`: the chip's cores per type (otherData).
    Per core type that went over: its cores, the most blocks at once, how long and from when it
    was over, and the streams that had blocks running then."""
    out = {}
    for ct in sorted({r[0] for r in runs}):
        n = counts.get(ct)
        if not n:
            continue  # a trace without the chip's core counts: nothing to compare with
        edges = []
        for core_type, ts, end, stream in runs:
            if core_type == ct and end > ts:
                edges.append((ts, 1, stream))
                edges.append((end, -1, stream))
        edges.sort(key=lambda e: (e[0], e[1]))  # at one instant, ends before starts
        active, total, peak, over_ps, since, first_over = defaultdict(int), 0, 0, 0, None, None
        streams = set()
        for t, d, stream in edges:
            if total > n:
                over_ps += t - since
            active[stream] += d
            total += d
            since = t
            peak = max(peak, total)
            if total > n:
                first_over = t if first_over is None else first_over
                streams.update(st for st, k in active.items() if k > 0)
        if peak > n:
            out[ct] = {"cores": n, "peak_blocks": peak, "over_us": us(over_ps),
                       "from_us": us(first_over - view_start_ps), "streams": sorted(streams)}
    return out or None


def memory_use(samples, span):
    """A rank's chip memory counter ("memory GiB/s" samples (ts, values): L2 and HBM, a step
    function) over `span` (ps): mean, peak sample and bytes, or None when there is none."""
    samples = sorted(samples, key=lambda s: s[0])
    if not samples:
        return None
    lo, hi = span
    out = {}
    for key in ("L2", "HBM"):
        gib = 0.0  # GiB/s x ps
        for i, (ts, values) in enumerate(samples):
            end = samples[i + 1][0] if i + 1 < len(samples) else ts
            a, b = max(ts, lo), min(end, hi)
            if b > a and tt._is_number(values.get(key)):
                gib += float(values[key]) * (b - a)
        peak = max((float(v[key]) for _, v in samples if tt._is_number(v.get(key))), default=0.0)
        dur = hi - lo
        out[key] = {"mean_gib_s": gib / dur if dur > 0 else 0.0, "peak_gib_s": peak, "gib": gib * 1e-12}
    return out


def critical_path(trace, rank, streams, stall_blocks, block_ps, rows, last, block_keys, summary):
    """The per-rank sentence. Focus: the compute stream if the rank has one, else the stream
    that waited most. `summary`: the rank's per-stream totals (idle part of the waits, TTEST)."""
    cand = sorted(streams)
    if not cand:
        return {"rank": rank, "stream": None, "waited_pct": None,
                "sentence": f"rank {rank}: no blocks in the trace"}
    waited = {st: sum(v["blocked_ps"] for (r, s, _b), v in stall_blocks.items() if r == rank and s == st)
              for st in cand}
    focus = "compute" if "compute" in cand else max(cand, key=lambda st: (waited[st], st))
    keys = [k for k in block_keys if k[0] == rank and k[1] == focus]
    nblocks = len(keys)
    total = sum(block_ps(k) for k in keys)
    blocked = waited[focus]
    sm = summary.get(focus, {})
    out = {"rank": rank, "stream": focus, "blocks": nblocks, "block_us": us(total), "waited_us": us(blocked),
           "waited_pct": blocked / total * 100.0 if total > 0 else 0.0,
           "waited_idle_pct": sm.get("blocked_idle_pct", 0.0), "ttest_pct": sm.get("ttest_pct", 0.0)}
    end_clause = ""
    if last is not None:
        end, lst, lb = last
        out["last_block"] = {"stream": lst, "block": lb, "end_us": us(end - trace.view_start_ps)}
        end_clause = f"; the last block to finish was {lst} block {lb}, at {us(end - trace.view_start_ps):.3f} us"
    poll_clause = ""
    if sm.get("ttest_pct", 0.0) >= 0.05:
        poll_clause = f"; TTEST polling took {'another ' if blocked else ''}{sm['ttest_pct']:.1f}% of its time"
    if blocked == 0:
        pipe_rows = [r for r in rows if r["core_type"] and r["busy_ps"] > 0 and r["pipe"] != "SCALAR"]
        busiest = max(pipe_rows, key=lambda r: r["share_pct"], default=None)
        extra = (f"; its busiest pipe was {busiest['label']} at {busiest['share_pct']:.1f}% of "
                 f"{busiest['cores']} {busiest['core_type']} cores x view time") if busiest else ""
        out["sentence"] = (f"rank {rank}: {focus} never waited in TWAIT (over its {nblocks} block{'' if nblocks == 1 else 's'}){extra}"
                           f"{poll_clause}{end_clause}")
        return out
    by_src = defaultdict(int)
    by_src_phase = defaultdict(lambda: defaultdict(int))
    longest = None
    for (r, s, _b), v in stall_blocks.items():
        if r != rank or s != focus:
            continue
        for src, ps in v["by_source"].items():
            by_src[src] += ps
        for (src, ph), ps in v["by_source_phase"].items():
            by_src_phase[src][ph] += ps
        lw = v["longest"]
        if longest is None or lw.dur > longest.dur or (lw.dur == longest.dur and lw.ts < longest.ts):
            longest = lw
    order = sorted(by_src, key=lambda k: (-by_src[k], k is None, k if k is not None else 0))
    top_src = order[0]
    src_ps = by_src[top_src]
    phases = sorted(p for p, v in by_src_phase[top_src].items() if v > 0)
    if phases == [2]:
        phase_text = "in phase 2"
    elif phases == [1]:
        phase_text = "in phase 1"
    else:
        p2 = by_src_phase[top_src].get(2, 0)
        phase_text = f"in phases 1 and 2 ({p2 / src_ps * 100.0:.0f}% of it in phase 2)"

    def src_name(k):
        return f"source {k}" if k is not None else "signals without a source in their name"

    def pct(ps):
        return ps / total * 100.0 if total > 0 else 0.0

    if len(order) == 1:
        where = f"all of it on {src_name(top_src)} {phase_text}"
    else:
        others = ", ".join(f"{src_name(k)} {pct(by_src[k]):.1f}%" for k in order[1:4])
        more = ", ..." if len(order) > 4 else ""
        where = f"{pct(src_ps):.1f}% on {src_name(top_src)} {phase_text} (the most; then {others}{more})"
    idle_clause = ""
    if sm.get("blocked_idle_pct") is not None and abs(sm["blocked_idle_pct"] - out["waited_pct"]) >= 0.05:
        idle_clause = f"; {sm['blocked_idle_pct']:.1f}% with the core's other pipes idle as well"
    sig = longest.signal or (f"address {longest.args.get('address')}" if longest.args.get("address") else "an unnamed signal")
    out.update({"top_source": top_src, "top_source_us": us(src_ps), "top_source_pct": pct(src_ps),
                "top_source_phases": phases,
                "by_source_us": {("unknown" if k is None else str(k)): us(v) for k, v in by_src.items()},
                "longest_wait": {"block": longest.block, "signal": longest.signal, "us": us(longest.dur),
                                 "start_us": us(longest.ts - trace.view_start_ps)}})
    out["sentence"] = (f"rank {rank}: {focus} waited {out['waited_pct']:.1f}% of its time in TWAIT (summed over its "
                       f"{nblocks} block{'' if nblocks == 1 else 's'}{idle_clause}), {where}; the longest wait was block {longest.block} on {sig}, "
                       f"{us(longest.dur):.1f} us{poll_clause}{end_clause}")
    return out


def stage_report(trace, results, warnings):
    """The stages of ops whose kernels name them (args.stage on the instructions), per rank: each
    stage's extent (first to last instruction), the blocks that ran it, busy per pipe, and its
    busiest pipe's busy as a share of the rank's device span (first BLOCKS start to last end) per
    block. The stage with the highest share bounds the layer (docs/RESULTS.md "Stages"). Checked
    against the trace's own stage slices and, given --results, the results' pipelined_stages."""
    per = defaultdict(lambda: {"start": None, "end": None, "blocks": set(), "busy": defaultdict(int)})
    span = {}
    for s in trace.slices:
        kind = s.track.kind
        if kind == "blocks":
            a, b = span.get(s.rank, (s.ts, s.end))
            span[s.rank] = (min(a, s.ts), max(b, s.end))
        if kind != "pipe" or s.track.pipe == "SCALAR" or "stage" not in s.args:
            continue  # data-pipe instructions only, as the simulator counts a stage
        st = per[(s.rank, s.args["stage"])]
        st["start"] = s.ts if st["start"] is None else min(st["start"], s.ts)
        st["end"] = s.end if st["end"] is None else max(st["end"], s.end)
        st["blocks"].add((s.track.core_type, s.track.core, s.args.get("block")))
        st["busy"][s.track.pipe] += s.dur
    if not per:
        return None
    slices = {(s.rank, s.name): s for s in trace.slices if s.track.kind == "stage"}
    out = {}
    for rank in sorted({r for r, _ in per}):
        a, b = span.get(rank, (0, 0))
        dev_ps = b - a
        rows = []
        for (r, name), st in sorted(per.items(), key=lambda kv: (kv[1]["start"], kv[0][1])):
            if r != rank:
                continue
            n = len(st["blocks"])
            busiest, pct = "none", 0.0
            for pipe, ps in sorted(st["busy"].items()):
                x = 100.0 * ps / (dev_ps * n) if dev_ps > 0 and n else 0.0
                if x > pct:
                    busiest, pct = pipe, x
            rows.append({"stage": name, "start_us": us(st["start"]), "end_us": us(st["end"]),
                         "span_us": us(st["end"] - st["start"]), "blocks": n,
                         "busy_us": {p: us(v) for p, v in sorted(st["busy"].items())},
                         "busiest_pipe": busiest, "busiest_pipe_pct": pct})
            sl = slices.get((rank, name))
            if sl is not None and (sl.ts != st["start"] or sl.end != st["end"] or sl.args.get("blocks") != n):
                warnings.append(f"rank {rank} stage {name}: the stage slice ({us(sl.ts):.6f} .. {us(sl.end):.6f} us, "
                                f"{sl.args.get('blocks')} blocks) differs from its instructions "
                                f"({us(st['start']):.6f} .. {us(st['end']):.6f} us, {n} blocks)")
        bound = max(rows, key=lambda x: x["busiest_pipe_pct"]) if rows else None
        out[str(rank)] = {"device_span_us": us(dev_ps), "stages": rows,
                          "bounding_stage": bound["stage"] if bound else None}
    if results is not None and "0" in out:
        given = (results.get("pipelined_stages") or {}).get("bounding_stage")
        mine = out["0"]["bounding_stage"]
        if given is not None and given != mine:
            warnings.append(f"rank 0's bounding stage from the trace ({mine}) differs from the results' ({given})")
    return out


def _stage_lines(stages):
    if not stages:
        return []
    L = ["stages (ops whose kernels name them; busiest pipe's busy / (blocks x the rank's device span)):"]
    for rank, rep in stages.items():
        parts = ", ".join(f"{s['stage']} {s['span_us']:.1f}" for s in rep["stages"])
        L.append(f"  rank {rank}: {parts} us from first to last instruction (device span {rep['device_span_us']:.3f} us)")
        b = next((s for s in rep["stages"] if s["stage"] == rep["bounding_stage"]), None)
        if b is not None:
            L.append(f"    bounding stage: {b['stage']}: {b['busiest_pipe']} busy {b['busiest_pipe_pct']:.1f}% of the span "
                     f"on each of its {b['blocks']} blocks on average (the busiest stage)")
    return L


def check_busy(trace, busy, warnings):
    """Compare the trace's busy sums with otherData.busy_us. Keys may be a pipe (`CUBE`:
    summed over core types) or `<AIC|AIV> <PIPE>`. A trace limited to some ranks is compared on
    those ranks (all their events are kept); one limited to a time window is not compared."""
    ref = trace.meta.get("busy_us")
    out = {"present": ref is not None, "compared": 0, "mismatches": [], "tolerance_ns": BUSY_TOLERANCE_PS / 1000,
           "not_in_busy_us": []}
    if ref is None:
        return out
    if not isinstance(ref, dict):
        warnings.append("otherData.busy_us is not an object: busy totals not checked")
        return out
    filtered = trace.is_filtered
    if trace.window_ps() is not None:
        out["skipped"] = "the trace keeps only a time window: its events cannot add up to the view's totals"
        return out
    note = ""
    present = set(trace.ranks)
    for rkey, pipes in sorted(ref.items(), key=lambda kv: str(kv[0])):
        try:
            r = int(rkey)
        except (TypeError, ValueError):
            warnings.append(f"otherData.busy_us has a key {rkey!r} that is not a rank")
            continue
        if not isinstance(pipes, dict):
            warnings.append(f"otherData.busy_us[{rkey!r}] is not an object")
            continue
        if r not in present:
            if not filtered:
                warnings.append(f"otherData.busy_us has rank {r} but the trace has no events of it")
            continue
        seen = set()
        for pkey, val in sorted(pipes.items()):
            parts = str(pkey).split()
            if len(parts) == 1 and parts[0] in PIPES:
                got = sum(v for (rr, ct, p), v in busy.items() if rr == r and p == parts[0])
                seen.update((ct, parts[0]) for ct in CORE_TYPES)
            elif len(parts) == 2 and parts[0] in CORE_TYPES and parts[1] in PIPES:
                got = busy.get((r, parts[0], parts[1]), 0)
                seen.add((parts[0], parts[1]))
            else:
                warnings.append(f"otherData.busy_us[{rkey!r}] has an unknown pipe {pkey!r}")
                continue
            if not tt._is_number(val):
                warnings.append(f"otherData.busy_us[{rkey!r}][{pkey!r}] is not a number")
                continue
            want = tt.us_to_ps(val)
            out["compared"] += 1
            if abs(got - want) > BUSY_TOLERANCE_PS:
                out["mismatches"].append({"rank": r, "pipe": pkey, "trace_us": us(got), "busy_us": us(want),
                                          "diff_ns": (got - want) / 1000})
                warnings.append(f"rank {r} {pkey}: the trace's events add up to {us(got):.6f} us but otherData.busy_us "
                                f"says {us(want):.6f} us (differ by {abs(got - want) / 1000:.3f} ns){note}")
        for (rr, ct, p), v in sorted(busy.items()):
            if rr == r and v > 0 and (ct, p) not in seen:
                label = f"{ct} {p}"
                if label not in out["not_in_busy_us"]:
                    out["not_in_busy_us"].append(label)
    return out


# ---- pipe utilisation per kernel launch ---------------------------------------------------------

KERNEL_PIPES = {"AIC": ("CUBE", "MTE1", "MTE2", "FIXP"), "AIV": ("MTE2", "VECTOR", "MTE3")}
PIPE_KEYS = {"CUBE": "cube", "MTE1": "mte1", "MTE2": "mte2", "FIXP": "fixp", "VECTOR": "vector", "MTE3": "mte3"}
RATIO_TOLERANCE = 1e-9


def kernel_pipe_use(trace, warnings):
    """Per launch of the view and rank: kernel time, cores that ran it and per pipe busy / kernel
    time (mean, min, max over those cores), from the slices; compared with otherData.kernels'
    pipe_ratio for the rank it reports. None when the trace has no otherData.kernels."""
    entries = trace.meta.get("kernels")
    if not isinstance(entries, list):
        return None
    if trace.window_ps() is not None:
        return {"skipped": "the trace keeps only a time window: a launch's slices may be cut", "launches": []}
    present = set(trace.ranks)
    blocks = defaultdict(list)   # (rank, stream) -> [(ts, end, core_type, core)]
    busy_iv = defaultdict(list)  # (rank, stream, core_type, core, pipe) -> [(ts, dur)]
    for s in trace.slices:
        if s.track.kind == "blocks":
            blocks[(s.rank, s.stream)].append((s.ts, s.end, s.track.core_type, s.track.core))
        elif s.track.kind == "pipe" and s.track.pipe != "SCALAR":
            busy_iv[(s.rank, s.stream, s.track.core_type, s.track.core, s.track.pipe)].append((s.ts, s.dur))
    launches = []
    for e in entries:
        if not isinstance(e, dict) or e.get("view") != trace.view:
            continue
        stream = e.get("stream")
        for row in e.get("per_rank", []):
            r = row.get("rank")
            if r not in present or not tt._is_number(row.get("start_us")) or not tt._is_number(row.get("end_us")):
                continue
            a, b = tt.us_to_ps(row["start_us"]), tt.us_to_ps(row["end_us"])
            # The ratios' denominator is the task duration (the blocks' span with the task's own
            # overheads around it, docs/RESULTS.md), where the results give it.
            ta, tb = a, b
            if tt._is_number(row.get("task_start_us")) and tt._is_number(row.get("task_end_us")):
                ta, tb = tt.us_to_ps(row["task_start_us"]), tt.us_to_ps(row["task_end_us"])
            ran = sorted({(ct, core) for ts, end, ct, core in blocks.get((r, stream), []) if ts >= a and end <= b},
                         key=lambda k: (CORE_TYPES.index(k[0]), k[1]))
            ratios = {}
            for ct, pipes in KERNEL_PIPES.items():
                cores = [core for t, core in ran if t == ct]
                if not cores:
                    continue
                ratios[ct] = {}
                for pipe in pipes:
                    per_core = []
                    for core in cores:
                        busy = sum(d for ts, d in busy_iv.get((r, stream, ct, core, pipe), []) if a <= ts < b)
                        per_core.append(busy / (tb - ta) if tb > ta else 0.0)
                    ratios[ct][pipe] = {"mean": sum(per_core) / len(per_core), "min": min(per_core),
                                        "max": max(per_core)}
            launch = {"rank": r, "stream": stream, "kernel": row.get("kernel", e.get("kernel")),
                      "launch": e.get("launch"), "kernel_us": us(tb - ta),
                      "cores": {ct: sum(1 for t, _ in ran if t == ct) for ct in CORE_TYPES if any(t == ct for t, _ in ran)},
                      "pipe_ratio": ratios, "compared": False}
            if r == e.get("rank") and isinstance(e.get("pipe_ratio"), dict):
                launch["compared"] = True
                for ct, pipes in ratios.items():
                    ref = e["pipe_ratio"].get(ct.lower(), {})
                    for pipe, got in pipes.items():
                        want = ref.get(PIPE_KEYS[pipe], {})
                        for stat in ("mean", "min", "max"):
                            w = want.get(stat)
                            if tt._is_number(w) and abs(w - got[stat]) > RATIO_TOLERANCE:
                                warnings.append(f"rank {r} {launch['kernel']} {ct} {pipe} {stat}: the trace gives "
                                                f"{got[stat]:.9f}, the results' pipe_ratio {w:.9f}")
            launches.append(launch)
    return {"skipped": None, "launches": launches}


def _kernel_lines(ku, detail_rank=None):
    """Per launch (stream, kernel): its kernel time over the ranks, and the pipe ratios of the
    rank compared with the results (and `detail_rank`'s); every rank's with detail_rank None."""
    if ku is None:
        return ["pipe utilisation per kernel: otherData has no kernels (a trace of an older Tandem)"]
    if ku["skipped"]:
        return [f"pipe utilisation per kernel: not done ({ku['skipped']})"]
    lines = ["pipe utilisation per kernel launch (busy / kernel time on each core that ran it: mean [min, max]; "
             "SCALAR is not in the trace):"]
    groups = {}
    for k in ku["launches"]:
        groups.setdefault((k["launch"], k["stream"], k["kernel"]), []).append(k)
    for (_launch, stream, kernel), ks in groups.items():
        if len(ks) > 1:
            sp = _spread({k["rank"]: k["kernel_us"] for k in ks})
            lines.append(f"  {stream} {kernel} over {len(ks)} ranks: {_spread_text(sp, ' us', '{:.3f}')}")
        for k in ks:
            if detail_rank is not None and not k["compared"] and k["rank"] != detail_rank and len(ks) > 1:
                continue
            cores = ", ".join(f"{n} {ct}" for ct, n in k["cores"].items())
            lines.append(f"  rank {k['rank']} {k['stream']} {k['kernel']}: {k['kernel_us']:.3f} us on {cores or 'no'} "
                         "cores" + (" (matches the results' pipe_ratio)" if k["compared"] else ""))
            for ct, pipes in k["pipe_ratio"].items():
                cells = "  ".join(f"{p} {v['mean'] * 100:.1f}% [{v['min'] * 100:.1f}, {v['max'] * 100:.1f}]"
                                  for p, v in pipes.items())
                lines.append(f"    {ct}: {cells}")
    return lines


# ---- text output --------------------------------------------------------------------------------

def _busy_lines(rows, time_us, time_name, indent):
    lines = []
    width = max((len(r["label"]) for r in rows), default=8)
    for r in rows:
        what = f"{r['core_type']} cores" if r["core_type"] else "cores (AIC+AIV)"
        lines.append(f"{indent}{r['label']:<{width}}  busy {r['busy_us']:14.3f} us = {r['share_pct']:5.1f}% "
                     f"of {r['cores']} {what} x {time_us:.3f} us {time_name}")
    return lines


def _stream_lines(streams, indent):
    lines = []
    for stream, st in sorted(streams.items()):
        lines.append(f"{indent}{stream}: blocked {st['blocked_us']:.3f} us in {st['stalls']} TWAIT "
                     f"stall{'' if st['stalls'] == 1 else 's'} over {st['blocks']} blocks = {st['blocked_pct']:.1f}% of "
                     f"their {st['block_us']:.3f} us of block time ({st['blocked_idle_pct']:.1f}% with the core's other "
                     f"pipes idle); TTEST polls {st['ttest_us']:.3f} us ({st['ttests']}) = {st['ttest_pct']:.1f}%")
    return lines


def _block_line(b, with_rank):
    who = (f"rank {b['rank']} " if with_rank else "") + f"{b['stream']} block {b['block']}"
    lw = b["longest_wait"]
    longest = ""
    if lw:
        on = lw["signal"] or (f"address {lw['address']}" if lw.get("address") else "an unnamed signal")
        longest = f"; longest {lw['us']:.3f} us on {on} at {lw['start_us']:.3f} us"
    return (f"{who}: blocked {b['blocked_us']:.3f} us in {b['stalls']} stall{'' if b['stalls'] == 1 else 's'} = {b['blocked_pct_of_block']:.1f}% "
            f"of its {b['block_us']:.3f} us{longest}")


def _pipe_shares(b, pipes=("CUBE", "VECTOR", "MTE2", "MTE1", "MTE3", "FIXP")):
    shares = b.get("busy_pct_of_block") or {}
    return ", ".join(f"{p} {shares[p]:.1f}%" for p in pipes if p in shares)


def _end_lines(rep, indent):
    """Per stream: the spread of its blocks' ends and the blocks that end last."""
    by_key = {(b["stream"], b["block"]): b for b in rep["blocks"]}
    lines = []
    for stream, st in sorted(rep["streams"].items()):
        e = st.get("ends")
        if not e:
            continue
        last = []
        for blk in e["last_blocks"]:
            b = by_key[(stream, blk)]
            shares = _pipe_shares(b)
            last.append(f"block {blk} at {b['end_us']:.3f} ({b['core']}, from {b['start_us']:.3f}"
                        + (f"; {shares}" if shares else "") + ")")
        lines.append(f"{indent}{stream}: {st['blocks']} blocks end {e['first_us']:.3f} .. {e['last_us']:.3f} us "
                     f"(median {e['median_us']:.3f}); the last: " + ", ".join(last))
    return lines


def _all_block_lines(rep, indent):
    """Every block of every stream, by stream and end: --blocks."""
    lines = []
    for b in sorted(rep["blocks"], key=lambda b: (b["stream"], b["end_ps"] if b["end_ps"] is not None else -1,
                                                  b["block"])):
        if b["end_us"] is None:
            continue
        shares = _pipe_shares(b)
        lines.append(f"{indent}{b['stream']} block {b['block']} ({b['core']}): {b['start_us']:.3f} .. {b['end_us']:.3f} us, "
                     f"blocked {b['blocked_us']:.3f} us, TTEST {b['ttest_us']:.3f} us"
                     + (f"; busy {shares} of its {b['block_us']:.3f} us" if shares else ""))
    return lines


def _header_lines(a):
    m = a["meta"]
    ident = []
    if "ranks" in m:
        ident.append(f"{m['ranks']} ranks")
    if all(k in m for k in ("m", "k", "n")):
        ident.append(f"M={m['m']} K={m['k']} N={m['n']}")
    for k in ("soc", "comm_mode", "data_mode"):
        if k in m:
            ident.append(str(m[k]))
    if "profile_file" in m:
        ident.append(f"profile {m['profile_file']}")
    L = [f"Tandem trace report: {a['trace']}",
         f"  run: {', '.join(ident) or 'unknown'}; view {m.get('view')!r}, {a['filter_text']}",
         f"  view: {a['view_start_us']:.6f} .. {a['view_end_us']:.6f} us = {a['view_us']:.3f} us"]
    if a["window_us"]:
        w = a["window_us"]
        L.append(f"  window kept by the trace: {w[0]:.3f} .. {w[1]:.3f} us from the view start; busy and blocked "
                 "times are clipped to it")
    time_name = "window" if a["window_us"] else "view"
    L.append("  busy = sum of X durations on the pipe's tracks, summed over cores; "
             f"share = busy / (cores of that type x {time_name} time); cores counted from "
             + ("otherData" if a["core_counts_from"] == "otherData" else "the cores that have tracks"))
    return L


def _busy_and_wait_lines(head, rep, a, wait_title, with_rank):
    """A rank's or the whole trace's first lines: busy per pipe, TWAIT per stream, the top blocks."""
    time_name = "window" if a["window_us"] else "view"
    L = [head, "  busy per pipe:"]
    L.extend(_busy_lines(rep["busy"], a["share_time_us"], time_name, "    "))
    L.append(f"  {wait_title}:")
    L.extend(_stream_lines(rep["streams"], "    ") or ["    (no blocks)"])
    if rep["top_blocks"]:
        L.append(f"  top {len(rep['top_blocks'])} blocks by blocked time:")
        L.extend("    " + _block_line(b, with_rank) for b in rep["top_blocks"])
    return L


def _rank_lines(rep, a, all_blocks, why):
    time_name = "window" if a["window_us"] else "view"
    L = _busy_and_wait_lines(f"rank {rep['rank']}{why}", rep, a, "blocked in TWAIT (stalled waits, per stream)", False)
    ends = _end_lines(rep, "    ")
    if ends:
        L.append("  when blocks end (us from the view start; busy shares of the block's own time):")
        L.extend(ends)
    if all_blocks:
        L.append("  every block, by stream and end:")
        L.extend(_all_block_lines(rep, "    "))
    L.append(f"  critical path: {rep['critical_path']['sentence']}")
    for ct, o in (rep.get("oversubscribed") or {}).items():
        L.append(f"  note: up to {o['peak_blocks']} {ct} blocks ran at once on the chip's {o['cores']} {ct} cores "
                 f"({o['over_us']:.3f} us over, from {o['from_us']:.3f} us; streams {', '.join(o['streams'])}). The "
                 "simulator gives each stream cores of its own (docs/API.md, \"Known limits\"); a chip would make "
                 "the later blocks wait for free cores, so these kernels overlap more here than they could there")
    mem = rep.get("memory")
    if mem:
        L.append(f"  chip memory (every stream and the peers' stores into it): L2 {mem['L2']['gib']:.3f} GiB, mean "
                 f"{mem['L2']['mean_gib_s']:.1f} GiB/s over the {time_name}, busiest 500 ns "
                 f"{mem['L2']['peak_gib_s']:.1f} GiB/s; HBM {mem['HBM']['gib']:.3f} GiB, mean "
                 f"{mem['HBM']['mean_gib_s']:.1f} GiB/s, busiest {mem['HBM']['peak_gib_s']:.1f} GiB/s")
    return L


def _overall_lines(a):
    o = a["overall"]
    L = _busy_and_wait_lines(f"overall ({o['ranks']} ranks in the trace)", o, a, "blocked in TWAIT", True)
    if o["critical_path"]:
        L.append(f"  critical path (the rank that waited most): {o['critical_path']}")
    return L


def _overlap_lines(res):
    if res is None:
        return ["overlap: overlap efficiency and exposed communication need --results RESULTS.json "
                "(the trace holds only the pipelined view)"]
    L = [f"overlap (from {res['results_file']}, docs/RESULTS.md formulas):"]
    if res.get("comm_kind") == "none":
        L.append("  the op has no communication (comm_kind none): its views are the kernel alone, nothing overlaps")
    ro = res["results_overlap_eff_pct"]
    L.append(f"  overlap efficiency {res['overlap_eff_pct']:.1f}% = (({res['seq_comm_us']:.3f} + "
             f"{res['seq_compute_us']:.3f}) - {res['pipelined_us']:.3f}) / min({res['seq_comm_us']:.3f}, "
             f"{res['seq_compute_us']:.3f}) x 100, floored at 0"
             + (f" (results JSON: {ro:.1f}%)" if tt._is_number(ro) else ""))
    rx = res["results_exposed_comm_us"]
    L.append(f"  exposed communication {res['exposed_comm_us']:.3f} us = pipelined {res['pipelined_us']:.3f} - "
             f"compute-only {res['compute_only_us']:.3f} us"
             + (f" (results JSON: {rx:.3f} us)" if tt._is_number(rx) else ""))
    L.append(f"  pipelined {res['pipelined_us']:.3f} us (results) vs the trace's view {res['view_us']:.3f} us")
    if res.get("results_compute_twait_stall_us") is not None:
        n = res["trace_compute_stalls"]
        diff = res["trace_compute_stall_us"] - res["results_compute_twait_stall_us"]
        per = f", {diff / n * 1000:.1f} ns per stall" if n else ""
        L.append(f"  compute TWAIT stalls: {res['trace_compute_stall_us']:.3f} us in the trace's {n} stall slices "
                 f"(whole TWAIT slices, final poll included) vs the results' compute_twait_stall_us "
                 f"{res['results_compute_twait_stall_us']:.3f} us (the simulator's count, issue to release): "
                 f"{diff:+.3f} us{per}")
    return L


def _busy_check_lines(bc):
    if not bc["present"]:
        L = ["busy check: otherData.busy_us absent, not checked"]
    elif bc.get("skipped"):
        L = [f"busy check: not done ({bc['skipped']})"]
    elif bc["mismatches"]:
        L = [f"busy check: {len(bc['mismatches'])} of {bc['compared']} busy totals differ from otherData.busy_us "
             f"by more than 1 ns (see warnings)"]
    else:
        L = [f"busy check: all {bc['compared']} busy totals match otherData.busy_us within 1 ns"]
    if bc.get("not_in_busy_us"):
        L.append(f"  not compared (no entry in otherData.busy_us, which never has SCALAR): {', '.join(bc['not_in_busy_us'])}")
    return L


def format_text(a, all_blocks=False, per_rank=False):
    """The report: the run, the figures across ranks with the ranks that stand out, one rank in
    detail (the one that waited most; every rank with per_rank), the overall sums, the kernels,
    the stages, the overlap and the busy check."""
    L = _header_lines(a)
    L.append("")
    L.extend(_across_lines(a))
    critical = a["overall"]["critical_rank"]
    if critical is None and a["ranks"]:
        critical = a["ranks"][0]["rank"]
    for rep in a["ranks"]:
        if per_rank or rep["rank"] == critical:
            why = "" if per_rank else (" (in detail: the rank that waited most" + (
                "; --per-rank: every rank)" if len(a["ranks"]) > 1 else ")"))
            L.append("")
            L.extend(_rank_lines(rep, a, all_blocks, why))
    L.append("")
    L.extend(_overall_lines(a))
    L.append("")
    L.extend(_kernel_lines(a["kernels"], critical if not per_rank else None))
    if a.get("stages"):
        L.append("")
        L.extend(_stage_lines(a["stages"]))
    L.append("")
    L.extend(_overlap_lines(a["results"]))
    L.extend(_busy_check_lines(a["busy_check"]))
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(
        prog="report.py",
        description="Report busy time per pipe, time blocked in TWAIT per block, the critical path and (with "
                    "--results) overlap efficiency and exposed communication for a Tandem trace.",
        epilog="Example: report.py /tmp/x/trace.json --results /tmp/x/results.json --json /tmp/x/report.json")
    ap.add_argument("trace", metavar="TRACE", help="trace JSON written by allgather_gemm --trace")
    ap.add_argument("--results", metavar="RESULTS.json",
                    help="results JSON of the same run (--json), an object or a sweep's array")
    ap.add_argument("--json", metavar="OUT", help="also write the numbers as JSON to OUT")
    ap.add_argument("--top", type=int, default=5, metavar="N", help="blocks to list by blocked time (default 5)")
    ap.add_argument("--blocks", action="store_true",
                    help="also list every block: its core, start and end, blocked and TTEST time, busy share per pipe")
    ap.add_argument("--per-rank", action="store_true",
                    help="every rank in detail (default: the figures across ranks, and the rank that waited most)")
    ap.add_argument("--strict", action="store_true",
                    help="exit with status 3 when a check fails (busy totals vs otherData.busy_us, results formulas)")
    a = ap.parse_args()
    if a.top < 0:
        ap.error("--top must be >= 0")
    trace = tt.load_trace(a.trace)
    pre = []
    results = load_results(a.results, trace, pre) if a.results else None
    analysis = analyze(trace, results, a.results, a.top)
    analysis["warnings"] = pre + analysis["warnings"]
    sys.stdout.write(format_text(analysis, all_blocks=a.blocks, per_rank=a.per_rank))
    for w in analysis["warnings"]:
        print(f"report.py: warning: {w}", file=sys.stderr)
    if a.json:
        text = json.dumps(analysis, indent=2, sort_keys=False) + "\n"
        tt.write_atomic(a.json, lambda f: f.write(text))
    if a.strict and analysis["warnings"]:
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(tt.run_main("report.py", main))
