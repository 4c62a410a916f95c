"""./run.sh --help is the binary's --help after the commands run.sh adds, so the two cannot drift
(the flags are the parameter schema's, host/params/param_schema.cpp)."""
import os
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BIN = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))


class RunShHelp(unittest.TestCase):
    def test_help_ends_with_the_binarys_help(self):
        binary = subprocess.run([BIN, "--help"], capture_output=True, text=True, check=True).stdout
        env = dict(os.environ, TANDEM_BUILD_DIR=os.path.dirname(BIN))
        script = subprocess.run([os.path.join(ROOT, "run.sh"), "--help"], capture_output=True, text=True, env=env)
        self.assertEqual(script.returncode, 0, script.stderr)
        self.assertTrue(script.stdout.endswith(binary), script.stdout[-400:])
        self.assertIn("./run.sh test", script.stdout)  # what run.sh adds
        for flag in ("--gm", "--compute-blocks", "--gemm_sms", "--sweep", "--chunk-tiles"):
            self.assertIn(flag, binary)


if __name__ == "__main__":
    unittest.main()
