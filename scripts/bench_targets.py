#!/usr/bin/env python3
"""Issue 15's targets ("Faster than CK's own generator, cold and warm"), measured as whole processes.

Every row is the median of --runs runs (default 5) of `python -m ckspace ...` with stdout to /dev/null. Cold: a
fresh, empty CKSPACE_CACHE_DIR per run (what a CMake configure step or a CI job on a fresh machine sees). Warm: the
same command run once before into the same cache dir. Byte code is written once before timing (as pip does at
install), so PYTHONDONTWRITEBYTECODE in the caller's environment is ignored. Each figure is also given as a ratio to
`python3 -c pass`, the floor of any Python process, and the load average is printed beside it.

By default the package measured is the one `pip install .` installs: the build step (setup.py's build_py, which also
compiles the rule data, ckspace.rules.compiled) is run into a temp dir and that copy is imported. --checkout
measures the checkout instead (it parses the data files in every process, as an editable install does).

The reference beside CK's generator is tests/reference/ck_full.py, an independent re-implementation of CK's `full`
rule set (CK's grouped_config_rules_full.py get_configs) that lists gfx950's full set; the issue measured CK's own code at 0.39 s in process, 0.5 s whole.

    python3 scripts/bench_targets.py [--runs 5] [--only SUBSTRING] [--checkout]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VALID = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
REJECTED = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_96x128x64_2x2x1_32x32x16_vec8_8_8"
E = ["enumerate", "--arch", "gfx950"]
PROBLEM = "2 1 32 128 64 3 3 28 28 1 1 1 1 1 1 1 1"  # issue 27's example
PROBLEM_REFUSED = "2 1 32 36 60 3 3 28 28 1 1 1 1 1 1 1 1"  # C and K off the kernel's vectors: 3 rules broken


def rows() -> list[tuple[str, list[str], str, float, str | None]]:
    """(label, argv, cold|warm, target seconds, stdin file key)."""
    out: list[tuple[str, list[str], str, float, str | None]] = [
        ("enumerate gfx950 names", [*E, "--format", "names"], "cold", 0.5, None),
        ("enumerate gfx950 names", [*E, "--format", "names"], "warm", 0.12, None),
        ("enumerate gfx950 --count", [*E, "--count"], "cold", 0.3, None),
    ]
    for arch, catalog in (("gfx950", "ck-default"), ("gfx1201", "ck-rdna"), ("gfx950", "ck-profiler"),
                          ("gfx950", "ck-tests"), ("gfx950", "ck-full-tests"), ("gfx950", "ck-tiny"),
                          ("gfx942", "full"), ("gfx90a", "full")):
        out.append((f"enumerate {arch} --set {catalog}", ["enumerate", "--arch", arch, "--set", catalog], "cold",
                    0.5, None))
    out += [
        ("explain one valid name", ["explain", VALID, "--arch", "gfx950"], "cold", 0.2, None),
        ("explain one rejected, 3 neighbours", ["explain", REJECTED, "--arch", "gfx950"], "cold", 0.8, None),
        ("explain - 1,000 names", ["explain", "-", "--arch", "gfx950"], "cold", 2.0, "names1000"),
        ("open-space --count gfx950", [*E, "--rules", "-ck-curation", "--count"], "cold", 3.0, None),
        # issue 27: the kernels of full that run a problem, and why one kernel does not
        ("enumerate gfx950 --problem", [*E, "--problem", PROBLEM], "cold", 0.5, None),
        ("explain one name --problem", ["explain", VALID, "--arch", "gfx950", "--problem", PROBLEM_REFUSED], "cold",
         0.3, None),
    ]
    return out


PACKAGE_PATH = [str(REPO)]  # what the measured processes import ckspace from (main: the built copy, by default)


def _env(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["CKSPACE_CACHE_DIR"] = cache
    env["PYTHONPATH"] = PACKAGE_PATH[0]
    return env


def _built(tmp: Path) -> str:
    """The package as the wheel installs it: build_py of a copy of the checkout into tmp/lib (the tests' builder)."""
    sys.path.insert(0, str(REPO / "tests"))
    from packaging_helper import build_package

    lib = build_package(tmp)
    if not (lib / "ckspace" / "constraints" / "_compiled.pickle").is_file():
        sys.exit("the build wrote no compiled data (ckspace/constraints/_compiled.pickle)")
    return str(lib)


def _time(argv: list[str], env: dict[str, str], stdin: bytes | None) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          cwd=PACKAGE_PATH[0])  # `python -m` puts the cwd first on sys.path: the package measured
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):  # explain - exits 1 when a name is rejected
        sys.exit(f"failed ({proc.returncode}): {' '.join(argv)}: {proc.stderr.decode(errors='replace').strip()}")
    return elapsed


def _split(argv: list[str], cache: str, stdin: bytes | None) -> str:
    """The --timings line of one more cold run of the command."""
    shutil.rmtree(cache, ignore_errors=True)
    proc = subprocess.run([*argv, "--timings"], env=_env(cache), input=stdin, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, cwd=PACKAGE_PATH[0])  # stdin is bytes (explain -'s names)
    lines = [line for line in proc.stderr.decode(errors="replace").splitlines() if line.startswith("timings:")]
    return lines[-1] if lines else "(no --timings line)"


def _inputs(tmp: Path) -> dict[str, bytes]:
    """1,000 names pasted into explain: CK's profiler list for gfx950 (valid and rejected under full alike)."""
    env = _env(str(tmp / "inputs-cache"))
    proc = subprocess.run([sys.executable, "-m", "ckspace", "enumerate", "--arch", "gfx950", "--set", "ck-profiler"],
                          env=env, capture_output=True, check=True, cwd=PACKAGE_PATH[0])
    names = proc.stdout.decode().split()[:1000]
    return {"names1000": ("\n".join(names) + "\n").encode()}


def _output_phase(runs: int) -> list[float]:
    """The output phase alone, in process: 14,048 listed configs written as names to /dev/null."""
    sys.path.insert(0, str(REPO))
    from ckspace import Space
    from ckspace.cli import output

    configs = list(Space(arch="gfx950", use_cache=False).enumerate())
    times = []
    with open(os.devnull, "w") as sink:
        for _ in range(runs):
            t0 = time.perf_counter()
            output.write_kernels("names", configs, sink, (), title="", counts_title="")
            times.append(time.perf_counter() - t0)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", help="only rows whose label contains this")
    ap.add_argument("--checkout", action="store_true", help="measure the checkout, not the package as installed")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ckspace-bench-"))
    try:
        py = [sys.executable]
        if not args.checkout:
            PACKAGE_PATH[0] = _built(tmp)
        print(f"package: {'the checkout' if args.checkout else 'as installed (built into a temp dir)'}")
        warm_cache = str(tmp / "pyc-warmup")
        subprocess.run([*py, "-m", "ckspace", *E, "--count"], env=_env(warm_cache), stdout=subprocess.DEVNULL,
                       check=True, cwd=PACKAGE_PATH[0])  # byte code for every module, as after pip install
        inputs = _inputs(tmp)
        floor = statistics.median(_time([*py, "-c", "pass"], _env(warm_cache), None) for _ in range(args.runs))
        print(f"{os.cpu_count()} cores · python3 -c pass (the floor): {floor:.3f} s · median of {args.runs} runs")
        print(f"{'run':<40} {'kind':<5} {'median':>7} {'target':>7} {'x floor':>8} {'target x floor':>15}  load")
        for label, argv, kind, target, stdin_key in rows():
            if args.only and args.only not in label:
                continue
            stdin = inputs.get(stdin_key) if stdin_key else None
            times = []
            for i in range(args.runs):
                cache = str(tmp / f"cache-{label.replace(' ', '_')}-{kind}-{i if kind == 'cold' else 0}")
                if kind == "cold":
                    shutil.rmtree(cache, ignore_errors=True)
                elif i == 0:
                    _time([*py, "-m", "ckspace", *argv], _env(cache), stdin)  # fills the cache
                times.append(_time([*py, "-m", "ckspace", *argv], _env(cache), stdin))
            med = statistics.median(times)
            mark = "ok" if med <= target else "OVER"
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"{label:<40} {kind:<5} {med:7.3f} {target:7.2f} {med / floor:8.1f} {target / floor:15.1f}  {load}"
                  f"  {mark}")
            if argv[0] in ("enumerate", "explain") and kind == "cold":  # where the time of such a run goes (--timings)
                print(f"{'':<40} {_split([*py, '-m', 'ckspace', *argv], str(tmp / 'split'), stdin)}")
        if not args.only or "output" in args.only:
            out = statistics.median(_output_phase(args.runs))
            print(f"{'output phase: 14,048 names (in process)':<40} {'-':<5} {out:7.3f} {0.03:7.2f} {out / floor:8.1f} "
                  f"{0.03 / floor:15.1f}  {' '.join(f'{x:.2f}' for x in os.getloadavg())}  "
                  f"{'ok' if out <= 0.03 else 'OVER'}")
        ref = _reference_full(args.runs)
        print(f"{'reference: CK full re-implementation':<40} {'-':<5} {ref:7.3f} {'':>7} {ref / floor:8.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _reference_full(runs: int) -> float:
    """Whole-process time of tests/reference/ck_full.py listing gfx950's full set (CK's rules)."""
    code = ("import sys; sys.path.insert(0, 'tests'); from reference import ck_full; "
            "n = sum(1 for _ in ck_full.full_configs('gfx950')); print(n)")
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            return float("nan")
    return statistics.median(times)


if __name__ == "__main__":
    sys.exit(main())
