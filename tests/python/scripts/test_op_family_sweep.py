"""scripts/op_family_sweep.py on tiny shapes: every op and variant of --list-ops gets a row per
shape, the table names the best variant of each op and shape, a refused shape carries the op's
reason, and the chart is written. Runs under unittest (ctest) or pytest; TANDEM_BIN names the
simulator binary (default build/tandem)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "scripts", "op_family_sweep.py")
BINARY = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))


class OpFamilySweepScript(unittest.TestCase):
    def test_table_and_chart_cover_every_variant(self):
        listing = subprocess.run([BINARY, "--list-ops"], check=True, capture_output=True, text=True).stdout
        variants = [l.split()[1] for l in listing.splitlines() if l.startswith("  --variant ")]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "family")
            # 500 rows: allgather_gemm refuses it (whole row groups per rank), padded ops run.
            proc = subprocess.run([sys.executable, SCRIPT, "--tandem", BINARY, "--ranks", "2", "--jobs", "2",
                                   "--shapes", "512x512x512,500x512x512", "--out", out],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertRegex(proc.stderr, r"sweep: \d+/\d+ done")  # the sweep's progress, passed on as it comes
            with open(out + ".md") as f:
                rows = [l for l in f.read().splitlines() if l.startswith("| ") and not l.startswith("| op ")]
            self.assertEqual(len(rows), 2 * len(variants), rows)
            ops = {l.split(":")[0] for l in listing.splitlines() if l and not l.startswith(" ")}
            for shape in ("512x512x512", "500x512x512"):
                for op in ops:
                    in_op = [r for r in rows if f"| {op} | {shape} |" in r]
                    ran = [r for r in in_op if "refused" not in r]
                    if ran:
                        self.assertEqual(sum("| best |" in r for r in ran), 1, in_op)
            refused = [r for r in rows if "refused" in r]
            self.assertTrue(any("allgather_gemm | 500x512x512" in r and "--gm 500" in r for r in refused), refused)
            with open(out + ".json") as f:
                self.assertEqual(len(json.load(f)), 2 * len(variants) - len(refused))
            self.assertGreater(os.path.getsize(out + ".png"), 1000)


if __name__ == "__main__":
    unittest.main()
