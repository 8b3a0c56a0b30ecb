"""The rules as documentation (`ckspace rules`, docs/rules.md): each rule's condition and message as text, its
rationale, source and examples, and what the audit found of its near misses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .data import DataSet
from .evidence import Audit, Count


@dataclass(frozen=True)
class RuleDoc:
    """One rule as documentation: every field is plain text."""

    id: str
    family: str
    kind: str
    when: str
    require: str
    message: str
    rationale: str
    source: str
    file: str
    reject: tuple[str, ...]
    accept: tuple[str, ...]
    example_arch: str
    audited: bool = False  # a fact or naming rule: verify --audit compiles its near misses
    near_misses: tuple[tuple[str, Count], ...] = ()  # (arch, compiled and failed) of the audit summary
    ck_api: tuple[str, ...] = ()  # a support rule: the CK API revisions it holds in

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.id, "family": self.family, "kind": self.kind, "when": self.when, "require": self.require,
            "message": self.message, "rationale": self.rationale, "source": self.source, "file": self.file,
            "rejects": list(self.reject), "accepts": list(self.accept), "example_arch": self.example_arch}
        if self.audited:
            out["near_misses"] = {a: {"compiled": c.compiled, "failed": c.failed} for a, c in self.near_misses}
        if self.ck_api:
            out["ck_api"] = list(self.ck_api)
        return out

    def audit_text(self) -> str:
        """`2/2 on gfx90a, 1/1 on gfx950` (near misses failed/compiled), or why there is none."""
        if not self.near_misses:
            return "none compiled yet"
        return ", ".join(f"{c.text()} on {a}" for a, c in self.near_misses)


@dataclass(frozen=True)
class RuleBook:
    """The rules as documentation: the families (name -> (doc, on by default)), every rule (built-in `model` rules
    first, in data order), and the audit summary of the constraints folder (None where it has none)."""

    families: dict[str, tuple[str, bool]]
    rules: list[RuleDoc]
    audit: Audit | None


def rule_book(data: DataSet, root: Path, arch: str = "gfx950") -> RuleBook:
    """The RuleBook of a constraints folder (`root`, its data loaded as `data`), the model's rules as on `arch`."""
    from .evidence import load_audit
    from .model import Model, resolve_families
    from .text import show

    audit = load_audit(root)
    model = Model(data, arch, resolve_families(data, None))
    families = {"model": ("field domains and derived fields (built in, always on)", True)}
    families.update({name: (fam.doc, fam.default) for name, fam in data.families.items() if name != "model"})
    audited = {name for name, fam in data.families.items() if fam.layer in ("fact", "naming")}
    docs = [RuleDoc(r.id, r.family, r.kind, show(r.when), show(r.require), r.message, r.rationale, r.source, r.file,
                    tuple(r.reject), tuple(r.accept), r.example_arch, audit is not None and r.family in audited,
                    tuple(audit.near_misses(r.id).items()) if audit is not None else ())
            for r in (*model.derived_rules, *data.rules)]
    docs += _support_docs(data, families)
    return RuleBook(families, docs, audit)


def _support_docs(data: DataSet, families: dict[str, tuple[str, bool]]) -> list[RuleDoc]:
    """The support rules (constraints/support.toml) as documentation, in the family `support`; an example names its
    problem (and its arch where that is not gfx950) as the command line asks for it."""
    from . import support

    rules = support.load(data)
    if not rules:
        return []
    families[support.FAMILY] = (
        "which kernels run a convolution problem: CK's IsSupportedArgument per CK API revision (constraints/"
        "support.toml); applied by --problem (enumerate, sample, coverage, verify, explain)", False)

    def example(kernel: str, problem: str, arch: str) -> str:
        return f'{kernel} --problem "{problem}"' + (f" --arch {arch}" if arch != support.EXAMPLE_ARCH else "")

    return [RuleDoc(r.id, support.FAMILY, r.kind, r.when_text, r.require_text, r.message, r.rationale, r.source,
                    support.FILE, (example(*r.reject),), (example(*r.accept),), support.EXAMPLE_ARCH,
                    ck_api=r.ck_api) for r in rules]
