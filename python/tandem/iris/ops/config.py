"""Iris's iris.ops.config: FusedConfig (its one meaning here: tandem._fused_config)."""
from tandem._fused_config import FusedConfig

__all__ = ["FusedConfig"]
