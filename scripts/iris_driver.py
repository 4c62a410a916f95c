"""What both Iris benchmark drivers (iris_all_gather_matmul.py, iris_streamk.py) do the same way:
check the simulator is built, run one configuration with a results JSON, and print its line.
Each driver keeps only the mapping of its Iris program's flags onto Tandem's. Standard library only."""
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_BINARY = os.path.join(ROOT, "build", "tandem")


def require_binary(path):
    """Exits with a message naming the build command when `path` is not an executable."""
    if not os.access(path, os.X_OK):
        raise SystemExit(f"{path}: not built (cmake --build build -j2)")


def run_tandem(cmd, json_path):
    """Runs `cmd` (which writes its results to `json_path`): (results, None), or (None, the
    simulator's message) when it wrote no results; (results, message) when it ran but failed
    (a verification that did not pass still writes its results)."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    message = (proc.stderr or proc.stdout).strip() or f"tandem exited with {proc.returncode}"
    if proc.returncode != 0 and not os.path.exists(json_path):
        return None, message
    with open(json_path) as f:
        return json.load(f), (message if proc.returncode != 0 else None)


def verdict_line(label, results):
    """'PASS   label' or 'FAIL   label' from the results' verification; (line, passed)."""
    ok = results["verification"] == "passed"
    return f"{'PASS' if ok else 'FAIL'}   {label}", ok


def timing_line(label, results, path, *figures):
    """'label: pipelined .. us, <figures>, .. TFLOPS/rank -> path'; `figures` are extra
    (name, text) pairs printed between the pipelined time and the TFLOPS."""
    parts = [f"pipelined {results['pipelined_us']:.1f} us"] + [text for _, text in figures]
    return f"{label}: {', '.join(parts)}, {results['tflops_per_rank']:.1f} TFLOPS/rank -> {path}"
