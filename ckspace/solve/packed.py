"""The enumerate cache entry: a listing's kernels stored by column, and checked whole before a kernel is served.

    {"layouts": [[column names...], ...],
     "strata": [[layout index, number of kernels, [column, ...]], ...]}

A column is a JSON list of its values, or, where it holds at most len(CODES) distinct values of one type (every
field but the name), {"values": [distinct values], "codes": "one character per kernel"}: the n-th character of
CODES stands for the n-th value. The whole CK space of an arch is 0.26 MB this way and 4 MB as rows of values, and
JSON writes its codes as one string each where it wrote 460,000 numbers (half of a cold listing's cache writes).
"""

from __future__ import annotations

from typing import Any, Collection, Iterator, Sequence

# One character per distinct value: printable ASCII that JSON writes as itself (no quote, no backslash).
CODES = "".join(chr(c) for c in range(32, 127) if chr(c) not in "\"\\")
_SCALARS = frozenset((str, int, bool, float, type(None)))  # what json.loads gives that is not a list or an object


def pack(layouts: Sequence[Sequence[str]], strata: Sequence[tuple[int, Sequence[tuple]]]) -> dict[str, Any]:
    """The entry of strata given as (layout index, rows as tuples); a stratum without rows is left out."""
    return {"layouts": [list(layout) for layout in layouts],
            "strata": [[index, len(rows), [_column(values) for values in zip(*rows)]] for index, rows in strata if rows]}


def _column(values: tuple) -> Any:
    if len(set(map(type, values))) == 1:  # one type: no two values a dict would take for one (1 and True)
        distinct = list(dict.fromkeys(values))
        if len(distinct) <= len(CODES):
            code = dict(zip(distinct, CODES))
            return {"values": distinct, "codes": "".join(map(code.__getitem__, values))}
    return list(values)


def rows(payload: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], tuple]]:
    """The kernels of a checked entry (is_packed), as (keys, values), in stored order."""
    layouts = [tuple(layout) for layout in payload["layouts"]]
    for index, _, columns in payload["strata"]:
        keys = layouts[index]
        for values in zip(*map(_values, columns)):
            yield keys, values


def _values(column: Any) -> list:
    if type(column) is dict:
        value_of = dict(zip(CODES, column["values"]))
        return list(map(value_of.__getitem__, column["codes"]))
    return column


def is_packed(payload: object, columns: Collection[frozenset[str]]) -> bool:
    """Whether `payload` has the shape pack gives: layouts that are the columns of a kind of the strata asked, and
    strata whose columns are one per name of their layout, each as long as the stratum and of scalars only, their
    codes among those of their values. Checked whole, in C-level passes, before a kernel is served."""
    if type(payload) is not dict or payload.keys() != {"layouts", "strata"}:
        return False
    layouts, strata = payload["layouts"], payload["strata"]
    if type(layouts) is not list or type(strata) is not list:
        return False
    widths = []
    for layout in layouts:
        if type(layout) is not list or not all(type(c) is str for c in layout):
            return False
        if len(set(layout)) != len(layout) or frozenset(layout) not in columns:
            return False
        widths.append(len(layout))
    for stratum in strata:
        if type(stratum) is not list or len(stratum) != 3:
            return False
        index, n, cols = stratum
        if type(index) is not int or not 0 <= index < len(widths) or type(n) is not int or n < 1:
            return False
        if type(cols) is not list or len(cols) != widths[index] or not all(_column_ok(c, n) for c in cols):
            return False
    return True


def _column_ok(column: object, n: int) -> bool:
    if type(column) is list:
        return len(column) == n and set(map(type, column)) <= _SCALARS
    if type(column) is not dict or column.keys() != {"values", "codes"}:
        return False
    values, codes = column["values"], column["codes"]
    return (type(values) is list and 0 < len(values) <= len(CODES) and set(map(type, values)) <= _SCALARS
            and type(codes) is str and len(codes) == n and set(codes) <= set(CODES[:len(values)]))
