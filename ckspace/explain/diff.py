"""How two kernels differ: the changed fields (a name cut into pieces flagged where it changed is the text
renderer's: ckspace.explain.render.name_diff)."""

from __future__ import annotations

from typing import Mapping, Sequence

from .result import Change


def changes_between(before: Mapping[str, object], after: Mapping[str, object], order: Sequence[str]) -> tuple[Change, ...]:
    """The name fields that differ, in the data's field order."""
    out = []
    for name in order:
        if name in after and (before.get(name) != after[name] or type(before.get(name)) is not type(after[name])):
            out.append(Change(name, before.get(name), after[name]))
    return tuple(out)
