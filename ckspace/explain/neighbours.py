"""The nearest valid kernels to a rejected one, found by CP-SAT; and the smallest fix of one rule where the plain
search of ckspace.explain.fixes would try too many candidates (solve_fix).

Nearest means the fewest changed fields of the name. A stratum (variant, ndim, dtype) is one CP-SAT model holding
every folded rule of the active families (ckspace.solve.folded), built once per stratum and cloned per question; each
free field gets one literal per domain value, and the objective weighs them:

    W * (number of changed fields) + (how far each changed number moved, counted in domain steps)

so the number of changed fields decides, and among equally few changes the smaller moves win (tile_m 96 becomes
80 or 112 before 256). Remaining ties are broken by the solver's fixed search (one worker, seed 0: the same input
gives the same answer) and the list is sorted by (changes, distance, name). The k-th neighbour comes from solving
again with the earlier ones forbidden (a no-good clause over the name fields). The derived warp_tile_k is a field
of the name, so a change that moves it counts it too.

The problem fields (variant, ndim, dtype) stay as asked: a user needs a kernel for their convolution. Only when
the asked stratum has no valid kernel at all (or is not modelled, e.g. dtype fp8) is the search widened to the
other ndim and dtype of the variant, each changed problem field counting as a changed field.

No enumeration is involved: the search works the same in the open space (`--rules -ck-curation`, ~10^12 kernels).
Under a catalog's curation the explainer ranks the stratum's listing by the same measure instead (a few hundred
kernels: explainer._nearest_in_stratum, tested against this search), and asks here when the stratum is empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ortools.sat.python import cp_model

from ..errors import CkspaceError
from ..rules import expr as E
from ..rules.check import breaks, domain_verdicts
from ..rules.data import FieldDef, Rule
from ..rules.model import Model, Stratum, kind_of_variant
from ..rules.names import format_name
from ..solve.cpsat import Compiler, LeanModel, Literal, new_variable, solve_stoppably
from ..solve.folded import fold_constraints
from .diff import changes_between
from .measure import W_CHANGE, W_WHEN_OFF, distance
from .measure import same as _same
from .result import Neighbour


TIME_LIMIT = 10.0  # seconds per solve; hit only on pathological inputs, and then reported (optimal: false)


def _solver() -> cp_model.CpSolver:
    # Deterministic: one worker and a fixed seed (new_solver). Measured with scripts/bench_explain.py-style batches
    # (gfx950 and gfx942, curated and open): on these small, table-heavy models presolve and the LP relaxation cost
    # more than they save; without them a question with three neighbours takes about 0.1 s instead of 0.2-0.3 s.
    from ..solve.cpsat import new_solver

    return new_solver(cp_model_presolve=False, linearization_level=0, max_time_in_seconds=TIME_LIMIT)


@dataclass
class _Base:
    """The CP-SAT model of one stratum, and the value literals of its free fields."""

    stratum: Stratum
    consts: dict[str, object]
    free: list[FieldDef]
    cp: cp_model.CpModel | None  # None: a rule folds to false, the stratum has no kernel
    lits: dict[str, dict[object, Literal]]  # field -> value -> literal "field == value"


def _value_literals(cp: cp_model.CpModel, f: FieldDef, var: cp_model.IntVar) -> dict[object, Literal]:
    if f.type == "bool":
        return {False: var.negated(), True: var}
    out: dict[object, Literal] = {}
    for i, value in enumerate(f.values):
        code = i if f.type == "enum" else value
        lit = cp.new_bool_var(f"{f.name}=={value}")
        cp.add(var == code).only_enforce_if(lit)
        cp.add(var != code).only_enforce_if(lit.negated())
        out[value] = lit
    cp.add_exactly_one(out.values())
    return out


class NeighbourSearch:
    """Nearest valid kernels under one model (arch and rule families). Strata models are kept for later names."""

    def __init__(self, model: Model, filters: Sequence[E.Node] = ()):
        self.model = model
        self.filters = tuple(filters)  # conditions a neighbour must meet besides the rules (a problem's support)
        self._bases: dict[Stratum, _Base] = {}

    def base(self, stratum: Stratum) -> _Base:
        hit = self._bases.get(stratum)
        if hit is not None:
            return hit
        model = self.model
        filters = [model.filter_for(f, stratum) for f in self.filters]
        if any(f is None for f in filters):  # no kernel of the stratum meets a filter
            base = _Base(stratum, stratum.constants(), [], None, {})
            self._bases[stratum] = base
            return base
        consts, constraints, infeasible = fold_constraints(model, stratum, model.rules_for(stratum.kind),
                                                           [f for f in filters if f is not None])
        free = [f for f in model.fields(stratum.kind) if f.name not in consts]
        base = _Base(stratum, consts, free, None, {})
        if not infeasible:
            cp = LeanModel()
            variables = {f.name: new_variable(cp, f) for f in free}
            compiler = Compiler(cp, model.data.fields, variables)
            for c in constraints:
                when = compiler.lit_term(c.when)
                if when is False:
                    continue
                compiler.post(c.require, [] if when is True else [when])
            base.cp = cp
            base.lits = {f.name: _value_literals(cp, f, variables[f.name]) for f in free}
        self._bases[stratum] = base
        return base

    # -- the search -----------------------------------------------------------------------------------------------
    def nearest(self, cfg: Mapping[str, object], n: int) -> tuple[list[Neighbour], dict[str, object]]:
        """Up to `n` nearest valid kernels, and a description of where they were searched."""
        variant = str(cfg.get("variant"))
        kind = kind_of_variant(variant)
        order = [f.name for f in self.model.fields(kind)]
        asked = Stratum(variant, cfg.get("ndim"), cfg.get("dtype"))  # type: ignore[arg-type]
        modelled = asked in self.model.strata
        info: dict[str, object] = {"requested": n, "arch": self.model.arch}
        found = self._solve(self.base(asked), cfg, n, order) if modelled else []
        if found:
            info.update(scope="stratum", strata=[asked.label()],
                        text=f"same variant, ndim and dtype ({asked.label()})")
        else:
            others = [s for s in self.model.strata if s.variant == variant and s != asked]
            others.sort(key=lambda s: (sum(not _same(cfg.get(k), v) for k, v in s.constants().items()), s.ndim, s.dtype))
            for st in others:
                found += self._solve(self.base(st), cfg, n, order)
            why = (f"{asked.label()} has no valid kernel on {self.model.arch} under these rules" if modelled
                   else f"ndim {cfg.get('ndim')!r} / dtype {cfg.get('dtype')!r} is not modelled")
            if found:
                info.update(scope="widened", strata=[s.label() for s in others],
                            text=f"{why}; searched the other ndim and dtype of {variant}")
            else:
                info.update(scope="none", strata=[s.label() for s in others],
                            text=f"{why}, and no {variant} kernel of any ndim or dtype is valid there either")
        found.sort(key=lambda item: item[0])
        info["found"] = min(n, len(found))
        return [nb for _, nb in found[:n]], info

    def _solve(self, base: _Base, cfg: Mapping[str, object], n: int, order: Sequence[str]) -> list[tuple[tuple, Neighbour]]:
        if base.cp is None:
            return []
        # A clone keeps the variable indices, so the base model's literals name the same variables in it.
        cp = base.cp.clone()
        terms = []
        for f in base.free:
            asked = cfg.get(f.name)
            for value, lit in base.lits[f.name].items():
                weight = (0 if _same(value, asked) else W_CHANGE) + distance(f, value, asked)
                if weight:
                    terms.append((lit, weight))
        if terms:
            cp.minimize(sum(weight * lit for lit, weight in terms))
        solver = _solver()
        out: list[tuple[tuple, Neighbour]] = []
        named = [f for f in base.free if not f.derived]  # derived fields follow from these
        for _ in range(n):
            status = solve_stoppably(solver, cp)
            if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                break
            values = {f.name: _value(solver, base, f) for f in base.free}
            cp.add_bool_or([_negated(base.lits[f.name][values[f.name]]) for f in named])
            full = {**base.consts, **values}
            if not self._valid(full):
                continue  # the two readers of the rules disagree: never offer it (the tests keep this empty)
            try:
                name = format_name(full)
            except (ValueError, TypeError, KeyError):
                continue
            changes = changes_between(cfg, full, order)
            dist = sum(distance(self.model.data.fields[c.field], c.after, c.before) for c in changes)
            out.append(((len(changes), dist, name), Neighbour(name, changes, status == cp_model.OPTIMAL, dist)))
        return out

    def _valid(self, full: Mapping[str, object]) -> bool:
        kind = kind_of_variant(str(full["variant"]))
        if domain_verdicts(self.model, full) or any(breaks(r, full, self.model) for r in self.model.rules_for(kind)):
            return False
        return all(E.evaluate(f, full, self.model.resolve) for f in self.filters)


def _value(solver: cp_model.CpSolver, base: _Base, f: FieldDef) -> object:
    """The solved value of a field, read from its value literals."""
    for value, lit in base.lits[f.name].items():
        if solver.boolean_value(lit):
            return value
    raise AssertionError(f"no value literal of {f.name} is true")


def _negated(lit: Literal) -> Literal:
    return lit.negated()


# -- one rule on its own ---------------------------------------------------------------------------------------------
def solve_fix(model: Model, cfg: Mapping[str, object], rule: Rule,
              free: Sequence[FieldDef]) -> tuple[int, dict[str, object]] | None:
    """With the other fields as in `cfg`: the cheapest change of `free` that satisfies the rule, by CP-SAT (the weights
    of ckspace.explain.measure: the fewest changed fields, then meeting the requirement rather than switching the rule
    off, then the smallest moves). ckspace.explain.fixes asks here when its own search would be too long."""
    env = {k: v for k, v in cfg.items() if k not in {f.name for f in free}}
    try:
        when = E.fold(rule.when, env, model.resolve)
        require = E.fold(rule.require, env, model.resolve)
        if isinstance(when, E.Const) and not when.value:
            return W_WHEN_OFF, {}  # the problem fields alone switched the rule off
        if isinstance(when, E.Const) and isinstance(require, E.Const):
            return (0, {}) if require.value else None
        cp = LeanModel()
        variables = {f.name: new_variable(cp, f) for f in free}
        compiler = Compiler(cp, model.data.fields, variables)
        w = compiler.lit_term(when)
        if w is False:
            return W_WHEN_OFF, {}
        compiler.post(require, [] if w is True else [w])
    except (CkspaceError, TypeError, ValueError, KeyError, OverflowError, RuntimeError):
        return None  # e.g. an 18-digit value from the name that does not fit the solver's int64
    lits = {f.name: _value_literals(cp, f, variables[f.name]) for f in free}
    terms = [(lit, W_CHANGE + distance(f, value, cfg.get(f.name)))
             for f in free for value, lit in lits[f.name].items() if not _same(value, cfg.get(f.name))]
    if w is not True:  # prefer meeting the requirement to switching the rule off (ck.tile off by split_image)
        off = cp.new_bool_var("when_off")
        cp.add_implication(off, w.negated())
        cp.add_implication(w.negated(), off)
        terms.append((off, W_WHEN_OFF))
    if terms:
        cp.minimize(sum(weight * lit for lit, weight in terms))
    solver = _solver()
    try:
        if solve_stoppably(solver, cp) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
    except (OverflowError, RuntimeError, ValueError):
        return None
    fix = {}
    for f in free:
        value = next(v for v, lit in lits[f.name].items() if solver.boolean_value(lit))
        if not _same(value, cfg.get(f.name)):
            fix[f.name] = value
    return (round(solver.objective_value) if terms else 0), fix
