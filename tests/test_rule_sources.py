"""Sources anyone can open (issue 28): every rule, table, family, catalog and field cites CK's, LLVM's or ckspace's
own files, never a section of a document that is not in the repository ("spec 3.2")."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Iterator

import pytest

REPO = Path(__file__).resolve().parent.parent
CONSTRAINTS = REPO / "constraints"
# "spec 3.2", "spec section 5", "(spec 4, ArchFilter)", "spec §7"
SPEC_REFERENCE = re.compile(r"\bspec(?:\s+section)?\s*(?:§\s*)?\d", re.IGNORECASE)
A_FILE = re.compile(r"[\w.-]+\.(?:py|hpp|cpp|json|td|toml|ll|rst|j2)\b")
CK_CITATION = re.compile(r"ROCm/(?:composable_kernel|rocm-libraries)@([0-9a-f]+)\s+(\S+)")


def _strings(value: Any, where: str) -> Iterator[tuple[str, str, str]]:
    """(where, key, text) of every string under a parsed TOML value."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str):
                yield where, k, v
            else:
                yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


def _data_files() -> list[Path]:
    return sorted(p for p in CONSTRAINTS.rglob("*.toml"))


def _rules() -> list[tuple[str, dict]]:
    out = []
    for path in sorted((CONSTRAINTS / "rules").glob("*.toml")):
        for rule in tomllib.loads(path.read_text()).get("rule", []):
            out.append((f"{path.name}:{rule['id']}", rule))
    return out


@pytest.mark.parametrize("path", _data_files(), ids=lambda p: str(p.relative_to(CONSTRAINTS)))
def test_no_data_file_cites_the_private_spec(path: Path) -> None:
    text = path.read_text()
    hits = [line for line in text.splitlines() if SPEC_REFERENCE.search(line)]
    assert not hits, hits[:3]


def test_every_rule_source_names_a_file() -> None:
    """A rule's source names the file a reader opens: CK's or LLVM's source, a CK JSON config, or ckspace's own audit
    data and templates; or the compiler's error with its reproducer."""
    rules = _rules()
    assert len(rules) > 100
    # (or a compiler error with its reproducer: what ckspace verify saw the compiler say)
    missing = [rid for rid, rule in rules if not A_FILE.search(rule["source"])
               and not ("ckspace verify" in rule["source"] and "error" in rule["source"])]
    assert not missing


def test_every_ck_citation_pins_a_commit_and_a_path() -> None:
    """'ROCm/composable_kernel@<commit> <path>': a commit of at least 7 hex digits and a path into the repository."""
    seen = 0
    for path in _data_files():
        for where, key, text in _strings(tomllib.loads(path.read_text()), path.name):
            for commit, target in CK_CITATION.findall(text):
                seen += 1
                assert len(commit) >= 7, (where, key, commit)
                assert "/" in target and not target.startswith("/"), (where, key, target)
    assert seen > 50


def test_the_spec_pattern_sees_what_it_must() -> None:
    for text in ("spec 3.2", "(spec 4, ArchFilter)", "spec section 5", "Spec 12.6:"):
        assert SPEC_REFERENCE.search(text), text
    for text in ("a spec of the trait config", "spec.get('doc')", "inspect 3 files"):
        assert not SPEC_REFERENCE.search(text), text


def test_the_docs_cite_no_private_spec() -> None:
    """The README and docs/ name CK's files too (docs/ck-generator.md maps them to ckspace's rules)."""
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        hits = [line for line in path.read_text().splitlines() if SPEC_REFERENCE.search(line)]
        assert not hits, (path.name, hits[:3])
    assert (REPO / "docs" / "ck-generator.md").is_file()
