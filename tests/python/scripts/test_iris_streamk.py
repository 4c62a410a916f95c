"""scripts/iris_streamk.py (the Iris Stream-K seed's flags) on a tiny shape: --validate --benchmark
verifies and writes the results JSON for each --algorithm. Runs under unittest (ctest) or pytest;
TANDEM_BIN names the simulator binary (default build/tandem)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "scripts", "iris_streamk.py")
BINARY = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))


class IrisStreamKScript(unittest.TestCase):
    def run_script(self, out, *args):
        return subprocess.run([sys.executable, SCRIPT, "--num_ranks", "2", "--binary", BINARY, "-m", "320", "-n", "1280",
                               "-k", "1024", "--BLK_M", "64", "--BLK_N", "128", "--output_file", out, *args],
                              capture_output=True, text=True)

    def test_every_algorithm_validates_and_writes_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            for algorithm in ("one_shot", "all_reduce", "all_scatter"):
                out = os.path.join(tmp, algorithm + ".json")
                proc = self.run_script(out, "--algorithm", algorithm, "--validate", "--benchmark", "--gemm_sms", "20")
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertIn("PASS", proc.stdout)
                with open(out) as f:
                    results = json.load(f)
                self.assertEqual(results["schedule"], "stream_k")
                self.assertEqual(results["verification"], "passed")
                self.assertEqual(results["iris_args"]["algorithm"], algorithm)
                self.assertGreater(results["pipelined_us"], 0)

    def test_unsupported_datatype_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = self.run_script(os.path.join(tmp, "x.json"), "--datatype", "fp32", "--benchmark")
            self.assertNotEqual(proc.returncode, 0)
            self.assertIn("fp16 or bf16", proc.stderr)


if __name__ == "__main__":
    unittest.main()
