"""Tensors as tandem.iris takes and makes them: numpy arrays (the default), or torch CPU tensors
where torch is installed (Iris's own type; bf16 included).

tandem.iris never imports torch itself: a torch tensor or dtype can only reach it from a program
that did, so torch is looked up in sys.modules.
"""
from __future__ import annotations

import sys

import numpy as np

# Tandem's dtype names for the numpy and torch dtypes tandem.iris takes. int32 is an output only
# (an int8 op's sums).
_NUMPY = {np.dtype(np.float16): "fp16", np.dtype(np.float32): "fp32", np.dtype(np.int8): "int8",
          np.dtype(np.int32): "int32"}
_NUMPY_OF = {name: d for d, name in _NUMPY.items()}
INPUT_DTYPES = ("fp16", "bf16", "fp32", "int8")
ACCEPTED = "numpy float16, float32, int8, int32 or torch float16, bfloat16, float32, int8, int32"


def torch():
    """The torch module, when the program imported it (else None)."""
    return sys.modules.get("torch")


def _torch_dtypes() -> dict:
    t = torch()
    if t is None:
        return {}
    return {t.float16: "fp16", t.bfloat16: "bf16", t.float32: "fp32", t.int8: "int8", t.int32: "int32"}


def is_tensor(x) -> bool:
    """A numpy array or a torch tensor."""
    t = torch()
    return isinstance(x, np.ndarray) or (t is not None and isinstance(x, t.Tensor))


def is_torch(x) -> bool:
    t = torch()
    return t is not None and isinstance(x, t.Tensor)


def kind(x) -> str:
    return "torch" if is_torch(x) else "numpy"


def dtype_name(x):
    """Tandem's name of a tensor's dtype ("fp16", "bf16", "fp32", "int8", "int32"), or None."""
    if is_torch(x):
        return _torch_dtypes().get(x.dtype)
    return _NUMPY.get(x.dtype)


def dtype_text(x) -> str:
    """A tensor's dtype as its framework writes it (float16, torch.bfloat16)."""
    return str(x.dtype)


def describe(x) -> str:
    if is_tensor(x):
        return f"{'a torch tensor' if is_torch(x) else 'a numpy array'} of shape {tuple(x.shape)}"
    return type(x).__name__


class Dtype:
    """A dtype argument of tensor creation: numpy's (or None: numpy float32, as torch's default
    dtype is float32) or torch's."""

    def __init__(self, dtype):
        torch_dtypes = _torch_dtypes()
        t = torch()
        if t is not None and isinstance(dtype, t.dtype):
            if dtype not in torch_dtypes:
                raise TypeError(f"dtype={dtype}: tandem.iris tensors are {ACCEPTED}")
            self.kind, self.native, self.name = "torch", dtype, torch_dtypes[dtype]
            return
        try:
            d = np.dtype(np.float32 if dtype is None else dtype)
        except TypeError:
            d = None
        if d is None or d not in _NUMPY:
            raise TypeError(f"dtype={dtype!r}: tandem.iris tensors are {ACCEPTED}")
        self.kind, self.native, self.name = "numpy", d, _NUMPY[d]

    def zeros(self, shape):
        if self.kind == "torch":
            return torch().zeros(shape, dtype=self.native)
        return np.zeros(shape, dtype=self.native)

    def full(self, shape, value):
        if self.kind == "torch":
            return torch().full(shape, value, dtype=self.native)
        return np.full(shape, value, dtype=self.native)

    def empty(self, shape):
        if self.kind == "torch":
            return torch().empty(shape, dtype=self.native)
        return np.empty(shape, dtype=self.native)

    def from_values(self, values: np.ndarray):
        """Values drawn in float64 (numpy) as this dtype."""
        return values.astype(self.native)


def host_copy(x) -> np.ndarray:
    """A tensor's values as a numpy array of its own, taken now (the op's input as it was at the
    call): float16, float32 (a bf16 tensor's values, exact), int8 or int32."""
    if is_torch(x):
        t = x.detach().to("cpu")
        if dtype_name(t) == "bf16":
            t = t.float()
        return t.contiguous().numpy().copy()
    return np.array(x, copy=True)


def cast_result(values: np.ndarray, name: str) -> np.ndarray:
    """An op's result (float values) as an output of dtype `name`: float16/float32 rounded, bf16
    left in float32 (torch rounds it on the copy), int32 the integer sums (exact), int8 the sums
    wrapped to 8 bits (Iris's acc.to(int8), as numpy's astype wraps)."""
    if name in ("int32", "int8"):
        return values.astype(np.int64).astype(_NUMPY_OF[name])
    if name == "bf16":
        return values.astype(np.float32)
    return values.astype(_NUMPY_OF[name])


def write(out, index, values: np.ndarray):
    """out[index] = values (cast_result's), into a numpy array or a torch tensor."""
    if is_torch(out):
        out[index] = torch().from_numpy(np.ascontiguousarray(values)).to(out.dtype)
    else:
        out[index] = values


def writable(x) -> bool:
    return True if is_torch(x) else bool(x.flags.writeable)
