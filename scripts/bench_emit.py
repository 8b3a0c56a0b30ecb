#!/usr/bin/env python3
"""Benchmark of `ckspace emit`: the whole `full` set of an arch (gfx950: 14,048 kernels), then a no-op re-emit.

Targets (issue 5): the full emit in at most 60 s; the re-emit writes 0 files. Each run is a fresh process, timed
as a whole (wall time, imports included), with a fresh result cache, into a fresh output directory.

    python3 scripts/bench_emit.py [--arch gfx950] [--ck-api 2026.06] [--runs 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from ckspace import Space
from ckspace.codegen import ckapi
from ckspace.codegen import emit as EM
arch, rev, out = sys.argv[1], sys.argv[2], sys.argv[3]
space = Space(arch=arch, rules=ckapi.combine_rules(None, rev))
configs = EM.select(space)
t1 = time.perf_counter()
res = EM.emit(space, configs, out, revision=rev)
t2 = time.perf_counter()
print(json.dumps({"kernels": res.kernels, "units": len(res.units), "written": res.stats.written,
                  "unchanged": res.stats.unchanged, "removed": res.stats.removed,
                  "select_s": t1 - t0, "emit_s": t2 - t1, "split": res.seconds}))
"""


def run(arch: str, rev: str, out: Path, cache: Path) -> dict:
    env = {**os.environ, "CKSPACE_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, arch, rev, str(out)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"emit failed:\n{proc.stderr}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["wall_s"] = wall
    return data


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="gfx950")
    ap.add_argument("--ck-api", default="2026.06")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--keep", metavar="DIR", help="emit into DIR and keep it (default: a temporary directory)")
    args = ap.parse_args()
    for i in range(args.runs):
        tmp = Path(tempfile.mkdtemp(prefix="ckspace-bench-emit-"))
        out = Path(args.keep) if args.keep else tmp / "out"
        if args.keep and out.exists():
            shutil.rmtree(out)
        try:
            cold = run(args.arch, args.ck_api, out, tmp / "cache")
            size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
            nfiles = sum(1 for p in out.rglob("*") if p.is_file())
            again = run(args.arch, args.ck_api, out, tmp / "cache")
            print(f"run {i + 1}: {args.arch} full, CK API {args.ck_api}: {cold['kernels']} kernels, "
                  f"{cold['units']} compile units, {nfiles} files, {size / 1e6:.0f} MB")
            print(f"  emit (cold cache, fresh dir): {cold['wall_s']:.1f} s wall "
                  f"(selection {cold['select_s']:.1f} s, rendering + writing {cold['emit_s']:.1f} s); "
                  f"{cold['written']} files written  [target <= 60 s]")
            print(f"  no-op re-emit (cached selection): {again['wall_s']:.1f} s wall; "
                  f"{again['written']} files written, {again['unchanged']} unchanged, {again['removed']} removed  "
                  f"[target: 0 written]")
            if again["written"] != 0:
                print("  FAIL: the re-emit wrote files")
                return 1
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
