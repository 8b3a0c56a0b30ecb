#!/usr/bin/env python3
"""Benchmark of `ckspace explain` against the issue's targets (whole-process wall time, fresh cache dir).

Targets: one name, whole process, cold: <= 2 s; a batch of 1,000 names (half valid names of `full`, half with one
field changed) through `ckspace explain -`: <= 30 s. Also measured, without a target: the same batch with
--verbose (every name's details, and 3 nearest kernels for each rejected one) and one name in the open space.

Usage: python3 scripts/bench_explain.py [ARCH] [--names N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

VALID = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_8"
WAVE_8X2 = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_8x2x1_16x16x32_vec8_8_8"
TILE_96 = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_96x128x64_2x2x1_32x32x16_vec8_8_8"


def mutate(cfg: dict, rng: random.Random) -> dict:
    """One field changed to another value of its kind (the result is usually, not always, rejected)."""
    out = dict(cfg)
    if cfg["variant"] == "forward_depthwise":
        key = rng.choice(["filter_size", "nbatch", "sub_w", "in_vec", "stride_w"])
        out[key] = {"filter_size": cfg["filter_size"] + 1, "nbatch": cfg["nbatch"] * 2, "sub_w": cfg["sub_w"] + 1,
                    "in_vec": 16, "stride_w": 3}[key]
        return out
    key = rng.choice(["tile_m", "wave_m", "vec_a", "pipeline", "scheduler", "warp_tile_m", "epilogue", "tile_k"])
    out[key] = {"tile_m": cfg["tile_m"] + 16 if cfg["tile_m"] < 256 else 96, "wave_m": 8, "vec_a": 16,
                "pipeline": "compv5", "scheduler": "interwave" if cfg["scheduler"] == "intrawave" else "intrawave",
                "warp_tile_m": 64, "epilogue": "default", "tile_k": cfg["tile_k"] + 8}[key]
    return out


def batch_names(arch: str, n: int) -> list[str]:
    from ckspace import Space
    from ckspace.rules.names import format_name

    rng = random.Random(7)
    full = list(Space(arch=arch, use_cache=False).enumerate())
    picked = rng.sample(full, n)
    names = []
    for i, cfg in enumerate(picked):
        cfg = {k: v for k, v in cfg.items() if k != "name"}
        names.append(format_name(cfg if i % 2 == 0 else mutate(cfg, rng)))
    return names


def run(args: list[str], stdin: str | None = None) -> tuple[float, float, int, str]:
    """One whole process with a fresh, empty cache dir (cold): wall time, CPU time (user + sys: what the run costs
    on an idle machine, as long as it stays on one core), exit code, stdout."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CKSPACE_CACHE_DIR": cache}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "ckspace", *args], env=env, input=stdin, capture_output=True,
                              text=True)
        elapsed = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        sys.exit(f"failed: {' '.join(args)}: {proc.stderr.strip()}")
    return elapsed, cpu, proc.returncode, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("arch", nargs="?", default="gfx950")
    parser.add_argument("--names", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the median is compared to the target")
    opts = parser.parse_args()
    arch = opts.arch
    names = batch_names(arch, opts.names)
    text = "\n".join(names) + "\n"
    rows = [
        ("one valid name", ["explain", VALID, "--arch", arch], None, 2.0),
        ("one rejected name", ["explain", TILE_96, "--arch", arch], None, 2.0),
        ("gfx942 8x2x1", ["explain", WAVE_8X2, "--arch", "gfx942"], None, 2.0),
        ("open space", ["explain", WAVE_8X2, "--arch", "gfx942", "--rules", "-ck-curation"], None, 2.0),
        ("json", ["explain", TILE_96, "--arch", arch, "--format", "json"], None, 2.0),
        (f"batch of {len(names)}", ["explain", "-", "--arch", arch], text, 30.0),
        (f"batch of {len(names)} json", ["explain", "-", "--arch", arch, "--format", "json"], text, 30.0),
        (f"batch of {len(names)} --verbose", ["explain", "-", "--arch", arch, "--verbose"], text, None),
    ]
    print(f"whole process, fresh cache dir per run, {opts.repeat} runs per row; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall times grow with the load; cpu is the median "
          "user + sys time of the process)")
    print(f"{'run':<30} {'median':>7} {'min':>6} {'max':>6} {'cpu':>6} {'target':>7}  exit")
    for label, args, stdin, target in rows:
        times, cpus, code = [], [], 0
        for _ in range(opts.repeat if target is not None else 1):
            elapsed, cpu, code, out = run(args, stdin)
            times.append(elapsed)
            cpus.append(cpu)
        mid = statistics.median(times)
        mark = "" if target is None else ("ok" if mid <= target else "OVER")
        shown = "-" if target is None else f"{target:.1f}"
        print(f"{label:<30} {mid:7.2f} {min(times):6.2f} {max(times):6.2f} {statistics.median(cpus):6.2f} {shown:>7}  {code}  {mark}", flush=True)
        if stdin is not None and "--format" in args:
            summary = json.loads(out)["summary"]
            print(f"  (batch: {summary['valid']} valid, {summary['rejected']} rejected: {summary['rejected_by_family']})")


if __name__ == "__main__":
    main()
