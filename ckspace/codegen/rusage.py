"""`python3 rusage.py [--isa] [--timeout SECONDS] LOG CMD...`: run one compile and append what it cost to LOG.

ckspace verify puts this file in front of every compile (as the launcher of build.ninja's compile rule), so that each
kernel's report has the compile's peak memory. One line per compile, written in a single O_APPEND write so that
parallel compiles never interleave: `<output>\t<peak KiB>\t<seconds>\t<exit status>`. A compile stopped by SIGINT
or SIGTERM gets its line when the signal comes: peak 0, the seconds so far and the negative signal number. The output is the `-o`
argument without ninja's `.tmp` suffix, as named in build.ninja. LOG must be absolute (ckspace passes it so): ninja
runs the compile in the emitted directory. A LOG that cannot be written is said on stderr (ninja's output), and the
compile's own status is returned all the same.

The peak is the ru_maxrss that wait4 reports for the compiler: the largest resident set of the compiler and of any
process it waited for (clang's cc1, when it runs out of process). It is standalone (no ckspace import): it starts
once per compile.

With --isa (ckspace verify passes it), the compile `CMD... -c SRC -o OBJ.tmp` runs as two commands: the same compile
with -S instead of -c, which writes the unit's AMDGPU assembly (OBJ with `.s` for `.o`, through `<that>.tmp`), then
the same compiler assembling that text into OBJ.tmp (`-x assembler --target=amdgcn-amd-amdhsa -mcpu=ARCH`, ARCH from
--offload-arch, without the dependency options). The object is the one `-c` writes (the same code, descriptors and
metadata note), and the assembly is what ckspace verify reads the ISA from (ckspace/codegen/isa.py): the assembly
step costs a fraction of a second against the compile's tens of seconds, where a second compile would double the
cost. A stale assembly is removed first, and a new one is renamed into place only once the object is assembled. A
command of another form runs as it is. The line gives the larger peak of the two and the sum of their seconds.
"""

import os
import signal
import sys
import time


def _output(cmd):
    for i, arg in enumerate(cmd[:-1]):
        if arg == "-o":
            out = cmd[i + 1]
            return out[:-4] if out.endswith(".tmp") else out
    return "?"


def isa_commands(cmd):
    """(compile to assembly, assemble, assembly path) for `CMD... -c SRC -o OUT`, or None for another command."""
    try:
        c, o = cmd.index("-c"), cmd.index("-o")
    except ValueError:
        return None
    arch = next((a.split("=", 1)[1] for a in reversed(cmd) if a.startswith("--offload-arch=")), None)
    if arch is None or o + 1 >= len(cmd) or c + 1 >= len(cmd) or cmd[c + 1].startswith("-"):
        return None
    out = cmd[o + 1]
    base = out[:-4] if out.endswith(".tmp") else out
    asm = (base[:-2] if base.endswith(".o") else base) + ".s"
    to_asm = list(cmd)
    to_asm[c] = "-S"
    to_asm[o + 1] = asm + ".tmp"
    assemble, skip = [], False
    for i, a in enumerate(cmd):
        if skip:
            skip = False
        elif a in ("-MF", "-MT", "-MQ"):
            skip = True
        elif a not in ("-MD", "-MMD", "-c", "-o") and i not in (c + 1, o + 1):
            assemble.append(a)
    assemble += ["-Wno-unused-command-line-argument", "-x", "assembler", "--target=amdgcn-amd-amdhsa",
                 f"-mcpu={arch}", "-c", asm + ".tmp", "-o", out]
    return to_asm, assemble, asm


CANNOT_START = ("rusage.py: cannot fork", "rusage.py: cannot run ")  # no compiler ran (ckspace verify: no verdict)
TIMEOUT_EXIT = 124  # as timeout(1)
TIMEOUT_TEXT = "rusage.py: compile stopped after"


class _Clock:
    """The time left to the compile steps, and whether it ran out."""

    def __init__(self, seconds):
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.expired = False


def _run(cmd, clock=None):
    """Run `cmd` as a child; (its exit status, its peak KiB). Past the clock's deadline the child is killed."""
    try:
        pid = os.fork()
    except OSError as exc:
        sys.stderr.write(f"rusage.py: cannot fork: {exc}\n")
        return 127, 0
    if pid == 0:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(cmd[0], cmd)
        except OSError as exc:
            sys.stderr.write(f"rusage.py: cannot run {cmd[0]}: {exc.strerror}\n")
        os._exit(127)
    if clock is not None and clock.deadline is not None:
        while True:  # poll: a signal-free wait that works beside the stop handlers above
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status), usage.ru_maxrss
            if time.monotonic() >= clock.deadline:
                clock.expired = True
                _kill_tree(pid)
                _, status, usage = os.wait4(pid, 0)
                return TIMEOUT_EXIT, usage.ru_maxrss
            time.sleep(0.05)
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss


def _kill_tree(pid):
    """SIGKILL a process and every process below it (the compiler driver's own children: the linker, the bundler),
    read from /proc; where /proc cannot be read, the process alone."""
    parents = {}
    try:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as f:
                        stat = f.read().decode("ascii", "replace")
                except OSError:
                    continue
                parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])  # the field after the state
    except OSError:
        pass
    tree, frontier = [pid], [pid]
    while frontier:
        frontier = [child for child, parent in parents.items() if parent in frontier]
        tree += frontier
    for member in reversed(tree):
        try:
            os.kill(member, signal.SIGKILL)
        except OSError:
            pass


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def main(argv):
    isa = bool(argv) and argv[0] == "--isa"
    if isa:
        argv = argv[1:]
    timeout = None
    if len(argv) >= 2 and argv[0] == "--timeout":
        try:
            timeout = float(argv[1])
        except ValueError:
            sys.stderr.write(f"rusage.py: --timeout takes seconds, not {argv[1]!r}\n")
            return 2
        argv = argv[2:]
    if len(argv) < 2:
        sys.stderr.write("usage: rusage.py [--isa] [--timeout SECONDS] LOG CMD...\n")
        return 2
    log, cmd = argv[0], argv[1:]
    started = time.monotonic()
    # ninja stops a compile by signalling its process group, which holds the compiler too: wait for it to end (and
    # start nothing after it). The line (how long it ran, and the signal) is written at once: a compiler slow to end
    # takes this wrapper with it when ckspace's SIGKILL follows the grace period, and verify keeps that time (an
    # attempt that the next run orders last).
    stopped = []

    def stop(signum, _frame):
        if not stopped:
            _log_line(log, f"{_output(cmd)}\t0\t{time.monotonic() - started:.2f}\t{-signum}\n".encode())
        stopped.append(signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    steps = isa_commands(cmd) if isa else None
    clock = _Clock(timeout)
    if steps is None:
        code, peak = _run(cmd, clock)
    else:
        to_asm, assemble, asm = steps
        _remove(asm)  # never an assembly of another text next to this object
        code, peak = _run(to_asm, clock)
        if code == 0 and stopped:
            code = -stopped[0]
        if code == 0:
            code, more = _run(assemble, clock)
            peak = max(peak, more)
        if code == 0:
            os.replace(asm + ".tmp", asm)
        else:
            _remove(asm + ".tmp")
    if clock.expired:
        _remove(_output(cmd) + ".tmp")  # the killed compile's partial object
        sys.stderr.write(f"{TIMEOUT_TEXT} {timeout:g} s (--compile-timeout): no verdict\n")
    if not stopped:  # a stopped compile's line was written by `stop`
        seconds = time.monotonic() - started
        _log_line(log, f"{_output(cmd)}\t{peak}\t{seconds:.2f}\t{code}\n".encode())
    return code if code >= 0 else 128 - code


def _log_line(log, line):
    """Append one line to the compile log in a single O_APPEND write."""
    try:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError as exc:
        # the measurement is a report, never a reason to fail a compile; but not a silent loss either: this line
        # lands in ninja's output (DIR/.ckspace/build.log), and ckspace verify says once that compiles went unmeasured
        sys.stderr.write(f"rusage.py: cannot write {log}: {exc.strerror or exc}\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
