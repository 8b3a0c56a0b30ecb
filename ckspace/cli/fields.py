"""`ckspace fields [NAME...]`: the fields of a kernel and their values, and the derived quantities with their formulas
(constraints/fields.toml), as CK tile-engine users list a config's traits. Everything `--where` can filter on."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import UsageError

FORMATS = ("text", "json")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fields", help="list the fields of a kernel with their values, and the derived quantities",
                       description="List every field of a kernel (its family: gemm, depthwise or both; its type; its "
                                   "values) and every derived quantity with its formula: the names --where filters "
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
    for r in records:
        if r["what"] == "field":
            values = ", ".join("true" if v is True else "false" if v is False else str(v) for v in r["values"])
            line = f"{r['name']:<{width}}  {r['kind']:<9}  {r['type']:<4}  {values}"
        else:
            line = f"{r['name']:<{width}}  {r['kind']:<9}  =     {r['formula']}"
        sys.stdout.write(line + "\n")
    return 0
