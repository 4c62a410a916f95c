"""`./run.sh fidelity --uncertainty` (scripts/calibration/uncertainty.py): the local refit of a fit
under an assumption, the variants, the summary, the rules on [[assumption]] entries, and one end-to-
end report on a tiny data set. Runs under unittest (ctest) or pytest; TANDEM_BIN names the simulator
binary (default build/tandem)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from calibration.datasets import Row, Run  # noqa: E402
from calibration.fit import FitSpec, run_fit  # noqa: E402
from calibration.uncertainty import (Target, Variant, calibration_variants, parse_assumptions,  # noqa: E402
                                     refit_near, summarize)
from fidelity_test_data import write_allgather_rows  # noqa: E402

BINARY = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))
PROFILE = '[pipes]\nx = { value = 2, basis = "calibrated" }\n[host]\nlag = { value = 5, basis = "assumed" }\n'


class NoSim:
    """Stands in for the simulator where errors_of computes the errors itself."""
    def run_many(self, requests):
        return [None for _ in requests]


def rows_measured(values):
    return {f"r{i}": Row(f"r{i}", "synthetic", m, Run("none", (i,)), "t") for i, m in enumerate(values)}


class RefitTest(unittest.TestCase):
    # Simulated time of every row: 100 / x + lag. Measured: 50 (x = 2 at lag 0).
    rows = rows_measured([50.0, 50.0])
    spec = FitSpec(["pipes.x"], [[1.0, 1.5, 2.0, 2.5, 3.0, 4.0]], ["r0", "r1"])

    def errors_of(self, rs, values):
        x, lag = values.get("pipes.x", 2.0), values.get("host.lag", 0.0)
        self.evaluated.add(x)
        return {r.id: (100.0 / x + lag - r.measured_us) / r.measured_us * 100 for r in rs}

    def setUp(self):
        self.evaluated = set()

    def test_the_fit_follows_an_assumption_by_grid_steps(self):
        rs = list(self.rows.values())
        # lag 10: 100/x = 40 wants x = 2.5, one step from the optimum.
        refit = refit_near(self.spec, rs, NoSim(), self.errors_of, (2.0,), {"host.lag": 10.0})
        self.assertEqual(refit.point, (2.5,))
        self.assertAlmostEqual(refit.fit_error_pct, 0.0)
        self.assertFalse(refit.at_grid_edge)
        # lag 25: 100/x = 25 wants x = 4, the grid's last point: the search walks there and says so.
        refit = refit_near(self.spec, rs, NoSim(), self.errors_of, (2.0,), {"host.lag": 25.0})
        self.assertEqual(refit.point, (4.0,))
        self.assertTrue(refit.at_grid_edge)

    def test_no_change_keeps_the_optimum_and_costs_only_its_neighbours(self):
        refit = refit_near(self.spec, list(self.rows.values()), NoSim(), self.errors_of, (2.0,), {"host.lag": 0.0})
        self.assertEqual(refit.point, (2.0,))
        self.assertEqual(self.evaluated, {1.5, 2.0, 2.5})

    def test_two_parameters_step_one_at_a_time(self):
        spec = FitSpec(["pipes.x", "pipes.y"], [[1.0, 2.0, 3.0], [0.0, 5.0, 10.0]], ["r0"])

        def errors_of(rs, values):  # simulated 100 / x + y, measured 60: (2, 10) is exact
            return {r.id: (100.0 / values["pipes.x"] + values["pipes.y"] - 60.0) / 60.0 * 100 for r in rs}
        refit = refit_near(spec, [self.rows["r0"]], NoSim(), errors_of, (2.0, 0.0), {})
        self.assertEqual(refit.point, (2.0, 10.0))


class VariantsTest(unittest.TestCase):
    def test_calibration_variants_are_the_distinct_leave_one_out_points(self):
        rows = rows_measured([50.0, 50.0, 25.0])  # r2 asks x = 4, the others x = 2

        def errors_of(rs, values):
            return {r.id: (100.0 / values["pipes.x"] - r.measured_us) / r.measured_us * 100 for r in rs}
        res = run_fit(FitSpec(["pipes.x"], [[2.0, 3.0, 4.0]], ["r0", "r1", "r2"]), rows, None, {"pipes.x": 2.0},
                      errors_of)
        self.assertEqual(res.optimum, (2.0,))
        variants = calibration_variants([res])
        # Without r0 (or r1) the other two fit x = 4 (mean errors 50, 33, 25% at 2, 3, 4); without
        # r2 they fit 2, the optimum, which is no variant: one variant, x = 4.
        self.assertEqual([v.values for v in variants], [{"pipes.x": 4.0}])
        self.assertTrue(all(v.source == "calibration" for v in variants))

    def test_summary_ranges_and_drivers(self):
        t = Target("f", Run("none", ()), "pipelined", measured=110.0)
        a_lo = Variant("assumption", "host.lag = 1", "host.lag", {"host.lag": 1})
        a_hi = Variant("assumption", "host.lag = 9", "host.lag", {"host.lag": 9})
        b_hi = Variant("assumption", "pipes.z = 3", "pipes.z", {"pipes.z": 3})
        c = Variant("calibration", "pipes.x = 3", "pipes.x", {"pipes.x": 3})
        entry = {"value": 100.0, "by_variant": [(a_lo, 95.0), (a_hi, 108.0), (b_hi, 101.0), (c, 99.0)]}
        s = summarize(t, entry)
        self.assertEqual(s["calibration"], (99.0, 100.0))
        self.assertEqual(s["assumption"], (95.0, 108.0))
        self.assertEqual(s["drivers"][0], ("host.lag", -5.0, 8.0))
        self.assertEqual(s["drivers"][1][0], "pipes.z")
        # A ratio moves in points, not in % of itself.
        s = summarize(t, {"value": 50.0, "by_variant": [(a_lo, 48.0), (a_hi, 53.0)]}, relative=False)
        self.assertEqual(s["drivers"], [("host.lag", -2.0, 3.0)])


class AssumptionSpecTest(unittest.TestCase):
    def parse(self, entries, fitted=()):
        return parse_assumptions({"assumption": entries}, PROFILE, set(fitted))

    def test_a_valid_entry(self):
        (a,) = self.parse([{"parameter": "host.lag", "low": 2, "high": 10, "why": "not measured"}])
        self.assertEqual((a.parameter, a.low, a.high, a.why), ("host.lag", 2.0, 10.0, "not measured"))

    def test_bad_entries_are_refused_with_the_reason(self):
        with self.assertRaisesRegex(ValueError, "outside its range"):
            self.parse([{"parameter": "host.lag", "low": 6, "high": 10}])
        with self.assertRaisesRegex(ValueError, "must be below"):
            self.parse([{"parameter": "host.lag", "low": 10, "high": 2}])
        with self.assertRaisesRegex(ValueError, "fitted parameter"):
            self.parse([{"parameter": "pipes.x", "low": 1, "high": 3}], fitted=["pipes.x"])
        with self.assertRaisesRegex(ValueError, "listed twice"):
            self.parse([{"parameter": "host.lag", "low": 2, "high": 10}] * 2)
        with self.assertRaisesRegex(ValueError, "needs parameter, low and high"):
            self.parse([{"parameter": "host.lag", "low": 2}])
        with self.assertRaisesRegex(Exception, "no entry"):
            self.parse([{"parameter": "host.nope", "low": 2, "high": 10}])

    def test_the_shipped_list_parses(self):
        import tomllib
        with open(os.path.join(ROOT, "sim", "calibration", "fits_Ascend910B1.toml"), "rb") as f:
            doc = tomllib.load(f)
        with open(os.path.join(ROOT, "sim", "profiles", "Ascend910B1.toml")) as f:
            profile = f.read()
        with open(os.path.join(ROOT, "sim", "profiles", "Ascend910_9392.toml")) as f:
            a3 = f.read()
        fitted = {k for fit in doc["fit"] for k in fit["parameters"]}
        names = {a.parameter for a in parse_assumptions(doc, profile, fitted, {"Ascend910_9392": a3})}
        self.assertIn("interconnect.link_latency_ns", names)
        self.assertIn("Ascend910_9392:interconnect.link_latency_ns", names)

    def test_a_derived_profiles_entry(self):
        derived = {"Other": "[net]\nhop = { value = 5 }\n"}
        (a,) = parse_assumptions({"assumption": [{"parameter": "Other:net.hop", "low": 1, "high": 9}]}, PROFILE,
                                 set(), derived)
        self.assertEqual((a.parameter, a.low, a.high), ("Other:net.hop", 1.0, 9.0))
        with self.assertRaisesRegex(ValueError, "outside its range"):
            parse_assumptions({"assumption": [{"parameter": "Other:net.hop", "low": 6, "high": 9}]}, PROFILE, set(),
                              derived)
        with self.assertRaisesRegex(ValueError, "no derived profile Nope"):
            parse_assumptions({"assumption": [{"parameter": "Nope:net.hop", "low": 1, "high": 9}]}, PROFILE, set(),
                              derived)


@unittest.skipUnless(os.access(BINARY, os.X_OK), f"{BINARY} is not built")
class EndToEndTest(unittest.TestCase):
    """fidelity.py --uncertainty on two tiny AllGather+GEMM rows whose 'measurements' are the shipped
    profile's own figures, one fit (a one-point grid: the refit itself is tested above), one assumption and
    one prediction."""
    CASES = [(2, 512, 256, 256), (2, 1024, 256, 256)]

    def write_data_set(self, tmp, extra_assumption=""):
        """A calibration folder: the two rows measured as the model gives them, one fit, one
        prediction, the hop latency as an assumption (and `extra_assumption`, TOML, if given)."""
        cal = write_allgather_rows(BINARY, self.CASES, tmp)
        with open(os.path.join(cal, "fits_Ascend910B1.toml"), "w") as f:
            f.write('[[fit]]\nparameters = ["interconnect.link_gb_s"]\ngrid = [[18.5]]\n'
                    'rows = ["allgather_gemm/2x512x256x256/pipelined", "allgather_gemm/2x1024x256x256/pipelined"]\n'
                    '[[assumption]]\nparameter = "interconnect.link_latency_ns"\nlow = 250\nhigh = 2000\n'
                    'why = "test range"\n' + extra_assumption)
        with open(os.path.join(cal, "predictions_Ascend910B1.csv"), "w") as f:
            f.write("soc,family,case,args,quantities\n"
                    "Ascend910B1,allgather_gemm,4x512x256x256,-n 4 --gm 512 --gk 256 --gn 256,pipelined\n")
        return cal

    def fidelity(self, cal, *args):
        return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "fidelity.py"), "--binary", BINARY,
                               "--calibration-dir", cal, "--jobs", "2", *args], capture_output=True, text=True)

    def test_assumption_varies_only_the_parameters_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            cal = self.write_data_set(tmp, '[[assumption]]\nparameter = "pipes.twait_poll_cycles"\nlow = 50\n'
                                           'high = 400\nwhy = "second"\n')
            report = os.path.join(tmp, "f.json")
            done = self.fidelity(cal, "--uncertainty", "--assumption", "pipes.twait_poll_cycles", "--json", report)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("uncertainty: assumption 2/2: pipes.twait_poll_cycles = 400", done.stderr)
            self.assertNotIn("interconnect.link_latency_ns =", done.stderr)
            with open(report) as f:
                self.assertEqual([a["parameter"] for a in json.load(f)["uncertainty"]["assumptions"]],
                                 ["pipes.twait_poll_cycles"])
            done = self.fidelity(cal, "--uncertainty", "--assumption", "pipes.no_such_key")
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("--assumption pipes.no_such_key: not an assumed parameter", done.stderr)
            self.assertIn("interconnect.link_latency_ns, pipes.twait_poll_cycles", done.stderr)
            done = self.fidelity(cal, "--assumption", "pipes.twait_poll_cycles")
            self.assertEqual(done.returncode, 2)
            self.assertIn("--assumption needs --uncertainty", done.stderr)

    def test_an_assumption_of_a_derived_profile_prints_its_own_value(self):
        # An assumed entry of a profile that derives from the report's (here the A3 die's hop, which
        # its prediction runs on) is named "Soc:section.key"; the report prints the value that profile
        # states, after every end has been simulated.
        with tempfile.TemporaryDirectory() as tmp:
            cal = self.write_data_set(tmp, '[[assumption]]\nparameter = "Ascend910_9392:interconnect.link_latency_ns"\n'
                                           'low = 500\nhigh = 1300\nwhy = "the switch hop"\n')
            with open(os.path.join(cal, "predictions_Ascend910_9392.csv"), "w") as f:
                f.write("soc,family,case,args,quantities\n"
                        "Ascend910_9392,allgather_gemm,2x512x256x256,-n 2 --gm 512 --gk 256 --gn 256,pipelined\n")
            done = self.fidelity(cal, "--uncertainty", "--assumption", "Ascend910_9392:interconnect.link_latency_ns")
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("Ascend910_9392:interconnect.link_latency_ns 500..1300 (profile 650): the switch hop",
                          done.stdout)

    def test_the_report_shows_each_end_and_every_target(self):
        with tempfile.TemporaryDirectory() as tmp:
            cal = self.write_data_set(tmp)
            report = os.path.join(tmp, "f.json")
            done = self.fidelity(cal, "--uncertainty", "--json", report)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("Uncertainty: how far each figure moves", done.stdout)
            self.assertIn("interconnect.link_latency_ns 250..2000 (profile 1000): test range", done.stdout)
            self.assertIn("uncertainty: assumption 2/2: interconnect.link_latency_ns = 2000", done.stderr)
            with open(report) as f:
                unc = json.load(f)["uncertainty"]
            (a,) = unc["assumptions"]
            self.assertEqual([e["value"] for e in a["ends"]], [250, 2000])
            (t,) = unc["targets"]  # the prediction; both rows are fitted
            self.assertEqual(t["id"], "allgather_gemm/4x512x256x256 pipelined")
            lo, hi = t["assumption_range"]
            self.assertLessEqual(lo, t["value"])
            self.assertGreaterEqual(hi, t["value"])
            # A hop's latency moves a 4-rank transfer: the range is not a point.
            self.assertLess(lo, hi)
            self.assertEqual([v["variant"] for v in t["by_variant"] if v["source"] == "assumption"],
                             ["interconnect.link_latency_ns = 250", "interconnect.link_latency_ns = 2000"])


if __name__ == "__main__":
    unittest.main()
