"""A rank's handle (Iris's iris.iris(heap_size) object): its rank and world, barriers, logging,
tensors and ops."""
from __future__ import annotations

import inspect
import logging
import sys
import threading

import numpy as np

from tandem.iris import _call, _catalog, _tensors, _world

class _StderrHandler(logging.StreamHandler):
    """Writes to the sys.stderr of the moment (a program or test may have replaced it)."""

    def emit(self, record):
        self.stream = sys.stderr
        super().emit(record)


# Iris's log lines: "[Iris] [rank/world] message", INFO and above by default.
logger = logging.getLogger("tandem.iris")
if not logger.handlers:
    _handler = _StderrHandler()
    _handler.setFormatter(logging.Formatter("[Iris] [%(iris_rank)s/%(iris_num_ranks)s] %(message)s"))
    logger.addHandler(_handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def set_logger_level(level):
    """Iris's iris.set_logger_level: the least level ctx.debug/info/warning/error print."""
    logger.setLevel(level)


def iris(heap_size: int = 1 << 30) -> "Iris":
    """This rank's handle on the simulated cluster (Iris's iris.iris(heap_size)). The heap size is
    recorded; the simulated chips' memory is the profile's."""
    world, rank = _world.current("iris")
    if not isinstance(heap_size, (int, np.integer)) or isinstance(heap_size, bool) or heap_size <= 0:
        raise ValueError(f"iris: heap_size = {heap_size!r}: must be a positive number of bytes")
    if world.handles[rank] is None:
        world.handles[rank] = Iris(world, rank, int(heap_size))
    return world.handles[rank]


def _shape_of(what, args) -> tuple:
    shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) or (
        len(args) == 1 and type(args[0]).__name__ == "Size") else args
    if not shape or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise ValueError(f"{what}: shape {shape!r}: give sizes as non-negative integers, e.g. {what}((M, N)) or "
                         f"{what}(M, N)")
    return tuple(int(s) for s in shape)


class Iris:
    """One rank's handle (Iris's iris.iris object)."""

    def __init__(self, world, rank: int, heap_size: int):
        self._world = world
        self._rank = rank
        self._thread = threading.get_ident()
        self.heap_size = heap_size
        self.cur_rank = rank
        self.num_ranks = world.nprocs
        self.ops = RankOps(self)

    # The rank and the world ---------------------------------------------------------------------

    def get_rank(self) -> int:
        return self._rank

    def get_num_ranks(self) -> int:
        return self._world.nprocs

    def get_device(self):
        """Where this rank's tensors live: the host's memory ("cpu"; a torch.device where the
        program uses torch), so torch code passing device=ctx.get_device() runs as written."""
        torch = _tensors.torch()
        return torch.device("cpu") if torch is not None else "cpu"

    @property
    def device(self):
        return self.get_device()

    def barrier(self):
        """Every rank waits for the others, after its own async ops have completed."""
        self._own("barrier")
        self._world.barrier(self._rank)

    def _own(self, what):
        if threading.get_ident() != self._thread:
            raise RuntimeError(f"tandem.iris: {what}: rank {self._rank}'s handle used from another thread; each rank "
                               "calls its own")

    # Logging, as Iris's ---------------------------------------------------------------------------

    def _log(self, level, message):
        logger.log(level, message, extra={"iris_rank": self._rank, "iris_num_ranks": self._world.nprocs})

    def debug(self, message):
        self._log(logging.DEBUG, message)

    def info(self, message):
        self._log(logging.INFO, message)

    def warning(self, message):
        self._log(logging.WARNING, message)

    def error(self, message):
        self._log(logging.ERROR, message)

    # Tensors: numpy arrays, or torch tensors for a torch dtype ----------------------------------

    def _dtype(self, dtype, device=None):
        if device is not None and str(device) not in ("cpu", str(self.get_device())):
            raise ValueError(f"device={device!r}: tandem.iris tensors live in the host's memory: give "
                             "ctx.get_device() (\"cpu\") or leave it out")
        return _tensors.Dtype(dtype)

    def zeros(self, *size, dtype=None, device=None, **_torch_only):
        return self._dtype(dtype, device).zeros(_shape_of("zeros", size))

    def empty(self, *size, dtype=None, device=None, **_torch_only):
        return self._dtype(dtype, device).empty(_shape_of("empty", size))

    def ones(self, *size, dtype=None, device=None, **_torch_only):
        return self._dtype(dtype, device).full(_shape_of("ones", size), 1)

    def full(self, size, fill_value, dtype=None, device=None, **_torch_only):
        return self._dtype(dtype, device).full(_shape_of("full", (size,)), fill_value)

    def zeros_like(self, input, dtype=None, device=None, **_torch_only):
        if not _tensors.is_tensor(input):
            raise TypeError(f"zeros_like: input is {type(input).__name__}, not a tensor")
        return self._dtype(input.dtype if dtype is None else dtype, device).zeros(tuple(input.shape))

    def randn(self, *size, generator=None, dtype=None, device=None, **_torch_only):
        """Normal values from the rank's global random state (np.random.seed / torch.manual_seed),
        or from `generator`."""
        return self._random("randn", size, generator, dtype, device)

    def rand(self, *size, generator=None, dtype=None, device=None, **_torch_only):
        """Uniform values in [0, 1), as randn."""
        return self._random("rand", size, generator, dtype, device)

    def uniform(self, size, low=0.0, high=1.0, dtype=None, device=None, generator=None):
        """Uniform values in [low, high), as randn."""
        return self._random("uniform", (size,), generator, dtype, device, low, high)

    def randint(self, *args, size=None, generator=None, dtype=None, device=None, **_torch_only):
        """randint(high, size) or randint(low, high, size), torch's order: integers in [low, high)."""
        if size is not None:
            args = args + (size,)
        if len(args) == 2:
            args = (0,) + args
        if len(args) != 3:
            raise TypeError("randint: randint(high, size) or randint(low, high, size)")
        low, high, shape = args
        shape = _shape_of("randint", (shape,))
        d = self._dtype(np.int64 if dtype is None and _tensors.torch() is None else dtype, device)
        if d.kind == "torch":
            torch = _tensors.torch()
            return torch.randint(low, high, shape, generator=generator, dtype=d.native)
        rng = generator if generator is not None else np.random
        return d.from_values(rng.randint(low, high, size=shape) if hasattr(rng, "randint")
                             else rng.integers(low, high, size=shape))

    def _random(self, what, size, generator, dtype, device, low=0.0, high=1.0):
        shape = _shape_of(what, size)
        d = self._dtype(dtype, device)
        if d.name in ("int8", "int32"):
            raise TypeError(f"{what}: dtype={dtype}: random values of this kind are floating point (randint makes "
                            "integers)")
        if d.kind == "torch":
            torch = _tensors.torch()
            if what == "randn":
                return torch.randn(shape, generator=generator, dtype=d.native)
            values = torch.rand(shape, generator=generator, dtype=d.native)
            return values * (high - low) + low if what == "uniform" else values
        legacy = generator is None or isinstance(generator, np.random.RandomState)
        rng = np.random if generator is None else generator
        if what == "randn":
            values = rng.standard_normal(size=shape)
        else:
            values = rng.random_sample(size=shape) if legacy else rng.random(size=shape)
            if what == "uniform":
                values = values * (high - low) + low
        return d.from_values(np.asarray(values))

    def arange(self, *args, dtype=None, device=None, **_torch_only):
        d = self._dtype(dtype, device)
        if d.kind == "torch":
            return _tensors.torch().arange(*args, dtype=d.native)
        return np.arange(*args).astype(d.native)

    def __repr__(self):
        return f"tandem.iris.Iris(rank={self._rank}, num_ranks={self._world.nprocs})"


class RankOps:
    """ctx.ops for one rank: every op of tandem.iris.ops with Iris's arguments,
    ctx.ops.<op>(output_tensor, A, B, bias=None, async_op=False, config=None, workspace=None)
    (all_gather_matmul's A is A_sharded)."""

    def __init__(self, handle: Iris):
        self._handle = handle

    def __dir__(self):
        return list(_catalog.names())

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in _catalog.names():
            raise AttributeError(f"tandem.iris ops have no '{name}' (they are {', '.join(_catalog.names())})")
        return op_function(name, self._handle)


def _signature(op, with_handle):
    P = inspect.Parameter
    params = [P("ctx", P.POSITIONAL_OR_KEYWORD)] if with_handle else []
    params += [P("output_tensor", P.POSITIONAL_OR_KEYWORD), P(_catalog.a_name(op), P.POSITIONAL_OR_KEYWORD),
               P("B", P.POSITIONAL_OR_KEYWORD)]
    params += [P(name, P.POSITIONAL_OR_KEYWORD, default=default)
               for name, default in (("bias", None), ("async_op", False), ("config", None), ("workspace", None))]
    return inspect.Signature(params)


def op_function(op: str, handle=None):
    """The op as a function: bound to a rank's handle (ctx.ops.<op>), or taking it first
    (tandem.iris.ops.<op>(ctx, ...))."""
    signature = _signature(op, handle is None)

    def function(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{op}(): {e}") from None
        bound.apply_defaults()
        a = bound.arguments
        ctx = handle if handle is not None else a["ctx"]
        if not isinstance(ctx, Iris):
            raise TypeError(f"tandem.iris.ops.{op}: the first argument is the rank's handle (tandem.iris.iris()), not "
                            f"{type(ctx).__name__}")
        return call(ctx, op, a["output_tensor"], a[_catalog.a_name(op)], a["B"], a["bias"], a["async_op"], a["config"],
                    a["workspace"])

    function.__name__ = function.__qualname__ = op
    function.__signature__ = signature
    function.__doc__ = _catalog.info(op)["doc"]
    return function


def call(handle: Iris, op, output_tensor, A, B, bias, async_op, config, workspace):
    """A rank's op call: checked, its inputs taken now, met with the other ranks'; returns its
    workspace (an async call's results fill in when the call completes, at the latest at
    ctx.barrier())."""
    handle._own(op)
    world, rank = handle._world, handle._rank
    part = _call.prepare(world, rank, op, output_tensor, A, B, bias, async_op, config, workspace)
    ws = _call.workspace_for(part)
    met = world.meet(rank, op, part, lambda parts: _call.run(world, parts), wait=not async_op)
    ws._call = met
    return ws


def preamble_function(op: str):
    """Iris's <op>_preamble(ctx, A, B, config=None), also taken with the output first,
    <op>_preamble(ctx, output_tensor, A, B, config=None): the workspace for a call with these
    arguments (checked as the call checks them), to pass to it. Nothing is allocated ahead here:
    the call makes the simulated op's memory, and reuses it on later matching calls."""
    a_name = _catalog.a_name(op)

    def preamble(ctx, *args, config=None):
        if not isinstance(ctx, Iris):
            raise TypeError(f"tandem.iris.ops.{op}_preamble: the first argument is the rank's handle "
                            f"(tandem.iris.iris()), not {type(ctx).__name__}")
        tensors = [a for a in args if _tensors.is_tensor(a)]
        rest = args[len(tensors):]
        if len(tensors) not in (2, 3) or len(rest) > 1 or (rest and config is not None):
            raise TypeError(f"{op}_preamble(ctx, {a_name}, B, config=None) or {op}_preamble(ctx, output_tensor, "
                            f"{a_name}, B, config=None): got {len(args)} arguments after ctx")
        config = rest[0] if rest else config
        ctx._own(f"{op}_preamble")
        if len(tensors) == 2:
            tensors = [_call.default_output(op, ctx._world.nprocs, *tensors)] + tensors
        part = _call.prepare(ctx._world, ctx._rank, op, *tensors, None, False, config, None)
        return _call.workspace_for(part)

    preamble.__name__ = preamble.__qualname__ = f"{op}_preamble"
    return preamble
