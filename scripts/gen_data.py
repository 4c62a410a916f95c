#!/usr/bin/python3
"""Writes the AllGather+GEMM seed's input and golden files, byte-identical to Tandem's C++ host.

    gen_data.py --ranks N --gm M --gk K --gn N [--seed S] [--out DIR]

Files (raw little-endian, row-major, no header; kernels/allgather_gemm/README.md "Data layout"):
    pe_<r>_a.bin   fp16, (M/N_ranks) x K   rank r's rows [r*M/n, (r+1)*M/n) of A
    pe_<r>_b.bin   fp16, N x K             B stored transposed, the same for every rank
    golden.bin     fp32, M x N             A @ B with the fp16 inputs widened to fp32

Values are integers 1..4 from a counter-based splitmix64, exactly as host/run/input_gen.hpp defines
it: the i-th output of a generator started at state s is mix(s + (i+1) * GAMMA); value =
1 + (output >> 62). A uses s = seed ^ 0x4141414141414141 with i = row*K + col (global row);
B^T uses s = seed ^ 0x4242424242424242 with i = n*K + k.

Run with /usr/bin/python3: Debian's numpy is installed for it (the python3 first on PATH may be
another interpreter without numpy).
"""
import argparse
import os
import sys

try:
    import numpy as np
except ImportError:
    sys.exit("gen_data.py: numpy is missing; run this script with /usr/bin/python3 "
             "(Debian's python3-numpy), e.g. /usr/bin/python3 scripts/gen_data.py ...")

MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
STREAM_A = 0x4141414141414141
STREAM_B = 0x4242424242424242
DEFAULT_SEED = 2025  # host/run/input_gen.hpp kDefaultInputSeed


def splitmix64_at(state, i):
    """The i-th output of splitmix64 started at `state` (reference, plain Python ints)."""
    z = (state + (i + 1) * GAMMA) & MASK64
    z = ((z ^ (z >> 30)) * MIX1) & MASK64
    z = ((z ^ (z >> 27)) * MIX2) & MASK64
    return z ^ (z >> 31)


def splitmix64_block(state, first, count):
    """Outputs first .. first+count-1 as a uint64 array: numpy's uint64 arithmetic wraps
    modulo 2^64, which is the masking above done for a whole array at once."""
    u = np.uint64
    i = np.arange(count, dtype=np.uint64) + u(first + 1)
    with np.errstate(over="ignore"):
        z = u(state & MASK64) + i * u(GAMMA)
        z = (z ^ (z >> u(30))) * u(MIX1)
        z = (z ^ (z >> u(27))) * u(MIX2)
    return z ^ (z >> u(31))


def values(state, first, count):
    """Integers 1..4 as float16; the vectorised generator is checked against the reference."""
    out = splitmix64_block(state, first, count)
    for j in range(min(count, 4)):
        assert int(out[j]) == splitmix64_at(state, first + j), "numpy splitmix64 disagrees with the reference"
    return (out >> np.uint64(62)).astype(np.float16) + np.float16(1)


def positive_int(text):
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole decimal number")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be positive")
    return value


def seed_int(text):
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if not 0 <= value <= MASK64:
        raise argparse.ArgumentTypeError(f"{value} is outside 0..2^64-1")
    return value


def write_atomic(path, array):
    """Temp file + rename, so a reader never sees half a file (as the C++ host does)."""
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        array.tofile(tmp)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        sys.exit(f"gen_data.py: cannot write '{path}': {e.strerror}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=positive_int, required=True, help="number of ranks n (>= 1)")
    parser.add_argument("--gm", type=positive_int, required=True, help="global M, a multiple of --ranks")
    parser.add_argument("--gk", type=positive_int, required=True, help="K")
    parser.add_argument("--gn", type=positive_int, required=True, help="N")
    parser.add_argument("--seed", type=seed_int, default=DEFAULT_SEED,
                        help=f"generator seed, 0..2^64-1 (default {DEFAULT_SEED}, as the C++ host)")
    parser.add_argument("--out", default="out", help="output directory, created if missing (default: out)")
    args = parser.parse_args(argv)

    m, k, n, ranks = args.gm, args.gk, args.gn, args.ranks
    if m % ranks != 0:
        lo = max(ranks, m // ranks * ranks)
        parser.error(f"--gm {m}: M must be a multiple of --ranks {ranks} (each rank holds M/n rows); "
                     f"nearest valid: {lo if m - lo <= lo + ranks - m else lo + ranks}")
    rows = m // ranks
    os.makedirs(args.out, exist_ok=True)

    a_state = args.seed ^ STREAM_A
    b_state = args.seed ^ STREAM_B
    b_t = values(b_state, 0, n * k).reshape(n, k)  # N x K, as stored
    golden = np.empty((m, n), dtype=np.float32)
    b_f32 = b_t.astype(np.float32).T  # K x N
    for r in range(ranks):
        a = values(a_state, r * rows * k, rows * k).reshape(rows, k)
        write_atomic(os.path.join(args.out, f"pe_{r}_a.bin"), a)
        write_atomic(os.path.join(args.out, f"pe_{r}_b.bin"), b_t)
        golden[r * rows:(r + 1) * rows] = a.astype(np.float32) @ b_f32
    write_atomic(os.path.join(args.out, "golden.bin"), golden)
    return 0


if __name__ == "__main__":
    sys.exit(main())
