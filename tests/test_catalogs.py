"""CK's rule sets as catalogs on the real kernel space (spec 7, 12): full, ck-default and ck-rdna.

The oracles are independent procedural re-implementations of CK's generators (tests/reference/ck_default.py,
ck_rdna.py and ck_full.py): every catalog equals its reference on every arch, less the reference kernels that break a
hardware fact (family `arch`), each of which is named here; ckspace generates nothing CK does not.
"""

from __future__ import annotations

import functools

import pytest

from ckspace import Space
from ckspace.cli import main
from ckspace.rules.check import domain_verdicts, rule_verdicts
from ckspace.rules.names import format_name, parse_name
from ckspace.solve.kernels import KernelSpace

try:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from reference import ck_default, ck_full, ck_rdna
except ImportError:  # pragma: no cover
    from tests.reference import ck_default, ck_full, ck_rdna  # type: ignore[no-redef]

ARCHS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1201", "gfx1250")
REFERENCE = {"ck-default": ck_default.names, "ck-rdna": ck_rdna.names}

# What ckspace lists per arch (README's catalog table), checked below against the reference minus the kernels that
# break a hardware fact.
EXPECTED = {
    "ck-default": {"gfx90a": 278, "gfx942": 278, "gfx950": 352, "gfx1100": 0, "gfx1200": 0, "gfx1201": 0,
                   "gfx1250": 96},
    "ck-rdna": {"gfx90a": 0, "gfx942": 0, "gfx950": 0, "gfx1100": 16, "gfx1200": 16, "gfx1201": 16, "gfx1250": 0},
}
# The reference's counts (spec 7, 12.5, 12.7), before ckspace's hardware facts.
CK_COUNTS = {
    "ck-default": {"gfx90a": 372, "gfx942": 372, "gfx950": 456, "gfx1100": 0, "gfx1200": 0, "gfx1201": 0, "gfx1250": 288},
    "ck-rdna": {"gfx90a": 0, "gfx942": 0, "gfx950": 0, "gfx1100": 16, "gfx1200": 16, "gfx1201": 16, "gfx1250": 0},
}


@functools.lru_cache(maxsize=None)
def listed(catalog: str, arch: str) -> tuple[str, ...]:
    return tuple(c["name"] for c in KernelSpace(arch=arch, catalog=catalog).enumerate())


@functools.lru_cache(maxsize=None)
def open_space(arch: str) -> KernelSpace:
    return KernelSpace(arch=arch, rules="-ck-curation")


def hardware_breaks(arch: str, name: str) -> list[str]:
    """The rules of the open space (facts) a name breaks on an arch."""
    model = open_space(arch).model
    cfg = parse_name(name)
    return [v.rule for v in domain_verdicts(model, cfg) + rule_verdicts(model, cfg) if v.enabled]


@pytest.mark.parametrize("catalog", sorted(REFERENCE))
@pytest.mark.parametrize("arch", ARCHS)
def test_catalog_is_the_reference_less_hardware_exceptions(catalog: str, arch: str) -> None:
    reference = set(REFERENCE[catalog](arch))
    assert len(reference) == CK_COUNTS[catalog][arch]
    mine = listed(catalog, arch)
    assert list(mine) == sorted(mine) and len(set(mine)) == len(mine)
    assert set(mine) <= reference  # nothing CK does not generate
    for name in sorted(reference - set(mine)):  # each exception breaks a hardware fact, and only facts
        broken = hardware_breaks(arch, name)
        assert broken and all(r.startswith("arch.") for r in broken), (name, broken)
    for name in mine:  # and every listed kernel is valid in the open space
        assert not hardware_breaks(arch, name), name
    assert len(mine) == EXPECTED[catalog][arch]


def test_ck_default_exceptions_are_fp32_warp_tiles_and_lds_on_gfx9() -> None:
    """README: on gfx9 the dropped ck-default kernels are the fp32 ones whose warp tile has no fp32 MFMA, and (64 KiB
    LDS on gfx90a/gfx942) the compv4 kernels whose doubled tile_k and double buffer need 128 KiB."""
    expected = {"gfx90a": (76, 24), "gfx942": (76, 24), "gfx950": (104, 4)}  # kernels breaking (warp tile, LDS)
    for arch, (warp, lds) in expected.items():
        dropped = set(ck_default.names(arch)) - set(listed("ck-default", arch))
        broken = {n: hardware_breaks(arch, n) for n in dropped}
        assert all(set(b) <= {"arch.warp-tile", "arch.lds-capacity"} and b for b in broken.values())
        assert all(parse_name(n)["dtype"] == "fp32" for n, b in broken.items() if "arch.warp-tile" in b)
        assert all(parse_name(n)["pipeline"] == "compv4" for n, b in broken.items() if "arch.lds-capacity" in b)
        assert (sum("arch.warp-tile" in b for b in broken.values()), sum("arch.lds-capacity" in b for b in broken.values())) == (warp, lds)


@pytest.mark.parametrize("arch", ("gfx942", "gfx950"))
def test_full_is_unchanged(arch: str) -> None:
    assert set(listed("full", arch)) == {c["name"] for c in ck_full.full_configs(arch)}
    assert len(listed("full", arch)) == 14_048
    assert listed("ck-full", arch) == listed("full", arch)  # the alias


def test_names_round_trip_for_every_catalog() -> None:
    for catalog in ("full", "ck-default", "ck-rdna"):
        for arch in ARCHS:
            for name in listed(catalog, arch):
                assert format_name(parse_name(name)) == name
    for arch in ARCHS:
        for name in (*ck_default.names(arch), *ck_rdna.names(arch)):
            assert format_name(parse_name(name)) == name


def test_rdna_spells_3d_layouts_ndhwgc_and_both_spellings_are_one_kernel() -> None:
    names = listed("ck-rdna", "gfx1201")
    assert all(("_ndhwgc_3d_" in n) == ("_3d_" in n) for n in names)
    space = Space(arch="gfx1201", catalog="ck-rdna")
    for name in names:
        assert space.check(name) == [] and space.check(name.replace("_ndhwgc_", "_nhwgc_")) == []
    two_d = next(n for n in names if "_2d_" in n)
    assert [v.rule for v in space.check(two_d.replace("_nhwgc_2d_", "_ndhwgc_2d_"))] == ["model.derived-layout"]


def test_open_space_rules_are_facts_that_were_there_before() -> None:
    """No kernel the open space accepted before warp_tile_k became free is rejected now: every rule of the open
    space existed before (5b4c890) with the same ids; the WMMA checks left the facts for CK's curation, and so did
    arch.wave-layout (CK's WARP_SUPPORTED_COMBINATIONS, now ck.wave-layout). Its one new rule, arch.workgroup-size
    (at most 1024 threads), is weaker than the wave-layout rule it replaced: every layout of CK's table fits."""
    before = {
        "arch.wave-layout", "arch.workgroup-size", "arch.warp-tile", "arch.tile-m-divisible", "arch.tile-n-divisible", "arch.tile-k-divisible",
        "arch.a-tile-threads", "arch.b-tile-threads", "arch.vec-a-width", "arch.vec-b-width", "arch.vec-c-width",
        "arch.vec-a-per-thread", "arch.vec-b-per-thread", "arch.vec-c-tile-n", "arch.lds-capacity",
        "arch.wmma-warp-tile-k", "arch.wmma-k-per-block", "arch.wmma-warp-tile-m", "arch.wmma-streamk",
        "model.derived-warp_tile_k", "model.derived-layout",
    }
    model = open_space("gfx950").model
    now = {r.id for r in model.rules if r.family in ("arch", "model")}
    assert now <= before
    assert {"arch.wmma-warp-tile-k", "model.derived-warp_tile_k", "arch.wave-layout"}.isdisjoint(now)
    for arch in ARCHS:  # arch.workgroup-size rejects no layout arch.wave-layout accepted
        facts = open_space(arch).model.data.archs[arch]
        assert all(facts["warp_size"] * m * n * k <= 1024 for m, n, k in facts["wave_layouts"]), arch


def test_explain_lists_catalog_membership(capsys) -> None:
    rdna = listed("ck-rdna", "gfx1201")[0]
    assert main(["explain", rdna, "--arch", "gfx1201", "--neighbours", "0"]) == 1  # not in full
    out = capsys.readouterr().out
    assert "ck-rdna ✓" in out and "full ✗" in out and "ck-default ✗" in out
    default = listed("ck-default", "gfx950")[0]
    main(["explain", default, "--neighbours", "0"])
    assert "ck-default ✓" in capsys.readouterr().out


def test_set_options(capsys) -> None:
    assert main(["enumerate", "--arch", "gfx950", "--set", "ck-default", "--count", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()[1:]
    assert sum(int(r.split(",")[3]) for r in rows) == 352  # variant,ndim,dtype,count,cpp
    assert main(["enumerate", "--arch", "gfx950", "--set", "ck-nope"]) == 2
    assert ("choices: full, ck-full, ck-default, ck-rdna, ck-profiler, ck-tests, tests, tiny, ck-full-tests, ck-tiny"
            in capsys.readouterr().err)
    assert main(["enumerate", "--arch", "gfx950", "--set", "ck-default", "--over", "full"]) == 2
    assert "--over applies to" in capsys.readouterr().err
