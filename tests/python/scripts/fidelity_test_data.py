"""What the fidelity report's end-to-end tests share: a calibration folder whose AllGather+GEMM rows
are 'measured' as the shipped profile gives them, so that each row is 0% off until a test changes
the model."""
import json
import os
import subprocess


def simulated_pipelined_us(binary, ranks, m, k, n, tmp):
    """Rank 0's pipelined view of a timing-only AllGather+GEMM run on the shipped profile."""
    out = os.path.join(tmp, "r.json")
    subprocess.run([binary, "-n", str(ranks), "--gm", str(m), "--gk", str(k), "--gn", str(n), "--timing-only",
                    "--quiet", "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)["per_rank"][0]["pipelined_us"]


def write_allgather_rows(binary, cases, tmp):
    """A calibration folder under `tmp` with `cases` ((ranks, m, k, n) each) as Ascend910B1's
    AllGather+GEMM rows, measured as simulated; returns the folder."""
    cal = os.path.join(tmp, "cal")
    os.makedirs(cal)
    with open(os.path.join(cal, "allgather_gemm_Ascend910B1.csv"), "w") as f:
        f.write("soc,ranks,m,k,n,measured_ms\n")
        for c in cases:
            f.write(f"Ascend910B1,{c[0]},{c[1]},{c[2]},{c[3]},{simulated_pipelined_us(binary, *c, tmp) / 1000.0!r}\n")
    return cal
