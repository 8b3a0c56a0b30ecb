"""Independent, procedural re-implementation of CK's ``full`` rule set (``grouped_config_rules_full.get_configs``).

This is a test oracle: it walks CK's tables with CK's loops, literally following /work/shared/spec/ck-rules.md
(sections 2, 3.1-3.10, 4, 5, 6, 8, 11) and its quirks, so the constraint model can be compared against an
independently computed kernel list. It must not import ``ckspace``.

Generation order (section 3.1): variant (forward, bwd_data, bwd_weight) -> ndim (2, 3) -> dtype (fp16, bf16, fp32,
the CLI's ``--datatype`` default; see ck_common.DTYPES) -> base block, then feature block. Depthwise configs are
appended after all of forward's GEMM loops (both ndims), param-major then dtype. Each constructed config goes
through ``is_valid_for_arch`` (section 4) and then the dedup of 3.1, as in CK's ``_add_config``; the order of those
two steps only matters for the counters (see :func:`generation_stats`), not for the result.

Where the spec leaves an enumeration order open (tile_math's pair order, used by the fallback on gfx90a/gfx1201)
and for the depthwise LDS formula, CK's own source (ROCm/composable_kernel dispatcher/codegen/grouped_conv,
tile_math.py @ 60b2766) was consulted; these are marked in the code.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

from .ck_checks import (
    arch_filter_ok,
    arch_filter_reason,
    ck_known_issue,
    depthwise_config_ok,
    is_valid_for_arch_reason,
)
from .ck_common import (
    DTYPES,
    NDIMS,
    VARIANTS,
    Config,
    Tile,
    Wave,
    depthwise_name,
    dtype_class,
    elem_bytes,
    gemm_name,
    load_tables,
    tile_key,
    wave_combos,
    warp_tiles,
)
from .ck_subsets import category, full_tests, tiny

__all__ = [
    "load_tables",
    "full_configs",
    "generation_stats",
    "wave_warp_pairs",
    "tile_pipelines",
    "arch_filter_ok",
    "arch_filter_reason",
    "is_valid_for_arch_reason",
    "full_tests",
    "tiny",
    "category",
    "ck_known_issue",
    "GEMM_KEYS",
    "DEPTHWISE_KEYS",
]

GEMM_KEYS: tuple[str, ...] = (
    "kind", "variant", "ndim", "dtype", "layout", "pipeline", "epilogue", "scheduler",
    "tile_m", "tile_n", "tile_k", "wave_m", "wave_n", "wave_k", "warp_tile_m", "warp_tile_n", "warp_tile_k",
    "vec_a", "vec_b", "vec_c", "num_wave_groups", "num_groups_to_merge", "double_smem_buffer", "two_stage",
    "specialization", "explicit_gemm", "streamk", "streamk_persistent", "split_image", "pad_m", "pad_n", "pad_k",
    "name",
)  # fmt: skip
DEPTHWISE_KEYS: tuple[str, ...] = (
    "kind", "variant", "ndim", "dtype", "layout", "dw_tile_h", "dw_tile_w", "filter_size", "stride_h", "stride_w",
    "pad_h", "pad_w", "nbatch", "sub_h", "sub_w", "in_vec", "out_vec", "name",
)  # fmt: skip

MN = tuple[int, int]
VecTriple = tuple[int, int, int]

#: The FeatureSpec of the base block: nothing switched on, no tile or pipeline override.
_BASE_FEATURE: dict[str, Any] = {
    "split_image": False, "explicit_gemm": False, "two_stage": False, "num_groups_to_merge": 1,
    "streamk": None, "tile_override": None, "pipeline_override": None, "dtype_classes": None,
}  # fmt: skip


def _rules() -> dict[str, Any]:
    return load_tables()["full_rule_set"]


# ----------------------------------------------------------------------------------------------------------------
# 3.3 / 3.4: (wave, warp M x N) pairs per tile
# ----------------------------------------------------------------------------------------------------------------


def wave_strategies(variant: str, tile: Tile) -> list[Wave]:
    """Per-variant override REPLACES the base list; a tile in neither table would fall back to [SINGLE]."""
    rules = _rules()
    key = tile_key(tile)
    names = rules["wave_strategy_overrides"].get(variant, {}).get(key)
    if names is None:
        names = rules["base_tile_wave_strategies"].get(key, ["SINGLE"])
    return [tuple(rules["wave_strategy_counts"][n]) for n in names]  # type: ignore[misc]


def curated_warp_mn(variant: str, tile: Tile, wave: Wave) -> list[MN]:
    """_WARP_MN_EXCEPTIONS, else the MFMA size heuristic on the per-wave tile."""
    for exc in _rules()["warp_mn_exceptions"]:
        if exc["variant"] == variant and tuple(exc["tile"]) == tile and tuple(exc["wave"]) == wave:
            return [tuple(mn) for mn in exc["warp_mn"]]  # type: ignore[misc]
    pm, pn = tile[0] // wave[0], tile[1] // wave[1]
    if pm >= 32 and pn >= 32 and pm % 32 == 0 and pn % 32 == 0:
        return [(32, 32)]
    return [(16, 16)]


def _pos_divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def tile_math_pairs(tile: Tile, dtype: str, arch: str) -> list[tuple[Wave, Tile]]:
    """tile_math.get_valid_wave_warp_pairs: every arch/dtype warp tile (m, n, k) x every arch wave combo with
    wave_k in {1, 2} such that tile_m % (wm*m) == 0 and tile_n % (wn*n) == 0 (tile_k is not involved; the optional
    pipeline constraints are never switched on).

    Enumeration order as in CK's tile_math (only visible in the order of FALLBACK kernels on gfx90a/gfx1201): warp
    tiles in arch-table order; for each, iter_m over the ascending divisors of tile_m/m (so wave_m = tile_m/(m*iter_m)
    descends), then likewise iter_n; wave_k 1 before 2; exact repeats removed, first kept.
    """
    combos = set(wave_combos(arch) or [])
    pairs: list[tuple[Wave, Tile]] = []
    for wt in warp_tiles(arch, dtype):
        if tile[0] % wt[0] != 0 or tile[1] % wt[1] != 0:
            continue
        for iter_m in _pos_divisors(tile[0] // wt[0]):
            wm = tile[0] // (wt[0] * iter_m)
            for iter_n in _pos_divisors(tile[1] // wt[1]):
                wn = tile[1] // (wt[1] * iter_n)
                for wk in (1, 2):
                    if (wm, wn, wk) in combos and ((wm, wn, wk), wt) not in pairs:
                        pairs.append(((wm, wn, wk), wt))
    return pairs


def wave_warp_pairs_traced(
    variant: str, tile: Tile, dtype: str, arch: str
) -> tuple[list[tuple[Wave, MN]], bool, int]:
    """Curated (wave, warp_mn) pairs that survive the filters and the tile_math gate, or else the FALLBACK.

    Returns (pairs, fallback_fired, number of curated pairs dropped by the tile_math gate).
    """
    excluded = {tuple(mn) for mn in _rules()["excluded_warp_mn_shapes_(curated_path_only)"]}
    arch_mn = {(wt[0], wt[1]) for wt in warp_tiles(arch, dtype)}  # k is NOT compared here
    tm_pairs = tile_math_pairs(tile, dtype, arch)
    gate = {(wave, wt[0], wt[1]) for wave, wt in tm_pairs}
    curated: list[tuple[Wave, MN]] = []
    gate_dropped = 0
    for wave in wave_strategies(variant, tile):
        for mn in curated_warp_mn(variant, tile, wave):
            if mn in excluded or mn not in arch_mn:
                continue
            if tile[0] % (wave[0] * mn[0]) != 0 or tile[1] % (wave[1] * mn[1]) != 0:
                continue
            if (wave, mn[0], mn[1]) not in gate:  # dropped with a warning in CK
                gate_dropped += 1
                continue
            curated.append((wave, mn))
    if curated or not tm_pairs:
        return curated, False, gate_dropped
    # FALLBACK (fires only when tile_math has pairs): every tile_math pair, (m, n) kept and k discarded, WITHOUT
    # deduplication (two k per (m, n) give the same pair twice -> exact repeat configs, dropped later by the
    # dedup), and without the 4x64/64x4 exclusion or the size heuristic.
    return [(wave, (wt[0], wt[1])) for wave, wt in tm_pairs], True, gate_dropped


def wave_warp_pairs(variant: str, tile: Tile, dtype: str, arch: str) -> list[tuple[Wave, MN]]:
    """The (wave, warp_mn) pairs the loops walk for a tile (sections 3.3 / 3.4)."""
    return wave_warp_pairs_traced(variant, tile, dtype, arch)[0]


# ----------------------------------------------------------------------------------------------------------------
# 3.5 warp_tile_k
# ----------------------------------------------------------------------------------------------------------------


def k_mfma(dtype: str, warp_tile_m: int) -> int:
    table = _rules()["k_mfma"][dtype_class(dtype)]
    return int(table.get(str(warp_tile_m), table["other"]))


def warp_tile_k_normal(dtype: str, warp_tile_m: int, tile_k: int) -> int:
    k1 = 4 if tile_k <= 16 else 8
    return min(max(k1, k_mfma(dtype, warp_tile_m)), tile_k)


def warp_tile_k_legacy(dtype: str, warp_tile_m: int, tile_k: int) -> int:
    """Stream-K configs and bwd_weight wavelet configs on 64x32x64 / 64x64x64."""
    return min(8 if warp_tile_m == 32 else 16, tile_k // 4 if dtype == "fp32" else tile_k)


# ----------------------------------------------------------------------------------------------------------------
# 3.6 vector sizes
# ----------------------------------------------------------------------------------------------------------------


def vec_candidates(variant: str, tile: Tile, dclass: str) -> list[VecTriple]:
    """Strategy triples + extra triples, as a sorted set. GENERIC only if the tile is ABSENT from the variant's
    strategy table; a present tile without an entry for the class contributes nothing (only extras remain)."""
    rules = _rules()
    key = tile_key(tile)
    table = rules["vec_strategy_tables"].get(variant, {})
    names = table[key].get(dclass, []) if key in table else ["GENERIC"]
    cands = {tuple(rules["vec_strategy_values"][n][dclass]) for n in names}
    cands |= {tuple(t) for t in rules["extra_vec_triples"].get(variant, {}).get(key, {}).get(dclass, [])}
    return sorted(cands)  # type: ignore[arg-type]


_VEC_SIZES = (1, 2, 4, 8, 16)
_TILE_MATH_WARP_SIZE = 64  # tile_math.WARP_SIZE is hard-coded to 64 for ALL arches (even gfx1201)


def valid_vec_sizes(tile: Tile, wave: Wave, dtype: str) -> tuple[set[int], set[int], set[int]]:
    """tile_math.get_valid_vec_sizes: the per-thread vector gate with 64 lanes per wave."""
    tm, tn, tk = tile
    block = _TILE_MATH_WARP_SIZE * wave[0] * wave[1] * wave[2]
    if (tm * tk) % block != 0 or (tn * tk) % block != 0:
        return set(), set(), set()
    pa, pb = tm * tk // block, tn * tk // block
    eb = elem_bytes(dtype)
    cap = 32 // eb  # 2x the 16-byte VMEM width (tile_math admits fp32 x 8)

    def width_ok(v: int) -> bool:  # _lds_valid: a power-of-two bit width of at most 256 bits
        bits = v * 8 * eb
        return v <= cap and bits & (bits - 1) == 0 and bits <= 256

    def fits(v: int, per_thread: int) -> bool:  # v divides the per-thread budget, or is a multiple of it
        return per_thread % v == 0 or v % per_thread == 0

    return (
        {v for v in _VEC_SIZES if width_ok(v) and fits(v, pa)},
        {v for v in _VEC_SIZES if width_ok(v) and fits(v, pb)},
        {v for v in _VEC_SIZES if width_ok(v) and tn % v == 0},
    )


# ----------------------------------------------------------------------------------------------------------------
# 3.7 pipelines, 3.8 specializations
# ----------------------------------------------------------------------------------------------------------------


def tile_pipelines(variant: str, tile: Tile, dclass: str) -> list[tuple[str, str]]:
    """dtype-class override (an empty list means no configs) -> curated map -> shape rules (dead: asserted)."""
    rules = _rules()
    key = tile_key(tile)
    override = rules["tile_pipelines_dclass_overrides"].get(variant, {}).get(key)
    if override is not None and dclass in override:
        return [tuple(p) for p in override[dclass]]  # type: ignore[misc]
    curated = rules["tile_pipelines"].get(variant, {}).get(key)
    if curated is not None:
        return [tuple(p) for p in curated]  # type: ignore[misc]
    raise AssertionError(f"shape-based pipeline rules reached for {variant} {key} {dclass} (spec: dead code)")


def specializations(variant: str, tile: Tile) -> list[str]:
    if variant == "forward":
        if tile[2] == 8:
            return ["default"]
        specs = ["default", "filter1x1_pad0", "filter1x1_stride1_pad0"]
        return specs + (["filter3x3"] if tile[0] * tile[1] <= 4096 else [])
    return list(_rules()["specialization_rule"][variant])


# ----------------------------------------------------------------------------------------------------------------
# The loops
# ----------------------------------------------------------------------------------------------------------------


def _new_stats() -> dict[str, Any]:
    return {
        # (variant, ndim, dtype, tile) of BASE blocks where the fallback fired (= curated path empty and tile_math
        # has pairs; CK's fallback condition is ``not result and tm_pairs``). The spec's 172 / 254 count these.
        "fallback_cases": set(),
        "feature_fallback_cases": set(),  # same, for feature blocks (tiles repeat across features)
        "gate_dropped_pairs": 0,  # curated (wave, warp) pairs dropped by the tile_math gate (counted per call)
        "base_vec_candidates": 0,  # vec candidates checked by the gate in base blocks, per (tile, wave/warp) pair
        "base_vec_rejected": 0,
        "feature_vec_candidates": 0,
        "feature_vec_rejected": 0,
        "tileconfig_invalid": 0,  # TileConfig.is_valid failures (never happens)
        "constructed": 0,  # GEMM configs built by the loops (before is_valid_for_arch and dedup)
        "rejected": Counter(),  # is_valid_for_arch reason -> count, over constructed configs (repeats counted)
        "rejected_by": Counter(),  # (reason, variant, pipeline) -> count
        "dedup_dropped": 0,  # exact repeats among the configs that passed is_valid_for_arch
    }


def _block(
    variant: str, ndim: int, dtype: str, tiles: list[Tile], feature: dict[str, Any], arch: str,
    stats: dict[str, Any], out: list[Config], is_base: bool,
) -> None:  # fmt: skip
    """One base or feature block: tiles -> (wave, warp) pairs -> vecs -> (pipeline, scheduler) -> specs."""
    dclass = dtype_class(dtype)
    legacy_tiles = {tuple(t) for t in _rules()["bwd_weight_wavelet_legacy_warp_k_tiles"]}
    streamk = feature["streamk"]
    vec_counter = "base_vec" if is_base else "feature_vec"
    for tile in tiles:
        pairs, fallback_fired, gate_dropped = wave_warp_pairs_traced(variant, tile, dtype, arch)
        stats["gate_dropped_pairs"] += gate_dropped
        if fallback_fired:
            stats["fallback_cases" if is_base else "feature_fallback_cases"].add((variant, ndim, dtype, tile))
        if not pairs:
            continue
        cands = vec_candidates(variant, tile, dclass)
        if feature["pipeline_override"] is not None:
            pipelines = [tuple(p) for p in feature["pipeline_override"]]
        else:
            pipelines = tile_pipelines(variant, tile, dclass)
        specs = specializations(variant, tile)
        for wave, (wtm, wtn) in pairs:
            va, vb, vc = valid_vec_sizes(tile, wave, dtype)
            vecs: list[VecTriple] = []
            for vec in cands:
                stats[f"{vec_counter}_candidates"] += 1
                if vec[0] in va and vec[1] in vb and vec[2] in vc:
                    vecs.append(vec)
                else:
                    stats[f"{vec_counter}_rejected"] += 1
            for vec in vecs:
                for pipeline, scheduler in pipelines:
                    if pipeline == "wavelet" and feature["explicit_gemm"]:
                        continue  # the one combination skipped outright
                    legacy = streamk is not None or (
                        variant == "bwd_weight" and pipeline == "wavelet" and tile in legacy_tiles
                    )
                    wtk = (warp_tile_k_legacy if legacy else warp_tile_k_normal)(dtype, wtm, tile[2])
                    # TileConfig.is_valid (never fails in practice; counted)
                    if (
                        min(tile) <= 0
                        or tile[0] % (wave[0] * wtm) != 0
                        or tile[1] % (wave[1] * wtn) != 0
                        or tile[2] % (wave[2] * wtk) != 0
                    ):
                        stats["tileconfig_invalid"] += 1
                        continue
                    for spec in specs:
                        cfg: Config = {
                            "kind": "gemm", "variant": variant, "ndim": ndim, "dtype": dtype, "layout": "nhwgc",
                            "pipeline": pipeline, "epilogue": "cshuffle", "scheduler": scheduler,
                            "tile_m": tile[0], "tile_n": tile[1], "tile_k": tile[2],
                            "wave_m": wave[0], "wave_n": wave[1], "wave_k": wave[2],
                            "warp_tile_m": wtm, "warp_tile_n": wtn, "warp_tile_k": wtk,
                            "vec_a": vec[0], "vec_b": vec[1], "vec_c": vec[2],
                            "num_wave_groups": 1, "num_groups_to_merge": feature["num_groups_to_merge"],
                            "double_smem_buffer": pipeline == "compv4",  # dsb <=> compv4
                            "two_stage": feature["two_stage"], "specialization": spec,
                            "explicit_gemm": feature["explicit_gemm"],
                            "streamk": "none" if streamk is None else streamk["strategy"].lower(),
                            "streamk_persistent": bool(streamk and streamk["persistent"]),
                            "split_image": feature["split_image"], "pad_m": True, "pad_n": True, "pad_k": True,
                        }  # fmt: skip
                        cfg["name"] = gemm_name(cfg)
                        out.append(cfg)


def _depthwise(dtypes: tuple[str, ...]) -> list[Config]:
    """Section 3.10: 20 params x dtypes (param-major), pad (filt-1)//2, layout ngchw, 2D only."""
    out: list[Config] = []
    for th, tw, filt, sh, sw, sub_h, sub_w, nb, in_vec, out_vec in _rules()[
        "depthwise_params_(tile_h,tile_w,filt,str_h,str_w,sub_h,sub_w,nbatch,in_vec,out_vec)"
    ]:
        for dtype in dtypes:
            pad = (filt - 1) // 2
            cfg: Config = {
                "kind": "depthwise", "variant": "forward_depthwise", "ndim": 2, "dtype": dtype, "layout": "ngchw",
                "dw_tile_h": th, "dw_tile_w": tw, "filter_size": filt, "stride_h": sh, "stride_w": sw,
                "pad_h": pad, "pad_w": pad, "nbatch": nb, "sub_h": sub_h, "sub_w": sub_w,
                "in_vec": in_vec, "out_vec": out_vec,
            }  # fmt: skip
            # CK asserts tile_math.is_valid_depthwise_config(..., dtype_size=2) for every entry, even fp32.
            assert depthwise_config_ok(cfg, dtype_size=2), cfg
            cfg["name"] = depthwise_name(cfg)
            out.append(cfg)
    return out


def _dedup_key(cfg: Config) -> tuple[Any, ...]:
    """Every field plus the dtype (the name is a function of the fields)."""
    return tuple(sorted(cfg.items()))


@functools.lru_cache(maxsize=None)
def _generate(arch: str) -> tuple[tuple[Config, ...], dict[str, Any]]:
    """CK's get_configs(arch, [FORWARD, BACKWARD_DATA, BACKWARD_WEIGHT], [2, 3], [fp16, bf16, fp32]).

    Like CK's ``_add_config``, every constructed GEMM config first goes through ``is_valid_for_arch`` and only then
    through the dedup (so the gfx90a rejections count repeats: 968, and the dedup drops 5,908 valid repeats).
    """
    rules = _rules()
    stats = _new_stats()
    seen: set[tuple[Any, ...]] = set()
    result: list[Config] = []

    def add(cfg: Config) -> None:
        if cfg["kind"] == "gemm":
            stats["constructed"] += 1
            reason = is_valid_for_arch_reason(cfg, arch)
            if reason is not None:
                stats["rejected"][reason] += 1
                stats["rejected_by"][(reason, cfg["variant"], cfg["pipeline"])] += 1
                return
        key = _dedup_key(cfg)
        if key in seen:
            stats["dedup_dropped"] += 1
            return
        seen.add(key)
        result.append(cfg)

    for variant in VARIANTS:
        for ndim in NDIMS:
            for dtype in DTYPES:
                block: list[Config] = []
                tiles = [tuple(t) for t in rules["tiles"][variant][f"{ndim}d|{dtype}"]]
                _block(variant, ndim, dtype, tiles, _BASE_FEATURE, arch, stats, block, True)  # type: ignore[arg-type]
                for feature in rules["variant_features"].get(variant, []):
                    if feature["dtype_classes"] is not None and dtype_class(dtype) not in feature["dtype_classes"]:
                        continue
                    ftiles = [tuple(t) for t in feature["tile_override"]]
                    _block(variant, ndim, dtype, ftiles, feature, arch, stats, block, False)  # type: ignore[arg-type]
                for cfg in block:
                    add(cfg)
        if variant == "forward" and 2 in NDIMS:  # after ALL of forward's GEMM loops, before bwd_data
            for cfg in _depthwise(DTYPES):
                add(cfg)
    return tuple(result), stats


def full_configs(arch: str) -> list[dict[str, Any]]:
    """CK's ``full`` rule set for ``arch`` in CK's generation order (fresh dict copies; generation is cached)."""
    return [dict(cfg) for cfg in _generate(arch)[0]]


def generation_stats(arch: str) -> dict[str, Any]:
    """Intermediate counters of the generation of ``full`` for ``arch`` (the cached dict: do not mutate).

    See :func:`_new_stats` for the keys and what each one counts.
    """
    return _generate(arch)[1]
