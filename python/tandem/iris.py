"""Iris's per-rank programming model on a simulated Ascend cluster.

An Iris program runs once per rank: it makes its handle with ``iris.iris(heap_size)``, asks
``get_rank()``, makes its own tensors and calls ``ctx.ops.<op>(...)``; the op completes when
every rank has called it. Here the ranks are threads of one process, started by
``spawn(fn, nprocs, args)`` (Iris users start processes with torch.multiprocessing.spawn), and
tensors are numpy arrays (Iris's are torch tensors on the symmetric heap). Each collective call
of every rank is met with the same call of the other ranks; the op then runs once on the
simulated cluster (tandem.Context) and each rank's output array is written in place.

Shapes are Iris's, per rank (docs/IRIS.md has the table). Any shape runs: the op is run on
operands padded with zeros to its tiles, and each rank gets exactly the Iris-shaped output; the
simulated time counts the padded work, as hardware running padded tiles would.
"""
from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import threading
import warnings
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tandem import _core

__all__ = ["FusedConfig", "Iris", "IrisWorkspace", "iris", "spawn", "ops", "Error", "RanksDidNotMeet"]

Error = _core.Error


class RanksDidNotMeet(Error):
    """A collective call that cannot complete: a rank did not make it (in time, or at all)."""

# Iris's FusedConfig defaults (iris/ops/config.py).
_ALL_REDUCE_VARIANTS = ("atomic", "ring", "one_shot", "two_shot", "spinlock")
_FRACTAL = 16  # the cube's fractal: tile sides are multiples of it (docs/HARDWARE.md)
_DEFAULT_TILE = (128, 256)  # Tandem's default output tile (rows, cols)
# Inputs: float16, float32 or int8 (Iris's --datatype int8: int8 x int8 summed in int32, run
# with an fp32 output). Outputs also int32 (the sums) or int8 (Iris's acc.to(int8), wrapped),
# for int8 inputs only.
_DTYPES = {np.dtype(np.float16): "fp16", np.dtype(np.float32): "fp32", np.dtype(np.int8): "int8"}
_OUT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int8))
_INT_OUTPUTS = (np.dtype(np.int32), np.dtype(np.int8))
_DEFAULT_TIMEOUT_S = 120.0


@dataclasses.dataclass
class FusedConfig:
    """Iris's FusedConfig, with its fields and defaults.

    On the simulated Ascend cluster: block_size_m / block_size_n are the output tile (base-m x
    base-n) when given; the default tile is fitted to the shape (at most 128 x 256).
    all_reduce_variant picks matmul_all_reduce's variant ("spinlock" has no Tandem replica).
    num_sms (or gemm_sms, the example scripts' name), when given, is the number of compute blocks
    (AI cores) of the GEMM; comm_sms the communication kernel's blocks. block_size_k,
    group_size_m, num_xcds, chunk_size, cache_modifier_a/b, allow_tf32, all_reduce_num_rings,
    reduce_num_sms and ksplit describe a GPU's kernel and have no Ascend counterpart: they are
    validated as Iris validates them and otherwise ignored, with one warning per call naming those
    set (IrisWorkspace.ignored lists them).
    """

    block_size_m: int = 256
    block_size_n: int = 64
    block_size_k: int = 64
    group_size_m: int = 1
    num_sms: Optional[int] = None
    num_xcds: int = 1
    chunk_size: int = 1
    cache_modifier_a: str = ".ca"
    cache_modifier_b: str = ".ca"
    allow_tf32: bool = True
    all_reduce_variant: str = "two_shot"
    all_reduce_num_rings: int = 1
    reduce_num_sms: int = 64
    ksplit: bool = False
    # Iris's example scripts' names for the split of the GPU between GEMM and communication.
    gemm_sms: Optional[int] = None
    comm_sms: Optional[int] = None

    def __post_init__(self):
        # Which fields the caller set (the tile is fitted to the shape unless it was given).
        defaults = FusedConfig.__dataclass_fields__
        self._given = {f for f in defaults if getattr(self, f) != defaults[f].default}

    def validate(self, world_size: Optional[int] = None):
        """Iris's checks: positive sizes and a known all-reduce variant; Ascend's: tile sides are
        multiples of the cube fractal (16). Raises ValueError naming the field."""
        for name in ("block_size_m", "block_size_n", "block_size_k", "group_size_m", "num_xcds", "chunk_size",
                     "all_reduce_num_rings", "reduce_num_sms"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"FusedConfig.{name} = {value!r}: must be a positive integer")
        for name in ("num_sms", "gemm_sms", "comm_sms"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0):
                raise ValueError(f"FusedConfig.{name} = {value!r}: must be a positive integer or None")
        for name in ("cache_modifier_a", "cache_modifier_b"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"FusedConfig.{name} = {getattr(self, name)!r}: must be a string (a load cache "
                                 "policy such as '.ca')")
        for name in ("allow_tf32", "ksplit"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"FusedConfig.{name} = {getattr(self, name)!r}: must be True or False")
        if self.num_sms is not None and self.gemm_sms is not None and self.num_sms != self.gemm_sms:
            raise ValueError(f"FusedConfig.gemm_sms = {self.gemm_sms} and num_sms = {self.num_sms}: both set the GEMM's "
                             "blocks; give one")
        if self.all_reduce_variant not in _ALL_REDUCE_VARIANTS:
            raise ValueError(f"FusedConfig.all_reduce_variant = {self.all_reduce_variant!r}: must be one of "
                             + ", ".join(_ALL_REDUCE_VARIANTS))
        for name in ("block_size_m", "block_size_n"):
            if name in self._given and getattr(self, name) % _FRACTAL != 0:
                raise ValueError(f"FusedConfig.{name} = {getattr(self, name)}: an Ascend tile side is a multiple "
                                 f"of the cube fractal ({_FRACTAL}); nearest valid: "
                                 f"{max(_FRACTAL, round(getattr(self, name) / _FRACTAL) * _FRACTAL)}")
        if (world_size is not None and self.all_reduce_variant == "ring"
                and self.block_size_n % (world_size * self.all_reduce_num_rings) != 0):
            raise ValueError(f"FusedConfig.block_size_n = {self.block_size_n}: the ring variant needs it divisible "
                             f"by world_size x all_reduce_num_rings = {world_size * self.all_reduce_num_rings}")

    def given(self) -> set:
        return set(self._given)


_GPU_ONLY_FIELDS = ("block_size_k", "group_size_m", "num_xcds", "chunk_size", "cache_modifier_a", "cache_modifier_b",
                    "allow_tf32", "all_reduce_num_rings", "reduce_num_sms", "ksplit")


def _as_config(config: Any) -> FusedConfig:
    if config is None:
        return FusedConfig()
    if isinstance(config, FusedConfig):
        return config
    if isinstance(config, dict):
        fields = FusedConfig.__dataclass_fields__
        unknown = sorted(k for k in config if k not in fields)
        if unknown:
            raise ValueError(f"config: FusedConfig has no field {unknown[0]!r} (its fields: {', '.join(fields)})")
        return FusedConfig(**config)
    raise TypeError(f"config: a tandem.iris.FusedConfig (or a dict of its fields), not {type(config).__name__}")


class IrisWorkspace:
    """What an op call returns (Iris's FusedWorkspace): the call's identity and its simulated times."""

    def __init__(self, operation, shape, dtype, world_size, variant, results, ignored, trace=None):
        self.operation = operation
        self.shape = shape            # (M, N, K) of the whole product, as Iris's workspace holds it
        self.dtype = dtype
        self.world_size = world_size
        self.variant = variant
        self.results = results        # tandem's times: pipelined_us, per_rank_us, ... (empty until done)
        self.ignored = ignored        # FusedConfig fields set that have no Ascend counterpart
        self.trace = trace            # the trace file this call wrote (spawn(trace=dir)), else None
        self.prepared = True

    def matches(self, operation, shape, dtype, world_size, variant) -> bool:
        return (operation, tuple(shape), dtype, world_size, variant) == (
            self.operation, tuple(self.shape), self.dtype, self.world_size, self.variant)

    def __repr__(self):
        return (f"tandem.iris.IrisWorkspace(operation={self.operation!r}, shape={self.shape}, dtype={self.dtype!r}, "
                f"world_size={self.world_size}, variant={self.variant!r})")


# ---------------------------------------------------------------------------------------------
# Ranks as threads: the world they share, and which rank the calling thread is.

_local = threading.local()


def _current_rank(what: str):
    world = getattr(_local, "world", None)
    if world is None:
        raise RuntimeError(f"tandem.iris.{what}: call it from a function run by tandem.iris.spawn(fn, nprocs) "
                           "(each Iris rank is one of its threads)")
    return world, _local.rank


class _Call:
    """One collective call, met by every rank."""

    def __init__(self, name):
        self.name = name
        self.entries = {}       # rank -> its arguments
        self.done = False
        self.error = None       # the message every rank raises
        self.workspace = None


class _World:
    def __init__(self, nprocs, soc, profile, functional, timeout_s, trace_dir=None, trace_ranks=None):
        self.nprocs = nprocs
        self.soc = soc
        self.profile = profile
        self.functional = functional
        self.timeout_s = timeout_s
        self.cond = threading.Condition()
        self.next_call = [0] * nprocs
        self.calls = {}
        self.handles = [None] * nprocs
        self.pending = [[] for _ in range(nprocs)]  # each rank's async calls not yet waited for
        self.gone = {}  # rank -> why it will make no more calls ("returned", "raised ValueError: ...")
        self.trace_dir = trace_dir      # a pathlib.Path: each op call writes its trace there
        self.trace_ranks = trace_ranks  # "0,3" (the config's form), or None for every rank
        self.op_calls = 0               # op calls run so far (barriers not counted): the trace files' numbers
        self._context = None

    def next_trace_file(self, op: str) -> Optional[str]:
        """The file the next op call traces to, or None when spawn was given no trace directory.
        Called by the rank that runs the call, under the world's lock: numbered in call order."""
        index = self.op_calls
        self.op_calls += 1
        if self.trace_dir is None:
            return None
        return os.fspath(self.trace_dir / f"{index:03d}_{op}.json")

    def context(self):
        if self._context is None:
            self._context = _core.Context(num_ranks=self.nprocs, soc=self.soc, profile=self.profile,
                                          functional=self.functional)
        return self._context

    def meet(self, rank, name, entry, run: Callable[[dict], Any], wait: bool):
        """Rank `rank`'s part of collective call `name`: the last rank to arrive runs it."""
        with self.cond:
            index = self.next_call[rank]
            self.next_call[rank] += 1
            call = self.calls.setdefault(index, _Call(name))
            if call.name != name:
                call.error = (f"tandem.iris: collective call #{index} is {call.name} on rank "
                              f"{min(call.entries)} but {name} on rank {rank}: every rank must make the same calls "
                              "in the same order")
                call.done = True
            call.entries[rank] = entry
            if not call.done and len(call.entries) == self.nprocs:
                try:
                    call.workspace = run(call.entries)
                except Exception as e:  # every rank raises the op's error
                    call.error = f"{e}"
                    call.error_type = type(e)
                call.done = True
            self.cond.notify_all()
            if not wait:
                self.pending[rank].append((index, call))
                return call
            self._wait(rank, index, call)
            return call

    def _wait(self, rank, index, call):
        def missing():
            return sorted(set(range(self.nprocs)) - set(call.entries))

        def settled():
            return call.done or any(r in self.gone for r in missing())

        if not self.cond.wait_for(settled, timeout=self.timeout_s):
            call.error = (f"tandem.iris: {call.name} (collective call #{index}) was called by rank(s) "
                          f"{', '.join(map(str, sorted(call.entries)))} but not by rank(s) "
                          f"{', '.join(map(str, missing()))} within {self.timeout_s:g} s")
            call.done = True
            call.error_type = RanksDidNotMeet
            self.cond.notify_all()
        elif not call.done:  # a rank that has not called never will
            r = next(r for r in missing() if r in self.gone)
            call.error = (f"tandem.iris: {call.name} (collective call #{index}) cannot complete: rank {r} "
                          f"{self.gone[r]} without calling it")
            call.done = True
            call.error_type = RanksDidNotMeet
            self.cond.notify_all()
        if call.error is not None:
            raise getattr(call, "error_type", Error)(call.error)

    def wait_pending(self, rank):
        with self.cond:
            pending, self.pending[rank] = self.pending[rank], []
            for index, call in pending:
                self._wait(rank, index, call)

    def barrier(self, rank):
        self.wait_pending(rank)
        self.meet(rank, "barrier", None, lambda entries: None, wait=True)


def _trace_directory(trace) -> Optional[pathlib.Path]:
    """spawn's `trace`: the directory the op calls' traces go to, made if missing."""
    if trace is None:
        return None
    if not isinstance(trace, (str, os.PathLike)) or not os.fspath(trace):
        raise TypeError(f"spawn: trace = {trace!r}: a directory (a str or a pathlib.Path) for the op calls' traces")
    path = pathlib.Path(trace)
    if path.exists() and not path.is_dir():
        raise ValueError(f"spawn: trace = '{path}' is a file: give a directory; each op call writes its own "
                         "trace there (000_<op>.json, 001_<op>.json, ...)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"spawn: trace = '{path}': cannot make the directory: {e.strerror}") from None
    return path


def _trace_rank_list(trace_ranks, nprocs: int, traced: bool) -> Optional[str]:
    """spawn's `trace_ranks` (a list of ranks, one rank, or "0,3") as the config's "0,3"."""
    if trace_ranks is None:
        return None
    if not traced:
        raise ValueError(f"spawn: trace_ranks = {trace_ranks!r} without trace: give trace (the directory) too")
    if isinstance(trace_ranks, str):
        try:
            ranks = [int(r) for r in trace_ranks.split(",")]
        except ValueError:
            raise ValueError(f"spawn: trace_ranks = {trace_ranks!r}: ranks, as a list or a string like '0,3'") from None
    elif isinstance(trace_ranks, (int, np.integer)) and not isinstance(trace_ranks, bool):
        ranks = [int(trace_ranks)]
    elif isinstance(trace_ranks, (list, tuple)) and trace_ranks and all(
            isinstance(r, (int, np.integer)) and not isinstance(r, bool) for r in trace_ranks):
        ranks = [int(r) for r in trace_ranks]
    else:
        raise TypeError(f"spawn: trace_ranks = {trace_ranks!r}: ranks, as a list or a string like '0,3'")
    for r in ranks:
        if not 0 <= r < nprocs:
            raise ValueError(f"spawn: trace_ranks = {trace_ranks!r}: rank {r} does not exist ({nprocs} ranks)")
    return ",".join(map(str, ranks))


def spawn(fn: Callable, nprocs: int, args: Sequence = (), *, soc: str = "Ascend910B1", profile: str = "",
          functional: bool = True, timeout_s: float = _DEFAULT_TIMEOUT_S, trace=None, trace_ranks=None) -> list:
    """Runs fn(rank, *args) for every rank in [0, nprocs), each on a thread of its own, on one
    simulated cluster (`soc` or a `profile` file; `functional=False` simulates times only, outputs
    are not computed). Returns each rank's return value. If a rank raises, spawn raises that
    rank's exception (the lowest rank that failed on its own, rather than for want of another)
    once every thread has ended; a rank that never makes a
    collective call the others make fails theirs after `timeout_s` with the missing ranks named.
    With `trace` (a directory, made if missing) each op call writes its trace there, numbered in
    call order: 000_<op>.json, 001_<op>.json, ... (barriers are not op calls); `trace_ranks`
    (a list, one rank or "0,3") keeps only those ranks' events. The program itself is unchanged."""
    if not callable(fn):
        raise TypeError(f"spawn: fn = {fn!r}: must be callable, fn(rank, *args)")
    if not isinstance(nprocs, (int, np.integer)) or isinstance(nprocs, (bool, np.bool_)) or nprocs < 1:
        raise ValueError(f"spawn: nprocs = {nprocs!r}: must be a positive integer")
    if isinstance(args, (str, bytes)) or not isinstance(args, (tuple, list)):
        raise TypeError(f"spawn: args = {args!r}: must be a tuple or list of fn's arguments after the rank")
    if (not isinstance(timeout_s, (int, float, np.integer, np.floating)) or isinstance(timeout_s, (bool, np.bool_))
            or not math.isfinite(timeout_s) or timeout_s <= 0):
        raise ValueError(f"spawn: timeout_s = {timeout_s!r}: must be a positive number of seconds")
    ranks = _trace_rank_list(trace_ranks, int(nprocs), trace is not None)  # before the directory is made
    world = _World(int(nprocs), soc, profile, functional, float(timeout_s), None, ranks)
    try:  # the cluster up front: a bad nprocs, soc or profile is spawn's error, not every rank's
        world.context()
    except (ValueError, RuntimeError) as e:
        raise type(e)(str(e).replace("Context: num_ranks", "spawn: nprocs").replace("Context: ", "spawn: ")) from None
    world.trace_dir = _trace_directory(trace)
    results = [None] * world.nprocs
    errors = [None] * world.nprocs

    def main(rank):
        _local.world, _local.rank = world, rank
        why = "returned"
        try:
            results[rank] = fn(rank, *args)
            world.wait_pending(rank)
        except BaseException as e:  # reported by spawn, after every rank has ended
            errors[rank] = e
            why = f"raised {type(e).__name__}: {e}"
        finally:
            _local.world = None
            with world.cond:  # the others stop waiting for a call this rank will not make
                world.gone[rank] = why
                world.cond.notify_all()

    threads = [threading.Thread(target=main, args=(r,), name=f"iris-rank-{r}") for r in range(world.nprocs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # A rank's own failure first: the others then only failed to meet it.
    failures = [e for e in errors if e is not None]
    for e in sorted(failures, key=lambda e: isinstance(e, RanksDidNotMeet)):
        raise e
    return results


def iris(heap_size: int = 1 << 30) -> "Iris":
    """This rank's handle on the simulated cluster (Iris's iris.iris(heap_size)). The heap size is
    recorded; the simulated chips' memory is the profile's."""
    world, rank = _current_rank("iris")
    if not isinstance(heap_size, (int, np.integer)) or heap_size <= 0:
        raise ValueError(f"iris: heap_size = {heap_size!r}: must be a positive number of bytes")
    with world.cond:
        if world.handles[rank] is None:
            world.handles[rank] = Iris(world, rank, int(heap_size))
        return world.handles[rank]


def _np_dtype(dtype) -> np.dtype:
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    if d is None or d not in _OUT_DTYPES:
        raise TypeError(f"dtype {dtype!r}: tandem.iris tensors are numpy float16, float32, int8 or int32")
    return d


def _shape_of(args) -> tuple:
    shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    if not shape or not all(isinstance(s, (int, np.integer)) and s >= 0 for s in shape):
        raise ValueError(f"shape {tuple(shape)!r}: give sizes as non-negative integers, e.g. zeros((M, N))")
    return tuple(int(s) for s in shape)


class Iris:
    """One rank's handle (Iris's iris.iris object): its rank, the world, barriers, tensors and ops."""

    def __init__(self, world: _World, rank: int, heap_size: int):
        self._world = world
        self._rank = rank
        self.heap_size = heap_size
        self.ops = _RankOps(self)
        self._rng = np.random.default_rng(rank)

    def get_rank(self) -> int:
        return self._rank

    def get_num_ranks(self) -> int:
        return self._world.nprocs

    def barrier(self):
        """Every rank waits for the others (and for its own async ops to complete)."""
        self._world.barrier(self._rank)

    def zeros(self, *shape, dtype=np.float16) -> np.ndarray:
        return np.zeros(_shape_of(shape), dtype=_np_dtype(dtype))

    def empty(self, *shape, dtype=np.float16) -> np.ndarray:
        return np.empty(_shape_of(shape), dtype=_np_dtype(dtype))

    def ones(self, *shape, dtype=np.float16) -> np.ndarray:
        return np.ones(_shape_of(shape), dtype=_np_dtype(dtype))

    def randn(self, *shape, dtype=np.float16) -> np.ndarray:
        return self._rng.standard_normal(_shape_of(shape)).astype(_np_dtype(dtype))

    def __repr__(self):
        return f"tandem.iris.Iris(rank={self._rank}, num_ranks={self._world.nprocs})"


# ---------------------------------------------------------------------------------------------
# The ops: per-rank arguments checked in Iris's words, met, padded, run once, cropped.

def _round_up(v: int, step: int) -> int:
    return (v + step - 1) // step * step


def _fit(extent: int, limit: int) -> int:
    """The default tile side for an extent: at most `limit`, a multiple of the fractal."""
    return min(limit, _round_up(max(extent, 1), _FRACTAL))


def _matrix(name: str, t, rank: int, output: bool = False) -> np.ndarray:
    if not isinstance(t, np.ndarray):
        raise TypeError(f"{name}: a numpy array (a tensor made by ctx.zeros/empty/ones/randn), not {type(t).__name__}")
    if t.ndim != 2:
        raise ValueError(f"{name}: a 2-D tensor on each rank, got shape {t.shape} on rank {rank}")
    if output and t.dtype not in _OUT_DTYPES:
        raise TypeError(f"{name} is {t.dtype} on rank {rank}: tandem.iris outputs are numpy float16 or float32 (or "
                        "int32 / int8 with int8 inputs)")
    if not output and t.dtype not in _DTYPES:
        raise TypeError(f"{name} is {t.dtype} on rank {rank}: tandem.iris inputs are numpy float16, float32 or int8")
    if min(t.shape) < 1:
        raise ValueError(f"{name} has shape {t.shape} on rank {rank}: both sizes must be at least 1")
    return t


class _Spec:
    """How one op's per-rank Iris operands map onto Tandem's all-rank call."""

    def __init__(self, name, a_name):
        self.name = name
        self.a_name = a_name


_OPS = {
    "matmul_all_reduce": _Spec("matmul_all_reduce", "A"),
    "all_gather_matmul": _Spec("all_gather_matmul", "A_sharded"),
    "matmul_all_gather": _Spec("matmul_all_gather", "A"),
    "matmul_reduce_scatter": _Spec("matmul_reduce_scatter", "A"),
}


def _check_shapes(op: str, w: int, out, a, b, bias, rank: int):
    """Iris's shape rules per rank; returns (M, N, K) of the whole product."""
    a_name = _OPS[op].a_name
    (ra, ca), (rb, cb), (ro, co) = a.shape, b.shape, out.shape
    if op == "all_gather_matmul":
        if rb != w * ca:
            raise ValueError(f"B has {rb} rows on rank {rank}: all_gather_matmul needs K = world_size x K_local = "
                             f"{w} x {ca} = {w * ca} ({a_name} is {ra} x {ca})")
        m, n, k = ra, cb, rb
        want = (m, n)
    else:
        if rb != ca:
            raise ValueError(f"B has {rb} rows on rank {rank}: {op} needs B's rows = {a_name}'s columns = {ca}")
        m, n, k = (ra * w if op == "matmul_all_gather" else ra), cb, ca
        if op == "matmul_reduce_scatter":
            # Two forms, as in Iris: the seed's (M, N / world) column block, or Iris's tile path's
            # full-size (M, N) output of which each rank writes the tiles it owns.
            if (ro, co) == (m, n):
                want = (m, n)
            elif n % w != 0:
                raise ValueError(f"output_tensor is {ro} x {co} on rank {rank}: matmul_reduce_scatter writes either "
                                 f"M x N = {m} x {n} (the tiles this rank owns) or M x N/world_size, which needs N = "
                                 f"{n} to be a multiple of world_size = {w}")
            else:
                want = (m, n // w)
        else:
            want = (m, n)
    if (ro, co) != want:
        also = f" (or {m} x {n}, the full-size tile-owner form)" if op == "matmul_reduce_scatter" else ""
        raise ValueError(f"output_tensor is {ro} x {co} on rank {rank}: {op} with {a_name} {ra} x {ca} and B {rb} x {cb} "
                         f"on {w} ranks writes {want[0]} x {want[1]}{also}")
    if bias is not None:
        if not isinstance(bias, np.ndarray) or bias.ndim != 1:
            raise ValueError(f"bias: a 1-D tensor of length M or N (Iris's), got "
                             f"{getattr(bias, 'shape', type(bias).__name__)} on rank {rank}")
        if bias.shape[0] not in (m, n):
            raise ValueError(f"bias has length {bias.shape[0]} on rank {rank}: {op} adds a bias of length M = {m} "
                             f"(one per row) or N = {n} (one per column)")
    return m, n, k


def _tandem_config(op: str, cfg: FusedConfig, w: int, m: int, n: int, k: int, full_size: bool = False):
    """Tandem's config dict for the call, the padded extents and the ignored fields. `full_size`:
    matmul_reduce_scatter into the full-size (M, N) tile-owner form, whose tile numbering
    follows group_size_m (_owned_tiles)."""
    cfg.validate(world_size=w)
    given = cfg.given()
    rows = m // w if op == "matmul_all_gather" else m          # the output tile's rows come from these
    cols = -(-n // w) if op == "matmul_reduce_scatter" else n  # a rank's columns (the full form: N padded)
    base_m = cfg.block_size_m if "block_size_m" in given else _fit(rows, _DEFAULT_TILE[0])
    base_n = cfg.block_size_n if "block_size_n" in given else _fit(cols, _DEFAULT_TILE[1])
    if op == "all_gather_matmul" and "block_size_n" not in given:
        base_n = min(base_n, _fit(k // w, _DEFAULT_TILE[1]))  # a shard's K is whole base-n tiles
    config = {"base_m": int(base_m), "base_n": int(base_n)}
    gemm_blocks = cfg.gemm_sms if cfg.gemm_sms is not None else cfg.num_sms
    if gemm_blocks is not None:
        config["compute_blocks"] = int(gemm_blocks)
    if cfg.comm_sms is not None:
        config["comm_blocks"] = int(cfg.comm_sms)
    variant = None
    if op == "matmul_all_reduce":
        if cfg.all_reduce_variant == "spinlock":
            raise ValueError("FusedConfig.all_reduce_variant = 'spinlock': Tandem has no replica of Iris's spinlock "
                             "all-reduce; use atomic, ring, one_shot or two_shot")
        variant = cfg.all_reduce_variant
        config["variant"] = variant
    ignored = sorted(f for f in given if f in _GPU_ONLY_FIELDS and not (f == "group_size_m" and full_size))
    return config, variant, ignored


def _padded(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    out = np.zeros((rows, cols), dtype=np.float32)
    out[:x.shape[0], :x.shape[1]] = x
    return out


def _run_op(op: str, world: _World, entries: dict) -> IrisWorkspace:
    """The last rank's work: every rank's operands checked alike, padded, run once, outputs written."""
    w = world.nprocs
    first = entries[0]
    for r in range(1, w):
        e = entries[r]
        for key in ("out", "a", "b"):
            if e[key].shape != first[key].shape or e[key].dtype != first[key].dtype:
                name = {"out": "output_tensor", "a": _OPS[op].a_name, "b": "B"}[key]
                raise ValueError(f"{op}: {name} is {e[key].shape} {e[key].dtype} on rank {r} but "
                                 f"{first[key].shape} {first[key].dtype} on rank 0: every rank passes the same shapes")
        if (e["bias"] is None) != (first["bias"] is None) or (
                e["bias"] is not None and e["bias"].shape != first["bias"].shape):
            raise ValueError(f"{op}: bias differs between rank 0 and rank {r} (given or not, or its length)")
        if e["config"] != first["config"]:
            raise ValueError(f"{op}: config differs between rank 0 ({first['config']}) and rank {r} ({e['config']})")
    m, n, k = first["mnk"]
    full_size = op == "matmul_reduce_scatter" and first["out"].shape == (m, n) and w > 1
    config, variant, ignored = _tandem_config(op, first["config"], w, m, n, k, full_size)
    bm, bn = config["base_m"], config["base_n"]
    dtype = _DTYPES[first["a"].dtype]
    # fp32 inputs (Iris's default datatype) run with an fp32 output, as Iris's fp32 path
    # accumulates and writes fp32; a float16 output array gets it rounded. int8 inputs run with an
    # fp32 output too (the int32 sums, exact while |sum| < 2^24), cast into the output array
    # (_cast_result: an int8 array gets Iris's acc.to(int8), the sums wrapped).
    out_dtype = "fp32" if dtype in ("fp32", "int8") else _DTYPES[first["out"].dtype]
    ctx = world.context()

    def tensor(per_rank):
        """The ranks' arrays as one tandem tensor (a timing-only context holds no data: shape only)."""
        if not world.functional:
            return ctx.empty(per_rank[0].shape[0], per_rank[0].shape[1], dtype)
        return ctx.tensor(np.stack(per_rank).astype(first["a"].dtype), dtype=dtype)

    # Padded extents: M and N to whole tiles (per rank where the op splits them), K to whole
    # tiles of a shard for all_gather_matmul (its K tiles are base-n wide), else as given.
    if op == "matmul_all_gather":
        m_local = m // w
        mp_local = _round_up(m_local, bm)
        a = [_padded(entries[r]["a"], mp_local, k) for r in range(w)]
        b = [entries[r]["b"].astype(np.float32) for r in range(w)]
        out_shape = (mp_local * w, n)
    elif op == "all_gather_matmul":
        k_local = k // w
        kp_local = _round_up(k_local, 2 * bn if dtype == "int8" else bn)  # whole K tiles (int8's: 2 x base-n)
        mp = _round_up(m, bm)
        a = [_padded(entries[r]["a"], mp, kp_local) for r in range(w)]
        b = []
        for r in range(w):  # B's rows regrouped: shard s's K_local rows start at s * kp_local
            bp = np.zeros((kp_local * w, n), dtype=np.float32)
            for s in range(w):
                bp[s * kp_local:s * kp_local + k_local] = entries[r]["b"][s * k_local:(s + 1) * k_local]
            b.append(bp)
        out_shape = (mp, n)
    elif op == "matmul_reduce_scatter":
        # Column block s of the sum, [s * n_local, s * n_local + widths[s]), is rank s's output,
        # padded to whole tiles. The full-size form runs the same op with N / world rounded up
        # (the last blocks narrower, or empty) and gathers the blocks into the ranks' owned tiles.
        n_local = -(-n // w)
        widths = [max(0, min(n_local, n - s * n_local)) for s in range(w)]
        np_local = _round_up(n_local, bn)
        a = [entries[r]["a"].astype(np.float32) for r in range(w)]
        b = []
        for r in range(w):  # each rank's column block of B padded to whole tiles
            bp = np.zeros((k, np_local * w), dtype=np.float32)
            for s in range(w):
                bp[:, s * np_local:s * np_local + widths[s]] = entries[r]["b"][:, s * n_local:s * n_local + widths[s]]
            b.append(bp)
        out_shape = (m, np_local)
    else:  # matmul_all_reduce: the op pads M and N itself
        a = [entries[r]["a"].astype(np.float32) for r in range(w)]
        b = [entries[r]["b"].astype(np.float32) for r in range(w)]
        out_shape = (m, n)

    bias_t = None
    if first["bias"] is not None:
        length = first["bias"].shape[0]
        per_row = length == m  # Iris: (M,) is one value per row; (N,) one per column
        rows_total = out_shape[0]
        cols_total = n if op != "matmul_reduce_scatter" else np_local * w
        stack = []
        for r in range(w):
            v = entries[r]["bias"].astype(np.float32)
            if per_row:
                col = np.zeros((rows_total, 1), dtype=np.float32)
                if op == "matmul_all_gather":  # rank blocks of rows, each padded
                    mp_local = out_shape[0] // w
                    for s in range(w):
                        col[s * mp_local:s * mp_local + m // w, 0] = v[s * (m // w):(s + 1) * (m // w)]
                else:
                    col[:m, 0] = v
                stack.append(col)
            else:
                row = np.zeros((1, cols_total), dtype=np.float32)
                if op == "matmul_reduce_scatter":
                    for s in range(w):
                        row[0, s * np_local:s * np_local + widths[s]] = v[s * n_local:s * n_local + widths[s]]
                else:
                    row[0, :n] = v
                stack.append(row)
        bias_t = tensor(stack)

    A = tensor(a)
    B = tensor(b)
    C = ctx.zeros(out_shape[0], out_shape[1], out_dtype)
    trace = world.next_trace_file(op)
    if trace is not None:
        config["trace"] = trace
        if world.trace_ranks is not None:
            config["trace_ranks"] = world.trace_ranks
    ws = ctx.ops.run(op, C, A, B, bias=bias_t, config=config)
    if world.functional:
        c = C.numpy()
        if full_size:
            # Iris's tile path: rank r writes the tiles it owns of the full-size (M, N) output and
            # leaves the rest of its output as it was.
            total = np.concatenate([c[s][:m, :widths[s]] for s in range(w)], axis=1)
            for r in range(w):
                out = entries[r]["out"]
                for rows, cols in _owned_tiles(m, n, w, first["config"])[r]:
                    out[rows, cols] = _cast_result(total[rows, cols], out.dtype)
            return IrisWorkspace(op, (m, n, k), dtype, w, variant, ws.results, ignored, trace)
        for r in range(w):
            if op == "matmul_all_gather":
                mp_local = out_shape[0] // w
                got = np.concatenate([c[r][s * mp_local:s * mp_local + m // w] for s in range(w)])
            else:
                got = c[r][:entries[r]["out"].shape[0], :entries[r]["out"].shape[1]]
            entries[r]["out"][...] = _cast_result(got, entries[r]["out"].dtype)
    return IrisWorkspace(op, (m, n, k), dtype, w, variant, ws.results, ignored, trace)


def _cast_result(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The op's fp32 output as the output array's dtype: float16/float32 rounded; int32 the integer
    sums (exact); int8 the sums wrapped to 8 bits, as Iris's acc.to(int8) casts."""
    if dtype in _INT_OUTPUTS:
        return values.astype(np.int64).astype(dtype)
    return values.astype(dtype)


def _owned_tiles(m: int, n: int, w: int, cfg: FusedConfig) -> list:
    """Iris's tile ownership in matmul_reduce_scatter's full-size (M, N) form: the output is cut
    into block_size_m x block_size_n tiles (FusedConfig's values, its defaults when not given),
    numbered in Iris's (Triton's) grouped order: groups of group_size_m tile rows, inside a group
    down the rows first, then across (group_size_m = 1: row-major). Rank r owns the contiguous
    tile ids [r * T // W, (r + 1) * T // W) with T // W tiles each and the last rank also the
    remainder. Returns, per rank, (rows, cols) slices of its tiles."""
    bm, bn, gm = int(cfg.block_size_m), int(cfg.block_size_n), int(cfg.group_size_m)
    tiles_m, tiles_n = -(-m // bm), -(-n // bn)
    total = tiles_m * tiles_n
    per = total // w

    def coord(t: int) -> tuple:
        in_group = gm * tiles_n
        first_m = (t // in_group) * gm
        rows_here = min(tiles_m - first_m, gm)
        return first_m + (t % in_group) % rows_here, (t % in_group) // rows_here

    owned = []
    for r in range(w):
        first, last = r * per, (r + 1) * per if r < w - 1 else total
        owned.append([(slice(i * bm, (i + 1) * bm), slice(j * bn, (j + 1) * bn))
                      for i, j in map(coord, range(first, last))])
    return owned


class _RankOps:
    """ctx.ops for one rank: Iris's fused ops with Iris's arguments."""

    def __init__(self, handle: Iris):
        self._handle = handle

    def _call(self, op, output_tensor, a, b, bias, async_op, config, workspace):
        world, rank = self._handle._world, self._handle._rank
        if getattr(_local, "world", None) is not world or _local.rank != rank:
            raise RuntimeError(f"tandem.iris: rank {rank}'s handle used from another thread; each rank calls its "
                               "own ops")
        spec = _OPS[op]
        out = _matrix("output_tensor", output_tensor, rank, output=True)
        a = _matrix(spec.a_name, a, rank)
        b = _matrix("B", b, rank)
        if not out.flags.writeable:
            raise ValueError(f"output_tensor is read-only on rank {rank}: the op writes its result into it")
        if not isinstance(async_op, (bool, np.bool_)):
            raise TypeError(f"async_op={async_op!r}: must be True or False, not {type(async_op).__name__}")
        if workspace is not None and not isinstance(workspace, IrisWorkspace):
            raise TypeError(f"workspace: the IrisWorkspace an earlier call returned, not {type(workspace).__name__}")
        if b.dtype != a.dtype:  # each is float16, float32 or int8 (_matrix): the ops take any
            raise TypeError(f"B is {b.dtype} on rank {rank} but {spec.a_name} is {a.dtype}: A and B share one dtype "
                            "(float16, float32 or int8)")
        if out.dtype in _INT_OUTPUTS and a.dtype != np.int8:
            raise TypeError(f"output_tensor is {out.dtype} on rank {rank}: an int32 or int8 output is for int8 inputs "
                            f"({spec.a_name} is {a.dtype}); give float16 or float32")
        if a.dtype == np.int8 and out.dtype == np.float16:
            raise TypeError(f"output_tensor is float16 on rank {rank}: int8 inputs give float32, int32 or int8 outputs")
        cfg = _as_config(config)
        cfg.validate(world_size=world.nprocs)
        ignored = sorted(f for f in cfg.given() if f in _GPU_ONLY_FIELDS)
        if ignored and rank == 0:  # once per call, not once per rank
            warnings.warn(f"tandem.iris.{op}: FusedConfig field(s) {', '.join(ignored)} describe a GPU kernel and have "
                          "no meaning on the simulated Ascend cluster: ignored", stacklevel=3)
        if bias is not None and not isinstance(bias, np.ndarray):
            raise TypeError(f"bias: a 1-D tensor (numpy array), not {type(bias).__name__}")
        if bias is not None and bias.dtype not in _DTYPES:
            raise TypeError(f"bias is {bias.dtype} on rank {rank}: tandem.iris inputs are numpy float16, float32 or int8")
        if bias is not None and a.dtype == np.int8:
            raise ValueError(f"bias: no bias with int8 inputs ({spec.a_name} is int8 on rank {rank}): the int8 cube's "
                             "int32 sums start from zero; add the bias to the output")
        mnk = _check_shapes(op, world.nprocs, out, a, b, bias, rank)
        entry = {"out": out, "a": a, "b": b, "bias": bias, "config": cfg, "mnk": mnk}
        call = world.meet(rank, op, entry, lambda entries: _run_op(op, world, entries), wait=not async_op)
        if call.done and call.error is None:
            return call.workspace
        # async and not yet complete: the workspace fills in when the last rank arrives
        return _PendingWorkspace(call)

    def matmul_all_reduce(self, output_tensor, A, B, bias=None, async_op=False, config=None, workspace=None):
        """output = sum over ranks of A_r @ B_r (+ bias), on every rank. A (M, K), B (K, N), output (M, N)."""
        return self._call("matmul_all_reduce", output_tensor, A, B, bias, async_op, config, workspace)

    def all_gather_matmul(self, output_tensor, A_sharded, B, bias=None, async_op=False, config=None, workspace=None):
        """output = concat_K(A_sharded of every rank) @ B (+ bias). A_sharded (M, K_local), B (K, N) with
        K = world_size x K_local, output (M, N)."""
        return self._call("all_gather_matmul", output_tensor, A_sharded, B, bias, async_op, config, workspace)

    def matmul_all_gather(self, output_tensor, A, B, bias=None, async_op=False, config=None, workspace=None):
        """output = the rows of every rank's A @ B, gathered. A (M_local, K), B (K, N), output (M_local x world, N)."""
        return self._call("matmul_all_gather", output_tensor, A, B, bias, async_op, config, workspace)

    def matmul_reduce_scatter(self, output_tensor, A, B, bias=None, async_op=False, config=None, workspace=None):
        """output = columns [r*N/W, (r+1)*N/W) of sum over ranks of A_r @ B_r (+ bias). A (M, K), B (K, N),
        output (M, N / world_size). An output of the full size (M, N) takes Iris's tile path's form instead:
        this rank writes the block_size_m x block_size_n tiles of the sum it owns (a contiguous run of
        T // world_size of the T tiles numbered row-major; the last rank also the remainder) and leaves the
        rest of the output as it was."""
        return self._call("matmul_reduce_scatter", output_tensor, A, B, bias, async_op, config, workspace)


class _PendingWorkspace:
    """An async call's workspace: its fields are those of the IrisWorkspace once every rank has
    called (after ctx.barrier())."""

    def __init__(self, call: _Call):
        self._call = call

    def __getattr__(self, name):
        if not self._call.done:
            raise RuntimeError(f"tandem.iris: the async {self._call.name} has not completed: call ctx.barrier() first")
        if self._call.error is not None:
            raise Error(self._call.error)
        return getattr(self._call.workspace, name)


class _ModuleOps:
    """iris.ops.<op>(ctx, output_tensor, ...): the same ops as functions taking the handle first."""

    def __getattr__(self, name):
        if name not in _OPS:
            raise AttributeError(f"tandem.iris.ops has no '{name}' (it has {', '.join(_OPS)})")

        def op(ctx: Iris, *args, **kwargs):
            if not isinstance(ctx, Iris):
                raise TypeError(f"tandem.iris.ops.{name}: the first argument is the rank's handle "
                                f"(tandem.iris.iris()), not {type(ctx).__name__}")
            return getattr(ctx.ops, name)(*args, **kwargs)

        op.__name__ = name
        return op

    def __dir__(self):
        return list(_OPS)


ops = _ModuleOps()
