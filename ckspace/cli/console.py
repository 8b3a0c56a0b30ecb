"""The one way the CLI makes a rich console.

On a terminal rich wraps to the window. In a pipe or a log rich would assume 80 columns and hard-wrap a long path or
squeeze a table to 80 columns with its cells cut to "va…"; there nothing is wrapped: a table is as wide as its
content and a line is one line (`$COLUMNS` still sets a width where a user wants one).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

PIPE_WIDTH = 100_000  # wide enough for any table of ckspace; tables do not expand, so this is never filled


def pipe_width(stream) -> int | None:
    """The width to give rich for `stream`: None (rich asks the terminal) on a terminal or where $COLUMNS is set."""
    try:
        if stream is not None and stream.isatty():
            return None
    except (AttributeError, ValueError):  # a closed or unusual stream: treat it as a pipe
        pass
    return None if os.environ.get("COLUMNS", "").strip().isdigit() else PIPE_WIDTH


def console(*, stderr: bool = False, highlight: bool = False, file=None) -> "Console":
    from rich.console import Console

    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    width = pipe_width(stream)
    return Console(stderr=stderr, file=file, highlight=highlight, width=width, soft_wrap=width is not None)


def page(text: str) -> None:
    """Write `text` to stdout; on a terminal, a text taller than the window goes through a pager ($CKSPACE_PAGER,
    else $PAGER, else `less -FRX`; an empty $CKSPACE_PAGER, or no pager found, writes it as it is)."""
    import shlex
    import shutil
    import subprocess

    out = sys.stdout
    try:
        tty = out.isatty()
    except (AttributeError, ValueError):
        tty = False
    rows = shutil.get_terminal_size().lines
    command = os.environ.get("CKSPACE_PAGER", os.environ.get("PAGER", "less -FRX"))
    argv = shlex.split(command) if command.strip() else []
    if not tty or text.count("\n") < rows - 1 or not argv or shutil.which(argv[0]) is None:
        out.write(text)
        return
    out.flush()
    try:
        subprocess.run(argv, input=text, text=True, check=False)
    except OSError:
        out.write(text)
