"""The package layout shows the layers, and imports run one way: cli -> space -> services -> solve -> rules.

Read from the source with `ast` (every import, also those inside functions and TYPE_CHECKING blocks), so the test
fails on the first import that runs against the direction, names a CLI module from outside the CLI, or closes a
cycle between modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ckspace"

# The layers, lowest first. Modules of one rank may import each other (no cycles); a lower rank never imports a
# higher one. errors, cache, lines (bounded input), signals and the package itself are infrastructure every layer
# may use.
RANKS = {"rules": 0, "solve": 1, "select": 2, "explain": 2, "codegen": 2, "space": 3, "spec": 3, "emitted": 3,
         "oracle": 3, "cli": 4, "__main__": 5, "_entry": 5}  # the last two: the process entry points
INFRASTRUCTURE = {"errors", "cache", "files", "imports", "lines", "paths", "signals", "memo", "version", "__init__"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1]) if parts[-1] == "__init__" and len(parts) > 1 else ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """The ckspace modules a source file imports, as dotted names below ckspace (`rules.expr`, `space`, ...)."""
    me = module_name(path).split(".")
    package = me if path.name == "__init__.py" else me[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == "ckspace":
                target = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                candidate = [*target, alias.name]
                sub = PACKAGE.joinpath(*candidate)
                found.add(".".join(candidate) if sub.with_suffix(".py").exists() or sub.is_dir() else ".".join(target))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "ckspace":
                    found.add(".".join(alias.name.split(".")[1:]))
    return {f for f in found if f}


def rank(module: str) -> int | None:
    top = module.split(".")[0]
    if top in INFRASTRUCTURE or module == "":
        return None
    return RANKS[top]


GRAPH = {module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_sits_in_a_known_layer() -> None:
    for module in GRAPH:
        top = module.split(".")[0]
        assert top in RANKS or top in INFRASTRUCTURE, f"{module} is in no layer (add it to a package)"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_run_one_way(module: str) -> None:
    mine = rank(module)
    for target in sorted(GRAPH[module]):
        theirs = rank(target)
        if mine is None or theirs is None:
            continue
        assert theirs <= mine, f"{module} (layer {mine}) imports {target} (layer {theirs}): against cli -> space -> services -> solve -> rules"
        if not module.startswith("cli") and module not in ("__main__", "_entry"):
            assert not target.startswith("cli"), f"{module} imports the CLI module {target}"


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.split(".")[0] in INFRASTRUCTURE and m != "__init__"))
def test_infrastructure_imports_no_layer(module: str) -> None:
    """errors, cache, paths, ...: every layer may import them, so they import only each other (the package's
    __init__, the facade, is the one exception: it names Space lazily)."""
    for target in sorted(GRAPH[module]):
        assert target.split(".")[0] in INFRASTRUCTURE and target != "__init__", f"{module} imports {target}"


BELOW_THE_DOOR = ("rules", "solve", "select", "explain", "codegen")  # what only Space (and spec) may reach
# CLI modules that still reach past Space (issue 26): the list only shrinks; a module that no longer needs its place
# here fails test_the_waiting_list_is_current
NOT_YET_ON_THE_DOOR: set[str] = set()


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.split(".")[0] == "cli"))
def test_the_cli_goes_through_space(module: str) -> None:
    """Each command parses its arguments, builds a Spec, calls Space and renders: it imports no layer below."""
    if module in NOT_YET_ON_THE_DOOR:
        return
    below = sorted(t for t in GRAPH[module] if t.split(".")[0] in BELOW_THE_DOOR)
    assert not below, f"{module} imports {', '.join(below)}: go through ckspace.space (or ckspace.spec)"


def test_the_waiting_list_is_current() -> None:
    for module in sorted(NOT_YET_ON_THE_DOOR):
        assert any(t.split(".")[0] in BELOW_THE_DOOR for t in GRAPH[module]), \
            f"{module} goes through Space now: take it off NOT_YET_ON_THE_DOOR"


def test_version_is_a_leaf() -> None:
    assert GRAPH["version"] == set()
    tree = ast.parse((PACKAGE / "version.py").read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_no_import_cycles() -> None:
    """Between modules (package __init__ files that only describe the package are leaves)."""
    graph = {m: {t for t in targets if t in GRAPH and t != m} for m, targets in GRAPH.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_the_checker_catches_a_wrong_way_import(tmp_path: Path) -> None:
    """The test above can fail: a rules module importing the solver is reported."""
    global PACKAGE
    fake = tmp_path / "ckspace"
    (fake / "rules").mkdir(parents=True)
    (fake / "solve").mkdir()
    (fake / "solve" / "plan.py").write_text("")
    bad = fake / "rules" / "check.py"
    bad.write_text("from ..solve import plan\n")
    old, PACKAGE = PACKAGE, fake
    try:
        assert imports_of(bad) == {"solve.plan"}
        assert rank("solve.plan") > rank("rules.check")  # type: ignore[operator]
    finally:
        PACKAGE = old
