"""scripts/speed_ratios.py: the cases it builds from the binary's own op list (every op and
variant at its 64-rank scale shape, none listed by hand), the stored baseline it reads, and its
refusals. The timed runs themselves take minutes at 64 ranks and are not run here."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BIN = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))
SCRIPT = os.path.join(ROOT, "scripts", "speed_ratios.py")


def load_script():
    spec = importlib.util.spec_from_file_location("speed_ratios", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class SpeedRatios(unittest.TestCase):
    def test_ops64_is_every_variant_the_binary_lists_at_64_ranks(self):
        sr = load_script()
        listed = subprocess.run([BIN, "--list-ops"], capture_output=True, text=True, check=True).stdout
        cases = sr.cases_for(["ops64"], BIN)
        names = [name for name, _, _ in cases]
        self.assertEqual(len(names), len(set(names)))
        self.assertIn("matmul_all_scatter/specialized", names)
        for name, args, limit in cases:
            op, variant = name.split("/")
            self.assertIn(f"--variant {variant}", listed)
            self.assertEqual(args[:6], ["-n", "64", "--op", op, "--variant", variant])
            self.assertEqual(limit, 1.25)
        # matmul_all_scatter's scale shape (kernels/matmul_all_scatter/op.cpp)
        args = dict(zip(cases[names.index("matmul_all_scatter/specialized")][1][0::2],
                        cases[names.index("matmul_all_scatter/specialized")][1][1::2]))
        self.assertEqual((args["--gm"], args["--gk"], args["--gn"]), ("4096", "4096", "16384"))

    def test_a_recorded_baseline_reads_back(self):
        sr = load_script()
        with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
            f.write("# baseline figures\nmesh64\t7.500\t4.250\t75000\ngemm/tiled\t1.000\t0.600\t64000\n")
        try:
            self.assertEqual(sr.read_baseline(f.name), {"mesh64": (7.5, 4.25, 75000), "gemm/tiled": (1.0, 0.6, 64000)})
        finally:
            os.unlink(f.name)

    def test_the_stored_reference_holds_every_case_the_reference_build_runs(self):
        # bench/reference_d0e0609.tsv, recorded by --base REF/tandem --record: what a run with
        # neither --base nor --baseline compares with. The reference build has the 16 variants of
        # the ops before the GEMM and MoE ops, and the 64-rank mesh.
        sr = load_script()
        stored = sr.read_baseline(sr.STORED_REFERENCE)
        names = {name for name, _, _ in sr.cases_for(["ops64"], BIN)}
        reference_ops = ("allgather_gemm", "matmul_all_scatter", "all_gather_matmul", "matmul_all_reduce",
                         "matmul_all_gather", "matmul_reduce_scatter")
        expected = {n for n in names if n.split("/")[0] in reference_ops and n != "matmul_all_reduce/ascend_subtile"}
        self.assertEqual(set(stored) - {"mesh64"}, expected)
        self.assertIn("mesh64", stored)
        for name, (cpu, wall, rss) in stored.items():
            self.assertGreater(cpu, 0, name)
            self.assertGreater(wall, 0, name)
            self.assertGreater(rss, 10_000, name)  # KiB
        with open(sr.STORED_REFERENCE) as f:
            self.assertIn("recorded", f.read())
        self.assertTrue(os.path.isfile(sr.REFERENCE_WIRING))

    def test_refusals_name_what_is_wrong(self):
        def run(*args):
            return subprocess.run([sys.executable, SCRIPT, "--new", BIN, *args], capture_output=True, text=True)
        both = run("--base", BIN, "--baseline", "x.tsv")
        self.assertNotEqual(both.returncode, 0)
        self.assertIn("one of --base BINARY or --baseline FILE, not both", both.stderr)
        missing = run("--baseline", "/nonexistent.tsv")
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn("--baseline /nonexistent.tsv: no such file", missing.stderr)
        record = run("--baseline", load_script().STORED_REFERENCE, "--record", "x.tsv")
        self.assertNotEqual(record.returncode, 0)
        self.assertIn("--record writes the figures of --base BINARY", record.stderr)
        profile = run("--base", BIN, "--new-profile", "/nonexistent.toml")
        self.assertNotEqual(profile.returncode, 0)
        self.assertIn("--new-profile /nonexistent.toml", profile.stderr)
        case = run("--base", BIN, "--cases", "mesh65")
        self.assertNotEqual(case.returncode, 0)
        self.assertIn("unknown case 'mesh65'", case.stderr)


if __name__ == "__main__":
    unittest.main()
