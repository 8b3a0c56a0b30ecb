"""Solving: each stratum is factored into a join tree of small CP-SAT models whose solutions are joined in Python.

1. (variant, ndim, dtype) strata are independent models; their fields are constants inside, so rules fold
   (ckspace.solve.folded).
2. Inside a stratum, the fields and the rules that link them form the variable-interaction graph. Its tree
   decomposition (ckspace.solve.jointree) splits it into bags that overlap only in separator fields: given the separator
   values, the rest of a bag is independent of the rest of the tree. Each bag is one CP-SAT model holding every
   constraint whose scope lies inside it, plus implied projections of the larger table constraints
   (ckspace.solve.implied), enumerated on its own (ckspace.solve.bags). Disconnected parts of the graph are separate trees.
3. Counting is message passing: a row's weight is the product, over the bag's children, of the summed weights of
   the child rows that agree with it on their separator; a stratum's count is the product over its trees of the
   summed root weights. Enumeration walks the same join as nested generators (ckspace.solve.walk).
4. Spaces too large for that (the open space: curation tables off) are counted by variable elimination over even
   smaller CP-SAT factors (ckspace.solve.count), without listing bag solutions one by one.
5. A field that no rule touches is a bag of its own without a model; its values are its domain.
"""

from __future__ import annotations

import dataclasses
import operator
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

from ..memo import memo
from . import count, jointree, lazy, walk
from ..rules import expr as E
from .bags import Bag, Key, Stats, TooLarge, message, solve_bag
from ..rules.data import FieldDef
from .folded import Constraint, fold_constraints, implied_for, size_model
from ..rules.model import Model, Stratum

# count_only tries the join tree first and gives up on it when a bag has more local solutions than this.
TREE_LIMIT = 4_000
# configs() multiplies out the trailing independent parts of a stratum into one list when it has at most this many
# tuples.
SUFFIX_LIMIT = 50_000


@dataclass
class StratumPlan:
    stratum: Stratum
    constants: dict[str, object]
    free: list[FieldDef]
    factors: list[Bag] = field(default_factory=list)  # the bags of the join tree; parents before children
    roots: list[int] = field(default_factory=list)  # one per connected part of the interaction graph
    infeasible_by: str | None = None  # id of a rule that folds to false for the whole stratum
    constraints: list[Constraint] = field(default_factory=list)  # the folded rules and filters
    messages: list[dict[Key, int]] | None = None  # after solving: per bag, separator value -> subtree configs
    solver_calls: int = 0  # CP-SAT models solved by count_only's elimination
    timings: dict[str, float] = field(default_factory=dict)  # CPU seconds: compile, solve, combine
    searches: Stats = field(default_factory=Stats)  # CP-SAT searches run for this plan (eager and lazy) and their rows
    shape: tuple | None = None  # its kind, free fields and folded rules: strata of one shape share a plan (_SHAPES)

    def postorder(self) -> list[int]:
        return jointree.postorder([f.children for f in self.factors], self.roots)


@dataclass
class _Shape:
    """What strata whose rules fold alike share: the join tree (bag templates, without rows) and, once one of them
    was walked whole, the free fields' values of every config in walk order."""

    factors: list[Bag]
    roots: list[int]
    free_rows: list[tuple] | None = None


# Per model: plans by shape. On gfx950 the 24 strata have 12 shapes (fp16 and bf16 fold alike, and fp32's 2D and 3D).
_SHAPES: "weakref.WeakKeyDictionary[Model, dict[tuple, _Shape]]" = memo("solve.plan.shapes", weakref.WeakKeyDictionary())
SHARED_ROWS_LIMIT = 50_000  # a walk of at most this many configs is kept (CK's largest stratum has 2,404)


def plan(model: Model, stratum: Stratum, filters: Sequence[E.Node] = ()) -> StratumPlan:
    """Fold the rules (and `filters`, as constraints like any rule) for the stratum and build its join tree (once
    per shape: a stratum whose free fields and folded rules are another's gets copies of that one's bags)."""
    consts, constraints, infeasible = fold_constraints(model, stratum, model.rules_for(stratum.kind), filters)
    free = [f for f in model.fields(stratum.kind) if f.name not in consts]
    result = StratumPlan(stratum, consts, free, infeasible_by=infeasible, constraints=constraints)
    if infeasible:
        return result
    result.shape = (stratum.kind, tuple(f.name for f in free), tuple((c.id, c.when, c.require) for c in constraints))
    shapes = _SHAPES.setdefault(model, {})
    known = shapes.get(result.shape)
    if known is not None:
        result.factors = [dataclasses.replace(bag) for bag in known.factors]  # fresh rows and counters
        result.roots = list(known.roots)
        return result
    _build_tree(result, free, constraints)
    shapes[result.shape] = _Shape([dataclasses.replace(bag) for bag in result.factors], list(result.roots))
    return result


def _build_tree(result: StratumPlan, free: list[FieldDef], constraints: list[Constraint]) -> None:
    names = [f.name for f in free]
    tree = jointree.join_tree(names, [c.scope for c in constraints], size_model(free, constraints, {}))
    for bag in tree.bags:
        members = frozenset(bag.fields)
        up = tree.bags[bag.parent].fields if bag.parent is not None else ()
        key = tuple(i for i, f in enumerate(bag.fields) if f in up)
        result.factors.append(Bag(
            bag.fields, [c for c in constraints if c.scope <= members], implied_for(members, constraints),
            bag.parent, list(bag.children), key, tuple(up.index(bag.fields[i]) for i in key),
            tuple(i for i, f in enumerate(bag.fields) if f not in up),
        ))
    result.roots = list(tree.roots)


def _message(p: StratumPlan, i: int) -> dict[Key, int]:
    """The message of bag i to its parent: per separator value, the number of configs of i's subtree."""
    bag = p.factors[i]
    assert bag.rows is not None and p.messages is not None
    return message(bag.rows, bag.key, [(p.messages[c], p.factors[c].parent_key) for c in bag.children])


def solve_plan(model: Model, p: StratumPlan, keep_rows: bool = True, limit: int | None = None) -> None:
    """Solve every bag, children first, and compute the count messages.

    With `keep_rows` false (counting only) a bag's rows are dropped once its message is computed. With `limit`, a
    bag with more local solutions raises TooLarge and leaves the plan unsolved.
    """
    if p.infeasible_by or p.messages is not None:
        return
    p.messages = [{} for _ in p.factors]
    empty = False
    for i in p.postorder():
        fac = p.factors[i]
        if empty:
            fac.rows = []
            continue
        try:
            fac.rows = solve_bag(model.data.fields, fac, p.timings, limit=limit, stats=p.searches)
        except TooLarge:
            p.messages = None
            for f in p.factors:
                f.rows = None
            raise
        t0 = time.process_time()
        p.messages[i] = _message(p, i)
        p.timings["combine"] = p.timings.get("combine", 0.0) + time.process_time() - t0
        if not p.messages[i]:
            empty = True  # no row of this bag extends to its subtree: the stratum is empty, skip the rest
        if not keep_rows:
            for c in fac.children:
                p.factors[c].rows = None
    if not keep_rows:
        for r in p.roots:
            p.factors[r].rows = None


def count_plan(p: StratumPlan) -> int:
    if p.infeasible_by:
        return 0
    if p.messages is None:
        raise ValueError("count_plan needs a solved plan (call solve_plan first)")
    total = 1
    for r in p.roots:
        total *= p.messages[r].get((), 0)
    return total


# Counts of strata already counted in this process, keyed by the stratum's free fields and folded constraints: in
# the open space 2D and 3D, and fp16 and bf16, fold to the very same constraints (only CK's tables tell them
# apart), so their counts are equal.
_COUNTED: "OrderedDict[tuple, int]" = memo("solve.plan.counted", OrderedDict())
COUNTED_LIMIT = 1024


def count_only(model: Model, p: StratumPlan) -> int:
    """The number of configs of a stratum, without keeping solutions or building anything of the count's size.

    First the plan's join tree, with each bag capped at TREE_LIMIT local solutions: CK's curated space counts that
    way in milliseconds. If a bag is larger (the open space, about 10^11 configs per stratum), the stratum is
    counted by variable elimination over small CP-SAT factors instead (ckspace.solve.count).
    """
    if p.infeasible_by:
        return 0
    if p.messages is not None:
        return count_plan(p)
    key = (tuple(p.free), frozenset((c.when, c.require) for c in p.constraints))
    hit = _COUNTED.get(key)
    if hit is not None:
        return hit
    try:
        solve_plan(model, p, keep_rows=False, limit=TREE_LIMIT)
        total = count_plan(p)
    except TooLarge:
        total, calls = count.count_by_elimination(model, p.stratum.kind, p.free, p.constraints, p.timings)
        p.solver_calls += calls
    _COUNTED[key] = total
    if len(_COUNTED) > COUNTED_LIMIT:
        _COUNTED.popitem(last=False)
    return total


def configs(model: Model, p: StratumPlan, lazy_walk: bool | None = None) -> Iterator[dict[str, object]]:
    """Every config of a stratum as a dict of its field values (see rows)."""
    keys, values = rows(model, p, lazy_walk)
    for row in values:
        yield dict(zip(keys, row))


def rows(model: Model, p: StratumPlan, lazy_walk: bool | None = None) -> tuple[tuple[str, ...], Iterator[tuple]]:
    """Every config of a stratum (solving it if needed): the join of its bags' solutions, streamed tree by tree.

    Returns the keys, the stratum constants then every free field in the order of fields.toml, and the rows of
    values in that order (tuples: a listing names and packs them without a dict per kernel). The order of the
    configs is fixed by the plan (same inputs, same order), and the same whichever way the bags are solved:

    * eagerly (ckspace.solve.walk): every bag enumerated completely first, when each has at most TREE_LIMIT solutions
      (CK's curated space) or the plan was already solved;
    * lazily (ckspace.solve.lazy): a stratum with a larger bag (the open space) is streamed, each bag solved on demand
      under the separator value its parent's row gives, so that the first config comes after a few small solves
      and memory stays bounded.

    `p.searches` counts the CP-SAT searches run for the plan and the rows they listed.

    `lazy_walk` forces one way (True: lazy, False: eager, whatever the sizes).
    """
    keys = (*p.constants, *(f.name for f in p.free))
    return keys, _rows(model, p, lazy_walk)


def _rows(model: Model, p: StratumPlan, lazy_walk: bool | None) -> Iterator[tuple]:
    if p.infeasible_by:
        return
    base = tuple(p.constants.values())
    shape = _SHAPES.get(model, {}).get(p.shape) if p.shape is not None else None
    if shape is not None and shape.free_rows is not None and lazy_walk is not True:
        for values in shape.free_rows:  # a stratum of this shape was walked: the same configs, other constants
            yield base + values
        return
    if lazy_walk is None and p.messages is None:
        try:
            solve_plan(model, p, limit=TREE_LIMIT)
        except TooLarge:
            lazy_walk = True
    if lazy_walk:
        walker = lazy.LazyWalker(model.data.fields, p.factors, p.searches, p.timings,
                                 size=size_model(p.free, p.constraints, {}))
        for values in _join(walker, p):
            yield base + values
        return
    if p.messages is not None and any(f.rows is None for f in p.factors):
        p.messages = None  # counted without keeping rows (count_only): solve again, keeping them
    if p.messages is None:
        solve_plan(model, p)
    total = count_plan(p)
    if total == 0:
        return
    assert p.messages is not None
    walked = _join(walk.Walker(model.data.fields, p.factors, p.messages), p)
    if shape is None or total > SHARED_ROWS_LIMIT:
        for values in walked:
            yield base + values
        return
    shape.free_rows = free_rows = list(walked)  # kept for the other strata of the shape (fp16 -> bf16)
    for values in free_rows:
        yield base + values


def _join(walker: "walk.Walker | lazy.LazyWalker", p: StratumPlan) -> Iterator[tuple]:
    """The product of the roots' subtrees, as rows of the free fields' values in field order."""
    names = [n for r in p.roots for n in walker.names(r)]
    where = {n: i for i, n in enumerate(names)}
    order = [where[f.name] for f in p.free]
    # Called with no argument (`...`: mypy cannot infer a lambda that binds its root as a default argument
    # against a zero-argument Callable).
    parts: list[Callable[..., Iterable[tuple]]] = [(lambda r=r: walker.subtree(r, ())) for r in p.roots]
    # The product re-makes every part after the first once per combination of the parts before it. Trailing roots
    # with few configs each (fields no rule links, a handful of values each) are therefore multiplied out once,
    # into one list: the same tuples in the same order, without a generator frame per root per config.
    small, total = len(parts), 1
    while small > 1:
        m = walker.messages[p.roots[small - 1]]
        n = m.get((), 0) if m is not None else None
        if n is None or total * n > SUFFIX_LIMIT:
            break
        total *= n
        small -= 1
    if len(parts) - small >= 2:
        tail = list(walk.product(parts[small:]))
        parts = parts[:small] + [lambda: tail]
    if order == list(range(len(names))):  # the walk yields the fields in field order already
        yield from walk.product(parts)
        return
    pick = operator.itemgetter(*order) if len(order) > 1 else (lambda v: tuple([v[j] for j in order]))
    for values in walk.product(parts):
        yield pick(values)

