#!/usr/bin/env python3
"""Benchmark of the selected sets against the issue's targets (whole-process wall time, fresh cache dir).

Targets: `enumerate --set tests --arch gfx950` <= 60 s cold, `--set tiny` <= 10 s cold; warm runs come from the
cache. "Cold" is a fresh cache dir, so it includes enumerating `full`. Prints the figures, then what the solver
proved about each set (size, proven lower bound, optimality, solve time) and a determinism check (two cold runs
give the same names).

    python3 scripts/bench_select.py [ARCH]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time


def _command(set_name: str, arch: str, env: dict[str, str]) -> list[str]:
    """`ckspace enumerate --set S` once ckspace.cli wires the sets in; until then the stand-alone entry."""
    probe = subprocess.run([sys.executable, "-m", "ckspace", "enumerate", "--help"], env=env, capture_output=True, text=True)
    if "--stable-from" in probe.stdout:
        return [sys.executable, "-m", "ckspace", "enumerate", "--arch", arch, "--set", set_name, "--format", "names"]
    return [sys.executable, "-m", "ckspace", "enumerate", "--arch", arch, "--set", set_name]


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}: {proc.stderr.strip()}")
    return elapsed, proc.stdout


def stats(set_name: str, arch: str, env: dict[str, str]) -> dict:
    proc = subprocess.run([sys.executable, "-m", "ckspace", "coverage", "--set", set_name, "--arch", arch,
                           "--format", "json"], env=env, capture_output=True, text=True, check=True)
    report = json.loads(proc.stdout)
    return {**report["selection"], "covered": report["covered"], "total": report["total"]}


def main() -> None:
    arch = sys.argv[1] if len(sys.argv) > 1 else "gfx950"
    targets = {"tests": 60.0, "tiny": 10.0}
    print(f"{'run':<14} {'seconds':>8} {'target':>7}")
    outputs: dict[str, list[str]] = {}
    figures = {}
    for set_name, target in targets.items():
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as cache2:
            env = {**os.environ, "CKSPACE_CACHE_DIR": cache}
            cmd = _command(set_name, arch, env)
            cold, out = run(cmd, env)
            warm, out_warm = run(cmd, env)
            again, out_again = run(cmd, {**os.environ, "CKSPACE_CACHE_DIR": cache2})  # a second cold run
            for label, secs, tgt in ((f"{set_name} cold", cold, target), (f"{set_name} warm", warm, 1.0),
                                     (f"{set_name} cold #2", again, target)):
                print(f"{label:<14} {secs:8.2f} {tgt:7.1f}  {'ok' if secs <= tgt else 'OVER'}")
            outputs[set_name] = out.split()
            same = out == out_warm == out_again
            figures[set_name] = (stats(set_name, arch, env), same)
    print()
    for set_name, (s, same) in figures.items():
        print(f"{set_name}: {s['size']} kernels, {s['status']}, proven lower bound {s['lower_bound']}, gap {s['gap']}; "
              f"{s['items']} items over {s['universe']} kernels in {s['components']} components, covered "
              f"{s['covered']}/{s['total']}; index {s['index_seconds']:.2f} s, solve {s['solve_seconds']:.2f} s "
              f"(deterministic time {s['deterministic_time']}); identical output over cold/warm/cold runs: {same}")


if __name__ == "__main__":
    main()
