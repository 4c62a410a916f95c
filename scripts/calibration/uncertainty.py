"""How sure a figure of the model is: how far it moves under what the measured rows leave open.

Two sources, reported apart (`./run.sh fidelity --uncertainty`):

* calibration: each fitted parameter at each of its leave-one-out points (the value its fit gives
  without one of its rows), one fit at a time: what one measured row more or less would change;
* assumptions: each assumed parameter listed in fits_<SoC>.toml (`[[assumption]]`: a plausible
  low and high, with the reason) at either end of its range, with every fit redone on its own
  rows under it: what an unsourced guess still decides once the calibration has absorbed what it
  can. A fit is redone by a local search on its grid from the shipped optimum (a step to the best
  neighbouring grid point while the fit's error falls), so it costs a few points, not the grid.

The figures moved are the rows no fit uses (out of sample, outliers) and the predictions.
"""
from dataclasses import dataclass, field

from .fit import rel_error
from .simulate import profile_value, split_key


@dataclass
class Assumption:
    parameter: str
    low: float
    high: float
    why: str = ""


@dataclass
class Refit:
    """One fit redone under an assumption's end."""
    parameters: list
    point: tuple
    fit_error_pct: float
    at_grid_edge: bool    # the search stopped on the grid's edge: the fit may want to go further


@dataclass
class Variant:
    source: str           # "calibration" or "assumption"
    label: str            # what was changed, e.g. "interconnect.link_latency_ns = 300"
    parameter: str        # the parameter the variant is about (for an assumption, the assumed one)
    values: dict          # every profile value the variant changes
    refits: list = field(default_factory=list)


@dataclass
class Target:
    """A figure whose spread is reported: a row no fit uses, or a prediction's quantity."""
    id: str
    run: object
    quantity: str
    measured: float = None


def parse_assumptions(doc, profile_text, fitted_parameters, derived_texts=None):
    """The `[[assumption]]` entries of a fits file, checked against the profile (a parameter
    "Soc:section.key" against the derived profile `derived_texts[Soc]`)."""
    out, seen = [], set()
    for a in doc.get("assumption", []):
        p = a.get("parameter")
        if not p or "low" not in a or "high" not in a:
            raise ValueError(f"assumption {a}: needs parameter, low and high")
        # Whole numbers stay whole: a profile key that counts (bytes, cycles) takes an integer.
        low, high = (v if isinstance(v, int) and not isinstance(v, bool) else float(v) for v in (a["low"], a["high"]))
        if p in seen:
            raise ValueError(f"assumption {p}: listed twice")
        if p in fitted_parameters:
            raise ValueError(f"assumption {p}: it is a fitted parameter (its spread is the calibration's)")
        if not low < high:
            raise ValueError(f"assumption {p}: low {low:g} must be below high {high:g}")
        soc, key = split_key(p)
        if soc and soc not in (derived_texts or {}):
            raise ValueError(f"assumption {p}: no derived profile {soc} in this report")
        value = profile_value(derived_texts[soc] if soc else profile_text, key)
        if not low <= value <= high:
            raise ValueError(f"assumption {p}: the profile's value {value:g} is outside its range [{low:g}, {high:g}]")
        seen.add(p)
        out.append(Assumption(p, low, high, a.get("why", "")))
    return out


def refit_near(spec, rows, sim, errors_of, start, base_values):
    """The fit of `spec` redone with `base_values` applied: from the grid point `start`, step to
    the best neighbouring point (one grid step in one parameter) while the mean absolute error over
    the fit's rows falls. Returns a Refit."""
    index = tuple(list(g).index(v) for g, v in zip(spec.grids, start))
    memo = {}

    def values_at(ix):
        v = dict(base_values)
        v.update({k: g[i] for k, g, i in zip(spec.parameters, spec.grids, ix)})
        return v

    def mae(ix):
        if ix not in memo:
            errs = errors_of(rows, values_at(ix))
            memo[ix] = sum(abs(e) for e in errs.values()) / len(errs)
        return memo[ix]

    while True:
        around = [index]
        for d, g in enumerate(spec.grids):
            for step in (-1, 1):
                i = index[d] + step
                if 0 <= i < len(g):
                    around.append(index[:d] + (i,) + index[d + 1:])
        fresh = [ix for ix in around if ix not in memo]
        # Simulate the neighbourhood at once (the simulator caches every run).
        sim.run_many([(r.run, values_at(ix)) for ix in fresh for r in rows])
        best = min(around, key=lambda ix: (mae(ix), ix != index))
        if best == index:
            break
        index = best
    edge = any(i in (0, len(g) - 1) for i, g in zip(index, spec.grids))
    return Refit(list(spec.parameters), tuple(g[i] for g, i in zip(spec.grids, index)), mae(index), edge)


def calibration_variants(fits):
    """Each fit at each of its distinct leave-one-out points other than its optimum."""
    out = []
    for res in fits:
        params = res.spec.parameters
        for point in sorted(set(res.loo_point.values()) - {tuple(res.optimum)}):
            label = ", ".join(f"{k} = {v:g}" for k, v in zip(params, point))
            out.append(Variant("calibration", label, ", ".join(params), dict(zip(params, point))))
    return out


def assumption_variants(assumptions, specs, fits, rows_by_id, sim, errors_of, progress=None):
    """Each assumption at its low and high end, with every fit redone under it."""
    out = []
    optimum = {", ".join(r.spec.parameters): r.optimum for r in fits}
    ends = [(a, end) for a in assumptions for end in (a.low, a.high)]
    for n, (a, end) in enumerate(ends, 1):
        if progress:
            progress(f"assumption {n}/{len(ends)}: {a.parameter} = {end:g}, redoing the fits")
        values = {a.parameter: end}
        refits = []
        for spec in specs:
            rows = [rows_by_id[i] for i in spec.rows]
            refit = refit_near(spec, rows, sim, errors_of, optimum[", ".join(spec.parameters)], {a.parameter: end})
            refits.append(refit)
            values.update(dict(zip(spec.parameters, refit.point)))
        out.append(Variant("assumption", f"{a.parameter} = {end:g}", a.parameter, values, refits))
    return out


def spread(targets, variants, sim, progress=None):
    """{target id: {"value": shipped, "by_variant": [(variant, value)]}} for every target."""
    runs = sorted({t.run for t in targets}, key=repr)
    requests = [(run, None) for run in runs]
    for v in variants:
        requests += [(run, v.values) for run in runs]
    if progress:
        progress(f"simulating {len(runs)} configurations under {len(variants)} variants")
    sim.run_many(requests)
    out = {}
    for t in targets:
        base = sim.run(t.run)[t.quantity]
        out[t.id] = {"value": base, "by_variant": [(v, sim.run(t.run, v.values)[t.quantity]) for v in variants]}
    return out


def summarize(target, entry, relative=True, top=2):
    """The target's shipped value, its range per source and its largest assumption drivers (by the
    larger move of either end: in % of the shipped value, or, `relative` False, in the target's
    own unit, for figures that are already percentages)."""
    base = entry["value"]
    summary = {"id": target.id, "value": base, "measured": target.measured}
    for source in ("calibration", "assumption"):
        vals = [x for v, x in entry["by_variant"] if v.source == source]
        summary[source] = (min(vals + [base]), max(vals + [base])) if vals else None
    moves = {}
    for v, x in entry["by_variant"]:
        if v.source != "assumption":
            continue
        d = (rel_error(x, base) if base else 0.0) if relative else x - base
        lo, hi = moves.get(v.parameter, (0.0, 0.0))
        moves[v.parameter] = (min(lo, d), max(hi, d))
    drivers = sorted(moves.items(), key=lambda kv: -max(abs(kv[1][0]), abs(kv[1][1])))
    summary["drivers"] = [(p, lo, hi) for p, (lo, hi) in drivers[:top] if max(abs(lo), abs(hi)) >= 0.05]
    return summary
