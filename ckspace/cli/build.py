"""The `emit` and `build` commands of the CLI. `ckspace.cli` adds them with `add_parsers(sub)` and runs them with
`run(args)`; both follow the CLI's conventions (exit 0 / 1 failure / 2 bad input, one line on stderr, 130 on Ctrl-C).

    ckspace emit --arch A [--set S | --variant/--ndim/--dtype/--where] -o DIR [--ck-api REV] [--chunk-size N]
    ckspace build DIR [-j N] [--compiler PATH] [--offload-arch LIST] [--launcher ccache|sccache|distcc]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from ..emitted import Emitted

LAUNCHERS = ("ccache", "sccache", "distcc")  # = ckspace.codegen.build.LAUNCHERS (tests/test_emit.py checks)
DEFAULT_CHUNK_SIZE = 25  # = ckspace.codegen.units.DEFAULT_CHUNK_SIZE (tests/test_emit.py checks)
MIN_UNITS = 16  # = ckspace.codegen.units.MIN_UNITS (tests/test_emit.py checks)
MAX_CHUNK_SIZE = 2000  # one unit of more instances than this needs tens of GB to compile
DEFAULT_MAX_KERNELS = 100_000  # CK's largest set (full) is 14,048 per arch


def add_parsers(sub) -> None:
    """Add `emit` and `build` to the CLI's subparsers (without importing ckspace.codegen.emit or
    ckspace.codegen.build: every `ckspace` command builds the parser, and a cached enumerate must stay cheap)."""
    from .options import SETS_HELP, add_ck_config_option, add_trait_config_option

    em = sub.add_parser("emit", help="write CK Tile C++ instances of a selection, with build.ninja and a manifest",
                        description="Write the CK Tile C++ of a selection into DIR: a kernel header and dispatcher "
                                    "wrapper per kernel, compile units of --chunk-size instances, the registration "
                                    "files, build.ninja and manifest.json. Writes are atomic and incremental (a "
                                    "no-op re-emit writes nothing). Kernels the build compiler is known not to build "
                                    "are left out (--toolchain). Exit 0, or 2 on bad usage.")
    em.add_argument("--arch", required=True, help="target arch (gfx90a, gfx942, gfx950, gfx1100, gfx1200, gfx1201, gfx1250), or auto")
    em.add_argument("--set", default=None, help=f"kernel set (default full): {SETS_HELP}")
    em.add_argument("--over", metavar="CATALOG", help="with --set tests|tiny: the catalog they are selected from (default full)")
    em.add_argument("--names", metavar="FILE",
                    help="exactly these kernels, one name per line (- for stdin; blank and # lines skipped), instead "
                         "of --set and its filters")
    add_ck_config_option(em)
    em.add_argument("--variant", action="append", help="forward, bwd_data, bwd_weight, forward_depthwise")
    em.add_argument("--ndim", action="append", help="2, 3")
    em.add_argument("--dtype", action="append", help="fp16, bf16, fp32")
    em.add_argument("--where", help="filter on fields, e.g. \"pipeline == 'compv3'\"")
    add_trait_config_option(em)
    em.add_argument("--rules", help="switch rule families: +fam,-fam")
    em.add_argument("-o", "--output", required=True, metavar="DIR", help="output directory")
    em.add_argument("--ck-api", default=None, metavar="REV",
                    help="CK Tile API revision of the templates: 2026.06 (default, newest), 2025.11, or auto")
    em.add_argument("--ck-include", metavar="DIR", help="CK Tile headers (the directory holding ck_tile/), for --ck-api auto")
    em.add_argument("--toolchain", default="auto", metavar="NAME",
                    help="leave out the kernels this compiler's family (toolchain-NAME, found by `ckspace verify`) "
                         "says it cannot build: auto (default: the compiler `build` will use: ROCm's, else the "
                         "registry toolchain's for the arch), registry, clang22, ..., or none")
    em.add_argument("--chunk-size", type=int, default=None, metavar="N",
                    help=f"instances per compile unit and per registration chunk (default: at most "
                         f"{DEFAULT_CHUNK_SIZE}, balanced by expected compile cost (templates/compile-cost.toml), and "
                         f"small enough for at least {MIN_UNITS} units when there are that many kernels, so that "
                         "`build -j` has work for each job). A larger unit pays the fixed cost "
                         "of parsing CK Tile's headers (about 6 s of a core) once for more kernels, but needs more "
                         "memory (about 0.8 GB for one kernel, 1.5-2.2 GB for four, 4 GB for the 15 of tiny in "
                         "CK API 2025.11)")
    em.add_argument("--max-kernels", type=int, default=DEFAULT_MAX_KERNELS, metavar="N",
                    help=f"refuse to emit more kernels than this (default {DEFAULT_MAX_KERNELS:,}; the open space has "
                         "trillions): counted first, in seconds")
    em.add_argument("--constraints", metavar="DIR", help="use this constraints directory instead of the built-in one")
    em.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")

    bu = sub.add_parser("build", help="compile an emitted directory with ninja (device-only objects)",
                        description="Compile a directory written by `ckspace emit` with ninja: one device-only "
                                    "object per compile unit and offload arch, with ROCm's compiler, else the "
                                    "registry toolchain (set up on first use, installing nothing). Kernels invalid "
                                    "on an --offload-arch, or known not to build with the compiler, are refused "
                                    "first (--force). Incremental, interruptible (Ctrl-C leaves no half-written "
                                    "object), and the objects are checked. Exit 0 built, 1 a compile failed, 2 bad "
                                    "usage, 130 interrupted.")
    bu.add_argument("dir", metavar="DIR", help="a directory written by `ckspace emit`")
    bu.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="parallel compiles (default: ninja's)")
    bu.add_argument("--compiler", metavar="PATH", help="a HIP clang (default: ROCm's, else the registry toolchain)")
    bu.add_argument("--offload-arch", metavar="LIST", help="comma-separated offload archs (default: the emit arch), or auto")
    bu.add_argument("--launcher", choices=LAUNCHERS, help="compiler launcher passed through to every compile")
    bu.add_argument("--ck-include", metavar="DIR", help="CK Tile headers (default: ROCm's, else the registry toolchain's)")
    bu.add_argument("--no-check", action="store_true", help="do not check the objects' ELF flags and kernel symbols")
    bu.add_argument("--force", action="store_true",
                    help="compile even kernels the model says cannot build: invalid on an --offload-arch, or known "
                         "to fail with the compiler (its family toolchain-NAME)")


def run(args: argparse.Namespace) -> int:
    if args.command == "emit":
        return cmd_emit(args)
    if args.command == "build":
        return cmd_build(args)
    raise UsageError(f"unknown command {args.command!r}")


def _console(stderr: bool = True):
    from .console import console

    return console(stderr=stderr)


def cmd_emit(args: argparse.Namespace) -> int:
    from ..spec import api_revision, resolve_arch

    arch = resolve_arch(args.arch)
    rev = api_revision(args.ck_api, args.ck_include)
    if args.chunk_size is not None and not 1 <= args.chunk_size <= MAX_CHUNK_SIZE:
        raise UsageError(f"--chunk-size must be between 1 and {MAX_CHUNK_SIZE}, not {args.chunk_size}")
    if not args.output.strip():
        raise UsageError("-o/--output needs a directory, not an empty string")
    if args.max_kernels < 1:
        raise UsageError(f"--max-kernels must be at least 1, not {args.max_kernels}")
    from ..files import ensure_dir, locked

    out = ensure_dir(Path(args.output))  # an unwritable DIR fails before any solving
    with locked(out):  # and so does one that another ckspace is writing into
        return _emit_into(args, arch, rev)


def _emit_into(args: argparse.Namespace, arch: str, rev: str) -> int:
    from ..spec import is_selection
    from .options import space_from_args

    t0 = time.perf_counter()
    space = space_from_args(args, arch=arch, ck_api=rev, ck_include=None)
    family = space.spec.toolchain_family
    filters = {"variant": args.variant, "ndim": args.ndim, "dtype": args.dtype, "where": args.where}
    if args.names is not None:
        if args.set or any(filters.values()) or args.trait_config:
            raise UsageError("--names FILE emits exactly those kernels: give it without --set, --variant, --ndim, "
                             "--dtype, --where and --trait-config")
        from .options import configs_of_names

        configs = configs_of_names(space, args.names, rev, "emitted")
        if len(configs) > args.max_kernels:
            raise UsageError(f"--names has {len(configs):,} kernels, more than --max-kernels {args.max_kernels:,}")
        selection = {"names": args.names, "rules": args.rules, "toolchain": family}
        return _write(args, space, configs, selection, arch, rev, family, t0)
    if not is_selection(args.set):  # count before listing: the open space would never finish
        total = sum(space.count(**filters).values())
        if total > args.max_kernels:
            raise UsageError(f"the selection has {total:,} kernels, more than --max-kernels {args.max_kernels:,}; "
                             "narrow it (--set, --variant, --ndim, --dtype, --where) or raise --max-kernels")
    configs = space.select(args.set or "full", **filters)
    selection = {"set": args.set or "full", "variant": args.variant, "ndim": args.ndim, "dtype": args.dtype,
                 "where": args.where, "rules": args.rules, "toolchain": family}
    return _write(args, space, configs, selection, arch, rev, family, t0)


def _write(args: argparse.Namespace, space, configs, selection, arch: str, rev: str, family, t0: float) -> int:
    result = space.emit(configs, args.output, revision=rev, chunk_size=args.chunk_size, selection=selection)
    from . import output

    output.report_rejected(space)
    if not result.kernels and "names" not in selection:
        from .empty import note_empty_catalog

        note_empty_catalog(space)
    elapsed = time.perf_counter() - t0
    print(f"emitted {result.kernels} kernels for {arch} (CK API {rev}{f', {family} on' if family else ''}) into {args.output}: "
          f"{len(result.units)} compile unit{'s' if len(result.units) != 1 else ''}"
          f"{_expected(result.expected_seconds)}; "
          f"files {result.stats.summary()}; {elapsed:.1f}s")
    if result.stats.kept_edited:
        print(f"ckspace: note: kept {len(result.stats.kept_edited)} stale file(s) edited by hand, e.g. "
              f"{result.stats.kept_edited[0]}", file=sys.stderr)
    return 0


def _expected(costs: list[float]) -> str:
    """The expected compile cost (templates/compile-cost.toml): what `build -j N` will take, give or take."""
    if not costs:
        return ""
    total = sum(costs)
    amount = f"{total / 3600:.1f} core-hours" if total >= 5400 else f"{total / 60:.0f} core-minutes"
    return f" (expected about {amount}, the largest {max(costs) / 60:.1f} min)"


MAX_INVALID_SHOWN = 50


def _refuse_wrong_arch(tree: "Emitted", archs: list[str]) -> None:
    """Kernels emitted for one arch and compiled for another: the model says in a second which the other arch
    cannot build (one line each), before minutes of compiling fail."""
    bad = 0
    for arch in archs:
        if arch == tree.arch:
            continue
        invalid = tree.invalid_on(arch)
        for name, verdict in invalid[:MAX_INVALID_SHOWN]:
            print(f"ckspace: error: {name} is not valid on {arch}: {verdict.rule}: {verdict.message}", file=sys.stderr)
        if len(invalid) > MAX_INVALID_SHOWN:
            print(f"ckspace: error: ... {len(invalid) - MAX_INVALID_SHOWN:,} more kernels not valid on {arch}",
                  file=sys.stderr)
        bad += len(invalid)
    if bad:
        raise UsageError(f"{bad:,} kernel{'s' if bad != 1 else ''} of {tree.root} (emitted for {tree.arch}) "
                         f"{'are' if bad != 1 else 'is'} not valid on {', '.join(a for a in archs if a != tree.arch)}; "
                         "emit for that arch, or --force to compile anyway")


def _refuse_known_failures(tree: "Emitted", archs: list[str] | None, compiler: str | None) -> None:
    """Kernels the compiler `build` will use is known not to build (its family toolchain-NAME, from `ckspace verify`):
    one line each, before the compile that would fail after minutes."""
    failures = tree.known_failures(archs, compiler)
    shown: dict[str, int] = {}
    for arch, name, verdict in failures:
        shown[arch] = shown.get(arch, 0) + 1
        if shown[arch] <= MAX_INVALID_SHOWN:
            print(f"ckspace: error: {name} does not build on {arch} with {verdict.family}: {verdict.rule}: "
                  f"{verdict.message}", file=sys.stderr)
    for arch, n in shown.items():
        if n > MAX_INVALID_SHOWN:
            print(f"ckspace: error: ... {n - MAX_INVALID_SHOWN:,} more", file=sys.stderr)
    if failures:
        bad = len(failures)
        named = sorted({v.family for _, _, v in failures})
        raise UsageError(f"{bad:,} kernel{'s' if bad != 1 else ''} of {tree.root} {'are' if bad != 1 else 'is'} "
                         f"known not to build with this compiler ({', '.join(named)}); re-emit (emit leaves them out "
                         "with --toolchain auto), or --force to compile anyway")


def cmd_build(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from ..emitted import Emitted
    from ..spec import resolve_arch

    archs = None
    if args.offload_arch:
        archs = [resolve_arch(a.strip()) for a in args.offload_arch.split(",") if a.strip()]
        if not archs:
            raise UsageError("--offload-arch: empty list")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("-j must be at least 1")
    tree = Emitted(args.dir)
    if archs and not args.force:
        _refuse_wrong_arch(tree, archs)
    if not args.force:
        _refuse_known_failures(tree, archs, args.compiler)
    err = _console(stderr=True)
    progress = Progress(TextColumn("[bold]compile"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.description}"), console=err, transient=False)
    # The task, and its timer, start with the build: ninja says nothing until its first compile ends (minutes)
    units = len({k.get("unit") for k in tree.kernels.values() if k.get("unit")}) * len(tree.build_archs(archs))
    # (on a terminal; a log gets the bar once the first compile ends, as before, and none for a build refused first)
    at_once = f"up to {args.jobs} units at once" if args.jobs else "units in parallel (ninja's -j)"
    task = (progress.add_task(f"compiling, {at_once}; ninja reports each when it ends", total=units or None)
            if err.is_terminal else None)

    def on_progress(done: int, total: int, desc: str) -> None:
        nonlocal task
        if task is None:
            task = progress.add_task("", total=total)
        progress.update(task, completed=done, total=total, description=desc)

    def log(msg: str) -> None:
        err.print(f"[dim]{msg}[/dim]")

    with progress:
        result = tree.build(jobs=args.jobs, offload_archs=archs, compiler=args.compiler, launcher=args.launcher,
                            ck_include=args.ck_include, progress=on_progress, log=log)
    out = _console(stderr=False)
    if result.failures:
        if out.is_terminal:
            table = Table(title=f"{len(result.failures)} failed compile unit(s)", show_lines=True)
            table.add_column("unit")
            table.add_column("arch")
            table.add_column("kernels", overflow="fold")
            table.add_column("first error", overflow="fold")
            for f in result.failures:
                shown = "\n".join(f.kernels[:5]) + (f"\n… {len(f.kernels) - 5} more" if len(f.kernels) > 5 else "")
                table.add_row(Path(f.unit).name, f.arch, shown, f.error)
            out.print(table)
        else:  # a pipe or a log: one block per failure, nothing folded
            print(f"{len(result.failures)} failed compile unit(s):")
            for f in result.failures:
                print(f"  {f.unit} ({f.arch}): {len(f.kernels)} kernel(s)")
                for name in f.kernels:
                    print(f"    {name}")
                print(f"    first error: {f.error}")
        if result.log:
            print(f"full compiler output: {result.log}")
    ok = result.ok
    checked = ""
    if not result.failures and not args.no_check:
        checks = tree.check_objects(result.archs)
        bad = [c for c in checks if not c.ok]
        entries = sum(c.entry_points for c in checks)
        checked = f"; {len(checks)} objects checked ({entries} kernel entry points, ELF e_flags per arch)"
        for c in bad:
            err.print(f"ckspace: object {c.obj}: {'; '.join(c.problems[:3])}")
        ok = ok and not bad
    print(f"{'built' if ok else 'FAILED'}: {result.built}/{len(result.objects)} objects for "
          f"{', '.join(result.archs)} in {result.seconds:.0f}s with {result.toolchain}{checked}")
    return 0 if ok else 1
