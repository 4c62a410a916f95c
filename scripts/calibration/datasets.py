"""The measured data sets of sim/calibration/, as rows to compare with the simulator.

Every row has an id ("<data set>/<case>/<quantity>"), the measured value in microseconds and the
simulation ("run") that gives its simulated value. One run can give several rows: the three views
of a GEMM+AllReduce run are the rows of both measured runs of that kernel, and one TGET
microbenchmark run gives every transfer size.
"""
import csv
import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Run:
    """One simulator invocation: `kind` names the runner (simulate.py), `args` its arguments, `soc`
    the profile it runs on ("": the report's own SoC; another: a profile deriving from it, whose
    rows join the same fits)."""
    kind: str
    args: tuple
    soc: str = ""


@dataclass
class Row:
    id: str
    dataset: str
    measured_us: float         # the measured value, in the unit of its quantity (unit_of: us, or % for a ratio)
    run: Run
    quantity: str              # what of the run's output this row reads (runner-specific)
    note: str = ""
    extra: dict = field(default_factory=dict)


# The warm-ups the model runs for a row whose host warmed up, whatever the host's count (the
# row's `warmup_runs` column: 3, 5 or 10): the model is deterministic, so a second warm-up of a
# view leaves the L2 as the first did, and every row moves by under 0.1% from one warm-up to the
# host's count (sim/CALIBRATION.md "Warm views"), while each warm-up simulates every view again.
WARMUPS_FOR_A_WARM_HOST = 1


def warmup_args(row):
    """The arguments that warm a row's views up as its host did (its `warmup_runs` column, the
    host's warm-up iterations; 0 or none: the host ran none, the views start as the run leaves
    them)."""
    n = int((row.get("warmup_runs") or "0").strip() or 0)
    if n < 0:
        raise ValueError(f"warmup_runs = {n}: a count of the host's warm-ups, 0 or more")
    return ("--warmup-runs", str(min(n, WARMUPS_FOR_A_WARM_HOST))) if n > 0 else ()


def _read_csv(path):
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#") and line.strip()]
    return list(csv.DictReader(lines))


def allgather_gemm_rows(path, soc=""):
    rows = []
    for r in _read_csv(path):
        case = f"{r['ranks']}x{r['m']}x{r['k']}x{r['n']}"
        run = Run("tandem", ("-n", r["ranks"], "--gm", r["m"], "--gk", r["k"], "--gn", r["n"], *warmup_args(r)), soc)
        rows.append(Row(f"allgather_gemm/{case}/pipelined", "allgather_gemm", float(r["measured_ms"]) * 1000.0, run,
                        "pipelined", note="seed kernel, rank 0's pipelined view"))
    return rows


def _gemm_allreduce_rows(path, dataset, variant, soc=""):
    rows = []
    for r in _read_csv(path):
        run = Run("tandem", ("--op", "matmul_all_reduce", "--variant", variant, "-n", r["ranks"], "--gm", r["m"],
                             "--gk", r["k"], "--gn", r["n"], "--dtype", "fp16", "--out-dtype", "fp16", *warmup_args(r)), soc)
        rows.append(Row(f"{dataset}/{r['run']}/{r['view']}", dataset, float(r["measured_us"]), run,
                        r["view"], note=f"{variant} replica, {r['run']} run"))
    return rows


def gemm_allreduce_rows(path, soc=""):
    """The older GEMM+AllReduce example (`--variant ascend`)."""
    return _gemm_allreduce_rows(path, "gemm_allreduce", "ascend", soc)


def gemm_allreduce_v2_rows(path, soc=""):
    """The newer GEMM+AllReduce example (`--variant ascend_subtile`)."""
    return _gemm_allreduce_rows(path, "gemm_allreduce_v2", "ascend_subtile", soc)


# The pipe ratio columns of the GEMM data set and the quantity each is compared with.
GEMM_RATIO_COLUMNS = (("cube_pct", "ratio_cube"), ("mte1_pct", "ratio_mte1"), ("mte2_pct", "ratio_mte2"),
                      ("fixp_pct", "ratio_fixp"))


def gemm_rows(path, soc=""):
    """Per size: the kernel's time (us) and, where measured, each pipe's ratio (%)."""
    rows = []
    for r in _read_csv(path):
        case = f"{r['m']}x{r['k']}x{r['n']}"
        run = Run("tandem", ("--op", "gemm", "--variant", "pto_performance", "-n", "1", "--gm", r["m"], "--gk", r["k"],
                             "--gn", r["n"], *warmup_args(r)), soc)
        rows.append(Row(f"gemm/{case}/kernel", "gemm", float(r["measured_us"]), run, "kernel",
                        note="pto_performance replica, the profiler's task duration"))
        for column, quantity in GEMM_RATIO_COLUMNS:
            if (r.get(column) or "").strip():
                rows.append(Row(f"gemm/{case}/{quantity}", "gemm", float(r[column]), run, quantity,
                                note="pto_performance replica, pipe busy / task duration, mean over the AIC cores"))
    return rows


def tget_rows(path, soc=""):
    rows = []
    parsed = _read_csv(path)
    sizes = tuple(r["size_bytes"] for r in parsed)
    run = Run("tget_bench", sizes, soc)
    for r in parsed:
        device_us = float(r["tget_device_cycles"]) / float(r["counter_mhz"])
        rows.append(Row(f"tget/{r['size_bytes']}/device", "tget", device_us, run, r["size_bytes"],
                        note="one AIV block, device time"))
    for r in parsed:  # the same runs time one TGET_ASYNC of each size too
        device_us = float(r["tget_async_device_cycles"]) / float(r["counter_mhz"])
        rows.append(Row(f"tget_async/{r['size_bytes']}/device", "tget_async", device_us, run,
                        f"async/{r['size_bytes']}", note="one copy on the SDMA engine, device time"))
    return rows


def megamoe_args(variant, ranks, m, warmups=()):
    return ("--op", "moe_ffn", "--variant", variant, "-n", str(ranks), "--gm", str(m), "--gk", "7168", "--gn", "4096",
            "--dtype", "bf16", *warmups)


def megamoe_rows(path, soc=""):
    """The published MegaMoE kernel timer (the slowest rank) per version and M."""
    rows = []
    for r in _read_csv(path):
        run = Run("tandem", megamoe_args(r["variant"], r["ranks"], r["m"], warmup_args(r)), soc)
        rows.append(Row(f"megamoe/{r['variant']}/{r['ranks']}x{r['m']}/kernel_timer", "megamoe", float(r["measured_us"]),
                        run, "pipelined_kernel_max_rank", note=f"{r['variant']} replica, kernel timer, slowest rank"))
    return rows


def megamoe_stage_rows(path, soc=""):
    """V1's published stage windows at EP8, M = 2048 (rank 0): each stage's span (end - start)."""
    rows = []
    for r in _read_csv(path):
        if r["kind"] != "stage_window":
            continue
        run = Run("tandem", megamoe_args("expert_major", 8, 2048, warmup_args(r)), soc)
        span = float(r["end_us"]) - float(r["start_us"])
        rows.append(Row(f"megamoe_stages/expert_major/8x2048/{r['stage']}_span", "megamoe_stages", span, run,
                        f"stage_span_{r['stage']}", note="V1 stage window, rank 0",
                        extra={"start_us": float(r["start_us"]), "end_us": float(r["end_us"])}))
    return rows


def megamoe_expert_windows(path):
    """{(stage, expert): (start_us, end_us)} of the published V1 stage profile."""
    return {(r["stage"], int(r["expert"])): (float(r["start_us"]), float(r["end_us"]))
            for r in _read_csv(path) if r["kind"] == "expert"}


DATASETS = [
    ("allgather_gemm", allgather_gemm_rows),
    ("gemm_allreduce", gemm_allreduce_rows),
    ("gemm_allreduce_v2", gemm_allreduce_v2_rows),
    ("gemm", gemm_rows),
    ("tget_bandwidth", tget_rows),
    ("megamoe", megamoe_rows),
    ("megamoe_stages", megamoe_stage_rows),
]


def refuse_duplicates(ids, what):
    """ValueError "<what>: [ids given more than once]" if any id repeats."""
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"{what}: {sorted(dup)}")


@dataclass
class Prediction:
    """A configuration measured on hardware whose figures the repository does not have."""
    family: str
    case: str
    run: Run
    quantities: tuple          # view names (us), "kernel" (us) or "ratio_<pipe>" (%)

    @property
    def id(self):
        return f"{self.family}/{self.case}"


def unit_of(quantity):
    return "%" if quantity.startswith("ratio_") else "us"


def error_of(quantity, simulated, measured):
    """A row's error: relative, in % of the measurement, for a time; the difference in points for a
    ratio (a pipe ratio of 5.8% off by 5 points is not "86% off")."""
    if unit_of(quantity) == "%":
        return simulated - measured
    return (simulated - measured) / measured * 100.0


def error_unit(quantity):
    return " pts" if unit_of(quantity) == "%" else "%"


def load_predictions(calibration_dir, soc, derived=()):
    """The configurations of predictions_<soc>.csv and of each derived SoC's file (a missing file:
    none); a derived SoC's runs use its profile."""
    out = []
    for name in (soc, *derived):
        path = os.path.join(calibration_dir, f"predictions_{name}.csv")
        if not os.path.exists(path):
            continue
        for r in _read_csv(path):
            if r["soc"] != name:
                raise ValueError(f"{path}: a row for {r['soc']} in the file of {name}")
            quantities = tuple(q.strip() for q in r["quantities"].split(";") if q.strip())
            if not quantities:
                raise ValueError(f"{path}: {r['family']}/{r['case']} names no quantity")
            run = Run("tandem", tuple(r["args"].split()), "" if name == soc else name)
            out.append(Prediction(r["family"], r["case"], run, quantities))
    refuse_duplicates([p.id for p in out], f"{calibration_dir}: duplicate prediction configurations")
    return out


def load_rows(calibration_dir, soc, derived=()):
    """Every row of every data set the repository has for `soc` and for the SoCs whose profiles
    derive from it (`derived`: their rows join the same fits, on their own profiles); a missing
    file: no rows."""
    rows = []
    for name in (soc, *derived):
        for data, reader in DATASETS:
            path = os.path.join(calibration_dir, f"{data}_{name}.csv")
            if os.path.exists(path):
                rows.extend(reader(path, "" if name == soc else name))
    refuse_duplicates([r.id for r in rows], f"duplicate row ids in {calibration_dir}")
    return rows

