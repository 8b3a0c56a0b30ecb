"""`ckspace build DIR`: compile an emitted directory with ninja, and check the objects.

- The compiler: --compiler, else ROCm (hipcc / amdclang++), else the registry toolchain (ckspace.codegen.toolchain, set up
  on first use and cached).
- `toolchain.ninja` (compiler and flags per offload arch) is written next to build.ninja; build.ninja is rewritten
  only when --offload-arch asks for other archs than it lists. Both are written only when they change, so a
  repeated build runs nothing. The launcher reaches the compile commands through $CKSPACE_LAUNCHER, so that
  switching it (or dropping it) rebuilds nothing either.
- ninja (the PyPI package) runs parallel (-j), keep-going (-k 0) and incremental; a rich progress bar follows its
  status lines. Objects are compiled to `<obj>.tmp` and renamed, so no half-written object ever has its final name;
  leftover temporaries are removed before the next build, which resumes where this one stopped.
- ninja runs in a session of its own, and ckspace stops it and every compiler on Ctrl-C, SIGTERM or any error
  (SIGTERM, which ninja passes on to each compile; SIGKILL to whatever is left of the session after a grace
  period); on Linux ninja also gets SIGTERM should ckspace die without that (SIGKILL). The output directory is
  held (`files.locked`) for the whole build, so a second build or emit into it fails at once.
- At the end: a table of the failed compile units, mapped to the kernels whose headers the errors point into
  (else every kernel of the unit), with the first compiler error of each; exit 1 if anything failed.
- `check_objects()` reads each object's ELF header and symbols: the e_flags machine must be the target's, and every
  kernel of the unit must have at least one device kernel entry point whose (demangled) template arguments are
  the kernel's (variant, tile, waves, warp tile, vectors, pipeline...).
- `measure` / `isa` (ckspace verify): ckspace/codegen/rusage.py runs each compile, appends its peak memory to a log,
  and with `isa` compiles to assembly (`obj/<arch>/<unit>.s`) and assembles that into the object.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from ..memo import cached
from .. import files as F
from . import manifest as M
from .ckapi import detect_revision, resolve_revision
from .elf import read_elf
from .rusage import CANNOT_START, TIMEOUT_TEXT
from ..errors import CkspaceError, UsageError
from ..signals import deferred

LAUNCHERS = ("ccache", "sccache", "distcc")
STATUS_PREFIX = "@@ckspace "
STOP_GRACE_SECONDS = 1.0  # after SIGTERM, how long ninja and the compilers get to end before SIGKILL
REAP_SECONDS = 0.5  # after SIGKILL, how long to wait for the processes to be gone


def find_ninja() -> str:
    """ninja from the PyPI package (a dependency of ckspace), else one on PATH."""
    try:
        import ninja

        path = Path(ninja.BIN_DIR) / "ninja"
        if path.is_file():
            return str(path)
    except ImportError:
        pass
    found = shutil.which("ninja")
    if found:
        return found
    raise UsageError("ninja is missing: pip install ninja (a dependency of ckspace)")


def resolve_launcher(launcher: str | None) -> list[str]:
    if not launcher:
        return []
    name = Path(launcher).name
    if name not in LAUNCHERS:
        raise UsageError(f"unknown launcher {launcher!r}; choices: {', '.join(LAUNCHERS)}")
    path = shutil.which(launcher)
    if not path:
        raise UsageError(f"--launcher {launcher}: not found on PATH")
    return [path]


def _ninja_quote(value: str) -> str:
    return value.replace("$", "$$").replace("\n", " ")


def _shell_join(args: Sequence[str]) -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in args)


def render_toolchain_ninja(tc, archs: Sequence[str], launcher: Sequence[str], ck_include: Path | None) -> str:
    from .emit import arch_id

    lines = [
        "# Written by `ckspace build` — compilers and flags per offload arch (the launcher comes from",
        "# $CKSPACE_LAUNCHER, so that changing it rebuilds nothing).",
        f"# {tc.description}",
    ]
    for a in archs:
        lines.append(f"cxx_{arch_id(a)} = {_ninja_quote(_shell_join(tc.compiler_for(a)))}")
        lines.append(f"cxxflags_{arch_id(a)} = {_ninja_quote(_shell_join(tc.flags_for(a, ck_include)))}")
    return "\n".join(lines) + "\n"


@dataclass
class Failure:
    unit: str
    arch: str
    kernels: list[str]
    error: str


@dataclass
class BuildResult:
    out_dir: Path
    archs: list[str]
    objects: list[str]
    built: int = 0
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0
    toolchain: str = ""
    log: Path | None = None
    stopped: bool = False  # the deadline came first: ninja was stopped, the units it had not finished are not built

    @property
    def ok(self) -> bool:
        return not self.failures


def _update_manifest_archs(root: Path, data: dict, archs: list[str], build_ninja: str) -> None:
    data = dict(data)
    data["build_archs"] = archs
    files = dict(data.get("files", {}))
    files["build.ninja"] = M.digest(build_ninja)
    data["files"] = files
    M.atomic_write(root / M.MANIFEST, (json.dumps(data, indent=1) + "\n").encode())


def _write_if_changed(path: Path, text: str) -> bool:
    data = text.encode()
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    try:
        M.atomic_write(path, data)
    except OSError as exc:
        raise M.OutputDirError(f"cannot write {path}: {exc.strerror or exc}") from None
    return True


def _remove_leftover_temps(root: Path) -> int:
    """The temporaries of interrupted compiles (`<obj>.tmp`) and of interrupted writes (emit's and build's own)."""
    from .emit import sweep_leftovers

    return sweep_leftovers(root)


def prepare(out_dir: str | Path, offload_archs: Sequence[str] | None = None, compiler: str | None = None,
            launcher: str | None = None, ck_include: str | Path | None = None,
            log: Callable[[str], None] | None = None):
    """Everything before ninja: manifest, toolchain, revision check, build.ninja / toolchain.ninja."""
    from . import emit as EM
    from . import toolchain as T

    root = Path(out_dir)
    if not root.is_dir():
        raise UsageError(f"{root}: no such directory (emit into it first: ckspace emit ... -o {root})")
    data = M.require(root)
    archs = [EM.check_offload_arch(a) for a in (offload_archs or data.get("build_archs") or [data["arch"]])]
    if len(set(archs)) != len(archs):
        raise UsageError("--offload-arch lists an arch twice")
    launch = resolve_launcher(launcher)
    tc = T.find(compiler, ck_include, log=log)
    inc = Path(ck_include) if ck_include else tc.ck_include
    if inc is None:
        raise UsageError("no CK Tile headers known for this compiler: pass --ck-include DIR (the directory holding ck_tile/)")
    _check_revision(data, inc)
    for rel in (EM.STATE_DIR, EM.OBJ_DIR, *(f"{EM.OBJ_DIR}/{EM.arch_id(a)}" for a in archs)):
        F.check_subdir(root, rel)  # ninja writes there: a planted symlink leading elsewhere is refused, as emit does
    if archs != data.get("build_archs"):
        text = EM.render_build_ninja(EM.template_env(data.get("ck_api") or resolve_revision(None)),
                                     list(data["units"]), archs)
        _write_if_changed(root / "build.ninja", text)
        _update_manifest_archs(root, data, archs, text)
    _write_if_changed(root / "toolchain.ninja", render_toolchain_ninja(tc, archs, launch, inc))
    return data, archs, tc


def _check_revision(data: Mapping, inc: Path) -> None:
    emitted = data.get("ck_api")
    try:
        found = detect_revision(inc)
    except UsageError:
        return  # headers of no known revision: let the compiler speak
    if emitted and found != emitted:
        raise UsageError(f"the CK Tile headers under {inc} are CK API {found}, but the directory was emitted for "
                         f"{emitted}; re-emit with --ck-api {found} (or --ck-api auto --ck-include {inc})")


def build(out_dir: str | Path, jobs: int | None = None, offload_archs: Sequence[str] | None = None,
          compiler: str | None = None, launcher: str | None = None, ck_include: str | Path | None = None,
          progress: Callable[[int, int, str], None] | None = None, log: Callable[[str], None] | None = None,
          env: Mapping[str, str] | None = None, deadline: float | None = None,
          measure: Path | None = None, isa: bool = False, compile_timeout: float | None = None) -> BuildResult:
    """Run ninja over an emitted directory; return the outcome (failures mapped to kernels).

    `deadline` (time.monotonic()): ninja is stopped then, as on Ctrl-C but without raising; the result says
    `stopped`, and the next build resumes. `measure`: a file that gets one line per compile with its peak memory
    (ckspace/codegen/rusage.py is put in front of each compile). `isa`: each unit is compiled to assembly, kept next
    to its object (`<unit>.s`), and assembled into the object (rusage.py --isa). `compile_timeout` (seconds, with
    `measure` or `isa`): a compile running longer is killed and fails with rusage.py's TIMEOUT_TEXT line."""
    root = Path(out_dir)
    if not root.is_dir():
        raise UsageError(f"{root}: no such directory (emit into it first: ckspace emit ... -o {root})")
    with F.locked(root):
        return _build_locked(root, jobs, offload_archs, compiler, launcher, ck_include, progress, log, env,
                             deadline, measure, isa, compile_timeout)


MEASURE = Path(__file__).with_name("rusage.py")


def _build_locked(root: Path, jobs, offload_archs, compiler, launcher, ck_include, progress, log, env,
                  deadline: float | None = None, measure: Path | None = None, isa: bool = False,
                  compile_timeout: float | None = None) -> BuildResult:
    _remove_leftover_temps(root)  # before writing anything: a killed build's half-written files
    data, archs, tc = prepare(root, offload_archs, compiler, launcher, ck_include, log)
    from .emit import object_path

    objects = [object_path(a, u) for a in archs for u in data["units"]]
    ninja = find_ninja()
    cmd = [ninja, "-C", str(root), "-k", "0"]
    if jobs:
        cmd += ["-j", str(jobs)]
    launch = resolve_launcher(launcher)
    if measure is not None or isa:
        # absolute paths: ninja runs every compile in DIR, where a relative one would name another file (or none)
        launch = [sys.executable, os.path.abspath(MEASURE), *(["--isa"] if isa else []),
                  *(["--timeout", f"{compile_timeout:g}"] if compile_timeout is not None else []),
                  os.path.abspath(measure) if measure is not None else os.devnull, *launch]
    run_env = {**os.environ, **(env or {}), "NINJA_STATUS": f"{STATUS_PREFIX}%f %t %r] ",
               "CKSPACE_LAUNCHER": _shell_join(launch)}
    if launcher and Path(launcher).name == "distcc":
        # a CK compile unit takes minutes; distcc gives up on a silent server after 300 s by default
        run_env.setdefault("DISTCC_IO_TIMEOUT", "3600")
    started = time.perf_counter()
    result = BuildResult(root, archs, objects, toolchain=tc.description)
    proc = _start_ninja(cmd, run_env)
    output: list[str] = []
    timer = _stop_at(deadline, proc)
    try:
        _follow(proc, output, progress)
    except BaseException:  # Ctrl-C, SIGTERM (Terminated), or an error here: no compiler may outlive this build
        with deferred():  # a second Ctrl-C must not cut the stopping short
            stop_session(proc)
            _remove_leftover_temps(root)
        raise
    finally:
        if timer is not None:
            timer.cancel()
    if timer is not None and timer.fired:
        with deferred():
            stop_session(proc)
            _remove_leftover_temps(root)
        result.stopped = True
        result.seconds = time.perf_counter() - started
        result.log = _write_log(root, cmd, output)
        # a compile that ninja stopped is no failure; one that failed before the deadline is
        result.failures = [f for f in parse_failures(output, data) if not _was_stopped(f)]
        result.built = sum(1 for o in objects if (root / o).is_file())
        return result
    if proc.returncode in (130, -signal.SIGINT, -signal.SIGTERM) or any("interrupted by user" in line
                                                                         for line in output[-3:]):
        # ninja was stopped by a signal that was not ours (someone signalled it directly): the same outcome as a
        # Ctrl-C seen here
        with deferred():
            stop_session(proc)
            _remove_leftover_temps(root)
        raise KeyboardInterrupt
    result.seconds = time.perf_counter() - started
    result.log = _write_log(root, cmd, output)
    result.failures = parse_failures(output, data)
    if proc.returncode != 0 and not result.failures:
        tail = "\n".join(output[-5:])
        result.failures = [Failure("(ninja)", "", [], tail or f"ninja exited with {proc.returncode}")]
    result.built = sum(1 for o in objects if (root / o).is_file())
    return result


class _Deadline:
    """A timer that stops ninja (SIGTERM to its group: ninja stops its compiles and exits) at a monotonic time."""

    def __init__(self, deadline: float, proc: subprocess.Popen):
        import threading

        self.fired = False
        self._proc = proc
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        if self._proc.poll() is None:
            self.fired = True
            _signal_group(self._proc.pid, signal.SIGTERM)

    def cancel(self) -> None:
        self._timer.cancel()


def _stop_at(deadline: float | None, proc: subprocess.Popen) -> _Deadline | None:
    return None if deadline is None else _Deadline(deadline, proc)


def _was_stopped(failure: Failure) -> bool:
    """A unit whose compiler ended by ninja's SIGTERM (or our SIGKILL after it), not by an error of its own."""
    return not _ERROR.search(failure.error)


def _follow(proc: subprocess.Popen, output: list[str], progress: Callable[[int, int, str], None] | None) -> None:
    """Read ninja's output until it exits: status lines go to `progress`, the rest to `output`."""
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip("\n")
        if line.startswith(STATUS_PREFIX):
            head, _, desc = line[len(STATUS_PREFIX):].partition("] ")
            try:
                finished, total, running = (int(x) for x in head.split())
            except ValueError:
                output.append(line)
                continue
            if progress:  # ninja (in a pipe) says a step when it ends: the ones still running are `running`
                progress(finished, total, f"{running} running · done: {desc}" if running else f"done: {desc}")
            continue
        output.append(line)
    proc.wait()


# ---- ninja's processes --------------------------------------------------------------------------------------------
def _start_ninja(cmd: Sequence[str], env: Mapping[str, str]) -> subprocess.Popen:
    # A session of its own: a terminal's Ctrl-C reaches ckspace only, which stops the build in order (below), and
    # every process of the build (ninja puts each compile in a process group of its own) carries the session id by
    # which stop_session finds it.
    return subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            env=dict(env), start_new_session=True, preexec_fn=_terminate_with_parent())


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _terminate_with_parent() -> Callable[[], None] | None:
    """Linux: a function for the child, before exec, that has the kernel send it SIGTERM when ckspace dies, also by
    SIGKILL (which no handler of ours sees); ninja then stops its compiles as on any SIGTERM. None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def request() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # ckspace died before the request was in place
            os.kill(os.getpid(), signal.SIGTERM)

    return request


def stop_session(proc: subprocess.Popen, grace: float = STOP_GRACE_SECONDS) -> None:
    """End ninja (the leader of a session of its own) and every process of its session, and reap ninja.

    SIGTERM first: ninja passes it on to the process group of each running compile and waits for them (a compiler
    removes its output file on SIGTERM). Whatever is still there after `grace` seconds (a compile that ignores
    SIGTERM, and ninja waiting for it; everything, should ninja have died first) gets SIGKILL.
    """
    if proc.poll() is None:
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    _kill_session(proc.pid)
    proc.wait()


def _kill_session(session: int) -> None:
    """SIGKILL to every process of the session until none is left (or REAP_SECONDS have passed: a process stuck in
    the kernel dies when it leaves it)."""
    deadline = time.monotonic() + REAP_SECONDS
    while True:
        left = session_members(session)
        for pid in left:
            _signal_process(pid, signal.SIGKILL)
        _signal_group(session, signal.SIGKILL)  # where there is no /proc, the leader's group is all that is found
        if not left or time.monotonic() > deadline:
            return
        time.sleep(0.01)


def session_members(session: int) -> list[int]:
    """The live processes (not zombies) whose session id is `session`, from /proc; [] where there is no /proc."""
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:  # gone meanwhile
            continue
        # after the command name (which may hold spaces and parentheses): state ppid pgrp session ...
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 3 and fields[0] != b"Z" and int(fields[3]) == session:
            members.append(int(name))
    return members


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_process(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _write_log(root: Path, cmd: Sequence[str], output: Sequence[str]) -> Path | None:
    """ninja's whole output (compiler messages included) in DIR/.ckspace/build.log."""
    path = root / ".ckspace" / "build.log"
    try:
        path.parent.mkdir(exist_ok=True)
        M.atomic_write(path, ("$ " + " ".join(cmd) + "\n" + "\n".join(output) + "\n").encode())
    except OSError:
        return None
    return path


_FAILED = re.compile(r"^FAILED: (?:\[code=(\d+)\] )?(\S+)")
_ERROR = re.compile(r"(?:^|\s)(?:fatal )?error: ")


def parse_failures(lines: Sequence[str], data: Mapping) -> list[Failure]:
    """ninja's FAILED blocks -> failures per unit and arch, with the kernels involved and the first error."""
    units: Mapping[str, list[str]] = data.get("units", {})  # the manifest's compile units: unit -> kernel names
    by_stem = {Path(u).stem: u for u in units}
    failures: list[Failure] = []
    i = 0
    while i < len(lines):
        m = _FAILED.match(lines[i])
        if not m:
            i += 1
            continue
        code, out = m.group(1), m.group(2)
        j = i + 1
        block: list[str] = []
        while j < len(lines) and not _FAILED.match(lines[j]) and not lines[j].startswith("ninja: "):
            block.append(lines[j])
            j += 1
        parts = Path(out).parts
        arch = parts[1] if len(parts) >= 3 and parts[0] == "obj" else ""
        stem = Path(out).stem
        unit = by_stem.get(stem, out)
        # a compile killed at verify's --compile-timeout, or one whose compiler could not start (rusage.py's line),
        # else the compiler's first error
        first = next((b.strip() for b in block if b.startswith((TIMEOUT_TEXT, *CANNOT_START))), "") or \
            next((b.strip() for b in block if _ERROR.search(b)), "")
        if not first:
            first = next((b.strip() for b in block[1:] if b.strip()), "")
            first = first or f"exit code {code or '?'} and no compiler message"
        names = units.get(unit, [])
        failures.append(Failure(unit, arch, culprits(block, names), _shorten(first)))
        i = j
    return failures


# A diagnostic's location: `path/to/file.hpp:LINE:COL: note: in instantiation of ... requested here`.
_LOCATED = re.compile(r"^\s*(?P<file>[^\s:]+\.hpp):\d+:\d+: (?P<kind>fatal error|error|note|warning): (?P<text>.*)")


def culprits(block: Sequence[str], names: Sequence[str]) -> list[str]:
    """The kernels of a unit that a compiler error belongs to.

    A unit includes every kernel header, and CK Tile's own headers only once (include guards), so an error inside
    CK Tile shows the first kernel's header in its "In file included from" chain whichever kernel instantiated the
    failing template. The instantiation notes ("in instantiation of ... requested here") are located in the header
    of the kernel that did; failing those, the kernel header an error is located in; failing that, every kernel
    header the output mentions; failing that, the whole unit."""
    known = set(names)
    instantiated: list[str] = []
    located: list[str] = []
    for line in block:
        m = _LOCATED.match(line)
        if not m:
            continue
        stem = Path(m.group("file")).stem
        if stem not in known:
            continue
        if m.group("kind") == "note" and ("in instantiation of" in m.group("text") or "requested here" in m.group("text")):
            instantiated.append(stem)
        elif m.group("kind").endswith("error"):
            located.append(stem)
    for found in (instantiated, located):
        if found:
            return list(dict.fromkeys(found))
    text = "\n".join(block)
    return [n for n in names if f"{n}.hpp" in text] or list(names)


def _shorten(text: str, limit: int = 400) -> str:
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- object checks ------------------------------------------------------------------------------------------------
EM_AMDGPU = 0xE0
# EF_AMDGPU_MACH values (llvm/BinaryFormat/ELF.h)
MACH = {"gfx900": 0x2C, "gfx906": 0x2F, "gfx908": 0x30, "gfx90a": 0x3F, "gfx940": 0x40, "gfx941": 0x4B,
        "gfx942": 0x4C, "gfx950": 0x4F, "gfx1030": 0x36, "gfx1100": 0x41, "gfx1101": 0x46, "gfx1102": 0x47,
        "gfx1200": 0x48, "gfx1201": 0x4E, "gfx1250": 0x49}
EF_AMDGPU_MACH = 0xFF


def demangle(names: Iterable[str]) -> dict[str, str]:
    """Itanium C++ demangling: libstdc++'s __cxa_demangle (ctypes) first, then llvm-cxxfilt or c++filt (binutils, a
    dependency of clang) in one batch for what it cannot read (older libstdc++ lacks e.g. _Float16, `DF16_`)."""
    names = list(names)
    demangler = _demangler()
    out = {n: demangler(n) for n in names}
    left = [n for n, d in out.items() if d == n and n.startswith("_Z")]
    tool = shutil.which("llvm-cxxfilt") or shutil.which("c++filt")
    if left and tool:
        proc = subprocess.run([tool], input="\n".join(left) + "\n", capture_output=True, text=True)
        lines = proc.stdout.splitlines()
        if proc.returncode == 0 and len(lines) == len(left):
            out.update(zip(left, lines))
    return out


def _make_demangler():
    import ctypes
    import ctypes.util

    for lib in ("libstdc++.so.6", ctypes.util.find_library("stdc++")):
        if not lib:
            continue
        try:
            cxx = ctypes.CDLL(lib)
            fn = cxx.__cxa_demangle
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.free.argtypes = [ctypes.c_void_p]

        def run(name: str, fn=fn, libc=libc) -> str:
            status = ctypes.c_int()
            ptr = fn(name.encode(), None, None, ctypes.byref(status))
            if status.value != 0 or not ptr:
                return name
            try:
                return ctypes.string_at(ptr).decode(errors="replace")
            finally:
                libc.free(ptr)

        return run
    return lambda name: name


KERNEL_CLASS = {"forward": "GroupedConvolutionForwardKernel", "bwd_data": "GroupedConvolutionBackwardDataKernel",
                "bwd_weight": "GroupedConvolutionBackwardWeightKernel", "forward_depthwise": "GroupedConvolutionForwardKernel"}
SPEC_INDEX = {"default": 0, "filter1x1_pad0": 1, "filter1x1_stride1_pad0": 2, "filter3x3": 3}
SCHED_INDEX = {"intrawave": 1, "interwave": 2}  # GemmPipelineScheduler: Default, Intrawave, Interwave
PIPELINE_CLASS = {"compv1": "GemmPipelineAGmemBGmemCRegV1", "basic_v1": "GemmPipelineAGmemBGmemCRegV1",
                  "mem": "GemmPipelineAgBgCrMem", "compv3": "GemmPipelineAgBgCrCompV3",
                  "compv4": "GemmPipelineAgBgCrCompV4", "compv5": "GemmPipelineAgBgCrCompV5",
                  "compv6": "GemmPipelineAgBgCrCompV6", "comp_async": "GemmPipelineAgBgCrCompAsync",
                  "basic_async_v1": "GemmPipelineAGmemBGmemCRegAsyncV1", "wavelet": "GemmPipelineAgBgCrWavelet"}


_demangler = cached("codegen.build.demangler", maxsize=1)(_make_demangler)  # one demangler a process


def kernel_signature(k: Mapping[str, object]) -> list[str]:
    """Fragments the demangled name of each of a kernel's device entry points contains."""
    v = str(k["variant"])
    if v == "forward_depthwise":
        return [f"ns_{k['name']}::DepthwiseNullEpilogue"]
    dsb = "true" if k["double_smem_buffer"] else "false"
    split = "true" if k["split_image"] else "false"
    return [
        f"ck_tile::kentry<{k['block_per_cu']}, ck_tile::{KERNEL_CLASS[v]}<ck_tile::GroupedConvTraits<{k['ndim']}, "
        f"(ck_tile::ConvolutionSpecialization){SPEC_INDEX[str(k['specialization'])]}, ",
        f", {k['vec_a']}, {k['vec_b']}, {k['vec_c']}, {k['num_groups_to_merge']}, {split}",
        f"ck_tile::TileGemmShape<ck_tile::sequence<{k['tile_m']}, {k['tile_n']}, {k['tile_k']}>, "
        f"ck_tile::sequence<{k['wave_m']}, {k['wave_n']}, {k['wave_k']}>, "
        f"ck_tile::sequence<{k['warp_tile_m']}, {k['warp_tile_n']}, {k['warp_tile_k']}>",
        f"ck_tile::{PIPELINE_CLASS[str(k['pipeline'])]}<ck_tile::UniversalGemmPipelineProblem<",
        f"ck_tile::TileGemmUniversalTraits<true, true, true, {dsb}, ",
        f"(ck_tile::GemmPipelineScheduler){SCHED_INDEX[str(k['scheduler'])]}",
    ]


@dataclass
class ObjectCheck:
    obj: str
    arch: str
    ok: bool
    flags: int = 0
    entry_points: int = 0
    problems: list[str] = field(default_factory=list)


def check_objects(out_dir: str | Path, archs: Sequence[str] | None = None) -> list[ObjectCheck]:
    """Each object: an AMDGPU ELF for its arch (e_flags), holding an entry point for every kernel of its unit."""
    from .emit import object_path

    root = Path(out_dir)
    data = M.require(root)
    archs = list(archs or data.get("build_archs") or [data["arch"]])
    kernels = data["kernels"]
    out: list[ObjectCheck] = []
    for arch in archs:
        for unit, names in data["units"].items():
            rel = object_path(arch, unit)
            chk = ObjectCheck(rel, arch, False)
            out.append(chk)
            path = root / rel
            if not path.is_file():
                chk.problems.append("missing")
                continue
            try:
                elf = read_elf(path)
            except CkspaceError as exc:
                chk.problems.append(str(exc))
                continue
            chk.flags = elf.flags
            if elf.machine != EM_AMDGPU:
                chk.problems.append(f"e_machine {elf.machine:#x}, not AMDGPU")
            want = MACH.get(arch.split(":")[0])
            if want is not None and elf.flags & EF_AMDGPU_MACH != want:
                chk.problems.append(f"e_flags {elf.flags:#x}: machine {elf.flags & EF_AMDGPU_MACH:#x}, "
                                    f"{arch} is {want:#x}")
            names_kd = {sym.name for sym in elf.symbols if sym.name.endswith(".kd")}
            entries = [sym.name for sym in elf.symbols if sym.type == 2 and f"{sym.name}.kd" in names_kd]  # STT_FUNC with a descriptor
            chk.entry_points = len(entries)
            found = kernel_entry_points({name: kernels[name]["fields"] for name in names}, entries)
            for name in names:
                if not found[name]:
                    chk.problems.append(f"no kernel entry point for {name}")
            chk.ok = not chk.problems
    return out


def kernel_entry_points(kernels: Mapping[str, Mapping[str, object]], symbols: Sequence[str]) -> dict[str, list[str]]:
    """The entry points (mangled symbols) of each kernel (name -> fields, as the manifest has them): those whose
    demangled name holds every fragment of the kernel's signature."""
    demangled = demangle(symbols)
    out: dict[str, list[str]] = {}
    for name, fields in kernels.items():
        frags = kernel_signature({**fields, "name": name})
        out[name] = [s for s in symbols if all(f in demangled[s] for f in frags)]
    return out
