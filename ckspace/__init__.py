"""ckspace: CK Tile grouped-convolution kernel instances as a CP-SAT constraint model.

Heavy modules (ortools, numpy, rich) are imported lazily, so that a cached run never loads the solver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .space import Space
    from .version import __version__

__all__ = ["Space", "__version__"]


def __getattr__(name: str) -> object:
    # Both lazily: importing the package (as the entry point ckspace._entry does before it handles Ctrl-C) loads
    # nothing else.
    if name == "Space":
        from .space import Space

        return Space
    if name == "__version__":
        from .version import __version__

        return __version__
    raise AttributeError(name)
