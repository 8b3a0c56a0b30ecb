"""The scripts under scripts/ keep up with the package: every `ckspace` import they make, also inside the code
they run in a child process, names a module and a name that exist (bench_emit once imported ckspace.emit after it
moved to ckspace.codegen.emit)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parent.parent / "scripts").glob("*.py"))


def _imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ckspace") and node.level == 0:
            yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ckspace"):
                    yield alias.name, []
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "import" in node.value:
            try:  # code run in a child process (`python -c CHILD`)
                inner = ast.parse(node.value)
            except SyntaxError:
                continue
            yield from _imports(inner)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_ckspace_import_of_a_script_resolves(script: Path) -> None:
    for module, names in _imports(ast.parse(script.read_text())):
        mod = importlib.import_module(module)
        for name in names:
            assert hasattr(mod, name) or importlib.util.find_spec(f"{module}.{name}") is not None, \
                f"{script.name}: from {module} import {name}"


def test_the_child_code_of_bench_emit_is_checked() -> None:
    script = next(s for s in SCRIPTS if s.name == "bench_emit.py")
    assert ("ckspace.codegen", ["emit"]) in list(_imports(ast.parse(script.read_text())))
