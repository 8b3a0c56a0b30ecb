"""Kernels counted by their C++: kernels that differ only in fields that do not change the C++ (fields.toml
`code = false`: pad_m, pad_n, pad_k, which CK's launcher overrides) are one C++ kernel.

A stratum's kernels are pairs (c, p): c the fields that change the C++, p those that do not. The distinct C++
kernels are the c with some p. Each is counted once, at its first p (in the product order of p's values):

    distinct = sum over p of  #{(c, p) in S : no earlier p' has (c, p') in S}

Only the rules (and the filter) that read p decide whether (c, p') is in S once c is, so "(c, p') not in S" is the
negation of those rules with p' substituted: a filter on c. Assignments of p whose substituted rules are the same
give the same set of c and are counted together. Two cases need no solve: no rule reads p (every c has every p, so
distinct = count / |p's values|), and one assignment of p only (distinct = count).
"""

from __future__ import annotations

from itertools import product
from typing import Callable, Sequence

from ..rules import expr as E
from ..rules.data import FieldDef, Rule
from ..rules.model import Model, Stratum

Counter = Callable[[E.Node | None], int]  # the stratum's kernels that pass a filter (None: all of them)


def free_fields(model: Model, stratum: Stratum) -> list[FieldDef]:
    """The stratum's fields that do not change the C++."""
    return [f for f in model.fields(stratum.kind) if not f.code]


def _condition(when: E.Node, require: E.Node, env: dict[str, object], model: Model) -> E.Node:
    w = E.fold(when, env, model.resolve)
    if isinstance(w, E.Const):
        return E.fold(require, env, model.resolve) if w.value else E.Const(True)
    r = E.fold(require, env, model.resolve)
    if isinstance(r, E.Const):
        return E.Const(True) if r.value else E.Not(w)
    return E.Or((E.Not(w), r))


def _conjuncts(node: E.Node) -> tuple[E.Node, ...]:
    return tuple(p for item in node.items for p in _conjuncts(item)) if isinstance(node, E.And) else (node,)


def conjoined(*nodes: E.Node | None) -> E.Node | None:
    """The nodes and-ed as one flat And: the planner splits a filter's top-level conjuncts into constraints of their
    own (a nested And would be one constraint over all its fields, one large bag)."""
    parts = [p for n in nodes if n is not None for p in _conjuncts(n)]
    return None if not parts else parts[0] if len(parts) == 1 else E.And(tuple(parts))


def _and(items: Sequence[E.Node]) -> E.Node:
    if any(isinstance(i, E.Const) and not i.value for i in items):
        return E.Const(False)
    items = [i for i in items if not (isinstance(i, E.Const) and i.value)]
    return E.Const(True) if not items else items[0] if len(items) == 1 else E.And(tuple(items))


def count_distinct(model: Model, stratum: Stratum, rules: Sequence[Rule], where: E.Node | None, total: int,
                   count: Counter) -> int:
    """The stratum's distinct C++ kernels, given its `total` kernels (with `where`) and a counter of its kernels
    under an extra filter (and-ed with `where` by the caller)."""
    free = free_fields(model, stratum)
    if not free or total == 0:
        return total
    names = {f.name for f in free}
    # Only the conjuncts that read p: `when -> (a and pad_m)` is `when -> a` and `when -> pad_m`, and the first
    # holds for every p. (A negated filter over many fields would make one large bag for the solver.)
    reading = [(r.when, part) for r in rules if r.applies_to(stratum.kind) and r.fields & names
               for part in _conjuncts(r.require) if E.fields_of(r.when) & names or E.fields_of(part) & names]
    if where is not None:
        reading += [(E.Const(True), part) for part in _conjuncts(where) if E.fields_of(part) & names]
    assignments = list(product(*(f.values for f in free)))
    if not reading:
        return total // len(assignments)  # every C++ kernel has every assignment
    groups: dict[E.Node, list[tuple]] = {}  # the rules on c that an assignment leaves -> its assignments
    for values in assignments:
        env = {**stratum.constants(), **dict(zip((f.name for f in free), values))}
        condition = _and([_condition(w, r, env, model) for w, r in reading])
        if not (isinstance(condition, E.Const) and not condition.value):
            groups.setdefault(condition, []).append(values)
    if len(groups) == 1 and len(next(iter(groups.values()))) == 1:
        return total  # one assignment: as many C++ kernels as kernels
    distinct = 0
    earlier: list[E.Node] = []
    for condition, members in groups.items():
        fixed = _and([E.Field(f.name) if v else E.Not(E.Field(f.name)) for f, v in zip(free, members[0])]
                     if all(isinstance(v, bool) for v in members[0]) else
                     [E.Cmp("==", E.Field(f.name), E.Const(v)) for f, v in zip(free, members[0])])
        distinct += count(_and([fixed, *(E.Not(c) for c in earlier)]))
        if isinstance(condition, E.Const) and condition.value:
            break  # every C++ kernel has this assignment: the later ones add none
        earlier.append(condition)
    return distinct
