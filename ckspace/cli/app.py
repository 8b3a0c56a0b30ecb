"""The `ckspace` command line: a thin layer over `ckspace.Space`.

Exit codes: 0 success; 1 a negative answer (explain: rejected); 2 bad input (one line on stderr, no traceback);
130 interrupted (Ctrl-C), 143 terminated (SIGTERM): one line on stderr, nothing cached, no process left behind.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from typing import NoReturn, Sequence

from ..errors import CkspaceError, UsageError
from ..signals import Terminated, acknowledge, exit_status, stop_behind, stop_signals_raise
from .options import (SETS_HELP, add_ck_api_options, add_ck_config_option, add_over_option, add_problem_option,
                      add_trait_config_option, refuse_empty, space_from_args)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (argparse would print the whole usage)
        raise UsageError(message)

    def _get_values(self, action, arg_strings):  # every value given on the command line passes here
        value = super()._get_values(action, arg_strings)
        if arg_strings:
            refuse_empty(action, value)  # '' is no value: one line, before any work
        return value


def build_parser() -> argparse.ArgumentParser:
    from .output import FORMATS

    parser = _Parser(prog="ckspace", description="The CK Tile grouped-convolution kernel-instance space as a constraint model.")
    parser.add_argument("--version", action="version", version=f"ckspace {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    en = sub.add_parser("enumerate", help="list the valid kernels of an arch",
                        description="List the kernels of a set (default full: CK's full rule set) that are valid on "
                                    "an arch, sorted by name: plain names in a pipe, a summary on a terminal, or "
                                    "json/jsonl/csv/table with --format. Filters: --variant, --ndim, --dtype, "
                                    "--where; --count gives the numbers per (variant, ndim, dtype). Exit 0, or 2 on "
                                    "bad usage.")
    en.add_argument("--arch", required=True, help="target arch (gfx90a, gfx942, gfx950, gfx1100, gfx1200, gfx1201, gfx1250)")
    en.add_argument("--set", default="full",
                    help=f"kernel set (default full): {SETS_HELP}; see docs/objectives.md and --over")
    en.add_argument("--objective", metavar="FILE", help="with --set tests|tiny: a coverage objective file instead of the set's own")
    en.add_argument("--stable-from", dest="stable_from", metavar="FILE",
                    help="with --set tests|tiny: names of a previous selection to change as little as possible")
    en.add_argument("--variant", action="append", help="forward, bwd_data, bwd_weight, forward_depthwise (repeat or comma-separate)")
    en.add_argument("--ndim", action="append", help="2, 3 (repeat or comma-separate)")
    en.add_argument("--dtype", action="append", help="fp16, bf16, fp32 (repeat or comma-separate)")
    en.add_argument("--where", help="filter on fields, applied as solver constraints, e.g. \"tile_n >= 128 and pipeline == 'compv3'\"")
    add_trait_config_option(en)
    add_problem_option(en)
    en.add_argument("--rules", help="switch rule families: +fam,-fam (default: arch, pipeline, ck-curation = full)")
    en.add_argument("--count", action="store_true", help="only count, per (variant, ndim, dtype)")
    en.add_argument("--count-by", metavar="FIELDS",
                    help="only count, grouped by these fields or derived quantities (comma-separated, e.g. "
                         "pipeline,scheduler; `ckspace fields` lists them)")
    en.add_argument("--format", choices=(*FORMATS, "ck-config", "trait-config"),
                    help="output format (default: a summary on a terminal, names in a pipe or a file); ck-config: "
                         "CK's dispatcher JSON configs into the directory -o DIR, split by file as CK splits its "
                         "own (<variant>/<set>/<layout>_<datatype>.json), which --ck-config DIR reads back; "
                         "trait-config: tile-engine trait configs into -o DIR, one <variant>.json each, with the "
                         "values the kernels use (a product: it selects them and the other combinations of their "
                         "values; --trait-config reads it back)")
    en.add_argument("-o", "--output", metavar="FILE",
                    help="write to FILE (a regular file atomically: a failed or interrupted run leaves the old one "
                         "as it was; a device or FIFO is written through); the format follows its suffix (.json, "
                         ".jsonl, .csv, else names) unless --format says")
    en.add_argument("--export-json", metavar="FILE", help="the same as -o FILE --format json (tile-engine's option)")
    en.add_argument("--constraints", metavar="DIR", help="use this constraints directory instead of the built-in one")
    en.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    en.add_argument("--timings", action="store_true", help="print where the time went (imports, model, solve, output) to stderr")
    add_ck_api_options(en)
    add_over_option(en)
    add_ck_config_option(en)
    from .explain import add_parser as add_explain

    add_explain(sub)
    from .sets import add_parsers as add_set_commands

    add_set_commands(sub)
    from .build import add_parsers as add_build_commands  # cheap: the emit/build modules load when they run

    add_build_commands(sub)
    from .verify import add_parser as add_verify

    add_verify(sub)
    from .rules import add_parser as add_rules

    add_rules(sub)
    from .fields import add_parser as add_fields

    add_fields(sub)
    from .problems import add_parser as add_problems

    add_problems(sub)
    return parser


def _join_rule_values(argv: list[str]) -> list[str]:
    """`--rules -ck-curation` would read as an unknown option to argparse; the value of --rules is always taken."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] == "--rules" and i + 1 < len(argv):
            out.append(f"--rules={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def _version() -> str:
    from ..version import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `ckspace ... | head` ends quietly
    _tolerate_narrow_encodings()
    import warnings

    from ..errors import LeftOutWarning

    # SIGTERM takes Ctrl-C's path below (the caller's handlers are back afterwards); the left-out configs of a list
    # are reported by the commands themselves (output.report_rejected), not as the API's warning
    try:
        with stop_signals_raise(), warnings.catch_warnings():
            warnings.simplefilter("ignore", LeftOutWarning)
            return _run(argv, started)
    except KeyboardInterrupt as stop:  # one that landed while the handlers were being put in place, or back
        return _interrupted(stop)


def _run(argv: Sequence[str] | None, started: float) -> int:
    try:
        if sys.stdout is None:  # started with stdout closed (`>&-`): there is nowhere to put the answer
            raise UsageError("cannot write output: standard output is closed")
        code = _dispatch(argv, started)
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not as a traceback at exit
    except BaseException as exc:
        # Ctrl-C or SIGTERM first, whatever it became on the way: an ImportError of an import it cut short, another
        # exception raised while it unwound, or nothing at all (an exception Python dropped in a callback)
        stop = stop_behind(exc)
        if stop is not None:
            return _interrupted(stop)
        if isinstance(exc, CkspaceError):
            _flush_or_drop()
            _error(str(exc))
            return exc.exit_code
        if isinstance(exc, OSError):  # writing the output failed (/dev/full, a closed pipe): one line, no traceback
            _flush_or_drop()
            _error(f"cannot write output: {exc.strerror or exc}")
            return 2
        raise
    stop = stop_behind(None)  # a stop whose exception was lost: the answer is whole, but the user asked to stop
    return _interrupted(stop) if stop is not None else code


def _interrupted(exc: KeyboardInterrupt) -> int:
    acknowledge()
    _flush_or_drop()
    _error("terminated" if isinstance(exc, Terminated) else "interrupted", prefix="ckspace: ")
    return exit_status(exc)


def _dispatch(argv: Sequence[str] | None, started: float) -> int:
    from . import answers

    words = list(sys.argv[1:] if argv is None else argv)
    served = answers.serve(words)  # a plain enumerate or explain answered before: its kept bytes, no rules loaded
    if served is not None:
        return served
    args = build_parser().parse_args(_join_rule_values(words))
    if args.command is None:
        build_parser().print_help()
        return 2
    if getattr(args, "arch", None) == "auto":  # every command: the local GPU's gfx name, or one clear line
        from ..spec import resolve_arch

        args.arch = resolve_arch(args.arch)
    if getattr(args, "trait_config", None) is not None:  # a tile-engine trait config is a --where, read before any work
        from .options import where_with_trait_config

        args.where = where_with_trait_config(args)
    if getattr(args, "problem", None) is not None and args.command != "verify":  # (verify: once its revision is
        # known) the kernels that run a problem: a --where, read before any work
        from .options import where_with_problem

        args.where = where_with_problem(args)
    if args.command == "enumerate":
        return answers.run_and_keep(words, lambda: cmd_enumerate(args, started))
    if args.command == "explain":
        from .explain import cmd_explain

        args.started = started  # the process's start, for --timings' total
        return answers.run_and_keep(words, lambda: cmd_explain(args))
    if args.command in ("coverage", "sample"):
        from .sets import run

        return run(args)
    if args.command == "verify":
        from .verify import cmd_verify

        return cmd_verify(args)
    if args.command == "rules":
        from .rules import cmd_rules

        return cmd_rules(args)
    if args.command == "fields":
        from .fields import cmd_fields

        return cmd_fields(args)
    if args.command == "problems":
        from .problems import cmd_problems

        return cmd_problems(args)
    if args.command in ("emit", "build"):
        from .build import run as run_build

        return run_build(args)
    raise UsageError(f"unknown command {args.command!r}")


def _tolerate_narrow_encodings() -> None:
    """On an ASCII-only stdout (LC_ALL=C, PYTHONIOENCODING=ascii) print '?' for the table's symbols instead of
    failing: names, CSV and JSON are ASCII anyway."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and encoding not in ("utf8", "utf16", "utf32"):
            try:
                reconfigure(errors="replace")
            except (ValueError, OSError):  # a stream that cannot be reconfigured keeps its own policy
                pass


def _flush_or_drop() -> None:
    """Flush what was written so far; if stdout cannot take it, drop it (so interpreter exit stays quiet)."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass


def _error(message: str, prefix: str = "ckspace: error: ") -> None:
    if sys.stderr is not None:
        try:
            print(f"{prefix}{message}", file=sys.stderr)
        except (OSError, ValueError):
            pass


def _console(stderr: bool = False):
    from .console import console

    return console(stderr=stderr, highlight=True)


def cmd_enumerate(args: argparse.Namespace, started: float) -> int:
    from . import output
    from ..spec import check_set

    check_set(args.set)  # tests/tiny here; a catalog name is checked when the Space is built
    if args.format in ("ck-config", "trait-config"):
        return _documents_out(args)
    option = "-o"
    if args.export_json is not None:
        if args.output or (args.format and args.format != "json"):
            raise UsageError("--export-json FILE is -o FILE --format json: give one of them")
        args.output, args.format, option = args.export_json, "json", "--export-json"
    target = output.check_output_file(args.output, option) if args.output is not None else None  # before solving
    args.format = output.format_for(args.output, args.format)
    imported = time.perf_counter()
    space = space_from_args(args)
    with output.written_to(target, option):
        status = _enumerate(args, space, started, imported)
    if target is not None:
        output.confirm_written(target, args.format or "names")
    return status


def _documents_out(args: argparse.Namespace) -> int:
    """enumerate --format ck-config|trait-config -o DIR: the set's kernels as CK's dispatcher JSON configs, one
    file per (variant, layout, datatype) as CK lays out its tree, or as tile-engine trait configs, one per variant;
    each file written atomically."""
    import json

    from ..files import atomic_write, check_inside, ensure_dir
    from ..spec import is_selection

    what = {"ck-config": "CK's JSON configs", "trait-config": "tile-engine trait configs"}[args.format]
    if not args.output or args.export_json is not None:
        raise UsageError(f"--format {args.format} writes a directory of {what}: give -o DIR")
    if args.count or args.count_by is not None:
        raise UsageError(f"--format {args.format} lists kernels; --count and --count-by do not apply")
    root = Path(args.output)
    if root.exists() and not root.is_dir():
        raise UsageError(f"-o {args.output}: not a directory (--format {args.format} writes {what} into one)")
    space = space_from_args(args)
    filters = {"variant": args.variant, "ndim": args.ndim, "dtype": args.dtype, "where": args.where}
    if is_selection(args.set) or args.objective or args.stable_from:
        configs = space.select(args.set, objective=args.objective, stable_from=args.stable_from, **filters)
    else:
        configs = space.listed("the CK configs", **filters, hint="narrow it (--variant, --ndim, --dtype, --where)")
    left_out: list[str] = []
    if args.format == "trait-config":
        docs = space.trait_config_documents(configs)
    else:
        docs, left_out = space.ck_config_documents(configs, args.set)
    ensure_dir(root)
    for rel, doc in docs.items():
        target = check_inside(root, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, (json.dumps(doc, indent=2) + "\n").encode())
    kind = "CK config" if args.format == "ck-config" else "trait config"
    files = f"{len(docs)} {kind} file{'s' if len(docs) != 1 else ''}"
    if args.format == "ck-config":
        kernels = sum(len(d["instances"]) for d in docs.values())
        print(f"ckspace: wrote {kernels:,} kernels in {files} under {args.output}", file=sys.stderr)
    else:
        print(f"ckspace: wrote {files} selecting the values of {len(configs):,} kernels under {args.output}",
              file=sys.stderr)
    if left_out:
        print(f"ckspace: {len(left_out):,} kernels left out: CK's JSON has no pad_m/pad_n/pad_k (CK's launcher pads "
              f"all three), e.g. {left_out[0]}", file=sys.stderr)
    return 0


def _enumerate(args: argparse.Namespace, space, started: float, imported: float) -> int:
    from . import output
    from .console import waiting
    from ..spec import is_selection

    # On a terminal without --format: the per-stratum summary and a hint, not a table of thousands of rows
    fmt = args.format or ("summary" if sys.stdout.isatty() else "names")
    title = f"{args.arch} · {args.set} · rules {','.join(sorted(f for f in space.families if f != 'model'))}"
    t_out = 0.0
    selected = None
    shown = [0]  # kernels written: none, and the catalog itself may be why (cli/empty.py)

    def tally(rows):
        for row in rows:
            shown[0] += 1
            yield row

    if is_selection(args.set) or args.objective or args.stable_from:
        with waiting(f"selecting {args.set} on {args.arch}"):
            selected = space.select(args.set, objective=args.objective, stable_from=args.stable_from,
                                    variant=args.variant, ndim=args.ndim, dtype=args.dtype, where=args.where)
        if args.stable_from:
            _churn(args.stable_from, selected)
    if args.count_by is not None:
        t0 = time.perf_counter()
        _count_by(space, selected, args, fmt, title)
        t_out = time.perf_counter() - t0
    elif args.count:
        strata = {"variant": args.variant, "ndim": args.ndim, "dtype": args.dtype}
        if selected is None:
            with waiting(f"counting {args.set} on {args.arch}"):
                counts = space.count(**strata, where=args.where)
                cpp = space.count_cpp(**strata, where=args.where, counts=counts)
        else:
            counts = space.strata_counts(selected, **strata)
            cpp = space.strata_cpp_counts(selected, **strata)
        t0 = time.perf_counter()
        if fmt in ("json", "jsonl"):
            import json

            records = output.counts_records(counts, cpp)
            if fmt == "json":
                print(json.dumps({"arch": args.arch, "total": sum(counts.values()), "total_cpp": sum(cpp.values()),
                                  "strata": records}, indent=1))
            else:
                for r in records:
                    print(json.dumps(r, separators=(",", ":")))
        elif fmt in ("table", "summary"):
            _console().print(output.counts_table(counts, title, cpp))
        else:
            print("variant,ndim,dtype,count,cpp" if fmt == "csv" else "variant\tndim\tdtype\tkernels\tcpp")
            for s, n in counts.items():
                if not n:  # as the table: a stratum with no kernel (here) is no row; json keeps it, counted 0
                    continue
                print(f"{s.variant},{s.ndim},{s.dtype},{n},{cpp[s]}" if fmt == "csv"
                      else f"{s.variant}\t{s.ndim}d\t{s.dtype}\t{n}\t{cpp[s]}")
            if fmt == "names":
                print(f"total\t\t\t{sum(counts.values())}\t{sum(cpp.values())}")
        t_out = time.perf_counter() - t0
        shown[0] = sum(counts.values())
    else:
        filters = {"variant": args.variant, "ndim": args.ndim, "dtype": args.dtype, "where": args.where}
        source = tally(selected if selected is not None else space.enumerate(**filters))
        t0 = time.perf_counter()
        if fmt == "summary" and selected is None and space.may_be_open():  # the open space: counted, not listed
            with waiting(f"counting {args.set} on {args.arch}"):
                counts = space.count(**filters)
            _summary(space, list(source) if sum(counts.values()) <= SUMMARY_NAMES else None, args, title, counts)
            shown[0] = sum(counts.values())
        elif fmt == "summary":
            _summary(space, list(source), args, title)
        elif fmt == "table" and selected is None:  # a table holds every row: one line, before any listing, if too many
            space.check_listable("the table", **filters, hint="narrow it (--variant, --ndim, --dtype, --where) or "
                           "stream it (--format names|jsonl|csv|json)")
            output.write_kernels(fmt, (output.record(cfg) for cfg in source), sys.stdout, space.data.fields,
                                 title=title, counts_title="kernels per (variant, ndim, dtype)")
        elif fmt == "names" and selected is None:  # the names alone: no dict per kernel
            output.write_name_list(tally(space.names(**filters)), sys.stdout)
            sys.stdout.flush()
        else:
            rows = source if fmt == "names" else (output.record(cfg) for cfg in source)  # names: only the name
            output.write_kernels(fmt, rows, sys.stdout, space.data.fields,
                                 title=title, counts_title="kernels per (variant, ndim, dtype)",
                                 derive=space.deriver() if fmt in ("json", "jsonl", "csv") else None)
        t_out = time.perf_counter() - t0 - space.timings.plan - space.timings.solve
    if args.timings:
        t = space.timings
        total = time.perf_counter() - started
        print(
            f"timings: imports {imported - started + t.solver_import:.3f}s (ortools {t.solver_import:.3f}s), "
            f"model {t.load:.3f}s, plan {t.plan:.3f}s, "
            f"solve {max(t.solve, 0.0):.3f}s, output {max(t_out - t.solver_import, 0.0):.3f}s, total {total:.3f}s"
            + (" (cached)" if t.cached else ""), file=sys.stderr,
        )
    output.report_rejected(space)
    if not shown[0] and args.count_by is None:
        from .empty import note_empty_catalog

        note_empty_catalog(space)
    return 0


def _count_by(space, selected, args: argparse.Namespace, fmt: str, title: str) -> None:
    """Counts grouped by any fields or derived quantities, in the order of their values (fields.toml), then of
    first appearance; a kernel family without one of the fields is grouped under an empty value."""
    import json

    from . import output

    keys = [k.strip() for k in args.count_by.split(",") if k.strip()]
    groups = space.count_by(keys, configs=selected, variant=args.variant, ndim=args.ndim, dtype=args.dtype,
                            where=args.where)
    counts = dict(groups)
    show = lambda v: "true" if v is True else "false" if v is False else str(v)  # noqa: E731
    if fmt in ("json", "jsonl"):
        records = [{**dict(zip(keys, key)), "count": n} for key, n in groups]
        if fmt == "json":
            print(json.dumps({"arch": args.arch, "by": keys, "total": sum(counts.values()), "groups": records}, indent=1))
        else:
            for r in records:
                print(json.dumps(r, separators=(",", ":")))
    elif fmt in ("table", "summary"):
        from rich.table import Table

        table = Table(title=title, header_style="bold")
        for k in keys:
            table.add_column(k)
        table.add_column("kernels", justify="right")
        for key, n in groups:
            table.add_row(*(show(v) for v in key), f"{n:,}")
        table.add_section()
        table.add_row("total", *([""] * (len(keys) - 1)), f"{sum(counts.values()):,}", style="bold")
        _console().print(table)
    else:
        sep = "," if fmt == "csv" else "\t"
        print(sep.join([*keys, "count"]))
        for key, n in groups:
            print(sep.join([*(show(v) for v in key), str(n)]))


def _churn(previous_file: str, selected) -> None:
    """--stable-from: how the selection changed against the previous one, on stderr (the output stays the names)."""
    from ..lines import read_names

    before = set(read_names(previous_file, "--stable-from"))
    now = {str(c["name"]) for c in selected}
    kept = len(before & now)
    print(f"ckspace: stable-from {previous_file}: {kept:,} kept, {len(now - before):,} added, "
          f"{len(before - now):,} removed (of {len(before):,} before, {len(now):,} now)", file=sys.stderr)


SUMMARY_NAMES = 40  # on a terminal, a list this short is printed under the summary; a longer one is asked for


def _summary(space, configs: list | None, args: argparse.Namespace, title: str, counts: dict | None = None) -> None:
    """The terminal view of enumerate: the counts per (variant, ndim, dtype), in --count's order, then the names when
    they fit on a screen, else how to get them (a pipe, --format). `counts` given: the kernels were counted, and
    `configs` is None when they are too many to list (the open space)."""
    from . import output

    if counts is None:
        counts = space.strata_counts(configs or [], variant=args.variant, ndim=args.ndim, dtype=args.dtype)
    console = _console()
    console.print(output.counts_table(counts, title))
    if configs is not None and len(configs) <= SUMMARY_NAMES:
        for cfg in configs:
            console.print(str(cfg["name"]), soft_wrap=True, highlight=False)
        return
    console.print(f"[dim]{sum(counts.values()):,} kernels: pipe them (`| less`, `> names.txt`) or pass --format names "
                  f"for the names, --format table for a table, --format json|jsonl|csv for the fields[/dim]",
                  soft_wrap=True, highlight=False)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
