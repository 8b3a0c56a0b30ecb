#!/usr/bin/env python3
"""Benchmark of `ckspace sample` over the open space (issue 25, item 6): drawing kernels without listing them.

Whole processes (`python -m ckspace sample --arch ARCH --rules -ck-curation -n N --seed S ...`, stdout captured),
each cold in a fresh empty cache dir, the median of --runs runs, next to the floor (`python3 -c pass`) and the cold
count of the same space (`enumerate --count`), with the load average before and after; then one process split in
time (solving the count's factors and eliminating, vs. unranking and naming) and a reproducibility check (every run
of a command printed the same kernels, and a second seed other ones).

    python3 scripts/bench_sample.py [--arch gfx950] [-n 1000] [--runs 3] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run(argv: list[str]) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CKSPACE_CACHE_DIR": cache, "PYTHONPATH": str(REPO)}
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True, cwd=REPO)
        elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(argv)}: {proc.stderr.strip()}")
    return elapsed, proc.stdout


def split(arch: str, n: int, seed: int) -> dict[str, float]:
    """One cold in-process sample: the SpaceSampler (plans, factors, elimination) vs. drawing and unranking."""
    sys.path.insert(0, str(REPO))
    from ckspace import Space
    from ckspace.select import sample as S
    from ckspace.solve import sampling

    space = Space(arch=arch, rules="-ck-curation", use_cache=False)
    t0 = time.perf_counter()
    sampler = sampling.SpaceSampler(space)
    t1 = time.perf_counter()
    ranks = S._distinct(random.Random(f"ckspace-sample:{seed}"), sampler.total, n)
    picks = sampler.locate(list(range(len(sampler.parts))), ranks)
    configs = sampler.configs(picks)
    t2 = time.perf_counter()
    assert len({c["name"] for c in configs}) == min(n, sampler.total)
    return {"eliminate": t1 - t0, "unrank": t2 - t1, "total": sampler.total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="gfx950")
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    base = ["-m", "ckspace", "sample", "--arch", args.arch, "--rules", "-ck-curation", "-n", str(args.n)]
    commands = {
        "floor (python3 -c pass)": ["-c", "pass"],
        "count (enumerate --count)": ["-m", "ckspace", "enumerate", "--arch", args.arch, "--rules", "-ck-curation",
                                      "--count"],
        f"sample -n {args.n}": [*base, "--seed", str(args.seed)],
        f"sample -n {args.n} --stratify variant,ndim,dtype": [*base, "--seed", str(args.seed), "--stratify",
                                                               "variant,ndim,dtype"],
        f"sample -n {args.n} --stratify pipeline": [*base, "--seed", str(args.seed), "--stratify", "pipeline"],
        f"sample -n {args.n} --variant bwd_data --where 'tile_m >= 128'": [
            *base, "--seed", str(args.seed), "--variant", "bwd_data", "--where", "tile_m >= 128"],
    }
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'command (cold, fresh cache dir)':<62} {'median s':>9} {'min s':>7} {'max s':>7}  same output")
    outputs = {}
    for label, argv in commands.items():
        times, outs = [], []
        for _ in range(args.runs):
            t, out = run(argv)
            times.append(t)
            outs.append(out)
        outputs[label] = outs[0]
        same = "yes" if len(set(outs)) == 1 else "NO"
        print(f"{label:<62} {statistics.median(times):9.2f} {min(times):7.2f} {max(times):7.2f}  {same}")
    _, other = run([*base, "--seed", str(args.seed + 1)])
    print(f"another seed gives other kernels: {other != outputs[f'sample -n {args.n}']}")
    parts = split(args.arch, args.n, args.seed)
    print(f"in process, cold: sampler (plans, factors, elimination) {parts['eliminate']:.2f} s, "
          f"draw + unrank + name {args.n} kernels {parts['unrank']:.3f} s, space {parts['total']:,} kernels")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
