"""An independent reading of the rule language for the tests: a plain tree walk, node by node, as ckspace's own
evaluator was before it became compiled closures (ckspace.rules.expr.evaluate, compile_node). Its arithmetic and
comparisons are written out here from the language's definition (integers only, total division: x // 0 == 0 and
x % 0 == x; no ordering on text); membership in a data table is the table's own (ckspace.rules.expr.contains)."""

from __future__ import annotations

from typing import Mapping

from ckspace.errors import ExprError
from ckspace.rules import expr as E


def tree_walk(node: E.Node, env: Mapping[str, object], resolve) -> object:
    """`node`'s value on one concrete config `env`, node by node; `resolve` maps a data reference to its value."""
    t = type(node)
    if t is E.Const:
        return node.value
    if t is E.Field:
        return env[node.name]
    if t is E.Ref:
        return resolve(node.path)
    if t is E.Index:
        base = tree_walk(node.base, env, resolve)
        key = tree_walk(node.index, env, resolve)
        try:
            return base[key]
        except (KeyError, IndexError, TypeError):
            return ()
    if t is E.Tup:
        return tuple(tree_walk(i, env, resolve) for i in node.items)
    if t is E.BinOp:
        a = tree_walk(node.left, env, resolve)
        b = tree_walk(node.right, env, resolve)
        return _arithmetic(node.op, a, b)
    if t is E.Neg:
        return -tree_walk(node.operand, env, resolve)
    if t is E.Cmp:
        a = tree_walk(node.left, env, resolve)
        b = tree_walk(node.right, env, resolve)
        return _comparison(node.op, a, b)
    if t is E.In:
        a = tree_walk(node.left, env, resolve)
        b = tree_walk(node.right, env, resolve)
        return E.contains(b, a) != node.negate
    if t is E.And:
        return all(bool(tree_walk(i, env, resolve)) for i in node.items)
    if t is E.Or:
        return any(bool(tree_walk(i, env, resolve)) for i in node.items)
    if t is E.Not:
        return not tree_walk(node.operand, env, resolve)
    if t is E.IfElse:
        cond = tree_walk(node.cond, env, resolve)
        return tree_walk(node.then if cond else node.other, env, resolve)
    if t is E.Call:
        values = [tree_walk(a, env, resolve) for a in node.args]
        return min(values) if node.fn == "min" else max(values)
    raise TypeError(f"not an expression node: {node!r}")


def _arithmetic(op: str, a: object, b: object) -> int:
    if not isinstance(a, int) or not isinstance(b, int):
        raise ExprError(f"arithmetic on non-integers: {a!r} {op} {b!r}")
    if op in ("//", "%") and b == 0:
        return 0 if op == "//" else a
    return {"+": a + b, "-": a - b, "*": a * b}[op] if op in ("+", "-", "*") else (a // b if op == "//" else a % b)


def _comparison(op: str, a, b) -> bool:
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if isinstance(a, str) or isinstance(b, str):
        raise ExprError(f"ordering comparison on text: {a!r} {op} {b!r}")
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
