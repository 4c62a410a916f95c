"""Tandem: a simulated Ascend-style NPU cluster running fused communication + compute ops.

`tandem.Context` runs an op for every rank in one call (tensors with a leading rank axis);
`tandem.iris` offers Iris's per-rank programming model on top of it (docs/IRIS.md).
"""
from tandem._core import *  # noqa: F401,F403  (Context, Tensor, Workspace, Ops, Error)
from tandem._core import Error, __doc__  # noqa: F401  (re-exported by name for readers and linters)
