"""What a Space is built from, resolved once: the arch, the catalog (or a user's CK JSON configs), the rule families
with those of a CK API revision and of a compiler, a tile-engine trait config and the filters.

A command line and a Python caller describe a space the same way, as a `Spec`; `Spec.resolve()` turns the user's words
(`--toolchain registry`, `--ck-api 2025.11`, `--ck-config DIR`, `--trait-config FILE`, `--arch auto`) into the values
the model is built from, and checks them before any solving. Nothing here builds a model.

>>> r = Spec(arch="gfx942", ck_api="2025.11", toolchain="registry").resolve()
>>> r.rules, r.toolchain_family
('+toolchain-clang22,+ck-api-2025.11,-ck-api-2026.06', 'toolchain-clang22')
>>> Spec(arch="gfx942", set_name="tests", ck_config="nowhere.json").resolve()
Traceback (most recent call last):
...
ckspace.rules.ckconfig.CkConfigError: nowhere.json: no such file or directory
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .errors import UsageError
from .memo import cached
from .select.sets import (CK_PROCEDURES, SELECTED_SETS, WHOLE_SPACE, check_set, is_selection,  # noqa: F401
                          set_names)  # the names a Spec's set_name takes, and what a whole catalog's listing says

if TYPE_CHECKING:  # pragma: no cover
    from .rules.data import Catalog, DataSet
    from .rules.problem import Problem

CK_CONFIG = "ck-config"  # the catalog name of a user's CK JSON configs


@dataclass(frozen=True)
class Spec:
    """A space as the user names it. `set_name` is a catalog (full, ck-default, ...) or a selection (tests, tiny)
    over `over` (default full); `ck_config` (a file or directory of CK JSON configs) is the catalog instead.
    `rules` switches families (`-ck-curation`: the open space); `ck_api` and `toolchain` add the families of a CK Tile
    API revision and of a compiler (`registry`, `auto`, `clang22`, ..., `none`). `trait_config` is a tile-engine JSON
    trait config, and-ed with `where` and narrowing variant/ndim/dtype where those are not given."""

    arch: str = "gfx950"
    set_name: str | None = None
    over: str | None = None
    ck_config: str | Path | None = None
    rules: str | Sequence[str] | None = None
    ck_api: str | None = None
    ck_include: str | Path | None = None
    toolchain: str | None = None
    compiler: str | None = None
    trait_config: str | Path | None = None
    variant: object = None
    ndim: object = None
    dtype: object = None
    where: str | None = None
    problem: "str | Problem | None" = None
    constraints_dir: str | Path | None = None
    use_cache: bool = True

    def resolve(self) -> "Resolved":
        """The values a Space is built from; a wrong value is one error line (a CkspaceError), before any model."""
        arch = resolve_arch(self.arch)
        catalog, set_name = catalog_for(self.set_name, self.over, self.ck_config, self.constraints_dir)
        rules, family = combined_rules(self.rules, self.ck_api, self.ck_include, self.toolchain, arch,
                                       self.constraints_dir, self.compiler)
        variant, ndim, dtype, where = self.variant, self.ndim, self.dtype, self.where
        if self.trait_config is not None:
            where, strata = trait_filter(self.trait_config, self.constraints_dir, where)
            variant = variant if variant is not None else strata.get("variant")
            ndim = ndim if ndim is not None else strata.get("ndim")
            dtype = dtype if dtype is not None else strata.get("dtype")
        problem = None
        if self.problem is not None:
            problem, where = problem_filter(self.problem, arch, self.ck_api, self.ck_include, self.constraints_dir,
                                            where)
        return Resolved(self, arch, catalog, set_name, rules, family, variant, ndim, dtype, where, problem)


@dataclass(frozen=True)
class Resolved:
    """A Spec's values as the model takes them: the arch (auto detected), the catalog (a name, or the Catalog of a
    user's CK JSON configs), the set's name (`ck-config` for a user's list), the rules spec with the API's and the
    compiler's families added, that compiler's family, and the filters with the trait config's."""

    spec: Spec
    arch: str
    catalog: "str | Catalog"
    set_name: str
    rules: str | Sequence[str] | None
    toolchain_family: str | None
    variant: object
    ndim: object
    dtype: object
    where: str | None
    problem: "Problem | None" = None  # its support condition is and-ed into `where` already

    @property
    def filters(self) -> dict[str, object]:
        return {"variant": self.variant, "ndim": self.ndim, "dtype": self.dtype, "where": self.where}


# -- the parts ---------------------------------------------------------------------------------------------------------
def check_name(name: str, constraints: str | Path | None = None) -> None:
    """A malformed kernel name is one KernelNameError (naming the part), before any model is built: the grammar
    first, then the data's spellings of values (CK's, e.g. `fwd`)."""
    from .errors import KernelNameError
    from .rules.names import parse_name

    try:
        parse_name(name)
    except KernelNameError:
        from .explain.spelling import parse

        parse(name, _spelling_data(None if constraints is None else str(constraints)))


@cached("spec.spelling_data", maxsize=4)
def _spelling_data(constraints: str | None) -> "DataSet":
    """The rule data, read for the spellings of its values only (kept: a process that asks again pays nothing)."""
    from .rules.data import load

    return load(Path(constraints) if constraints else None)


def archs_and_catalogs(constraints: str | Path | None = None) -> tuple[list[str], list[str]]:
    """The archs and the catalogs (not their aliases) of a constraints folder (default: the built-in one)."""
    data = _spelling_data(None if constraints is None else str(constraints))
    return sorted(data.archs), list(dict.fromkeys(c.name for c in data.catalogs.values()))


def api_revision(ck_api: str | None, ck_include: str | Path | None = None) -> str:
    """The CK Tile API revision the C++ is written for: `ck_api` (default the newest; `auto` reads the headers of
    `ck_include`)."""
    from .codegen.ckapi import resolve_revision

    return resolve_revision(ck_api, ck_include)


def resolve_arch(arch: str) -> str:
    """`auto` as the local GPU's gfx name (one clear line where there is none); any other arch as it is."""
    if arch != "auto":
        return arch
    from .codegen import archdetect

    return archdetect.resolve(arch)


def toolchain_family(name: str, arch: str, families, compiler: str | None = None) -> str | None:
    """The rule family of --toolchain NAME on `arch` (None: none, or that compiler has no known limits). registry
    is the registry toolchain's compiler for the arch (ckspace.codegen.toolchain: clang 22 of zig, every arch); auto is
    the compiler `build` will use (--compiler, else ROCm, else the registry's); none switches no family on."""
    if name == "none":
        return None
    from .codegen import toolchain

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


def with_toolchain(rules, name: str | None, arch: str, constraints: str | Path | None,
                   compiler: str | None = None) -> tuple[str | None, str | None]:
    """`rules` with the family of --toolchain NAME switched on, and that family (None: none)."""
    if not name:
        return rules, None
    from .rules.data import load

    data = load(Path(constraints) if constraints else None)
    family = toolchain_family(name, arch, data.families, compiler)
    if family is None:
        return rules, None
    if rules and not isinstance(rules, str):
        rules = ",".join(rules)
    return (f"{rules},+{family}" if rules else f"+{family}"), family


def combined_rules(rules, ck_api: str | None, ck_include: str | Path | None, toolchain: str | None, arch: str,
                   constraints: str | Path | None, compiler: str | None = None) -> tuple[str | None, str | None]:
    """`rules` plus the families of `ck_api` and `toolchain` (unset, they leave `rules` as it is), and the
    toolchain's family."""
    rules, family = with_toolchain(rules, toolchain, arch, constraints, compiler)
    if ck_api is None:
        if ck_include:
            raise UsageError("--ck-include is read only with --ck-api auto")
        return rules, family
    from .codegen.ckapi import combine_rules

    if rules and not isinstance(rules, str):
        rules = ",".join(rules)
    return combine_rules(rules, ck_api, ck_include), family


def catalog_for(set_name: str | None, over: str | None, ck_config: str | Path | None,
                constraints: str | Path | None = None) -> tuple["str | Catalog", str]:
    """The catalog a space is built over, and the set's name: --set (or --over for tests/tiny), or the list of
    --ck-config, whose set is then `ck-config` (a selection stays itself, selected over it). An unknown catalog is
    one line naming the choices."""
    from .select.sets import catalog_of

    if ck_config is None:
        catalog = catalog_of(set_name, over)
        from .rules.data import load

        names = list(load(Path(constraints) if constraints else None).catalogs)
        if catalog not in names:
            what = "--over" if set_name in (None, "", *SELECTED_SETS, *CK_PROCEDURES) else "set"
            raise UsageError(f"unknown {what} {catalog!r}; choices: "
                             f"{', '.join(names if what == '--over' else set_names(names))}")
        return catalog, set_name or "full"
    if over:
        raise UsageError("--ck-config is the catalog: give it or --over, not both")
    if set_name in CK_PROCEDURES:
        raise UsageError(f"{set_name} is CK's procedure over its full rule set; --ck-config does not apply")
    if set_name not in (None, "", "full", CK_CONFIG, *SELECTED_SETS):
        raise UsageError(f"--ck-config is the catalog: give it or --set {set_name}, not both")
    from .rules import ckconfig
    from .rules.data import Catalog

    ckconfig.config_files(Path(ck_config))  # a missing path or an empty directory fails before anything is built
    users = Catalog(CK_CONFIG, (), layout_3d="ndhwgc", doc=f"CK JSON configs from {ck_config}",
                    source=str(ck_config), configs=str(Path(ck_config).resolve()), user=True)
    return users, (set_name if set_name in SELECTED_SETS else CK_CONFIG)


def trait_filter(path: str | Path, constraints: str | Path | None,
                 where: str | None) -> tuple[str | None, dict[str, list[str]]]:
    """`where` and-ed with the filter of a tile-engine trait config file (checked against the fields of
    `constraints`), and the variant/ndim/dtype values the config allows (counts then list only its strata)."""
    from .rules import traitconfig
    from .rules.data import load_fields
    from .rules.schema import display

    fields = load_fields(Path(constraints) if constraints else None)
    doc = traitconfig.read(path)
    trait = traitconfig.to_where(doc, fields, display(str(path)))
    strata = traitconfig.strata_of(doc, fields)
    if trait is None:
        return where, strata
    return (trait if not where else f"({trait}) and ({where})"), strata


def problem_filter(problem: "str | Problem", arch: str, ck_api: str | None, ck_include: str | Path | None,
                   constraints: str | Path | None, where: str | None) -> tuple["Problem", str]:
    """A convolution problem (CK's ConvParam order or keywords; a malformed or impossible one is one error line)
    and `where` and-ed with the condition a kernel must meet to run it under the CK API revision's support rules
    (constraints/support.toml; `ck_api` unset: the newest revision)."""
    from .rules import support
    from .rules.data import load
    from .rules.problem import Problem, parse_problem

    parsed = problem if isinstance(problem, Problem) else parse_problem(problem)
    revision = api_revision(ck_api, ck_include)
    data = load(Path(constraints) if constraints else None)
    if arch not in data.archs:
        raise UsageError(f"unknown arch {arch!r}; archs: {', '.join(sorted(data.archs))}")
    text = support.where_text(support.rules_for(data, revision), parsed, data, arch)
    return parsed, (text if not where else f"({where}) and ({text})")

