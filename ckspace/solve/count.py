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
   first), sparse ones dict joins with Python integers. What is left at the end is the count.

Every constraint is checked by CP-SAT; Python only multiplies and adds counts of rows that agree on shared fields.
Fields no constraint reads contribute their domain size.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from . import abstract, jointree
from .bags import Bag, solve_bag
from ..rules.data import FieldDef
from .folded import Constraint, constraint, implied_for, size_model
from ..rules.model import Model

Table = dict[tuple, int]


@dataclass
class CountFactor:
    """A table over `fields`: each row (raw solver values) with its multiplicity."""

    fields: tuple[str, ...]
    table: Table


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
    common = [f for f in a.fields if f in b.fields]
    ia = [a.fields.index(f) for f in common]
    ib = [b.fields.index(f) for f in common]
    rest = [i for i, f in enumerate(b.fields) if f not in common]
    index: dict[tuple, list[tuple[tuple, int]]] = {}
    for row, n in b.table.items():
        index.setdefault(tuple([row[i] for i in ib]), []).append((tuple([row[i] for i in rest]), n))
    out: Table = {}
    for row, n in a.table.items():
        for tail, m in index.get(tuple([row[i] for i in ia]), ()):
            key = row + tail
            out[key] = out.get(key, 0) + n * m
    return CountFactor(a.fields + tuple(b.fields[i] for i in rest), out)


def _sum_out(f: CountFactor, name: str) -> CountFactor:
    i = f.fields.index(name)
    keep = [j for j in range(len(f.fields)) if j != i]
    out: Table = {}
    for row, n in f.table.items():
        key = tuple([row[j] for j in keep])
        out[key] = out.get(key, 0) + n
    return CountFactor(tuple(f.fields[j] for j in keep), out)


def _join_sum(a: CountFactor, b: CountFactor, name: str) -> CountFactor:
    """Join of two tables with `name` summed out on the fly (the joined table is never stored)."""
    common = [f for f in a.fields if f in b.fields]
    ia = [a.fields.index(f) for f in common]
    ib = [b.fields.index(f) for f in common]
    rest = [i for i, f in enumerate(b.fields) if f not in common]
    fields = a.fields + tuple(b.fields[i] for i in rest)
    keep = [j for j, f in enumerate(fields) if f != name]
    index: dict[tuple, list[tuple[tuple, int]]] = {}
    for row, n in b.table.items():
        index.setdefault(tuple([row[i] for i in ib]), []).append((tuple([row[i] for i in rest]), n))
    out: Table = {}
    for row, n in a.table.items():
        for tail, m in index.get(tuple([row[i] for i in ia]), ()):
            full = row + tail
            key = tuple([full[j] for j in keep])
            out[key] = out.get(key, 0) + n * m
    return CountFactor(tuple(fields[j] for j in keep), out)


# Dense arrays (numpy) are used for a bucket when the array over all its fields has at most this many cells.
DENSE_LIMIT = 30_000_000


def _dense_eliminate(bucket: Sequence[CountFactor], name: str) -> CountFactor | None:
    """Sum out `name` from the product of the bucket's tables with numpy.einsum over dense arrays.

    Returns None when the arrays would be too large or int64 could overflow (the caller then joins dicts).
    Exact: integer arithmetic only, with an overflow bound checked beforehand.
    """
    import numpy as np

    fields: list[str] = []
    for f in bucket:
        fields += [x for x in f.fields if x not in fields]
    if len(fields) > 52:
        return None
    values: dict[str, list] = {x: [] for x in fields}
    for f in bucket:
        for j, x in enumerate(f.fields):
            seen = set(values[x])
            values[x] += [v for v in dict.fromkeys(r[j] for r in f.table) if v not in seen]
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
    for f in bucket:
        bound *= max(f.table.values(), default=0)
    if bound >= 2**62:
        return None
    pos = {x: {v: i for i, v in enumerate(values[x])} for x in fields}
    letters = {x: chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26) for i, x in enumerate(fields)}
    arrays, subscripts = [], []
    for f in bucket:
        arr = np.zeros(tuple(len(values[x]) for x in f.fields), dtype=np.int64)
        idx = tuple(np.array([pos[x][r[j]] for r in f.table], dtype=np.intp) for j, x in enumerate(f.fields))
        arr[idx] = np.fromiter(f.table.values(), dtype=np.int64, count=len(f.table))
        arrays.append(arr)
        subscripts.append("".join(letters[x] for x in f.fields))
    kept = [x for x in fields if x != name]
    spec = ",".join(subscripts) + "->" + "".join(letters[x] for x in kept)
    result = np.einsum(spec, *arrays, optimize=True)
    if not kept:
        value = int(result)
        return CountFactor((), {(): value} if value else {})
    nz = np.nonzero(result)
    counts = result[nz].tolist()
    keys = zip(*[[values[x][i] for i in axis.tolist()] for x, axis in zip(kept, nz)])
    return CountFactor(tuple(kept), dict(zip(keys, counts)))


def eliminate(factors: list[CountFactor], order: Sequence[str], timings: dict[str, float] | None = None) -> int:
    """Sum out every field in `order` from the product of `factors`; the remaining constant is the count."""
    t0 = time.process_time()
    pool = list(factors)
    total = 1
    for name in order:
        bucket = [f for f in pool if name in f.fields]
        if not bucket:
            continue
        pool = [f for f in pool if name not in f.fields]
        bucket.sort(key=lambda f: len(f.table))
        if any(not f.table for f in bucket):
            total = 0
            break
        msg = _dense_eliminate(bucket, name) if len(bucket) > 1 or len(bucket[0].table) > 1000 else None
        if msg is None:
            acc = bucket[0]
            for other in bucket[1:-1]:
                acc = _join(acc, other)
            msg = _join_sum(acc, bucket[-1], name) if len(bucket) > 1 else _sum_out(acc, name)
        if not msg.table:
            total = 0
            break
        pool.append(msg)
    else:
        for f in pool:
            assert not f.fields, f.fields
            total *= f.table.get((), 0)
    if timings is not None:
        timings["combine"] = timings.get("combine", 0.0) + time.process_time() - t0
    return total


def order_for(fields: Sequence[str], scopes: Sequence[frozenset[str]], size: jointree.SizeModel) -> list[str]:
    """The elimination order: greedy, smallest table left behind first (see jointree.elimination_order)."""
    adj = jointree.interaction_graph(fields, scopes)
    return [v for v, _ in jointree.elimination_order(fields, adj, size, message_first=True)]


def free_multiplier(fields: Sequence[str], scopes: Sequence[frozenset[str]], defs: Mapping[str, FieldDef]) -> int:
    """The product of the domain sizes of the fields no constraint reads."""
    used = set().union(*scopes) if scopes else set()
    out = 1
    for name in fields:
        if name not in used:
            out *= len(defs[name].values)
    return out


def count_by_elimination(model: Model, kind: str, free: Sequence[FieldDef], constraints: Sequence[Constraint],
                         timings: dict[str, float] | None = None) -> tuple[int, int]:
    """The number of assignments of `free` satisfying `constraints` (folded for one stratum of kernel `kind`).

    Returns (count, number of CP-SAT models solved).
    """
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
        for j, n in enumerate(fields):
            seen = {r[j] for r in rows}
            allowed[n] = allowed[n] & seen if n in allowed else seen
        factors.append(CountFactor(fields, dict.fromkeys(rows, 1)))
    all_scopes = [c.scope for c in cons]
    order = order_for(names, all_scopes, size)
    return eliminate(factors, order, timings) * free_multiplier(names, all_scopes, defs), calls
