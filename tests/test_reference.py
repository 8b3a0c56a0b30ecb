"""The CK reference oracle (tests/reference) reproduces every sanity figure of /work/shared/spec/ck-rules.md.

The oracle is an independent, procedural re-implementation of CK's ``full`` rule set and its subsets; these tests
pin it to the spec so that other tests can use it as ground truth for the constraint model.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

try:  # tests/ is not a package: pytest puts tests/ itself on sys.path (rootdir-relative import as a fallback)
    from reference import ck_full
    from reference.ck_common import TABLES_PATH, tile_key, warp_tiles
except ImportError:  # pragma: no cover
    from tests.reference import ck_full  # type: ignore[no-redef]
    from tests.reference.ck_common import TABLES_PATH, tile_key, warp_tiles  # type: ignore[no-redef]

Config = dict[str, Any]
ARCHES = ("gfx90a", "gfx942", "gfx950", "gfx1201")
SPEC_TABLES = Path("/work/shared/spec/ck-tables.json")


@functools.lru_cache(maxsize=None)
def full(arch: str) -> tuple[Config, ...]:
    return tuple(ck_full.full_configs(arch))


@functools.lru_cache(maxsize=None)
def full_tests(arch: str) -> tuple[Config, ...]:
    return tuple(ck_full.full_tests(list(full(arch))))


@functools.lru_cache(maxsize=None)
def tiny(arch: str) -> tuple[Config, ...]:
    return tuple(ck_full.tiny(list(full_tests(arch))))


def gemm(arch: str) -> list[Config]:
    return [c for c in full(arch) if c["kind"] == "gemm"]


def tile(c: Config) -> tuple[int, int, int]:
    return (c["tile_m"], c["tile_n"], c["tile_k"])


def wave(c: Config) -> tuple[int, int, int]:
    return (c["wave_m"], c["wave_n"], c["wave_k"])


def warp(c: Config) -> tuple[int, int, int]:
    return (c["warp_tile_m"], c["warp_tile_n"], c["warp_tile_k"])


# ----------------------------------------------------------------------------------------------------------------
# Fixture and independence
# ----------------------------------------------------------------------------------------------------------------


def test_fixture_is_byte_identical_copy_of_spec_tables() -> None:
    if not SPEC_TABLES.exists():
        pytest.skip("shared spec not available")
    assert TABLES_PATH.read_bytes() == SPEC_TABLES.read_bytes()


def test_oracle_does_not_import_ckspace() -> None:
    for path in (Path(__file__).parent / "reference").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+ckspace\b", text, re.M), path


# ----------------------------------------------------------------------------------------------------------------
# Section 3.2 tile tables
# ----------------------------------------------------------------------------------------------------------------

TILE_COUNTS = {  # (variant, ndim) -> (fp16/bf16, fp32)
    ("forward", 2): (38, 27), ("forward", 3): (34, 27),
    ("bwd_data", 2): (20, 14), ("bwd_data", 3): (16, 14),
    ("bwd_weight", 2): (29, 16), ("bwd_weight", 3): (26, 16),
}  # fmt: skip
TWO_D_ONLY = {
    "forward": {"128x64x16", "128x64x8", "256x64x8", "64x64x8"},
    "bwd_data": {"128x64x64", "256x128x64", "256x32x64", "64x64x64"},
    "bwd_weight": {"256x32x64", "64x128x64", "64x32x64"},
}


def test_tile_tables() -> None:
    tiles = ck_full.load_tables()["full_rule_set"]["tiles"]
    base_waves = ck_full.load_tables()["full_rule_set"]["base_tile_wave_strategies"]
    for (variant, ndim), (n_half, n_float) in TILE_COUNTS.items():
        t = tiles[variant]
        assert len(t[f"{ndim}d|fp16"]) == len(t[f"{ndim}d|bf16"]) == n_half
        assert len(t[f"{ndim}d|fp32"]) == n_float
        assert t[f"{ndim}d|fp16"] == t[f"{ndim}d|bf16"]
    for variant, t in tiles.items():
        for dt in ("fp16", "bf16", "fp32"):
            two = {tile_key(x) for x in t[f"2d|{dt}"]}
            three = {tile_key(x) for x in t[f"3d|{dt}"]}
            assert three <= two
            assert two - three == (TWO_D_ONLY[variant] if dt != "fp32" else set())
        union = {tile_key(x) for lst in t.values() for x in lst}
        assert len(union) == {"forward": 48, "bwd_data": 20, "bwd_weight": 39}[variant]
        assert union <= set(base_waves)  # the [SINGLE] fallback of 3.3 never happens


def test_shape_based_pipeline_rules_are_dead() -> None:
    rules = ck_full.load_tables()["full_rule_set"]
    for variant, per_key in rules["tiles"].items():
        feature_tiles = [t for f in rules["variant_features"].get(variant, []) for t in f["tile_override"]]
        for t in [t for lst in per_key.values() for t in lst] + feature_tiles:
            for dclass in ("half", "float"):
                ck_full.tile_pipelines(variant, tuple(t), dclass)  # raises if the shape rules were reached


# ----------------------------------------------------------------------------------------------------------------
# full: counts, table, names, order
# ----------------------------------------------------------------------------------------------------------------

FULL_TABLE = {  # (variant, ndim) -> (fp16, bf16, fp32), spec "Sanity figures"
    ("forward", 2): (659, 659, 320), ("forward", 3): (649, 649, 320),
    ("forward_depthwise", 2): (20, 20, 20),
    ("bwd_data", 2): (124, 124, 84), ("bwd_data", 3): (104, 104, 84),
    ("bwd_weight", 2): (2404, 2404, 258), ("bwd_weight", 3): (2392, 2392, 258),
}  # fmt: skip


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_full_counts_and_table(arch: str) -> None:
    cfgs = full(arch)
    assert len(cfgs) == 14048
    assert sum(c["kind"] == "gemm" for c in cfgs) == 13988
    assert sum(c["kind"] == "depthwise" for c in cfgs) == 60
    counts = Counter((c["variant"], c["ndim"], c["dtype"]) for c in cfgs)
    expected = {
        (v, n, dt): k for (v, n), row in FULL_TABLE.items() for dt, k in zip(("fp16", "bf16", "fp32"), row)
    }
    assert dict(counts) == expected


def test_gfx942_and_gfx950_identical() -> None:
    assert [c["name"] for c in full("gfx942")] == [c["name"] for c in full("gfx950")]
    assert full("gfx942") == full("gfx950")


@pytest.mark.parametrize("arch", ARCHES)
def test_names_unique_and_keys_exact(arch: str) -> None:
    cfgs = full(arch)
    assert len({c["name"] for c in cfgs}) == len(cfgs)
    for c in cfgs:
        assert tuple(c) == (ck_full.GEMM_KEYS if c["kind"] == "gemm" else ck_full.DEPTHWISE_KEYS)


NAME_RE = re.compile(
    r"^grouped_conv_(fwd|bwd_data|bwd_weight)_(fp16|bf16|fp32)_nhwgc_[23]d_[a-z0-9_]+?_cshuffle_(intra|inter)wave"
    r"_\d+x\d+x\d+_\d+x\d+x\d+_\d+x\d+x\d+(_vec\d+_\d+_\d+)?(_gm\d+)?(_dsb)?(_2stage)?"
    r"(_filter1x1_pad0|_filter1x1_stride1_pad0|_filter3x3)?(_explicit_gemm)?(_streamk_tree(_persistent)?)?"
    r"(_large_tensor)?$"
)


def test_name_grammar() -> None:
    cfgs = full("gfx950")
    first = cfgs[0]
    assert first["name"] == "grouped_conv_fwd_fp16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec8_8_4"
    for c in cfgs:
        if c["kind"] == "depthwise":
            assert re.fullmatch(r"grouped_conv_fwd_depthwise_(fp16|bf16|fp32)_ngchw_2d_\d+x\d+_f\d_s\dx\d_p\dx\d"
                                r"_nb\d+_sub\dx\d_vec\d_\d", c["name"]), c["name"]  # fmt: skip
            continue
        assert NAME_RE.match(c["name"]), c["name"]
        assert ("_vec" in c["name"]) == ((c["vec_a"], c["vec_b"], c["vec_c"]) != (4, 8, 8))
        assert not re.search(r"_wg\d", c["name"]) and not re.search(r"_pad[01]{3}$", c["name"])
        assert f"_{c['ndim']}d_" in c["name"] and "_nhwgc_" in c["name"]  # nhwgc even in 3D (11.8)
    names = {c["name"] for c in cfgs}
    assert "grouped_conv_fwd_depthwise_fp16_ngchw_2d_8x8_f3_s1x1_p1x1_nb8_sub2x2_vec2_2" in names
    assert "grouped_conv_fwd_depthwise_fp32_ngchw_2d_32x32_f5_s1x1_p2x2_nb4_sub4x4_vec8_8" in names
    assert any(n.endswith("_streamk_tree_persistent") for n in names)
    assert any(n.endswith("_large_tensor") for n in names)
    assert any("_gm8_2stage_filter1x1_stride1_pad0" in n for n in names)
    assert any(n.endswith("_dsb") and "_compv4_" in n for n in names)


def test_generation_order() -> None:
    blocks: list[tuple[str, int, str]] = []
    for c in full("gfx950"):
        key = (c["variant"], c["ndim"], c["dtype"] if c["kind"] == "gemm" else "*")
        if not blocks or blocks[-1] != key:
            blocks.append(key)
    dts = ("fp16", "bf16", "fp32")
    expected = [("forward", n, dt) for n in (2, 3) for dt in dts] + [("forward_depthwise", 2, "*")]
    expected += [(v, n, dt) for v in ("bwd_data", "bwd_weight") for n in (2, 3) for dt in dts]
    assert blocks == expected
    dw = [c for c in full("gfx950") if c["kind"] == "depthwise"]
    assert [c["dtype"] for c in dw[:6]] == ["fp16", "bf16", "fp32"] * 2  # param-major, then dtype
    # base block before feature block, inside each (variant, ndim, dtype)
    fwd = [c for c in full("gfx950") if c["variant"] == "forward" and c["ndim"] == 2 and c["dtype"] == "fp16"]
    flags = [c["split_image"] or c["num_groups_to_merge"] > 1 for c in fwd]
    assert flags == sorted(flags)


# ----------------------------------------------------------------------------------------------------------------
# Sections 3.1 / 3.4 / 4: dedup, fallback, is_valid_for_arch, vector gate
# ----------------------------------------------------------------------------------------------------------------


def test_dedup_and_is_valid_for_arch_rejections() -> None:
    for arch in ("gfx942", "gfx950"):
        st = ck_full.generation_stats(arch)
        assert st["dedup_dropped"] == 0 and sum(st["rejected"].values()) == 0
    st = ck_full.generation_stats("gfx90a")
    assert st["dedup_dropped"] == 5908
    assert dict(st["rejected_by"]) == {("tile_coverage", "bwd_weight", "compv6"): 968}
    st = ck_full.generation_stats("gfx1201")
    assert dict(st["rejected"]) == {"wmma_instance": 1610, "tile_coverage": 232}
    assert {k for k in st["rejected_by"] if k[0] == "tile_coverage"} == {("tile_coverage", "bwd_weight", "compv6")}
    for arch in ARCHES:
        assert ck_full.generation_stats(arch)["tileconfig_invalid"] == 0  # TileConfig.is_valid never fails


def test_fallback() -> None:
    assert len(ck_full.generation_stats("gfx942")["fallback_cases"]) == 0
    assert len(ck_full.generation_stats("gfx950")["fallback_cases"]) == 0
    assert len(ck_full.generation_stats("gfx90a")["fallback_cases"]) == 172
    assert len(ck_full.generation_stats("gfx1201")["fallback_cases"]) == 254
    mn_90a = {(c["warp_tile_m"], c["warp_tile_n"]) for c in gemm("gfx90a")}
    assert {(4, 64), (64, 4)} <= mn_90a
    g1201 = gemm("gfx1201")
    assert {wave(c) for c in g1201} == {(2, 4, 1), (1, 8, 1), (8, 1, 1), (4, 2, 1)}
    assert {(c["warp_tile_m"], c["warp_tile_n"]) for c in g1201} == {(16, 16)}
    assert not any(c["dtype"] == "fp32" for c in g1201)  # no fp32 warp tiles on gfx1201
    assert any(c["dtype"] == "fp32" for c in full("gfx1201"))  # ... but depthwise is emitted for every arch


def test_vector_gate() -> None:
    st = ck_full.generation_stats("gfx950")
    assert st["base_vec_candidates"] == 1232 and st["base_vec_rejected"] == 0
    # GENERIC only when the tile is absent: fp32 stream-K on bwd_weight 16x16x32 gets only (1,1,2)
    sk = {(c["vec_a"], c["vec_b"], c["vec_c"]) for c in gemm("gfx950")
          if c["streamk"] != "none" and c["dtype"] == "fp32" and tile(c) == (16, 16, 32)}  # fmt: skip
    assert sk == {(1, 1, 2)}


def test_curated_path_facts_gfx950() -> None:
    cfgs = gemm("gfx950")
    waves = {wave(c) for c in cfgs}
    assert (8, 2, 1) not in waves and (4, 4, 1) not in waves
    assert not any((c["warp_tile_m"], c["warp_tile_n"]) in {(4, 64), (64, 4)} for c in cfgs)
    for c in cfgs:  # the hardware facts of the ckspace policy change nothing on gfx950
        assert warp(c) in warp_tiles("gfx950", c["dtype"])


# ----------------------------------------------------------------------------------------------------------------
# Sections 3.5 / 3.7 / 3.8 / 3.9 / 3.10
# ----------------------------------------------------------------------------------------------------------------


def test_warp_tile_k() -> None:
    legacy_tiles = {(64, 32, 64), (64, 64, 64)}
    for c in gemm("gfx950"):
        m, tk, fp32 = c["warp_tile_m"], c["tile_k"], c["dtype"] == "fp32"
        if c["streamk"] != "none" or (c["variant"] == "bwd_weight" and c["pipeline"] == "wavelet"
                                      and tile(c) in legacy_tiles):  # fmt: skip
            expected = min(8 if m == 32 else 16, tk // 4 if fp32 else tk)
        elif fp32:
            expected = min(4 if tk <= 16 else 8, tk)
        else:
            expected = min(16 if m == 32 else 32, tk)
        assert c["warp_tile_k"] == expected, c["name"]


def test_pipelines_and_fixed_fields() -> None:
    cfgs = gemm("gfx950")
    assert {c["pipeline"] for c in cfgs} == {"compv1", "mem", "compv3", "compv4", "compv6", "wavelet",
                                              "basic_async_v1"}  # fmt: skip
    for c in cfgs:
        assert c["double_smem_buffer"] == (c["pipeline"] == "compv4")
        assert (c["epilogue"], c["layout"], c["num_wave_groups"]) == ("cshuffle", "nhwgc", 1)
        assert c["pad_m"] and c["pad_n"] and c["pad_k"]
        assert not (c["pipeline"] == "wavelet" and c["explicit_gemm"])
        assert c["streamk"] in ("none", "tree") and (c["streamk"] == "none" or c["variant"] == "bwd_weight")
    # block_per_cu (derived): compv4 -> 1, everything else -> 2
    rule = ck_full.load_tables()["block_per_cu_rule"]
    bpc = {c["pipeline"]: 1 if c["pipeline"] in rule["always_1"] else 2 if c["pipeline"] in rule["always_2"]
           else (1 if c["double_smem_buffer"] else 2) for c in cfgs}  # fmt: skip
    assert {p for p, v in bpc.items() if v == 1} == {"compv4"}


def test_specializations() -> None:
    for c in gemm("gfx950"):
        t = tile(c)
        if c["variant"] == "forward":
            if t[2] == 8:
                assert c["specialization"] == "default"
            elif c["specialization"] == "filter3x3":
                assert t[0] * t[1] <= 4096
        else:
            assert c["specialization"] in ("default", "filter1x1_stride1_pad0")
    for v in ("forward", "bwd_data", "bwd_weight"):  # every spec multiplies every config, features included
        specs = Counter(c["specialization"] for c in gemm("gfx950") if c["variant"] == v and c["tile_k"] != 8)
        assert specs["default"] == specs["filter1x1_stride1_pad0"]
    fwd = Counter(c["specialization"] for c in gemm("gfx950") if c["variant"] == "forward")
    small = sum(1 for c in gemm("gfx950") if c["variant"] == "forward" and c["tile_k"] != 8
                and c["tile_m"] * c["tile_n"] <= 4096 and c["specialization"] == "default")  # fmt: skip
    assert fwd["filter3x3"] == small
    eg = {c["specialization"] for c in gemm("gfx950") if c["explicit_gemm"]}  # 11.7
    assert eg == {"default", "filter1x1_stride1_pad0"}


def test_feature_outcomes_gfx950() -> None:
    cfgs = gemm("gfx950")
    si = {(c["dtype"] == "fp32", tile(c)) for c in cfgs if c["split_image"]}
    assert si == {(False, (64, 64, 32)), (False, (256, 128, 32)),
                  (True, (64, 64, 16)), (True, (64, 64, 32)), (True, (256, 128, 16))}  # fmt: skip
    assert all((c["pipeline"], c["scheduler"]) == ("compv1", "intrawave") for c in cfgs if c["split_image"])
    gm8 = {c["dtype"] for c in cfgs if c["variant"] == "forward" and c["num_groups_to_merge"] == 8
           and tile(c) == (128, 32, 32)}  # fmt: skip
    assert gm8 == {"fp16", "bf16"}
    assert {c["streamk"] for c in cfgs} == {"none", "tree"}  # LINEAR never generated
    assert {c["streamk_persistent"] for c in cfgs if c["streamk"] == "tree"} == {False, True}
    wv_bww = {(c["dtype"], tile(c)) for c in cfgs if c["variant"] == "bwd_weight" and c["pipeline"] == "wavelet"}
    assert {t for _, t in wv_bww} == {(16, 64, 64), (64, 32, 64), (64, 64, 64)}
    assert {d for d, _ in wv_bww} == {"fp16", "bf16"}
    wv_fwd = {(c["dtype"], tile(c)) for c in cfgs if c["variant"] == "forward" and c["pipeline"] == "wavelet"}
    assert {t for _, t in wv_fwd} == {(64, 64, 64), (128, 128, 64)}
    assert {d for d, _ in wv_fwd} == {"fp16", "bf16"}
    for c in cfgs:  # half-only features never appear for fp32
        if c["dtype"] == "fp32" and c["variant"] != "forward":
            assert not (c["explicit_gemm"] or c["two_stage"] or c["num_groups_to_merge"] > 1)
    # 11.4: the eight-wave constraint (wave_n == 2, warp_tile_n == 16) is never applied to basic_async_v1:
    # full emits it with waves 2x2, 1x1, 2x1 and 4x1 (among others) and with warp_tile_n 32
    ba = [c for c in cfgs if c["pipeline"] == "basic_async_v1"]
    assert {(2, 2), (1, 1), (2, 1), (4, 1)} <= {(c["wave_m"], c["wave_n"]) for c in ba}
    assert any(c["warp_tile_n"] == 32 for c in ba)


def test_depthwise() -> None:
    for arch in ARCHES:
        dw = [c for c in full(arch) if c["kind"] == "depthwise"]
        assert len(dw) == 60 and Counter(c["dtype"] for c in dw) == {"fp16": 20, "bf16": 20, "fp32": 20}
        for c in dw:
            assert c["pad_h"] == c["pad_w"] == (c["filter_size"] - 1) // 2
            assert (c["variant"], c["ndim"], c["layout"]) == ("forward_depthwise", 2, "ngchw")


# ----------------------------------------------------------------------------------------------------------------
# Sections 5 / 6: full-tests and tiny
# ----------------------------------------------------------------------------------------------------------------


def test_full_tests_gfx950() -> None:
    for arch in ("gfx942", "gfx950"):
        assert len(full_tests(arch)) == 2805
    assert round(100 * 2805 / 14048, 2) == 19.97
    ft = full_tests("gfx950")
    names = [c["name"] for c in full("gfx950")]
    idx = [names.index(c["name"]) for c in ft]
    assert idx == sorted(idx)  # original order

    def pairs(cfgs: tuple[Config, ...]) -> set[tuple[str, str, str, str]]:
        return {(c["variant"], c["dtype"], c["pipeline"], c["scheduler"]) for c in cfgs if c["kind"] == "gemm"}

    assert pairs(ft) == pairs(full("gfx950"))


def test_tiny() -> None:
    for arch in ("gfx942", "gfx950"):
        t = tiny(arch)
        assert len(t) == 35
        cats = Counter(ck_full.category(c).split(":")[0] for c in t)
        assert cats == {"regular": 6, "split_image": 6, "merged_groups": 6, "depthwise": 3,
                        "explicit_gemm": 4, "two_stage": 4, "streamk": 6}  # fmt: skip
        assert not any(c["variant"] == "bwd_data" for c in t)
        assert not any(c["variant"] == "bwd_weight" and ck_full.category(c).startswith("regular:") for c in t)
    assert len(tiny("gfx90a")) == 35
    assert len(tiny("gfx1201")) == 23
    for arch in ARCHES:  # at least 10 groups on every arch: the round-robin fill never runs
        assert len({(ck_full.category(c), c["ndim"]) for c in full_tests(arch)}) >= 10


# ----------------------------------------------------------------------------------------------------------------
# Section 4 ArchFilter, section 11 known issues
# ----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_arch_filter(arch: str) -> None:
    kept = [c for c in full(arch) if ck_full.arch_filter_ok(c, arch)]
    assert len(kept) == 7332
    assert not any(c["variant"] == "bwd_data" for c in kept)  # every bwd_data kernel removed (11.1)
    assert {c["pipeline"] for c in kept if c["variant"] == "bwd_weight"} <= {"compv3", "mem"}
    assert sum(c["kind"] == "depthwise" for c in kept) == 60  # depthwise never reaches the filter
    for subset in (full_tests(arch), tiny(arch)):  # the CLI emits zero bwd_data kernels from any of them
        assert not any(c["variant"] == "bwd_data" and ck_full.arch_filter_ok(c, arch) for c in subset)


def test_arch_filter_warp_tile_failures() -> None:
    bad = [c for c in gemm("gfx90a") if warp(c) not in warp_tiles("gfx90a", c["dtype"])]
    assert len(bad) == 2610
    assert sum((c["warp_tile_m"], c["warp_tile_n"]) in {(4, 64), (64, 4)} for c in bad) == 2604
    rest = [c for c in bad if (c["warp_tile_m"], c["warp_tile_n"]) not in {(4, 64), (64, 4)}]
    assert len(rest) == 6 and all(warp(c) == (16, 16, 8) and c["dtype"] != "fp32" for c in rest)
    assert all(not ck_full.arch_filter_ok(c, "gfx90a") for c in bad)
    # 11.2: gfx1201 emits 16x16x32 warp tiles, which the ArchFilter rejects: no GEMM kernel survives
    assert {warp(c) for c in gemm("gfx1201")} == {(16, 16, 32)}
    assert not any(ck_full.arch_filter_ok(c, "gfx1201") for c in gemm("gfx1201"))


def test_known_issues_gfx950() -> None:
    issues = Counter(ck_full.ck_known_issue(c) for c in full("gfx950"))
    assert issues["11.5"] == 816
    assert issues["11.6"] == 128


def test_full_configs_returns_fresh_copies() -> None:
    first = ck_full.full_configs("gfx950")
    first[0]["tile_m"] = -1
    assert ck_full.full_configs("gfx950")[0]["tile_m"] == 16
