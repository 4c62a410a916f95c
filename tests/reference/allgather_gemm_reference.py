#!/usr/bin/python3
"""AllGather+GEMM stays what it was: results, outputs and traces of a few configurations against
a reference recorded from the program before the op-generic host (tests/reference/
allgather_gemm_reference.json).

    /usr/bin/python3 tests/reference/allgather_gemm_reference.py --binary build/tandem        # check
    /usr/bin/python3 tests/reference/allgather_gemm_reference.py --binary OLD_BIN --record    # rewrite

What is compared, per configuration:
  * every key of the recorded results JSON keeps its value; a new key must be one of the keys
    the op adds (docs/RESULTS.md; or the variant's knobs as used);
  * the trace's events (a SHA-256 of them, canonical JSON) are the same; its otherData holds the
    results object and the profile's path, so it is compared as the results are;
  * the output files (SHA-256 of each) are the same.
Recording is for a deliberate change of the timing model: say so in the commit.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "allgather_gemm_reference.json")

CONFIGS = {
    "functional_2ranks": ["-n", "2", "--gm", "1024", "--gk", "512", "--gn", "512"],
    "functional_ring_4ranks": ["-n", "4", "--gm", "1024", "--gk", "512", "--gn", "768", "--comm-mode", "ring"],
    "functional_few_blocks_8ranks": ["-n", "8", "--gm", "2048", "--gk", "512", "--gn", "256", "--comm-blocks", "3",
                                     "--chunk-tiles", "3"],
    "timing_only_8ranks": ["-n", "8", "--gm", "4096", "--gk", "1024", "--gn", "512", "--timing-only"],
}

# The keys every op adds to a result (docs/RESULTS.md), the seed's knob reported as used, each
# launch's device time and pipe use (docs/RESULTS.md "Kernel time and pipe utilisation"), and the
# neutral names of the communication figures, beside the seed's allgather_* keys they alias
# (docs/PARAMETERS.md "The results JSON's communication figures").
NEW_KEYS = {"op", "variant", "schedule", "dtype", "out_dtype", "bias", "comm_kind", "comm_bytes_per_rank",
            "comm_gib_s", "chunk_tiles", "kernels", "comm_payload_bytes", "comm_payload_gib_s", "comm_payload_gb_s",
            "warmup_runs"}
# otherData keys that name the checkout, not the run.
PLACE_KEYS = {"profile_file"}


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def run(binary, args, work):
    out_dir = os.path.join(work, "out")
    cmd = [binary] + args + ["--json", os.path.join(work, "r.json"), "--trace", os.path.join(work, "t.json"),
                             "--out-dir", out_dir, "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    with open(os.path.join(work, "r.json")) as f:
        results = json.load(f)
    with open(os.path.join(work, "t.json")) as f:
        trace = json.load(f)
    other = {k: v for k, v in trace.get("otherData", {}).items() if k not in PLACE_KEYS}
    outputs = {}
    if os.path.isdir(out_dir):
        for name in sorted(os.listdir(out_dir)):
            with open(os.path.join(out_dir, name), "rb") as f:
                outputs[name] = sha256(f.read())
    return {"results": results, "trace_events_sha256": sha256(canonical(trace["traceEvents"])),
            "trace_other_data": other, "outputs_sha256": outputs}


def compare(name, ref, now):
    problems = []
    for key, value in ref["results"].items():
        if key not in now["results"]:
            problems.append(f"results key '{key}' is gone")
        elif now["results"][key] != value:
            problems.append(f"results '{key}': {value} -> {now['results'][key]}")
    for key in sorted(set(now["results"]) - set(ref["results"])):
        if key not in NEW_KEYS:
            problems.append(f"results key '{key}' is new and not one of the keys docs/RESULTS.md lists")
    for key, value in ref["trace_other_data"].items():
        if now["trace_other_data"].get(key) != value:
            problems.append(f"trace otherData '{key}' changed")
    for key in set(now["trace_other_data"]) - set(ref["trace_other_data"]):
        if key not in NEW_KEYS:
            problems.append(f"trace otherData key '{key}' is new and not one of the keys docs/RESULTS.md lists")
    if now["trace_events_sha256"] != ref["trace_events_sha256"]:
        problems.append("the trace's events differ")
    if now["outputs_sha256"] != ref["outputs_sha256"]:
        problems.append("the output files differ")
    return [f"{name}: {p}" for p in problems]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.environ.get("TANDEM_BIN", "build/tandem"))
    ap.add_argument("--record", action="store_true", help="rewrite the reference from --binary")
    args = ap.parse_args()
    observed = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, cfg in CONFIGS.items():
            work = os.path.join(tmp, name)
            os.makedirs(work)
            observed[name] = run(args.binary, cfg, work)
    if args.record:
        with open(REFERENCE, "w") as f:
            json.dump(observed, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"recorded {len(observed)} configurations in {REFERENCE}")
        return 0
    with open(REFERENCE) as f:
        reference = json.load(f)
    problems = []
    for name in CONFIGS:
        problems += compare(name, reference[name], observed[name])
    for p in problems:
        print(p)
    print(f"{len(CONFIGS)} configurations: {'same as the reference' if not problems else 'DIFFERENT'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
