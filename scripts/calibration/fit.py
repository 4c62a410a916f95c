"""Grid fits of the calibrated parameters, with leave-one-out errors and sensitivities.

A fit names one or more profile parameters, the rows they are fitted on and a grid of values for
each. Every point of the grid (the product of the parameters' grids) is simulated on every row of
the fit, all other parameters at the profile's values; the fitted point is the one with the least
mean absolute relative error over the rows. A row's leave-one-out error is its error at the point
fitted on the other rows alone: what the model predicts for it when it was not used. The fits
must use disjoint rows (a row left out then changes one fit only).
"""
import itertools
from dataclasses import dataclass, field

from .simulate import SimulationError


@dataclass
class FitSpec:
    parameters: list
    grids: list
    rows: list
    why: str = ""


@dataclass
class FitResult:
    spec: FitSpec
    optimum: tuple
    optimum_mae: float
    shipped: tuple
    loo_point: dict = field(default_factory=dict)    # row id -> grid point fitted without it
    loo_error: dict = field(default_factory=dict)    # row id -> error (%) at that point
    table: dict = field(default_factory=dict)        # grid point -> {row id: error %}
    sensitivity: list = field(default_factory=list)  # (parameter, factor, value, {row id: error %})


def rel_error(simulated, measured):
    return (simulated - measured) / measured * 100.0


def _mae(errors, ids):
    return sum(abs(errors[i]) for i in ids) / len(ids)


def parse_specs(doc, row_ids):
    specs, outliers = [], {}
    seen = set()
    for f in doc.get("fit", []):
        params = f["parameters"]
        grids = f["grid"]
        if len(params) != len(grids):
            raise ValueError(f"fit of {params}: one grid per parameter")
        for r in f["rows"]:
            if r not in row_ids:
                raise ValueError(f"fit of {params}: no such row {r}")
            if r in seen:
                raise ValueError(f"fit of {params}: row {r} is used by another fit (fits must use disjoint rows)")
            seen.add(r)
        specs.append(FitSpec(params, grids, f["rows"], f.get("why", "")))
    for o in doc.get("outlier", []):
        if o["row"] not in row_ids:
            raise ValueError(f"outlier: no such row {o['row']}")
        if o["row"] in seen:
            raise ValueError(f"outlier {o['row']} is also a fitted row")
        outliers[o["row"]] = o.get("why", "")
    return specs, outliers


def run_fit(spec, rows_by_id, simulator, shipped_values, errors_of):
    """Simulates the grid and finds the optimum, the leave-one-out points and the sensitivity."""
    points = list(itertools.product(*spec.grids))
    ids = spec.rows
    table = {}
    for p in points:
        values = dict(zip(spec.parameters, p))
        table[p] = errors_of([rows_by_id[i] for i in ids], values)
    optimum = min(points, key=lambda p: _mae(table[p], ids))
    shipped = tuple(shipped_values[k] for k in spec.parameters)
    result = FitResult(spec, optimum, _mae(table[optimum], ids), shipped, table=table)
    if len(ids) > 1:
        for left_out in ids:
            rest = [i for i in ids if i != left_out]
            p = min(points, key=lambda q: _mae(table[q], rest))
            result.loo_point[left_out] = p
            result.loo_error[left_out] = table[p][left_out]
    for k, grid in zip(spec.parameters, spec.grids):
        for factor in (0.9, 1.1):
            value = shipped_values[k] * factor
            if shipped_values[k] == 0:  # no relative step from zero: the grid's next value instead
                above = sorted(v for v in grid if v > 0)
                if factor < 1 or not above:
                    continue
                value = above[0]
            values = {k: value}
            try:
                errs = errors_of([rows_by_id[i] for i in ids], values)
            except SimulationError:
                continue  # a value the profile refuses (past a bound another parameter sets): no step that way
            result.sensitivity.append((k, factor, value, errs))
    return result
