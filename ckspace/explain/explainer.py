"""`ckspace explain`: is a kernel valid for an arch, why not, and which valid kernels are nearest.

This module is the engine behind the command and has no presentation in it (ckspace.cli_explain renders). It works
on the plain-Python checker (ckspace.check): every rule of every family is evaluated on the config on its own, so
each reported rule is broken in its own right, not as a consequence of another one. The solver is touched only
for a rejected kernel (ckspace.neighbours: the nearest valid kernels, and the smallest change of a rule's own
fields that satisfies it), so a valid kernel is explained without importing OR-Tools.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from ..rules import expr as E
from ..rules.check import _show_domain, breaks, render
from ..rules.data import DataSet, load
from ..errors import CkspaceError, ExprError, KernelNameError
from ..rules.model import Model, kind_of_variant, resolve_families
from ..rules.names import EPILOGUES, KNOWN_PIPELINES, SCHEDULERS, STREAMK, VARIANT_TAGS, format_name, parse_name

if TYPE_CHECKING:  # pragma: no cover
    from .neighbours import NeighbourSearch

# Bump when a key of the JSON output changes meaning or disappears (adding keys keeps the version).
SCHEMA_VERSION = 1
SELECTED_SETS = ("tests", "tiny")  # coverage-driven subsets of `full` (ckspace.selection), read from its cache
KNOWN_ISSUES_FAMILY = "ck-known-issues"  # its breaks are warnings about kernels CK generates anyway
HARDWARE_FAMILY = "arch"
CURATION_FAMILY = "ck-curation"


@dataclass(frozen=True)
class Reason:
    """One broken rule, or one value outside the modelled domain (family `model`)."""

    rule: str
    family: str
    enabled: bool  # the family is switched on: this reason rejects the kernel
    message: str
    source: str
    fields: tuple[str, ...]  # the fields the rule reads (its own fields)
    fix: dict[str, object] | None = None  # smallest change of its own fields that satisfies it, when computed


@dataclass(frozen=True)
class Derived:
    field: str
    value: object
    steps: tuple[str, ...]  # how the value follows from the config: branch conditions, then the arithmetic
    source: str


@dataclass(frozen=True)
class Change:
    field: str
    before: object
    after: object


@dataclass(frozen=True)
class Neighbour:
    name: str
    changes: tuple[Change, ...]
    optimal: bool = True  # false only when the solver stopped at its time limit


@dataclass(frozen=True)
class Note:
    kind: str  # valid-on | hardware-ok-on | hardware-policy | curation-only | optional-only | optional-off | known-issue | off-family
    text: str


@dataclass
class Explanation:
    name: str
    arch: str
    families: tuple[str, ...]  # enabled rule families (without the built-in `model`)
    config: dict[str, object]
    valid: bool
    reasons: list[Reason]  # enabled and switched-off families alike; `enabled` tells them apart
    derived: list[Derived]
    sets: dict[str, bool | None]
    notes: list[Note] = field(default_factory=list)
    valid_on: list[str] = field(default_factory=list)  # other archs where it is valid under the same rules
    hardware_ok_on: list[str] = field(default_factory=list)  # when valid nowhere: archs whose hardware facts accept it
    neighbours: list[Neighbour] | None = None  # None: not searched
    search: dict[str, object] = field(default_factory=dict)
    family_info: dict[str, dict[str, object]] = field(default_factory=dict)  # doc, default, enabled per family
    arch_facts: dict[str, object] = field(default_factory=dict)  # warp_size, lds_bytes of the arch

    @property
    def kind(self) -> str:
        return kind_of_variant(str(self.config.get("variant")))

    @property
    def rejecting(self) -> list[Reason]:
        return [r for r in self.reasons if r.enabled]

    def rejecting_families(self) -> list[str]:
        return list(dict.fromkeys(r.family for r in self.rejecting))

    def to_json(self) -> dict[str, object]:
        """The documented schema (docs/explain-json.md)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "name": self.name,
            "status": "valid" if self.valid else "rejected",
            "arch": self.arch,
            "rules": list(self.families),
            "kind": self.kind,
            "fields": {k: v for k, v in self.config.items() if k != "kind"},
            "sets": dict(self.sets),
            "violations": [
                {"rule": r.rule, "family": r.family, "enabled": r.enabled, "message": r.message, "source": r.source,
                 "fields": list(r.fields), "fix": r.fix}
                for r in self.reasons
            ],
            "rejected_by": self.rejecting_families(),
            "families": {k: dict(v) for k, v in self.family_info.items()},
            "arch_facts": dict(self.arch_facts),
            "derived": [{"field": d.field, "value": d.value, "steps": list(d.steps), "source": d.source}
                        for d in self.derived],
            "notes": [{"kind": n.kind, "text": n.text} for n in self.notes],
            "valid_on": list(self.valid_on),
            "hardware_ok_on": list(self.hardware_ok_on),
            "neighbours": None if self.neighbours is None else [
                {"name": n.name, "changed": len(n.changes), "optimal": n.optimal,
                 "changes": [{"field": c.field, "from": c.before, "to": c.after} for c in n.changes]}
                for n in self.neighbours
            ],
            "neighbour_search": dict(self.search),
        }


class Explainer:
    """Explains names for one arch and one choice of rule families; models of other archs are built on demand.

    One instance serves a whole batch: the data is loaded once, and the solver models of the strata it searched are
    kept (ckspace.neighbours), so the thousandth name costs what the first one did minus the set-up.
    """

    def __init__(self, arch: str = "gfx950", rules: str | Sequence[str] | None = None,
                 constraints_dir: str | Path | None = None, data: DataSet | None = None, select_sets: bool = False):
        self.constraints_dir = constraints_dir
        self.select_sets = select_sets  # select tests/tiny when they are not cached yet (seconds, once)
        self._set_members: dict[str, frozenset[str] | None] = {}
        self.data = data or load(Path(constraints_dir) if constraints_dir else None)
        self.families = resolve_families(self.data, rules)
        self.default_families = resolve_families(self.data, None)
        self.arch = arch
        self._models: dict[str, Model] = {}
        self.model = self._model(arch)
        self._search: NeighbourSearch | None = None
        self._by_id = {r.id: r for r in (*self.model.derived_rules, *self.data.rules)}

    def _model(self, arch: str) -> Model:
        if arch not in self._models:
            model = Model(self.data, arch, self.families)
            if arch == self.arch:  # the others are only read by the plain check (valid_on), which resolves lazily
                model.validate_references()
            self._models[arch] = model
        return self._models[arch]

    # -- the entry points ---------------------------------------------------------------------------------------
    def explain(self, name: str, neighbours: int = 3, fixes: bool = True) -> Explanation:
        """Explain one kernel name; KernelNameError (exit code 2) when it is malformed."""
        return self.explain_config(parse(name, self.data), name, neighbours, fixes)

    def explain_config(self, config: Mapping[str, object], name: str | None = None, neighbours: int = 3,
                       fixes: bool = True) -> Explanation:
        cfg = dict(config)
        if name is None:
            name = format_name(cfg)
        reasons = domain_reasons(self.model, cfg) + rule_reasons(self.model, cfg)
        valid = not any(r.enabled for r in reasons)
        in_full = not any(r.family in self.default_families for r in reasons)
        exp = Explanation(
            name=name, arch=self.arch, families=tuple(f for f in self.data.families if f in self.families and f != "model"),
            config=cfg, valid=valid, reasons=reasons, derived=derived(self.model, cfg),
            sets=self._sets(name, in_full),
            family_info={fname: {"doc": fam.doc, "default": fam.default, "enabled": fname in self.families}
                         for fname, fam in self.data.families.items()},
            arch_facts={k: self.data.archs[self.arch].get(k) for k in ("warp_size", "lds_bytes")},
        )
        if not valid:
            others = [a for a in sorted(self.data.archs) if a != self.arch]
            exp.valid_on = [a for a in others if self._valid_on(a, cfg)]
            if not exp.valid_on and any(r.enabled and r.family == HARDWARE_FAMILY for r in reasons):
                exp.hardware_ok_on = [a for a in others if self._valid_on(a, cfg, {HARDWARE_FAMILY})]
        exp.notes = self._notes(exp)
        if not valid and fixes:
            exp.reasons = [self._with_fix(r, cfg) for r in exp.reasons]
        if not valid and neighbours > 0:
            found, search = self.searcher().nearest(cfg, neighbours)
            exp.neighbours = found
            exp.search = search
        return exp

    def searcher(self) -> NeighbourSearch:
        if self._search is None:
            from .neighbours import NeighbourSearch  # OR-Tools: only for rejected kernels

            self._search = NeighbourSearch(self.model)
        return self._search

    # -- pieces -------------------------------------------------------------------------------------------------
    def _sets(self, name: str, in_full: bool) -> dict[str, bool | None]:
        """Membership in full and in the selected sets; tests and tiny are subsets of full, so a kernel outside
        full is in neither without looking. None: the set has not been selected on this machine yet."""
        out: dict[str, bool | None] = {"full": in_full}
        for set_name in SELECTED_SETS:
            if not in_full:
                out[set_name] = False
                continue
            if set_name not in self._set_members:
                self._set_members[set_name] = selected_names(self.data, self.arch, self.default_families, set_name,
                                                             self.constraints_dir, self.select_sets)
            members = self._set_members[set_name]
            out[set_name] = None if members is None else name in members
        return out

    def _valid_on(self, arch: str, cfg: Mapping[str, object], families: set[str] | None = None) -> bool:
        """Valid on `arch` under the chosen rules, or (with `families`) breaking none of those families' rules."""
        model = self._model(arch)
        if domain_reasons(model, cfg):
            return False
        return not any(r.family in families if families else r.enabled for r in rule_reasons(model, cfg))

    def _with_fix(self, reason: Reason, cfg: Mapping[str, object]) -> Reason:
        if reason.rule.startswith("model.domain-"):
            fix = nearest_in_domain(self.data, reason.fields[0], cfg.get(reason.fields[0]))
            return replace(reason, fix=fix)
        rule = self._by_id.get(reason.rule)
        if rule is None:
            return reason
        from .neighbours import own_fix

        return replace(reason, fix=own_fix(self.model, cfg, rule))

    def _notes(self, exp: Explanation) -> list[Note]:
        """The sentences a person needs besides the rule list: optional families, arch policy, other archs."""
        notes: list[Note] = []
        fams = self.data.families
        on = [r for r in exp.reasons if r.enabled]
        off = [r for r in exp.reasons if not r.enabled]
        on_fams = list(dict.fromkeys(r.family for r in on))
        if exp.valid_on:
            notes.append(Note("valid-on", f"valid on {', '.join(exp.valid_on)} with the same rules"))
        elif exp.hardware_ok_on:
            # CK curates the same kernels for several archs, so a layout only one arch's hardware has is often in
            # that arch's open space only: say so, it is what a user who needs the kernel can do.
            uncurated = set(self.families) - {CURATION_FAMILY, "model"}
            open_on = [a for a in exp.hardware_ok_on if self._valid_on(a, exp.config, uncurated)]
            tail = (f"; without CK's curation (--rules -{CURATION_FAMILY}) it is valid on {', '.join(open_on)}"
                    if open_on and CURATION_FAMILY in self.families else "")
            notes.append(Note("hardware-ok-on", (
                f"the hardware facts of {', '.join(exp.hardware_ok_on)} accept it (no {HARDWARE_FAMILY} rule breaks "
                f"there), but other rules reject it there too{tail}")))
        api = api_revisions(on_fams + [r.family for r in off])
        if on and all(f in api for f in on_fams):
            newest, needs = api_default(), ", ".join(dict.fromkeys(api[f] for f in on_fams))
            notes.append(Note("optional-only", (
                f"rejected only by the CK API revision famil{'y' if len(on_fams) == 1 else 'ies'} "
                f"{', '.join(on_fams)}: CK API {needs} cannot build it, it needs CK API {newest}; it is "
                f"{'valid' if exp.sets['full'] else 'not valid either'} with --ck-api {newest} (the default, "
                f"or --rules {','.join(f'-{f}' for f in on_fams)})")))
        elif on and all(not fams[f].default for f in on_fams):
            switch = ",".join(f"-{f}" for f in on_fams)
            tail = "valid with the default rules" if exp.sets["full"] else "not valid with the default rules either"
            notes.append(Note("optional-only", (
                f"rejected only by the optional famil{'y' if len(on_fams) == 1 else 'ies'} {', '.join(on_fams)} "
                f"(switched on by --rules); it is {tail}. Switch {'it' if len(on_fams) == 1 else 'them'} off with "
                f"--rules {switch}")))
        elif on and set(on_fams) == {HARDWARE_FAMILY} and CURATION_FAMILY in self.families:
            ids = ", ".join(r.rule for r in on)
            notes.append(Note("hardware-policy", (
                f"CK's curation generates this kernel (it passes every {CURATION_FAMILY} rule), but it breaks the "
                f"hardware fact{'s' if len(on) > 1 else ''} {ids} of {exp.arch}; ckspace's policy is that hardware "
                "facts win, so it is not in ckspace's set")))
        elif on and set(on_fams) == {CURATION_FAMILY}:
            notes.append(Note("curation-only", (
                f"the hardware rules accept it: only CK's curation leaves it out (it is in the open space, "
                f"--rules -{CURATION_FAMILY})")))
        for fam in dict.fromkeys(r.family for r in off):
            ids = ", ".join(r.rule for r in off if r.family == fam)
            if fam in api:
                notes.append(Note("optional-off", (
                    f"CK API {api[fam]} cannot build it ({ids}); --ck-api {api[fam]} applies the family {fam}")))
            elif fam == KNOWN_ISSUES_FAMILY:
                notes.append(Note("known-issue", (
                    f"known issue ({ids}): CK generates this kernel although it is known to be wrong or unsupported; "
                    f"--rules +{fam} rejects it")))
            elif not fams[fam].default:
                notes.append(Note("optional-off", f"the optional family {fam} (off) would reject it ({ids}); "
                                                  f"--rules +{fam} applies it"))
            else:
                notes.append(Note("off-family", f"the default family {fam} is switched off; it would reject it ({ids})"))
        return notes


# -- parsing ---------------------------------------------------------------------------------------------------------
def parse(name: str, data: DataSet | None = None) -> dict[str, object]:
    """parse_name, plus a suggestion for a misspelt word when the parser has none (cshufle -> cshuffle); `data`
    adds the spellings of its enum values (dtypes, layouts, ...) to the grammar's words."""
    try:
        return parse_name(name)
    except KernelNameError as exc:
        if exc.suggestion is None and exc.got:
            better = _respelt(name, exc.got, vocabulary(data))
            if better is not None:
                raise KernelNameError(exc.name, exc.part, exc.expected, exc.got, better) from None
        raise


def vocabulary(data: DataSet | None) -> tuple[str, ...]:
    """The words of the name grammar, and of the data's enum fields."""
    words = [*EPILOGUES, *SCHEDULERS, *KNOWN_PIPELINES, *STREAMK, *VARIANT_TAGS.values(), "depthwise", "explicit_gemm",
             "streamk", "persistent", "large_tensor", "dsb", "2stage"]
    if data is not None:
        for f in data.fields.values():
            if f.type == "enum":
                words += [str(v) for v in f.values]
    return tuple(sorted(set(words)))


def _respelt(name: str, got: str, words: Sequence[str]) -> str | None:
    """The name with the offending word replaced by the one known word it is an obvious misspelling of.

    Obvious means: the best close match (difflib ratio >= 0.8) is unique, and the name parses with it."""
    spot = re.search(rf"(?<![^_]){re.escape(got)}(?![^_])", name)
    if spot is None or not re.fullmatch(r"[a-z0-9_]+", got.lower()):
        return None
    scored = sorted(((difflib.SequenceMatcher(None, got.lower(), w).ratio(), w) for w in words),
                    reverse=True)
    if not scored or scored[0][0] < 0.8 or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    candidate = name[:spot.start()] + scored[0][1] + name[spot.end():]
    try:
        parse_name(candidate)
    except KernelNameError as again:
        return again.suggestion  # a second problem the parser itself knows how to repair, or none
    return candidate


# -- sets and CK API revisions -------------------------------------------------------------------------------------
def selected_names(data: DataSet, arch: str, families: set[str] | frozenset[str], set_name: str,
                   constraints_dir: str | Path | None = None, select: bool = False) -> frozenset[str] | None:
    """The names of the `set_name` selection of `arch` under the default rules, as `ckspace enumerate --set` caches
    it; None when it is not cached (with `select`, it is selected now, and cached for next time).

    Reading the cache needs no enumeration and no solver: the key is ckspace.selection.select's own.
    """
    from ..select import objectives
    from ..select.selection import cached_names

    try:
        objective = objectives.load(set_name, data.fields)
    except CkspaceError:
        return None
    names = cached_names(data.digest, arch, families, objective)
    if names is not None:
        return frozenset(names)
    if not select:
        return None
    from ..cli.sets import selection_for
    from ..space import Space

    return frozenset(selection_for(Space(arch, None, constraints_dir), set_name).names)


def api_revisions(families: Sequence[str]) -> dict[str, str]:
    """Of `families`, those that restrict the model to a CK API revision (templates/revisions.toml): family -> rev."""
    if not any(f.startswith("ck-api-") for f in families):
        return {}  # the revisions file is read only when such a family is involved
    try:
        from ..codegen.ckapi import revisions

        revs = revisions()[1]
    except CkspaceError:
        return {}
    return {f: rev.name for rev in revs.values() for f in rev.families if f in families}


def api_default() -> str:
    from ..codegen.ckapi import revisions

    return revisions()[0]


# -- checking --------------------------------------------------------------------------------------------------------
def domain_reasons(model: Model, cfg: Mapping[str, object]) -> list[Reason]:
    """Values outside the modelled space, as reasons of the built-in `model` family (always on)."""
    kind = kind_of_variant(str(cfg.get("variant")))
    out = []
    for f in model.fields(kind):
        if f.derived and f.name not in cfg:
            continue
        value = cfg.get(f.name)
        if value not in f.values or (f.type == "bool") != isinstance(value, bool):
            out.append(Reason(
                f"model.domain-{f.name}", "model", True,
                f"{f.name} {_show(value)} is outside the modelled space: {_show_domain(f.values)}",
                f"fields.toml: field.{f.name} ({f.doc})" if f.doc else f"fields.toml: field.{f.name}", (f.name,)))
    return out


def rule_reasons(model: Model, cfg: Mapping[str, object]) -> list[Reason]:
    """Every rule of every family the config breaks, each evaluated on its own, in the data's family order."""
    kind = kind_of_variant(str(cfg.get("variant")))
    found: list[Reason] = []
    for rule in model.all_rules_for(kind):
        try:
            broken = breaks(rule, cfg, model)
        except (ExprError, TypeError, ValueError):
            continue  # a value the rule cannot read (outside the domain, reported as a `model` reason)
        if not broken:
            continue
        try:
            message = render(rule, cfg, model)
        except (CkspaceError, TypeError, ValueError):
            message = rule.message
        found.append(Reason(rule.id, rule.family, rule.family in model.families, message,
                            f"{rule.source} ({rule.file})", tuple(sorted(rule.fields))))
    order = {f: i for i, f in enumerate(model.data.families)}
    return sorted(found, key=lambda r: order.get(r.family, len(order)))  # stable: rule order within a family


def nearest_in_domain(data: DataSet, name: str, value: object) -> dict[str, object] | None:
    """The domain value closest to an out-of-domain one (numbers by distance, otherwise the first value)."""
    f = data.fields.get(name)
    if f is None or not f.values:
        return None
    if f.type == "int" and isinstance(value, int) and not isinstance(value, bool):
        return {name: min(f.values, key=lambda v: (abs(v - value), v))}
    if f.type == "enum" and isinstance(value, str):  # the closest spelling (wavlet -> wavelet), first on a tie
        return {name: max(f.values, key=lambda v: difflib.SequenceMatcher(None, value, str(v)).ratio())}
    return {name: f.values[0]}


# -- derived quantities ----------------------------------------------------------------------------------------------
def derived(model: Model, cfg: Mapping[str, object]) -> list[Derived]:
    """Every derived quantity of the config with the working: the branch taken and the numbers."""
    kind = kind_of_variant(str(cfg.get("variant")))
    derives = [d for d in model.data.derives.values() if d.applies_to(kind)]
    # Rules and formulas read other quantities (threads, elem_bytes, ...) as macros, expanded at load time; in the
    # working they are shown as their value again, so that a_per_thread reads 128 * 64 // 256, not the expansion.
    known = {d.expr: d.field for d in derives if d.output_only}
    out = []
    for d in derives:
        try:
            value = E.evaluate(d.expr, cfg, model.resolve)
            steps = derivation(d.expr, cfg, model.resolve, {k: v for k, v in known.items() if v != d.field})
        except (KeyError, ExprError, TypeError, ValueError):
            continue
        out.append(Derived(d.field, value, tuple(steps), d.source))
    return out


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


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'"
    return str(value)


# -- presentation helpers shared by text and JSON ------------------------------------------------------------------
def changes_between(before: Mapping[str, object], after: Mapping[str, object], order: Sequence[str]) -> tuple[Change, ...]:
    """The name fields that differ, in the data's field order."""
    out = []
    for name in order:
        if name in after and (before.get(name) != after[name] or type(before.get(name)) is not type(after[name])):
            out.append(Change(name, before.get(name), after[name]))
    return tuple(out)


_TRIPLE = re.compile(r"\d+(?:x\d+)+")


def _atoms(name: str) -> list[str]:
    """A name cut where a change can show: at underscores, and a tile triple at its x's."""
    out: list[str] = []
    for i, part in enumerate(name.split("_")):
        if i:
            out.append("_")
        out.extend(re.split(r"(x)", part) if _TRIPLE.fullmatch(part) else [part])
    return out


def name_diff(old: str, new: str) -> list[tuple[str, bool]]:
    """`new` in pieces, each flagged when it differs from `old` (for highlighting the changed fields)."""
    a, b = _atoms(old), _atoms(new)
    out: list[tuple[str, bool]] = []
    for op, _, _, j1, j2 in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if j2 > j1:
            out.append(("".join(b[j1:j2]), op != "equal"))
    return out
