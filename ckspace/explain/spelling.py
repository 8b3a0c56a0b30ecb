"""Spelling suggestions for kernel names: a misspelt word of the name grammar or of the data's values
(cshufle -> cshuffle) is named with the one obvious correction."""

from __future__ import annotations

import difflib
import re
from typing import Sequence

from ..errors import KernelNameError
from ..lines import MAX_NAME
from ..rules.data import DataSet
from ..rules.names import EPILOGUES, KNOWN_PIPELINES, SCHEDULERS, STREAMK, VARIANT_TAGS, parse_name


def parse(name: str, data: DataSet | None = None) -> dict[str, object]:
    """parse_name, plus a suggestion for a misspelt word when the parser has none (cshufle -> cshuffle); `data`
    adds the spellings of its enum values (dtypes, layouts, ...) to the grammar's words."""
    if len(name) > MAX_NAME:  # no kernel name is that long; a spelling search over it would take minutes
        raise KernelNameError(name[:60] + "...", "name", f"at most {MAX_NAME} characters", f"{len(name):,} characters")
    try:
        config = parse_name(name)
    except KernelNameError as exc:
        if exc.suggestion is None and exc.got:
            better = _respelt(name, exc.got, vocabulary(data))
            if better is not None:
                raise KernelNameError(exc.name, exc.part, exc.expected, exc.got, better) from None
        raise
    if data is not None:
        _typos(name, config, data)
    return config


def _typos(name: str, config: dict[str, object], data: DataSet) -> None:
    """A word the grammar takes but no enum field holds, close to one it does (f16 ~ fp16, compv33 ~ compv3, nhwcg
    ~ nhwgc): a typo, said as one, not explained as a cascade of broken rules. A word near no value (fp64) is left
    to the model, which explains it as outside the field's domain."""
    for key, value in config.items():
        f = data.fields.get(key)
        if f is None or f.type != "enum" or not isinstance(value, str) or value in f.values:
            continue
        values = [str(v) for v in f.values]
        scored = sorted(((difflib.SequenceMatcher(None, value, v).ratio(), v) for v in values), reverse=True)
        near = [v for r, v in scored if r >= TYPO_RATIO]
        if not near:
            continue
        suggestion = None
        if len(near) == 1 or scored[0][0] > scored[1][0]:
            spot = re.search(rf"(?<![^_]){re.escape(value)}(?![^_])", name)
            if spot is not None:
                candidate = name[:spot.start()] + near[0] + name[spot.end():]
                try:
                    parse_name(candidate)
                    suggestion = candidate
                except KernelNameError:
                    pass
        expected = ", ".join(values[:-1]) + f" or {values[-1]}" if len(values) > 1 else values[0]
        if suggestion is None and len(near) > 1:
            expected += f" (near: {' or '.join(near)})"
        raise KernelNameError(name, key, expected, value, suggestion)


TYPO_RATIO = 0.8  # difflib ratio from which an unknown word is taken for a misspelt value (f16 ~ fp16: 0.86)


def vocabulary(data: DataSet | None) -> tuple[str, ...]:
    """The words of the name grammar, and of the data's enum fields."""
    words = [*EPILOGUES, *SCHEDULERS, *KNOWN_PIPELINES, *STREAMK, *VARIANT_TAGS.values(), "depthwise", "explicit_gemm",
             "streamk", "persistent", "large_tensor", "dsb", "2stage"]
    if data is not None:
        for f in data.fields.values():
            if f.type == "enum":
                words += [str(v) for v in f.values]
    return tuple(sorted(set(words)))


def _respelt(name: str, got: str, words: Sequence[str]) -> str | None:
    """The name with the offending word replaced by the one known word it is an obvious misspelling of.

    Obvious means: the best close match (difflib ratio >= 0.8) is unique, and the name parses with it."""
    spot = re.search(rf"(?<![^_]){re.escape(got)}(?![^_])", name)
    if spot is None or not re.fullmatch(r"[a-z0-9_]+", got.lower()):
        return None
    scored = sorted(((difflib.SequenceMatcher(None, got.lower(), w).ratio(), w) for w in words),
                    reverse=True)
    if not scored or scored[0][0] < 0.8 or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    candidate = name[:spot.start()] + scored[0][1] + name[spot.end():]
    try:
        parse_name(candidate)
    except KernelNameError as again:
        return again.suggestion  # a second problem the parser itself knows how to repair, or none
    return candidate
