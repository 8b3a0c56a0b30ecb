"""Implied constraints: projections of table-membership constraints onto a subset of their fields.

When a join-tree bag holds only some of the fields of a constraint `(a, b, c) in T`, the bag cannot post the
constraint itself, but it can post `(a, b) in π_ab(T)`: every full solution satisfies it, so it removes no
solution, while it keeps the bag's local enumeration close to the values that can really occur (the tile fields of
a bag are restricted to the curated tiles even where the bag does not hold the whole tile table).
"""

from __future__ import annotations

from typing import Iterable

from ..memo import memo
from ..rules import expr as E

# Caches keyed by the id of a row source (a Relation or a constant tuple), which is kept in the value so that its
# id cannot be reused by another object while the entry lives: rows grouped by the values of some columns, and
# finished projections. Python equality already treats True as 1, the solver's view of booleans.
_GROUPS: dict[tuple, tuple[object, dict[tuple, list[tuple]]]] = memo("solve.implied.groups", {})
_PROJECTED: dict[tuple, tuple[object, tuple[tuple, ...]]] = memo("solve.implied.projected", {})
CACHE_LIMIT = 8192  # entries per cache; a full cache is emptied (they refill in milliseconds)


def _store(cache: dict, key: object, value: object) -> None:
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    cache[key] = value


def _rows(value: object) -> tuple[tuple, ...] | None:
    rows = getattr(value, "rows", None)
    if rows is not None:
        return tuple(rows)
    if isinstance(value, (tuple, list)) and value:
        return tuple(tuple(v) if isinstance(v, (tuple, list)) else (v,) for v in value)
    return None


_WIDTHS: dict[int, tuple[object, frozenset[int]]] = memo("solve.implied.widths", {})


def widths(source: object) -> frozenset[int]:
    """The row lengths of a row source (a shape check that is asked once per constraint and bag otherwise)."""
    hit = _WIDTHS.get(id(source))
    if hit is not None and hit[0] is source:
        return hit[1]
    rows = _rows(source)
    out = frozenset(len(r) for r in rows) if rows is not None else frozenset()
    _store(_WIDTHS, id(source), (source, out))
    return out


def _grouped(source: object, positions: tuple[int, ...]) -> dict[tuple, list[tuple]] | None:
    key = (id(source), positions)
    hit = _GROUPS.get(key)
    if hit is not None and hit[0] is source:
        return hit[1]
    rows = _rows(source)
    if rows is None:
        return None
    groups: dict[tuple, list[tuple]] = {}
    for r in rows:
        groups.setdefault(tuple([r[i] for i in positions]), []).append(r)
    _store(_GROUPS, key, (source, groups))
    return groups


def project_rows(source: object, fixed: tuple[tuple[int, object], ...], keep: tuple[int, ...]) -> tuple[tuple, ...] | None:
    """Rows of `source` that hold the `fixed` values, cut down to the `keep` columns (duplicates removed).

    The caller checks that every row has one value per column.
    """
    values = tuple(v for _, v in fixed)
    # The value's type is part of the key: 1 and True select the same rows but must not share an entry with "1".
    key = (id(source), tuple(i for i, _ in fixed), tuple(type(v).__name__ for v in values), values, keep)
    hit = _PROJECTED.get(key)
    if hit is not None and hit[0] is source:
        return hit[1]
    groups = _grouped(source, tuple(i for i, _ in fixed))
    if groups is None:
        return None
    out = dict.fromkeys(tuple([r[i] for i in keep]) for r in groups.get(values, ()))
    result = tuple(out)
    _store(_PROJECTED, key, (source, result))
    return result


def memberships(node: E.Node) -> Iterable[E.In]:
    """The positive membership tests that `node` requires outright (itself, or items of a top-level `and`)."""
    if isinstance(node, E.In) and not node.negate:
        yield node
    elif isinstance(node, E.And):
        for item in node.items:
            yield from memberships(item)


def projection(test: E.In, fields: frozenset[str] | set[str]) -> E.Node | None:
    """`test` projected onto the tuple positions that are plain fields in `fields`; None if nothing is left.

    Positions holding a constant select the matching rows; positions holding any other expression, or a field
    outside `fields`, are projected away. The result is an `In` over a constant list of rows.
    """
    if not isinstance(test.right, E.Const):
        return None
    items = test.left.items if isinstance(test.left, E.Tup) else (test.left,)
    if widths(test.right.value) != {len(items)}:
        return None
    fixed = tuple((i, it.value) for i, it in enumerate(items) if isinstance(it, E.Const))
    keep = tuple(i for i, it in enumerate(items) if isinstance(it, E.Field) and it.name in fields)
    if not keep:
        return None
    rows = project_rows(test.right.value, fixed, keep)
    if rows is None:
        return None
    return E.In(E.Tup(tuple(items[i] for i in keep)), E.Const(rows), False)


def normalize(node: E.Node) -> E.Node:
    """Membership tests against a constant table lose their constant columns: the rows are filtered on them.

    `(variant, ndim, dtype, tile_m, ...) in ck.tile` folded in a stratum still names the whole table with the
    stratum's constants in the tuple; after this it names only the stratum's rows, over the free columns. The
    solver then compiles small tables, and two strata whose rows agree get identical constraints (which lets
    solve/bags.py share a bag's solutions between them). A test left without free columns becomes a constant.
    """
    kids = E.children(node)
    if kids:
        node = E.rebuild(node, tuple(normalize(k) for k in kids))
    if not isinstance(node, E.In) or not isinstance(node.right, E.Const):
        return node
    items = node.left.items if isinstance(node.left, E.Tup) else (node.left,)
    free = tuple(i for i, it in enumerate(items) if not isinstance(it, E.Const))
    fixed = tuple((i, it.value) for i, it in enumerate(items) if isinstance(it, E.Const))
    if not free or widths(node.right.value) != {len(items)}:
        return node  # constant (fold reduces those), empty, or a shape the compiler reports: leave it alone
    rows = project_rows(node.right.value, fixed, free)
    if rows is None:
        return node
    if not rows:
        return E.Const(node.negate)
    return E.In(E.Tup(tuple(items[i] for i in free)), E.Const(rows), node.negate)
