#!/usr/bin/env python3
"""Benchmark of streaming enumeration of the open hardware space (`--rules -ck-curation`), whole process.

    python scripts/bench_stream.py          # gfx950: all variants, each variant alone, two with unlinked fields pinned
    python scripts/bench_stream.py --lines 50000 --variant bwd_weight --variant forward_depthwise

Each run is `ckspace enumerate --arch ARCH --rules -ck-curation --format names --no-cache [--variant V]`, read
through a pipe like `| head -n LINES`: the reader closes the pipe after LINES lines. Printed per run:

  first    seconds from process start to the first name
  lines/s  rate from the first line to the last line read
  slowest  the lowest rate over any tenth of the lines (a steady stream has it close to lines/s)
  total    seconds to LINES lines
  exit     seconds from closing the pipe to the process's exit (a broken pipe must end it quickly and quietly)
  rss      peak resident memory of the process (getrusage of the reaped child), MB
  stderr   what the process wrote to stderr (must be empty: no traceback on a broken pipe)

Targets we set ourselves (the issue only asks that enumeration stream): first line within a few seconds, a steady
rate, peak RSS of a few hundred MB at most, exit within a second of the pipe closing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

FIRST_TARGET = 5.0  # seconds
RSS_TARGET = 400.0  # MB
EXIT_TARGET = 1.0  # seconds


# Fields no rule links to any other (a few values each): unpinned, they vary fastest, so that a GEMM stream repeats
# each row of the large bags for thousands of their combinations. Pinned, every line needs a new row of the large
# bags: the hard case for the lazy walk.
UNLINKED_PINS = ("num_groups_to_merge == 1 and specialization == 'default' and num_wave_groups == 1 and not pad_k "
                 "and not pad_n and not pad_m and not split_image and not explicit_gemm and not two_stage")
RUNS = [("all variants", None, None), ("forward", "forward", None), ("bwd_data", "bwd_data", None),
        ("bwd_weight", "bwd_weight", None), ("forward_depthwise", "forward_depthwise", None),
        ("bwd_weight pinned", "bwd_weight", UNLINKED_PINS), ("forward pinned", "forward", UNLINKED_PINS)]


def stream(arch: str, label: str, variant: str | None, where: str | None, lines: int,
           env: dict[str, str]) -> dict[str, object]:
    args = [sys.executable, "-m", "ckspace", "enumerate", "--arch", arch, "--rules", "-ck-curation",
            "--format", "names", "--no-cache"]
    if variant:
        args += ["--variant", variant]
    if where:
        args += ["--where", where]
    err = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, env=env, bufsize=1 << 16)
    assert proc.stdout is not None
    first = last = None
    n = 0
    names = set()
    window = max(lines // 10, 1)
    marks: list[float] = []  # time at every tenth of the lines: the rate must stay steady, not only on average
    for line in proc.stdout:
        n += 1
        now = time.perf_counter()
        if first is None:
            first = now
        last = now
        names.add(hash(line))
        if n % window == 0:
            marks.append(now)
        if n >= lines:
            break
    closed = time.perf_counter()
    proc.stdout.close()  # what head does after its last line: the writer gets SIGPIPE / EPIPE
    _, status, usage = os.wait4(proc.pid, 0)
    exited = time.perf_counter()
    proc.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    stderr = err.read().decode(errors="replace").strip()
    span = (last - first) if first is not None and last is not None else 0.0
    rates = [window / (b - a) for a, b in zip([first or 0.0, *marks], marks) if b > a]
    return {
        "run": label,
        "lines": n,
        "distinct": len(names) == n,
        "first": (first - t0) if first is not None else float("nan"),
        "rate": (n - 1) / span if span > 0 else float("nan"),
        "slowest": min(rates) if rates else float("nan"),
        "total": closed - t0,
        "exit": exited - closed,
        "rss": usage.ru_maxrss / 1024,  # KB on Linux
        "rc": proc.returncode,
        "stderr": stderr,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="gfx950")
    ap.add_argument("--lines", type=int, default=200_000, help="names to read before closing the pipe")
    ap.add_argument("--variant", action="append", help="runs to make, one per variant (default: see RUNS)")
    args = ap.parse_args()
    runs = [(v, v, None) for v in args.variant] if args.variant else RUNS
    bad = 0
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CKSPACE_CACHE_DIR": cache}
        print(f"{args.arch} --rules -ck-curation --format names | head -n {args.lines}")
        print(f"{'run':<18} {'lines':>8} {'first s':>8} {'lines/s':>8} {'slowest':>8} {'total s':>8} {'exit s':>7} "
              f"{'rss MB':>7}  ok")
        for label, variant, where in runs:
            r = stream(args.arch, label, variant, where, args.lines, env)
            ok = (r["lines"] == args.lines and r["distinct"] and r["first"] <= FIRST_TARGET  # type: ignore[operator]
                  and r["rss"] <= RSS_TARGET and r["exit"] <= EXIT_TARGET and not r["stderr"]  # type: ignore[operator]
                  and r["rc"] in (0, -13))  # -13: ended by SIGPIPE, as `head` expects
            bad += not ok
            print(f"{r['run']:<18} {r['lines']:>8} {r['first']:8.2f} {r['rate']:8.0f} {r['slowest']:8.0f} {r['total']:8.2f} "
                  f"{r['exit']:7.2f} {r['rss']:7.0f}  {'ok' if ok else 'NO'}"
                  + (f"  rc={r['rc']}" if r["rc"] not in (0, -13) else "")
                  + (f"  stderr: {r['stderr'][-200:]!r}" if r["stderr"] else ""))
    print(f"targets: first line <= {FIRST_TARGET:g} s, peak RSS <= {RSS_TARGET:g} MB, exit <= {EXIT_TARGET:g} s after the "
          "pipe closes, nothing on stderr, all lines distinct")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
