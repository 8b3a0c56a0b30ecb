"""The test tiers (issue 26): `slow` (more than about 5 s on the 2-core machine) and `compile` (runs the real
compiler) are registered markers, and the compile tests are marked, so that the fast tier
`python3 -m pytest -q -n 2 -m "not slow and not compile"` runs no compiler."""

from __future__ import annotations

import ast
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent


def test_the_markers_are_registered() -> None:
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    assert {m.split(":")[0] for m in markers} == {"slow", "compile"}


def test_every_test_that_sets_up_the_toolchain_is_a_compile_test() -> None:
    """A test calling _toolchain() or _registry_toolchain() (the registry compiler) carries @pytest.mark.compile."""
    unmarked = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            calls = {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
            marks = {d.attr for d in node.decorator_list if isinstance(d, ast.Attribute)}
            if calls & {"_toolchain", "_registry_toolchain"} and "compile" not in marks:
                unmarked.append(f"{path.name}::{node.name}")
    assert unmarked == []
