"""`ckspace rules [ID|FAMILY]`: the rules with their family, message, rationale, source and example kernels, like
`ruff rule`. `--format markdown` writes docs/rules.md (a test keeps that file current)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

from ..errors import UsageError
from ..rules.evidence import Audit, Count

FORMATS = ("text", "json", "markdown")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rules", help="show the rules: family, message, rationale, source and example kernels",
        description="Show the rules of the model, one family or one rule: what each checks (its condition), the "
                    "message it prints with the numbers, why it exists (rationale), where it comes from (source), "
                    "and a kernel it rejects and one it accepts. `--format markdown` is docs/rules.md.")
    p.add_argument("selector", nargs="?", metavar="ID|FAMILY", help="a rule id (arch.warp-tile) or a family (arch)")
    p.add_argument("--format", choices=FORMATS, default="text", help="text (default), json or markdown")
    p.add_argument("--constraints", metavar="DIR", help="use this constraints directory instead of the built-in one")


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

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.id, "family": self.family, "kind": self.kind, "when": self.when, "require": self.require,
            "message": self.message, "rationale": self.rationale, "source": self.source, "file": self.file,
            "rejects": list(self.reject), "accepts": list(self.accept), "example_arch": self.example_arch}
        if self.audited:
            out["near_misses"] = {a: {"compiled": c.compiled, "failed": c.failed} for a, c in self.near_misses}
        return out

    def audit_text(self) -> str:
        """`2/2 on gfx90a, 1/1 on gfx950` (near misses failed/compiled), or why there is none."""
        if not self.near_misses:
            return "none compiled yet"
        return ", ".join(f"{c.text()} on {a}" for a, c in self.near_misses)


def rule_docs(constraints: str | None = None) -> tuple[dict[str, tuple[str, bool]], list[RuleDoc], Audit | None]:
    """The families (name -> (doc, on by default)), every rule (built-in `model` rules first, in data order), and
    the audit summary of the constraints folder (None where it has none)."""
    from pathlib import Path

    from ..rules.data import default_constraints_dir, load
    from ..rules.evidence import load_audit
    from ..rules.model import Model, resolve_families
    from ..rules.text import show

    root = Path(constraints) if constraints else default_constraints_dir()
    data = load(root)
    audit = load_audit(root)
    model = Model(data, "gfx950", resolve_families(data, None))
    families = {"model": ("field domains and derived fields (built in, always on)", True)}
    families.update({name: (fam.doc, fam.default) for name, fam in data.families.items() if name != "model"})
    audited = {name for name, fam in data.families.items() if fam.layer in ("fact", "naming")}
    docs = [RuleDoc(r.id, r.family, r.kind, show(r.when), show(r.require), r.message, r.rationale, r.source, r.file,
                    tuple(r.reject), tuple(r.accept), r.example_arch, audit is not None and r.family in audited,
                    tuple(audit.near_misses(r.id).items()) if audit is not None else ())
            for r in (*model.derived_rules, *data.rules)]
    return families, docs, audit


def cmd_rules(args: argparse.Namespace) -> int:
    families, docs, audit = rule_docs(args.constraints)
    sel = args.selector
    if sel:
        if sel in families:
            docs = [d for d in docs if d.family == sel]
            families = {sel: families[sel]}
        else:
            docs = [d for d in docs if d.id == sel]
            if not docs:
                import difflib

                close = difflib.get_close_matches(sel, [d.id for d in rule_docs(args.constraints)[1]] + list(families), 3)
                hint = f"; did you mean {', '.join(close)}?" if close else "; `ckspace rules` lists them"
                raise UsageError(f"no rule or family {sel!r}{hint}")
            families = {docs[0].family: families[docs[0].family]}
    if args.format == "json":
        out: dict[str, object] = {"families": {k: {"doc": d, "default": on} for k, (d, on) in families.items()},
                                  "rules": [d.to_json() for d in docs]}
        if audit is not None:
            out["audit"] = {"doc": audit.doc, "data": audit.data, "archs": {
                a: {"uniform": {"compiled": v.uniform.compiled, "built": v.uniform.built},
                    "stratified": {"compiled": v.stratified.compiled, "built": v.stratified.built},
                    "confusion": v.confusion, "compiled_isa_unread": v.compiled_isa_unread}
                for a, v in audit.archs.items()}}
        print(json.dumps(out, indent=1))
    elif args.format == "markdown":
        sys.stdout.write(markdown(families, docs, audit if not sel else None))
    else:
        sys.stdout.write(text(families, docs))
    sys.stdout.flush()
    return 0


def _condition(d: RuleDoc) -> str:
    return d.require if d.when == "true" else f"if {d.when}: {d.require}"


def text(families: dict[str, tuple[str, bool]], docs: list[RuleDoc]) -> str:
    out: list[str] = []
    for fam, (doc, on) in families.items():
        mine = [d for d in docs if d.family == fam]
        if not mine:
            continue
        out.append(f"{fam} ({'on' if on else 'off'} by default, {len(mine)} rule{'s' if len(mine) != 1 else ''}): {doc}")
        out.append("")
        for d in mine:
            out.append(f"  {d.id}")
            out.append(f"    checks:    {_condition(d)}")
            out.append(f"    message:   {d.message}")
            if d.rationale:
                out.append(f"    rationale: {d.rationale}")
            out.append(f"    source:    {d.source} ({d.file})")
            for label, names in (("rejects", d.reject), ("accepts", d.accept)):
                for name in names:
                    out.append(f"    {label}:   {name}" + (f" (on {d.example_arch})" if d.example_arch != "gfx950" else ""))
            if d.audited:
                out.append(f"    audit:     near misses failed {d.audit_text()}")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def audit_markdown(audit: Audit) -> list[str]:
    """The audit's table per arch: the open space's precision and the confusion of every compiled kernel."""
    out = ["## Audit", "",
           f"The facts against the compiler, from `{audit.data}`: {audit.doc} (docs/audit.md has the rounds). "
           "Precision: the open space's uniform (and stratified) draws that compiled, and how many built with matrix "
           "instructions. Confusion: every kernel compiled in any round, "
           "accepted or rejected by the facts of this checkout, built or failed. Each rule below shows its near "
           "misses (kernels that break it and no other fact): failed/compiled per arch.", "",
           "| arch | uniform: built/compiled | stratified: built/compiled | accepted, built | accepted, failed "
           "| rejected, built | rejected, failed |", "|---|---|---|---|---|---|---|"]
    for arch, a in audit.archs.items():
        c = a.confusion
        out.append(f"| {arch} | {a.uniform.text()} | {a.stratified.text()} | {c.get('accepted_built', 0)} | "
                   f"{c.get('accepted_failed', 0)} | {c.get('rejected_built', 0)} | {c.get('rejected_failed', 0)} |")
    return out + [""]


def markdown(families: dict[str, tuple[str, bool]], docs: list[RuleDoc], audit: Audit | None = None) -> str:
    out = ["# Rules", "",
           "Generated by `ckspace rules --format markdown` (tests/test_rules_doc.py keeps it current). Each rule is a "
           "`when`/`require` pair in the rule language; a kernel breaks it when `when` holds and `require` does not.",
           ""]
    out.append("| family | default | rules | what |")
    out.append("|---|---|---|---|")
    for fam, (doc, on) in families.items():
        out.append(f"| `{fam}` | {'on' if on else 'off'} | {sum(d.family == fam for d in docs)} | {doc} |")
    out.append("")
    if audit is not None:
        out += audit_markdown(audit)
    for fam, (doc, _) in families.items():
        mine = [d for d in docs if d.family == fam]
        if not mine:
            continue
        out += [f"## `{fam}`", "", doc, ""]
        for d in mine:
            out += [f"### `{d.id}`", "", f"- checks: `{_condition(d)}`", f"- message: `{d.message}`"]
            if d.rationale:
                out.append(f"- rationale: {d.rationale}")
            out.append(f"- source: {d.source} ({d.file})")
            where = f" (on {d.example_arch})" if d.example_arch != "gfx950" else ""
            out += [f"- rejects{where}: `{n}`" for n in d.reject]
            out += [f"- accepts{where}: `{n}`" for n in d.accept]
            if d.audited:
                out.append(f"- audit, near misses failed: {d.audit_text()}")
            out.append("")
    return "\n".join(out).rstrip() + "\n"

