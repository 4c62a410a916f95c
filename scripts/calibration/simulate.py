"""Runs the simulator for the calibration rows, on the shipped profile or on a copy of it with some
parameters changed, and caches what it ran (the same profile text and run give the same result:
the simulator is deterministic)."""
import hashlib
import json
import os
import re
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor


class SimulationError(RuntimeError):
    pass


def with_values(profile_text, values, add_missing=False):
    """The profile text with `values` ({"section.key": number}) substituted. An entry the text
    lacks is an error, or with `add_missing` added at the end of its section (the section made if
    need be), marked assumed: a profile that derives from another states only what differs, so a
    what-if of a base entry on a derived profile adds it there."""
    lines = profile_text.split("\n")
    section = None
    done = set()
    for i, line in enumerate(lines):
        m = re.match(r"^\[(\w+)\]\s*$", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^(\w+)\s*=\s*\{\s*value\s*=\s*([^,}]+)(.*)$", line)
        if not m or section is None:
            continue
        key = f"{section}.{m.group(1)}"
        if key in values:
            lines[i] = f"{m.group(1)} = {{ value = {values[key]!r}{m.group(3)}"
            done.add(key)
    missing = set(values) - done
    if missing and not add_missing:
        raise SimulationError(f"the profile has no entry {sorted(missing)}")
    for key in sorted(missing):
        section, name = key.split(".", 1)
        entry = f'{name} = {{ value = {values[key]!r}, basis = "assumed", source = "a what-if (fidelity.py --set)" }}'
        headers = [i for i, line in enumerate(lines) if re.match(r"^\[(\w+)\]\s*$", line)]
        mine = [i for i in headers if lines[i].strip() == f"[{section}]"]
        if not mine:
            lines += ["", f"[{section}]", entry]
            continue
        end = next((i for i in headers if i > mine[0]), len(lines))
        while end > mine[0] + 1 and not lines[end - 1].strip():
            end -= 1
        lines.insert(end, entry)
    return "\n".join(lines)


def profile_value(profile_text, key):
    section, name = key.split(".")
    current = None
    for line in profile_text.split("\n"):
        m = re.match(r"^\[(\w+)\]\s*$", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(rf"^{name}\s*=\s*\{{\s*value\s*=\s*([^,}}]+)", line)
        if m and current == section:
            return float(m.group(1))
    raise SimulationError(f"the profile has no entry {key}")


def split_key(key):
    """("Soc", "section.key") for "Soc:section.key", ("", key) for a key of the report's own profile."""
    soc, sep, rest = key.rpartition(":")
    return (soc, rest) if sep else ("", key)


class Simulator:
    """`profile_text` is the report's SoC's profile; `derived_texts` ({soc: text}) the profiles that
    derive from it, written beside it so that a change to it reaches them too. A value's key is
    "section.key" for the report's profile, "Soc:section.key" for a derived one's own entry."""

    def __init__(self, tandem_bin, tget_bin, soc, profile_text, jobs=2, derived_texts=None):
        self.tandem_bin = tandem_bin
        self.tget_bin = tget_bin
        self.soc = soc
        self.profile_text = profile_text
        self.derived_texts = dict(derived_texts or {})
        self.jobs = max(1, jobs)
        self._cache = {}
        self._lock = threading.Lock()
        self._tmp = tempfile.TemporaryDirectory(prefix="tandem-fidelity-")
        self.runs = 0

    def close(self):
        self._tmp.cleanup()

    def value_of(self, key):
        soc, name = split_key(key)
        return profile_value(self.derived_texts[soc] if soc else self.profile_text, name)

    def _texts(self, values):
        """{soc: profile text} of the report's profile and the derived ones, with `values` in."""
        by_soc = {}
        for key, v in (values or {}).items():
            soc, name = split_key(key)
            if soc and soc not in self.derived_texts:
                raise SimulationError(f"{key}: no derived profile {soc} in this report")
            by_soc.setdefault(soc or self.soc, {})[name] = v
        texts = {self.soc: self.profile_text, **self.derived_texts}
        return {soc: with_values(text, by_soc[soc]) if soc in by_soc else text for soc, text in texts.items()}

    def _profile_path(self, values, soc=""):
        texts = self._texts(values)
        digest = hashlib.sha1("\0".join(f"{k}\0{texts[k]}" for k in sorted(texts)).encode()).hexdigest()[:16]
        folder = os.path.join(self._tmp.name, digest)
        with self._lock:
            if not os.path.exists(os.path.join(folder, "done")):
                os.makedirs(folder, exist_ok=True)
                for name, text in texts.items():  # a profile's file name is its SoC name; bases beside it
                    with open(os.path.join(folder, f"{name}.toml"), "w") as f:
                        f.write(text)
                open(os.path.join(folder, "done"), "w").close()
        return os.path.join(folder, f"{soc or self.soc}.toml"), digest

    def _run_tandem(self, profile, args):
        with tempfile.TemporaryDirectory(dir=self._tmp.name) as tmp:
            out = os.path.join(tmp, "r.json")
            cmd = [self.tandem_bin, "--profile", profile, *args, "--timing-only", "--quiet", "--json", out]
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                raise SimulationError(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
            with open(out) as f:
                result = json.load(f)
        rank0 = (result.get("per_rank") or [None])[0]
        if rank0 is None:
            raise SimulationError(f"{' '.join(cmd)}: the results JSON has no per_rank[] entries")
        # Rank 0's own views, as the published host programs print them.
        values = {
            "compute_only": rank0["compute_only_us"],
            "seq_comm": rank0["seq_comm_us"],
            "seq_compute": rank0["seq_compute_us"],
            "sequential": rank0["seq_comm_us"] + rank0["seq_compute_us"],
            "pipelined": rank0["pipelined_us"],
        }
        span = pipelined_device_span_max_rank(result)
        if span is not None:
            values["pipelined_kernel_max_rank"] = span
        values.update(pipelined_stage_windows(result))
        launch = rank0_compute_only_launch(result)
        if launch is not None:
            values["kernel"] = launch["kernel_us"]
            # Per pipe busy / kernel time, mean over the AIC cores, in % (what msprof's
            # PipeUtilization reports; docs/RESULTS.md).
            for pipe, stats in ((launch.get("pipe_ratio") or {}).get("aic") or {}).items():
                values[f"ratio_{pipe}"] = 100.0 * stats["mean"]
        return values

    def _run_tget(self, profile, sizes):
        with tempfile.TemporaryDirectory(dir=self._tmp.name) as tmp:
            out = os.path.join(tmp, "t.json")
            cmd = [self.tget_bin, "--profile", profile, "--sizes", ",".join(sizes), "--json", out]
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                raise SimulationError(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
            with open(out) as f:
                result = json.load(f)
        out = {str(r["size_bytes"]): r["tget_device_us"] for r in result["rows"]}
        out.update({f"async/{r['size_bytes']}": r["tget_async_device_us"] for r in result["rows"]})
        return out

    def run(self, run, values=None):
        """The run's outputs ({quantity: us}) with the profile changed by `values`."""
        profile, digest = self._profile_path(values or {}, run.soc)
        key = (digest, run)
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        if run.kind == "tandem":
            out = self._run_tandem(profile, list(run.args))
        elif run.kind == "tget_bench":
            out = self._run_tget(profile, list(run.args))
        else:
            raise SimulationError(f"unknown run kind {run.kind}")
        with self._lock:
            self._cache[key] = out
            self.runs += 1
        return out

    def run_many(self, requests):
        """[(run, values)] -> [outputs], several at a time."""
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            return list(pool.map(lambda rv: self.run(*rv), requests))


def pipelined_device_span_max_rank(result):
    """The pipelined view's device time as an in-kernel timer takes it (the MoE kernel's
    get_sys_cnt: the last core's end less the first core's start on a rank, the slowest rank):
    per rank, the last end less the first start over the view's kernels, max over the ranks.
    None if the results report no pipelined kernel."""
    spans = {}
    for launch in result.get("kernels") or []:
        if launch.get("view") != "pipelined":
            continue
        for r in launch.get("per_rank") or []:
            lo, hi = spans.get(r["rank"], (r["start_us"], r["end_us"]))
            spans[r["rank"]] = (min(lo, r["start_us"]), max(hi, r["end_us"]))
    return max(hi - lo for lo, hi in spans.values()) if spans else None


def pipelined_stage_windows(result):
    """Rank 0's stage windows in the pipelined view, from its first kernel's start (what a
    profile's timeline shows, 0 = the earliest block start): stage_start_<s>, stage_end_<s> and
    stage_span_<s> in us, for every stage the op names, and for every item of a stage (moe_ffn:
    a local expert) stage_item_start_<s>_<i> and stage_item_end_<s>_<i>."""
    starts, windows, items = [], {}, {}
    for launch in result.get("kernels") or []:
        if launch.get("view") != "pipelined" or not launch.get("per_rank"):
            continue
        mine = launch["per_rank"][0]
        if mine.get("rank", 0) != 0:
            continue
        starts.append(mine["start_us"])
        for st in launch.get("stages") or []:
            lo, hi = windows.get(st["stage"], (st["start_us"], st["end_us"]))
            windows[st["stage"]] = (min(lo, st["start_us"]), max(hi, st["end_us"]))
            for it in st.get("items") or []:
                key = (st["stage"], it["item"])
                lo, hi = items.get(key, (it["start_us"], it["end_us"]))
                items[key] = (min(lo, it["start_us"]), max(hi, it["end_us"]))
    if not starts:
        return {}
    origin = min(starts)
    out = {}
    for name, (lo, hi) in windows.items():
        out[f"stage_start_{name}"] = lo - origin
        out[f"stage_end_{name}"] = hi - origin
        out[f"stage_span_{name}"] = hi - lo
    for (name, item), (lo, hi) in items.items():
        out[f"stage_item_start_{name}_{item}"] = lo - origin
        out[f"stage_item_end_{name}_{item}"] = hi - origin
    return out


def rank0_compute_only_launch(result):
    """The compute-only view's first kernel launch in the results JSON (its device time and pipe
    ratios), if it reports one."""
    for launch in result.get("kernels") or []:
        if launch.get("view") in ("compute_only", "compute-only") and "kernel_us" in launch:
            return launch
    return None
