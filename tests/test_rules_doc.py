"""`ckspace rules`: every rule shown with its family, message, rationale, source and examples; docs/rules.md is its
markdown output and stays current."""

from __future__ import annotations

import json
try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]
from pathlib import Path

import pytest

from ckspace.cli import main

ROOT = Path(__file__).resolve().parent.parent


def rule_ids_in_files() -> dict[str, dict]:
    """Every rule of the shipped rule files, read independently of ckspace's loader."""
    out = {}
    for path in sorted((ROOT / "constraints" / "rules").glob("*.toml")):
        for rule in tomllib.loads(path.read_text())["rule"]:
            out[rule["id"]] = rule
    return out


def test_docs_rules_md_is_current(capsys) -> None:
    assert main(["rules", "--format", "markdown"]) == 0
    generated = capsys.readouterr().out
    assert (ROOT / "docs" / "rules.md").read_text() == generated, \
        "docs/rules.md is stale: run `ckspace rules --format markdown > docs/rules.md`"


def test_json_lists_every_rule_with_its_rationale_and_source(capsys) -> None:
    assert main(["rules", "--format", "json"]) == 0
    shown = {r["id"]: r for r in json.loads(capsys.readouterr().out)["rules"]}
    files = rule_ids_in_files()
    assert set(files) <= set(shown)
    derives = tomllib.loads((ROOT / "constraints" / "fields.toml").read_text())["derive"]
    built_in = {f"model.derived-{name}" for name, spec in derives.items() if not spec.get("output_only")}
    support = {r["id"] for r in tomllib.loads((ROOT / "constraints" / "support.toml").read_text())["rule"]}
    assert support and all(shown[i]["family"] == "support" for i in support)
    assert {i for i in shown if i not in files and i not in support} == built_in == {"model.derived-layout"}
    for rid, rule in files.items():
        assert shown[rid]["family"] == rule["family"]
        assert shown[rid]["rationale"] == rule["rationale"] and shown[rid]["rationale"]
        assert shown[rid]["source"] == rule["source"]
        assert shown[rid]["message"] == rule["message"]
        assert shown[rid]["rejects"] == ([rule["reject"]] if isinstance(rule.get("reject"), str) else rule.get("reject", []))


def test_one_rule_and_one_family_in_text(capsys) -> None:
    assert main(["rules", "arch.tile-m-divisible"]) == 0
    out = capsys.readouterr().out
    assert "arch.tile-m-divisible" in out and "rationale:" in out and "tile_m % (wave_m * warp_tile_m) == 0" in out
    assert "rejects:" in out and "accepts:" in out and "arch.warp-tile\n" not in out
    assert main(["rules", "ck-known-issues"]) == 0
    out = capsys.readouterr().out
    ids = [line.strip() for line in out.splitlines() if line.startswith("  ck-known-issues.")]
    expected = [i for i, r in rule_ids_in_files().items() if r["family"] == "ck-known-issues"]
    assert ids == expected and len(ids) == 2


def test_unknown_rule_suggests_the_close_ids(capsys) -> None:
    assert main(["rules", "arch.warp-tle"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean arch.warp-tile" in err


def test_each_fact_rule_shows_its_audit(capsys) -> None:
    """`rules` shows per fact rule its near misses from constraints/evidence/audit.json (failed/compiled per arch),
    read here independently; catalog rules have none."""
    summary = json.loads((ROOT / "constraints" / "evidence" / "audit.json").read_text())
    assert main(["rules", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    shown = {r["id"]: r for r in out["rules"]}
    assert shown["arch.lds-capacity"]["near_misses"] == summary["rules"]["arch.lds-capacity"]
    assert all("near_misses" not in r for r in out["rules"] if r["family"].startswith("ck-") and
               not r["family"].startswith("ck-api-"))
    assert out["audit"]["archs"]["gfx950"]["uniform"] == summary["archs"]["gfx950"]["uniform"]
    assert main(["rules", "arch.lds-capacity"]) == 0
    text = capsys.readouterr().out
    c = summary["rules"]["arch.lds-capacity"]["gfx90a"]
    assert f"audit:     near misses failed {c['failed']}/{c['compiled']} on gfx90a" in text


def test_a_broken_audit_summary_is_one_error_line(tmp_path, capsys) -> None:
    import shutil

    root = tmp_path / "constraints"
    shutil.copytree(ROOT / "constraints", root)
    (root / "evidence" / "audit.json").write_text('{"archs": 3}')
    assert main(["rules", "--constraints", str(root)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "audit.json: not an audit summary" in err[0] and "Traceback" not in err[0]
    (root / "evidence" / "audit.json").unlink()  # a folder without one: no audit lines
    assert main(["rules", "arch.lds-capacity", "--constraints", str(root)]) == 0
    assert "audit:" not in capsys.readouterr().out


def audit_table_lines(text: str) -> list[str]:
    """The audit's table per arch in a markdown text: its header line and the `|` lines after it (parsed here, apart
    from scripts/sync_audit_tables.py)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| arch | uniform: built/compiled |"))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines[start:end]


def test_readme_and_audit_doc_show_the_audit_table_of_docs_rules_md() -> None:
    generated = audit_table_lines((ROOT / "docs" / "rules.md").read_text())
    assert len(generated) == 2 + 5  # header, rule, and gfx90a gfx942 gfx950 gfx1100 gfx1201
    for doc in ("README.md", "docs/audit.md"):
        assert audit_table_lines((ROOT / doc).read_text()) == generated, \
            f"{doc}'s audit table is stale: run `python scripts/sync_audit_tables.py`"


def test_sync_audit_tables_replaces_only_the_table() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("sync_audit_tables", ROOT / "scripts" / "sync_audit_tables.py")
    assert spec and spec.loader
    sync = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sync)
    source = "# Rules\n\n| arch | uniform: built/compiled | x |\n|---|---|\n| gfx90a | 3/3 | 1 |\nafter\n"
    copy = "intro\n| arch | uniform: built/compiled | x |\n|---|---|\n| gfx90a | 1/1 | 0 |\n| gfx942 | 2/2 | 0 |\n\nend\n"
    assert sync.synced(copy, source) == \
        "intro\n| arch | uniform: built/compiled | x |\n|---|---|\n| gfx90a | 3/3 | 1 |\n\nend\n"
    with pytest.raises(ValueError, match="0 audit tables"):
        sync.synced("no table here\n", source)
