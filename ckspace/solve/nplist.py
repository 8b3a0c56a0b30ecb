"""A large bag's rows listed by numpy: every assignment of its fields, filtered a field at a time by vectorised
constraints, for bags of plain arithmetic (the open space's tile-load bags: 240,000 rows of tile, wave and vector
fields joined by integer arithmetic, which the one-assignment-at-a-time search of ckspace.solve.pysearch lists in
about 1.2 s each).

Fields are added in order of their domains' sizes; after each, every constraint whose fields are all set filters
the rows. A tuple of fields that must be a row of a constant table (CK's curated tiles) seeds its fields with the
table's rows instead, the most selective such table first. The values are the raw ones the solver uses (an enum's index, a bool's 0/1), so the rows come out as
pysearch and CP-SAT give them: every satisfying assignment, as raw tuples in `defs` order, sorted.

The semantics are those of `ckspace.rules.expr` (compile_node, exact): integer arithmetic with total division
(x // 0 == 0, x % 0 == x), floor division and remainder as Python's, `and`/`or`/`not` on truth values, min/max,
comparisons, membership in a constant collection. A node this module does not vectorise (a table index, a tuple
outside a table, a data reference that is not a number, arithmetic or ordering on text), an intermediate product
over MAX_ROWS rows, or a value that could leave int64 raises Unsupported, and the caller lists the bag the other way: the rows never
depend on which lister gave them (tests compare them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from ..rules import expr as E
from ..rules.data import FieldDef
from ..rules.expr import Unsupported

if TYPE_CHECKING:
    import numpy as np
else:
    np = None  # imported by rows() once a bag is numpy's: a stratum of CK's catalogs never loads it (65 ms)

Row = tuple[int, ...]
MAX_ROWS = 4_000_000  # rows of a partial product held at once (8 int64 columns: 256 MB at most)
MIN_PRODUCT = 20_000  # smaller bags: pysearch lists them in milliseconds, with less to set up
_BOUND = 2**62


@dataclass
class _Value:
    """A vectorised value: an int64 array (or a scalar) of numbers, or of an enum field's indices (`enum`: its
    values), or a text constant (`text`)."""

    array: np.ndarray | int
    enum: tuple | None = None
    text: str | None = None

    def number(self) -> np.ndarray | int:
        if self.enum is not None or self.text is not None:
            raise Unsupported("arithmetic or ordering on text")
        return self.array


def rows(defs: Sequence[FieldDef], constraints: Sequence, narrowed: Mapping[str, Sequence[int]],
         limit: int | None = None, resolve: Callable[[tuple[str, ...]], object] | None = None) -> list[Row]:
    """Every assignment of `defs` (narrowed to raw values) satisfying `constraints` (each with `when`, `require`),
    as sorted raw rows; OverflowError beyond `limit` rows; Unsupported where the other listers must answer."""
    domains = {d.name: _raw_domain(d, narrowed.get(d.name)) for d in defs}
    product = 1
    for values in domains.values():
        product *= max(len(values), 1)
    if product < MIN_PRODUCT:
        raise Unsupported("a small bag")
    checks = [(c.when, c.require, E.fields_of(c.when) | E.fields_of(c.require)) for c in constraints]
    by_name = {d.name: d for d in defs}
    columns: dict[str, np.ndarray] = {}
    length = 1
    done = [False] * len(checks)

    def filtered() -> None:  # every constraint whose fields are all in filters the rows, once
        nonlocal columns, length
        keep: np.ndarray | None = None
        for i, (when, require, scope) in enumerate(checks):
            if done[i] or not scope <= columns.keys():
                continue
            done[i] = True
            ok = _holds(when, require, columns, by_name, resolve, length)
            keep = ok if keep is None else keep & ok
        if keep is not None and not keep.all():
            columns = {n: col[keep] for n, col in columns.items()}
            length = int(keep.sum())

    # A tuple of fields in a table of rows (CK's curated tiles and pairs) seeds the rows: its fields start as the
    # table's rows rather than their product, which grows to millions of rows before the table cuts it to a few
    # (2 s for a stratum of CK's full, where pysearch took 0.02 s). The most selective such table is taken.
    seed = _seed(constraints, by_name, domains)
    if seed is not None:
        seeded = len(seed[1])
        for n in by_name:
            seeded *= 1 if n in seed[0] else max(len(domains[n]), 1)
        if seeded < MIN_PRODUCT:  # a table that leaves few rows: pysearch propagates it, with less to set up
            raise Unsupported("a small bag once its table is applied")
    _import_numpy()
    if seed is not None:
        names, table = seed
        columns = {n: np.asarray([row[i] for row in table], dtype=np.int64) for i, n in enumerate(names)}
        length = len(table)
        filtered()
    for name in sorted((n for n in by_name if n not in columns), key=lambda n: (len(domains[n]), n)):
        if length == 0:
            break
        values = np.asarray(domains[name], dtype=np.int64)
        if length * len(values) > MAX_ROWS:
            raise Unsupported(f"more than {MAX_ROWS} rows at once")
        columns = {n: np.repeat(col, len(values)) for n, col in columns.items()}
        columns[name] = np.tile(values, length)
        length *= len(values)
        filtered()
    if length and not all(done):
        raise Unsupported("a constraint on a field outside the bag")  # pysearch says what that is
    if length == 0:
        return []
    if limit is not None and length > limit:
        raise OverflowError(limit)
    matrix = np.stack([columns[d.name] for d in defs], axis=1) if defs else np.zeros((1, 0), dtype=np.int64)
    matrix = matrix[np.lexsort(matrix.T[::-1])] if len(defs) else matrix
    matrix.setflags(write=False)  # shared by the bag cache and the count tables made of it
    return Rows(map(tuple, matrix.tolist()), matrix)


def tabled(constraints: Sequence) -> bool:
    """Whether a constraint always requires a tuple of fields to be a row of a constant table (CK's curated tiles
    and pairs): such a bag is pruned at once by a search (ckspace.solve.bags tries pysearch first)."""
    return any(_table(c) is not None for c in constraints)


def _table(c) -> tuple[list[str], object] | None:
    """(its fields, the table) of a constraint `(field, ...) in TABLE` that always applies (its `when` a true
    constant, the table a constant), else None."""
    r = c.require
    if type(c.when) is not E.Const or not c.when.value or type(r) is not E.In or r.negate or \
            not isinstance(r.left, E.Tup) or not isinstance(r.right, E.Const):
        return None
    items = [i for i in r.left.items if isinstance(i, E.Field)]
    if len(items) != len(r.left.items):
        return None
    return [i.name for i in items], r.right.value


def _import_numpy() -> None:
    global np
    if np is None:
        import numpy

        np = numpy


def _seed(constraints: Sequence, defs: Mapping[str, FieldDef],
          domains: Mapping[str, Sequence[int]]) -> tuple[list[str], list[Row]] | None:
    """The most selective `(field, ...) in TABLE` constraint that always applies (its `when` a true constant, every
    item a distinct field of the bag): its fields and the table's rows as raw values within their domains, unique
    and in table order (a row that no assignment equals, by Python's ==, is left out). None where there is none."""
    best: tuple[float, list[str], list[Row]] | None = None
    for c in constraints:
        found = _table(c)
        if found is None:
            continue
        names, rows_ = found
        if not all(n in defs for n in names) or len(set(names)) != len(names) or \
                not isinstance(rows_, (tuple, list, frozenset, set)) or \
                not all(isinstance(row, (tuple, list)) for row in rows_):
            continue
        allowed = [set(domains[n]) for n in names]
        table: dict[Row, None] = {}
        for row in rows_:
            raw = _raw_row(row, [defs[n] for n in names])
            if raw is not None and all(v in a for v, a in zip(raw, allowed)):
                table[raw] = None
        space = 1
        for n in names:
            space *= max(len(domains[n]), 1)
        share = len(table) / space
        if best is None or share < best[0]:
            best = (share, names, list(table))
    return None if best is None else (best[1], best[2])


def _raw_row(row: Sequence[object], defs: Sequence[FieldDef]) -> Row | None:
    """A table row as the fields' raw values, or None where no value of a field equals its item: an enum equals
    only its own names; a number or a bool equals a number or a bool (not a text)."""
    if len(row) != len(defs):
        return None
    out = []
    for value, d in zip(row, defs):
        if d.type == "enum":
            if not isinstance(value, str) or value not in d.values:
                return None
            out.append(list(d.values).index(value))
        elif isinstance(value, (bool, int)) and not isinstance(value, str):
            out.append(int(value))
        else:
            return None
    return tuple(out)


class Rows(list):
    """The rows as the other listers give them (a sorted list of tuples), with the int64 matrix they came from: the
    count tables of a large bag are made of the matrix (ckspace.solve.count), not of the tuples again."""

    def __init__(self, rows: Iterable[Row], matrix: np.ndarray):
        super().__init__(rows)
        self.matrix = matrix


def _raw_domain(d: FieldDef, raw: Sequence[int] | None) -> list[int]:
    """The field's raw values (an enum's indices, a bool's 0/1, an int's values), narrowed to `raw`."""
    if d.type == "bool":
        values = [0, 1]
    elif d.type == "enum":
        values = list(range(len(d.values)))
    else:
        values = [int(v) for v in d.values]
    if raw is None:
        return values
    allowed = set(raw)
    return [v for v in values if v in allowed]


def _holds(when: E.Node, require: E.Node, columns: Mapping[str, np.ndarray], defs: Mapping[str, FieldDef],
           resolve: Callable[[tuple[str, ...]], object] | None, length: int) -> np.ndarray:
    ev = _Evaluator(columns, defs, resolve)
    w = _truth(ev.value(when))
    r = _truth(ev.value(require))
    return np.broadcast_to(~w | r, (length,))


def _truth(v: _Value) -> np.ndarray:
    if v.text is not None:
        return np.asarray(bool(v.text))
    if v.enum is not None:  # an enum value's truth is its text's: every value of a field is a non-empty name
        return np.asarray(v.array) == np.asarray(v.array)
    return np.asarray(v.array) != 0


class _Evaluator:
    def __init__(self, columns: Mapping[str, np.ndarray], defs: Mapping[str, FieldDef],
                 resolve: Callable[[tuple[str, ...]], object] | None):
        self.columns = columns
        self.defs = defs
        self.resolve = resolve

    def value(self, node: E.Node) -> _Value:
        t = type(node)
        if t is E.Const:
            return _constant(node.value)  # type: ignore[union-attr]
        if t is E.Field:
            name = node.name  # type: ignore[union-attr]
            d = self.defs.get(name)
            if d is None or name not in self.columns:
                raise Unsupported(f"field {name} is not in the bag")
            return _Value(self.columns[name], tuple(d.values) if d.type == "enum" else None)
        if t is E.Ref:
            if self.resolve is None:
                raise Unsupported("a data reference without data")
            return _constant(self.resolve(node.path))  # type: ignore[union-attr]
        if t is E.BinOp:
            return _Value(_arith(node.op, self.value(node.left).number(),  # type: ignore[union-attr]
                                 self.value(node.right).number()))  # type: ignore[union-attr]
        if t is E.Neg:
            a = self.value(node.operand).number()  # type: ignore[union-attr]
            return _Value(-np.asarray(a, dtype=np.int64))
        if t is E.Cmp:
            return _Value(_compare(node.op, self.value(node.left), self.value(node.right)))  # type: ignore[union-attr]
        if t is E.And or t is E.Or:
            parts = [_truth(self.value(i)) for i in node.items]  # type: ignore[union-attr]
            out = parts[0]
            for p in parts[1:]:
                out = (out & p) if t is E.And else (out | p)
            return _Value(out.astype(np.int64))
        if t is E.Not:
            return _Value((~_truth(self.value(node.operand))).astype(np.int64))  # type: ignore[union-attr]
        if t is E.IfElse:
            c = _truth(self.value(node.cond))  # type: ignore[union-attr]
            x, y = self.value(node.then), self.value(node.other)  # type: ignore[union-attr]
            return _Value(np.where(c, x.number(), y.number()))
        if t is E.Call:
            args = [np.asarray(self.value(a).number(), dtype=np.int64) for a in node.args]  # type: ignore[union-attr]
            pick = np.minimum if node.fn == "min" else np.maximum  # type: ignore[union-attr]
            out = args[0]
            for a in args[1:]:
                out = pick(out, a)
            return _Value(out)
        if t is E.In and isinstance(node.right, E.Const):  # type: ignore[union-attr]
            if isinstance(node.left, E.Tup):  # type: ignore[union-attr]
                items = [self.value(i) for i in node.left.items]  # type: ignore[union-attr]
                return _Value(_row_member(items, node.right.value, node.negate))  # type: ignore[union-attr]
            return _Value(_member(self.value(node.left), node.right.value, node.negate))  # type: ignore[union-attr]
        raise Unsupported(f"no vectorised value for {t.__name__}")


def _constant(value: object) -> _Value:
    if isinstance(value, str):
        return _Value(0, text=value)
    if isinstance(value, (bool, int)):
        if abs(int(value)) >= _BOUND:
            raise Unsupported("a constant beyond int64")
        return _Value(int(value))
    raise Unsupported(f"a constant {type(value).__name__}")


def _bound(a: np.ndarray | int) -> int:
    arr = np.asarray(a)
    return int(np.abs(arr).max()) if arr.size else 0


def _arith(op: str, a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    x, y = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if op in "+-":
        if _bound(x) + _bound(y) >= _BOUND:
            raise Unsupported("a sum beyond int64")
        return x + y if op == "+" else x - y
    if op == "*":
        if _bound(x) * _bound(y) >= _BOUND:
            raise Unsupported("a product beyond int64")
        return x * y
    zero = y == 0
    safe = np.where(zero, 1, y)
    if op == "//":
        return np.where(zero, 0, np.floor_divide(x, safe))
    if op == "%":
        return np.where(zero, x, np.remainder(x, safe))
    raise Unsupported(f"operator {op}")


def _compare(op: str, a: _Value, b: _Value) -> np.ndarray:
    if op in ("==", "!="):
        same = _equal(a, b)
        return same if op == "==" else ~same
    x, y = a.number(), b.number()
    if op == "<":
        return np.asarray(x < y)
    if op == "<=":
        return np.asarray(x <= y)
    if op == ">":
        return np.asarray(x > y)
    return np.asarray(x >= y)


def _equal(a: _Value, b: _Value) -> np.ndarray:
    """== as Python has it on the decoded values: text equals only text, numbers and bools compare as numbers."""
    if a.text is not None and b.text is not None:
        return np.asarray(a.text == b.text)
    if a.text is not None or b.text is not None:
        text, other = (a, b) if a.text is not None else (b, a)
        if other.enum is None:
            return np.zeros_like(np.asarray(other.array), dtype=bool)  # a number is never a text
        code = other.enum.index(text.text) if text.text in other.enum else -1
        return np.asarray(other.array) == code
    if a.enum is not None or b.enum is not None:
        if a.enum is not None and b.enum is not None and a.enum == b.enum:
            return np.asarray(np.asarray(a.array) == np.asarray(b.array))
        raise Unsupported("== between an enum and another value")
    return np.asarray(np.asarray(a.array) == np.asarray(b.array))


MAX_TABLE_ROWS = 64  # a tuple's membership is tested row by row: a larger table is pysearch's (its relations)


def _row_member(items: list[_Value], collection: object, negate: bool) -> np.ndarray:
    """A tuple in a constant table of rows: Python's tuple equality, item by item, against each row."""
    if not isinstance(collection, (tuple, list, frozenset, set)) or len(collection) > MAX_TABLE_ROWS or \
            not all(isinstance(r, (tuple, list)) for r in collection):
        raise Unsupported("a tuple in a large table or in values")
    found: np.ndarray = np.asarray(False)
    for row in collection:
        if len(row) != len(items):
            continue  # a row of another arity never equals the tuple
        match: np.ndarray = np.asarray(True)
        for item, value in zip(items, row):
            match = match & _equal(item, _constant(value))
        found = found | match
    return ~found if negate else found


def _member(item: _Value, collection: object, negate: bool) -> np.ndarray:
    if not isinstance(collection, (tuple, list, frozenset, set)) or \
            not all(isinstance(v, (int, str, bool)) for v in collection):
        raise Unsupported("membership in a table of rows")
    if item.text is not None:
        found = np.asarray(item.text in collection)
    elif item.enum is not None:
        codes = [i for i, v in enumerate(item.enum) if v in collection]
        found = np.isin(np.asarray(item.array), codes)
    else:
        numbers = [int(v) for v in collection if not isinstance(v, str)]
        found = np.isin(np.asarray(item.array), numbers)
    return ~found if negate else found
