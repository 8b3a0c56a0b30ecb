"""The process entry point (the `ckspace` script and `python -m ckspace`), kept apart from the CLI so that a stop
signal is handled from the first line of ckspace that runs.

Importing this module is the first thing such a process does after the interpreter's own start (ckspace/__init__
is next to empty). It uses only what the interpreter has loaded already (`os`, and `_signal`, the C module under
`signal`, whose Python wrapper imports enum) to make SIGINT and SIGTERM end the process at once with the CLI's line
and exit status: 130 `ckspace: interrupted`, 143 `ckspace: terminated`. ckspace.signals takes over from there. Only
the process entry points import it: a library user's handlers are never touched.
"""

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy takes the name as true)
if TYPE_CHECKING:
    import signal as _signal  # typeshed has no stub of the C module; its wrapper's names are the same objects
else:
    import _signal

_STOPS = {_signal.SIGINT: (b"ckspace: interrupted\n", 128 + _signal.SIGINT),
          _signal.SIGTERM: (b"ckspace: terminated\n", 128 + _signal.SIGTERM)}


def _exit_now(signum, frame):  # noqa: ANN001 - a signal handler's signature
    message, status = _STOPS[signum]
    try:
        os.write(2, message)
    except OSError:  # no stderr: the status still says it
        pass
    os._exit(status)


for _signum in _STOPS:
    if _signal.getsignal(_signum) not in (_signal.SIG_IGN, None):  # ignored by whoever started us: it stays so
        _signal.signal(_signum, _exit_now)


def run():  # noqa: ANN201 - NoReturn, without importing typing
    """Run the CLI (ckspace.cli.run) and end the process with its status."""
    from .cli import run as run_cli

    run_cli()
