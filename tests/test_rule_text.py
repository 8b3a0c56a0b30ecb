"""The rule language has one printer (ckspace.rules.expr.show): `ckspace rules`, `ckspace fields`, error messages and
explain's derivations all print through it, and text -> node -> text is stable for every shipped rule and derived
field: parsing the printed text gives the same node back."""

from __future__ import annotations

import pytest

from ckspace.rules import expr as E
from ckspace.rules import text
from ckspace.rules.data import load


def shipped_expressions() -> list[tuple[str, E.Node]]:
    data = load()
    out = []
    for rule in data.rules:
        out += [(f"{rule.id} when", rule.when), (f"{rule.id} require", rule.require)]
    for name, derive in data.derives.items():
        out.append((f"derived {name}", derive.expr))
    return out


def parse_back(source: str) -> E.Node:
    """Parse printed text. A rule's node holds its derived fields expanded, so its text may pass the bound on
    what a user may write (MAX_SOURCE_CHARS); the bound is lifted here, the grammar is the same."""
    data = load()
    names = {**data.fields, **dict.fromkeys(data.derives)}
    namespaces = {"arch", "ck", *(t.split(".")[0] for t in data.tables)}
    limit = E.MAX_SOURCE_CHARS
    E.MAX_SOURCE_CHARS = max(limit, len(source))
    try:
        return E.parse(source, names, namespaces)
    finally:
        E.MAX_SOURCE_CHARS = limit


@pytest.mark.parametrize("what,node", shipped_expressions(), ids=lambda v: v if isinstance(v, str) else "")
def test_text_node_text_is_stable(what: str, node: E.Node) -> None:
    source = E.show(node)
    again = parse_back(source)
    assert again == node, what
    assert E.show(again) == source


def test_the_text_module_prints_through_the_one_printer() -> None:
    for _, node in shipped_expressions():
        assert text.show(node) == E.show(node)


@pytest.mark.parametrize("source,printed", [
    ("layout in ('nhwgc',)", "layout in ('nhwgc',)"),  # a tuple of one: not a parenthesised string
    ("tile_m > 16 or tile_n > 16 and tile_k > 16", "tile_m > 16 or (tile_n > 16 and tile_k > 16)"),
    ("(tile_m + tile_n) * 2", "(tile_m + tile_n) * 2"),
    ("pipeline in ('com\\'pv3', 'mem')", "pipeline in (\"com'pv3\", 'mem')"),
    ("tile_m - (tile_n - tile_k)", "tile_m - (tile_n - tile_k)"),
    ("not (double_smem_buffer == true)", "not double_smem_buffer == true"),
    ("vec_c if tile_m > 16 else (vec_a if tile_n > 16 else vec_b)", "vec_c if tile_m > 16 else vec_a if tile_n > 16 else vec_b"),
])
def test_printed_forms(source: str, printed: str) -> None:
    node = parse_back(source)
    assert E.show(node) == printed
    assert parse_back(printed) == node
