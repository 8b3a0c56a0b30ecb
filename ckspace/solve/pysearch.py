"""A bag's rows listed in plain Python: a backtracking join over CK's small tables, without OR-Tools.

CK's catalogs are joins of small curated tables (tiles, wave layouts, warp tiles, vector and pipeline tables), so
most bags of a catalog stratum have a few hundred rows that the tables all but list. Here the membership tests of a
bag are its generators: each becomes a relation over its plain fields, indexed by every prefix of the search order,
so a field's candidates are the values the tables allow next to the values already chosen. Every constraint of the
bag (and its implied projections) is then checked, compiled to closures with the plain-Python semantics of
`ckspace.rules.expr.evaluate`, as soon as its fields are set.

The result is the same list CP-SAT gives (`ckspace.solve.cpsat.enumerate_all`): every assignment of the bag's fields
that satisfies its constraints, as raw solver values, sorted. A search that would visit more than `budget` partial
assignments (an open-space bag) or meets an expression it cannot evaluate stops at once with `Unsupported`, and the
caller asks CP-SAT: the answer never depends on which of the two listed it (tests compare them).
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from ..rules import expr as E
from ..rules.expr import Unsupported, compile_node
from ..rules.data import FieldDef
from . import implied

Row = tuple[int, ...]
Fn = Callable[[Mapping[str, object]], object]

# Partial assignments a search may visit before it hands the bag to CP-SAT: BUDGET, plus PER_ROW for each row found
# so far. CK's largest catalog bag (gfx950 full, 242 rows) visits a few thousand. CP-SAT lists a solution in about
# 30 us and this search visits a partial assignment in about 1 us, so a search that finds rows at least every PER_ROW
# visits is the faster one: the open space's largest bags (64,117 and 92,079 rows on gfx950) take 0.26 s here and
# 1.8 and 2.7 s in CP-SAT. A bag whose constraints prune late (a few thousand rows after millions of visits) runs
# into the bound within 20 ms and goes to CP-SAT, whose propagation prunes it.
BUDGET = 20_000
PER_ROW = 20


def rows(defs: Sequence[FieldDef], constraints: Sequence, narrowed: Mapping[str, Sequence[int]],
         limit: int | None = None, budget: int = BUDGET, per_row: int = PER_ROW) -> list[Row]:
    """Every assignment of `defs` (narrowed to raw values) satisfying `constraints` (each with `when`, `require`),
    as sorted raw rows; OverflowError beyond `limit` rows (as CP-SAT's enumeration); Unsupported to defer."""
    names = [d.name for d in defs]
    domains = {d.name: _domain(d, narrowed.get(d.name)) for d in defs}
    checks = [(compile_node(c.when), compile_node(c.require), E.fields_of(c.when) | E.fields_of(c.require), c)
              for c in constraints]
    for when, require, scope, c in checks:  # a constraint of one field filters its domain outright
        if len(scope) == 1:
            (name,) = scope
            domains[name] = [v for v in domains[name] if _holds(when, require, {name: v})]
    relations = _relations(constraints, set(names), domains)
    order = _order(names, domains, relations)
    position = {n: i for i, n in enumerate(order)}
    at_level: list[list[tuple[Fn, Fn]]] = [[] for _ in order]
    for when, require, scope, _ in checks:
        if len(scope) > 1:
            at_level[max(position[n] for n in scope)].append((when, require))
    candidates = [_candidates(name, position, domains[name], relations) for name in order]
    raw = [_raw_of(d) for d in defs]
    index_of = [position[n] for n in names]  # row positions -> search levels
    out: list[Row] = []
    env: dict[str, object] = {}
    values: list[object] = [None] * len(order)
    visited = 0
    depth = len(order)

    def descend(level: int) -> None:
        nonlocal visited
        if level == depth:
            out.append(tuple([raw[i][values[index_of[i]]] for i in range(len(names))]))
            if limit is not None and len(out) > limit:
                raise OverflowError(limit)
            return
        name = order[level]
        checks_here = at_level[level]
        for v in candidates[level](values, env):
            visited += 1
            if visited > budget + per_row * len(out):
                raise Unsupported(f"more than {budget} partial assignments and {per_row} per row found")
            env[name] = v
            values[level] = v
            try:
                if all(not w(env) or r(env) for w, r in checks_here):
                    descend(level + 1)
            except (E.ExprError, TypeError, KeyError, ValueError, IndexError) as exc:
                raise Unsupported(f"{type(exc).__name__}: {exc}") from None
        env.pop(name, None)

    if depth:
        descend(0)
    out.sort()
    return out


def _holds(when: Fn, require: Fn, env: Mapping[str, object]) -> bool:
    try:
        return not when(env) or bool(require(env))
    except (E.ExprError, TypeError, KeyError, ValueError, IndexError) as exc:
        raise Unsupported(f"{type(exc).__name__}: {exc}") from None


def _domain(d: FieldDef, raw: Sequence[int] | None) -> list[object]:
    if d.type == "bool":
        values: list[object] = [False, True]
    else:
        values = list(d.values)
    if raw is None:
        return values
    allowed = set(raw)
    if d.type == "enum":
        return [v for i, v in enumerate(values) if i in allowed]
    if d.type == "bool":
        return [v for v in values if int(v) in allowed]  # type: ignore[call-overload]
    return [v for v in values if v in allowed]


def _raw_of(d: FieldDef) -> dict[object, int]:
    if d.type == "enum":
        return {v: i for i, v in enumerate(d.values)}
    if d.type == "bool":
        return {False: 0, True: 1}
    return {v: v for v in d.values}


# -- relations: the generators ---------------------------------------------------------------------------------
class _Relation:
    """The rows of one unconditional membership test, over its plain fields in the bag."""

    def __init__(self, fields: tuple[str, ...], rows: set[tuple], when: E.Node | None = None):
        self.fields = fields
        self.rows = rows
        self.when = when  # None: it always holds; else it holds where `when` does (its fields set before it applies)
        self.when_fields = E.fields_of(when) if when is not None else frozenset()
        self._index: dict[tuple[int, ...], dict[tuple, set]] = {}

    def allowed(self, before: tuple[int, ...], target: int) -> dict[tuple, set]:
        """Per values of the columns `before`, the values of column `target` that occur with them."""
        key = (*before, target)
        hit = self._index.get(key)
        if hit is None:
            hit = {}
            for r in self.rows:
                hit.setdefault(tuple([r[i] for i in before]), set()).add(r[target])
            self._index[key] = hit
        return hit


def _relations(constraints: Sequence, bag: set[str], domains: dict[str, list[object]]) -> list[_Relation]:
    out: list[_Relation] = []
    for c in constraints:
        if isinstance(c.when, E.Const) and not c.when.value:
            continue
        when = None if isinstance(c.when, E.Const) else c.when
        if when is not None and not E.fields_of(when) <= bag:
            continue
        for test in implied.memberships(c.require):
            node = implied.projection(test, bag)
            if not isinstance(node, E.In) or not isinstance(node.left, E.Tup):
                continue
            fields = tuple(i.name for i in node.left.items)  # type: ignore[union-attr]
            if len(set(fields)) != len(fields):
                continue  # a field twice in a tuple: left to the checks
            if when is not None and E.fields_of(when) & set(fields):
                continue  # a condition on its own fields: left to the checks
            out.append(_Relation(fields, {tuple(r) for r in node.right.value}, when))  # type: ignore[union-attr]
    # Semi-join to a fixpoint: a value no relation allows leaves the domain, a row with such a value leaves its
    # relation (the tables shrink to what the bag can use before the search starts).
    changed = True
    while changed:
        changed = False
        for rel in out:
            if rel.when is not None:
                continue  # a conditional table cuts nothing for every assignment
            for i, f in enumerate(rel.fields):
                allowed = set(domains[f])  # True == 1: a table may spell a bool field 1
                if not {r[i] for r in rel.rows} <= allowed:
                    rel.rows, changed = {r for r in rel.rows if r[i] in allowed}, True
            for i, f in enumerate(rel.fields):
                column = {r[i] for r in rel.rows}
                narrowed = [v for v in domains[f] if v in column]
                if len(narrowed) != len(domains[f]):
                    domains[f], changed = narrowed, True
    return out


def _order(names: list[str], domains: dict[str, list[object]], relations: list[_Relation]) -> list[str]:
    """Fields in search order: next the one with the fewest expected candidates given those before it, ties by
    name (a deterministic order that keeps the search a join). A table's fan-out is estimated from its size and
    the distinct values of its columns, without grouping its rows for every choice."""
    distinct = [{f: len({r[i] for r in rel.rows}) for i, f in enumerate(rel.fields)} for rel in relations]
    done: list[str] = []
    chosen: set[str] = set()
    left = sorted(names)
    while left:
        def branching(name: str) -> tuple[float, str]:
            best = float(len(domains[name]))
            for rel, counts in zip(relations, distinct):
                if name not in counts or not rel.when_fields <= chosen:
                    continue
                keyed = 1
                for f, n in counts.items():
                    if f in chosen:
                        keyed *= n
                estimate = len(rel.rows) / keyed if keyed > 1 else counts[name]
                best = min(best, max(estimate, 1.0))
            return best, name

        pick = min(left, key=branching)
        done.append(pick)
        chosen.add(pick)
        left.remove(pick)
    return done


def _candidates(name: str, position: Mapping[str, int], domain: list[object], relations: list[_Relation]):
    """The candidates of `name` at its level, as a function of the values chosen before it."""
    level = position[name]
    lookups = []
    for rel in relations:
        if name not in rel.fields or any(position[f] >= level for f in rel.when_fields):
            continue
        before = tuple(i for i, f in enumerate(rel.fields) if position[f] < level)
        if not before and rel.when is None:
            continue  # the semi-join already cut the domain to this relation's column
        index = rel.allowed(before, rel.fields.index(name))
        levels = tuple(position[rel.fields[i]] for i in before)
        lookups.append((index, levels, compile_node(rel.when) if rel.when is not None else None))
    if not lookups:
        return lambda values, env: domain
    order = {v: i for i, v in enumerate(domain)}

    def allowed(values: list[object], env: Mapping[str, object]) -> list[object]:
        sets = []
        for index, levels, when in lookups:
            if when is not None and not when(env):
                continue
            s = index.get(tuple([values[i] for i in levels]))
            if not s:
                return []
            sets.append(s)
        if not sets:
            return domain
        sets.sort(key=len)
        first, rest = sets[0], sets[1:]
        picked = [v for v in first if v in order and all(v in s for s in rest)]
        picked.sort(key=order.__getitem__)
        return picked

    return allowed
