"""The rule language's node kinds × its back-ends: every kind of node the shipped rules use is read the same way by
each back-end that reads rules.

Back-ends: the evaluator (rules.expr.evaluate: compiled closures) and the join's fast form of it (compile_node
without `exact`), constant folding with every field known (rules.expr.fold), CP-SAT (solve.cpsat.Compiler, every
field fixed to the config's value) and the printer (rules.expr.show, read back by rules.expr.parse). For each node
kind, the rules holding one are checked on configs drawn from the model's domains; the oracle is an independent tree
walk (tests/expr_oracle.py), and for the printer the node itself. The type checker (rules.typecheck) is the sixth:
the type it infers for each node of the kind holds every value the tree walk gives that node, on every arch (an
integer's range included).
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest
from expr_oracle import tree_walk
from test_rule_text import parse_back  # the printed text read back, the bound on a user's text lifted

from ckspace.rules import expr as E
from ckspace.rules.expr import compile_node
from ckspace.rules.data import load
from ckspace.rules.model import Model, kind_of_variant

DATA = load()
ARCHS = ("gfx942", "gfx1201")  # a wave64 and a wave32 arch: their facts differ (warp tiles, LDS)
KINDS = [t.__name__ for t in E.Node.__args__]  # type: ignore[attr-defined]
BACKENDS = ("evaluate", "fast", "fold", "cpsat", "printer", "typecheck")
CONFIGS_PER_RULE = 6


def _kinds_in(node: E.Node) -> set[str]:
    out = {type(node).__name__}
    for kid in E.children(node):
        out |= _kinds_in(kid)
    return out


def _model(arch: str) -> Model:
    return Model(DATA, arch, set(DATA.families))


# (kind) -> [(rule id, "when"/"require", node)], over the rules of every family
BY_KIND: dict[str, list[tuple[str, str, E.Node]]] = defaultdict(list)
for _rule in DATA.rules:
    for _part, _node in (("when", _rule.when), ("require", _rule.require)):
        for _kind in _kinds_in(_node):
            BY_KIND[_kind].append((_rule.id, _part, _node))


def _configs(model: Model, rule_id: str, n: int, seed: int) -> list[dict]:
    """Configs of the model's domains (every field of the family a rule applies to) for a rule."""
    rule = next(r for r in DATA.rules if r.id == rule_id)
    rng = random.Random(f"{rule_id}/{seed}")
    variants = [v for v in DATA.fields["variant"].values if rule.applies_to(kind_of_variant(str(v)))]
    out = []
    for _ in range(n):
        variant = rng.choice(variants)
        kind = kind_of_variant(str(variant))
        cfg = {f.name: rng.choice(list(f.values)) for f in model.fields(kind) if not f.derived}
        cfg["variant"] = variant
        cfg["layout"] = "ngchw" if variant == "forward_depthwise" else "nhwgc"
        out.append(cfg)
    return out


def _outcome(fn, cfg):
    try:
        return "value", fn(cfg)
    except Exception as exc:  # noqa: BLE001 - the kind of error is what is compared
        return "error", type(exc).__name__


def test_the_shipped_rules_use_every_node_kind_but_the_ones_named_here() -> None:
    """The matrix below covers a kind only through the rules that use it: a kind no rule uses is named here."""
    unused = {"Neg"}  # no shipped rule negates a term (the parser and every back-end still take it)
    assert set(KINDS) - set(BY_KIND) == unused


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", sorted(k for k in KINDS if k != "Neg"))
def test_each_backend_reads_each_node_kind_as_evaluate_does(kind: str, backend: str) -> None:
    from ortools.sat.python import cp_model

    from ckspace.solve.cpsat import Compiler, LeanModel, new_solver, new_variable, solve_stoppably

    cases = BY_KIND[kind][:12]  # the first rules in data order that use the kind
    checked = 0
    for arch in ARCHS:
        model = _model(arch)
        for rule_id, part, node in cases:
            if backend == "printer":
                assert parse_back(E.show(node)) == node, (rule_id, part)
                checked += 1
                continue
            if backend == "typecheck":
                checked += _typed(kind, node, model, rule_id)
                continue
            for cfg in _configs(model, rule_id, CONFIGS_PER_RULE, hash(arch) % 1000):
                want = _outcome(lambda c: tree_walk(node, c, model.resolve), cfg)
                if backend == "evaluate":
                    got = _outcome(lambda c: E.evaluate(node, c, model.resolve), cfg)
                elif backend == "fast":  # integer arithmetic on Python's operators: no error to compare
                    if want[0] == "error":
                        continue
                    got = _outcome(compile_node(node, model.resolve), cfg)
                elif backend == "fold":
                    got = _outcome(lambda c: _const(E.fold(node, c, model.resolve)), cfg)
                else:  # cpsat: a Boolean node with every field fixed; an error of evaluate has no model to compare
                    if want[0] == "error" or not isinstance(want[1], bool):
                        continue
                    kind_of = kind_of_variant(str(cfg["variant"]))
                    fields = {f.name: f for f in model.fields(kind_of)}
                    # the arch's facts and tables and the stratum's fields folded in, as the solver gets its rules
                    stratum = {k: cfg[k] for k in ("variant", "ndim", "dtype", "layout")}
                    folded = E.fold(node, stratum, model.resolve)
                    cp = LeanModel()
                    variables = {n: new_variable(cp, f) for n, f in fields.items()}
                    for n, f in fields.items():
                        value = cfg[n]
                        cp.add(variables[n] == (int(value) if f.type == "bool" else
                                                f.values.index(value) if f.type == "enum" else value))
                    compiler = Compiler(cp, DATA.fields, variables)
                    lit = compiler.lit_term(folded)
                    if isinstance(lit, bool):
                        got = ("value", lit)
                    else:
                        solver = new_solver()
                        assert solve_stoppably(solver, cp) in (cp_model.OPTIMAL, cp_model.FEASIBLE), (rule_id, cfg)
                        got = ("value", bool(solver.boolean_value(lit)))
                assert got == want, (kind, backend, arch, rule_id, part, cfg)
                checked += 1
    assert checked, f"no case of {kind} for {backend}"


def _nodes_of(kind: str, node: E.Node) -> list[E.Node]:
    out = [node] if type(node).__name__ == kind else []
    for kid in E.children(node):
        out += _nodes_of(kind, kid)
    return out


def _conforms(t, value: object) -> bool:
    """Whether a value is one of type t (an integer within its range where the range is known)."""
    from ckspace.rules import typecheck as T

    if isinstance(t, T.BoolT):
        return isinstance(value, bool)
    if isinstance(t, T.IntT):
        return (isinstance(value, int) and not isinstance(value, bool) and (t.lo is None or value >= t.lo)
                and (t.hi is None or value <= t.hi))
    if isinstance(t, T.StrT):
        return isinstance(value, str)
    if isinstance(t, T.TupleT):
        return isinstance(value, tuple) and len(value) == len(t.items) and all(map(_conforms, t.items, value))
    if isinstance(t, T.SeqT):
        return isinstance(value, tuple) and all(_conforms(t.item, v) for v in value)
    return True  # data of a type known per arch only (AnyT, tables, maps): checked again there


def _typed(kind: str, node: E.Node, model: Model, rule_id: str) -> int:
    """The checker's type of each node of `kind` in `node` against the tree walk's values on configs; the count."""
    from ckspace.rules import data as D
    from ckspace.rules import typecheck as T

    formulas = {n: d.expr for n, d in DATA.derives.items()}
    scope = T.Scope(DATA.fields, formulas, D._data_ref_type(DATA.archs, DATA.tables))  # as the loader builds it
    T.check_condition(node, scope, rule_id)  # a rule's condition is Boolean
    checked = 0
    for sub in _nodes_of(kind, node):
        t = T.check_value(sub, scope, rule_id)
        for cfg in _configs(model, rule_id, CONFIGS_PER_RULE, 7):
            got = _outcome(lambda c: tree_walk(sub, c, model.resolve), cfg)
            if got[0] == "value":
                assert _conforms(t, got[1]), (rule_id, E.show(sub), t, got[1])
                checked += 1
    return checked


def _const(node: E.Node) -> object:
    """fold with every field known leaves a constant."""
    assert isinstance(node, E.Const), E.show(node)
    return node.value
