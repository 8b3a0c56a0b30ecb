"""ckspace.solve.nplist, the numpy lister of large bags, against the plain-Python one (ckspace.solve.pysearch) and
an independent tree walk of the rule language (tests/expr_oracle.py):

- every bag the open space's count solves on two archs and several strata, listed by both, gives the same rows
  (nplist with its size floor lifted, so that small bags are compared too), and the largest are nplist's to list;
- every shipped rule that nplist can vectorise reads, on random configs of the model's domains, as the tree walk
  reads it, row by row.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from expr_oracle import tree_walk

from ckspace import Space
from ckspace.memo import clear_all
from ckspace.rules.data import load
from ckspace.rules.expr import Unsupported
from ckspace.rules.model import Model, kind_of_variant
from ckspace.solve import bags, count, nplist, pysearch

DATA = load()


def _spy_on_bags(module, monkeypatch) -> list[tuple]:
    """(defs, constraints, narrowed) of every bag `module` (count or plan) solves from now on, kept in the list
    returned; no bag of an earlier test in this process is served from memory."""
    seen: list[tuple] = []
    solve = bags.solve_bag

    def spy(defs, fac, timings=None, domains=None, limit=None, stats=None):
        narrowed = {n: tuple(sorted(domains[n])) for n in fac.fields if domains and n in domains}
        seen.append(([defs[n] for n in fac.fields], (*fac.constraints, *fac.implied), narrowed))
        return solve(defs, fac, timings, domains, limit, stats)

    monkeypatch.setattr(module, "solve_bag", spy)
    clear_all()
    return seen


def _bags_of(arch: str, variant: str, ndim: int, dtype: str, monkeypatch) -> list[tuple]:
    """(defs, constraints, narrowed) of every bag the open space's count of one stratum solves."""
    seen = _spy_on_bags(count, monkeypatch)  # no count or bag of an earlier test in this process is served from memory
    space = Space(arch=arch, rules="-ck-curation", use_cache=False)
    assert sum(space.count(variant=variant, ndim=ndim, dtype=dtype).values()) > 0
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("arch, variant, ndim, dtype", [("gfx950", "forward", 2, "fp16"),
                                                        ("gfx1201", "bwd_weight", 3, "bf16"),
                                                        ("gfx90a", "bwd_data", 2, "fp32")])
def test_numpy_lists_the_rows_pysearch_lists(arch, variant, ndim, dtype, monkeypatch) -> None:
    seen = _bags_of(arch, variant, ndim, dtype, monkeypatch)
    monkeypatch.setattr(nplist, "MIN_PRODUCT", 0)
    compared = largest = 0
    for defs, constraints, narrowed in seen:
        try:
            expected = pysearch.rows(defs, constraints, narrowed, budget=10**8)
        except Unsupported:
            continue  # CP-SAT's bag
        try:
            got = nplist.rows(defs, constraints, narrowed)
        except Unsupported:
            assert len(expected) < 20_000, [d.name for d in defs]  # a large bag of this space is numpy's
            continue
        assert got == expected, [d.name for d in defs]
        assert np.array_equal(got.matrix, np.array(expected, dtype=np.int64).reshape(len(expected), len(defs)))
        compared += 1
        largest = max(largest, len(got))
    assert compared >= 5 and largest >= 20_000


@pytest.mark.parametrize("arch, variant, ndim, dtype", [("gfx950", "bwd_data", 3, "bf16"),
                                                        ("gfx942", "forward", 2, "fp16")])
def test_a_catalogs_tables_seed_the_rows_pysearch_lists(arch, variant, ndim, dtype, monkeypatch) -> None:
    """A stratum of CK's full, listed: its bags hold tuples of fields in CK's tables, which seed numpy's rows (the
    table's rows, not their fields' product); every bag gives pysearch's rows."""
    from ckspace.solve import plan as plan_module
    from ckspace.solve.kernels import KernelSpace

    seen = _spy_on_bags(plan_module, monkeypatch)
    listed = list(KernelSpace(arch=arch, use_cache=False).rows(variant=variant, ndim=ndim, dtype=dtype))
    assert listed
    monkeypatch.setattr(nplist, "MIN_PRODUCT", 0)
    seeded = 0
    for defs, constraints, narrowed in seen:
        expected = pysearch.rows(defs, constraints, narrowed, budget=10**8)
        by_name = {d.name: d for d in defs}
        domains = {d.name: nplist._raw_domain(d, narrowed.get(d.name)) for d in defs}
        seeded += nplist._seed(constraints, by_name, domains) is not None
        try:
            got = nplist.rows(defs, constraints, narrowed)
        except Unsupported:
            continue
        assert got == expected, [d.name for d in defs]
    assert seeded >= 2


def test_a_table_row_seeds_only_the_values_its_fields_can_equal() -> None:
    """Python's ==: an enum field equals only its own names, a number or bool field a number or bool."""
    from ckspace.rules.data import FieldDef

    pipeline = next(d for d in DATA.fields.values() if d.type == "enum" and "compv3" in d.values)
    tile = DATA.fields["tile_m"]
    flag = next(d for d in DATA.fields.values() if d.type == "bool")
    assert nplist._raw_row(("compv3", 128), [pipeline, tile]) == (list(pipeline.values).index("compv3"), 128)
    assert nplist._raw_row(("nope", 128), [pipeline, tile]) is None
    assert nplist._raw_row((3, 128), [pipeline, tile]) is None  # a number never equals a name
    assert nplist._raw_row(("128", 128), [tile, tile]) is None  # nor a text a number
    assert nplist._raw_row((True, 1), [flag, tile]) == (1, 1)
    assert isinstance(pipeline, FieldDef)


def test_a_limit_is_kept_and_a_small_bag_is_left_to_pysearch(monkeypatch) -> None:
    defs = [DATA.fields["tile_m"], DATA.fields["tile_n"], DATA.fields["tile_k"]]
    with pytest.raises(Unsupported):
        nplist.rows(defs[:1], (), {})  # one field: below MIN_PRODUCT
    monkeypatch.setattr(nplist, "MIN_PRODUCT", 100)
    all_rows = nplist.rows(defs, (), {})
    assert len(all_rows) == len(defs[0].values) * len(defs[1].values) * len(defs[2].values)
    assert all_rows == sorted(all_rows)
    with pytest.raises(OverflowError):
        nplist.rows(defs, (), {}, limit=10)


def _columns(configs: list[dict], model: Model, kind: str) -> dict[str, np.ndarray]:
    """Raw columns of configs: an enum's index, a bool's 0/1, an int as it is."""
    out = {}
    for f in model.fields(kind):
        if f.derived:
            continue
        if f.type == "enum":
            out[f.name] = np.array([f.values.index(c[f.name]) for c in configs], dtype=np.int64)
        else:
            out[f.name] = np.array([int(c[f.name]) for c in configs], dtype=np.int64)
    return out


@pytest.mark.parametrize("arch", ["gfx942", "gfx1201"])
def test_each_vectorised_rule_reads_as_the_tree_walk(arch: str) -> None:
    model = Model(DATA, arch, set(DATA.families))
    rng = random.Random(arch)
    vectorised = 0
    for rule in DATA.rules:
        variants = [v for v in DATA.fields["variant"].values if rule.applies_to(kind_of_variant(str(v)))]
        if not variants:
            continue
        variant = rng.choice(variants)
        kind = kind_of_variant(str(variant))
        configs = []
        for _ in range(200):
            cfg = {f.name: rng.choice(list(f.values)) for f in model.fields(kind) if not f.derived}
            cfg["variant"] = variant
            configs.append(cfg)
        fields = {f.name: f for f in model.fields(kind)}
        ev = nplist._Evaluator(_columns(configs, model, kind), fields, model.resolve)
        for node in (rule.when, rule.require):
            want = []
            for cfg in configs:
                try:
                    want.append(bool(tree_walk(node, cfg, model.resolve)))
                except Exception:  # noqa: BLE001 - a node the walk cannot read on this config: not compared
                    want.append(None)
            try:
                got = np.broadcast_to(nplist._truth(ev.value(node)), (len(configs),))
            except Unsupported:
                continue
            vectorised += 1
            for w, g, cfg in zip(want, got.tolist(), configs):
                if w is not None:
                    assert w == g, (rule.id, cfg)
    assert vectorised >= 40


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-5, 3 * 2**20), max_size=60))
def test_distinct_is_numpys_unique(values: list[int]) -> None:
    """count.distinct (counting small non-negative values, np.unique else) gives np.unique's sorted values."""
    column = np.array(values, dtype=np.int64)
    got = count.distinct(np, column)
    assert got.dtype == np.int64 and got.tolist() == np.unique(column).tolist()


def test_tabled_is_a_tuple_of_fields_always_in_a_constant_table() -> None:
    """bags tries a search first on such a bag (CK's curated tables prune it at once); the rows are the same."""
    from types import SimpleNamespace as C

    from ckspace.rules import expr as E

    def parse(text: str) -> E.Node:  # as the model holds it: constant parts folded (a table is one constant)
        return E.fold(E.parse(text, DATA.fields, frozenset({"arch"})), {}, lambda path: None)

    true = E.Const(True)
    table = parse("(tile_m, tile_n) in ((128, 128), (256, 128))")
    assert nplist.tabled([C(when=true, require=table)])
    assert not nplist.tabled([C(when=parse("pipeline == 'mem'"), require=table)])  # not always
    assert not nplist.tabled([C(when=true, require=parse("(tile_m, tile_n) not in ((128, 128),)"))])
    assert not nplist.tabled([C(when=true, require=parse("(tile_m, tile_n * 2) in ((128, 128),)"))])
    assert not nplist.tabled([C(when=true, require=parse("tile_m % 16 == 0"))])
