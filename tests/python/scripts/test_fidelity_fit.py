"""The fidelity report's fitting (scripts/calibration/fit.py) on a synthetic model: the fitted
point, the leave-one-out points and errors, the sensitivity, and the rules on fit specifications."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts"))

from calibration.datasets import Row, Run, error_of, error_unit, load_predictions, load_rows, unit_of  # noqa: E402
from calibration.fit import FitSpec, parse_specs, run_fit  # noqa: E402
from calibration.simulate import profile_value, with_values  # noqa: E402


def synthetic_rows(measured):
    return {f"r{i}": Row(f"r{i}", "synthetic", m, Run("none", (i,)), "t") for i, m in enumerate(measured)}


class FitTest(unittest.TestCase):
    def test_optimum_and_leave_one_out(self):
        # Simulated time of row i at parameter x: 100 * (i + 1) / x. Rows 0-2 agree on x = 2,
        # row 3 asks x = 4 (an outlier among the fitted rows).
        rows = synthetic_rows([50.0, 100.0, 150.0, 100.0])

        def errors_of(rs, values):
            x = values["p.x"]
            return {r.id: (100.0 * (int(r.id[1:]) + 1) / x - r.measured_us) / r.measured_us * 100 for r in rs}

        spec = FitSpec(["p.x"], [[1.0, 2.0, 3.0, 4.0]], ["r0", "r1", "r2", "r3"])
        res = run_fit(spec, rows, None, {"p.x": 2.0}, errors_of)
        self.assertEqual(res.optimum, (2.0,))
        self.assertAlmostEqual(res.table[(2.0,)]["r3"], 100.0)
        # Without r3 the rest still give 2.0: r3's leave-one-out error is its full +100%.
        self.assertEqual(res.loo_point["r3"], (2.0,))
        self.assertAlmostEqual(res.loo_error["r3"], 100.0)
        # Without r0 the fit is still 2 (r1, r2 exact; r3 off): r0's LOO error is 0.
        self.assertAlmostEqual(res.loo_error["r0"], 0.0)
        # Sensitivity at 0.9x and 1.1x of the profile's value, on every row.
        self.assertEqual([(k, f) for k, f, _, _ in res.sensitivity], [("p.x", 0.9), ("p.x", 1.1)])
        self.assertAlmostEqual(res.sensitivity[0][3]["r0"], (100 / 1.8 - 50) / 50 * 100)

    def test_specs_need_known_disjoint_rows(self):
        ids = {"a", "b", "c"}
        specs, outliers = parse_specs({"fit": [{"parameters": ["s.x"], "grid": [[1, 2]], "rows": ["a", "b"]}],
                                       "outlier": [{"row": "c", "why": "once"}]}, ids)
        self.assertEqual(len(specs), 1)
        self.assertEqual(outliers, {"c": "once"})
        with self.assertRaisesRegex(ValueError, "no such row"):
            parse_specs({"fit": [{"parameters": ["s.x"], "grid": [[1]], "rows": ["z"]}]}, ids)
        with self.assertRaisesRegex(ValueError, "disjoint"):
            parse_specs({"fit": [{"parameters": ["s.x"], "grid": [[1]], "rows": ["a"]},
                                 {"parameters": ["s.y"], "grid": [[1]], "rows": ["a"]}]}, ids)
        with self.assertRaisesRegex(ValueError, "one grid per parameter"):
            parse_specs({"fit": [{"parameters": ["s.x", "s.y"], "grid": [[1]], "rows": ["a"]}]}, ids)
        with self.assertRaisesRegex(ValueError, "also a fitted row"):
            parse_specs({"fit": [{"parameters": ["s.x"], "grid": [[1]], "rows": ["a"]}],
                         "outlier": [{"row": "a"}]}, ids)


class ProfileEditTest(unittest.TestCase):
    TEXT = '[chip]\nl2_gib_s = { value = 3750, basis = "calibrated", source = "x" }\n' \
           '[pipes]\nl2_gib_s = { value = 7, source = "same name, other section" }\n'

    def test_values_are_replaced_in_their_section_only(self):
        out = with_values(self.TEXT, {"chip.l2_gib_s": 3600.0})
        self.assertEqual(profile_value(out, "chip.l2_gib_s"), 3600.0)
        self.assertEqual(profile_value(out, "pipes.l2_gib_s"), 7.0)
        self.assertIn('basis = "calibrated"', out)

    def test_unknown_keys_are_an_error(self):
        with self.assertRaises(Exception):
            with_values(self.TEXT, {"chip.nope": 1.0})

    def test_missing_keys_are_added_in_their_section_when_asked(self):
        # fidelity.py --set: an entry the profile does not state (a mechanism left off).
        out = with_values(self.TEXT, {"chip.nope": 1, "host.w": 2.5}, add_missing=True)
        self.assertEqual(profile_value(out, "chip.nope"), 1)
        self.assertEqual(profile_value(out, "host.w"), 2.5)
        # Added inside its own section, before the next one, and marked as what it is.
        self.assertLess(out.index("nope = "), out.index("[pipes]"))
        self.assertIn('nope = { value = 1, basis = "assumed", source = "a what-if (fidelity.py --set)" }', out)



class PredictionsTest(unittest.TestCase):
    HEADER = "# a comment\nsoc,family,case,args,quantities\n"

    def load(self, body, soc="SoC"):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, f"predictions_{soc}.csv"), "w") as f:
                f.write(self.HEADER + body)
            return load_predictions(d, soc)

    def test_a_row_becomes_a_run_and_its_quantities(self):
        (p,) = self.load("SoC,gemm,64x64x64,--op gemm -n 1 --gm 64,kernel; ratio_cube\n")
        self.assertEqual(p.id, "gemm/64x64x64")
        self.assertEqual(p.run, Run("tandem", ("--op", "gemm", "-n", "1", "--gm", "64")))
        self.assertEqual(p.quantities, ("kernel", "ratio_cube"))
        self.assertEqual([unit_of(q) for q in p.quantities], ["us", "%"])

    def test_a_missing_file_is_no_predictions(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(load_predictions(d, "SoC"), [])

    def test_bad_rows_are_refused(self):
        with self.assertRaisesRegex(ValueError, "duplicate"):
            self.load("SoC,a,b,-n 1,pipelined\nSoC,a,b,-n 2,pipelined\n")
        with self.assertRaisesRegex(ValueError, "names no quantity"):
            self.load("SoC,a,b,-n 1, ; \n")
        with self.assertRaisesRegex(ValueError, "a row for Other"):
            self.load("Other,a,b,-n 1,pipelined\n")

    def test_the_shipped_file_parses(self):
        calibration = os.path.join(os.path.dirname(__file__), "..", "..", "..", "sim", "calibration")
        predictions = load_predictions(calibration, "Ascend910B1")
        families = {p.family for p in predictions}
        self.assertTrue({"allgather_gemm", "gemm"} <= families, families)


class MeasuredRowsTest(unittest.TestCase):
    def test_the_shipped_rows_have_times_and_pipe_ratios(self):
        calibration = os.path.join(os.path.dirname(__file__), "..", "..", "..", "sim", "calibration")
        rows = {r.id: r for r in load_rows(calibration, "Ascend910B1")}
        for size in ("3072x3072x3072", "6144x6144x6144"):
            self.assertEqual(rows[f"gemm/{size}/kernel"].quantity, "kernel")
            for pipe in ("cube", "mte1", "mte2", "fixp"):
                self.assertEqual(unit_of(rows[f"gemm/{size}/ratio_{pipe}"].quantity), "%")
        self.assertAlmostEqual(rows["gemm/3072x3072x3072/ratio_fixp"].measured_us, 5.8)
        # Both GEMM+AllReduce versions, both runs, every view.
        for dataset, variant, runs in (("gemm_allreduce", "ascend", ("readme", "second")),
                                       ("gemm_allreduce_v2", "ascend_subtile", ("readme", "change"))):
            for run in runs:
                for view in ("compute_only", "seq_compute", "seq_comm", "sequential", "pipelined"):
                    row = rows[f"{dataset}/{run}/{view}"]
                    self.assertIn(variant, row.run.args)

    def test_a_ratio_errs_in_points_a_time_in_percent(self):
        self.assertAlmostEqual(error_of("ratio_fixp", 10.8, 5.8), 5.0)
        self.assertAlmostEqual(error_of("kernel", 196.3, 206.7), (196.3 - 206.7) / 206.7 * 100)
        self.assertEqual(error_unit("ratio_cube"), " pts")
        self.assertEqual(error_unit("pipelined"), "%")


if __name__ == "__main__":
    unittest.main()
