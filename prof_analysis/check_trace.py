#!/usr/bin/python3
"""Check a Tandem trace against TRACE_FORMAT.md and the rules Perfetto / chrome://tracing need.

    check_trace.py TRACE [--max-problems N] [--json OUT]

Failures (exit status 3):
  * the file is not JSON or not a Tandem trace (exit status 1);
  * an X event misses one of name, cat, ph, ts, dur, pid, tid, args, or has a bad type or a
    negative dur; a process without process_name; an X event on a thread without thread_name;
  * two X events on one track overlap (Perfetto requires nesting; Tandem's never overlap);
  * an X event outside [view_start_us, view_end_us];
  * otherData misses a key the format lists (soc, ranks, m, k, n, base_m, base_n,
    compute_blocks, comm_blocks, comm_mode, data_mode, profile_file, view, view_start_us,
    view_end_us, filter, busy_us);
  * the busy sums of the pipe tracks differ from otherData.busy_us by more than 1 ns (a trace
    limited to some ranks is compared on those ranks; one limited to a time window is not);
  * a flow id without exactly one "s" and one "f"; an "s" not inside a TNOTIFY on its track;
    an "f" without bp "e" or not inside a TWAIT on its track (Perfetto binds both to the
    enclosing slice); an "f" before its "s"; a flow whose TNOTIFY writes another address or
    rank than its TWAIT waits on; a TWAIT that stalled without exactly one incoming flow;
  * a link counter sample without a numeric, non-negative "GB/s"; a "memory GiB/s" sample without
    numeric, non-negative "L2" and "HBM".
Warnings (printed, exit status 0): names not in the format's lists, an empty cat (it names the
stream), dangling flows in a filtered trace, and similar.
"""
import argparse
import bisect
import json
import re
import sys
from collections import defaultdict

import report
import tandem_trace as tt
from tandem_trace import us

X_FIELDS = ("name", "cat", "ph", "ts", "dur", "pid", "tid", "args")
META_KEYS = ("soc", "ranks", "m", "k", "n", "base_m", "base_n", "compute_blocks", "comm_blocks", "comm_mode",
             "data_mode", "profile_file", "view", "view_start_us", "view_end_us", "filter", "busy_us")
DATA_NAMES = {"TLOAD", "TEXTRACT", "TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS", "TSTORE", "TSTORE_ATOMIC_ADD",
              "TSTORE_FP", "TADD", "TADDS", "TMULS", "TCVT", "TMOV", "TADD_ROWVEC", "TADD_COLVEC", "TMUL", "TDIV",
              "TEXP", "TABS", "TROWMAX", "TROWEXPANDMUL", "TSORT", "TMRGSORT"}
SCALAR_NAMES = {"TNOTIFY", "TWAIT", "TTEST", "PIPE_BARRIER", "DSB", "CROSS_CORE_WAIT_FLAG", "SCALAR", "TGET_ASYNC", "WAIT_ASYNC"}
COUNTER_RE = re.compile(r"^link (\d+)->(\d+)(?: \(ring \d+\))? GB/s$")
MEMORY_COUNTER = "memory GiB/s"  # a chip's L2 and HBM throughput, on its rank's pid


class Findings:
    def __init__(self):
        self.failures = defaultdict(list)   # rule -> [message]
        self.warnings = defaultdict(list)

    def fail(self, rule, msg):
        self.failures[rule].append(msg)

    def warn(self, rule, msg):
        self.warnings[rule].append(msg)


def where(s):
    return f"rank {s.rank} {s.track.name!r} {s.name} at {us(s.ts):.6f} us (event #{s.index})"


def check_fields(f, doc, trace):
    """Raw fields (Perfetto needs these; the loader fills defaults for cat/args), otherData's
    keys, process and thread names."""
    for p in trace.problems:
        f.fail("malformed event", p)
    pids_with_events = set()
    for i, e in enumerate(doc["traceEvents"]):
        if isinstance(e, dict) and e.get("ph") == "X":
            missing = [k for k in X_FIELDS if k not in e]
            if missing:
                f.fail("X event fields", f"event #{i} ({e.get('name')!r}) misses {', '.join(missing)}")
            if "pid" in e:
                pids_with_events.add(e["pid"])
    if "displayTimeUnit" not in doc:
        f.warn("top level", "no displayTimeUnit")
    missing_meta = [k for k in META_KEYS if k not in trace.meta]
    if missing_meta:
        f.fail("otherData", f"otherData misses {', '.join(missing_meta)}")
    if trace.meta.get("view") != "pipelined":
        f.warn("otherData", f"otherData.view is {trace.meta.get('view')!r}, not 'pipelined'")
    for pid in sorted(p for p in pids_with_events if isinstance(p, int)):
        if pid not in trace.process_names:
            f.fail("metadata", f"pid {pid} has X events but no process_name")
        elif trace.process_names[pid] != f"rank {pid}":
            f.warn("metadata", f"pid {pid} is named {trace.process_names[pid]!r}, not 'rank {pid}'")
        if pid not in trace.process_sort:
            f.warn("metadata", f"pid {pid} has no process_sort_index")
    tracks_seen = set()
    for s in trace.slices:
        key = (s.rank, s.tid)
        if key in tracks_seen:
            continue
        tracks_seen.add(key)
        if s.track.name == f"tid {s.tid}" and s.track.kind == "other":
            f.fail("metadata", f"rank {s.rank} tid {s.tid} has X events but no thread_name")
        elif s.track.kind == "other":
            f.warn("track names", f"rank {s.rank} track {s.track.name!r} is not a core/pipe, BLOCKS, link or stage name")


def check_slices(f, trace):
    """Names, cats and args of the X events, the view's bounds, no overlap on a track; returns
    the slices by track."""
    vs, ve = trace.view_start_ps, trace.view_end_ps
    for s in trace.slices:
        tr = s.track
        if tr.kind == "pipe":
            allowed = SCALAR_NAMES if tr.pipe == "SCALAR" else DATA_NAMES
            if s.name not in allowed:
                f.warn("event names", f"{where(s)}: {s.name!r} is not one of {sorted(allowed)}")
            if "polls" in s.args and (s.name != "TTEST" or not tt._is_int(s.args["polls"]) or s.args["polls"] < 2):
                f.fail("args", f"{where(s)}: 'polls' {s.args['polls']!r} belongs to a TTEST slice of 2 polls or more")
        elif tr.kind == "blocks" and s.block is None:
            f.warn("event names", f"{where(s)}: BLOCKS slice not named 'block <b>'")
        cats = s.cats
        if tr.kind in ("pipe", "blocks"):
            if not cats or not cats[0]:
                f.warn("cat", f"{where(s)}: cat {s.cat!r} does not start with its stream's name")
            if s.stalled and s.name != "TWAIT":
                f.warn("cat", f"{where(s)}: cat has 'stall' but the event is not a TWAIT")
            if "block" not in s.args and tr.kind == "pipe":
                f.warn("args", f"{where(s)}: args has no block")
        if not trace.view_from_events and (s.ts < vs or s.end > ve):
            f.fail("view bounds", f"{where(s)}: [{us(s.ts):.6f}, {us(s.end):.6f}] us is outside the view "
                                  f"[{us(vs):.6f}, {us(ve):.6f}] us")
    by_track = trace.slices_by_track()
    for (pid, tid), lst in by_track.items():
        prev = None
        for s in lst:
            if prev is not None and s.ts < prev.end:
                f.fail("overlap", f"{where(s)} starts before {prev.name} (event #{prev.index}) ends at "
                                  f"{us(prev.end):.6f} us")
            if prev is None or s.end > prev.end:
                prev = s
    return by_track


def check_busy_sums(f, trace):
    """The busy sums of the pipe tracks against otherData.busy_us: the comparison the report prints."""
    warn_list = []
    busy = defaultdict(int)
    for s in trace.pipe_slices():
        busy[(s.rank, s.track.core_type, s.track.pipe)] += s.dur
    bc = report.check_busy(trace, busy, warn_list)
    for label in bc["not_in_busy_us"]:
        if not label.endswith(" SCALAR"):  # SCALAR is not part of busy_us (TRACE_FORMAT.md)
            f.warn("busy_us", f"{label} has busy time in the trace but no entry in otherData.busy_us (not compared)")
    if bc.get("skipped"):
        f.warn("busy_us", f"busy totals not compared: {bc['skipped']}")
    for w in warn_list:
        f.fail("busy_us", w)
    return bc


class _Enclosing:
    """The TNOTIFY or TWAIT slice enclosing a time on a track (slices on one track do not overlap)."""

    def __init__(self, trace, name):
        self.by_track = defaultdict(list)
        for s in trace.slices:
            if s.name == name:
                self.by_track[(s.rank, s.tid)].append(s)
        self.starts = {}
        for key, lst in self.by_track.items():
            lst.sort(key=lambda s: s.ts)
            self.starts[key] = [s.ts for s in lst]

    def at(self, pid, tid, ts):
        lst = self.by_track.get((pid, tid))
        if not lst:
            return None
        i = bisect.bisect_right(self.starts[(pid, tid)], ts) - 1  # the last slice starting at or before ts
        return lst[i] if i >= 0 and ts <= lst[i].end else None


def check_flows(f, trace):
    """Perfetto binds an "s" to the slice enclosing its ts and an "f" with bp "e" to the slice
    enclosing its ts; TRACE_FORMAT.md puts the "s" at a TNOTIFY's start and the "f" at its TWAIT's
    end (the writer uses end - 1 ps, strictly inside). Both must be enclosed, and every stalled
    TWAIT must have one incoming flow (in a filtered trace, its TNOTIFY may have been left out).
    Returns the number of stalled TWAITs."""
    notifies, waits = _Enclosing(trace, "TNOTIFY"), _Enclosing(trace, "TWAIT")
    incoming = defaultdict(int)     # TWAIT event index -> flows
    dangling = f.warn if trace.is_filtered else f.fail
    for fid, ends in trace.flows.items():
        if len(ends.starts) != 1 or len(ends.finishes) != 1:
            if len(ends.starts) > 1 or len(ends.finishes) > 1:
                f.fail("flows", f"flow id {fid!r} has {len(ends.starts)} 's' and {len(ends.finishes)} 'f' events")
            else:
                dangling("flows", f"flow id {fid!r} has {len(ends.starts)} 's' and {len(ends.finishes)} 'f' events")
            continue
        s0, f0 = ends.starts[0], ends.finishes[0]
        notify = notifies.at(s0.pid, s0.tid, s0.ts)
        if notify is None:
            f.fail("flows", f"flow {fid!r}: its 's' (event #{s0.index}) is not inside a TNOTIFY on rank {s0.pid} "
                            f"tid {s0.tid} at {us(s0.ts):.6f} us")
        if f0.bp != "e":
            f.fail("flows", f"flow {fid!r}: its 'f' (event #{f0.index}) has bp {f0.bp!r}, not 'e'")
        wait = waits.at(f0.pid, f0.tid, f0.ts)
        if wait is None:
            f.fail("flows", f"flow {fid!r}: its 'f' (event #{f0.index}) is not inside a TWAIT on rank {f0.pid} "
                            f"tid {f0.tid} at {us(f0.ts):.6f} us")
        else:
            incoming[wait.index] += 1
            if wait.end - f0.ts > 1:
                f.warn("flows", f"flow {fid!r}: its 'f' is {us(wait.end - f0.ts) * 1e6:.0f} ps before the end of "
                                f"{where(wait)} (the format puts it at the end)")
        if f0.ts < s0.ts:
            f.fail("flows", f"flow {fid!r}: ends at {us(f0.ts):.6f} us, before it starts at {us(s0.ts):.6f} us")
        if notify is not None and wait is not None:
            check_flow_ends(f, fid, notify, wait)
    stalls = 0
    unreleased = 0
    for s in trace.stalls():
        stalls += 1
        n = incoming.get(s.index, 0)
        if n == 0 and trace.is_filtered:
            unreleased += 1  # its TNOTIFY may be on a rank or outside the window left out
        elif n != 1:
            f.fail("stall flows", f"{where(s)} stalled {us(s.dur):.3f} us and has {n} incoming flows (want 1)")
    if unreleased:
        f.warn("stall flows", f"{unreleased} stalled TWAITs have no incoming flow (expected in a filtered trace when "
                              "the TNOTIFY that released them is on a rank or outside the window left out)")
    return stalls


def check_flow_ends(f, fid, notify, wait):
    """The TNOTIFY must write the address and rank the TWAIT waits on."""
    na, wa = notify.args.get("address"), wait.args.get("address")
    if na is not None and wa is not None and na != wa:
        f.fail("flows", f"flow {fid!r}: {where(notify)} writes {na} but {where(wait)} waits on {wa}")
    peer = notify.args.get("peer")
    if isinstance(peer, int) and peer != wait.rank:
        f.fail("flows", f"flow {fid!r}: {where(notify)} notifies rank {peer} but the TWAIT is on rank {wait.rank}")


def check_counters(f, trace):
    """Link counters: a non-negative GB/s on the source rank's pid; memory counters: L2 and HBM."""
    for c in trace.counters:
        if c.name == MEMORY_COUNTER:
            for key in ("L2", "HBM"):
                v = c.values.get(key)
                if not tt._is_number(v) or v < 0:
                    f.fail("counters", f"counter {c.name!r} (event #{c.index}) has no non-negative numeric {key!r}")
            continue
        v = c.values.get("GB/s")
        if not tt._is_number(v) or v < 0:
            f.fail("counters", f"counter {c.name!r} (event #{c.index}) has no non-negative numeric 'GB/s'")
        m = COUNTER_RE.match(c.name)
        if not m:
            f.warn("counters", f"counter {c.name!r} (event #{c.index}) is not named 'link <src>-><dst> GB/s'")
        elif int(m.group(1)) != c.pid:
            f.warn("counters", f"counter {c.name!r} (event #{c.index}) is on pid {c.pid}, not its source rank")


def check(doc, path):
    f = Findings()
    trace = tt.trace_from_json(doc, path, strict=False)
    check_fields(f, doc, trace)
    by_track = check_slices(f, trace)
    bc = check_busy_sums(f, trace)
    stalls = check_flows(f, trace)
    check_counters(f, trace)
    summary = {"x_events": len(trace.slices), "tracks": len(by_track), "flows": len(trace.flows),
               "stalled_twaits": stalls, "counter_samples": len(trace.counters), "ranks": trace.ranks,
               "busy_compared": bc["compared"], "filtered": trace.is_filtered}
    return f, summary


def main():
    ap = argparse.ArgumentParser(
        prog="check_trace.py",
        description="Check a Tandem trace against TRACE_FORMAT.md and Perfetto's rules (fields, no overlap on a "
                    "track, busy sums vs otherData.busy_us, one incoming flow per stalled TWAIT, counters). "
                    "Exit status: 0 ok, 1 unreadable / not a Tandem trace, 3 checks failed.",
        epilog="Example: check_trace.py /tmp/x/trace.json")
    ap.add_argument("trace", metavar="TRACE", help="trace JSON written by allgather_gemm --trace")
    ap.add_argument("--max-problems", type=int, default=10, metavar="N",
                    help="print at most N messages per rule (default 10)")
    ap.add_argument("--json", metavar="OUT", help="also write the findings as JSON")
    ap.add_argument("-q", "--quiet", action="store_true", help="do not print warnings")
    a = ap.parse_args()
    doc = tt.load_json_file(a.trace, "Tandem trace")
    tt.trace_from_json(doc, a.trace, strict=False)  # not a Tandem trace -> TraceError, exit 1
    findings, summary = check(doc, a.trace)

    def dump(kind, groups):
        for rule, msgs in sorted(groups.items()):
            for m in msgs[:a.max_problems]:
                print(f"check_trace.py: {kind}: [{rule}] {m}", file=sys.stderr)
            if len(msgs) > a.max_problems:
                print(f"check_trace.py: {kind}: [{rule}] ... and {len(msgs) - a.max_problems} more",
                      file=sys.stderr)

    dump("FAIL", findings.failures)
    if not a.quiet:
        dump("warning", findings.warnings)
    nfail = sum(len(v) for v in findings.failures.values())
    nwarn = sum(len(v) for v in findings.warnings.values())
    if a.json:
        out = {"trace": a.trace, "ok": nfail == 0, "summary": summary,
               "failures": {k: v for k, v in findings.failures.items()},
               "warnings": {k: v for k, v in findings.warnings.items()}}
        text = json.dumps(out, indent=2) + "\n"
        tt.write_atomic(a.json, lambda fh: fh.write(text))
    status = "OK" if nfail == 0 else f"FAILED ({nfail} problems)"
    print(f"check_trace.py: {a.trace}: {status}: {summary['x_events']} X events on {summary['tracks']} tracks, "
          f"ranks {','.join(map(str, summary['ranks']))}, {summary['flows']} flows, {summary['stalled_twaits']} "
          f"stalled TWAITs, {summary['counter_samples']} counter samples, {summary['busy_compared']} busy totals "
          f"compared, {nwarn} warnings" + (" (filtered trace)" if summary["filtered"] else ""))
    return 0 if nfail == 0 else 3


if __name__ == "__main__":
    sys.exit(tt.run_main("check_trace.py", main))
