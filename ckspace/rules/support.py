"""Which kernels run a convolution problem: CK Tile's IsSupportedArgument (and the emitted launcher's own checks)
as rules over a kernel's fields and the problem's, per CK Tile API revision (constraints/support.toml).

A support rule reads kernel fields by name and the problem as `problem.NAME` (ckspace.rules.problem.VOCABULARY).
Once a problem is given, every `problem.NAME` is a constant: a rule folds to a condition on kernel fields alone, so
"the kernels of a set that run this problem" is an ordinary filter (`--where`) on the set, which every command
already lists, counts, samples, covers and searches with CP-SAT. `verdicts` says which rules one kernel breaks
for one problem, with the numbers, as explain shows them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..errors import CkspaceError, DataError, ExprError
from ..memo import memo
from . import expr as E
from . import typecheck as T
from .data import DataSet, message_parts
from .names import parse_name
from .problem import VOCABULARY, Problem, parse_problem
from .schema import load_toml
from .data_schema import SUPPORT_FILE
from .verdict import Verdict

FILE = "support.toml"
FAMILY = "support"
NAMESPACE = "problem"
DEPTHWISE_VARIANT = "forward_depthwise"


@dataclass(frozen=True)
class SupportRule:
    """One condition a kernel must meet to run a problem, in the CK API revisions `ck_api`."""

    id: str
    ck_api: tuple[str, ...]
    kind: str  # gemm | depthwise | both
    when: E.Node
    require: E.Node
    message: str
    rationale: str
    source: str
    reject: tuple[str, str, str]  # (kernel name, problem text, arch)
    accept: tuple[str, str, str]
    when_text: str = "true"
    require_text: str = ""

    def applies_to(self, kind: str) -> bool:
        return self.kind in ("both", kind)

    def condition(self) -> E.Node:
        """`when -> require` as one expression, guarded so that a kernel of another family passes it unread (the
        rule reads fields that family does not have)."""
        body: E.Node = E.Or((E.Not(self.when), self.require)) if self.when != E.Const(True) else self.require
        if self.kind == "gemm":
            return E.Or((E.Cmp("==", E.Field("variant"), E.Const(DEPTHWISE_VARIANT)), body))
        if self.kind == "depthwise":
            return E.Or((E.Cmp("!=", E.Field("variant"), E.Const(DEPTHWISE_VARIANT)), body))
        return body


def _problem_type(path: tuple[str, ...]) -> T.Type:
    if len(path) != 2 or path[0] != NAMESPACE or path[1] not in VOCABULARY:
        raise ExprError(f"unknown problem quantity {'.'.join(path)!r} (problem.NAME, NAME one of: "
                        f"{', '.join(VOCABULARY)})")
    sample = parse_problem("2 1 1 1 1 1 1 1 1 1 1 1 1 0 0 0 0").values()[path[1]]
    return T.value_type(sample)


def load(data: DataSet) -> tuple[SupportRule, ...]:
    """The support rules of the data's constraints directory (none when it has no support.toml), each checked:
    its file's schema, its expressions' names and types; any fault is one DataError line."""
    key = (str(data.root), data.digest)  # the digest covers support.toml: an edited file is read again
    hit = _LOADED.get(key)
    if hit is None:
        if len(_LOADED) >= 4:
            _LOADED.clear()
        hit = _LOADED[key] = _load(data)
    return hit


_LOADED: dict[tuple[str, str], tuple["SupportRule", ...]] = memo("rules.support.load", {})


def _load(data: DataSet) -> tuple[SupportRule, ...]:
    path = Path(data.root) / FILE
    if not path.is_file():
        return ()
    raw = load_toml(path, FILE, SUPPORT_FILE)
    names = {**data.fields, **dict.fromkeys(data.derives)}
    namespaces = {NAMESPACE, "arch"}
    arch_any = next(iter(data.archs.values()))

    def ref_type(path: tuple[str, ...]) -> T.Type:
        if path[0] == "arch":
            if len(path) != 2 or path[1] not in arch_any:
                raise ExprError(f"unknown arch fact {'.'.join(path)!r}")
            return T.value_type(arch_any[path[1]])
        return _problem_type(path)

    scope = T.Scope(data.fields, data.formulas, ref_type)
    out: list[SupportRule] = []
    seen: dict[str, set[str]] = {}  # an id may have one version per revision
    for at, spec in enumerate(raw["rule"]):
        rid = spec["id"]
        where = f"{FILE}: rule[{at}]"  # as schema errors name a key
        both = seen.setdefault(rid, set()) & set(spec["ck_api"])
        if both:
            raise DataError(f"{where}.id: rule {rid} is defined twice for CK API {', '.join(sorted(both))}")
        seen[rid] |= set(spec["ck_api"])
        nodes = []
        for part in ("when", "require"):
            text = spec.get(part, "true")
            try:
                node = E.parse(text, names, namespaces, f"{where}.{part} ({rid})")
                T.check_condition(node, scope, f"{where}.{part} ({rid})")
            except ExprError as exc:
                raise DataError(str(exc)) from None
            nodes.append(data.macros.expand(node))
        for _, expr_text, _ in message_parts(spec["message"]):
            if expr_text:
                try:
                    T.check_value(E.parse(expr_text, names, namespaces, f"{where}.message ({rid})"), scope,
                                  f"{where}.message ({rid}) {{{expr_text}}}")
                except ExprError as exc:
                    raise DataError(str(exc)) from None
        for part in ("reject", "accept"):  # an example must be a kernel name and a problem
            try:
                parse_name(spec[part]["kernel"])
            except CkspaceError as exc:
                raise DataError(f"{where}.{part}.kernel ({rid}): {exc}") from None
            try:
                parse_problem(spec[part]["problem"])
            except CkspaceError as exc:
                raise DataError(f"{where}.{part}.problem ({rid}): {exc}") from None
            if spec[part].get("arch", EXAMPLE_ARCH) not in data.archs:
                raise DataError(f"{where}.{part}.arch ({rid}): unknown arch {spec[part]['arch']!r}")
        out.append(SupportRule(
            id=rid, ck_api=tuple(spec["ck_api"]), kind=spec.get("kind", "gemm"), when=nodes[0], require=nodes[1],
            message=spec["message"], rationale=spec["rationale"], source=spec["source"],
            reject=_example(spec["reject"]), accept=_example(spec["accept"]),
            when_text=spec.get("when", "true"), require_text=spec["require"]))
    return tuple(out)


EXAMPLE_ARCH = "gfx950"  # an example's arch when it names none


def _example(spec: Mapping[str, str]) -> tuple[str, str, str]:
    return spec["kernel"], spec["problem"], spec.get("arch", EXAMPLE_ARCH)


def rules_for(data: DataSet, revision: str) -> list[SupportRule]:
    """The support rules that hold in one CK API revision."""
    return [r for r in load(data) if revision in r.ck_api]


def resolver(problem: Problem, data: DataSet, arch: str):
    """A data-reference resolver with `problem.NAME` bound to the problem's values and `arch.NAME` to the arch's
    facts."""
    facts = data.archs[arch]

    def arch_fact(path: tuple[str, ...]) -> object:
        if len(path) == 2 and path[0] == "arch" and path[1] in facts:
            return facts[path[1]]
        raise ExprError(f"unknown reference {'.'.join(path)!r}")

    return _bound(problem, arch_fact)


def _bound(problem: Problem, other=None):
    """`problem.NAME` from the problem's values; any other reference from `other` (None: none is known)."""
    values = problem.values()

    def resolve(path: tuple[str, ...]) -> object:
        if len(path) == 2 and path[0] == NAMESPACE and path[1] in values:
            return values[path[1]]
        if other is None:
            raise ExprError(f"unknown reference {'.'.join(path)!r}")
        return other(path)

    return resolve


def condition(rules: Sequence[SupportRule], problem: Problem, data: DataSet, arch: str) -> E.Node:
    """Every rule's condition with the problem's values (and the arch's facts) folded in: a condition on kernel
    fields alone."""
    resolve = resolver(problem, data, arch)
    folded = [E.fold(r.condition(), {}, resolve) for r in rules]
    kept = [f for f in folded if f != E.Const(True)]
    if any(f == E.Const(False) for f in kept):
        return E.Const(False)
    return kept[0] if len(kept) == 1 else E.And(tuple(kept)) if kept else E.Const(True)


def where_text(rules: Sequence[SupportRule], problem: Problem, data: DataSet, arch: str) -> str:
    """condition() as the text of a --where filter."""
    return E.show(condition(rules, problem, data, arch))


def verdicts(rules: Sequence[SupportRule], problem: Problem, config: Mapping[str, object],
             resolve_data=None) -> list[Verdict]:
    """The rules one kernel breaks for one problem, each with its message's numbers filled in."""
    kind = "depthwise" if config.get("variant") == DEPTHWISE_VARIANT else "gemm"
    resolve = _bound(problem, resolve_data)
    out = []
    for r in rules:
        if not r.applies_to(kind):
            continue
        when, require = _folded(r, problem, resolve, resolve_data)
        # folded, they read kernel fields only: a resolver that stays the same keeps their compiled closures
        if not E.evaluate(when, config, _no_refs) or E.evaluate(require, config, _no_refs):
            continue
        out.append(Verdict(rule=r.id, family=FAMILY, message=_render(r.message, config, resolve),
                           fields=tuple(sorted(E.fields_of(r.when) | E.fields_of(r.require))), source=r.source,
                           rationale=r.rationale))
    return out


# (rule, problem, arch resolver) -> the rule's when and require with the problem and the arch folded in: evaluating
# those on a kernel reuses their compiled closures (a fresh resolver per call would compile them again)
_FOLDED: dict[tuple[int, Problem, int], tuple[SupportRule, object, E.Node, E.Node]] = memo("rules.support.folded", {})


def _folded(rule: SupportRule, problem: Problem, resolve, resolve_data) -> tuple[E.Node, E.Node]:
    key = (id(rule), problem, id(resolve_data))
    hit = _FOLDED.get(key)
    if hit is None or hit[0] is not rule or hit[1] is not resolve_data:
        if len(_FOLDED) > 4096:
            _FOLDED.clear()
        hit = _FOLDED[key] = (rule, resolve_data, E.fold(rule.when, {}, resolve), E.fold(rule.require, {}, resolve))
    return hit[2], hit[3]


def _no_refs(path: tuple[str, ...]) -> object:
    raise ExprError(f"unknown reference {'.'.join(path)!r}")


def _render(template: str, config: Mapping[str, object], resolve) -> str:
    out = []
    for text, expr_text, _ in message_parts(template):
        out.append(text)
        if expr_text:
            try:
                node = E.parse(expr_text, {k: None for k in config}, {NAMESPACE, "arch"}, "message")
                value = E.evaluate(node, config, resolve)
            except (ExprError, KeyError):
                value = "?"
            out.append(E.show_value(value) if isinstance(value, bool) else str(value))
    return "".join(out)
