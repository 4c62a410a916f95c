#!/usr/bin/python3
"""Reader for Tandem traces (`--trace FILE`, see TRACE_FORMAT.md in this directory).

A Tandem trace is a Chrome Trace Event JSON object with `traceEvents` and an `otherData`
object that has a `view` key. This module loads one, checks that it is a Tandem trace, and
gives the analysis tools a typed view of it:

    trace = load_trace("trace.json")
    for s in trace.slices:                 # every "X" event, times in integer picoseconds
        if s.track.kind == "pipe": ...     # s.track.core_type ("AIC"/"AIV"), .core, .pipe
    trace.flows                            # id -> FlowEnds(starts=[...], finishes=[...])
    trace.counters                         # "C" events (link bandwidth in use)
    trace.meta                             # otherData (shape, ranks, profile, busy_us, ...)

Times are kept as integer picoseconds (`ts`, `dur`, `end`): the simulator counts integer
picoseconds and writes microseconds with 6 decimals, so converting back is exact and sums of
durations carry no floating-point residue. `us(ps)` turns them back into microseconds.

Run it as a script to print a short inventory of a trace:
    /usr/bin/python3 prof_analysis/tandem_trace.py TRACE
"""
import argparse
import bisect
import json
import os
import re
import sys
import tempfile
from collections import defaultdict, namedtuple

PIPES = ("CUBE", "MTE1", "MTE2", "MTE3", "FIXP", "VECTOR", "SCALAR")
CORE_TYPES = ("AIC", "AIV")
PS_PER_US = 1_000_000
STALL_CAT = "stall"

# A core's track; " (lane N)": the same core's track for lane N of a trace of several API calls.
_CORE_TRACK_RE = re.compile(r"^(AIC|AIV)(\d+) (CUBE|MTE1|MTE2|MTE3|FIXP|VECTOR|SCALAR|BLOCKS)(?: \(lane (\d+)\))?$")
_LINK_TRACK_RE = re.compile(r"^link (\d+)->(\d+)(?: \(ring (\d+)\))?$")
_STAGE_TRACK_RE = re.compile(r"^stage (\S+)$")
_SRC_RE = re.compile(r"\[src=(\d+)\]")
_CHUNK_RE = re.compile(r"\[chunk=(\d+)\]")
_BLOCK_NAME_RE = re.compile(r"^block (\d+)$")


class TraceError(Exception):
    """The file is missing, is not JSON, or is not a Tandem trace. The message is one line."""


def us_to_ps(value):
    """Microseconds (as written in the trace, 6 decimals) to integer picoseconds."""
    return int(round(float(value) * PS_PER_US))


def us(ps):
    """Integer picoseconds to microseconds (float)."""
    return ps / PS_PER_US


Track = namedtuple("Track", "pid tid name kind core_type core pipe link_src link_dst lane")
Track.__doc__ = """One thread of a rank's process.

kind: "pipe" (<AIC|AIV><core> <PIPE>[ (lane <n>)]), "blocks" (<AIC|AIV><core> BLOCKS[ (lane <n>)]), "link"
(link <src>-><dst>[ (ring <lane>)]), "stage" (stage <name>: one slice over a stage's extent on
the rank, for ops whose kernels name stages) or "other" (a name this module does not know, or no
thread_name metadata at all). core_type/core/pipe are None unless kind is pipe or blocks;
link_src/link_dst are None unless kind is link. lane: for a link, its ring (None for a single
ring/mesh); for a pipe or blocks track, the lane of a trace of several API calls (1 when the name
has no suffix: every single-call trace); None for the other kinds."""


def parse_track_name(name, pid=None, tid=None):
    """`AIC3 CUBE` -> Track(kind="pipe", core_type="AIC", core=3, pipe="CUBE"), etc."""
    m = _CORE_TRACK_RE.match(name or "")
    if m:
        kind = "blocks" if m.group(3) == "BLOCKS" else "pipe"
        pipe = None if kind == "blocks" else m.group(3)
        lane = int(m.group(4)) if m.group(4) is not None else 1
        return Track(pid, tid, name, kind, m.group(1), int(m.group(2)), pipe, None, None, lane)
    m = _LINK_TRACK_RE.match(name or "")
    if m:
        lane = int(m.group(3)) if m.group(3) is not None else None
        return Track(pid, tid, name, "link", None, None, None, int(m.group(1)), int(m.group(2)), lane)
    if _STAGE_TRACK_RE.match(name or ""):
        return Track(pid, tid, name, "stage", None, None, None, None, None, None)
    return Track(pid, tid, name, "other", None, None, None, None, None, None)


def signal_source(signal):
    """`summary[src=3]` or `flag[src=3][chunk=7]` -> 3; None when the name has no source."""
    if not isinstance(signal, str):
        return None
    m = _SRC_RE.search(signal)
    return int(m.group(1)) if m else None


def signal_chunk(signal):
    """`flag[src=3][chunk=7]` -> 7; None otherwise."""
    if not isinstance(signal, str):
        return None
    m = _CHUNK_RE.search(signal)
    return int(m.group(1)) if m else None


class Slice:
    """One "X" event. ts/dur/end are integer picoseconds; rank is the event's pid."""

    __slots__ = ("name", "cat", "rank", "tid", "ts", "dur", "args", "track", "index")

    def __init__(self, name, cat, rank, tid, ts, dur, args, track, index):
        self.name = name
        self.cat = cat
        self.rank = rank
        self.tid = tid
        self.ts = ts
        self.dur = dur
        self.args = args
        self.track = track
        self.index = index  # position in traceEvents, for messages

    @property
    def end(self):
        return self.ts + self.dur

    @property
    def cats(self):
        return [c.strip() for c in self.cat.split(",")] if self.cat else []

    @property
    def stream(self):
        """args.stream, else the first part of cat (`comm`, `compute`)."""
        s = self.args.get("stream")
        if isinstance(s, str) and s:
            return s
        cats = self.cats
        return cats[0] if cats else ""

    @property
    def stalled(self):
        return STALL_CAT in self.cats

    @property
    def block(self):
        """args.block, else the number in a BLOCKS slice named `block <b>`; None if neither."""
        b = self.args.get("block")
        if isinstance(b, int) and not isinstance(b, bool):
            return b
        m = _BLOCK_NAME_RE.match(self.name)
        return int(m.group(1)) if m else None

    @property
    def signal(self):
        s = self.args.get("signal")
        return s if isinstance(s, str) else None

    def __repr__(self):
        return (f"Slice({self.name!r}, cat={self.cat!r}, rank={self.rank}, track={self.track.name!r}, "
                f"ts={us(self.ts):.6f}us, dur={us(self.dur):.6f}us)")


FlowPoint = namedtuple("FlowPoint", "ph pid tid ts bp index")
FlowEnds = namedtuple("FlowEnds", "starts finishes")
Counter = namedtuple("Counter", "pid name ts values index")


class Trace:
    """A loaded Tandem trace. See the module docstring."""

    def __init__(self, path):
        self.path = path
        self.meta = {}
        self.process_names = {}         # pid -> name
        self.process_sort = {}          # pid -> sort index
        self.tracks = {}                # (pid, tid) -> Track
        self.slices = []                # [Slice] in file order
        self.flows = {}                 # id -> FlowEnds
        self.counters = []              # [Counter]
        self.problems = []              # malformed events skipped (strict=False)
        self.view_start_ps = 0
        self.view_end_ps = 0
        self.view_from_events = False   # True when otherData had no view_start_us/view_end_us

    # ---- metadata -------------------------------------------------------------------------
    @property
    def view_ps(self):
        return self.view_end_ps - self.view_start_ps

    @property
    def view(self):
        return self.meta.get("view")

    @property
    def filter(self):
        return self.meta.get("filter")

    @property
    def is_filtered(self):
        """True when otherData.filter says that ranks or a time window were left out."""
        return filter_is_active(self.meta.get("filter"), self.meta.get("ranks"))

    def window_ps(self):
        """(start, end) absolute ps of the time window a limited trace kept (otherData.filter
        window_us = [A, B] us from the view start), clipped to the view; None if no window."""
        f = self.meta.get("filter")
        w = f.get("window_us") if isinstance(f, dict) else None
        if not (isinstance(w, (list, tuple)) and len(w) == 2 and all(_is_number(v) for v in w)):
            return None
        a = max(self.view_start_ps, self.view_start_ps + us_to_ps(w[0]))
        b = min(self.view_end_ps, self.view_start_ps + us_to_ps(w[1]))
        return (a, max(a, b))

    def core_counts(self):
        """{"AIC": n, "AIV": n} when otherData gives the chip's core counts (`aic_cores` /
        `aiv_cores`, or `cores: {"AIC": n, "AIV": n}`); {} otherwise (the tools then count the
        cores that have a track)."""
        out = {}
        c = self.meta.get("cores")
        if isinstance(c, dict):
            for ct in CORE_TYPES:
                if _is_int(c.get(ct)) and c[ct] > 0:
                    out[ct] = c[ct]
        for ct in CORE_TYPES:
            v = self.meta.get(f"{ct.lower()}_cores")
            if _is_int(v) and v > 0:
                out[ct] = v
        return out

    def describe_filter(self):
        f = self.meta.get("filter")
        if not self.is_filtered:
            return "unfiltered"
        if isinstance(f, dict):
            parts = [f"{k}={json.dumps(v)}" for k, v in f.items() if v not in (None, "", [], {}, False)]
            return "filtered: " + ", ".join(parts)
        return f"filtered: {json.dumps(f)}"

    def shape_parts(self):
        """The run's size as the trace's metadata gives it: `["2 ranks", "M=2048 K=2048 N=1024"]`."""
        m = self.meta
        parts = []
        if "ranks" in m:
            parts.append(f"{m['ranks']} ranks")
        if all(k in m for k in ("m", "k", "n")):
            parts.append(f"M={m['m']} K={m['k']} N={m['n']}")
        return parts

    def shape_text(self):
        """e.g. `2 ranks, M=2048 K=2048 N=1024, Ascend910B1`."""
        parts = self.shape_parts()
        if "soc" in self.meta:
            parts.append(str(self.meta["soc"]))
        return ", ".join(parts) if parts else "unknown shape"

    # ---- events ---------------------------------------------------------------------------
    @property
    def ranks(self):
        """Ranks present in the trace (processes named `rank <r>` or with events), sorted."""
        pids = set(self.process_names)
        pids.update(s.rank for s in self.slices)
        return sorted(pids)

    def track(self, pid, tid):
        t = self.tracks.get((pid, tid))
        if t is None:
            t = Track(pid, tid, f"tid {tid}", "other", None, None, None, None, None, None)
            self.tracks[(pid, tid)] = t
        return t

    def slices_where(self, rank=None, kind=None, pipe=None, name=None):
        for s in self.slices:
            if rank is not None and s.rank != rank:
                continue
            if kind is not None and s.track.kind != kind:
                continue
            if pipe is not None and s.track.pipe != pipe:
                continue
            if name is not None and s.name != name:
                continue
            yield s

    def pipe_slices(self, rank=None):
        """X events on `<AIC|AIV><core> <PIPE>` tracks."""
        return self.slices_where(rank=rank, kind="pipe")

    def slices_by_track(self):
        """(pid, tid) -> [Slice] sorted by (ts, end)."""
        out = defaultdict(list)
        for s in self.slices:
            out[(s.rank, s.tid)].append(s)
        for lst in out.values():
            lst.sort(key=lambda s: (s.ts, s.end))
        return dict(out)

    def stalls(self, rank=None):
        """TWAITs that really waited: named TWAIT, on a SCALAR track, cat containing `stall`."""
        for s in self.slices_where(rank=rank, kind="pipe", pipe="SCALAR", name="TWAIT"):
            if s.stalled:
                yield s

    def cores(self, rank):
        """Sorted [(core_type, core)] of a rank: AIC before AIV, then by core index."""
        keys = {(t.core_type, t.core) for (pid, _), t in self.tracks.items()
                if pid == rank and t.kind in ("pipe", "blocks")}
        return sorted(keys, key=lambda k: (CORE_TYPES.index(k[0]), k[1]))

    def core_lanes(self, rank):
        """Sorted [(core_type, lane, core)] of a rank: AIC before AIV, then by lane (a trace of
        several API calls gives lane n > 1 tracks of its own), then by core index."""
        keys = {(t.core_type, t.lane, t.core) for (pid, _), t in self.tracks.items()
                if pid == rank and t.kind in ("pipe", "blocks")}
        return sorted(keys, key=lambda k: (CORE_TYPES.index(k[0]), k[1], k[2]))

    def pipe_tracks(self, rank):
        return [t for (pid, _), t in self.tracks.items() if pid == rank and t.kind == "pipe"]

    def busy_ps(self):
        """{rank: {(core_type, pipe): busy ps}} summed over cores."""
        out = defaultdict(lambda: defaultdict(int))
        for s in self.pipe_slices():
            out[s.rank][(s.track.core_type, s.track.pipe)] += s.dur
        return {r: dict(v) for r, v in out.items()}


def filter_is_active(f, ranks=None):
    """otherData.filter: null/absent/"none"/{} or a dict whose values are all null, empty or
    "all" means nothing was left out (a rank list naming every one of `ranks` ranks counts as
    nothing left out too); anything else means the trace is limited."""
    def empty(v):
        return v is None or v is False or v == "" or v == [] or v == {} or (
            isinstance(v, str) and v.strip().lower() in ("none", "all", "unfiltered"))
    if empty(f):
        return False
    if isinstance(f, dict):
        for k, v in f.items():
            if empty(v):
                continue
            if ("rank" in k and isinstance(v, list) and _is_int(ranks)
                    and sorted(v) == list(range(ranks))):
                continue
            return True
        return False
    return True


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def load_json_file(path, what="file"):
    """json.load with one-line errors: missing file, unreadable, not JSON."""
    if not os.path.exists(path):
        raise TraceError(f"{path}: no such file")
    if os.path.isdir(path):
        raise TraceError(f"{path}: is a directory, not a {what}")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror or e}")
    try:
        return json.loads(data)
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not a JSON {what} (not UTF-8 text: {e.reason})")
    except json.JSONDecodeError as e:
        raise TraceError(f"{path}: bad JSON at line {e.lineno} column {e.colno}: {e.msg}")
    except RecursionError:
        raise TraceError(f"{path}: bad JSON: nested too deeply")


def load_trace(path, strict=True):
    """Load and check a Tandem trace. Raises TraceError with a one-line message.

    strict=True: a malformed event (an X event without a numeric ts/dur, integer pid/tid or a
    name, ...) is an error. strict=False: it is skipped and described in trace.problems."""
    doc = load_json_file(path, "Tandem trace")
    return trace_from_json(doc, path, strict=strict)


def trace_from_json(doc, path="<trace>", strict=True):
    if not isinstance(doc, dict):
        raise TraceError(f"{path}: not a Tandem trace (the top level is a JSON {type(doc).__name__}, "
                         "expected an object with traceEvents and otherData)")
    if "traceEvents" not in doc:
        raise TraceError(f"{path}: not a Tandem trace (no traceEvents)")
    events = doc["traceEvents"]
    if not isinstance(events, list):
        raise TraceError(f"{path}: not a Tandem trace (traceEvents is not a list)")
    other = doc.get("otherData")
    if not isinstance(other, dict) or "view" not in other:
        raise TraceError(f"{path}: not a Tandem trace (no otherData.view; was it written by --trace?)")

    t = Trace(path)
    t.meta = other

    def bad(i, msg):
        text = f"event #{i}: {msg}"
        if strict:
            raise TraceError(f"{path}: malformed trace: {text}")
        t.problems.append(text)

    # Metadata first (thread names may come after the events that use them).
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "M":
            continue
        pid, tid, name, args = e.get("pid"), e.get("tid"), e.get("name"), e.get("args")
        if not isinstance(args, dict):
            bad(i, f"metadata event {name!r} has no args object")
            continue
        if name == "process_name":
            if not _is_int(pid):
                bad(i, "process_name without an integer pid")
                continue
            t.process_names[pid] = str(args.get("name", ""))
        elif name == "process_sort_index":
            if _is_int(pid) and _is_number(args.get("sort_index")):
                t.process_sort[pid] = args["sort_index"]
        elif name == "thread_name":
            if not (_is_int(pid) and _is_int(tid)):
                bad(i, "thread_name without integer pid and tid")
                continue
            t.tracks[(pid, tid)] = parse_track_name(str(args.get("name", "")), pid, tid)

    for i, e in enumerate(events):
        if not isinstance(e, dict):
            bad(i, "not a JSON object")
            continue
        ph = e.get("ph")
        if ph == "X":
            name, pid, tid, ts, dur = e.get("name"), e.get("pid"), e.get("tid"), e.get("ts"), e.get("dur")
            if not isinstance(name, str):
                bad(i, "X event without a string name")
                continue
            if not (_is_int(pid) and _is_int(tid)):
                bad(i, f"X event {name!r} without integer pid and tid")
                continue
            if not _is_number(ts) or not _is_number(dur):
                bad(i, f"X event {name!r} without numeric ts and dur")
                continue
            if dur < 0:
                bad(i, f"X event {name!r} has a negative dur {dur}")
                continue
            args = e.get("args")
            if args is None:
                args = {}
            if not isinstance(args, dict):
                bad(i, f"X event {name!r}: args is not an object")
                continue
            cat = e.get("cat", "")
            if not isinstance(cat, str):
                bad(i, f"X event {name!r}: cat is not a string")
                continue
            t.slices.append(Slice(name, cat, pid, tid, us_to_ps(ts), us_to_ps(dur), args, t.track(pid, tid), i))
        elif ph in ("s", "f", "t"):
            fid = e.get("id", e.get("bind_id"))
            pid, tid, ts = e.get("pid"), e.get("tid"), e.get("ts")
            if fid is None or not (_is_int(pid) and _is_int(tid)) or not _is_number(ts):
                bad(i, f"flow event ({ph}) without id, integer pid/tid or numeric ts")
                continue
            ends = t.flows.get(fid)
            if ends is None:
                ends = t.flows[fid] = FlowEnds([], [])
            point = FlowPoint(ph, pid, tid, us_to_ps(ts), e.get("bp"), i)
            (ends.starts if ph == "s" else ends.finishes).append(point)
        elif ph == "C":
            pid, ts, name, args = e.get("pid"), e.get("ts"), e.get("name"), e.get("args")
            if not _is_int(pid) or not _is_number(ts) or not isinstance(name, str) or not isinstance(args, dict):
                bad(i, "counter event (C) without integer pid, numeric ts, name and args")
                continue
            t.counters.append(Counter(pid, name, us_to_ps(ts), args, i))

    vs, ve = other.get("view_start_us"), other.get("view_end_us")
    if _is_number(vs) and _is_number(ve) and ve >= vs:
        t.view_start_ps, t.view_end_ps = us_to_ps(vs), us_to_ps(ve)
    elif t.slices:
        t.view_start_ps = min(s.ts for s in t.slices)
        t.view_end_ps = max(s.end for s in t.slices)
        t.view_from_events = True
    return t


# ---- intervals ------------------------------------------------------------------------------------

def merge_intervals(intervals):
    """Union of (start, end) pairs -> sorted, disjoint [(start, end)] (touching ones joined)."""
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1][1] = b
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def overlap_ps(merged, a, b):
    """Length of [a, b] covered by `merged` (sorted, disjoint intervals)."""
    if b <= a or not merged:
        return 0
    i = max(0, bisect.bisect_right(merged, (a, a)) - 1)
    total = 0
    while i < len(merged) and merged[i][0] < b:
        lo, hi = max(a, merged[i][0]), min(b, merged[i][1])
        if hi > lo:
            total += hi - lo
        i += 1
    return total


def subtract_intervals(merged_a, merged_b):
    """Parts of `merged_a` not covered by `merged_b` (both sorted and disjoint)."""
    out = []
    j = 0
    for a, b in merged_a:
        cur = a
        while j < len(merged_b) and merged_b[j][1] <= cur:
            j += 1
        k = j
        while k < len(merged_b) and merged_b[k][0] < b:
            if merged_b[k][0] > cur:
                out.append((cur, merged_b[k][0]))
            cur = max(cur, merged_b[k][1])
            k += 1
        if cur < b:
            out.append((cur, b))
    return out


# ---- helpers shared by the tools -------------------------------------------------------------

def write_atomic(path, write_fn, binary=False):
    """Write `path` through a temp file in the same directory and os.replace: readers never see
    a half-written file. write_fn(fileobj) writes the content."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(directory):
        raise TraceError(f"{path}: cannot write: directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
            write_fn(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def parse_rank_list(text, what="--ranks"):
    """`0,3,5-7` -> [0, 3, 5, 6, 7]."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise TraceError(f"{what}: bad rank list {text!r} (expected e.g. 0,1 or 0-3)")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if b < a:
            raise TraceError(f"{what}: bad range {part!r}")
        out.extend(range(a, b + 1))
    if not out:
        raise TraceError(f"{what}: empty rank list")
    return sorted(set(out))


def run_main(prog, main_fn):
    """Run a tool's main: TraceError/OSError become `prog: error: <message>` and exit 1."""
    try:
        rc = main_fn()
    except TraceError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        print(f"{prog}: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    return rc or 0


def _main():
    ap = argparse.ArgumentParser(
        prog="tandem_trace.py",
        description="Print a short inventory of a Tandem trace (--trace FILE): ranks, tracks, events, "
                    "flows, counters and metadata. Used as a library by report.py, timeline.py, check_trace.py.")
    ap.add_argument("trace", metavar="TRACE", help="trace JSON written by allgather_gemm --trace")
    a = ap.parse_args()
    t = load_trace(a.trace)
    kinds = defaultdict(int)
    for tr in t.tracks.values():
        kinds[tr.kind] += 1
    print(f"{t.path}: Tandem trace, view {t.view!r}, {t.shape_text()}, {t.describe_filter()}")
    print(f"  view {us(t.view_start_ps):.6f} .. {us(t.view_end_ps):.6f} us ({us(t.view_ps):.6f} us)")
    print(f"  ranks {t.ranks}; tracks: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    print(f"  {len(t.slices)} X events, {len(t.flows)} flows, {len(t.counters)} counter samples")
    for key in ("soc", "profile_file", "comm_mode", "data_mode", "compute_blocks", "comm_blocks"):
        if key in t.meta:
            print(f"  {key}: {t.meta[key]}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("tandem_trace.py", _main))
