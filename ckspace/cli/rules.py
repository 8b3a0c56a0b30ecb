"""`ckspace rules [ID|FAMILY]`: the rules with their family, message, rationale, source and example kernels, like
`ruff rule`. `--format markdown` writes docs/rules.md (a test keeps that file current)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

from ..errors import UsageError

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

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "family": self.family, "kind": self.kind, "when": self.when, "require": self.require,
                "message": self.message, "rationale": self.rationale, "source": self.source, "file": self.file,
                "rejects": list(self.reject), "accepts": list(self.accept), "example_arch": self.example_arch}


def rule_docs(constraints: str | None = None) -> tuple[dict[str, tuple[str, bool]], list[RuleDoc]]:
    """The families (name -> (doc, on by default)) and every rule, built-in `model` rules first, in data order."""
    from pathlib import Path

    from ..rules.data import load
    from ..rules.model import Model, resolve_families
    from ..rules.text import show

    data = load(Path(constraints) if constraints else None)
    model = Model(data, "gfx950", resolve_families(data, None))
    families = {"model": ("field domains and derived fields (built in, always on)", True)}
    families.update({name: (fam.doc, fam.default) for name, fam in data.families.items() if name != "model"})
    docs = [RuleDoc(r.id, r.family, r.kind, show(r.when), show(r.require), r.message, r.rationale, r.source, r.file,
                    tuple(r.reject), tuple(r.accept), r.example_arch)
            for r in (*model.derived_rules, *data.rules)]
    return families, docs


def cmd_rules(args: argparse.Namespace) -> int:
    families, docs = rule_docs(args.constraints)
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
        print(json.dumps({"families": {k: {"doc": d, "default": on} for k, (d, on) in families.items()},
                          "rules": [d.to_json() for d in docs]}, indent=1))
    elif args.format == "markdown":
        sys.stdout.write(markdown(families, docs))
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
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def markdown(families: dict[str, tuple[str, bool]], docs: list[RuleDoc]) -> str:
    out = ["# Rules", "",
           "Generated by `ckspace rules --format markdown` (tests/test_rules_doc.py keeps it current). Each rule is a "
           "`when`/`require` pair in the rule language; a kernel breaks it when `when` holds and `require` does not.",
           ""]
    out.append("| family | default | rules | what |")
    out.append("|---|---|---|---|")
    for fam, (doc, on) in families.items():
        out.append(f"| `{fam}` | {'on' if on else 'off'} | {sum(d.family == fam for d in docs)} | {doc} |")
    out.append("")
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
            out.append("")
    return "\n".join(out).rstrip() + "\n"

