"""Coverage objectives: what a selected kernel set (`tests`, `tiny`, or a user's own) must cover, read from TOML.

An objective file under objectives/ (or any file passed with `--objective FILE`) states

- `[strata]`: which kernels of `full` the set is drawn from (`variant`, `ndim`, `dtype`, `where`) and the `scope`:
  the dimensions whose values split the kernels into groups inside which coverage is required (`["variant",
  "ndim", "dtype"]`: per stratum; `[]`: over the whole arch);
- `[cover]`: the `dimensions` every value of which must occur (1-wise), and the `pairs` of dimensions every value
  pair of which must occur (2-wise), in each scope group, as far as they occur in `full`;
- `[size]`: the size preference (`minimize`, `min_kernels`, `max_kernels`);
- `[solver]`: the CP-SAT budget and its determinism (`time_limit`, `deterministic_time`, `seed`, `workers`);
- `[define.NAME]`: extra dimensions made of fields (`fields = [...]`, `separator = "x"`).

A dimension maps a kernel to one value (a string) or to nothing, when it does not apply: depthwise kernels have no
tile, pipeline or vector triple, and GEMM kernels have no depthwise tile. A kernel only counts for the dimensions
that apply to it; a pair only for kernels to which both apply. The built-in dimensions are listed in DIMENSIONS;
every field of fields.toml (`tile_m`, `streamk`, ...) is a dimension of its own too.

Objective files are user input: each is checked against OBJECTIVE_FILE (types, keys, bounds) before a value is
read, and any mistake is one DataError line naming the file and the entry.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import DataError
from ..paths import PACKAGE, data_dir
from ..rules import schema as S
from ..rules.schema import INT32_MAX, Bool, Float, Int, ListOf, Str, Table, display

BUILTIN_SETS = ("tests", "tiny")


def feature_of(cfg: Mapping[str, object]) -> str:
    """The feature configuration of a kernel as one value.

    `depthwise` for depthwise kernels; otherwise the features switched on, joined by `+` in a fixed order:
    `gm{n}` (merged groups, per value), `split_image`, `two_stage`, `explicit_gemm`, `streamk_{kind}` (stream-K per
    kind, `_persistent` appended when persistent); `plain` when none is. Combinations are values of their own
    (`gm2+two_stage`, `two_stage+explicit_gemm`), so covering every value covers every single feature as well.
    """
    if "pipeline" not in cfg:
        return "depthwise"
    parts = []
    gm = cfg.get("num_groups_to_merge", 1)
    if gm not in (None, 1):
        parts.append(f"gm{gm}")
    if cfg.get("split_image"):
        parts.append("split_image")
    if cfg.get("two_stage"):
        parts.append("two_stage")
    if cfg.get("explicit_gemm"):
        parts.append("explicit_gemm")
    sk = cfg.get("streamk", "none")
    if sk not in (None, "none"):
        parts.append(f"streamk_{sk}" + ("_persistent" if cfg.get("streamk_persistent") else ""))
    return "+".join(parts) or "plain"


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class Dimension:
    """A named view of a kernel: the values of `fields` joined by `separator`, or a computed value."""

    name: str
    fields: tuple[str, ...]
    separator: str = "x"
    doc: str = ""
    compute: Callable[[Mapping[str, object]], str | None] | None = None
    suffix: str = ""

    def value(self, cfg: Mapping[str, object]) -> str | None:
        if self.compute is not None:
            return self.compute(cfg)
        try:
            return self.separator.join(_text(cfg[f]) for f in self.fields) + self.suffix
        except KeyError:
            return None  # the dimension does not apply to this kind of kernel


def _dim(name: str, fields: Iterable[str], sep: str = "x", doc: str = "", **kw: Any) -> tuple[str, Dimension]:
    return name, Dimension(name, tuple(fields), sep, doc, **kw)


DIMENSIONS: dict[str, Dimension] = dict([
    _dim("variant", ["variant"], doc="forward, bwd_data, bwd_weight, forward_depthwise"),
    _dim("ndim", ["ndim"], doc="2d, 3d", suffix="d"),
    _dim("dtype", ["dtype"], doc="fp16, bf16, fp32"),
    _dim("tile", ["tile_m", "tile_n", "tile_k"], doc="block tile MxNxK (GEMM)"),
    _dim("wave", ["wave_m", "wave_n", "wave_k"], doc="wave layout MxNxK (GEMM)"),
    _dim("warp_tile", ["warp_tile_m", "warp_tile_n", "warp_tile_k"], doc="warp tile MxNxK (GEMM)"),
    _dim("vector", ["vec_a", "vec_b", "vec_c"], "/", doc="vector sizes a/b/c (GEMM)"),
    _dim("pipeline", ["pipeline"], doc="GEMM pipeline"),
    _dim("scheduler", ["scheduler"], doc="intrawave, interwave (GEMM)"),
    _dim("specialization", ["specialization"], doc="convolution specialization (GEMM)"),
    _dim("epilogue", ["epilogue"], doc="epilogue (GEMM)"),
    _dim("dsb", ["double_smem_buffer"], doc="double LDS buffer, true/false (GEMM)"),
    _dim("feature", ["num_groups_to_merge", "split_image", "two_stage", "explicit_gemm", "streamk",
                     "streamk_persistent"], doc="plain, gm{n}, split_image, two_stage, explicit_gemm, "
                                                "streamk_{kind}[_persistent], their combinations, or depthwise",
         compute=feature_of),
    _dim("dw_tile", ["dw_tile_h", "dw_tile_w"], doc="depthwise tile HxW"),
    _dim("dw_filter", ["filter_size"], doc="depthwise filter size"),
    _dim("dw_stride", ["stride_h", "stride_w"], doc="depthwise stride HxW"),
    _dim("dw_subtile", ["sub_h", "sub_w"], doc="depthwise sub-tile HxW"),
    _dim("dw_nbatch", ["nbatch"], doc="depthwise batch per block"),
    _dim("dw_vector", ["in_vec", "out_vec"], "/", doc="depthwise vector sizes in/out"),
])  # fmt: skip


@dataclass(frozen=True)
class Objective:
    """A parsed objective file."""

    name: str
    path: Path
    digest: str  # sha256 of the file's bytes: part of every cache key that depends on the objective
    description: str = ""
    variant: tuple[str, ...] | None = None
    ndim: tuple[int, ...] | None = None
    dtype: tuple[str, ...] | None = None
    where: str | None = None
    scope: tuple[str, ...] = ("variant", "ndim", "dtype")
    dimensions: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()
    minimize: bool = True
    min_kernels: int = 0
    max_kernels: int | None = None
    time_limit: float = 60.0
    deterministic_time: float = 30.0
    seed: int = 1
    workers: int = 1
    defined: dict[str, Dimension] = field(default_factory=dict)

    def dimension(self, name: str) -> Dimension:
        return self.defined.get(name) or DIMENSIONS.get(name) or Dimension(name, (name,))

    @property
    def goals(self) -> list[tuple[str, ...]]:
        """The coverage goals in report order: each 1-wise dimension, then each pair."""
        return [(d,) for d in self.dimensions] + [tuple(p) for p in self.pairs]

    @property
    def used(self) -> list[str]:
        out: list[str] = []
        for name in (*self.scope, *self.dimensions, *(d for p in self.pairs for d in p)):
            if name not in out:
                out.append(name)
        return out

    def label(self) -> str:
        return self.name if self.path.parent == objectives_dir() else str(self.path)


def objectives_dir() -> Path:
    """objectives/ of this checkout, or the copy installed inside the package."""
    return data_dir("objectives", "tests.toml") or PACKAGE.parent / "objectives"


def resolve_path(spec: str | Path) -> Path:
    """A built-in set name (`tests`, `tiny`) or a path to an objective file."""
    if isinstance(spec, str) and spec in BUILTIN_SETS:
        return objectives_dir() / f"{spec}.toml"
    return Path(spec)


# The schema of an objective file. Bounds keep every number inside what CP-SAT takes: its seed and worker count are
# 32-bit, kernel counts are far below 2**31, and time budgets are finite (TOML has inf and nan).
MAX_KERNELS = 10**9
MAX_SECONDS = 10**7  # about four months
NAME_LIST = ListOf(Str(nonblank=True), what="a list of names")
OBJECTIVE_FILE = Table({
    "description": Str(),
    "strata": Table({
        "variant": ListOf(Str(nonblank=True), 1),
        "ndim": ListOf(Int(0, INT32_MAX), 1),
        "dtype": ListOf(Str(nonblank=True), 1),
        "where": Str(nonblank=True, what="a filter expression (a string)"),
        "scope": NAME_LIST,
    }),
    "cover": Table({
        "dimensions": NAME_LIST,
        "pairs": ListOf(ListOf(Str(nonblank=True), 2, 2, what="[dimension, dimension]"),
                        what="a list of [dimension, dimension] pairs"),
    }),
    "size": Table({"minimize": Bool(), "min_kernels": Int(0, MAX_KERNELS), "max_kernels": Int(1, MAX_KERNELS)}),
    "solver": Table({
        "time_limit": Float(0.1, MAX_SECONDS),
        "deterministic_time": Float(0.1, MAX_SECONDS),
        "seed": Int(0, INT32_MAX),
        "workers": Int(1, 1024),
    }),
    "define": Table(extra=Table({"fields": ListOf(Str(nonblank=True), 1, what="a non-empty list of field names"),
                                 "separator": Str(), "doc": Str()}, required=("fields",))),
})


class _Reader:
    def __init__(self, path: Path):
        self.path = path

    def fail(self, entry: str, message: str) -> DataError:
        return DataError(f"objective {display(self.path)}: {entry}: {message}")

    def names(self, value: list[str], entry: str) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise self.fail(entry, f"a name is listed twice in {value!r}")
        return tuple(value)


def load(spec: str | Path, field_names: Iterable[str] | None = None) -> Objective:
    """Read and check an objective file (a built-in set name or a path).

    With `field_names` (the fields of the rule data), every dimension name is checked too.
    """
    path = resolve_path(spec)
    r = _Reader(path)
    label = f"objective {display(path)}"
    blob = S.read_bytes(path, label)
    raw = S.parse_toml(blob, label)
    S.check(OBJECTIVE_FILE, raw, label)  # from here on every value has its type, shape and bounds
    description = raw.get("description", "")
    strata = raw.get("strata", {})
    cover = raw.get("cover", {})
    size = raw.get("size", {})
    solver = raw.get("solver", {})

    defined: dict[str, Dimension] = {}
    for name, spec_ in raw.get("define", {}).items():
        entry = f"define.{name}"
        if name in DIMENSIONS:
            raise r.fail(entry, f"{name!r} is a built-in dimension; choose another name")
        fields_ = r.names(spec_["fields"], f"{entry}.fields")
        defined[name] = Dimension(name, fields_, spec_.get("separator", "x"), spec_.get("doc", ""))

    def opt_list(key: str) -> tuple | None:
        return tuple(strata[key]) if key in strata else None

    where = strata.get("where")
    scope = r.names(strata.get("scope", ["variant", "ndim", "dtype"]), "strata.scope")

    dims = r.names(cover.get("dimensions", []), "cover.dimensions")
    pairs: list[tuple[str, str]] = []
    for i, p in enumerate(cover.get("pairs", [])):
        entry = f"cover.pairs[{i}]"
        if p[0] == p[1]:
            raise r.fail(entry, f"a pair needs two different dimensions, got {p!r}")
        key = (p[0], p[1])
        if key in pairs or (p[1], p[0]) in pairs:
            raise r.fail(entry, f"the pair {p[0]} x {p[1]} is listed twice")
        pairs.append(key)
    if not dims and not pairs:
        raise r.fail("cover", "nothing to cover: list 'dimensions' and/or 'pairs'")

    minimize = size.get("minimize", True)
    min_k = size.get("min_kernels", 0)
    max_k = size.get("max_kernels")
    if max_k is not None and max_k < min_k:
        raise r.fail("size.max_kernels", f"{max_k} is below size.min_kernels = {min_k}")

    obj = Objective(
        name=path.stem, path=path, digest=hashlib.sha256(blob).hexdigest(), description=description,
        variant=opt_list("variant"), ndim=opt_list("ndim"), dtype=opt_list("dtype"), where=where,
        scope=scope, dimensions=dims, pairs=tuple(pairs), minimize=minimize, min_kernels=min_k, max_kernels=max_k,
        time_limit=float(solver.get("time_limit", 60)),
        deterministic_time=float(solver.get("deterministic_time", 30)),
        seed=solver.get("seed", 1),
        workers=solver.get("workers", 1),
        defined=defined,
    )
    if field_names is not None:
        check_names(obj, field_names)
    return obj


def check_names(obj: Objective, field_names: Iterable[str]) -> None:
    """Every dimension the objective names must be built in, defined in the file, or a field of the rule data."""
    known = set(field_names)
    r = _Reader(obj.path)
    for name, dim in obj.defined.items():
        for f in dim.fields:
            if f not in known:
                raise r.fail(f"define.{name}.fields", f"unknown field {f!r}")

    def check(name: str, entry: str) -> None:
        if name in DIMENSIONS or name in obj.defined or name in known:
            return
        import difflib

        choices = sorted(DIMENSIONS) + sorted(obj.defined)
        close = difflib.get_close_matches(name, choices + sorted(known), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise r.fail(entry, f"unknown dimension {name!r}{hint} (built-in: {', '.join(choices)}; or any field name)")

    for i, name in enumerate(obj.scope):
        check(name, f"strata.scope[{i}]")
    for i, name in enumerate(obj.dimensions):
        check(name, f"cover.dimensions[{i}]")
    for i, (a, b) in enumerate(obj.pairs):
        check(a, f"cover.pairs[{i}]")
        check(b, f"cover.pairs[{i}]")
