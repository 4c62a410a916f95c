#!/usr/bin/python3
"""Fidelity report: every measured data set of sim/calibration/ against the simulator.

For every row (an AllGather+GEMM pipelined time, a view of the GEMM+AllReduce example, the
single-chip GEMM's device time, a TGET transfer's device time) it prints the measured value, the
simulated one on the shipped profile (rank 0, as the published host programs print theirs), the
error, and, for the rows a calibrated parameter is fitted on, the leave-one-out error: the error
when that row is left out of the fit (sim/calibration/fits_<SoC>.toml says which parameter is
fitted on which rows and over which grid). Then, per fitted parameter: the fitted value, the rows,
the fit's error, and its sensitivity (every row's error at 0.9x and 1.1x the value). Last, the
model's predictions for the configurations measured on hardware whose figures the repository does
not have (sim/calibration/predictions_<SoC>.csv; no fit uses them).

With --uncertainty it then reports how far each prediction and each row no fit uses moves under
what the measured rows leave open: the fitted parameters at their leave-one-out values, and each
assumed parameter of the fits file's [[assumption]] list at either end of its plausible range with
every fit redone under it (scripts/calibration/uncertainty.py). Every assumption end redoes every
fit, the A3 MegaMoE ones with their runs at M up to 2048: a long run on 2 cores;
--assumption PARAMETER (repeatable) varies only the ones named.

A what-if in one command: --set KEY=VALUE (repeatable) runs all of it on the profile with that
entry changed ("section.key", or "Soc:section.key" for a derived profile's own entry; an entry the
profile lacks is added, marked assumed), and --rows REGEX only the rows whose id matches, each
against its measurement, without the fits, leave-one-out errors or predictions (seconds, where
the whole report takes about ten minutes).

Exits 1 when a fitted row is off by more than 10%, when a shipped value is not its fit's optimum,
or when a fit uses fewer than two rows; 2 on bad usage. Outliers (rows left out of every fit, with
the reason) and out-of-sample rows are reported, not held to the limit.
"""
import argparse
import json
import os
import re
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from calibration.datasets import (error_of, error_unit, load_predictions, load_rows, megamoe_expert_windows,  # noqa: E402
                                  unit_of)
from calibration.fit import parse_specs, run_fit  # noqa: E402
from calibration.simulate import SimulationError, Simulator, profile_value, split_key, with_values  # noqa: E402
from calibration.uncertainty import (Target, assumption_variants, calibration_variants,  # noqa: E402
                                     parse_assumptions, spread, summarize)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT_PCT = 10.0  # the project's hard limit on a fitted row
NOISE_PCT = 4.0   # two hardware runs of one kernel differ by 2-4%: no row is trusted closer


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "tandem"))
    ap.add_argument("--tget-binary", default=os.path.join(ROOT, "build", "tests", "tget_bandwidth_bench"))
    ap.add_argument("-v", "--soc-version", default="Ascend910B1")
    ap.add_argument("--profile", help="profile file to use instead of the SoC's shipped one")
    ap.add_argument("--calibration-dir", default=os.path.join(ROOT, "sim", "calibration"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="simulations at once")
    ap.add_argument("--json", help="also write the report as JSON to this file")
    ap.add_argument("--uncertainty", action="store_true",
                    help="also report how far the predictions and the rows no fit uses move under the leave-one-out "
                         "fits and the assumed parameters' ranges (each assumption end redoes every fit, the A3 "
                         "MegaMoE ones included: long; narrow it with --assumption)")
    ap.add_argument("--assumption", action="append", metavar="PARAMETER",
                    help="with --uncertainty, vary only this assumed parameter (as the fits file's [[assumption]] "
                         "names it; repeat for more); the default is every one")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="run on the profile with this entry changed: section.key=value, or Soc:section.key=value "
                         "for the own entry of a profile that derives from the report's (an entry the profile lacks "
                         "is added, marked assumed); repeatable")
    ap.add_argument("--rows", metavar="REGEX",
                    help="only the rows whose id matches REGEX (a search, e.g. 'megamoe/expert_major' or "
                         "'gemm_allreduce.*pipelined'): each against its measurement, no fits, leave-one-out or "
                         "predictions")
    args = ap.parse_args()
    if args.assumption and not args.uncertainty:
        ap.error("--assumption needs --uncertainty")
    if args.rows is not None and args.uncertainty:
        ap.error("--rows shows rows only; --uncertainty needs the whole report")
    try:
        changes = parse_changes(args.set)
        row_filter = re.compile(args.rows) if args.rows is not None else None
    except ValueError as e:
        ap.error(str(e))
    except re.error as e:
        ap.error(f"--rows {args.rows}: not a regular expression ({e})")

    soc = args.soc_version
    profile_path = args.profile or os.path.join(ROOT, "sim", "profiles", f"{soc}.toml")
    if not os.path.exists(profile_path):
        sys.exit(f"fidelity: no profile {profile_path}")
    derived_texts = derived_profiles(os.path.dirname(profile_path), soc, args.calibration_dir)
    rows = load_rows(args.calibration_dir, soc, tuple(derived_texts))
    if not rows:
        sys.exit(f"fidelity: no measured rows for {soc} in {args.calibration_dir}")
    with open(profile_path) as f:
        profile_text = f.read()
    try:
        profile_text, derived_texts = apply_changes(changes, soc, profile_text, derived_texts)
    except SimulationError as e:
        ap.error(f"--set: {e}")
    if row_filter is not None:
        rows = [r for r in rows if row_filter.search(r.id)]
        if not rows:
            ap.error(f"--rows {args.rows}: no row matches (ids as the full report prints them, e.g. "
                     f"{load_rows(args.calibration_dir, soc, tuple(derived_texts))[0].id})")
    rows_by_id = {r.id: r for r in rows}
    predictions = load_predictions(args.calibration_dir, soc, tuple(derived_texts))
    kinds = {r.run.kind for r in rows} | {p.run.kind for p in predictions}
    for b in [args.binary] + ([args.tget_binary] if "tget_bench" in kinds else []):
        if not os.access(b, os.X_OK):
            sys.exit(f"fidelity: {b} is not built: run ./run.sh fidelity")
    if row_filter is not None:
        sim = Simulator(args.binary, args.tget_binary, soc, profile_text, args.jobs, derived_texts)
        try:
            return rows_report(sim, rows, changes, args.json)
        except SimulationError as e:
            sys.exit(f"fidelity: {e}")
        finally:
            sim.close()
    spec_path = os.path.join(args.calibration_dir, f"fits_{soc}.toml")
    specs, outliers, assumptions = [], {}, []
    print_changes(changes)
    if os.path.exists(spec_path):
        with open(spec_path, "rb") as f:
            doc = tomllib.load(f)
        try:
            specs, outliers = parse_specs(doc, set(rows_by_id))
            fitted = {k for s in specs for k in s.parameters}
            assumptions = parse_assumptions(doc, profile_text, fitted, derived_texts)
        except (ValueError, SimulationError) as e:
            sys.exit(f"fidelity: {os.path.relpath(spec_path, ROOT)}: {e}")
    elif args.uncertainty:
        sys.exit(f"fidelity: --uncertainty needs {spec_path}")
    if args.assumption:
        known = [a.parameter for a in assumptions]
        unknown = [p for p in args.assumption if p not in known]
        if unknown:
            sys.exit(f"fidelity: --assumption {unknown[0]}: not an assumed parameter of {os.path.relpath(spec_path, ROOT)} "
                     f"(it lists: {', '.join(known)})")
        assumptions = [a for a in assumptions if a.parameter in args.assumption]
    sim = Simulator(args.binary, args.tget_binary, soc, profile_text, args.jobs, derived_texts)
    try:
        return report(sim, rows, rows_by_id, specs, outliers, predictions, profile_text, spec_path, args.json,
                      assumptions if args.uncertainty else None, args.calibration_dir, changes)
    except SimulationError as e:
        sys.exit(f"fidelity: {e}")
    finally:
        sim.close()


def parse_changes(sets):
    """{key: number} from --set KEY=VALUE arguments."""
    changes = {}
    for item in sets:
        key, sep, text = item.partition("=")
        key, text = key.strip(), text.strip()
        if not sep or not re.fullmatch(r"(\w+:)?\w+\.\w+", key):
            raise ValueError(f"--set {item}: give section.key=value or Soc:section.key=value "
                             "(e.g. pipes.mte2_read_bytes_in_flight=7168)")
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"--set {item}: the value {text!r} is not a number") from None
        changes[key] = value
    return changes


def apply_changes(changes, soc, profile_text, derived_texts):
    """The report's profile text and its derived ones with `changes` in (missing entries added)."""
    by_soc = {}
    for key, value in changes.items():
        owner, name = split_key(key)
        if owner and owner != soc and owner not in derived_texts:
            raise SimulationError(f"{key}: {owner} is not {soc} or a profile deriving from it with measured rows "
                                  f"({', '.join(sorted(derived_texts)) or 'none'})")
        by_soc.setdefault(owner if owner and owner != soc else soc, {})[name] = value
    profile_text = with_values(profile_text, by_soc.pop(soc, {}), add_missing=True)
    derived = {name: with_values(text, by_soc.get(name, {}), add_missing=True) for name, text in derived_texts.items()}
    return profile_text, derived


def print_changes(changes):
    if changes:
        print("Profile changed for this report (--set): "
              + ", ".join(f"{k} = {v!r}" for k, v in sorted(changes.items())))


def rows_report(sim, rows, changes, json_path):
    """--rows: each row against its measurement, and the mean and largest error."""
    runs = sorted({r.run for r in rows}, key=repr)
    outs = dict(zip(runs, sim.run_many([(run, None) for run in runs])))
    print_changes(changes)
    header = f"{'row':<44} {'measured':>11} {'simulated':>10} {'error':>10}"
    print(header)
    print("-" * len(header))
    out_rows = []
    for r in rows:
        if r.quantity not in outs[r.run]:
            raise SimulationError(f"row {r.id}: the simulation reports no '{r.quantity}'")
        value = outs[r.run][r.quantity]
        err = error_of(r.quantity, value, r.measured_us)
        eu = error_unit(r.quantity)
        print(f"{r.id:<44} {r.measured_us:8.1f} {unit_of(r.quantity):<2} {value:10.1f} {err:+6.2f}{eu}")
        out_rows.append({"id": r.id, "measured": r.measured_us, "simulated": value, "unit": unit_of(r.quantity),
                         "error": err, "error_unit": eu.strip()})
    for unit in sorted({o["error_unit"] for o in out_rows}):
        errs = [abs(o["error"]) for o in out_rows if o["error_unit"] == unit]
        worst = max((o for o in out_rows if o["error_unit"] == unit), key=lambda o: abs(o["error"]))
        name = "points" if unit == "pts" else unit
        print(f"{len(errs)} rows in {name}: mean |error| {sum(errs) / len(errs):.2f}, largest {worst['error']:+.2f} "
              f"({worst['id']})")
    print(f"({sim.runs} simulations)")
    if json_path:
        with open(json_path + ".tmp", "w") as f:
            json.dump({"soc": sim.soc, "profile_changes": changes, "rows": out_rows}, f, indent=2)
        os.replace(json_path + ".tmp", json_path)
    return 0


def derives_from(text):
    for line in text.split("\n"):
        line = line.strip()
        if line.startswith("derives_from"):
            return line.split("=", 1)[1].strip().strip('"')
        if line.startswith("[") and line != "[meta]":
            return None
    return None


def derived_profiles(profile_dir, soc, calibration_dir):
    """{soc: text} of the shipped profiles that derive from `soc` (directly or through others) and
    have measured rows or predictions in `calibration_dir`, with the profiles between them and
    `soc`: their rows join this report's fits, each run on its own profile."""
    texts = {}
    shipped_dir = os.path.join(ROOT, "sim", "profiles")
    for folder in (profile_dir, shipped_dir):
        for name in sorted(os.listdir(folder)):
            if name.endswith(".toml") and name[:-5] not in texts and name[:-5] != soc:
                with open(os.path.join(folder, name)) as f:
                    texts[name[:-5]] = f.read()
    out = {}
    for name in texts:
        if not any(os.path.exists(os.path.join(calibration_dir, f"{d}_{name}.csv"))
                   for d in ("megamoe", "megamoe_stages", "predictions", "allgather_gemm", "gemm_allreduce")):
            continue
        chain, at = [], name
        while at in texts and at not in chain:
            chain.append(at)
            at = derives_from(texts[at])
        if at == soc:
            out.update({c: texts[c] for c in chain})
    return out


def make_errors_of(sim):
    def errors_of(rows, values):
        runs = sorted({r.run for r in rows}, key=repr)
        outs = dict(zip(runs, sim.run_many([(run, values) for run in runs])))
        errs = {}
        for r in rows:
            out = outs[r.run]
            if r.quantity not in out:
                raise SimulationError(f"row {r.id}: the simulation reports no '{r.quantity}'")
            errs[r.id] = error_of(r.quantity, out[r.quantity], r.measured_us)
        return errs
    return errors_of


def report(sim, rows, rows_by_id, specs, outliers, predictions, profile_text, spec_path, json_path, assumptions=None,
           calibration_dir=None, changes=None):
    errors_of = make_errors_of(sim)
    runs = sorted({r.run for r in rows} | {p.run for p in predictions}, key=repr)
    outs = dict(zip(runs, sim.run_many([(run, None) for run in runs])))
    simulated = {}
    for r in rows:
        if r.quantity not in outs[r.run]:
            raise SimulationError(f"row {r.id}: the simulation reports no '{r.quantity}'")
        simulated[r.id] = outs[r.run][r.quantity]

    problems = []
    fits = []
    fitted_by = {}
    for spec in specs:
        if len(spec.rows) < 2:
            problems.append(f"the fit of {', '.join(spec.parameters)} uses {len(spec.rows)} row: no parameter is "
                            "fitted on a single row")
        shipped = {k: sim.value_of(k) for k in spec.parameters}
        res = run_fit(spec, rows_by_id, sim, shipped, errors_of)
        fits.append(res)
        for i in spec.rows:
            fitted_by[i] = ", ".join(spec.parameters)
        if tuple(res.optimum) != tuple(res.shipped):
            problems.append(f"{', '.join(spec.parameters)}: the profile has {fmt_point(res.shipped)} but the fit's "
                            f"optimum is {fmt_point(res.optimum)} ({os.path.relpath(spec_path, ROOT)})")
    loo = {}
    for res in fits:
        loo.update(res.loo_error)

    print(f"Fidelity of {sim.soc}: every measured row against the simulator (rank 0), sim/calibration/")
    header = f"{'row':<44} {'measured':>11} {'simulated':>10} {'error':>10} {'LOO error':>10}  role"
    print(header)
    print("-" * len(header))
    out_rows = []
    for r in rows:
        err = error_of(r.quantity, simulated[r.id], r.measured_us)
        unit, eu = unit_of(r.quantity), error_unit(r.quantity)
        if r.id in fitted_by:
            role = f"fitted: {fitted_by[r.id]}"
            if abs(err) > LIMIT_PCT:
                problems.append(f"{r.id}: {err:+.1f}{eu} is past the {LIMIT_PCT:.0f}{eu} limit of a fitted row")
        elif r.id in outliers:
            role = "outlier (left out of every fit: sim/CALIBRATION.md)"
        else:
            role = "not fitted (out of sample)"
        loo_txt = f"{loo[r.id]:+6.2f}{eu:<4}" if r.id in loo else f"{'=':>10}"
        flag = "  <-- over 10" + eu.strip() if abs(err) > LIMIT_PCT else (
            f"  (over the 2-4{eu.strip()} noise)" if abs(err) > NOISE_PCT else "")
        print(f"{r.id:<44} {r.measured_us:8.1f} {unit:<2} {simulated[r.id]:10.1f} {err:+6.2f}{eu:<4} {loo_txt}  "
              f"{role}{flag}")
        out_rows.append({"id": r.id, "measured": r.measured_us, "simulated": simulated[r.id], "unit": unit,
                         "error": err, "error_unit": eu.strip(), "loo_error": loo.get(r.id), "role": role})
    print("(errors: % of the measurement for a time, points for a pipe ratio; '=' in the LOO column: the row is not "
          "fitted on, so its error is already out of sample.)")

    print()
    print("Fitted parameters (grid search, least mean absolute error over the rows; others at the profile's values):")
    out_fits = []
    for res in fits:
        s = res.spec
        units = {error_unit(rows_by_id[i].quantity) for i in s.rows}
        fit_unit = units.pop() if len(units) == 1 else " (mixed % and pts)"
        print(f"  {', '.join(s.parameters)} = {fmt_point(res.optimum)}  (profile: {fmt_point(res.shipped)}), "
              f"fit error {res.optimum_mae:.2f}{fit_unit} over {len(s.rows)} rows")
        print(f"    rows: {', '.join(s.rows)}")
        if s.why:
            print(f"    why these rows: {s.why}")
        for row_id, p in res.loo_point.items():
            print(f"    without {row_id}: {fmt_point(p)} -> its error {res.loo_error[row_id]:+.2f}"
                  f"{error_unit(rows_by_id[row_id].quantity)}")
        for k, factor, value, errs in res.sensitivity:
            txt = ", ".join(f"{e:+.1f}{error_unit(rows_by_id[i].quantity).strip()}" for i, e in errs.items())
            step = f"x{factor}" if res.shipped[s.parameters.index(k)] != 0 else "next grid value"
            print(f"    sensitivity: {k} {step} = {value:.4g}: rows {txt}")
        out_fits.append({"parameters": s.parameters, "optimum": list(res.optimum), "profile": list(res.shipped),
                         "rows": s.rows, "fit_error_pct": res.optimum_mae,
                         "loo": {k: {"point": list(v), "error_pct": res.loo_error[k]} for k, v in res.loo_point.items()},
                         "sensitivity": [{"parameter": k, "factor": f, "value": v, "errors_pct": e}
                                         for k, f, v, e in res.sensitivity]})
    for row_id, why in outliers.items():
        print(f"  outlier {row_id}: {why}")
    out_experts = print_expert_windows(rows, outs, calibration_dir)
    out_predictions = print_predictions(predictions, outs)
    out_uncertainty = None
    if assumptions is not None:
        targets = [Target(r.id, r.run, r.quantity, r.measured_us) for r in rows if r.id not in fitted_by]
        targets += [Target(f"{p.id} {q}", p.run, q) for p in predictions for q in p.quantities]
        out_uncertainty = print_uncertainty(sim, targets, specs, fits, assumptions, rows_by_id, errors_of)
    print(f"({sim.runs} simulations)")
    if json_path:
        with open(json_path + ".tmp", "w") as f:
            json.dump({"soc": sim.soc, "profile_changes": changes or {}, "rows": out_rows, "fits": out_fits,
                       "outliers": outliers, "expert_windows": out_experts, "predictions": out_predictions,
                       "uncertainty": out_uncertainty,
                       "problems": problems},
                      f, indent=2)
        os.replace(json_path + ".tmp", json_path)
    if problems:
        print()
        for p in problems:
            print(f"FAILED: {p}")
        return 1
    return 0


def print_expert_windows(rows, outs, calibration_dir):
    """The published per-expert stage windows (megamoe_stages_<soc>.csv) against the model's, expert
    by expert: each window's start, end and span, and per stage the mean and largest error of the
    ends in % of the published kernel (the windows' scale: an expert's window is tens of us)."""
    stage_rows = [r for r in rows if r.dataset == "megamoe_stages"]
    if not stage_rows or calibration_dir is None:
        return []
    run = stage_rows[0].run
    published = megamoe_expert_windows(os.path.join(calibration_dir, f"megamoe_stages_{run.soc}.csv"))
    if not published:
        return []
    values = outs[run]
    kernel_us = max(r.extra["end_us"] for r in stage_rows)
    print()
    print(f"Stage profile expert by expert ({stage_rows[0].id.rsplit('/', 1)[0]}, rank 0; windows in us from the earliest "
          f"block start; end errors in % of the published kernel, {kernel_us:.0f} us):")
    out = []
    for stage in dict.fromkeys(s for s, _ in published):  # in the file's (the pipeline's) order
        experts = sorted(e for s, e in published if s == stage)
        print(f"  {stage}:  expert  published      model          start   end     span")
        end_errs = []
        for e in experts:
            lo, hi = published[(stage, e)]
            k0, k1 = f"stage_item_start_{stage}_{e}", f"stage_item_end_{stage}_{e}"
            if k0 not in values:
                raise SimulationError(f"{run.args}: the simulation reports no window of {stage} expert {e}")
            mlo, mhi = values[k0], values[k1]
            end_err = (mhi - hi) / kernel_us * 100.0
            end_errs.append(end_err)
            span_err = ((mhi - mlo) - (hi - lo)) / (hi - lo) * 100.0 if hi > lo else 0.0
            print(f"    {e:>14}  {lo:5.0f}-{hi:5.0f}  {mlo:6.0f}-{mhi:6.0f}  {mlo - lo:+6.0f}  {mhi - hi:+6.0f}  "
                  f"{span_err:+6.1f}%")
            out.append({"stage": stage, "expert": e, "published": [lo, hi], "model": [mlo, mhi],
                        "end_error_pct_of_kernel": end_err, "span_error_pct": span_err})
        mean = sum(abs(x) for x in end_errs) / len(end_errs)
        worst = max(end_errs, key=abs)
        print(f"    {stage}: ends off by {mean:.1f}% of the kernel on average, at most {worst:+.1f}%")
    return out


def print_predictions(predictions, outs):
    """The model's figures for the configurations measured elsewhere (no fit uses them)."""
    if not predictions:
        return []
    print()
    print("Predictions for configurations measured on hardware but not in this repository "
          "(rank 0; sim/calibration/predictions_*.csv, sim/CALIBRATION.md):")
    out = []
    for p in predictions:
        values = outs[p.run]
        missing = [q for q in p.quantities if q not in values]
        if missing:
            raise SimulationError(f"prediction {p.id}: the simulation reports no {', '.join(missing)}")
        txt = ", ".join(f"{q} {values[q]:.1f}{' ' if unit_of(q) == 'us' else ''}{unit_of(q)}" for q in p.quantities)
        print(f"  {p.id:<44} {txt}")
        out.append({"id": p.id, "args": list(p.run.args),
                    "values": {q: {"value": values[q], "unit": unit_of(q)} for q in p.quantities}})
    return out


def print_uncertainty(sim, targets, specs, fits, assumptions, rows_by_id, errors_of):
    """The --uncertainty section: what the variants do to the fits, then to every target."""
    def progress(msg):
        print(f"uncertainty: {msg}", file=sys.stderr, flush=True)

    variants = calibration_variants(fits)
    variants += assumption_variants(assumptions, specs, fits, rows_by_id, sim, errors_of, progress)
    entries = spread(targets, variants, sim, progress)
    print()
    print("Uncertainty: how far each figure moves under what the measured rows leave open")
    print("  calibration: each fitted parameter at its leave-one-out values (one fit at a time)")
    print("  assumptions: each assumed parameter at either end of its range, every fit redone under it:")
    out_assumptions = []
    for a in assumptions:
        print(f"    {a.parameter} {a.low:g}..{a.high:g} (profile {sim.value_of(a.parameter):g}): {a.why}")
        ends = []
        for v in variants:
            if v.source != "assumption" or v.parameter != a.parameter:
                continue
            moved = [f"{', '.join(r.parameters)} -> {', '.join(f'{x:g}' for x in r.point)} "
                     f"(fit error {r.fit_error_pct:.2f}%{', at the grid edge' if r.at_grid_edge else ''})"
                     for r, f in zip(v.refits, fits) if tuple(r.point) != tuple(f.optimum)]
            print(f"      at {v.label.split(' = ')[1]}: {'; '.join(moved) if moved else 'every fit unchanged'}")
            ends.append({"value": v.values[a.parameter],
                         "refits": [{"parameters": r.parameters, "point": list(r.point), "fit_error_pct": r.fit_error_pct,
                                     "at_grid_edge": r.at_grid_edge} for r in v.refits]})
        out_assumptions.append({"parameter": a.parameter, "low": a.low, "high": a.high, "why": a.why, "ends": ends})
    print()
    header = f"  {'figure':<58} {'measured':>9} {'model':>9} {'calibration':>17} {'assumptions':>17}  largest assumed drivers"
    print(header)
    out_targets = []
    for t in targets:
        relative = unit_of(t.quantity) == "us"
        s = summarize(t, entries[t.id], relative=relative)
        unit = "%" if relative else " pts"
        rng = lambda r: f"{r[0]:.1f}..{r[1]:.1f}" if r else "-"  # noqa: E731
        drivers = ", ".join(f"{p.split('.')[-1]} {lo:+.1f}..{hi:+.1f}{unit}" for p, lo, hi in s["drivers"]) or "none"
        measured = f"{t.measured:9.1f}" if t.measured is not None else f"{'':>9}"
        print(f"  {t.id:<58} {measured} {s['value']:9.1f} {rng(s['calibration']):>17} {rng(s['assumption']):>17}  {drivers}")
        out_targets.append({"id": t.id, "measured": t.measured, "value": s["value"], "unit": unit_of(t.quantity),
                            "calibration_range": s["calibration"], "assumption_range": s["assumption"],
                            "drivers": [{"parameter": p, "low": lo, "high": hi, "unit": unit.strip()}
                                        for p, lo, hi in s["drivers"]],
                            "by_variant": [{"variant": v.label, "source": v.source, "value": x}
                                           for v, x in entries[t.id]["by_variant"]]})
    print("  (ranges in the figure's unit, including the shipped value; drivers: the move at the two ends of the "
          "assumed range, in % of the figure, or in points for a ratio)")
    return {"assumptions": out_assumptions, "targets": out_targets}


def fmt_point(p):
    return ", ".join(f"{v:.4g}" for v in p)


if __name__ == "__main__":
    sys.exit(main())
