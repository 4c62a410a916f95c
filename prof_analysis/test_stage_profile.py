#!/usr/bin/python3
"""Tests for prof_analysis/stage_profile.py on synthetic traces (TraceBuilder of
test_prof_analysis.py); run with the other prof_analysis tests:

    /usr/bin/python3 -m unittest discover -s prof_analysis -p 'test_*.py'
"""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import stage_profile  # noqa: E402
import tandem_trace as tt  # noqa: E402
from test_prof_analysis import PNG_MAGIC, US, TmpDirCase, TraceBuilder, run_tool, write_json  # noqa: E402

TOOL = os.path.join(HERE, "stage_profile.py")


def moe_case():
    """Rank 0 of a MoE-like run, 0..50 us: front on AIV0 (no item), dispatch of experts 0 and 1
    on AIV0, GMM1 of both on AIC0 and AIC1, combine of expert 0 on AIV1, unpermute on AIV1.
    Rank 1 has one block only (another rank is left alone)."""
    b = TraceBuilder(ranks=2, view_end_ps=60 * US)
    for core, stream in (("AIC0", "v1"), ("AIC1", "v1"), ("AIV0", "v1"), ("AIV1", "v1")):
        b.x(0, f"{core} BLOCKS", "block 0", 2 * US, 48 * US, stream, 0)
    b.x(0, "AIV0 VECTOR", "TSORT", 2 * US, 3 * US, "v1", 0, stage="front")
    b.x(0, "AIV0 SCALAR", "TWAIT", 5 * US, 1 * US, "v1", 0, stage="dispatch", item=0)  # scalar: not counted
    b.x(0, "AIV0 MTE2", "TLOAD", 6 * US, 4 * US, "v1", 0, stage="dispatch", item=0)
    b.x(0, "AIV0 MTE3", "TSTORE", 10 * US, 2 * US, "v1", 0, stage="dispatch", item=0)
    b.x(0, "AIV0 MTE2", "TLOAD", 12 * US, 4 * US, "v1", 0, stage="dispatch", item=1)
    b.x(0, "AIC0 CUBE", "TMATMUL", 12 * US, 8 * US, "v1", 0, stage="gmm1", item=0)
    b.x(0, "AIC1 CUBE", "TMATMUL", 13 * US, 9 * US, "v1", 0, stage="gmm1", item=0)
    b.x(0, "AIC0 CUBE", "TMATMUL", 22 * US, 8 * US, "v1", 0, stage="gmm1", item=1)
    b.x(0, "AIV1 MTE3", "TSTORE", 24 * US, 16 * US, "v1", 0, stage="combine", item=0)
    b.x(0, "AIV1 VECTOR", "TADD", 42 * US, 8 * US, "v1", 0, stage="unpermute")
    b.x(1, "AIV0 BLOCKS", "block 0", 0, 10 * US, "v1", 0)
    b.x(1, "AIV0 MTE2", "TLOAD", 0, 10 * US, "v1", 0, stage="dispatch", item=0)
    return b


class StageProfileTest(TmpDirCase):
    def load(self, b):
        path = self.path("trace.json")
        write_json(path, b.doc())
        return path, tt.load_trace(path)

    def test_windows_cores_and_cover(self):
        _, trace = self.load(moe_case())
        p = stage_profile.profile(trace, 0, ["gmm1", "gmm2"], ["front", "dispatch", "combine", "unpermute"])
        self.assertEqual(p["start_ps"], 2 * US)
        self.assertEqual(p["end_ps"], 50 * US)
        self.assertEqual(p["items"], [0, 1])
        w = p["windows"]
        self.assertEqual(w[("dispatch", 0)][:2], [6 * US, 12 * US])  # data pipes only
        self.assertEqual(w[("dispatch", None)][:2], [6 * US, 16 * US])
        self.assertEqual(w[("gmm1", 0)][:2], [12 * US, 22 * US])
        self.assertEqual(len(w[("gmm1", 0)][2]), 2)  # the envelope over two cores
        self.assertEqual(p["compute_stages"], ["gmm1"])  # gmm2 is not in this run
        # compute (GMM1 windows 12-22 and 22-30) covers 18 of 48 us; exposed 2-12 and 30-50.
        self.assertEqual(p["compute_cover_ps"], 18 * US)
        self.assertEqual(p["exposed"], [(2 * US, 12 * US), (30 * US, 50 * US)])
        # communication windows: front 2-5, dispatch 6-12 and 12-16, combine 24-40, unpermute 42-50
        self.assertEqual(p["comm_ps"], 3 * US + 10 * US + 16 * US + 8 * US)
        self.assertEqual(p["comm_hidden_ps"], 4 * US + 6 * US)  # dispatch 12-16, combine 24-30

    def test_text_json_and_png(self):
        path, _ = self.load(moe_case())
        out_png, out_json = self.path("stages.png"), self.path("stages.json")
        r = run_tool(TOOL, path, "--rank", "0", "-o", out_png, "--json", out_json)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("kernel 48.0 us", r.stdout)
        self.assertIn("compute (gmm1) at work for 37.5% of the kernel's 48.0 us; exposed (no compute stage at work): 0.0-10.0, 28.0-48.0 us",
                      r.stdout)
        self.assertRegex(r.stdout, r"expert\s+dispatch\s+gmm1\s+combine")
        self.assertRegex(r.stdout, r"\n\s+0\s+4-10\s+10-20\s+22-38\n")
        with open(out_png, "rb") as f:
            self.assertEqual(f.read(8), PNG_MAGIC)
        with open(out_json) as f:
            doc = json.load(f)
        self.assertEqual(doc["items"]["1"]["gmm1"], {"start_us": 20.0, "end_us": 28.0, "cores": 1})
        self.assertAlmostEqual(doc["compute_cover_pct"], 37.5)
        self.assertNoTempLeft()

    def test_errors_are_one_line(self):
        path, _ = self.load(moe_case())
        r = run_tool(TOOL, path, "--rank", "5")
        self.assertEqual(r.returncode, 1)
        self.assertIn("--rank 5: not in the trace", r.stderr)
        r = run_tool(TOOL, path, "--compute-stages", "gemm")
        self.assertEqual(r.returncode, 1)
        self.assertIn("--compute-stages: none of gemm is a stage of this trace", r.stderr)
        plain = TraceBuilder(ranks=1)
        plain.x(0, "AIV0 BLOCKS", "block 0", 0, US, "comm", 0)
        plain.x(0, "AIV0 MTE2", "TLOAD", 0, US, "comm", 0)
        write_json(self.path("plain.json"), plain.doc())
        r = run_tool(TOOL, self.path("plain.json"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("no instruction names a stage", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
