"""Walking the join of a solved join tree: the configs of a stratum as a stream.

For a bag and a value of its separator, the configs of the bag's subtree are its rows with that separator value,
each combined with every config of each child subtree under the row's separator values for that child. Walked
as nested generators, nothing of the size of the product is held: a subtree's expansion is kept (for reuse under
other parent rows) only when it is small.
"""

from __future__ import annotations

import itertools
import math
import operator

from typing import Callable, Iterable, Iterator, Mapping, Sequence, cast

from .bags import Bag, Key
from ..rules.data import FieldDef

# A subtree's expansion for one separator value is kept in memory only when it has at most this many configs.
MEMO_LIMIT = 20_000


def _decoder(f: FieldDef) -> Callable[[int], object]:
    if f.type == "bool":
        return bool
    if f.type == "enum":
        return f.values.__getitem__
    return int


def _getter(positions: Sequence[int]) -> Callable[[tuple], tuple]:
    """row -> the tuple of its values at `positions` (a separator value)."""
    if not positions:
        return lambda row: ()
    if len(positions) == 1:
        (j,) = positions
        return lambda row: (row[j],)
    return operator.itemgetter(*positions)


def _row_decoder(defs: Sequence[FieldDef], positions: Sequence[int]) -> Callable[[tuple], tuple]:
    """row -> its values at `positions`, decoded (raw integers stand for themselves, enum indices for their value,
    0/1 for false/true)."""
    pick = _getter(positions)
    decoders = [_decoder(f) for f in defs]
    if all(d is int for d in decoders):
        return lambda row: tuple(map(int, pick(row)))
    return lambda row: tuple([d(v) for d, v in zip(decoders, pick(row))])


def subtree_names(factors: Sequence[Bag], i: int) -> list[str]:
    """The fields of bag i's subtree in the order a walk yields their values: the bag's own, then each child's."""
    fac = factors[i]
    out = [fac.fields[j] for j in fac.own]
    for c in fac.children:
        out += subtree_names(factors, c)
    return out


class Walker:
    """The configs of a solved join tree. `messages` are the per-bag counts per separator value."""

    def __init__(self, fields: Mapping[str, FieldDef], factors: Sequence[Bag], messages: Sequence[dict[Key, int]]):
        self.factors = factors
        self.messages = messages
        # Per bag: separator value -> [(decoded own values, separator values for each child)].
        self.by_key: list[dict[Key, list[tuple[tuple, tuple[Key, ...]]]]] = []
        for fac in factors:
            if fac.rows is None:
                raise ValueError("walking a join tree needs the bags' rows")
            decode = _row_decoder([fields[fac.fields[j]] for j in fac.own], fac.own)
            kids = [(messages[c], _getter(factors[c].parent_key)) for c in fac.children]
            key_of = _getter(fac.key)
            index: dict[Key, list[tuple[tuple, tuple[Key, ...]]]] = {}
            for row in fac.rows:
                child_keys = tuple([get(row) for _, get in kids])
                if kids and not all([k in m for k, (m, _) in zip(child_keys, kids)]):
                    continue  # some child subtree has no config under this row
                index.setdefault(key_of(row), []).append((decode(row), child_keys))
            self.by_key.append(index)
        self.memo: dict[tuple[int, Key], list[tuple]] = {}

    def names(self, i: int) -> list[str]:
        """The fields, in the order subtree(i, ...) yields their values."""
        return subtree_names(self.factors, i)

    def subtree(self, i: int, key: Key) -> Iterable[tuple]:
        if self.messages[i].get(key, 0) > MEMO_LIMIT:
            return self._generate(i, key)
        hit = self.memo.get((i, key))
        if hit is None:
            hit = self.memo[(i, key)] = list(self._generate(i, key))
        return hit

    def _generate(self, i: int, key: Key) -> Iterator[tuple]:
        children = self.factors[i].children
        for own, child_keys in self.by_key[i].get(key, ()):
            if not children:
                yield own
                continue
            parts = [(lambda c=c, k=k: self.subtree(c, k)) for c, k in zip(children, child_keys)]
            for tail in product(parts):
                yield own + tail


TAILS_LIMIT = 100_000  # tuples of the parts after the first, made once per product call


def product(parts: Sequence[Callable[[], Iterable[tuple]]], start: int = 0) -> Iterator[tuple]:
    """Concatenated tuples of the Cartesian product of re-iterable parts, streamed (each part re-made per prefix).

    The parts are independent (a subtree depends on its own separator only). When every part after the first is a
    list (a kept subtree: CK's catalogs always) and their product has at most TAILS_LIMIT tuples, that product is
    made once and each head of the first part runs over it: the same tuples in the same order, without a generator
    per prefix. Otherwise (a part that streams: a large subtree) each part is re-made per prefix."""
    if start == len(parts):
        yield ()
        return
    if start == len(parts) - 1:
        yield from parts[start]()
        return
    rest = [parts[i]() for i in range(start + 1, len(parts))]  # a generator does nothing until it is iterated
    tails: list[tuple] | None = None
    if all(type(r) is list for r in rest):  # (a check mypy does not narrow on: the casts below restate it)
        if len(rest) == 1:
            tails = cast("list[tuple]", rest[0])
        elif math.prod(map(len, cast("list[list[tuple]]", rest))) <= TAILS_LIMIT:
            concat = itertools.chain.from_iterable
            tails = [tuple(concat(combo)) for combo in itertools.product(*rest)]
    if tails is not None:
        for head in parts[start]():
            for tail in tails:
                yield head + tail
        return
    for head in parts[start]():
        for tail in product(parts, start + 1):
            yield head + tail
