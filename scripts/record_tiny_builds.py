#!/usr/bin/env python3
"""The compiler's verdict on every kernel of the `tiny` set, on every arch the registry toolchain builds, kept as
evidence in constraints/evidence/tiny-builds.json.

CI compiles a few kernels of tiny for two archs (tests/test_build.py): the whole set costs about 4 core-minutes per
arch, 12-25 minutes of CI's two cores for gfx942 and gfx950 alone. This script compiles all of it, on five archs,
with `ckspace verify --set tiny --over CATALOG --all --ck-api 2025.11 --unit-size 1` (one kernel per compile unit:
a verdict, a time and a peak memory per kernel, and each kernel's ISA: its matrix instructions and LDS bytes), and
keeps the verdicts. CATALOG is CK's full set, and on RDNA CK's rdna set (OVER below). tests/test_tiny_builds.py
fails while the file is stale: a kernel of tiny without a verdict (a changed objective, catalog or rule), a verdict
of a kernel no longer in it, or another registry toolchain. Then run this again (about 45 minutes on 2 cores).

Usage, from the repo root:
    python3 scripts/record_tiny_builds.py [--archs gfx90a,gfx942,...] [-j N] [--work DIR] [-o FILE]
    python3 scripts/record_tiny_builds.py --reports DIR [-o FILE]   (condense DIR/v-ARCH.json, written before)
Exit 0 written, 1 a kernel of tiny did not build (nothing written), 2 bad usage or a verify that did not run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ckspace.codegen.toolchain import AMD_AITER, ZIGLANG  # noqa: E402
from ckspace.files import atomic_write  # noqa: E402

ARCHS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201")
# The catalog tiny is selected from: CK's full set on RDNA is depthwise kernels alone, which CK Tile 2025.11 cannot
# build (ck-api-2025.11.depthwise), so there tiny is drawn from CK's RDNA rule set.
OVER = {"gfx90a": "full", "gfx942": "full", "gfx950": "full", "gfx1100": "ck-rdna", "gfx1201": "ck-rdna"}
CK_API = "2025.11"  # the revision the registry toolchain's CK Tile headers are
OUT = ROOT / "constraints" / "evidence" / "tiny-builds.json"
KEPT = ("lds_bytes", "entry_points", "matrix_mnemonics", "vgprs", "agprs", "scratch_bytes", "wavefront_size")


def _fail(message: str) -> NoReturn:
    print(f"record_tiny_builds: {message}", file=sys.stderr)
    raise SystemExit(2)


def verify_command(arch: str, work: Path, jobs: int) -> list[str]:
    return [sys.executable, "-m", "ckspace", "verify", "--arch", arch, "--set", "tiny", "--over", OVER[arch], "--all",
            "--ck-api", CK_API,
            "--unit-size", "1", "-j", str(jobs), "--compile-timeout", "1500", "-o", str(work / f"w-{arch}"),
            "--format", "json"]


def run_verify(arch: str, work: Path, jobs: int) -> Path:
    report = work / f"v-{arch}.json"
    print(f"record_tiny_builds: {arch}: {' '.join(verify_command(arch, work, jobs)[1:])}", file=sys.stderr)
    with report.open("w") as out:
        rc = subprocess.run(verify_command(arch, work, jobs), stdout=out, cwd=ROOT).returncode
    if rc not in (0, 1):  # 1: some kernel failed or is unexpressible, which the report says
        _fail(f"verify for {arch} ended with {rc}; see {work / f'w-{arch}'}")
    return report


def condense(arch: str, report: Path) -> tuple[dict[str, object], list[str]]:
    """The evidence of one arch, and its kernels that did not build (their name and status)."""
    try:
        verify = json.loads(report.read_text())
        verify = verify.get("verify", verify)  # (an audit's report holds it under "verify")
        verify["kernels"]
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as exc:
        _fail(f"{report}: not a verify report ({exc})")
    if verify.get("arch") != arch:
        _fail(f"{report} is a report of {verify.get('arch')}, not {arch}")
    kernels: dict[str, object] = {}
    unexpressible: dict[str, str] = {}
    bad: list[str] = []
    for k in verify["kernels"]:
        if k["status"] == "unexpressible":
            unexpressible[k["name"]] = k["error"] or ""
            continue
        if k["status"] != "ok":
            bad.append(f"{arch} {k['name']}: {k['status']} {k.get('error') or ''}".rstrip())
            continue
        isa = k["isa"] or {}
        kernels[k["name"]] = {"seconds": k["seconds"], "peak_mib": k["peak_mib"], "lds_model": k["lds_model"],
                              **{key: isa.get(key) for key in KEPT}}
    return {"over": OVER[arch], "compiled": len(kernels), "kernels": dict(sorted(kernels.items())),
            "unexpressible": dict(sorted(unexpressible.items()))}, bad


def _kept_archs(path: Path, redone: set[str]) -> dict[str, object]:
    """The archs of the file already there that this run did not compile, where its toolchain is this one (a run
    of some archs updates those and keeps the rest)."""
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if old.get("ck_api") != CK_API or old.get("toolchain") != {"ziglang": ZIGLANG, "amd_aiter": AMD_AITER}:
        return {}
    return {a: e for a, e in old.get("archs", {}).items() if a not in redone}


def write_keeping_mode(path: Path, text: str) -> None:
    """Through a temporary file and a rename (ckspace's own), with the mode the file had, or a new file's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    umask = os.umask(0)
    os.umask(umask)
    atomic_write(path, text.encode(), mode=path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~umask)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--archs", default=",".join(ARCHS), help="comma-separated (default: %(default)s)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel compiles")
    ap.add_argument("--work", type=Path, help="where verify works and writes its reports (default: a temporary dir)")
    ap.add_argument("--reports", type=Path, help="condense DIR/v-ARCH.json instead of compiling")
    ap.add_argument("-o", "--output", type=Path, default=OUT)
    args = ap.parse_args(argv)
    archs = [a for a in args.archs.split(",") if a]
    unknown = [a for a in archs if a not in ARCHS]
    if unknown or not archs:
        ap.error(f"--archs: {','.join(unknown) or 'none given'} (known: {','.join(ARCHS)})")
    if args.jobs < 1:
        ap.error("-j: at least 1")
    work = args.reports or args.work or Path(tempfile.mkdtemp(prefix="ckspace-tiny-"))
    work.mkdir(parents=True, exist_ok=True)
    evidence: dict[str, object] = {}
    bad: list[str] = []
    for arch in archs:
        report = work / f"v-{arch}.json" if args.reports else run_verify(arch, work, args.jobs)
        evidence[arch], arch_bad = condense(arch, report)
        bad += arch_bad
    if bad:
        print("record_tiny_builds: kernels of tiny that did not build (nothing written):", *bad, sep="\n  ",
              file=sys.stderr)
        return 1
    kept = _kept_archs(args.output, set(evidence))
    evidence = {a: (evidence.get(a) or kept[a]) for a in ARCHS if a in evidence or a in kept}
    data = {"doc": "ckspace verify --set tiny --over CATALOG --all --ck-api 2025.11 --unit-size 1 with the registry "
                   "toolchain, per arch (CATALOG: full; ck-rdna on RDNA, whose full set is depthwise alone): every "
                   "kernel of tiny built, with matrix instructions "
                   "(scripts/record_tiny_builds.py; tests/test_tiny_builds.py checks it is current)",
            "ck_api": CK_API, "toolchain": {"ziglang": ZIGLANG, "amd_aiter": AMD_AITER}, "archs": evidence}
    try:
        write_keeping_mode(args.output, json.dumps(data, indent=1, sort_keys=False) + "\n")
    except OSError as exc:
        print(f"record_tiny_builds: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    total = sum(e["compiled"] for e in evidence.values())  # type: ignore[index]
    print(f"record_tiny_builds: {total} kernels of tiny built on {len(evidence)} arch(s); wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
