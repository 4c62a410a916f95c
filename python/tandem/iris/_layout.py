"""How a per-rank Iris call is laid out for the simulated op: the product's extents (M, K, N),
which of them the op splits over the ranks (from its description, ctx.ops.info: a_split,
b_split, out_split, k_per_rank), and each padded with zeros to whole tiles, shard by shard.

Any shape runs this way: the op runs on the padded operands, each rank gets exactly its Iris-shaped
result, and the simulated time counts the padded work, as hardware running padded tiles would.
"""
from __future__ import annotations

import numpy as np

FRACTAL = 16                # a tile side is a multiple of the cube's fractal
DEFAULT_TILE = (128, 256)   # Tandem's default output tile (rows, cols): the fitted tile's bound


def round_up(v: int, step: int) -> int:
    return (v + step - 1) // step * step


def fit(extent: int, limit: int) -> int:
    """The default tile side for an extent: at most `limit`, a multiple of the fractal."""
    return min(limit, round_up(max(extent, 1), FRACTAL))


class Dim:
    """One extent of the product, whole or in `shards` (one per rank: the first ones of
    ceil(size / shards), the last ones what is left, possibly nothing), each shard padded to
    whole tiles of `tile` (None: not padded)."""

    def __init__(self, size: int, shards: int, tile):
        self.size = size
        per = -(-size // shards)
        self.sizes = [max(0, min(per, size - s * per)) for s in range(shards)]
        self.starts = [s * per for s in range(shards)]
        self.padded = round_up(per, tile) if tile else per  # one shard's padded extent

    @property
    def split(self) -> bool:
        return len(self.sizes) > 1

    @property
    def whole(self) -> int:
        """The padded extent of the whole: the shards' padded blocks one after the other."""
        return self.padded * len(self.sizes)

    def pad_whole(self, x: np.ndarray, axis: int, out: np.ndarray):
        """Writes x (the whole extent along `axis`) into out (the padded whole), shard by shard."""
        for s, (start, size) in enumerate(zip(self.starts, self.sizes)):
            _take(out, axis, s * self.padded, size)[...] = _take(x, axis, start, size)

    def crop_whole(self, y: np.ndarray, axis: int) -> np.ndarray:
        """The whole extent out of a padded whole."""
        return np.concatenate([_take(y, axis, s * self.padded, size) for s, size in enumerate(self.sizes)], axis=axis)

    def crop_shard(self, y: np.ndarray, axis: int, s: int) -> np.ndarray:
        """Shard s out of its padded block."""
        return _take(y, axis, 0, self.sizes[s])


def _take(x: np.ndarray, axis: int, start: int, size: int) -> np.ndarray:
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, start + size)
    return x[tuple(index)]


class Layout:
    """A call's operands as the op takes them: for A, B and the output, whether each axis holds
    the whole extent or this rank's shard of it; M, K and N as Dims."""

    def __init__(self, info: dict, world: int, m: int, k: int, n: int, base_m: int, base_n: int, k_step: int,
                 output_shard: bool):
        kpr = info["k_per_rank"]
        self.world = world
        # Which axes hold a rank's shard: (rows, cols) of A, B and the op's output.
        self.a_shard = (not kpr and info["a_split"] == "rows", not kpr and info["a_split"] == "cols")
        self.b_shard = (not kpr and info["b_split"] == "rows", not kpr and info["b_split"] == "cols")
        self.out_shard = (info["out_split"] == "rows", info["out_split"] == "cols")
        self.output_shard = output_shard  # the caller's output is the shard (else the whole, Iris's tile path)
        m_split = self.a_shard[0] or self.out_shard[0]
        n_split = self.b_shard[1] or self.out_shard[1]
        k_split = self.a_shard[1] or self.b_shard[0]
        self.m = Dim(m, world if m_split else 1, base_m)
        self.n = Dim(n, world if n_split else 1, base_n)
        self.k = Dim(k, world if k_split else 1, k_step if k_split else None)  # the op pads a K of its own

    def shape(self, dims, shard) -> tuple:
        return tuple(d.padded if s else d.whole for d, s in zip(dims, shard))

    def operand(self, x: np.ndarray, dims, shard) -> np.ndarray:
        """A rank's operand (float32 or int8 values) padded, axis by axis: a shard axis to its
        block, a whole axis shard by shard."""
        dtype = np.int8 if x.dtype == np.int8 else np.float32
        for axis in (0, 1):
            shape = list(x.shape)
            shape[axis] = dims[axis].padded if shard[axis] else dims[axis].whole
            out = np.zeros(shape, dtype=dtype)
            if shard[axis]:
                _take(out, axis, 0, x.shape[axis])[...] = x
            else:
                dims[axis].pad_whole(x, axis, out)
            x = out
        return x

    def a(self, x):
        return self.operand(x, (self.m, self.k), self.a_shard)

    def b(self, x):
        return self.operand(x, (self.k, self.n), self.b_shard)

    def out_shape(self) -> tuple:
        return self.shape((self.m, self.n), self.out_shard)

    def bias(self, v: np.ndarray, per_row: bool) -> np.ndarray:
        """A 1-D bias as the op takes it: a column (whole M) or a row (whole N), padded."""
        if per_row:
            return self.operand(v.reshape(-1, 1), (self.m, Dim(1, 1, None)), (False, True))
        return self.operand(v.reshape(1, -1), (Dim(1, 1, None), self.n), (True, False))

    def result(self, y: np.ndarray, rank: int) -> np.ndarray:
        """Rank `rank`'s result out of its padded output: its shard, or the whole."""
        for axis, (dim, shard) in enumerate(zip((self.m, self.n), self.out_shard)):
            y = dim.crop_shard(y, axis, rank) if shard else dim.crop_whole(y, axis)
        return y

    def gathered(self, results: list) -> np.ndarray:
        """The whole result, from every rank's result (their shards along the split axis)."""
        axis = 0 if self.out_shard[0] else 1
        return np.concatenate(results, axis=axis)


def owned_tiles(m: int, n: int, world: int, block_m: int, block_n: int, group_m: int) -> list:
    """Iris's tile path for a split output written at full size: the (M, N) output is cut into
    block_m x block_n tiles numbered in Iris's (Triton's) grouped order (groups of group_m tile
    rows, down the rows of a group first, then across; group_m = 1 is row-major). Rank r owns the
    contiguous ids [r * T // W, (r + 1) * T // W) with T // W tiles each, the last rank also the
    remainder. Returns, per rank, (rows, cols) slices of its tiles."""
    tiles_m, tiles_n = -(-m // block_m), -(-n // block_n)
    total = tiles_m * tiles_n
    per = total // world

    def coord(t: int) -> tuple:
        in_group = group_m * tiles_n
        first_m = (t // in_group) * group_m
        rows_here = min(tiles_m - first_m, group_m)
        return first_m + (t % in_group) % rows_here, (t % in_group) // rows_here

    owned = []
    for r in range(world):
        first, last = r * per, (r + 1) * per if r < world - 1 else total
        owned.append([(slice(i * block_m, (i + 1) * block_m), slice(j * block_n, (j + 1) * block_n))
                      for i, j in map(coord, range(first, last))])
    return owned
