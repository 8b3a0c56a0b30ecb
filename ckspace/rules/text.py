"""The rule language as text: an expression printed as source, and its working on one config (the numbers put in,
the branches taken). explain shows derived fields this way."""

from __future__ import annotations

from typing import Mapping

from . import expr as E

_show = E.show_value


def derivation(node: E.Node, env: Mapping[str, object], resolve: E.Resolver,
               known: Mapping[E.Node, str] | None = None) -> list[str]:
    """Conditions of the top-level `a if c else b` chain with their truth, then the chosen formula with numbers."""
    steps = []
    while isinstance(node, E.IfElse):
        taken = bool(E.evaluate(node.cond, env, resolve))
        steps.append(f"{show(node.cond)}: {'yes' if taken else 'no'}")
        node = node.then if taken else node.other
    value = E.evaluate(node, env, resolve)
    worked = working(node, env, resolve, known or {})
    steps.append(worked if worked == _show(value) else f"{worked} = {_show(value)}")
    return steps


def show(node: E.Node) -> str:
    """The expression as source text (the one printer, expr.show)."""
    return E.show(node)


def working(node: E.Node, env: Mapping[str, object], resolve: E.Resolver,
            known: Mapping[E.Node, str] | None = None) -> str:
    """The expression with every field and scalar fact replaced by its value, and conditionals by their branch;
    a sub-expression that is a `known` quantity is replaced by its value as a whole."""
    known = known or {}

    def leaf(n: E.Node) -> str | E.Node | None:
        if n is not node and _lookup(known, n):
            return _show(E.evaluate(n, env, resolve))
        if isinstance(n, E.Field):
            return _show(env[n.name])
        if isinstance(n, E.Ref):
            value = resolve(n.path)
            return _show(value) if isinstance(value, (int, str)) else None
        if isinstance(n, E.IfElse):  # replaced by the branch taken, which is then shown in its place
            return n.then if E.evaluate(n.cond, env, resolve) else n.other
        if isinstance(n, (E.Cmp, E.In, E.And, E.Or, E.Not, E.Index)):
            return _show(E.evaluate(n, env, resolve))
        return None

    return E.show(node, leaf)


def _lookup(known: Mapping[E.Node, str], node: E.Node) -> bool:
    try:
        return node in known
    except TypeError:  # a node holding an unhashable constant
        return False
