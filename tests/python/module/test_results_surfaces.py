"""One results type behind every surface: a call's results dict holds the command line's results
JSON figures under the same keys, with the same values, for the same simulation (the C++ side:
tests/host/results_surfaces_test.cpp). The command line is TANDEM_BIN (ctest sets it), else
build/tandem."""
import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

import tandem

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))
# The call's own keys, which the command line has no figure for (the knobs it has one by one).
CALL_ONLY = {"complete", "per_rank_us", "start_us", "end_us", "knobs", "verification_report"}


def cli_results(op, m, k, n):
    with tempfile.TemporaryDirectory(prefix="tandem_surfaces_") as d:
        path = os.path.join(d, "r.json")
        run = subprocess.run([BIN, "--op", op, "-n", "2", "--gm", str(m), "--gk", str(k), "--gn", str(n),
                              "--timing-only", "--json", path], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        with open(path) as f:
            return json.load(f)


@pytest.mark.parametrize("op,m,k,n,a_shape,out_shape", [
    ("allgather_gemm", 512, 512, 256, (256, 512), (512, 256)),
    ("matmul_all_reduce", 256, 512, 256, (256, 512), (256, 256)),
])
def test_results_dict_is_the_command_lines_json(op, m, k, n, a_shape, out_shape):
    ctx = tandem.Context(num_ranks=2, functional=False)
    a = np.zeros((2, *a_shape), np.float16)
    b = np.zeros((2, k, n), np.float16)
    out = np.zeros((2, *out_shape), np.float32)
    got = getattr(ctx.ops, op)(out, a, b, config={"all_views": True}).results
    want = cli_results(op, m, k, n)
    for key, value in got.items():
        if key == "knobs":
            for knob, v in value.items():
                assert want[knob] == v, knob
        elif key not in CALL_ONLY:
            assert key in want, f"{key}: in the results dict, not in the command line's JSON"
            assert want[key] == value, key
    for key in ("compute_only_us", "seq_comm_us", "seq_compute_us", "pipelined_us", "speedup",
                "overlap_eff_pct", "exposed_comm_us", "tflops_per_rank", "comm_payload_gib_s",
                "verification", "base_m", "base_n"):
        assert key in got, key
