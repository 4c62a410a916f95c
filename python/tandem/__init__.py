"""Tandem: a simulated Ascend-style NPU cluster running fused communication + compute ops.

`tandem.Context` runs an op for every rank in one call (tensors with a leading rank axis, or
numpy arrays: 3-D one matrix per rank, 2-D the same on every rank); `tandem.iris` offers Iris's
per-rank programming model on top of it (docs/IRIS.md).
"""
from tandem._core import *  # noqa: F401,F403  (Tensor, Workspace, Error, parameters)
from tandem._core import Error, __doc__  # noqa: F401  (re-exported by name for readers and linters)
from tandem._context import Context, Ops  # noqa: F401  (the arguments checked, numpy arrays accepted)
from tandem._fused_config import FusedConfig  # noqa: F401  (Iris's config; ctx.ops takes it or a dict)
