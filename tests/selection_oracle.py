"""An independent coverage counter for the selection tests, and the selected sets computed once per process.

The counter reads the objective files with tomllib and derives every dimension from a kernel's raw fields with its
own code: it never imports ckspace.select.objectives or ckspace.select.coverage, so a claim of the selection code ("everything is
covered", "CK's list covers 11,393 of 13,283 items") is checked by a second, separate implementation.
"""

from __future__ import annotations

import functools
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping

ROOT = Path(__file__).resolve().parent.parent
OBJECTIVES = ROOT / "objectives"


def _feature(k: Mapping) -> str:
    if k["variant"] == "forward_depthwise":
        return "depthwise"
    tags = []
    if k["num_groups_to_merge"] != 1:
        tags.append("gm%d" % k["num_groups_to_merge"])
    for flag in ("split_image", "two_stage", "explicit_gemm"):
        if k[flag]:
            tags.append(flag)
    if k["streamk"] != "none":
        tags.append("streamk_" + k["streamk"] + ("_persistent" if k["streamk_persistent"] else ""))
    return "+".join(tags) if tags else "plain"


def _gemm(fn):
    return lambda k: None if k["variant"] == "forward_depthwise" else fn(k)


def _dw(fn):
    return lambda k: fn(k) if k["variant"] == "forward_depthwise" else None


def _b(v: object) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


DIMS = {
    "variant": lambda k: k["variant"],
    "ndim": lambda k: f"{k['ndim']}d",
    "dtype": lambda k: k["dtype"],
    "feature": _feature,
    "tile": _gemm(lambda k: f"{k['tile_m']}x{k['tile_n']}x{k['tile_k']}"),
    "wave": _gemm(lambda k: f"{k['wave_m']}x{k['wave_n']}x{k['wave_k']}"),
    "warp_tile": _gemm(lambda k: f"{k['warp_tile_m']}x{k['warp_tile_n']}x{k['warp_tile_k']}"),
    "vector": _gemm(lambda k: f"{k['vec_a']}/{k['vec_b']}/{k['vec_c']}"),
    "pipeline": _gemm(lambda k: k["pipeline"]),
    "scheduler": _gemm(lambda k: k["scheduler"]),
    "specialization": _gemm(lambda k: k["specialization"]),
    "epilogue": _gemm(lambda k: k["epilogue"]),
    "dsb": _gemm(lambda k: _b(k["double_smem_buffer"])),
    "dw_tile": _dw(lambda k: f"{k['dw_tile_h']}x{k['dw_tile_w']}"),
    "dw_filter": _dw(lambda k: str(k["filter_size"])),
    "dw_stride": _dw(lambda k: f"{k['stride_h']}x{k['stride_w']}"),
    "dw_subtile": _dw(lambda k: f"{k['sub_h']}x{k['sub_w']}"),
    "dw_nbatch": _dw(lambda k: str(k["nbatch"])),
    "dw_vector": _dw(lambda k: f"{k['in_vec']}/{k['out_vec']}"),
}


def dim_value(name: str, k: Mapping) -> str | None:
    if name in DIMS:
        return DIMS[name](k)
    return _b(k[name]) if name in k else None  # any raw field is a dimension of its own


@functools.lru_cache(maxsize=None)
def objective_spec(name_or_path: str) -> dict:
    path = OBJECTIVES / f"{name_or_path}.toml" if "/" not in name_or_path else Path(name_or_path)
    raw = tomllib.loads(path.read_text())
    scope = tuple(raw.get("strata", {}).get("scope", ["variant", "ndim", "dtype"]))
    dims = tuple(raw.get("cover", {}).get("dimensions", []))
    pairs = tuple(tuple(p) for p in raw.get("cover", {}).get("pairs", []))
    return {"scope": scope, "goals": tuple((d,) for d in dims) + pairs, "size": raw.get("size", {})}


def items(kernels: Iterable[Mapping], spec: dict) -> dict[tuple, set[str]]:
    """Every item -> the names of the kernels having it (an item: scope values, goal, goal values)."""
    out: dict[tuple, set[str]] = defaultdict(set)
    for k in kernels:
        scope = tuple(dim_value(s, k) or "-" for s in spec["scope"])
        for goal in spec["goals"]:
            values = tuple(dim_value(d, k) for d in goal)
            if None not in values:
                out[(scope, goal, values)].add(k["name"])
    return out


def count(universe: Iterable[Mapping], subset_names: Iterable[str], spec: dict,
          foreign: Iterable[Mapping] = ()) -> dict[tuple, tuple[int, int]]:
    """Per goal: (covered, total) items of the universe that the subset has; `foreign` kernels (outside the
    universe, but real) cover the universe's items they have too."""
    chosen = set(subset_names)
    theirs = set(items(foreign, spec))
    per: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for item, names in items(universe, spec).items():
        goal = item[1]
        per[goal][1] += 1
        per[goal][0] += bool(names & chosen) or item in theirs
    return {g: (c, t) for g, (c, t) in per.items()}


def uncovered(universe: Iterable[Mapping], subset_names: Iterable[str], spec: dict) -> set[tuple]:
    chosen = set(subset_names)
    return {item for item, names in items(universe, spec).items() if not names & chosen}


# -- the sets, once per process ------------------------------------------------------------------------------------

_SELECTIONS: dict[tuple, object] = {}


def space(arch: str = "gfx950"):
    from ckspace import Space

    key = ("space", arch)
    if key not in _SELECTIONS:
        _SELECTIONS[key] = Space(arch=arch)
    return _SELECTIONS[key]


def selected(set_name: str, arch: str = "gfx950"):
    """The Selection of a built-in set (computed once per test process; the session cache is private)."""
    from ckspace.select import objectives, selection

    key = ("sel", set_name, arch)
    if key not in _SELECTIONS:
        sp = space(arch)
        _SELECTIONS[key] = selection.select(sp, objectives.load(set_name, sp.data.fields))
    return _SELECTIONS[key]


def full(arch: str = "gfx950") -> list[dict]:
    key = ("full", arch)
    if key not in _SELECTIONS:
        _SELECTIONS[key] = list(space(arch).enumerate())
    return _SELECTIONS[key]  # type: ignore[return-value]


@functools.lru_cache(maxsize=None)
def ck_lists(arch: str = "gfx950") -> tuple[list[str], list[str]]:
    """Names of CK's own full-tests and tiny (the independent reference of tests/reference)."""
    from reference import ck_full

    configs = ck_full.full_configs(arch)
    ft = ck_full.full_tests(configs)
    return [c["name"] for c in ft], [c["name"] for c in ck_full.tiny(ft)]
