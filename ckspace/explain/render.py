"""An Explanation as text: the report `ckspace explain` prints (rich markup), for a console or as a string."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

from ..rules.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

# An Explanation (ckspace.explain.result) is typed Any here: result imports this module for Explanation.text().
Explanation = Any


def escape(text: object) -> str:
    from rich.markup import escape as markup_escape

    return markup_escape(str(text))


def _value(v: object) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def render(console: "Console", exp: "Explanation") -> None:
    rules = ", ".join(exp.families)
    console.print(f"[bold]{escape(exp.name)}[/]")
    kernel_ok = all(not r.enabled for r in exp.reasons if r.family != "support")
    if exp.valid:
        console.print(f"[bold green]✓ valid[/] on {exp.arch} · rules {rules}")
    elif kernel_ok and exp.problem is not None:
        console.print(f"[bold red]✗ valid on {exp.arch}, but it does not run the problem[/] · rules {rules}")
    else:
        console.print(f"[bold red]✗ rejected[/] on {exp.arch} · rules {rules}")
    if exp.problem is not None:
        runs = "[green]✓ runs it[/]" if exp.problem["runs"] else "[red]✗ does not run it[/]"
        console.print(f"problem {escape(exp.problem['text'])} (CK API {escape(exp.problem['ck_api'])}): {runs}")
    known = " · ".join(f"{k} {'✓' if v else '✗'}" for k, v in exp.sets.items() if v is not None)
    pending = ", ".join(k for k, v in exp.sets.items() if v is None)
    console.print(f"sets of {exp.arch}: {known}" + (
        f" · {pending}: not selected on this machine yet (--select-sets selects them; so does `ckspace enumerate "
        f"--arch {exp.arch} --set NAME` for each; both cache them)" if pending else ""))
    if exp.valid:
        _derived_panel(console, exp)
    _reasons(console, exp)
    for note in exp.notes:
        style = "bold yellow" if note.kind == "known-issue" else "cyan"
        label = "warning" if note.kind == "known-issue" else "note"
        console.print(f"[{style}]{label}:[/] {escape(note.text)}")
    if exp.neighbours is not None:
        _neighbours(console, exp)
    if exp.catalog_neighbours is not None:
        _catalog_neighbours(console, exp)


def _reasons(console: "Console", exp: "Explanation") -> None:
    def block(reasons: list[Verdict], heading: str) -> None:
        console.print()
        console.print(heading)
        for fam in dict.fromkeys(r.family for r in reasons):
            console.print(f"  [bold]{escape(fam)}[/] · [dim]{escape(_family_doc(exp, fam))}[/]")
            for r in (r for r in reasons if r.family == fam):
                mark = "[red]✗[/]" if r.enabled else "[yellow]•[/]"
                console.print(f"    {mark} [bold]{escape(r.rule)}[/]: {escape(r.message)}")
                console.print(f"        [dim]source: {escape(r.source)}[/]")
                if r.fix:
                    fix = ", ".join(f"{k} {_value(exp.config.get(k))} → {_value(v)}" for k, v in r.fix.items())
                    console.print(f"        [dim]on its own, fixed by:[/] {escape(fix)}")

    on = [r for r in exp.reasons if r.enabled]
    off = [r for r in exp.reasons if not r.enabled]
    if on:
        block(on, f"[bold]{len(on)} broken rule{'s' if len(on) > 1 else ''}[/], by family:")
    if off:
        block(off, "[dim]families that are switched off would also reject it:[/]")
    if on or off:
        console.print()


def _family_doc(exp: "Explanation", fam: str) -> str:
    return str(exp.family_info.get(fam, {}).get("doc", ""))


def _derived_panel(console: "Console", exp: "Explanation") -> None:
    from rich.panel import Panel
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(justify="right")
    grid.add_column()
    for d in exp.derived:
        *conditions, formula = d.steps
        working = "; ".join(conditions) + (" → " if conditions else "") + formula
        grid.add_row(escape(d.field), escape(_value(d.value)), escape(working))
    facts = exp.arch_facts
    title = f"derived · {exp.arch}: warp size {facts.get('warp_size')}, LDS {facts.get('lds_bytes')} B"
    console.print(Panel(grid, title=escape(title), title_align="left", expand=False))


def _neighbours(console: "Console", exp: "Explanation") -> None:
    search = exp.search
    console.print()
    console.print(f"[bold]nearest valid kernels on {exp.arch}[/] (fewest changed fields; "
                  f"{escape(search.get('text', ''))}):")
    if not exp.neighbours:
        console.print("  none")
        return
    for i, nb in enumerate(exp.neighbours, 1):
        _neighbour(console, exp.name, i, nb)


def _catalog_neighbours(console: "Console", exp: "Explanation") -> None:
    console.print()
    console.print(f"[bold]nearest catalog kernels on {exp.arch}[/] (fewest changed fields; same variant, ndim and "
                  "dtype):")
    if not exp.catalog_neighbours:
        console.print("  none: no catalog has a kernel of this variant, ndim and dtype here")
        return
    for i, cn in enumerate(exp.catalog_neighbours, 1):
        _neighbour(console, exp.name, i, cn.neighbour, f"  [dim]({escape(', '.join(cn.catalogs))})[/]")


def _neighbour(console: "Console", asked: str, index: int, nb, suffix: str = "") -> None:
    """One neighbour: its name with the changed parts highlighted, then the changes."""
    parts = "".join(f"[bold yellow]{escape(t)}[/]" if changed else escape(t)
                    for t, changed in name_diff(asked, nb.name))
    console.print(f"  {index}. {parts}{suffix}")
    changes = ", ".join(f"{c.field} {_value(c.before)} → {_value(c.after)}" for c in nb.changes)
    tail = "" if nb.optimal else " (search stopped at its time limit: maybe not the fewest)"
    plural = "s" if len(nb.changes) != 1 else ""
    console.print(f"     [dim]{len(nb.changes)} change{plural}:[/] {escape(changes)}{tail}")


def text(exp: "Explanation", width: int = 120) -> str:
    """The report as plain text (no colour), `width` columns wide; names and messages are never wrapped."""
    import io

    from rich.console import Console

    buffer = io.StringIO()
    render(Console(file=buffer, highlight=False, soft_wrap=True, width=width, color_system=None, force_terminal=False),
           exp)
    return buffer.getvalue()


def styled(exp: "Explanation", width: int = 120):
    """The report as a rich renderable (styled Text), for Explanation.__rich__: printed by a rich console, it
    looks as `ckspace explain` does."""
    import io

    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    render(Console(file=buffer, highlight=False, soft_wrap=True, width=width, color_system="truecolor",
                   force_terminal=True), exp)
    return Text.from_ansi(buffer.getvalue().rstrip("\n"))


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
