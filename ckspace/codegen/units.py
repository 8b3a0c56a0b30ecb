"""How a selection is cut into compile units by default (emit, and the Python API's Space.emit)."""

from __future__ import annotations

DEFAULT_CHUNK_SIZE = 25  # = ckspace.codegen.emit.DEFAULT_CHUNK_SIZE (tests/test_emit.py checks)
MIN_UNITS = 16  # the default chunk size leaves at least this many units (when there are as many kernels): -j 16


def balanced_units(names: list[str]) -> list[list[str]]:
    """The default compile units: consecutive runs of the selection, as many as it takes for units of at most
    DEFAULT_CHUNK_SIZE kernels but at least MIN_UNITS (when there are as many kernels), their sizes differing by at
    most one, so that `build -j N` keeps up to MIN_UNITS jobs busy."""
    n = len(names)
    count = min(n, max(-(-n // DEFAULT_CHUNK_SIZE), MIN_UNITS))
    if count == 0:
        return []
    size, extra = divmod(n, count)
    out, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        out.append(names[start:end])
        start = end
    return out
