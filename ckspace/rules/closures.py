"""Rule expressions compiled to Python closures: `ckspace.rules.expr.evaluate`'s semantics at a fraction of its cost.

The plain-Python join (ckspace.solve.pysearch) checks thousands of partial assignments, and a batch of `explain`
checks every rule on seven archs for each name; walking the expression tree for each was most of their time.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from . import expr as E

Fn = Callable[[Mapping[str, object]], object]


class Unsupported(Exception):
    """An expression with no plain-Python value here (a data reference without data), or, raised by the Python
    join, a bag that is CP-SAT's."""


def compile_node(node: E.Node, resolve: Callable[[tuple[str, ...]], object] | None = None,
                 exact: bool = False) -> Fn:
    """`node` as a function of an assignment, with `ckspace.rules.expr.evaluate`'s semantics. Data references are
    resolved once, here (`resolve`; without one they are Unsupported). `exact` keeps evaluate's errors for
    arithmetic on non-integers too; without it, integer arithmetic (all the type checker lets through) runs on
    Python's own operators."""
    return _Compiler(resolve, exact).fn(node)


class _Compiler:
    def __init__(self, resolve, exact: bool):
        self.resolve = resolve
        self.exact = exact

    def fn(self, node: E.Node) -> Fn:
        return _fn(self, node)


def _fn(self: _Compiler, node: E.Node) -> Fn:
    t = type(node)
    # Operand closures: the type checker has typed their values (integers wherever arithmetic or min/max applies),
    # which Fn's `object` cannot say.
    a: Callable[[Mapping[str, object]], Any]
    b: Callable[[Mapping[str, object]], Any]
    if t is E.Const:
        value = node.value  # type: ignore[union-attr]
        return lambda env: value
    if t is E.Field:
        name = node.name  # type: ignore[union-attr]
        return lambda env: env[name]
    if t is E.Tup:
        items = [_fn(self, i) for i in node.items]  # type: ignore[union-attr]
        return lambda env: tuple([f(env) for f in items])
    if t is E.BinOp:
        # The rules' arithmetic is on integers only (the type checker sees to it), so Python's operators agree with
        # E._binop; division and remainder keep its total semantics (x // 0 == 0, x % 0 == x).
        a, b, op = _fn(self, node.left), _fn(self, node.right), node.op  # type: ignore[union-attr]
        if self.exact:
            binop = E._binop
            return lambda env: binop(op, a(env), b(env))
        if op == "+":
            return lambda env: a(env) + b(env)
        if op == "-":
            return lambda env: a(env) - b(env)
        if op == "*":
            return lambda env: a(env) * b(env)
        if op == "//":
            return lambda env: (a(env) // y) if (y := b(env)) else 0
        if op == "%":
            return lambda env: (a(env) % y) if (y := b(env)) else a(env)
        binop = E._binop
        return lambda env: binop(op, a(env), b(env))
    if t is E.Neg:
        a = _fn(self, node.operand)  # type: ignore[union-attr]
        return lambda env: -a(env)
    if t is E.Cmp:
        a, b, op = _fn(self, node.left), _fn(self, node.right), node.op  # type: ignore[union-attr]
        if op == "==":
            return lambda env: a(env) == b(env)
        if op == "!=":
            return lambda env: a(env) != b(env)
        compare = E._compare
        return lambda env: compare(op, a(env), b(env))
    if t is E.In:
        return _membership(self, node)  # type: ignore[arg-type]
    if t is E.And:
        items = [_fn(self, i) for i in node.items]  # type: ignore[union-attr]
        return lambda env: all(f(env) for f in items)
    if t is E.Or:
        items = [_fn(self, i) for i in node.items]  # type: ignore[union-attr]
        return lambda env: any(f(env) for f in items)
    if t is E.Not:
        a = _fn(self, node.operand)  # type: ignore[union-attr]
        return lambda env: not a(env)
    if t is E.IfElse:
        c, x, y = _fn(self, node.cond), _fn(self, node.then), _fn(self, node.other)  # type: ignore[union-attr]
        return lambda env: x(env) if c(env) else y(env)
    if t is E.Call:
        args = [_fn(self, a) for a in node.args]  # type: ignore[union-attr]
        pick: Callable[[list[Any]], object] = min if node.fn == "min" else max  # type: ignore[union-attr]
        return lambda env: pick([f(env) for f in args])
    if t is E.Index:
        base, key = _fn(self, node.base), _fn(self, node.index)  # type: ignore[union-attr]

        def index(env: Mapping[str, object]) -> object:
            try:
                return base(env)[key(env)]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                return ()

        return index
    if t is E.Ref and self.resolve is not None:
        value = self.resolve(node.path)  # type: ignore[union-attr]
        return lambda env: value
    raise Unsupported(f"no plain-Python value for {type(node).__name__}")  # a data reference without data


def _membership(self: _Compiler, node: E.In) -> Fn:
    item, negate = _fn(self, node.left), node.negate
    if isinstance(node.right, E.Const):
        collection = node.right.value
        if getattr(collection, "contains", None) is None and isinstance(collection, (tuple, list, frozenset, set)):
            rows = list(collection)
            if rows and all(isinstance(r, (list, tuple)) for r in rows):
                table = {tuple(r) for r in rows}  # E.contains: a tuple item against rows of tuples

                def in_table(env: Mapping[str, object]) -> bool:
                    v = item(env)
                    found = (v in table) if isinstance(v, tuple) else (v in rows)
                    return found != negate

                return in_table
            members = set(rows) if all(isinstance(r, (int, str, bool)) for r in rows) else rows
            return lambda env: (item(env) in members) != negate
    coll = _fn(self, node.right)
    contains = E.contains
    return lambda env: contains(coll(env), item(env)) != negate
