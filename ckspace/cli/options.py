"""Options shared by several commands, and the Space a command's options describe."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, cast

from ..errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from ..space import Space
    from ..spec import Spec


# -- values given empty ----------------------------------------------------------------------------------------------
# argparse takes '' as a value, and a command would read it as "not given" (--set '', --rules '', --ck-api '',
# --toolchain ''), as the current directory (--ck-config '', --constraints '') or as standard output (--export-json
# ''). Every string value given on the command line passes refuse_empty (the parser's _get_values), so an empty one is
# one error line before any work. Options with a fixed list of choices, or a type, are argparse's to check.
LIST_OPTIONS = frozenset({"--variant", "--ndim", "--dtype", "--rules", "--count-by", "--stratify", "--offload-arch"})
OWN_CHECK = frozenset({"--arch"})  # its own error line names the archs: unknown arch ''
NOUNS = {"FILE": "file name", "DIR": "directory", "FILE|DIR": "file or directory", "NAME|FILE": "name or file",
         "REV": "revision", "PATH": "path", "CATALOG": "catalog", "SET": "set", "LIST": "list", "NAME": "name",
         "ID|FAMILY": "rule id or family", "where": "filter", "set": "set", "seed": "seed", "SPEC": "problem"}


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


# Every set --set takes (the catalogs of constraints/catalogs.toml, CK's procedures and ckspace's selections), as the
# --help texts list them; a test keeps it equal to spec.set_names (the parser is built before any data is loaded).
SETS_HELP = ("a catalog (full = ck-full: CK's full rule set; ck-default, ck-rdna; CK's shipped lists ck-profiler, "
             "ck-tests), CK's every-fifth procedures (ck-full-tests, ck-tiny) or a coverage-optimal selection (tests, "
             "tiny)")


def add_ck_api_options(p) -> None:
    """--ck-api / --ck-include: list only what a CK Tile API revision can build (its rule family, ckspace.codegen.ckapi);
    --toolchain: only what a compiler builds (its family toolchain-NAME, found by `ckspace verify`)."""
    p.add_argument("--ck-api", metavar="REV",
                   help="only kernels this CK Tile API revision can build: 2026.06 (the newest; its facts, family "
                        "ck-api-2026.06, apply without the option too), 2025.11, or auto (with --ck-include)")
    p.add_argument("--ck-include", metavar="DIR", help="CK Tile headers (the directory holding ck_tile/), for --ck-api auto")
    p.add_argument("--toolchain", metavar="NAME",
                   help="only kernels this compiler builds (its rule family toolchain-NAME, e.g. clang22); registry: "
                        "the compiler `build` sets up (clang 22 of the ziglang wheel, for every arch); auto: "
                        "the compiler `build` will use (ROCm's, else the registry's)")


def add_trait_config_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trait-config", dest="trait_config", metavar="FILE",
                   help="only kernels allowed by a CK tile-engine JSON trait config ({\"variant\": ..., "
                        "\"trait_config\": {\"pipeline\": {\"values\": [...]}, ...}}); and-ed with --where")


def add_problem_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--problem", metavar="SPEC",
                   help="only kernels that run this convolution problem (CK's IsSupportedArgument): CK's ConvParam "
                        "order \"NDIM G N K C filter... input... strides... dilations... left-pads... right-pads...\" "
                        "(e.g. \"2 1 32 128 64 3 3 28 28 1 1 1 1 1 1 1 1\") or keywords "
                        "\"n=32,k=128,c=64,y=3,x=3,hi=28,wi=28,pad=1\"; k_batch=N after either; and-ed with --where")


def where_with_problem(args: argparse.Namespace) -> str | None:
    """--where and-ed with the condition a kernel must meet to run --problem SPEC (under --ck-api's revision, else
    the newest); args.problem becomes the parsed problem."""
    from ..spec import problem_filter

    args.problem, where = problem_filter(args.problem, args.arch, getattr(args, "ck_api", None),
                                         getattr(args, "ck_include", None),
                                         getattr(args, "constraints", None), getattr(args, "where", None))
    return where


def where_with_trait_config(args: argparse.Namespace) -> str | None:
    """--where and-ed with the filter of --trait-config FILE (checked against the fields of --constraints); the
    config's variants, ndims and dtypes become --variant, --ndim and --dtype where those are not given."""
    from ..spec import trait_filter

    where, strata = trait_filter(args.trait_config, getattr(args, "constraints", None), args.where)
    for option, values in strata.items():  # counts then list only the config's strata
        if getattr(args, option, None) is None:
            setattr(args, option, values)
    return where


def add_over_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--over", metavar="CATALOG",
                   help="with --set tests|tiny: the catalog they are selected from (default full; ck-default, ck-rdna)")


def add_ck_config_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ck-config", metavar="FILE|DIR",
                   help="a catalog from CK's dispatcher JSON configs (a file, or a directory of *.json): instead of "
                        "--set, or as what --set tests|tiny is selected over")


def spec_from_args(args: argparse.Namespace, **changes: object) -> "Spec":
    """The Spec of a command's options (--arch, --set/--over/--ck-config, --rules, --ck-api/--ck-include,
    --toolchain/--compiler, --constraints, --no-cache); `changes` replace some of them. The filters stay the
    command's: the dispatcher has and-ed --trait-config into --where already."""
    from ..spec import Spec

    values: dict[str, object] = dict(
        arch=args.arch, set_name=getattr(args, "set", None) or getattr(args, "set_name", None),
        over=getattr(args, "over", None), ck_config=getattr(args, "ck_config", None),
        rules=getattr(args, "rules", None),
        ck_api=getattr(args, "ck_api", None), ck_include=getattr(args, "ck_include", None),
        toolchain=getattr(args, "toolchain", None), compiler=getattr(args, "compiler", None),
        constraints_dir=getattr(args, "constraints", None), use_cache=not getattr(args, "no_cache", False),
        problem=getattr(args, "problem", None))
    values.update(changes)
    return Spec(**values)  # type: ignore[arg-type]


def space_from_args(args: argparse.Namespace, **changes: object) -> "Space":
    """The Space of a command's options (spec_from_args). With --ck-config,
    the command's set becomes `ck-config` (a selection stays itself, selected over it)."""
    from ..space import Space

    spec = spec_from_args(args, **changes)
    space = Space.from_spec(spec)
    attr = "set" if hasattr(args, "set") else "set_name"
    if spec.ck_config is not None and getattr(args, attr, None) != space.spec.set_name:
        setattr(args, attr, space.spec.set_name)
    return space


def configs_of_names(space: "Space", path: str, rev: str, action: str = "compiled") -> list[dict[str, object]]:
    """The configs of the names in a file (`-`: stdin), each parsed (a malformed one is one error line, exit 2),
    without repeats. A name the model rejects on the arch is kept all the same, with a warning: the user asked for
    it (verify tests the model as much as the compiler). Only the rules of the CK API revision's own families say
    what cannot be compiled at all (verify reports those kernels as unexpressible), so they are no reason for it."""
    import sys

    from ..lines import read_names
    from ..oracle import revision_families

    own = revision_families(rev)
    configs, seen = [], set()
    for name in read_names(path, "--names"):
        if name in seen:
            continue
        seen.add(name)
        config = space.parse(name)
        config["name"] = name
        broken = [v for v in space.check(config) if v.enabled and v.family not in own]
        if broken:
            print(f"warning: {name}: the model rejects it on {space.arch} ({broken[0].rule}); {action} all the same",
                  file=sys.stderr)
        configs.append(config)
    return configs
