"""The `ckspace` command line: one module per command group over the `ckspace.Space` facade, and the output
formats."""

from __future__ import annotations

from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The `ckspace` entry point (kept light: the command modules load when a command runs)."""
    from .app import main as run

    return run(argv)
