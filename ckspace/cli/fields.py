"""`ckspace fields [NAME...]`: the fields of a kernel and their values, and the derived quantities with their formulas
(constraints/fields.toml), as CK tile-engine users list a config's traits. Everything `--where` can filter on."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap

from ..errors import UsageError

FORMATS = ("text", "json")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fields", help="list the fields of a kernel with their values, and the derived quantities",
                       description="List every field of a kernel (its family: gemm, depthwise or both; its type; its "
                                   "values; what it means; its key in CK's JSON configs; where the C++ takes it; "
                                   "whether it changes the C++ at all) and every derived quantity with its "
                                   "formula: the names --where filters "
                                   "on and the columns of --format csv. Give names to show only those.")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these fields or derived quantities")
    p.add_argument("--format", choices=FORMATS, default="text", help="text (default) or json")
    p.add_argument("--constraints", metavar="DIR", help="use this constraints directory instead of the built-in one")


def cmd_fields(args: argparse.Namespace) -> int:
    from ..space import Space

    records = Space(constraints_dir=args.constraints).fields()
    if args.names:
        known = {str(r["name"]) for r in records}
        unknown = [n for n in args.names if n not in known]
        if unknown:
            raise UsageError(f"unknown field {unknown[0]!r}; fields: {', '.join(sorted(known))}")
        records = [r for r in records if r["name"] in args.names]
    if args.format == "json":
        print(json.dumps(records, indent=1))
        return 0
    width = max(len(str(r["name"])) for r in records)
    indent = " " * (width + 2)
    # On a terminal the notes wrap under the name's column; in a pipe each stays one line (for grep)
    columns = shutil.get_terminal_size().columns if sys.stdout.isatty() else 0
    write = sys.stdout.write

    def note(text: str) -> None:
        if columns > len(indent) + 20:
            write(textwrap.fill(text, columns - 1, initial_indent=indent, subsequent_indent=indent + "  ") + "\n")
        else:
            write(indent + text + "\n")

    for r in records:
        if r["what"] == "field":
            write(f"{r['name']:<{width}}  {r['kind']:<9}  {r['type']:<4}  {_values(r['values'])}\n")
            if r.get("doc"):
                note(str(r["doc"]))
            note(f"CK JSON: {r['ck_json'] or 'no key'}")
            note(f"C++: {r.get('cpp') or '-'}")
            if not r.get("changes_cpp", True):
                note("the C++ ignores it: kernels that differ only here are one compiled kernel")
        else:
            write(f"{r['name']:<{width}}  {r['kind']:<9}  =     {r['formula']}\n")
    return 0


def _values(values: list) -> str:
    """A field's values, an evenly spaced run of 5 or more integers as low..high (step s)."""
    shown = ["true" if v is True else "false" if v is False else str(v) for v in values]
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if len(ints) == len(values) >= 5:
        step = ints[1] - ints[0]
        if step > 0 and all(b - a == step for a, b in zip(ints, ints[1:])):
            return f"{ints[0]}..{ints[-1]}" + (f" (step {step})" if step != 1 else "")
    return ", ".join(shown)
