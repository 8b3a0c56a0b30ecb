"""The explainer: is a kernel valid for an arch, why not, and which valid kernels are nearest.

It has no presentation in it (ckspace.cli.explain renders). It works on the plain-Python check
(ckspace.rules.check): every rule of every family is evaluated on the config on its own, so each reported rule is
broken in its own right, not as a consequence of another one. The solver is touched only for a rejected kernel
(ckspace.explain.neighbours: the nearest valid kernels, and the smallest change of a rule's own fields that
satisfies it), so a valid kernel is explained without importing OR-Tools.
"""

from __future__ import annotations

import difflib
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping, Sequence, cast

from ..errors import CkspaceError, ExprError, UsageError
from ..rules import expr as E
from ..rules.check import broken_rules, domain_verdicts, rule_verdicts, violations
from ..rules.data import Catalog, DataSet, load
from ..rules.model import Model, Stratum, curation_families, kind_of_variant, resolve_families, shared_model
from ..rules.names import format_name
from ..rules.text import derivation
from ..rules.verdict import Verdict
from ..solve import listed
from ..select.sets import (SELECTED_SETS, cached_procedure_names, procedure_members,
                           procedure_names, selected_names)
from .result import CatalogNeighbour, Derived, Explanation, Neighbour, Note
from .spelling import parse

if TYPE_CHECKING:  # pragma: no cover
    from ..rules.problem import Problem
    from ..rules.support import SupportRule
    from .neighbours import NeighbourSearch
    from ..solve.kernels import KernelSpace

KNOWN_ISSUES_FAMILY = "ck-known-issues"  # its breaks are warnings about kernels CK generates anyway
HARDWARE_FAMILY = "arch"
CURATION_FAMILY = "ck-curation"


class Explainer:
    """Explains names for one arch and one choice of rule families; models of other archs are built on demand.

    One instance serves a whole batch: the data is loaded once, and the solver models of the strata it searched are
    kept (ckspace.explain.neighbours), so the thousandth name costs what the first one did minus the set-up.
    """

    def __init__(self, arch: str = "gfx950", rules: str | Sequence[str] | None = None,
                 constraints_dir: str | Path | None = None, data: DataSet | None = None, select_sets: bool = False,
                 catalog: "str | Catalog | None" = None, problem: "Problem | None" = None,
                 ck_api: str | None = None):
        self.constraints_dir = constraints_dir
        self.select_sets = select_sets  # select tests/tiny when they are not cached yet (seconds, once)
        self._set_members: dict[str, frozenset[str] | None] = {}
        self._procedure_parts: dict[tuple[tuple[str | None, int | None], str],
                                    tuple[frozenset[str], frozenset[str] | None]] = {}
        self._procedure_kinds: set[tuple[str, str]] = set()  # the (variant, dtype) of the kernels asked about
        self.data = data or load(Path(constraints_dir) if constraints_dir else None)
        if isinstance(catalog, Catalog):  # a user's list of configs (--ck-config)
            self.data = replace(self.data, catalogs={**self.data.catalogs, catalog.name: catalog})
            catalog = catalog.name
        if catalog is not None and catalog not in self.data.catalogs:
            raise UsageError(f"unknown catalog {catalog!r}; catalogs: {', '.join(self.data.catalogs)}")
        self.catalog = self.data.catalogs[catalog].name if catalog else None
        self.rules_spec = rules  # kept for the kernel space that lists a curated stratum (_nearest_in_stratum)
        self.families = resolve_families(self.data, rules, self.catalog)
        self.default_families = resolve_families(self.data, None)
        self.arch = arch
        self._models: dict[str, Model] = {}
        self.model = self._model(arch)
        self._search: NeighbourSearch | None = None
        self._catalog_search: dict[str, NeighbourSearch] = {}
        self._listed: dict[str, frozenset[tuple]] = {}
        self._listed_strata: dict[tuple, frozenset[tuple]] = {}  # (catalog, variant, ndim, dtype) -> keys
        self._full_space = None
        self._curated_spaces: "dict[str | None, KernelSpace]" = {}  # None: this explainer's rules; else a catalog's
        # (None or a catalog, variant, ndim, dtype) -> the stratum's kernels
        self._stratum_rows: dict[tuple, list[dict[str, object]] | None] = {}
        self._by_id = {r.id: r for r in (*self.model.derived_rules, *self.data.rules)}
        self.timings: dict[str, float] = {}  # seconds per phase of every explanation so far (explain --timings)
        # A convolution problem: a kernel must also run it (the support rules of the CK API revision `ck_api`), and
        # the nearest kernels offered run it too.
        self.problem = problem
        self.ck_api = ck_api
        self.support_rules: list[SupportRule] = []
        self.problem_filter: E.Node | None = None
        if problem is not None:
            from ..rules import support

            self.support_rules = support.rules_for(self.data, ck_api or api_default())
            self.problem_filter = support.condition(self.support_rules, problem, self.data, arch)

    @contextmanager
    def _timed(self, phase: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - t0

    def _model(self, arch: str) -> Model:
        if arch not in self._models:
            model = shared_model(self.data, arch, self.families)
            if arch == self.arch:  # the others are only read by the plain check (valid_on), which resolves lazily
                model.validate_references()
            self._models[arch] = model
        return self._models[arch]

    # -- the entry points ---------------------------------------------------------------------------------------
    def explain(self, name: str, neighbours: int = 3, fixes: bool = True, derive: bool = True) -> Explanation:
        """Explain one kernel name; KernelNameError (exit code 2) when it is malformed. `derive=False` leaves out
        the derived quantities and their working (a batch summary shows none: they were a third of its time)."""
        return self.explain_config(parse(name, self.data), name, neighbours, fixes, derive)

    def explain_config(self, config: Mapping[str, object], name: str | None = None, neighbours: int = 3,
                       fixes: bool = True, derive: bool = True) -> Explanation:
        cfg = dict(config)
        if name is None:
            name = format_name(cfg)
        with self._timed("rules"):
            reasons = domain_verdicts(self.model, cfg) + rule_verdicts(self.model, cfg)
        with self._timed("catalogs"):
            unlisted = self._not_listed(cfg)
            if unlisted is not None:
                reasons.append(unlisted)
            kernel_valid = not any(r.enabled for r in reasons)
        unsupported: list[Verdict] = []
        if self.problem is not None:
            from ..rules import support

            with self._timed("problem"):
                unsupported = support.verdicts(self.support_rules, self.problem, cfg, self.model.resolve)
        with self._timed("catalogs"):
            valid = kernel_valid and not unsupported
            in_full = not any(r.family in self.default_families for r in reasons)
            catalogs = self._catalogs(cfg, reasons)
            open_ok = self._open_ok(reasons)
        # Other catalogs' rules say only whether the kernel is in them (the sets line), not why it is rejected here.
        others = curation_families(self.data) - set(self.families)
        reasons = [r for r in reasons if r.family not in others] + unsupported
        with self._timed("derived"):
            worked = derived(self.model, cfg) if derive else []
        with self._timed("sets"):
            sets = {**catalogs, **self._sets(name, cfg.get("variant"), cfg.get("dtype"), cfg.get("ndim"), in_full)}
        exp = Explanation(
            name=name, arch=self.arch, families=tuple(f for f in self.data.families if f in self.families and f != "model"),
            config=cfg, valid=valid, reasons=reasons, derived=worked, sets=sets,
            family_info={fname: {"doc": fam.doc, "default": fam.default, "enabled": fname in self.families}
                         for fname, fam in self.data.families.items()},
            arch_facts={k: self.data.archs[self.arch].get(k) for k in ("warp_size", "lds_bytes")},
        )
        if self.problem is not None:
            from ..rules import support

            exp.problem = {"text": self.problem.text(), "ck_api": self.ck_api or api_default(),
                           "runs": not unsupported}
            exp.family_info[support.FAMILY] = {
                "doc": f"does it run the problem {self.problem.text()} (CK's IsSupportedArgument, CK API "
                       f"{self.ck_api or api_default()})", "default": False, "enabled": True}
        if unlisted is not None:  # a list names kernels whatever the arch: no other arch makes it listed
            exp.family_info[unlisted.family] = {"doc": unlisted.rationale, "default": False, "enabled": True}
        elif not kernel_valid:
            with self._timed("other archs"):
                other_archs = [a for a in sorted(self.data.archs) if a != self.arch]
                exp.valid_on = [a for a in other_archs if self._valid_on(a, cfg)]
                if not exp.valid_on and any(r.enabled and r.family == HARDWARE_FAMILY for r in reasons):
                    exp.hardware_ok_on = [a for a in other_archs if self._valid_on(a, cfg, {HARDWARE_FAMILY})]
        with self._timed("notes"):
            exp.notes = self._notes(exp)
        if open_ok and not any(catalogs.values()):
            names = ", ".join(catalogs)
            exp.notes.append(Note("in-no-catalog", (
                f"the open space accepts it (it breaks no fact of {self.arch}), but it is in no catalog ({names})"
                + ("; the nearest catalog kernels follow" if neighbours > 0 else ""))))
            if neighbours > 0:
                with self._timed("neighbours"):
                    exp.catalog_neighbours = self.nearest_in_catalogs(cfg, neighbours)
        if not kernel_valid and fixes:
            with self._timed("fixes"):
                exp.reasons = [self._with_fix(r, cfg) for r in exp.reasons]
        if not valid and neighbours > 0:
            with self._timed("neighbours"):
                self._neighbours(exp, cfg, neighbours)
        return exp

    def _neighbours(self, exp: Explanation, cfg: dict, neighbours: int) -> None:
        """The nearest valid kernels of a rejected one: of a listed catalog's list, else of the facts' space."""
        cat = self.data.catalogs.get(self.catalog) if self.catalog else None
        if cat is not None and cat.listed:  # the nearest kernels its list names, not the facts' whole space
            exp.neighbours = [nb for _, nb in self._nearest_listed(cat, cfg, neighbours, self.problem_filter)]
            exp.search = {"requested": neighbours, "found": len(exp.neighbours), "arch": self.arch,
                          "scope": "listed", "strata": [], "text": f"the kernels {cat.name} lists, same variant, "
                                                                  "ndim and dtype"}
        else:
            nearest = self._nearest_in_stratum(cfg, neighbours)
            found, search = nearest if nearest is not None else self.searcher().nearest(cfg, neighbours)
            exp.neighbours = found
            exp.search = search
        if self.problem is not None:
            exp.search["text"] = f"{exp.search.get('text', '')}; each runs the problem"

    # A curated stratum (a catalog's few hundred kernels) is listed and its kernels ranked, where CP-SAT would search
    # the same space three times (0.035 s against 0.18 s on gfx950, and no OR-Tools); a larger one is CP-SAT's.
    MAX_RANKED = 50_000

    def _nearest_in_stratum(self, cfg: Mapping[str, object], n: int) -> tuple[list[Neighbour], dict] | None:
        """The n kernels of the asked (variant, ndim, dtype) nearest to `cfg`, ranked as the CP-SAT search ranks them
        (fewest changed fields, then the smaller moves, then the name), by listing the stratum: only under a catalog's
        curation, whose strata are small. None: the CP-SAT search answers (the open space, a stratum with no kernel,
        which it widens, or one too large to list)."""
        if not any(self.data.families[f].layer == "catalog" for f in self.families if f in self.data.families):
            return None
        return self._ranked(None, cfg, n)

    def _ranked(self, catalog: str | None, cfg: Mapping[str, object],
                n: int) -> tuple[list[Neighbour], dict] | None:
        """The n kernels nearest to `cfg` of its stratum, listed and ranked: under this explainer's rules and problem
        (catalog None), or under a catalog's default rules (nearest_in_catalogs). None where the stratum is not
        modelled, has no kernel or holds more than MAX_RANKED."""
        key = (cfg.get("variant"), cfg.get("ndim"), cfg.get("dtype"))
        stratum = Stratum(*key)  # type: ignore[arg-type]
        if stratum not in self.model.strata:
            return None
        if catalog is None and self.problem_filter is None and \
                self.families == resolve_families(self.data, None, self.catalog or "full"):
            catalog = self.catalog or "full"  # the same kernels as that catalog's, listed once for both
        rows_key = (catalog, *key)
        if rows_key not in self._stratum_rows:
            self._stratum_rows[rows_key] = self._listed_stratum(stratum, catalog)
        rows = self._stratum_rows[rows_key]
        if not rows:
            return None
        from .diff import changes_between
        from .measure import Nearness

        order = [f.name for f in self.model.fields(stratum.kind)]
        near = Nearness(cfg, order, self.data.fields)
        scored = []
        for other in rows:
            changed, steps = near.key(other)
            if changed:
                scored.append(((changed, steps, str(other["name"])), other))
        best = [(k, changes_between(cfg, other, order)) for k, other in sorted(scored, key=lambda item: item[0])[:n]]
        found = [Neighbour(k[2], changes, True, k[1]) for k, changes in best]
        label = stratum.label()
        return found, {"requested": n, "arch": self.arch, "scope": "stratum", "strata": [label],
                       "text": f"same variant, ndim and dtype ({label})", "found": len(found)}

    def _listed_stratum(self, stratum: Stratum, catalog: str | None = None) -> list[dict[str, object]] | None:
        """The stratum's kernels under this explainer's rules (and problem), or under `catalog`'s default rules; None
        when it holds more than MAX_RANKED. Not cached: a rejected name's explanation is kept whole
        (ckspace.cli.answers)."""
        from ..solve.kernels import KernelSpace

        space = self._curated_spaces.get(catalog)
        if space is None:
            space = self._curated_spaces[catalog] = (
                KernelSpace(arch=self.arch, rules=self.rules_spec, use_cache=False,
                            constraints_dir=self.constraints_dir, catalog=self.catalog or "full")
                if catalog is None else
                KernelSpace(arch=self.arch, use_cache=False, constraints_dir=self.constraints_dir, catalog=catalog))
        problem = self.problem_filter if catalog is None else None
        out: list[dict[str, object]] = []
        for keys, values in space.rows(variant=stratum.variant, ndim=stratum.ndim, dtype=stratum.dtype):
            config = dict(zip(keys, values))
            if problem is not None and not E.evaluate(problem, config, self.model.resolve):
                continue  # one that does not run the problem
            out.append(config)
            if len(out) > self.MAX_RANKED:
                return None
        return out

    def searcher(self) -> NeighbourSearch:
        if self._search is None:
            from .neighbours import NeighbourSearch  # OR-Tools: only for rejected kernels

            self._search = NeighbourSearch(self.model, () if self.problem_filter is None else (self.problem_filter,))
        return self._search

    def nearest_in_catalogs(self, cfg: Mapping[str, object], n: int) -> list[CatalogNeighbour]:
        """The `n` nearest kernels of any catalog on this arch (fewest changed fields first), each with the catalogs
        that hold it. Same variant, ndim and dtype as asked; a catalog without such a kernel adds none."""
        found: dict[str, tuple[tuple, Neighbour, list[str]]] = {}
        for cat in dict.fromkeys(self.data.catalogs.values()):
            if cat.listed:
                for key, nb in self._nearest_listed(cat, cfg, n):
                    if nb.name in found:
                        found[nb.name][2].append(cat.name)
                    else:
                        found[nb.name] = (key, nb, [cat.name])
                continue
            ranked = self._ranked(cat.name, cfg, n)  # a catalog's stratum is small: listed and ranked
            key = (cat.name, cfg.get("variant"), cfg.get("ndim"), cfg.get("dtype"))
            if ranked is None and self._stratum_rows.get(key) == []:
                continue  # listed, and empty: the catalog has no kernel of this variant, ndim and dtype here
            if ranked is None:
                search = self._catalog_search.get(cat.name)
                if search is None:
                    from .neighbours import NeighbourSearch

                    families = resolve_families(self.data, None, cat.name)
                    search = self._catalog_search[cat.name] = NeighbourSearch(Model(self.data, self.arch, families))
                ranked = search.nearest(cfg, n)
            hits, info = ranked
            if info.get("scope") != "stratum":
                continue  # the catalog has no kernel of this variant, ndim and dtype here
            for nb in hits:
                key = (len(nb.changes), nb.distance, nb.name)
                if nb.name in found:
                    found[nb.name][2].append(cat.name)
                else:
                    found[nb.name] = (key, nb, [cat.name])
        best = sorted(found.values(), key=lambda item: item[0])[:n]
        return [CatalogNeighbour(nb, tuple(cats)) for _, nb, cats in best]

    def _nearest_listed(self, cat: Catalog, cfg: Mapping[str, object], n: int,
                        condition: E.Node | None = None) -> list[tuple[tuple, Neighbour]]:
        """The n kernels of a listed catalog nearest to `cfg` on this arch (same variant, ndim and dtype; fewest
        changed fields, then the smaller moves), by looking at each: a list has a few thousand at most."""
        from .diff import changes_between
        from .measure import Nearness

        order = [f.name for f in self.model.fields(kind_of_variant(str(cfg.get("variant"))))]
        facts = resolve_families(self.data, None, cat.name)
        model = Model(self.data, self.arch, facts) if facts != self.families else self.model
        near = Nearness(cfg, order, self.data.fields, skip=("layout",))
        scored = []
        for e in listed.entries(self.data, cat)[0]:
            other = e.config
            if any(other.get(k) != cfg.get(k) for k in ("variant", "ndim", "dtype")):
                continue
            scored.append((near.key(other) + (e.name,), e))
        scored.sort(key=lambda item: item[0])
        out: list[tuple[tuple, Neighbour]] = []
        for key, e in scored:
            if len(out) == n:
                break
            if not key[0] or domain_verdicts(model, e.config) or violations(model, e.config):
                continue  # the kernel itself, or one this arch's facts reject
            if condition is not None and not E.evaluate(condition, e.config, model.resolve):
                continue  # one that does not run the problem
            changes = tuple(c for c in changes_between(cfg, e.config, order) if c.field != "layout")
            out.append((key, Neighbour(e.name, changes, True, key[1])))
        return out

    # -- pieces -------------------------------------------------------------------------------------------------
    def _catalogs(self, cfg: Mapping[str, object], reasons: Sequence[Verdict]) -> dict[str, bool | None]:
        """Membership in every catalog (constraints/catalogs.toml) under the default rules: the kernel breaks no rule
        of the facts and of the catalog's own families. Read from the verdicts of every family, no solving."""
        out: dict[str, bool | None] = {}
        for cat in dict.fromkeys(self.data.catalogs.values()):
            families = resolve_families(self.data, None, cat.name)
            ok = not any(r.family in families for r in reasons)
            out[cat.name] = ok and (not cat.listed or self._is_listed(cat, cfg))
        return out

    def _is_listed(self, cat: Catalog, cfg: Mapping[str, object]) -> bool:
        """Whether a listed catalog names the kernel: from the whole list when it was read, else from the list's
        kernels of the config's (variant, ndim, dtype) alone (one name reads a tenth of CK's table)."""
        if cat.name in self._listed:
            return listed.canonical(cfg) in self._listed[cat.name]
        key = (cat.name, cfg.get("variant"), cfg.get("ndim"), cfg.get("dtype"))
        if key not in self._listed_strata:
            self._listed_strata[key] = listed.stratum_keys(self.data, cat, *key[1:])
        return listed.canonical(cfg) in self._listed_strata[key]

    def _listed_keys(self, cat: Catalog) -> frozenset[tuple]:
        """The kernels a listed catalog names (whatever arch: the facts of this one are checked apart)."""
        if cat.name not in self._listed:
            self._listed[cat.name] = frozenset(listed.canonical(e.config) for e in listed.entries(self.data, cat)[0])
        return self._listed[cat.name]

    def _not_listed(self, cfg: Mapping[str, object]) -> Verdict | None:
        """With --set naming a listed catalog: a kernel its list does not name is rejected by that alone."""
        cat = self.data.catalogs.get(self.catalog) if self.catalog else None
        if cat is None or not cat.listed or listed.canonical(cfg) in self._listed_keys(cat):
            return None
        return Verdict(rule=f"{cat.name}.listed", family=cat.name,
                       message=f"not one of the {len(self._listed_keys(cat)):,} kernels {cat.name} lists",
                       fields=(), source=cat.source, rationale=cat.doc, enabled=True)

    def _open_ok(self, reasons: Sequence[Verdict]) -> bool:
        """No fact is broken: no rule of a default family that is not a catalog's curation."""
        facts = {f for f, fam in self.data.families.items() if fam.default} - curation_families(self.data)
        return not any(r.family in facts for r in reasons)

    def _sets(self, name: str, variant: object, dtype: object, ndim: object, in_full: bool) -> dict[str, bool | None]:
        """Membership in the selected sets; tests and tiny are subsets of full, so a kernel outside full is in
        neither without looking. None: the set has not been selected on this machine yet."""
        out: dict[str, bool | None] = {}
        for set_name in SELECTED_SETS:
            if not in_full:
                out[set_name] = False
                continue
            if set_name not in self._set_members:
                self._set_members[set_name] = selected_names(
                    self.data, self.arch, self.default_families, set_name,
                    self._default_space if self.select_sets else None)
            members = self._set_members[set_name]
            out[set_name] = None if members is None else name in members
        # CK's own subsets of full: from the cache, else computed from the part of full that decides them
        in_tests = in_full and name in self._procedure_members("ck-full-tests", str(variant), str(dtype), ndim)
        out["ck-full-tests"] = in_tests
        out["ck-tiny"] = in_tests and name in self._procedure_members("ck-tiny", str(variant), str(dtype), ndim)
        return out

    def _procedure_members(self, set_name: str, variant: str, dtype: str, ndim: object) -> frozenset[str]:
        """The names of CK's procedure set `set_name` that may hold a kernel of (`variant`, `ndim`, `dtype`): the
        whole set when the cache holds it, else ckprocedures.members_of's (cached) for the variant through the
        ndim, for the variant, for the whole dtype, else (tiny's fill-up, or kernels of a second variant or dtype)
        the whole set."""
        whole = self._set_members.get(set_name)
        if whole is None and set_name not in self._set_members:
            cached = cached_procedure_names(self._default_space(), set_name)
            whole = self._set_members[set_name] = frozenset(cached) if cached is not None else None
        if whole is not None:
            return whole
        self._procedure_kinds.add((variant, dtype))
        # A second kind of kernel means a batch: the whole set once costs less than a part per kind.
        # the ndim matters to a GEMM kernel only (depthwise loops span every ndim: its part is the variant's)
        gemm = kind_of_variant(variant) == "gemm" and isinstance(ndim, int) and not isinstance(ndim, bool)
        through = int(cast(int, ndim)) if gemm else None  # gemm holds only when ndim is an int
        for part in (((variant, through), (variant, None), (None, None)) if len(self._procedure_kinds) == 1 else ()):
            if (part, dtype) not in self._procedure_parts:
                self._procedure_parts[(part, dtype)] = procedure_members(self._default_space(), part[0], dtype,
                                                                         part[1])
            full_tests, tiny = self._procedure_parts[(part, dtype)]
            if set_name == "ck-full-tests":
                return full_tests
            if tiny is not None:
                return tiny
        whole = self._set_members[set_name] = frozenset(procedure_names(self._default_space(), set_name))
        return whole

    def _default_space(self):
        """The kernels of this arch under the default rules, for selecting tests/tiny on demand."""
        from ..solve.kernels import KernelSpace

        if self._full_space is None:
            self._full_space = KernelSpace(arch=self.arch, constraints_dir=self.constraints_dir)
        return self._full_space

    def _valid_on(self, arch: str, cfg: Mapping[str, object], families: set[str] | None = None) -> bool:
        """Valid on `arch` under the chosen rules, or (with `families`) breaking none of those families' rules."""
        model = self._model(arch)
        if domain_verdicts(model, cfg):
            return False
        # Only whether a rule breaks, not its message, and only until one does: rendering every message of every
        # arch cost most of a batch.
        relevant = families if families else model.families
        return not any(True for r in broken_rules(model, cfg, relevant))

    def _with_fix(self, reason: Verdict, cfg: Mapping[str, object]) -> Verdict:
        if reason.rule.startswith("model.domain-"):
            fix = nearest_in_domain(self.data, reason.fields[0], cfg.get(reason.fields[0]))
            return replace(reason, fix=fix)
        rule = self._by_id.get(reason.rule)
        if rule is None:
            return reason
        from .fixes import own_fix

        return replace(reason, fix=own_fix(self.model, cfg, rule))

    def _notes(self, exp: Explanation) -> list[Note]:
        """The sentences a person needs besides the rule list: optional families, arch policy, other archs."""
        notes: list[Note] = []
        fams = self.data.families
        from ..rules.support import FAMILY as SUPPORT

        if exp.problem is not None and not exp.problem["runs"]:
            failed = [r for r in exp.reasons if r.family == SUPPORT]
            kernel_ok = all(not r.enabled for r in exp.reasons if r.family != SUPPORT)
            notes.append(Note("does-not-run", (
                f"{'a valid kernel, but it' if kernel_ok else 'it'} does not run the problem {exp.problem['text']}: "
                f"{len(failed)} condition{'s' if len(failed) > 1 else ''} of CK's IsSupportedArgument (CK API "
                f"{exp.problem['ck_api']}) fail{'' if len(failed) > 1 else 's'}")))
        on = [r for r in exp.reasons if r.enabled and r.family != SUPPORT]
        off = [r for r in exp.reasons if not r.enabled]
        on_fams = list(dict.fromkeys(r.family for r in on))
        if exp.valid_on:
            notes.append(Note("valid-on", f"valid on {', '.join(exp.valid_on)} with the same rules"))
        elif exp.hardware_ok_on:
            # CK curates the same kernels for several archs, so a layout only one arch's hardware has is often in
            # that arch's open space only: say so, it is what a user who needs the kernel can do.
            uncurated = set(self.families) - {CURATION_FAMILY, "model"}
            open_on = [a for a in exp.hardware_ok_on if self._valid_on(a, exp.config, uncurated)]
            tail = (f"; without CK's curation (--rules -{CURATION_FAMILY}) it is valid on {', '.join(open_on)}"
                    if open_on and CURATION_FAMILY in self.families else "")
            notes.append(Note("hardware-ok-on", (
                f"the hardware facts of {', '.join(exp.hardware_ok_on)} accept it (no {HARDWARE_FAMILY} rule breaks "
                f"there), but other rules reject it there too{tail}")))
        api = api_revisions(on_fams + [r.family for r in off])
        newest = api_default() if api else ""
        if on and all(f in api and api[f] == newest for f in on_fams):
            # the default revision's own facts: an older revision whose families accept it builds it
            blocked = dict.fromkeys(api[r.family] for r in off if r.family in api and api[r.family] != newest)
            builds = [rev for rev in api_older(newest) if rev not in blocked]
            tail = (f"CK API {', '.join(builds)} builds it: valid with --ck-api {builds[0]}" if builds else
                    f"CK API {', '.join(blocked)} cannot build it either")
            notes.append(Note("optional-only", (
                f"rejected only by the CK API revision famil{'y' if len(on_fams) == 1 else 'ies'} "
                f"{', '.join(on_fams)}: CK API {newest} (the default) cannot build it; {tail}")))
        elif on and all(f in api for f in on_fams):
            needs = ", ".join(dict.fromkeys(api[f] for f in on_fams))
            notes.append(Note("optional-only", (
                f"rejected only by the CK API revision famil{'y' if len(on_fams) == 1 else 'ies'} "
                f"{', '.join(on_fams)}: CK API {needs} cannot build it, it needs CK API {newest}; it is "
                f"{'valid' if exp.sets['full'] else 'not valid either'} with --ck-api {newest} (the default, "
                f"or --rules {','.join(f'-{f}' for f in on_fams)})")))
        elif on and any(f not in fams for f in on_fams):  # a listed catalog's "not listed" (and perhaps facts)
            facts = [f for f in on_fams if f in fams]
            notes.append(Note("not-listed", (
                f"{self.catalog} does not list it" + (f"; it also breaks {', '.join(facts)}" if facts else
                                                      "; the facts accept it (it is in the open space)"))))
        elif on and set(on_fams) <= curation_families(self.data) and self.catalog not in (None, "full"):
            notes.append(Note("curation-only", (
                f"the facts accept it: only the curation of the catalog {self.catalog} leaves it out (it is in the "
                f"open space, --rules -{',-'.join(on_fams)})")))
        elif on and all(not fams[f].default for f in on_fams):
            switch = ",".join(f"-{f}" for f in on_fams)
            tail = "valid with the default rules" if exp.sets["full"] else "not valid with the default rules either"
            notes.append(Note("optional-only", (
                f"rejected only by the optional famil{'y' if len(on_fams) == 1 else 'ies'} {', '.join(on_fams)} "
                f"(switched on by --rules); it is {tail}. Switch {'it' if len(on_fams) == 1 else 'them'} off with "
                f"--rules {switch}")))
        elif on and set(on_fams) == {HARDWARE_FAMILY} and CURATION_FAMILY in self.families:
            ids = ", ".join(r.rule for r in on)
            notes.append(Note("hardware-policy", (
                f"CK's curation generates this kernel (it passes every {CURATION_FAMILY} rule), but it breaks the "
                f"hardware fact{'s' if len(on) > 1 else ''} {ids} of {exp.arch}; ckspace's policy is that hardware "
                "facts win, so it is not in ckspace's set")))
        elif on and set(on_fams) == {CURATION_FAMILY}:
            notes.append(Note("curation-only", (
                f"the hardware rules accept it: only CK's curation leaves it out (it is in the open space, "
                f"--rules -{CURATION_FAMILY})")))
        for fam in dict.fromkeys(r.family for r in off if r.family in fams):
            ids = ", ".join(r.rule for r in off if r.family == fam)
            if fam in api:
                notes.append(Note("optional-off", (
                    f"CK API {api[fam]} cannot build it ({ids}); --ck-api {api[fam]} applies the family {fam}")))
            elif fam == KNOWN_ISSUES_FAMILY:
                notes.append(Note("known-issue", (
                    f"known issue ({ids}): CK generates this kernel although it is known to be wrong or unsupported; "
                    f"--rules +{fam} rejects it")))
            elif not fams[fam].default:
                notes.append(Note("optional-off", f"the optional family {fam} (off) would reject it ({ids}); "
                                                  f"--rules +{fam} applies it"))
            else:
                notes.append(Note("off-family", f"the default family {fam} is switched off; it would reject it ({ids})"))
        same = self._same_code(exp.config)
        if same:
            fields = [f.name for f in self.data.fields.values() if not f.code and f.name in exp.config]
            notes.append(Note("same-cpp", (
                f"{', '.join(fields)} change the name, not the C++ (CK's launcher pads always): "
                f"{len(same)} other name{'s' if len(same) > 1 else ''} are this C++ kernel, "
                f"{', '.join(same[:2])}{', ...' if len(same) > 2 else ''}")))
        return notes

    def _same_code(self, config: Mapping[str, object]) -> list[str]:
        """The other names of the kernel's C++: its config with the fields that do not change the C++ (fields.toml
        `code = false`) set to their other values, sorted."""
        from itertools import product

        from ..rules.names import format_name

        free = [f for f in self.data.fields.values() if not f.code and f.name in config]
        if not free:
            return []
        names = {format_name({**config, **dict(zip((f.name for f in free), values))})
                 for values in product(*(f.values for f in free))}
        names.discard(format_name(config))
        return sorted(names)


def api_revisions(families: Sequence[str]) -> dict[str, str]:
    """Of `families`, those that restrict the model to a CK API revision (templates/revisions.toml): family -> rev."""
    if not any(f.startswith("ck-api-") for f in families):
        return {}  # the revisions file is read only when such a family is involved
    try:
        from ..codegen.ckapi import revisions

        revs = revisions()[1]
    except CkspaceError:
        return {}
    return {f: rev.name for rev in revs.values() for f in rev.families if f in families}


def api_default() -> str:
    from ..codegen.ckapi import revisions

    return revisions()[0]


def api_older(newest: str) -> list[str]:
    """The CK API revisions other than `newest`, as templates/revisions.toml lists them."""
    from ..codegen.ckapi import revisions

    return [name for name in revisions()[1] if name != newest]


def nearest_in_domain(data: DataSet, name: str, value: object) -> dict[str, object] | None:
    """The domain value closest to an out-of-domain one (numbers by distance, otherwise the first value)."""
    f = data.fields.get(name)
    if f is None or not f.values:
        return None
    if f.type == "int" and isinstance(value, int) and not isinstance(value, bool):
        return {name: min(f.values, key=lambda v: (abs(v - value), v))}
    if f.type == "enum" and isinstance(value, str):  # the closest spelling (wavlet -> wavelet), first on a tie
        return {name: max(f.values, key=lambda v: difflib.SequenceMatcher(None, value, str(v)).ratio())}
    return {name: f.values[0]}


def derived(model: Model, cfg: Mapping[str, object]) -> list[Derived]:
    """Every derived quantity of the config with the working: the branch taken and the numbers."""
    kind = kind_of_variant(str(cfg.get("variant")))
    derives = [d for d in model.data.derives.values() if d.applies_to(kind)]
    # Rules and formulas read other quantities (threads, elem_bytes, ...) as macros, expanded at load time; in the
    # working they are shown as their value again, so that a_per_thread reads 128 * 64 // 256, not the expansion.
    known = {d.expr: d.field for d in derives if d.output_only}
    out = []
    for d in derives:
        try:
            value = E.evaluate(d.expr, cfg, model.resolve)
            steps = derivation(d.expr, cfg, model.resolve, {k: v for k, v in known.items() if v != d.field})
        except (KeyError, ExprError, TypeError, ValueError):
            continue
        out.append(Derived(d.field, value, tuple(steps), d.source))
    return out


