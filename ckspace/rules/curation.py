"""CK's curation tables (constraints/tables/ck/*.toml) turned into relations that rules can test membership in.

CK states its choices as lookup tables with defaults, overrides and fallbacks (CK's grouped_config_rules_full.py:
_FWD_TILES and the other tile tables, the wave strategies, _WARP_MN_EXCEPTIONS, the vector strategies, the pipeline
tables, VARIANT_FEATURES, DEPTHWISE_PARAMS; each `get_*` function there reads one). This module resolves
those lookups once per arch into flat relations (`ck.tile`, `ck.wave_warp`, `ck.vec`, `ck.pipeline`,
`ck.depthwise`); the rules in rules/ck-curation.toml then say "the config's columns are a row of that relation".
"""

from __future__ import annotations

from typing import Any, Iterator

from ..memo import cached
from ..errors import DataError
from .relation import Relation

VARIANTS = ("forward", "bwd_data", "bwd_weight")
DTYPES = ("fp16", "bf16", "fp32")
FEATURE_COLUMNS = ("num_groups_to_merge", "split_image", "two_stage", "explicit_gemm", "streamk", "streamk_persistent")
PLAIN_FEATURES = (1, False, False, False, "none", False)


def dtype_class(dtype: str) -> str:
    """CK groups dtypes into classes: 'half' (fp16, bf16; max vector 8) and 'float' (fp32; max vector 4)."""
    return "float" if dtype == "fp32" else "half"


def parse_tile(text: str) -> tuple[int, int, int]:
    try:
        m, n, k = (int(v) for v in text.split("x"))
    except ValueError:
        raise DataError(f"tables/ck: bad tile {text!r}, expected MxNxK") from None
    return m, n, k


def parse_pair(text: str) -> tuple[str, str]:
    pipeline, _, scheduler = text.partition("/")
    if not scheduler:
        raise DataError(f"tables/ck: bad pipeline entry {text!r}, expected pipeline/scheduler")
    return pipeline, scheduler


CURATION_TABLES = ("tile", "wave_warp", "vec", "pipeline", "depthwise")  # ck.<name>: CkCuration._build_<name>


class CkCuration:
    """Resolves CK's tables for one arch (the warp-tile fallback of CK's get_wave_warp_pairs depends on the arch's
    facts)."""

    def __init__(self, raw: dict[str, dict[str, Any]], arch_facts: dict[str, Any]):
        for part in ("tiles", "waves", "warp_tiles", "vectors", "pipelines", "features", "depthwise"):
            if part not in raw:
                raise DataError(f"tables/ck/{part}.toml is missing")
        self.raw = raw
        self.arch = arch_facts

    @cached("rules.curation.relation", maxsize=None)
    def relation(self, name: str) -> Relation:
        builder = getattr(self, f"_build_{name}", None)
        if builder is None:
            raise DataError(f"unknown table 'ck.{name}' (ck tables: tile, wave_warp, vec, pipeline, depthwise)")
        try:
            return builder()
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"tables/ck: cannot build ck.{name}: {type(exc).__name__} {exc}") from None

    # -- tiles and features (get_tiles, VARIANT_FEATURES) ---------------------------------------------------------
    def features(self, variant: str) -> list[dict[str, Any]]:
        return list(self.raw["features"].get("feature", {}).get(variant, []))

    @staticmethod
    def feature_key(feature: dict[str, Any]) -> tuple:
        return (
            int(feature.get("num_groups_to_merge", 1)), bool(feature.get("split_image", False)),
            bool(feature.get("two_stage", False)), bool(feature.get("explicit_gemm", False)),
            str(feature.get("streamk", "none")), bool(feature.get("streamk_persistent", False)),
        )

    @staticmethod
    def feature_allows(feature: dict[str, Any], dtype: str) -> bool:
        classes = feature.get("dtype_classes")
        return not classes or dtype_class(dtype) in classes

    def _build_tile(self) -> Relation:
        rows = []
        for variant, per in self.raw["tiles"]["tiles"].items():
            for key, tiles in per.items():
                ndim_text, dtype = key.split(".")
                ndim = int(ndim_text.rstrip("d"))
                rows += [(variant, ndim, dtype, *parse_tile(t), *PLAIN_FEATURES) for t in tiles]
        for variant in VARIANTS:
            for feature in self.features(variant):
                for dtype in DTYPES:
                    if not self.feature_allows(feature, dtype):
                        continue
                    for ndim in (2, 3):  # CK's FeatureSpec.ndims is never set
                        rows += [(variant, ndim, dtype, *parse_tile(t), *self.feature_key(feature)) for t in feature["tiles"]]
        return Relation.build("ck.tile", ("variant", "ndim", "dtype", "tile_m", "tile_n", "tile_k", *FEATURE_COLUMNS), rows,
                              "ROCm/composable_kernel@610e69bf dispatcher/codegen/grouped_conv/"
                              "grouped_config_rules_full.py:47-72 "
                              "_FWD_TILES, _BWD_DATA_TILES, _BWD_WEIGHT_TILES, "
                              "109-115 get_tiles; 1199-1262 VARIANT_FEATURES (tile_override)")

    # -- waves and warp tiles (get_wave_strategies, get_wave_warp_pairs) ---------------------------------------------
    def wave_strategies(self, variant: str, tile: str) -> list[tuple[int, int, int]]:
        waves = self.raw["waves"]
        names = waves.get("override", {}).get(variant, {}).get(tile) or waves["base"].get(tile) or ["SINGLE"]
        return [tuple(waves["strategies"][n]) for n in names]

    def warp_candidates(self, variant: str, tile: str, wave: tuple[int, int, int]) -> list[tuple[int, int]]:
        """The curated warp (m, n) candidates of a (variant, tile, wave) in CK's order, before any filter (CK's
        _default_warp_mn and _WARP_MN_EXCEPTIONS, as get_warp_configs_for_tile_and_wave reads them)."""
        for exc in self.raw["warp_tiles"].get("exception", []):
            if exc["variant"] == variant and exc["tile"] == tile and tuple(exc["wave"]) == wave:
                return [tuple(mn) for mn in exc["warp_mn"]]
        tm, tn, _ = parse_tile(tile)
        pm, pn = tm // wave[0], tn // wave[1]
        return [(32, 32)] if pm >= 32 and pn >= 32 and pm % 32 == 0 and pn % 32 == 0 else [(16, 16)]

    def _tile_math_pairs(self, tile: tuple[int, int, int], dtype: str) -> list[tuple[tuple[int, int, int], tuple[int, int]]]:
        """tile_math.get_valid_wave_warp_pairs: every arch wave x every arch warp tile that divides the block tile."""
        tm, tn, _ = tile
        pairs = []
        for wave in self.arch["wave_layouts"]:
            for wt in self.arch["warp_tiles"].get(dtype, ()):
                if tm % (wave[0] * wt[0]) == 0 and tn % (wave[1] * wt[1]) == 0:
                    pairs.append((tuple(wave), (wt[0], wt[1])))
        return pairs

    def wave_warp_pairs(self, variant: str, dtype: str, tile: str) -> list[tuple[tuple[int, int, int], tuple[int, int]]]:
        tm, tn, tk = parse_tile(tile)
        excluded = {tuple(mn) for mn in self.raw["warp_tiles"].get("excluded_mn", [])}
        arch_mn = {(wt[0], wt[1]) for wt in self.arch["warp_tiles"].get(dtype, ())}
        gate = set(self._tile_math_pairs((tm, tn, tk), dtype))
        kept = []
        for wave in self.wave_strategies(variant, tile):
            for mn in self.warp_candidates(variant, tile, wave):
                if mn in excluded or mn not in arch_mn:
                    continue
                if tm % (wave[0] * mn[0]) or tn % (wave[1] * mn[1]):
                    continue
                if (wave, mn) in gate:
                    kept.append((wave, mn))
        if kept:
            return kept
        # Fallback (CK's get_wave_warp_pairs): no curated pair survived, so CK takes every tile_math pair, keeping
        # (m, n) only.
        return list(dict.fromkeys(self._tile_math_pairs((tm, tn, tk), dtype)))

    def _all_tiles(self, variant: str) -> list[str]:
        tiles: dict[str, None] = {}
        for per in self.raw["tiles"]["tiles"].get(variant, {}).values():
            tiles.update(dict.fromkeys(per))
        for feature in self.features(variant):
            tiles.update(dict.fromkeys(feature["tiles"]))
        return list(tiles)

    def _build_wave_warp(self) -> Relation:
        rows = []
        for variant in VARIANTS:
            for tile in self._all_tiles(variant):
                for dtype in DTYPES:
                    for wave, mn in self.wave_warp_pairs(variant, dtype, tile):
                        rows.append((variant, dtype, *parse_tile(tile), *wave, *mn))
        cols = ("variant", "dtype", "tile_m", "tile_n", "tile_k", "wave_m", "wave_n", "wave_k", "warp_tile_m", "warp_tile_n")
        return Relation.build("ck.wave_warp", cols, rows,
                              "ROCm/composable_kernel@610e69bf dispatcher/codegen/grouped_conv/"
                              "grouped_config_rules_full.py:184-263 "
                              "_BASE_TILE_WAVE_STRATEGIES, _WAVE_STRATEGY_OVERRIDES, "
                              "317-338 get_wave_strategies; 271-299 _WARP_MN_EXCEPTIONS, _default_warp_mn; "
                              "464-502 get_wave_warp_pairs (fallback to every tile_math pair at 495-500)")

    # -- vectors (get_vec_strategies, get_extra_vec_triples) -------------------------------------------------------
    def vec_candidates(self, variant: str, tile: str, dclass: str) -> list[tuple[int, int, int]]:
        vec = self.raw["vectors"]
        table = vec["table"].get(variant, {})
        extras = [tuple(t) for t in vec.get("extra", {}).get(variant, {}).get(tile, {}).get(dclass, [])]
        if tile not in table:  # GENERIC only when the tile is entirely absent from the variant's table
            strategies = [tuple(vec["strategies"]["GENERIC"][dclass])]
        else:
            strategies = [tuple(vec["strategies"][s][dclass]) for s in table[tile].get(dclass, [])]
        return sorted(set(strategies + extras))

    def _build_vec(self) -> Relation:
        rows = []
        for variant in VARIANTS:
            for tile in self._all_tiles(variant):
                for dtype in DTYPES:
                    rows += [(variant, dtype, *parse_tile(tile), *v) for v in self.vec_candidates(variant, tile, dtype_class(dtype))]
        cols = ("variant", "dtype", "tile_m", "tile_n", "tile_k", "vec_a", "vec_b", "vec_c")
        return Relation.build("ck.vec", cols, rows,
                              "ROCm/composable_kernel@610e69bf dispatcher/codegen/grouped_conv/"
                              "grouped_config_rules_full.py:612-719 "
                              "_FWD_TILE_STRATEGIES, _BWD_DATA_TILE_STRATEGIES, "
                              "_BWD_WEIGHT_TILE_STRATEGIES, 722-751 get_vec_strategies; 763-829 _EXTRA_VEC_TRIPLES, "
                              "get_extra_vec_triples")

    # -- pipelines (get_pipelines_for_tile, VARIANT_FEATURES) ------------------------------------------------------
    def tile_pipelines(self, variant: str, tile: str, dtype: str) -> list[tuple[str, str]]:
        pip = self.raw["pipelines"]
        override = pip.get("override", {}).get(variant, {}).get(tile, {})
        dclass = dtype_class(dtype)
        if dclass in override:  # an empty override list means no configs at all
            return [parse_pair(p) for p in override[dclass]]
        return [parse_pair(p) for p in pip["curated"].get(variant, {}).get(tile, [])]

    def _pipeline_rows(self, variant: str) -> Iterator[tuple]:
        per = self.raw["tiles"]["tiles"].get(variant, {})
        base_tiles = {t for tiles in per.values() for t in tiles}
        for tile in sorted(base_tiles):
            for dtype in DTYPES:
                for p, s in self.tile_pipelines(variant, tile, dtype):
                    yield (variant, dtype, *parse_tile(tile), *PLAIN_FEATURES, p, s)
        for feature in self.features(variant):
            for tile in feature["tiles"]:
                for dtype in DTYPES:
                    if not self.feature_allows(feature, dtype):
                        continue
                    pairs = ([parse_pair(p) for p in feature["pipelines"]] if feature.get("pipelines")
                             else self.tile_pipelines(variant, tile, dtype))
                    for p, s in pairs:
                        yield (variant, dtype, *parse_tile(tile), *self.feature_key(feature), p, s)

    def _build_pipeline(self) -> Relation:
        rows = [row for variant in VARIANTS for row in self._pipeline_rows(variant)]
        cols = ("variant", "dtype", "tile_m", "tile_n", "tile_k", *FEATURE_COLUMNS, "pipeline", "scheduler")
        return Relation.build("ck.pipeline", cols, rows,
                              "ROCm/composable_kernel@610e69bf dispatcher/codegen/grouped_conv/"
                              "grouped_config_rules_full.py:855-991 "
                              "_*_TILE_PIPELINES, _*_TILE_PIPELINES_DCLASS, "
                              "994-1064 get_pipelines_for_tile; 1199-1262 VARIANT_FEATURES (pipeline_override)")

    # -- depthwise (DEPTHWISE_PARAMS) --------------------------------------------------------------------------------
    def _build_depthwise(self) -> Relation:
        dw = self.raw["depthwise"]
        return Relation.build("ck.depthwise", tuple(dw["columns"]), dw["rows"],
                              "ROCm/composable_kernel@610e69bf dispatcher/codegen/grouped_conv/"
                              "grouped_config_rules_full.py:1425-1449 "
                              "DEPTHWISE_PARAMS, 1452-1470 get_depthwise_configs")
