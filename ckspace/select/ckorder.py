"""CK's generation order of the `full` rule set (the loops of CK's grouped_config_rules_full.py get_configs) as a
sort key over ckspace's configs.

ckspace states `full` as constraints and lists it sorted by name; CK's `full-tests` and `tiny` subsets (CK's
grouped_config_rules_full_tests.py _select_test_configs, _select_tiny_configs) are every-fifth picks over CK's own
emission order. `CkOrder.key` gives each config of ckspace's `full` its place in that order, computed from the
curation tables (constraints/tables/ck/*.toml, list orders as CK's) and the loop order in tables/ck/order.toml:

variant -> ndim -> dtype -> block (the base block, then each FeatureSpec in list order) -> tile (the block's tile
list) -> (wave, warp m x n) pair -> vec triple (ascending) -> (pipeline, scheduler) -> specialization; the
depthwise configs follow all of `depthwise_after`'s GEMM loops, param-major, then dtype.

The (wave, warp) pairs of a tile come in the curated order (wave strategies, then each wave's warp candidates). When
no curated pair survives for a tile, CK's fallback (get_wave_warp_pairs) walks tile_math's pairs instead: the arch's
warp tiles in table order, for each one wave_m descending, then wave_n descending, then wave_k ascending (CK's
tile_math.get_valid_wave_warp_pairs); a repeat (m, n) from a later warp tile is dropped by CK's dedup, so a pair sits
where its (m, n) first occurs. A fallback pair is never a curated candidate (it would have survived the curated
filters), so whether a config's pair is a curated candidate tells which of the two orders its tile followed.
"""

from __future__ import annotations

import operator
from typing import Any, Literal, Mapping, Sequence, cast

from ..errors import DataError
from ..rules.curation import FEATURE_COLUMNS, PLAIN_FEATURES, CkCuration, parse_pair
from ..rules.data import DataSet

Config = Mapping[str, Any]
Key = tuple[int, ...]
Block = tuple[tuple, list[str], "list[tuple[str, str]] | None"]  # feature key, tiles, pipeline override (or None)
Place = tuple[int, int, dict]  # a tile's place: its block's index, its index in the block, its pipeline order
DEPTHWISE = "forward_depthwise"


class CkOrder:
    """The sort key of CK's generation order for the configs of one arch's `full`."""

    def __init__(self, data: DataSet, arch: str):
        if "order" not in data.ck_raw:
            raise DataError("tables/ck/order.toml is missing (CK's generation order, grouped_config_rules_full.py get_configs)")
        order = data.ck_raw["order"]
        self.curation = CkCuration(data.ck_raw, data.archs[arch])
        self.arch = data.archs[arch]
        self.variants = {v: i for i, v in enumerate(order["variants"])}
        self.ndims = {int(n): i for i, n in enumerate(order["ndims"])}
        self.dtypes = {d: i for i, d in enumerate(order["dtypes"])}
        self.specs = {s: i for i, s in enumerate(order["specializations"])}
        self.depthwise_after = str(order["depthwise_after"])
        dw = data.ck_raw["depthwise"]
        self.dw_columns = tuple(dw["columns"])
        self.dw_rows = {tuple(row): i for i, row in reversed(list(enumerate(dw["rows"])))}  # first row wins
        self._blocks: dict[tuple[str, int, str], list[Block]] = {}
        # pipeline tables and wave/warp keys, per block, tile and pair: a 5-tuple key (a block and tile) holds a Place
        # or False, an 8-tuple key (a wave/warp pair) a Key
        self._memo: dict[tuple, Place | Literal[False] | Key] = {}
        self._fast: dict[tuple, tuple[Key, dict]] = {}  # _BLOCK_AND_PAIR values -> (key head, pipeline order)

    def _index(self, table: Mapping[Any, int], value: Any, what: str, config: Config) -> int:
        if value not in table:
            raise DataError(f"{config.get('name', config)}: {what} {value!r} is not in CK's generation order")
        return table[value]

    def _block_list(self, variant: str, ndim: int, dtype: str) -> list[Block]:
        """The blocks CK walks for (variant, ndim, dtype): the base block, then the features that allow the dtype."""
        cache_key = (variant, ndim, dtype)
        if cache_key not in self._blocks:
            base = self.curation.raw["tiles"]["tiles"].get(variant, {}).get(f"{ndim}d.{dtype}", [])
            blocks: list[Block] = [(PLAIN_FEATURES, list(base), None)]
            for feature in self.curation.features(variant):
                if self.curation.feature_allows(feature, dtype):
                    pipes = [parse_pair(p) for p in feature["pipelines"]] if feature.get("pipelines") else None
                    blocks.append((self.curation.feature_key(feature), list(feature["tiles"]), pipes))
            self._blocks[cache_key] = blocks
        return self._blocks[cache_key]

    def _pair_key(self, config: Config, tile: str) -> Key:
        variant, dtype = str(config["variant"]), str(config["dtype"])
        wave = (int(config["wave_m"]), int(config["wave_n"]), int(config["wave_k"]))
        mn = (int(config["warp_tile_m"]), int(config["warp_tile_n"]))
        for w_index, strategy in enumerate(self.curation.wave_strategies(variant, tile)):
            if strategy == wave:
                candidates = self.curation.warp_candidates(variant, tile, wave)
                if mn in candidates:
                    return (0, w_index, candidates.index(mn), 0, 0)
        # the fallback: tile_math's order, each (m, n) where it first occurs among the arch's warp tiles
        firsts = [(wt[0], wt[1]) for wt in self.arch["warp_tiles"].get(dtype, ())]
        if mn not in firsts:
            raise DataError(f"{config.get('name', config)}: warp tile {mn[0]}x{mn[1]} is neither a curated choice nor "
                            f"among {self.arch['name']}'s {dtype} warp tiles")
        return (1, firsts.index(mn), -wave[0], -wave[1], wave[2])

    def _block(self, variant: str, ndim: int, dtype: str, tile: str,
               feature: tuple) -> "Place | Literal[False]":
        """The first block of (variant, ndim, dtype) with this feature key that lists the tile: its index, the
        tile's index in it and its (pipeline, scheduler) order; False where no block does."""
        for b_index, (fkey, tiles, pipes) in enumerate(self._block_list(variant, ndim, dtype)):
            if fkey != feature or tile not in tiles:
                continue
            pipelines = pipes if pipes is not None else self.curation.tile_pipelines(variant, tile, dtype)
            return b_index, tiles.index(tile), {p: i for i, p in reversed(list(enumerate(pipelines)))}
        return False

    def key(self, config: Config) -> Key:
        """The config's place in CK's generation of `full` (tuples of equal length; smaller comes first).

        The parts a block, a tile and a wave/warp pair fix are looked up by those values (_fast); a config whose
        parts are not known yet, or that has no place, takes the full computation (_key), which says why."""
        if config["variant"] != DEPTHWISE:
            fixed = self._fast.get(_BLOCK_AND_PAIR(config))
            if fixed is not None:
                pipe = fixed[1].get((config["pipeline"], config["scheduler"]))
                spec = self.specs.get(config["specialization"])
                if pipe is not None and spec is not None:
                    return (*fixed[0], *map(int, _VECS(config)), pipe, spec)
        return self._key(config)

    def row_keys(self, keys: tuple[str, ...], rows: Sequence[tuple]) -> list[Key]:
        """key() of each row of one layout (`keys` names its columns), without a dict per row: the same lookups by
        column index; a row they do not place goes through key() as a dict (the full computation, which says why a
        config has no place)."""
        if "variant" not in keys or not all(k in keys for k in _ROW_FIELDS):
            return [self.key(dict(zip(keys, row))) for row in rows]
        at = {k: i for i, k in enumerate(keys)}
        block_and_pair = operator.itemgetter(*(at[k] for k in _BLOCK_AND_PAIR_FIELDS))
        pipeline_pair = operator.itemgetter(at["pipeline"], at["scheduler"])
        vecs = operator.itemgetter(at["vec_a"], at["vec_b"], at["vec_c"])
        variant, specialization = at["variant"], at["specialization"]
        fast, specs = self._fast, self.specs
        out: list[Key] = []
        for row in rows:
            if row[variant] != DEPTHWISE:
                fixed = fast.get(block_and_pair(row))
                if fixed is not None:
                    pipe = fixed[1].get(pipeline_pair(row))
                    spec = specs.get(row[specialization])
                    if pipe is not None and spec is not None:
                        out.append((*fixed[0], *map(int, vecs(row)), pipe, spec))
                        continue
            out.append(self._key(dict(zip(keys, row))))
        return out

    def _key(self, config: Config) -> Key:
        if config["variant"] == DEPTHWISE:
            row = tuple(config[c] for c in self.dw_columns)
            return (self._index(self.variants, self.depthwise_after, "variant", config), len(self.ndims),
                    self._index(self.dw_rows, row, "depthwise parameter row", config),
                    self._index(self.dtypes, config["dtype"], "dtype", config), *(0,) * 11)
        variant, ndim, dtype = str(config["variant"]), int(config["ndim"]), str(config["dtype"])
        head = (self._index(self.variants, variant, "variant", config), self._index(self.ndims, ndim, "ndim", config),
                self._index(self.dtypes, dtype, "dtype", config))
        tile = f"{config['tile_m']}x{config['tile_n']}x{config['tile_k']}"
        feature = tuple(config[f] for f in FEATURE_COLUMNS)
        # Thousands of configs share a block, a tile and a wave/warp pair: their parts of the key are computed once
        # (_memo): CK's order of gfx950's full set takes 0.04 s instead of 0.11 s.
        block = cast("Place | Literal[False] | None", self._memo.get((variant, ndim, dtype, tile, feature)))
        if block is None:
            block = self._memo[(variant, ndim, dtype, tile, feature)] = self._block(variant, ndim, dtype, tile,
                                                                                   feature)
        if block:
            b_index, t_index, pipe_table = block
            pair_key = (variant, dtype, tile, config["wave_m"], config["wave_n"], config["wave_k"],
                        config["warp_tile_m"], config["warp_tile_n"])
            pair = cast("Key | None", self._memo.get(pair_key))
            if pair is None:
                pair = self._memo[pair_key] = self._pair_key(config, tile)
            pipe = self._index(pipe_table, (config["pipeline"], config["scheduler"]), "pipeline/scheduler", config)
            spec = self._index(self.specs, config["specialization"], "specialization", config)
            self._fast[_BLOCK_AND_PAIR(config)] = ((*head, b_index, t_index, *pair), pipe_table)
            return (*head, b_index, t_index, *pair,
                    int(config["vec_a"]), int(config["vec_b"]), int(config["vec_c"]), pipe, spec)
        raise DataError(f"{config.get('name', config)}: tile {tile} with features {feature} is in no block of "
                        f"CK's {variant} {ndim}d {dtype} generation")


# A GEMM config's values that fix its key up to the vectors, the pipeline and the specialization.
_BLOCK_AND_PAIR_FIELDS = ("variant", "ndim", "dtype", "tile_m", "tile_n", "tile_k", *FEATURE_COLUMNS,
                          "wave_m", "wave_n", "wave_k", "warp_tile_m", "warp_tile_n")
_BLOCK_AND_PAIR = operator.itemgetter(*_BLOCK_AND_PAIR_FIELDS)
_VECS = operator.itemgetter("vec_a", "vec_b", "vec_c")
# The columns row_keys reads by index (a layout without one of them, depthwise's, takes key() per row).
_ROW_FIELDS = (*_BLOCK_AND_PAIR_FIELDS, "pipeline", "scheduler", "vec_a", "vec_b", "vec_c", "specialization")


def ck_sorted(configs: list[dict[str, Any]], data: DataSet, arch: str) -> list[dict[str, Any]]:
    """The configs of `full` in CK's generation order."""
    order = CkOrder(data, arch)
    return sorted(configs, key=order.key)
