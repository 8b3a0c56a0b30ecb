"""Streaming the configs of a stratum whose bags are too large to solve whole (the open space).

ckspace.solve.walk joins bags that were each enumerated completely. In the open space (curation tables off) one bag can
hold millions of local solutions (10^7 for a depthwise one): listing them all before the first config costs minutes
and gigabytes. This walk solves bags on demand instead, with the same join and the very same order:

* A bag whose model has at most WHOLE_LIMIT solutions is solved whole, once, and indexed by its separator value (as
  ckspace.solve.walk does). Subtrees made of such bags get their count messages, so a parent row none of whose configs
  survives there is skipped without solving anything.
* Any other bag is solved *conditioned*: for a separator value (given by the parent's row), its CP-SAT model is
  solved with the separator fields pinned to that value. The model is built once per bag; pinning sets the domains
  of its variables, so a conditioned solve is one CP-SAT search over a small remainder (about 0.1 ms). Results are
  kept in a least-recently-used cache bounded by rows.
* A conditioned solve lists at most LEAF_LIMIT rows. Beyond that it is split on the bag's next unpinned field (in
  bag field order), one solve per value in ascending order, recursively. The rows of a bag are sorted
  lexicographically in bag field order, so the leaves, taken in that order, list the rows in exactly the order of
  the whole bag's sorted solutions (which is what ckspace.solve.walk walks).

Every row comes from a CP-SAT solution of the bag's model, which holds every constraint whose scope lies inside the
bag; every config is a join of such rows over a tree decomposition, so it satisfies every constraint. Nothing is
skipped or listed twice: the leaves of a split partition the solutions by the pinned values.

Memory stays bounded: the rows cache and the cache of small subtree expansions are LRU with fixed budgets, and
only the split path in progress holds its leaves.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from typing import Iterable, Iterator, Mapping, Sequence, cast

from . import jointree, walk
from .bags import Bag, Key, Row, Stats, TooLarge, bag_model, message, solve_bag
from ..rules.data import FieldDef

# A bag with at most this many local solutions is solved whole and indexed (like a CK-sized bag).
WHOLE_LIMIT = 4_000
# A bag whose estimated size (an upper bound from field domains and tables, see folded.size_model) is above
# WHOLE_LIMIT times this is not even tried whole: a failed attempt lists WHOLE_LIMIT solutions, up to a second.
WHOLE_PROBE = 4
# A conditioned solve lists at most this many rows; a larger one is split on the next field.
LEAF_LIMIT = 2_000
# A conditioned solve whose estimated size is above LEAF_LIMIT (or BATCH_LIMIT) times this is split (or made finer)
# without an attempt.
SPLIT_PROBE = 64
# A batch (a conditioned solve for several separator values at once) lists at most this many rows.
BATCH_LIMIT = 512
# Rows kept by the cache of conditioned solves (per walk).
ROW_BUDGET = 200_000
# Subtree expansions of at most MEMO_LIMIT configs are kept for reuse under other parent rows, up to MEMO_BUDGET
# configs in all (per walk).
MEMO_LIMIT = 5_000
MEMO_BUDGET = 200_000


def _raw_domain(f: FieldDef) -> list[int]:
    if f.type == "bool":
        return [0, 1]
    if f.type == "enum":
        return list(range(len(f.values)))
    return sorted(f.values)


class BagSolver:
    """One bag's CP-SAT model, built once and solved repeatedly with some of its fields pinned to single values."""

    def __init__(self, fields: Mapping[str, FieldDef], fac: Bag, stats: Stats,
                 timings: dict[str, float] | None = None):
        t0 = time.process_time()
        cp, variables = bag_model(fields, fac)
        self.cp = cp
        self.vars = [variables[n] for n in fac.fields]
        self.protos = [cp.proto.variables[v.index] for v in self.vars]
        self.original = [list(p.domain) for p in self.protos]
        self.pinned: set[int] = set()
        self.stats = stats
        self.timings = timings if timings is not None else {}
        self.timings["compile"] = self.timings.get("compile", 0.0) + time.process_time() - t0

    def solve(self, pins: Mapping[int, int], limit: int | None) -> list[Row]:
        """The bag's solutions with field pos == value for every (pos, value) in `pins`, sorted.

        Raises OverflowError when there are more than `limit`.
        """
        from .cpsat import enumerate_all

        for pos in self.pinned - pins.keys():
            dom = self.protos[pos].domain
            dom.clear()
            dom.extend(self.original[pos])
        for pos, value in pins.items():
            dom = self.protos[pos].domain
            dom.clear()
            dom.extend((value, value))
        self.pinned = set(pins)
        self.stats.models += 1
        t0 = time.process_time()
        try:
            rows = enumerate_all(self.cp, self.vars, limit)
        except OverflowError:
            self.stats.rows += (limit or 0) + 1
            self.stats.overflows += 1
            raise
        finally:
            self.timings["solve"] = self.timings.get("solve", 0.0) + time.process_time() - t0
        self.stats.rows += len(rows)
        return rows


class LazyWalker:
    """The configs of a stratum's join tree, solving bags on demand. Same interface as walk.Walker."""

    def __init__(self, fields: Mapping[str, FieldDef], factors: Sequence[Bag], stats: Stats | None = None,
                 timings: dict[str, float] | None = None, size: object = None):
        self.fields = fields
        self.factors = factors
        self.stats = stats if stats is not None else Stats()
        self.timings = timings
        self.size = size
        self.leaf_limit = max(LEAF_LIMIT, 1)
        whole_limit = WHOLE_LIMIT
        n = len(factors)
        self.decoders = [[walk._decoder(fields[fac.fields[j]]) for j in fac.own] for fac in factors]
        # Per bag, the positions a conditioned solve may split on: those outside the separator, in bag order.
        self.free = [tuple(j for j in range(len(fac.fields)) if j not in fac.key) for fac in factors]
        self.domains = [[_raw_domain(fields[name]) for name in fac.fields] for fac in factors]
        self.solvers: list[BagSolver | None] = [None] * n
        # Whole bags: rows by separator value; None for a conditioned bag.
        self.whole: list[dict[Key, list[Row]] | None] = [None] * n
        for i, fac in enumerate(factors):
            if self._too_large(fac, whole_limit, size):
                continue
            try:
                rows = solve_bag(fields, fac, timings, limit=whole_limit, stats=self.stats)
            except TooLarge:
                continue
            index: dict[Key, list[Row]] = {}
            for row in rows:
                index.setdefault(tuple([row[j] for j in fac.key]), []).append(row)
            self.whole[i] = index
        # Count messages of the subtrees that are whole throughout: separator value -> configs. A parent row whose
        # value for such a child has no entry has no config, and is skipped.
        self.messages: list[dict[Key, int] | None] = [None] * n
        for i in jointree.postorder([f.children for f in factors], [i for i, f in enumerate(factors) if f.parent is None]):
            fac = factors[i]
            if self.whole[i] is None or any(self.messages[c] is None for c in fac.children):
                continue
            kids = [(self.messages[c], factors[c].parent_key) for c in fac.children]
            # The bag is whole here (checked above; mypy does not narrow an indexed list).
            bag_rows = (row for group in cast("dict[Key, list[Row]]", self.whole[i]).values() for row in group)
            self.messages[i] = message(bag_rows, fac.key, kids)  # type: ignore[arg-type]
        # Walk order of each conditioned bag's separator fields, slowest first: fields an upper bag supplies vary
        # slower than those of a lower one, and inside a bag its rows vary in field order.
        owner: dict[str, tuple[int, int]] = {}
        self.slow: list[tuple[int, ...]] = []
        self.at_key: list[dict[int, int]] = []  # bag position -> index in the separator value
        depths = _depths(factors)
        for i, fac in enumerate(factors):
            for j in fac.own:
                owner.setdefault(fac.fields[j], (depths[i], j))
        for fac in factors:
            self.at_key.append({j: n for n, j in enumerate(fac.key)})
            self.slow.append(tuple(sorted(fac.key, key=lambda j: owner.get(fac.fields[j], (0, 0)))))
        # Per conditioned bag: how many of the slow fields a batch pins (all: one separator value per search), and
        # the fewest that did not overflow.
        self.level = [len(fac.key) for fac in factors]
        self.floor = [min(1, len(fac.key)) for fac in factors]
        self.cache: OrderedDict[tuple, object] = OrderedDict()
        self.cache_size: dict[tuple, int] = {}
        self.cached_rows = 0
        self.memo: OrderedDict[tuple[int, Key], list[tuple]] = OrderedDict()
        self.memo_size = 0

    @staticmethod
    def _too_large(fac: Bag, whole_limit: int, size: object) -> bool:
        """Planning only: skip the whole-bag attempt when the bag's estimated size is far beyond the limit."""
        if size is None or not fac.constraints:
            return False
        return size(frozenset(fac.fields)) > math.log2(max(whole_limit, 1) * WHOLE_PROBE)  # type: ignore[operator]

    def _beyond(self, i: int, pinned: Iterable[int], limit: int) -> bool:
        """Planning only: whether the bag's solutions with the `pinned` positions fixed are estimated (by an upper
        bound) to be far more than `limit`, so that an attempt would surely be wasted."""
        if self.size is None:
            return False
        fac = self.factors[i]
        rest = frozenset(fac.fields) - {fac.fields[j] for j in pinned}
        return self.size(rest) > math.log2(max(limit, 1) * SPLIT_PROBE)  # type: ignore[operator]

    def names(self, i: int) -> list[str]:
        """The fields, in the order subtree(i, ...) yields their values."""
        return walk.subtree_names(self.factors, i)

    # -- rows of a bag under a separator value ------------------------------------------------------------------
    def _entry(self, i: int, row: Row) -> tuple[tuple, tuple[Key, ...]] | None:
        """(decoded own values, separator value for each child), or None when some child has no config there."""
        fac = self.factors[i]
        child_keys = []
        for c in fac.children:
            k = tuple([row[j] for j in self.factors[c].parent_key])
            m = self.messages[c]
            if m is not None and k not in m:
                return None
            child_keys.append(k)
        own = tuple([d(row[j]) for d, j in zip(self.decoders[i], fac.own)])
        return own, tuple(child_keys)

    def entries(self, i: int, key: Key) -> Iterable[tuple[tuple, tuple[Key, ...]]]:
        """The rows of bag i whose separator value is `key`, in sorted order, as entries."""
        hit = self.cache.get(("k", i, key))
        if hit is not None:
            self.cache.move_to_end(("k", i, key))
            return cast("list[tuple[tuple, tuple[Key, ...]]]", hit)  # a "k" entry holds a list of entries
        whole = self.whole[i]
        if whole is not None:
            out = [e for e in map(lambda r: self._entry(i, r), whole.get(key, ())) if e is not None]
            if len(out) <= self.leaf_limit:
                self._remember(("k", i, key), out, len(out))
            return out
        while self.level[i] < len(self.slow[i]):
            group = self._batch(i, key)
            if group is not None:
                return group.get(key, ())
        return self._conditioned(i, key)

    def _remember(self, ck: tuple, value: object, size: int) -> None:
        self.cache[ck] = value
        self.cache_size[ck] = size + 1
        self.cached_rows += size + 1
        while self.cached_rows > ROW_BUDGET and self.cache:
            old, _ = self.cache.popitem(last=False)
            self.cached_rows -= self.cache_size.pop(old)

    def _solver(self, i: int) -> BagSolver:
        solver = self.solvers[i]
        if solver is None:
            solver = self.solvers[i] = BagSolver(self.fields, self.factors[i], self.stats, self.timings)
        return solver

    def _batch(self, i: int, key: Key) -> dict[Key, list] | None:
        """The rows of bag i for every separator value that agrees with `key` on the first `level` fields of the
        separator in walk order, grouped by separator value; None when that batch overflowed (the level was raised).

        A conditioned child bag is asked for one separator value per parent row, and neighbouring parent rows differ
        in the fields the walk varies fastest. Pinning only the slower fields answers many of those questions with
        one CP-SAT search (a search costs about 0.4 ms before its first row). The level adapts per bag: it drops
        (coarser batches) while batches stay small, and rises for good when one overflows BATCH_LIMIT.
        """
        s = self.level[i]
        slow = self.slow[i]
        fac = self.factors[i]
        pinned = slow[:s]
        values = tuple([key[self.at_key[i][j]] for j in pinned])
        ck = ("b", i, s, values)
        hit = self.cache.get(ck)
        if hit is not None:
            self.cache.move_to_end(ck)
            return hit  # type: ignore[return-value]
        try:
            rows = self._solver(i).solve(dict(zip(pinned, values)), BATCH_LIMIT)
        except OverflowError:
            self.floor[i] = self.level[i] = s + 1
            return None
        group: dict[Key, list] = {}
        for row in rows:
            e = self._entry(i, row)
            if e is not None:
                group.setdefault(tuple([row[j] for j in fac.key]), []).append(e)
        self._remember(ck, group, len(rows))
        if len(rows) * 4 < BATCH_LIMIT and s > self.floor[i]:
            if self._beyond(i, slow[:s - 1], BATCH_LIMIT):
                self.floor[i] = s  # the next coarser batches are estimated far too large
            else:
                self.level[i] = s - 1
        return group

    def _conditioned(self, i: int, key: Key) -> Iterator[tuple[tuple, tuple[Key, ...]]]:
        """The rows of bag i under the whole separator value `key`; split into several searches when too many."""
        solver = self._solver(i)
        pins = dict(zip(self.factors[i].key, key))
        try:
            if not key or self._beyond(i, pins, self.leaf_limit):
                raise OverflowError  # a root too large to solve whole, or estimated far beyond the limit: split
            rows = solver.solve(pins, self.leaf_limit)
        except OverflowError:
            pass
        else:
            out = [e for e in map(lambda r: self._entry(i, r), rows) if e is not None]
            self._remember(("k", i, key), out, len(rows))
            s = self.level[i]
            if s > self.floor[i] and len(rows) * 4 < BATCH_LIMIT:
                if self._beyond(i, self.slow[i][:s - 1], BATCH_LIMIT):
                    self.floor[i] = s
                else:
                    self.level[i] = s - 1
            yield from out
            return
        for row in self._split(i, solver, pins, 0):
            e = self._entry(i, row)
            if e is not None:
                yield e

    def _split(self, i: int, solver: BagSolver, pins: dict[int, int], depth: int) -> Iterator[Row]:
        """The rows under `pins`, known (or guessed) to be more than leaf_limit: one solve per value of the field at
        free position `depth`, ascending, each split again when it overflows.

        A value whose previous sibling was too large is split without trying it whole (neighbouring values have
        alike sizes, and a failed attempt costs leaf_limit solutions while a split costs a few tiny solves); after
        such a split, the number of rows it listed tells whether the next sibling is worth trying whole again.
        Such a value is first probed for one solution: the size estimate is an upper bound that knows nothing of
        most rules (nor of --where), and splitting an empty region field by field would cost one search per
        combination of its remaining values (hundreds of thousands on a depthwise root).
        """
        free = self.free[i]
        pos = free[depth]
        last = depth + 1 == len(free)  # every field pinned below: at most one row
        large = False
        for value in self.domains[i][pos]:
            sub = {**pins, pos: value}
            if not last and self._beyond(i, sub, self.leaf_limit):
                large = True
            if large and not last and not self._feasible(solver, sub):
                continue  # nothing here: the next sibling is still judged by the last one that had rows
            if not (large and not last):
                try:
                    rows = solver.solve(sub, None if last else self.leaf_limit)
                except OverflowError:
                    pass
                else:
                    large = False
                    yield from rows
                    continue
            n = 0
            for row in self._split(i, solver, sub, depth + 1):
                n += 1
                yield row
            large = n > self.leaf_limit

    @staticmethod
    def _feasible(solver: BagSolver, pins: dict[int, int]) -> bool:
        """Whether the bag has a solution under `pins`: one search stopped at its first solution."""
        try:
            solver.solve(pins, 0)
        except OverflowError:
            return True
        return False

    # -- the join -----------------------------------------------------------------------------------------------
    def subtree(self, i: int, key: Key) -> Iterable[tuple]:
        hit = self.memo.get((i, key))
        if hit is not None:
            self.memo.move_to_end((i, key))
            return hit
        m = self.messages[i]
        if m is not None and m.get(key, 0) > MEMO_LIMIT:
            return self._generate(i, key)
        return self._collect(i, key)

    def _collect(self, i: int, key: Key) -> Iterator[tuple]:
        buf: list[tuple] | None = []
        for t in self._generate(i, key):
            if buf is not None:
                buf.append(t)
                if len(buf) > MEMO_LIMIT:
                    buf = None
            yield t
        if buf is not None:
            self.memo[(i, key)] = buf
            self.memo_size += len(buf) + 1
            while self.memo_size > MEMO_BUDGET and self.memo:
                _, old = self.memo.popitem(last=False)
                self.memo_size -= len(old) + 1

    def _generate(self, i: int, key: Key) -> Iterator[tuple]:
        children = self.factors[i].children
        for own, child_keys in self.entries(i, key):
            if not children:
                yield own
                continue
            parts = [(lambda c=c, k=k: self.subtree(c, k)) for c, k in zip(children, child_keys)]
            for tail in walk.product(parts):
                yield own + tail


def _depths(factors: Sequence[Bag]) -> list[int]:
    out = [0] * len(factors)
    for i, fac in enumerate(factors):  # parents come before children
        if fac.parent is not None:
            out[i] = out[fac.parent] + 1
    return out

