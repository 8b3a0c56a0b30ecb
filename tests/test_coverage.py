"""`ckspace coverage`: per-goal counts checked by the independent counter, uncovered items, names not in full, JSON
and text output, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ckspace.rules.names import parse_name

import selection_oracle as O
from ckspace.cli import main


def run(capsys, *argv: str) -> str:
    """Run a command through the `ckspace` command line, in process."""
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def goals_of(report: dict) -> dict[tuple, tuple[int, int]]:
    return {tuple(g["goal"]): (g["covered"], g["total"]) for g in report["goals"]}


def test_coverage_of_cks_full_tests_matches_the_independent_count(tmp_path: Path, capsys) -> None:
    ck_tests, _ = O.ck_lists()
    path = tmp_path / "ck-full-tests.txt"
    path.write_text("\n".join(ck_tests) + "\n")
    report = json.loads(run(capsys, "coverage", str(path), "--arch", "gfx950", "--format", "json"))
    spec = O.objective_spec("tests")
    expected = O.count(O.full(), ck_tests, spec)
    assert goals_of(report) == expected
    assert report["names"]["read"] == 2805 and report["names"]["in_full"] == 2805 and not report["names"]["not_in_full"]
    assert report["covered"] < report["total"]
    # The uncovered items listed are exactly those the independent counter finds.
    listed = set()
    for g in report["goals"]:
        for u in g["uncovered"]:
            scope = tuple(u["scope"][s] for s in spec["scope"])
            listed.add((scope, tuple(g["goal"]), tuple(u["values"][d] for d in g["goal"])))
    assert listed == O.uncovered(O.full(), ck_tests, spec)
    # Per stratum: kernels and 1-wise counts.
    for s in report["scopes"]:
        key = (s["scope"]["variant"], int(s["scope"]["ndim"][:-1]), s["scope"]["dtype"])
        assert s["full"] == sum(1 for k in O.full() if (k["variant"], k["ndim"], k["dtype"]) == key)


def test_coverage_of_the_tests_set_is_complete_and_reports_the_solver(capsys) -> None:
    report = json.loads(run(capsys, "coverage", "--set", "tests", "--arch", "gfx950", "--format", "json"))
    assert report["covered"] == report["total"] > 0
    assert all(not g["uncovered"] for g in report["goals"])
    sel = report["selection"]
    assert sel["size"] == O.selected("tests").stats["size"] == report["names"]["read"]
    assert sel["lower_bound"] <= sel["size"] and sel["status"] in ("optimal", "feasible")
    assert goals_of(report) == O.count(O.full(), O.selected("tests").names, O.objective_spec("tests"))


def test_coverage_text_of_cks_tiny_names_what_is_missing_and_foreign_names(tmp_path: Path, capsys) -> None:
    _, ck_tiny = O.ck_lists()
    bad = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_64x64x32_2x2x1_32x32x16"  # well-formed, not CK's
    path = tmp_path / "ck-tiny.txt"
    path.write_text("# CK's tiny\n" + "\n".join(ck_tiny) + f"\n{ck_tiny[0]}\n\nnot_a_kernel\n{bad}\n")
    text = run(capsys, "coverage", str(path), "--arch", "gfx950", "--objective", "tiny")
    assert ("names: 38 read, 35 in full, 2 not in full (1 of them kernels of the open space: their items count), "
            "1 duplicates") in text
    assert "uncovered:" in text and "variant (1):" in text and "\n    bwd_data\n" in text
    assert "not in full (2):" in text
    assert "not_a_kernel: malformed name" in text
    assert f"{bad}: breaks ck." in text
    report = json.loads(run(capsys, "coverage", str(path), "--arch", "gfx950", "--objective", "tiny", "--format", "json"))
    spec = O.objective_spec("tiny")
    # `bad` is a kernel of the open space (only CK's curation leaves it out): the items it shares with full count
    foreign = [{**parse_name(bad), "name": bad}]
    assert goals_of(report) == O.count(O.full(), ck_tiny, spec, foreign)
    assert [n["name"] for n in report["names"]["not_in_full"]] == ["not_a_kernel", bad]
    assert report["names"]["duplicates"] == [ck_tiny[0]]


def test_coverage_of_the_tiny_set_and_full(capsys) -> None:
    text = run(capsys, "coverage", "--set", "tiny", "--arch", "gfx950")
    assert "selection: " in text and "covered: 86/86 items (100.0%)" in text.replace(",", "")
    report = json.loads(run(capsys, "coverage", "--set", "full", "--arch", "gfx950", "--objective", "tiny",
                            "--format", "json"))
    assert report["covered"] == report["total"] and report["names"]["read"] == 14048


def test_coverage_against_a_user_objective_with_restricted_strata(tmp_path: Path, capsys) -> None:
    obj = tmp_path / "bwd.toml"
    obj.write_text('[strata]\nvariant = ["bwd_data"]\nscope = []\n[cover]\ndimensions = ["tile"]\n')
    names = tmp_path / "names.txt"
    fwd = next(k["name"] for k in O.full() if k["variant"] == "forward")
    bwd = next(k for k in O.full() if k["variant"] == "bwd_data")
    names.write_text(f"{fwd}\n{bwd['name']}\n")
    report = json.loads(run(capsys, "coverage", str(names), "--arch", "gfx950", "--objective", str(obj), "--format", "json"))
    tiles = {(k["tile_m"], k["tile_n"], k["tile_k"]) for k in O.full() if k["variant"] == "bwd_data"}
    assert goals_of(report) == {("tile",): (1, len(tiles))}
    assert report["names"]["outside_strata"] == [fwd] and report["names"]["in_objective_strata"] == 1


@pytest.mark.parametrize("argv, needle", [
    (["coverage", "x.txt", "--set", "tests", "--arch", "gfx950"], "either a FILE of names or --set"),
    (["coverage", "--set", "small", "--arch", "gfx950"], "unknown set 'small'"),
    (["coverage", "--set", "full", "--stable-from", "x", "--arch", "gfx950"], "--stable-from applies to"),
    (["coverage", "/nonexistent/names.txt", "--arch", "gfx950"], "cannot read"),
    (["coverage", "--set", "tiny", "--arch", "gfx950", "--objective", "/nonexistent/o.toml"], "objective /nonexistent/o.toml: cannot read"),
    (["coverage", "--set", "tiny", "--arch", "gfx1111"], "gfx1111"),
])
def test_coverage_errors_are_one_line(capsys, argv: list[str], needle: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ckspace: error: ") and needle in err and err.count("\n") == 1


def test_the_ckspace_command_line_runs_coverage(tmp_path: Path, capsys) -> None:
    from ckspace import cli

    names = tmp_path / "n.txt"
    names.write_text("\n".join(O.selected("tiny").names) + "\n")
    assert cli.main(["coverage", str(names), "--arch", "gfx950", "--objective", "tiny", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["covered"] == 86
    assert cli.main(["coverage", "--set", "nope", "--arch", "gfx950"]) == 2
    assert capsys.readouterr().err.startswith("ckspace: error: unknown set 'nope'")


@pytest.mark.slow
def test_the_readme_coverage_table_of_cks_sets() -> None:
    # Each row of the README's table, recomputed with the independent oracle: CK's lists from tests/reference
    # (ck_full's procedures, ck_configs' reading of the JSON files), items from selection_oracle.
    try:
        from reference import ck_configs
    except ImportError:  # pragma: no cover
        from tests.reference import ck_configs  # type: ignore[no-redef]
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    rows = {}
    for line in readme[readme.index("| set | kernels | in `full` |"):].split("\n\n")[0].splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].split("`")[1]] = (int(cells[1].replace(",", "")), float(cells[3][:-1]), float(cells[4][:-1]))
    full = O.full()
    full_names = {k["name"] for k in full}
    ft, tiny = O.ck_lists()
    shipped = {s: list(dict.fromkeys(n for p in ck_configs.files(s) for n in ck_configs.names(p)))
               for s in ("profiler", "tests")}
    lists = {"ck-full-tests": ft, "ck-tiny": tiny, "ck-profiler": shipped["profiler"], "ck-tests": shipped["tests"]}
    for set_name, names in lists.items():
        in_full = [n.replace("_ndhwgc_3d_", "_nhwgc_3d_") for n in names]
        inside = [n for n in in_full if n in full_names]
        foreign = [{**parse_name(n), "name": n} for n in in_full if n not in full_names]  # all real kernels (test_ck_config_names)
        size, tests_pct, tiny_pct = rows[set_name]
        assert size == len(names), set_name
        for objective, pct in (("tests", tests_pct), ("tiny", tiny_pct)):
            counts = O.count(full, inside, O.objective_spec(objective), foreign)
            covered, total = sum(c for c, _ in counts.values()), sum(t for _, t in counts.values())
            assert round(100 * covered / total, 1) == pct, (set_name, objective)
