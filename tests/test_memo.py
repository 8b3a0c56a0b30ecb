"""One registry of memos (ckspace/memo.py): every process-wide memo is registered where it is made, and one call
(clear_all) forgets them all. Read from the source with `ast`, so a new module-level cache that bypasses the registry
fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ckspace import Space, memo

PACKAGE = Path(__file__).resolve().parent.parent / "ckspace"
# Module-level mutable state that is not a memo: the registry itself, and the output directories this process holds
# (a lock's nesting depth: clearing it would release a lock).
NOT_MEMOS = {("memo", "_REGISTRY"), ("files", "_HELD")}
MUTABLE_CALLS = {"dict", "list", "set", "OrderedDict", "WeakKeyDictionary", "WeakValueDictionary", "defaultdict"}


def module_level_stores() -> list[tuple[str, str, ast.expr]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        out.append((module, t.id, node.value))
    return out


def is_mutable(value: ast.expr) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        f = value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name in MUTABLE_CALLS
    return False


def test_every_module_level_cache_is_a_registered_memo() -> None:
    """A module-level dict/list/set/OrderedDict/weak dictionary is either made through memo() or a constant table
    that is never written (its name in capitals is not enough: it must not be assigned to or mutated)."""
    for module, name, value in module_level_stores():
        if (module, name) in NOT_MEMOS or not is_mutable(value):
            continue
        if not name.startswith("_"):
            continue  # a public constant table (a module's data), not a private memo
        tree = ast.parse((PACKAGE / (module.replace(".", "/") + ".py")).read_text())
        writes = _writes(tree, name)
        # a private mutable store that the module writes to is a memo: it must be registered
        assert not writes, f"ckspace.{module}.{name} is a module-level cache outside ckspace.memo"


MUTATORS = {"setdefault", "append", "add", "update", "pop", "popitem", "clear", "move_to_end", "extend", "insert",
            "discard", "remove"}


def _writes(tree: ast.AST, name: str) -> bool:
    """Whether the module stores into `name` (item assignment or deletion, or a mutating method call)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name \
                and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            return True
    return False


def test_the_write_check_can_fail() -> None:
    assert _writes(ast.parse("_C = {}\ndef f(k):\n    _C[k] = 1\n"), "_C")
    assert _writes(ast.parse("_C = OrderedDict()\ndef f(k):\n    _C.setdefault(k, 1)\n"), "_C")
    assert not _writes(ast.parse("_C = {1: 2}\ndef f(k):\n    return _C[k]\n"), "_C")


def test_no_lru_cache_bypasses_the_registry() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "memo.py":
            continue
        text = path.read_text()
        assert "lru_cache" not in text and "functools.cache" not in text, path


def import_every_module() -> None:
    import importlib

    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] != "__main__":
            importlib.import_module(".".join(("ckspace", *parts)).removesuffix(".__init__"))


@pytest.mark.slow
def test_clear_all_forgets_every_memo() -> None:
    import_every_module()
    space = Space(arch="gfx950", catalog="ck-default", use_cache=False)
    names = [c["name"] for c in space.enumerate()]
    space.check(names[0])
    Space(arch="gfx950", rules="-ck-curation").count()
    stores = memo.registered()
    assert len(stores) >= 30
    filled = [n for n, s in stores.items() if _size(s)]
    assert len(filled) >= 8, filled  # the run above filled memos of several layers
    memo.clear_all()
    assert [n for n, s in memo.registered().items() if _size(s)] == []
    # and ckspace works the same after it
    assert [c["name"] for c in Space(arch="gfx950", catalog="ck-default", use_cache=False).enumerate()] == names


def _size(store: object) -> int:
    inner = getattr(store, "function", None)
    if inner is not None:
        return inner.cache_info().currsize
    return len(store)  # type: ignore[arg-type]


def test_two_memos_may_not_share_a_name() -> None:
    memo.memo("test.memo.once", {})
    with pytest.raises(ValueError, match="two memos named"):
        memo.memo("test.memo.once", {})
