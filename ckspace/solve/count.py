"""Counting a stratum without enumerating it: CP-SAT factors combined by variable elimination.

The open space (curation tables off) has on the order of 10^11 kernels per stratum, and even its join-tree bags
hold up to a million local solutions: too many for CP-SAT to list one by one. Counting needs less:

1. The constraints are rewritten over hidden selector and term fields (ckspace.solve.abstract), which leaves them with
   scopes of two to five fields. Each group of constraints under one maximal scope is a small CP-SAT model,
   enumerated: a factor, i.e. the table of the assignments of its few fields that satisfy it. Factors are solved
   smallest first, and the values a factor leaves of a field narrow that field's domain in the later ones (an
   implied constraint: no solution uses a value some factor rules out); table projections do the same where the
   curated tables apply.
2. Variable elimination: for each field in turn (a greedy order that keeps the tables left behind small), the
   factors that read it are joined on their shared fields, counts multiplied, and the field is summed out: a
   message in the join tree's terms. Dense buckets use numpy.einsum on int64 (with an overflow bound checked
   first), sparse ones a vectorized join (numpy) or, for rows that are not integers or counts that could overflow,
   dict joins with Python integers. Tables stay numpy arrays from one numpy step to the next. What is left at the
   end is the count. tests/test_count_elimination.py checks every path against brute force.

Every constraint is checked by CP-SAT; Python only multiplies and adds counts of rows that agree on shared fields.
Fields no constraint reads contribute their domain size.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence, cast

from . import abstract, jointree
from .bags import Bag, solve_bag
from ..rules.data import FieldDef
from .folded import Constraint, constraint, implied_for, size_model
from ..rules.model import Model

Table = dict[tuple, int]


@dataclass
class CountFactor:
    """A table over `fields`: each row (raw solver values) with its multiplicity.

    Held as a dict (`table`) or, for rows of integers, as numpy arrays (`rows`, one row per line, and `counts`),
    whichever the step that made it had; the other form is made on demand, once. The numpy steps (dense
    elimination, joins) pass arrays on to each other, so the large messages of the open space are never turned
    into dicts and back."""

    fields: tuple[str, ...]
    table: Table | None = None
    rows: Any = None  # int64 matrix, shape (n, len(fields))
    counts: Any = None  # int64 vector, shape (n,)
    _no_arrays: bool = field(default=False, repr=False)

    def size(self) -> int:
        return len(self.table) if self.table is not None else len(self.counts)

    def as_table(self) -> Table:
        if self.table is None:
            self.table = dict(zip(map(tuple, self.rows.tolist()), self.counts.tolist()))
        return self.table

    def as_arrays(self, np) -> tuple[Any, Any] | None:
        """(rows, counts) as int64 arrays; None for rows that are not all integers, no fields, or counts that could
        overflow int64 arithmetic."""
        if self.rows is None and not self._no_arrays:
            got = _int_rows(np, self.fields, self.table or {})
            if got is None:
                self._no_arrays = True
            else:
                self.rows, self.counts = got
        return None if self.rows is None else (self.rows, self.counts)


def group_scopes(scopes: Sequence[frozenset[str]]) -> list[frozenset[str]]:
    """The scopes that are not inside another scope (each constraint then joins the first group containing it)."""
    unique = sorted(set(scopes), key=lambda s: (-len(s), sorted(s)))
    kept: list[frozenset[str]] = []
    for s in unique:
        if not any(s <= k for k in kept):
            kept.append(s)
    return kept


def _join(a: CountFactor, b: CountFactor) -> CountFactor:
    """Natural join of two count tables, multiplying counts."""
    ia, ib, rest, fields, _ = _layout(a, b, None)
    index: dict[tuple, list[tuple[tuple, int]]] = {}
    for row, n in b.as_table().items():
        index.setdefault(tuple([row[i] for i in ib]), []).append((tuple([row[i] for i in rest]), n))
    out: Table = {}
    for row, n in a.as_table().items():
        for tail, m in index.get(tuple([row[i] for i in ia]), ()):
            key = row + tail
            out[key] = out.get(key, 0) + n * m
    return CountFactor(fields, out)


def _sum_out(f: CountFactor, name: str) -> CountFactor:
    i = f.fields.index(name)
    keep = [j for j in range(len(f.fields)) if j != i]
    out: Table = {}
    for row, n in f.as_table().items():
        key = tuple([row[j] for j in keep])
        out[key] = out.get(key, 0) + n
    return CountFactor(tuple(f.fields[j] for j in keep), out)


def _layout(a: CountFactor, b: CountFactor, name: str | None) -> tuple[list[int], list[int], list[int], tuple[str, ...],
                                                                  list[int]]:
    """How a join of a and b with `name` summed out lines up: the positions of their common fields in a and in b,
    b's other positions, the joined row's fields (a's, then b's others) and the positions kept (all but `name`;
    all with None)."""
    common = [f for f in a.fields if f in b.fields]
    rest = [i for i, f in enumerate(b.fields) if f not in common]
    fields = a.fields + tuple(b.fields[i] for i in rest)
    return ([a.fields.index(f) for f in common], [b.fields.index(f) for f in common], rest, fields,
            [j for j, f in enumerate(fields) if f != name])


def _join_sum(a: CountFactor, b: CountFactor, name: str) -> CountFactor:
    """Join of two tables with `name` summed out on the fly (the joined table is never stored): with numpy when
    every row is integers and the counts fit int64 (_join_sum_numeric), else row by row (_join_sum_rows)."""
    out = _join_sum_numeric(a, b, name)
    return _join_sum_rows(a, b, name) if out is NotImplemented else out


PAIRS_LIMIT = 20_000_000  # matching row pairs numpy may hold at once (each a row of int64s)


def _int_rows(np, fields: tuple[str, ...], table: Table):
    """(rows as an int64 matrix, counts as int64) of a table of integer rows, else None."""
    first = next(iter(table), None)
    if first is None or not fields or any(type(v) is not int for v in first):
        return None
    if max(table.values()) >= 2**62:
        return None
    try:
        rows = np.array(list(table), dtype=np.int64)
    except (OverflowError, ValueError, TypeError):
        return None
    if rows.shape != (len(table), len(fields)):
        return None
    return rows, np.fromiter(table.values(), dtype=np.int64, count=len(table))


def _join_sum_numeric(a: CountFactor, b: CountFactor, name: str):
    """_join_sum_rows's table, vectorized: rows grouped by their common fields, every matching pair expanded, the
    kept fields' rows made unique with their products of counts added (int64, with an overflow bound checked
    first). NotImplemented where it does not apply (non-integer rows, too many pairs, possible overflow)."""
    import numpy as np

    ra, rb = a.as_arrays(np), b.as_arrays(np)
    if ra is None or rb is None:
        return NotImplemented
    (ma, ca), (mb, cb) = ra, rb
    ia, ib, rest, fields, keep = _layout(a, b, name)
    if ia:  # one group key per distinct value of the common fields, shared by both tables
        ga, gb = _row_keys(np, [ma[:, ia], mb[:, ib]])
    else:
        ga, gb = np.zeros(len(ma), dtype=np.intp), np.zeros(len(mb), dtype=np.intp)
    by_group = np.argsort(gb, kind="stable")
    sorted_gb = gb[by_group]
    start = np.searchsorted(sorted_gb, ga, "left")
    lengths = np.searchsorted(sorted_gb, ga, "right") - start
    pairs = int(lengths.sum())
    kept_fields = tuple(fields[j] for j in keep)
    if pairs == 0:
        return CountFactor(kept_fields, {})
    if pairs > PAIRS_LIMIT or int(ca.max()) * int(cb.max()) * pairs >= 2**62:
        return NotImplemented
    a_at = np.repeat(np.arange(len(ma)), lengths)
    within = np.arange(pairs) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    b_at = by_group[np.repeat(start, lengths) + within]
    joined = np.concatenate([ma[a_at], mb[b_at][:, rest]], axis=1)[:, keep]
    counts = ca[a_at] * cb[b_at]
    if not keep:
        return CountFactor((), {(): int(counts.sum())})
    (flat,) = _row_keys(np, [joined])
    _, first, where = np.unique(flat, return_index=True, return_inverse=True)
    sums = np.zeros(len(first), dtype=np.int64)
    np.add.at(sums, where.reshape(-1), counts)
    return CountFactor(kept_fields, rows=joined[first], counts=sums)


def _row_keys(np, matrices: list) -> list:
    """One int64 per row of each matrix (all with the same columns), equal exactly where the rows are equal: the
    columns in mixed radix when their value ranges allow, else the rank of the row among all rows."""
    stacked = np.concatenate(matrices) if len(matrices) > 1 else matrices[0]
    low, high = stacked.min(axis=0), stacked.max(axis=0)
    radix = [int(h) - int(lo) + 1 for lo, h in zip(low, high)]
    space = 1
    for r in radix:
        space *= r
    if space < 2**62:
        flat = np.zeros(len(stacked), dtype=np.int64)
        for j, r in enumerate(radix):
            flat = flat * r + (stacked[:, j] - low[j])
    else:
        _, flat = np.unique(stacked, axis=0, return_inverse=True)
        flat = flat.reshape(-1).astype(np.int64)
    out, at = [], 0
    for m in matrices:
        out.append(flat[at:at + len(m)])
        at += len(m)
    return out


def _join_sum_rows(a: CountFactor, b: CountFactor, name: str) -> CountFactor:
    """_join_sum row by row, with Python integers (any values, any counts)."""
    ia, ib, rest, fields, keep = _layout(a, b, name)
    index: dict[tuple, list[tuple[tuple, int]]] = {}
    for row, n in b.as_table().items():
        index.setdefault(tuple([row[i] for i in ib]), []).append((tuple([row[i] for i in rest]), n))
    out: Table = {}
    for row, n in a.as_table().items():
        for tail, m in index.get(tuple([row[i] for i in ia]), ()):
            full = row + tail
            key = tuple([full[j] for j in keep])
            out[key] = out.get(key, 0) + n * m
    return CountFactor(tuple(fields[j] for j in keep), out)


def distinct(np, column):
    """The sorted distinct values of an int64 column, as np.unique gives them: by counting where the values are small
    and not negative (tile sizes, vector widths, indices: a pass over the column, where np.unique hashes or sorts)."""
    if column.size and 0 <= int(column.min()) and int(column.max()) < DISTINCT_BY_COUNT:
        return np.flatnonzero(np.bincount(column)).astype(np.int64)
    return np.unique(column)


DISTINCT_BY_COUNT = 1 << 20  # the largest value + 1 that distinct() counts in an array of that length

# Dense arrays (numpy) are used for a bucket when the array over all its fields has at most this many cells.
DENSE_LIMIT = 30_000_000


def _dense_eliminate(bucket: Sequence[CountFactor], name: str) -> CountFactor | None:
    """Sum out `name` from the product of the bucket's tables with numpy.einsum over dense arrays, the tables' rows
    and the message's held as int64 arrays (CountFactor.as_arrays).

    Returns None when the arrays would be too large, int64 could overflow or a table's rows are not integers (the
    caller then joins dicts). Exact: integer arithmetic only, with an overflow bound checked beforehand.
    """
    import numpy as np

    fields: list[str] = []
    for f in bucket:
        fields += [x for x in f.fields if x not in fields]
    if len(fields) > 52:
        return None
    arrays_of = [f.as_arrays(np) for f in bucket]
    if any(a is None for a in arrays_of):
        return None
    pairs = cast("list[tuple[Any, Any]]", arrays_of)  # (rows, counts) of each table: none is None here
    columns: dict[str, list] = {x: [] for x in fields}
    for f, (rows, _) in zip(bucket, pairs):
        for j, x in enumerate(f.fields):
            columns[x].append(rows[:, j])
    values = {x: distinct(np, np.concatenate(cols)) for x, cols in columns.items()}

    def cells(names: Iterable[str]) -> int:
        out = 1
        for x in names:
            out *= max(len(values[x]), 1)
        return out

    # einsum contracts pairwise; what must fit are the inputs and the output (and, bounding the pairwise
    # intermediates, the product over all fields but the summed one).
    if any(cells(f.fields) > DENSE_LIMIT for f in bucket) or cells(x for x in fields if x != name) > DENSE_LIMIT:
        return None
    bound = len(values[name])
    for _, counts in pairs:
        bound *= int(counts.max()) if len(counts) else 0
    if bound >= 2**62:
        return None
    letters = {x: chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26) for i, x in enumerate(fields)}
    arrays, subscripts = [], []
    for f, (rows, counts) in zip(bucket, pairs):
        arr = np.zeros(tuple(len(values[x]) for x in f.fields), dtype=np.int64)
        arr[tuple(np.searchsorted(values[x], rows[:, j]) for j, x in enumerate(f.fields))] = counts
        arrays.append(arr)
        subscripts.append("".join(letters[x] for x in f.fields))
    kept = [x for x in fields if x != name]
    result = np.einsum(",".join(subscripts) + "->" + "".join(letters[x] for x in kept), *arrays, optimize=True)
    if not kept:
        value = int(result)
        return CountFactor((), {(): value} if value else {})
    nz = np.nonzero(result)
    rows = np.stack([values[x][axis] for x, axis in zip(kept, nz)], axis=1)
    return CountFactor(tuple(kept), rows=rows, counts=result[nz])


def eliminate(factors: list[CountFactor], order: Sequence[str], timings: dict[str, float] | None = None) -> int:
    """Sum out every field in `order` from the product of `factors`; the remaining constant is the count."""
    t0 = time.process_time()
    pool = eliminate_steps(factors, order)
    total = 0
    if pool is not None:
        total = 1
        for f in pool:
            assert not f.fields, f.fields
            total *= f.as_table().get((), 0)
    if timings is not None:
        timings["combine"] = timings.get("combine", 0.0) + time.process_time() - t0
    return total


def eliminate_steps(factors: list[CountFactor], order: Sequence[str],
                    steps: list[tuple[str, list[CountFactor], CountFactor]] | None = None) -> list[CountFactor] | None:
    """Sum out the fields of `order` one by one from the product of `factors`: the factors left (over the fields
    not in `order`, and constants), or None when the product is empty.

    With `steps`, each elimination is recorded as (field, bucket, message): the factors that read the field (each
    of them is an input factor or the message of an earlier step) and what summing the field out of their product
    left. That is what drawing a config by its rank needs (ckspace.solve.sampling)."""
    pool = list(factors)
    for name in order:
        bucket = [f for f in pool if name in f.fields]
        if not bucket:
            continue
        pool = [f for f in pool if name not in f.fields]
        bucket.sort(key=lambda f: f.size())
        if any(not f.size() for f in bucket):
            return None
        msg = _dense_eliminate(bucket, name) if len(bucket) > 1 or bucket[0].size() > 1000 else None
        if msg is None:
            acc = bucket[0]
            for other in bucket[1:-1]:
                acc = _join(acc, other)
            msg = _join_sum(acc, bucket[-1], name) if len(bucket) > 1 else _sum_out(acc, name)
        if not msg.size():
            return None
        if steps is not None:
            steps.append((name, bucket, msg))
        pool.append(msg)
    return pool


def order_for(fields: Sequence[str], scopes: Sequence[frozenset[str]], size: jointree.SizeModel,
              keep: frozenset[str] = frozenset()) -> list[str]:
    """The elimination order: greedy, smallest table left behind first (see jointree.elimination_order); the fields
    of `keep` are left out (never summed out)."""
    adj = jointree.interaction_graph(fields, scopes)
    return [v for v, _ in jointree.elimination_order(fields, adj, size, message_first=True, keep=keep)]


def free_multiplier(fields: Sequence[str], scopes: Sequence[frozenset[str]], defs: Mapping[str, FieldDef]) -> int:
    """The product of the domain sizes of the fields no constraint reads."""
    used = set().union(*scopes) if scopes else set()
    out = 1
    for name in fields:
        if name not in used:
            out *= len(defs[name].values)
    return out


@dataclass
class Factored:
    """A stratum's constraints as count factors over its free fields and hidden helper fields (before elimination)."""

    names: list[str]  # the free fields (in field order), then the hidden ones
    defs: dict[str, FieldDef]  # every field's definition, hidden ones included
    factors: list[CountFactor]
    scopes: list[frozenset[str]]  # of every constraint, after the rewrite
    size: jointree.SizeModel
    calls: int  # CP-SAT models solved


def factored(model: Model, kind: str, free: Sequence[FieldDef], constraints: Sequence[Constraint],
             timings: dict[str, float] | None = None) -> Factored:
    """The factors of `constraints` (folded for one stratum of kernel `kind`), each solved (CP-SAT or the
    plain-Python join) into its table of rows."""
    rw = abstract.rewrite([(c.id, c.when, c.require) for c in constraints], model.data.fields, kind, model.resolve)
    cons = [constraint(i, w, r) for i, w, r in rw.items]
    defs: dict[str, FieldDef] = {**model.data.fields, **rw.hidden}
    names = [f.name for f in free] + list(rw.hidden)
    rank = {n: i for i, n in enumerate(names)}
    size = size_model([defs[n] for n in names], cons, rw.defined_by)
    # Small factors first: the values each leaves of its fields narrow the domains of the larger ones (a value no
    # solution of one factor uses is in no solution at all), which keeps the large enumerations tight.
    scopes = sorted(group_scopes([c.scope for c in cons]), key=lambda sc: (size(sc), sorted(sc, key=rank.__getitem__)))
    allowed: dict[str, set[int]] = {}
    factors = []
    calls = 0
    for scope in scopes:
        fields = tuple(sorted(scope, key=rank.__getitem__))
        fac = Bag(fields, [c for c in cons if c.scope <= scope], implied_for(scope, cons))
        rows = solve_bag(defs, fac, timings, domains={n: allowed[n] for n in fields if n in allowed})
        calls += fac.solver_calls
        made = _array_factor(fields, rows) if len(rows) >= ARRAY_ROWS else None
        if made is not None:  # a large bag: its values per field and its table from one int64 matrix
            factor, columns = made
        else:
            factor = CountFactor(fields, dict.fromkeys(rows, 1))
            columns = [set(column) for column in zip(*rows)] if rows else [set() for _ in fields]
        for n, seen in zip(fields, columns):
            allowed[n] = allowed[n] & seen if n in allowed else seen
        factors.append(factor)
    return Factored(names, defs, factors, [c.scope for c in cons], size, calls)


ARRAY_ROWS = 10_000  # a bag of at least this many rows becomes its count table as numpy arrays directly


def _array_factor(fields: tuple[str, ...], rows: list[tuple]) -> tuple[CountFactor, list[set[int]]] | None:
    """The count table of a bag's rows (distinct, each counted once) as int64 arrays, and the values of each field,
    without a dict of the rows and a set per column of Python tuples (the open space's tile-load bags hold 240,000
    rows of 8 fields); None when the rows are not all integers."""
    if not fields or any(type(v) is not int for v in rows[0]):
        return None
    import numpy as np

    matrix = getattr(rows, "matrix", None)  # listed by numpy (solve.nplist): its matrix, read-only
    if matrix is None:
        try:
            matrix = np.array(rows, dtype=np.int64)
        except (OverflowError, ValueError, TypeError):
            return None
    if matrix.shape != (len(rows), len(fields)):
        return None
    columns = [set(distinct(np, matrix[:, j]).tolist()) for j in range(len(fields))]
    return CountFactor(fields, rows=matrix, counts=np.ones(len(rows), dtype=np.int64)), columns


def count_by_elimination(model: Model, kind: str, free: Sequence[FieldDef], constraints: Sequence[Constraint],
                         timings: dict[str, float] | None = None) -> tuple[int, int]:
    """The number of assignments of `free` satisfying `constraints` (folded for one stratum of kernel `kind`).

    Returns (count, number of CP-SAT models solved).
    """
    f = factored(model, kind, free, constraints, timings)
    order = order_for(f.names, f.scopes, f.size)
    return eliminate(f.factors, order, timings) * free_multiplier(f.names, f.scopes, f.defs), f.calls
