#!/usr/bin/env python3
"""Issue 29: ckspace beside CK's own generator, cold and warm, time and memory, measured side by side.

CK's generator is rebuilt from its sources in a scratch directory that is never committed (CKDIR): its
dispatcher/codegen files, unified_grouped_conv_codegen.py, codegen_common.py, arch_specs_generated.py,
arch_filter.py and grouped_conv/{grouped_config_rules_full,grouped_config_rules_full_tests,
grouped_config_rules_default,tile_math}.py, laid out as in CK (CKDIR/codegen/... or CKDIR/...). CK is run as its
CLI runs it: get_default_configs(arch, all variants, 2D and 3D, fp16/bf16/fp32, rule_set), then generate_all's
selection per dtype and config.name(dtype), printed one name per line. That driver is this script's (written to a
temp file); the configs and names are CK's code.

Both sides run as whole processes under this Python, interleaved (CK, ckspace cold, ckspace warm, CK, ...), stdout
to a file; each figure is the median of --runs runs, for --rounds rounds. Peak memory is the child's own maximum
resident set (wait4). ckspace is measured as `pip install .` installs it (built into a temp dir, with its compiled
data), or the checkout with --checkout. Cold: a fresh, empty CKSPACE_CACHE_DIR per run. Warm: the same command
run once before into the same cache dir. Before timing, each case's names are compared, sorted, with CK's.

"computed": the same package with its shipped answers removed (ckspace.cli.ship), for the record: what a cold
listing costs when it is computed, as for any command the build does not ship.

Explain: `ckspace explain NAME --arch ARCH` of the benchmark's rejected name (scripts/bench_targets.py), then of
OTHER_REJECTED (other variants, ndims and dtypes; two of them accepted by the facts and in no catalog), cold and warm;
the target (0.3 s cold, 0.15 s warm) holds for each.

Cache: the bytes a cold run writes into its cache dir, against the bytes of the files a warm run of the same command
then reads back (each file's access time is set back before the warm run; a file whose access time moves was read).

    python3 scripts/bench_vs_ck.py CKDIR [--arch gfx950] [--runs 11] [--rounds 2] [--checkout]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_targets as bt  # noqa: E402  (the package build and the environment of the measured processes)

REJECTED = bt.REJECTED
# More rejected names, of other variants, ndims and dtypes: two broken rules with their fixes (a wrong vec_c), and
# two the facts accept that are in no catalog (explain looks for the nearest kernels of every catalog).
OTHER_REJECTED = (
    "grouped_conv_bwd_data_bf16_nhwgc_3d_compv1_cshuffle_intrawave_128x128x32_1x2x1_32x32x16_vec8_8_3",
    "grouped_conv_bwd_weight_fp16_nhwgc_2d_compv1_cshuffle_interwave_32x16x64_4x1x2_16x16x32_vec2_2_2_2stage_filter1x1"
    "_stride1_pad0_explicit_gemm",
    "grouped_conv_bwd_weight_bf16_nhwgc_3d_compv1_cshuffle_intrawave_32x64x32_1x1x1_32x32x16_vec8_8_4_gm2_2stage",
    "grouped_conv_fwd_fp32_nhwgc_3d_mem_cshuffle_intrawave_16x128x64_1x2x1_16x16x8_vec4_4_2",
)

DRIVER = '''
import sys
sys.path.insert(0, sys.argv[1])
import unified_grouped_conv_codegen as ck
arch, rule_set = sys.argv[2], sys.argv[3]
V = ck.GroupedConvVariant
dtypes = ["fp16", "bf16", "fp32"]
configs = ck.get_default_configs(arch=arch, variants=[V.FORWARD, V.BACKWARD_DATA, V.BACKWARD_WEIGHT],
                                 ndims=[2, 3], datatypes=dtypes, rule_set=rule_set)
out = []
for dt in dtypes:
    for c in configs:
        if isinstance(c, ck.DepthwiseConvKernelConfig):
            if c.datatype != dt:
                continue
        elif c.datatype and c.datatype != dt:
            continue
        out.append(c.name(dt))
sys.stdout.write("\\n".join(out) + ("\\n" if out else ""))
'''

# (label, ckspace's --set, CK's --rule-set, ratio target cold, ratio target warm)
CASES = [("full", "full", "full", 0.6, 0.15),
         ("full-tests", "ck-full-tests", "full-tests", 0.7, None),
         ("tiny", "ck-tiny", "tiny", 0.7, None)]


def _codegen_dir(root: Path) -> Path:
    for d in (root / "codegen", root):
        if (d / "unified_grouped_conv_codegen.py").is_file():
            return d
    sys.exit(f"{root}: no unified_grouped_conv_codegen.py here or in codegen/ (CK's dispatcher/codegen files)")


def _run(argv: list[str], env: dict[str, str], out: Path, cwd: str) -> tuple[float, int]:
    """Wall seconds and peak resident KiB of one whole process (its own, from wait4)."""
    with open(out, "wb") as sink:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=sink, stderr=subprocess.PIPE, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode not in (0, 1):  # explain exits 1 for a rejected name
        sys.exit(f"failed ({proc.returncode}): {' '.join(argv)}: {err.strip()[-400:]}")
    return elapsed, usage.ru_maxrss


def _digest(path: Path) -> tuple[int, str]:
    names = sorted(path.read_text().split())
    return len(names), hashlib.md5("\n".join(names).encode()).hexdigest()[:12]


def _cache_bytes(cache: Path) -> tuple[int, list[Path]]:
    """The bytes a cold run wrote into `cache`, and its files with their access times set back."""
    files = [p for p in cache.rglob("*") if p.is_file()]
    for p in files:
        st = p.stat()
        os.utime(p, (0, st.st_mtime))  # relatime updates an access time older than the file's change
    return sum(p.stat().st_size for p in files), files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ckdir", type=Path, help="CK's generator rebuilt from its sources (scratch, never committed)")
    ap.add_argument("--arch", default="gfx950")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--checkout", action="store_true", help="measure the checkout, not the package as installed")
    args = ap.parse_args()
    codegen = _codegen_dir(args.ckdir.resolve())
    tmp = Path(tempfile.mkdtemp(prefix="ckspace-vs-ck-"))
    try:
        driver = tmp / "ck_list_names.py"
        driver.write_text(DRIVER)
        if not args.checkout:
            bt.PACKAGE_PATH[0] = bt._built(tmp)
        cwd = bt.PACKAGE_PATH[0]
        # The same package without its shipped answers (ckspace.cli.ship): what a cold listing costs computed
        computed = tmp / "computed"
        shutil.copytree(cwd, computed)
        (computed / "ckspace" / "constraints" / "_answers.bin").unlink(missing_ok=True)
        py = sys.executable
        plain_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
        ck_argv = {rs: [py, str(driver), str(codegen), args.arch, rs] for _, _, rs, _, _ in CASES}
        ours_argv = {s: [py, "-m", "ckspace", "enumerate", "--arch", args.arch, "--set", s] for _, s, _, _, _ in CASES}
        explain_argv = [py, "-m", "ckspace", "explain", REJECTED, "--arch", args.arch]
        out = tmp / "out.txt"
        # Byte code for both sides first (as pip writes it at install), and the names compared.
        for label, ours, rs, _, _ in CASES:
            _run(ck_argv[rs], plain_env, out, cwd)
            theirs = _digest(out)
            _run(ours_argv[ours], bt._env(str(tmp / "pyc")), out, cwd)
            mine = _digest(out)
            same = "equal" if theirs == mine else "DIFFER"
            print(f"{label}: CK {theirs[0]:,} names, ckspace {mine[0]:,}: {same} ({theirs[1]} / {mine[1]})")
        floor = statistics.median(bt._time([py, "-c", "pass"], plain_env, None) for _ in range(args.runs))
        print(f"{os.cpu_count()} cores · {sys.version.split()[0]} · python3 -c pass (the floor): {floor:.3f} s · "
              f"median of {args.runs} runs, {args.rounds} rounds · package: "
              f"{'the checkout' if args.checkout else 'as installed'}")
        print(f"{'case':<26} {'ckspace':>8} {'CK':>8} {'ratio':>6} {'target':>7}  {'MiB ours':>8} {'MiB CK':>7}  load")
        for rnd in range(args.rounds):
            for label, ours, rs, cold_target, warm_target in CASES:
                t_ck, t_cold, t_warm, m_ck, m_cold, t_computed, m_computed = [], [], [], [], [], [], []
                warm_cache = tmp / f"warm-{rnd}-{label}"
                _run(ours_argv[ours], bt._env(str(warm_cache)), out, cwd)
                for i in range(args.runs):
                    t, m = _run(ck_argv[rs], plain_env, out, cwd)
                    t_ck.append(t), m_ck.append(m)
                    cold = tmp / f"cold-{rnd}-{label}-{i}"
                    t, m = _run(ours_argv[ours], bt._env(str(cold)), out, cwd)
                    t_cold.append(t), m_cold.append(m)
                    shutil.rmtree(cold, ignore_errors=True)
                    t_warm.append(_run(ours_argv[ours], bt._env(str(warm_cache)), out, cwd)[0])
                    env = {**bt._env(str(cold)), "PYTHONPATH": str(computed)}
                    t, m = _run(ours_argv[ours], env, out, str(computed))
                    t_computed.append(t), m_computed.append(m)
                    shutil.rmtree(cold, ignore_errors=True)
                ck_med = statistics.median(t_ck)
                load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                for kind, times, target in (("cold", t_cold, cold_target), ("warm", t_warm, warm_target)):
                    if target is None:
                        continue
                    med = statistics.median(times)
                    ratio = med / ck_med
                    mem = f"{max(m_cold) / 1024:8.1f} {max(m_ck) / 1024:7.1f}" if kind == "cold" else f"{'':8} {'':7}"
                    mark = "ok" if ratio <= target else "OVER"
                    print(f"{label + ' ' + kind:<26} {med:8.3f} {ck_med:8.3f} {ratio:6.2f} {target:7.2f}  {mem}  "
                          f"{load}  {mark}")
                med = statistics.median(t_computed)  # for the record: no target
                print(f"{label + ' cold, computed':<26} {med:8.3f} {ck_med:8.3f} {med / ck_med:6.2f} {'-':>7}  "
                      f"{max(m_computed) / 1024:8.1f} {max(m_ck) / 1024:7.1f}  {load}")
                if rnd == 0:  # what a cold run leaves in its cache, and what a warm run reads back of it
                    cache = tmp / f"bytes-{label}"
                    _run(ours_argv[ours], bt._env(str(cache)), out, cwd)
                    written, files = _cache_bytes(cache)
                    atimes = {p: p.stat().st_atime for p in files}
                    _run(ours_argv[ours], bt._env(str(cache)), out, cwd)
                    read = sum(p.stat().st_size for p in files if p.exists() and p.stat().st_atime != atimes[p])
                    mark = "ok" if written <= read else "OVER"
                    print(f"{label + ' cache':<26} written {written:,} B, read back warm {read:,} B  {mark}")
            for number, name in enumerate((REJECTED, *OTHER_REJECTED)):
                argv = [*explain_argv[:4], name, *explain_argv[5:]]
                t_cold_x, t_warm_x = [], []
                warm_cache = tmp / f"warm-explain-{rnd}-{number}"
                _run(argv, bt._env(str(warm_cache)), out, cwd)
                for i in range(args.runs):
                    cold = tmp / f"cold-explain-{rnd}-{i}"
                    t_cold_x.append(_run(argv, bt._env(str(cold)), out, cwd)[0])
                    shutil.rmtree(cold, ignore_errors=True)
                    t_warm_x.append(_run(argv, bt._env(str(warm_cache)), out, cwd)[0])
                load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                label = "explain rejected" if number == 0 else f"  other rejected {number}"
                for kind, times, target in (("cold", t_cold_x, 0.3), ("warm", t_warm_x, 0.15)):
                    med = statistics.median(times)
                    print(f"{label + ' ' + kind:<26} {med:8.3f} {'':>8} {'':>6} {target:6.2f}s  {'':8} {'':7}  "
                          f"{load}  {'ok' if med <= target else 'OVER'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
