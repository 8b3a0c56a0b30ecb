"""Compiling folded rule expressions into CP-SAT constraints.

Integer expressions become linear expressions (with auxiliary variables for products, division, modulo, min/max and
conditionals), comparisons become (reified) linear constraints, and membership becomes table constraints. Enum
fields are encoded as the index of their value in the field's domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from ortools.sat.python import cp_model
from ortools.util.python import sorted_interval_list

from . import expr as E
from .data import FieldDef
from .errors import DataError

Domain = sorted_interval_list.Domain

_NEGATE = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


@dataclass(frozen=True)
class IntTerm:
    expr: object  # cp_model linear expression or IntVar
    lo: int
    hi: int


@dataclass(frozen=True)
class EnumTerm:
    var: cp_model.IntVar
    field: FieldDef


@dataclass(frozen=True)
class Lit:
    lit: object  # a Boolean literal (BoolVar or its negation)


Term = object  # python constant | IntTerm | EnumTerm | Lit | tuple of terms


def _compare_const(op: str, a: object, b: object) -> bool:
    return bool(E.evaluate(E.Cmp(op, E.Const(a), E.Const(b)), {}, lambda p: None))


class Compiler:
    """Posts constraints for one sub-model. `variables` maps each free field to its CP-SAT variable."""

    def __init__(self, cp: cp_model.CpModel, fields: Mapping[str, FieldDef], variables: Mapping[str, object]):
        self.cp = cp
        self.fields = fields
        self.vars = variables
        self._lits: dict[E.Node, object] = {}
        self._aux = 0

    # -- helpers ----------------------------------------------------------------------------------------------------
    def _new_int(self, lo: int, hi: int) -> cp_model.IntVar:
        self._aux += 1
        return self.cp.NewIntVar(lo, hi, f"_t{self._aux}")

    def _new_bool(self) -> cp_model.IntVar:
        self._aux += 1
        return self.cp.NewBoolVar(f"_b{self._aux}")

    def code(self, f: FieldDef, value: object) -> int | None:
        try:
            return f.values.index(value)
        except ValueError:
            return None

    # -- terms ------------------------------------------------------------------------------------------------------
    def term(self, node: E.Node) -> Term:
        if isinstance(node, E.Const):
            return node.value
        if isinstance(node, E.Field):
            f = self.fields[node.name]
            var = self.vars[node.name]
            if f.type == "enum":
                return EnumTerm(var, f)
            if f.type == "bool":
                return Lit(var)
            return IntTerm(var, min(f.values), max(f.values))
        if isinstance(node, E.Tup):
            return tuple(self.term(i) for i in node.items)
        if isinstance(node, E.BinOp):
            return self._binop(node.op, self.int_term(node.left), self.int_term(node.right))
        if isinstance(node, E.Neg):
            t = self.int_term(node.operand)
            return IntTerm(-t.expr, -t.hi, -t.lo) if isinstance(t, IntTerm) else -t  # type: ignore[operator]
        if isinstance(node, E.Call):
            args = [self.int_term(a) for a in node.args]
            if all(not isinstance(a, IntTerm) for a in args):
                return min(args) if node.fn == "min" else max(args)  # type: ignore[type-var]
            terms = [a if isinstance(a, IntTerm) else IntTerm(a, a, a) for a in args]  # type: ignore[arg-type]
            lo = (min if node.fn == "min" else max)(t.lo for t in terms)
            hi = (min if node.fn == "min" else max)(t.hi for t in terms)
            aux = self._new_int(lo, hi)
            exprs = [t.expr for t in terms]
            (self.cp.AddMinEquality if node.fn == "min" else self.cp.AddMaxEquality)(aux, exprs)
            return IntTerm(aux, lo, hi)
        if isinstance(node, E.IfElse):
            cond = self.lit_term(node.cond)
            if isinstance(cond, bool):
                return self.term(node.then if cond else node.other)
            a, b = self.int_term(node.then), self.int_term(node.other)
            ta = a if isinstance(a, IntTerm) else IntTerm(a, a, a)  # type: ignore[arg-type]
            tb = b if isinstance(b, IntTerm) else IntTerm(b, b, b)  # type: ignore[arg-type]
            aux = self._new_int(min(ta.lo, tb.lo), max(ta.hi, tb.hi))
            self.cp.Add(aux == ta.expr).OnlyEnforceIf(cond)
            self.cp.Add(aux == tb.expr).OnlyEnforceIf(cond.Not())
            return IntTerm(aux, min(ta.lo, tb.lo), max(ta.hi, tb.hi))
        if isinstance(node, (E.Cmp, E.In, E.And, E.Or, E.Not)):
            lit = self.lit_term(node)
            return lit if isinstance(lit, bool) else Lit(lit)
        if isinstance(node, E.Index):
            base, index = self.term(node.base), self.term(node.index)
            try:
                return base[index]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                return ()
        raise DataError(f"cannot compile {node!r} for the solver")

    def int_term(self, node: E.Node) -> IntTerm | int:
        t = self.term(node)
        if isinstance(t, bool):
            return int(t)
        if isinstance(t, int):
            return t
        if isinstance(t, IntTerm):
            return t
        if isinstance(t, Lit):
            return IntTerm(t.lit, 0, 1)
        raise DataError(f"expected an integer expression, got {node!r}")

    def _binop(self, op: str, a: IntTerm | int, b: IntTerm | int) -> IntTerm | int:
        if not isinstance(a, IntTerm) and not isinstance(b, IntTerm):
            return E._binop(op, a, b)  # type: ignore[return-value]
        ta = a if isinstance(a, IntTerm) else IntTerm(a, a, a)
        tb = b if isinstance(b, IntTerm) else IntTerm(b, b, b)
        if op == "+":
            return IntTerm(ta.expr + tb.expr, ta.lo + tb.lo, ta.hi + tb.hi)
        if op == "-":
            return IntTerm(ta.expr - tb.expr, ta.lo - tb.hi, ta.hi - tb.lo)
        if op == "*":
            corners = [ta.lo * tb.lo, ta.lo * tb.hi, ta.hi * tb.lo, ta.hi * tb.hi]
            lo, hi = min(corners), max(corners)
            if not isinstance(a, IntTerm) or not isinstance(b, IntTerm):
                return IntTerm(ta.expr * tb.expr, lo, hi)
            aux = self._new_int(lo, hi)
            self.cp.AddMultiplicationEquality(aux, [ta.expr, tb.expr])
            return IntTerm(aux, lo, hi)
        return self._divmod(op, ta, tb)

    def _divmod(self, op: str, ta: IntTerm, tb: IntTerm) -> IntTerm | int:
        if ta.lo < 0 or tb.lo < 0:
            raise DataError("division and modulo are defined on non-negative values only")
        num = self._as_var(ta)
        if tb.lo == tb.hi == 0:  # x // 0 == 0, x % 0 == x (shared semantics, see expr._binop)
            return 0 if op == "//" else ta
        lo, hi = (0, ta.hi // max(tb.lo, 1)) if op == "//" else (0, min(ta.hi, tb.hi - 1))
        den_lo = max(tb.lo, 1)
        den = self._as_var(tb) if tb.lo > 0 else self._new_int(den_lo, tb.hi)
        zero = None
        if tb.lo == 0:
            zero = self._new_bool()
            self.cp.Add(tb.expr == 0).OnlyEnforceIf(zero)
            self.cp.Add(tb.expr >= 1).OnlyEnforceIf(zero.Not())
            self.cp.Add(den == tb.expr).OnlyEnforceIf(zero.Not())
            self.cp.Add(den == 1).OnlyEnforceIf(zero)
        res = self._new_int(lo, max(hi, ta.hi) if zero is not None and op == "%" else hi)
        if op == "//":
            self.cp.AddDivisionEquality(res, num, den)
        else:
            self.cp.AddModuloEquality(res, num, den)
        if zero is None:
            return IntTerm(res, lo, hi)
        out = self._new_int(0, ta.hi)
        self.cp.Add(out == res).OnlyEnforceIf(zero.Not())
        self.cp.Add(out == (0 if op == "//" else ta.expr)).OnlyEnforceIf(zero)
        return IntTerm(out, 0, ta.hi)

    def _as_var(self, t: IntTerm) -> object:
        if isinstance(t.expr, cp_model.IntVar):
            return t.expr
        aux = self._new_int(t.lo, t.hi)
        self.cp.Add(aux == t.expr)
        return aux

    # -- literals -------------------------------------------------------------------------------------------------
    def lit_term(self, node: E.Node) -> object:
        """A Boolean literal for `node`, or a Python bool when it is constant."""
        if isinstance(node, E.Const):
            return bool(node.value)
        cached = self._lits.get(node)
        if cached is not None:
            return cached
        lit = self._make_lit(node)
        if not isinstance(lit, bool):
            self._lits[node] = lit
        return lit

    def _make_lit(self, node: E.Node) -> object:
        if isinstance(node, E.Field):
            t = self.term(node)
            if isinstance(t, Lit):
                return t.lit
            raise DataError(f"field {node.name} is not Boolean")
        if isinstance(node, E.Not):
            inner = self.lit_term(node.operand)
            return (not inner) if isinstance(inner, bool) else inner.Not()  # type: ignore[attr-defined]
        if isinstance(node, (E.And, E.Or)):
            lits = [self.lit_term(i) for i in node.items]
            is_and = isinstance(node, E.And)
            if any(isinstance(x, bool) and x != is_and for x in lits):
                return not is_and
            lits = [x for x in lits if not isinstance(x, bool)]
            if not lits:
                return is_and
            if len(lits) == 1:
                return lits[0]
            b = self._new_bool()
            if is_and:
                self.cp.AddBoolAnd(lits).OnlyEnforceIf(b)
                self.cp.AddBoolOr([x.Not() for x in lits]).OnlyEnforceIf(b.Not())  # type: ignore[attr-defined]
            else:
                self.cp.AddBoolOr(lits).OnlyEnforceIf(b)
                self.cp.AddBoolAnd([x.Not() for x in lits]).OnlyEnforceIf(b.Not())  # type: ignore[attr-defined]
            return b
        if isinstance(node, (E.Cmp, E.In)):
            b = self._new_bool()
            done = self.post(node, [b])
            if isinstance(done, bool):
                return done
            self.post(_negate(node), [b.Not()])
            return b
        t = self.term(node)
        if isinstance(t, Lit):
            return t.lit
        if isinstance(t, IntTerm):
            b = self._new_bool()
            self.cp.Add(t.expr != 0).OnlyEnforceIf(b)
            self.cp.Add(t.expr == 0).OnlyEnforceIf(b.Not())
            return b
        return bool(t)

    # -- constraints ----------------------------------------------------------------------------------------------
    def post(self, node: E.Node, enforce: Sequence[object] = ()) -> bool | None:
        """Post `node` as a constraint, enforced only when all `enforce` literals hold.

        Returns True/False when the constraint turned out constant (nothing or a clause was posted), else None.
        """
        if isinstance(node, E.Const):
            if not node.value:
                self.cp.AddBoolOr([e.Not() for e in enforce])  # type: ignore[attr-defined]
            return bool(node.value)
        if isinstance(node, E.And):
            for item in node.items:
                self.post(item, enforce)
            return None
        if isinstance(node, E.Cmp):
            return self._post_cmp(node, enforce)
        if isinstance(node, E.In):
            return self._post_in(node, enforce)
        lit = self.lit_term(node)
        if isinstance(lit, bool):
            return self.post(E.Const(lit), enforce)
        self.cp.AddBoolOr([lit, *(e.Not() for e in enforce)])  # type: ignore[attr-defined]
        return None

    def _post_cmp(self, node: E.Cmp, enforce: Sequence[object]) -> bool | None:
        a, b = self.term(node.left), self.term(node.right)
        if isinstance(a, EnumTerm) or isinstance(b, EnumTerm):
            if isinstance(b, EnumTerm):
                a, b = b, a
            if node.op not in ("==", "!="):
                raise DataError(f"ordering comparison on an enum field in {node!r}")
            if isinstance(b, EnumTerm):
                raise DataError(f"comparing two enum fields is not supported: {node!r}")
            code = self.code(a.field, b)  # type: ignore[union-attr]
            if code is None:
                return self.post(E.Const(node.op == "!="), enforce)
            ct = self.cp.Add(a.var == code) if node.op == "==" else self.cp.Add(a.var != code)  # type: ignore[union-attr]
            ct.OnlyEnforceIf(list(enforce))
            return None
        ia, ib = self._to_int(a), self._to_int(b)
        if not isinstance(ia, IntTerm) and not isinstance(ib, IntTerm):
            return self.post(E.Const(_compare_const(node.op, ia, ib)), enforce)
        ea = ia.expr if isinstance(ia, IntTerm) else ia
        eb = ib.expr if isinstance(ib, IntTerm) else ib
        op = node.op
        ct = self.cp.Add(
            ea == eb if op == "==" else ea != eb if op == "!=" else ea < eb if op == "<"
            else ea <= eb if op == "<=" else ea > eb if op == ">" else ea >= eb
        )
        ct.OnlyEnforceIf(list(enforce))
        return None

    def _to_int(self, t: Term) -> IntTerm | int | str:
        if isinstance(t, bool):
            return int(t)
        if isinstance(t, Lit):
            return IntTerm(t.lit, 0, 1)
        return t  # type: ignore[return-value]

    def _post_in(self, node: E.In, enforce: Sequence[object]) -> bool | None:
        right = self.term(node.right)
        rows = _rows_of(right)
        left = self.term(node.left)
        items = list(left) if isinstance(left, tuple) else [left]
        if rows and any(len(r) != len(items) for r in rows):
            raise DataError(f"membership test compares {len(items)} values with rows of {len(rows[0])}: {node!r}")
        var_pos, var_exprs = [], []
        fixed: dict[int, object] = {}
        for i, t in enumerate(items):
            if isinstance(t, (EnumTerm, IntTerm, Lit)):
                var_pos.append(i)
                var_exprs.append(t)
            else:
                fixed[i] = t
        matching = [r for r in rows if all(_same(r[i], v) for i, v in fixed.items())]
        if not var_pos:
            return self.post(E.Const(bool(matching) != node.negate), enforce)
        encoded: set[tuple[int, ...]] = set()
        for r in matching:
            enc = []
            for i, t in zip(var_pos, var_exprs):
                v = r[i]
                if isinstance(t, EnumTerm):
                    c = self.code(t.field, v)
                    if c is None:
                        break
                    enc.append(c)
                elif isinstance(v, bool) or isinstance(v, int):
                    enc.append(int(v))
                else:
                    break
            else:
                encoded.add(tuple(enc))
        variables = [self._var_of(t) for t in var_exprs]
        allowed = sorted(encoded)
        if not allowed:
            return self.post(E.Const(node.negate), enforce)
        if len(variables) == 1:
            dom = Domain.from_values([a[0] for a in allowed])
            if node.negate:
                dom = dom.complement()
            self.cp.AddLinearExpressionInDomain(variables[0], dom).OnlyEnforceIf(list(enforce))
            return None
        if node.negate:
            self.cp.AddForbiddenAssignments(variables, allowed).OnlyEnforceIf(list(enforce))
        else:
            self.cp.AddAllowedAssignments(variables, allowed).OnlyEnforceIf(list(enforce))
        return None

    def _var_of(self, t: object) -> object:
        if isinstance(t, EnumTerm):
            return t.var
        if isinstance(t, Lit):
            if isinstance(t.lit, cp_model.IntVar):
                return t.lit
            aux = self._new_int(0, 1)
            self.cp.Add(aux == 1).OnlyEnforceIf(t.lit)
            self.cp.Add(aux == 0).OnlyEnforceIf(t.lit.Not())  # type: ignore[attr-defined]
            return aux
        assert isinstance(t, IntTerm)
        return self._as_var(t)


def _same(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, (bool, int)) and isinstance(b, (bool, int)) and int(a) == int(b)
    return a == b


def _rows_of(value: object) -> list[tuple]:
    rows = getattr(value, "rows", None)
    if rows is not None:
        return list(rows)
    if isinstance(value, (tuple, list)):
        return [tuple(v) if isinstance(v, (tuple, list)) else (v,) for v in value]
    raise DataError(f"'in' needs a table, tuple or list on its right, got {value!r}")


def _negate(node: E.Node) -> E.Node:
    if isinstance(node, E.Cmp):
        return E.Cmp(_NEGATE[node.op], node.left, node.right)
    if isinstance(node, E.In):
        return E.In(node.left, node.right, not node.negate)
    return E.Not(node)


def new_variable(cp: cp_model.CpModel, f: FieldDef) -> cp_model.IntVar:
    if f.type == "bool":
        return cp.NewBoolVar(f.name)
    if f.type == "enum":
        return cp.NewIntVar(0, len(f.values) - 1, f.name)
    return cp.NewIntVarFromDomain(Domain.from_values(list(f.values)), f.name)


def decode(f: FieldDef, raw: int) -> object:
    if f.type == "bool":
        return bool(raw)
    if f.type == "enum":
        return f.values[raw]
    return raw


def variables_of(names: Iterable[str]) -> list[str]:
    return sorted(set(names))
