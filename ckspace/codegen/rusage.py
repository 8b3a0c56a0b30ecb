"""`python3 rusage.py LOG CMD...`: run one compile and append what it cost to LOG.

ckspace verify puts this file in front of every compile (as the launcher of build.ninja's compile rule), so that each
kernel's report has the compile's peak memory. One line per compile, written in a single O_APPEND write so that
parallel compiles never interleave: `<output>\t<peak KiB>\t<seconds>\t<exit status>`. The output is the `-o`
argument without ninja's `.tmp` suffix, as named in build.ninja. LOG must be absolute (ckspace passes it so): ninja
runs the compile in the emitted directory. A LOG that cannot be written is said on stderr (ninja's output), and the
compile's own status is returned all the same.

The peak is the ru_maxrss that wait4 reports for the compiler: the largest resident set of the compiler and of any
process it waited for (clang's cc1, when it runs out of process). It is standalone (no ckspace import): it starts
once per compile.
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


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: rusage.py LOG CMD...\n")
        return 2
    log, cmd = argv[0], argv[1:]
    # ninja stops a compile by signalling its process group, which holds the compiler too: wait for it to end
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    started = time.monotonic()
    try:
        pid = os.fork()
    except OSError as exc:
        sys.stderr.write(f"rusage.py: cannot fork: {exc}\n")
        return 127
    if pid == 0:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(cmd[0], cmd)
        except OSError as exc:
            sys.stderr.write(f"rusage.py: cannot run {cmd[0]}: {exc.strerror}\n")
        os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.monotonic() - started
    code = os.waitstatus_to_exitcode(status)
    line = f"{_output(cmd)}\t{usage.ru_maxrss}\t{seconds:.2f}\t{code}\n".encode()
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
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
