"""Independent, procedural re-implementation of CK's ``default`` rule set (the CLI's own ``--rule-set`` default).

A test oracle in the style of :mod:`ck_full`: plain Python, no ``ckspace`` import. It follows
/work/shared/spec/ck-rules.md sections 4, 7, 8 and 12.7, and CK's code, read at:

* ROCm/composable_kernel ``dispatcher/codegen/grouped_conv/grouped_config_rules_default.py`` @ 610e69bf523e1c89fe755b7a52c9189f7a50d4a2
* ROCm/rocm-libraries ``projects/composablekernel/dispatcher/codegen/grouped_conv/grouped_config_rules_default.py``
  @ 08e82697ef57d85de8227959baad31b56fe34563 (same tables and the same ``get_configs``; only ``check_tile_coverage``
  gained a compv6 ``tile_k < 64`` rejection, which default never reaches: it has no compv6)
* ``unified_grouped_conv_codegen.py`` (``GroupedConvKernelConfig.name`` / ``is_valid_for_arch``, ``generate_all``, the
  CLI): ROCm/composable_kernel @ 6edc0c0229889cb8c8b8b962f3cd87488d5ecebb (seed 001) and ROCm/rocm-libraries @
  eaf6d8bcc2bc99a2d59c19874a622e44702814b1.

What CK does, step by step (``get_configs(arch, variants, ndims, datatypes)``):

1. Ten tiles, each with ONE fixed wave and ONE fixed warp tile (``TILE_TO_WAVE`` / ``TILE_TO_WARP``). The warp tile's k
   is part of the table: 16 for the 16x16x16 and 32x32x16 tiles, 32 for the 16x16x32 tiles. It does not depend on the
   dtype (fp32 gets the same 16x16x16 / 32x32x16 / 16x16x32 as fp16), nor on compv4's doubled tile_k.
2. Loops: ``for variant: for ndim: for (pipeline, epilogue): for tile: [compv4 only on COMPV4_COMPATIBLE_TILES]:
   for two_stage``. forward: (compv3, cshuffle), (compv4, cshuffle); bwd_data and bwd_weight: (compv3, cshuffle),
   (mem, default); two_stage in {False, True} for bwd_weight only. compv4 doubles tile_k (128 or 256) and sets
   double_smem_buffer (``_dsb``). Scheduler intrawave, pads on, warp_k 1, vectors left at the dataclass default
   (4, 8, 8) -> no ``_vec`` suffix, specialization default, layout left at the dataclass default ``"nhwgc"`` (also in
   3D), ``datatype`` tag None. ``TILE_TO_VECTOR``, ``PIPELINE_VARIANTS``, ``VARIANT_PIPELINES`` and
   ``INTERWAVE_PIPELINES`` are never read.
3. Each config must pass ``is_valid_for_arch()`` (section 4). For default the only checks that can fail are the wave
   combo (``WARP_SUPPORTED_COMBINATIONS[arch]``; an unknown arch rejects everything) and, on wave32 archs,
   ``check_wmma_instance`` - called with ``dtype="float"`` because the config is untagged, so its ``k < 32`` rule
   never fires here, but ``warp_tile_m == 32`` does.
4. dtype expansion (``generate_all``, and ``--list-configs``): the untagged config list is emitted once per requested
   dtype - CLI default ``--datatype fp16 bf16 fp32`` - as ``config.name(dtype)``; only the dtype token of the name
   changes. ``generate_all`` then runs the CLI ArchFilter per (config, dtype) (see :func:`arch_filter_configs`); the
   spec's 456 / 372 / 288 figures are the counts BEFORE that filter (the rule set's output times the dtypes).

Figures (checked by the self-test): 76 configs per ndim on gfx950 (forward 10+6, bwd_data 20, bwd_weight 40),
152 per arch; times 3 dtypes: gfx950 456, gfx942 and gfx90a 372 (no (4,4,1) and (8,2,1) waves there, so 128x128x64
and 128x64x128 are dropped), gfx1201 / gfx1100 / gfx1200 0 (no wave matches), gfx1250 288 (waves (1,4,1), (2,2,1),
(4,1,1) exist there; the 32x32x16 tiles fail check_wmma_instance's m == 32 rule: 48 per ndim).
"""

from __future__ import annotations

import functools
import sys
from collections import Counter
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``reference`` importable as a package
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "reference"  # noqa: A001

from .ck_checks import arch_filter_reason
from .ck_common import DTYPES, NDIMS, VARIANTS, Config, Tile, Wave, gemm_name, get_warp_size, load_tables, wave_combos

__all__ = [
    "COMMON_TILES",
    "BWD_WEIGHT_TILES",
    "TILE_TO_WAVE",
    "TILE_TO_WARP",
    "COMPV4_COMPATIBLE_TILES",
    "VARIANT_PIPELINES",
    "TWO_STAGE_FLAGS",
    "rule_set_configs",
    "is_valid_for_arch_reason",
    "configs",
    "names",
    "arch_filter_configs",
    "arch_filter_names",
    "counts",
]

# ----------------------------------------------------------------------------------------------------------------
# CK's tables, transcribed from grouped_config_rules_default.py (identical in both repositories)
# ----------------------------------------------------------------------------------------------------------------

#: forward and bwd_data tiles, in CK's order.
COMMON_TILES: tuple[Tile, ...] = (
    (16, 64, 64), (32, 64, 64), (64, 64, 64),  # warp tile 16x16x16
    (32, 128, 64), (64, 128, 64), (128, 128, 64),  # warp tile 32x32x16
    (16, 64, 128), (32, 64, 128), (64, 64, 128), (128, 64, 128),  # warp tile 16x16x32
)  # fmt: skip
#: bwd_weight tiles: the same ten, same order.
BWD_WEIGHT_TILES: tuple[Tile, ...] = COMMON_TILES

#: tile -> (wave_m, wave_n, wave_k). CK ignores the table's wave_k and always builds warp_k=1 (all are 1 anyway).
TILE_TO_WAVE: dict[Tile, Wave] = {
    (16, 64, 64): (1, 4, 1), (32, 64, 64): (2, 2, 1), (64, 64, 64): (4, 1, 1),
    (32, 128, 64): (1, 4, 1), (64, 128, 64): (2, 2, 1), (128, 128, 64): (4, 4, 1),
    (16, 64, 128): (1, 4, 1), (32, 64, 128): (2, 2, 1), (64, 64, 128): (4, 1, 1), (128, 64, 128): (8, 2, 1),
}  # fmt: skip

#: tile -> warp tile (m, n, k), k included: the same for every dtype and for compv4's doubled tile_k.
TILE_TO_WARP: dict[Tile, Tile] = {
    (16, 64, 64): (16, 16, 16), (32, 64, 64): (16, 16, 16), (64, 64, 64): (16, 16, 16),
    (32, 128, 64): (32, 32, 16), (64, 128, 64): (32, 32, 16), (128, 128, 64): (32, 32, 16),
    (16, 64, 128): (16, 16, 32), (32, 64, 128): (16, 16, 32), (64, 64, 128): (16, 16, 32),
    (128, 64, 128): (16, 16, 32),
}  # fmt: skip

#: The only tiles that get a compv4 config (looked up with the UNdoubled tile_k).
COMPV4_COMPATIBLE_TILES: frozenset[Tile] = frozenset(
    {(16, 64, 64), (32, 64, 64), (64, 64, 64), (16, 64, 128), (32, 64, 128), (64, 64, 128)}
)

#: (pipeline, epilogue) pairs per variant, in loop order.
VARIANT_PIPELINES: dict[str, tuple[tuple[str, str], ...]] = {
    "forward": (("compv3", "cshuffle"), ("compv4", "cshuffle")),
    "bwd_data": (("compv3", "cshuffle"), ("mem", "default")),
    "bwd_weight": (("compv3", "cshuffle"), ("mem", "default")),
}
TWO_STAGE_FLAGS: dict[str, tuple[bool, ...]] = {
    "forward": (False,),
    "bwd_data": (False,),
    "bwd_weight": (False, True),
}

#: Dataclass defaults that default never overrides (GroupedConvKernelConfig / GroupedConvTraitConfig).
DEFAULT_LAYOUT = "nhwgc"  # also for ndim 3: CK never sets ``layout`` in this rule set
DEFAULT_VECTORS = (4, 8, 8)  # name(): no ``_vec`` suffix
#: The trait blacklist of codegen_common (TraitConfigBase.is_valid): interwave with a compute pipeline.
_INTERWAVE_FORBIDDEN = frozenset({"compv3", "compv4", "compv5", "compv6", "comp_async", "basic_async_v1"})


# ----------------------------------------------------------------------------------------------------------------
# GroupedConvKernelConfig.is_valid_for_arch for an UNTAGGED config (dtype "float" in check_wmma_instance)
# ----------------------------------------------------------------------------------------------------------------


def is_valid_for_arch_reason(cfg: Config, arch: str) -> str | None:
    """None if CK keeps the config, else the first failing check (section 4 order)."""
    if cfg["scheduler"] == "interwave" and cfg["pipeline"] in _INTERWAVE_FORBIDDEN:  # trait.is_valid()
        return "trait"
    # stream-K variant: default never enables stream-K.  pipeline/variant: only compv5 is blocked for bwd (unused).
    if cfg["variant"] in ("bwd_data", "bwd_weight") and cfg["pipeline"] == "compv5":
        return "pipeline_variant"
    if not all(v == 1 or v % 2 == 0 for v in (cfg["vec_a"], cfg["vec_b"], cfg["vec_c"])):
        return "vectors"
    combos = wave_combos(arch)
    if combos is None or (cfg["wave_m"], cfg["wave_n"], cfg["wave_k"]) not in combos:
        return "wave_combo"  # an unknown arch has no list -> rejected
    warp_size = get_warp_size(arch)
    if warp_size == 32:  # check_wmma_instance(..., dtype=self.datatype or "float")
        dtype = cfg["dtype"] if cfg["dtype"] is not None else "float"
        if cfg["warp_tile_k"] < 32 and dtype != "float":
            return "wmma_instance"
        if cfg["wave_k"] * cfg["warp_tile_k"] > cfg["tile_k"]:
            return "wmma_instance"
        if cfg["warp_tile_m"] == 32:
            return "wmma_instance"
    # check_tile_coverage: compv6 only (never in default).  check_wmma_native_warp_tile: stream-K only (never).
    return None


# ----------------------------------------------------------------------------------------------------------------
# get_configs: the untagged rule-set output
# ----------------------------------------------------------------------------------------------------------------


def _config(variant: str, ndim: int, pipeline: str, epilogue: str, tile: Tile, two_stage: bool) -> Config:
    wave = TILE_TO_WAVE[tile]
    warp = TILE_TO_WARP[tile]
    compv4 = pipeline == "compv4"
    return {
        "kind": "gemm", "variant": variant, "ndim": ndim, "dtype": None, "layout": DEFAULT_LAYOUT,
        "pipeline": pipeline, "epilogue": epilogue, "scheduler": "intrawave",
        "tile_m": tile[0], "tile_n": tile[1], "tile_k": tile[2] * 2 if compv4 else tile[2],
        "wave_m": wave[0], "wave_n": wave[1], "wave_k": 1,
        "warp_tile_m": warp[0], "warp_tile_n": warp[1], "warp_tile_k": warp[2],
        "vec_a": DEFAULT_VECTORS[0], "vec_b": DEFAULT_VECTORS[1], "vec_c": DEFAULT_VECTORS[2],
        "num_wave_groups": 1, "num_groups_to_merge": 1, "double_smem_buffer": compv4, "two_stage": two_stage,
        "specialization": "default", "explicit_gemm": False, "streamk": "none", "streamk_persistent": False,
        "split_image": False, "pad_m": True, "pad_n": True, "pad_k": True,
    }  # fmt: skip


@functools.lru_cache(maxsize=None)
def _rule_set(arch: str, variants: tuple[str, ...], ndims: tuple[int, ...]) -> tuple[Config, ...]:
    out: list[Config] = []
    for variant in variants:
        tiles = BWD_WEIGHT_TILES if variant == "bwd_weight" else COMMON_TILES
        for ndim in ndims:
            for pipeline, epilogue in VARIANT_PIPELINES[variant]:
                for tile in tiles:
                    if pipeline == "compv4" and tile not in COMPV4_COMPATIBLE_TILES:
                        continue
                    for two_stage in TWO_STAGE_FLAGS[variant]:
                        cfg = _config(variant, ndim, pipeline, epilogue, tile, two_stage)
                        if is_valid_for_arch_reason(cfg, arch) is None:
                            out.append(cfg)
    return tuple(out)


def rule_set_configs(
    arch: str, variants: tuple[str, ...] = VARIANTS, ndims: tuple[int, ...] = NDIMS
) -> list[Config]:
    """``grouped_config_rules_default.get_configs``: untagged configs (``dtype`` None, no ``name``) in CK's order."""
    return [dict(c) for c in _rule_set(arch, tuple(variants), tuple(ndims))]


# ----------------------------------------------------------------------------------------------------------------
# dtype expansion and names
# ----------------------------------------------------------------------------------------------------------------


def configs(arch: str, datatypes: tuple[str, ...] = DTYPES) -> list[Config]:
    """Every kernel of the CLI's default run BEFORE the ArchFilter: ``for dtype: for config`` (generate_all's order;
    CK @ eaf6d8bc then sorts by name). Each copy gets the dtype and ``name = config.name(dtype)``."""
    out: list[Config] = []
    for dtype in datatypes:
        for base in _rule_set(arch, VARIANTS, NDIMS):
            cfg = dict(base, dtype=dtype)
            cfg["name"] = gemm_name(cfg)
            out.append(cfg)
    return out


def names(arch: str, datatypes: tuple[str, ...] = DTYPES) -> list[str]:
    """Sorted kernel names of ``default`` on ``arch`` for the CLI's default dtypes (fp16, bf16, fp32)."""
    result = sorted(c["name"] for c in configs(arch, datatypes))
    assert len(result) == len(set(result)), "duplicate names"
    return result


def arch_filter_configs(arch: str, datatypes: tuple[str, ...] = DTYPES) -> list[Config]:
    """The subset that passes the CLI ArchFilter of ``generate_all`` (:func:`ck_checks.arch_filter_reason`, i.e. the
    spec-section-4 ArchFilter with the fixture's arch-independent per-pipeline LDS budget, warp_k forced to 1, and a
    dtype without a warp-tile list only warned about). This is what CK's CLI actually writes out."""
    return [c for c in configs(arch, datatypes) if arch_filter_reason(c, arch) is None]


def arch_filter_names(arch: str, datatypes: tuple[str, ...] = DTYPES) -> list[str]:
    return sorted(c["name"] for c in arch_filter_configs(arch, datatypes))


def counts(arch: str, datatypes: tuple[str, ...] = DTYPES) -> Counter[tuple[str, int, str]]:
    """Kernels per (variant, ndim, dtype)."""
    return Counter((c["variant"], c["ndim"], c["dtype"]) for c in configs(arch, datatypes))


# ----------------------------------------------------------------------------------------------------------------
# self-test
# ----------------------------------------------------------------------------------------------------------------

ARCHES = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1201", "gfx1250")


def _self_test() -> None:
    # The transcribed tables agree with the spec's tables (tests/fixtures/ck-tables.json, "default_rule_set").
    spec = load_tables()["default_rule_set"]
    assert [tuple(t) for t in spec["COMMON_TILES"]] == list(COMMON_TILES)
    assert [tuple(t) for t in spec["BWD_WEIGHT_TILES"]] == list(BWD_WEIGHT_TILES)
    assert {k: tuple(v) for k, v in spec["TILE_TO_WAVE"].items()} == {
        "x".join(map(str, t)): w for t, w in TILE_TO_WAVE.items()
    }
    assert {k: tuple(v) for k, v in spec["TILE_TO_WARP"].items()} == {
        "x".join(map(str, t)): w for t, w in TILE_TO_WARP.items()
    }
    assert {tuple(t) for t in spec["COMPV4_COMPATIBLE_TILES"]} == COMPV4_COMPATIBLE_TILES
    assert {v: tuple(map(tuple, p)) for v, p in spec["pipelines_(pipeline,epilogue)"].items()} == VARIANT_PIPELINES
    assert {v: tuple(f) for v, f in spec["two_stage_flags"].items()} == TWO_STAGE_FLAGS

    # Section 7: 76 untagged configs per ndim on gfx950 (forward 10+6, bwd_data 20, bwd_weight 40), 152 per arch.
    for ndim in NDIMS:
        per = Counter((c["variant"], c["pipeline"]) for c in rule_set_configs("gfx950", ndims=(ndim,)))
        assert per == Counter({("forward", "compv3"): 10, ("forward", "compv4"): 6, ("bwd_data", "compv3"): 10,
                               ("bwd_data", "mem"): 10, ("bwd_weight", "compv3"): 20, ("bwd_weight", "mem"): 20}), per  # fmt: skip
    expected_objects = {"gfx950": 152, "gfx942": 124, "gfx90a": 124, "gfx1201": 0, "gfx1100": 0, "gfx1200": 0,
                        "gfx1250": 96}  # fmt: skip
    for arch, n in expected_objects.items():
        assert len(rule_set_configs(arch)) == n, (arch, len(rule_set_configs(arch)))

    # Section 7 / 12.7 with the dtype expansion (x3: fp16, bf16, fp32).
    expected = {"gfx950": 456, "gfx942": 372, "gfx90a": 372, "gfx1201": 0, "gfx1100": 0, "gfx1200": 0, "gfx1250": 288}
    for arch, n in expected.items():
        assert len(names(arch)) == n, (arch, len(names(arch)))
    # gfx942 / gfx90a = gfx950 minus the (4,4,1) and (8,2,1) tiles (128x128x64 and 128x64x128).
    dropped = set(names("gfx950")) - set(names("gfx942"))
    assert set(names("gfx942")) <= set(names("gfx950")) and names("gfx942") == names("gfx90a")
    assert len(dropped) == 84 and all("_128x128x64_4x4x1_" in n or "_128x64x128_8x2x1_" in n for n in dropped)
    # gfx1250: no 32x32 warp tile (wmma m == 32), no (4,4,1)/(8,2,1).
    assert not any("_32x32x16" in n or "_4x4x1_" in n or "_8x2x1_" in n for n in names("gfx1250"))

    # Every name: layout nhwgc (also 3D), intrawave, no _vec / _wg / _gm / _pad suffix; _dsb <=> compv4;
    # _2stage only in bwd_weight; the warp tile k comes from the table, never from the dtype.
    for c in configs("gfx950"):
        n = c["name"]
        assert f"_{c['dtype']}_nhwgc_{c['ndim']}d_" in n and "_intrawave_" in n
        assert not any(s in n for s in ("_vec", "_wg", "_gm", "_pad"))
        assert n.endswith("_dsb") == (c["pipeline"] == "compv4") or n.endswith("_dsb_2stage")
        assert ("_2stage" in n) == c["two_stage"] and (not c["two_stage"] or c["variant"] == "bwd_weight")
        assert (c["warp_tile_m"], c["warp_tile_n"], c["warp_tile_k"]) == TILE_TO_WARP[
            (c["tile_m"], c["tile_n"], c["tile_k"] // 2 if c["pipeline"] == "compv4" else c["tile_k"])
        ]
        assert (c["epilogue"] == "default") == (c["pipeline"] == "mem")
    # the three dtype copies of a config differ only in the dtype token
    by_dtype = {dt: sorted(n.replace(f"_{dt}_", "_DT_", 1) for n in names("gfx950", (dt,))) for dt in DTYPES}
    assert by_dtype["fp16"] == by_dtype["bf16"] == by_dtype["fp32"]

    # Spec 12.7: gfx1250 default gives 168 after the CLI ArchFilter.
    assert len(arch_filter_names("gfx1250")) == 168, len(arch_filter_names("gfx1250"))


def main() -> None:
    for arch in ARCHES:
        total = len(names(arch))
        print(f"{arch}: default {total} kernels ({len(rule_set_configs(arch))} untagged configs x {len(DTYPES)} dtypes)"
              f"; after the CLI ArchFilter {len(arch_filter_names(arch))}")  # fmt: skip
        for (variant, ndim, dtype), n in sorted(counts(arch).items(), key=lambda kv: (VARIANTS.index(kv[0][0]),
                                                                                      kv[0][1], DTYPES.index(kv[0][2]))):  # fmt: skip
            print(f"    {variant:<10} {ndim}d {dtype:<4} {n}")
    _self_test()
    print("self-test OK")


if __name__ == "__main__":
    main()
