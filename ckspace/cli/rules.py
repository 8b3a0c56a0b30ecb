"""`ckspace rules [ID|FAMILY]`: the rules with their family, message, rationale, source and example kernels, like
`ruff rule`. `--format markdown` writes docs/rules.md (a test keeps that file current)."""

from __future__ import annotations

import argparse
import json
import sys

from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from ..space import Audit, RuleDoc

FORMATS = ("text", "json", "markdown")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rules", help="show the rules: family, message, rationale, source and example kernels",
        description="Show the rules of the model, one family or one rule: what each checks (its condition), the "
                    "message it prints with the numbers, why it exists (rationale), where it comes from (source), "
                    "and a kernel it rejects and one it accepts. `--format markdown` is docs/rules.md.")
    p.add_argument("selector", nargs="?", metavar="ID|FAMILY", help="a rule id (arch.warp-tile) or a family (arch)")
    p.add_argument("--format", choices=FORMATS, default="text", help="text (default), json or markdown")
    p.add_argument("--full", action="store_true",
                   help="every rule in full on a terminal too (without ID|FAMILY a terminal gets a summary: the "
                        "families and their rule ids; a pipe gets every rule), through a pager when long")
    p.add_argument("--constraints", metavar="DIR", help="use this constraints directory instead of the built-in one")


def cmd_rules(args: argparse.Namespace) -> int:
    from ..space import Space

    book = Space(constraints_dir=args.constraints).rules()
    families, docs, audit = book.families, book.rules, book.audit
    sel = args.selector
    if sel:
        if sel in families:
            docs = [d for d in docs if d.family == sel]
            families = {sel: families[sel]}
        else:
            docs = [d for d in docs if d.id == sel]
            if not docs:
                import difflib

                close = difflib.get_close_matches(sel, [d.id for d in book.rules] + list(families), 3)
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
                    "confusion": v.confusion, "compiled_isa_unread": v.compiled_isa_unread,
                    "lds": {"accepted_built": v.lds.compiled, "model_equal": v.lds.built}}
                for a, v in audit.archs.items()}}
        print(json.dumps(out, indent=1))
    elif args.format == "markdown":
        sys.stdout.write(markdown(families, docs, audit if not sel else None))
    else:
        from .console import page

        if not sel and not args.full and sys.stdout.isatty():
            page(summary(families, docs))
        else:
            page(text(families, docs))
    sys.stdout.flush()
    return 0


def summary(families: dict[str, tuple[str, bool]], docs: "list[RuleDoc]") -> str:
    """The terminal's default: per family whether it is on, its rules' count, what it is, and its rule ids."""
    import shutil
    import textwrap

    width = max(shutil.get_terminal_size().columns - 1, 40)
    out: list[str] = []
    for fam, (doc, on) in families.items():
        mine = [d.id for d in docs if d.family == fam]
        if not mine:
            continue
        out.append(textwrap.fill(f"{fam} ({'on' if on else 'off'} by default, {len(mine)} rule"
                                 f"{'s' if len(mine) != 1 else ''}): {doc}", width, subsequent_indent="    "))
        out.append(textwrap.fill(", ".join(mine), width, initial_indent="    ", subsequent_indent="    ",
                                 break_on_hyphens=False))
    out.append("")
    out.append(f"{len(docs)} rules in {sum(1 for f in families if any(d.family == f for d in docs))} families. "
               "`ckspace rules ID` or `ckspace rules FAMILY` shows them in full (condition, message, rationale, "
               "source, examples); --full every rule.")
    return "\n".join(out) + "\n"


def _condition(d: RuleDoc) -> str:
    return d.require if d.when == "true" else f"if {d.when}: {d.require}"


def text(families: dict[str, tuple[str, bool]], docs: "list[RuleDoc]") -> str:
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
            if d.ck_api:
                out.append(f"    CK API:    {', '.join(d.ck_api)}")
            for label, names in (("rejects", d.reject), ("accepts", d.accept)):
                for name in names:
                    out.append(f"    {label}:   {name}" + (f" (on {d.example_arch})" if d.example_arch != "gfx950" else ""))
            if d.audited:
                out.append(f"    audit:     near misses failed {d.audit_text()}")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def audit_markdown(audit: "Audit") -> list[str]:
    """The audit's table per arch: the open space's precision and the confusion of every compiled kernel."""
    out = ["## Audit", "",
           f"The facts against the compiler, from `{audit.data}`: {audit.doc} (docs/audit.md has the rounds). "
           "Precision: the open space's uniform (and stratified) draws that compiled, and how many built with matrix "
           "instructions. Confusion: every kernel compiled in any round, "
           "accepted or rejected by the facts of this checkout, built or failed. Each rule below shows its near "
           "misses (kernels that break it and no other fact): failed/compiled per arch. LDS: of the accepted kernels "
           "that built, those whose code object holds exactly the model's `lds_bytes` (its group segment).", "",
           "| arch | uniform: built/compiled | stratified: built/compiled | accepted, built | accepted, failed "
           "| rejected, built | rejected, failed | LDS as the model says |", "|---|---|---|---|---|---|---|---|"]
    for arch, a in audit.archs.items():
        c = a.confusion
        out.append(f"| {arch} | {a.uniform.text()} | {a.stratified.text()} | {c.get('accepted_built', 0)} | "
                   f"{c.get('accepted_failed', 0)} | {c.get('rejected_built', 0)} | {c.get('rejected_failed', 0)} | "
                   f"{a.lds.text()} |")
    return out + [""]


def markdown(families: dict[str, tuple[str, bool]], docs: "list[RuleDoc]", audit: "Audit | None" = None) -> str:
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
            if d.ck_api:
                out.append(f"- CK API: {', '.join(d.ck_api)}")
            where = f" (on {d.example_arch})" if d.example_arch != "gfx950" else ""
            out += [f"- rejects{where}: `{n}`" for n in d.reject]
            out += [f"- accepts{where}: `{n}`" for n in d.accept]
            if d.audited:
                out.append(f"- audit, near misses failed: {d.audit_text()}")
            out.append("")
    return "\n".join(out).rstrip() + "\n"

