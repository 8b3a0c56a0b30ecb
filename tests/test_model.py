"""The model against the spec: fidelity to CK's reference, and the plain-Python check as an independent oracle."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from ckspace import Space
from ckspace.rules import data as D
from ckspace.rules.check import breaks, domain_violations, is_valid, violations
from ckspace.rules.model import Model, resolve_families
from ckspace.rules.names import format_name, parse_name
from conftest import full_set
from reference.ck_full import arch_filter_ok, ck_known_issue, full_configs

# Spec "Kernels of full per (variant, ndim, dtype) on gfx950 (and gfx942)".
SPEC_COUNTS = {
    ("forward", 2): (659, 659, 320), ("forward", 3): (649, 649, 320),
    ("forward_depthwise", 2): (20, 20, 20),
    ("bwd_data", 2): (124, 124, 84), ("bwd_data", 3): (104, 104, 84),
    ("bwd_weight", 2): (2404, 2404, 258), ("bwd_weight", 3): (2392, 2392, 258),
}


@pytest.mark.parametrize("arch", ["gfx950", "gfx942"])
def test_full_is_ck_reference_exactly(arch: str) -> None:
    mine = [k["name"] for k in full_set(arch)]
    reference = sorted(c["name"] for c in full_configs(arch))
    assert len(mine) == 14048
    assert mine == reference  # same names, sorted, no duplicates


def test_per_stratum_counts_match_spec_table() -> None:
    counts = Counter((k["variant"], k["ndim"], k["dtype"]) for k in full_set("gfx950"))
    for (variant, ndim), per_dtype in SPEC_COUNTS.items():
        for dtype, expected in zip(("fp16", "bf16", "fp32"), per_dtype):
            assert counts[(variant, ndim, dtype)] == expected, (variant, ndim, dtype)
    assert sum(1 for k in full_set("gfx950") if k["variant"] == "forward_depthwise") == 60


def test_every_kernel_passes_every_plain_check() -> None:
    data = D.load()
    model = Model(data, "gfx950", resolve_families(data, None))
    bad = [k["name"] for k in full_set("gfx950") if not is_valid(model, k)]
    assert bad == []


def test_every_name_round_trips_and_parses_to_the_same_fields() -> None:
    for k in full_set("gfx950"):
        parsed = parse_name(k["name"])
        assert format_name(parsed) == k["name"]
        assert {f: k[f] for f in parsed if f != "kind"} == {f: v for f, v in parsed.items() if f != "kind"}


def test_archfilter_family_reproduces_ck_cli_cut() -> None:
    names = {k["name"] for k in full_set("gfx950", "+ck-archfilter")}
    expected = {c["name"] for c in full_configs("gfx950") if arch_filter_ok(c, "gfx950")}
    assert len(names) == 7332
    assert names == expected


def test_known_issues_family_drops_exactly_the_known_bad_configs() -> None:
    names = {k["name"] for k in full_set("gfx950", "+ck-known-issues")}
    reference = full_configs("gfx950")
    expected = {c["name"] for c in reference if ck_known_issue(c) is None}
    assert Counter(ck_known_issue(c) for c in reference) == Counter({None: 14048 - 816 - 128, "11.5": 816, "11.6": 128})
    assert names == expected


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1201"])
def test_policy_archs_are_reference_minus_hardware_violations(arch: str) -> None:
    """On gfx90a and gfx1201 ckspace = CK's full minus the kernels that break an arch fact (spec policy)."""
    data = D.load()
    model = Model(data, arch, resolve_families(data, None))
    reference = {c["name"]: c for c in full_configs(arch)}
    mine = {k["name"] for k in full_set(arch)}
    assert mine <= set(reference)
    for name in set(reference) - mine:
        fired = {v.family for v in violations(model, reference[name])} | ({"model"} if domain_violations(model, reference[name]) else set())
        assert fired & {"arch", "model"}, (name, fired)  # each dropped kernel breaks a hardware fact


# ---- the oracle: solver enumeration == plain-Python filter of the Cartesian product ----------------------------

SUBSPACES = [
    # (arch, families, pinned fields, free fields)
    ("gfx950", "-ck-curation", dict(variant="forward", ndim=2, dtype="fp16", tile_m=64, tile_n=128, tile_k=32,
                                    pipeline="compv3", epilogue="cshuffle", scheduler="intrawave", vec_b=8, vec_c=8,
                                    specialization="default", num_wave_groups=1, num_groups_to_merge=1,
                                    two_stage=False, explicit_gemm=False, streamk="none", streamk_persistent=False,
                                    split_image=False, pad_m=True, pad_n=True, pad_k=True, double_smem_buffer=False),
     ("wave_m", "wave_n", "wave_k", "warp_tile_m", "warp_tile_n", "warp_tile_k", "vec_a")),
    ("gfx942", "-ck-curation", dict(variant="bwd_weight", ndim=3, dtype="fp32", tile_m=32, tile_n=64, tile_k=16,
                                    epilogue="cshuffle", wave_k=1, warp_tile_m=16, warp_tile_n=16, vec_a=4, vec_b=4,
                                    specialization="default", num_wave_groups=1, num_groups_to_merge=1,
                                    explicit_gemm=False, split_image=False, pad_m=True, pad_n=True, pad_k=True),
     ("pipeline", "scheduler", "double_smem_buffer", "wave_m", "wave_n", "warp_tile_k", "vec_c", "streamk",
      "streamk_persistent", "two_stage")),
    ("gfx950", None, dict(variant="bwd_weight", ndim=2, dtype="bf16", epilogue="cshuffle", wave_k=1,
                          specialization="default", num_wave_groups=1, explicit_gemm=False, split_image=False,
                          pad_m=True, pad_n=True, pad_k=True, streamk="none", streamk_persistent=False, two_stage=False,
                          num_groups_to_merge=1, tile_m=64, tile_n=64, tile_k=64, warp_tile_k=32, vec_c=4),
     ("pipeline", "scheduler", "double_smem_buffer", "wave_m", "wave_n", "warp_tile_m", "warp_tile_n", "vec_a", "vec_b")),
    ("gfx1250", "-ck-curation", dict(variant="forward", ndim=2, dtype="fp16", pipeline="compv1", epilogue="cshuffle",
                                     scheduler="intrawave", specialization="default", num_wave_groups=1,
                                     num_groups_to_merge=1, two_stage=False, explicit_gemm=False, streamk="none",
                                     streamk_persistent=False, split_image=False, pad_m=True, pad_n=True, pad_k=True,
                                     double_smem_buffer=False, warp_tile_m=16, warp_tile_n=16, vec_a=8, vec_b=8, vec_c=8,
                                     wave_k=1, tile_m=64),
     ("tile_n", "tile_k", "wave_m", "wave_n", "warp_tile_k")),
]


def _where(pinned: dict) -> str:
    parts = []
    for k, v in pinned.items():
        if k in ("variant", "ndim", "dtype"):
            continue
        parts.append(f"{k} == {v!r}" if not isinstance(v, bool) else (k if v else f"not {k}"))
    return " and ".join(parts)


@pytest.mark.slow
@pytest.mark.parametrize("arch,rules,pinned,free", SUBSPACES, ids=[f"{s[0]}-{s[2]['variant']}" for s in SUBSPACES])
def test_solver_equals_plain_filter_of_cartesian_product(arch, rules, pinned, free) -> None:
    space = Space(arch=arch, rules=rules, use_cache=False)
    solved = {k["name"] for k in space.enumerate(variant=pinned["variant"], ndim=pinned["ndim"], dtype=pinned["dtype"], where=_where(pinned))}
    fields = space.data.fields
    domains = [fields[f].values for f in free]
    expected = set()
    for combo in itertools.product(*domains):
        cfg = {**pinned, **dict(zip(free, combo)), "layout": "nhwgc"}
        if is_valid(space.model, cfg):
            expected.add(format_name(cfg))
    assert solved == expected
    assert expected, "the sub-space should not be empty, or the test proves nothing"


def test_open_space_is_larger_than_curated_and_contains_it() -> None:
    curated = Space(arch="gfx950").count(variant="forward", ndim=2, dtype="fp16", where="tile_m == 64 and tile_n == 64 and tile_k == 32")
    opened = Space(arch="gfx950", rules="-ck-curation").count(variant="forward", ndim=2, dtype="fp16", where="tile_m == 64 and tile_n == 64 and tile_k == 32 and num_wave_groups == 1 and not split_image and num_groups_to_merge == 1 and pad_m and pad_n and pad_k and epilogue == 'cshuffle'")
    assert sum(opened.values()) > sum(curated.values()) > 0


def test_where_is_a_solver_constraint_and_matches_post_filter() -> None:
    where = "tile_n >= 128 and pipeline == 'compv3'"
    got = [k["name"] for k in Space(arch="gfx950", use_cache=False).enumerate(where=where)]
    expected = [k["name"] for k in full_set("gfx950") if k.get("tile_n", 0) >= 128 and k.get("pipeline") == "compv3"]
    assert got == expected and got


def test_a_rule_breaks_only_where_its_condition_holds() -> None:
    data = D.load()
    model = Model(data, "gfx950", resolve_families(data, None))
    rule = next(r for r in data.rules if r.id == "pipeline.compv6-a-coverage")
    kernel = parse_name("grouped_conv_bwd_weight_fp16_nhwgc_2d_compv6_cshuffle_intrawave_16x16x32_1x1x1_16x16x32_vec1_1_2")
    assert not breaks(rule, kernel, model)  # 16*32 = 512 >= 64*1
    assert breaks(rule, {**kernel, "vec_a": 16}, model)  # 512 < 64*16


def test_gfx1201_gemm_kernels_are_wmma_16x16x16_in_the_open_space_and_none_in_full() -> None:
    """Spec 11.2 and 12.3: full has no GEMM kernel on gfx1201 (CK's check_wmma_instance wants k >= 32, and gfx1201's
    f16/bf16 WMMA is 16x16x16); that check is CK curation, so the open space holds 16x16x16 GEMM kernels."""
    where = ("tile_m == 64 and tile_n == 64 and vec_a == 8 and vec_b == 8 and vec_c == 8 and "
             "specialization == 'default' and num_groups_to_merge == 1")
    full = Space(arch="gfx1201").count(where=where)
    assert sum(n for s, n in full.items() if s.variant != "forward_depthwise") == 0
    space = Space(arch="gfx1201", rules="-ck-curation")
    opened = space.count(where=where)
    assert sum(n for s, n in opened.items() if s.variant != "forward_depthwise" and s.dtype != "fp32") > 0
    assert sum(n for s, n in opened.items() if s.dtype == "fp32" and s.variant != "forward_depthwise") == 0
    other = space.count(where=where + " and not (warp_tile_m == 16 and warp_tile_n == 16 and warp_tile_k == 16)")
    assert sum(n for s, n in other.items() if s.variant != "forward_depthwise") == 0