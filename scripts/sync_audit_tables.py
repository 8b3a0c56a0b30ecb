"""Copy the audit's table per arch from docs/rules.md (`ckspace rules --format markdown`, generated from
constraints/evidence/audit.json) into README.md and docs/audit.md, which show the same table by hand-written prose.

    python scripts/sync_audit_tables.py           # rewrite the tables that differ
    python scripts/sync_audit_tables.py --check   # exit 1 and name the stale files, writing nothing

Run it after `merge_audit.py --summary` and regenerating docs/rules.md; tests/test_rules_doc.py fails while a copy is
stale. Only the table's lines change: a file is written whole, through a temporary file, so that it is never left half
written.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "docs" / "rules.md"
COPIES = (ROOT / "README.md", ROOT / "docs" / "audit.md")
HEADER = "| arch | uniform: built/compiled |"


def table(lines: list[str]) -> tuple[int, int]:
    """The [start, end) line range of the audit table: its header line and the `|` lines that follow it."""
    starts = [i for i, line in enumerate(lines) if line.startswith(HEADER)]
    if len(starts) != 1:
        raise ValueError(f"{len(starts)} audit tables (lines starting {HEADER!r}), expected 1")
    end = starts[0]
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return starts[0], end


def synced(copy: str, source: str) -> str:
    src = source.splitlines()
    s0, s1 = table(src)
    lines = copy.splitlines(keepends=True)
    c0, c1 = table([line.rstrip("\n") for line in lines])
    return "".join(lines[:c0] + [line + "\n" for line in src[s0:s1]] + lines[c1:])


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print("usage: python scripts/sync_audit_tables.py [--check]", file=sys.stderr)
        return 2
    source = SOURCE.read_text()
    stale = []
    for path in COPIES:
        old = path.read_text()
        try:
            new = synced(old, source)
        except ValueError as exc:
            print(f"sync_audit_tables: {path.relative_to(ROOT)}: {exc}", file=sys.stderr)
            return 1
        if new == old:
            continue
        stale.append(str(path.relative_to(ROOT)))
        if not check:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
            with os.fdopen(fd, "w") as out:
                out.write(new)
            os.chmod(tmp, path.stat().st_mode & 0o7777)  # mkstemp makes it 0600
            os.replace(tmp, path)
    if stale:
        print(f"{'stale' if check else 'updated'}: {', '.join(stale)}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
