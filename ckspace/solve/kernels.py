"""The kernels of one model: enumerate and count them, cached. The services (select, explain, codegen) and the
`ckspace.Space` facade are built on it."""

from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from .. import cache
from . import listed, packed
from ..errors import UsageError
from ..rules import data as D
from ..rules import expr as E
from ..rules import typecheck as T
from ..rules.model import Model, Stratum, resolve_families, shared_model
from ..rules.names import VARIANT_SPELLINGS

# Results larger than this are streamed and not cached (the open space is far larger than CK's).
CACHE_LIMIT = 2_000_000


@dataclass
class Timings:
    """Where the time of a run went (seconds)."""

    load: float = 0.0
    plan: float = 0.0
    solve: float = 0.0
    output: float = 0.0
    solver_import: float = 0.0
    cached: bool = False
    extra: dict[str, float] = field(default_factory=dict)


def _as_list(value: str | int | Iterable | None, option: str) -> list[str] | None:
    """A repeated or comma-separated option as its items; an empty item (`forward,,bwd_data`, `''`) is an error,
    not a silent no-op, since it is almost always a typo."""
    if value is None:
        return None
    items = [value] if isinstance(value, (str, int)) else list(value)
    out: list[str] = []
    for item in items:
        parts = [s.strip() for s in str(item).split(",")]
        if not all(parts):
            raise UsageError(f"empty value in --{option} {str(item)!r}")
        out += parts
    return out or None


def _typed(name: str, item: str) -> object:
    """An option value as the field's type: ndim takes 2, 3 or CK's spelling 2d, 3d; variant takes CK's spellings
    too (fwd, bwdd, bwdw, backward_data, ...)."""
    if name == "variant":
        return VARIANT_SPELLINGS.get(item.strip().lower(), item)
    if name == "ndim":
        digits = item[:-1] if item[-1:] in ("d", "D") else item
        if digits.isascii() and digits.isdigit() and len(digits) <= 2:
            return int(digits)
    return item


class KernelSpace:
    """The kernel-instance space of one arch under a choice of rule families: enumerate and count."""

    def __init__(self, *, arch: str = "gfx950", rules: str | Sequence[str] | None = None,
                 constraints_dir: str | Path | None = None, use_cache: bool = True,
                 catalog: "str | D.Catalog" = "full"):
        started = time.perf_counter()
        self.data = D.load(Path(constraints_dir) if constraints_dir else None)
        if isinstance(catalog, D.Catalog):  # a user's list of configs (--ck-config): known to this space only
            self.data = dataclasses.replace(self.data, catalogs={**self.data.catalogs, catalog.name: catalog})
            catalog = catalog.name
        if catalog not in self.data.catalogs:
            raise UsageError(f"unknown catalog {catalog!r}; catalogs: {', '.join(sorted(self.data.catalogs))}")
        self.catalog = self.data.catalogs[catalog]
        self.rules_spec = rules  # kept to build the same space over another catalog
        self.constraints_dir = constraints_dir
        self.families = resolve_families(self.data, rules, self.catalog.name)
        self.model = shared_model(self.data, arch, self.families)
        self.model.validate_references()
        self.arch = arch
        self.use_cache = use_cache
        self.timings = Timings(load=time.perf_counter() - started)
        self.rejected: list[listed.Rejected] = []  # listed configs that break a fact (for the commands to report)
        self._possible: list[Stratum] | None = None

    def over(self, catalog: str) -> "KernelSpace":
        """The same arch, rules and data over another catalog (this space when it is the same)."""
        if self.data.catalogs.get(catalog) == self.catalog:
            return self
        known = self.data.catalogs.get(catalog)
        other = KernelSpace(arch=self.arch, rules=self.rules_spec, constraints_dir=self.constraints_dir,
                            use_cache=self.use_cache,
                            catalog=known if known is not None and known.user else catalog)  # a user's list travels
        other.rejected = self.rejected  # one report for the command, whichever space listed the configs
        return other

    def breaking(self, rule_id: str) -> "KernelSpace":
        """The near misses of one enabled rule: the kernels of this space's arch and families that break that rule
        and no other (the rule is replaced by its negation, `when and not require`). A separate space: it reads and
        writes no result cache (the cache is keyed by the rule files, which it does not change)."""
        import copy

        from ..rules.model import shared_model

        rule = next((r for r in self.model.rules if r.id == rule_id), None)
        if rule is None:
            raise UsageError(f"rule {rule_id!r} is not enabled in this space")
        if rule.family == "model":
            raise UsageError(f"rule {rule_id!r} is built in (family model): a kernel cannot break it alone")
        negated = dataclasses.replace(rule, when=E.Const(True), require=E.And((rule.when, E.Not(rule.require))))
        rules = [negated if r.id == rule_id else r for r in self.data.rules]
        if rule.kind != "both":  # kernels of the other family (GEMM or depthwise) cannot break it: none is kept
            other_kind = "depthwise" if rule.kind == "gemm" else "gemm"
            rules.append(dataclasses.replace(rule, id=f"{rule.id}~{other_kind}", kind=other_kind, when=E.Const(True),
                                             require=E.Const(False), fields=frozenset()))
        other = copy.copy(self)
        other.data = dataclasses.replace(self.data, rules=rules)
        other.model = shared_model(other.data, self.arch, self.families)
        other._possible = None
        other.use_cache = False
        other.timings = Timings()
        other.rejected = []
        return other

    # -- selection ------------------------------------------------------------------------------------------------
    def strata(self, *, variant=None, ndim=None, dtype=None) -> list[Stratum]:
        fields = self.data.fields
        chosen = {}
        for name, value in (("variant", variant), ("ndim", ndim), ("dtype", dtype)):
            items = _as_list(value, name)
            domain = fields[name].values
            if items is None:
                chosen[name] = set(domain)
                continue
            picked = set()
            for item in items:
                typed = _typed(name, item)
                if typed not in domain:
                    ck = "; CK's fwd, bwdd and bwdw work too" if name == "variant" else ""
                    raise UsageError(f"unknown {name} {item!r}; choices: {', '.join(str(v) for v in domain)}{ck}")
                picked.add(typed)
            chosen[name] = picked
        return [s for s in self._possible_strata()
                if s.variant in chosen["variant"] and s.ndim in chosen["ndim"] and s.dtype in chosen["dtype"]]

    def _possible_strata(self) -> list[Stratum]:
        """The model's strata less those a rule empties outright (depthwise 3D; fp32 on wave32 under CK's curation):
        they cannot hold a kernel, so no count, listing or sample shows them."""
        if self._possible is None:
            from .folded import empty_by

            self._possible = [s for s in self.model.strata if empty_by(self.model, s) is None]
        return self._possible

    def parse_where(self, where: str | None) -> E.Node | None:
        if not where:
            return None
        names = {**self.data.fields, **dict.fromkeys(self.data.derives)}
        node = E.parse(where, names, self.data.namespaces, "--where")
        T.check_condition(node, self.model.scope, "--where")  # before any evaluation or solver compilation
        return self.data.macros.expand(node)

    def _cache_options(self, strata: Sequence[Stratum], where: str | None) -> dict[str, object]:
        return {
            "arch": self.arch,
            "families": sorted(self.families),
            "strata": [[s.variant, s.ndim, s.dtype] for s in strata],
            "where": " ".join(where.split()) if where else None,
            "layout_3d": self.catalog.layout_3d,
        }

    # -- results -------------------------------------------------------------------------------------------------
    def enumerate(self, *, variant=None, ndim=None, dtype=None, where: str | None = None) -> Iterator[dict[str, object]]:
        """Every valid kernel config, sorted by name, as dicts of field values (plus `name`)."""
        for keys, row in self._rows(variant, ndim, dtype, where):
            yield dict(zip(keys, row))

    def names(self, *, variant=None, ndim=None, dtype=None, where: str | None = None) -> Iterator[str]:
        """The names `enumerate` gives, in its order, without a dict per kernel (a listing of names)."""
        at: dict[tuple[str, ...], int] = {}
        for keys, row in self._rows(variant, ndim, dtype, where):
            i = at.get(keys)
            if i is None:
                i = at[keys] = keys.index("name")
            yield row[i]

    def rows(self, *, variant=None, ndim=None, dtype=None, where: str | None = None,
             keep: bool = True) -> Iterator[tuple[tuple[str, ...], tuple]]:
        """enumerate's kernels, in its order, as (keys, values) with no dict per kernel: the column names and the
        values; the kernels of a solved stratum share one keys tuple. keep=False does not write the listing to the
        cache (a part of a result that is cached itself)."""
        return self._rows(variant, ndim, dtype, where, keep)

    def _rows(self, variant, ndim, dtype, where: str | None,
              keep: bool = True) -> Iterator[tuple[tuple[str, ...], tuple]]:
        strata = self.strata(variant=variant, ndim=ndim, dtype=dtype)
        node = self.parse_where(where)
        if self.catalog.listed:  # a list of configs: checked, not solved (fast; no cache needed)
            t0 = time.perf_counter()
            found = list(self._listed(strata, node))
            self.timings.solve += time.perf_counter() - t0
            for cfg in found:
                yield tuple(cfg), tuple(cfg.values())
            return
        digest = cache.key("enumerate", self.data.digest, self._cache_options(strata, where))
        if self.use_cache:
            columns = self._columns(strata)
            hit = cache.load("enumerate", digest, lambda payload: packed.is_packed(payload, columns))
            if hit is not None:
                self.timings.cached = True
                yield from packed.rows(hit)
                return
        self._large = False
        # The cache entry (solve.packed: the strata by column) is made of the tuples the solve gives, kept as they
        # come; a streamed (open-space) result is never kept in memory for the cache.
        layouts: dict[tuple[str, ...], int] = {}
        kept: list[tuple[int, list[tuple]]] | None = [] if self.use_cache and keep else None
        total = 0
        for named, rows in self._solve(strata, node):
            stratum: list[tuple] | None = [] if kept is not None else None
            for row in rows:
                if stratum is not None:
                    if self._large or total + len(stratum) >= CACHE_LIMIT:
                        stratum = kept = None
                    else:
                        stratum.append(row)
                yield named, row
            if kept is not None and stratum:
                kept.append((layouts.setdefault(named, len(layouts)), stratum))
                total += len(stratum)
        if kept is not None:
            cache.store("enumerate", digest, packed.pack(list(layouts), kept))

    def count(self, *, variant=None, ndim=None, dtype=None, where: str | None = None) -> dict[Stratum, int]:
        """Kernels per (variant, ndim, dtype), counted by multiplying independent components."""
        strata = self.strata(variant=variant, ndim=ndim, dtype=dtype)
        node = self.parse_where(where)
        if self.catalog.listed:
            counts = dict.fromkeys(strata, 0)
            # Keyed by the plain values a config dict holds (object to mypy).
            by_key: dict[tuple[object, object, object], Stratum] = {(s.variant, s.ndim, s.dtype): s for s in strata}
            for cfg in self._listed(strata, node):
                counts[by_key[(cfg["variant"], cfg["ndim"], cfg["dtype"])]] += 1
            return counts
        digest = cache.key("count", self.data.digest, self._cache_options(strata, where))
        if self.use_cache:
            hit = cache.load("count", digest, lambda payload: _is_counts(payload, strata))
            if hit is not None:
                self.timings.cached = True
                return {st: row[3] for st, row in zip(strata, hit)}
        from . import plan as solve
        from .bags import import_seconds

        imported_before = import_seconds()
        out: dict[Stratum, int] = {}
        for st in strata:
            t0 = time.perf_counter()
            plan = self._plan(st, node)
            t1 = time.perf_counter()
            if plan is None or plan.infeasible_by:
                out[st] = 0
            else:
                out[st] = solve.count_only(self.model, plan)
            self.timings.plan += t1 - t0
            self.timings.solve += time.perf_counter() - t1
        self._solver_imported_since(imported_before)
        if self.use_cache:
            cache.store("count", digest, [[s.variant, s.ndim, s.dtype, c] for s, c in out.items()])
        return out

    def count_cpp(self, *, variant=None, ndim=None, dtype=None, where: str | None = None,
                  counts: dict[Stratum, int] | None = None) -> dict[Stratum, int]:
        """Distinct C++ kernels per (variant, ndim, dtype): kernels that differ only in fields that do not change
        the C++ (pad_m/n/k) counted once (ckspace.solve.samecode). `counts`: count()'s answer, when known."""
        from . import samecode

        strata = self.strata(variant=variant, ndim=ndim, dtype=dtype)
        node = self.parse_where(where)
        if self.catalog.listed:
            return self._cpp_counts(self._listed(strata, node), strata)
        if counts is None:
            counts = self.count(variant=variant, ndim=ndim, dtype=dtype, where=where)
        digest = cache.key("count-cpp", self.data.digest, self._cache_options(strata, where))
        if self.use_cache:
            hit = cache.load("count-cpp", digest, lambda payload: _is_counts(payload, strata))
            if hit is not None:
                return {st: row[3] for st, row in zip(strata, hit)}
        from . import plan as solve

        out: dict[Stratum, int] = {}
        solves = 0
        for st in strata:
            def count(extra: E.Node | None, st: Stratum = st) -> int:
                nonlocal solves
                solves += 1
                plan = self._plan(st, samecode.conjoined(node, extra))
                return 0 if plan is None or plan.infeasible_by else solve.count_only(self.model, plan)

            out[st] = samecode.count_distinct(self.model, st, self.model.rules_for(st.kind), node, counts[st], count)
        if self.use_cache and solves:  # kept only where it took solving (the pads free or fixed need none)
            cache.store("count-cpp", digest, [[s.variant, s.ndim, s.dtype, c] for s, c in out.items()])
        return out

    def _cpp_counts(self, configs: Iterable[Mapping[str, object]], strata: Sequence[Stratum]) -> dict[Stratum, int]:
        """Distinct C++ kernels of `configs` per stratum (of `strata`; others are not counted): configs equal but for
        the fields that do not change the C++ (fields.toml `code = false`) count once."""
        free = {f.name for f in self.data.fields.values() if not f.code} | {"name"}
        keys: dict[Stratum, set[tuple]] = {s: set() for s in strata}
        index: dict[tuple[object, object, object], Stratum] = {(s.variant, s.ndim, s.dtype): s for s in strata}
        for cfg in configs:
            stratum = index.get((cfg["variant"], cfg["ndim"], cfg["dtype"]))
            if stratum is not None:
                keys[stratum].add(tuple(sorted((k, str(v)) for k, v in cfg.items() if k not in free)))
        return {s: len(k) for s, k in keys.items()}

    def _listed(self, strata: Sequence[Stratum], node: E.Node | None) -> Iterator[dict[str, object]]:
        """The listed catalog's kernels of these strata that pass the filter; the configs that break a fact go to
        self.rejected and, once the listing is done, to a LeftOutWarning (the CLI reports them itself)."""
        rejects = self._rejects()
        yield from listed.kernels(self.model, self.data, self.catalog, strata, node, rejects)
        if rejects:
            import warnings

            from ..errors import LeftOutWarning

            rules = sorted({r.verdict.rule for r in rejects})
            warnings.warn(f"{self.catalog.name}: {len(rejects):,} listed config(s) break a fact of {self.arch} and "
                          f"are left out ({', '.join(rules)}); space.rejected lists them", LeftOutWarning,
                          stacklevel=_outside_package())

    def _rejects(self) -> list["listed.Rejected"]:
        """Where this listing's rejected configs go: a fresh report per listing (the same listing twice is one)."""
        self.rejected.clear()
        return self.rejected

    def _columns(self, strata: Sequence[Stratum]) -> set[frozenset[str]]:
        """The columns a kernel of these strata has: the fields of its kind, and its name."""
        return {frozenset(f.name for f in self.model.fields(kind)) | {"name"} for kind in {s.kind for s in strata}}

    def _plan(self, st: Stratum, node: E.Node | None):
        from . import plan as solve

        if node is None:
            return solve.plan(self.model, st, [])
        folded = self.model.filter_for(node, st)
        if folded is None:
            return None  # no kernel of the stratum passes the filter (or it reads fields this family lacks)
        return solve.plan(self.model, st, [folded] if folded != E.Const(True) else [])

    def _spelling(self, st: Stratum) -> dict[str, object]:
        """The catalog's spelling of the layout token: ndhwgc or nhwgc for a 3D GEMM kernel (one kernel, two spellings:
        the C++ takes its layouts from ndim, and CK's full and default spell 3D nhwgc, its JSON configs ndhwgc)."""
        if st.ndim == 3 and st.kind == "gemm" and self.catalog.layout_3d != "nhwgc":
            return {"layout": self.catalog.layout_3d}
        return {}

    def _solver_imported_since(self, before: float) -> None:
        """Book the time OR-Tools took to import during a solve (only a bag the plain-Python join declines loads it:
        CK's catalogs never do) as import time, not solve time."""
        from .bags import import_seconds

        spent = import_seconds() - before
        self.timings.solver_import += spent
        self.timings.solve -= spent

    def _solve(self, strata: Sequence[Stratum],
               node: E.Node | None) -> Iterator[tuple[tuple[str, ...], Iterable[tuple]]]:
        """Per stratum, in name order: the keys (fields, then `name`) and the rows of values, sorted by name (a
        stratum too large to sort streams in the solver's order)."""
        from . import plan as solve
        from .bags import import_seconds
        from ..rules.names import format_name

        for st in sorted(strata, key=lambda s: format_name({**_prefix_probe(self.model, s), **self._spelling(s)})):
            t0 = time.perf_counter()
            plan = self._plan(st, node)
            t1 = time.perf_counter()
            self.timings.plan += t1 - t0
            if plan is None or plan.infeasible_by:
                continue
            imported_before = import_seconds()
            lazy = None
            try:  # CK-sized strata solve whole; a bag beyond TREE_LIMIT solutions marks an open-space stratum
                solve.solve_plan(self.model, plan, limit=solve.TREE_LIMIT)
                large = solve.count_plan(plan) > CACHE_LIMIT
            except solve.TooLarge:
                large = lazy = True  # its bags are solved on demand as the configs stream (ckspace.solve.lazy)
            self.timings.solve += time.perf_counter() - t1
            self._solver_imported_since(imported_before)
            keys, rows = _spelt(*solve.rows(self.model, plan, lazy_walk=lazy), self._spelling(st))
            if not large:
                yield (*keys, "name"), _sorted_by_name(keys, list(rows), self.data.fields)
            else:
                self._large = True
                imported_before = import_seconds()
                yield (*keys, "name"), _named(keys, rows, self.data.fields)  # too large to sort: solver's order
                # a lazy walk may load OR-Tools while the names stream: import time, within the output's time
                self.timings.solver_import += import_seconds() - imported_before


def _spelt(keys: tuple[str, ...], rows: Iterator[tuple],
           spell: dict[str, object]) -> tuple[tuple[str, ...], Iterator[tuple]]:
    """The rows with the catalog's spelling of the layout (as {**config, **spell} would give them)."""
    if not spell:
        return keys, rows
    index = {k: i for i, k in enumerate(keys)}
    new_keys = keys + tuple(k for k in spell if k not in index)
    at = [(index[k], v) for k, v in spell.items() if k in index]
    extra = tuple(v for k, v in spell.items() if k not in index)

    def respelt() -> Iterator[tuple]:
        for row in rows:
            values = list(row)
            for i, v in at:
                values[i] = v
            yield tuple(values) + extra

    return new_keys, respelt()


def _sorted_by_name(keys: tuple[str, ...], rows: list[tuple], domains: Mapping[str, D.FieldDef]) -> list[tuple]:
    """The rows of a stratum with their names appended, sorted by name (name_rows: one check and formatter for
    all of them; the solve took every value from its field's domain)."""
    from ..rules.names import name_rows

    names = name_rows(keys, rows, domains)
    return [rows[i] + (names[i],) for i in sorted(range(len(rows)), key=names.__getitem__)]


NAMES_PER_BATCH = 4096  # a streamed stratum is named in batches: the checks and the formatter run per batch


def _named(keys: tuple[str, ...], rows: Iterable[tuple], domains: Mapping[str, D.FieldDef]) -> Iterator[tuple]:
    """The rows of a stream with their names appended, in stream order. The batches start at 16 rows and double
    up to NAMES_PER_BATCH, so the first names come as soon as before (an open-space stream makes 40,000 a second)."""
    from ..rules.names import name_rows

    batch: list[tuple] = []
    size = 16
    for row in itertools.chain(rows, [None]):
        if row is not None:
            batch.append(row)
            if len(batch) < size:
                continue
        for values, name in zip(batch, name_rows(keys, batch, domains)):
            yield values + (name,)
        batch = []
        size = min(2 * size, NAMES_PER_BATCH)


def _prefix_probe(model: Model, st: Stratum) -> dict[str, object]:
    """A config of the stratum with placeholder values, used only to sort strata by their name prefix."""
    probe: dict[str, object] = {f.name: f.values[0] for f in model.fields(st.kind)}
    probe.update(st.constants())
    probe["layout"] = "ngchw" if st.kind == "depthwise" else "nhwgc"
    return probe


def _is_counts(payload: object, strata: Sequence[Stratum]) -> bool:
    """Whether `payload` is [[variant, ndim, dtype, count >= 0], ...] for exactly `strata`, in their order."""
    if type(payload) is not list or len(payload) != len(strata):
        return False
    for row, st in zip(payload, strata):
        if type(row) is not list or len(row) != 4:
            return False
        variant, ndim, dtype, count = row
        if (type(variant), type(ndim), type(dtype)) != (type(st.variant), type(st.ndim), type(st.dtype)):
            return False
        if (variant, ndim, dtype) != (st.variant, st.ndim, st.dtype) or type(count) is not int or count < 0:
            return False
    return True


def _outside_package() -> int:
    """warnings.warn's stacklevel for the first caller outside ckspace (the user's line, not ours)."""
    import sys
    from types import FrameType

    root = str(Path(__file__).resolve().parent.parent)
    # the frame warn's stacklevel 2 names: the caller of the function that warns (this one's caller)
    frame: "FrameType | None" = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(root):
        frame = frame.f_back
        level += 1
    return level
