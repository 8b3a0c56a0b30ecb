"""Solving: the space is factored into independent sub-models, each enumerated with CP-SAT, then combined.

1. (variant, ndim, dtype) strata are independent models; their fields are constants inside, so rules fold.
2. Inside a stratum, the fields and the rules that link them form the variable-interaction graph; its connected
   components (networkx) are independent, so each is enumerated on its own and the stratum is their Cartesian
   product. Counting multiplies the component counts.
3. A field that no rule touches is its own component; its values are its domain.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from . import expr as E
from .data import FieldDef, Rule
from .model import Model, Stratum


@dataclass
class Constraint:
    """A rule (or filter) folded for one stratum: `when` implies `require` over the stratum's free fields."""

    id: str
    when: E.Node
    require: E.Node
    scope: frozenset[str]


@dataclass
class Component:
    fields: list[str]
    constraints: list[Constraint]
    solutions: list[tuple] | None = None
    count: int | None = None


@dataclass
class StratumPlan:
    stratum: Stratum
    constants: dict[str, object]
    free: list[FieldDef]
    components: list[Component] = field(default_factory=list)
    infeasible_by: str | None = None  # id of a rule that folds to false for the whole stratum


def fold_constraints(model: Model, stratum: Stratum, rules: Sequence[Rule], filters: Sequence[E.Node]) -> tuple[dict[str, object], list[Constraint], str | None]:
    """Substitute the stratum's constants into every rule and filter; drop what holds trivially."""
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
    for rid, when, require in items:
        w = E.fold(when, consts, model.resolve)
        if isinstance(w, E.Const) and not w.value:
            continue
        r = E.fold(require, consts, model.resolve)
        if isinstance(r, E.Const):
            if r.value:
                continue
            if isinstance(w, E.Const):
                return consts, [], rid
        out.append(Constraint(rid, w, r, E.fields_of(w) | E.fields_of(r)))
    return consts, out, None


def plan(model: Model, stratum: Stratum, filters: Sequence[E.Node] = ()) -> StratumPlan:
    import networkx as nx

    consts, constraints, infeasible = fold_constraints(model, stratum, model.rules_for(stratum.kind), filters)
    free = [f for f in model.fields(stratum.kind) if f.name not in consts]
    result = StratumPlan(stratum, consts, free, infeasible_by=infeasible)
    if infeasible:
        return result
    graph = nx.Graph()
    graph.add_nodes_from(f.name for f in free)
    for c in constraints:
        names = sorted(c.scope)
        graph.add_nodes_from(names)
        graph.add_edges_from(itertools.combinations(names, 2))
    order = {f.name: i for i, f in enumerate(free)}
    for comp in nx.connected_components(graph):
        names = sorted(comp, key=order.__getitem__)
        cons = [c for c in constraints if c.scope and next(iter(c.scope)) in comp]
        result.components.append(Component(names, cons))
    result.components.sort(key=lambda c: order[c.fields[0]])
    return result


def solve_component(model: Model, component: Component) -> list[tuple]:
    """All assignments of the component's fields that satisfy its constraints (CP-SAT enumeration)."""
    fields = model.data.fields
    if not component.constraints:
        assert len(component.fields) == 1
        return [(v,) for v in fields[component.fields[0]].values]
    from ortools.sat.python import cp_model

    from .cpsat import Compiler, decode, new_variable

    cp = cp_model.CpModel()
    variables = {name: new_variable(cp, fields[name]) for name in component.fields}
    compiler = Compiler(cp, fields, variables)
    for c in component.constraints:
        when = compiler.lit_term(c.when)
        if when is False:
            continue
        compiler.post(c.require, [] if when is True else [when])
    ordered = [variables[n] for n in component.fields]
    defs = [fields[n] for n in component.fields]

    class Collector(cp_model.CpSolverSolutionCallback):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[tuple] = []

        def on_solution_callback(self) -> None:
            self.rows.append(tuple(decode(d, self.Value(v)) for d, v in zip(defs, ordered)))

    solver = cp_model.CpSolver()
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    collector = Collector()
    solver.Solve(cp, collector)
    return sorted(collector.rows, key=_sort_key)


def _sort_key(row: tuple) -> tuple:
    return tuple((0, v) if isinstance(v, (int, bool)) else (1, str(v)) for v in row)


def solve_plan(model: Model, p: StratumPlan) -> None:
    for comp in p.components:
        if comp.solutions is None:
            comp.solutions = solve_component(model, comp)
            comp.count = len(comp.solutions)


def count_plan(p: StratumPlan) -> int:
    if p.infeasible_by:
        return 0
    total = 1
    for comp in p.components:
        total *= comp.count or 0
    return total


def configs(model: Model, p: StratumPlan) -> Iterator[dict[str, object]]:
    """Every config of a solved stratum: the Cartesian product of its components' solutions."""
    if p.infeasible_by:
        return
    names = [n for comp in p.components for n in comp.fields]
    base = dict(p.constants)
    for combo in itertools.product(*(comp.solutions or [] for comp in p.components)):
        cfg = dict(base)
        cfg.update(zip(names, itertools.chain.from_iterable(combo)))
        yield cfg
