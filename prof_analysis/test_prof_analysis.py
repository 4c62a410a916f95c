#!/usr/bin/python3
"""Tests for prof_analysis/ (stdlib unittest + numpy/matplotlib). From the repo root:

    /usr/bin/python3 -m unittest discover -s prof_analysis -p 'test_*.py'

Synthetic traces are built in the tests (TraceBuilder). The end-to-end test runs only when the
environment variable TANDEM_BIN names an existing executable (the host program,
build/allgather_gemm): it runs a small 2-rank timing-only case with --trace and --json, then
checks the trace (check_trace.py), the report's overlap efficiency against the results JSON
and the busy totals against otherData.busy_us.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import check_trace  # noqa: E402
import kernel_csv  # noqa: E402
import report  # noqa: E402
import sweep_chart  # noqa: E402
import tandem_trace as tt  # noqa: E402
import timeline  # noqa: E402

PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def us_text(ps):
    """Microseconds with 6 decimals, as the simulator writes them."""
    return float(f"{ps / 1e6:.6f}")


class TraceBuilder:
    """Builds a Tandem trace in memory. Times are given in integer picoseconds."""

    PIPE_ORDER = ("CUBE", "MTE1", "MTE2", "MTE3", "FIXP", "VECTOR", "SCALAR", "BLOCKS")

    def __init__(self, ranks=2, view_start_ps=0, view_end_ps=100_000_000, **meta):
        self.ranks = ranks
        self.events = []
        self.tids = {}
        self.next_tid = {}
        self.flow_id = 0
        self.meta = {
            "soc": "Ascend910B1", "ranks": ranks, "m": 512, "k": 512, "n": 512, "base_m": 128, "base_n": 256,
            "compute_blocks": 2, "comm_blocks": 2, "comm_mode": "mesh", "data_mode": "timing-only",
            "profile_file": "profiles/Ascend910B1.toml", "view": "pipelined",
            "view_start_us": us_text(view_start_ps), "view_end_us": us_text(view_end_ps), "filter": None,
        }
        self.meta.update(meta)
        for r in range(ranks):
            self.events.append({"ph": "M", "name": "process_name", "pid": r, "tid": 0, "args": {"name": f"rank {r}"}})
            self.events.append({"ph": "M", "name": "process_sort_index", "pid": r, "tid": 0,
                                "args": {"sort_index": r}})

    def tid(self, rank, track):
        key = (rank, track)
        if key not in self.tids:
            t = self.next_tid.get(rank, 1)
            self.next_tid[rank] = t + 1
            self.tids[key] = t
            self.events.append({"ph": "M", "name": "thread_name", "pid": rank, "tid": t, "args": {"name": track}})
        return self.tids[key]

    def x(self, rank, track, name, ts, dur, stream, block, stall=False, **args):
        a = {"block": block, "stream": stream}
        a.update(args)
        ev = {"name": name, "cat": stream + (",stall" if stall else ""), "ph": "X", "ts": us_text(ts),
              "dur": us_text(dur), "pid": rank, "tid": self.tid(rank, track), "args": a}
        self.events.append(ev)
        return ev

    def flow(self, notify_ev, wait_ev):
        self.flow_id += 1
        ts_s = notify_ev["ts"]
        ts_f = float(f"{(round(wait_ev['ts'] * 1e6) + round(wait_ev['dur'] * 1e6)) / 1e6:.6f}")
        self.events.append({"ph": "s", "cat": "signal", "name": "notify", "id": self.flow_id,
                            "pid": notify_ev["pid"], "tid": notify_ev["tid"], "ts": ts_s})
        self.events.append({"ph": "f", "bp": "e", "cat": "signal", "name": "notify", "id": self.flow_id,
                            "pid": wait_ev["pid"], "tid": wait_ev["tid"], "ts": ts_f})

    def counter(self, src, dst, ts, gbs):
        self.events.append({"ph": "C", "name": f"link {src}->{dst} GB/s", "pid": src, "ts": us_text(ts),
                            "args": {"GB/s": gbs}})

    def memory(self, rank, ts, l2, hbm):
        self.events.append({"ph": "C", "name": "memory GiB/s", "pid": rank, "ts": us_text(ts),
                            "args": {"L2": l2, "HBM": hbm}})

    def busy_us(self):
        """The simulator's busy_us as it writes it: per rank, per data pipe (no SCALAR), summed
        over cores."""
        names = {(pid, tid): name for (pid, name), tid in self.tids.items()}
        out = {}
        for e in self.events:
            if e.get("ph") != "X":
                continue
            name = names[(e["pid"], e["tid"])]
            parts = name.split()
            if len(parts) != 2 or parts[1] in ("BLOCKS", "SCALAR") or not parts[0][:3] in ("AIC", "AIV"):
                continue
            d = out.setdefault(str(e["pid"]), {})
            d[parts[1]] = d.get(parts[1], 0) + round(e["dur"] * 1e6)
        return {r: {p: us_text(v) for p, v in d.items()} for r, d in out.items()}

    def doc(self, busy_us="auto"):
        meta = dict(self.meta)
        if busy_us == "auto":
            meta["busy_us"] = self.busy_us()
        elif busy_us is not None:
            meta["busy_us"] = busy_us
        return {"displayTimeUnit": "ns", "otherData": meta, "traceEvents": list(self.events)}


US = 1_000_000  # ps per us


def known_case():
    """2 ranks; per rank 2 AIC cores (compute blocks 0, 1) and 2 AIV cores (comm blocks 0, 1).
    View 0..100 us. Rank 0's compute waits on rank 1 (source 1): block 0 30 us, block 1 10 us;
    rank 1's compute waits on rank 0: block 0 5 us. Comm blocks never wait."""
    b = TraceBuilder(ranks=2, view_end_ps=100 * US)
    waits = {0: {0: 30 * US, 1: 10 * US}, 1: {0: 15 * US, 1: 0}}
    notifies = {}
    for r in range(2):
        peer = 1 - r
        # comm stream on AIV0 (block 0) and AIV1 (block 1)
        for blk in range(2):
            core = f"AIV{blk}"
            b.x(r, f"{core} BLOCKS", f"block {blk}", 0, 40 * US, "comm", blk)
            b.x(r, f"{core} MTE2", "TLOAD", 0, 10 * US, "comm", blk, bytes=65536)
            b.x(r, f"{core} MTE3", "TSTORE", 10 * US, 20 * US, "comm", blk, bytes=65536, peer=peer)
            b.x(r, f"{core} SCALAR", "PIPE_BARRIER", 30 * US, 1 * US, "comm", blk)
            b.x(r, f"{core} SCALAR", "TNOTIFY", 31 * US, 1 * US, "comm", blk, peer=peer, value=1,
                signal=f"flag[src={r}][chunk={blk}]", address="0x1000")
            notifies[(r, blk)] = b.x(r, f"{core} SCALAR", "TNOTIFY", 32 * US, 1 * US, "comm", blk, peer=peer,
                                     value=1, signal=f"summary[src={r}]", address="0x2000")
        b.counter(r, peer, 0, 0.0)
        b.counter(r, peer, 10 * US, 25.5)
        b.counter(r, peer, 30 * US, 0.0)
        b.memory(r, 0, 1200.0, 40.0)
        b.memory(r, 40 * US, 0.0, 0.0)
    for r in range(2):
        peer = 1 - r
        # compute stream on AIC0 / AIC1
        for blk in range(2):
            core = f"AIC{blk}"
            b.x(r, f"{core} MTE2", "TLOAD", 0, 2 * US, "compute", blk, bytes=131072)
            b.x(r, f"{core} MTE1", "TEXTRACT", 2 * US, 1 * US, "compute", blk)
            b.x(r, f"{core} CUBE", "TMATMUL", 3 * US, 10 * US, "compute", blk, flops=1 << 20)
            b.x(r, f"{core} CUBE", "TMATMUL_ACC", 13 * US, 7 * US, "compute", blk, flops=1 << 20)
            b.x(r, f"{core} FIXP", "TSTORE", 20 * US, 2 * US, "compute", blk, bytes=131072)
            # phase 2: test then wait on the peer's summary; the peer's TNOTIFY releases it
            b.x(r, f"{core} SCALAR", "TTEST", 22 * US, 100_000, "compute", blk, signal=f"summary[src={peer}]",
                compare=">", value=0)
            t = 22 * US + 100_000
            w = waits[r][blk]
            wait = b.x(r, f"{core} SCALAR", "TWAIT", t, w if w else 556, "compute", blk, stall=bool(w),
                       signal=f"summary[src={peer}]", compare=">=", value=1, address="0x2000")
            if w:
                b.flow(notifies[(peer, blk)], wait)
            t += w if w else 556
            b.x(r, f"{core} CUBE", "TMATMUL", t, 10 * US, "compute", blk, flops=1 << 20)
            b.x(r, f"{core} FIXP", "TSTORE", t + 10 * US, 2 * US, "compute", blk, bytes=131072)
            b.x(r, f"{core} BLOCKS", f"block {blk}", 0, t + 12 * US, "compute", blk)
    return b


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def run_tool(*args, timeout=120):
    return subprocess.run([PY] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout)


def results_obj(**kw):
    r = {"soc": "Ascend910B1", "ranks": 2, "m": 512, "k": 512, "n": 512, "base_m": 128, "base_n": 256,
         "compute_blocks": 2, "comm_blocks": 2, "comm_mode": "mesh", "data_mode": "timing-only",
         "compute_only_us": 35.702, "seq_comm_us": 78.905, "seq_compute_us": 35.702, "sequential_us": 114.607,
         "pipelined_us": 100.0, "speedup": 1.14607, "overlap_eff_pct": 0.0, "exposed_comm_us": 0.0,
         "tflops_per_rank": 2.68, "allgather_gib_s": 2.7, "verification": "skipped"}
    r.update(kw)
    seq = r["seq_comm_us"] + r["seq_compute_us"]
    r["sequential_us"] = seq
    r["overlap_eff_pct"] = max(0.0, (seq - r["pipelined_us"]) / min(r["seq_comm_us"], r["seq_compute_us"]) * 100.0)
    r["exposed_comm_us"] = r["pipelined_us"] - r["compute_only_us"]
    return r


class TmpDirCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="prof_analysis_test_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def assertNoTempLeft(self):
        left = [n for n in os.listdir(self.dir) if n.endswith(".tmp")]
        self.assertEqual(left, [], "temp files left behind")


# ---- library -----------------------------------------------------------------------------------

class TrackNameTest(unittest.TestCase):
    def test_pipe_tracks(self):
        t = tt.parse_track_name("AIC3 CUBE")
        self.assertEqual((t.kind, t.core_type, t.core, t.pipe), ("pipe", "AIC", 3, "CUBE"))
        t = tt.parse_track_name("AIV17 MTE3")
        self.assertEqual((t.kind, t.core_type, t.core, t.pipe), ("pipe", "AIV", 17, "MTE3"))
        for p in tt.PIPES:
            self.assertEqual(tt.parse_track_name(f"AIC0 {p}").pipe, p)

    def test_blocks_and_links(self):
        t = tt.parse_track_name("AIV5 BLOCKS")
        self.assertEqual((t.kind, t.core_type, t.core, t.pipe, t.lane), ("blocks", "AIV", 5, None, 1))
        t = tt.parse_track_name("AIC2 CUBE (lane 3)")
        self.assertEqual((t.kind, t.core_type, t.core, t.pipe, t.lane), ("pipe", "AIC", 2, "CUBE", 3))
        t = tt.parse_track_name("link 0->3")
        self.assertEqual((t.kind, t.link_src, t.link_dst, t.lane), ("link", 0, 3, None))
        t = tt.parse_track_name("link 2->1 (ring 1)")
        self.assertEqual((t.kind, t.link_src, t.link_dst, t.lane), ("link", 2, 1, 1))

    def test_stage_tracks(self):
        t = tt.parse_track_name("stage gmm1", 0, 1000002)
        self.assertEqual((t.kind, t.core_type, t.pipe), ("stage", None, None))

    def test_unknown_names(self):
        for name in ("AIC CUBE", "AIX3 CUBE", "AIC3 M", "aic3 CUBE", "AIC3  CUBE", "", "link 0-1"):
            self.assertEqual(tt.parse_track_name(name).kind, "other", name)

    def test_signal_names(self):
        self.assertEqual(tt.signal_source("summary[src=3]"), 3)
        self.assertEqual(tt.signal_source("flag[src=1][chunk=7]"), 1)
        self.assertEqual(tt.signal_chunk("flag[src=1][chunk=7]"), 7)
        self.assertIsNone(tt.signal_source("done"))
        self.assertIsNone(tt.signal_source(None))

    def test_ps_conversion_exact(self):
        # One 1.8 GHz cycle written with 6 decimals, summed 100000 times: exact in ps.
        self.assertEqual(tt.us_to_ps(0.000556), 556)
        self.assertEqual(tt.us_to_ps(123456.789012), 123456789012)
        self.assertEqual(sum(tt.us_to_ps(0.000556) for _ in range(100000)), 55_600_000)

    def test_filter_detection(self):
        self.assertFalse(tt.filter_is_active(None))
        self.assertFalse(tt.filter_is_active({}))
        self.assertFalse(tt.filter_is_active({"ranks": None, "window_us": None}))
        self.assertFalse(tt.filter_is_active({"ranks": "all", "window_us": []}))
        self.assertFalse(tt.filter_is_active({"ranks": [0, 1]}, ranks=2))
        self.assertTrue(tt.filter_is_active({"ranks": [0]}, ranks=2))
        self.assertTrue(tt.filter_is_active({"window_us": [0, 50]}))
        self.assertTrue(tt.filter_is_active("ranks 0,3"))


class LoadTraceTest(TmpDirCase):
    def test_loads_known_case(self):
        p = self.path("t.json")
        write_json(p, known_case().doc())
        t = tt.load_trace(p)
        self.assertEqual(t.ranks, [0, 1])
        self.assertEqual(t.view_ps, 100 * US)
        self.assertEqual(t.cores(0), [("AIC", 0), ("AIC", 1), ("AIV", 0), ("AIV", 1)])
        self.assertEqual(len(list(t.stalls())), 3)
        self.assertEqual(len(t.flows), 3)
        self.assertEqual(len(t.counters), 10)
        cube = t.busy_ps()[0][("AIC", "CUBE")]
        self.assertEqual(cube, 2 * (10 + 7 + 10) * US)
        s = next(t.stalls(rank=0))
        self.assertEqual((s.stream, s.block, s.signal), ("compute", 0, "summary[src=1]"))

    def test_errors_are_one_line(self):
        cases = {
            "missing.json": None,
            "notjson.json": "{not json",
            "array.json": "[1, 2]",
            "noevents.json": json.dumps({"otherData": {"view": "pipelined"}}),
            "noview.json": json.dumps({"traceEvents": [], "otherData": {}}),
            "noother.json": json.dumps({"traceEvents": []}),
            "badx.json": json.dumps({"traceEvents": [{"ph": "X", "name": "TLOAD", "pid": 0, "tid": 1, "ts": "a",
                                                      "dur": 1}], "otherData": {"view": "pipelined"}}),
        }
        expect = {"missing.json": "no such file", "notjson.json": "bad JSON", "array.json": "not a Tandem trace",
                  "noevents.json": "no traceEvents", "noview.json": "no otherData.view",
                  "noother.json": "no otherData.view", "badx.json": "malformed"}
        for name, content in cases.items():
            p = self.path(name)
            if content is not None:
                with open(p, "w") as f:
                    f.write(content)
            with self.assertRaises(tt.TraceError) as cm:
                tt.load_trace(p)
            msg = str(cm.exception)
            self.assertIn(expect[name], msg, name)
            self.assertNotIn("\n", msg)
            # and the scripts exit non-zero with one line on stderr
            for tool in ("report.py", "timeline.py", "check_trace.py"):
                if tool == "check_trace.py" and name == "badx.json":
                    continue  # a Tandem trace with a bad event: check_trace.py lists it (below)
                extra = ["-o", self.path("x.png")] if tool == "timeline.py" else []
                r = run_tool(os.path.join(HERE, tool), p, *extra)
                self.assertNotEqual(r.returncode, 0, (tool, name))
                self.assertEqual(r.returncode, 1, (tool, name, r.stderr))
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, (tool, name, r.stderr))
                self.assertIn("error", lines[0])
                self.assertNotIn("Traceback", r.stderr)
        r = run_tool(os.path.join(HERE, "check_trace.py"), self.path("badx.json"))
        self.assertEqual(r.returncode, 3)
        self.assertIn("[malformed event] event #0: X event 'TLOAD' without numeric ts and dur", r.stderr)


# ---- report --------------------------------------------------------------------------------------

class ReportTest(TmpDirCase):
    def analyze(self, builder, results=None, **doc_kw):
        t = tt.trace_from_json(builder.doc(**doc_kw), "mem")
        return report.analyze(t, results, "r.json" if results else None)

    def test_chip_memory(self):
        # Each rank's counter: 1200 GiB/s through the L2 and 40 to HBM for the first 40 us of the
        # 100 us view, then 0.
        a = self.analyze(known_case())
        mem = a["ranks"][1]["memory"]
        self.assertAlmostEqual(mem["L2"]["mean_gib_s"], 480.0, places=9)
        self.assertAlmostEqual(mem["L2"]["peak_gib_s"], 1200.0, places=9)
        self.assertAlmostEqual(mem["L2"]["gib"], 0.048, places=12)
        self.assertAlmostEqual(mem["HBM"]["mean_gib_s"], 16.0, places=9)
        self.assertIn("chip memory", report.format_text(a))
        b = known_case()
        b.events = [e for e in b.events if e.get("name") != "memory GiB/s"]
        self.assertIsNone(self.analyze(b)["ranks"][0]["memory"])

    def test_busy_and_share(self):
        a = self.analyze(known_case())
        r0 = {row["label"]: row for row in a["ranks"][0]["busy"]}
        self.assertAlmostEqual(r0["AIC CUBE"]["busy_us"], 54.0, places=9)
        self.assertEqual(r0["AIC CUBE"]["cores"], 2)
        self.assertAlmostEqual(r0["AIC CUBE"]["share_pct"], 54.0 / (2 * 100.0) * 100.0, places=9)
        # MTE2 is on both core types: per type and combined
        self.assertAlmostEqual(r0["AIC MTE2"]["busy_us"], 4.0, places=9)
        self.assertAlmostEqual(r0["AIV MTE2"]["busy_us"], 20.0, places=9)
        self.assertAlmostEqual(r0["MTE2 (all cores)"]["busy_us"], 24.0, places=9)
        self.assertEqual(r0["MTE2 (all cores)"]["cores"], 4)
        self.assertAlmostEqual(r0["MTE2 (all cores)"]["share_pct"], 24.0 / 400.0 * 100.0, places=9)
        ov = {row["label"]: row for row in a["overall"]["busy"]}
        self.assertAlmostEqual(ov["AIC CUBE"]["busy_us"], 108.0, places=9)
        self.assertEqual(ov["AIC CUBE"]["cores"], 4)
        self.assertEqual(a["busy_check"]["mismatches"], [])
        self.assertGreater(a["busy_check"]["compared"], 0)
        self.assertEqual(a["warnings"], [])

    def kernel_case(self, cube_mean=0.375):
        """One launch (compute stream, 10..50 us) on AIC0 and AIC1; CUBE busy 20 and 10 us, MTE2
        busy 4 us on AIC0 only; a comm-stream slice and a slice after the launch do not count."""
        entry = {"view": "pipelined", "launch": 0, "stream": "compute", "kernel": "K", "rank": 0,
                 "cores": {"aic": 2},
                 "pipe_ratio": {"aic": {"cube": {"mean": cube_mean, "min": 0.25, "max": 0.5},
                                        "mte2": {"mean": 0.05, "min": 0.0, "max": 0.1}}},
                 "per_rank": [{"rank": 0, "kernel_us": 40.0, "start_us": 10.0, "end_us": 50.0}]}
        b = TraceBuilder(ranks=1, kernels=[entry])
        b.x(0, "AIC0 BLOCKS", "block 0", 10 * US, 40 * US, "compute", 0)
        b.x(0, "AIC1 BLOCKS", "block 1", 10 * US, 30 * US, "compute", 1)
        b.x(0, "AIC0 CUBE", "TMATMUL", 12 * US, 20 * US, "compute", 0)
        b.x(0, "AIC1 CUBE", "TMATMUL", 15 * US, 10 * US, "compute", 1)
        b.x(0, "AIC0 MTE2", "TLOAD", 10 * US, 4 * US, "compute", 0)
        b.x(0, "AIC0 CUBE", "TMATMUL", 60 * US, 5 * US, "compute", 0)
        b.x(0, "AIC0 CUBE", "TMATMUL", 33 * US, 5 * US, "comm", 0)
        return b

    def test_pipe_use_per_kernel(self):
        a = self.analyze(self.kernel_case())
        ku = a["kernels"]
        self.assertIsNone(ku["skipped"])
        self.assertEqual(len(ku["launches"]), 1)
        k = ku["launches"][0]
        self.assertEqual(k["cores"], {"AIC": 2})
        self.assertAlmostEqual(k["kernel_us"], 40.0, places=9)
        cube = k["pipe_ratio"]["AIC"]["CUBE"]
        self.assertAlmostEqual(cube["mean"], 0.375, places=12)
        self.assertAlmostEqual(cube["min"], 0.25, places=12)
        self.assertAlmostEqual(cube["max"], 0.5, places=12)
        self.assertAlmostEqual(k["pipe_ratio"]["AIC"]["MTE2"]["max"], 0.1, places=12)
        self.assertEqual(k["pipe_ratio"]["AIC"]["FIXP"], {"mean": 0.0, "min": 0.0, "max": 0.0})
        self.assertNotIn("SCALAR", k["pipe_ratio"]["AIC"])
        self.assertTrue(k["compared"])
        self.assertEqual(a["warnings"], [])
        self.assertIn("pipe utilisation per kernel launch", report.format_text(a))

    def test_kernel_csv_per_core(self):
        b = self.kernel_case()
        b.x(0, "AIC0 MTE2", "TLOAD", 20 * US, 1 * US, "compute", 0, bytes=4096, peer=1)
        b.x(0, "AIC1 FIXP", "TSTORE", 40 * US, 2 * US, "compute", 1, bytes=8192)
        t = tt.trace_from_json(b.doc(), "mem")
        res = {"kernels": [{"view": "pipelined", "launch": 0, "rank": 0, "l2_hit_pct": 87.5}]}
        table = kernel_csv.rows(t, res)
        self.assertEqual([(r["core_type"], r["core"]) for r in table], [("AIC", 0), ("AIC", 1)])
        r0, r1 = table
        self.assertEqual(r0["aic_cube_ratio"], "0.500000")
        self.assertEqual(r0["aic_mte2_ratio"], "0.125000")  # 4 + 1 us of 40
        self.assertEqual(r0["aiv_vec_ratio"], "")
        self.assertEqual(r0["bound_pipe"], "CUBE")
        self.assertEqual((r0["gm_read_bytes"], r0["remote_read_bytes"], r0["gm_write_bytes"]), (4096, 4096, 0))
        self.assertEqual((r1["gm_write_bytes"], r1["remote_write_bytes"]), (8192, 0))
        self.assertEqual(r0["l2_hit_pct"], "87.50")
        text = kernel_csv.to_csv(table)
        self.assertTrue(text.startswith(",".join(kernel_csv.HEADER) + "\n"))
        self.assertEqual(len(text.splitlines()), 3)

    def test_polls_of_a_merged_ttest_count_as_polls(self):
        b = known_case()
        b.x(0, "AIC0 SCALAR", "TTEST", 70 * US, 3 * US, "compute", 0, polls=5, signal="flag[src=1][chunk=0]")
        a = self.analyze(b)
        blk = next(x for x in a["ranks"][0]["blocks"] if x["stream"] == "compute" and x["block"] == 0)
        self.assertEqual(blk["ttests"], 5 + 1)  # the known case's one poll of block 0, and these 5

    def test_across_ranks_names_the_rank_that_stands_out(self):
        a = self.analyze(known_case())
        x = a["across_ranks"]
        self.assertEqual(x["ranks"], [0, 1])
        cube = x["busy"]["AIC CUBE"]
        self.assertEqual(set(cube["by_rank"]), {"0", "1"})
        self.assertLessEqual(cube["min"], cube["mean"])
        self.assertLessEqual(cube["mean"], cube["max"])
        text = report.format_text(a)
        self.assertIn("across the 2 ranks in the trace (0, 1)", text)
        res = results_obj(per_rank=[{"pipelined_us": 100.0}, {"pipelined_us": 100.0}, {"pipelined_us": 130.0},
                                    {"pipelined_us": 100.5}])
        x = report.across_ranks(a["ranks"], res, 100 * US)
        self.assertEqual(x["results"]["outliers"], [2])
        self.assertEqual(x["results"]["pipelined_us"]["max_rank"], 2)

    def test_pipe_use_mismatch_warns(self):
        a = self.analyze(self.kernel_case(cube_mean=0.4))
        self.assertEqual(len(a["warnings"]), 1)
        self.assertIn("CUBE mean", a["warnings"][0])

    def test_pipe_use_without_kernels(self):
        a = self.analyze(known_case())
        self.assertIsNone(a["kernels"])
        self.assertIn("otherData has no kernels", report.format_text(a))

    def test_blocked_per_block_and_critical_path(self):
        a = self.analyze(known_case())
        r0 = a["ranks"][0]
        blocked = {(b["stream"], b["block"]): b["blocked_us"] for b in r0["blocks"]}
        self.assertAlmostEqual(blocked[("compute", 0)], 30.0, places=9)
        self.assertAlmostEqual(blocked[("compute", 1)], 10.0, places=9)
        self.assertEqual(blocked[("comm", 0)], 0.0)
        self.assertEqual([(b["stream"], b["block"]) for b in r0["top_blocks"]], [("compute", 0), ("compute", 1)])
        cp = r0["critical_path"]
        # compute block time: block 0 = 22.1 + 30 + 12 = 64.1, block 1 = 44.1 -> 108.2 us
        self.assertAlmostEqual(cp["block_us"], 108.2, places=9)
        self.assertAlmostEqual(cp["waited_pct"], 40.0 / 108.2 * 100.0, places=9)
        self.assertEqual(cp["top_source"], 1)
        self.assertEqual(cp["top_source_phases"], [2])
        s = cp["sentence"]
        self.assertIn("rank 0: compute waited 37.0% of its time", s)
        self.assertIn("summed over its 2 blocks", s)
        self.assertIn("on source 1 in phase 2", s)
        self.assertIn("the longest wait was block 0 on summary[src=1], 30.0 us", s)
        self.assertIn("rank 1: compute waited", a["ranks"][1]["critical_path"]["sentence"])
        self.assertIn("on source 0 in phase 2", a["ranks"][1]["critical_path"]["sentence"])
        self.assertEqual(a["overall"]["critical_rank"], 0)
        self.assertAlmostEqual(a["overall"]["streams"]["compute"]["blocked_us"], 55.0, places=9)
        top = a["overall"]["top_blocks"][0]
        self.assertEqual((top["rank"], top["stream"], top["block"]), (0, "compute", 0))

    def test_when_blocks_end(self):
        # Rank 0's compute block 0 ends at 22.1 + 30 + 12 = 64.1 us, block 1 at 44.1; both comm
        # blocks at 40. Block 0's cube is busy 10 + 7 + 10 of its 64.1 us.
        a = self.analyze(known_case())
        r0 = a["ranks"][0]
        b0 = next(b for b in r0["blocks"] if (b["stream"], b["block"]) == ("compute", 0))
        self.assertEqual(b0["core"], "AIC0")
        self.assertAlmostEqual(b0["start_us"], 0.0, places=9)
        self.assertAlmostEqual(b0["end_us"], 64.1, places=9)
        self.assertAlmostEqual(b0["busy_pct_of_block"]["CUBE"], 27.0 / 64.1 * 100.0, places=9)
        self.assertNotIn("SCALAR", b0["busy_pct_of_block"])
        e = r0["streams"]["compute"]["ends"]
        self.assertAlmostEqual(e["first_us"], 44.1, places=9)
        self.assertAlmostEqual(e["median_us"], 54.1, places=9)
        self.assertAlmostEqual(e["last_us"], 64.1, places=9)
        self.assertEqual(e["last_blocks"], [0, 1])
        self.assertEqual(r0["streams"]["comm"]["ends"]["last_blocks"], [1, 0])  # a tie: the higher block first
        text = report.format_text(a)
        self.assertIn("compute: 2 blocks end 44.100 .. 64.100 us (median 54.100); the last: block 0 at 64.100 "
                      "(AIC0, from 0.000; CUBE 42.1%, MTE2 3.1%, MTE1 1.6%, FIXP 6.2%)", text)
        self.assertNotIn("every block, by stream and end", text)
        every = report.format_text(a, all_blocks=True)
        self.assertIn("compute block 1 (AIC1): 0.000 .. 44.100 us, blocked 10.000 us, TTEST 0.100 us; "
                      "busy CUBE 61.2%", every)
        self.assertLess(every.index("compute block 1 (AIC1)"), every.index("compute block 0 (AIC0)"))

    def test_more_blocks_at_once_than_the_chip_has_cores(self):
        # The known case's chip has 2 AIC cores (its compute blocks 0 and 1 run 0 .. 64.1 and
        # 0 .. 44.1 us): no note. A second call's compute block from 30 to 50 us makes 3 AIC blocks
        # at once from 30 to 44.1 us.
        b = known_case()
        b.meta.update(aic_cores=2, aiv_cores=2)
        a = self.analyze(b)
        self.assertIsNone(a["ranks"][0]["oversubscribed"])
        self.assertNotIn("note: up to", report.format_text(a))
        b.x(0, "AIC5 BLOCKS", "block 0", 30_000_000, 20_000_000, "op[2] compute", 0)
        a = self.analyze(b)
        o = a["ranks"][0]["oversubscribed"]
        self.assertEqual(list(o), ["AIC"])
        self.assertEqual((o["AIC"]["cores"], o["AIC"]["peak_blocks"]), (2, 3))
        self.assertAlmostEqual(o["AIC"]["over_us"], 14.1, places=9)
        self.assertAlmostEqual(o["AIC"]["from_us"], 30.0, places=9)
        self.assertEqual(o["AIC"]["streams"], ["compute", "op[2] compute"])
        self.assertIsNone(a["ranks"][1]["oversubscribed"])
        self.assertIn("note: up to 3 AIC blocks ran at once on the chip's 2 AIC cores (14.100 us over, from 30.000 "
                      "us; streams compute, op[2] compute)", report.format_text(a))
        # Without the chip's core counts there is nothing to compare with.
        b.meta.pop("aic_cores")
        self.assertIsNone(self.analyze(b)["ranks"][0]["oversubscribed"])

    def test_phase_one_and_sources(self):
        # A stall on the rank's own source before any remote check is phase 1; waits on two
        # sources: the bigger one is named.
        b = TraceBuilder(ranks=3, view_end_ps=100 * US)
        b.x(0, "AIC0 BLOCKS", "block 0", 0, 90 * US, "compute", 0)
        b.x(0, "AIC0 SCALAR", "TWAIT", 0, 4 * US, "compute", 0, stall=True, signal="summary[src=0]")
        b.x(0, "AIC0 SCALAR", "TWAIT", 10 * US, 20 * US, "compute", 0, stall=True, signal="summary[src=2]")
        b.x(0, "AIC0 SCALAR", "TWAIT", 40 * US, 6 * US, "compute", 0, stall=True, signal="flag[src=1][chunk=3]")
        b.x(0, "AIC0 SCALAR", "TWAIT", 50 * US, 7 * US, "compute", 0, stall=True, signal="summary[src=0]")
        b.x(0, "AIC0 CUBE", "TMATMUL", 60 * US, 30 * US, "compute", 0)
        a = self.analyze(b, busy_us=None)
        blk = a["ranks"][0]["blocks"][0]
        self.assertEqual(blk["by_phase_us"], {"1": 4.0, "2": 33.0})
        self.assertEqual(blk["by_source_us"], {"0": 11.0, "1": 6.0, "2": 20.0})
        cp = a["ranks"][0]["critical_path"]
        self.assertEqual(cp["top_source"], 2)
        self.assertIn("22.2% on source 2 in phase 2 (the most; then source 0 12.2%, source 1 6.7%)", cp["sentence"])
        self.assertIn("(summed over its 1 block)", cp["sentence"])
        self.assertIn("compute waited 41.1% of its time", cp["sentence"])
        # the BLOCKS slice gives the block's time (90 us)
        self.assertAlmostEqual(blk["block_us"], 90.0)

    def test_wait_while_pipes_drain_and_polls(self):
        # The scalar unit issues a TWAIT at 10 us while the CUBE still works until 20 us: 20 us
        # blocked, 10 us of it with the core's other pipes idle; 4 TTEST polls of 0.5 us.
        b = TraceBuilder(ranks=2, view_end_ps=50 * US)
        b.x(0, "AIC0 BLOCKS", "block 0", 0, 40 * US, "compute", 0)
        b.x(0, "AIC0 CUBE", "TMATMUL", 0, 20 * US, "compute", 0)
        b.x(0, "AIC0 SCALAR", "TWAIT", 10 * US, 20 * US, "compute", 0, stall=True, signal="summary[src=1]")
        for i in range(4):
            b.x(0, "AIC0 SCALAR", "TTEST", 30 * US + i * US, US // 2, "compute", 0, signal="flag[src=1][chunk=0]")
        a = self.analyze(b)
        blk = a["ranks"][0]["blocks"][0]
        self.assertAlmostEqual(blk["blocked_us"], 20.0)
        self.assertAlmostEqual(blk["blocked_idle_us"], 10.0)
        self.assertAlmostEqual(blk["ttest_us"], 2.0)
        self.assertEqual(blk["ttests"], 4)
        st = a["ranks"][0]["streams"]["compute"]
        self.assertAlmostEqual(st["blocked_pct"], 50.0)
        self.assertAlmostEqual(st["blocked_idle_pct"], 25.0)
        self.assertAlmostEqual(st["ttest_pct"], 5.0)
        s = a["ranks"][0]["critical_path"]["sentence"]
        self.assertIn("compute waited 50.0% of its time in TWAIT (summed over its 1 block; 25.0% with the core's "
                      "other pipes idle as well), all of it on source 1 in phase 2", s)
        self.assertIn("TTEST polling took another 5.0% of its time", s)
        self.assertEqual(a["ranks"][1]["critical_path"]["sentence"], "rank 1: no blocks in the trace")

    def test_no_stalls_sentence(self):
        b = TraceBuilder(ranks=1, view_end_ps=10 * US)
        b.x(0, "AIC0 CUBE", "TMATMUL", 0, 8 * US, "compute", 0)
        b.x(0, "AIC0 SCALAR", "TWAIT", 8 * US, 556, "compute", 0, signal="summary[src=0]")
        a = self.analyze(b)
        s = a["ranks"][0]["critical_path"]["sentence"]
        self.assertIn("never waited in TWAIT", s)
        self.assertIn("AIC CUBE at 80.0% of 1 AIC cores x view time", s)
        self.assertEqual(a["ranks"][0]["streams"]["compute"]["blocked_us"], 0.0)

    def test_core_counts_and_window(self):
        b = known_case()
        # an idle core: only a zero-length BLOCKS slice, no pipe tracks -> still a core
        for r in range(2):
            b.x(r, "AIC2 BLOCKS", "block 2", 0, 0, "compute", 2)
        a = self.analyze(b)
        r0 = {row["label"]: row for row in a["ranks"][0]["busy"]}
        self.assertEqual(r0["AIC CUBE"]["cores"], 3)
        self.assertAlmostEqual(r0["AIC CUBE"]["share_pct"], 54.0 / 300.0 * 100.0, places=9)
        self.assertEqual(a["core_counts_from"], "tracks")
        b.meta["aic_cores"] = 24
        b.meta["aiv_cores"] = 48
        a = self.analyze(b)
        r0 = {row["label"]: row for row in a["ranks"][0]["busy"]}
        self.assertEqual((r0["AIC CUBE"]["cores"], r0["AIV MTE3"]["cores"], r0["MTE2 (all cores)"]["cores"]),
                         (24, 48, 72))
        self.assertEqual(a["core_counts_from"], "otherData")
        # a time window [10, 30] us: busy clipped to it, shares of 20 us
        b = known_case()
        b.meta["filter"] = {"ranks": "all", "window_us": [10.0, 30.0]}
        a = self.analyze(b)
        self.assertTrue(a["filtered"])
        r0 = {row["label"]: row for row in a["ranks"][0]["busy"]}
        # CUBE on one core: TMATMUL 3..13 -> 3 us, TMATMUL_ACC 13..20 -> 7 us, second TMATMUL after 30
        # on block 1 (32.1..42.1) -> 0; block 0's at 52.1 -> 0. Two cores: 20 us.
        self.assertAlmostEqual(r0["AIC CUBE"]["busy_us"], 20.0, places=9)
        self.assertAlmostEqual(r0["AIC CUBE"]["share_pct"], 20.0 / (2 * 20.0) * 100.0, places=9)
        blk0 = next(x for x in a["ranks"][0]["blocks"] if x["stream"] == "compute" and x["block"] == 0)
        self.assertAlmostEqual(blk0["blocked_us"], 30.0 - 22.1, places=9)
        self.assertEqual(a["window_us"], [10.0, 30.0])

    def test_simulator_busy_us_without_scalar(self):
        # The simulator's busy_us has no SCALAR: noted, not a warning.
        b = known_case()
        busy = b.busy_us()
        self.assertNotIn("SCALAR", busy["0"])
        a = self.analyze(b, busy_us=busy)
        self.assertEqual(a["warnings"], [])
        self.assertEqual(a["busy_check"]["not_in_busy_us"], ["AIC SCALAR", "AIV SCALAR"])
        self.assertIn("not compared", report.format_text(a))

    def test_busy_mismatch_warns(self):
        b = known_case()
        busy = b.busy_us()
        busy["0"]["CUBE"] = busy["0"]["CUBE"] + 0.002  # 2 ns off
        busy["1"]["MTE2"] = busy["1"]["MTE2"] + 0.001  # 1 ns: within tolerance
        busy["1"]["CUBE"] = busy["1"]["CUBE"] - 0.000999  # 999 ps: within tolerance
        a = self.analyze(b, busy_us=busy)
        self.assertEqual(len(a["busy_check"]["mismatches"]), 1)
        self.assertEqual(a["busy_check"]["mismatches"][0]["pipe"], "CUBE")
        self.assertTrue(any("rank 0 CUBE" in w and "2.000 ns" in w for w in a["warnings"]), a["warnings"])

    def test_busy_keys_per_core_type(self):
        b = known_case()
        ref = b.busy_us()
        ref["0"] = {"AIC MTE2": 4.0, "AIV MTE2": 20.0}
        a = self.analyze(b, busy_us=ref)
        self.assertEqual(a["busy_check"]["mismatches"], [])
        # rank 0's other pipes have no entry: listed as not compared, not a mismatch
        self.assertIn("AIC CUBE", a["busy_check"]["not_in_busy_us"])
        self.assertEqual(a["warnings"], [])

    def test_overlap_from_results(self):
        res = results_obj(pipelined_us=100.0)
        a = self.analyze(known_case(), results=res)
        want = ((78.905 + 35.702) - 100.0) / 35.702 * 100.0
        self.assertEqual(a["results"]["overlap_eff_pct"], want)
        self.assertEqual(a["results"]["overlap_eff_pct"], res["overlap_eff_pct"])
        self.assertAlmostEqual(a["results"]["exposed_comm_us"], 100.0 - 35.702, places=12)
        self.assertEqual(a["warnings"], [])

    def test_overlap_floored_at_zero_and_mismatch(self):
        res = results_obj(pipelined_us=200.0)
        self.assertEqual(report.overlap_metrics(res)["overlap_eff_pct"], 0.0)
        res = results_obj()
        res["overlap_eff_pct"] = 50.0
        a = self.analyze(known_case(), results=res)
        self.assertTrue(any("differs from the results JSON's overlap_eff_pct" in w for w in a["warnings"]))
        res = results_obj(pipelined_us=90.0)
        a = self.analyze(known_case(), results=res)
        self.assertTrue(any("pipelined_us" in w for w in a["warnings"]))

    def test_cli_text_json_and_sweep_results(self):
        tp, rp, jp = self.path("t.json"), self.path("r.json"), self.path("rep.json")
        write_json(tp, known_case().doc())
        sweep = [results_obj(ranks=4, m=1024), results_obj(), results_obj(ranks=2, m=4096)]
        write_json(rp, sweep)
        r = run_tool(os.path.join(HERE, "report.py"), tp, "--results", rp, "--json", jp, "--strict")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertIn("AIC CUBE", r.stdout)
        self.assertIn("AIC CUBE            busy         54.000 us =  27.0% of 2 AIC cores x 100.000 us view", r.stdout)
        self.assertIn("critical path: rank 0: compute waited 37.0%", r.stdout)
        self.assertIn("overlap efficiency 40.9%", r.stdout)
        self.assertIn("busy check: all", r.stdout)
        self.assertIn("when blocks end", r.stdout)
        r2 = run_tool(os.path.join(HERE, "report.py"), tp, "--blocks")
        self.assertEqual(r2.returncode, 0, r2.stderr)
        self.assertIn("comm block 0 (AIV0): 0.000 .. 40.000 us", r2.stdout)
        with open(jp) as f:
            j = json.load(f)
        self.assertEqual(j["results"]["overlap_eff_pct"], sweep[1]["overlap_eff_pct"])
        self.assertAlmostEqual(j["overall"]["streams"]["compute"]["blocked_us"], 55.0)
        self.assertNoTempLeft()
        # no entry of the sweep matches
        write_json(rp, [results_obj(ranks=4)])
        r = run_tool(os.path.join(HERE, "report.py"), tp, "--results", rp)
        self.assertEqual(r.returncode, 0)
        self.assertIn("does not describe this trace's run", r.stderr)
        write_json(rp, [results_obj(ranks=4), results_obj(ranks=8)])
        r = run_tool(os.path.join(HERE, "report.py"), tp, "--results", rp)
        self.assertEqual(r.returncode, 1)
        self.assertIn("none of its 2 results matches the trace", r.stderr)
        # bad results JSON
        with open(rp, "w") as f:
            f.write("{")
        r = run_tool(os.path.join(HERE, "report.py"), tp, "--results", rp)
        self.assertEqual(r.returncode, 1)
        self.assertIn("bad JSON", r.stderr)

    def test_cli_strict_fails_on_mismatch(self):
        tp = self.path("t.json")
        b = known_case()
        busy = b.busy_us()
        busy["1"]["CUBE"] += 1.0
        write_json(tp, b.doc(busy_us=busy))
        r = run_tool(os.path.join(HERE, "report.py"), tp)
        self.assertEqual(r.returncode, 0)
        self.assertIn("warning: rank 1 CUBE", r.stderr)
        r = run_tool(os.path.join(HERE, "report.py"), tp, "--strict")
        self.assertEqual(r.returncode, 3)

    def test_help(self):
        for tool in ("report.py", "timeline.py", "sweep_chart.py", "check_trace.py", "tandem_trace.py"):
            r = run_tool(os.path.join(HERE, tool), "--help")
            self.assertEqual(r.returncode, 0, tool)
            self.assertIn("usage:", r.stdout)


# ---- check_trace ---------------------------------------------------------------------------------

class CheckTraceTest(TmpDirCase):
    def findings(self, doc):
        f, summary = check_trace.check(doc, "mem")
        return f, summary

    def test_known_case_passes(self):
        f, summary = self.findings(known_case().doc())
        self.assertEqual(dict(f.failures), {})
        self.assertEqual(dict(f.warnings), {})
        self.assertEqual(summary["stalled_twaits"], 3)

    def test_memory_counter_needs_l2_and_hbm(self):
        doc = known_case().doc()
        mem = next(e for e in doc["traceEvents"] if e.get("name") == "memory GiB/s")
        del mem["args"]["HBM"]
        f, _ = self.findings(doc)
        self.assertIn("counters", f.failures)
        self.assertIn("'HBM'", f.failures["counters"][0])

    def test_overlap_detected(self):
        b = known_case()
        b.x(0, "AIC0 CUBE", "TMATMUL", 5 * US, 1 * US, "compute", 0)  # inside the 3..13 us TMATMUL
        f, _ = self.findings(b.doc())
        self.assertIn("overlap", f.failures)

    def test_missing_flow_detected(self):
        doc = known_case().doc()
        doc["traceEvents"] = [e for e in doc["traceEvents"] if not (e.get("ph") == "f" and e.get("id") == 1)]
        f, _ = self.findings(doc)
        self.assertIn("stall flows", f.failures)
        self.assertIn("flows", f.failures)  # the 's' is left dangling

    def test_flow_at_wrong_place_detected(self):
        doc = known_case().doc()
        for e in doc["traceEvents"]:
            if e.get("ph") == "f" and e.get("id") == 2:
                e["ts"] = round(e["ts"] + 1.0, 6)  # past the TWAIT's end, inside the next TMATMUL
        f, _ = self.findings(doc)
        self.assertIn("flows", f.failures)
        self.assertIn("stall flows", f.failures)

    def test_flow_inside_the_wait(self):
        # The simulator writes the "f" 1 ps before the TWAIT's end (strictly inside it): accepted
        # silently; further inside: accepted with a warning; a flow to the wrong address fails.
        doc = known_case().doc()
        for e in doc["traceEvents"]:
            if e.get("ph") == "f" and e.get("id") == 1:
                e["ts"] = round(e["ts"] - 0.000001, 6)
            if e.get("ph") == "f" and e.get("id") == 2:
                e["ts"] = round(e["ts"] - 0.000005, 6)
        f, _ = self.findings(doc)
        self.assertEqual(dict(f.failures), {})
        self.assertEqual(len(f.warnings["flows"]), 1)
        self.assertIn("flow 2: its 'f' is 5 ps before the end", f.warnings["flows"][0])
        doc = known_case().doc()
        for e in doc["traceEvents"]:
            if e.get("ph") == "X" and e["name"] == "TWAIT" and e["pid"] == 0 and e["args"]["block"] == 0:
                e["args"]["address"] = "0x3000"
        f, _ = self.findings(doc)
        self.assertIn("flows", f.failures)
        self.assertIn("waits on 0x3000", f.failures["flows"][0])

    def test_busy_and_fields_and_meta(self):
        b = known_case()
        busy = b.busy_us()
        busy["0"]["MTE3"] += 0.5
        doc = b.doc(busy_us=busy)
        x = next(e for e in doc["traceEvents"] if e.get("ph") == "X")
        del x["cat"]
        del doc["otherData"]["profile_file"]
        f, _ = self.findings(doc)
        self.assertIn("busy_us", f.failures)
        self.assertIn("X event fields", f.failures)
        self.assertIn("otherData", f.failures)

    def test_filtered_traces(self):
        # Limited to rank 0: rank 0 is still compared (all its events are kept) and must match.
        b = known_case()
        b.meta["filter"] = {"ranks": [0], "window_us": "all"}
        doc = b.doc()
        doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("pid") == 0 and e.get("ph") != "f"]
        f, summary = self.findings(doc)
        self.assertTrue(summary["filtered"])
        self.assertEqual(dict(f.failures), {}, f.failures)
        self.assertGreater(summary["busy_compared"], 0)
        self.assertIn("stall flows", f.warnings)  # rank 0's waits were released by rank 1, left out
        doc["otherData"]["busy_us"]["0"]["CUBE"] += 3.0
        f, _ = self.findings(doc)
        self.assertIn("busy_us", f.failures)
        # Limited to a time window: busy totals cannot match, not compared.
        b = known_case()
        b.meta["filter"] = {"ranks": "all", "window_us": [0.0, 25.0]}
        doc = b.doc()
        doc["otherData"]["busy_us"]["0"]["CUBE"] += 3.0
        f, summary = self.findings(doc)
        self.assertNotIn("busy_us", f.failures)
        self.assertIn("busy_us", f.warnings)
        self.assertEqual(summary["busy_compared"], 0)

    def test_cli_exit_codes(self):
        p = self.path("t.json")
        write_json(p, known_case().doc())
        r = run_tool(os.path.join(HERE, "check_trace.py"), p)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("OK", r.stdout)
        b = known_case()
        b.x(1, "AIV0 MTE3", "TSTORE", 15 * US, 1 * US, "comm", 0)
        write_json(p, b.doc())
        r = run_tool(os.path.join(HERE, "check_trace.py"), p)
        self.assertEqual(r.returncode, 3)
        self.assertIn("[overlap]", r.stderr)


# ---- pictures ------------------------------------------------------------------------------------

class TimelineTest(TmpDirCase):
    def test_merge_intervals(self):
        import numpy as np
        s, e = timeline.merge_intervals(np.array([5, 0, 2, 20, 30]), np.array([8, 3, 4, 25, 31]))
        self.assertEqual(list(zip(s.tolist(), e.tolist())), [(0, 4), (5, 8), (20, 25), (30, 31)])
        s, e = timeline.merge_intervals(np.array([5, 0, 2, 20, 30]), np.array([8, 3, 4, 25, 31]), min_gap=5)
        self.assertEqual(list(zip(s.tolist(), e.tolist())), [(0, 8), (20, 31)])
        s, e = timeline.merge_intervals(np.array([], dtype=np.int64), np.array([], dtype=np.int64))
        self.assertEqual(len(s), 0)

    def test_collect_splits_streams_and_stalls(self):
        t = tt.trace_from_json(known_case().doc(), "mem")
        rows, busy, stalls = timeline.collect(t, [0], None)
        self.assertEqual(rows, [(0, "AIC", 0), (0, "AIC", 1), (0, "AIV", 0), (0, "AIV", 1)])
        self.assertEqual(set(busy[(0, "AIC", 0)]), {("compute", "data"), ("compute", "scalar")})
        self.assertEqual(set(busy[(0, "AIV", 0)]), {("comm", "data"), ("comm", "scalar")})
        self.assertEqual(stalls[(0, "AIC", 0)], ([22 * US + 100_000], [52 * US + 100_000]))
        self.assertNotIn((0, "AIV", 0), stalls)
        rows, _, _ = timeline.collect(t, [0, 1], 1)
        self.assertEqual(rows, [(0, "AIC", 0), (0, "AIV", 0), (1, "AIC", 0), (1, "AIV", 0)])
        # an idle core (only a BLOCKS track) is a row unless --active-only
        b = known_case()
        b.x(0, "AIC5 BLOCKS", "block 5", 0, 0, "compute", 5)
        t = tt.trace_from_json(b.doc(), "mem")
        self.assertIn((0, "AIC", 5), timeline.collect(t, [0], None)[0])
        self.assertNotIn((0, "AIC", 5), timeline.collect(t, [0], None, active_only=True)[0])

    def test_a_second_lanes_cores_have_rows_of_their_own(self):
        # A trace of two overlapping API calls: the second call's blocks on core 0 are on
        # "AIC0 CUBE (lane 2)", drawn on a row of their own after lane 1's AIC rows.
        b = known_case()
        b.x(0, "AIC0 CUBE (lane 2)", "TMATMUL", 5 * US, 10 * US, "gemm[2] compute", 0)
        t = tt.trace_from_json(b.doc(), "mem")
        self.assertEqual(t.core_lanes(0), [("AIC", 1, 0), ("AIC", 1, 1), ("AIC", 2, 0), ("AIV", 1, 0), ("AIV", 1, 1)])
        rows, busy, _ = timeline.collect(t, [0], None)
        self.assertEqual(rows, [(0, "AIC", 0), (0, "AIC", 1), (0, "AIC", 0, 2), (0, "AIV", 0), (0, "AIV", 1)])
        self.assertEqual(dict(busy[(0, "AIC", 0, 2)]), {("gemm[2] compute", "data"): ([5 * US], [15 * US])})
        self.assertNotIn(("gemm[2] compute", "data"), busy[(0, "AIC", 0)])
        self.assertEqual(timeline.row_label((0, "AIC", 0, 2)), "rank 0 AIC0 lane 2")
        rows, _, _ = timeline.collect(t, [0], 1)  # --max-cores 1: the first core of each lane
        self.assertEqual(rows, [(0, "AIC", 0), (0, "AIC", 0, 2), (0, "AIV", 0)])
        out = self.path("lanes.png")
        info = timeline.draw(t, out, [0])
        self.assertEqual(info["rows"], 5)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), PNG_MAGIC)

    def test_row_layers(self):
        # data 0..20 (CUBE); scalar 15..25 (TTEST) and 40..41; stall 10..40 (issued while the
        # CUBE still runs); -> scalar-only 20..25 and 40..41, stall drawn 25..40.
        busy_row = {("compute", "data"): ([0], [20]), ("compute", "scalar"): ([15, 40], [25, 41])}
        layers = timeline.row_layers(busy_row, ([10], [40]))
        self.assertEqual(layers["data"], {"compute": [(0, 20)]})
        self.assertEqual(layers["scalar"], {"compute": [(20, 25), (40, 41)]})
        self.assertEqual(layers["stall"], [(25, 40)])
        # a stall completely covered by data-pipe work is not drawn
        layers = timeline.row_layers({("compute", "data"): ([0], [50])}, ([10], [40]))
        self.assertEqual(layers["stall"], [])

    def test_png_small_and_big(self):
        p = self.path("t.json")
        write_json(p, known_case().doc())
        out = self.path("tl.png")
        r = run_tool(os.path.join(HERE, "timeline.py"), p, "-o", out, "--ranks", "0,1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), PNG_MAGIC)
        self.assertNoTempLeft()
        r = run_tool(os.path.join(HERE, "timeline.py"), p, "-o", out, "--ranks", "5")
        self.assertEqual(r.returncode, 1)
        self.assertIn("not in the trace", r.stderr)
        r = run_tool(os.path.join(HERE, "timeline.py"), p, "-o", self.path("nodir/tl.png"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("does not exist", r.stderr)
        # a big layout: 8 ranks x (24 AIC + 48 AIV), one event per core
        b = TraceBuilder(ranks=8, view_end_ps=50 * US)
        for r_ in range(8):
            for c in range(24):
                b.x(r_, f"AIC{c} CUBE", "TMATMUL", c * US, 20 * US, "compute", c)
                b.x(r_, f"AIC{c} SCALAR", "TWAIT", 21 * US + c * US, 3 * US, "compute", c, stall=True,
                    signal=f"summary[src={(r_ + 1) % 8}]")
            for c in range(48):
                b.x(r_, f"AIV{c} MTE3", "TSTORE", c * 100_000, 10 * US, "comm", c)
        t = tt.trace_from_json(b.doc(), "big")
        info = timeline.draw(t, out, t.ranks, max_cores=None)
        self.assertEqual(info["rows"], 8 * 72)
        self.assertTrue(info["stalls"])
        info = timeline.draw(t, out, [0, 7], max_cores=4, window_us=(0.0, 30.0))
        self.assertEqual(info["rows"], 2 * 8)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), PNG_MAGIC)


class SweepChartTest(TmpDirCase):
    def test_sorting_and_labels(self):
        entries = [results_obj(ranks=4, m=4096, k=4096, n=4096), results_obj(ranks=2, m=2048, k=2048, n=1024),
                   results_obj(ranks=2, m=1024, k=2048, n=1024)]
        ordered = sorted(entries, key=sweep_chart.sort_key)
        self.assertEqual(sweep_chart.labels_for(ordered),
                         ["n=2 1024x2048x1024", "n=2 2048x2048x1024", "n=4 4096x4096x4096"])
        twins = [results_obj(comm_mode="mesh"), results_obj(comm_mode="ring")]
        self.assertEqual(sweep_chart.labels_for(twins), ["n=2 512x512x512 mesh", "n=2 512x512x512 ring"])

    def test_cli(self):
        rp, out = self.path("sweep.json"), self.path("chart.png")
        write_json(rp, [results_obj(ranks=r, m=m) for r in (2, 4, 8) for m in (1024, 2048)])
        r = run_tool(os.path.join(HERE, "sweep_chart.py"), rp, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), PNG_MAGIC)
        write_json(rp, results_obj())  # a single object
        r = run_tool(os.path.join(HERE, "sweep_chart.py"), rp, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNoTempLeft()
        bad = results_obj()
        del bad["tflops_per_rank"]
        write_json(rp, [results_obj(), bad])
        r = run_tool(os.path.join(HERE, "sweep_chart.py"), rp, "-o", out)
        self.assertEqual(r.returncode, 1)
        self.assertIn("entry 1 is not a Tandem result (missing tflops_per_rank)", r.stderr)
        write_json(rp, [])
        r = run_tool(os.path.join(HERE, "sweep_chart.py"), rp, "-o", out)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)


# ---- end to end ------------------------------------------------------------------------------------

@unittest.skipUnless(os.environ.get("TANDEM_BIN") and os.path.isfile(os.environ["TANDEM_BIN"])
                     and os.access(os.environ["TANDEM_BIN"], os.X_OK),
                     "set TANDEM_BIN to build/allgather_gemm for the end-to-end test")
class EndToEndTest(TmpDirCase):
    def test_small_two_rank_run(self):
        tp, rp, jp = self.path("trace.json"), self.path("results.json"), self.path("report.json")
        cmd = [os.environ["TANDEM_BIN"], "-n", "2", "--gm", "512", "--gk", "512", "--gn", "512", "--timing-only",
               "--quiet", "--trace", tp, "--json", rp]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, f"{' '.join(cmd)} failed:\n{r.stdout}\n{r.stderr}")
        self.assertTrue(os.path.exists(tp), "the host program wrote no trace")
        r = run_tool(os.path.join(HERE, "check_trace.py"), tp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = run_tool(os.path.join(HERE, "report.py"), tp, "--results", rp, "--json", jp, "--strict")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(jp) as f:
            rep = json.load(f)
        with open(rp) as f:
            res = json.load(f)
        self.assertAlmostEqual(rep["results"]["overlap_eff_pct"], res["overlap_eff_pct"], places=9)
        self.assertAlmostEqual(rep["results"]["exposed_comm_us"], res["exposed_comm_us"], places=9)
        with open(tp) as f:
            doc = json.load(f)
        busy_ref = doc["otherData"]["busy_us"]
        self.assertEqual(sorted(busy_ref), ["0", "1"])
        self.assertEqual(rep["busy_check"]["mismatches"], [])
        self.assertGreater(rep["busy_check"]["compared"], 0)
        for rank_rep in rep["ranks"]:
            for row in rank_rep["busy"]:
                if row["core_type"] is None:
                    continue
                pipe = row["pipe"]
                want = sum(rr["busy_ps"] for rr in rank_rep["busy"] if rr["pipe"] == pipe and rr["core_type"])
                ref = busy_ref[str(rank_rep["rank"])]
                if pipe in ref:
                    self.assertLessEqual(abs(want - tt.us_to_ps(ref[pipe])), 1000, (rank_rep["rank"], pipe))
        # Pipe utilisation per launch from the trace equals the simulator's own (--strict above).
        self.assertEqual(len(rep["kernels"]["launches"]), 4)  # compute and comm kernel on 2 ranks
        self.assertTrue(all(k["compared"] == (k["rank"] == 0) for k in rep["kernels"]["launches"]))
        out = self.path("tl.png")
        r = run_tool(os.path.join(HERE, "timeline.py"), tp, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), PNG_MAGIC)

    def test_a_trace_cut_to_a_window_passes_check_trace(self):
        # two_shot's waits are released by notifies of other ranks, often before the window.
        tp = self.path("window.json")
        cmd = [os.environ["TANDEM_BIN"], "--op", "matmul_all_reduce", "--variant", "two_shot", "-n", "4", "--gm", "1024",
               "--gk", "1024", "--gn", "1024", "--timing-only", "--quiet", "--trace", tp, "--trace-window-us", "20:60"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, f"{' '.join(cmd)} failed:\n{r.stdout}\n{r.stderr}")
        self.assertIn("the events overlapping 20..60 us of the pipelined view", r.stdout)
        r = run_tool(os.path.join(HERE, "check_trace.py"), tp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_default_trace_keeps_rank_0_and_the_slowest_other_rank(self):
        tp, rp = self.path("default.json"), self.path("default_results.json")
        cmd = [os.environ["TANDEM_BIN"], "-n", "4", "--gm", "1024", "--gk", "512", "--gn", "512", "--timing-only",
               "--quiet", "--trace", tp, "--json", rp]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(rp) as f:
            per_rank = [t["pipelined_us"] for t in json.load(f)["per_rank"]]
        slowest = max(range(1, 4), key=lambda i: (per_rank[i], -i))
        self.assertEqual(tt.load_trace(tp).ranks, [0, slowest])
        self.assertIn(f"ranks 0 and {slowest} of 4 (rank 0 and the slowest other rank", r.stdout)
        r = run_tool(os.path.join(HERE, "check_trace.py"), tp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        csv_path = self.path("kernels.csv")
        r = run_tool(os.path.join(HERE, "kernel_csv.py"), tp, "--results", rp, "-o", csv_path)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(csv_path) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual({int(row["rank"]) for row in rows}, {0, slowest})
        # The bounding pipe is the row's busiest: its ratio is the largest of the row's ratios.
        bounded = [row for row in rows if row["core_type"] == "AIC" and row["bound_pipe"]]
        self.assertTrue(bounded)
        for row in bounded:
            ratios = {k[len("aic_"):-len("_ratio")].upper(): float(v) for k, v in row.items()
                      if k.startswith("aic_") and k.endswith("_ratio") and v != ""}
            self.assertEqual(ratios[row["bound_pipe"]], max(ratios.values()), row)

    def traced_run(self, name, *args):
        """The host program run timing-only with a trace and results (`name`.*), then report.py
        --strict on them: (the report's text, its JSON, the results JSON, the trace's path)."""
        tp, rp, jp = self.path(f"{name}_trace.json"), self.path(f"{name}.json"), self.path(f"{name}_report.json")
        cmd = [os.environ["TANDEM_BIN"], *args, "--timing-only", "--quiet", "--trace", tp, "--json", rp]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, f"{' '.join(cmd)} failed:\n{r.stdout}\n{r.stderr}")
        r = run_tool(os.path.join(HERE, "report.py"), tp, "--results", rp, "--json", jp, "--strict")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(jp) as f:
            rep = json.load(f)
        with open(rp) as f:
            res = json.load(f)
        return r.stdout, rep, res, tp

    def test_gemm_pipe_ratios_match_the_results(self):
        text, rep, res, _ = self.traced_run("gemm", "--op", "gemm", "-n", "1", "--gm", "512", "--gk", "512", "--gn", "1536")
        self.assertIn("rank 0 compute GemmPerformance", text)
        [launch] = rep["kernels"]["launches"]
        [want] = [k for k in res["kernels"] if k["view"] == "pipelined"]
        self.assertEqual(launch["cores"], {"AIC": 24})
        for pipe in ("CUBE", "MTE1", "MTE2", "FIXP"):
            for stat in ("mean", "min", "max"):
                self.assertAlmostEqual(launch["pipe_ratio"]["AIC"][pipe][stat],
                                       want["pipe_ratio"]["aic"][report.PIPE_KEYS[pipe]][stat], places=9)
        self.assertGreater(launch["pipe_ratio"]["AIC"]["CUBE"]["mean"], 0.0)

    def test_moe_stages_and_the_bounding_stage_match_the_results(self):
        text, rep, res, tp = self.traced_run(
            "moe", "--op", "moe_ffn", "--variant", "expert_major", "-n", "4", "--gm", "32", "--gk", "256", "--gn", "512",
            "--topk", "4", "--experts-per-rank", "4", "--compute-blocks", "4", "--comm-blocks", "8",
            "--trace-ranks", "all")  # every rank: each stalled TWAIT's TNOTIFY is in the trace
        self.assertIn("bounding stage:", text)
        r = run_tool(os.path.join(HERE, "check_trace.py"), tp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(" 0 warnings", r.stdout)
        want = res["pipelined_stages"]
        mine = rep["stages"]["0"]
        self.assertEqual(mine["bounding_stage"], want["bounding_stage"])
        self.assertEqual(sorted(s["stage"] for s in mine["stages"]), sorted(s["stage"] for s in want["stages"]))
        by_name = {s["stage"]: s for s in want["stages"]}
        for s in mine["stages"]:
            w = by_name[s["stage"]]
            self.assertAlmostEqual(s["span_us"], w["span_us"], places=5)
            self.assertEqual(s["blocks"], w["blocks"])
            self.assertAlmostEqual(s["busiest_pipe_pct"], w["busiest_pipe_pct"], places=6)
        with open(tp) as f:
            doc = json.load(f)
        names = {e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "thread_name" and e["pid"] == 0}
        self.assertTrue({"stage front", "stage combine", "stage unpermute"} <= names, names)


if __name__ == "__main__":
    unittest.main()
