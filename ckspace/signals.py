"""Ctrl-C and SIGTERM: both stop any run at once, through the same cleanup paths, and never yield a partial answer.

- While the CLI runs (`stop_signals_raise()`), SIGINT raises KeyboardInterrupt and SIGTERM raises `Terminated`, a
  KeyboardInterrupt, so every `except KeyboardInterrupt` / `finally` cleanup runs for both. Before that, while the
  process loads the CLI and after it has answered, `exit_on_stop_signals()` ends the process at once: there is
  nothing to clean up then, and an exception would end as a traceback (ckspace._entry does the same from the
  process's first line).
- An exception raised by a handler can be lost: Python drops one raised inside a weakref callback or a finalizer
  (an import's module lock has such a callback) with "Exception ignored", and an import cut short turns it into an
  ImportError that its caller may swallow. So a stop stays pending until the CLI has acted on it (`acknowledge()`):
  should its exception die before that (nothing holds it any more: neither code unwinding with it nor a handler),
  the signal is sent again, and `stop_behind()` finds the stop behind whatever exception the run ended with. An
  exception that is still on its way (a cleanup running in a `finally`) is never cut short by a repeat.
- Python runs signal handlers only in the main thread, between bytecodes: a long call into C (a CP-SAT search)
  would hold them off until it returns. `call_stoppably` has a watcher thread stop such a call the moment a signal
  arrives, and raises instead of returning what the stopped call had.
- `deferred()` holds SIGINT and SIGTERM back while a cleanup runs (stopping a solver or ninja), so that a second
  Ctrl-C cannot cut it short and leave a search thread or a compiler behind; they are acted on right after.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, TypeVar

T = TypeVar("T")

# Exit statuses of a run stopped by a signal: 128 + the signal number, as a shell reports it.
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM
STOP_POLL_SECONDS = 0.02  # how often a stop request is repeated until the stopped call has returned
STOP_PERSIST_SECONDS = 5.0  # and for how long at most (a call that ignores it is beyond help)
RESEND_DELAY_SECONDS = 0.002  # a lost stop's signal comes again this long after its exception died
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
_pending: int | None = None  # the stop signal raised in the main thread and not yet acted on
_raised: weakref.ref | None = None  # the last exception the handler raised for it, while it lives


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived. A KeyboardInterrupt, so that it takes the very path Ctrl-C takes."""


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class Interrupted(KeyboardInterrupt):
    """SIGINT arrived while the CLI runs (a KeyboardInterrupt that can be watched: see _raise_stop)."""


def _raise_stop(signum: int, frame: object) -> None:
    """The handler while the CLI runs: raise, and keep the stop pending until the CLI acknowledges it. A weak
    reference follows the exception: should it die unacknowledged (dropped by Python in a callback, or swallowed),
    the signal comes again."""
    global _pending
    if _pending is None:
        _pending = signum
    raise _watched(signum)  # no local names it: the traceback holds this frame, and a cycle would keep it alive


def _watched(signum: int) -> KeyboardInterrupt:
    global _raised
    exc = Terminated() if signum == signal.SIGTERM else Interrupted()
    _raised = weakref.ref(exc, _lost)
    return exc


def _lost(ref: weakref.ref) -> None:
    if ref is _raised and _pending is not None:
        # From another thread, a moment later: a signal sent from here would have its handler run inside this
        # callback, whose exception Python drops again (and threading's start() runs Python here while it waits).
        _thread.start_new_thread(_send_soon, (_pending,))


def _send_soon(signum: int) -> None:
    time.sleep(RESEND_DELAY_SECONDS)
    if _pending == signum:  # not acknowledged meanwhile
        os.kill(os.getpid(), signum)  # the main thread's handler raises again at its next instruction


def acknowledge() -> None:
    """The CLI has acted on the stop (it is ending with the stop's status): no more resending."""
    global _pending, _raised
    _pending = _raised = None


def stop_behind(exc: BaseException | None) -> KeyboardInterrupt | None:
    """The stop that ended a run with `exc` (None: a run that returned): the KeyboardInterrupt behind it, else a
    pending stop whose exception was lost on the way, else None."""
    if exc is not None:
        found = interrupt_behind(exc)
        if found is not None:
            return found
    if _pending is not None:
        return Terminated() if _pending == signal.SIGTERM else KeyboardInterrupt()
    return None


_STOP_MESSAGES = {signal.SIGINT: (b"ckspace: interrupted\n", EXIT_INTERRUPTED),
                  signal.SIGTERM: (b"ckspace: terminated\n", EXIT_TERMINATED)}


def _exit_now(signum: int, frame: object) -> None:
    message, status = _STOP_MESSAGES[signal.Signals(signum)]
    try:
        os.write(2, message)
    except OSError:  # no stderr: the status still says it
        pass
    os._exit(status)


def _replaceable(signum: signal.Signals) -> bool:
    """Neither ignored (by whoever started us: nohup, a background job; it stays ignored) nor handled from outside
    Python (getsignal is None then, and that handler could not be put back)."""
    return signal.getsignal(signum) not in (signal.SIG_IGN, None)


def exit_on_stop_signals() -> None:
    """For the process entry point, first thing: SIGINT and SIGTERM end the process at once, with the CLI's line
    and exit status, until `stop_signals_raise()` takes over (and again after it)."""
    for signum in _STOP_MESSAGES:
        if _replaceable(signum):
            signal.signal(signum, _exit_now)


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """While inside: SIGINT raises KeyboardInterrupt and SIGTERM raises Terminated in the main thread. The previous
    handlers come back on leaving, so that calling the CLI in process (tests) leaves the caller's as they were."""
    global _pending, _raised
    if not _in_main_thread():  # only the main thread may set handlers (and only it receives them)
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS if _replaceable(signum)}
    _pending = _raised = None
    hook = sys.unraisablehook
    try:
        # Inside the try: a stop can land the moment a handler is in place, before the rest are (signal.signal
        # runs Python after installing one), and the caller's handlers must come back then too. Its exception
        # leaves the `with` statement's entry; the caller takes it as any other stop (cli.app.main does).
        sys.unraisablehook = _quiet_about_stops(hook)
        for signum in previous:
            signal.signal(signum, _raise_stop)
        yield
    finally:
        _restore_handlers(previous)
        sys.unraisablehook = hook
        _pending = _raised = None  # a stop not acted on ends with the run (the caller's handlers are back)


def _restore_handlers(handlers: Mapping[signal.Signals, object]) -> None:
    """Put `handlers` back, all of them, even should a stop land in between (one of ours may still be in place):
    its exception comes after the last one is back. Putting a handler back twice is harmless."""
    stop: KeyboardInterrupt | None = None
    for signum, handler in handlers.items():
        while True:
            try:
                signal.signal(signum, handler)  # type: ignore[arg-type]  # getsignal gave it: a handler
                break
            except KeyboardInterrupt as exc:
                stop = exc
    if stop is not None:
        raise stop


def _quiet_about_stops(hook: Callable) -> Callable:
    """An unraisable-exception hook that says nothing of a stop Python dropped in a callback or a finalizer (an
    import's module lock has one): the stop stays pending and its signal comes again (_lost), so the run still ends
    with one line. Python would print it as "Exception ignored ... Traceback", on the stderr whose one line the
    user reads. Anything else goes to `hook`."""

    def quiet(unraisable) -> None:
        if isinstance(unraisable.exc_value, (Interrupted, Terminated)):
            return
        hook(unraisable)

    return quiet


def interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt that caused `exc`, if any: a C extension whose import is interrupted (OR-Tools) raises
    `ImportError: initialization failed` from it."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """SIGINT and SIGTERM are noted, not acted on, while inside; on leaving, the handlers in place before get them.

    By swapping the Python-level handlers rather than blocking the signals: a blocked signal is delivered to another
    thread (rich's refresh thread, say), whose C handler would still have the main thread run the Python handler.
    """
    if not _in_main_thread():  # Python runs handlers in the main thread only: nothing to hold back here
        yield
        return
    noted: list[int] = []
    previous = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS if _replaceable(signum)}
    for signum in previous:
        signal.signal(signum, lambda signum, frame: noted.append(signum))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for pending in dict.fromkeys(noted):  # plain ints, as a handler is given them (signum above: Signals)
            signal.raise_signal(pending)  # the restored handler acts on it now (and may raise)


def _block_stop_signals_in_this_thread() -> None:
    """For a helper thread: SIGINT and SIGTERM go to the main thread, whose system calls they must interrupt."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)


@dataclass
class _Call:
    """A call_stoppably call in progress."""

    stop: Callable[[], None]
    stopped_by: int | None = None  # the signal for which it was stopped
    over: bool = False


class _Watcher:
    """One daemon thread that learns of each signal from Python's wakeup fd (written by the C-level handler the
    moment the signal arrives, while the main thread may be deep in C) and stops the call in progress."""

    def __init__(self) -> None:
        self.call: _Call | None = None
        self.forward_to = -1  # the wakeup fd that ours stands in for (-1: none): it gets every signal byte too
        reader, self.writer = os.pipe()
        os.set_blocking(self.writer, False)  # set_wakeup_fd wants it so: a signal handler must never block
        threading.Thread(target=self._watch, args=(reader,), name="ckspace-signal-watch", daemon=True).start()

    def _watch(self, reader: int) -> None:
        _block_stop_signals_in_this_thread()
        while True:
            data = os.read(reader, 64)
            if self.forward_to >= 0:
                try:
                    os.write(self.forward_to, data)
                except OSError:  # full or closed: its owner's business, as with any wakeup fd
                    pass
            call = self.call
            stop_signal = next((signum for signum in data if signum in _STOP_SIGNALS), None)
            if call is not None and stop_signal is not None and call.stopped_by is None:
                call.stopped_by = stop_signal
                self._stop_until_over(call)

    @staticmethod
    def _stop_until_over(call: _Call) -> None:
        # Repeated: a stop that comes before the call has really begun (CP-SAT has not set up its search yet) is lost.
        deadline = time.monotonic() + STOP_PERSIST_SECONDS
        while not call.over and time.monotonic() < deadline:
            call.stop()
            time.sleep(STOP_POLL_SECONDS)


_WATCHER: _Watcher | None = None


def _forget_watcher() -> None:
    global _WATCHER
    _WATCHER = None  # a forked child has the object but not its thread


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_watcher)


def call_stoppably(work: Callable[[], T], stop: Callable[[], None]) -> T:
    """`work()`, stopped by `stop()` as soon as SIGINT or SIGTERM arrives; then an exception, never its result.

    Python runs signal handlers only between bytecodes of the main thread, so a long call into C (a CP-SAT search)
    would hold them off until it returns. `work` runs here, in the caller's thread; a watcher thread learns of the
    signal at once through Python's wakeup fd and calls `stop()` (again and again until `work` has returned: it
    must be safe from another thread at any moment, also before `work` has really begun). `work` must release the
    GIL while it blocks (CP-SAT's solve does). Afterwards the signal's handler raises (KeyboardInterrupt, or the
    CLI's Terminated); should the handler not raise, this does: a stopped call's result is partial. Outside the main
    thread, where no signal is seen, it is simply `work()`.
    """
    global _WATCHER
    if not _in_main_thread():
        return work()
    if _WATCHER is None:
        _WATCHER = _Watcher()
    watcher = _WATCHER
    call = _Call(stop)
    outer, watcher.call = watcher.call, call
    previous: int | None = None  # the wakeup fd before ours, once ours is in place
    try:
        previous = signal.set_wakeup_fd(watcher.writer, warn_on_full_buffer=False)
        if previous != watcher.writer:  # (ours already: a call inside a call, which forwards as the outer one does)
            watcher.forward_to = previous
        result = work()
    finally:
        call.over = True
        try:
            if previous is not None and previous != watcher.writer:
                signal.set_wakeup_fd(previous)
        finally:
            watcher.call = outer
    if call.stopped_by is not None:
        raise Terminated if call.stopped_by == signal.SIGTERM else KeyboardInterrupt
    return result


def exit_status(exc: KeyboardInterrupt) -> int:
    """The exit status of a run stopped by `exc`: 143 for SIGTERM, 130 for Ctrl-C."""
    return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
