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
