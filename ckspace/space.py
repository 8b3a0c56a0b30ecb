"""The Python API: one facade for everything a command does. The CLI is a thin layer over it.

>>> from ckspace import Space
>>> space = Space(arch="gfx950")
>>> sum(1 for _ in space.enumerate(variant="bwd_data", ndim=2, dtype="fp32"))
84
>>> [v.rule for v in space.check("grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_96x128x64_2x2x1_32x32x16_vec8_8_8")][:1]
['arch.tile-m-divisible']
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from .rules.check import domain_verdicts, violations
from .rules.verdict import Verdict
from .solve.kernels import KernelSpace, Timings
from .rules.model import Stratum

if TYPE_CHECKING:  # pragma: no cover
    from .explain.result import Explanation
    from .select.coverage import Report
    from .select.selection import Selection

__all__ = ["Space", "Stratum", "Timings", "Verdict"]


class Space(KernelSpace):
    """The kernel-instance space of one arch under a choice of rule families.

    `catalog` chooses CK's rule set (full, ck-default, ck-rdna, or CK's shipped lists ck-profiler, ck-tests:
    constraints/catalogs.toml), `ck_config` a file or directory of CK JSON configs instead; `rules` switches
    families (`"+ck-archfilter"`, `"-ck-curation"` for the open space); `constraints_dir` reads another rule tree;
    `use_cache` reads and writes the result cache. Every method takes keyword arguments only.
    """

    def __init__(self, *, arch: str = "gfx950", rules: str | Sequence[str] | None = None,
                 constraints_dir: str | Path | None = None, use_cache: bool = True, catalog: str = "full",
                 ck_config: str | Path | None = None):
        if ck_config is not None:  # a user's CK JSON configs (a file or a directory) as the catalog `ck-config`
            from .rules import ckconfig
            from .rules.data import Catalog

            ckconfig.config_files(Path(ck_config))
            catalog = Catalog("ck-config", (), layout_3d="ndhwgc", doc=f"CK JSON configs from {ck_config}",
                              source=str(ck_config), configs=str(Path(ck_config).resolve()), user=True)  # type: ignore[assignment]
        super().__init__(arch=arch, rules=rules, constraints_dir=constraints_dir, use_cache=use_cache,
                         catalog=catalog)
        self._explainer = None

    # -- one kernel ---------------------------------------------------------------------------------------------
    def parse(self, name: str) -> dict[str, object]:
        """A kernel name as its config; KernelNameError (a CkspaceError) names the malformed part.

        >>> Space().parse("grouped_conv_bwd_data_fp32_nhwgc_2d_mem_cshuffle_intrawave_64x64x32_2x2x1_16x16x8_vec1_1_1")["tile_m"]
        64
        """
        from .explain.spelling import parse

        return parse(name, self.data)

    def check(self, kernel: str | Mapping[str, object]) -> list[Verdict]:
        """Every enabled rule a kernel (a name or a config) breaks, with its message; [] when it is valid.

        A config must give every field of its kernel family: a partial one raises IncompleteConfigError (a value
        outside a field's domain is a `model.domain-*` verdict).

        >>> Space().check({"variant": "forward", "tile_m": 96})
        Traceback (most recent call last):
        ...
        ckspace.errors.IncompleteConfigError: the config lacks 28 field(s) of a gemm kernel: ndim, dtype, pipeline, ...
        """
        config = self.parse(kernel) if isinstance(kernel, str) else dict(kernel)
        self._complete(config)
        outside = domain_verdicts(self.model, config)
        if outside:
            return outside
        return violations(self.model, config)

    def _complete(self, config: Mapping[str, object]) -> None:
        from .errors import IncompleteConfigError
        from .rules.model import kind_of_variant

        kind = kind_of_variant(str(config.get("variant")))
        missing = [f.name for f in self.model.fields(kind) if not f.derived and f.name not in config]
        if "variant" not in config:
            missing.insert(0, "variant")
        if missing:
            raise IncompleteConfigError(missing, kind)

    def explain(self, name: str, *, neighbours: int = 3, select_sets: bool = False) -> "Explanation":
        """Why a kernel is valid or not: every broken rule of every family, derived fields, sets and notes, and for
        a rejected kernel the `neighbours` nearest valid ones (CP-SAT)."""
        from .explain.explainer import Explainer

        if self._explainer is None or self._explainer.select_sets != select_sets:
            self._explainer = Explainer(self.arch, sorted(self.families), self.constraints_dir, data=self.data,
                                        select_sets=select_sets, catalog=self.catalog.name)
        return self._explainer.explain(name, neighbours=neighbours)

    # -- sets ---------------------------------------------------------------------------------------------------
    def select(self, set_name: str = "full", *, objective: str | Path | None = None,
               stable_from: str | Path | None = None, variant=None, ndim=None, dtype=None,
               where: str | None = None) -> list[dict[str, object]]:
        """The kernels of a named set (full, tests, tiny) as configs sorted by name; `objective` replaces the
        set's objective file, `stable_from` (a file of names) keeps a previous selection where it can."""
        return self.selection(set_name, objective=objective, stable_from=stable_from, variant=variant, ndim=ndim,
                              dtype=dtype, where=where)[0]

    def selection(self, set_name: str = "full", *, objective: str | Path | None = None,
                  stable_from: str | Path | None = None, variant=None, ndim=None, dtype=None,
                  where: str | None = None) -> tuple[list[dict[str, object]], "Selection | None"]:
        """select(), plus the Selection behind tests/tiny (its size, proven bound, churn; None for full)."""
        from .select.sets import selected_configs

        return selected_configs(self, set_name, objective_path=objective, stable_from=stable_from, variant=variant,
                                ndim=ndim, dtype=dtype, where=where)

    def coverage(self, names: Iterable[str] | None = None, *, set_name: str | None = None,
                 objective: str | Path | None = None, stable_from: str | Path | None = None,
                 source: str = "names") -> "Report":
        """What a list of names (or a named set) covers of a coverage objective, and what it misses."""
        from .select.sets import coverage_report

        return coverage_report(self, names=None if names is None else list(names), set_name=set_name,
                               objective_path=objective, stable_from=stable_from, source=source)

    def sample(self, n: int, *, seed: int | str = 0, stratify: str | Sequence[str] | None = None,
               set_name: str = "full", objective: str | Path | None = None, stable_from: str | Path | None = None,
               variant=None, ndim=None, dtype=None, where: str | None = None) -> list[dict[str, object]]:
        """A uniform random sample of n kernels of a set, reproducible by seed; with `stratify`, an equal share per
        group of those dimensions. A set smaller than n is returned whole."""
        from .select.sample import sample, stratify_dimensions

        configs = self.select(set_name, objective=objective, stable_from=stable_from, variant=variant, ndim=ndim,
                              dtype=dtype, where=where)
        return sample(configs, n, seed, stratify_dimensions(stratify, list(self.data.fields)))
