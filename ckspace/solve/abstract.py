"""Rewriting a stratum's constraints over hidden helper fields, so that the interaction graph gets thinner.

A tree decomposition works on which fields a constraint reads, not on how it reads them. Two rewrites make that
coarse view sharper, and both are exact (they remove and add no solution):

* Selectors. `pipeline == 'compv6' -> tile_m * tile_k >= threads * vec_a` reads the pipeline only to tell compv6
  from the rest. The values of a field that fold a constraint to the very same expression are interchangeable for
  it; the constraint then reads a hidden field holding the class of the value (here 2 classes instead of 11
  pipelines), and one link constraint ties the class to the field. Classes are found by folding, so they are exact.
* Terms. `(tile_m * tile_k) % (64 * wave_m * wave_n * wave_k) == 0` reads five fields but depends on two numbers.
  A sub-expression over several fields that several constraints share (or whose extraction drops fields from a
  constraint) becomes a hidden field with a link constraint `t == expr`; its domain is the set of values the
  expression takes over its fields' domains.

Hidden fields are ordinary solver variables inside the bags that hold them; they are functions of the real fields
(the link constraints pin them), so they change no count, and configs() never shows them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from ..rules import expr as E
from ..rules.expr import compile_node
from . import implied
from ..rules.data import FieldDef

Resolver = Callable[[tuple[str, ...]], object]

# A term becomes a hidden field only when its values can be listed by evaluating it over at most this many
# combinations of its fields' values (planning work, not enumeration of kernels).
TERM_LIMIT = 20_000
# Selector classes of several fields of one constraint multiply; above this many combinations the constraint is
# left as it is.
CLASS_COMBINATIONS = 64
# Selector classes are looked for in membership tests against tables of at most this many rows.
SMALL_TABLE = 64
# A constraint whose fields have at most this many combinations is listed as one table as it is: its terms are not
# made hidden fields. Splitting such a constraint gains nothing, and its terms (tile_m * tile_k, the threads, the
# elements per thread of CK Tile's tile loads) shared with other constraints tie the tile, wave and vector fields
# into a graph whose eliminations join tables of millions of rows (the tile-load rules: out of memory).
LISTABLE = 1_000_000


@dataclass
class Rewritten:
    """The output: constraints as (id, when, require) over real and hidden fields, and the hidden fields."""

    items: list[tuple[str, E.Node, E.Node]]
    hidden: dict[str, FieldDef] = field(default_factory=dict)
    defined_by: dict[str, frozenset[str]] = field(default_factory=dict)  # hidden field -> the fields fixing it


def simplify(node: E.Node, env: Mapping[str, object], resolve: Resolver) -> E.Node:
    """fold + normalize, twice: a membership test that normalizes to a constant lets its `and`/`or` fold further."""
    out = implied.normalize(E.fold(node, env, resolve))
    return implied.normalize(E.fold(out, {}, resolve))


def rewrite(items: Sequence[tuple[str, E.Node, E.Node]], fields: Mapping[str, FieldDef], kind: str,
            resolve: Resolver, terms: bool = True) -> Rewritten:
    out = Rewritten(list(items))
    _selectors(out, fields, kind, resolve)
    if terms:
        _terms(out, fields, kind, resolve)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Selectors


def _test_only(node: E.Node, name: str) -> bool:
    """True when every occurrence of the field is compared for (in)equality with constants or tested for membership
    in a constant collection: the shapes where values are likely interchangeable. Arithmetic uses are not."""
    ok = True

    def walk(n: E.Node, allowed: bool) -> None:
        nonlocal ok
        if not ok:
            return
        if isinstance(n, E.Field):
            if n.name == name and not allowed:
                ok = False
            return
        if isinstance(n, E.Cmp) and n.op in ("==", "!="):
            side = isinstance(n.left, E.Const) or isinstance(n.right, E.Const)
            walk(n.left, side)
            walk(n.right, side)
            return
        if isinstance(n, E.In) and isinstance(n.right, E.Const) and _small(n.right.value):
            if isinstance(n.left, E.Tup):
                for item in n.left.items:
                    walk(item, True)
            else:
                walk(n.left, True)
            return
        for child in E.children(n):
            walk(child, False)

    walk(node, False)
    return ok


def _small(collection: object) -> bool:
    """Membership in a big table distinguishes nearly every value; grouping values there costs time for nothing."""
    rows = getattr(collection, "rows", collection)
    return isinstance(rows, (tuple, list)) and len(rows) <= SMALL_TABLE


def _classes(when: E.Node, require: E.Node, name: str, values: Sequence[object],
             resolve: Resolver) -> list[list[object]] | None:
    """The field's values grouped by what they fold the constraint to; None when no two values share a group."""
    groups: dict[tuple[E.Node, E.Node], list[object]] = {}
    for v in values:
        key = (simplify(when, {name: v}, resolve), simplify(require, {name: v}, resolve))
        groups.setdefault(key, []).append(v)
    if len(groups) == len(values):
        return None
    return list(groups.values())


def _selectors(out: Rewritten, fields: Mapping[str, FieldDef], kind: str, resolve: Resolver) -> None:
    by_partition: dict[tuple[str, tuple[tuple, ...]], str] = {}
    counter: dict[str, int] = {}
    result: list[tuple[str, E.Node, E.Node]] = []
    links: list[tuple[str, E.Node, E.Node]] = []
    for rid, when, require in out.items:
        scope = E.fields_of(when) | E.fields_of(require)
        split: list[tuple[str, str, list[list[object]]]] = []
        for name in sorted(scope):
            f = fields.get(name)
            if f is None or len(f.values) <= 2 or len(scope) < 2:
                continue
            if not (_test_only(when, name) and _test_only(require, name)):
                continue
            classes = _classes(when, require, name, f.values, resolve)
            if classes is None:
                continue
            split.append((name, "", classes))
        combos = 1
        for _, _, classes in split:
            combos *= len(classes)
        if not split or combos > CLASS_COMBINATIONS:
            result.append((rid, when, require))
            continue
        named = []
        for name, _, classes in split:
            key = (name, tuple(tuple(c) for c in classes))
            hidden = by_partition.get(key)
            if hidden is None:
                counter[name] = counter.get(name, 0) + 1
                hidden = by_partition[key] = f"{name}@{counter[name]}"
                out.hidden[hidden] = FieldDef(hidden, kind, "int", tuple(range(len(classes))), derived=True,
                                              doc=f"class of {name}: " + " | ".join("/".join(map(str, c)) for c in classes))
                out.defined_by[hidden] = frozenset({name})
                rows = tuple((v, j) for j, c in enumerate(classes) for v in c)
                links.append((f"link:{hidden}", E.Const(True), E.In(E.Tup((E.Field(name), E.Field(hidden))), E.Const(rows), False)))
            named.append((name, hidden, classes))
        split = named
        # One constraint per combination of classes, enforced when the hidden fields hold that combination: values
        # of a class fold the constraint identically, so a representative stands for all of them.
        for choice in itertools.product(*(range(len(classes)) for _, _, classes in split)):
            env = {name: classes[j][0] for (name, _, classes), j in zip(split, choice)}
            w = simplify(when, env, resolve)
            r = simplify(require, env, resolve)
            if (isinstance(w, E.Const) and not w.value) or (isinstance(r, E.Const) and r.value):
                continue
            tests = tuple(E.Cmp("==", E.Field(hidden), E.Const(j)) for (_, hidden, _), j in zip(split, choice))
            guard = tests + (() if isinstance(w, E.Const) else (w,))
            result.append((rid, guard[0] if len(guard) == 1 else E.And(guard), r))
    out.items = result + links


# ---------------------------------------------------------------------------------------------------------------
# Terms


def _domain(name: str, fields: Mapping[str, FieldDef], hidden: Mapping[str, FieldDef]) -> tuple:
    f = hidden.get(name) or fields[name]
    return f.values


def _candidates(node: E.Node) -> Iterable[E.Node]:
    """Integer sub-expressions over fields (arithmetic and min/max), outermost first."""
    if isinstance(node, (E.BinOp, E.Call)) and E.fields_of(node):
        yield node
    for child in E.children(node):
        yield from _candidates(child)


def _expand(node: E.Node, definitions: Mapping[str, E.Node]) -> E.Node:
    """The expression with hidden term fields replaced by their definitions (down to real fields)."""
    if isinstance(node, E.Field) and node.name in definitions:
        return _expand(definitions[node.name], definitions)
    kids = E.children(node)
    if not kids:
        return node
    return E.rebuild(node, tuple(_expand(k, definitions) for k in kids))


def _values(term: E.Node, fields: Mapping[str, FieldDef], hidden: Mapping[str, FieldDef],
            resolve: Resolver, definitions: Mapping[str, E.Node]) -> tuple | None:
    """The values the term takes over its fields' domains (a superset of those solutions use, which is all a domain
    must be). If that is too many combinations, over the real fields hidden terms stand for: a term over two hidden
    terms of 300 values each may still depend on only four small real fields."""
    for candidate in (term, _expand(term, definitions)):
        names = sorted(E.fields_of(candidate))
        domains = [_domain(n, fields, hidden) for n in names]
        size = 1
        for d in domains:
            size *= len(d)
        if size <= TERM_LIMIT:
            term = candidate
            break
    else:
        return None
    seen: set = set()
    value_of = compile_node(term, resolve, exact=True)  # evaluate's semantics and errors, compiled once
    for combo in itertools.product(*domains):
        v = value_of(dict(zip(names, combo)))
        if not isinstance(v, int) or isinstance(v, bool):
            return None
        seen.add(v)
    return tuple(sorted(seen))


def _product(term: E.Node, fields: Mapping[str, FieldDef], hidden: Mapping[str, FieldDef]) -> int:
    out = 1
    for name in E.fields_of(term):
        out *= len(_domain(name, fields, hidden))
    return out


def _narrows(term: E.Node, fields: Mapping[str, FieldDef], hidden: Mapping[str, FieldDef]) -> bool:
    """A one-field term is a candidate when its field has many values (it may map them to few)."""
    return _product(term, fields, hidden) >= 16


def _worth(term: E.Node, values: tuple, fields: Mapping[str, FieldDef], hidden: Mapping[str, FieldDef]) -> bool:
    """A hidden field must take clearly fewer values than the combinations of the fields it replaces."""
    return len(values) * (4 if len(E.fields_of(term)) == 1 else 2) <= _product(term, fields, hidden)


def _size(node: E.Node) -> int:
    return 1 + sum(_size(k) for k in E.children(node))


def _replace(node: E.Node, term: E.Node, by: E.Node) -> E.Node:
    if node == term:
        return by
    kids = E.children(node)
    if not kids:
        return node
    return E.rebuild(node, tuple(_replace(k, term, by) for k in kids))


def _listable(scope: frozenset[str], fields: Mapping[str, FieldDef], hidden: Mapping[str, FieldDef]) -> bool:
    size = 1
    for name in scope:
        size *= len(_domain(name, fields, hidden))
        if size > LISTABLE:
            return False
    return True


def _terms(out: Rewritten, fields: Mapping[str, FieldDef], kind: str, resolve: Resolver) -> None:
    rejected: set[E.Node] = set()
    definitions: dict[str, E.Node] = {}
    # the constraints that stay whole (listable): they neither offer terms nor get them replaced
    whole = {i for i, (rid, when, require) in enumerate(out.items)
             if _listable(E.fields_of(when) | E.fields_of(require), fields, out.hidden)}
    n = 0
    while True:
        uses: dict[E.Node, int] = {}
        shrinks: dict[E.Node, bool] = {}
        for i, (rid, when, require) in enumerate(out.items):
            if rid.startswith("term:") or i in whole:
                continue
            scope = E.fields_of(when) | E.fields_of(require)
            for t in dict.fromkeys((*_candidates(when), *_candidates(require))):
                if t in rejected:
                    continue
                uses[t] = uses.get(t, 0) + 1
                # Does the constraint lose a field when the term is replaced by one hidden field?
                rest = E.fields_of(_replace(E.And((when, require)), t, E.Const(0)))
                if len(E.fields_of(t) - rest) >= 2 and len(scope) > len(E.fields_of(t)):
                    shrinks[t] = True
        # Shared terms first (the most shared, then the widest and largest: `(h + s - 1) // s` before `h + s`);
        # then terms whose extraction thins a constraint. A term over one field is worth a hidden field only if
        # it is shared and takes far fewer values than the field (`64 // subtiles`: 16 values, not 1263).
        ranked = sorted(uses, key=lambda t: (-uses[t], -len(E.fields_of(t)), -_size(t), repr(t)))
        pick = next((t for t in ranked if (uses[t] >= 2 and (len(E.fields_of(t)) >= 2 or _narrows(t, fields, out.hidden)))
                     or shrinks.get(t)), None)
        if pick is None:
            return
        values = _values(pick, fields, out.hidden, resolve, definitions)
        if values is None or not _worth(pick, values, fields, out.hidden):
            rejected.add(pick)
            continue
        definitions[f"term{n + 1}"] = pick
        n += 1
        name = f"term{n}"
        out.hidden[name] = FieldDef(name, kind, "int", values, derived=True, doc=repr(pick))
        out.defined_by[name] = E.fields_of(pick)
        ref = E.Field(name)
        out.items = [(rid, w, r) if i in whole else (rid, _replace(w, pick, ref), _replace(r, pick, ref))
                     for i, (rid, w, r) in enumerate(out.items)]
        out.items.append((f"term:{name}", E.Const(True), E.Cmp("==", ref, pick)))
