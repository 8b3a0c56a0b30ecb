"""Docstrings, comments and docs name modules that exist: every dotted `ckspace.a.b` and every `ckspace/a/b.py`
in the package, the tests, the scripts, docs/ and the README resolves to a module of this checkout (or an attribute
of one). A module moved or removed leaves no stale pointer (issue 26)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPORTED = {"Space", "Stratum", "Timings", "Verdict"}


def modules() -> set[str]:
    out = set()
    for path in (ROOT / "ckspace").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def texts() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("ckspace", "tests", "scripts"):
        files += sorted((ROOT / folder).rglob("*.py")) + sorted((ROOT / folder).rglob("*.md"))
    return files


def stale(text: str, known: set[str]) -> list[str]:
    found = []
    for m in re.finditer(r"(?<![\w./-])ckspace(?:\.[a-z_][a-z0-9_]*)+", text):
        parts = m.group(0).split(".")
        # a module, or a module and one attribute (ckspace.rules.names.parse_name); of the package itself, only what
        # it exports (ckspace.Space), so that a module that moved (ckspace.toolchain) is caught
        if ".".join(parts) in known:
            continue
        if ".".join(parts[:-1]) in known and (len(parts) > 2 or parts[-1] in EXPORTED):
            continue
        found.append(m.group(0))
    for m in re.finditer(r"\bckspace/[a-z_/]+\.py\b", text):
        if not (ROOT / m.group(0)).is_file():
            found.append(m.group(0))
    return found


def test_every_module_reference_resolves() -> None:
    known = modules()
    bad = {}
    for path in texts():
        if path == Path(__file__).resolve():
            continue  # this file's own examples
        hits = stale(path.read_text(encoding="utf-8"), known)
        if hits:
            bad[str(path.relative_to(ROOT))] = sorted(set(hits))
    assert bad == {}


def test_the_check_finds_a_stale_reference() -> None:
    known = modules()
    assert stale("see ckspace.names.parse_name, ckspace.toolchain and ckspace/solve/solver.py", known) == \
        ["ckspace.names.parse_name", "ckspace.toolchain", "ckspace/solve/solver.py"]
    assert stale("ckspace.rules.names.parse_name, ckspace/solve/plan.py, ckspace.space", known) == []


def test_the_docs_emit_examples_build_with_the_registry_toolchain() -> None:
    """Issue 28: the registry toolchain ships CK Tile 2025.11 headers, which cannot compile the newest API's C++;
    every `ckspace emit` command and `.emit(` call the README and docs/ show says --ck-api 2025.11 (or brings its
    own CK with --ck-include)."""
    shown = []
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for line in path.read_text().splitlines():
            if re.match(r"\s*(\$ )?ckspace emit ", line) or re.search(r"\.emit\(", line):
                shown.append((path.name, line))
    assert shown
    bad = [(f, line) for f, line in shown if "2025.11" not in line and "--ck-include" not in line]
    assert not bad, bad
