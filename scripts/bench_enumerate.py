#!/usr/bin/env python3
"""Benchmark of `ckspace enumerate` against the issue's targets (whole-process wall time, fresh cache dir).

Targets: cold `enumerate --arch gfx950 --format names > /dev/null` <= 2 s; the same again (cached) <= 0.5 s;
`--count` <= 1 s. Prints the figures and the time split reported by --timings.
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
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CKSPACE_CACHE_DIR": cache}
        rows = [
            ("enumerate cold", ["enumerate", "--arch", arch, "--format", "names"], 2.0),
            ("enumerate cached", ["enumerate", "--arch", arch, "--format", "names"], 0.5),
            ("count cold", ["enumerate", "--arch", arch, "--count", "--no-cache"], 1.0),
            # The open hardware space has no target in the issue beyond "reasonable"; the README states this figure.
            ("open count cold", ["enumerate", "--arch", arch, "--rules", "-ck-curation", "--count", "--no-cache"], 60.0),
        ]
        print(f"{'run':<20} {'seconds':>8} {'target':>7}  split")
        for label, args, target in rows:
            elapsed, split = run(args, env)
            mark = "ok" if elapsed <= target else "OVER"
            print(f"{label:<20} {elapsed:8.2f} {target:7.1f}  {mark:4}  {split}")


if __name__ == "__main__":
    main()
