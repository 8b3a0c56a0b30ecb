"""The rule expression language: a small, typed subset of Python expressions.

Rules, derived fields and `--where` filters are written in it. One parsed tree has two readers that never share
code: `evaluate` (plain Python, on one concrete config: the oracle) and `ckspace.solve.cpsat` (CP-SAT constraints).

Supported: integer, string and boolean constants; field names; references into the data (`arch.warp_size`,
`ck.tile`, `arch.warp_tiles[dtype]`); tuples; `+ - * // %`; comparisons (chained too); `in` / `not in` against a
tuple, a list or a table; `and`, `or`, `not`; `x if c else y`; `min(...)`, `max(...)`.

Text is bounded before Python's parser sees it (length, printable UTF-8, nesting), and the tree after (depth, size,
integer constants), so that no input can make the parser, the evaluator or the solver recurse or overflow. Types
are checked by ckspace.rules.typecheck, after parsing and before any evaluation.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Union

from ..errors import ExprError
from ..memo import cached

# Bounds on one expression. Shipped rules and formulas stay far below them (at most 359 characters, 58 nodes, 6
# levels deep); they exist so that a hostile or mistyped --where fails with one line instead of a RecursionError,
# a MemoryError or an overflow inside OR-Tools.
MAX_SOURCE_CHARS = 4000
MAX_DEPTH = 64  # nested levels of the tree: operators, `not`, calls, tuples (`a + b + c` nests two levels)
# Before parsing, nesting is counted on tokens (brackets, prefix operators, operator chains) against a looser guard:
# it only has to keep Python's parser shallow; the tree's depth is the bound a user meets.
MAX_TOKEN_NESTING = 2 * MAX_DEPTH
MAX_NODES = 1000
# Integer constants stay far inside CP-SAT's int64 domain, so that sums and products of a few of them (range-checked
# by typecheck.RANGE_LIMIT) still fit.
INT_LIMIT = 2**40


def _cached_hash(cls):
    """Keep a node's hash once computed. Trees are dict keys (memos, macro tables) and their subtrees are looked up
    node by node, and the dataclass hash walks the whole subtree on every call: quadratic in the tree's size."""
    plain = cls.__hash__

    def __hash__(self) -> int:
        h = self.__dict__.get("_hash")
        if h is None:
            h = plain(self)
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict:  # a hash is per process (string hashing is salted): never pickled or copied
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    cls.__hash__ = __hash__
    cls.__getstate__ = __getstate__
    return cls


@_cached_hash
@dataclass(frozen=True)
class Const:
    value: object


@_cached_hash
@dataclass(frozen=True)
class Field:
    name: str


@_cached_hash
@dataclass(frozen=True)
class Ref:
    """A reference into the data: `arch.lds_bytes`, `ck.tile` (a table)."""

    path: tuple[str, ...]


@_cached_hash
@dataclass(frozen=True)
class Index:
    base: "Node"
    index: "Node"


@_cached_hash
@dataclass(frozen=True)
class Tup:
    items: tuple["Node", ...]


@_cached_hash
@dataclass(frozen=True)
class BinOp:
    op: str  # + - * // %
    left: "Node"
    right: "Node"


@_cached_hash
@dataclass(frozen=True)
class Neg:
    operand: "Node"


@_cached_hash
@dataclass(frozen=True)
class Cmp:
    op: str  # == != < <= > >=
    left: "Node"
    right: "Node"


@_cached_hash
@dataclass(frozen=True)
class In:
    left: "Node"
    right: "Node"
    negate: bool


@_cached_hash
@dataclass(frozen=True)
class And:
    items: tuple["Node", ...]


@_cached_hash
@dataclass(frozen=True)
class Or:
    items: tuple["Node", ...]


@_cached_hash
@dataclass(frozen=True)
class Not:
    operand: "Node"


@_cached_hash
@dataclass(frozen=True)
class IfElse:
    cond: "Node"
    then: "Node"
    other: "Node"


@_cached_hash
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
    source = _checked_source(text, what)
    if _nesting_bound(source) > MAX_TOKEN_NESTING and _token_nesting(source) > MAX_TOKEN_NESTING:
        raise _too_deep(what)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ExprError(_syntax_error(source, exc, what)) from None
    except (RecursionError, MemoryError):  # the token count above should prevent these; never a traceback anyway
        raise _too_deep(what) from None
    return _Converter(fields, namespaces, what, source).convert(tree.body, 0)


def _syntax_error(source: str, exc: SyntaxError, what: str) -> str:
    """One line for Python's SyntaxError, at the column it is about: Python gives no offset when the text ends too
    early (`tile_m == 128 and`), which is the column after the last character, not column 1."""
    if not exc.offset:
        words = source.split()
        column = len(source) + 1
        reason = f"it ends after {words[-1]!r}: an operand is missing" if words else "it is empty"
    else:
        column, reason = exc.offset, exc.msg
        if (reason == "invalid syntax" and source[column - 1:column] == "="
                and source[column - 2:column - 1] not in "=!<>" and source[column:column + 1] != "="):
            reason = "'=' is not a comparison; compare with '=='"
    return f"syntax error in {what} {source!r} at column {column}: {reason}"


def _checked_source(text: str, what: str) -> str:
    """The text with its whitespace runs made single spaces, once it is known to be short, printable UTF-8."""
    if len(text) > MAX_SOURCE_CHARS:
        raise ExprError(f"{what}: expression too long ({len(text)} characters; at most {MAX_SOURCE_CHARS})")
    source = " ".join(text.split())
    if source.isprintable():  # the common case, in C; lone surrogates are not printable either
        return source
    for column, char in enumerate(source, 1):
        if "\ud800" <= char <= "\udfff":
            # A byte that is not UTF-8 reaches sys.argv as a lone surrogate (PEP 383) holding the byte.
            byte = ord(char) - 0xDC00
            shown = f"byte 0x{byte:02x}" if 0x80 <= byte <= 0xFF else f"U+{ord(char):04X}"
            raise ExprError(f"{what}: not valid UTF-8 text ({shown} at column {column})")
        if not char.isprintable():
            raise ExprError(f"{what}: non-printable character U+{ord(char):04X} at column {column}")
    return source


# Keywords are no operands: a `-`, `+`, `~` or `not` after one of them is a prefix operator.
_KEYWORDS = {"and", "or", "not", "in", "is", "if", "else", "lambda"}
# Operators that nest the tree one level per use at one bracket level: `a + b + c` is ((a + b) + c), `a.b.c` is
# ((a.b).c), `x if c else y if d else z` nests in its else branch. Comparisons, `and`, `or` and commas make flat
# nodes and do not count.
_NESTING_OPS = {"+", "-", "*", "/", "//", "%", "**", "@", "<<", ">>", "&", "|", "^", ".", "if", "lambda", ":="}
# What _nesting_bound counts: every character and word that can open a level in _token_nesting; brackets twice
# (a call or subscript bracket opens one level and adds one to its chain).
_NESTING_CHARS = "([{([{-+~*/%@<>&|^.:"
_NESTING_WORDS = re.compile(r"\b(?:not|if|lambda)\b")


def _nesting_bound(source: str) -> int:
    """A quick upper bound of _token_nesting: every character or word that could open a level, counted once.
    Rules stay below MAX_TOKEN_NESTING by it, so that only unusual text pays for tokenizing."""
    return sum(source.count(c) for c in _NESTING_CHARS) + len(_NESTING_WORDS.findall(source))


def _token_nesting(source: str) -> int:
    """How deeply `source` nests, counted on its tokens so that Python's parser never sees deep input.

    Each open bracket, each prefix operator in a row (`not not x`, `--x`) and each nesting operator of a chain
    counts one level; the count stops as soon as it passes MAX_TOKEN_NESTING. Text that does not tokenize is left
    to the parser, which reports the syntax error.
    """
    outer: list[tuple[int, int, int]] = []  # per open bracket: (base, run, chain) of the level around it
    base = run = chain = 0  # levels of the enclosing brackets; prefix operators in a row; operator chain here
    deepest = 0
    after_operand = False
    for kind, text in _tokens(source):
        if kind == tokenize.OP and text in ("(", "[", "{"):
            chain += after_operand  # a call or subscript of what precedes: f(x)[y] nests like a chain
            outer.append((base, run, chain))
            base, run, chain = base + run + chain + 1, 0, 0
            after_operand = False
        elif kind == tokenize.OP and text in (")", "]", "}"):
            if not outer:
                break
            base, run, chain = outer.pop()
            run, after_operand = 0, True
        elif not after_operand and (text in ("-", "+", "~", "not")):
            run += 1
        elif text in _NESTING_OPS:
            chain, run, after_operand = chain + 1, 0, False
        elif kind in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING) and text not in _KEYWORDS:
            run, after_operand = 0, True
        else:
            run, after_operand = 0, False
        deepest = max(deepest, base + run + chain)
        if deepest > MAX_TOKEN_NESTING:
            break
    return deepest


def _tokens(source: str) -> Iterator[tuple[int, str]]:
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            yield tok.type, tok.string
    except (tokenize.TokenError, SyntaxError):
        return


def _too_deep(what: str) -> ExprError:
    return ExprError(f"{what}: expression nests too deeply (more than {MAX_DEPTH} levels of operators, "
                     f"'not', brackets or calls)")


class _Converter:
    def __init__(self, fields: Mapping[str, object], namespaces: frozenset[str] | set[str], what: str, source: str):
        self.fields = fields
        self.namespaces = namespaces
        self.what = what
        self.source = source
        self.nodes = 0

    def fail(self, message: str) -> ExprError:
        return ExprError(f"{message} in {self.what} {self.source!r}")

    def convert(self, node: ast.AST, depth: int) -> Node:
        """Convert `node`, which sits under `depth` nodes (`not not x`: x is 2 levels deep, as _token_nesting says)."""
        if depth > MAX_DEPTH:
            raise _too_deep(self.what)
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ExprError(f"{self.what}: expression too large (more than {MAX_NODES} parts)")
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.fail(f"unsupported syntax {type(node).__name__}")
        return method(node, depth + 1)

    def _Constant(self, node: ast.Constant, depth: int) -> Node:
        value = node.value
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > INT_LIMIT:
            shown = f"integer {value}" if value.bit_length() <= 128 else f"a {value.bit_length()}-bit integer"
            raise ExprError(f"{self.what}: {shown} is out of range (at most {INT_LIMIT} = 2**40 in magnitude)")
        if isinstance(value, (bool, int, str)):
            return Const(value)
        raise self.fail(f"unsupported constant {value!r}")

    def _Name(self, node: ast.Name, depth: int) -> Node:
        if node.id in ("true", "false"):
            return Const(node.id == "true")
        if node.id in self.fields:
            return Field(node.id)
        raise ExprError(f"unknown field {node.id!r} at column {node.col_offset + 1} in {self.what} {self.source!r}"
                        f"{self._hint(node.id)}")

    def _hint(self, word: str) -> str:
        """What the user meant by an unknown bare word: a value of a field, unquoted, or a field misspelt."""
        holders = [name for name, f in self.fields.items() if word in (str(v) for v in getattr(f, "values", ()) or ())]
        if holders:
            return f"; a string is quoted: {holders[0]} == '{word}'"
        import difflib

        close = difflib.get_close_matches(word, sorted(self.fields), n=1, cutoff=0.6)
        if close:
            return f"; did you mean {close[0]!r}?"
        return "; `ckspace fields` lists the fields"

    def _Attribute(self, node: ast.Attribute, depth: int) -> Node:
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

    def _Subscript(self, node: ast.Subscript, depth: int) -> Node:
        return Index(self.convert(node.value, depth), self.convert(node.slice, depth))

    def _Tuple(self, node: ast.Tuple, depth: int) -> Node:
        return Tup(tuple(self.convert(e, depth) for e in node.elts))

    _List = _Tuple

    def _BinOp(self, node: ast.BinOp, depth: int) -> Node:
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.fail(f"unsupported operator {type(node.op).__name__}")
        return BinOp(op, self.convert(node.left, depth), self.convert(node.right, depth))

    def _UnaryOp(self, node: ast.UnaryOp, depth: int) -> Node:
        if isinstance(node.op, ast.Not):
            return Not(self.convert(node.operand, depth))
        if isinstance(node.op, ast.USub):
            return Neg(self.convert(node.operand, depth))
        raise self.fail(f"unsupported unary operator {type(node.op).__name__}")

    def _BoolOp(self, node: ast.BoolOp, depth: int) -> Node:
        items = tuple(self.convert(v, depth) for v in node.values)
        return And(items) if isinstance(node.op, ast.And) else Or(items)

    def _Compare(self, node: ast.Compare, depth: int) -> Node:
        parts: list[Node] = []
        left = self.convert(node.left, depth)
        for op, comparator in zip(node.ops, node.comparators):
            right = self.convert(comparator, depth)
            if isinstance(op, (ast.In, ast.NotIn)):
                parts.append(In(left, right, isinstance(op, ast.NotIn)))
            elif type(op) in _CMPOPS:
                parts.append(_compare_items(_CMPOPS[type(op)], left, right))
            else:
                raise self.fail(f"unsupported comparison {type(op).__name__}")
            left = right
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def _IfExp(self, node: ast.IfExp, depth: int) -> Node:
        return IfElse(self.convert(node.test, depth), self.convert(node.body, depth), self.convert(node.orelse, depth))

    def _Call(self, node: ast.Call, depth: int) -> Node:
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCS or node.keywords or len(node.args) < 2:
            raise self.fail("only min(a, b, ...) and max(a, b, ...) may be called")
        return Call(node.func.id, tuple(self.convert(a, depth) for a in node.args))


def _compare_items(op: str, left: Node, right: Node) -> Node:
    """`(a, b) == (1, 2)` as `a == 1 and b == 2` (`!=`: `or` of `!=`), which both readers handle item by item; the
    solver cannot compare tuples that hold free fields as a whole. Other comparisons stay as written."""
    pairs = isinstance(left, Tup) and isinstance(right, Tup) and len(left.items) == len(right.items)
    if op not in ("==", "!=") or not pairs:
        return Cmp(op, left, right)
    parts = tuple(_compare_items(op, a, b) for a, b in zip(left.items, right.items))  # type: ignore[union-attr]
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return Const(op == "==")
    return And(parts) if op == "==" else Or(parts)


# ---------------------------------------------------------------------------------------------------------------
# Plain-Python evaluation (the oracle)

Resolver = Callable[[tuple[str, ...]], object]


def evaluate(node: Node, env: Mapping[str, object], resolve: Resolver) -> object:
    """Evaluate `node` on one concrete config `env`; `resolve` maps a data reference to its value. The node is
    compiled once to closures (compile_node, exact: these semantics and errors), kept per (node, resolver)."""
    try:
        fn = _evaluator(node, resolve)
    except TypeError:  # a node holding an unhashable constant (a folded map): compiled for this call only
        fn = compile_node(node, resolve, exact=True, lazy_refs=True)
    return fn(env)


@cached("rules.expr.evaluators", maxsize=8192)
def _evaluator(node: Node, resolve: Resolver) -> "Fn":
    return compile_node(node, resolve, exact=True, lazy_refs=True)


# Rule expressions compiled to Python closures: the one evaluator of the language. The plain-Python join
# (ckspace.solve.pysearch) checks thousands of partial assignments, and a batch of `explain` checks every rule on
# seven archs for each name: walking the expression tree for each was most of their time.

Fn = Callable[[Mapping[str, object]], object]


class Unsupported(Exception):
    """An expression with no plain-Python value here (a data reference without data), or, raised by the Python
    join, a bag that is CP-SAT's."""


def compile_node(node: Node, resolve: Callable[[tuple[str, ...]], object] | None = None,
                 exact: bool = False, lazy_refs: bool = False) -> Fn:
    """`node` as a function of an assignment: the language's semantics, those of `evaluate`. Data references are
    resolved once, here (`resolve`; without one they are Unsupported), or with `lazy_refs` when reached (evaluate's
    way: a reference in a branch not taken is never read). `exact` keeps the errors of arithmetic on non-integers
    too; without it, integer arithmetic (all the type checker lets through) runs on Python's own operators."""
    return _Compiler(resolve, exact, lazy_refs).fn(node)


class _Compiler:
    def __init__(self, resolve, exact: bool, lazy_refs: bool = False):
        self.resolve = resolve
        self.exact = exact
        self.lazy_refs = lazy_refs

    def fn(self, node: Node) -> Fn:
        return _fn(self, node)


def _fn(self: _Compiler, node: Node) -> Fn:
    t = type(node)
    # Operand closures: the type checker has typed their values (integers wherever arithmetic or min/max applies),
    # which Fn's `object` cannot say.
    a: Callable[[Mapping[str, object]], Any]
    b: Callable[[Mapping[str, object]], Any]
    if t is Const:
        value = node.value  # type: ignore[union-attr]
        return lambda env: value
    if t is Field:
        name = node.name  # type: ignore[union-attr]
        return lambda env: env[name]
    if t is Tup:
        items = [_fn(self, i) for i in node.items]  # type: ignore[union-attr]
        return lambda env: tuple([f(env) for f in items])
    if t is BinOp:
        # The rules' arithmetic is on integers only (the type checker sees to it), so Python's operators agree with
        # _binop; division and remainder keep its total semantics (x // 0 == 0, x % 0 == x).
        a, b, op = _fn(self, node.left), _fn(self, node.right), node.op  # type: ignore[union-attr]
        if self.exact:
            binop = _binop
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
        binop = _binop
        return lambda env: binop(op, a(env), b(env))
    if t is Neg:
        a = _fn(self, node.operand)  # type: ignore[union-attr]
        return lambda env: -a(env)
    if t is Cmp:
        a, b, op = _fn(self, node.left), _fn(self, node.right), node.op  # type: ignore[union-attr]
        if op == "==":
            return lambda env: a(env) == b(env)
        if op == "!=":
            return lambda env: a(env) != b(env)
        compare = _compare
        return lambda env: compare(op, a(env), b(env))
    if t is In:
        return _membership(self, node)  # type: ignore[arg-type]
    if t is And:
        items = [_fn(self, i) for i in node.items]  # type: ignore[union-attr]
        return lambda env: all(f(env) for f in items)
    if t is Or:
        items = [_fn(self, i) for i in node.items]  # type: ignore[union-attr]
        return lambda env: any(f(env) for f in items)
    if t is Not:
        a = _fn(self, node.operand)  # type: ignore[union-attr]
        return lambda env: not a(env)
    if t is IfElse:
        c, x, y = _fn(self, node.cond), _fn(self, node.then), _fn(self, node.other)  # type: ignore[union-attr]
        return lambda env: x(env) if c(env) else y(env)
    if t is Call:
        args = [_fn(self, a) for a in node.args]  # type: ignore[union-attr]
        pick: Callable[[list[Any]], object] = min if node.fn == "min" else max  # type: ignore[union-attr]
        return lambda env: pick([f(env) for f in args])
    if t is Index:
        base, key = _fn(self, node.base), _fn(self, node.index)  # type: ignore[union-attr]

        def index(env: Mapping[str, object]) -> object:
            try:
                return base(env)[key(env)]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                return ()

        return index
    if t is Ref and self.resolve is not None:
        resolve, path = self.resolve, node.path  # type: ignore[union-attr]
        if self.lazy_refs:  # resolved when reached: a reference in a branch not taken is never read
            return lambda env: resolve(path)
        value = resolve(path)
        return lambda env: value
    raise Unsupported(f"no plain-Python value for {type(node).__name__}")  # a data reference without data


def _membership(self: _Compiler, node: In) -> Fn:
    item, negate = _fn(self, node.left), node.negate
    if isinstance(node.right, Const):
        collection = node.right.value
        if getattr(collection, "contains", None) is None and isinstance(collection, (tuple, list, frozenset, set)):
            rows = list(collection)
            if rows and all(isinstance(r, (list, tuple)) for r in rows):
                table = {tuple(r) for r in rows}  # contains: a tuple item against rows of tuples

                def in_table(env: Mapping[str, object]) -> bool:
                    v = item(env)
                    found = (v in table) if isinstance(v, tuple) else (v in rows)
                    return found != negate

                return in_table
            members = set(rows) if all(isinstance(r, (int, str, bool)) for r in rows) else rows
            return lambda env: (item(env) in members) != negate
    coll = _fn(self, node.right)
    return lambda env: contains(coll(env), item(env)) != negate


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


# Python's binding strengths, for the parentheses `show` must print.
_BINDING = {"+": 5, "-": 5, "*": 6, "//": 6, "%": 6}

Leaf = Callable[["Node"], "str | Node | None"]


def show_value(value: object) -> str:
    """A value as the rule language writes it: true/false, 'text', numbers as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # quoted as Python reads it back (repr only where it must escape)
        return f"'{value}'" if "'" not in value and "\\" not in value else repr(value)
    return str(value)


def show(node: Node, leaf: Leaf | None = None) -> str:
    """The expression as source text: the one printer of the rule language (error messages, `ckspace rules`,
    `ckspace fields`, explain's derivations). Parsing the text gives the node back.

    `leaf` may print a node itself (a string) or stand another node in for it (explain's working: fields replaced
    by their values, a conditional by its branch)."""
    return _text(node, leaf or _no_leaf)


def _no_leaf(node: Node) -> None:
    return None


def _binding(node: Node) -> int:
    if isinstance(node, IfElse):
        return 0
    if isinstance(node, Or):
        return 1
    if isinstance(node, And):
        return 2
    if isinstance(node, Not):
        return 3
    if isinstance(node, (Cmp, In)):
        return 4
    if isinstance(node, BinOp):
        return _BINDING[node.op]
    if isinstance(node, Neg):
        return 7
    return 9


def _text(node: Node, leaf: Leaf) -> str:
    node, hit = _resolve(node, leaf)
    if hit is not None:
        return hit

    def sub(child: Node, min_binding: int) -> str:
        child, done = _resolve(child, leaf)
        text = done if done is not None else _text(child, leaf)
        return text if done is not None or _binding(child) >= min_binding else f"({text})"

    if isinstance(node, Const):
        return show_value(node.value)
    if isinstance(node, Field):
        return node.name
    if isinstance(node, Ref):
        return ".".join(node.path)
    if isinstance(node, Index):
        return f"{sub(node.base, 9)}[{_text(node.index, leaf)}]"
    if isinstance(node, Tup):
        items = ", ".join(_text(i, leaf) for i in node.items)
        return f"({items},)" if len(node.items) == 1 else f"({items})"
    if isinstance(node, Call):
        return f"{node.fn}(" + ", ".join(_text(a, leaf) for a in node.args) + ")"
    if isinstance(node, BinOp):
        b = _BINDING[node.op]
        return f"{sub(node.left, b)} {node.op} {sub(node.right, b + 1)}"
    if isinstance(node, Neg):
        return f"-{sub(node.operand, 7)}"
    if isinstance(node, Cmp):
        return f"{sub(node.left, 5)} {node.op} {sub(node.right, 5)}"
    if isinstance(node, In):
        return f"{sub(node.left, 5)} {'not in' if node.negate else 'in'} {sub(node.right, 5)}"
    if isinstance(node, And):
        return " and ".join(sub(i, 3) for i in node.items)
    if isinstance(node, Or):
        return " or ".join(sub(i, 3) for i in node.items)  # `a or (b and c)`: parenthesised for the reader
    if isinstance(node, Not):
        return f"not {sub(node.operand, 3)}"
    if isinstance(node, IfElse):
        return f"{sub(node.then, 1)} if {sub(node.cond, 1)} else {sub(node.other, 0)}"
    raise TypeError(f"not an expression node: {node!r}")


def _resolve(node: Node, leaf: Leaf) -> tuple[Node, str | None]:
    """Follow stand-in nodes; the final node and its printed text when `leaf` prints it."""
    for _ in range(64):
        hit = leaf(node)
        if hit is None:
            return node, None
        if isinstance(hit, str):
            return node, hit
        node = hit
    return node, None


def fields_of(node: Node) -> frozenset[str]:
    """The fields an expression reads (kept on the node: planning asks for the same trees' fields thousands of
    times; a node is immutable, so its fields never change)."""
    known = node.__dict__.get("_fields")
    if known is None:
        out: set[str] = set()
        _collect(node, out)
        known = frozenset(out)
        object.__setattr__(node, "_fields", known)
    return known


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
