"""The model for one arch and one choice of rule families: its fields, active rules and data references.

It holds no solver state. `ckspace.rules.check` reads it to test one config in plain Python; `ckspace.solve.cpsat` reads
it to build CP-SAT models; the two never share evaluation code.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Sequence

from ..memo import memo
from . import compiled
from . import expr as E
from . import typecheck as T
from .curation import CkCuration
from .data import DataSet, FieldDef, Rule, UnknownReference, arch_resolver
from .relation import Relation
from ..errors import DataError, ExprError, UsageError

DEPTHWISE_VARIANT = "forward_depthwise"


def kind_of_variant(variant: str) -> str:
    return "depthwise" if variant == DEPTHWISE_VARIANT else "gemm"


def curation_families(data: DataSet) -> set[str]:
    """Every family some catalog consists of: what a catalog replaces, and what the open space leaves out."""
    return {f for cat in data.catalogs.values() for f in cat.families}


def resolve_families(data: DataSet, spec: str | Sequence[str] | None, catalog: str | None = None) -> frozenset[str]:
    """`+fam,-fam` edits of the default set; a bare `fam` list replaces it. `full` names the default set. With a
    `catalog`, its families take the place of the default set's curation families."""
    default = {name for name, fam in data.families.items() if fam.default}
    if catalog is not None and catalog in data.catalogs:
        default = (default - curation_families(data)) | set(data.catalogs[catalog].families)
    if spec is None:
        return frozenset(default)
    items = [s.strip() for part in ([spec] if isinstance(spec, str) else spec) for s in part.split(",") if s.strip()]
    chosen = set(default) if not items or items[0][0] in "+-" else {"model"}
    for item in items:
        sign, name = (item[0], item[1:]) if item[0] in "+-" else ("+", item)
        names = default if name == "full" else {name}
        for n in names:
            if n not in data.families:
                valid = ", ".join(sorted(f for f in data.families if f != "model"))
                raise UsageError(f"unknown rule family {n!r}; families: {valid} (and 'full' for the default set)")
            if n == "model" and sign == "-":
                raise UsageError("the 'model' family (field domains and derived fields) cannot be switched off")
            if sign == "+":
                chosen.add(n)
            else:
                chosen.discard(n)
    return frozenset(chosen | {"model"})


@dataclass(frozen=True)
class Stratum:
    """An independent sub-space: one (variant, ndim, dtype)."""

    variant: str
    ndim: int
    dtype: str

    @property
    def kind(self) -> str:
        return kind_of_variant(self.variant)

    def constants(self) -> dict[str, object]:
        return {"variant": self.variant, "ndim": self.ndim, "dtype": self.dtype}

    def label(self) -> str:
        return f"{self.variant} {self.ndim}d {self.dtype}"


class Model:
    def __init__(self, data: DataSet, arch: str, families: frozenset[str]):
        if arch not in data.archs:
            raise UsageError(f"unknown arch {arch!r}; archs: {', '.join(sorted(data.archs))}")
        self.data = data
        self.arch = arch
        self.families = families
        self.curation = CkCuration(data.ck_raw, data.archs[arch])
        self.resolve = arch_resolver(data, arch, self._ck_relation)
        self._references_valid = False
        self._fields_of: dict[str, tuple[FieldDef, ...]] = {}
        self._curated: dict[str, Relation] | None = None
        self._filters: dict[tuple[E.Node, Stratum], E.Node | None] = {}

    def _ck_relation(self, name: str) -> Relation:
        """CK's curation table `ck.<name>` on this arch: the build's (rules.compiled), else built here."""
        if self._curated is None:
            self._curated = compiled.curated(self.data, self.arch) or {}
        built = self._curated.get(name)
        return built if built is not None else self.curation.relation(name)

    # -- fields ---------------------------------------------------------------------------------------------------
    def fields(self, kind: str) -> list[FieldDef]:
        known = self._fields_of.get(kind)
        if known is None:  # asked once per config checked: a listed catalog checks thousands
            known = self._fields_of[kind] = tuple(f for f in self.data.fields.values() if f.applies_to(kind))
        return list(known)

    @cached_property
    def strata(self) -> list[Stratum]:
        fv = self.data.fields
        out = []
        for variant in fv["variant"].values:
            for ndim in fv["ndim"].values:
                for dtype in fv["dtype"].values:
                    out.append(Stratum(variant, ndim, dtype))
        return out

    # -- rules ----------------------------------------------------------------------------------------------------
    @cached_property
    def derived_rules(self) -> list[Rule]:
        """Rules of the built-in `model` family: a name-carried derived field must equal its formula."""
        out = []
        for d in self.data.derives.values():
            if d.output_only:
                continue
            if d.spellings is not None:  # several spellings of one value: the name may carry any of them
                require: E.Node = E.In(E.Field(d.field), d.spellings, False)
                message = f"{d.field} {{{d.field}}} does not follow from the rest: it may be spelt {{expected}}"
                rationale = (f"{d.field} is derived, never free; the name may spell it in any of the ways listed "
                             "(the C++ is the same).")
                read = E.fields_of(d.spellings)
            else:
                require = E.Cmp("==", E.Field(d.field), d.expr)
                message = f"{d.field} {{{d.field}}} does not follow from the rest: the formula gives {{expected}}"
                rationale = f"{d.field} is derived, never free."
                read = E.fields_of(d.expr)
            out.append(Rule(
                id=f"model.derived-{d.field}", family="model", kind=d.kind, when=E.Const(True),
                require=require, message=message, rationale=rationale, source=d.source, file="fields.toml",
                fields=frozenset({d.field}) | read,
            ))
        return out

    @cached_property
    def rules(self) -> list[Rule]:
        """Active rules: the derived-field rules plus every rule of an enabled family."""
        return self.derived_rules + [r for r in self.data.rules if r.family in self.families]

    def rules_for(self, kind: str) -> list[Rule]:
        return [r for r in self.rules if r.applies_to(kind)]

    def all_rules_for(self, kind: str) -> list[Rule]:
        """Every rule, enabled or not (explain reports optional families too)."""
        return self.derived_rules + [r for r in self.data.rules if r.applies_to(kind)]

    def filter_for(self, node: E.Node, stratum: "Stratum") -> E.Node | None:
        """A filter (--where, a problem's support condition) as it reads in one stratum: its variant, ndim and dtype
        substituted, what holds trivially dropped. None when the stratum has no kernel that passes it: it folds to
        false, or still reads a field this kernel family does not have (`variant == 'forward_depthwise' or
        vec_a == 8` keeps the depthwise kernels; `vec_a == 8` alone does not)."""
        key = (node, stratum)
        if key not in self._filters:
            folded = E.fold(node, stratum.constants(), self.resolve)
            kind_fields = {f.name for f in self.fields(stratum.kind)}
            if folded == E.Const(False) or not E.fields_of(folded) <= kind_fields:
                self._filters[key] = None
            else:
                self._filters[key] = folded
        return self._filters[key]

    @cached_property
    def scope(self) -> T.Scope:
        """Types for this arch: data references are typed by their values here (ck.* tables included)."""
        return T.Scope(self.data.fields, self.data.formulas, lambda path: T.value_type(self.resolve(path)))

    def validate_references(self) -> None:
        """Resolve every data reference once and type every active rule on this arch's data, so that a broken rule
        file fails at start-up with one clear line. (Loading checked the rules already, but without an arch: the
        columns of the ck.* tables and facts that differ between archs are only known here.)"""
        if self._references_valid or self.arch in self.data.checked_archs:
            return
        for rule in self.rules:
            for part, node in (("when", rule.when), ("require", rule.require)):
                for ref in _refs(node):
                    try:
                        self.resolve(ref)
                    except UnknownReference as exc:  # say which rule reads it: the table may be gone from a file
                        raise UnknownReference(f"{rule.file}: rule {rule.id}: {exc}") from None
                try:
                    T.check_condition(node, self.scope, f"{rule.file}: rule {rule.id} '{part}' on {self.arch}")
                except ExprError as exc:
                    raise DataError(str(exc)) from None
        self._references_valid = True


# Models by (data, arch, families): the explainer and the kernel space it lists read one model, whose lazily built
# tables and reference checks (13 ms) are then made once. A Model is a pure function of those three (it holds no
# solver state); each entry holds its data, so an id in a key is never reused while the entry lives.
_SHARED: "OrderedDict[tuple[int, str, frozenset[str]], Model]" = memo("rules.model.shared", OrderedDict())
SHARED_KEPT = 8


def shared_model(data: DataSet, arch: str, families: frozenset[str]) -> Model:
    """The process's Model of (data, arch, families), built on first use."""
    key = (id(data), arch, frozenset(families))
    model = _SHARED.get(key)
    if model is None or model.data is not data:
        model = _SHARED[key] = Model(data, arch, frozenset(families))
    _SHARED.move_to_end(key)
    while len(_SHARED) > SHARED_KEPT:
        _SHARED.popitem(last=False)
    return model


def _refs(node: E.Node) -> Iterable[tuple[str, ...]]:
    if isinstance(node, E.Ref):
        yield node.path
    for child in E.children(node):
        yield from _refs(child)
