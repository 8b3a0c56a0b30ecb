"""The named kernel sets of an arch: `full` (the model's whole set) and the coverage-driven selections `tests` and
`tiny`, as lists of configs. enumerate, coverage, sample, emit and explain's membership all read sets from here."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from ..memo import memo
from ..errors import CkspaceError, UsageError
from ..rules.names import parse_name

if TYPE_CHECKING:  # pragma: no cover
    from ..rules.data import DataSet
    from ..rules.model import Model, Stratum
    from ..solve.kernels import KernelSpace
    from . import coverage, objectives
    from .selection import Selection

# objectives, coverage and selection are imported where a function needs them: a listing of a catalog (the common
# cold run) never does.

SELECTED_SETS = ("tests", "tiny")  # coverage-optimal subsets of a catalog (`--over`, default full), by objective
# CK's own subsets of full, by its every-fifth procedures (CK's grouped_config_rules_full_tests.py)
CK_PROCEDURES = ("ck-full-tests", "ck-tiny")


def is_selection(set_name: str | None) -> bool:
    """A set chosen from a catalog (ckspace's tests/tiny, CK's full-tests/tiny), not a catalog itself."""
    return set_name in SELECTED_SETS or set_name in CK_PROCEDURES


def set_names(catalogs: Iterable[str]) -> list[str]:
    """Every name --set takes: the catalogs (with their aliases) and the selections."""
    return [*catalogs, *SELECTED_SETS, *CK_PROCEDURES]


def check_set(set_name: str, catalogs: Iterable[str] | None = None) -> None:
    """An unknown set is one line naming the choices; without `catalogs` only the selections are known here (the
    catalogs are data: a Space checks them when it is built)."""
    if is_selection(set_name) or catalogs is None:
        return
    names = list(catalogs)
    if set_name not in names:
        raise UsageError(f"unknown set {set_name!r}; choices: {', '.join(set_names(names))}")


def catalog_of(set_name: str | None, over: str | None) -> str:
    """The catalog a command works in: the set itself, or for tests/tiny the catalog they are selected over."""
    if set_name in (None, "") or set_name in SELECTED_SETS:
        return over or "full"
    if set_name in CK_PROCEDURES:
        if over not in (None, "full", "ck-full"):
            raise UsageError(f"{set_name} is CK's procedure over its full rule set: --over {over} does not apply")
        return "full"
    if over:
        raise UsageError("--over applies to --set tests and --set tiny only")
    return set_name


def load_objective(space: "KernelSpace", set_name: str | None,
                   objective_path: str | Path | None) -> "objectives.Objective":
    """The objective of a set (its own file), or the user's file; `tests` when neither names one."""
    from . import objectives

    spec = objective_path if objective_path is not None else (set_name if set_name in SELECTED_SETS else "tests")
    return objectives.load(spec, space.data.fields)


def selection_for(space: "KernelSpace", set_name: str, objective_path: str | Path | None = None,
                  stable_from: str | Path | None = None) -> "Selection":
    """The `Selection` (configs and solver statistics) of `tests` or `tiny` under `space`'s rules."""
    from .selection import select

    check_set(set_name, space.data.catalogs)
    if set_name not in SELECTED_SETS:
        raise UsageError(f"{set_name} is a catalog, not a selection (use Space.enumerate)")
    return select(space, load_objective(space, set_name, objective_path), stable_from)


NARROW_IT = "narrow it (--variant, --ndim, --dtype, --where) or switch a catalog's curation on"


def too_many(what: str, limit: int, total: int | None = None, hint: str = NARROW_IT) -> UsageError:
    """The one line of a set too large to hold in memory (over UNIVERSE_LIMIT), whoever finds it."""
    if total is None:
        return UsageError(f"{what} has more than {limit:,} kernels, too many to hold in memory: {hint}")
    return UsageError(f"{what} has {total:,} kernels: more than {limit:,} kernels are too many to hold in memory; "
                      f"{hint}")


WHOLE_SPACE = "coverage is measured over a whole catalog: switch its curation on"  # coverage takes no filters


def may_be_open(space: "KernelSpace") -> bool:
    """Whether the space has no catalog's curation on (`--rules -ck-curation`): then it may be the open space,
    ~10^13 kernels, which only a stream can list. A listed catalog is its list."""
    from ..rules.model import curation_families

    return not space.catalog.listed and not (set(space.families) & curation_families(space.data))


def check_listable(space: "KernelSpace", what: str, *, variant=None, ndim=None, dtype=None, where: str | None = None,
                   limit: int | None = None, hint: str = NARROW_IT) -> None:
    """Before any listing: a space that may be open is counted (the count multiplies, it lists nothing), and one
    over the limit (UNIVERSE_LIMIT) is one UsageError line. A command that needs a whole set in memory (coverage,
    sample, a filtered selection, a table) calls this first, then `bounded` as it lists."""
    from .selection import UNIVERSE_LIMIT

    limit = UNIVERSE_LIMIT if limit is None else limit
    if may_be_open(space):
        total = sum(space.count(variant=variant, ndim=ndim, dtype=dtype, where=where).values())
        if total > limit:
            raise too_many(what, limit, total, hint)


def listed_configs(space: "KernelSpace", what: str, *, variant=None, ndim=None, dtype=None,
                   where: str | None = None, hint: str = NARROW_IT) -> list[dict[str, object]]:
    """The kernels of the space (filtered as enumerate filters) as a list, or one UsageError line, before any
    listing, when there are more than UNIVERSE_LIMIT (check_listable, then bounded)."""
    check_listable(space, what, variant=variant, ndim=ndim, dtype=dtype, where=where, hint=hint)
    return bounded(space.enumerate(variant=variant, ndim=ndim, dtype=dtype, where=where), what, hint=hint)


def bounded(stream: Iterable[dict[str, object]], what: str, limit: int | None = None,
            hint: str = NARROW_IT) -> list[dict[str, object]]:
    """The kernels of a stream as a list, or one UsageError line when there are more than `limit`: a command that
    needs a whole set in memory (sample, coverage, a filtered selection) stops there instead of filling the
    memory with the open space (~10^13 kernels). listed_configs counts a space that may be open first."""
    from .selection import UNIVERSE_LIMIT

    limit = UNIVERSE_LIMIT if limit is None else limit
    out: list[dict[str, object]] = []
    for cfg in stream:
        out.append(cfg)
        if len(out) > limit:
            raise too_many(what, limit, hint=hint)
    return out


def selected_configs(space: "KernelSpace", set_name: str, *, objective_path: str | Path | None = None,
                     stable_from: str | Path | None = None, variant=None, ndim=None, dtype=None,
                     where: str | None = None) -> tuple[list[dict[str, object]], "Selection | None"]:
    """The kernels of a set (full, tests, tiny) as config dicts (fields + name), sorted by name, and the Selection
    behind them (None for full).

    `objective_path` replaces the set's objective file; `stable_from` is a file of names of a previous selection to
    stay close to. variant/ndim/dtype/where filter the set like enumerate's options (the set itself is always
    selected over the whole arch).
    """
    check_set(set_name, space.data.catalogs)
    if set_name in CK_PROCEDURES:
        if objective_path is not None or stable_from is not None:
            raise UsageError("--objective and --stable-from apply to --set tests and --set tiny only")
        configs = procedure_configs(space, set_name)
        return _filtered(space, configs, variant, ndim, dtype, where), None
    if set_name not in SELECTED_SETS:
        if objective_path is not None or stable_from is not None:
            raise UsageError("--objective and --stable-from apply to --set tests and --set tiny only")
        configs = listed_configs(space.over(set_name), f"the set {set_name}" + (
            f" under --rules {space.rules_spec}" if space.rules_spec else ""), variant=variant, ndim=ndim,
            dtype=dtype, where=where)
        return sorted(configs, key=lambda c: str(c["name"])), None
    sel = selection_for(space, set_name, objective_path, stable_from)
    return _filtered(space, sel.configs, variant, ndim, dtype, where), sel


def _filtered(space: "KernelSpace", configs: list[dict[str, object]], variant, ndim, dtype,
              where: str | None) -> list[dict[str, object]]:
    """A selection's kernels that the enumerate filters keep, each checked on its own (nothing is listed): its
    stratum, the where filter (a field its kernel family lacks fails it), and the space's rules (a selection read
    from a cache or chosen under other rules keeps only what this space accepts, e.g. under a CK API revision)."""
    from ..rules import expr as E
    from ..rules.check import is_valid
    from ..rules.names import format_name

    strata: dict[tuple[object, object, object], Stratum] = {
        (s.variant, s.ndim, s.dtype): s for s in space.strata(variant=variant, ndim=ndim, dtype=dtype)}
    node = space.parse_where(where)
    out = []
    for c in configs:
        stratum = strata.get((c["variant"], c["ndim"], c["dtype"]))
        if stratum is None:
            continue
        if node is not None:
            folded = space.model.filter_for(node, stratum)  # as enumerate reads it in that stratum
            try:
                if folded is None or not E.evaluate(folded, c, space.model.resolve):
                    continue
            except KeyError:
                continue
        if not is_valid(space.model, c):
            continue
        out.append(c if "name" in c else {**c, "name": format_name(c)})
    return sorted(out, key=lambda c: str(c["name"]))


def procedure_configs(space: "KernelSpace", set_name: str) -> list[dict[str, object]]:
    """CK's full-tests or tiny of the space's arch, over `full` under the space's rules, sorted by name (cached with
    the data digest, the arch and the rules, like every result)."""
    full = space.over("full")
    names = cached_procedure_names(full, set_name)
    if names is None:
        return sorted(_computed_procedure(full, set_name), key=lambda c: str(c["name"]))
    wanted = set(names)  # a dict only for each member: a fifth of full's kernels for full-tests
    at: dict[tuple[str, ...], int] = {}
    configs = []
    for keys, row in full.rows():
        i = at.get(keys)
        if i is None:
            i = at[keys] = keys.index("name")
        if row[i] in wanted:
            configs.append(dict(zip(keys, row)))
    return sorted(configs, key=lambda c: str(c["name"]))


def procedure_names(space: "KernelSpace", set_name: str) -> list[str]:
    """The names of CK's full-tests or tiny (see procedure_configs), from the cache when it holds them."""
    full = space.over("full")
    names = cached_procedure_names(full, set_name)
    if names is not None:
        return names
    return sorted(str(c["name"]) for c in _computed_procedure(full, set_name))


def _computed_procedure(full: "KernelSpace", set_name: str) -> list[dict[str, object]]:
    """CK's procedure computed now over `full` (in CK's order), its names stored in the cache."""
    from .. import cache
    from .ckprocedures import ck_subset

    rules = f" under --rules {full.rules_spec}" if full.rules_spec else ""
    check_listable(full, f"the set full{rules}, which CK's {set_name} is chosen from,",  # CK's loops list all of it
                   hint="CK's procedures run over the whole set: switch its curation on")
    configs = ck_subset(full, set_name)
    if full.use_cache:
        cache.store("ck-procedure", _procedure_key(full, set_name), sorted(str(c["name"]) for c in configs))
    return configs


def cached_procedure_names(space: "KernelSpace", set_name: str) -> list[str] | None:
    """The names of CK's full-tests or tiny of the space's arch and rules if the cache holds them, else None."""
    from .. import cache

    full = space.over("full")
    if not full.use_cache:
        return None
    return cache.load("ck-procedure", _procedure_key(full, set_name),
                      lambda p: isinstance(p, list) and all(isinstance(n, str) for n in p))


def procedure_members(space: "KernelSpace", variant: str | None, dtype: str,
                      ndim: int | None = None) -> tuple[frozenset[str], frozenset[str] | None]:
    """ckprocedures.members_of over the space's `full`, cached like the whole sets (explain of one name)."""
    from .. import cache
    from .ckprocedures import members_of

    full = space.over("full")
    key = cache.key("ck-procedure-part", full.data.digest, {"arch": full.arch, "variant": variant, "dtype": dtype,
                                                            "ndim": ndim, "families": sorted(full.families)})
    if full.use_cache:
        hit = cache.load("ck-procedure-part", key, _is_part)
        if hit is not None:
            return frozenset(hit[0]), None if hit[1] is None else frozenset(hit[1])
    full_tests, tiny = members_of(full, variant, dtype, ndim)
    if full.use_cache:
        cache.store("ck-procedure-part", key, [sorted(full_tests), None if tiny is None else sorted(tiny)])
    return full_tests, tiny


def _is_part(payload: object) -> bool:
    def names(p: object) -> bool:
        return isinstance(p, list) and all(isinstance(n, str) for n in p)

    return isinstance(payload, list) and len(payload) == 2 and names(payload[0]) \
        and (payload[1] is None or names(payload[1]))


def _procedure_key(full: "KernelSpace", set_name: str) -> str:
    from .. import cache

    return cache.key("ck-procedure", full.data.digest, {"arch": full.arch, "set": set_name,
                                                        "families": sorted(full.families)})


def selected_names(data: "DataSet", arch: str, families: Iterable[str], set_name: str,
                   make_space: Callable[[], "KernelSpace"] | None = None) -> frozenset[str] | None:
    """The names of the `set_name` selection of `arch` under the default rules, as `ckspace enumerate --set` caches
    it; None when it is not cached. With `make_space`, a missing selection is selected now (and cached).

    Reading the cache needs no enumeration and no solver: the key is ckspace.select.selection.select's own.
    """
    from .. import cache

    if make_space is None and not cache.holds_kind("select"):
        return None  # nothing was ever selected here: no objective to read, no key to compute (explain of a name)
    from . import objectives
    from .selection import cached_names

    try:
        objective = objectives.load(set_name, data.fields)
    except CkspaceError:
        return None
    names = cached_names(data.digest, arch, families, objective)
    if names is not None:
        return frozenset(names)
    if make_space is None:
        return None
    return frozenset(selection_for(make_space(), set_name).names)


def coverage_report(space: "KernelSpace", *, names: list[str] | None = None, set_name: str | None = None,
                    objective_path: str | Path | None = None, stable_from: str | Path | None = None,
                    source: str = "names", where: str | None = None) -> "coverage.Report":
    """The coverage of a list of names, or of a named set (tests when neither is given), against an objective
    (the set's own, or tests for a list): per dimension and pair, covered/total and the uncovered items; names that
    are not in full are listed with the first reason."""
    from ..rules.check import first_reason
    from . import coverage
    from .selection import select, universe

    if names is not None and set_name is not None:
        raise UsageError("give either a FILE of names or --set, not both")
    if names is None and set_name is None:
        set_name = "tests"
    if set_name is not None:
        check_set(set_name, space.data.catalogs)
    if stable_from and set_name not in SELECTED_SETS:
        raise UsageError("--stable-from applies to --set tests and --set tiny only")
    objective = load_objective(space, set_name, objective_path)
    full_names = {str(c["name"]): c for c in listed_configs(space, "the space to cover", hint=WHOLE_SPACE)}
    stats = None
    if set_name in CK_PROCEDURES:
        names = [str(c["name"]) for c in procedure_configs(space, set_name)]
        source = f"set {set_name}"
    elif set_name is not None and set_name not in SELECTED_SETS:
        names = sorted(full_names)
        source = f"set {set_name}"
    elif set_name is not None:
        sel = select(space, objective, stable_from)
        names = sel.names
        stats = sel.stats
        source = f"set {set_name}" + (f" (objective {objective.label()})" if objective_path else "")
    assert names is not None
    names = respelt(names, full_names)
    if where:  # only the kernels the filter keeps (a problem's support condition: those that run it)
        names = _passing(space, names, full_names, where)
        source += " (filtered)"
    index = coverage.ItemIndex(objective, universe(space, objective))
    return coverage.build_report(index, space.arch, source, names, full_names,
                                 explain=lambda n: first_reason(space.model, n), selection=stats,
                                 real=lambda n: open_space_config(space, n))


def _passing(space: "KernelSpace", names: list[str], configs: dict[str, dict[str, object]],
             where: str) -> list[str]:
    """The names whose kernels pass `where` as enumerate reads it in their stratum (a name that does not parse
    stays: coverage reports it)."""
    from ..rules import expr as E
    from ..rules.model import Stratum

    node = space.parse_where(where)
    assert node is not None
    out = []
    for n in names:
        cfg = configs.get(n)
        if cfg is None:
            try:
                cfg = parse_name(n)
            except CkspaceError:
                out.append(n)
                continue
        folded = space.model.filter_for(node, Stratum(cfg["variant"], cfg["ndim"], cfg["dtype"]))  # type: ignore[arg-type]
        try:
            if folded is not None and E.evaluate(folded, cfg, space.model.resolve):
                out.append(n)
        except KeyError:
            continue
    return out


def open_space_config(space: "KernelSpace", name: str) -> dict[str, object] | None:
    """The config of a name that is a kernel of the open space on the space's arch (no fact broken), else None."""
    from ..rules.check import domain_verdicts, violations
    from ..rules.model import Model, curation_families

    try:
        cfg = parse_name(name)
    except CkspaceError:
        return None
    facts = frozenset(space.families) - curation_families(space.data)
    key = (space.data.digest, space.arch, facts)
    model = _open_models.get(key)
    if model is None:
        model = _open_models[key] = Model(space.data, space.arch, facts)
    if domain_verdicts(model, cfg) or violations(model, cfg):
        return None
    return cfg


# per data, arch and facts: a batch of names builds one model
_open_models: dict[tuple, Model] = memo("select.sets.open_models", {})


def respelt(names: list[str], full_names: Mapping[str, object]) -> list[str]:
    """The names, each in the universe's spelling where it names one of its kernels in another (a 3D `ndhwgc`
    name of CK's configs is full's `nhwgc` kernel)."""
    from ..solve.listed import canonical

    by_kernel = {}
    for name, cfg in full_names.items():
        by_kernel[canonical(cfg)] = name
    out = []
    for name in names:
        if name not in full_names:
            try:
                name = by_kernel.get(canonical({**parse_name(name), "name": name}), name)
            except CkspaceError:
                pass  # a malformed name stays as it is: the report says why it is not in full
        out.append(name)
    return out


def read_name_file(path: str | Path) -> list[str]:
    """The names of a file (one per line, '#' comments; '-' is stdin)."""
    from .selection import read_names

    return read_names(path)
