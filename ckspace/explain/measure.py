"""How far a kernel is from another, as explain's searches weigh it: the weights of a change and the steps a number
moves in its domain. Shared by the CP-SAT searches (ckspace.explain.neighbours), the ranking of a listed stratum
(explainer) and the rule fixes (ckspace.explain.fixes); plain Python, so that the last two need no OR-Tools."""

from __future__ import annotations

import bisect
from typing import Container, Mapping, Sequence

from ..rules.data import FieldDef

W_CHANGE = 100_000  # one changed field outweighs any sum of step distances (at most a few hundred)
W_WHEN_OFF = 5_000  # own_fix: among as few changes, meet the rule's requirement rather than make it not apply


def distance(f: FieldDef, value: object, asked: object) -> int:
    """Steps between two values of a numeric field: 1 for a neighbour in the domain, more for farther ones.

    The asked value may lie outside the domain (tile_m 300): then the steps are counted from where it would sit.
    Enum and Boolean fields have no order: 0 (their change is already counted).
    """
    if f.type != "int" or not isinstance(asked, int) or isinstance(asked, bool) or value == asked:
        return 0
    values = sorted(f.values)
    lo, hi = (value, asked) if value < asked else (asked, value)  # type: ignore[operator]
    between = bisect.bisect_left(values, hi) - bisect.bisect_right(values, lo)
    return 1 + max(between, 0)


def same(a: object, b: object) -> bool:
    """Equal values of one field (True is not 1 here)."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)


class Nearness:
    """How far kernels are from one asked config: (changed fields, steps), counted as explain.diff.changes_between and
    `distance` count them, with each field's steps tabulated once (ranking a listed stratum of thousands of kernels
    looked up the domain for every changed field of every kernel)."""

    def __init__(self, asked: Mapping[str, object], order: Sequence[str], fields: Mapping[str, FieldDef],
                 skip: Container[str] = ()):
        # per field of the name: its name, the asked value and its type, and the field where it counts steps
        self._items = [(name, asked.get(name), type(asked.get(name)), fields.get(name)) for name in order
                       if name not in skip]
        self._steps: dict[str, dict[object, int]] = {}

    def key(self, other: Mapping[str, object]) -> tuple[int, int]:
        changed = steps = 0
        for name, value, kind, f in self._items:
            if name not in other:
                continue
            got = other[name]
            if got == value and type(got) is kind:
                continue
            changed += 1
            if f is not None and f.type == "int":
                table = self._steps.setdefault(name, {})
                step = table.get(got)
                if step is None:
                    step = table[got] = distance(f, got, value)
                steps += step
        return changed, steps
