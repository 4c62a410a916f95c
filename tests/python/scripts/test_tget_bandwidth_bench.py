"""build/tests/tget_bandwidth_bench's remote-store column (--tput): one block's TPUT of each size,
one store at a time, the experiment that would fix the hop latency of a remote store (sim/CALIBRATION.md,
"How sure the predictions are"). A store's bytes land a hop's latency after they leave, and the
block waits for each store before the next, so the latency shows once per staging tile: moving
interconnect.link_latency_ns by 1 us moves a 4 KB TPUT by 1 us and a 256 KB one (four 64 KiB
tiles) by 4 us, and leaves the reads alone. Runs under unittest (ctest) or pytest; TGET_BENCH
names the bench binary (default build/tests/tget_bandwidth_bench); without it (a build without
Google Benchmark has no benches) the tests are skipped."""
import json
import os
import re
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BENCH = os.environ.get("TGET_BENCH", os.path.join(ROOT, "build", "tests", "tget_bandwidth_bench"))
PROFILE = os.path.join(ROOT, "sim", "profiles", "Ascend910B1.toml")
SIZES = [4096, 65536, 262144]


def run_bench(tmp, *args):
    out = os.path.join(tmp, "bench.json")
    proc = subprocess.run([BENCH, "--sizes", ",".join(map(str, SIZES)), "--json", out, *args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(proc.stdout + proc.stderr)
    with open(out) as f:
        return {r["size_bytes"]: r for r in json.load(f)["rows"]}


def profile_with_link_latency(tmp, ns):
    """A copy of the shipped profile with another hop latency (the file name must stay the SoC's)."""
    with open(PROFILE) as f:
        text = f.read()
    changed, n = re.subn(r"^link_latency_ns = \{ value = [0-9.]+,", f"link_latency_ns = {{ value = {ns},", text,
                         flags=re.M)
    assert n == 1, "the profile's link_latency_ns line moved"
    d = os.path.join(tmp, f"latency_{ns}")
    os.makedirs(d)
    path = os.path.join(d, "Ascend910B1.toml")
    with open(path, "w") as f:
        f.write(changed)
    return path


@unittest.skipUnless(os.path.exists(BENCH), f"{BENCH} not built (the benches need Google Benchmark)")
class TputColumn(unittest.TestCase):
    def test_only_with_tput(self):
        with tempfile.TemporaryDirectory() as tmp:
            plain = run_bench(tmp)
            self.assertTrue(all("tput_device_us" not in r for r in plain.values()), plain)
            with_put = run_bench(tmp, "--tput")
        for size in SIZES:  # the reads are the same runs whether or not the stores are added
            self.assertEqual(plain[size]["tget_device_us"], with_put[size]["tget_device_us"])
            self.assertEqual(plain[size]["tget_async_device_us"], with_put[size]["tget_async_device_us"])
        times = [with_put[s]["tput_device_us"] for s in SIZES]
        self.assertTrue(all(t > 0 for t in times), times)
        self.assertLess(times[0], times[1])
        self.assertLess(times[1], times[2])
        # Past one staging tile the block repeats the same store: the rate holds.
        rate_64k, rate_256k = SIZES[1] / times[1], SIZES[2] / times[2]
        self.assertAlmostEqual(rate_64k, rate_256k, delta=0.01 * rate_64k)

    def test_hop_latency_shows_once_per_store(self):
        with tempfile.TemporaryDirectory() as tmp:
            base = run_bench(tmp, "--tput", "--profile", profile_with_link_latency(tmp, 1000))
            later = run_bench(tmp, "--tput", "--profile", profile_with_link_latency(tmp, 2000))
        stores = {4096: 1, 65536: 1, 262144: 4}  # 64 KiB staging tiles
        for size, n in stores.items():
            moved = later[size]["tput_device_us"] - base[size]["tput_device_us"]
            self.assertAlmostEqual(moved, 1.0 * n, delta=0.01, msg=f"{size} bytes")
            self.assertEqual(base[size]["tget_device_us"], later[size]["tget_device_us"])


if __name__ == "__main__":
    unittest.main()
