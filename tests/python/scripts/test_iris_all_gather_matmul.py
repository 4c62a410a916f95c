"""scripts/iris_all_gather_matmul.py on a tiny dataset: -v verifies every shape, -b writes one
results JSON per shape and variant. Runs under unittest (ctest) or pytest; TANDEM_BIN names the
simulator binary (default build/tandem)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "scripts", "iris_all_gather_matmul.py")
BINARY = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))
TILES = ["--", "--base-m", "64", "--base-n", "64", "--compute-blocks", "2", "--comm-blocks", "2"]


class IrisAllGatherMatmulScript(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dataset = os.path.join(self.tmp.name, "shapes.json")
        with open(self.dataset, "w") as f:
            json.dump([{"m": 128, "n": 128, "k": 256}, {"m": 100, "n": 70, "k": 512}], f)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, "--num_ranks", "2", "--dataset", self.dataset, "--binary", BINARY,
                               "--results", os.path.join(self.tmp.name, "results"), *args, *TILES],
                              capture_output=True, text=True)

    def test_validate_passes_every_shape(self):
        proc = self.run_script("-v", "--variant", "all")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.count("PASS"), 6, proc.stdout)

    def test_benchmark_writes_one_json_per_shape(self):
        proc = self.run_script("-b", "--variant", "pull")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        files = sorted(os.listdir(os.path.join(self.tmp.name, "results")))
        self.assertEqual(len(files), 2, files)
        for name in files:
            with open(os.path.join(self.tmp.name, "results", name)) as f:
                r = json.load(f)
            self.assertEqual(r["op"], "all_gather_matmul")
            self.assertEqual(r["data_mode"], "timing-only")
            self.assertGreater(r["comm_bytes_per_rank"], r["allgather_bytes"])  # pull re-reads per N tile

    def test_bad_shape_is_reported(self):
        with open(self.dataset, "w") as f:
            json.dump([{"m": 128, "n": 128, "k": 100}], f)
        proc = self.run_script("-v")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("--gk 100", proc.stdout)


if __name__ == "__main__":
    unittest.main()
