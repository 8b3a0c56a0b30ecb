"""The Python API: one facade for everything a command does. The CLI is a thin layer over it.

>>> from ckspace import Space
>>> space = Space(arch="gfx950")
>>> sum(1 for _ in space.enumerate(variant="bwd_data", ndim=2, dtype="fp32"))
84
>>> counts = space.count(variant="bwd_data", ndim=2)
>>> {f"{s.variant} {s.ndim}d {s.dtype}": n for s, n in counts.items()}["bwd_data 2d fp32"]
84
>>> [v.rule for v in space.check("grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_96x128x64_2x2x1_32x32x16_vec8_8_8")][:1]
['arch.tile-m-divisible']
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence, cast

from .errors import UsageError
from .rules.check import domain_verdicts, violations
from .rules.model import Stratum
from .rules.verdict import Verdict
from .solve.kernels import KernelSpace, Timings

if TYPE_CHECKING:  # pragma: no cover
    from .spec import Spec
    from .codegen.emit import EmitResult
    from .explain.explainer import Explainer
    from .explain.result import Explanation
    from .rules.book import RuleDoc
    from .rules.evidence import Audit
    from .codegen.audit import AuditReport
    from .codegen.hostcheck import HostLibrary
    from .select.problems import ProblemSet
    from .codegen.verify import VerifyResult
    from .rules.book import RuleBook
    from .select.audit import AuditPlan
    from .rules.derived import Deriver, Row
    from .rules.data import Catalog
    from .select.coverage import Report
    from .select.selection import Selection

__all__ = ["Audit", "EXPLAIN_SCHEMA", "Explanation", "RuleDoc", "Space", "Stratum", "Timings",
           "Verdict"]

# Loaded when first asked for: a listing (the common cold run) never needs them.
_LAZY = {"EXPLAIN_SCHEMA": ("explain.result", "SCHEMA_VERSION"),  # the schema of explain's JSON (docs/explain-json.md)
         "Explanation": ("explain.result", "Explanation"), "RuleDoc": ("rules.book", "RuleDoc"),
         "Audit": ("rules.evidence", "Audit")}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Space(KernelSpace):
    """The kernel-instance space of one arch under a choice of rule families.

    `catalog` chooses CK's rule set (full, ck-default, ck-rdna, or CK's shipped lists ck-profiler, ck-tests:
    constraints/catalogs.toml), `ck_config` a file or directory of CK JSON configs instead; `rules` switches
    families (`"+ck-archfilter"`, `"-ck-curation"` for the open space); `constraints_dir` reads another rule tree;
    `use_cache` reads and writes the result cache. Every method takes keyword arguments only.
    """

    def __init__(self, *, arch: str = "gfx950", rules: str | Sequence[str] | None = None,
                 constraints_dir: str | Path | None = None, use_cache: bool = True, catalog: str | Catalog = "full",
                 ck_config: str | Path | None = None, ck_api: str | None = None,
                 ck_include: str | Path | None = None, toolchain: str | None = None, compiler: str | None = None,
                 spec: "Spec | None" = None):
        from .spec import Spec

        if spec is None:  # keywords: `catalog` is a catalog (a selection is a method's set_name), or ck_config
            spec = Spec(arch=arch, ck_config=ck_config, rules=rules, ck_api=ck_api, ck_include=ck_include,
                        toolchain=toolchain, compiler=compiler, constraints_dir=constraints_dir, use_cache=use_cache)
        self.spec = spec.resolve()
        chosen = self.spec.catalog if spec.ck_config is not None or spec.set_name or spec.over else catalog
        super().__init__(arch=self.spec.arch, rules=self.spec.rules, constraints_dir=spec.constraints_dir,
                         use_cache=spec.use_cache, catalog=chosen)
        self._explainer: Explainer | None = None

    @classmethod
    def from_spec(cls, spec: "Spec") -> "Space":
        """The Space a Spec describes; its filters (the trait config's too) are `space.spec.filters`, for the
        methods that take them.

        >>> from ckspace.spec import Spec
        >>> space = Space.from_spec(Spec(arch="gfx942", ck_api="2025.11", toolchain="registry"))
        >>> sorted(space.families)[:3], space.spec.toolchain_family
        (['arch', 'ck-api-2025.11', 'ck-curation'], 'toolchain-clang22')
        """
        return cls(spec=spec)

    def breaking(self, rule_id: str) -> "Space":
        """The near misses of one enabled rule (KernelSpace.breaking), with an explainer of their own."""
        other = cast("Space", super().breaking(rule_id))  # a copy of this space: a Space too
        other._explainer = None
        return other

    # -- one kernel ---------------------------------------------------------------------------------------------
    def parse(self, name: str) -> dict[str, object]:
        """A kernel name as its config; KernelNameError (a CkspaceError) names the malformed part.

        >>> Space().parse("grouped_conv_bwd_data_fp32_nhwgc_2d_mem_cshuffle_intrawave_64x64x32_2x2x1_16x16x8_vec1_1_1")["tile_m"]
        64
        """
        from .explain.spelling import parse

        return parse(name, self.data)

    def name(self, config: Mapping[str, object]) -> str:
        """A config's kernel name, in CK's grammar (the inverse of parse).

        >>> space = Space()
        >>> name = "grouped_conv_fwd_bf16_nhwgc_3d_compv4_cshuffle_intrawave_128x128x32_1x2x1_32x32x16_vec1_1_8_dsb"
        >>> space.name(space.parse(name)) == name
        True
        """
        from .rules.names import format_name

        return format_name(config)

    def check(self, kernel: str | Mapping[str, object]) -> list[Verdict]:
        """Every enabled rule a kernel (a name or a config) breaks, with its message, as explain lists them (a value
        outside its field's domain first); [] when it is valid.

        A config must give every field of its kernel family: a partial one raises IncompleteConfigError (a value
        outside a field's domain is a `model.domain-*` verdict).

        >>> Space().check({"variant": "forward", "tile_m": 96})
        Traceback (most recent call last):
        ...
        ckspace.errors.IncompleteConfigError: the config lacks 28 field(s) of a gemm kernel: ndim, dtype, pipeline, ...
        """
        config = self.parse(kernel) if isinstance(kernel, str) else dict(kernel)
        self._complete(config)
        # every broken rule, as explain lists them: a value outside its field's domain does not hide the rest
        return domain_verdicts(self.model, config) + violations(self.model, config)

    def _complete(self, config: Mapping[str, object]) -> None:
        from .errors import IncompleteConfigError
        from .rules.model import kind_of_variant

        kind = kind_of_variant(str(config.get("variant")))
        missing = [f.name for f in self.model.fields(kind) if not f.derived and f.name not in config]
        if "variant" not in config:
            missing.insert(0, "variant")
        if missing:
            raise IncompleteConfigError(missing, kind)

    def explain(self, name: str, *, neighbours: int = 3, select_sets: bool = False, fixes: bool = True,
                derive: bool = True) -> "Explanation":
        """Why a kernel is valid or not: every broken rule of every family, derived fields, sets and notes, and for
        a rejected kernel the `neighbours` nearest valid ones (CP-SAT). `fixes`: each rule's own smallest fix;
        `derive`: the derived quantities of a valid kernel. `.text()` is the report `ckspace explain` prints.

        >>> e = Space().explain("grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_96x128x64_2x2x1_32x32x16_vec8_8_8",
        ...                     neighbours=1)
        >>> e.valid, [v.rule for v in e.rejecting][:2]
        (False, ['arch.tile-m-divisible', 'ck.tile'])
        >>> [(c.field, c.before) for c in e.neighbours[0].changes], Space().check(e.neighbours[0].name)
        ([('tile_m', 96)], [])
        >>> e.to_json()["status"]  # the schema of `ckspace explain --format json` (docs/explain-json.md)
        'rejected'
        """
        return self.explainer(select_sets=select_sets).explain(name, neighbours=neighbours, fixes=fixes,
                                                               derive=derive)

    def explainer(self, *, select_sets: bool = False) -> "Explainer":
        """The explainer of this space (kept: its models, searches and catalog lists serve every later name), as
        explain() and `ckspace explain -` use it; `timings` says where its time went.

        >>> space = Space(arch="gfx950")
        >>> space.explainer() is space.explainer(), space.explainer().arch
        (True, 'gfx950')
        """
        from .explain.explainer import Explainer

        if self._explainer is None or self._explainer.select_sets != select_sets:
            problem = self.spec.problem
            ck_api = None
            if problem is not None:
                from .spec import api_revision

                ck_api = api_revision(self.spec.spec.ck_api, self.spec.spec.ck_include)
            self._explainer = Explainer(self.arch, sorted(self.families), self.constraints_dir, data=self.data,
                                        select_sets=select_sets, catalog=self.catalog.name, problem=problem,
                                        ck_api=ck_api)
        return self._explainer

    def rules(self) -> "RuleBook":
        """The rules as documentation, as `ckspace rules` shows them: the families, every rule (its condition and
        message as text, rationale, source, examples) and what the audit found of each fact's near misses.

        >>> book = Space().rules()
        >>> doc = next(d for d in book.rules if d.id == "arch.lds-capacity")
        >>> doc.family, book.families["arch"][1], "lds_bytes" in doc.require
        ('arch', True, True)
        """
        from .rules.book import rule_book
        from .rules.data import default_constraints_dir

        root = Path(self.constraints_dir) if self.constraints_dir else default_constraints_dir()
        return rule_book(self.data, root, self.arch)

    def deriver(self) -> "Deriver":
        """A callable giving a kernel's derived quantities (fields.toml [derive.*]: layout, threads, lds_bytes,
        block_per_cu, ...) on this arch, as the json, jsonl and csv formats report them.

        >>> space = Space(arch="gfx950")
        >>> space.deriver()(space.parse("grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"))["threads"]
        256
        """
        from .rules.derived import Deriver

        return Deriver(self.model, self.data)

    # -- sets ---------------------------------------------------------------------------------------------------
    def select(self, set_name: str = "full", *, objective: str | Path | None = None,
               stable_from: str | Path | None = None, variant=None, ndim=None, dtype=None,
               where: str | None = None) -> list[dict[str, object]]:
        """The kernels of a named set as configs sorted by name: a catalog (full, ck-default, ...; see `over`) or a
        coverage-optimal selection (tests, tiny) chosen from this Space's catalog. `objective` replaces the set's
        objective file, `stable_from` (a file of names) keeps a previous selection where it can. `where` is the rule
        language of --where; `trait_filter` turns a CK tile-engine trait config into one.

        >>> tiny = Space(arch="gfx950").select("tiny")
        >>> len(tiny), len({c["variant"] for c in tiny})
        (22, 4)
        >>> small = Space(arch="gfx950").select("full", variant="bwd_data", ndim=2, dtype="fp32")
        >>> len(small)  # spec: gfx950 bwd_data 2d fp32
        84
        >>> wide = Space(arch="gfx950").select("full", variant="bwd_data", ndim=2, dtype="fp32", where="tile_m >= 128")
        >>> wide == [c for c in small if c["tile_m"] >= 128]
        True
        """
        return self.selection(set_name, objective=objective, stable_from=stable_from, variant=variant, ndim=ndim,
                              dtype=dtype, where=where)[0]

    def selection(self, set_name: str = "full", *, objective: str | Path | None = None,
                  stable_from: str | Path | None = None, variant=None, ndim=None, dtype=None,
                  where: str | None = None) -> tuple[list[dict[str, object]], "Selection | None"]:
        """select(), plus the Selection behind tests/tiny (its size, proven bound, churn; None for full).

        >>> configs, chosen = Space(arch="gfx950").selection("tiny")
        >>> chosen.names == sorted(c["name"] for c in configs)
        True
        """
        from .select.sets import selected_configs

        return selected_configs(self, set_name, objective_path=objective, stable_from=stable_from, variant=variant,
                                ndim=ndim, dtype=dtype, where=where)

    def coverage(self, names: Iterable[str] | None = None, *, set_name: str | None = None,
                 objective: str | Path | None = None, stable_from: str | Path | None = None,
                 source: str = "names", where: str | None = None) -> "Report":
        """What a list of names (or a named set) covers of a coverage objective, and what it misses.

        >>> space = Space(arch="gfx950")
        >>> report = space.coverage(set_name="tiny", objective="tiny")
        >>> report.covered == report.total == 86
        True
        >>> names = [c["name"] for c in space.select("tiny")][:5]
        >>> part = space.coverage(names, objective="tiny")
        >>> part.in_universe, part.covered < part.total
        (5, True)
        """
        from .select.sets import coverage_report

        return coverage_report(self, names=None if names is None else list(names), set_name=set_name,
                               objective_path=objective, stable_from=stable_from, source=source, where=where)

    def sample(self, n: int, *, seed: int | str = 0, stratify: str | Sequence[str] | None = None,
               set_name: str = "full", objective: str | Path | None = None, stable_from: str | Path | None = None,
               variant=None, ndim=None, dtype=None, where: str | None = None) -> list[dict[str, object]]:
        """A uniform random sample of n distinct kernels of a set, reproducible by seed, sorted by name; with
        `stratify`, an equal share per group of those dimensions. A set smaller than n is returned whole. A space
        without curation (`rules="-ck-curation"`, ~10^13 kernels) is sampled without listing it.

        >>> space = Space(arch="gfx950")
        >>> a = space.sample(5, seed=7, variant="forward")
        >>> len(a), a == space.sample(5, seed=7, variant="forward"), {c["variant"] for c in a}
        (5, True, {'forward'})
        >>> len(space.sample(8, stratify="variant")) == 8
        True
        >>> wide = Space(arch="gfx950", rules="-ck-curation").sample(3, seed=1, variant="bwd_data")
        >>> len(wide), all(Space(arch="gfx950", rules="-ck-curation").check(c) == [] for c in wide)
        (3, True)
        """
        return self.sample_of(n, seed=seed, stratify=stratify, set_name=set_name, objective=objective,
                              stable_from=stable_from, variant=variant, ndim=ndim, dtype=dtype, where=where)[0]

    def sample_of(self, n: int, *, seed: int | str = 0, stratify: str | Sequence[str] | None = None,
                  set_name: str = "full", objective: str | Path | None = None, stable_from: str | Path | None = None,
                  variant=None, ndim=None, dtype=None, where: str | None = None) -> tuple[list[dict[str, object]], int]:
        """sample(), and how many kernels it was drawn from (a bad `stratify` fails before any solving).

        >>> picked, total = Space(arch="gfx950").sample_of(3, seed=2, variant="bwd_data", ndim=2, dtype="fp32")
        >>> len(picked), total  # spec: gfx950 bwd_data 2d fp32
        (3, 84)
        """
        from .select.sample import sample_set, stratify_dimensions

        dims = stratify_dimensions(stratify, list(self.data.fields))
        return sample_set(self, set_name, n, seed, dims, objective=objective, stable_from=stable_from,
                          variant=variant, ndim=ndim, dtype=dtype, where=where)

    def sample_from(self, configs: Sequence[Mapping[str, object]], n: int, *, seed: int | str = 0) -> list:
        """n of `configs` drawn uniformly (over them sorted by name), reproducible by seed; all when fewer.

        >>> space = Space(arch="gfx950")
        >>> tiny = space.select("tiny")
        >>> picked = space.sample_from(tiny, 3, seed=1)
        >>> len(picked), all(c in tiny for c in picked), picked == space.sample_from(tiny, 3, seed=1)
        (3, True, True)
        """
        from .select.sample import sample

        return sample(list(configs), n, seed)

    # -- counting and listing -----------------------------------------------------------------------------------
    def may_be_open(self) -> bool:
        """Whether no catalog's curation is on (`rules="-ck-curation"`): then the space may be the open one, ~10^13
        kernels, which is counted or streamed, never held in memory.

        >>> Space(arch="gfx950").may_be_open(), Space(arch="gfx950", rules="-ck-curation").may_be_open()
        (False, True)
        """
        from .select.sets import may_be_open

        return may_be_open(self)

    def listed(self, what: str, *, hint: str | None = None, variant=None, ndim=None, dtype=None,
               where: str | None = None) -> list[dict[str, object]]:
        """The kernels (filtered as enumerate filters them) as a list; more than a command can hold (the open space)
        is one UsageError naming `what`, before any listing. `hint` says what to do instead."""
        from .select.sets import NARROW_IT, listed_configs

        return listed_configs(self, what, variant=variant, ndim=ndim, dtype=dtype, where=where,
                              hint=hint or NARROW_IT)

    def check_listable(self, what: str, *, hint: str | None = None, variant=None, ndim=None, dtype=None,
                       where: str | None = None) -> None:
        """listed()'s check alone: a space that may be open is counted, and too many is one UsageError line."""
        from .select.sets import NARROW_IT, check_listable

        check_listable(self, what, variant=variant, ndim=ndim, dtype=dtype, where=where, hint=hint or NARROW_IT)

    def strata_counts(self, configs: Iterable[Mapping[str, object]], *, variant=None, ndim=None,
                      dtype=None) -> dict[Stratum, int]:
        """Kernels (e.g. a selection) counted per (variant, ndim, dtype), every stratum of the filters listed, in
        count()'s order.

        >>> space = Space(arch="gfx950")
        >>> counts = space.strata_counts(space.select("tiny"), variant="bwd_data")
        >>> sum(counts.values()), {s.variant for s in counts}
        (2, {'bwd_data'})
        """
        counts = dict.fromkeys(self.strata(variant=variant, ndim=ndim, dtype=dtype), 0)
        index: dict[tuple, Stratum] = {(s.variant, s.ndim, s.dtype): s for s in counts}
        for cfg in configs:
            stratum = index.get((cfg["variant"], cfg["ndim"], cfg["dtype"]))
            if stratum is not None:
                counts[stratum] += 1
        return counts

    def strata_cpp_counts(self, configs: Iterable[Mapping[str, object]], *, variant=None, ndim=None,
                          dtype=None) -> dict[Stratum, int]:
        """Distinct C++ kernels of `configs` (e.g. a selection) per (variant, ndim, dtype): kernels that differ only
        in fields that do not change the C++ (pad_m/n/k) count once; count_cpp() counts a space so.

        >>> space = Space(arch="gfx950")
        >>> sum(space.strata_cpp_counts(space.select("tiny")).values()) == len(space.select("tiny"))
        True
        """
        return self._cpp_counts(configs, self.strata(variant=variant, ndim=ndim, dtype=dtype))

    def count_by(self, keys: str | Sequence[str], *, configs: Iterable[Mapping[str, object]] | None = None,
                 variant=None, ndim=None, dtype=None, where: str | None = None) -> list[tuple[tuple, int]]:
        """Kernels (the space's, filtered, or `configs`) counted by fields or derived quantities (`ckspace
        fields`), grouped in the order of the fields' values, then of first appearance; a kernel family without a
        field is grouped under "".

        >>> space = Space(arch="gfx950")
        >>> space.count_by("variant,ndim", dtype="fp32")[:2]
        [(('forward', 2), 320), (('forward', 3), 320)]
        >>> sum(space.count(variant="forward", ndim=2, dtype="fp32").values())
        320
        """
        names = [k.strip() for k in keys.split(",")] if isinstance(keys, str) else [str(k).strip() for k in keys]
        names = [k for k in names if k]
        known = list(self.data.fields) + [d for d in self.data.derives if d not in self.data.fields]
        if not names:
            raise UsageError("--count-by needs at least one field, e.g. pipeline,scheduler")
        for k in names:
            if k not in known:
                raise UsageError(f"--count-by: unknown field {k!r}; fields: {', '.join(known)}")
        source = configs if configs is not None else self.enumerate(variant=variant, ndim=ndim, dtype=dtype,
                                                                      where=where)
        derive = self.deriver() if any(k in self.data.derives for k in names) else None
        counts: dict[tuple, int] = {}
        for cfg in source:
            row = {**cfg, **derive(cfg)} if derive is not None else cfg
            key = tuple(row.get(k, "") for k in names)
            counts[key] = counts.get(key, 0) + 1

        def rank(key: tuple) -> tuple:
            out = []
            for k, v in zip(names, key):
                f = self.data.fields.get(k)
                values = list(f.values) if f is not None else []
                out.append((values.index(v) if v in values else len(values), str(v)))
            return tuple(out)

        return sorted(counts.items(), key=lambda kv: rank(kv[0]))

    def fields(self) -> "list[Row]":
        """Every field of a kernel (its family, type, values, doc; a derived field's formula), then every derived
        quantity with its formula: what `where` filters on and the columns of the csv format.

        >>> rows = Space().fields()
        >>> [r["name"] for r in rows][:3], next(r for r in rows if r["name"] == "threads")["formula"]
        (['variant', 'ndim', 'dtype'], 'arch.warp_size * wave_m * wave_n * wave_k')
        """
        from .rules.derived import field_rows

        return field_rows(self.data)

    def trait_filter(self, trait_config: str | Path | Mapping[str, object]) -> str | None:
        """A CK tile-engine JSON trait config (a file or its parsed dict) as a `where` filter (None: no filter).

        >>> space = Space(arch="gfx950")
        >>> where = space.trait_filter({"variant": "forward", "trait_config": {"data_type": {"values": ["bf16"]},
        ...                             "wave_mode": {"values": ["intrawave_dsb"]}}})
        >>> where
        "variant == 'forward' and dtype == 'bf16' and scheduler == 'intrawave' and double_smem_buffer"
        >>> all(c["double_smem_buffer"] for c in space.select(where=where))
        True
        """
        from .rules import traitconfig

        doc = traitconfig.read(trait_config) if isinstance(trait_config, (str, Path)) else trait_config
        return traitconfig.to_where(doc, self.data.fields, str(trait_config) if isinstance(trait_config, (str, Path))
                                    else "trait config")

    # -- C++ ----------------------------------------------------------------------------------------------------
    def emit(self, configs: Iterable[Mapping[str, object]], out_dir: str | Path, *, revision: str | None = None,
             chunk_size: int | None = None, selection: Mapping[str, object] | None = None) -> "EmitResult":
        """Write CK Tile C++ for configs (e.g. from select) into out_dir, as `ckspace emit` does: one header per
        kernel, compile units (by default at least 16 of at most 25 kernels, balanced by expected compile cost;
        `chunk_size` sets them exactly), a manifest and a build.ninja for `ckspace build` (`ckspace.emitted`).
        `revision` is the CK API (default the newest); `selection` is recorded in the manifest (what was asked
        for). The result's `expected_seconds` is each unit's expected compile time on one core.

        >>> import tempfile
        >>> space = Space(arch="gfx950")
        >>> with tempfile.TemporaryDirectory() as out:
        ...     result = space.emit(space.select("tiny"), out)
        ...     (Path(out) / "build.ninja").is_file()
        True
        >>> result.kernels, len(result.units), len(result.expected_seconds)
        (22, 16, 16)
        """
        from .codegen import emit as EM
        from .codegen.units import (DEFAULT_CHUNK_SIZE, balanced_units, cpp_groups, emit_order, unit_seconds,
                                    with_sharers)

        chosen = [dict(c) for c in configs]
        # One compile per distinct C++: the units are cut over the first kernel of each C++ (its lead), and the
        # kernels that share it (they differ only in the pads) go into its unit, calling its launcher
        groups = cpp_groups(emit_order(chosen), self.data.fields)
        leads = [c for c in chosen if str(c["name"]) in groups]
        if chunk_size is not None:  # emit's own chunks, in the order given
            lead_units = [[str(c["name"]) for c in leads[i:i + chunk_size]] for i in range(0, len(leads), chunk_size)]
            result = EM.emit(self, chosen, out_dir, revision=revision, chunk_size=chunk_size, selection=selection)
        else:
            lead_units = balanced_units(leads, self.arch)
            result = EM.emit(self, chosen, out_dir, revision=revision, chunk_size=DEFAULT_CHUNK_SIZE,
                             selection=selection, units=with_sharers(lead_units, groups))
        result.expected_seconds = unit_seconds(leads, self.arch, lead_units)
        return result

    # -- the compiler as oracle ---------------------------------------------------------------------------------
    def verify(self, configs: Sequence[Mapping[str, object]], workdir: str | Path, *, revision: str,
               unit_size: int = 1, jobs: int | None = None, budget: float | None = None,
               compiler: str | None = None, ck_include: str | Path | None = None,
               log: Callable[[str], None] | None = None, warn: Callable[[str], None] | None = None,
               compile_timeout: float | None = None,
               progress: Callable[[int, int, str], None] | None = None) -> "VerifyResult":
        """Compile kernels device-only (units of `unit_size`, a failing unit bisected to its kernels) in `workdir`
        (kept: a run resumes), read each object's ISA, and group the failures into proposed rules, as
        `ckspace verify` does. A kernel without a matrix instruction is a failure (no-matrix)."""
        from .codegen import verify as V

        return V.verify(self, list(configs), Path(workdir), revision=revision, unit_size=unit_size, jobs=jobs,
                        budget=budget, compiler=compiler, ck_include=None if ck_include is None else str(ck_include),
                        log=log, warn=warn, compile_timeout=compile_timeout, progress=progress)

    def ck_config_documents(self, configs: Iterable[Mapping[str, object]],
                            set_dir: str) -> tuple[dict[str, dict], list[str]]:
        """Kernels as CK's dispatcher JSON config documents by path (<variant>/<set_dir>/<layout>_<datatype>.json,
        as CK splits its own), and the names CK's JSON cannot express (pads other than all three); `ckspace
        enumerate --format ck-config -o DIR` writes them, and `Space(ck_config=DIR)` reads them back.

        >>> docs, left_out = Space(arch="gfx950").ck_config_documents(Space(arch="gfx950").select("tiny"), "tiny")
        >>> sorted(docs)[0], left_out
        ('backward_data/tiny/ndhwgc_bf16.json', [])
        """
        from .rules.ckconfig import to_documents

        return to_documents(configs, set_dir)

    def trait_config_documents(self, configs: Iterable[Mapping[str, object]]) -> dict[str, dict]:
        """tile-engine trait configs that select the kernels' values, one per variant by file name (<variant>.json):
        each key with the values the kernels use. A trait config is a product of its keys' values, so read back
        (`trait_filter`, `--trait-config`) it keeps every one of the kernels, and the other combinations of their
        values. `ckspace enumerate --format trait-config -o DIR` writes them.

        >>> space = Space(arch="gfx950")
        >>> docs = space.trait_config_documents(space.select("tiny"))
        >>> sorted(docs)[0], docs["bwd_data.json"]["trait_config"]["data_type"]
        ('bwd_data.json', {'values': ['bf16']})
        """
        from .rules.traitconfig import to_documents

        return to_documents(list(configs), self.data.fields)

    def problems(self, set_name: str = "tests", *, variant=None, ndim=None, dtype=None, where: str | None = None,
                 seed: int = 0, time_limit: float = 30.0) -> "ProblemSet":
        """Test problems for every kernel of a set (`ckspace problems`): the fewest small problems such that every
        kernel runs one and each stratum's problem features are covered, under the support rules of the space's CK
        API revision (ckspace.select.problems).

        >>> result = Space(arch="gfx942", ck_api="2025.11").problems("tiny")
        >>> result.kernels_run == result.kernels, result.items_covered == result.items
        (True, True)
        """
        from .select.problems import select_problems
        from .spec import api_revision

        kernels = self.select(set_name, variant=variant, ndim=ndim, dtype=dtype, where=where)
        revision = api_revision(self.spec.spec.ck_api, self.spec.spec.ck_include)
        return select_problems(self, kernels, set_name, revision, seed=seed, time_limit=time_limit)

    def host_check(self, configs: Sequence[Mapping[str, object]], workdir: str | Path, *, revision: str,
                   jobs: int | None = None, compiler: str | None = None) -> "HostLibrary":
        """CK's own answer to "does this kernel run this problem": the kernels' emitted units (CK API `revision`)
        compiled host-only with the build toolchain into workdir/host_check.so, whose `supports(kernel, problem)`
        calls each unit's `<kernel>_is_supported` (ckspace.codegen.hostcheck)."""
        from .codegen import hostcheck

        return hostcheck.build(self, configs, workdir, revision=revision, jobs=jobs, compiler=compiler)

    def cover(self, configs: Sequence[Mapping[str, object]], objective: str | Path = "tests") -> list:
        """The fewest of `configs` covering every item of a coverage objective that they have (CP-SAT set
        cover), in their order: what verify compiles by default.

        >>> space = Space(arch="gfx950")
        >>> tiny = space.select("tiny")
        >>> len(space.cover(tiny, "tiny")) == len(tiny)  # tiny is already the fewest covering its objective
        True
        """
        from .select import coverage, objectives
        from .select.selection import solve_cover

        chosen_from = list(configs)
        obj = objectives.load(str(objective), self.data.fields)
        chosen, _ = solve_cover(coverage.ItemIndex(obj, chosen_from), obj)
        return [chosen_from[k] for k in sorted(chosen)]

    def audit_plan(self, n: int, near: int, *, seed: int | str = 0, stratify: str | None = None,
                   log: Callable[[str], None] | None = None, variant=None, ndim=None, dtype=None,
                   where: str | None = None) -> "AuditPlan":
        """The kernels of a fact audit (`verify --audit`): n drawn uniformly, n stratified by `stratify` (default
        variant,ndim,dtype,tile,pipeline; "" for none), and up to `near` near misses of each fact rule, each draw
        in a random order of its own."""
        from .select import audit as P

        dims = P.DEFAULT_STRATIFY if stratify is None else stratify
        return P.draw(self, n, near, seed, dims, log=log,
                      filters={"variant": variant, "ndim": ndim, "dtype": dtype, "where": where})

    def audit_plan_of(self, lines: Sequence[str], label: str,
                      configs: Mapping[str, Mapping[str, object]]) -> "AuditPlan":
        """The plan a names file holds: its sections (`# audit:` lines), or for a plain list each kernel classed
        by the fact rules it breaks here."""
        from .select import audit as P

        plan = P.parse(lines, label)
        if plan is None:
            plan = P.classify(self, list(configs), configs)
        return plan

    def audit(self, plan: "AuditPlan", result: "VerifyResult",
              configs: Mapping[str, Mapping[str, object]]) -> "AuditReport":
        """The audit of a compiled plan: each draw's precision, each rule's near misses that failed, the
        confusion matrix (`.text(revision)`, `.markdown()`, `.to_json()`)."""
        from .codegen import audit as A

        return A.report(self, plan, result, configs)
