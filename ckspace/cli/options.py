"""Options shared by several commands, and the Space a command's options describe."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from ..space import Space


def add_ck_api_options(p) -> None:
    """--ck-api / --ck-include: list only what a CK Tile API revision can build (its rule family, ckspace.codegen.ckapi)."""
    p.add_argument("--ck-api", metavar="REV",
                   help="only kernels this CK Tile API revision can build: 2026.06 (newest: everything), 2025.11, "
                        "or auto (with --ck-include)")
    p.add_argument("--ck-include", metavar="DIR", help="CK Tile headers (the directory holding ck_tile/), for --ck-api auto")


def rules_with_ck_api(args) -> str | None:
    """`--rules` plus the rule families of `--ck-api` (None and an unset --ck-api leave --rules as it is)."""
    ck_api = getattr(args, "ck_api", None)
    if ck_api is None:
        if getattr(args, "ck_include", None):
            raise UsageError("--ck-include is read only with --ck-api auto")
        return args.rules
    from ..codegen.ckapi import combine_rules

    return combine_rules(args.rules, ck_api, args.ck_include)


def add_over_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--over", metavar="CATALOG",
                   help="with --set tests|tiny: the catalog they are selected from (default full; ck-default, ck-rdna)")


def space_from_args(args: argparse.Namespace) -> "Space":
    """The Space of --arch, --set/--over (the catalog), --rules/--ck-api, --constraints and --no-cache."""
    from ..select.sets import catalog_of, set_names
    from ..space import Space

    set_name = getattr(args, "set", None) or getattr(args, "set_name", None)
    catalog = catalog_of(set_name, getattr(args, "over", None))
    try:
        return Space(arch=args.arch, rules=rules_with_ck_api(args), constraints_dir=args.constraints,
                     use_cache=not args.no_cache, catalog=catalog)
    except UsageError as exc:
        if not str(exc).startswith("unknown catalog"):
            raise
        from ..rules.data import load
        from pathlib import Path

        names = list(load(Path(args.constraints) if args.constraints else None).catalogs)
        what = "--over" if set_name in (None, "tests", "tiny") else "set"
        raise UsageError(f"unknown {what} {catalog!r}; choices: {', '.join(names if what == '--over' else set_names(names))}") from None
