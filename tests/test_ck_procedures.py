"""CK's generation order of `full` and its `full-tests` / `tiny` procedures (spec 3.1, 5, 6) over ckspace's `full`.

Expected values come from the spec's figures or from the independent oracle (tests/reference: ck_full generates CK's
`full` in CK's order with CK's loops; ck_subsets applies CK's procedures), never from the code under test.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from typing import Any

import pytest

from ckspace import Space
from ckspace.errors import DataError, UsageError
from ckspace.rules import data as D
from ckspace.select.ckorder import CkOrder, ck_sorted
from ckspace.select import ckprocedures
from ckspace.select.ckprocedures import ck_full_tests, ck_subset, ck_tiny, members_of
from ckspace.select.sets import procedure_configs
from conftest import full_set

try:  # tests/ is not a package: pytest puts tests/ itself on sys.path (rootdir-relative import as a fallback)
    from reference import ck_full, ck_subsets
    from reference.ck_common import warp_tiles, wave_combos
except ImportError:  # pragma: no cover
    from tests.reference import ck_full, ck_subsets  # type: ignore[no-redef]
    from tests.reference.ck_common import warp_tiles, wave_combos  # type: ignore[no-redef]

Config = dict[str, Any]
SAME = ("gfx942", "gfx950")  # ckspace's full and CK's have the same names there (spec 11)
FALLBACK = ("gfx90a", "gfx1201")  # CK's fallback path yields kernels that break hardware facts (spec 11, 12)

# Spec 6: tiny per category on gfx942/gfx950.
TINY_SPLIT = {"regular": 6, "split_image": 6, "merged_groups": 6, "depthwise": 3, "explicit_gemm": 4, "two_stage": 4,
              "streamk": 6}

# Figures computed by the oracle (ck_subsets over ck_full), for the README: CK's procedure over CK's own list, and
# over the list ckspace calls `full` (CK's list without the kernels that break a hardware fact, in CK's order).
# gfx90a: the fallback's 4x64/64x4 warp tiles and six half 16x16x8 ones are no MFMA of the arch, so 2,610 kernels go
# and the every-fifth ranks shift. gfx1201: its only WMMA tile is 16x16x16 and CK builds 16x16x32, so no GEMM kernel
# stays; only the 60 depthwise ones do, three (category, ndim) groups, so tiny's round-robin fill runs (to 10).
FIGURES = {
    "gfx90a": {"ck": (13_188, 2_634, 35), "ckspace": (10_578, 2_108, 35)},
    "gfx1201": {"ck": (6_856, 1_368, 23), "ckspace": (60, 12, 10)},
}


@functools.lru_cache(maxsize=None)
def oracle_full(arch: str) -> tuple[Config, ...]:
    return tuple(ck_full.full_configs(arch))


@functools.lru_cache(maxsize=None)
def oracle_full_tests(arch: str) -> tuple[Config, ...]:
    return tuple(ck_subsets.full_tests(list(oracle_full(arch))))


@functools.lru_cache(maxsize=None)
def oracle_tiny(arch: str) -> tuple[Config, ...]:
    return tuple(ck_subsets.tiny(list(oracle_full_tests(arch))))


@functools.lru_cache(maxsize=None)
def oracle_hardware_full(arch: str) -> tuple[Config, ...]:
    """CK's list without the GEMM kernels whose warp tile (m, n, k) or wave layout the arch lacks (spec 11's policy),
    computed with the oracle's own arch tables."""
    return tuple(c for c in oracle_full(arch) if c["kind"] == "depthwise" or (
        (c["warp_tile_m"], c["warp_tile_n"], c["warp_tile_k"]) in warp_tiles(arch, c["dtype"])
        and (c["wave_m"], c["wave_n"], c["wave_k"]) in (wave_combos(arch) or ())))


@functools.lru_cache(maxsize=1)
def data() -> D.DataSet:
    return D.load()


@functools.lru_cache(maxsize=None)
def ck_ordered(arch: str) -> tuple[Config, ...]:
    return tuple(ck_sorted(list(full_set(arch)), data(), arch))


def names(configs: Any) -> list[str]:
    return [str(c["name"]) for c in configs]


@pytest.mark.parametrize("arch", SAME)
def test_ck_order_of_full_is_the_oracles_generation_order(arch: str) -> None:
    assert names(ck_ordered(arch)) == names(oracle_full(arch))


@pytest.mark.parametrize("arch", FALLBACK)
def test_ck_order_on_fallback_archs_is_the_oracles_order_of_the_same_kernels(arch: str) -> None:
    """The fallback pairs of gfx90a follow tile_math's order; ckspace's full is CK's without the hardware breaks."""
    assert names(ck_ordered(arch)) == names(oracle_hardware_full(arch))


@pytest.mark.parametrize("arch", SAME)
def test_full_tests_and_tiny_are_the_oracles(arch: str) -> None:
    full_tests = ck_full_tests(list(ck_ordered(arch)))
    tiny = ck_tiny(full_tests)
    assert (len(full_tests), len(tiny)) == (2_805, 35)  # spec 5 and 6
    assert Counter(ck_subsets.category(c).split(":")[0] for c in oracle_tiny(arch)) == TINY_SPLIT
    assert Counter(c["variant"] for c in tiny)["bwd_data"] == 0  # spec 6: tiny never holds a bwd_data kernel
    assert names(full_tests) == names(oracle_full_tests(arch))
    assert names(tiny) == names(oracle_tiny(arch))


@pytest.mark.parametrize("arch", FALLBACK)
def test_procedures_on_fallback_archs(arch: str) -> None:
    ck = oracle_full(arch)
    ck_tests = ck_subsets.full_tests(list(ck))
    assert (len(ck), len(ck_tests), len(ck_subsets.tiny(ck_tests))) == FIGURES[arch]["ck"]
    hw = oracle_hardware_full(arch)
    hw_tests = ck_subsets.full_tests(list(hw))
    hw_tiny = ck_subsets.tiny(hw_tests)
    assert (len(hw), len(hw_tests), len(hw_tiny)) == FIGURES[arch]["ckspace"]
    full_tests = ck_full_tests(list(ck_ordered(arch)))
    assert names(full_tests) == names(hw_tests)
    assert names(ck_tiny(full_tests)) == names(hw_tiny)


@pytest.mark.parametrize("arch", (*SAME, *FALLBACK))
def test_part_of_full_decides_the_members_of_one_variant_and_dtype(arch: str) -> None:
    """members_of (what explain of one name computes) against the oracle's sets, per (variant, dtype), per dtype and
    per (variant, ndim, dtype); its tiny part is None only where the kernels it read have fewer than ten (category,
    ndim) groups."""
    source = oracle_full(arch) if arch in SAME else oracle_hardware_full(arch)
    full_tests = ck_subsets.full_tests(list(source))
    tiny = ck_subsets.tiny(full_tests)
    space = Space(arch=arch)
    for dtype in ("fp16", "bf16", "fp32"):
        for variant in ("forward", "forward_depthwise", "bwd_data", "bwd_weight", None):
            def mine(configs: Any) -> set[str]:
                return {c["name"] for c in configs if c["dtype"] == dtype and variant in (None, c["variant"])}

            got_tests, got_tiny = members_of(space, variant, dtype)
            assert mine(c for c in source if c["name"] in got_tests) == mine(full_tests), (variant, dtype)
            if got_tiny is not None:
                assert mine(c for c in source if c["name"] in got_tiny) == mine(tiny), (variant, dtype)
            elif variant is None:  # the whole dtype leaves tiny open only when its own groups are fewer than ten
                assert len({(ck_subsets.category(c), c["ndim"]) for c in full_tests if c["dtype"] == dtype}) < 10
        for variant, ndim in itertools.product(("forward", "bwd_data", "bwd_weight"), (2, 3)):
            def of_stratum(configs: Any) -> set[str]:
                return {c["name"] for c in configs
                        if (c["dtype"], c["variant"], c["ndim"]) == (dtype, variant, ndim)}

            got_tests, got_tiny = members_of(space, variant, dtype, ndim)
            assert of_stratum(c for c in source if c["name"] in got_tests) == of_stratum(full_tests), \
                (variant, ndim, dtype)
            if got_tiny is not None:
                assert of_stratum(c for c in source if c["name"] in got_tiny) == of_stratum(tiny), \
                    (variant, ndim, dtype)
    if arch == "gfx950":  # a forward kernel is decided by the forward kernels alone, tiny by the whole dtype
        forward, forward_tiny = members_of(space, "forward", "fp16")
        assert forward and all("_fwd_" in n for n in forward) and forward_tiny is None
        assert members_of(space, None, "fp16")[1] is not None
        # a 2D one by the 2D forward kernels alone; a 2D bwd_data one reads every forward kernel before them
        assert all("_fwd_" in n and "_2d_" in n for n in members_of(space, "forward", "fp16", 2)[0])
        assert not any("_bwd_data_" in n and "_3d_" in n for n in members_of(space, "bwd_data", "fp16", 2)[0])
        assert any("_fwd_" in n and "_3d_" in n for n in members_of(space, "bwd_data", "fp16", 2)[0])
    if arch == "gfx1201":  # three depthwise groups in all: tiny's fill-up needs every dtype
        assert members_of(space, None, "fp16")[1] is None


@pytest.mark.parametrize("arch", ("gfx950", "gfx1201"))
def test_explain_on_a_cold_cache_knows_cks_procedures_of_every_dtype(arch: str, tmp_path, monkeypatch) -> None:
    from ckspace.explain.explainer import Explainer

    source = oracle_full(arch) if arch in SAME else oracle_hardware_full(arch)
    full_tests = ck_subsets.full_tests(list(source))
    tests, tiny = {c["name"] for c in full_tests}, {c["name"] for c in ck_subsets.tiny(full_tests)}
    for n, (dtype, variant) in enumerate(itertools.product(("fp16", "bf16", "fp32"),
                                                           ("forward", "forward_depthwise", "bwd_data", "bwd_weight"))):
        # one explainer and cache per kind of kernel: a second kind, or a cached set, would read the whole set
        monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path / str(n)))
        explainer = Explainer(arch)
        mine = [c["name"] for c in source if c["dtype"] == dtype and c["variant"] == variant]
        picks = [next((n for n in mine if n in tiny), None),
                 next((n for n in mine if n in tests and n not in tiny), None),
                 next((n for n in mine if n not in tests), None)]
        for name in filter(None, picks):
            sets = explainer.explain(name, neighbours=0, fixes=False).sets
            assert (sets["ck-full-tests"], sets["ck-tiny"]) == (name in tests, name in tiny), name
    # a batch: the kernels of every kind through one explainer, which reads the whole sets after the first kind
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path / "batch"))
    explainer = Explainer(arch)
    for name in [c["name"] for c in source][::97]:
        sets = explainer.explain(name, neighbours=0, fixes=False).sets
        assert (sets["ck-full-tests"], sets["ck-tiny"]) == (name in tests, name in tiny), name


def test_ck_subset_gfx950() -> None:
    space = Space(arch="gfx950")
    assert names(ck_subset(space, "ck-tiny")) == names(oracle_tiny("gfx950"))
    assert names(ck_subset(space, "ck-full-tests")) == names(oracle_full_tests("gfx950"))


@pytest.mark.parametrize("arch", ("gfx950", "gfx90a"))
def test_keys_and_facts_read_from_rows_are_those_of_the_configs(arch: str) -> None:
    """CK's order and full-tests read rows by column index (no dict per kernel): the same keys and facts as from
    each config, in any column order, through the lookups of a fresh order (each first row takes the full
    computation) and of a used one. The dict path is checked against the oracle above."""
    space = Space(arch=arch)
    runs: dict[tuple[str, ...], list[tuple]] = {}
    for keys, row in space.rows():
        runs.setdefault(keys, []).append(row)
    assert len(runs) == 2  # the GEMM layout and depthwise's
    used = CkOrder(data(), arch)
    for keys, rows in runs.items():
        configs = [dict(zip(keys, row)) for row in rows]
        expected = [CkOrder(data(), arch).key(c) for c in configs]
        assert used.row_keys(keys, rows) == expected
        assert used.row_keys(keys, rows) == expected  # now from the lookups the first pass filled
        backwards = tuple(reversed(keys))
        assert CkOrder(data(), arch).row_keys(backwards, [row[::-1] for row in rows]) == expected
        facts = [ckprocedures._facts(c) for c in configs]
        assert ckprocedures._row_facts(keys, rows) == facts
        assert ckprocedures._row_facts(backwards, [row[::-1] for row in rows]) == facts
        assert {kind for kind, _ in facts} >= {f"depthwise:{d}" for d in ("fp16", "bf16", "fp32")} \
            if "pipeline" not in keys else {kind.split(":")[0] for kind, _ in facts} == set(TINY_SPLIT) - {"depthwise"}


def test_procedure_configs_from_the_cached_names_are_the_computed_ones(tmp_path, monkeypatch) -> None:
    """`enumerate --set ck-full-tests` computes the set once; a later run with its names cached (another format)
    builds the same configs from the listing."""
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path))
    for set_name, oracle in (("ck-full-tests", oracle_full_tests), ("ck-tiny", oracle_tiny)):
        computed = procedure_configs(Space(arch="gfx950"), set_name)
        assert list(tmp_path.glob("ck-procedure/*.json"))
        from_cache = procedure_configs(Space(arch="gfx950"), set_name)
        assert from_cache == computed
        assert names(computed) == sorted(names(oracle("gfx950")))
        assert computed == sorted((c for c in full_set("gfx950") if c["name"] in set(names(computed))),
                                  key=lambda c: c["name"])


def test_ck_subset_refuses_what_it_cannot_do() -> None:
    with pytest.raises(UsageError, match="ck-full-tests, ck-tiny"):
        ck_subset(Space(arch="gfx950"), "tiny")
    with pytest.raises(UsageError, match="full catalog"):
        ck_subset(Space(arch="gfx950", catalog="ck-default"), "ck-tiny")


def test_a_config_outside_cks_generation_has_no_place() -> None:
    order = CkOrder(data(), "gfx950")
    config = dict(ck_ordered("gfx950")[0])
    assert order.key(config) < order.key(dict(ck_ordered("gfx950")[1]))
    with pytest.raises(DataError, match="is in no block"):
        order.key({**config, "tile_m": 96})
    with pytest.raises(DataError, match="not in CK's generation order"):
        order.key({**config, "dtype": "fp8"})
    with pytest.raises(DataError, match="neither a curated choice"):
        order.key({**config, "warp_tile_m": 4, "warp_tile_n": 4})


# -- the sets on the command line ------------------------------------------------------------------------------------
@pytest.mark.parametrize("set_name, oracle", [("ck-full-tests", oracle_full_tests), ("ck-tiny", oracle_tiny)])
def test_the_sets_on_the_command_line_are_the_oracles(capsys, set_name, oracle):
    from ckspace.cli import main

    assert main(["enumerate", "--arch", "gfx950", "--set", set_name, "--format", "names"]) == 0
    assert capsys.readouterr().out.split() == sorted(c["name"] for c in oracle("gfx950"))
    assert main(["enumerate", "--arch", "gfx942", "--set", set_name, "--count", "--format", "json",
                 "--variant", "bwd_weight"]) == 0
    import json

    want = sum(1 for c in oracle("gfx942") if c["variant"] == "bwd_weight")
    assert json.loads(capsys.readouterr().out)["total"] == want


def test_coverage_sample_and_explain_know_cks_procedures(capsys):
    import json

    from ckspace.cli import main

    tiny = sorted(c["name"] for c in oracle_tiny("gfx950"))
    assert main(["coverage", "--arch", "gfx950", "--set", "ck-full-tests", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["names"]["read"] == 2805
    assert main(["sample", "--arch", "gfx950", "--set", "ck-tiny", "-n", "3"]) == 0
    assert set(capsys.readouterr().out.split()) <= set(tiny)
    assert main(["explain", tiny[0], "--format", "json"]) == 0
    sets = json.loads(capsys.readouterr().out)["sets"]
    assert sets["ck-tiny"] is True and sets["ck-full-tests"] is True
    assert main(["enumerate", "--arch", "gfx950", "--set", "ck-tiny", "--over", "ck-default"]) == 2
    assert main(["explain", tiny[0], "--set", "ck-tiny"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 2
