"""The rule language as text: an expression printed as source, and its working on one config (the numbers put in,
the branches taken). explain shows derived fields this way."""

from __future__ import annotations

from typing import Callable, Mapping

from . import expr as E
from .check import show_value as _show

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


_PREC = {"+": 5, "-": 5, "*": 6, "//": 6, "%": 6}  # Python's binding strengths, for parentheses in the text


def _prec(node: E.Node) -> int:
    if isinstance(node, E.IfElse):
        return 0
    if isinstance(node, E.Or):
        return 1
    if isinstance(node, E.And):
        return 2
    if isinstance(node, E.Not):
        return 3
    if isinstance(node, (E.Cmp, E.In)):
        return 4
    if isinstance(node, E.BinOp):
        return _PREC[node.op]
    if isinstance(node, E.Neg):
        return 7
    return 9


def show(node: E.Node) -> str:
    """The expression as source text (the rule language is a subset of Python, so this reads like the data)."""
    return _text(node, lambda n: None)


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

    return _text(node, leaf)


def _text(node: E.Node, leaf: Callable[[E.Node], str | E.Node | None]) -> str:
    """Source text of `node`; `leaf` may print a node itself (a string) or stand another node in for it."""
    node, hit = _resolve(node, leaf)
    if hit is not None:
        return hit

    def sub(child: E.Node, min_prec: int) -> str:
        child, done = _resolve(child, leaf)
        s = done if done is not None else _text(child, leaf)
        return s if done is not None or _prec(child) >= min_prec else f"({s})"

    if isinstance(node, E.Const):
        return _show(node.value)
    if isinstance(node, E.Field):
        return node.name
    if isinstance(node, E.Ref):
        return ".".join(node.path)
    if isinstance(node, E.Index):
        return f"{sub(node.base, 9)}[{_text(node.index, leaf)}]"
    if isinstance(node, E.Tup):
        return "(" + ", ".join(_text(i, leaf) for i in node.items) + ")"
    if isinstance(node, E.BinOp):
        p = _PREC[node.op]
        return f"{sub(node.left, p)} {node.op} {sub(node.right, p + 1)}"
    if isinstance(node, E.Neg):
        return f"-{sub(node.operand, 7)}"
    if isinstance(node, E.Cmp):
        return f"{sub(node.left, 5)} {node.op} {sub(node.right, 5)}"
    if isinstance(node, E.In):
        return f"{sub(node.left, 5)} {'not in' if node.negate else 'in'} {sub(node.right, 5)}"
    if isinstance(node, E.And):
        return " and ".join(sub(i, 3) for i in node.items)
    if isinstance(node, E.Or):
        return " or ".join(sub(i, 3) for i in node.items)  # `a or (b and c)`: parenthesised for the reader
    if isinstance(node, E.Not):
        return f"not {sub(node.operand, 3)}"
    if isinstance(node, E.IfElse):
        return f"{sub(node.then, 1)} if {sub(node.cond, 1)} else {sub(node.other, 0)}"
    if isinstance(node, E.Call):
        return f"{node.fn}(" + ", ".join(_text(a, leaf) for a in node.args) + ")"
    return repr(node)


def _lookup(known: Mapping[E.Node, str], node: E.Node) -> bool:
    try:
        return node in known
    except TypeError:  # a node holding an unhashable constant
        return False


def _resolve(node: E.Node, leaf: Callable[[E.Node], str | E.Node | None]) -> tuple[E.Node, str | None]:
    """Follow stand-in nodes; returns the final node and its printed text when `leaf` prints it."""
    for _ in range(64):
        hit = leaf(node)
        if hit is None:
            return node, None
        if isinstance(hit, str):
            return node, hit
        node = hit
    return node, None


