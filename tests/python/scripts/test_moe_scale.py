"""scripts/moe_scale.py (the MoE all-to-all and layer at growing EP, the tables the docs quote
through docs/figures.toml) on the smallest EP it takes, and docs_figures.py's heavy entries (the
MoE layer at hundreds of ranks), which a plain check leaves out."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BIN = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))
SCRIPT = os.path.join(ROOT, "scripts", "moe_scale.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import docs_figures  # noqa: E402
import moe_scale  # noqa: E402


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, "--tandem", BIN, *args], capture_output=True, text=True,
                          timeout=300)


class MoeScale(unittest.TestCase):
    def test_alone_prints_a_row_per_op_and_ep_with_its_stages(self):
        r = run("alone", "--ep", "2,4", "--m", "16")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [ln for ln in r.stdout.splitlines() if ln.startswith("| moe_")]
        # Each op's every variant, each EP.
        self.assertEqual([ln.split(" | ")[0:3] for ln in rows],
                         [["| moe_dispatch", "pull", "2"], ["| moe_dispatch", "pull", "4"],
                          ["| moe_dispatch", "push", "2"], ["| moe_dispatch", "push", "4"],
                          ["| moe_combine", "push", "2"], ["| moe_combine", "push", "4"]])
        self.assertIn("front", rows[0])
        self.assertIn("unpermute", rows[4])
        # op:variant picks one.
        r = run("alone", "--ep", "2", "--m", "16", "--ops", "moe_dispatch:push")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [ln for ln in r.stdout.splitlines() if ln.startswith("| moe_")]
        self.assertEqual([ln.split(" | ")[0:3] for ln in rows], [["| moe_dispatch", "push", "2"]])

    def test_the_published_rows_are_compared_where_they_exist(self):
        measured = moe_scale.measured_rows()
        self.assertIn(("moe_dispatch", 8, 128), measured)
        # A time: Tandem / measured; a rate: Tandem's payload over its time / the measured rate.
        self.assertEqual(moe_scale.describe_measured([(100.0, "us", "src")], 50.0, 1e6), "100 us (src; 0.50x)")
        self.assertEqual(moe_scale.describe_measured([(10.0, "GB/s", "src")], 50.0, 1e6), "10 GB/s (src; 2.00x)")

    def test_a_bad_request_is_refused_naming_the_flag(self):
        for ops in ("moe_ffn", "moe_dispatch:scatter"):
            r = run("alone", "--ops", ops)
            self.assertEqual(r.returncode, 2)
            self.assertIn("--ops", r.stderr)
        r = subprocess.run([sys.executable, SCRIPT, "--tandem", "/nonexistent/tandem", "alone"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--tandem", r.stderr)


class HeavyFigures(unittest.TestCase):
    ENTRIES = [{"id": "a", "fast": True}, {"id": "b"}, {"id": "c", "heavy": True}]

    def test_a_check_leaves_the_heavy_entries_out_unless_named_or_asked(self):
        ids = lambda es: [e["id"] for e in es]  # noqa: E731
        self.assertEqual(ids(docs_figures.choose(self.ENTRIES, None, False, False)), ["a", "b"])
        self.assertEqual(ids(docs_figures.choose(self.ENTRIES, None, False, True)), ["a", "b", "c"])
        self.assertEqual(ids(docs_figures.choose(self.ENTRIES, ["c"], False, False)), ["c"])
        self.assertEqual(ids(docs_figures.choose(self.ENTRIES, None, True, True)), ["a"])


if __name__ == "__main__":
    unittest.main()
