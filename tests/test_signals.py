"""Ctrl-C and SIGTERM: nothing crashes, nothing hangs, nothing wrong is ever served.

Every command is run as `python -m ckspace` in a session of its own (so that a signal goes only where it is meant
to, as a terminal's Ctrl-C goes to its foreground job) and signalled at a few moments after its start. A process
still running at the signal must end within LATENCY_LIMIT seconds with 130 (SIGINT) or 143 (SIGTERM) and one line
on stderr; one that answered just before the signal landed must have answered in full. Afterwards no process of it
is left, no temporary or half-written file survives the next run, and the next run (same cache directory) answers
what an uninterrupted run answers: an interrupted search is never served, and never cached.

A moment is counted from the start of the process, but no signal is sent before ckspace's handlers are in place
(while Python itself starts, a signal kills it as it would any program: nothing of ckspace runs yet).
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parent.parent
LATENCY_LIMIT = 2.0  # seconds from the signal to the end of the process
EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}
LAST_LINE = {signal.SIGINT: "ckspace: interrupted", signal.SIGTERM: "ckspace: terminated"}
MOMENTS = [(0.3, signal.SIGINT), (0.8, signal.SIGTERM), (1.5, signal.SIGINT)]
SIGTERM_CAUGHT = 1 << (signal.SIGTERM - 1)  # its bit in /proc/PID/status SigCgt
WAVE_8X2 = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_8x2x1_16x16x32_vec8_8_8"  # not in full

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads processes from /proc (Linux)")


# ---- running and signalling ckspace ---------------------------------------------------------------------------------
def _env(cache: Path | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    if cache is not None:
        env["CKSPACE_CACHE_DIR"] = str(cache)
    return {**env, **(extra or {})}


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ckspace", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=REPO, start_new_session=True)


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=600)


def _caught_signals(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def wait_until_handling(proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until ckspace has its handlers in place (it catches SIGTERM), or has ended."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and not _caught_signals(proc.pid) & SIGTERM_CAUGHT:
        assert time.monotonic() < deadline, "ckspace never installed its signal handlers"
        time.sleep(0.005)


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    signalled: bool  # the process was still running when the signal was sent
    latency: float  # seconds from the signal to the end of the process


def signal_at(proc: subprocess.Popen, started: float, at: float, signum: int) -> Outcome:
    """Send `signum` to the process `at` seconds after `started` (not before its handlers are in place)."""
    wait_until_handling(proc)
    time.sleep(max(at - (time.monotonic() - started), 0.0))
    signalled = proc.poll() is None
    sent = time.monotonic()
    if signalled:
        os.killpg(proc.pid, signum)
    out, err = proc.communicate(timeout=120)
    return Outcome(proc.returncode, out, err, signalled, time.monotonic() - sent)


def interrupt(args: list[str], env: dict[str, str], at: float, signum: int) -> Outcome:
    started = time.monotonic()
    return signal_at(start(args, env), started, at, signum)


def assert_stopped(outcome: Outcome, signum: int, answered: Callable[[Outcome], bool]) -> None:
    """Stopped at once with the signal's status and line, or (signal too late) answered in full."""
    name = signal.Signals(signum).name
    if outcome.returncode in (0, 1) and answered(outcome):
        return  # it had answered before the signal landed; its answer is whole
    assert outcome.signalled, f"not signalled, yet exit {outcome.returncode}: {outcome.stderr[-2000:]}"
    assert outcome.returncode == EXIT[signum], f"{name}: exit {outcome.returncode}: {outcome.stderr[-2000:]}"
    assert outcome.latency < LATENCY_LIMIT, f"{name}: ended {outcome.latency:.2f}s after the signal"
    assert "Traceback" not in outcome.stderr, outcome.stderr
    assert outcome.stderr.strip().splitlines()[-1] == LAST_LINE[signum], outcome.stderr[-2000:]


def processes_mentioning(marker: str) -> list[str]:
    """Live processes (zombies aside) whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        if marker in cmdline and stat[stat.rfind(b")") + 2:][:1] != b"Z":
            found.append(f"{entry.name}: {cmdline}")
    return found


def assert_no_processes(marker: str, within: float = 1.0) -> None:
    deadline = time.monotonic() + within
    while processes_mentioning(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not processes_mentioning(marker), processes_mentioning(marker)


def in_process(capsys, args: list[str]) -> str:
    """An uninterrupted run's answer (in process, through the session's own cache)."""
    from ckspace import cli

    capsys.readouterr()
    assert cli.main(args) in (0, 1)
    return capsys.readouterr().out


# ---- (a) solves that take more than a second -------------------------------------------------------------------------
SOLVES = {
    "tests set": ["enumerate", "--arch", "gfx950", "--set", "tests"],
    "tiny set": ["enumerate", "--arch", "gfx950", "--set", "tiny"],
    "gfx942 count": ["enumerate", "--arch", "gfx942", "--count"],
}
# With the enumerated universe in the cache a selection starts solving at once: these moments fall into its search.
SELECTION_MOMENTS = [(1.2, signal.SIGTERM), (2.0, signal.SIGINT)]


def session_cache() -> Path:
    return Path(os.environ["CKSPACE_CACHE_DIR"])  # conftest's, holding only what uninterrupted runs wrote


def _answer(entry: Path) -> object:
    """What a cache entry answers (a selection's entry also holds its timings, which differ from run to run)."""
    header, payload = entry.read_text().split("\n", 1)  # the cache's format: a checksummed header, then the payload
    assert json.loads(header)["v"] >= 2
    data = json.loads(payload)
    return data["names"] if entry.parent.name == "select" else data


def assert_only_right_entries(cache: Path, right_names: list[str] | None = None) -> None:
    """Every entry the interrupted runs left in `cache` answers what an uninterrupted run's entry under the same key
    answers (the key covers engine, rules and options). A selection the uninterrupted run did not cache (on a
    loaded machine its wall-clock safety limit may stop it, and then it is not cached) must hold the names that run
    printed."""
    for entry in cache.rglob("*.json"):
        if entry.parent.name == "digests":  # the digests of the engine's and the data's files, not an answer
            continue
        right = session_cache() / entry.relative_to(cache)
        if not right.is_file() and entry.parent.name == "select" and right_names is not None:
            assert _answer(entry) == right_names, f"{entry} was cached by an interrupted run"
            continue
        assert right.is_file() and _answer(entry) == _answer(right), f"{entry} was cached by an interrupted run"


@pytest.mark.slow
@pytest.mark.parametrize("what", sorted(SOLVES))
def test_an_interrupted_solve_is_never_served_nor_cached(what, tmp_path, capsys):
    args = SOLVES[what]
    cache = tmp_path / "cache"  # fresh: every run below solves, or reads what an earlier one cached
    env = _env(cache)
    right = in_process(capsys, args)  # uninterrupted, into the session's cache
    for at, signum in MOMENTS:
        assert_stopped(interrupt(args, env, at, signum), signum, lambda o: o.stdout == right)
    assert_only_right_entries(cache, right.split() if "--set" in args else None)
    if "--set" in args:
        for entry in (session_cache() / "enumerate").glob("*.json"):  # the universe, as an uninterrupted run left it
            (cache / "enumerate").mkdir(parents=True, exist_ok=True)
            (cache / "enumerate" / entry.name).write_bytes(entry.read_bytes())
        for at, signum in SELECTION_MOMENTS:
            assert_stopped(interrupt(args, env, at, signum), signum, lambda o: o.stdout == right)
        assert_only_right_entries(cache)
    again = run(args, env)
    assert again.returncode == 0 and again.stdout == right, again.stderr


def test_an_interrupted_open_space_count_caches_nothing(tmp_path):
    """The open space (about 10^13 kernels) takes several seconds to count: every moment falls inside the search."""
    args = ["enumerate", "--arch", "gfx950", "--rules", "-ck-curation", "--count"]
    cache = tmp_path / "cache"
    for at, signum in MOMENTS:
        outcome = interrupt(args, _env(cache), at, signum)
        assert outcome.signalled
        assert_stopped(outcome, signum, lambda o: False)
    assert not list((cache / "count").glob("*")), "an interrupted count was cached"


# ---- (a') from the process's first line of ckspace, imports included --------------------------------------------------
# Delays from the moment ckspace's first line has run (its SIGTERM handler is in place, which /proc shows): the CLI's
# imports (numpy, OR-Tools, the solver modules) take the first 0.1-0.3 s of a cold run, and a stop in any of them
# must end the run as cleanly as one in the search. (Before that moment the interpreter itself starts; a signal then
# ends it as it ends any Python program, before a line of ckspace has run.)
EARLY_DELAYS = [0.0, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.2]
EARLY_COMMANDS = {"enumerate count": ["enumerate", "--arch", "gfx950", "--count"],
                  "explain": ["explain", WAVE_8X2, "--arch", "gfx950"]}


@pytest.mark.parametrize("what", sorted(EARLY_COMMANDS))
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_at_any_moment_of_the_start_is_one_line(what, signum, tmp_path):
    args = EARLY_COMMANDS[what]
    for i, at in enumerate(EARLY_DELAYS):
        proc = start(args, _env(tmp_path / f"cache{i}"))  # a cold cache: every run imports the solver's modules
        wait_until_handling(proc)
        time.sleep(at)
        outcome = signal_at(proc, time.monotonic(), 0.0, signum)
        # an answer that came first is whole (explain's rejection: exit 1 and its report)
        assert_stopped(outcome, signum, lambda o: o.returncode in (0, 1) and "Traceback" not in o.stderr
                       and o.stdout.strip() != "")
        if outcome.returncode == EXIT[signum]:
            assert len(outcome.stderr.strip().splitlines()) == 1, (at, outcome.stderr)


# A stop that lands the moment one of the CLI's handlers is put in place (or back): signal.signal runs Python after it
# installs a handler, and a handler of ours raises there, in the `with` statement's entry, before the others are in
# place. CI met it once (SIGTERM, exit 1 and a traceback from enum). Timing cannot aim at that window; a wrapper of
# signal.signal sends the signal from inside it, at the n-th call that installs one of ours, or the n-th that puts one
# back after it.
_STOP_INSIDE_SIGNAL_SIGNAL = """
import os, signal, sys
real, counts = signal.signal, {{"_raise_stop": 0, "_exit_now": 0}}
def wrapped(signum, handler):
    previous = real(signum, handler)
    name = getattr(handler, "__name__", "")
    if name in counts and (counts["_raise_stop"] or name == "_raise_stop"):  # (ours in, then the entry's back)
        counts[name] += 1
        if name == {which!r} and counts[name] == {n}:
            os.kill(os.getpid(), {signum})  # its handler runs at the next instruction: still in here
    return previous
signal.signal = wrapped
sys.argv = ["ckspace", "rules", "--format", "json"]
from ckspace._entry import run
run()
"""


@pytest.mark.parametrize("which", ["_raise_stop", "_exit_now"], ids=["putting-ours-in", "putting-theirs-back"])
@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_inside_the_handlers_swap_is_one_line(signum, n, which, tmp_path):
    code = _STOP_INSIDE_SIGNAL_SIGNAL.format(n=n, signum=int(signum), which=which)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(tmp_path / "cache"),
                       cwd=REPO, timeout=300)
    assert r.returncode == EXIT[signum], r.stderr[-2000:]
    assert r.stderr.strip().splitlines() == [LAST_LINE[signum]], r.stderr[-2000:]
    if which == "_raise_stop":
        assert r.stdout == ""  # stopped before the command ran


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals reach the main thread")
def test_a_stop_while_the_handlers_go_back_leaves_none_of_ours_behind(monkeypatch):
    """A stop raised as the first handler goes back still lets every other go back; it comes out afterwards."""
    from ckspace import signals as S

    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    real = signal.signal
    raised: list[int] = []

    def stop_once_when_putting_back(signum, handler):
        previous = real(signum, handler)
        if handler is not S._raise_stop and not raised:
            raised.append(signum)
            raise S.Terminated()  # as its handler would, had SIGTERM landed right here
        return previous

    monkeypatch.setattr(signal, "signal", stop_once_when_putting_back)
    with pytest.raises(S.Terminated):
        with S.stop_signals_raise():
            assert signal.getsignal(signal.SIGTERM) is S._raise_stop
    monkeypatch.undo()
    assert raised and {signum: signal.getsignal(signum) for signum in before} == before


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals reach the main thread")
def test_a_stop_whose_exception_is_lost_is_raised_again():
    """Python drops an exception raised in a weakref callback or a finalizer ("Exception ignored"), and a handler's
    exception can land there (an import's module lock has such a callback). The stop stays pending, and once its
    exception is gone unacknowledged the signal comes again; while the exception lives (a cleanup runs with it)
    nothing more is raised."""
    from ckspace.signals import Terminated, acknowledge, stop_behind, stop_signals_raise

    caught: list[str] = []
    held = 0.0

    def sleep_until_stopped() -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            time.sleep(0.001)

    with stop_signals_raise():
        try:
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                sleep_until_stopped()  # the handler raises here ...
            except Terminated:  # ... and this swallows it, as Python does a callback's exception
                caught.append("raised")
                started = time.monotonic()
                time.sleep(0.3)  # the exception lives here: no repeat may cut this short
                held = time.monotonic() - started
                assert isinstance(stop_behind(None), Terminated)  # pending
            sleep_until_stopped()  # it died unacknowledged at the end of that block: the signal comes again
        except Terminated:
            caught.append("raised")
            acknowledge()  # as the CLI does, while the exception lives
        try:
            time.sleep(0.3)  # acknowledged: nothing more comes
        except Terminated:
            caught.append("after acknowledge")
    assert caught == ["raised", "raised"] and held >= 0.29
    assert stop_behind(None) is None and stop_behind(ValueError()) is None


def test_the_entry_points_handle_stops_before_the_cli_loads():
    """Both process entry points go through ckspace._entry, which handles SIGINT and SIGTERM on import, with only
    modules the interpreter has loaded at its start."""
    tomllib = pytest.importorskip("tomllib")
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["ckspace"] == "ckspace._entry:run"
    main = (REPO / "ckspace" / "__main__.py").read_text()
    assert main.lstrip().startswith("from ._entry import run")
    probe = ("import sys, _signal; before = set(sys.modules); import ckspace._entry; "
             "print(sorted(set(sys.modules) - before - {'ckspace', 'ckspace._entry', '__future__'})); "
             "print(_signal.getsignal(_signal.SIGTERM).__module__)")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=_env(None), cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["[]", "ckspace._entry"], r.stdout


# ---- (b) every command ----------------------------------------------------------------------------------------------
def test_enumerate_cold_and_warm(tmp_path):
    from conftest import full_set

    right = "".join(f"{c['name']}\n" for c in full_set("gfx950"))
    args = ["enumerate", "--arch", "gfx950"]
    env = _env(tmp_path / "cache")
    for at, signum in [(0.5, signal.SIGTERM), (1.2, signal.SIGINT)]:  # cold: solving, or printing
        assert_stopped(interrupt(args, env, at, signum), signum, lambda o: o.stdout == right)
    assert run(args, env).stdout == right
    for at, signum in [(0.1, signal.SIGINT), (0.3, signal.SIGTERM)]:  # warm: reading the cache, or printing
        assert_stopped(interrupt(args, env, at, signum), signum, lambda o: o.stdout == right)
    assert run(args, env).stdout == right


# Far from every valid kernel (it breaks the workgroup size, the warp tiles and the vector widths): its ten nearest
# valid kernels take a search of a few seconds. (WAVE_8X2 is valid in the open space since wave layouts are curation.)
FAR_OFF = "grouped_conv_bwd_weight_fp32_nhwgc_2d_compv3_cshuffle_intrawave_16x16x256_8x4x2_32x32x16_vec16_16_16"


def test_explain_stops_during_the_neighbour_search(tmp_path, capsys):
    args = ["explain", FAR_OFF, "--arch", "gfx942", "--rules", "-ck-curation", "--neighbours", "10"]
    right = in_process(capsys, args)
    for at, signum in [(0.6, signal.SIGINT), (1.2, signal.SIGTERM), (1.8, signal.SIGINT)]:
        outcome = interrupt(args, _env(tmp_path / "cache"), at, signum)
        assert_stopped(outcome, signum, lambda o: o.returncode == 1 and o.stdout == right)


def temporaries(root: Path) -> list[str]:
    """What an interrupted run may leave behind: temporaries, probes, the lock file."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.name.endswith(".tmp") or p.name.startswith(".ckspace-probe-") or p.name == ".ckspace.lock")


def plant_leftovers(root: Path) -> list[Path]:
    """What a SIGKILL in the middle of writing leaves (a dead writer's lock file among them)."""
    planted = [root / ".grouped_conv_x.hpp.ab12cd34.tmp", root / "units" / ".grouped_conv_instances_0000.cpp.z9y8x7w6.tmp",
               root / ".ckspace-probe-q1w2e3r4", root / "obj" / "gfx950" / "grouped_conv_instances_0000.o.tmp"]
    for path in planted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half")
    (root / ".ckspace.lock").write_text("999999\n")
    return planted


def test_emit_stops_and_its_rerun_leaves_nothing_half_written(tmp_path):
    out = tmp_path / "out"
    args = ["emit", "--arch", "gfx950", "--set", "tiny", "--chunk-size", "5", "-o", str(out)]
    env = _env(tmp_path / "cache")
    for at, signum in [(0.8, signal.SIGINT), (1.6, signal.SIGTERM)]:
        assert_stopped(interrupt(args, env, at, signum), signum, lambda o: o.stdout.startswith("emitted 22 kernels"))
    plant_leftovers(out)
    mine = out / "notes.tmp"  # a user's file of a similar name is not ckspace's to remove
    mine.write_text("mine")
    r = run(args, env)
    assert r.returncode == 0 and r.stdout.startswith("emitted 22 kernels"), r.stderr
    assert temporaries(out) == ["notes.tmp"] and mine.read_text() == "mine"
    from ckspace.codegen import manifest as M

    assert all((out / rel).is_file() for rel in M.load(out)["files"])


def interrupt_when(args: list[str], env: dict[str, str], ready: Callable[[], bool], signum: int) -> Outcome:
    """Signal the process as soon as `ready()` holds (polled), or once it has ended."""
    started = time.monotonic()
    proc = start(args, env)
    wait_until_handling(proc)
    deadline = started + 120
    while proc.poll() is None and not ready():
        assert time.monotonic() < deadline, "the moment never came"
        time.sleep(0.001)
    return signal_at(proc, started, 0.0, signum)


def listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


# Three selections of gfx950 with no kernel in common: A emitted whole, B (659 kernels, 1,382 files) stopped while it
# writes, C emitted last.
SELECTION_A = ["--variant", "bwd_weight", "--ndim", "2", "--dtype", "fp16", "--where", "pipeline == 'compv3'"]
SELECTION_B = ["--variant", "forward", "--ndim", "2", "--dtype", "fp16"]
SELECTION_C = ["--variant", "bwd_data", "--ndim", "2", "--dtype", "fp16", "--where", "pipeline == 'compv3'"]


def test_an_emit_stopped_while_writing_leaves_no_temporary_and_the_next_emit_removes_what_it_wrote(tmp_path):
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    env = _env(tmp_path / "cache")
    emit = ["emit", "--arch", "gfx950", "--chunk-size", "5"]
    for args in ([*SELECTION_C, "-o", str(fresh)], [*SELECTION_A, "-o", str(out)]):
        r = run([*emit, *args], env)
        assert r.returncode == 0, r.stderr
    mine = {"notes.tmp": "mine", "NOTES.txt": "mine", "units/my_extra.cpp": "// mine", ".x.hpp.abcdefgh.tmp.bak": "m"}
    for rel, text in mine.items():
        (out / rel).write_text(text)
    before = listing(out)

    def headers_of_b() -> int:
        return sum(1 for e in os.scandir(out) if e.name.startswith("grouped_conv_fwd_") and e.name.endswith(".hpp"))

    stopped_while_writing = 0
    # the moment the first file of B is written, later ones, and one while it may still be selecting
    moments = [(lambda: headers_of_b() >= 1, signal.SIGINT), (lambda: headers_of_b() >= 150, signal.SIGTERM),
               (lambda: headers_of_b() >= 450, signal.SIGINT), (lambda: headers_of_b() >= 40, signal.SIGTERM)]
    for ready, signum in moments:
        outcome = interrupt_when([*emit, *SELECTION_B, "-o", str(out)], env, ready, signum)
        assert_stopped(outcome, signum, lambda o: o.stdout.startswith("emitted 659 kernels"))
        assert temporaries(out) == ["notes.tmp"], outcome.stderr  # no temporary, no lock file: right away
        if outcome.returncode == EXIT[signum] and listing(out) - before:
            stopped_while_writing += 1
    assert stopped_while_writing >= 2, "the signals never landed while B was being written"
    r = run([*emit, *SELECTION_C, "-o", str(out)], env)
    assert r.returncode == 0, r.stderr
    assert listing(out) == listing(fresh) | set(mine)  # C's files and the user's, nothing of A or B
    assert all((out / rel).read_text() == text for rel, text in mine.items())
    assert all((out / rel).read_bytes() == (fresh / rel).read_bytes() for rel in listing(fresh))


# ---- build: ninja and compilers ---------------------------------------------------------------------------------------
FAKE_COMPILER = """#!{python} -S
# A compiler that takes its time: writes part of its output, sleeps, then finishes it (FAKECC_STUBBORN: ignores
# SIGINT and SIGTERM, as a wedged compiler would).
import os, signal, sys, time
out = sys.argv[sys.argv.index("-o") + 1]
if os.environ.get("FAKECC_STUBBORN"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
with open(out, "w") as fh:
    fh.write("partial ")
    fh.flush()
    time.sleep(float(os.environ.get("FAKECC_SECONDS", "60")))
    fh.write("complete")
"""


@pytest.fixture
def emitted(tmp_path, capsys) -> Path:
    """The tiny set emitted in five compile units, and a fake compiler for it."""
    out = tmp_path / "out"
    from ckspace import cli

    assert cli.main(["emit", "--arch", "gfx950", "--set", "tiny", "--chunk-size", "5", "-o", str(out)]) == 0
    capsys.readouterr()
    fake = tmp_path / "fakecc"
    fake.write_text(FAKE_COMPILER.format(python=sys.executable))
    fake.chmod(0o755)
    (tmp_path / "ck").mkdir()
    return out


def build_args(out: Path) -> list[str]:
    root = out.parent
    return ["build", str(out), "-j", "2", "--no-check", "--compiler", str(root / "fakecc"), "--ck-include", str(root / "ck")]


def start_build(out: Path, extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen, float]:
    """A build, once its compilers are running."""
    started = time.monotonic()
    proc = start(build_args(out), _env(None, extra_env))
    deadline = time.monotonic() + 60
    while len(processes_mentioning(str(out.parent / "fakecc"))) < 2 and proc.poll() is None:
        assert time.monotonic() < deadline, "the build never started its compilers"
        time.sleep(0.02)
    return proc, started


def objects(out: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in (out / "obj").rglob("*.o")}


@pytest.mark.parametrize("signum,stubborn", [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGTERM, True)])
def test_build_stops_ninja_and_every_compiler(emitted, signum, stubborn):
    proc, started = start_build(emitted, {"FAKECC_STUBBORN": "1"} if stubborn else None)
    outcome = signal_at(proc, started, 0.0, signum)
    assert_stopped(outcome, signum, lambda o: False)
    assert_no_processes(str(emitted.parent / "fakecc"))
    assert_no_processes(str(emitted))  # ninja -C DIR
    assert not objects(emitted) and temporaries(emitted) == []
    r = run(build_args(emitted), _env(None, {"FAKECC_SECONDS": "0"}))  # the rerun builds everything, whole
    assert r.returncode == 0 and "built: 5/5 objects" in r.stdout, r.stdout + r.stderr
    assert set(objects(emitted).values()) == {"partial complete"} and temporaries(emitted) == []


def test_build_killed_outright_leaves_no_compiler_and_the_rerun_sweeps(emitted):
    proc, _ = start_build(emitted)
    proc.kill()  # SIGKILL to ckspace alone: no handler of its runs, ninja hears of it from the kernel
    proc.communicate(timeout=30)
    assert_no_processes(str(emitted.parent / "fakecc"), within=2.0)
    assert_no_processes(str(emitted), within=2.0)
    planted = plant_leftovers(emitted)
    r = run(build_args(emitted), _env(None, {"FAKECC_SECONDS": "0"}))
    assert r.returncode == 0 and "built: 5/5 objects" in r.stdout, r.stdout + r.stderr
    assert not any(p.exists() for p in planted) and temporaries(emitted) == []
    assert set(objects(emitted).values()) == {"partial complete"}


def test_a_second_build_or_emit_into_a_busy_directory_is_refused(emitted, tmp_path):
    proc, started = start_build(emitted)
    try:
        for args in (build_args(emitted), ["emit", "--arch", "gfx950", "--set", "tiny", "-o", str(emitted)]):
            r = run(args, _env(None))
            assert r.returncode == 2, r.stdout + r.stderr
            assert r.stderr.strip() == f"ckspace: error: {emitted} is in use by another ckspace (pid {proc.pid})"
    finally:
        outcome = signal_at(proc, started, 0.0, signal.SIGTERM)
    assert_stopped(outcome, signal.SIGTERM, lambda o: False)
    assert temporaries(emitted) == []


# ---- the mechanism, in process ------------------------------------------------------------------------------------------
@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals reach the main thread")
def test_a_long_search_without_callbacks_stops_at_once():
    """No Python runs during this search (no solution callback), so no handler could run before it ends: the watcher
    stops it, and the signal's exception comes instead of its partial result."""
    from ortools.sat.python import cp_model

    from ckspace.signals import Terminated, stop_signals_raise
    from ckspace.solve.cpsat import solve_stoppably

    model = cp_model.CpModel()
    values = [model.new_int_var(0, 30, f"x{i}") for i in range(8)]
    model.add(sum(values) <= 120)
    solver = cp_model.CpSolver()
    solver.parameters.enumerate_all_solutions = True  # some 10^11 solutions: far more than the test lasts
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 30.0  # should the stop fail, the test still ends
    before = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(before)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM))
    with stop_signals_raise():  # SIGTERM raises Terminated here (the test runner's handler is back afterwards)
        started = time.monotonic()
        timer.start()
        try:
            with pytest.raises(Terminated):
                solve_stoppably(solver, model)
        finally:
            timer.join()
    assert time.monotonic() - started < 1.0
    assert signal.set_wakeup_fd(before) == before  # put back as it was


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals reach the main thread")
def test_a_stopped_call_raises_even_where_the_handler_does_not():
    """A handler that only takes note (or one that is not ckspace's) leaves the stopped call's result unread."""
    from ckspace.signals import call_stoppably

    noted = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    try:
        with pytest.raises(KeyboardInterrupt):
            call_stoppably(lambda: os.kill(os.getpid(), signal.SIGINT) or time.sleep(0.2) or "partial", lambda: None)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert noted == [signal.SIGINT]
    assert call_stoppably(lambda: 42, lambda: None) == 42
    with pytest.raises(ZeroDivisionError):
        call_stoppably(lambda: 1 // 0, lambda: None)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals reach the main thread")
def test_deferred_holds_a_signal_until_the_cleanup_is_over():
    from ckspace.signals import Terminated, deferred, stop_signals_raise

    cleaned = []
    with stop_signals_raise():  # SIGTERM raises Terminated (the test runner's handler is back afterwards)
        with pytest.raises(Terminated):
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)  # a handler would have run by now
                cleaned.append(True)
    assert cleaned


def test_every_cp_sat_search_is_stoppable():
    """Every function that makes a CpSolver hands it to solve_stoppably, never to its own solve (which would let
    OR-Tools catch Ctrl-C and serve what it had so far)."""
    from ortools.sat.python import cp_model

    from ckspace.solve.cpsat import solve_stoppably

    direct = {"solve", "Solve", "SolveWithSolutionCallback", "SearchForAllSolutions"}
    offenders = []
    for path in sorted((REPO / "ckspace").rglob("*.py")):
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            solvers = {t.id for node in ast.walk(fn) if isinstance(node, ast.Assign)
                       and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                       and node.value.func.attr == "CpSolver" for t in node.targets if isinstance(t, ast.Name)}
            for node in ast.walk(fn):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in direct
                        and isinstance(node.func.value, ast.Name) and node.func.value.id in solvers):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
            if solvers and "solve_stoppably" not in ast.unparse(fn):
                offenders.append(f"{path.relative_to(REPO)}:{fn.lineno} {fn.name} makes a CpSolver and never solves")
    assert not offenders, offenders

    model = cp_model.CpModel()
    model.new_int_var(0, 3, "x")
    solver = cp_model.CpSolver()
    assert solve_stoppably(solver, model) == cp_model.OPTIMAL
    assert solver.parameters.catch_sigint_signal is False


def test_a_stop_python_drops_in_a_callback_prints_no_traceback(monkeypatch) -> None:
    """Python reports an exception raised in a weakref callback or a finalizer through sys.unraisablehook ("Exception
    ignored ... Traceback"). While the CLI runs, a dropped stop says nothing there (it comes again: one line at the
    end); any other exception still reaches the hook it had; and the hook is back when the run ends."""
    import types

    from ckspace import signals as S

    seen: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_value))
    before = sys.unraisablehook
    with S.stop_signals_raise():
        for exc in (S.Interrupted(), S.Terminated(), ValueError("other")):
            sys.unraisablehook(types.SimpleNamespace(exc_value=exc, exc_type=type(exc), exc_traceback=None,
                                                     err_msg=None, object=None))
    assert [type(e).__name__ for e in seen] == ["ValueError"]
    assert sys.unraisablehook is before
    S.acknowledge()
