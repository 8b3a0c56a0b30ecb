"""A stratum's rules folded to constraints over its free fields, and what planning derives from them.

Folding substitutes the stratum constants (variant, ndim, dtype and the derived fields they fix) into every rule
and filter: rules that cannot apply vanish, and membership tests keep only the stratum's rows of their table
(ckspace.solve.implied.normalize). From the folded constraints the planner takes implied projections for a bag and the
size estimates that steer the tree decomposition.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Mapping, Sequence, Union, cast

from ..memo import memo
from ..rules import expr as E
from . import implied, jointree
from ..rules.data import FieldDef, Rule
from ..rules.model import Model, Stratum


@dataclass
class Constraint:
    """A rule (or filter) folded for one stratum: `when` implies `require` over the stratum's free fields."""

    id: str
    when: E.Node
    require: E.Node
    scope: frozenset[str]


def constraint(cid: str, when: E.Node, require: E.Node) -> Constraint:
    return Constraint(cid, when, require, E.fields_of(when) | E.fields_of(require))


def fold_constraints(model: Model, stratum: Stratum, rules: Sequence[Rule],
                     filters: Sequence[E.Node]) -> tuple[dict[str, object], list[Constraint], str | None]:
    """Substitute the stratum's constants into every rule and filter; drop what holds trivially.

    Returns the constants, the constraints and, when a rule folds to false outright, its id (the stratum is empty).
    """
    consts: dict[str, object] = stratum.constants()
    # Derived fields whose formula is constant in the stratum (layout) become constants too.
    for d in model.data.derives.values():
        if d.output_only or not d.applies_to(stratum.kind):
            continue
        folded = E.fold(d.expr, consts, model.resolve)
        if isinstance(folded, E.Const):
            consts[d.field] = folded.value
    out: list[Constraint] = []
    items = [(r.id, r.when, r.require) for r in rules if r.applies_to(stratum.kind)]
    items += [(f"where#{i + 1}", E.Const(True), f) for i, f in enumerate(filters)]
    memo = _FOLDS.setdefault(model, {})
    for rid, when, require in items:
        w, r = _folded(memo, model, when, require, consts)
        if isinstance(w, E.Const) and not w.value:
            continue
        if isinstance(r, E.Const):
            if r.value:
                continue
            if isinstance(w, E.Const):
                return consts, [], rid
        # `when -> a and b` is `when -> a` plus `when -> b`: separate constraints have smaller scopes.
        for part in (r.items if isinstance(r, E.And) else (r,)):
            out.append(constraint(rid, w, part))
    return consts, out, None


def empty_by(model: Model, stratum: Stratum) -> str | None:
    """The id of a rule that folds to false for the whole stratum (it cannot hold a kernel: depthwise 3D), else None.
    The same folds as fold_constraints, kept for the plan that follows."""
    consts = stratum.constants()
    memo = _FOLDS.setdefault(model, {})
    for rule in model.rules_for(stratum.kind):
        w, r = _folded(memo, model, rule.when, rule.require, consts)
        if isinstance(w, E.Const) and w.value and isinstance(r, E.Const) and not r.value:
            return rule.id
    return None


# Per model: a rule's folded (when, require) by the constants it reads. Most rules read one or two of variant,
# ndim and dtype, so the 21 strata of an arch fold each rule a few times, not 21 (half of planning was folding).
# One dict holds two kinds of entry: by (id(when), id(require)) the fields the rule reads (with the rule), and by
# those ids plus the constants read the folded pair.
_Folded = tuple[E.Node, E.Node]
_Reads = tuple[tuple[str, ...], _Folded]
_FoldMemo = dict[tuple, Union[_Reads, _Folded]]
_FOLDS: "weakref.WeakKeyDictionary[Model, _FoldMemo]" = memo("solve.folded.folds", weakref.WeakKeyDictionary())


def _folded(memo: _FoldMemo, model: Model, when: E.Node, require: E.Node,
            consts: Mapping[str, object]) -> _Folded:
    """The rule folded with the stratum's constants (the require part only where `when` may hold)."""
    reads = cast("_Reads | None", memo.get((id(when), id(require))))
    if reads is None:  # the nodes are kept alive by the model's rules, so their ids stay theirs
        reads = memo[(id(when), id(require))] = (tuple(sorted(E.fields_of(when) | E.fields_of(require))),
                                                 (when, require))
    names = reads[0]
    key = (id(when), id(require), tuple((n, consts[n]) for n in names if n in consts))
    hit = cast("_Folded | None", memo.get(key))
    if hit is None:
        w = implied.normalize(E.fold(when, consts, model.resolve))
        r = w if isinstance(w, E.Const) and not w.value else implied.normalize(E.fold(require, consts, model.resolve))
        hit = memo[key] = (w, r)
    return hit


def implied_for(bag: frozenset[str], constraints: Sequence[Constraint]) -> list[Constraint]:
    """Projections onto `bag` of the membership tests of constraints that do not fit in it.

    A conditional constraint (`when` -> membership) projects only when the bag can evaluate `when` itself.
    """
    out = []
    for c in constraints:
        if c.scope <= bag or not (c.scope & bag) or not E.fields_of(c.when) <= bag:
            continue
        for test in implied.memberships(c.require):
            node = implied.projection(test, bag)
            if node is not None:
                out.append(constraint(f"{c.id}/projected", c.when, node))
    return out


def size_model(defs: Sequence[FieldDef], constraints: Sequence[Constraint],
               defined_by: Mapping[str, frozenset[str]]) -> jointree.SizeModel:
    """How large bags would be, for the elimination heuristic (planning only; no solution depends on it).

    Effective domains: what the unconditional membership tests leave of each field (the curated tables allow a
    handful of tile_k values, not 32). Tables: unconditional membership tests over plain fields. Determined:
    hidden fields (by their definitions) and fields pinned by an unconditional `field == expression`.
    """
    allowed: dict[str, set] = {}
    tables: list[tuple[frozenset[str], float]] = []
    determined = dict(defined_by)
    for c in constraints:
        if not isinstance(c.when, E.Const):
            continue
        r = c.require
        if isinstance(r, E.Cmp) and r.op == "==" and isinstance(r.left, E.Field) and r.left.name not in E.fields_of(r.right):
            determined.setdefault(r.left.name, E.fields_of(r.right))
        for test in implied.memberships(r):
            items = test.left.items if isinstance(test.left, E.Tup) else (test.left,)
            if isinstance(test.right, E.Const) and all(isinstance(i, E.Field) for i in items):
                n = len(implied.project_rows(test.right.value, (), tuple(range(len(items)))) or ())
                tables.append((frozenset(i.name for i in items), math.log2(max(n, 1))))  # type: ignore[union-attr]
            for f in c.scope:
                node = implied.projection(test, {f})
                if isinstance(node, E.In) and isinstance(node.right, E.Const):
                    vals = {row[0] for row in cast("tuple[tuple, ...]", node.right.value)}  # projection's rows
                    allowed[f] = allowed[f] & vals if f in allowed else vals
    weight = {}
    for d in defs:
        n = len(d.values)
        if d.name in allowed:
            n = sum(1 for v in d.values if v in allowed[d.name])
        weight[d.name] = math.log2(max(n, 1))
    return jointree.SizeModel(weight, tables, determined)
