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


def space_from_args(args: argparse.Namespace) -> "Space":
    """The Space of --arch, --rules/--ck-api, --constraints and --no-cache."""
    from ..space import Space

    return Space(arch=args.arch, rules=rules_with_ck_api(args), constraints_dir=args.constraints,
                 use_cache=not args.no_cache)
