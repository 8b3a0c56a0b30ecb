"""The one way the CLI makes a rich console.

On a terminal rich wraps to the window. In a pipe or a log rich would assume 80 columns and hard-wrap a long path or
squeeze a table to 80 columns with its cells cut to "va…"; there nothing is wrapped: a table is as wide as its
content and a line is one line (`$COLUMNS` still sets a width where a user wants one).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

PIPE_WIDTH = 100_000  # wide enough for any table of ckspace; tables do not expand, so this is never filled


def is_terminal(stream) -> bool:
    """Whether `stream` is a terminal; a closed or unusual stream counts as a pipe."""
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def pipe_width(stream) -> int | None:
    """The width to give rich for `stream`: None (rich asks the terminal) on a terminal or where $COLUMNS is set."""
    if is_terminal(stream):
        return None
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
    tty = is_terminal(out)
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


class waiting:
    """`with waiting("solving tests"):` shows a spinner on a terminal's stderr once the wait passes a second (a
    shorter one shows nothing), and clears it when the block ends. Wrap the work, not the printing of its answer."""

    DELAY = 1.0

    def __init__(self, message: str):
        self.message = message
        self._status: Any = None  # a rich Status once shown
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> "waiting":
        if is_terminal(sys.stderr) and os.environ.get("CKSPACE_NO_SPINNER", "") == "":
            self._timer = threading.Timer(self.DELAY, self._start)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _start(self) -> None:
        with self._lock:
            if self._timer is None:
                return  # the block ended first
            self._status = console(stderr=True).status(f"[dim]{self.message}[/dim]", spinner="dots")
            self._status.start()

    def __exit__(self, *exc: object) -> None:
        if self._timer is None:
            return
        with self._lock:
            self._timer.cancel()
            self._timer = None
            if self._status is not None:
                self._status.stop()
                self._status = None
