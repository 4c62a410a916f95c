#!/usr/bin/python3
"""Tests for prof_analysis/beside.py (synthetic traces, TraceBuilder of test_prof_analysis.py)."""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import beside  # noqa: E402
import tandem_trace as tt  # noqa: E402
from test_prof_analysis import TmpDirCase, TraceBuilder, run_tool, write_json  # noqa: E402

US = 1_000_000


def overlap_case():
    """1 rank. Compute: two AIC blocks 0..100 us. Comm: AIV block 0 stores 32 KiB remote in 10 us
    at 0 and in 20 us at 40 (beside), then in 10 us at 100 and 110 (after), ending at 120; its
    scalar waits 30 us (stalled) and polls 1 us beside the compute kernel. AIV block 1 stores
    once, locally, at 5 us for 1 us and ends at 50."""
    b = TraceBuilder(ranks=1, view_end_ps=130 * US)
    for blk in range(2):
        b.x(0, f"AIC{blk} BLOCKS", f"block {blk}", 0, 100 * US, "compute", blk)
        b.x(0, f"AIC{blk} CUBE", "TMATMUL", 0, 100 * US, "compute", blk)
    b.x(0, "AIV0 BLOCKS", "block 0", 0, 120 * US, "comm", 0)
    for ts, dur in ((0, 10), (40, 20), (100, 10), (110, 10)):
        b.x(0, "AIV0 MTE3", "TSTORE", ts * US, dur * US, "comm", 0, bytes=32768, peer=1)
    b.x(0, "AIV0 SCALAR", "TWAIT", 10 * US, 30 * US, "comm", 0, stall=True, signal="q", value=1)
    b.x(0, "AIV0 SCALAR", "TTEST", 60 * US, 1 * US, "comm", 0, signal="q", value=1)
    b.x(0, "AIV1 BLOCKS", "block 1", 0, 50 * US, "comm", 1)
    b.x(0, "AIV1 MTE3", "TSTORE", 5 * US, 1 * US, "comm", 1, bytes=32768)
    return b


class BesideTest(TmpDirCase):
    def analyze(self):
        path = self.path("t.json")
        write_json(path, overlap_case().doc())
        return beside.analyze(tt.load_trace(path))

    def test_split_tail_and_last_block(self):
        rk = self.analyze()["ranks"][0]
        self.assertEqual((rk["split_start_us"], rk["split_end_us"]), (0.0, 100.0))
        comm = rk["streams"][0]
        self.assertEqual((comm["stream"], comm["blocks"], comm["last_block"]), ("comm", 2, 0))
        self.assertAlmostEqual(comm["tail_us"], 20.0)
        self.assertEqual(comm["last_block_after"], {"MTE3 TSTORE remote": {"count": 2, "busy_us": 20.0}})

    def test_durations_beside_and_after(self):
        comm = self.analyze()["ranks"][0]["streams"][0]
        remote_beside = comm["beside"]["MTE3 TSTORE remote"]
        self.assertEqual(remote_beside["count"], 2)
        self.assertAlmostEqual(remote_beside["mean_us"], 15.0)
        self.assertAlmostEqual(remote_beside["max_us"], 20.0)
        # 64 KiB over 30 us of busy time
        self.assertAlmostEqual(remote_beside["gib_s"], 65536 / 30e-6 / 2**30)
        self.assertAlmostEqual(comm["after"]["MTE3 TSTORE remote"]["mean_us"], 10.0)
        self.assertEqual(comm["beside"]["MTE3 TSTORE"]["count"], 1)  # the local store, apart
        self.assertNotIn("MTE3 TSTORE", comm["after"])

    def test_scalar_share_beside(self):
        share = self.analyze()["ranks"][0]["streams"][0]["scalar_share_beside"]
        # 2 blocks x 100 us of span: 30 us stalled, 1 us polling
        self.assertAlmostEqual(share["TWAIT stalled"], 0.15)
        self.assertAlmostEqual(share["TTEST"], 0.005)
        self.assertEqual(share["PIPE_BARRIER"], 0.0)

    def test_cli_text_json_and_errors(self):
        path = self.path("t.json")
        write_json(path, overlap_case().doc())
        out = self.path("o.json")
        p = run_tool(os.path.join(HERE, "beside.py"), path, "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("tail 20.000 us after the split, last block 0", p.stdout)
        with open(out) as f:
            self.assertEqual(json.load(f)["ranks"][0]["rank"], 0)
        self.assertNoTempLeft()
        p = run_tool(os.path.join(HERE, "beside.py"), path, "--stream", "gemm")
        self.assertEqual(p.returncode, 1)
        self.assertIn("no block of stream 'gemm'", p.stderr)
        self.assertIn("streams here: comm, compute", p.stderr)
        p = run_tool(os.path.join(HERE, "beside.py"), path, "--rank", "3")
        self.assertEqual(p.returncode, 1)
        self.assertIn("rank 3 is not in", p.stderr)


if __name__ == "__main__":
    unittest.main()
