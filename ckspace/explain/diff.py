"""How two kernels differ: the changed fields, and a name cut into pieces flagged where it changed (for
highlighting a neighbour's changes)."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Mapping, Sequence

from .result import Change


def changes_between(before: Mapping[str, object], after: Mapping[str, object], order: Sequence[str]) -> tuple[Change, ...]:
    """The name fields that differ, in the data's field order."""
    out = []
    for name in order:
        if name in after and (before.get(name) != after[name] or type(before.get(name)) is not type(after[name])):
            out.append(Change(name, before.get(name), after[name]))
    return tuple(out)


_TRIPLE = re.compile(r"\d+(?:x\d+)+")


def _atoms(name: str) -> list[str]:
    """A name cut where a change can show: at underscores, and a tile triple at its x's."""
    out: list[str] = []
    for i, part in enumerate(name.split("_")):
        if i:
            out.append("_")
        out.extend(re.split(r"(x)", part) if _TRIPLE.fullmatch(part) else [part])
    return out


def name_diff(old: str, new: str) -> list[tuple[str, bool]]:
    """`new` in pieces, each flagged when it differs from `old` (for highlighting the changed fields)."""
    a, b = _atoms(old), _atoms(new)
    out: list[tuple[str, bool]] = []
    for op, _, _, j1, j2 in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if j2 > j1:
            out.append(("".join(b[j1:j2]), op != "equal"))
    return out
