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
