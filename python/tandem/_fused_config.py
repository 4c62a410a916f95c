"""Iris's FusedConfig and its one meaning on the simulated Ascend cluster.

Both Python APIs take it (tandem.Context's ctx.ops and tandem.iris), and both turn it into the
config dict of the C++ module through `config_dict` below, driven by the op's description
(ctx.ops.info) and by the parameter schema (tandem.parameters()): no op is named here.

- A field whose name is a parameter's keyword or alias in the schema (block_size_m is base_m,
  block_size_n base_n, num_sms and gemm_sms compute_blocks, comm_sms comm_blocks, variant) sets
  that parameter, when it was given.
- all_reduce_variant picks the variant of an op whose output is the sum of every rank's product on
  every rank (its description: K per rank, a replicated output), as in Iris; Iris's default,
  two_shot, applies when it is not given.
- variant (Tandem's extension: Iris has only all_reduce_variant) picks the variant of any op by
  the name its description lists.
- The fields marked `gpu` describe a GPU kernel and have no Ascend counterpart: they are checked
  as Iris checks them, then ignored, and a call that sets any gives one warning naming them.
  group_size_m is one of them except where it numbers the tiles a rank owns (tandem.iris's
  full-size split outputs).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Optional

import numpy as np

from tandem import _core

# all_reduce_variant's values in Iris (iris/ops/config.py).
IRIS_ALL_REDUCE_VARIANTS = ("atomic", "ring", "one_shot", "two_shot", "spinlock")
FRACTAL = 16  # the cube's fractal: an Ascend tile side is a multiple of it (docs/HARDWARE.md)


def _gpu(default):
    """A field describing a GPU kernel: checked, then ignored (with one warning)."""
    return dataclasses.field(default=default, metadata={"gpu": True})


@dataclasses.dataclass
class FusedConfig:
    """Iris's FusedConfig (iris/ops/config.py), its fields and defaults, plus the example scripts'
    gemm_sms / comm_sms and Tandem's `variant`. What each means here: tandem._fused_config's doc
    and docs/IRIS.md. A field left at its default is not given (the tile is then fitted to the
    shape); a field assigned after construction is given."""

    block_size_m: int = 256
    block_size_n: int = 64
    block_size_k: int = _gpu(64)
    group_size_m: int = _gpu(1)
    num_sms: Optional[int] = None
    num_xcds: int = _gpu(1)
    chunk_size: int = _gpu(1)
    cache_modifier_a: str = _gpu(".ca")
    cache_modifier_b: str = _gpu(".ca")
    allow_tf32: bool = _gpu(True)
    all_reduce_variant: str = "two_shot"
    all_reduce_num_rings: int = _gpu(1)
    reduce_num_sms: int = _gpu(64)
    ksplit: bool = _gpu(False)
    # Iris's example scripts' names for the split of the GPU between GEMM and communication.
    gemm_sms: Optional[int] = None
    comm_sms: Optional[int] = None
    # Tandem's extension: the variant of any op (ctx.ops.info(op)["variants"]).
    variant: Optional[str] = None

    def __post_init__(self):
        object.__setattr__(self, "_assigned", set())

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if "_assigned" in self.__dict__ and name in FusedConfig.__dataclass_fields__:
            self._assigned.add(name)

    def given(self) -> set:
        """The fields the caller set: different from their default, or assigned after construction."""
        fields = FusedConfig.__dataclass_fields__
        return {f for f in fields if getattr(self, f) != fields[f].default} | set(self._assigned)

    def validate(self, world_size: Optional[int] = None):
        """Iris's checks (positive sizes, a known all-reduce variant, the ring's block_size_n) and
        Ascend's (a tile side a multiple of the cube fractal). Raises ValueError naming the field."""
        for name, field in FusedConfig.__dataclass_fields__.items():
            value = getattr(self, name)
            if field.type in ("int", "Optional[int]"):
                if value is None and field.type == "Optional[int]":
                    continue
                if not _is_int(value) or value <= 0:
                    raise ValueError(f"FusedConfig.{name} = {value!r}: must be a positive integer"
                                     + (" or None" if field.type == "Optional[int]" else ""))
            elif field.type == "bool" and not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"FusedConfig.{name} = {value!r}: must be True or False")
            elif field.type in ("str", "Optional[str]") and not (isinstance(value, str) or
                                                               (value is None and field.type == "Optional[str]")):
                raise ValueError(f"FusedConfig.{name} = {value!r}: must be a string"
                                 + (" (a load cache policy such as '.ca')" if name.startswith("cache") else ""))
        if self.num_sms is not None and self.gemm_sms is not None and self.num_sms != self.gemm_sms:
            raise ValueError(f"FusedConfig.gemm_sms = {self.gemm_sms} and num_sms = {self.num_sms}: both set the GEMM's "
                             "blocks; give one")
        if self.all_reduce_variant not in IRIS_ALL_REDUCE_VARIANTS:
            raise ValueError(f"FusedConfig.all_reduce_variant = {self.all_reduce_variant!r}: must be one of "
                             + ", ".join(IRIS_ALL_REDUCE_VARIANTS))
        given = self.given()
        for name in ("block_size_m", "block_size_n"):
            if name in given and getattr(self, name) % FRACTAL != 0:
                raise ValueError(f"FusedConfig.{name} = {getattr(self, name)}: an Ascend tile side is a multiple "
                                 f"of the cube fractal ({FRACTAL}); nearest valid: "
                                 f"{max(FRACTAL, round(getattr(self, name) / FRACTAL) * FRACTAL)}")
        if (world_size is not None and self.all_reduce_variant == "ring"
                and self.block_size_n % (world_size * self.all_reduce_num_rings) != 0):
            raise ValueError(f"FusedConfig.block_size_n = {self.block_size_n}: the ring variant needs it divisible "
                             f"by world_size x all_reduce_num_rings = {world_size * self.all_reduce_num_rings}")


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def gpu_fields() -> dict:
    """The fields that describe a GPU kernel, with the Python type each takes."""
    kinds = {"int": int, "bool": bool, "str": str}
    return {name: kinds[f.type] for name, f in FusedConfig.__dataclass_fields__.items() if f.metadata.get("gpu")}


@functools.cache  # the schema is fixed
def _schema_keys() -> dict:
    """A FusedConfig field that is a config parameter's keyword or alias -> that parameter's keyword."""
    out = {}
    for p in _core.parameters():
        if p["python_place"] == "config":
            for key in [p["python_keyword"]] + list(p["python_aliases"]):
                if key in FusedConfig.__dataclass_fields__:
                    out[key] = p["python_keyword"]
    return out


def sums_every_rank(info: dict) -> bool:
    """An all-reduce: each rank's own A and B (K per rank), the sum on every rank (Iris's
    all_reduce_variant picks its variant)."""
    return bool(info["k_per_rank"]) and info["out_split"] == "replicated"


def chosen_variant(cfg: FusedConfig, info: dict) -> Optional[str]:
    """The variant the config picks for the op `info` describes (None: the op's default)."""
    given = cfg.given()
    op, variants = info["name"], list(info["variants"])
    if cfg.variant is not None and cfg.variant not in variants:
        raise ValueError(f"FusedConfig.variant = {cfg.variant!r}: {op} has the variants {', '.join(variants)}")
    if not sums_every_rank(info):
        return cfg.variant
    if cfg.variant is not None:
        if "all_reduce_variant" in given and cfg.all_reduce_variant != cfg.variant:
            raise ValueError(f"FusedConfig.variant = {cfg.variant!r} and all_reduce_variant = "
                             f"{cfg.all_reduce_variant!r}: both pick {op}'s variant; give one")
        return cfg.variant
    if cfg.all_reduce_variant not in variants:
        offered = [v for v in IRIS_ALL_REDUCE_VARIANTS if v in variants]
        raise ValueError(f"FusedConfig.all_reduce_variant = {cfg.all_reduce_variant!r}: Tandem has no replica of "
                         f"Iris's {cfg.all_reduce_variant} all-reduce; use {', '.join(offered)}")
    return cfg.all_reduce_variant


def config_dict(cfg: FusedConfig, info: dict, world_size: Optional[int] = None,
                numbers_owned_tiles: bool = False) -> tuple:
    """(the C++ module's config dict, the fields ignored) for a call of the op `info` describes.
    `numbers_owned_tiles`: group_size_m numbers the tiles each rank owns (it is then used)."""
    cfg.validate(world_size)
    given = cfg.given()
    out = {}
    for field, key in _schema_keys().items():
        if field in given and getattr(cfg, field) is not None and key != "variant":
            out[key] = int(getattr(cfg, field))
    variant = chosen_variant(cfg, info)
    if variant is not None:
        out["variant"] = variant
    ignored = sorted(f for f in given if f in gpu_fields() and not (f == "group_size_m" and numbers_owned_tiles))
    return out, ignored


def ignored_warning(where: str, ignored) -> str:
    return (f"{where}: FusedConfig field(s) {', '.join(ignored)} describe a GPU kernel and have no meaning on the "
            "simulated Ascend cluster: ignored")
