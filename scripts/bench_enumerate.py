#!/usr/bin/env python3
"""Benchmark of `ckspace enumerate` against the issue's targets (whole-process wall time, fresh cache dir).

Targets: cold `enumerate --arch gfx950 --format names > /dev/null` <= 2 s; the same again (cached) <= 0.5 s;
`--count` <= 1 s; per catalog the same targets; the open-space count (warp_tile_k free) <= 30 s. Prints the figures,
the time split reported by --timings and the load average.

usage: scripts/bench_enumerate.py [ARCH] [CATALOG ...]   (default gfx950 full ck-default ck-rdna)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time


def run(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ckspace", *args, "--timings"], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}: {proc.stderr.strip()}")
    return elapsed, proc.stderr.strip().splitlines()[-1]


def main() -> None:
    arch = sys.argv[1] if len(sys.argv) > 1 else "gfx950"
    catalogs = sys.argv[2:] or ["full", "ck-default", "ck-rdna"]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CKSPACE_CACHE_DIR": cache}
        rows = []
        for cat in catalogs:
            rows += [
                (f"{cat} enumerate cold", ["enumerate", "--arch", arch, "--set", cat, "--format", "names"], 2.0),
                (f"{cat} enumerate cached", ["enumerate", "--arch", arch, "--set", cat, "--format", "names"], 0.5),
                (f"{cat} count cold", ["enumerate", "--arch", arch, "--set", cat, "--count", "--no-cache"], 1.0),
            ]
        # Issue "The real kernel space": opening warp_tile_k must not slow the open-space count beyond 30 s.
        rows.append(("open count cold", ["enumerate", "--arch", arch, "--rules", "-ck-curation", "--count", "--no-cache"], 30.0))
        print(f"arch {arch} · load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} · {os.cpu_count()} cores")
        print(f"{'run':<26} {'seconds':>8} {'target':>7}  split")
        for label, args, target in rows:
            elapsed, split = run(args, env)
            mark = "ok" if elapsed <= target else "OVER"
            print(f"{label:<26} {elapsed:8.2f} {target:7.1f}  {mark:4}  {split}")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
