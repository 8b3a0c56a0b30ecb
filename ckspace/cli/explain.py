"""`ckspace explain NAME | -`: the command line and the text rendering of ckspace.explain.

Exit codes: 0 valid (batch: every name valid); 1 rejected (batch: any name rejected); 2 malformed name or bad
usage (one line on stderr per problem, never a traceback). Only argparse is imported at start-up, so registering
the subcommand costs `ckspace enumerate` nothing; rich is imported when text is printed, OR-Tools only when a
rejected kernel needs the solver.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import IO, TYPE_CHECKING, Iterable

from ..errors import KernelNameError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from ..space import Explainer, Explanation

FORMATS = ("text", "json")
DEFAULT_ARCH = "gfx950"
DEFAULT_NEIGHBOURS = 3
MAX_NEIGHBOURS = 100


def add_parser(sub: argparse._SubParsersAction) -> None:
    ex = sub.add_parser("explain", help="is a kernel name valid for an arch; if not, why, and the nearest valid kernels",
                        description="Explain a kernel name: every rule it breaks, grouped by family, and the nearest "
                                    "valid kernels. Exit code 0 valid, 1 rejected, 2 malformed name or bad usage.")
    ex.add_argument("name", metavar="NAME", nargs="?",
                    help="a kernel name, or - to read names from stdin, one per line (batch)")
    ex.add_argument("--names", metavar="FILE",
                    help="explain the names of a file, one per line (- for stdin; blank and # lines skipped): the "
                         "batch summary, as with NAME -")
    ex.add_argument("--arch", default=DEFAULT_ARCH, help=f"target arch (default: {DEFAULT_ARCH}; gfx90a, gfx942, gfx950, gfx1100, gfx1200, gfx1201, gfx1250)")
    ex.add_argument("--set", dest="set_name", metavar="CATALOG",
                    help="explain against a catalog's rules (default full; ck-default, ck-rdna): "
                         "its broken rules and its nearest kernels")
    ex.add_argument("--rules", help="switch rule families: +fam,-fam (default: arch, pipeline, ck-curation = full)")
    ex.add_argument("--format", choices=FORMATS, default="text", help="text (default) or json (schema: docs/explain-json.md)")
    ex.add_argument("--neighbours", "--neighbors", metavar="N", type=int, default=None,
                    help=f"nearest valid kernels to show for a rejected name (default {DEFAULT_NEIGHBOURS}; "
                         "batch: 0 unless --verbose)")
    ex.add_argument("--verbose", "-v", action="store_true", help="batch: the details of every name, not only the summary")
    ex.add_argument("--select-sets", dest="select_sets", action="store_true",
                    help="select the tests and tiny sets if they are not cached yet, to say whether the kernel is in "
                         "them (seconds, once; `ckspace enumerate --set tests` caches them too)")
    ex.add_argument("--constraints", metavar="DIR", help="use this constraints directory instead of the built-in one")
    ex.add_argument("--timings", action="store_true",
                    help="print where the time went (model, rules, catalogs, sets, neighbours, output) to stderr")
    from .options import add_ck_api_options, add_ck_config_option, add_problem_option

    add_problem_option(ex)
    add_ck_api_options(ex)
    add_ck_config_option(ex)


def cmd_explain(args: argparse.Namespace) -> int:
    from ..spec import check_name
    from .options import space_from_args

    if (args.name is None) == (args.names is None):
        raise UsageError("explain takes a NAME (or - for stdin) or --names FILE: give one of them")
    if args.names is not None:
        args.name = "-"
    else:
        args.name = args.name.strip()  # a name pasted with the spaces or the line end around it
        _refuse_a_file(args.name)
    batch = args.name == "-"
    if not batch:  # a malformed name is answered before the model is built; the data only adds spellings
        check_name(args.name, args.constraints)
    n = args.neighbours
    if n is None:
        n = DEFAULT_NEIGHBOURS if (not batch or args.verbose) else 0
    if not 0 <= n <= MAX_NEIGHBOURS:
        raise UsageError(f"--neighbours must be between 0 and {MAX_NEIGHBOURS}, not {n}")
    _check_catalog(args)
    started = time.perf_counter()
    explainer = space_from_args(args).explainer(select_sets=args.select_sets)
    built = time.perf_counter()
    if batch and args.names not in (None, "-"):
        from ..lines import read_lines

        lines = read_lines(args.names, "--names")  # bounded, one clear line for a missing or unreadable file
        import io

        status = _batch(explainer, io.StringIO("".join(line + "\n" for line in lines)), args.format, n, args.verbose)
    elif batch:
        status = _batch(explainer, sys.stdin, args.format, n, args.verbose)
    else:
        from .console import waiting

        with waiting(f"explaining {args.name.strip()[:60]} (the nearest valid kernels: a solve)"):
            exp = explainer.explain(args.name, neighbours=n)
        if args.format == "json":
            print(json.dumps(exp.to_json(), indent=1))
        else:
            exp.render(_console())
        status = 0 if exp.valid else 1
    if args.timings:
        _print_timings(explainer.timings, built - started, time.perf_counter() - built, getattr(args, "started", None))
    return status


def _refuse_a_file(name: str) -> None:
    """`explain batch.txt`: a kernel name never names an existing file; say to use --names."""
    from pathlib import Path

    if "/" in name or name.endswith((".txt", ".csv", ".log", ".lst")) or not name.startswith("grouped_conv"):
        try:
            if Path(name).is_file():
                raise UsageError(f"{name} is a file, not a kernel name: explain --names {name} reads its names")
        except OSError:
            return


def _print_timings(phases: dict[str, float], model: float, after: float, process_start: float | None) -> None:
    """One stderr line: the model's set-up, each phase of the explanations, the rest (parsing, output), total."""
    parts = [f"model {model:.3f}s"] + [f"{k} {v:.3f}s" for k, v in phases.items()]
    parts.append(f"output and the rest {max(after - sum(phases.values()), 0.0):.3f}s")
    total = f", total {time.perf_counter() - process_start:.3f}s" if process_start is not None else ""
    print("timings: " + ", ".join(parts) + total, file=sys.stderr)


def _check_catalog(args: argparse.Namespace) -> None:
    """--set names a catalog (or --ck-config gives one); tests and tiny are selections, whose membership every
    explanation lists anyway."""
    from ..spec import CK_PROCEDURES, SELECTED_SETS

    if args.ck_config is None and (args.set_name in SELECTED_SETS or args.set_name in CK_PROCEDURES):
        raise UsageError(f"explain --set takes a catalog, not the selection {args.set_name!r}: every explanation says "
                         f"whether the kernel is in {', '.join((*SELECTED_SETS, *CK_PROCEDURES))}")


# -- batch -----------------------------------------------------------------------------------------------------------
MAX_MALFORMED_SHOWN = 10  # malformed lines printed one by one; the rest are counted in the summary
MAX_LISTED = 100  # rejected / warned names listed under the batch summary, each with its first reason


def _batch(explainer: "Explainer", stream: IO[str], fmt: str, n: int, verbose: bool) -> int:
    """Explain every name of a stream (names_in_line: '#' comments and blank lines skipped, names found inside log
    and CSV lines), in bounded memory:
    the text summary keeps counts, JSON results are written as they come."""
    from ..lines import bounded_lines
    from ..space import EXPLAIN_SCHEMA as SCHEMA_VERSION

    summary = Summary(explainer.data.families)
    console = _console() if fmt == "text" else None
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")  # bytes that are not UTF-8 make a malformed name, not a crash
    out = sys.stdout
    if fmt == "json":
        rules = [f for f in explainer.data.families if f in explainer.families and f != "model"]
        out.write("{\n" + f' "schema_version": {SCHEMA_VERSION},\n "arch": {json.dumps(explainer.arch)},\n'
                  f' "rules": {json.dumps(rules)},\n "results": [')
    first = True

    def emit(record: dict) -> None:
        nonlocal first
        record = {k: v for k, v in record.items() if k != "exp"}
        text = json.dumps(record, indent=1).replace("\n", "\n  ")
        out.write(("\n  " if first else ",\n  ") + text)
        first = False

    for lineno, line in enumerate(bounded_lines(stream, "stdin"), 1):
        for name in names_in_line(line):
            record = _explain_one(explainer, name, lineno, n, verbose, summary, whole=fmt == "json" or verbose)
            if record is None:
                continue
            if fmt == "json":
                emit(record)
            elif verbose and console is not None and "exp" in record:
                record["exp"].render(console)
                console.rule(style="dim")
    if summary.malformed > MAX_MALFORMED_SHOWN:
        print(f"ckspace: error: {summary.malformed - MAX_MALFORMED_SHOWN:,} more malformed lines not shown "
              f"({summary.malformed:,} in all)", file=sys.stderr)
    if fmt == "json":
        out.write(("\n ],\n" if not first else "],\n") + ' "summary": '
                  + json.dumps(summary.to_json(), indent=1).replace("\n", "\n ") + "\n}\n")
    else:
        assert console is not None
        console.print(summary.table(explainer.arch))
        summary.print_names(console)
    return summary.exit_code()


# A kernel name inside a line of a build log, a profiler CSV or a message: every grouped_conv_... token.
_NAME_TOKEN = re.compile(r"grouped_conv_[A-Za-z0-9_]+")


def names_in_line(line: str) -> list[str]:
    """The names a line holds: none for a blank or '#' line; the line itself when it is one bare token (so that a
    misspelt name is still diagnosed); else every grouped_conv_... token in it (a line with none holds no name)."""
    text = line.strip()
    if not text or text.startswith("#"):
        return []
    if not any(c.isspace() or c in ",;:|\"'/=()[]{}<>" for c in text):
        return [text]
    return _NAME_TOKEN.findall(text)


def _explain_one(explainer, name: str, lineno: int, n: int, verbose: bool, summary: "Summary",
                 whole: bool = True) -> dict | None:
    """One name of a batch: its JSON record (with the Explanation under "exp" for the text renderer). Without
    `whole` (the text summary, which shows neither), no derived quantities and no JSON record."""
    from ..space import EXPLAIN_SCHEMA as SCHEMA_VERSION

    try:
        exp = explainer.explain(name, neighbours=n, fixes=verbose, derive=whole)
    except KernelNameError as exc:
        summary.malformed += 1
        if summary.malformed <= MAX_MALFORMED_SHOWN:
            print(f"ckspace: error: line {lineno}: {exc}", file=sys.stderr)
        return {"schema_version": SCHEMA_VERSION, "name": name, "status": "malformed", "line": lineno,
                "error": {"message": str(exc), "part": exc.part, "expected": exc.expected,
                          "got": exc.got, "suggestion": exc.suggestion}}
    summary.add(exp)
    if not whole:
        return {"exp": exp}
    record = exp.to_json()
    record["exp"] = exp
    return record


class Summary:
    """Counts of a batch: valid, rejected (and per family that rejects), malformed, known-issue warnings."""

    def __init__(self, families: Iterable[str]):
        self.order = list(families)
        self.valid = self.rejected = self.malformed = self.known_issues = 0
        self.by_family: dict[str, int] = {}
        self.rejected_names: list[tuple[str, str]] = []  # (name, first reason), the first MAX_LISTED
        self.warned_names: list[tuple[str, str]] = []

    def add(self, exp: "Explanation") -> None:
        if exp.valid:
            self.valid += 1
        else:
            self.rejected += 1
            for fam in exp.rejecting_families():
                self.by_family[fam] = self.by_family.get(fam, 0) + 1
            if len(self.rejected_names) < MAX_LISTED and exp.rejecting:
                first = exp.rejecting[0]
                self.rejected_names.append((exp.name, f"{first.rule}: {first.message}"))
        warned = [note for note in exp.notes if note.kind == "known-issue"]
        self.known_issues += bool(warned)
        if warned and len(self.warned_names) < MAX_LISTED:
            self.warned_names.append((exp.name, warned[0].text))

    def print_names(self, console: "Console") -> None:
        """The rejected and the warned names, each with its first reason (the first MAX_LISTED of each)."""
        for title, listed, count in (("rejected", self.rejected_names, self.rejected),
                                     ("known issues (warning)", self.warned_names, self.known_issues)):
            if not listed:
                continue
            console.print(f"{title}:")
            for name, reason in listed:
                console.print(f"  {_e(name)}: {_e(reason)}", soft_wrap=True)
            if count > len(listed):
                console.print(f"  … {count - len(listed):,} more (--format json lists every one)")

    @property
    def names(self) -> int:
        return self.valid + self.rejected + self.malformed

    def families(self) -> list[tuple[str, int]]:
        return sorted(self.by_family.items(), key=lambda kv: self.order.index(kv[0]) if kv[0] in self.order else len(self.order))

    def exit_code(self) -> int:
        return 2 if self.malformed else 1 if self.rejected else 0

    def to_json(self) -> dict[str, object]:
        return {"names": self.names, "valid": self.valid, "rejected": self.rejected, "malformed": self.malformed,
                "rejected_by_family": dict(self.families()), "known_issue_warnings": self.known_issues}

    def table(self, arch: str):
        from rich.table import Table

        t = Table(title=f"{self.names} names on {arch}", title_justify="left")
        t.add_column("result")
        t.add_column("names", justify="right")
        t.add_row("[green]valid[/]", str(self.valid))
        if self.known_issues:
            t.add_row("  [yellow]of which known issues (warning)[/]", str(self.known_issues))
        t.add_row("[red]rejected[/]", str(self.rejected))
        for fam, count in self.families():
            t.add_row(f"  by {fam}", str(count))
        t.add_row("malformed", str(self.malformed))
        return t


# -- text rendering --------------------------------------------------------------------------------------------------
def _console() -> "Console":
    from rich.console import Console

    # Names and messages are never wrapped (they are copied into build files); the panel uses the terminal width,
    # or 120 columns in a pipe.
    return Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 120)


def _e(text: object) -> str:
    from rich.markup import escape

    return escape(str(text))
