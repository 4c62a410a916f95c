"""Inputs and the numpy reference of any registered op, from its sharding (ctx.ops.info(op)):
the global A (M x K_total) and B (K_total x N) are cut into each rank's share exactly as the
simulator's host does (host/run/op_inputs.cpp), so an op added later works here unchanged."""
import numpy as np

NP_DTYPE = {"fp16": np.float16, "bf16": np.float32, "fp32": np.float32}

# Variants that run only some shapes: the published GEMM kernel (gemm pto_performance) runs
# multiples of its 4 x 6 grid of 128 x 256 tiles and of its 256-deep L1 panels (M % 512,
# N % 1536, K % 256). (m, n, k): the smallest it runs.
FIXED_GRID_SHAPES = {("gemm", "pto_performance"): (512, 1536, 256)}


def shape_for(op, variant, m, n, k):
    """(m, n, k), or the smallest shape the variant runs when it runs only some."""
    return FIXED_GRID_SHAPES.get((op, variant), (m, n, k))


def shard_shapes(info, ranks, m, n, k):
    k_total = k * ranks if info["k_per_rank"] else k
    a_rows = m // ranks if info["a_split"] == "rows" else m
    a_cols = k_total // ranks if info["a_split"] == "cols" else k_total
    b_k = k_total // ranks if (info["k_per_rank"] or info["b_split"] == "rows") else k_total
    b_n = n // ranks if info["b_split"] == "cols" else n
    out_cols = n // ranks if info["out_split"] == "cols" else n
    return k_total, (a_rows, a_cols), (b_k, b_n), (m, out_cols)


def make_problem(ctx, op, m, n, k, dtype="fp16", out_dtype=None, bias=None, seed=0):
    """Tensors (A, B, output, bias or None) on ctx and the expected output per rank (numpy)."""
    info = ctx.ops.info(op)
    w = ctx.num_ranks
    out_dtype = out_dtype or info["out_dtypes"][0]
    k_total, a_shape, b_shape, out_shape = shard_shapes(info, w, m, n, k)
    rng = np.random.default_rng(seed)
    lo, hi = (1, 5) if out_dtype == "fp32" else (-1, 2)  # exact sums, as the simulator's own inputs
    a_glob = rng.integers(lo, hi, size=(m, k_total)).astype(np.float32)
    shared_b = info["b_split"] == "replicated" and info["k_per_rank"]
    b_one = rng.integers(lo, hi, size=(k if shared_b else k_total, n)).astype(np.float32)
    b_glob = np.tile(b_one, (w, 1)) if shared_b else b_one
    a = np.stack([a_glob[r * a_shape[0]:(r + 1) * a_shape[0]] if info["a_split"] == "rows" else
                  a_glob[:, r * a_shape[1]:(r + 1) * a_shape[1]] if info["a_split"] == "cols" else a_glob
                  for r in range(w)])
    b = np.stack([b_glob[r * b_shape[0]:(r + 1) * b_shape[0]] if (info["b_split"] == "rows" or info["k_per_rank"]) else
                  b_glob[:, r * b_shape[1]:(r + 1) * b_shape[1]] if info["b_split"] == "cols" else b_glob
                  for r in range(w)])
    c = a_glob @ b_glob
    bias_t = None
    if bias is not None:
        length = n if bias == "n" else m
        v = rng.integers(lo, hi, size=(1, length)).astype(np.float32)
        c = c + (v if bias == "n" else v.T)
        shape = (w, 1, length) if bias == "n" else (w, length, 1)  # a row vector per column, a column vector per row
        bias_t = ctx.tensor(np.broadcast_to(v.astype(NP_DTYPE[dtype]).reshape(shape[1:]), shape).copy(), dtype=dtype)
    expected = [c[:, r * out_shape[1]:(r + 1) * out_shape[1]] if info["out_split"] == "cols" else c for r in range(w)]
    A = ctx.tensor(a.astype(NP_DTYPE[dtype]), dtype=dtype)
    B = ctx.tensor(b.astype(NP_DTYPE[dtype]), dtype=dtype)
    C = ctx.zeros(out_shape[0], out_shape[1], out_dtype)
    return A, B, C, bias_t, expected


def check(C, expected, out_dtype):
    """Largest error of any rank against the reference; raises AssertionError past tolerance."""
    out = C.numpy().astype(np.float32)
    tol = 0 if out_dtype == "fp32" else 1e-2
    worst = 0.0
    for r, e in enumerate(expected):
        err = np.abs(out[r] - e)
        bound = tol * np.maximum(1.0, np.abs(e))
        if np.any(err > bound):
            i = np.unravel_index(np.argmax(err - bound), err.shape)
            raise AssertionError(f"rank {r} element {i}: got {out[r][i]}, expected {e[i]}")
        worst = max(worst, float(err.max(initial=0.0)))
    return worst
