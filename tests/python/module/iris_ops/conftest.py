"""Iris's tests/ops, ported to tandem.iris (the real files are not in this repo: these are written
from Iris's documented API and tests, docs/IRIS.md). What differs from an Iris test is only:
- the import (tandem.iris for iris),
- the launcher: each test's per-rank body runs on `world` ranks through tandem.iris.spawn, where
  Iris's tests run under torchrun; a reference every rank needs is made from every rank's seed,
  where Iris's tests use torch.distributed,
- the framework: each test runs with numpy, and with torch CPU tensors where torch is installed
  (the `xp` fixture: torch's names, numpy or torch underneath).
"""
import importlib.util

import numpy as np
import pytest


class Numpy:
    name = "numpy"
    float16, float32, int8 = np.float16, np.float32, np.int8
    bfloat16 = None  # numpy has none: bf16 cases run with torch only

    @staticmethod
    def manual_seed(seed):
        np.random.seed(seed)

    @staticmethod
    def randn(*shape, dtype):
        return np.random.standard_normal(shape).astype(dtype)

    @staticmethod
    def zeros(*shape, dtype):
        return np.zeros(shape, dtype=dtype)

    @staticmethod
    def full(shape, value, dtype):
        return np.full(shape, value, dtype=dtype)

    @staticmethod
    def f64(x):
        return np.asarray(x, dtype=np.float64)

    @classmethod
    def matmul(cls, a, b):
        return cls.f64(a) @ cls.f64(b)

    @classmethod
    def allclose(cls, a, b, atol, rtol):
        return bool(np.allclose(cls.f64(a), cls.f64(b), atol=atol, rtol=rtol))


class Torch:
    name = "torch"

    def __init__(self):
        import torch
        self.torch = torch
        self.float16, self.float32, self.bfloat16, self.int8 = torch.float16, torch.float32, torch.bfloat16, torch.int8

    def manual_seed(self, seed):
        self.torch.manual_seed(seed)

    def randn(self, *shape, dtype):
        return self.torch.randn(*shape, dtype=dtype)

    def zeros(self, *shape, dtype):
        return self.torch.zeros(*shape, dtype=dtype)

    def full(self, shape, value, dtype):
        return self.torch.full(shape, value, dtype=dtype)

    def f64(self, x):
        return x.double().numpy() if isinstance(x, self.torch.Tensor) else np.asarray(x, dtype=np.float64)

    def matmul(self, a, b):
        return self.f64(a) @ self.f64(b)

    def allclose(self, a, b, atol, rtol):
        return bool(np.allclose(self.f64(a), self.f64(b), atol=atol, rtol=rtol))


FRAMEWORKS = ["numpy"] + (["torch"] if importlib.util.find_spec("torch") is not None else [])


@pytest.fixture(params=FRAMEWORKS)
def xp(request):
    return Numpy() if request.param == "numpy" else Torch()


def dtype_of(xp, name):
    """xp's dtype for a test's dtype name; skips bf16 where the framework has none."""
    d = getattr(xp, name)
    if d is None:
        pytest.skip(f"{xp.name} has no {name}")
    return d
