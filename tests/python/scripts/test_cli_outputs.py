"""The command line's output files and up-front refusals (docs/RESULTS.md "Output files and exit
codes"): an output path is checked before the run, a symlink or a device at it survives the
write, every error exits 2 with one message naming the flag, and the seed's input files are all
read (every rank's B, and golden.bin as the reference)."""
import json
import os
import stat
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BIN = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))
SMALL = ["-n", "2", "--gm", "256", "--gk", "256", "--gn", "256"]


def tandem(*args, cwd=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


class OutputPaths(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tandem_cli_outputs_")

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def test_json_through_a_symlink_keeps_the_link(self):
        os.symlink("real.json", self.path("link.json"))
        run = tandem(*SMALL, "--timing-only", "--json", self.path("link.json"))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertTrue(os.path.islink(self.path("link.json")))
        with open(self.path("real.json")) as f:
            self.assertIn('"pipelined_us"', f.read())
        self.assertEqual(sorted(os.listdir(self.dir)), ["link.json", "real.json"])

    def test_json_to_a_device_writes_into_it(self):
        run = tandem(*SMALL, "--timing-only", "--json", "/dev/null")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))

    def test_a_directory_is_refused_before_the_run(self):
        run = tandem(*SMALL, "--timing-only", "--json", self.dir)
        self.assertEqual(run.returncode, 2)
        self.assertIn(f"--json {self.dir}: is a directory", run.stderr)
        self.assertNotIn("Running", run.stdout)

    def test_a_file_in_the_path_is_named(self):
        open(self.path("afile"), "w").close()
        run = tandem(*SMALL, "--timing-only", "--trace", self.path("afile", "t.json"))
        self.assertEqual(run.returncode, 2)
        self.assertIn("'" + self.path("afile") + "' is not a directory", run.stderr)
        run = tandem(*SMALL, "--out-dir", self.path("afile", "sub"))
        self.assertEqual(run.returncode, 2)
        self.assertIn("--out-dir", run.stderr)
        self.assertIn("exists and is not a directory", run.stderr)
        self.assertNotIn("internal error", run.stderr)

    def test_json_and_trace_on_one_file_are_refused(self):
        same = self.path("same.json")
        run = tandem(*SMALL, "--timing-only", "--json", same, "--trace", same)
        self.assertEqual(run.returncode, 2)
        self.assertIn("the same file", run.stderr)
        self.assertFalse(os.path.exists(same))

    def test_a_command_line_that_cannot_parse_exits_2(self):
        for args in (["-n", "abc"], ["-n", "2", "-n", "4"], ["--no-such-flag"]):
            run = tandem(*args)
            self.assertEqual(run.returncode, 2, args)
            self.assertTrue(run.stderr.startswith("[ERROR]"), run.stderr)


class SeedInputFiles(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tandem_cli_inputs_")
        run = tandem(*SMALL, "--write-inputs", "--out-dir", self.dir)
        self.assertEqual(run.returncode, 0, run.stderr)

    def run_from_files(self):
        return tandem(*SMALL, "--input-dir", self.dir, "--out-dir", os.path.join(self.dir, "out"))

    def test_the_files_written_verify(self):
        run = self.run_from_files()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("Verification PASSED", run.stdout)

    def test_golden_bin_is_the_reference(self):
        with open(os.path.join(self.dir, "golden.bin"), "r+b") as f:
            f.write(b"\x00" * 4096)  # the first 1024 fp32 references zeroed
        run = self.run_from_files()
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("Verification FAILED", run.stdout)

    def test_every_ranks_b_is_read(self):
        with open(os.path.join(self.dir, "pe_1_b.bin"), "r+b") as f:
            f.write(b"\x00\x45")  # fp16 5.0 in the first element (the inputs are 1..4)
        run = self.run_from_files()
        self.assertEqual(run.returncode, 2)
        self.assertIn("pe_1_b.bin differs from pe_0_b.bin", run.stderr)


class RefusedBeforeTheRun(unittest.TestCase):
    def test_moe_ffn_k_past_the_combine_ub(self):
        run = tandem("--op", "moe_ffn", "-n", "2", "--gm", "16", "--gk", "13312", "--gn", "256", "--timing-only")
        self.assertEqual(run.returncode, 2)
        self.assertIn("--gk 13312", run.stderr)
        self.assertIn("nearest valid: 13056", run.stderr)

    def test_a_profile_value_beyond_any_chip(self):
        src = os.path.join(ROOT, "sim", "profiles", "Ascend910B1.toml")
        with tempfile.TemporaryDirectory() as d:
            dst = os.path.join(d, "Ascend910B1.toml")
            with open(src) as f:
                text = f.read()
            start = text.index("launch_host_us = { value = ") + len("launch_host_us = { value = ")
            end = text.index(",", start)
            with open(dst, "w") as f:
                f.write(text[:start] + "1e13" + text[end:])
            run = tandem(*SMALL, "--timing-only", "--profile", dst)
            self.assertEqual(run.returncode, 2)
            self.assertIn("host.launch_host_us", run.stderr)
            self.assertIn("must be in [0, 1000000] us", run.stderr)

    def test_the_summary_comes_before_the_files(self):
        # The JSON's directory taken away during the run would lose it, not the summary: the
        # summary is printed first. Here: the summary precedes the trace's line, which names it.
        with tempfile.TemporaryDirectory() as d:
            run = tandem(*SMALL, "--timing-only", "--trace", os.path.join(d, "t.json"))
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertLess(run.stdout.index("Pipelined:"), run.stdout.index("Trace:"))
            self.assertIn("every rank of 2", run.stdout)


class ListOpsJson(unittest.TestCase):
    def test_every_op_and_variant_of_the_text_is_in_the_json(self):
        text = tandem("--list-ops").stdout
        run = tandem("--list-ops", "--json", "/dev/stdout")
        self.assertEqual(run.returncode, 0, run.stderr)
        ops = json.loads(run.stdout)["ops"]
        self.assertEqual([op["name"] for op in ops], [l.split(":")[0] for l in text.splitlines() if l and l[0] != " "])
        variants = [v["name"] for op in ops for v in op["variants"]]
        self.assertEqual(variants, [l.split()[1].rstrip(":") for l in text.splitlines() if l.startswith("  --variant ")])
        for op in ops:
            for v in op["variants"]:
                self.assertTrue(v["test_shapes"], (op["name"], v["name"]))
                self.assertIn(v["sharding"]["a"], ("replicated", "rows", "cols"))


class Diff(unittest.TestCase):
    def test_two_variants_and_the_same_run_twice(self):
        with tempfile.TemporaryDirectory() as d:
            a, b, c = (os.path.join(d, n) for n in ("a.json", "b.json", "c.json"))
            for variant, path in (("two_shot", a), ("ring", b), ("two_shot", c)):
                run = tandem("--op", "matmul_all_reduce", "--variant", variant, *SMALL, "--timing-only", "--json", path)
                self.assertEqual(run.returncode, 0, run.stderr)
            run = tandem("diff", a, b)
            self.assertEqual(run.returncode, 1, run.stderr)  # as diff(1): something moved
            self.assertIn("runs differ in: variant two_shot -> ring", run.stdout)
            self.assertIn("figures that moved", run.stdout)
            line = next(l for l in run.stdout.splitlines() if l.strip().startswith("pipelined_us "))
            want_a, want_b = (json.load(open(p))["pipelined_us"] for p in (a, b))
            self.assertIn(f"({want_b - want_a:+.6g}, {(want_b - want_a) / want_a * 100:+.2f}%)", line)
            same = tandem("diff", a, c)
            self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
            self.assertIn("the same run", same.stdout)
            bad = tandem("diff", a)
            self.assertEqual(bad.returncode, 2)
            self.assertEqual(len(bad.stderr.strip().splitlines()), 1)
            self.assertIn("diff takes two results JSONs", bad.stderr)


class RunShFastPath(unittest.TestCase):
    def test_a_current_build_runs_the_binary_at_once(self):
        # A build directory whose binary is current (the stamp run.sh leaves after a build, newer
        # than every input): run.sh neither installs, configures nor builds; it runs the binary.
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "tandem")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho \"fake tandem $*\"\n")
            os.chmod(fake, 0o755)
            open(os.path.join(d, "CMakeCache.txt"), "w").close()
            open(os.path.join(d, ".run_sh_built"), "w").close()
            env = dict(os.environ, TANDEM_BUILD_DIR=d)
            run = subprocess.run([os.path.join(ROOT, "run.sh"), "-n", "2", "--quiet"], capture_output=True, text=True,
                                 env=env, timeout=60)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(run.stdout, "fake tandem -n 2 --quiet\n")
            self.assertEqual(run.stderr, "")
            self.assertEqual(sorted(os.listdir(d)), [".run_sh_built", "CMakeCache.txt", "tandem"])


if __name__ == "__main__":
    unittest.main()
