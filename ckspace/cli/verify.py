"""`ckspace verify`: compile a covering (or random, or whole) sample of a set with the build toolchain and report
per kernel (with what its code holds: LDS, registers, scratch, matrix instructions), with bisection of failing units
and proposed rules for the failures (ckspace.codegen.verify).

Exit codes: 0 every picked kernel compiled to code with a matrix instruction; 1 some failed, compiled without a
matrix instruction (`no-matrix`) or for a block larger than the code allows (`no-launch`), the budget left some not
compiled, or some cannot be expressed in the CK API revision (never compiled: `unexpressible`, each with why); 2 bad
usage; 130/143 interrupted (the verdicts so far are kept in the work directory, and the next run resumes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from ..errors import UsageError

DEFAULT_UNIT = 1
MAX_UNIT = 64
DEFAULT_MAX_KERNELS = 5_000  # at ~15-30 s of one core per kernel, more is a job for many machines


def add_parser(sub) -> None:
    from .options import SETS_HELP, add_problem_option, add_trait_config_option

    v = sub.add_parser("verify", help="compile a sample of a set and report per kernel (the compiler as the oracle)",
                       description="Compile kernels device-only with the build toolchain: a covering sample of a set "
                                   "(default), a uniform sample, or all; failing units are bisected to their "
                                   "kernels, and the failures are grouped into proposed rules. Kernels the CK API "
                                   "revision cannot express (a rule of its family, e.g. the wavelet pipeline in "
                                   "2025.11, or an arch its headers do not compile for, e.g. gfx1250 in 2025.11) "
                                   "are not compiled: they are reported as unexpressible, each with why. Each "
                                   "compiled kernel's ISA is read: its LDS bytes (against the model's lds_bytes), "
                                   "registers, scratch and matrix instructions; a kernel whose code holds no matrix "
                                   "instruction is a failure (no-matrix), and so is one whose block has more threads "
                                   "than its code object allows (no-launch). Exit 0 all compiled, 1 some failed, "
                                   "have no matrix instruction or no launch, were not run or are unexpressible, 2 bad "
                                   "usage, "
                                   "130/143 interrupted.")
    v.add_argument("--arch", required=True, help="target arch (gfx90a, gfx942, gfx950, ...), or auto")
    v.add_argument("--set", default="full", help=f"the set to sample (default full): {SETS_HELP}")
    v.add_argument("--over", metavar="CATALOG", help="with --set tests|tiny: the catalog they are selected from")
    pick = v.add_mutually_exclusive_group()
    pick.add_argument("--cover", action="store_true",
                      help="(default) the fewest kernels covering every value and value pair of --objective")
    pick.add_argument("--sample", type=int, metavar="N", help="N kernels drawn uniformly (--seed)")
    pick.add_argument("--all", action="store_true", help="every kernel of the set")
    pick.add_argument("--names", metavar="FILE",
                      help="exactly these kernels, one name per line (- for stdin; blank and # lines skipped), e.g. "
                           "a list picked on another machine; no solving is needed")
    v.add_argument("--objective", default="tests", metavar="NAME|FILE",
                   help="with --cover: the coverage objective (tests: default, tiny, or a file)")
    v.add_argument("--seed", default="0", help="with --sample: the random seed (default 0)")
    v.add_argument("--variant", action="append", help="forward, bwd_data, bwd_weight, forward_depthwise")
    v.add_argument("--ndim", action="append", help="2, 3")
    v.add_argument("--dtype", action="append", help="fp16, bf16, fp32")
    v.add_argument("--where", help="filter on fields, e.g. \"pipeline == 'compv3'\"")
    add_trait_config_option(v)
    add_problem_option(v)
    v.add_argument("--rules", help="switch rule families: +fam,-fam")
    v.add_argument("--ck-api", default=None, metavar="REV",
                   help="CK Tile API revision of the C++ (default: the one the build toolchain's headers are)")
    v.add_argument("--ck-include", metavar="DIR", help="CK Tile headers (default: ROCm's, else the registry toolchain's)")
    v.add_argument("--compiler", metavar="PATH", help="a HIP clang (default: ROCm's, else the registry toolchain)")
    v.add_argument("--toolchain", default="auto", metavar="NAME",
                   help="leave out what this compiler's family (toolchain-NAME) says it cannot build: auto (default: "
                        "the compiler used), registry, clang22, ..., or none to compile those kernels too (to check "
                        "whether a rule still holds)")
    v.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="parallel compiles (default: ninja's)")
    v.add_argument("--unit-size", type=int, default=DEFAULT_UNIT, metavar="K",
                   help=f"kernels per compile unit (default {DEFAULT_UNIT}; a failing unit is bisected to its kernels)")
    v.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help="stop starting new compiles after this long; run again to resume")
    v.add_argument("--compile-timeout", type=float, default=None, metavar="SECONDS",
                   help="kill a compile that runs longer than this: its kernels are timed-out (no verdict, not "
                        "kept; a run with more time compiles them again)")
    v.add_argument("-o", "--output", metavar="DIR",
                   help="work directory, kept for resuming (default: <cache dir>/verify/<arch>)")
    v.add_argument("--max-kernels", type=int, default=DEFAULT_MAX_KERNELS, metavar="N",
                   help=f"refuse to verify more kernels than this (default {DEFAULT_MAX_KERNELS:,})")
    v.add_argument("--record", metavar="FILE",
                   help="append the proposed rules to this rule file (TOML, created if missing), each with the "
                        "compiler, the CK revision, a reproducer and its error; review it, then move it under "
                        "constraints/rules/")
    v.add_argument("--audit", action="store_true",
                   help="measure the facts against the compiler: --sample N kernels drawn uniformly from the space "
                        "(default: the open space, --rules -ck-curation) and N more stratified by --stratify, plus "
                        "up to --near-misses M kernels breaking each fact rule alone; reports the precision of each "
                        "draw, the share of each rule's near misses that fails, and the confusion matrix. Exit 0 "
                        "when every kernel was compiled and the targets hold (precision >= 99%%, near misses "
                        "fail >= 95%%), else 1. With --names FILE, the kernels of a plan (--write-plan) or any list")
    v.add_argument("--near-misses", type=int, default=None, metavar="M",
                   help="with --audit: near misses per fact rule (default: the --sample size)")
    v.add_argument("--stratify", default=None, metavar="DIMS",
                   help="with --audit: the dimensions of the stratified draw (default "
                        "variant,ndim,dtype,tile,pipeline; none: no stratified draw)")
    v.add_argument("--write-plan", metavar="FILE",
                   help="with --audit: write the plan (the kernels, by section) to FILE and stop before compiling; "
                        "compile it elsewhere with --audit --names FILE")
    v.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                   help="text (default), json, or markdown (with --audit: the tables of docs/audit.md)")
    v.add_argument("--constraints", metavar="DIR", help="use this constraints directory instead of the built-in one")
    v.add_argument("--no-cache", action="store_true", help="do not read or write the result cache (the model's)")


from .options import configs_of_names  # noqa: E402


def cmd_verify(args: argparse.Namespace) -> int:
    from .. import oracle
    from ..spec import check_set, resolve_arch
    from .sets import parse_seed

    arch = resolve_arch(args.arch)
    check_set(args.set)
    if not 1 <= args.unit_size <= MAX_UNIT:
        raise UsageError(f"--unit-size must be between 1 and {MAX_UNIT}, not {args.unit_size}")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("-j must be at least 1")
    if args.budget is not None and not args.budget > 0:
        raise UsageError(f"--budget must be a positive number of seconds, not {args.budget}")
    if args.compile_timeout is not None and not 0 < args.compile_timeout < 1e6:
        raise UsageError(f"--compile-timeout must be a positive number of seconds, not {args.compile_timeout}")
    if args.sample is not None and args.sample < 1:
        raise UsageError(f"--sample must be at least 1, not {args.sample}")
    if args.max_kernels < 1:
        raise UsageError(f"--max-kernels must be at least 1, not {args.max_kernels}")
    seed = parse_seed(str(args.seed))
    _check_audit_options(args)
    rev = oracle.build_revision(args.ck_api, args.ck_include)
    if args.problem is not None:  # the kernels that run it under the revision the C++ is written for
        from ..spec import problem_filter

        args.problem, args.where = problem_filter(args.problem, arch, rev, None, args.constraints, args.where)
    from .options import space_from_args

    space = space_from_args(args, arch=arch, ck_api=rev, ck_include=None, ck_config=None)
    family = space.spec.toolchain_family
    workdir = Path(args.output) if args.output else _default_workdir(arch)
    from ..files import check_inside, check_subdir, ensure_dir

    ensure_dir(workdir)  # an unwritable work directory fails before any solving
    check_subdir(workdir, oracle.WORK_DIR)  # and so does a planted DIR/work -> elsewhere (emit's check of every write)
    check_inside(workdir, oracle.COMPILES_LOG)
    # and so does a rule file that cannot take rules
    record = oracle.check_record_file(args.record) if args.record else None
    filters = dict(variant=args.variant, ndim=args.ndim, dtype=args.dtype, where=args.where)
    if args.audit:
        return _audit(args, space, rev, seed, filters, workdir, record)
    if args.names is not None:
        if args.set != "full" or args.over or any(filters.values()):
            raise UsageError("--names lists the kernels itself: drop --set, --over, --variant, --ndim, --dtype and --where")
        configs = configs_of_names(space, args.names, rev)
    else:
        configs = space.select(args.set, **filters)
    if args.sample is not None:
        configs = space.sample_from(configs, args.sample, seed=seed)
    elif not args.all and args.names is None:
        configs = space.cover(configs, args.objective)
    if len(configs) > args.max_kernels:
        raise UsageError(f"{len(configs):,} kernels to compile, more than --max-kernels {args.max_kernels:,}; "
                         "narrow the set, use --sample N, or raise --max-kernels")
    if not configs:
        from .empty import empty_catalog_reason

        reason = empty_catalog_reason(space) if args.names is None else None
        raise UsageError("no kernel to verify: the set and filters leave none" + (f"; {reason}" if reason else ""))
    err = _console()
    log = (lambda msg: err.print(f"[dim]{msg}[/dim]")) if args.format == "text" else (lambda msg: None)
    log(f"verifying {len(configs)} kernel(s) for {arch} (CK API {rev}"
        f"{f', {family} on' if family else ''}) in {workdir}")
    with _progress(err, len(configs)) as progress:
        result = space.verify(configs, workdir, revision=rev, unit_size=args.unit_size, jobs=args.jobs,
                              budget=args.budget, compiler=args.compiler, ck_include=args.ck_include, log=log,
                              warn=lambda line: print(f"warning: {line}", file=sys.stderr, flush=True),
                              compile_timeout=args.compile_timeout, progress=progress)
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=1))
    else:
        _print_text(result, rev, args.compiler)
    if record is not None:
        written = oracle.record_proposals(record, result, rev, args.compiler)
        print(f"{written} proposed rule(s) appended to {record}", file=sys.stderr)
    return 0 if not (result.failed or result.no_matrix or result.no_launch or result.timed_out or result.stopped
                     or result.unexpressible or result.not_run) else 1


AUDIT_SAMPLE = 100  # --audit without --sample


def _check_audit_options(args: argparse.Namespace) -> None:
    """The audit's options, checked before any solving; the others stay as verify has them."""
    audit_only = [o for o, v in (("--near-misses", args.near_misses), ("--stratify", args.stratify),
                                 ("--write-plan", args.write_plan)) if v is not None]
    if not args.audit:
        if audit_only:
            raise UsageError(f"{audit_only[0]} goes with --audit")
        if args.format == "markdown":
            raise UsageError("--format markdown goes with --audit")
        return
    if args.cover or args.all:
        raise UsageError("--audit draws its kernels itself: drop --cover and --all (--sample N sets the draw)")
    if args.set != "full" or args.over:
        raise UsageError("--audit measures the facts on the open space: drop --set and --over (--rules switches "
                         "families)")
    if args.near_misses is not None and args.near_misses < 0:
        raise UsageError(f"--near-misses must be at least 0, not {args.near_misses}")
    if args.names is not None and (args.sample is not None or args.near_misses is not None
                                   or args.stratify is not None or args.write_plan):
        raise UsageError("--audit --names compiles the plan in the file: drop --sample, --near-misses, --stratify "
                         "and --write-plan")
    if args.names is not None and any((args.variant, args.ndim, args.dtype, args.where)):
        raise UsageError("--names lists the kernels itself: drop --variant, --ndim, --dtype and --where")
    if args.rules is None:
        args.rules = "-ck-curation"  # the facts alone: the open space


def _audit(args: argparse.Namespace, space, rev: str, seed, filters, workdir: Path, record) -> int:
    """`verify --audit`: draw (or read) the plan, compile it, and report on the facts (ckspace.codegen.audit)."""
    from .. import oracle
    from ..files import atomic_write
    from ..lines import read_lines

    err = _console()
    log = (lambda msg: err.print(f"[dim]{msg}[/dim]")) if args.format == "text" else (lambda msg: None)
    plan_file = None
    if args.write_plan:
        plan_file = _writable_file(args.write_plan, "--write-plan")
    if args.names is not None:
        lines = read_lines(args.names, "--names")
        names = list(dict.fromkeys(name for line in lines if (name := line.split("#", 1)[0].strip())))
    else:
        n = AUDIT_SAMPLE if args.sample is None else args.sample
        near = n if args.near_misses is None else args.near_misses
        stratify = None if args.stratify is None else ("" if args.stratify == "none" else args.stratify)
        log(f"drawing the audit of {space.arch}: {n} uniform{', ' + str(n) + ' stratified' if stratify else ''}, "
            f"up to {near} near misses per fact rule (seed {seed})")
        plan = space.audit_plan(n, near, seed=seed, stratify=stratify, log=log, **filters)
        names = plan.names()
    if len(names) > args.max_kernels:
        raise UsageError(f"{len(names):,} kernels to compile, more than --max-kernels {args.max_kernels:,}; "
                         "lower --sample or --near-misses, or raise --max-kernels")
    if not names:
        raise UsageError("no kernel to audit: the draws and the file leave none")
    configs = {}
    for name in names:
        config = space.parse(name)
        config["name"] = name
        configs[name] = config
    if args.names is not None:
        plan = space.audit_plan_of(lines, f"--names {args.names}", configs)
    if plan_file is not None:
        atomic_write(plan_file, plan.text().encode())
        print(f"{len(names)} kernel(s) in {len(plan.sections)} section(s) written to {args.write_plan}",
              file=sys.stderr)
        return 0
    log(f"auditing {len(names)} kernel(s) for {space.arch} (CK API {rev}) in {workdir}")
    order = plan.interleaved()  # a budget that cuts the run leaves every section a share of its kernels
    with _progress(_console(), len(order)) as progress:
        result = space.verify([configs[n] for n in order], workdir, revision=rev, unit_size=args.unit_size,
                              jobs=args.jobs, budget=args.budget, compiler=args.compiler, ck_include=args.ck_include,
                              log=log, warn=lambda line: print(f"warning: {line}", file=sys.stderr, flush=True),
                              compile_timeout=args.compile_timeout, progress=progress)
    rep = space.audit(plan, result, configs)
    if args.format == "json":
        print(json.dumps({"audit": rep.to_json(), "verify": result.to_json()}, indent=1))
    elif args.format == "markdown":
        print(rep.markdown())
    else:
        print(rep.text(rev))
    if record is not None:
        written = oracle.record_proposals(record, result, rev, args.compiler)
        print(f"{written} proposed rule(s) appended to {record}", file=sys.stderr)
    return 0 if rep.met else 1


def _writable_file(path: str, option: str) -> Path:
    """An output file checked before any work: not a directory, in a writable directory."""
    import os

    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {path}: a directory; give a file")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError(f"{option} {path}: {parent} is not a writable directory")
    return target


def _default_workdir(arch: str) -> Path:
    from ..cache import cache_dir

    return cache_dir() / "verify" / arch


def _console():
    from .console import console

    return console(stderr=True)


def _isa_line(k) -> str:
    """One kernel's ISA: the largest of each resource over its entry points, its matrix instructions."""
    if k.isa is None:
        return f"ISA not read ({k.isa_error})"
    i = k.isa

    def num(v) -> str:
        return "?" if v is None else f"{v:,}"

    lds = f"LDS {num(i['lds_bytes'])} B"
    if k.lds_model is not None:
        delta = k.lds_delta
        lds += f" (model {k.lds_model:,}{'' if not delta else f', {delta:+,}'})"
    parts = [lds, f"VGPR {num(i['vgprs'])}"]
    if i.get("agprs"):
        parts.append(f"AGPR {num(i['agprs'])}")
    parts += [f"SGPR {num(i['sgprs'])}", f"scratch {num(i['scratch_bytes'])} B"]
    if i["matrix_instructions"]:
        mnemonics = ", ".join(f"{m} ×{n}" for m, n in i["matrix_mnemonics"].items())
        parts.append(f"{i['matrix_instructions']} matrix ({mnemonics})")
    else:
        parts.append("no matrix instruction")
    return ", ".join(parts) + f"; {i['entry_points']} entry point(s)"


def _print_isa(result) -> None:
    """Each compiled kernel's ISA, the model's LDS against the descriptors, and the calls the registers leave out."""
    read = [k for k in result.kernels if k.status in ("ok", "no-matrix", "no-launch")]
    if not read:
        return
    lds = result.lds_summary()
    if lds["compared"]:
        line = (f"LDS: the model's lds_bytes is the descriptor's group segment size for {lds['agree']} of "
                f"{lds['compared']} kernel(s)")
        if lds["max_under"]:
            line += f"; it under-estimates by up to {lds['max_under']['bytes']:,} B ({lds['max_under']['kernel']})"
        if lds["max_over"]:
            line += f"; it over-estimates by up to {lds['max_over']['bytes']:,} B ({lds['max_over']['kernel']})"
        print(line)
    calls = sorted({c for k in read if k.isa for c in k.isa["external_calls"]})
    if calls:
        print(f"note: the code calls functions the unit does not define ({', '.join(calls[:4])}"
              f"{', ...' if len(calls) > 4 else ''}): their registers are not counted, and the calls' own spills are")
    print("ISA per kernel (the largest over its entry points):")
    for k in read:
        print(f"  {'ok' if k.status == 'ok' else k.status.upper()} {k.name}: {_isa_line(k)}")


def _print_text(result, rev: str, compiler: str | None = None) -> None:
    from ..oracle import STATUSES

    counts = {s: sum(1 for k in result.kernels if k.status == s) for s in STATUSES}
    cached = sum(1 for k in result.kernels if k.cached)
    no_matrix = f", {counts['no-matrix']} without a matrix instruction (no-matrix)" if counts["no-matrix"] else ""
    if counts["no-launch"]:
        no_matrix += f", {counts['no-launch']} with a block no launch can have (no-launch)"
    unexpressible = f", {counts['unexpressible']} unexpressible in CK API {rev}" if counts["unexpressible"] else ""
    if counts["timed-out"]:
        no_matrix += f", {counts['timed-out']} timed out (no verdict)"
    print(f"verify {result.arch} · CK API {rev} · {result.toolchain or 'no compile needed'}")
    print(f"{len(result.kernels)} kernels: {counts['ok']} ok, {counts['failed']} failed, {counts['not-run']} not run"
          f"{no_matrix}{unexpressible}"
          f"{f' ({cached} from earlier runs)' if cached else ''}; {result.compiles} compile units in "
          f"{result.rounds} round{'s' if result.rounds != 1 else ''}, {result.seconds:.0f}s" + (f"; stopped: {result.stopped}" if result.stopped else ""))
    peaks = sorted(k.peak_mib for k in result.kernels if k.peak_mib is not None)
    if peaks:
        print(f"peak memory per compile unit: median {peaks[len(peaks) // 2]:,.0f} MiB, max {peaks[-1]:,.0f} MiB")
    _print_isa(result)
    for k in result.kernels:
        if k.status == "failed":
            print(f"  FAILED {k.name}: {k.error}")
        elif k.status == "no-launch":
            print(f"  NO-LAUNCH {k.name}: {k.error}")
    for k in result.kernels:
        if k.status == "timed-out":
            print(f"  TIMED-OUT {k.name}: {k.error}")
    for k in result.kernels:
        if k.status == "not-run":
            print(f"  not run {k.name}")
    for k in result.kernels:
        if k.status == "unexpressible":
            print(f"  UNEXPRESSIBLE {k.name}: {k.error}")
    if result.proposals:
        from ..oracle import compiler_family

        family = compiler_family(result.arch, compiler)
        print("\nproposed rules (the fewest field values all failures of one error share and no compiled kernel has):")
        for i, p in enumerate(result.proposals, 1):
            print(f"\n# {len(p.kernels)} kernel(s): {p.error}")
            print(p.rule_text(family, i, result.arch, result.toolchain or (compiler or ""), rev))


@contextlib.contextmanager
def _progress(err, kernels: int):
    """A progress bar on a terminal's stderr from the first second: kernels compiled of those to compile (cached
    verdicts are not among them), the round, the failures and an estimate of the time left. None elsewhere (a log
    gets the final report only)."""
    if not err.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("[bold]verify"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.description}"), console=err, transient=False)
    task = bar.add_task(f"emitting {kernels:,} kernel(s), then the first round", total=None)

    def update(done: int, total: int, desc: str) -> None:
        bar.update(task, completed=done, total=total, description=desc)

    with bar:
        yield update
