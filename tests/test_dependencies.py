"""pyproject.toml's dependencies are exactly what the package imports (issue 26): every third-party module that
ckspace/ imports is declared, and nothing declared goes unimported. `hip` (hip-python) is the optional extra `hip`.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
# the import name of each distribution, where the two differ
IMPORT_NAME = {"hip-python": "hip"}


def imported() -> set[str]:
    """Top-level names of the absolute imports in ckspace/, without the standard library and ckspace itself."""
    names = set()
    for path in (ROOT / "ckspace").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "ckspace"}


def declared(requirements: list[str]) -> set[str]:
    out = set()
    for req in requirements:
        dist = re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower()
        out.add(IMPORT_NAME.get(dist, dist.replace("-", "_")))
    return out


def test_dependencies_are_what_the_package_imports() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = declared(project["dependencies"])
    extras = declared(project["optional-dependencies"]["hip"])
    assert imported() == deps | extras
    assert extras == {"hip"} and "hip" not in deps
    assert {"networkx", "platformdirs"}.isdisjoint(deps)
