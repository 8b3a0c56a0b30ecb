"""Variable elimination over count tables (ckspace.solve.count), against brute force.

The count of a product of factors is the sum, over every assignment of the fields, of the product of each factor's
count for its part of the assignment (0 where its table has no such row). That sum is computed here by listing the
assignments, and eliminate() must give it exactly, whichever of its paths a bucket takes: dense numpy arrays, the
vectorized join, or Python dicts (forced below by tiny DENSE_LIMIT / PAIRS_LIMIT, by counts past int64 and by
values that are not integers).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckspace.solve import count

FIELDS = "abcde"


@st.composite
def factor_sets(draw):
    names = FIELDS[:draw(st.integers(1, 5))]
    low = draw(st.sampled_from([0, -3, 10**15, None]))  # negative and large raw values (hidden terms); strings
    values = [low + v if low is not None else f"v{v}" for v in range(draw(st.integers(1, 4)))]
    big = draw(st.booleans())
    factors = []
    for _ in range(draw(st.integers(1, 4))):
        fields = tuple(draw(st.permutations(names))[:draw(st.integers(1, len(names)))])
        rows = draw(st.lists(st.tuples(*[st.sampled_from(values)] * len(fields)), max_size=20, unique=True))
        counts = draw(st.lists(st.integers(1, 2**61 if big else 50), min_size=len(rows), max_size=len(rows)))
        factors.append((fields, dict(zip(rows, counts))))
    order = draw(st.permutations(list(dict.fromkeys(f for fields, _ in factors for f in fields))))
    return factors, values, order


def brute_force(factors, values) -> int:
    names = sorted({f for fields, _ in factors for f in fields})
    total = 0
    for combo in itertools.product(values, repeat=len(names)):
        at = dict(zip(names, combo))
        product = 1
        for fields, table in factors:
            product *= table.get(tuple(at[f] for f in fields), 0)
            if not product:
                break
        total += product
    return total


@pytest.mark.parametrize("dense_limit, pairs_limit", [(30_000_000, 20_000_000), (8, 20_000_000), (8, 3)])
@settings(max_examples=150, deadline=None)
@given(case=factor_sets())
def test_elimination_counts_what_brute_force_counts(case, dense_limit, pairs_limit):
    factors, values, order = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(count, "DENSE_LIMIT", dense_limit)
        patch.setattr(count, "PAIRS_LIMIT", pairs_limit)
        got = count.eliminate([count.CountFactor(fields, dict(table)) for fields, table in factors], order)
    assert got == brute_force(factors, values)


def test_a_factor_converts_between_its_forms_without_loss():
    import numpy as np

    f = count.CountFactor(("a", "b"), {(1, -2): 3, (10**15, 0): 2**61})
    rows, counts = f.as_arrays(np)
    g = count.CountFactor(("a", "b"), rows=rows, counts=counts)
    assert g.as_table() == f.table and g.size() == 2
    assert count.CountFactor(("a",), {("x",): 1}).as_arrays(np) is None  # not integers: dicts only
    assert count.CountFactor(("a",), {(1,): 2**62}).as_arrays(np) is None  # could overflow int64 products


def _greedy_reference(fields, adj, size, message_first):
    """The greedy elimination as first written: every field's key computed afresh each round, scanned in field order."""
    graph = {f: set(adj[f]) for f in fields}
    rank = {f: i for i, f in enumerate(fields)}
    out = []
    while graph:
        best = None
        for f in sorted(graph, key=rank.__getitem__):
            nb = graph[f]
            fill = sum(1 for a, b in itertools.combinations(nb, 2) if b not in graph[a])
            key = (round(size(frozenset(nb)), 6) if message_first else 0.0, round(size(frozenset(nb | {f})), 6), fill,
                   rank[f])
            if best is None or key < best[0]:
                best = (key, f)
        v = best[1]
        nb = graph.pop(v)
        for a in nb:
            graph[a].discard(v)
            graph[a].update(n for n in nb if n != a)
        out.append((v, frozenset(nb | {v})))
    return out


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 12), data=st.data(), message_first=st.booleans())
def test_greedy_elimination_keeps_only_changed_keys_and_orders_as_a_full_scan(n, data, message_first) -> None:
    """jointree.elimination_order computes a field's key again only where an elimination changed its neighbourhood;
    the order and the cliques are those of the scan over every field each round (ties included: weights from a few
    values)."""
    from ckspace.solve import jointree

    fields = [f"f{i}" for i in range(n)]
    pairs = [p for p in itertools.combinations(fields, 2)]
    edges = data.draw(st.lists(st.sampled_from(pairs), unique=True) if pairs else st.just([]))
    scopes = [frozenset(e) for e in edges] + [frozenset([f]) for f in fields]
    weight = dict(zip(fields, data.draw(st.lists(st.sampled_from([1.0, 2.0, 3.5]), min_size=n, max_size=n))))

    def size(bag: frozenset) -> float:
        return sum(weight[f] for f in bag)

    adj = jointree.interaction_graph(fields, scopes)
    assert jointree.elimination_order(fields, adj, size, message_first) == \
        _greedy_reference(fields, adj, size, message_first)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["tile_m <= 64 and tile_n <= 64", "pipeline == 'compv3'"])
def test_a_bag_made_into_arrays_counts_as_its_dict_does(monkeypatch, where: str) -> None:
    """count.factored turns a bag of ARRAY_ROWS rows or more into int64 arrays directly (and its values per field
    into sets by numpy): with every bag so made, and with none, the open space counts the same."""
    from ckspace.memo import clear_all
    from ckspace.solve import count as C
    from ckspace.solve.kernels import KernelSpace

    totals = []
    for threshold in (1, 10**12):
        monkeypatch.setattr(C, "ARRAY_ROWS", threshold)
        clear_all()  # no solved bag or count of the other run
        space = KernelSpace(arch="gfx950", rules="-ck-curation", use_cache=False)
        totals.append(space.count(variant="bwd_data", dtype="fp16", where=where))
    assert totals[0] == totals[1] and sum(totals[0].values()) > 0
