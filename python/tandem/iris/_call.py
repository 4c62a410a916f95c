"""One rank's op call, as Iris takes it: its arguments checked in Iris's words (naming the
argument and the rank), its inputs taken at the call (stream order: a later write to A does not
change the op's input), met with the other ranks' calls, run once by the last rank on the
padded operands (tandem.iris._layout), and each rank's output written.

Every op decision comes from the op's description (ctx.ops.info) and FusedConfig's one meaning
(tandem._fused_config): nothing here names an op.
"""
from __future__ import annotations

import re
import warnings

import numpy as np

from tandem import _core
from tandem import _fused_config
from tandem._fused_config import FusedConfig
from tandem.iris import _catalog, _layout, _tensors
from tandem.iris._workspace import IrisWorkspace

Error = _core.Error


def as_config(config) -> FusedConfig:
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
    raise TypeError(f"config: a FusedConfig (or a dict of its fields), not {type(config).__name__}")


def _matrix(name: str, t, rank: int, output: bool = False):
    if not _tensors.is_tensor(t):
        raise TypeError(f"{name}: a tensor (a numpy array or a torch tensor, made by ctx.zeros/randn/...), not "
                        f"{type(t).__name__}")
    if t.ndim != 2:
        raise ValueError(f"{name}: a 2-D tensor on each rank, got shape {tuple(t.shape)} on rank {rank}")
    name_of = _tensors.dtype_name(t)
    if not output and name_of not in _tensors.INPUT_DTYPES:
        raise TypeError(f"{name} is {_tensors.dtype_text(t)} on rank {rank}: tandem.iris inputs are numpy float16, "
                        "float32 or int8, or torch float16, bfloat16, float32 or int8")
    if output and name_of is None:
        raise TypeError(f"{name} is {_tensors.dtype_text(t)} on rank {rank}: tandem.iris outputs are float16, "
                        "bfloat16 (torch) or float32, or int32 / int8 with int8 inputs")
    if min(t.shape) < 1:
        raise ValueError(f"{name} has shape {tuple(t.shape)} on rank {rank}: both sizes must be at least 1")
    return t


def _shapes(op, info, w, a_name, out, a, b, rank):
    """Iris's shape rules, from the op's sharding: (M, N, K) of the whole product and whether the
    output is the rank's shard of a split output (else the whole)."""
    kpr = info["k_per_rank"]
    (ra, ca), (rb, cb), (ro, co) = tuple(a.shape), tuple(b.shape), tuple(out.shape)
    k_a = ca * w if not kpr and info["a_split"] == "cols" else ca
    k_b = rb * w if not kpr and info["b_split"] == "rows" else rb
    if k_a != k_b:
        if not kpr and info["a_split"] == "cols":
            need = f"K = world_size x K_local = {w} x {ca} = {k_a} ({a_name} is {ra} x {ca})"
        elif not kpr and info["b_split"] == "rows":
            need = f"B's rows = K / world_size = {ca} / {w}"
        else:
            need = f"B's rows = {a_name}'s columns = {ca}"
        raise ValueError(f"B has {rb} rows on rank {rank}: {op} needs {need}")
    m = ra * w if not kpr and info["a_split"] == "rows" else ra
    n = cb * w if not kpr and info["b_split"] == "cols" else cb
    split = {"rows": 0, "cols": 1}.get(info["out_split"])
    whole = (m, n)
    if split is None:
        if (ro, co) != whole:
            raise ValueError(f"output_tensor is {ro} x {co} on rank {rank}: {op} with {a_name} {ra} x {ca} and B {rb} x "
                             f"{cb} on {w} ranks writes {m} x {n}")
        return m, n, k_a, False
    if (ro, co) == whole and w > 1:
        return m, n, k_a, False  # the whole: Iris's tile path, each rank writing the tiles it owns
    extent, letter = whole[split], "MN"[split]
    shard = (m // w, n) if split == 0 else (m, n // w)
    if extent % w != 0:
        raise ValueError(f"output_tensor is {ro} x {co} on rank {rank}: {op} writes either M x N = {m} x {n} (the tiles "
                         f"this rank owns) or {'M/world_size x N' if split == 0 else 'M x N/world_size'}, which needs "
                         f"{letter} = {extent} to be a multiple of world_size = {w}")
    if (ro, co) != shard:
        also = f" (or {m} x {n}, the full-size tile-owner form)" if w > 1 else ""
        raise ValueError(f"output_tensor is {ro} x {co} on rank {rank}: {op} with {a_name} {ra} x {ca} and B {rb} x {cb} "
                         f"on {w} ranks writes {shard[0]} x {shard[1]}{also}")
    return m, n, k_a, True


def default_output(op, w, a, b):
    """The output a call with these A and B writes (a split output: the rank's shard where N
    divides, else the full size), zeros of A's framework, in A's dtype (float32 for int8)."""
    info = _catalog.info(op)
    name = _catalog.a_name(op)
    _matrix(name, a, 0)
    _matrix("B", b, 0)
    kpr = info["k_per_rank"]
    m = a.shape[0] * w if not kpr and info["a_split"] == "rows" else a.shape[0]
    n = b.shape[1] * w if not kpr and info["b_split"] == "cols" else b.shape[1]
    if info["out_split"] == "rows" and m % w == 0:
        m //= w
    elif info["out_split"] == "cols" and n % w == 0:
        n //= w
    dtype = a.dtype
    if _tensors.dtype_name(a) == "int8":
        dtype = _tensors.torch().float32 if _tensors.is_torch(a) else np.float32
    return _tensors.Dtype(dtype).zeros((m, n))


def _run_dtype(a_dtype: str, out_dtype: str, offered) -> str:
    """The dtype the op writes: the output's when it is A's (fp16, bf16) or fp32 and the variant
    writes it; else fp32 (fp32 and int8 inputs always: Iris's fp32 path writes fp32, int8's int32
    sums leave L0C as fp32), which an output of another dtype receives rounded once. None when
    the variant writes neither."""
    if a_dtype not in ("fp32", "int8") and out_dtype in (a_dtype, "fp32") and out_dtype in offered:
        return out_dtype
    return "fp32" if "fp32" in offered else None


class Part:
    """A rank's part of a call: its arguments, checked and captured."""


def prepare(world, rank, op, output_tensor, A, B, bias, async_op, config, workspace) -> Part:
    """Checks a rank's call and captures its inputs (raises in Iris's words, on this rank)."""
    info = _catalog.info(op)
    a_name = _catalog.a_name(op)
    w = world.nprocs
    out = _matrix("output_tensor", output_tensor, rank, output=True)
    a = _matrix(a_name, A, rank)
    b = _matrix("B", B, rank)
    if not _tensors.writable(out):
        raise ValueError(f"output_tensor is read-only on rank {rank}: the op writes its result into it")
    if not isinstance(async_op, (bool, np.bool_)):
        raise TypeError(f"async_op={async_op!r}: must be True or False, not {type(async_op).__name__}")
    if workspace is not None and not isinstance(workspace, IrisWorkspace):
        raise TypeError(f"workspace: the IrisWorkspace an earlier call returned, or None; not {type(workspace).__name__}")
    a_dtype, b_dtype, out_dtype = (_tensors.dtype_name(t) for t in (a, b, out))
    if b_dtype != a_dtype:
        raise TypeError(f"B is {_tensors.dtype_text(b)} on rank {rank} but {a_name} is {_tensors.dtype_text(a)}: A and B "
                        "share one dtype")
    if out_dtype in ("int32", "int8") and a_dtype != "int8":
        raise TypeError(f"output_tensor is {_tensors.dtype_text(out)} on rank {rank}: an int32 or int8 output is for "
                        f"int8 inputs ({a_name} is {_tensors.dtype_text(a)}); give a floating-point output")
    if a_dtype == "int8" and out_dtype in ("fp16", "bf16"):
        raise TypeError(f"output_tensor is {_tensors.dtype_text(out)} on rank {rank}: int8 inputs give float32, int32 "
                        "or int8 outputs")
    cfg = as_config(config)
    m, n, k, output_shard = _shapes(op, info, w, a_name, out, a, b, rank)
    split_whole = info["out_split"] != "replicated" and not output_shard
    tandem_config, ignored = _fused_config.config_dict(cfg, info, w, numbers_owned_tiles=split_whole)
    variant = tandem_config.get("variant", info["variant"])
    vinfo = _catalog.info(op, variant)
    if a_dtype not in vinfo["dtypes"]:
        raise TypeError(f"{a_name} is {_tensors.dtype_text(a)} on rank {rank}: {op} {variant} takes "
                        f"{', '.join(vinfo['dtypes'])} inputs")
    run_dtype = _run_dtype(a_dtype, out_dtype, vinfo["out_dtypes"])
    if run_dtype is None:
        raise TypeError(f"output_tensor is {_tensors.dtype_text(out)} on rank {rank}: {op} {variant} writes "
                        f"{', '.join(vinfo['out_dtypes'])} outputs")
    if bias is not None:
        if not _tensors.is_tensor(bias):
            raise TypeError(f"bias: a 1-D tensor (a numpy array or a torch tensor), not {type(bias).__name__}")
        if _tensors.dtype_name(bias) not in _tensors.INPUT_DTYPES:
            raise TypeError(f"bias is {_tensors.dtype_text(bias)} on rank {rank}: tandem.iris takes float16, bfloat16, "
                            "float32 or int8 tensors")
        if bias.ndim != 1:
            raise ValueError(f"bias: a 1-D tensor of length M or N (Iris's), got shape {tuple(bias.shape)} on rank "
                             f"{rank}")
        if bias.shape[0] not in (m, n):
            raise ValueError(f"bias has length {bias.shape[0]} on rank {rank}: {op} adds a bias of length M = {m} "
                             f"(one per row) or N = {n} (one per column)")
        if a_dtype == "int8":
            raise ValueError(f"bias: no bias with int8 inputs ({a_name} is int8 on rank {rank}): the int8 cube's int32 "
                             "sums start from zero; add the bias to the output")
        if not vinfo["takes_bias"]:
            raise ValueError(f"bias: {op} {variant} takes no bias")
    if ignored and rank == 0:  # once per call, not once per rank
        warnings.warn(_fused_config.ignored_warning(f"tandem.iris.{op}", ignored), stacklevel=4)
    p = Part()
    p.op, p.info, p.a_name, p.rank = op, info, a_name, rank
    p.out = out
    p.a, p.b = _tensors.host_copy(a), _tensors.host_copy(b)   # the inputs as they are now (stream order)
    p.bias = None if bias is None else _tensors.host_copy(bias)
    p.shapes = {"output_tensor": (tuple(out.shape), out_dtype), a_name: (tuple(a.shape), a_dtype),
                "B": (tuple(b.shape), b_dtype)}
    p.bias_shape = None if bias is None else tuple(bias.shape)
    p.a_dtype, p.out_dtype, p.run_dtype = a_dtype, out_dtype, run_dtype
    p.mnk, p.output_shard = (m, n, k), output_shard
    p.cfg, p.config, p.ignored, p.variant = cfg, tandem_config, ignored, variant
    p.identity = (op, (m, n, k), a.dtype, w, variant)
    p.workspace = workspace
    p.previous = None if workspace is None else workspace._call  # the call that last used it
    return p


def workspace_for(p: Part) -> IrisWorkspace:
    """The workspace the call returns: the one given, when it matches the call, else a new one."""
    if p.workspace is not None and p.workspace.matches(*p.identity):
        p.workspace.ignored = p.ignored
        return p.workspace
    return IrisWorkspace(*p.identity, p.ignored)


class Outcome:
    """What a call's run gives every rank's workspace."""

    def __init__(self, results, trace, tandem_workspace, key):
        self.results = results
        self.trace = trace
        self.tandem_workspace = tandem_workspace
        self.key = key


def _check_alike(parts: dict):
    first = parts[0]
    for r in range(1, len(parts)):
        p = parts[r]
        for name, (shape, dtype) in p.shapes.items():
            if (shape, dtype) != first.shapes[name]:
                raise ValueError(f"{p.op}: {name} is {shape} {dtype} on rank {r} but {first.shapes[name][0]} "
                                 f"{first.shapes[name][1]} on rank 0: every rank passes the same shapes")
        if p.bias_shape != first.bias_shape:
            raise ValueError(f"{p.op}: bias differs between rank 0 and rank {r} (given or not, or its length)")
        if p.cfg != first.cfg:
            raise ValueError(f"{p.op}: config differs between rank 0 ({first.cfg}) and rank {r} ({p.cfg})")


def _iris_words(message: str, cfg: FusedConfig) -> str:
    """A refusal of the simulated op in Iris's words: a config parameter is named by the
    FusedConfig field that sets it (base_m=512 -> FusedConfig.block_size_m = 512), or, when the
    config left it out, by that field with the value Tandem chose (block_size_m = 128, fitted)."""
    given = cfg.given()
    fields_of = {}  # a parameter's keyword -> (its FusedConfig field, whether the config gave it)
    for p in _core.parameters():
        keys = [p["python_keyword"]] + list(p["python_aliases"])
        fields = [f for f in keys if f in FusedConfig.__dataclass_fields__]
        if p["python_keyword"] == "variant":
            fields = ["variant" if "variant" in given else "all_reduce_variant"]
        if fields:
            chosen = [f for f in fields if f in given]
            fields_of[p["python_keyword"]] = (chosen or fields)[0], bool(chosen)

    def field(match):
        key, value = match.group(1), match.group(2)
        if key == "num_ranks":  # the context's ranks: spawn's processes
            return f"nprocs = {value} (spawn)"
        if key not in fields_of:
            return match.group(0)
        name, was_given = fields_of[key]
        return f"FusedConfig.{name} = {value}" if was_given else f"{name} = {value} (Tandem's choice: not given)"

    return re.sub(r"\b([a-z_]+)=([^\s:;,]+)", field, message)


def run(world, parts: dict) -> Outcome:
    """The last rank's work: every rank's part checked alike, laid out, run once, outputs written."""
    _check_alike(parts)
    w = world.nprocs
    first = parts[0]
    op, info, cfg = first.op, first.info, first.cfg
    m, n, k = first.mnk
    given = cfg.given()
    layout_probe = _layout.Layout(info, w, m, k, n, 1, 1, 1, first.output_shard)
    rows = max(layout_probe.m.sizes)
    cols = max(layout_probe.n.sizes)
    base_m = first.config.get("base_m", _layout.fit(rows, _layout.DEFAULT_TILE[0]))
    base_n = first.config.get("base_n", _layout.fit(cols, _layout.DEFAULT_TILE[1]))
    if layout_probe.k.split and "block_size_n" not in given:
        base_n = min(base_n, _layout.fit(max(layout_probe.k.sizes), _layout.DEFAULT_TILE[1]))  # a shard's K: whole tiles
    k_step = 2 * base_n if first.a_dtype == "int8" else base_n  # the GEMM's K panel (int8's twice as deep)
    layout = _layout.Layout(info, w, m, k, n, base_m, base_n, k_step, first.output_shard)
    ctx = world.context

    def tensor(arrays, dtype):
        if not ctx.functional:  # a timing-only context holds no data: the shape is what matters
            return ctx.empty(arrays[0].shape[0], arrays[0].shape[1], dtype)
        return ctx.tensor(np.stack(arrays), dtype=dtype)

    a = tensor([layout.a(parts[r].a) for r in range(w)], first.a_dtype)
    b = tensor([layout.b(parts[r].b) for r in range(w)], first.a_dtype)
    bias = None
    if first.bias is not None:
        per_row = first.bias.shape[0] == m  # Iris: length M is one value per row (M wins when M == N)
        bias = tensor([layout.bias(parts[r].bias, per_row) for r in range(w)], first.a_dtype)
    out = ctx.zeros(*layout.out_shape(), first.run_dtype)
    config = dict(first.config, base_m=int(base_m), base_n=int(base_n), all_views=True)
    trace = world.next_trace_file(op)
    if trace is not None:
        config["trace"] = trace
        if world.trace_ranks is not None:
            config["trace_ranks"] = world.trace_ranks
    key = (op, layout.out_shape(), first.a_dtype, first.run_dtype, tuple(sorted(config.items())))
    reuse = None  # the device memory of the call every rank's workspace comes from, when it fits this call
    previous = first.previous
    if (previous is not None and previous.result is not None and previous.result.key == key
            and all(p.previous is previous for p in parts.values())):
        reuse = previous.result.tandem_workspace
    try:
        ws = ctx.ops.run(op, out, a, b, bias=bias, config=config, workspace=reuse)
    except (ValueError, TypeError, Error) as e:
        words = _iris_words(str(e), cfg)
        # A value the op refuses is the caller's argument at fault: a ValueError naming it.
        raise (ValueError if "FusedConfig." in words and type(e) is Error else type(e))(words) from None
    if ctx.functional:
        values = out.numpy()
        results = [layout.result(values[r], r) for r in range(w)]
        if info["out_split"] != "replicated" and not first.output_shard:
            whole = layout.gathered(results)
            owned = _layout.owned_tiles(m, n, w, int(cfg.block_size_m), int(cfg.block_size_n), int(cfg.group_size_m))
            for r in range(w):
                for index in owned[r]:
                    _tensors.write(parts[r].out, index, _tensors.cast_result(whole[index], parts[r].out_dtype))
        else:
            for r in range(w):
                _tensors.write(parts[r].out, Ellipsis, _tensors.cast_result(results[r], parts[r].out_dtype))
    results = dict(ws.results)
    if "sequential_us" not in results and "seq_comm_us" in results:
        results["sequential_us"] = results["seq_comm_us"] + results["seq_compute_us"]
    return Outcome(results, trace, ws, key)
