"""Iris's per-rank programming model on a simulated Ascend cluster (docs/IRIS.md).

An Iris program runs once per rank: it makes its handle with ``iris.iris(heap_size)``, asks
``get_rank()``, makes its own tensors and calls ``ctx.ops.<op>(...)``; the op completes when
every rank has called it. Here the ranks are threads of one process taking turns, started by
``spawn(fn, nprocs, args)`` (where Iris programs call torch.multiprocessing.spawn), each with its
own global random state as Iris's processes have; tensors are numpy arrays, or torch CPU tensors
where torch is installed. Each collective call of every rank is met with the same call of the
other ranks; the op then runs once on the simulated cluster (tandem.Context) and each rank's
output is written in place.

The layout is Iris's: ``tandem.iris.ops`` (FusedConfig, FusedWorkspace, the ops as functions
taking the handle first), ``tandem.iris.ops.config``, ``tandem.iris.ops.workspace`` and one module
per op (``from tandem.iris.ops.<op> import <op>``).
"""
from tandem import _core
from tandem._fused_config import FusedConfig
from tandem.iris._handle import Iris, iris, logger, set_logger_level
from tandem.iris._workspace import FusedWorkspace, IrisWorkspace
from tandem.iris._world import RanksDidNotMeet, spawn
from tandem.iris import ops

Error = _core.Error

__all__ = ["FusedConfig", "FusedWorkspace", "Iris", "IrisWorkspace", "iris", "spawn", "ops", "Error",
           "RanksDidNotMeet", "set_logger_level", "logger"]
