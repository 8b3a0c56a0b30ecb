"""The `ckspace` command line: one module per command group over the `ckspace.Space` facade, and the output
formats."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn, Sequence


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
    early = _answered_early(sys.argv[1:])
    if early is not None:
        os._exit(early)
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


def _answered_early(argv: Sequence[str]) -> int | None:
    """The exit status of a command answered from its kept answer before the CLI loads (argparse, the signal
    machinery), or None: run it. A repeated plain listing then costs the interpreter's start and one file read.
    Until the CLI loads, ckspace._entry's handlers end the process on Ctrl-C or SIGTERM with the CLI's line."""
    if not argv or argv[0] not in ("enumerate", "explain"):
        return None
    from . import answers

    try:
        if TYPE_CHECKING:
            import signal as _signal  # typeshed has no stub of the C module; its wrapper's names are the same objects
        else:
            import _signal  # the C module: the wrapper's import of enum is a third of this path's imports

        if hasattr(_signal, "SIGPIPE"):
            _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)  # `ckspace ... | head` ends quietly, as app.main has it
        status = answers.serve(argv)
        if status is None:
            return None
        sys.stdout.flush()
    except OSError as exc:  # a full disk: one line, as the CLI says it
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # what could not be written is dropped, quietly
            print(f"ckspace: error: cannot write output: {exc.strerror or exc}", file=sys.stderr)
        except (OSError, ValueError):
            pass
        return 2
    return status


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
