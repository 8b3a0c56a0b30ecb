"""The nearest kernels of a curated stratum, ranked from its listing (issue 29: explain of a rejected name cold), are
as near as those the CP-SAT search finds: the same number of changed fields and the same distances, rank by rank
(the two may break a tie differently). The CP-SAT search (ckspace.explain.neighbours) is the independent oracle."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckspace.explain.explainer import Explainer
from ckspace.rules.names import format_name

ARCHS = ("gfx950", "gfx90a")


@pytest.fixture(scope="module")
def explainers() -> dict[str, Explainer]:
    return {arch: Explainer(arch=arch) for arch in ARCHS}


def _valid_configs(explainer: Explainer, variant: str, ndim: int, dtype: str) -> list[dict]:
    rows = explainer._listed_stratum(explainer.model.strata[0].__class__(variant, ndim, dtype))
    assert rows, (variant, ndim, dtype)
    return rows


def _perturbed(explainer: Explainer, base: dict, rng: random.Random, moves: int) -> dict:
    """`base` with up to `moves` fields set to other values of their open domain (a name full may reject)."""
    cfg = dict(base)
    fields = [f for f in explainer.model.fields("gemm") if f.type == "int" and not f.stratum and not f.derived
              and len(f.values) > 1]
    for f in rng.sample(fields, moves):
        cfg[f.name] = rng.choice([v for v in f.values if v != cfg[f.name]])
    cfg.pop("name", None)
    return cfg


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arch=st.sampled_from(ARCHS), variant=st.sampled_from(["forward", "bwd_data", "bwd_weight"]),
       dtype=st.sampled_from(["fp16", "fp32"]), ndim=st.sampled_from([2, 3]), seed=st.integers(0, 10**6),
       moves=st.integers(1, 3))
def test_ranked_from_the_listing_as_near_as_the_cp_sat_search(explainers, arch, variant, dtype, ndim, seed, moves):
    explainer = explainers[arch]
    rng = random.Random(seed)
    cfg = _perturbed(explainer, rng.choice(_valid_configs(explainer, variant, ndim, dtype)), rng, moves)
    try:
        name = format_name(cfg)
    except (ValueError, KeyError, TypeError):
        return
    exp = explainer.explain(name, neighbours=3)
    if exp.valid:
        return
    assert exp.search["scope"] == "stratum"
    listed = [(len(nb.changes), nb.distance) for nb in exp.neighbours]
    searched, info = explainer.searcher().nearest(cfg, 3)
    assert info["scope"] == "stratum"
    assert listed == [(len(nb.changes), nb.distance) for nb in searched], name
    assert all(nb.optimal for nb in searched)


def test_the_open_space_is_still_searched_by_cp_sat() -> None:
    """Without curation the strata hold ~10^11 kernels: the listing path declines and CP-SAT answers."""
    explainer = Explainer(arch="gfx950", rules="-ck-curation")
    name = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_100x128x64_2x2x1_32x32x16_vec8_8_8"
    assert explainer._nearest_in_stratum(explainer_cfg(explainer, name), 3) is None
    exp = explainer.explain(name, neighbours=3)
    assert not exp.valid and len(exp.neighbours) == 3


def explainer_cfg(explainer: Explainer, name: str) -> dict:
    from ckspace.explain.spelling import parse

    return dict(parse(name, explainer.data))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arch=st.sampled_from(ARCHS), catalog=st.sampled_from(["full", "ck-default"]),
       variant=st.sampled_from(["forward", "bwd_data", "bwd_weight"]), dtype=st.sampled_from(["fp16", "bf16"]),
       ndim=st.sampled_from([2, 3]), seed=st.integers(0, 10**6), moves=st.integers(1, 3))
def test_a_catalogs_nearest_ranked_from_its_listing_as_near_as_cp_sat(explainers, arch, catalog, variant, dtype, ndim,
                                                                     seed, moves):
    """nearest_in_catalogs ranks each rule catalog's stratum listed under its default rules: as near, rank by rank,
    as the CP-SAT search of that catalog's model, and an empty stratum is one CP-SAT finds no kernel in either."""
    from ckspace.explain.neighbours import NeighbourSearch
    from ckspace.rules.model import Model, resolve_families

    explainer = explainers[arch]
    rng = random.Random(seed)
    cfg = _perturbed(explainer, rng.choice(_valid_configs(explainer, variant, ndim, dtype)), rng, moves)
    ranked = explainer._ranked(catalog, cfg, 3)
    search = NeighbourSearch(Model(explainer.data, arch, resolve_families(explainer.data, None, catalog)))
    searched, info = search.nearest(cfg, 3)
    if ranked is None:
        assert explainer._stratum_rows[(catalog, variant, ndim, dtype)] == []
        assert info["scope"] != "stratum"
        return
    listed, _ = ranked
    assert info["scope"] == "stratum"
    if searched and not searched[0].changes:
        return  # the moved kernel is in the catalog (nearest_in_catalogs asks only about kernels in none)
    assert [(len(nb.changes), nb.distance) for nb in listed] == [(len(nb.changes), nb.distance) for nb in searched]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), moves=st.integers(0, 4))
def test_nearness_counts_as_the_changes_and_their_distances(seed, moves):
    """measure.Nearness (the ranking's tabulated count) against changes_between and distance field by field."""
    from ckspace.explain.diff import changes_between
    from ckspace.explain.measure import Nearness, distance

    explainer = Explainer(arch="gfx950") if not hasattr(test_nearness_counts_as_the_changes_and_their_distances,
                                                         "explainer") else \
        test_nearness_counts_as_the_changes_and_their_distances.explainer  # type: ignore[attr-defined]
    test_nearness_counts_as_the_changes_and_their_distances.explainer = explainer  # type: ignore[attr-defined]
    rng = random.Random(seed)
    rows = _valid_configs(explainer, "forward", 2, "fp16")
    asked = _perturbed(explainer, rng.choice(rows), rng, moves) if moves else dict(rng.choice(rows))
    order = [f.name for f in explainer.model.fields("gemm")]
    near = Nearness(asked, order, explainer.data.fields)
    for other in rng.sample(rows, 20):
        changes = changes_between(asked, other, order)
        steps = sum(distance(explainer.data.fields[c.field], c.after, c.before) for c in changes
                    if c.field in explainer.data.fields)
        assert near.key(other) == (len(changes), steps)
