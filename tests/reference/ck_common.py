"""Shared helpers of the CK reference oracle: table loading, dtype/arch facts and kernel names.

Everything here follows /work/shared/spec/ck-rules.md (sections 2 and 8) and the seed copy of CK's
``unified_grouped_conv_codegen.py`` (``GroupedConvKernelConfig.name`` / ``DepthwiseConvKernelConfig.name``).
Nothing is imported from the ``ckspace`` package: this is an independent oracle.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

Config = dict[str, Any]
Tile = tuple[int, int, int]
Wave = tuple[int, int, int]

#: Fixture copy of /work/shared/spec/ck-tables.json (byte-identical), relative to this file.
TABLES_PATH = Path(__file__).resolve().parent.parent / "fixtures" / "ck-tables.json"

#: Variants of the implicit-GEMM rule set, in CK's generation order (the CLI's --variant default).
VARIANTS: tuple[str, ...] = ("forward", "bwd_data", "bwd_weight")
#: Spatial dims, in the CLI's --ndim default order.
NDIMS: tuple[int, ...] = (2, 3)
#: Dtype order: the CLI default of unified_grouped_conv_codegen.py is ``--datatype fp16 bf16 fp32``
#: (the JSON tile tables list "bf16" first only because their keys are sorted alphabetically).
DTYPES: tuple[str, ...] = ("fp16", "bf16", "fp32")

#: Name prefix per variant (GroupedConvKernelConfig.name's variant_str).
VARIANT_STR: dict[str, str] = {"forward": "fwd", "bwd_data": "bwd_data", "bwd_weight": "bwd_weight"}


@functools.lru_cache(maxsize=1)
def _load_tables_cached() -> dict[str, Any]:
    with TABLES_PATH.open(encoding="utf-8") as fh:
        return json.load(fh)


def load_tables() -> dict[str, Any]:
    """The CK tables (tests/fixtures/ck-tables.json). Cached: treat the result as read-only."""
    return _load_tables_cached()


def tile_key(tile: Tile | list[int]) -> str:
    """Key format of the JSON tables: ``"MxNxK"``."""
    return "x".join(str(v) for v in tile)


def dtype_class(dtype: str) -> str:
    """VecStrategy / pipeline-override dtype class: "half" for fp16/bf16, "float" for fp32."""
    return "float" if dtype == "fp32" else "half"


def dtype_key(dtype: str) -> str:
    """Key of WARP_TILE_SUPPORTED_COMBINATIONS: ``{dt}_{dt}_fp32`` (section 2)."""
    return f"{dtype}_{dtype}_fp32"


def elem_bytes(dtype: str) -> int:
    """ELEMENT_SIZE_MAP: fp16/bf16 2 bytes, fp32 4 bytes."""
    size = load_tables()["arch_specs"]["ELEMENT_SIZE_MAP"][dtype]
    return int(size)


def get_warp_size(arch: str) -> int:
    """CK's get_warp_size: 64 if the arch string starts with "gfx9", else 32."""
    return 64 if arch.startswith("gfx9") else 32


@functools.lru_cache(maxsize=None)
def wave_combos(arch: str) -> tuple[Wave, ...] | None:
    """WARP_SUPPORTED_COMBINATIONS[arch] as tuples, in table order; None for an unknown arch."""
    combos = load_tables()["arch_specs"]["WARP_SUPPORTED_COMBINATIONS"].get(arch)
    return None if combos is None else tuple(tuple(c) for c in combos)  # type: ignore[misc]


@functools.lru_cache(maxsize=None)
def warp_tiles(arch: str, dtype: str) -> tuple[Tile, ...]:
    """WARP_TILE_SUPPORTED_COMBINATIONS[arch][dtype_key] as tuples, in table order (empty if absent)."""
    per_arch = load_tables()["arch_specs"]["WARP_TILE_SUPPORTED_COMBINATIONS"].get(arch, {})
    return tuple(tuple(t) for t in per_arch.get(dtype_key(dtype), []))  # type: ignore[misc]


def gemm_name(cfg: Config) -> str:
    """GroupedConvKernelConfig.name(datatype), suffixes in CK's order (section 8)."""
    name = (
        f"grouped_conv_{VARIANT_STR[cfg['variant']]}_{cfg['dtype']}_{cfg['layout'].lower()}_{cfg['ndim']}d"
        f"_{cfg['pipeline']}_{cfg['epilogue']}_{cfg['scheduler']}"
        f"_{cfg['tile_m']}x{cfg['tile_n']}x{cfg['tile_k']}"
        f"_{cfg['wave_m']}x{cfg['wave_n']}x{cfg['wave_k']}"
        f"_{cfg['warp_tile_m']}x{cfg['warp_tile_n']}x{cfg['warp_tile_k']}"
    )
    if (cfg["vec_a"], cfg["vec_b"], cfg["vec_c"]) != (4, 8, 8):
        name += f"_vec{cfg['vec_a']}_{cfg['vec_b']}_{cfg['vec_c']}"
    if cfg["num_wave_groups"] != 1:
        name += f"_wg{cfg['num_wave_groups']}"
    if cfg["num_groups_to_merge"] != 1:
        name += f"_gm{cfg['num_groups_to_merge']}"
    if cfg["double_smem_buffer"]:
        name += "_dsb"
    if cfg["two_stage"]:
        name += "_2stage"
    if cfg["specialization"] != "default":
        name += f"_{cfg['specialization']}"
    if cfg["explicit_gemm"]:
        name += "_explicit_gemm"
    if cfg["streamk"] != "none":
        name += f"_streamk_{cfg['streamk']}"
        if cfg["streamk_persistent"]:
            name += "_persistent"
    if cfg["split_image"]:
        name += "_large_tensor"
    if not (cfg["pad_m"] and cfg["pad_n"] and cfg["pad_k"]):
        name += f"_pad{int(cfg['pad_m'])}{int(cfg['pad_n'])}{int(cfg['pad_k'])}"
    return name


def depthwise_name(cfg: Config) -> str:
    """DepthwiseConvKernelConfig.name(datatype)."""
    return (
        f"grouped_conv_fwd_depthwise_{cfg['dtype']}_{cfg['layout']}_{cfg['ndim']}d"
        f"_{cfg['dw_tile_h']}x{cfg['dw_tile_w']}"
        f"_f{cfg['filter_size']}"
        f"_s{cfg['stride_h']}x{cfg['stride_w']}"
        f"_p{cfg['pad_h']}x{cfg['pad_w']}"
        f"_nb{cfg['nbatch']}"
        f"_sub{cfg['sub_h']}x{cfg['sub_w']}"
        f"_vec{cfg['in_vec']}_{cfg['out_vec']}"
    )
