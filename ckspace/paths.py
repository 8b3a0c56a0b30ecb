"""Where ckspace's data folders are: in this checkout beside the package, or installed inside it."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str, marker: str) -> Path | None:
    """The folder `name` (constraints, objectives, templates) that holds `marker`: the checkout's, else the copy
    installed inside the package, else what importlib finds; None when there is none."""
    for candidate in (PACKAGE.parent / name, PACKAGE / name):
        if (candidate / marker).is_file():
            return candidate
    try:
        from importlib.resources import files

        found = Path(str(files(f"ckspace.{name}")))
    except (ImportError, ModuleNotFoundError, TypeError):  # pragma: no cover
        return None
    return found if (found / marker).is_file() else None
