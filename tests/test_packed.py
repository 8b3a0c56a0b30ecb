"""The enumerate cache entry by column (ckspace.solve.packed): what is stored through JSON is read back as the same
rows, value for value and type for type, and the reader's check accepts exactly the shapes the writer makes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckspace.solve import packed

KEYS = [("a", "b", "name"), ("c", "name")]
SCALARS = st.one_of(st.booleans(), st.integers(-3, 3), st.integers(), st.sampled_from(["x", "y", "", "q\"\\"]),
                    st.text(max_size=5), st.none())


@st.composite
def strata(draw):
    """Strata of either layout with few or many distinct values per column, and mixed types in a column (1 and True,
    0 and False: a dict would take each pair for one value)."""
    out = []
    for _ in range(draw(st.integers(0, 4))):
        index = draw(st.integers(0, len(KEYS) - 1))
        n = draw(st.integers(0, 140))
        pools = [draw(st.lists(SCALARS, min_size=1, max_size=draw(st.sampled_from([1, 3, 120])))) for _ in KEYS[index]]
        rows = [tuple(draw(st.sampled_from(pool)) for pool in pools) for _ in range(n)]
        out.append((index, rows))
    return out


def through_json(payload: dict) -> dict:
    return json.loads(json.dumps(payload, separators=(",", ":")))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(strata())
def test_what_is_stored_is_read_back_value_for_value_and_type_for_type(given_strata) -> None:
    stored = through_json(packed.pack(KEYS, given_strata))
    assert packed.is_packed(stored, {frozenset(k) for k in KEYS})
    expected = [(KEYS[index], row) for index, rows in given_strata for row in rows]
    got = list(packed.rows(stored))
    assert got == expected
    assert [[type(v) for v in row] for _, row in got] == [[type(v) for v in row] for _, row in expected]
    assert not packed.is_packed(stored, {frozenset(KEYS[0])})  # a layout that is not a kind's columns


def test_a_column_of_one_type_with_few_values_is_coded_and_any_other_is_a_list() -> None:
    rows = [(i % 3, i, True if i % 2 else 1) for i in range(200)]
    (stratum,) = packed.pack([("a", "b", "c")], [(0, rows)])["strata"]
    few, many, mixed = stratum[2]
    assert few == {"values": [0, 1, 2], "codes": (packed.CODES[:3] * 67)[:200]}
    assert many == list(range(200)) and mixed == [True if i % 2 else 1 for i in range(200)]
    assert len(packed.CODES) == len(set(packed.CODES)) and json.dumps(packed.CODES)[1:-1] == packed.CODES
