"""ckspace: CK Tile grouped-convolution kernel instances as a CP-SAT constraint model.

Heavy modules (ortools, networkx, rich) are imported lazily, so that a cached run never loads the solver.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["Space", "__version__"]


def __getattr__(name: str):
    if name == "Space":
        from .space import Space

        return Space
    raise AttributeError(name)
