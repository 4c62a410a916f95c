"""Iris's iris.ops.workspace: FusedWorkspace (tandem.iris.IrisWorkspace)."""
from tandem.iris._workspace import FusedWorkspace, IrisWorkspace

__all__ = ["FusedWorkspace", "IrisWorkspace"]
