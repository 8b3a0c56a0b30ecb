"""The `ckspace` command line: one module per command group over the `ckspace.Space` facade, and the output
formats."""

from __future__ import annotations

import os
import sys
from typing import NoReturn, Sequence


GC_FIRST_GENERATION = 200_000  # allocations between two collections of the youngest generation (Python: 700)


def run() -> NoReturn:
    """The process entry point (the `ckspace` script, `python -m ckspace`): a Ctrl-C or SIGTERM that comes while the
    CLI loads (or after it has answered) ends the process at once with its one line and exit status; `main`
    handles those that come while it runs."""
    import gc

    # A command allocates up to a few hundred thousand tuples and dicts (a catalog's bag rows, configs and names)
    # and next to no reference cycles, so Python's collector, run every 700 allocations, went over each of them
    # (10% of a cold listing) to free nothing. Here it runs every GC_FIRST_GENERATION: never in a catalog's run,
    # every fraction of a second in a long stream. Only this process entry sets it, never the library.
    gc.set_threshold(GC_FIRST_GENERATION, *gc.get_threshold()[1:])
    from ..imports import lean_cp_model
    from ..signals import exit_on_stop_signals

    exit_on_stop_signals()
    lean_cp_model()
    status = main()
    # The status is final: end here rather than in Python's finalization, where a late signal meets the default
    # handlers again (and would end a whole answer with a signal status), and where CPython turns a KeyboardInterrupt
    # that once passed through exec()-built code (dataclasses, namedtuple), even a handled one, into death by SIGINT.
    _flush_standard_streams()
    os._exit(status)


def _flush_standard_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach it
            pass


def main(argv: Sequence[str] | None = None) -> int:
    """The `ckspace` entry point (kept light: the command modules load when a command runs)."""
    from .app import main as app_main

    return app_main(argv)
