"""Options shared by several commands, and the Space a command's options describe."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from ..rules.data import Catalog
    from ..space import Space


# -- values given empty ----------------------------------------------------------------------------------------------
# argparse takes '' as a value, and a command would read it as "not given" (--set '', --rules '', --ck-api '',
# --toolchain ''), as the current directory (--ck-config '', --constraints '') or as standard output (--export-json
# ''). Every string value given on the command line passes refuse_empty (the parser's _get_values), so an empty one is
# one error line before any work. Options with a fixed list of choices, or a type, are argparse's to check.
LIST_OPTIONS = frozenset({"--variant", "--ndim", "--dtype", "--rules", "--count-by", "--stratify", "--offload-arch"})
OWN_CHECK = frozenset({"--arch"})  # its own error line names the archs: unknown arch ''
NOUNS = {"FILE": "file name", "DIR": "directory", "FILE|DIR": "file or directory", "NAME|FILE": "name or file",
         "REV": "revision", "PATH": "path", "CATALOG": "catalog", "SET": "set", "LIST": "list", "NAME": "name",
         "ID|FAMILY": "rule id or family", "where": "filter", "set": "set", "seed": "seed"}


def refuse_empty(action: argparse.Action, value: object) -> None:
    """One error line for a value that is empty or only white space (a comma-separated list: only commas)."""
    if action.choices is not None or action.type not in (None, str) or OWN_CHECK.intersection(action.option_strings):
        return
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, str):
            continue
        if LIST_OPTIONS.intersection(action.option_strings) and not item.replace(",", "").strip():
            raise UsageError(f"empty value in {action.option_strings[-1]} {item!r}")
        if not item.strip():
            # (ckspace's metavars are strings, never argparse's tuples)
            noun = NOUNS.get(cast(str, action.metavar or ""), NOUNS.get(action.dest, "value"))
            if action.option_strings:
                raise UsageError(f"{'/'.join(action.option_strings)} needs a {noun}, not an empty string")
            raise UsageError(f"the {action.metavar or action.dest} argument is an empty string; give a {noun}")


def add_ck_api_options(p) -> None:
    """--ck-api / --ck-include: list only what a CK Tile API revision can build (its rule family, ckspace.codegen.ckapi);
    --toolchain: only what a compiler builds (its family toolchain-NAME, found by `ckspace verify`)."""
    p.add_argument("--ck-api", metavar="REV",
                   help="only kernels this CK Tile API revision can build: 2026.06 (newest: everything), 2025.11, "
                        "or auto (with --ck-include)")
    p.add_argument("--ck-include", metavar="DIR", help="CK Tile headers (the directory holding ck_tile/), for --ck-api auto")
    p.add_argument("--toolchain", metavar="NAME",
                   help="only kernels this compiler builds (its rule family toolchain-NAME, e.g. clang22); registry: "
                        "the compiler `build` sets up (clang 22 of the ziglang wheel, for every arch); auto: "
                        "the compiler `build` will use (ROCm's, else the registry's)")


def toolchain_family(name: str, arch: str, families, compiler: str | None = None) -> str | None:
    """The rule family of --toolchain NAME on `arch` (None: none, or that compiler has no known limits). registry
    is the registry toolchain's compiler for the arch (ckspace.codegen.toolchain: clang 22 of zig, every arch); auto is
    the compiler `build` will use (--compiler, else ROCm, else the registry's); none switches no family on."""
    if name == "none":
        return None
    from ..codegen import toolchain

    typed = name not in ("registry", "auto")
    if name == "registry":
        name = toolchain.registry_family(arch)
    elif name == "auto":
        name = toolchain.family_for(arch, compiler)
    family = f"toolchain-{name}"
    if family in families:
        return family
    known = sorted(f.removeprefix("toolchain-") for f in families if f.startswith("toolchain-"))
    if name in ("clang19", "rocm") or not typed:
        return None  # a compiler verify has found nothing against yet
    raise UsageError(f"unknown --toolchain {name!r}; choices: auto, registry, none, {', '.join(known)}, clang19, rocm")


def with_toolchain(rules: str | None, name: str | None, arch: str, constraints: str | None,
                   compiler: str | None = None) -> tuple[str | None, str | None]:
    """`rules` with the family of --toolchain NAME switched on, and that family (None: none)."""
    if not name:
        return rules, None
    from ..rules.data import load

    data = load(Path(constraints) if constraints else None)
    family = toolchain_family(name, arch, data.families, compiler)
    if family is None:
        return rules, None
    return (f"{rules},+{family}" if rules else f"+{family}"), family


def rules_with_ck_api(args) -> str | None:
    """`--rules` plus the rule families of `--ck-api` and `--toolchain` (unset, they leave --rules as it is)."""
    rules, _ = with_toolchain(args.rules, getattr(args, "toolchain", None), getattr(args, "arch", "gfx950"),
                              getattr(args, "constraints", None))
    ck_api = getattr(args, "ck_api", None)
    if ck_api is None:
        if getattr(args, "ck_include", None):
            raise UsageError("--ck-include is read only with --ck-api auto")
        return rules
    from ..codegen.ckapi import combine_rules

    return combine_rules(rules, ck_api, args.ck_include)


def add_trait_config_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trait-config", dest="trait_config", metavar="FILE",
                   help="only kernels allowed by a CK tile-engine JSON trait config ({\"variant\": ..., "
                        "\"trait_config\": {\"pipeline\": {\"values\": [...]}, ...}}); and-ed with --where")


def where_with_trait_config(args: argparse.Namespace) -> str | None:
    """--where and-ed with the filter of --trait-config FILE (checked against the fields of --constraints)."""
    from pathlib import Path

    from ..rules import traitconfig
    from ..rules.data import load_fields
    from ..rules.schema import display

    fields = load_fields(Path(args.constraints) if getattr(args, "constraints", None) else None)
    doc = traitconfig.read(args.trait_config)
    trait = traitconfig.to_where(doc, fields, display(args.trait_config))
    for option, values in traitconfig.strata_of(doc, fields).items():  # counts then list only the config's strata
        if getattr(args, option, None) is None:
            setattr(args, option, values)
    if trait is None:
        return args.where
    return trait if not args.where else f"({trait}) and ({args.where})"


def add_over_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--over", metavar="CATALOG",
                   help="with --set tests|tiny: the catalog they are selected from (default full; ck-default, ck-rdna)")


CK_CONFIG = "ck-config"  # the catalog name of --ck-config's list


def add_ck_config_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ck-config", metavar="FILE|DIR",
                   help="a catalog from CK's dispatcher JSON configs (a file, or a directory of *.json): instead of "
                        "--set, or as what --set tests|tiny is selected over")


def catalog_from_args(args: argparse.Namespace) -> "str | Catalog":
    """The catalog a command works in: --set (or --over for tests/tiny), or the list of --ck-config. With
    --ck-config the set's name becomes `ck-config` (a selection stays itself, selected over it)."""
    from ..rules.data import Catalog
    from ..select.sets import CK_PROCEDURES, SELECTED_SETS, catalog_of

    attr = "set" if hasattr(args, "set") else "set_name"
    set_name = getattr(args, attr, None)
    path = getattr(args, "ck_config", None)
    if path is None:
        return catalog_of(set_name, getattr(args, "over", None))
    if getattr(args, "over", None):
        raise UsageError("--ck-config is the catalog: give it or --over, not both")
    if set_name in CK_PROCEDURES:
        raise UsageError(f"{set_name} is CK's procedure over its full rule set; --ck-config does not apply")
    if set_name not in (None, "", "full", CK_CONFIG, *SELECTED_SETS):
        raise UsageError(f"--ck-config is the catalog: give it or --set {set_name}, not both")
    from ..rules import ckconfig

    ckconfig.config_files(Path(path))  # a missing path or an empty directory fails before anything is built
    if set_name not in SELECTED_SETS:
        setattr(args, attr, CK_CONFIG)
    return Catalog(CK_CONFIG, (), layout_3d="ndhwgc", doc=f"CK JSON configs from {path}", source=str(path),
                   configs=str(Path(path).resolve()), user=True)


def space_from_args(args: argparse.Namespace) -> "Space":
    """The Space of --arch, --set/--over/--ck-config (the catalog), --rules/--ck-api, --constraints and --no-cache."""
    from ..select.sets import set_names
    from ..space import Space

    set_name = getattr(args, "set", None) or getattr(args, "set_name", None)
    catalog = catalog_from_args(args)
    try:
        return Space(arch=args.arch, rules=rules_with_ck_api(args), constraints_dir=args.constraints,
                     use_cache=not args.no_cache, catalog=catalog)
    except UsageError as exc:
        if not str(exc).startswith("unknown catalog"):
            raise
        from ..rules.data import load
        from pathlib import Path

        names = list(load(Path(args.constraints) if args.constraints else None).catalogs)
        what = "--over" if set_name in (None, "tests", "tiny", "ck-full-tests", "ck-tiny") else "set"
        raise UsageError(f"unknown {what} {catalog!r}; choices: {', '.join(names if what == '--over' else set_names(names))}") from None
