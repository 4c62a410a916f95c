"""Iris's iris.ops: FusedConfig, FusedWorkspace, and every op tandem.iris offers as a function
taking the rank's handle first, ops.<op>(ctx, output_tensor, A, B, bias=None, async_op=False,
config=None, workspace=None), with its preamble ops.<op>_preamble(ctx, A, B, config=None) (a
workspace for the call, ready to pass to it; the output may come first, before A).

As in Iris, each op is also a module of its own: `from tandem.iris.ops.<op> import <op>,
<op>_preamble`. The ops are the registered ones whose math is their sharding's GEMM (their
descriptions, ctx.ops.info), so the modules are made here, one per op, rather than written as
files.
"""
import sys
import types

from tandem._fused_config import FusedConfig
from tandem.iris import _catalog
from tandem.iris._handle import op_function, preamble_function
from tandem.iris._workspace import FusedWorkspace, IrisWorkspace
from tandem.iris.ops import config, workspace  # noqa: F401  (Iris's submodules)

__all__ = ["FusedConfig", "FusedWorkspace", "IrisWorkspace"]


def _install_ops():
    for name in _catalog.names():
        function, preamble = op_function(name), preamble_function(name)
        module = types.ModuleType(f"{__name__}.{name}", _catalog.info(name)["doc"])
        for f in (function, preamble):
            setattr(module, f.__name__, f)
            globals()[f.__name__] = f
            __all__.append(f.__name__)
        module.FusedConfig, module.FusedWorkspace = FusedConfig, FusedWorkspace
        sys.modules[module.__name__] = module


_install_ops()
