"""`./run.sh fidelity --set KEY=VALUE --rows REGEX` (scripts/fidelity.py): a what-if in one command.
The profile gets the entries named (with_values' add_missing: test_fidelity_fit.py), --rows picks
rows by id and reports them alone, and a bad key, value or pattern is a usage error naming the
argument. Runs under unittest (ctest) or pytest; TANDEM_BIN names the simulator
binary (default build/tandem)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from fidelity_test_data import write_allgather_rows  # noqa: E402

BINARY = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))


@unittest.skipUnless(os.access(BINARY, os.X_OK), f"{BINARY} is not built")
class FidelityWhatIfTest(unittest.TestCase):
    """Two tiny AllGather+GEMM rows measured as the shipped profile gives them: 0% off as shipped,
    off once the link is changed with --set."""
    CASES = [(2, 512, 256, 256), (2, 1024, 256, 256)]

    def write_data_set(self, tmp):
        return write_allgather_rows(BINARY, self.CASES, tmp)

    def fidelity(self, cal, *args):
        return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "fidelity.py"), "--binary", BINARY,
                               "--calibration-dir", cal, "--jobs", "2", *args], capture_output=True, text=True)

    def rows_of(self, path):
        with open(path) as f:
            return json.load(f)

    def test_rows_alone_and_a_changed_link(self):
        with tempfile.TemporaryDirectory() as tmp:
            cal = self.write_data_set(tmp)
            report = os.path.join(tmp, "r.json")
            done = self.fidelity(cal, "--rows", "2x1024x", "--json", report)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            got = self.rows_of(report)
            self.assertEqual([r["id"] for r in got["rows"]], ["allgather_gemm/2x1024x256x256/pipelined"])
            self.assertAlmostEqual(got["rows"][0]["error"], 0.0, places=6)
            self.assertEqual(got["profile_changes"], {})
            self.assertNotIn("Fitted parameters", done.stdout)
            self.assertIn("1 rows in %: mean |error| 0.00", done.stdout)

            # Half the link's rate: the link-bound rows take longer; the change is reported.
            done = self.fidelity(cal, "--rows", "allgather", "--set", "interconnect.link_gb_s=9.25", "--json", report)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("interconnect.link_gb_s = 9.25", done.stdout)
            got = self.rows_of(report)
            self.assertEqual(got["profile_changes"], {"interconnect.link_gb_s": 9.25})
            self.assertEqual(len(got["rows"]), 2)
            self.assertTrue(all(r["error"] > 1.0 for r in got["rows"]), got["rows"])

            # An entry the profile does not state (a built mechanism left off) is added.
            done = self.fidelity(cal, "--rows", "allgather", "--set", "interconnect.remote_write_window_bytes=16384")
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

    def test_bad_arguments_are_usage_errors_that_name_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            cal = self.write_data_set(tmp)
            for args, words in [(["--set", "link_gb_s=9"], "--set link_gb_s=9: give section.key=value"),
                                (["--set", "interconnect.link_gb_s=fast"], "the value 'fast' is not a number"),
                                (["--set", "Nope:pipes.x=1"], "Nope is not Ascend910B1"),
                                (["--rows", "("], "--rows (: not a regular expression"),
                                (["--rows", "no_such_row"], "--rows no_such_row: no row matches"),
                                (["--rows", "allgather", "--uncertainty"], "--uncertainty needs the whole report")]:
                done = self.fidelity(cal, *args)
                self.assertEqual(done.returncode, 2, (args, done.stderr))
                self.assertIn(words, done.stderr)
            # A key the simulator does not know: its own message, naming the key.
            done = self.fidelity(cal, "--rows", "allgather", "--set", "pipes.no_such_entry=1")
            self.assertEqual(done.returncode, 1)
            self.assertIn("pipes.no_such_entry: unknown key", done.stderr)


if __name__ == "__main__":
    unittest.main()
