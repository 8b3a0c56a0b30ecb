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

Objective files are user input: any mistake is one DataError line naming the file and the entry.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from ..errors import DataError

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
    here = Path(__file__).resolve().parents[1]  # the ckspace package (this module sits in one of its layers)
    repo = here.parent / "objectives"
    if (repo / "tests.toml").is_file():
        return repo
    installed = here / "objectives"
    if (installed / "tests.toml").is_file():
        return installed
    try:
        from importlib.resources import files

        return Path(str(files("ckspace.objectives")))
    except (ImportError, ModuleNotFoundError):  # pragma: no cover
        return repo


def resolve_path(spec: str | Path) -> Path:
    """A built-in set name (`tests`, `tiny`) or a path to an objective file."""
    if isinstance(spec, str) and spec in BUILTIN_SETS:
        return objectives_dir() / f"{spec}.toml"
    return Path(spec)


_TOP_KEYS = {"description", "strata", "cover", "size", "solver", "define"}
_SECTION_KEYS = {
    "strata": {"variant", "ndim", "dtype", "where", "scope"},
    "cover": {"dimensions", "pairs"},
    "size": {"minimize", "min_kernels", "max_kernels"},
    "solver": {"time_limit", "deterministic_time", "seed", "workers"},
}


class _Reader:
    def __init__(self, path: Path):
        self.path = path

    def fail(self, entry: str, message: str) -> DataError:
        return DataError(f"objective {self.path}: {entry}: {message}")

    def table(self, raw: Mapping[str, Any], key: str) -> dict[str, Any]:
        value = raw.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table [{key}], got {type(value).__name__}")
        allowed = _SECTION_KEYS.get(key)
        if allowed is not None:
            for k in value:
                if k not in allowed:
                    raise self.fail(f"{key}.{k}", f"unknown key; keys of [{key}]: {', '.join(sorted(allowed))}")
        return value

    def names(self, value: Any, entry: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(entry, f"expected a list of names, got {value!r}")
        if len(set(value)) != len(value):
            raise self.fail(entry, f"a name is listed twice in {value!r}")
        return tuple(value)

    def number(self, value: Any, entry: str, kind: type, low: float, allow_none: bool = False) -> Any:
        if value is None and allow_none:
            return None
        ok = isinstance(value, int) and not isinstance(value, bool) if kind is int else (
            isinstance(value, (int, float)) and not isinstance(value, bool))
        if not ok or value < low:
            what = "an integer" if kind is int else "a number"
            raise self.fail(entry, f"expected {what} >= {low:g}, got {value!r}")
        return kind(value)


def load(spec: str | Path, field_names: Iterable[str] | None = None) -> Objective:
    """Read and check an objective file (a built-in set name or a path).

    With `field_names` (the fields of the rule data), every dimension name is checked too.
    """
    path = resolve_path(spec)
    r = _Reader(path)
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise DataError(f"objective {path}: cannot read: {exc.strerror or exc}") from None
    try:
        raw = tomllib.loads(blob.decode("utf-8"))
    except UnicodeDecodeError:
        raise DataError(f"objective {path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"objective {path}: invalid TOML: {exc}") from None
    for key in raw:
        if key not in _TOP_KEYS:
            raise r.fail(key, f"unknown key; top-level keys: {', '.join(sorted(_TOP_KEYS))}")
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise r.fail("description", "expected a string")

    strata = r.table(raw, "strata")
    cover = r.table(raw, "cover")
    size = r.table(raw, "size")
    solver = r.table(raw, "solver")
    define = r.table(raw, "define")

    defined: dict[str, Dimension] = {}
    for name, spec_ in define.items():
        entry = f"define.{name}"
        if not isinstance(spec_, dict):
            raise r.fail(entry, "expected a table with 'fields' (and optionally 'separator')")
        for k in spec_:
            if k not in ("fields", "separator", "doc"):
                raise r.fail(f"{entry}.{k}", "unknown key; keys: doc, fields, separator")
        if name in DIMENSIONS:
            raise r.fail(entry, f"{name!r} is a built-in dimension; choose another name")
        fields_ = r.names(spec_.get("fields"), f"{entry}.fields")
        if not fields_:
            raise r.fail(f"{entry}.fields", "expected at least one field")
        sep = spec_.get("separator", "x")
        if not isinstance(sep, str):
            raise r.fail(f"{entry}.separator", "expected a string")
        defined[name] = Dimension(name, fields_, sep, str(spec_.get("doc", "")))

    def opt_list(key: str, kind: type) -> tuple | None:
        if key not in strata:
            return None
        value = strata[key]
        if not isinstance(value, list) or not value or not all(
                isinstance(v, kind) and not isinstance(v, bool) for v in value):
            raise r.fail(f"strata.{key}", f"expected a non-empty list of {kind.__name__} values, got {value!r}")
        return tuple(value)

    where = strata.get("where")
    if where is not None and (not isinstance(where, str) or not where.strip()):
        raise r.fail("strata.where", "expected a filter expression (a string)")
    scope = r.names(strata.get("scope", ["variant", "ndim", "dtype"]), "strata.scope")

    dims = r.names(cover.get("dimensions", []), "cover.dimensions")
    pairs_raw = cover.get("pairs", [])
    if not isinstance(pairs_raw, list):
        raise r.fail("cover.pairs", f"expected a list of [dimension, dimension] pairs, got {pairs_raw!r}")
    pairs: list[tuple[str, str]] = []
    for i, p in enumerate(pairs_raw):
        entry = f"cover.pairs[{i}]"
        if not (isinstance(p, list) and len(p) == 2 and all(isinstance(v, str) and v for v in p)):
            raise r.fail(entry, f"expected [dimension, dimension], got {p!r}")
        if p[0] == p[1]:
            raise r.fail(entry, f"a pair needs two different dimensions, got {p!r}")
        key = (p[0], p[1])
        if key in pairs or (p[1], p[0]) in pairs:
            raise r.fail(entry, f"the pair {p[0]} x {p[1]} is listed twice")
        pairs.append(key)
    if not dims and not pairs:
        raise r.fail("cover", "nothing to cover: list 'dimensions' and/or 'pairs'")

    minimize = size.get("minimize", True)
    if not isinstance(minimize, bool):
        raise r.fail("size.minimize", f"expected true or false, got {minimize!r}")
    min_k = r.number(size.get("min_kernels", 0), "size.min_kernels", int, 0)
    max_k = r.number(size.get("max_kernels"), "size.max_kernels", int, 1, allow_none=True)
    if max_k is not None and max_k < min_k:
        raise r.fail("size.max_kernels", f"{max_k} is below size.min_kernels = {min_k}")

    obj = Objective(
        name=path.stem, path=path, digest=hashlib.sha256(blob).hexdigest(), description=description,
        variant=opt_list("variant", str), ndim=opt_list("ndim", int), dtype=opt_list("dtype", str), where=where,
        scope=scope, dimensions=dims, pairs=tuple(pairs), minimize=minimize, min_kernels=min_k, max_kernels=max_k,
        time_limit=r.number(solver.get("time_limit", 60), "solver.time_limit", float, 0.1),
        deterministic_time=r.number(solver.get("deterministic_time", 30), "solver.deterministic_time", float, 0.1),
        seed=r.number(solver.get("seed", 1), "solver.seed", int, 0),
        workers=r.number(solver.get("workers", 1), "solver.workers", int, 1),
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
