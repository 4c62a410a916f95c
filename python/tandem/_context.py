"""tandem.Context and ctx.ops as Python users call them: the all-ranks API of the C++ module
(tandem._core) with every argument checked first, so that a wrong type, shape or dtype is one
line naming the argument (a TypeError, a ValueError or a tandem.Error) and never a pybind cast
message; and plain numpy arrays accepted where a tensor is:

- a 3-D array (ranks, rows, cols): one matrix per rank;
- a 2-D array (rows, cols): the same matrix on every rank (an output only where the op gives every
  rank the same result: its info()["out_split"] is "replicated");
- a bias may also be 1-D: length M adds one value per row, length N one per column (M wins when
  M == N, as in Iris).

float16 arrays are fp16 tensors, float32 arrays fp32 tensors, int8 arrays int8 tensors (the
Iris-family ops' int8 inputs: int8 x int8 summed in int32, written out as fp32); a bf16 tensor is
made with ctx.tensor(array, dtype="bf16"). With int8 inputs a numpy output may be float32, int32
(the sums, an exact cast while |sum| < 2^24) or int8 (Iris's acc.to(int8): the sums wrapped to
8 bits, as numpy's astype wraps). A numpy output is written in place when the call completes
(an async call: at ctx.barrier()). The parameter keywords are the parameter schema's
(tandem.parameters()), as in the C++ module.
"""
from __future__ import annotations

import ast
import functools
import inspect
import os
import re
import warnings

import numpy as np

from tandem import _core
from tandem import _fused_config

Error = _core.Error

_NUMPY_DTYPES = {np.dtype(np.float16): "fp16", np.dtype(np.float32): "fp32", np.dtype(np.int8): "int8"}
_DTYPE_NAMES = ("fp16", "bf16", "fp32", "int8")
# Output arrays of integer dtypes take the fp32 output of int8 inputs, cast (_cast_result).
_INT_OUTPUTS = (np.dtype(np.int32), np.dtype(np.int8))
_DEFAULT_DTYPE = object()  # zeros()/empty() without a dtype: fp16



def _core_args(function) -> list:
    """A pybind11 function's arguments from its signature line (python/tandem_module.cpp, where the
    keywords are the parameter schema's): [(name, python type, default)], self left out."""
    first = function.__doc__.splitlines()[0]
    out = []
    for name, kind, default in re.findall(r"(\w+): ([\w.]+)(?: = ([^,)]+))?", first[first.index("("):]):
        if name != "self":
            out.append((name, {"int": int, "str": str, "bool": bool}.get(kind, object), ast.literal_eval(default)))
    return out


# _core.Context's arguments, in its order: num_ranks, soc, profile, functional, host_threads.
_CONTEXT_ARGS = [(name, kind) for name, kind, _ in _core_args(_core.Context.__init__)]

def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


_INT_MAX = 2**31 - 1  # the C++ side's int


def _int_in_range(what, value) -> int:
    """An int argument the C++ module takes as a C int: beyond it, a message rather than pybind's."""
    if not -_INT_MAX - 1 <= value <= _INT_MAX:
        raise ValueError(f"{what}={value}: out of range (at most {_INT_MAX})")
    return int(value)


def _kind(v) -> str:
    if isinstance(v, np.ndarray):
        return f"a {v.ndim}-D {v.dtype} array"
    return type(v).__name__


@functools.cache  # the schema is fixed: read once, not per call and key
def _schema_names_elsewhere() -> frozenset:
    """The schema's parameters a call's config does not take (the Context's, the call's, the
    tensors'), by name and Python keyword: the C++ module says where each is given instead."""
    keys = _config_keys()
    names = set()
    for p in _core.parameters():
        if p["python_place"] != "config":
            names.update(k for k in [p["name"], p["python_keyword"]] + list(p["python_aliases"]) if k and k not in keys)
    return frozenset(names)


@functools.cache  # the schema is fixed: read once, not per call and key
def _config_key_params() -> dict:
    """Config key (a keyword or an alias) -> the schema parameter (its dict) it names."""
    out = {}
    for p in _core.parameters():
        if p["python_place"] == "config":
            for k in [p["python_keyword"]] + list(p["python_aliases"]):
                out[k] = p
    return out


@functools.cache  # the schema is fixed: read once, not per call and key
def _config_param_names() -> dict:
    """Config key -> the name of the schema parameter it names."""
    return {k: p["name"] for k, p in _config_key_params().items()}


@functools.cache  # the schema is fixed: read once, not per call and key
def _config_keys() -> dict:
    """Config key -> the schema's type ("int", "flag", "text", ...), for the schema's config
    parameters and their aliases."""
    return {k: p["type"] for k, p in _config_key_params().items()}


class Context(_core.Context):
    """A simulated cluster (tandem._core.Context): Context(num_ranks=2, soc="Ascend910B1",
    profile="", functional=True, host_threads=0). Its ops take tandem tensors or numpy arrays."""

    def __init__(self, *args, **kwargs):
        names = [n for n, _ in _CONTEXT_ARGS]
        if len(args) > len(names):
            raise TypeError(f"Context takes at most {len(names)} arguments ({', '.join(names)}), got {len(args)}")
        given = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"Context: no argument '{key}' (it takes {', '.join(names)})")
            if key in given:
                raise TypeError(f"Context: {key} given twice")
            given[key] = value
        for key, kind in _CONTEXT_ARGS:
            if key not in given:
                continue
            value = given[key]
            ok = _is_int(value) if kind is int else isinstance(value, (bool, np.bool_)) if kind is bool else isinstance(value, str)
            if not ok:
                raise TypeError(f"Context: {key}={value!r}: must be {'an int' if kind is int else 'True or False' if kind is bool else 'a string'}, "
                                f"not {type(value).__name__}")
            given[key] = _int_in_range(f"Context: {key}", value) if kind is int else kind(value)
        super().__init__(**given)
        self._pending = []  # numpy outputs of async calls, written at barrier()

    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=kind)
           for name, kind, default in _core_args(_core.Context.__init__)])

    @property
    def ops(self) -> "Ops":
        return Ops(self, _core.Context.ops.__get__(self))

    # Tensors ---------------------------------------------------------------------------------

    def _shape(self, what, rows, cols, dtype):
        """(rows, cols, dtype) from zeros(rows, cols[, dtype]) or zeros((rows, cols)[, dtype])."""
        if isinstance(rows, (tuple, list)):
            if cols is not None:  # zeros((rows, cols), dtype) with the dtype positional
                if dtype is not _DEFAULT_DTYPE:
                    raise TypeError(f"{what}: give the shape as (rows, cols) once and the dtype once")
                dtype = cols
            shape = tuple(rows)
        else:
            shape = (rows, cols)
        if len(shape) != 2 or not all(_is_int(s) for s in shape):
            raise TypeError(f"{what}: the shape per rank is two ints, {what}(rows, cols) or {what}((rows, cols)); got "
                            f"{shape!r}")
        if min(shape) < 1:
            raise ValueError(f"{what}: shape {shape}: both sizes must be at least 1")
        if max(shape) > _INT_MAX:
            raise ValueError(f"{what}: shape {shape}: each size at most {_INT_MAX}")
        return int(shape[0]), int(shape[1]), _dtype_arg("dtype", "fp16" if dtype is _DEFAULT_DTYPE else dtype)

    def zeros(self, rows, cols=None, dtype=_DEFAULT_DTYPE):
        """A tensor of zeros, rows x cols on every rank: zeros(rows, cols) or zeros((rows, cols));
        dtype "fp16" (the default), "bf16", "fp32", "int8" or numpy float16 / float32 / int8."""
        return _core.Context.zeros(self, *self._shape("zeros", rows, cols, dtype))

    def empty(self, rows, cols=None, dtype=_DEFAULT_DTYPE):
        """A tensor rows x cols on every rank (zeros too: the simulator's memory starts zeroed)."""
        return _core.Context.empty(self, *self._shape("empty", rows, cols, dtype))

    def tensor(self, array, dtype=None):
        """A tensor from a numpy array: (ranks, rows, cols), one matrix per rank, or (rows, cols),
        the same on every rank. dtype: the array's (float16: fp16, float32: fp32, int8: int8) unless
        given (int8: the values must be integers in -128..127)."""
        return self._tensor("array", array, dtype)

    def _tensor(self, name, array, dtype=None, ndims=(2, 3)):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"{name}: a tandem.Tensor or a numpy array, not {type(array).__name__}")
        if array.ndim not in ndims:
            raise ValueError(f"{name}: a numpy array of shape (ranks, rows, cols) or (rows, cols), got shape "
                             f"{array.shape}")
        if dtype is None:
            if array.dtype not in _NUMPY_DTYPES:
                raise TypeError(f"{name}: a {array.dtype} array; give float16 (fp16), float32 (fp32) or int8 data, or "
                                "ctx.tensor(array, dtype='bf16') for bf16")
            dtype = _NUMPY_DTYPES[array.dtype]
        else:
            dtype = _dtype_arg("dtype", dtype)
            if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
                raise TypeError(f"{name}: a {array.dtype} array; give numbers")
            if dtype == "int8":
                array = _as_int8(name, array)
            else:
                array = array.astype(np.float16 if dtype == "fp16" else np.float32, copy=False)
        if array.ndim == 2:
            array = np.broadcast_to(array, (self.num_ranks,) + array.shape)
        if array.shape[0] != self.num_ranks:
            raise ValueError(f"{name}: an array of shape {array.shape} has {array.shape[0]} matrices; this context "
                             f"has {self.num_ranks} ranks (give one per rank, or a 2-D array for the same on every rank)")
        if min(array.shape[1:]) < 1:
            raise ValueError(f"{name}: shape {array.shape}: rows and cols must be at least 1")
        if not self.functional:  # a timing-only context holds no data: the shape is what matters
            return _core.Context.empty(self, array.shape[1], array.shape[2], dtype)
        return _core.Context.tensor(self, np.ascontiguousarray(array), dtype)

    # Completion ------------------------------------------------------------------------------

    def barrier(self):
        """Completes every pending async call (numpy outputs are written then), then a host barrier."""
        _core.Context.barrier(self)
        self._flush()

    def synchronize(self):
        _core.Context.synchronize(self)
        self._flush()

    def _flush(self):
        pending, self._pending = self._pending, []
        for write in pending:
            write()

    def __del__(self):
        # A context dropped with async calls pending completes them (as barrier() would), so
        # their numpy outputs are written and their results say complete truthfully.
        if getattr(self, "_pending", None):
            try:
                self.synchronize()
            except Exception:  # an error of the call was the caller's to see at barrier(); nothing to do here
                pass


def _dtype_arg(name, dtype) -> str:
    if dtype is None:  # numpy reads None as float64: say what is taken instead
        raise TypeError(f"{name}=None: one of {', '.join(_DTYPE_NAMES)} (or numpy float16 / float32 / int8)")
    if isinstance(dtype, str):
        if dtype not in _DTYPE_NAMES:
            raise ValueError(f"{name}={dtype!r}: one of {', '.join(_DTYPE_NAMES)} (or numpy float16 / float32 / int8)")
        return dtype
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name}={dtype!r}: one of {', '.join(_DTYPE_NAMES)} (or numpy float16 / float32 / int8)") from None
    if d not in _NUMPY_DTYPES:
        raise TypeError(f"{name}={d}: tandem tensors are fp16, bf16, fp32 or int8 (numpy float16 / float32 / int8)")
    return _NUMPY_DTYPES[d]


def _as_int8(name, array) -> np.ndarray:
    """An array's values as int8, when every one is an integer in -128..127 (never wrapped silently)."""
    if array.dtype == np.int8:
        return array
    if array.size and (not np.all(np.isfinite(array)) or np.any(array != np.round(array)) or array.min() < -128 or
                       array.max() > 127):
        raise ValueError(f"{name}: an int8 tensor takes integers in -128..127; this {array.dtype} array has others")
    return array.astype(np.int8)


def _cast_result(result, dtype) -> np.ndarray:
    """An op's result (fp32 values) as an output array's dtype: float16/float32 rounded; int32 an
    exact cast of the integer sums; int8 those sums wrapped to 8 bits (Iris's acc.to(int8))."""
    if dtype in _INT_OUTPUTS:
        return result.astype(np.int64).astype(dtype)
    return result.astype(dtype)


class Ops:
    """ctx.ops: ctx.ops.<op>(output_tensor, A, B, bias=None, async_op=False, config=None,
    workspace=None, sanitize=False) -> tandem.Workspace, or ctx.ops.run(op, ...). Tensors are
    tandem.Tensor or numpy arrays (the module's doc says how)."""

    def __init__(self, ctx: Context, core_ops):
        self._ctx = ctx
        self._core = core_ops

    def names(self):
        return self._core.names()

    def info(self, op, variant=None):
        if not isinstance(op, str):
            raise TypeError(f"op: an op's name (a string; ctx.ops.names() lists them), not {type(op).__name__}")
        if variant is not None and not isinstance(variant, str):
            raise TypeError(f"variant: a variant's name (a string), not {type(variant).__name__}")
        return self._core.info(op, variant)

    def add(self, *args, **kwargs):
        return self._core.add(*args, **kwargs)

    def __dir__(self):
        return self.names()

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._core.names():
            raise AttributeError(f"tandem ops have no '{name}' (registered: {', '.join(self._core.names())})")

        def op(output_tensor, A, B, bias=None, async_op=False, config=None, workspace=None, sanitize=False):
            return self.run(name, output_tensor, A, B, bias=bias, async_op=async_op, config=config,
                            workspace=workspace, sanitize=sanitize)

        op.__name__ = name
        op.__qualname__ = f"ctx.ops.{name}"  # Python's own errors (an unknown keyword) say ctx.ops.<op>()
        op.__doc__ = self._core.info(name)["doc"]
        return op

    def run(self, op, output_tensor, A, B, bias=None, async_op=False, config=None, workspace=None, sanitize=False):
        if not isinstance(op, str):
            raise TypeError(f"op: an op's name (a string; ctx.ops.names() lists them), not {type(op).__name__}")
        if op not in self._core.names():
            raise ValueError(f"op '{op}': no such op (ops: {', '.join(self._core.names())})")
        ctx = self._ctx
        info = self._core.info(op)
        for key, value in (("async_op", async_op), ("sanitize", sanitize)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{key}={value!r}: must be True or False, not {type(value).__name__}")
        if workspace is not None and not isinstance(workspace, _core.Workspace):
            raise TypeError(f"workspace: the tandem.Workspace an earlier call returned, or None; not {_kind(workspace)}")
        cfg = _config_arg(op, info, config)
        a = self._input("A", A)
        b = self._input("B", B)
        out, write_back = self._output(info, output_tensor, a)
        if not info["own_math"]:
            _check_shapes(op, info, ctx.num_ranks, out, a, b)
        # What the variant takes (ops.info), checked here to name the argument at fault.
        variant = (cfg or {}).get("variant")
        vinfo = self._core.info(op, variant) if isinstance(variant, str) else info
        for name, t, allowed in (("A", a, vinfo["dtypes"]), ("B", b, vinfo["dtypes"]),
                                 ("output_tensor", out, vinfo["out_dtypes"])):
            if t.dtype not in allowed:
                raise TypeError(f"{name} is {t.dtype}: {op} {vinfo['variant']} takes {', '.join(allowed)} "
                                f"{'outputs' if name == 'output_tensor' else 'inputs'}")
        if bias is not None and not vinfo["takes_bias"]:
            raise Error(f"{op}: bias: the {vinfo['variant']} variant takes no bias")
        bias_t = self._bias(bias, info, out, a, b)

        def run(config):
            return self._core.run(op, out, a, b, bias=bias_t, async_op=bool(async_op), config=config, workspace=workspace,
                                  sanitize=bool(sanitize))

        fitted = None if info["own_math"] else _fitted_tile(info, ctx.num_ranks, cfg, out, a, b)
        try:
            ws = run(cfg)
        except Error as refused:
            # The default tile does not divide the shape (the op's refusal names base-m or base-n,
            # before anything ran): the largest tile that does (a multiple of the cube fractal, at
            # most the default), as Iris fits its tiles; if the op refuses that too, its refusal
            # of the call as given stands.
            if fitted is None or not re.search(r"base[-_][mn]", str(refused)):
                raise
            try:
                ws = run({**(cfg or {}), **fitted})
            except Error:
                pass
            else:
                return self._finish(ws, write_back, async_op)  # results' base_m / base_n say the tile
            raise
        return self._finish(ws, write_back, async_op)

    def _finish(self, ws, write_back, async_op):
        ctx = self._ctx
        if write_back is not None:
            if async_op:
                ctx._pending.append(write_back)
            else:
                write_back()
        return ws

    def _input(self, name, value):
        if isinstance(value, _core.Tensor):
            return value
        return self._ctx._tensor(name, value)

    def _output(self, info, value, a):
        """The output tensor, and for a numpy output the function writing the result into it."""
        if isinstance(value, _core.Tensor):
            return value, None
        ctx = self._ctx
        if not isinstance(value, np.ndarray):
            raise TypeError(f"output_tensor: a tandem.Tensor or a numpy array, not {type(value).__name__}")
        if value.ndim not in (2, 3):
            raise ValueError(f"output_tensor: a numpy array of shape (ranks, rows, cols) or (rows, cols), got shape "
                             f"{value.shape}")
        int_output = value.dtype in _INT_OUTPUTS
        if int_output and a.dtype != "int8":
            raise TypeError(f"output_tensor: a {value.dtype} array; an int32 or int8 output is for int8 inputs "
                            f"(A is {a.dtype}): give float16 or float32")
        if not int_output and value.dtype not in (np.float16, np.float32):
            raise TypeError(f"output_tensor: a {value.dtype} array; an output is float16 (fp16) or float32 (fp32), "
                            "or int32 / int8 with int8 inputs")
        if not value.flags.writeable:
            raise ValueError("output_tensor: a read-only array; the result is written into it")
        if value.ndim == 2 and info["out_split"] != "replicated":
            raise ValueError(f"output_tensor: a 2-D array holds one matrix, but {info['name']} gives each rank its own "
                             f"part of the result ({info['out_split']}): give an array of shape (ranks, rows, cols)")
        if value.ndim == 3 and value.shape[0] != ctx.num_ranks:
            raise ValueError(f"output_tensor: an array of shape {value.shape} has {value.shape[0]} matrices; this "
                             f"context has {ctx.num_ranks} ranks")
        rows, cols = value.shape[-2:]
        if min(rows, cols) < 1:
            raise ValueError(f"output_tensor: shape {value.shape}: rows and cols must be at least 1")
        # An integer output array holds the fp32 output of int8 inputs, cast when written back.
        tensor = _core.Context.zeros(ctx, rows, cols, "fp32" if int_output else _NUMPY_DTYPES[value.dtype])
        if ctx.functional:
            start = np.broadcast_to(value, (ctx.num_ranks, rows, cols))
            tensor.copy_(np.ascontiguousarray(start.astype(np.float32) if int_output else start))

        def write_back():
            if not ctx.functional:
                return
            result = _cast_result(tensor.numpy(), value.dtype)
            value[...] = result[0] if value.ndim == 2 else result

        return tensor, write_back

    def _bias(self, bias, info, out, a, b):
        if bias is None or isinstance(bias, _core.Tensor):
            return bias
        if not isinstance(bias, np.ndarray):
            raise TypeError(f"bias: a tandem.Tensor, a numpy array or None, not {type(bias).__name__}")
        if bias.ndim == 1:
            m, n = _whole_mn(info, self._ctx.num_ranks, out, a, b)
            if bias.shape[0] == m:  # Iris: length M is one value per row (M wins when M == N)
                bias = bias.reshape(m, 1)
            elif bias.shape[0] == n:
                bias = bias.reshape(1, n)
            else:
                raise ValueError(f"bias: a 1-D array of length {bias.shape[0]}; {info['name']} here takes length M = "
                                 f"{m} (one value per row) or N = {n} (one per column)")
        return self._ctx._tensor("bias", bias)


def _config_arg(op, info, config):
    """The config dict the C++ module takes: keys type-checked, integers at least the schema's
    lowest value (positive where it has none: warmup_runs takes 0), FusedConfig's
    GPU-only fields checked and dropped (one warning)."""
    if config is None:
        return None
    if isinstance(config, _fused_config.FusedConfig):
        out, ignored = _fused_config.config_dict(config, info)
        if ignored:
            warnings.warn(_fused_config.ignored_warning(f"tandem: {op}", ignored), stacklevel=4)
        return out
    if not isinstance(config, dict):
        raise TypeError(f"config: a dict (or a tandem.FusedConfig), not {type(config).__name__}")
    keys = _config_keys()
    out, ignored = {}, []
    named = {}  # parameter name -> the config key that gave it (a keyword and its alias name one parameter)
    for key in config:
        name = _config_param_names().get(key)
        if name is not None and name in named:
            raise ValueError(f"config: '{named[name]}' and '{key}' name the same parameter; give one")
        if name is not None:
            named[name] = key
    for key, value in config.items():
        if not isinstance(key, str):
            raise TypeError(f"config: its keys are names (strings), not {key!r}")
        if key in _fused_config.gpu_fields():
            kind = _fused_config.gpu_fields()[key]
            ok = _is_int(value) and value > 0 if kind is int else isinstance(value, kind)
            if not ok:
                raise ValueError(f"config['{key}'] = {value!r}: must be "
                                 f"{'a positive integer' if kind is int else 'True or False' if kind is bool else 'a string'}")
            ignored.append(key)
            continue
        kind = keys.get(key, "int")  # not a schema key: a variant's knob (an int); C++ names unknown ones
        if key not in keys and key in _schema_names_elsewhere():
            pass  # a parameter given elsewhere (timing_only: the Context's): the C++ module says where
        elif key not in keys and isinstance(value, str):
            pass  # a knob's word (routing="zipf:1.2"): the C++ module reads it or says what it takes
        elif kind == "int":
            if not _is_int(value):
                raise TypeError(f"config['{key}'] = {value!r}: must be an integer, not {type(value).__name__}")
            lowest = _config_key_params()[key]["min"] if key in keys else None
            if key in keys and value < (1 if lowest is None else lowest):
                must = "a positive integer" if lowest is None or lowest == 1 else f"an integer of at least {lowest}"
                raise ValueError(f"config['{key}'] = {value!r}: must be {must} (leave it out for the default)")
            value = _int_in_range(f"config['{key}']", value)
        elif kind == "flag":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"config['{key}'] = {value!r}: must be True or False, not {type(value).__name__}")
            value = bool(value)
        elif isinstance(value, os.PathLike):  # trace=pathlib.Path(...)
            value = os.fspath(value)
        elif isinstance(value, (list, tuple)) and key == "trace_ranks":  # [0, 3]: the text "0,3"
            if not all(_is_int(r) for r in value):
                raise TypeError(f"config['{key}'] = {value!r}: must be ranks (integers) or a string like '0,3'")
            value = ",".join(str(int(r)) for r in value)
        elif _is_int(value) and key == "trace_ranks":
            value = str(int(value))
        elif not isinstance(value, str):
            raise TypeError(f"config['{key}'] = {value!r}: must be a string, not {type(value).__name__}")
        out[key] = value
    if ignored:
        warnings.warn(f"tandem: {op}: config field(s) {', '.join(sorted(ignored))} describe a GPU kernel and have no "
                      "meaning on the simulated Ascend cluster: ignored", stacklevel=4)
    return out


_TILE_DEFAULT = (128, 256)  # the C++ default output tile (base_m x base_n)
_TILE_STEP = 16               # the cube fractal: tiles are multiples of it


def _divisor_tile(extent: int, default: int) -> int:
    """The largest multiple of the fractal, at most `default`, dividing `extent` (the default when
    it divides, or when none does)."""
    if extent % default == 0:
        return default
    for t in range(default - default % _TILE_STEP, 0, -_TILE_STEP):
        if extent % t == 0:
            return t
    return default


def _fitted_tile(info, w, cfg, out, a, b):
    """base_m / base_n fitted to the call's shape where the config leaves them out and the
    default does not divide the per-rank extents the op tiles (None: nothing to fit)."""
    cfg = cfg or {}
    (ra, ca), (_, cb), (ro, co) = _per_rank(a), _per_rank(b), _per_rank(out)
    rows = ra if info["a_split"] == "rows" and not info["k_per_rank"] else ro
    cols = np.gcd(co, cb)  # a rank's columns of the output and of B (a column block, when B is split)
    if info["a_split"] == "cols" and not info["k_per_rank"]:
        cols = np.gcd(cols, ca)  # a K shard is whole base-n tiles too (all_gather_matmul)
    fitted = {}
    if "base_m" not in cfg:
        bm = _divisor_tile(int(rows), _TILE_DEFAULT[0])
        if bm != _TILE_DEFAULT[0]:
            fitted["base_m"] = bm
    if "base_n" not in cfg:
        bn = _divisor_tile(int(cols), _TILE_DEFAULT[1])
        if bn != _TILE_DEFAULT[1]:
            fitted["base_n"] = bn
    return fitted or None


def _per_rank(t):
    return t.shape[1], t.shape[2]


def _whole_mn(info, w, out, a, b):
    """The whole product's M and N, from A and B and the op's sharding."""
    (ra, _), (_, cb) = _per_rank(a), _per_rank(b)
    m = ra * w if info["a_split"] == "rows" and not info["k_per_rank"] else ra
    n = cb * w if info["b_split"] == "cols" and not info["k_per_rank"] else cb
    return m, n


def _check_shapes(op, info, w, out, a, b):
    """The op's sharding (ops.info) applied to A and B: B must fit A, and the output must be what
    they make; each refused naming the argument at fault."""
    (ra, ca), (rb, cb), (ro, co) = _per_rank(a), _per_rank(b), _per_rank(out)
    if info["k_per_rank"]:  # each rank's A is M x K, its B K x N; the products are summed
        m, k_a, k_b, n = ra, ca, rb, cb
        how = "each rank's B has as many rows as its A has columns"
    else:
        m = ra * w if info["a_split"] == "rows" else ra
        k_a = ca * w if info["a_split"] == "cols" else ca
        k_b = rb * w if info["b_split"] == "rows" else rb
        n = cb * w if info["b_split"] == "cols" else cb
        def split(x):
            return "the same on every rank" if info[x] == "replicated" else f"split by {info[x]} over {w} ranks"
        how = f"A {split('a_split')}, B {split('b_split')}"
    if k_a != k_b:
        raise ValueError(f"B is {rb} x {cb} per rank: {op} with A {ra} x {ca} per rank needs K = {k_a} ({how}), and this "
                         f"B gives K = {k_b}")
    want = {"rows": (m // w, n), "cols": (m, n // w)}.get(info["out_split"], (m, n))
    if (ro, co) != want:
        raise ValueError(f"output_tensor is {ro} x {co} per rank: {op} with A {ra} x {ca} and B {rb} x {cb} per rank "
                         f"writes {want[0]} x {want[1]} per rank")
