"""CK's per-config checks (spec section 4), the CLI ArchFilter, and the known-issue tags of section 11.

* :func:`is_valid_for_arch_reason` - ``GroupedConvKernelConfig.is_valid_for_arch`` (applied inside ``full``).
* :func:`arch_filter_reason` / :func:`arch_filter_ok` - ``ArchFilter(arch, strict_mode=False).is_kernel_valid``
  as called by ``UnifiedGroupedConvCodegen.is_config_valid`` (CLI ``generate_all`` only).
* :func:`ck_known_issue` - 11.5 / 11.6 tags.
* :func:`depthwise_config_ok` - ``tile_math.is_valid_depthwise_config`` (asserted for every depthwise entry).
"""

from __future__ import annotations

import functools

from .ck_common import (
    Config,
    elem_bytes,
    get_warp_size,
    load_tables,
    wave_combos,
    warp_tiles,
)

# ----------------------------------------------------------------------------------------------------------------
# is_valid_for_arch (spec section 4), in CK's order.
# ----------------------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _codegen_common_trait_blacklist() -> frozenset[tuple[str, str, str]]:
    """codegen_common's unsupported (pipeline, epilogue, scheduler) set, used by trait.is_valid()."""
    rows = load_tables()["arch_specs"]["TRAIT_UNSUPPORTED_codegen_common_(used_by_trait.is_valid)"]
    return frozenset(tuple(r) for r in rows)  # type: ignore[misc]


@functools.lru_cache(maxsize=1)
def _arch_specs_trait_blacklist() -> frozenset[tuple[str, str, str]]:
    """arch_specs_generated's copy (ArchFilter): the same set minus basic_async_v1."""
    rows = load_tables()["arch_specs"]["TRAIT_UNSUPPORTED_COMBINATIONS_arch_specs"]
    return frozenset(tuple(r) for r in rows)  # type: ignore[misc]


def check_vectors(vec_a: int, vec_b: int, vec_c: int) -> bool:
    """is_valid_vector_size: 1 or even (the docstring's {1,2,4,8,16} is stale; 6, 10, 12 pass)."""
    return all(v == 1 or (v > 0 and v % 2 == 0) for v in (vec_a, vec_b, vec_c))


def check_wmma_instance(
    warp_size: int, k_per_block: int, k_warp: int, k_per_xdl: int, m_per_xdl: int, dtype: str
) -> bool:
    """WMMA constraints for warp_size 32. CK compares the dtype with "float", but the dispatcher passes
    the config's tag ("fp32"), so fp32 is treated like half and also needs k_per_xdl >= 32."""
    if warp_size == 64:
        return True
    if k_per_xdl < 32 and dtype != "float":
        return False
    if k_warp * k_per_xdl > k_per_block:
        return False
    return m_per_xdl != 32


def check_tile_coverage(cfg: Config, block_size: int) -> bool:
    """compv6 only: each of A and B must give every thread at least one vector load."""
    if cfg["pipeline"] != "compv6":
        return True
    a_ok = (cfg["tile_m"] * cfg["tile_k"]) // (block_size * cfg["vec_a"]) >= 1
    b_ok = (cfg["tile_n"] * cfg["tile_k"]) // (block_size * cfg["vec_b"]) >= 1
    return a_ok and b_ok


def is_valid_for_arch_reason(cfg: Config, arch: str) -> str | None:
    """None if ``is_valid_for_arch`` accepts the GEMM config, else the name of the first failing check."""
    if (cfg["pipeline"], cfg["epilogue"], cfg["scheduler"]) in _codegen_common_trait_blacklist():
        return "trait"
    if cfg["streamk"] != "none" and cfg["variant"] != "bwd_weight":
        return "streamk_variant"
    if cfg["pipeline"] in load_tables()["full_rule_set"]["unsupported_variant_pipelines"].get(cfg["variant"], []):
        return "pipeline_variant"
    if not check_vectors(cfg["vec_a"], cfg["vec_b"], cfg["vec_c"]):
        return "vectors"
    combos = wave_combos(arch)
    if combos is None or (cfg["wave_m"], cfg["wave_n"], cfg["wave_k"]) not in combos:
        return "wave_combo"
    warp_size = get_warp_size(arch)
    if not check_wmma_instance(
        warp_size, cfg["tile_k"], cfg["wave_k"], cfg["warp_tile_k"], cfg["warp_tile_m"], cfg["dtype"]
    ):
        return "wmma_instance"
    block_size = warp_size * cfg["wave_k"] * cfg["wave_m"] * cfg["wave_n"]
    if not check_tile_coverage(cfg, block_size):
        return "tile_coverage"
    if warp_size == 32 and cfg["streamk"] != "none":  # check_wmma_native_warp_tile
        return "wmma_native"
    return None


# ----------------------------------------------------------------------------------------------------------------
# ArchFilter (CLI only; strict_mode=False, so every check runs). Section 4 "ArchFilter".
# ----------------------------------------------------------------------------------------------------------------

#: generate_all maps variants to OperatorType.CONV_FWD / CONV_BWD_DATA / CONV_BWD_WEIGHT for 2D *and* 3D
#: (the conv3d_* entries of OPERATOR_TILE_CONSTRAINTS are never selected; they are identical anyway).
_OPERATOR = {"forward": "conv_fwd", "bwd_data": "conv_bwd_data", "bwd_weight": "conv_bwd_weight"}


def arch_filter_reason(cfg: Config, arch: str) -> str | None:
    """None if the CLI's ArchFilter accepts the config, else the first failing check.

    Depthwise configs never reach the ArchFilter: ``generate_all`` appends every DepthwiseConvKernelConfig whose
    dtype matches directly to the task list, without calling ``is_config_valid``. So they always pass here, and
    the 7,332 of gfx950 is (GEMM configs passing the filter) + 60 depthwise.
    """
    if cfg["kind"] == "depthwise":
        return None
    tables = load_tables()
    af = tables["arch_filter"]
    dt = cfg["dtype"]
    tm, tn, tk = cfg["tile_m"], cfg["tile_n"], cfg["tile_k"]
    wm, wn, wk = cfg["wave_m"], cfg["wave_n"], 1  # is_config_valid passes warp_k=1 ("typically 1")
    wtm, wtn, wtk = cfg["warp_tile_m"], cfg["warp_tile_n"], cfg["warp_tile_k"]

    op = af["OPERATOR_TILE_CONSTRAINTS"][_OPERATOR[cfg["variant"]]]
    for size, axis in ((tm, "m"), (tn, "n"), (tk, "k")):
        if size < op[f"min_tile_{axis}"] or size % op[f"tile_{axis}_alignment"] != 0:
            return "operator_tile"
    if wm * wtm > tm or wn * wtn > tn or wk * wtk > tk:
        return "warp_exceeds_tile"
    # strict_mode=False: an arch without a wave list, or a dtype without a warp-tile list, only warns.
    combos = wave_combos(arch)
    if combos and (wm, wn, wk) not in combos:
        return "wave_combo"
    allowed_warp_tiles = warp_tiles(arch, dt)  # key {dt}_{dt}_{acc}, acc = fp32 for fp16/bf16/fp32
    if allowed_warp_tiles and (wtm, wtn, wtk) not in allowed_warp_tiles:
        return "warp_tile"
    if cfg["variant"] in ("bwd_data", "bwd_weight") and cfg["pipeline"] not in af["conv_bwd_supported_pipelines"]:
        return "bwd_pipeline"
    if (cfg["pipeline"], cfg["epilogue"], cfg["scheduler"]) in _arch_specs_trait_blacklist():
        return "trait"
    limits = tables["arch_specs"]["LDS_CAPACITY_LIMITS_per_pipeline_bytes"]
    limit = limits.get(cfg["pipeline"], limits["default"])  # wavelet / basic_async_v1 -> default 65536
    if (tm * tk + tn * tk) * elem_bytes(dt) > limit:
        return "lds"
    if tm % (wm * wtm) != 0 or tn % (wn * wtn) != 0 or tk % (wk * wtk) != 0:
        return "tile_divisibility"
    return None


def arch_filter_ok(cfg: Config, arch: str) -> bool:
    """The CLI ArchFilter (spec section 4); depthwise configs are not filtered (see arch_filter_reason)."""
    return arch_filter_reason(cfg, arch) is None


# ----------------------------------------------------------------------------------------------------------------
# Known issues (section 11.5 / 11.6)
# ----------------------------------------------------------------------------------------------------------------


def ck_known_issue(cfg: Config) -> str | None:
    """"11.5" / "11.6" for the known-bad configs that ``full`` still generates, else None.

    11.5 - CK's KNOWN LIMITATION comment in grouped_config_rules_full.get_configs: the interwave pipelines compv1
    and mem give wrong results for the bwd_weight *Default specialization* when the macro tile is split across
    several waves (``wave_m * wave_n > 1``) in fp16/bf16. The "Default specialization" part is what halves the
    naive count (bwd_weight emits every config with both default and filter1x1_stride1_pad0): 816 on gfx950.
    11.6 - fp32 stream-K with basic_async_v1, which CK's Builder skips as unsupported: 128 on gfx950.
    """
    if cfg["kind"] != "gemm":
        return None
    if (
        cfg["variant"] == "bwd_weight"
        and cfg["dtype"] in ("fp16", "bf16")
        and cfg["scheduler"] == "interwave"
        and cfg["pipeline"] in ("compv1", "mem")
        and cfg["specialization"] == "default"
        and cfg["wave_m"] * cfg["wave_n"] > 1
    ):
        return "11.5"
    if cfg["dtype"] == "fp32" and cfg["streamk"] != "none" and cfg["pipeline"] == "basic_async_v1":
        return "11.6"
    return None


# ----------------------------------------------------------------------------------------------------------------
# tile_math.is_valid_depthwise_config (asserted for every depthwise entry, always with dtype_size=2)
# ----------------------------------------------------------------------------------------------------------------

_DW_BLOCK = 64


def depthwise_config_ok(cfg: Config, dtype_size: int = 2) -> bool:
    """The depthwise check of section 3.10 (tile_math.is_valid_depthwise_config).

    The spec leaves the LDS tile extents and row stride open; they follow CK's tile_math.py:
    ``lds_tile_h = tile_h*stride_h + 2*pad_h``, ``lds_tile_w = tile_w*stride_w + 2*pad_w``,
    ``lds_stride = max(ceil_to(lds_tile_w, in_vec), ceil_to(lds_tile_w + pad_w, min(in_vec, 4)))``.
    """
    th, tw, f = cfg["dw_tile_h"], cfg["dw_tile_w"], cfg["filter_size"]
    sh, sw, ph, pw = cfg["stride_h"], cfg["stride_w"], cfg["pad_h"], cfg["pad_w"]
    sub_h, sub_w, in_vec, out_vec = cfg["sub_h"], cfg["sub_w"], cfg["in_vec"], cfg["out_vec"]

    def pow2(v: int) -> bool:
        return v > 0 and v & (v - 1) == 0

    def ceil_div(a: int, b: int) -> int:
        return -(-a // b)

    if f < 1 or f % 2 == 0 or not (pow2(in_vec) and pow2(out_vec)):
        return False
    if not (1 <= sub_h <= th and 1 <= sub_w <= tw):
        return False
    if not (sw == 1 or sw % 2 == 0) or pw <= 0:
        return False
    subtiles = ceil_div(th, sub_h) * ceil_div(tw, sub_w)
    if subtiles > _DW_BLOCK:
        return False
    tile_per_wave = _DW_BLOCK // subtiles
    if cfg["nbatch"] <= 0 or cfg["nbatch"] % tile_per_wave != 0:
        return False
    in_vec_internal = min(in_vec, 4)
    if (sub_w * sw) % in_vec_internal != 0:
        return False
    lds_tile_h = th * sh + 2 * ph
    lds_tile_w = tw * sw + 2 * pw
    lds_stride = max(
        ceil_div(lds_tile_w, in_vec) * in_vec,
        ceil_div(lds_tile_w + pw, in_vec_internal) * in_vec_internal,
    )
    if ceil_div(lds_tile_w, in_vec) > _DW_BLOCK:
        return False
    return lds_tile_h * lds_stride * tile_per_wave * dtype_size <= 65536
