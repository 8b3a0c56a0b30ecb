"""On a terminal, `coverage` and `rules` give a summary by default, with the full list behind --full; in a pipe
they give everything; a text taller than the terminal goes through a pager (issue 28)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from ckspace.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def terminal(monkeypatch, capsys):
    """stdout says it is a terminal; no pager (CKSPACE_PAGER empty). (capsys's stream of the test's call is another
    object than the fixture's, so its class answers.)"""
    monkeypatch.setenv("CKSPACE_PAGER", "")
    monkeypatch.setattr(type(sys.stdout), "isatty", lambda self: True)


def test_rules_on_a_terminal_is_a_summary_with_every_rule_id(terminal, capsys) -> None:
    from ckspace.space import Space

    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    book = Space().rules()
    assert all(d.id in out for d in book.rules)  # every id, once listed
    assert "rationale" not in out.lower().replace("(condition, message, rationale", "")  # no rule in full
    assert f"{len(book.rules)} rules in" in out and "--full" in out
    assert main(["rules", "--full"]) == 0
    assert len(capsys.readouterr().out.splitlines()) > 3 * len(out.splitlines())
    assert main(["rules", "arch.warp-tile"]) == 0  # a selector shows the rule in full, summary or not
    assert "rationale" in capsys.readouterr().out


def test_rules_in_a_pipe_is_every_rule(capsys) -> None:
    assert main(["rules"]) == 0
    piped = capsys.readouterr().out
    assert main(["rules", "--full"]) == 0
    assert capsys.readouterr().out == piped


def test_coverage_on_a_terminal_counts_what_the_pipe_lists(terminal, capsys) -> None:
    args = ["coverage", "--arch", "gfx950", "--set", "ck-default"]
    assert main(args) == 0
    summary = capsys.readouterr().out
    assert main([*args, "--full"]) == 0
    full = capsys.readouterr().out
    assert "uncovered:\n" in full and "uncovered:\n" not in summary
    listed = sum(1 for line in full.splitlines() if line.startswith("    ") and ": " in line)
    total = int(summary.split("uncovered: ")[1].split(" items")[0].replace(",", ""))
    assert 0 < listed <= total and "--full lists them" in summary
    assert summary.splitlines()[:3] == full.splitlines()[:3]  # the same report, less the lists


def on_a_terminal(argv: list[str], env: dict[str, str], streams: tuple[str, ...] = ("stdout",)) -> str:
    """What a process writes to `streams` ("stdout", "stderr") when they are a pseudo-terminal; it must exit 0.
    (The other stream is discarded.)"""
    primary, secondary = pty.openpty()
    pipes = {s: (secondary if s in streams else subprocess.DEVNULL) for s in ("stdout", "stderr")}
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, cwd=ROOT, env=env, **pipes)
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # the terminal closed: the process ended
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=120) == 0
    os.close(primary)
    return b"".join(chunks).decode(errors="replace")


def test_a_long_text_on_a_terminal_goes_through_the_pager() -> None:
    """A real pseudo-terminal: the pager (here `sed`, printing a marker and 2 lines) gets the text."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CKSPACE_PAGER": "sed -n '1s/^/PAGED /p;2p'", "LINES": "20",
           "COLUMNS": "100"}
    lines = on_a_terminal([sys.executable, "-m", "ckspace", "rules", "--full"], env).splitlines()
    assert lines[0].startswith("PAGED ") and len(lines) == 2, lines[:5]


def _stderr_on_a_terminal(code: str) -> str:
    """What `code` writes to stderr when stderr is a pseudo-terminal."""
    return on_a_terminal([sys.executable, "-c", code], {**os.environ, "PYTHONPATH": str(ROOT),
                                                         "CKSPACE_NO_SPINNER": ""}, ("stderr",))


def test_a_wait_over_a_second_shows_a_spinner_and_a_short_one_nothing() -> None:
    slow = _stderr_on_a_terminal("import time\nfrom ckspace.cli.console import waiting\n"
                                 "with waiting('solving the slow one'):\n    time.sleep(1.6)\n")
    fast = _stderr_on_a_terminal("import time\nfrom ckspace.cli.console import waiting\n"
                                 "with waiting('solving the fast one'):\n    time.sleep(0.2)\n")
    assert "solving the slow one" in slow and "solving the fast one" not in fast
