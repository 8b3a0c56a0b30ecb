"""Kernels of a space by their rank, without listing it: the count's variable elimination, kept and walked back.

Counting a stratum by variable elimination (ckspace.solve.count) sums its fields out one by one: eliminating field
x multiplies the factors that read x (its bucket: input tables, whose rows count 1, and the messages of earlier
eliminations) and sums x out, leaving a message over x's neighbours. Kept, the buckets number the stratum's
configs: every config gets one rank in [0, count), and a rank gives its config back (unranking), field by field in
the reverse order of elimination:

* the rank is a residual r with r < the count still to be split (the product of what is left at the end);
* at the bucket of x, with every field eliminated later already fixed, each value v of x weighs
  w(v) = the product over the bucket of each factor at (v, the fixed fields): the configs of the fields eliminated
  before x that extend the fixed fields and v. Their sum is the message x's elimination left, evaluated at the
  fixed fields, so r < it. The values in ascending order take consecutive blocks of ranks: x gets the value whose
  block holds r, and r becomes the offset inside it;
* that offset, r < w(v), is split among the bucket's factors in mixed radix (r = r1 + f1 * (r2 + f2 * ...)), and
  each part goes to the elimination that made that factor: the fields of different branches of the elimination
  are independent given the fixed fields, so their ranks multiply like digits.

Every step is exact integer arithmetic (int64 where a bound shows it cannot overflow, Python integers otherwise),
so ranks and configs are in one-to-one correspondence: `random.Random(seed).sample(range(count), n)` over the
ranks is a uniform sample of n distinct configs, with no rejection and no listing, for any n up to the count.

`keep` leaves some free fields out of the elimination (the --stratify fields): what is left is then a table over
them, the number of configs per combination of their values (the `top` rows), and a rank is taken inside one top
row. Fields no constraint reads multiply the count by their domain size and are digits of the rank too. Hidden
helper fields (ckspace.solve.abstract) are functions of the real ones, so ranks over (real, hidden) assignments
are ranks over configs.

Unranking is vectorized over the ranks drawn (numpy): a sample of 1,000 kernels of gfx950's open space
(43,639,549,726,800 kernels) spends nearly all of its time solving the count's factors, as the count does.
tests/test_sampling.py checks it against brute force: every rank of random factor products, each assignment
exactly as often as its weight.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence, cast

from ..memo import memo
from . import count, walk
from .bags import domain_rows
from ..errors import UsageError
from ..rules.data import FieldDef

SAFE = 2**62  # int64 arithmetic is used where every value involved is below this
TOP_LIMIT = 1_000_000  # rows of a stratum's table over its kept (stratify) fields


def _int_values(values: Sequence[object]) -> bool:
    return all(type(v) is int for v in values)


class Eliminated:
    """The configs of one factored stratum, numbered: `top` rows (raw values of the kept fields, their count) and
    `unrank` from (top row, rank) to the raw values of every field of `names`.

    `factors` are count tables over `names` (ckspace.solve.count.CountFactor), `order` the fields to sum out, in
    that order (count.order_for: every field some factor reads, but the kept ones), `domains` the raw values of each
    field (those of a field no factor reads are digits of the rank, or columns of `top` when it is kept), `keep`
    the fields that are not eliminated.
    """

    def __init__(self, names: Sequence[str], factors: Sequence[count.CountFactor], order: Sequence[str],
                 domains: Mapping[str, Sequence[object]], keep: Sequence[str] = ()):
        import numpy as np

        self.np = np
        self.names = list(names)
        self.keep = tuple(keep)
        self.column = {n: j for j, n in enumerate(self.names)}
        read = {f for fac in factors for f in fac.fields}
        # Fields no factor reads: digits of the rank (kept ones are columns of the top table instead).
        self.uniform = [(n, list(domains[n])) for n in self.names if n not in read and n not in self.keep]
        self.steps: list[tuple[str, list[count.CountFactor], count.CountFactor]] = []
        pool = count.eliminate_steps(list(factors), order, self.steps)
        self.producer = {id(msg): s for s, (_, _, msg) in enumerate(self.steps)}
        self.left = pool or []
        # Codes: each field's raw values, sorted, numbered from 0 (unranking works on these small integers).
        seen: dict[str, set] = {n: set() for n in self.names}
        for fac in factors:  # a message's values of a field are some of its inputs' values
            if fac.table is None and fac.rows is not None:  # numpy rows (the open space's bags): distinct values
                for j, n in enumerate(fac.fields):  # per column in C, never a dict of millions of tuples
                    seen[n].update(np.unique(fac.rows[:, j]).tolist())
                continue
            table = fac.as_table()
            if table:  # a column at a time (zip in C): the rows of the open space's bags run to millions
                for n, column in zip(fac.fields, zip(*table)):
                    seen[n].update(column)
        for n, values in self.uniform:
            seen[n].update(values)
        self.values = {n: sorted(v) for n, v in seen.items()}
        self.code = {n: {v: i for i, v in enumerate(vs)} for n, vs in self.values.items()}
        self.top: list[tuple[tuple, int]] = []
        if pool is not None:
            self.top = self._top(domains)
        self.total = sum(c for _, c in self.top)
        self._prepared: list[Any] | None = None

    def _top(self, domains: Mapping[str, Sequence[object]]) -> list[tuple[tuple, int]]:
        """The table left after the elimination, over the kept fields in `keep` order, times the constants and
        the domains of the fields no factor reads: rows sorted by value, with their number of configs."""
        acc = count.CountFactor((), {(): 1})
        for fac in self.left:
            acc = count._join(acc, fac) if fac.fields else count.CountFactor(
                acc.fields, {row: n * fac.as_table().get((), 0) for row, n in acc.as_table().items()})
            if acc.size() > TOP_LIMIT:
                raise UsageError(f"--stratify: more than {TOP_LIMIT:,} combinations of the values of "
                                 f"{', '.join(self.keep)} in one stratum; stratify by fewer dimensions")
        for n in self.keep:
            if n not in acc.fields:  # a kept field no factor reads: every value of its domain
                acc = count._join(acc, count.CountFactor((n,), {(v,): 1 for v in domains[n]}))
                self.values[n] = sorted(set(self.values[n]) | set(domains[n]))
                self.code[n] = {v: i for i, v in enumerate(self.values[n])}
        multiplier = 1
        for _, values in self.uniform:
            multiplier *= len(values)
        at = [acc.fields.index(n) for n in self.keep]
        rows = {tuple(row[j] for j in at): c * multiplier for row, c in acc.as_table().items() if c}
        if len(rows) > TOP_LIMIT:
            raise UsageError(f"--stratify: more than {TOP_LIMIT:,} combinations of the values of "
                             f"{', '.join(self.keep)} in one stratum; stratify by fewer dimensions")
        return sorted(rows.items())

    # -- unranking ----------------------------------------------------------------------------------------------
    def _coded(self, fac: count.CountFactor) -> tuple[Any, Any, list[int]]:
        """A factor's rows as codes (int64 matrix), its counts (int64, or Python integers past SAFE) and the
        columns of its fields."""
        np = self.np
        cols = [self.column[n] for n in fac.fields]
        arrays = fac.as_arrays(np) if fac.fields else None
        if arrays is not None and all(_int_values(self.values[n]) for n in fac.fields):
            rows, counts = arrays
            codes = np.stack([np.searchsorted(np.array(self.values[n], dtype=np.int64), rows[:, j])
                              for j, n in enumerate(fac.fields)], axis=1) if len(rows) else \
                np.zeros((0, len(fac.fields)), dtype=np.int64)
            return codes.astype(np.int64), counts, cols
        table = fac.as_table()
        codes = np.array([[self.code[n][v] for n, v in zip(fac.fields, row)] for row in table],
                         dtype=np.int64).reshape(len(table), len(fac.fields))
        return codes, _counts(np, list(table.values())), cols

    def _prepare(self) -> list[Any]:
        """Per step, the bucket as sorted lookup tables (made on the first unranking, kept for the next). The values
        of the field are proposed by the factor with the fewest rows per value of its other fields (the most
        selective; a message over many fields rather than a table over the field and a hidden term), and looked
        up in the others."""
        np = self.np
        if self._prepared is not None:
            return self._prepared
        out = []
        for name, bucket, _ in self.steps:
            x = self.column[name]
            coded = []
            for fac in bucket:
                codes, counts, cols = self._coded(fac)
                others = [j for j, c in enumerate(cols) if c != x]
                keys = _Keys(self, [self.names[cols[j]] for j in others], codes[:, others])
                spread = len(codes) / max(len(np.unique(keys.rows)), 1)
                coded.append((spread, fac, codes, counts, cols, others, keys))
            best = min(range(len(coded)), key=lambda j: (coded[j][0], j))
            _, first, codes, counts, cols, others, keys = coded[best]
            order = np.lexsort((codes[:, cols.index(x)], keys.rows))
            lookups = []
            factors = [first]
            for j, (_, fac, fcodes, fcounts, fcols, _, _) in enumerate(coded):
                if j == best:
                    continue
                fkeys = _Keys(self, list(fac.fields), fcodes)
                forder = np.argsort(fkeys.rows, kind="stable")
                lookups.append((fkeys, fkeys.rows[forder], fcounts[forder], fcols, _max(fcounts)))
                factors.append(fac)
            out.append((x, keys, [cols[j] for j in others], keys.rows[order], codes[order, cols.index(x)],
                        counts[order], _max(counts), lookups, factors))
        self._prepared = out
        return out

    def unrank(self, items: Sequence[tuple[int, int]]) -> dict[str, list[object]]:
        """The configs of (top row index, rank inside that row) pairs, as raw values per field of `names`."""
        np = self.np
        k = len(items)
        if not k:
            return {n: [] for n in self.names}
        codes = np.full((k, len(self.names)), -1, dtype=np.int64)
        residual: list[list[int | None]] = [[None] * k for _ in self.steps]
        for i, (t, rank) in enumerate(items):
            row, size = self.top[t]
            if not 0 <= rank < size:
                raise ValueError(f"rank {rank} outside [0, {size}) of top row {t}")
            values = dict(zip(self.keep, row))
            for n, v in values.items():
                codes[i, self.column[n]] = self.code[n][v]
            r = rank
            for fac in self.left:
                ways = fac.as_table().get(tuple(values[f] for f in fac.fields), 0)
                s = self.producer.get(id(fac))
                if s is not None:
                    residual[s][i] = r % ways
                r //= ways
            for name, domain in self.uniform:
                codes[i, self.column[name]] = self.code[name][domain[r % len(domain)]]
                r //= len(domain)
            assert r == 0, (rank, r)
        prepared = self._prepare()
        items_at = np.arange(k)
        for s in reversed(range(len(self.steps))):
            x, keys, other_cols, okeys, xcodes, counts, top_count, lookups, factors = prepared[s]
            r = _counts(np, residual[s])
            if (codes[:, other_cols] < 0).any():
                raise AssertionError(f"unranking: {self.names[x]}'s neighbours are not all fixed")
            # candidates: the rows of the bucket's first factor that agree with each item's fixed fields
            mine = keys.of(codes[:, other_cols])
            start = np.searchsorted(okeys, mine, "left")
            lengths = np.searchsorted(okeys, mine, "right") - start
            pairs = int(lengths.sum())
            item = np.repeat(items_at, lengths)
            within = np.arange(pairs) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            at = np.repeat(start, lengths) + within
            value = xcodes[at]
            weights = [counts[at]]
            bound = top_count
            for fkeys, frows, fcounts, fcols, fmax in lookups:
                query = codes[:, fcols][item]
                query[:, fcols.index(x)] = value
                wanted = fkeys.of(query)
                pos = np.searchsorted(frows, wanted, "left")
                found = pos < len(frows)
                found[found] = frows[pos[found]] == wanted[found]
                got = np.zeros(pairs, dtype=fcounts.dtype)
                got[found] = fcounts[pos[found]]
                weights.append(got)
                bound *= fmax
            big = bound * max(pairs, 1) >= SAFE or r.dtype == object
            w = weights[0].astype(object) if big else weights[0]
            for extra in weights[1:]:
                w = w * (extra.astype(object) if big else extra)
            cum = np.cumsum(w)
            if big:
                cum = cum.astype(object)
            if (lengths == 0).any():
                raise AssertionError(f"unranking: no value of {self.names[x]} for some rank")
            first = np.cumsum(lengths) - lengths
            target = (cum[first] - w[first]) + r
            pick = np.searchsorted(cum, target, "right")
            if (pick >= pairs).any() or (item[np.minimum(pick, pairs - 1)] != items_at).any():
                raise AssertionError(f"unranking: a rank past the configs of {self.names[x]}")
            codes[:, x] = value[pick]
            rest = target - (cum[pick] - w[pick])
            for fac, weight in zip(factors, weights):
                n = weight[pick].astype(object) if big else weight[pick]
                p = self.producer.get(id(fac))
                if p is not None:
                    residual[p] = (rest % n).tolist()
                rest = rest // n
            if (rest != 0).any():
                raise AssertionError("unranking: a residual left over")
        assert (codes >= 0).all()
        return {n: [self.values[n][c] for c in codes[:, j].tolist()] for j, n in enumerate(self.names)}


class _Keys:
    """One int64 per row of codes over `fields`, equal exactly where the rows are equal, and ordered as the rows
    are (lexicographically): mixed radix over the fields' code ranges, or, where that could overflow, ranks of the
    rows in a dict (-1 for a row not among them)."""

    def __init__(self, owner: Eliminated, fields: Sequence[str], rows: Any):
        np = owner.np
        self.np = np
        self.radix = [max(len(owner.values[f]), 1) for f in fields]
        space = 1
        for r in self.radix:
            space *= r
        self.rank: dict[tuple, int] | None = None
        if space >= SAFE:
            distinct = sorted(set(map(tuple, rows.tolist())))
            self.rank = {row: i for i, row in enumerate(distinct)}
        self.rows = self.of(rows)

    def of(self, rows: Any) -> Any:
        np = self.np
        if self.rank is not None:
            return np.array([self.rank.get(tuple(row), -1) for row in rows.tolist()], dtype=np.int64)
        out = np.zeros(len(rows), dtype=np.int64)
        for j, r in enumerate(self.radix):
            out = out * r + rows[:, j]
        return out


def _counts(np, values: Sequence[int | None]) -> Any:
    if any(v is None for v in values):
        raise AssertionError("unranking: a step without its residual")
    if values and max(cast("Sequence[int]", values)) >= SAFE:  # none is None (checked above)
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out
    return np.array(values, dtype=np.int64)


def _max(counts: Any) -> int:
    return int(max(counts.tolist())) if len(counts) else 0


# -- strata -----------------------------------------------------------------------------------------------------

# Per factored stratum (its kind, free fields and folded constraints) and kept fields: the elimination, kept. In
# the open space fp16 and bf16, and 2D and 3D, fold alike: gfx950's 21 non-empty strata have 8 shapes.
_ELIMINATED: "OrderedDict[tuple, Eliminated]" = memo("solve.sampling.eliminated", OrderedDict())
_FACTORED: "OrderedDict[tuple, count.Factored]" = memo("solve.sampling.factored", OrderedDict())
CACHE_LIMIT = 64


def eliminated(model: Any, plan: Any, keep: Iterable[str] = ()) -> Eliminated:
    """The numbered configs of a stratum plan (ckspace.solve.plan.StratumPlan), its free fields in `keep` kept."""
    kept = tuple(f.name for f in plan.free if f.name in set(keep))
    shape = (plan.stratum.kind, tuple(plan.free), frozenset((c.when, c.require) for c in plan.constraints))
    hit = _ELIMINATED.get((shape, kept))
    if hit is not None:
        _ELIMINATED.move_to_end((shape, kept))
        return hit
    f = _FACTORED.get(shape)
    if f is None:
        f = _FACTORED[shape] = count.factored(model, plan.stratum.kind, plan.free, plan.constraints, plan.timings)
        plan.solver_calls += f.calls
        if len(_FACTORED) > CACHE_LIMIT:
            _FACTORED.popitem(last=False)
    order = count.order_for(f.names, f.scopes, f.size, keep=frozenset(kept))
    domains = {n: [row[0] for row in domain_rows(f.defs[n])] for n in f.names}
    result = _ELIMINATED[(shape, kept)] = Eliminated(f.names, f.factors, order, domains, kept)
    if len(_ELIMINATED) > CACHE_LIMIT:
        _ELIMINATED.popitem(last=False)
    return result


@dataclass
class Part:
    """One top row of one stratum: a block of `count` consecutive ranks of the space."""

    stratum: int  # index into SpaceSampler.strata
    top: int  # index into that stratum's Eliminated.top
    count: int
    config: dict[str, object]  # the stratum's constants and the top row's values (the kept fields)


class SpaceSampler:
    """The kernels of a space (KernelSpace, with enumerate's filters) as parts of consecutive ranks: per stratum in
    the space's order, per top row (the values of the kept fields) in value order. `configs` turns (part, rank)
    pairs into kernels, as enumerate gives them (fields and name)."""

    def __init__(self, space: Any, *, variant=None, ndim=None, dtype=None, where: str | None = None,
                 keep: Iterable[str] = ()):
        import time

        keep = set(keep)
        self.space = space
        self.strata: list[tuple[Any, Any, Eliminated]] = []
        self.parts: list[Part] = []
        node = space.parse_where(where)
        fields: Mapping[str, FieldDef] = space.data.fields
        for st in space.strata(variant=variant, ndim=ndim, dtype=dtype):
            t0 = time.perf_counter()
            plan = space._plan(st, node)
            t1 = time.perf_counter()
            space.timings.plan += t1 - t0
            if plan is None or plan.infeasible_by:
                continue
            elim = eliminated(space.model, plan, keep)
            space.timings.solve += time.perf_counter() - t1
            if not elim.total:
                continue
            index = len(self.strata)
            self.strata.append((st, plan, elim))
            decode = [walk._decoder(fields[n]) for n in elim.keep]
            for t, (row, n) in enumerate(elim.top):
                config = {**plan.constants, **space._spelling(st),
                          **{name: d(v) for name, d, v in zip(elim.keep, decode, row)}}
                self.parts.append(Part(index, t, n, config))
        self.total = sum(p.count for p in self.parts)

    def locate(self, parts: Sequence[int], ranks: Iterable[int]) -> list[tuple[int, int]]:
        """Ranks over the given parts (in that order, consecutive) as (part, rank inside it) pairs."""
        ends = []
        total = 0
        for p in parts:
            total += self.parts[p].count
            ends.append(total)
        out = []
        for r in ranks:
            j = bisect.bisect_right(ends, r)
            if not 0 <= r < total:
                raise ValueError(f"rank {r} outside [0, {total})")
            out.append((parts[j], r - (ends[j] - self.parts[parts[j]].count)))
        return out

    def configs(self, picks: Sequence[tuple[int, int]]) -> list[dict[str, object]]:
        """The kernels of (part, rank inside it) pairs, in the order given: config dicts with the keys enumerate
        gives (the stratum's constants, its free fields in field order, then `name`)."""
        from ..rules.names import name_rows
        from .kernels import _spelt

        fields = self.space.data.fields
        by_stratum: dict[int, list[int]] = {}
        for i, (p, _) in enumerate(picks):
            by_stratum.setdefault(self.parts[p].stratum, []).append(i)
        out: list[dict[str, object] | None] = [None] * len(picks)
        # strata of one shape share their Eliminated: one vectorized unranking for all of them
        by_shape: dict[int, list[int]] = {}
        for s in by_stratum:
            by_shape.setdefault(id(self.strata[s][2]), []).append(s)
        for strata in by_shape.values():
            elim = self.strata[strata[0]][2]
            order = [i for s in strata for i in by_stratum[s]]
            raw = elim.unrank([(self.parts[picks[i][0]].top, picks[i][1]) for i in order])
            at = {i: j for j, i in enumerate(order)}
            for s in strata:
                st, plan, _ = self.strata[s]
                free = [f.name for f in plan.free]
                decode = [walk._decoder(fields[n]) for n in free]
                # A solved bag's raw values are ints (enum codes, 0/1, integers), which the decoders take.
                rows = [tuple(plan.constants.values()) + tuple(d(cast(int, raw[n][at[i]])) for n, d in zip(free, decode))
                        for i in by_stratum[s]]
                keys, spelt = _spelt((*plan.constants, *free), iter(rows), self.space._spelling(st))
                rows = list(spelt)
                for i, row, name in zip(by_stratum[s], rows, name_rows(keys, rows, fields)):
                    out[i] = dict(zip((*keys, "name"), (*row, name)))
        return out  # type: ignore[return-value]
