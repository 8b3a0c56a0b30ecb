"""The rule expression language: a small, typed subset of Python expressions.

Rules, derived fields and `--where` filters are written in it. One parsed tree has two readers that never share
code: `evaluate` (plain Python, on one concrete config: the oracle) and `ckspace.cpsat` (CP-SAT constraints).

Supported: integer, string and boolean constants; field names; references into the data (`arch.warp_size`,
`ck.tile`, `arch.warp_tiles[dtype]`); tuples; `+ - * // %`; comparisons (chained too); `in` / `not in` against a
tuple, a list or a table; `and`, `or`, `not`; `x if c else y`; `min(...)`, `max(...)`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Mapping, Union

from ..errors import ExprError

Value = Union[int, bool, str, tuple, frozenset, "object"]


@dataclass(frozen=True)
class Const:
    value: object


@dataclass(frozen=True)
class Field:
    name: str


@dataclass(frozen=True)
class Ref:
    """A reference into the data: `arch.lds_bytes`, `ck.tile` (a table)."""

    path: tuple[str, ...]


@dataclass(frozen=True)
class Index:
    base: "Node"
    index: "Node"


@dataclass(frozen=True)
class Tup:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class BinOp:
    op: str  # + - * // %
    left: "Node"
    right: "Node"


@dataclass(frozen=True)
class Neg:
    operand: "Node"


@dataclass(frozen=True)
class Cmp:
    op: str  # == != < <= > >=
    left: "Node"
    right: "Node"


@dataclass(frozen=True)
class In:
    left: "Node"
    right: "Node"
    negate: bool


@dataclass(frozen=True)
class And:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class Not:
    operand: "Node"


@dataclass(frozen=True)
class IfElse:
    cond: "Node"
    then: "Node"
    other: "Node"


@dataclass(frozen=True)
class Call:
    fn: str  # min | max
    args: tuple["Node", ...]


Node = Union[Const, Field, Ref, Index, Tup, BinOp, Neg, Cmp, In, And, Or, Not, IfElse, Call]

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_FUNCS = ("min", "max")


def parse(text: str, fields: Mapping[str, object], namespaces: frozenset[str] | set[str], what: str = "expression") -> Node:
    """Parse `text`. Bare names must be fields; dotted names must start with a data namespace (arch, ck, ...)."""
    source = " ".join(text.split())
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        col = (exc.offset or 1) - 1
        raise ExprError(f"syntax error in {what} {source!r} at column {col + 1}: {exc.msg}") from None
    return _Converter(fields, namespaces, what, source).convert(tree.body)


class _Converter:
    def __init__(self, fields: Mapping[str, object], namespaces: frozenset[str] | set[str], what: str, source: str):
        self.fields = fields
        self.namespaces = namespaces
        self.what = what
        self.source = source

    def fail(self, message: str) -> ExprError:
        return ExprError(f"{message} in {self.what} {self.source!r}")

    def convert(self, node: ast.AST) -> Node:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.fail(f"unsupported syntax {type(node).__name__}")
        return method(node)

    def _Constant(self, node: ast.Constant) -> Node:
        if isinstance(node.value, (bool, int, str)):
            return Const(node.value)
        raise self.fail(f"unsupported constant {node.value!r}")

    def _Name(self, node: ast.Name) -> Node:
        if node.id in ("true", "false"):
            return Const(node.id == "true")
        if node.id in self.fields:
            return Field(node.id)
        known = ", ".join(sorted(self.fields))
        raise self.fail(f"unknown field {node.id!r} (fields: {known})")

    def _Attribute(self, node: ast.Attribute) -> Node:
        path: list[str] = []
        cur: ast.AST = node
        while isinstance(cur, ast.Attribute):
            path.append(cur.attr)
            cur = cur.value
        if not isinstance(cur, ast.Name):
            raise self.fail("unsupported attribute access")
        path.append(cur.id)
        path.reverse()
        if path[0] not in self.namespaces:
            raise self.fail(f"unknown name {'.'.join(path)!r} (data namespaces: {', '.join(sorted(self.namespaces))})")
        return Ref(tuple(path))

    def _Subscript(self, node: ast.Subscript) -> Node:
        return Index(self.convert(node.value), self.convert(node.slice))

    def _Tuple(self, node: ast.Tuple) -> Node:
        return Tup(tuple(self.convert(e) for e in node.elts))

    _List = _Tuple

    def _BinOp(self, node: ast.BinOp) -> Node:
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.fail(f"unsupported operator {type(node.op).__name__}")
        return BinOp(op, self.convert(node.left), self.convert(node.right))

    def _UnaryOp(self, node: ast.UnaryOp) -> Node:
        if isinstance(node.op, ast.Not):
            return Not(self.convert(node.operand))
        if isinstance(node.op, ast.USub):
            return Neg(self.convert(node.operand))
        raise self.fail(f"unsupported unary operator {type(node.op).__name__}")

    def _BoolOp(self, node: ast.BoolOp) -> Node:
        items = tuple(self.convert(v) for v in node.values)
        return And(items) if isinstance(node.op, ast.And) else Or(items)

    def _Compare(self, node: ast.Compare) -> Node:
        parts: list[Node] = []
        left = self.convert(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = self.convert(comparator)
            if isinstance(op, (ast.In, ast.NotIn)):
                parts.append(In(left, right, isinstance(op, ast.NotIn)))
            elif type(op) in _CMPOPS:
                parts.append(Cmp(_CMPOPS[type(op)], left, right))
            else:
                raise self.fail(f"unsupported comparison {type(op).__name__}")
            left = right
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def _IfExp(self, node: ast.IfExp) -> Node:
        return IfElse(self.convert(node.test), self.convert(node.body), self.convert(node.orelse))

    def _Call(self, node: ast.Call) -> Node:
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCS or node.keywords or len(node.args) < 2:
            raise self.fail("only min(a, b, ...) and max(a, b, ...) may be called")
        return Call(node.func.id, tuple(self.convert(a) for a in node.args))


# ---------------------------------------------------------------------------------------------------------------
# Plain-Python evaluation (the oracle)

Resolver = Callable[[tuple[str, ...]], object]


def evaluate(node: Node, env: Mapping[str, object], resolve: Resolver) -> object:
    """Evaluate `node` on one concrete config `env`; `resolve` maps a data reference to its value."""
    t = type(node)
    if t is Const:
        return node.value  # type: ignore[union-attr]
    if t is Field:
        return env[node.name]  # type: ignore[union-attr]
    if t is Ref:
        return resolve(node.path)  # type: ignore[union-attr]
    if t is Index:
        base = evaluate(node.base, env, resolve)  # type: ignore[union-attr]
        key = evaluate(node.index, env, resolve)  # type: ignore[union-attr]
        try:
            return base[key]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return ()
    if t is Tup:
        return tuple(evaluate(i, env, resolve) for i in node.items)  # type: ignore[union-attr]
    if t is BinOp:
        a = evaluate(node.left, env, resolve)  # type: ignore[union-attr]
        b = evaluate(node.right, env, resolve)  # type: ignore[union-attr]
        return _binop(node.op, a, b)  # type: ignore[union-attr]
    if t is Neg:
        return -evaluate(node.operand, env, resolve)  # type: ignore[operator,union-attr]
    if t is Cmp:
        a = evaluate(node.left, env, resolve)  # type: ignore[union-attr]
        b = evaluate(node.right, env, resolve)  # type: ignore[union-attr]
        return _compare(node.op, a, b)  # type: ignore[union-attr]
    if t is In:
        a = evaluate(node.left, env, resolve)  # type: ignore[union-attr]
        b = evaluate(node.right, env, resolve)  # type: ignore[union-attr]
        return contains(b, a) != node.negate  # type: ignore[union-attr]
    if t is And:
        return all(bool(evaluate(i, env, resolve)) for i in node.items)  # type: ignore[union-attr]
    if t is Or:
        return any(bool(evaluate(i, env, resolve)) for i in node.items)  # type: ignore[union-attr]
    if t is Not:
        return not evaluate(node.operand, env, resolve)  # type: ignore[union-attr]
    if t is IfElse:
        cond = evaluate(node.cond, env, resolve)  # type: ignore[union-attr]
        return evaluate(node.then if cond else node.other, env, resolve)  # type: ignore[union-attr]
    if t is Call:
        values = [evaluate(a, env, resolve) for a in node.args]  # type: ignore[union-attr]
        return min(values) if node.fn == "min" else max(values)  # type: ignore[union-attr,type-var]
    raise TypeError(f"not an expression node: {node!r}")


def _binop(op: str, a: object, b: object) -> object:
    if not isinstance(a, int) or not isinstance(b, int):
        raise ExprError(f"arithmetic on non-integers: {a!r} {op} {b!r}")
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        # Total semantics, shared with the solver: x // 0 == 0 and x % 0 == x. "x % y == 0" is then false for a
        # zero y (no multiple of 0 is positive), which is what the rules that divide by a derived count mean.
        return 0 if op == "//" else a
    return a // b if op == "//" else a % b


def _compare(op: str, a: object, b: object) -> bool:
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if type(a) is str or type(b) is str:
        raise ExprError(f"ordering comparison on text: {a!r} {op} {b!r}")
    if op == "<":
        return a < b  # type: ignore[operator]
    if op == "<=":
        return a <= b  # type: ignore[operator]
    if op == ">":
        return a > b  # type: ignore[operator]
    return a >= b  # type: ignore[operator]


def contains(collection: object, item: object) -> bool:
    """Membership in a table (rows of tuples), a tuple/list of values or of tuples."""
    member = getattr(collection, "contains", None)
    if member is not None:
        return bool(member(item))
    if isinstance(collection, (tuple, list, frozenset, set)):
        if isinstance(item, tuple) and all(isinstance(r, (list, tuple)) for r in collection):
            return any(tuple(r) == item for r in collection)
        return item in collection
    return False


# ---------------------------------------------------------------------------------------------------------------
# Static views used by the engine


def fields_of(node: Node) -> frozenset[str]:
    """The fields an expression reads."""
    out: set[str] = set()
    _collect(node, out)
    return frozenset(out)


def _collect(node: Node, out: set[str]) -> None:
    if isinstance(node, Field):
        out.add(node.name)
        return
    for child in children(node):
        _collect(child, out)


def children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, (Const, Field, Ref)):
        return ()
    if isinstance(node, Index):
        return (node.base, node.index)
    if isinstance(node, (Tup, And, Or)):
        return node.items
    if isinstance(node, Call):
        return node.args
    if isinstance(node, (BinOp, Cmp, In)):
        return (node.left, node.right)
    if isinstance(node, (Neg, Not)):
        return (node.operand,)
    if isinstance(node, IfElse):
        return (node.cond, node.then, node.other)
    raise TypeError(node)


def fold(node: Node, env: Mapping[str, object], resolve: Resolver) -> Node:
    """Partially evaluate: substitute the fields known in `env`, and reduce every subtree that became constant.

    Used per stratum (variant, ndim, dtype are constants there) so that rules which cannot apply vanish, and the
    solver and the variable-interaction graph only see what is really free.
    """
    if isinstance(node, Const):
        return node
    if isinstance(node, Field):
        return Const(env[node.name]) if node.name in env else node
    if isinstance(node, Ref):
        return Const(resolve(node.path))
    if isinstance(node, And):
        items = []
        for item in node.items:
            f = fold(item, env, resolve)
            if isinstance(f, Const):
                if not f.value:
                    return Const(False)
                continue
            items.append(f)
        return Const(True) if not items else items[0] if len(items) == 1 else And(tuple(items))
    if isinstance(node, Or):
        items = []
        for item in node.items:
            f = fold(item, env, resolve)
            if isinstance(f, Const):
                if f.value:
                    return Const(True)
                continue
            items.append(f)
        return Const(False) if not items else items[0] if len(items) == 1 else Or(tuple(items))
    if isinstance(node, IfElse):
        cond = fold(node.cond, env, resolve)
        if isinstance(cond, Const):
            return fold(node.then if cond.value else node.other, env, resolve)
        return IfElse(cond, fold(node.then, env, resolve), fold(node.other, env, resolve))
    folded = rebuild(node, tuple(fold(c, env, resolve) for c in children(node)))
    if all(isinstance(c, Const) for c in children(folded)):
        return Const(evaluate(folded, {}, resolve))
    return folded


def rebuild(node: Node, kids: tuple[Node, ...]) -> Node:
    if isinstance(node, Index):
        return Index(kids[0], kids[1])
    if isinstance(node, Tup):
        return Tup(kids)
    if isinstance(node, And):
        return And(kids)
    if isinstance(node, Or):
        return Or(kids)
    if isinstance(node, IfElse):
        return IfElse(kids[0], kids[1], kids[2])
    if isinstance(node, Call):
        return Call(node.fn, kids)
    if isinstance(node, BinOp):
        return BinOp(node.op, kids[0], kids[1])
    if isinstance(node, Cmp):
        return Cmp(node.op, kids[0], kids[1])
    if isinstance(node, In):
        return In(kids[0], kids[1], node.negate)
    if isinstance(node, Neg):
        return Neg(kids[0])
    if isinstance(node, Not):
        return Not(kids[0])
    raise TypeError(node)
