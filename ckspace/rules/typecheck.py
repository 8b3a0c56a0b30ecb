"""Static types of rule expressions, checked after parsing and before any evaluation or compilation.

The language has two readers (`expr.evaluate`, plain Python on one config, and `solve.cpsat`, CP-SAT constraints);
an expression of the wrong type would crash either of them in its own way (a TypeError in Python, an argument error
or an int64 overflow inside OR-Tools). This module gives every node a type and an integer range instead, and turns
each mismatch into one ExprError line that names the part of the expression and the types:

    --where: cannot compare tile_m (int) with 'x' (str)

Types: int (with the range of its values), bool, str, tuple, table (a curated relation), map (an arch fact keyed by
name, `arch.warp_tiles`) and "value" (data that differs between archs, before the arch is known: checked again per
arch). bool counts as an int of 0..1 in arithmetic and comparisons, as both readers treat it.

Besides types it checks what the solver needs to compile an expression at all: indexes and the right side of `in`
must be known per stratum (they read only constants, data and the stratum fields); a conditional whose test reads
free fields must give a number; two free enum fields cannot be compared; integers stay within RANGE_LIMIT.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional, Protocol, Union, cast

from . import expr as E
from ..errors import CkspaceError, ExprError

# Every integer an expression can compute stays within this range, so that CP-SAT, which sums the bounds of the
# terms of one linear constraint in int64, can never overflow (2**48 leaves room for 2**15 such terms).
RANGE_LIMIT = 2**48
# Quoted expression parts are cut to this many characters, to keep an error on one readable line.
SHOWN_CHARS = 60


@dataclass(frozen=True)
class IntT:
    lo: Optional[int] = None  # None: not known before the arch is (a fact that differs between archs)
    hi: Optional[int] = None


@dataclass(frozen=True)
class BoolT:
    pass


@dataclass(frozen=True)
class StrT:
    pass


@dataclass(frozen=True)
class TupleT:
    items: tuple["Type", ...]


@dataclass(frozen=True)
class SeqT:
    """A tuple whose length is not known (it differs between archs or between the keys of a map)."""

    item: "Type"


@dataclass(frozen=True)
class TableT:
    columns: Optional[tuple["Type", ...]]  # None: not known before the arch is (ck.* tables are built per arch)


@dataclass(frozen=True)
class MapT:
    key: "Type"
    value: "Type"


@dataclass(frozen=True)
class AnyT:
    """Data whose type differs between archs, or is not known yet: accepted here, checked again per arch."""


@dataclass(frozen=True)
class OtherT:
    """Data of a type the language has no use for (a float, a date): fails every operation."""

    name: str


Type = Union[IntT, BoolT, StrT, TupleT, SeqT, TableT, MapT, AnyT, OtherT]
BOOL = BoolT()
STR = StrT()
ANY = AnyT()
NUMERIC = (IntT, BoolT)
SCALAR = (IntT, BoolT, StrT, AnyT)


def type_name(t: Type) -> str:
    if isinstance(t, IntT):
        return "int"
    if isinstance(t, BoolT):
        return "bool"
    if isinstance(t, StrT):
        return "str"
    if isinstance(t, (TupleT, SeqT)):
        return "tuple"
    if isinstance(t, TableT):
        return "table"
    if isinstance(t, MapT):
        return "map"
    if isinstance(t, OtherT):
        return t.name
    return "value"


# ---------------------------------------------------------------------------------------------------------------
# Types of data values


def value_type(value: object) -> Type:
    """The type of a data value: an arch fact, a table, a tuple of rows."""
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return IntT(value, value)
    if isinstance(value, str):
        return STR
    columns, rows = getattr(value, "columns", None), getattr(value, "rows", None)
    if columns is not None and rows is not None:  # a Relation
        if not rows:
            return TableT(tuple(ANY for _ in columns))
        return TableT(tuple(_column_type(col) for col in zip(*rows)))
    if isinstance(value, (tuple, list)):
        return TupleT(tuple(value_type(v) for v in value))
    if isinstance(value, dict):
        return MapT(join_data(value_type(k) for k in value), join_data(value_type(v) for v in value.values()))
    return OtherT(type(value).__name__)


def _column_type(column: tuple) -> Type:
    kinds = set(map(type, column))  # one pass in C: ck.pipeline has ~10,000 values per arch
    if kinds == {bool}:
        return BOOL
    if kinds <= {int, bool}:
        return IntT(min(column), max(column))
    if kinds == {str}:
        return STR
    return join_data(value_type(v) for v in column)


def join(a: Type, b: Type) -> Optional[Type]:
    """The type of a value that is either an `a` or a `b`; None when nothing holds both."""
    if a == b:
        return a
    if isinstance(a, AnyT) or isinstance(b, AnyT):
        return ANY
    if isinstance(a, NUMERIC) and isinstance(b, NUMERIC):
        ia, ib = _as_int(a), _as_int(b)
        return IntT(_bound(min, ia.lo, ib.lo), _bound(max, ia.hi, ib.hi))
    if isinstance(a, TupleT) and isinstance(b, TupleT) and len(a.items) == len(b.items):
        items = [join(x, y) for x, y in zip(a.items, b.items)]
        return None if any(i is None for i in items) else TupleT(tuple(items))  # type: ignore[arg-type]
    if isinstance(a, (TupleT, SeqT)) and isinstance(b, (TupleT, SeqT)):
        item = join_all([*_items(a), *_items(b)])
        return None if item is None else SeqT(item)
    if isinstance(a, TableT) and isinstance(b, TableT):
        if a.columns is None or b.columns is None or len(a.columns) != len(b.columns):
            return TableT(None)
        columns = [join(x, y) for x, y in zip(a.columns, b.columns)]
        return TableT(tuple(c if c is not None else ANY for c in columns))
    if isinstance(a, MapT) and isinstance(b, MapT):
        return MapT(join(a.key, b.key) or ANY, join(a.value, b.value) or ANY)
    return None


def join_all(types: Iterable[Type]) -> Optional[Type]:
    """The join of several types; ANY for none at all (an empty tuple holds items of every type)."""
    out: Optional[Type] = None
    for t in types:
        out = t if out is None else join(out, t)
        if out is None:
            return None
    return ANY if out is None else out


def join_data(types: Iterable[Type]) -> Type:
    """The join for data values: values of several types become ANY (checked per arch), never an error."""
    return join_all(types) or ANY


def _items(t: Union[TupleT, SeqT]) -> tuple[Type, ...]:
    return t.items if isinstance(t, TupleT) else (t.item,)


def _as_int(t: Type) -> IntT:
    if isinstance(t, BoolT):
        return IntT(0, 1)
    return t if isinstance(t, IntT) else IntT()


def _bound(pick: Callable[..., int], *values: Optional[int]) -> Optional[int]:
    return None if any(v is None for v in values) else pick(values)


def comparable(a: Type, b: Type) -> bool:
    """True when `a == b` is meaningful: numbers with numbers, text with text, tuples item by item."""
    if isinstance(a, AnyT) or isinstance(b, AnyT):
        return True
    if isinstance(a, NUMERIC) and isinstance(b, NUMERIC):
        return True
    if isinstance(a, StrT) and isinstance(b, StrT):
        return True
    if isinstance(a, TupleT) and isinstance(b, TupleT):
        return len(a.items) == len(b.items) and all(comparable(x, y) for x, y in zip(a.items, b.items))
    if isinstance(a, (TupleT, SeqT)) and isinstance(b, (TupleT, SeqT)):
        return all(comparable(x, y) for x in _items(a) for y in _items(b))
    return False


# ---------------------------------------------------------------------------------------------------------------
# Scopes: what the checker knows about names


class FieldLike(Protocol):
    # Read-only members: the checker only reads a field, and data.FieldDef is a frozen dataclass.
    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...  # int | bool | enum

    @property
    def values(self) -> tuple: ...

    @property
    def stratum(self) -> bool: ...


RefTyper = Callable[[tuple[str, ...]], Type]


class Scope:
    """The types of fields and derived quantities, and how to type a data reference.

    `formulas` are the expressions of derived fields and of the derived quantities that rules read by name
    (threads, elem_bytes, ...: macros, expanded after checking); a macro's type is its formula's type.
    """

    def __init__(self, fields: Mapping[str, FieldLike], formulas: Mapping[str, E.Node], ref_type: RefTyper):
        self.fields = fields
        self.formulas = formulas
        self.ref_type_of = ref_type
        self._macros: dict[str, Optional[Type]] = {}  # None while the macro is being typed (a cycle)
        self._refs: dict[tuple[str, ...], Type] = {}
        self.static = _static_names(fields, formulas)

    def name_type(self, name: str) -> Type:
        f = self.fields.get(name)
        if f is not None:
            return field_type(f)
        if name in self._macros:
            known = self._macros[name]
            if known is None:
                raise ExprError(f"derive.{name}: its formula reads itself")
            return known
        self._macros[name] = None
        try:
            t = Checker(self, f"derive.{name}").infer(self.formulas[name])
        except ExprError:
            del self._macros[name]
            raise
        self._macros[name] = t
        return t

    def ref_type(self, path: tuple[str, ...]) -> Type:
        hit = self._refs.get(path)
        if hit is None:
            hit = self._refs[path] = self.ref_type_of(path)
        return hit


def field_type(f: FieldLike) -> Type:
    if f.type == "bool":
        return BOOL
    if f.type == "enum":
        return STR
    return IntT(min(f.values), max(f.values))


def _static_names(fields: Mapping[str, FieldLike], formulas: Mapping[str, E.Node]) -> frozenset[str]:
    """Names whose value is fixed per stratum: the stratum fields (variant, ndim, dtype) and what derives from them
    only (layout). The solver sees these as constants: every rule and filter is folded per stratum."""
    static = {name for name, f in fields.items() if f.stratum}
    grew = True
    while grew:
        grew = False
        for name, formula in formulas.items():
            if name not in static and E.fields_of(formula) <= static:
                static.add(name)
                grew = True
    return frozenset(static)


# ---------------------------------------------------------------------------------------------------------------
# The checker


def check_condition(node: E.Node, scope: Scope, what: str) -> None:
    """Check `node` as a filter or a rule's `when` / `require`: a well-typed condition."""
    checker = Checker(scope, what)
    t = checker.infer(node)
    if not isinstance(t, (BoolT, AnyT)):
        raise checker.fail(f"expected a condition (true or false), got {checker.part(node, t)}")


def check_value(node: E.Node, scope: Scope, what: str) -> Type:
    """Check `node` as a value of any type (a message placeholder, a derived field's formula)."""
    return Checker(scope, what).infer(node)


class Checker:
    def __init__(self, scope: Scope, what: str):
        self.scope = scope
        self.what = what
        self._static: dict[int, bool] = {}  # id of each node inferred so far -> known per stratum

    def fail(self, message: str) -> ExprError:
        return ExprError(f"{self.what}: {message}")

    def part(self, node: E.Node, t: Type) -> str:
        """`tile_m (int)`: an expression part and its type, for messages."""
        return f"{self.brief(node)} ({type_name(t)})"

    @staticmethod
    def brief(node: E.Node) -> str:
        """The expression part as source text, cut to keep the message on one readable line."""
        text = E.show(node)
        return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."

    def is_static(self, node: E.Node) -> bool:
        """True when the node reads only constants, data and the stratum fields (or what derives from them only):
        folded per stratum, it is a constant for the solver. Known for every node `infer` has seen."""
        return self._static[id(node)]

    def infer(self, node: E.Node) -> Type:
        t = self._infer(node)
        if isinstance(node, E.Field):
            self._static[id(node)] = node.name in self.scope.static
        else:
            self._static[id(node)] = all(self._static[id(c)] for c in E.children(node))
        if isinstance(t, IntT) and t.lo is not None and t.hi is not None and max(-t.lo, t.hi) > RANGE_LIMIT:
            extreme = t.lo if -t.lo > t.hi else t.hi
            raise self.fail(f"{self.part(node, t)} can reach {extreme}, beyond the solver's integer range "
                            f"(at most {RANGE_LIMIT} = 2**48 in magnitude)")
        return t

    def _infer(self, node: E.Node) -> Type:
        if isinstance(node, E.Const):
            return value_type(node.value)
        if isinstance(node, E.Field):
            return self.scope.name_type(node.name)
        if isinstance(node, E.Ref):
            try:
                return self.scope.ref_type(node.path)
            except CkspaceError as exc:  # an unknown fact or table: the message gains where it was read
                raise self.fail(str(exc)) from None
        if isinstance(node, E.Tup):
            return TupleT(tuple(self.infer(i) for i in node.items))
        if isinstance(node, (E.And, E.Or)):
            word = "and" if isinstance(node, E.And) else "or"
            for item in node.items:
                self.condition(item, f"'{word}'")
            return BOOL
        if isinstance(node, E.Not):
            self.condition(node.operand, "'not'")
            return BOOL
        if isinstance(node, E.Neg):
            t = self.number(node.operand, "'-'", node)
            return IntT(_neg(t.hi), _neg(t.lo))
        if isinstance(node, E.BinOp):
            return self._binop(node)
        if isinstance(node, E.Call):
            args = [self.number(a, f"{node.fn}()", node) for a in node.args]
            pick = min if node.fn == "min" else max
            return IntT(_bound(pick, *(a.lo for a in args)), _bound(pick, *(a.hi for a in args)))
        if isinstance(node, E.Cmp):
            return self._compare(node)
        if isinstance(node, E.In):
            return self._membership(node)
        if isinstance(node, E.IfElse):
            return self._conditional(node)
        if isinstance(node, E.Index):
            return self._index(node)
        raise TypeError(f"not an expression node: {node!r}")

    # -- operand kinds --------------------------------------------------------------------------------------------
    def condition(self, node: E.Node, where: str) -> None:
        t = self.infer(node)
        if not isinstance(t, (BoolT, AnyT)):
            raise self.fail(f"{where} takes conditions (true or false), got {self.part(node, t)}")

    def number(self, node: E.Node, operator: str, whole: E.Node) -> IntT:
        """The range of an operand of `operator` in `whole`; the operator takes integers (bools count as 0 and 1)."""
        t = self.infer(node)
        if isinstance(t, AnyT):
            return IntT()
        if not isinstance(t, NUMERIC):
            raise self.fail(f"{operator} takes integers, got {self.part(node, t)} in {self.brief(whole)}")
        return _as_int(t)

    # -- arithmetic -----------------------------------------------------------------------------------------------
    def _binop(self, node: E.BinOp) -> Type:
        a = self.number(node.left, f"'{node.op}'", node)
        b = self.number(node.right, f"'{node.op}'", node)
        if node.op == "+":
            return IntT(_bound(sum, a.lo, b.lo), _bound(sum, a.hi, b.hi))
        if node.op == "-":
            return IntT(_bound(sum, a.lo, _neg(b.hi)), _bound(sum, a.hi, _neg(b.lo)))
        if node.op == "*":
            if None in (a.lo, a.hi, b.lo, b.hi):
                return IntT()
            corners = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]  # type: ignore[operator]
            return IntT(min(corners), max(corners))
        # x // y and x % y (and the solver's x // 0 == 0, x % 0 == x) never exceed |x| and |y| in magnitude.
        if None in (a.lo, a.hi, b.lo, b.hi):
            return IntT()
        constant = self.is_static(node.left) and self.is_static(node.right)
        if min(a.lo, b.lo) < 0 and not constant:  # type: ignore[type-var, operator]
            # The solver divides non-negative values only (its ranges are these ranges); constants fold first.
            negative, t = (node.left, a) if a.lo < 0 else (node.right, b)  # type: ignore[operator]
            raise self.fail(f"'{node.op}' takes non-negative operands, got {self.part(negative, t)} "
                            f"in {self.brief(node)}")
        size = max(abs(a.lo), abs(a.hi), *((abs(b.lo), abs(b.hi)) if node.op == "%" else ()))  # type: ignore[arg-type]
        if node.op == "//" and a.lo >= 0 and b.lo >= 0:  # type: ignore[operator]
            return IntT(0, a.hi)
        if node.op == "%" and a.lo >= 0 and b.lo >= 0:  # type: ignore[operator]
            return IntT(0, size)
        return IntT(-size, size)

    # -- comparisons ----------------------------------------------------------------------------------------------
    def _compare(self, node: E.Cmp) -> Type:
        a, b = self.infer(node.left), self.infer(node.right)
        if node.op not in ("==", "!="):
            if not (isinstance(a, (*NUMERIC, AnyT)) and isinstance(b, (*NUMERIC, AnyT))):
                raise self.fail(f"cannot order {self.part(node.left, a)} and {self.part(node.right, b)}: "
                                f"'{node.op}' compares integers")
            return BOOL
        self.equal(node.left, a, node.right, b)
        if isinstance(a, (TupleT, SeqT)) and not (self.is_static(node.left) and self.is_static(node.right)):
            raise self.fail(f"cannot compare {self.part(node.left, a)} with {self.part(node.right, b)} as a whole: "
                            f"write both sides as (...) tuples, or use 'in'")
        return BOOL

    def equal(self, left: E.Node, a: Type, right: E.Node, b: Type) -> None:
        """Check `left == right` (also each entry of a literal tuple that `in` searches)."""
        if not comparable(a, b):
            raise self.fail(f"cannot compare {self.part(left, a)} with {self.part(right, b)}{self._values_of(left, right)}")
        self.known_values(left, right)
        if isinstance(a, StrT) and isinstance(b, StrT) and not self.is_static(left) and not self.is_static(right):
            raise self.fail(f"cannot compare {self.part(left, a)} with {self.part(right, b)}: the solver compares "
                            f"an enum field only with constants")

    def _values_of(self, *nodes: E.Node) -> str:
        """'; ndim values: 2, 3' for the first field among nodes that has a list of values ('' when none)."""
        for node in nodes:
            f = self.scope.fields.get(node.name) if isinstance(node, E.Field) else None
            if f is not None and f.values:
                return f"; {cast(E.Field, node).name} values: {', '.join(map(str, f.values))}"
        return ""

    def known_values(self, a: E.Node, b: E.Node) -> None:
        """A text constant compared with an enum field must be one of its values: `pipeline == 'compv9'` is a typo,
        not an empty filter. Literal tuples are compared item by item."""
        if isinstance(a, E.Tup) and isinstance(b, E.Tup) and len(a.items) == len(b.items):
            for x, y in zip(a.items, b.items):
                self.known_values(x, y)
            return
        for field, const in ((a, b), (b, a)):
            if not isinstance(field, E.Field) or not isinstance(const, E.Const):
                continue
            f = self.scope.fields.get(field.name)
            if f is None or not f.values:
                continue
            if (f.type == "enum" and isinstance(const.value, str)) or (
                    f.type == "int" and isinstance(const.value, int) and not isinstance(const.value, bool)):
                if const.value not in f.values:  # `tile_m == 7` is a typo as much as `pipeline == 'compv9'`
                    raise self.fail(f"{field.name} has no value {const.value!r}; values: "
                                    f"{', '.join(map(str, f.values))}")

    def _membership(self, node: E.In) -> Type:
        left, right = self.infer(node.left), self.infer(node.right)
        if isinstance(node.left, E.Tup) and isinstance(left, TupleT):
            parts = list(zip(node.left.items, left.items))
        else:
            parts = [(node.left, t) for t in _items(left)] if isinstance(left, (TupleT, SeqT)) else [(node.left, left)]
        for part, t in parts:
            if not isinstance(t, SCALAR):
                raise self.fail(f"'in' looks for a value or a tuple of values, got {self.part(part, t)}")
        if isinstance(node.right, E.Tup) and isinstance(right, TupleT):
            # A literal list: each entry is checked as `==` would be, so that the message names the culprit.
            for entry, t in zip(node.right.items, right.items):
                self.equal(node.left, left, entry, t)
        else:
            self._search(node, left, right)
        if not self.is_static(node.right):
            raise self.fail(f"the right side of 'in' must be known per stratum (constants, data and "
                            f"{self._static_list()}), got {self.part(node.right, right)}")
        return BOOL

    def _search(self, node: E.In, left: Type, right: Type) -> None:
        """`left in right` for a collection from the data: a table, or a tuple of values or of rows."""
        row = self._row(node.right, right)
        if row is None or isinstance(row, AnyT):
            return
        single = not isinstance(left, (TupleT, SeqT))
        if single and isinstance(right, TableT) and isinstance(row, TupleT) and len(row.items) == 1:
            row = row.items[0]  # a one-column table also takes a single value (Relation.contains)
        # Shapes must agree: a single value is never found among tuples, nor a tuple among single values.
        if isinstance(row, (TupleT, SeqT)) != isinstance(left, (TupleT, SeqT)) or not comparable(left, row):
            raise self.fail(f"cannot look for {self.part(node.left, left)} in {self.brief(node.right)}, "
                            f"whose entries are {_describe(row)}")

    def _row(self, node: E.Node, t: Type) -> Optional[Type]:
        """The type of the entries of a collection `in` searches (None: no entries)."""
        if isinstance(t, TableT):
            return ANY if t.columns is None else TupleT(t.columns)
        if isinstance(t, SeqT):
            return t.item
        if isinstance(t, TupleT):
            if not t.items:
                return None
            row = join_all(t.items)
            if row is None:
                raise self.fail(f"the entries of {self.part(node, t)} differ in type")
            return row
        if isinstance(t, AnyT):
            return ANY
        raise self.fail(f"'in' searches a tuple or a table, got {self.part(node, t)}")

    # -- conditionals and indexes ---------------------------------------------------------------------------------
    def _conditional(self, node: E.IfElse) -> Type:
        self.condition(node.cond, "'if'")
        a, b = self.infer(node.then), self.infer(node.other)
        t = join(a, b)
        if t is None:
            raise self.fail(f"the branches of {self.brief(node)} differ in type: "
                            f"{type_name(a)} and {type_name(b)}")
        if not isinstance(t, (*NUMERIC, AnyT)) and not self.is_static(node.cond):
            raise self.fail(f"{self.part(node, t)} chooses by free fields, which the solver can do between "
                            f"integers only")
        return t

    def _index(self, node: E.Index) -> Type:
        base, key = self.infer(node.base), self.infer(node.index)
        t = self._item(node, base, key)
        if not (self.is_static(node.base) and self.is_static(node.index)):
            raise self.fail(f"cannot index {self.brief(node.base)} by {self.part(node.index, key)}: an "
                            f"index must be known per stratum (constants, data and {self._static_list()})")
        return t

    def _item(self, node: E.Index, base: Type, key: Type) -> Type:
        if isinstance(base, AnyT):
            return ANY
        if isinstance(base, MapT):
            if not comparable(base.key, key):
                raise self.fail(f"{self.brief(node.base)} is indexed by {type_name(base.key)}, "
                                f"got {self.part(node.index, key)}")
            return base.value
        if isinstance(base, (TupleT, SeqT)):
            if not isinstance(key, (*NUMERIC, AnyT)):
                raise self.fail(f"{self.brief(node.base)} is indexed by int, got {self.part(node.index, key)}")
            index = node.index
            if isinstance(index, E.Neg) and isinstance(index.operand, E.Const):  # -3 parses as Neg(3)
                index = E.Const(-int(cast(int, index.operand.value)))  # an integer: key is NUMERIC
            if isinstance(base, TupleT) and isinstance(index, E.Const):
                position = int(cast(int, index.value))  # an integer: key is NUMERIC
                if not -len(base.items) <= position < len(base.items):
                    raise self.fail(f"index {position} is out of range for {self.brief(node.base)} "
                                    f"({len(base.items)} items)")
                return base.items[position]
            if isinstance(base, TupleT):  # an index known per stratum: its whole range must fall inside
                span = _as_int(key) if isinstance(key, NUMERIC) else IntT()
                n = len(base.items)
                if span.lo is None or span.hi is None or span.lo < -n or span.hi >= n:
                    raise self.fail(f"index {self.brief(node.index)} may be out of range for {self.brief(node.base)} "
                                    f"({n} items)")
            return join_data(_items(base))
        raise self.fail(f"cannot index {self.part(node.base, base)}")

    def _static_list(self) -> str:
        return ", ".join(sorted(self.scope.static))


def _neg(value: Optional[int]) -> Optional[int]:
    return None if value is None else -value


def _describe(row: Type) -> str:
    if isinstance(row, TupleT):
        return f"tuples of {len(row.items)} ({', '.join(type_name(t) for t in row.items)})"
    if isinstance(row, SeqT):
        return f"tuples of {type_name(row.item)}"
    return type_name(row)
