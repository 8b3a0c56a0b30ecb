"""The selected sets on the command line: `ckspace coverage`, `ckspace sample`, and `enumerate --set tests|tiny`.

ckspace.cli wires these in: `add_parsers(subparsers)` registers the two commands, `run(args)` runs one, and
`selected_configs(space, set_name, objective_path, stable_from)` is what `enumerate --set` lists.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from ..errors import KernelNameError, UsageError

SETS = ("full", "tests", "tiny")


def add_parsers(subparsers) -> None:
    """Register `coverage` and `sample` on the `ckspace` subparsers."""
    from .output import FORMATS

    cov = subparsers.add_parser(
        "coverage", help="what a kernel set covers of an objective (a selected set or a file of names)",
        description="Coverage of a kernel set against a coverage objective: per dimension and per pair of "
                    "dimensions, covered/total and the uncovered items; names that are not in full are listed.")
    cov.add_argument("file", nargs="?", metavar="FILE",
                     help="a file of kernel names, one per line ('#' comments; '-' reads stdin); default: --set tests")
    cov.add_argument("--set", dest="set_name", metavar="SET", help="a selected set instead of a file: full, tests, tiny")
    _common(cov)
    cov.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    cov.add_argument("--all", action="store_true", help="list every uncovered item in text output (default: 40 per goal)")

    smp = subparsers.add_parser(
        "sample", help="a uniform random sample of a kernel set, reproducible by seed",
        description="A uniform random sample of the kernels of a set (over the set sorted by name, not over the "
                    "solver's order), reproducible by --seed; with --stratify, an equal share per stratum.")
    smp.add_argument("-n", type=int, required=True, metavar="N", help="number of kernels")
    smp.add_argument("--seed", default="0", metavar="S", help="random seed (default 0)")
    smp.add_argument("--stratify", metavar="DIMS",
                     help="equal share per group of these dimensions, e.g. variant,ndim,dtype (any dimension or field)")
    smp.add_argument("--set", dest="set_name", default="full", metavar="SET", help="full (default), tests, tiny")
    smp.add_argument("--variant", action="append", help="only these variants (repeat or comma-separate)")
    smp.add_argument("--ndim", action="append", help="only these ndims")
    smp.add_argument("--dtype", action="append", help="only these dtypes")
    smp.add_argument("--where", help="only kernels matching this filter (rule language)")
    _common(smp)
    smp.add_argument("--format", choices=FORMATS, help="output format (default: table on a terminal, names in a pipe)")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--arch", required=True, help="target arch (gfx90a, gfx942, gfx950, gfx1201, gfx1250)")
    p.add_argument("--objective", metavar="FILE",
                   help="coverage objective: tests, tiny or a TOML file (default: the set's own; tests for a file)")
    p.add_argument("--stable-from", dest="stable_from", metavar="FILE",
                   help="names of a previous selection to stay close to (with --set tests|tiny)")
    p.add_argument("--rules", help="switch rule families: +fam,-fam (default: full)")
    p.add_argument("--constraints", metavar="DIR", help="use this constraints directory instead of the built-in one")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    from ..codegen.ckapi import add_ck_api_options

    add_ck_api_options(p)


def run(args: argparse.Namespace) -> int:
    if args.command == "coverage":
        return cmd_coverage(args)
    if args.command == "sample":
        return cmd_sample(args)
    raise UsageError(f"unknown command {args.command!r}")


# -- the API the lead's enumerate calls ------------------------------------------------------------------------------


def _check_set(set_name: str) -> None:
    if set_name not in SETS:
        raise UsageError(f"unknown set {set_name!r}; choices: {', '.join(SETS)}")


def load_objective(space, set_name: str | None, objective_path: str | Path | None):
    from ..select import objectives

    spec = objective_path if objective_path is not None else (set_name if set_name in ("tests", "tiny") else "tests")
    return objectives.load(spec, space.data.fields)


def selection_for(space, set_name: str, objective_path: str | Path | None = None, stable_from: str | Path | None = None):
    """The `Selection` (configs and solver statistics) of `tests` or `tiny` under `space`'s rules."""
    from ..select import selection

    _check_set(set_name)
    if set_name == "full":
        raise UsageError("full is not a selection (use Space.enumerate)")
    return selection.select(space, load_objective(space, set_name, objective_path), stable_from)


def selected_configs(space, set_name: str, objective_path: str | Path | None = None,
                     stable_from: str | Path | None = None, variant=None, ndim=None, dtype=None,
                     where: str | None = None) -> list[dict[str, object]]:
    """The kernels of a set (full, tests, tiny) as enumerate's config dicts (fields + name), sorted by name.

    `objective_path` replaces the set's objective file; `stable_from` is a file of names of a previous selection to
    stay close to. variant/ndim/dtype/where filter the selected set like enumerate's options (the set itself is
    always selected over the whole arch).
    """
    _check_set(set_name)
    if set_name == "full":
        if objective_path is not None or stable_from is not None:
            raise UsageError("--objective and --stable-from apply to --set tests and --set tiny only")
        return sorted(space.enumerate(variant, ndim, dtype, where), key=lambda c: str(c["name"]))
    sel = selection_for(space, set_name, objective_path, stable_from)
    global LAST_SELECTION
    LAST_SELECTION = sel
    configs = sel.configs
    if any(v is not None for v in (variant, ndim, dtype, where)):
        keep = {str(c["name"]) for c in space.enumerate(variant, ndim, dtype, where)}
        configs = [c for c in configs if c["name"] in keep]
    return configs


LAST_SELECTION = None  # the Selection behind the last selected_configs() call (for a summary line on stderr)


def selection_summary(sel=None) -> str:
    """One line about a selection: size, proven lower bound, optimal or gap, time, churn (for stderr)."""
    from ..select.coverage import selection_summary as summary

    sel = sel if sel is not None else LAST_SELECTION
    if sel is None:
        return ""
    return f"{sel.stats.get('set')} on {sel.stats.get('arch')}: " + summary(sel.stats)


# -- coverage ------------------------------------------------------------------------------------------------------


def _space(args):
    from ..space import Space

    from ..codegen.ckapi import rules_with_ck_api

    return Space(arch=args.arch, rules=rules_with_ck_api(args), constraints_dir=args.constraints,
                 use_cache=not args.no_cache)


def explain_missing(space, name: str) -> str:
    """Why a name is not in full: malformed, outside the modelled space, or the first rule it breaks."""
    from ..rules.check import domain_violations
    from ..rules.names import parse_name

    try:
        cfg = parse_name(name)
    except KernelNameError as exc:
        return f"malformed name: {exc}"
    problems = domain_violations(space.model, cfg)
    if problems:
        return problems[0]
    try:
        broken = space.check(cfg)
    except Exception:  # a name of a kernel family this arch does not have, etc.
        broken = []
    if broken:
        v = broken[0]
        more = f" (and {len(broken) - 1} more rules)" if len(broken) > 1 else ""
        return f"breaks {v.id}: {v.message}{more}"
    return "not in full"


def cmd_coverage(args: argparse.Namespace) -> int:
    from ..select import coverage, selection

    if args.file and args.set_name:
        raise UsageError("give either a FILE of names or --set, not both")
    set_name = args.set_name or (None if args.file else "tests")
    if set_name is not None:
        _check_set(set_name)
    if args.stable_from and set_name not in ("tests", "tiny"):
        raise UsageError("--stable-from applies to --set tests and --set tiny only")
    space = _space(args)
    objective = load_objective(space, set_name, args.objective)
    full = list(space.enumerate())
    full_names = {str(c["name"]): c for c in full}
    stats = None
    if set_name == "full":
        names = sorted(full_names)
        source = "set full"
    elif set_name is not None:
        sel = selection.select(space, objective, args.stable_from)
        names = sel.names
        stats = sel.stats
        source = f"set {set_name}" + (f" (objective {objective.label()})" if args.objective else "")
    else:
        names = selection.read_names(args.file)
        source = "stdin" if args.file == "-" else str(args.file)
    universe = selection.universe(space, objective)
    index = coverage.ItemIndex(objective, universe)
    report = coverage.build_report(index, args.arch, source, names, full_names,
                                   explain=lambda n: explain_missing(space, n), selection=stats)
    out = coverage.format_json(report) if args.format == "json" else coverage.format_text(report, 0 if args.all else 40)
    sys.stdout.write(out)
    sys.stdout.flush()
    return 0


# -- sample --------------------------------------------------------------------------------------------------------


def cmd_sample(args: argparse.Namespace) -> int:
    from . import output
    from ..select.sample import sample, stratify_dimensions

    _check_set(args.set_name)
    if args.n < 0:
        raise UsageError(f"-n must be >= 0, got {args.n}")
    if (args.objective or args.stable_from) and args.set_name == "full":
        raise UsageError("--objective and --stable-from apply to --set tests and --set tiny only")
    seed: int | str = int(args.seed) if str(args.seed).lstrip("-").isdigit() else str(args.seed)
    space = _space(args)
    dims = stratify_dimensions(args.stratify, list(space.data.fields))
    configs = selected_configs(space, args.set_name, args.objective, args.stable_from,
                               args.variant, args.ndim, args.dtype, args.where)
    picked = sample(configs, args.n, seed, dims)
    fmt = args.format or ("table" if sys.stdout.isatty() else "names")
    rows = [output.record(c) for c in picked]
    out = sys.stdout
    if fmt == "names":
        output.write_names(rows, out)
    elif fmt == "jsonl":
        output.write_jsonl(rows, out)
    elif fmt == "json":
        output.write_json(rows, out)
    elif fmt == "csv":
        output.write_csv(rows, out, space.data.fields)
    else:
        from rich.console import Console

        console = Console(soft_wrap=False)
        title = f"{args.arch} · sample of {len(picked)} from {args.set_name} ({len(configs)}) · seed {args.seed}"
        counts = output.write_table(iter(rows), console, title)
        console.print(output.counts_table(counts, "sampled kernels per (variant, ndim, dtype)"))
    out.flush()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry (`python -m ckspace.cli_sets coverage|sample ...`) until ckspace.cli wires these in."""
    from ..errors import CkspaceError

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:
            raise UsageError(message)

    parser = _Parser(prog="ckspace")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    add_parsers(sub)
    sel = sub.add_parser("select", help="print a selected set (what `enumerate --set` prints)")
    sel.add_argument("--set", dest="set_name", required=True)
    _common(sel)
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        if args.command == "select":
            space = _space(args)
            for c in selected_configs(space, args.set_name, args.objective, args.stable_from):
                print(c["name"])
            if LAST_SELECTION is not None:
                print(selection_summary(), file=sys.stderr)
            return 0
        if args.command is None:
            parser.print_help()
            return 2
        return run(args)
    except CkspaceError as exc:
        sys.stdout.flush()
        print(f"ckspace: error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
