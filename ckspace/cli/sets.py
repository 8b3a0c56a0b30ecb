"""`ckspace coverage` and `ckspace sample`: thin commands over the Space facade's sets."""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..spec import SELECTED_SETS, WHOLE_SPACE, check_set, is_selection
from .options import (SETS_HELP, add_ck_api_options, add_ck_config_option, add_over_option, add_problem_option,
                      add_trait_config_option, space_from_args)


def add_parsers(subparsers) -> None:
    """Register `coverage` and `sample` on the `ckspace` subparsers."""
    from .output import FORMATS

    cov = subparsers.add_parser(
        "coverage", help="what a kernel set covers of an objective (a selected set or a file of names)",
        description="Coverage of a kernel set against a coverage objective: per dimension and per pair of "
                    "dimensions, covered/total and the uncovered items; names that are not in full are listed.")
    cov.add_argument("file", nargs="?", metavar="FILE",
                     help="a file of kernel names, one per line ('#' comments; '-' reads stdin); default: --set tests")
    cov.add_argument("--set", dest="set_name", metavar="SET", help=f"a set instead of a file: {SETS_HELP}")
    add_problem_option(cov)
    _common(cov)
    cov.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    cov.add_argument("--full", action="store_true",
                     help="list the uncovered items on a terminal too (40 per goal; a pipe always gets them), "
                          "through a pager when long")
    cov.add_argument("--all", action="store_true", help="list every uncovered item in text output (default: 40 per "
                                                        "goal); implies --full")

    smp = subparsers.add_parser(
        "sample", help="a uniform random sample of a kernel set, reproducible by seed",
        description="A uniform random sample of N distinct kernels of a set (over the set sorted by name, not over "
                    "the solver's order), reproducible by --seed; with --stratify, an equal share per stratum. A space "
                    "without curation (--rules -ck-curation) is sampled without listing it: its kernels are numbered "
                    "by the count and N distinct numbers are drawn.")
    smp.add_argument("-n", type=int, required=True, metavar="N", help="number of kernels")
    smp.add_argument("--seed", default="0", metavar="S", help="random seed (default 0)")
    smp.add_argument("--stratify", metavar="DIMS",
                     help="equal share per group of these dimensions, e.g. variant,ndim,dtype (any dimension or field)")
    smp.add_argument("--set", dest="set_name", default="full", metavar="SET", help=f"the set (default full): {SETS_HELP}")
    smp.add_argument("--variant", action="append", help="only these variants (repeat or comma-separate)")
    smp.add_argument("--ndim", action="append", help="only these ndims")
    smp.add_argument("--dtype", action="append", help="only these dtypes")
    smp.add_argument("--where", help="only kernels matching this filter (rule language)")
    add_trait_config_option(smp)
    add_problem_option(smp)
    _common(smp)
    smp.add_argument("--format", choices=FORMATS, help="output format (default: table on a terminal, names in a pipe)")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--arch", required=True, help="target arch (gfx90a, gfx942, gfx950, gfx1100, gfx1200, gfx1201, gfx1250)")
    p.add_argument("--objective", metavar="FILE",
                   help="coverage objective: tests, tiny or a TOML file (default: the set's own; tests for a file)")
    p.add_argument("--stable-from", dest="stable_from", metavar="FILE",
                   help="names of a previous selection to stay close to (with --set tests|tiny)")
    p.add_argument("--rules", help="switch rule families: +fam,-fam (default: full)")
    p.add_argument("--constraints", metavar="DIR", help="use this constraints directory instead of the built-in one")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    add_ck_api_options(p)
    add_over_option(p)
    add_ck_config_option(p)


def run(args: argparse.Namespace) -> int:
    if args.command == "coverage":
        return cmd_coverage(args)
    if args.command == "sample":
        return cmd_sample(args)
    raise UsageError(f"unknown command {args.command!r}")


def cmd_coverage(args: argparse.Namespace) -> int:
    from ..lines import read_names

    if args.file and args.set_name:
        raise UsageError("give either a FILE of names or --set, not both")
    set_name = args.set_name or (None if args.file else ("ck-config" if args.ck_config else "tests"))
    if set_name is not None:
        check_set(set_name)
    if args.stable_from and set_name not in SELECTED_SETS:
        raise UsageError("--stable-from applies to --set tests and --set tiny only")
    listed_space = None
    names: list[str] | None  # None: the named set's own kernels
    if set_name is not None and (not is_selection(set_name) or args.ck_config):
        # A catalog's coverage is that of its kernels as a list of names, against --over (default full): what
        # CK's sets cover of the space ckspace's tests and tiny are chosen from.
        if set_name in SELECTED_SETS:
            raise UsageError("coverage --set tests|tiny --ck-config: give --over instead (what they cover is "
                             "measured against the catalog they are selected from)")
        over = args.over
        args.over, args.set_name = None, set_name
        listed_space = space_from_args(args)
        set_name = args.set_name
        args.set_name, args.ck_config, args.over = None, None, over
        space = space_from_args(args)
        what = f"the set {set_name}" + (f" under --rules {args.rules}" if args.rules else "")
        # the open space is counted first: one line, before any of it is listed
        names = [str(c["name"]) for c in listed_space.listed(what, hint=WHOLE_SPACE)]
        report = space.coverage(names, objective=args.objective, source=f"set {set_name}",
                                where=getattr(args, "where", None))
    else:
        space = space_from_args(args)
        names = read_names(args.file) if set_name is None else None
        from .console import waiting

        with waiting(f"covering {set_name or args.file} against its objective"):
            report = space.coverage(names, set_name=set_name, objective=args.objective,
                                    stable_from=args.stable_from,
                                    source="stdin" if args.file == "-" else str(args.file),
                                    where=getattr(args, "where", None))
    if args.format == "json":
        sys.stdout.write(report.json())
    else:  # on a terminal a summary unless asked for the list; a pipe gets the list
        from .console import page

        summary = sys.stdout.isatty() and not (args.full or args.all)
        page(report.text(0 if args.all else 40, summary=summary))
    sys.stdout.flush()
    from . import output

    output.report_rejected(listed_space or space)
    if set_name is not None and not report.names_read:  # a table of zeros: say why, if the catalog is why
        from .empty import note_empty_catalog

        note_empty_catalog(listed_space or space)
    return 0


def parse_seed(text: str) -> int | str:
    """A sample seed: an integer (at most 18 digits: the sampler's RNG takes any, but a longer one is a paste
    error) or a short word."""
    digits = text[1:] if text.startswith("-") else text
    if digits.isascii() and digits.isdigit():
        if len(digits) > 18:
            raise UsageError(f"--seed must be an integer of at most 18 digits or a word, not {len(digits)} digits")
        return int(text)
    if not text or len(text) > 64 or not (text.isascii() and text.isprintable()):
        raise UsageError("--seed must be an integer of at most 18 digits or a word of at most 64 printable ASCII "
                         f"characters, not {text[:20]!r}")
    return text


def cmd_sample(args: argparse.Namespace) -> int:
    from . import output

    check_set(args.set_name)
    if args.n < 0:
        raise UsageError(f"-n must be >= 0, got {args.n}")
    if (args.objective or args.stable_from) and args.set_name == "full":
        raise UsageError("--objective and --stable-from apply to --set tests and --set tiny only")
    seed = parse_seed(str(args.seed))
    space = space_from_args(args)
    # a catalog without curation (the open space) is sampled without listing it; any other set is listed; a bad
    # --stratify fails before any solving
    from .console import waiting

    with waiting(f"sampling {args.n:,} kernel(s) of {args.set_name or 'full'}"):
        picked, total = space.sample_of(args.n, seed=seed, stratify=args.stratify, set_name=args.set_name,
                                        objective=args.objective, stable_from=args.stable_from,
                                        variant=args.variant, ndim=args.ndim, dtype=args.dtype, where=args.where)
    if len(picked) < args.n:  # asked for more than there are: say so rather than return fewer in silence
        print(f"ckspace: warning: {args.set_name} has {total:,} kernel(s) here, fewer than -n {args.n:,}: "
              "all of them are listed", file=sys.stderr)
    fmt = args.format or ("table" if sys.stdout.isatty() else "names")
    title = f"{args.arch} · sample of {len(picked)} from {args.set_name} ({total}) · seed {args.seed}"
    output.write_kernels(fmt, (output.record(c) for c in picked), sys.stdout, space.data.fields,
                         title=title, counts_title="sampled kernels per (variant, ndim, dtype)",
                         derive=space.deriver() if fmt in ("json", "jsonl", "csv") else None)
    output.report_rejected(space)
    if not total:
        from .empty import note_empty_catalog

        note_empty_catalog(space)
    return 0
