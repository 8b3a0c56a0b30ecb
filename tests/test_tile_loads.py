"""The tile-load facts (rules/pipeline.toml a/b-load-*, rules/ck-api-2025.11.toml a/b-load-threads,
rules/ck-api-2026.06.toml a/b-load-cover; families pipeline, ck-api-2025.11 and ck-api-2026.06), the C store's and the backward transposes' (ck-api-2025.11 cshuffle-store,
transpose-vector-a/b, transpose-wave-groups-a/b) against oracles that do not run the rule engine:

- a transcription of CK Tile's tile_distribution_encoding_pattern_2d (ck_tile/core/algorithm/static_encoding_pattern.hpp)
  in plain Python, for the 2025.11 revision (X0 = X / X1) and the newest (X0 = min(warp_size, X / X1), X2 loops),
  with the layouts of GroupedConvTraits: the rules must reject exactly the kernels whose static_asserts fail;
- the compiler's verdicts of scripts/data/audit-tile-loads-2026-11-27.json (ckspace verify on the device machine,
  clang 22 and CK Tile 2025.11): every kernel that failed with a tile-load static_assert is rejected by the rules, and
  every kernel that built is accepted by them.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckspace.rules.check import breaks
from ckspace.rules.data import load
from ckspace.rules.model import Model, resolve_families
from ckspace.rules.names import parse_name

REPO = Path(__file__).resolve().parent.parent
AUDIT = REPO / "scripts" / "data" / "audit-tile-loads-2026-11-27.json"
DATA = load()
COMMON = ("pipeline.a-load-vector", "pipeline.b-load-vector", "pipeline.a-load-wavefront", "pipeline.b-load-wavefront",
          "pipeline.a-load-rows", "pipeline.b-load-rows")
REV_2025 = ("ck-api-2025.11.a-load-threads", "ck-api-2025.11.b-load-threads")
REV_2026 = ("ck-api-2026.06.a-load-cover", "ck-api-2026.06.b-load-cover")
# the families of the tile-load facts: pipeline and ck-api-2026.06 (the newest revision's) are on by default;
# --ck-api 2025.11 switches ck-api-2025.11 on and ck-api-2026.06 off
LOADS_2025 = "full,+ck-api-2025.11,-ck-api-2026.06"
# the pipelines of UniversalGemmBasePolicy's loads: compv3-6 and mem, and the V1 pipeline (compv1 and basic_v1 in
# the templates), whose default Policy is UniversalGemmPipelineAgBgCrPolicy in both revisions
# (ck_tile/ops/gemm/pipeline/gemm_pipeline_agmem_bgmem_creg_v1.hpp: line 15 of amd-aiter 0.1.7.post2.dev18, and
# ROCm/rocm-libraries@17891bae projects/composablekernel/include)
UNIVERSAL = ("compv1", "basic_v1", "compv3", "compv4", "compv5", "compv6", "mem")
WARP_SIZE = {"gfx90a": 64, "gfx942": 64, "gfx950": 64, "gfx1100": 32, "gfx1201": 32}


def pattern_fails(block: int, y: int, x: int, vec: int, warp: int, groups: int, revision: str) -> bool:
    """Whether tile_distribution_encoding_pattern_2d<block, y, x, vec, thread_raked, groups> fails to compile, its
    static_asserts and divisions read line by line from the C++ (2025.11: amd-aiter 0.1.7.post2.dev18 lines 148-166;
    newest: ROCm/rocm-libraries projects/composablekernel at 97b26ea)."""
    if x % vec:
        return True  # XPerTile must be a multiple of VecSize
    largest = x * y // block  # LargestVec
    x1 = vec if vec <= largest else largest
    if x1 == 0:
        return True  # XPerTile / X1: a division by zero, not a constant expression
    x0 = x // x1 if revision == "2025.11" else min(warp, x // x1)
    y1 = warp // x0
    if x0 * y1 != warp:
        return True  # X0 * Y1 must cover whole wavefront
    y0 = block // warp // groups
    if y0 == 0:
        return True  # fewer waves than wave groups: Y2 = YPerTile / (Y1 * Y0) divides by zero
    y2 = y // (y1 * y0)
    if x0 * y1 * y0 * groups != block or y0 * y1 * y2 != y:
        return True  # ... must cover whole workgroup / whole YPerTile
    return revision != "2025.11" and x0 * x1 * (x // (x0 * x1)) != x  # X0, X1, X2 must cover whole XPerTile


def loads_fail(cfg: dict, arch: str, revision: str) -> bool:
    """Whether the A or the B load of the kernel fails, with GroupedConvTraits' layouts: A row-major (M×K) for forward
    and bwd_data, column-major (K×M) for bwd_weight; B column-major (N×K) for forward, row-major (K×N) otherwise."""
    if cfg["pipeline"] not in UNIVERSAL:
        return False
    warp = WARP_SIZE[arch]
    block = warp * cfg["wave_m"] * cfg["wave_n"] * cfg["wave_k"]
    m, n, k = cfg["tile_m"], cfg["tile_n"], cfg["tile_k"]
    a = (k, m) if cfg["variant"] == "bwd_weight" else (m, k)
    b = (n, k) if cfg["variant"] == "forward" else (k, n)
    g = cfg["num_wave_groups"]
    return (pattern_fails(block, *a, cfg["vec_a"], warp, g, revision)
            or pattern_fails(block, *b, cfg["vec_b"], warp, g, revision))


@functools.lru_cache(maxsize=None)
def model(arch: str, families: str) -> Model:
    return Model(DATA, arch, resolve_families(DATA, families))


def rules_reject(cfg: dict, arch: str, ids: tuple[str, ...], families: str) -> bool:
    m = model(arch, families)
    return any(breaks(r, cfg, m) for r in m.rules if r.id in ids)


BASE = parse_name("grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_8")


@settings(max_examples=400, deadline=None, derandomize=True)
@given(arch=st.sampled_from(sorted(WARP_SIZE)), variant=st.sampled_from(["forward", "bwd_data", "bwd_weight"]),
       pipeline=st.sampled_from(["compv3", "compv4", "mem", "compv1", "basic_v1", "compv2"]),
       tile_m=st.sampled_from([16, 32, 48, 64, 96, 128, 192, 256]),
       tile_n=st.sampled_from([16, 32, 48, 64, 96, 128, 192, 256]),
       tile_k=st.sampled_from([8, 16, 24, 32, 48, 64, 96, 112, 128, 192]),
       waves=st.sampled_from([(1, 1, 1), (1, 2, 1), (2, 1, 1), (2, 2, 1), (1, 4, 1), (4, 1, 1), (2, 1, 2), (4, 2, 1)]),
       vec_a=st.sampled_from([1, 2, 4, 8, 16]), vec_b=st.sampled_from([1, 2, 4, 8, 16]))
def test_the_rules_reject_what_the_asserts_reject(arch, variant, pipeline, tile_m, tile_n, tile_k, waves, vec_a,
                                                   vec_b):
    cfg = {**BASE, "variant": variant, "pipeline": pipeline, "tile_m": tile_m, "tile_n": tile_n, "tile_k": tile_k,
           "wave_m": waves[0], "wave_n": waves[1], "wave_k": waves[2], "vec_a": vec_a, "vec_b": vec_b}
    # every revision: a kernel the pipeline family's rules reject fails in both revisions (a fact of every
    # revision, never one revision's) ...
    newest, old = loads_fail(cfg, arch, "newest"), loads_fail(cfg, arch, "2025.11")
    common = rules_reject(cfg, arch, COMMON, "full")
    assert not common or (newest and old), (cfg, newest, old)
    # ... and with 2025.11's own rules they are exactly what fails in 2025.11, with the newest's exactly what fails in
    # the newest (the default families)
    assert rules_reject(cfg, arch, COMMON + REV_2025, LOADS_2025) == old, (cfg, old)
    assert rules_reject(cfg, arch, COMMON + REV_2026, "full") == newest, (cfg, newest)


def test_the_rules_agree_with_the_compiler():
    audit = json.loads(AUDIT.read_text())["kernels"]
    assert len(audit) >= 150
    seen = {"failed": 0, "ok": 0}
    for row in audit:
        cfg = parse_name(row["name"])
        rejected = rules_reject(cfg, row["arch"], COMMON + REV_2025, LOADS_2025 + ",-ck-curation")
        if row["status"] == "failed" and "static_encoding_pattern" not in (row["error"] or "") and \
                "must cover whole" not in (row["error"] or "") and "multiple of VecSize" not in (row["error"] or ""):
            continue  # another fact's failure
        assert rejected == (row["status"] != "ok"), row
        assert row["status"] != "ok" or row["matrix_instructions"], row  # built, with matrix instructions
        seen[row["status"] if row["status"] == "ok" else "failed"] += 1
    assert seen["failed"] >= 30 and seen["ok"] >= 100, seen


@pytest.mark.parametrize("rid", COMMON + REV_2025)
def test_every_tile_load_rule_has_compiled_near_misses(rid):
    """A fact's near misses (kernels breaking it alone) failed to compile: the audit holds some for each rule the
    open space can break alone (b-load-vector and the row rules are only broken together with others there)."""
    rows = [r for r in json.loads(AUDIT.read_text())["kernels"] if r["rule"] == rid]
    if rid in ("pipeline.b-load-vector", "pipeline.a-load-rows", "pipeline.b-load-rows"):
        pytest.skip(f"no near miss of {rid} alone in the audited regions")
    assert rows and all(r["status"] == "failed" for r in rows), rows


def cshuffle_store_fails(cfg: dict, arch: str) -> bool:
    """Whether CK Tile 2025.11's CShuffleEpilogue fails to store the kernel's C tile, read from
    ck_tile/ops/epilogue/cshuffle_epilogue.hpp (amd-aiter 0.1.7.post2.dev18): its block has MWave·NWave·warp_size
    threads (line 49); row-major E (GroupedConvTraits), so shuffle_tile_tuple (209-234) takes
    min(vec_c / e, kMPerBlock / (MPerXdl·MWave)) M XDLs when a thread holds e < vec_c elements of a warp tile, after
    static_asserting kMPerBlock % (vec_c / e) == 0; MNPerIterationShuffle (240-249) falls back to one XDL per wave when
    that does not divide the tile; the store's pattern (642-647) is tile_distribution_encoding_pattern_2d."""
    warp = WARP_SIZE[arch]
    wm, wn, tm, tn = cfg["wave_m"], cfg["wave_n"], cfg["warp_tile_m"], cfg["warp_tile_n"]
    vec = cfg["vec_c"]
    e = tm * tn // warp
    if e >= vec:
        num_m = 1
    else:
        shuffles = vec // e
        if cfg["tile_m"] % (tm * wm) or cfg["tile_m"] % shuffles:
            return True  # the static_assert of shuffle_tile_tuple
        num_m = min(shuffles, cfg["tile_m"] // (tm * wm))
    m_val, n_val = tm * wm * num_m, tn * wn
    if cfg["tile_m"] % m_val or cfg["tile_n"] % n_val:
        m_val, n_val = tm * wm, tn * wn
    block = warp * wm * wn
    if wm * wn < cfg["num_wave_groups"]:
        return True  # Y0 = 0: Y2 = YPerTile / (Y1 * Y0) divides by zero
    return pattern_fails(block, m_val, n_val, vec, warp, cfg["num_wave_groups"], "2025.11")


@settings(max_examples=400, deadline=None, derandomize=True)
@given(arch=st.sampled_from(sorted(WARP_SIZE)), tile_m=st.sampled_from([16, 32, 48, 64, 96, 128, 192, 224, 256]),
       tile_n=st.sampled_from([16, 32, 48, 64, 96, 128, 192, 256]),
       waves=st.sampled_from([(1, 1, 1), (1, 2, 1), (2, 1, 1), (2, 2, 1), (1, 4, 1), (4, 1, 1), (2, 1, 2), (1, 1, 2)]),
       warp_tile=st.sampled_from([(16, 16, 16), (32, 32, 8), (16, 16, 32), (32, 32, 16), (4, 64, 16), (64, 4, 16)]),
       vec_c=st.sampled_from([1, 2, 4, 8, 16]), groups=st.sampled_from([1, 2, 4]))
def test_the_c_store_rule_rejects_what_the_epilogue_asserts_reject(arch, tile_m, tile_n, waves, warp_tile, vec_c,
                                                                    groups):
    cfg = {**BASE, "tile_m": tile_m, "tile_n": tile_n, "wave_m": waves[0], "wave_n": waves[1], "wave_k": waves[2],
           "warp_tile_m": warp_tile[0], "warp_tile_n": warp_tile[1], "warp_tile_k": warp_tile[2], "vec_c": vec_c,
           "num_wave_groups": groups}
    assert rules_reject(cfg, arch, ("ck-api-2025.11.cshuffle-store",), LOADS_2025) == cshuffle_store_fails(cfg, arch), cfg


# ---- the register transposes of the backward GEMMs ----------------------------------------------------------------
TRANSPOSES = ("ck-api-2025.11.transpose-vector-a", "ck-api-2025.11.transpose-vector-b",
              "ck-api-2025.11.transpose-wave-groups-a", "ck-api-2025.11.transpose-wave-groups-b")
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def global_vector_load(x: int, per_thread: int, size: int) -> int:
    """UniversalGemmBasePolicy::GetGlobalVectorLoadSize (gemm_universal_pipeline_ag_bg_cr_policy.hpp:351-392 of
    amd-aiter 0.1.7.post2.dev18) for a type of `size` bytes (PackedSize 1): 16 bytes, 8 bytes, then 4 and 2 bytes only
    for a type at least that wide, else one element; each must divide the tile's contiguous side and the elements per
    thread."""
    for width in (16, 8, 4, 2):
        if width in (4, 2) and size < width:
            continue
        n = width // size
        if x % n == 0 and per_thread % n == 0:
            return n
    return 1


def encoding(block: int, y: int, x: int, vec: int, warp: int, groups: int, shuffled: bool):
    """tile_distribution_encoding_pattern_2d<block, y, x, vec, thread_raked, groups> (static_encoding_pattern.hpp
    :131-207): (R lengths, H lengths per dimension, the Ys as (H major, H minor))."""
    x1 = min(vec, x * y // block)
    x0 = x // x1
    y1 = warp // x0
    y0 = block // warp // groups
    y2 = y // (y1 * y0)
    if groups != 1:
        hs = ((x0, x1), (y1, y2)) if shuffled else ((y1, y2), (x0, x1))
        return (y0,), hs, ((1, 1), (2, 1))
    if shuffled:
        return (1,), ((x0, x1), (y0, y1, y2)), ((1, 1), (2, 2))
    return (1,), ((y0, y1, y2), (x0, x1)), ((1, 2), (2, 1))


def transpose_fails(src, dst, revision: str) -> bool:
    """Whether transpose_tile2d(dst, src) fails to compile (ck_tile/core/tensor/transpose_tile.hpp: 2025.11 of
    amd-aiter 0.1.7.post2.dev18, lines 23-240; the newest of ROCm/rocm-libraries maps the Ys by reversal)."""
    (rs_in, hs_in, ys_in), (rs_out, hs_out, ys_out) = src, dst
    len_in = [hs_in[major - 1][minor] for major, minor in ys_in]
    len_out = [hs_out[major - 1][minor] for major, minor in ys_out]
    if rs_in != rs_out or hs_in != tuple(reversed(hs_out)) or len_in != list(reversed(len_out)):
        return True  # the H lengths must be each other's reverse (line 228: no operator== for unequal types)
    ndim = len(ys_in)
    if revision == "2025.11":
        minor_to_y_in = {minor: i for i, (_, minor) in enumerate(ys_in)}  # a later Y overwrites an earlier one
        minor_to_y_out = {minor: i for i, (_, minor) in enumerate(ys_out)}
        out_to_in = {y_out: minor_to_y_in[minor] for minor, y_out in minor_to_y_out.items()}
    else:
        out_to_in = {i: ndim - 1 - i for i in range(ndim)}
    dim_in, dim_out = ndim - 1, out_to_in[ndim - 1]
    vec_in, vec_out = len_in[dim_in], len_in[dim_out]

    def offset(idx):  # the packed thread buffer of the Ys (get_ys_to_d_descriptor)
        off = 0
        for i, length in zip(idx, len_in):
            off = off * length + i
        return off

    per_access = [1 if vec_in == 1 else (len_in[i] if i in (dim_in, dim_out) else 1) for i in range(ndim)]
    starts = [()]
    for length, step in zip(len_in, per_access):
        starts = [s + (i,) for s in starts for i in range(0, length, step)]
    for start in starts:
        if vec_out == 1 or vec_in == 1:
            if offset(start) % vec_in:
                return True  # line 115
            continue
        for i in range(vec_out):  # the input vectors along the output's vector dimension (line 160)
            idx = list(start)
            idx[dim_out] += i
            if offset(idx) % vec_in:
                return True
    return False


def transposes_fail(cfg: dict, arch: str) -> bool:
    """Whether a backward GEMM's register transposes fail in CK Tile 2025.11: A column-major (bwd_weight) and B
    row-major (bwd_data, bwd_weight) are loaded with the config's vectors (FixedVectorSize) and transposed into the
    policy's MakeShuffledA/BRegTileDistribution (GetVectorSizeA/B), by every pipeline but those reading transposed
    from LDS (gfx950's is_a/b_load_tr: compv3, compv4, compv6 and mem; compv1, basic_v1 and compv5 never do)."""
    if cfg["variant"] not in ("bwd_data", "bwd_weight"):
        return False
    if cfg["pipeline"] not in ("compv1", "basic_v1", "compv5") and (
            arch == "gfx950" or cfg["pipeline"] not in ("compv3", "compv4", "compv6", "mem")):
        return False
    warp = WARP_SIZE[arch]
    block = warp * cfg["wave_m"] * cfg["wave_n"] * cfg["wave_k"]
    size = ELEM_BYTES[cfg["dtype"]]
    k, groups = cfg["tile_k"], cfg["num_wave_groups"]
    operands = [(cfg["tile_n"], cfg["vec_b"])] + ([(cfg["tile_m"], cfg["vec_a"])] if cfg["variant"] == "bwd_weight"
                                                   else [])
    for x, vec in operands:
        own = global_vector_load(x, x * k // block, size)
        if pattern_fails(block, k, x, own, warp, groups, "2025.11"):
            return True  # the shuffled distribution itself does not compile
        if transpose_fails(encoding(block, k, x, vec, warp, groups, False),
                           encoding(block, k, x, own, warp, groups, True), "2025.11"):
            return True
    return False


@settings(max_examples=600, deadline=None, derandomize=True)
@given(arch=st.sampled_from(sorted(WARP_SIZE)), variant=st.sampled_from(["bwd_data", "bwd_weight"]),
       dtype=st.sampled_from(["fp16", "bf16", "fp32"]),
       pipeline=st.sampled_from(["compv1", "basic_v1", "compv3", "compv4", "compv5", "mem"]),
       tile_m=st.sampled_from([16, 32, 48, 64, 80, 96, 128, 192, 256]),
       tile_n=st.sampled_from([16, 32, 48, 64, 80, 96, 128, 192, 256]),
       tile_k=st.sampled_from([8, 16, 24, 32, 48, 64, 96, 128]),
       waves=st.sampled_from([(1, 1, 1), (1, 2, 1), (2, 1, 1), (2, 2, 1), (1, 4, 1), (4, 1, 1), (2, 1, 2), (4, 2, 1)]),
       vec_a=st.sampled_from([1, 2, 4, 8, 16]), vec_b=st.sampled_from([1, 2, 4, 8, 16]),
       groups=st.sampled_from([1, 1, 2, 4]))
def test_the_transpose_rules_reject_what_transpose_tile_rejects(arch, variant, dtype, pipeline, tile_m, tile_n, tile_k,
                                                                waves, vec_a, vec_b, groups):
    cfg = {**BASE, "variant": variant, "dtype": dtype, "pipeline": pipeline, "tile_m": tile_m, "tile_n": tile_n,
           "tile_k": tile_k, "wave_m": waves[0], "wave_n": waves[1], "wave_k": waves[2], "vec_a": vec_a,
           "vec_b": vec_b, "num_wave_groups": groups}
    if waves[0] * waves[1] * waves[2] < groups or loads_fail(cfg, arch, "2025.11"):
        return  # the load pattern itself does not compile: the load rules' case
    assert rules_reject(cfg, arch, TRANSPOSES, LOADS_2025) == transposes_fail(cfg, arch), cfg


def test_the_transpose_oracle_matches_the_compiler():
    """The oracle against the audit's compiled kernels (scripts/data/audit-2026-11-27.json): each kernel that failed
    in transpose_tile.hpp fails in the oracle, each that built passes it (and the rules agree)."""
    rounds = json.loads((REPO / "scripts" / "data" / "audit-2026-11-27.json").read_text())["rounds"]
    seen = {"failed": 0, "ok": 0}
    for arch_rows in rounds.values():
        for arch, rows in arch_rows.items():
            for name, row in rows["kernels"].items():
                cfg = parse_name(name)
                if cfg["variant"] not in ("bwd_data", "bwd_weight") or loads_fail(cfg, arch, "2025.11"):
                    continue
                failed_here = "transpose_tile.hpp" in (row.get("error") or "")
                if row["status"] == "ok" or failed_here:
                    assert transposes_fail(cfg, arch) == failed_here, (arch, name)
                    assert rules_reject(cfg, arch, TRANSPOSES, LOADS_2025 + ",-ck-curation") == failed_here, (arch, name)
                    seen["failed" if failed_here else "ok"] += 1
    assert seen["failed"] >= 40 and seen["ok"] >= 10, seen


def test_the_newest_revisions_cover_rules_reject_kernels_that_built_with_2025_11():
    """Why a/b-load-cover are ck-api-2026.06's and not the pipeline family's: CK Tile 2025.11 has no such assert,
    and kernels that break them built with it (round 6 of the audit, clang 22, CK Tile 2025.11): where X1 is the
    elements per thread, below vec, X0 · X1 falls short of the side and 2025.11 compiles the load all the same."""
    rounds = json.loads((REPO / "scripts" / "data" / "audit-2026-11-27.json").read_text())["rounds"]
    built = []
    for arch, kernels in rounds["6"].items():
        for name, row in kernels["kernels"].items():
            cfg = parse_name(name)
            if row["status"] == "ok" and rules_reject(cfg, arch, REV_2026, "full,-ck-curation"):
                assert loads_fail(cfg, arch, "newest") and not loads_fail(cfg, arch, "2025.11"), name
                built.append(name)
    assert len(built) >= 5, built
